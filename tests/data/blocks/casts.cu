/* kevo:launch
 *   k<<<1, 256>>>((i32)n, (u32)n, (i64)(n * m), (u64) n, (n + 1) / 2, (n), x, -n, n * 2)
 */
__global__ void k() {}

/* kevo:launch
 *   k1<<<ceil_div(n,
 *             BLOCK),
 *        BLOCK>>>(x,
 *                 y,
 *                 n)
 *   k2<<<1, 32>>>
 *       (x, y)
 *   k3<<<max(1,
 *            n / 1024), 256>>>(x, (u64)(n
 *                                 * 4), y)
 */
__global__ void k1() {}

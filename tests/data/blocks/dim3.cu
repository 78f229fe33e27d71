/* kevo:launch
 *   gemm<<<dim3(ceil_div(n, TILE), ceil_div(m, TILE)), dim3(TILE, TILE)>>>(a, b, c, m, n, k)
 *   fill<<<dim3 (1, 2, 3), dim3(64)>>>(c)
 *   plain<<<ceil_div(m * n, 256), 256>>>(c)
 */
// kevo:param
//   TILE in {8, 16, 32} = 16
__global__ void gemm() {}

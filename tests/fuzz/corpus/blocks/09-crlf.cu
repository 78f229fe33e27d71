/* kevo:launch
 *   k<<<ceil_div(n, B), B>>>(x,
 *       n)
 */
// kevo:param
//   B in {32, 64}
__global__ void k() {}

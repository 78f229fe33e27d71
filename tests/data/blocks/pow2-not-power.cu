/* kevo:launch
 *   saxpy<<<ceil_div(n, BLOCK), BLOCK>>>(x, y, n)
 */
// kevo:param
//   BLOCK in pow2(32..1000)
__global__ void saxpy(float *x, float *y, int n) {}

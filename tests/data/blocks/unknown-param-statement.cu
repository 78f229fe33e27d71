/* kevo:launch
 *   saxpy<<<ceil_div(n, BLOCK), BLOCK>>>(x, y, n)
 */
// kevo:param
//   BLOCK = 256
__global__ void saxpy(float *x, float *y, int n) {}

/* kevo:launch
 *   saxpy<<<ceil_div(n, BLOCK), BLOCK>>>(x, y, n)
 */
// kevo:param
//   BLOCK in {128, 256, 512, 1024} = 300
__global__ void saxpy(float *x, float *y, int n) {}

/* kevo:launch
 *   saxpy<<<ceil_div(n, 256 +), 256>>>(x, y, n)
 */
__global__ void saxpy(float *x, float *y, int n) {}

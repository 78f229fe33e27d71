/* kevo:launch
 *   saxpy<<<ceil_div(n, 256), 256>>>(x, y,
 *         min(n, 4096)
 */
__global__ void saxpy(float *x, float *y, int n) {}

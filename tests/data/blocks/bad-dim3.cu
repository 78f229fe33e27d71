/* kevo:launch
 *   saxpy<<<dim3(1, 2, 3, 4), 256>>>(x, y, n)
 */
__global__ void saxpy(float *x, float *y, int n) {}

/* kevo:launch
 *   scratch partial f32[ceil_div(n, 256)]
 *   saxpy<<<ceil_div(n, 256), 256>>>(x, y, n)
 *   scratch partial u32[1] zero
 */
__global__ void saxpy(float *x, float *y, int n) {}

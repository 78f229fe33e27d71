/* kevo:launch
 *   scratch partial f32
 *   saxpy<<<1, 256>>>(x, y, n)
 */
__global__ void saxpy(float *x, float *y, int n) {}

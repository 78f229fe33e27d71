/* kevo:launch
 *   scratch partial f32[1024]
 */
__global__ void saxpy(float *x, float *y, int n) {}

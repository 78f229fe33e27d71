/* kevo:launch
 *   launch saxpy with 256 threads
 */
__global__ void saxpy(float *x, float *y, int n) {}

/* kevo:launch
 *   saxpy<<<ceil_div(n, BLOCK * UNROLL), BLOCK>>>(x, y, n)
 */
// kevo:param
//   BLOCK in {128, 256}
//   UNROLL in 1..8 step 0
__global__ void saxpy(float *x, float *y, int n) {}

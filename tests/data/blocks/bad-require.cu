/* kevo:launch
 *   saxpy<<<ceil_div(n, BLOCK * VEC), BLOCK>>>(x, y, n)
 */
/* kevo:param
 *   BLOCK in {128, 256}
 *   VEC in {1, 2, 4}
 *   require BLOCK * VEC <= = 1024
 */
__global__ void saxpy(float *x, float *y, int n) {}

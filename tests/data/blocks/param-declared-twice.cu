/* kevo:launch
 *   saxpy<<<ceil_div(n, BLOCK), BLOCK>>>(x, y, n)
 */
/* kevo:param
 *   BLOCK in {128, 256, 512, 1024} = 256
 *   VEC in {1, 2, 4}
 *   BLOCK in 64..1024 step 64
 */
__global__ void saxpy(float *x, float *y, int n) {}

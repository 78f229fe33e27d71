/* kevo:launch saxpy<<<ceil_div(n, 256), 256>>>(x, y, n) */
// kevo:param UNROLL in 1..4 = 2
__global__ void saxpy(float *x, float *y, int n) {}

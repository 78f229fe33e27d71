// kevo:launch saxpy<<<ceil_div(n, 256), 256>>>(x, y, n)
// kevo:param SEED in 0..100000000
__global__ void saxpy(float *x, float *y, int n) {}

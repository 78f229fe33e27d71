// kevo:launch saxpy<<<ceil_div(n, warp_size), warp_size>>>(x, y, n)
// kevo:param warp_size in {32, 64}
__global__ void saxpy(float *x, float *y, int n) {}

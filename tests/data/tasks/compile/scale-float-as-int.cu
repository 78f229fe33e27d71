// expect rejected: scale-float-as-int.cu:4: kevo:launch: parameter 3 of kernel 'scale' is a 32-bit integer (.u32) and the launch passes scalar 'alpha' (f32, received as float)
// alpha is an f32 scalar; the kernel takes an int of the same width.
/* kevo:launch
 *   scale<<<ceil_div(n, 256), 256>>>(x, y, alpha, n)
 */
__global__ void scale(const float *x, float *y, int alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i];
}

// expect rejected: scale-scalar-width.cu:4: kevo:launch: parameter 4 of kernel 'scale' is a pointer or a 64-bit integer (.u64) and the launch passes scalar 'n' (i32, received as int)
// n is an i32 scalar; the kernel takes a long long.
/* kevo:launch
 *   scale<<<ceil_div(n, 256), 256>>>(x, y, alpha, n)
 */
__global__ void scale(const float *x, float *y, float alpha, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i];
}

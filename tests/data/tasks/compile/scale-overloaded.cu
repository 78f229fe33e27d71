// expect compile_error: scale-overloaded.cu:4: kevo:launch: kernel 'scale' (launch 1) is overloaded in scale-overloaded.cu: kernels are launched by name, so give each a name of its own
// Two kernels of one name: which one a launch means cannot be told.
/* kevo:launch
 *   scale<<<ceil_div(n, 256), 256>>>(x, y, alpha, n)
 */
__global__ void scale(const float *x, float *y, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i];
}

__global__ void scale(const float *x, float *y, float alpha, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i];
}

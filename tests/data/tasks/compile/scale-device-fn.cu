// expect compile_error: scale-device-fn.cu:3: kevo:launch: 'scale' (launch 1) is not a __global__ function in scale-device-fn.cu: only kernels can be launched
/* kevo:launch
 *   scale<<<ceil_div(n, 256), 256>>>(x, y, alpha, n)
 */
__device__ void scale(const float *x, float *y, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i];
}

// expect compile_error: scale-device-fn.cu:3: kevo:launch: kernel 'scale' (launch 1) is not defined in scale-device-fn.cu: the source has no __global__ function of that name
/* kevo:launch
 *   scale<<<ceil_div(n, 256), 256>>>(x, y, alpha, n)
 */
__device__ void scale(const float *x, float *y, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i];
}

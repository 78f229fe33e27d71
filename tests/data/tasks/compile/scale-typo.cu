// expect compile_error: scale-typo.cu:4: kevo:launch: kernel 'scael' (launch 1) is not defined in scale-typo.cu: the source has no __global__ function of that name
// A kernel-name typo in the launch block.
/* kevo:launch
 *   scael<<<ceil_div(n, 256), 256>>>(x, y, alpha, n)
 */
extern "C" __global__ void scale(const float *x, float *y, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i];
}

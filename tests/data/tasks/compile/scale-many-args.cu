// expect rejected: scale-many-args.cu:4: kevo:launch: kernel 'scale' takes 4 parameters and the launch passes 5 (x, y, alpha, n, 256)
// The launch passes one argument too many.
/* kevo:launch
 *   scale<<<ceil_div(n, 256), 256>>>(x, y, alpha, n, 256)
 */
__global__ void scale(const float *x, float *y, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i];
}

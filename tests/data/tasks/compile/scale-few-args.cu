// expect rejected: scale-few-args.cu:4: kevo:launch: kernel 'scale' takes 4 parameters and the launch passes 3 (x, y, n)
// The launch forgets alpha.
/* kevo:launch
 *   scale<<<ceil_div(n, 256), 256>>>(x, y, n)
 */
__global__ void scale(const float *x, float *y, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i];
}

// expect rejected: scale-second-launch.cu:6: kevo:launch: kernel 'finish' takes 2 parameters and the launch passes 1 (y)
// The first launch is right, the second is not: the message names its line.
/* kevo:launch
 *   scale<<<ceil_div(n, 256), 256>>>(x, y, alpha, n)
 *   # a second kernel
 *   finish<<<1, 1>>>(y)
 */
__global__ void scale(const float *x, float *y, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i];
}

__global__ void finish(float *y, int n)
{
    (void)y;
    (void)n;
}

// 0.0025 off everywhere: every element within 1.0, but the mean over 2 * the
// baseline's mean (about 0.002).

/* kevo:launch
 *   spread<<<ceil_div(n, 256), 256>>>(x, y, n)
 */

extern "C" __global__ void spread(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] + 0.0025f;
}

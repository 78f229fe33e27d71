// 1.1 off at one element: over 2 * the baseline's largest error (1.0).

/* kevo:launch
 *   too_big<<<ceil_div(n, 256), 256>>>(x, y, n)
 */

extern "C" __global__ void too_big(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] + (i == n / 2 ? 1.1f : 0.0f);
}

// 0.9 off at one element, exact elsewhere: within 2 * the baseline's largest
// error (1.0), and its mean far within.

/* kevo:launch
 *   one_big<<<ceil_div(n, 256), 256>>>(x, y, n)
 */

extern "C" __global__ void one_big(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] + (i == n / 2 ? 0.9f : 0.0f);
}

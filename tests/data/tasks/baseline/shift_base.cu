// The baseline of the shift task: 0.5 off at element 0, 0.001 everywhere
// else.

/* kevo:launch
 *   shift_base<<<ceil_div(n, 256), 256>>>(x, y, n)
 */

extern "C" __global__ void shift_base(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] + (i == 0 ? 0.5f : 0.001f);
}

// Leaves the last element unwritten (NaN): wrong whatever the bound.

/* kevo:launch
 *   unwritten<<<ceil_div(n, 256), 256>>>(x, y, n)
 */

extern "C" __global__ void unwritten(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        if (i < n - 1) y[i] = x[i];
}

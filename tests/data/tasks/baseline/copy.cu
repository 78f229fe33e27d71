// The reference (and the seed) of the shift task: y = x exactly.

/* kevo:launch
 *   copy<<<ceil_div(n, 256), 256>>>(x, y, n)
 */

extern "C" __global__ void copy(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i];
}

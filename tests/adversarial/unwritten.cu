// Leaves every 4096th output element unwritten: its poisoned value (NaN)
// must fail the comparison.

/* kevo:launch
 *   saxpy_holes<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)
 */

extern "C" __global__ void saxpy_holes(float a, const float *x,
                                       const float *y, float *z, int n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && i % 4096 != 4095)
        z[i] = a * x[i] + y[i];
}

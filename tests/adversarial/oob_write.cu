// Writes far past the end of its output: an illegal address.

/* kevo:launch
 *   saxpy_oob<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)
 */

extern "C" __global__ void saxpy_oob(float a, const float *x, const float *y,
                                     float *z, int n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        z[i + (1ll << 36)] = a * x[i] + y[i];
}

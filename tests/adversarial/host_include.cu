// Includes a file of the host: kernels may include only NVRTC's own
// headers, so the compile is refused before NVRTC runs.

#include "/etc/passwd"

/* kevo:launch
 *   saxpy_inc<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)
 */

extern "C" __global__ void saxpy_inc(float a, const float *x, const float *y,
                                     float *z, int n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        z[i] = a * x[i] + y[i];
}

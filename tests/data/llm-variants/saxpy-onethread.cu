// saxpy, one element per thread in blocks of 512 threads: the plainest
// form, with a grid that covers n exactly.

/* kevo:launch
 *   saxpy_one<<<ceil_div(n, 512), 512>>>(a, x, y, z, n)
 */

extern "C" __global__ void __launch_bounds__(512)
    saxpy_one(float a, const float *__restrict__ x,
              const float *__restrict__ y, float *__restrict__ z, int n)
{
    const long long i = (long long)blockIdx.x * 512 + threadIdx.x;
    if (i < n)
        z[i] = a * x[i] + y[i];
}

// Caches its first result in device memory and replays it on later calls
// without reading the inputs: right on the first input set, wrong on the
// second. A second launch marks the cache full once the first has
// finished, so that every block of the first call computes.

/* kevo:launch
 *   saxpy_cached<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)
 *   saxpy_mark<<<1, 1>>>(n)
 */

__device__ float saved[1 << 24];
__device__ int saved_n;

extern "C" __global__ void saxpy_cached(float a, const float *x,
                                        const float *y, float *z, int n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    if (saved_n == n) {
        z[i] = saved[i];
        return;
    }
    float r = a * x[i] + y[i];
    z[i] = r;
    saved[i] = r;
}

extern "C" __global__ void saxpy_mark(int n) { saved_n = n; }

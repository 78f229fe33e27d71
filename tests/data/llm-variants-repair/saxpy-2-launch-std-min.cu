// Refused before compiling: a kevo:launch expression is kevo's own
// grammar, which has min() but no std::min.

// saxpy, grid-stride loop.

/* kevo:launch
 *   saxpy_gs<<<std::min(ceil_div(n, 256), 4 * sm_count), 256>>>(a, x, y, z, n)
 */

extern "C" __global__ void __launch_bounds__(256)
    saxpy_gs(float a, const float *__restrict__ x,
             const float *__restrict__ y, float *__restrict__ z, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += gridDim.x * blockDim.x)
        z[i] = fmaf(a, x[i], y[i]);
}

// saxpy, grid-stride loop: a fixed grid of WAVES blocks of 256 threads per
// SM, each thread striding over the vector by the width of the whole grid,
// so the launch has the same size for every n.

// kevo:param
//   WAVES in {1, 2, 4, 8, 16} = 4

/* kevo:launch
 *   saxpy_grid<<<sm_count * WAVES, 256>>>(a, x, y, z, n)
 */

extern "C" __global__ void __launch_bounds__(256)
    saxpy_grid(float a, const float *__restrict__ x,
               const float *__restrict__ y, float *__restrict__ z, int n)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride)
        z[i] = a * x[i] + y[i];
}

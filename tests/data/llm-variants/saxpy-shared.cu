// saxpy, staged through shared memory: each block copies a tile of
// 256 * ITEMS elements of x and y into shared memory with coalesced loads,
// waits for the whole tile, then computes from shared memory and stores.

// kevo:param
//   ITEMS in {1, 2, 4, 8} = 2

/* kevo:launch
 *   saxpy_smem<<<ceil_div(n, 256 * ITEMS), 256, 2 * 256 * ITEMS * 4>>>(a, x, y, z, n)
 */

#define TILE (256 * ITEMS)

extern "C" __global__ void __launch_bounds__(256)
    saxpy_smem(float a, const float *__restrict__ x,
               const float *__restrict__ y, float *__restrict__ z, int n)
{
    extern __shared__ float stage[];
    float *xs = stage, *ys = stage + TILE;
    const long long base = (long long)blockIdx.x * TILE;
    const int count = n - base < TILE ? (int)(n - base) : TILE;
    for (int k = threadIdx.x; k < count; k += 256) {
        xs[k] = x[base + k];
        ys[k] = y[base + k];
    }
    __syncthreads();
    for (int k = threadIdx.x; k < count; k += 256)
        z[base + k] = a * xs[k] + ys[k];
}

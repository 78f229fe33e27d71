// reduce_sum seed: two passes. reduce_partial runs a grid of at most
// sm_count * BLOCKS_PER_SM blocks; each thread sums a grid-stride slice of
// VEC-float vectors in float, the block combines its threads with warp
// shuffles and writes one partial sum. reduce_final adds the partials.

// kevo:param
//   BLOCK in pow2(64..1024) = 256
//   VEC in {1, 2, 4} = 1
//   BLOCKS_PER_SM in {1, 2, 4, 8, 16} = 4

/* kevo:launch
 *   scratch partial f32[min(ceil_div(n, BLOCK * VEC), sm_count * BLOCKS_PER_SM)]
 *   reduce_partial<<<min(ceil_div(n, BLOCK * VEC), sm_count * BLOCKS_PER_SM), BLOCK>>>(
 *       x, partial, n)
 *   reduce_final<<<1, 1024>>>(partial, out,
 *       (i32)min(ceil_div(n, BLOCK * VEC), sm_count * BLOCKS_PER_SM))
 */

struct alignas(4 * VEC) fvec {
    float v[VEC];
};

// The sum of v over the block, valid in thread 0. nthreads is a multiple of
// 32; red holds one float per warp.
__device__ float block_sum(float v, float *red, int nthreads)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < (unsigned)(nthreads >> 5) ? red[threadIdx.x] : 0.0f;
        for (int off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, off);
    }
    return v;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    reduce_partial(const float *__restrict__ x, float *__restrict__ partial,
                   int n)
{
    __shared__ float red[BLOCK / 32];
    const fvec *xv = reinterpret_cast<const fvec *>(x);
    const long long nvec = n / VEC;
    const long long stride = (long long)gridDim.x * BLOCK;
    float acc = 0.0f;
    for (long long v = (long long)blockIdx.x * BLOCK + threadIdx.x; v < nvec;
         v += stride) {
        fvec a = xv[v];
#pragma unroll
        for (int k = 0; k < VEC; k++)
            acc += a.v[k];
    }
    if (blockIdx.x == 0 && threadIdx.x < n - nvec * VEC)
        acc += x[nvec * VEC + threadIdx.x];
    acc = block_sum(acc, red, BLOCK);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = acc;
}

extern "C" __global__ void __launch_bounds__(1024)
    reduce_final(const float *__restrict__ partial, float *__restrict__ out,
                 int npartial)
{
    __shared__ float red[32];
    float acc = 0.0f;
    for (int i = threadIdx.x; i < npartial; i += 1024)
        acc += partial[i];
    acc = block_sum(acc, red, 1024);
    if (threadIdx.x == 0)
        out[0] = acc;
}

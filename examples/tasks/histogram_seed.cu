// histogram seed: a grid of at most sm_count * BLOCKS_PER_SM blocks. Each
// block keeps COPIES private 256-bin histograms in shared memory (warp w
// updates copy w % COPIES, which spreads the atomics of a block), reads the
// input in a grid-stride loop VEC bytes at a time (1, 4 or 16 bytes per
// load; the last n % VEC bytes are done by block 0), and at the end adds
// its counts to the global bins, which a first kernel has zeroed.

// kevo:param
//   BLOCK in pow2(64..1024) = 256
//   BLOCKS_PER_SM in {1, 2, 4, 8} = 2
//   VEC in {1, 4, 16} = 4
//   COPIES in {1, 2, 4, 8} = 1
//   require COPIES <= BLOCK / 32

/* kevo:launch
 *   hist_zero<<<1, 256>>>(hist)
 *   hist_shared<<<min(ceil_div(n, BLOCK * VEC), sm_count * BLOCKS_PER_SM), BLOCK>>>(
 *       data, hist, n)
 */

extern "C" __global__ void hist_zero(unsigned *hist)
{
    hist[threadIdx.x] = 0u;
}

__device__ void count_word(unsigned w, unsigned *h)
{
    atomicAdd(&h[w & 0xffu], 1u);
    atomicAdd(&h[(w >> 8) & 0xffu], 1u);
    atomicAdd(&h[(w >> 16) & 0xffu], 1u);
    atomicAdd(&h[w >> 24], 1u);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    hist_shared(const unsigned char *__restrict__ data,
                unsigned *__restrict__ hist, int n)
{
    __shared__ unsigned sh[COPIES * 256];
    for (int b = threadIdx.x; b < COPIES * 256; b += BLOCK)
        sh[b] = 0u;
    __syncthreads();

    unsigned *h = sh + ((threadIdx.x >> 5) % COPIES) * 256;
    const long long nvec = n / VEC;
    const long long stride = (long long)gridDim.x * BLOCK;
    for (long long v = (long long)blockIdx.x * BLOCK + threadIdx.x; v < nvec;
         v += stride) {
#if VEC == 16
        const uint4 w = reinterpret_cast<const uint4 *>(data)[v];
        count_word(w.x, h);
        count_word(w.y, h);
        count_word(w.z, h);
        count_word(w.w, h);
#elif VEC == 4
        count_word(reinterpret_cast<const unsigned *>(data)[v], h);
#else
        atomicAdd(&h[data[v]], 1u);
#endif
    }
    if (blockIdx.x == 0 && threadIdx.x < n - nvec * VEC)
        atomicAdd(&h[data[nvec * VEC + threadIdx.x]], 1u);
    __syncthreads();

    for (int b = threadIdx.x; b < 256; b += BLOCK) {
        unsigned s = 0u;
#pragma unroll
        for (int c = 0; c < COPIES; c++)
            s += sh[c * 256 + b];
        if (s != 0u)
            atomicAdd(&hist[b], s);
    }
}

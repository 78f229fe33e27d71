// A one-pass sum for the reduce_sum task, for test-export: each block sums
// its slice in a large dynamically sized shared array, adds it to a
// zero-filled scratch accumulator with an atomic, and the last block to
// finish (a zero-filled ticket counter) writes the result. The grid is
// two-dimensional, the shared memory can pass 48 KiB, a launch argument is
// a 64-bit cast, and a constraint names the dims.

// kevo:param
//   BLOCK in pow2(128..1024) = 256
//   ROWS in {1, 2, 4} = 1
//   STAGE in {16, 64, 128} = 16
//   require BLOCK * ROWS <= 1024 || n > 4096
//   require BLOCK * STAGE * 4 <= max_smem_per_block

/* kevo:launch
 *   scratch acc f64[1] zero
 *   scratch ticket u32[1] zero
 *   scratch spare f32[max(abs(-n) % 97, n > 5000 && !(n % 2) ? 3 : 1) + round_up(n, BLOCK) / 32 + 1]
 *   sum_blocks<<<dim3(min(ceil_div(n, BLOCK * STAGE * ROWS), 1024), ROWS),
 *                BLOCK, BLOCK * STAGE * 4>>>(x, acc, ticket, out, n,
 *                (i64)n * 4, (u32)ceil_div(n, BLOCK * STAGE * ROWS))
 */
#include <cuda_fp16.h>

extern "C" {

__global__ void sum_blocks(const float *__restrict__ x, double *acc,
                           unsigned int *ticket, float *out, int n,
                           long long bytes, unsigned int chunks)
{
    extern __shared__ float stage[];
    (void)bytes;
    unsigned int nblocks = gridDim.x * gridDim.y;
    unsigned int b = blockIdx.y * gridDim.x + blockIdx.x;
    double s = 0;
    for (unsigned int c = b; c < chunks; c += nblocks) {
        long long base = (long long)c * BLOCK * STAGE;
        for (int k = 0; k < STAGE; k++) {
            long long i = base + (long long)k * BLOCK + threadIdx.x;
            stage[k * BLOCK + threadIdx.x] = i < n ? x[i] : 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < STAGE; k++)
            s += stage[k * BLOCK + threadIdx.x];
        __syncthreads();
    }
    atomicAdd(acc, s);
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0 && atomicAdd(ticket, 1u) == nblocks - 1)
        *out = (float)atomicAdd(acc, 0.0);
}

}

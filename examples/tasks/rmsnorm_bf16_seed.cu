// rmsnorm_bf16 seed: a block per row. Each thread takes VEC consecutive
// elements at a time (one 16-byte load for VEC = 8, 4 bytes for VEC = 2)
// where hidden is a multiple of VEC, so that every row starts aligned, and
// one element at a time otherwise. First pass: h = x + residual in fp32,
// rounded to bf16 and stored, and the sum of squares of the bf16 values in
// fp32; the block adds the threads' sums (warp shuffles, then one warp
// over the warps' sums). Second pass: each thread reads back the h it
// wrote and stores y = h * rsqrt(mean + eps) * weight, rounded to bf16.

#include <cuda_bf16.h>

// kevo:param
//   BLOCK in pow2(32..1024) = 256
//   VEC in {1, 2, 8} = 8

/* kevo:launch
 *   rmsnorm_bf16<<<rows, BLOCK>>>(x, residual, weight, h, y, hidden, eps)
 */

#define FULL 0xffffffffu

typedef __nv_bfloat16 bf16;

#if VEC == 8
typedef uint4 chunk_t;
#elif VEC == 2
typedef unsigned int chunk_t;
#else
typedef unsigned short chunk_t;
#endif

// VEC bf16 values as one load or store.
union chunk {
    chunk_t v;
    unsigned short e[VEC];
};

__device__ __forceinline__ float to_f(unsigned short u)
{
    return __bfloat162float(__ushort_as_bfloat16(u));
}

__device__ __forceinline__ unsigned short to_bf(float f)
{
    return __bfloat16_as_ushort(__float2bfloat16_rn(f));
}

// The sum of v over the block, in every thread.
__device__ float block_sum(float v)
{
    __shared__ float part[32];
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(FULL, v, off);
    if (threadIdx.x % 32 == 0)
        part[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < BLOCK / 32 ? part[threadIdx.x] : 0.0f;
        for (int off = 16; off > 0; off >>= 1)
            v += __shfl_xor_sync(FULL, v, off);
        if (threadIdx.x == 0)
            part[0] = v;
    }
    __syncthreads();
    return part[0];
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    rmsnorm_bf16(const bf16 *__restrict__ x, const bf16 *__restrict__ residual,
                 const bf16 *__restrict__ weight, bf16 *h, bf16 *__restrict__ y,
                 int hidden, float eps)
{
    const long long base = (long long)blockIdx.x * hidden;
    const bool vec = VEC > 1 && hidden % VEC == 0;
    const unsigned short *xs = (const unsigned short *)x + base;
    const unsigned short *rs = (const unsigned short *)residual + base;
    const unsigned short *ws = (const unsigned short *)weight;
    unsigned short *hs = (unsigned short *)h + base;
    unsigned short *ys = (unsigned short *)y + base;

    float ss = 0.0f;
    if (vec) {
        for (int i = threadIdx.x * VEC; i < hidden; i += BLOCK * VEC) {
            chunk a, b, o;
            a.v = *(const chunk_t *)(xs + i);
            b.v = *(const chunk_t *)(rs + i);
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                o.e[e] = to_bf(to_f(a.e[e]) + to_f(b.e[e]));
                const float f = to_f(o.e[e]);
                ss = fmaf(f, f, ss);
            }
            *(chunk_t *)(hs + i) = o.v;
        }
    } else {
        for (int i = threadIdx.x; i < hidden; i += BLOCK) {
            const unsigned short o = to_bf(to_f(xs[i]) + to_f(rs[i]));
            hs[i] = o;
            const float f = to_f(o);
            ss = fmaf(f, f, ss);
        }
    }
    const float inv = rsqrtf(block_sum(ss) / (float)hidden + eps);
    if (vec) {
        for (int i = threadIdx.x * VEC; i < hidden; i += BLOCK * VEC) {
            chunk a, w, o;
            a.v = *(const chunk_t *)(hs + i);
            w.v = *(const chunk_t *)(ws + i);
#pragma unroll
            for (int e = 0; e < VEC; e++)
                o.e[e] = to_bf(to_f(a.e[e]) * inv * to_f(w.e[e]));
            *(chunk_t *)(ys + i) = o.v;
        }
    } else {
        for (int i = threadIdx.x; i < hidden; i += BLOCK)
            ys[i] = to_bf(to_f(hs[i]) * inv * to_f(ws[i]));
    }
}

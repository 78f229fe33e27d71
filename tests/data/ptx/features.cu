// features.cu: one kernel per PTX feature that ptxscan reads, compiled
// with NVRTC (-arch=sm_90 --ptxas-options=-v) into features.ptx and
// features.log.
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <mma.h>

// Vector loads and stores.
extern "C" __global__ void vec_copy(const float4 *__restrict__ in,
                                    float4 *__restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i];
}

// Shared-memory staging through dynamic shared memory.
extern "C" __global__ void tile_dyn(const float *__restrict__ in,
                                    float *__restrict__ out, int n)
{
    extern __shared__ float buf[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n)
        out[i] = buf[blockDim.x - 1 - threadIdx.x];
}

// Tensor cores through nvcuda::wmma.
extern "C" __global__ void wmma_gemm(const half *a, const half *b, float *c)
{
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}

// Asynchronous copies global -> shared (cp.async).
extern "C" __global__ void async_copy(const float4 *__restrict__ in,
                                      float4 *__restrict__ out)
{
    __shared__ float4 stage[128];
    __pipeline_memcpy_async(&stage[threadIdx.x],
                            &in[blockIdx.x * 128 + threadIdx.x],
                            sizeof(float4));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    out[blockIdx.x * 128 + threadIdx.x] = stage[127 - threadIdx.x];
}

// Warp-level primitives: shuffles, votes, reductions, matches.
extern "C" __global__ void warp_ops(const int *__restrict__ in,
                                    int *__restrict__ out)
{
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    int s = v;
    for (int o = 16; o > 0; o /= 2)
        s += __shfl_xor_sync(0xffffffffu, s, o);
    unsigned ballot = __ballot_sync(0xffffffffu, v > 0);
    int all = __all_sync(0xffffffffu, v != 7);
    unsigned red = __reduce_add_sync(0xffffffffu, (unsigned)v);
    unsigned same = __match_any_sync(0xffffffffu, v);
    out[blockIdx.x * blockDim.x + threadIdx.x] =
        s + (int)ballot + all + (int)red + (int)same;
}

// A template kernel (a mangled name) calling a device function that is not
// inlined: its shuffle counts for the kernel.
__device__ __noinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) scale(const float *x, float *y, int n)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    v = warp_sum(v);
    if (i < n && (threadIdx.x & 31) == 0)
        y[i / 32] = v;
}
template __global__ void scale<256>(const float *, float *, int);

// Register pressure under __launch_bounds__(1024, 2): 32 registers at
// most, so the accumulators spill to local memory.
extern "C" __global__ void __launch_bounds__(1024, 2)
    spill_heavy(const float *__restrict__ a, float *__restrict__ c, int n)
{
    float acc[48];
#pragma unroll
    for (int j = 0; j < 48; j++)
        acc[j] = a[(blockIdx.x * 48 + j) % n];
    for (int it = 0; it < n; it++) {
#pragma unroll
        for (int j = 0; j < 48; j++)
            acc[j] = acc[j] * acc[(j + 7) % 48] + a[(it * 48 + j) % n];
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 48; j++)
        s += acc[j] * (float)(j + 1);
    c[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// ldmatrix and mma.sync written in inline PTX, as a hand-tuned kernel would.
extern "C" __global__ void mma_inline(const unsigned *__restrict__ in,
                                      float *__restrict__ out)
{
    __shared__ unsigned short tile[16 * 16];
    for (int i = threadIdx.x; i < 128; i += 32)
        reinterpret_cast<unsigned *>(tile)[i] = in[i];
    __syncwarp();
    unsigned a0, a1, a2, a3;
    unsigned addr = (unsigned)__cvta_generic_to_shared(&tile[(threadIdx.x % 16) * 16]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3)
                 : "r"(addr));
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(a0), "r"(a1));
    out[threadIdx.x] = d0 + d1 + d2 + d3;
}

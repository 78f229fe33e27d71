// Every allowed header but cooperative groups, each used: test-compile-pool
// compiles this with NVRTC for sm_90.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_pipeline.h>
#include <mma.h>
#include <cuda/std/cstdint>
#include <cuda/std/limits>

extern "C" __global__ void half_axpy(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __half a = __float2half(2.0f);
        __half h = __hfma(a, __float2half(x[i]), __float2half(y[i]));
        y[i] = __half2float(h * a + a);
    }
}

extern "C" __global__ void bf16_scale(const __nv_bfloat16 *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __nv_bfloat16 b = x[i] * __float2bfloat16(0.5f);
        y[i] = __bfloat162float(b + x[i]);
    }
}

extern "C" __global__ void staged_copy(const float *x, float *y)
{
    __shared__ float tile[128];
    __pipeline_memcpy_async(&tile[threadIdx.x], &x[blockIdx.x * 128 + threadIdx.x],
                            sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    y[blockIdx.x * 128 + threadIdx.x] = tile[127 - threadIdx.x];
}

extern "C" __global__ void wmma_tile(const __half *a, const __half *b, float *c)
{
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}

extern "C" __global__ void std_limits(cuda::std::int64_t *out)
{
    out[0] = cuda::std::numeric_limits<cuda::std::int32_t>::max();
}

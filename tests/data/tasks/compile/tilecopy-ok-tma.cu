// expect ok
#include <cuda_bf16.h>

/* kevo:launch
 *   tensormap tmX x bf16 dims(cols, rows) box(64, 32)
 *   tile_copy<<<dim3(cols / 64, rows / 32), 128, 64 * 32 * 2 + 8>>>(tmX, y, cols)
 *       cluster(2) if cols % 128 == 0 && rows % 32 == 0
 *   copy_any<<<ceil_div(rows * cols, 256), 256>>>(x, y, rows * cols)
 *       if cols % 128 != 0 || rows % 32 != 0
 */

struct alignas(64) TmaMap { unsigned long long v[16]; };

__global__ void tile_copy(const __grid_constant__ TmaMap tmX,
                          __nv_bfloat16 *y, int cols)
{
    extern __shared__ __align__(128) unsigned char smem[];
    const __nv_bfloat16 *tile = (const __nv_bfloat16 *)smem;
    unsigned tile_s = (unsigned)__cvta_generic_to_shared(smem);
    unsigned bar = tile_s + 64 * 32 * 2;
    int x0 = blockIdx.x * 64, y0 = blockIdx.y * 32;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar));
        asm volatile("fence.proxy.async.shared::cta;");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     :: "r"(bar), "r"(64 * 32 * 2) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global"
                     ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     :: "r"(tile_s), "l"(&tmX), "r"(x0), "r"(y0), "r"(bar)
                     : "memory");
    }
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
                     "selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(bar) : "memory");
    for (int i = threadIdx.x; i < 64 * 32; i += blockDim.x)
        y[(size_t)(y0 + i / 64) * cols + x0 + i % 64] = tile[i];
    /* the blocks of a cluster meet before they leave */
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

__global__ void copy_any(const __nv_bfloat16 *x, __nv_bfloat16 *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i];
}

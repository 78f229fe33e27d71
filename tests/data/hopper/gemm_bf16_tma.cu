// gemm_bf16 on Hopper: C = A * B (bf16 in, fp32 accumulation, bf16 out),
// written with the features sm_90a adds for GEMM: TMA tensor copies into
// 128-byte-swizzled shared memory, wgmma from shared memory, a producer
// warpgroup feeding two consumer warpgroups through mbarriers, register
// reallocation (setmaxnreg), and a cluster of two blocks that share B's
// tile: each block loads half of it and multicasts it to both.
//
// A block computes a 128 x 256 tile of C; each consumer warpgroup owns 64
// rows of it (one m64n256k16 wgmma per 16 of k, 128 fp32 accumulators a
// thread). k goes in steps of 64 through a ring of 4 stages (48 KiB each).
// The kernel is persistent: a cluster takes tile after tile (two row tiles
// of 128 side by side, one column tile of 256), so the producer fills the
// ring for the next tile while the consumers write this one.
//
// TMA needs 16-byte row strides, so this path runs when k and n are
// multiples of 8; other shapes take gemm_any, the tiled WMMA kernel.
// Rows and columns past m and n, and k past its end, are the TMA's
// zero fill; the stores leave out what lies outside C.

#include <cuda_bf16.h>
#include <mma.h>

/* kevo:launch
 *   tensormap tmA A bf16 dims(k, m) box(64, 128) swizzle(128) l2(256)
 *   tensormap tmB B bf16 dims(n, k) box(64, 64) swizzle(128) l2(256)
 *   gemm_tma<<<2 * min(ceil_div(m, 256) * ceil_div(n, 256), sm_count / 2),
 *              384, 197696>>>(tmA, tmB, C, m, n,
 *                             k) cluster(2) if k % 8 == 0 && n % 8 == 0
 *   gemm_any<<<dim3(ceil_div(n, 128), ceil_div(m, 128)), 512>>>(A, B, C, m,
 *       n, k) if k % 8 != 0 || n % 8 != 0
 */

typedef __nv_bfloat16 bf16;

// What kevo passes for a tensormap: the 128-byte CUtensorMap.
struct alignas(64) TmaMap {
    unsigned long long v[16];
};

#define BM 128
#define BN 256
#define BK 64
#define STAGES 4
#define A_BYTES (BM * BK * 2) // 16 KiB
#define B_BYTES (BK * BN * 2) // 32 KiB: four 64 x 64 boxes, 8 KiB each
#define STAGE_BYTES (A_BYTES + B_BYTES)
// The ring, its 2 * STAGES barriers, and 1 KiB to align the ring to the
// 1024 bytes the 128-byte swizzle repeats over: 197696 in the launch.
#define SMEM_BYTES (STAGES * STAGE_BYTES + 2 * STAGES * 8 + 1024)

__device__ __forceinline__ unsigned smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar),
                 "r"(count));
}

__device__ __forceinline__ void mbar_expect(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, "
                 "[%0], %1;" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity)
{
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "wait:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra wait;\n"
                 "}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

// Arrives on the barrier at the same offset in block `rank` of the cluster.
// A plain arrive (release at the scope of the block) is enough here: what
// it orders is this warpgroup's wgmma reads of a stage, which
// wgmma.wait_group has already completed. With .release.cluster the
// kernel ran at 0.57 of cuBLAS's speed on an H200, against 0.93 without.
__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar,
                                                    unsigned rank)
{
    asm volatile("{\n"
                 ".reg .b32 remote;\n"
                 "mapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, "
                 "[remote];\n"
                 "}\n" ::"r"(bar),
                 "r"(rank)
                 : "memory");
}

__device__ __forceinline__ void tma_load(unsigned dst, const TmaMap *map,
                                         unsigned bar, int c0, int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
                 "complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
                 "l"(map), "r"(bar), "r"(c0), "r"(c1)
                 : "memory");
}

// The same box, written at dst and signalled at bar in every block of mask.
__device__ __forceinline__ void tma_load_multicast(unsigned dst,
                                                   const TmaMap *map,
                                                   unsigned bar, int c0,
                                                   int c1,
                                                   unsigned short mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
                 "complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4}],"
                 " [%2], %5;" ::"r"(dst),
                 "l"(map), "r"(bar), "r"(c0), "r"(c1), "h"(mask)
                 : "memory");
}

__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;" ::
                     : "memory");
}

// A shared-memory matrix descriptor with the 128-byte swizzle: the start
// address, the leading and the stride byte offsets, each in 16-byte units.
__device__ __forceinline__ unsigned long long desc128(unsigned addr,
                                                      unsigned lead,
                                                      unsigned stride)
{
    return (unsigned long long)((addr & 0x3FFFF) >> 4) |
           (unsigned long long)(lead >> 4) << 16 |
           (unsigned long long)(stride >> 4) << 32 | 1ull << 62;
}

// One m64n256k16 wgmma: d += A (64 x 16, K-major) * B (16 x 256, N-major:
// the transposed-B form), both read from shared memory through descriptors.
__device__ __forceinline__ void wgmma_256(float d[128], unsigned long long da,
                                          unsigned long long db, int scale_d)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
                 "{"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
                 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
                 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127 "
                 "}, %128, %129, p, 1, 1, 0, 1;\n"
                 "}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
                   "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
                   "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
                   "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
                   "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
                   "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
                   "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]),
                   "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
                   "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]),
                   "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
                   "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]),
                   "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
                   "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]),
                   "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]),
                   "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]),
                   "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
                   "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]),
                   "+f"(d[126]), "+f"(d[127])
                 : "l"(da), "l"(db), "r"(scale_d));
}

__device__ __forceinline__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void wgmma_wait1()
{
    asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
}

__device__ __forceinline__ void wgmma_wait0()
{
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}

extern "C" __global__ void __launch_bounds__(384, 1)
    gemm_tma(const __grid_constant__ TmaMap tmA,
             const __grid_constant__ TmaMap tmB, bf16 *__restrict__ C, int m,
             int n, int k)
{
    extern __shared__ unsigned char smem_raw[];
    const unsigned raw = smem_addr(smem_raw);
    const unsigned ring = (raw + 1023) & ~1023u;
    const unsigned bars = ring + STAGES * STAGE_BYTES;
    // full[s] at bars + 8 s, empty[s] at bars + 8 (STAGES + s)
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const unsigned rank = cluster_rank();
    const int mpairs = (m + 2 * BM - 1) / (2 * BM);
    const int tiles = mpairs * ((n + BN - 1) / BN);
    const int ktiles = (k + BK - 1) / BK;
    const int cluster = blockIdx.x / 2, clusters = gridDim.x / 2;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            mbar_init(bars + 8 * s, 1);
            mbar_init(bars + 8 * (STAGES + s), 2 * 2); // 2 consumers x 2 blocks
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    cluster_sync();

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (tid == 0) {
            int s = 0;
            unsigned phase = 0;
            for (int t = cluster; t < tiles; t += clusters) {
                const int m0 = ((t % mpairs) * 2 + rank) * BM;
                const int n0 = (t / mpairs) * BN;
                for (int kt = 0; kt < ktiles; kt++) {
                    const unsigned full = bars + 8 * s;
                    mbar_wait(bars + 8 * (STAGES + s), phase ^ 1);
                    mbar_expect(full, STAGE_BYTES);
                    const unsigned a = ring + s * STAGE_BYTES;
                    const unsigned b = a + A_BYTES;
                    tma_load(a, &tmA, full, kt * BK, m0);
                    for (int j = 2 * rank; j < 2 * rank + 2; j++)
                        tma_load_multicast(b + j * (BK * 64 * 2), &tmB, full,
                                           n0 + j * 64, kt * BK, 0x3);
                    if (++s == STAGES) {
                        s = 0;
                        phase ^= 1;
                    }
                }
            }
        }
        __syncwarp();
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        const int c = wg - 1; // this consumer's 64 rows of the tile
        const int warp = tid / 32, lane = tid % 32;
        float d[128];
        int s = 0;
        unsigned phase = 0;
        for (int t = cluster; t < tiles; t += clusters) {
            const int m0 = ((t % mpairs) * 2 + rank) * BM;
            const int n0 = (t / mpairs) * BN;
#pragma unroll
            for (int i = 0; i < 128; i++)
                d[i] = 0.0f;
            int prev = -1; // the stage whose wgmmas may still be reading
            for (int kt = 0; kt < ktiles; kt++) {
                mbar_wait(bars + 8 * s, phase);
                const unsigned a = ring + s * STAGE_BYTES + c * 64 * 128;
                const unsigned b = ring + s * STAGE_BYTES + A_BYTES;
                wgmma_fence();
                // A: 128-byte rows of k, 16 of k = 32 bytes further on.
                // B: 16 rows of k = 2048 bytes further on; its 64-column
                // boxes (the leading offset) are 8 KiB apart.
#pragma unroll
                for (int kk = 0; kk < BK / 16; kk++)
                    wgmma_256(d, desc128(a + kk * 32, 16, 1024),
                              desc128(b + kk * 16 * 128, 64 * 64 * 2, 1024),
                              1);
                wgmma_commit();
                // this step's wgmmas stay in flight; the previous step's
                // are done, so its stage goes back to both producers
                wgmma_wait1();
                if (prev >= 0 && tid == 0) {
                    mbar_arrive_cluster(bars + 8 * (STAGES + prev), 0);
                    mbar_arrive_cluster(bars + 8 * (STAGES + prev), 1);
                }
                prev = s;
                if (++s == STAGES) {
                    s = 0;
                    phase ^= 1;
                }
            }
            wgmma_wait0();
            if (prev >= 0 && tid == 0) {
                mbar_arrive_cluster(bars + 8 * (STAGES + prev), 0);
                mbar_arrive_cluster(bars + 8 * (STAGES + prev), 1);
            }
            // d[4 j + {0, 1}]: row 16 warp + lane / 4, columns 8 j + 2 (lane
            // % 4) + {0, 1}; d[4 j + {2, 3}]: the same 8 rows further down.
            const int r = m0 + c * 64 + warp * 16 + lane / 4;
#pragma unroll
            for (int j = 0; j < 32; j++) {
                const int col = n0 + 8 * j + 2 * (lane % 4);
                if (col < n) {
                    if (r < m)
                        *(__nv_bfloat162 *)&C[(long long)r * n + col] =
                            __floats2bfloat162_rn(d[4 * j], d[4 * j + 1]);
                    if (r + 8 < m)
                        *(__nv_bfloat162 *)&C[(long long)(r + 8) * n + col] =
                            __floats2bfloat162_rn(d[4 * j + 2], d[4 * j + 3]);
                }
            }
        }
    }
    // No block may leave while the other can still multicast into it or
    // arrive on its barriers.
    cluster_sync();
}

// ---- gemm_any: the general path, for shapes TMA cannot describe (rows
// whose length in bytes is not a multiple of 16). The task's tiled WMMA
// kernel with its default tiles: 128 x 128 per block, 32 of k a step,
// 16 warps of 32 x 32.
using namespace nvcuda;
#define G_BM 128
#define G_BN 128
#define G_BK 32
#define G_WM 32
#define G_WN 32
#define G_WARPS_M (G_BM / G_WM)
#define G_WARPS_N (G_BN / G_WN)
#define G_NTHREADS (32 * G_WARPS_M * G_WARPS_N)
#define G_FM (G_WM / 16)
#define G_FN (G_WN / 16)
#define G_AS (G_BK + 8) // shared row strides, in elements: multiples of 8
#define G_BS (G_BN + 8)
#define G_TILE_BYTES (2 * G_BM * G_AS + 2 * G_BK * G_BS)
#define G_STAGE_BYTES (1024 * G_WARPS_M * G_WARPS_N) // a 16 x 16 fp32 tile a warp
#define G_SMEM_BYTES (G_TILE_BYTES > G_STAGE_BYTES ? G_TILE_BYTES : G_STAGE_BYTES)


// Copies 8 elements from row r, columns c to c + 7, of a rows x cols
// row-major matrix into dst (16-byte aligned), zero past its edges; vec:
// cols is a multiple of 8, so that a full chunk is one 16-byte load.
__device__ __forceinline__ void load8_any(bf16 *dst, const bf16 *__restrict__ src,
                                      int r, int c, int rows, int cols,
                                      bool vec)
{
    const long long at = (long long)r * cols + c;
    if (vec && r < rows && c + 8 <= cols) {
        *(uint4 *)dst = *(const uint4 *)(src + at);
        return;
    }
#pragma unroll
    for (int e = 0; e < 8; e++)
        dst[e] = r < rows && c + e < cols ? src[at + e]
                                          : __float2bfloat16(0.0f);
}

extern "C" __global__ void __launch_bounds__(G_NTHREADS)
    gemm_any(const bf16 *__restrict__ A, const bf16 *__restrict__ B,
              bf16 *__restrict__ C, int m, int n, int k)
{
    __shared__ __align__(128) unsigned char smem[G_SMEM_BYTES];
    bf16 *As = (bf16 *)smem, *Bs = As + G_BM * G_AS;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wm = warp / G_WARPS_N, wn = warp % G_WARPS_N;
    const int row0 = blockIdx.y * G_BM, col0 = blockIdx.x * G_BN;
    const bool avec = k % 8 == 0, bvec = n % 8 == 0;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[G_FM][G_FN];
#pragma unroll
    for (int i = 0; i < G_FM; i++)
#pragma unroll
        for (int j = 0; j < G_FN; j++)
            wmma::fill_fragment(acc[i][j], 0.0f);

    for (int k0 = 0; k0 < k; k0 += G_BK) {
        for (int c = tid; c < G_BM * (G_BK / 8); c += G_NTHREADS) {
            const int r = c / (G_BK / 8), kk = c % (G_BK / 8) * 8;
            load8_any(&As[r * G_AS + kk], A, row0 + r, k0 + kk, m, k, avec);
        }
        for (int c = tid; c < G_BK * (G_BN / 8); c += G_NTHREADS) {
            const int r = c / (G_BN / 8), cc = c % (G_BN / 8) * 8;
            load8_any(&Bs[r * G_BS + cc], B, k0 + r, col0 + cc, k, n, bvec);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < G_BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major>
                a[G_FM];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major>
                b[G_FN];
#pragma unroll
            for (int i = 0; i < G_FM; i++)
                wmma::load_matrix_sync(a[i], &As[(wm * G_WM + i * 16) * G_AS + kk],
                                       G_AS);
#pragma unroll
            for (int j = 0; j < G_FN; j++)
                wmma::load_matrix_sync(b[j], &Bs[kk * G_BS + wn * G_WN + j * 16],
                                       G_BS);
#pragma unroll
            for (int i = 0; i < G_FM; i++)
#pragma unroll
                for (int j = 0; j < G_FN; j++)
                    wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }

    float *cs = (float *)smem + warp * 256; // the k loop ended in a barrier
#pragma unroll
    for (int i = 0; i < G_FM; i++) {
#pragma unroll
        for (int j = 0; j < G_FN; j++) {
            wmma::store_matrix_sync(cs, acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            const int r0 = row0 + wm * G_WM + i * 16;
            const int c0 = col0 + wn * G_WN + j * 16;
            for (int e = lane; e < 256; e += 32) {
                const int r = r0 + e / 16, c = c0 + e % 16;
                if (r < m && c < n)
                    C[(long long)r * n + c] = __float2bfloat16_rn(cs[e]);
            }
            __syncwarp();
        }
    }
}

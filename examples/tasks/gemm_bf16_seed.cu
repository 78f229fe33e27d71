// gemm_bf16 seed: C = A * B, bf16 in and out, fp32 accumulation on the
// tensor cores through WMMA (16 x 16 x 16 bf16 fragments). A block
// computes a BM x BN tile of C with (BM / WM) * (BN / WN) warps, each
// owning a WM x WN sub-tile of (WM / 16) * (WN / 16) accumulator
// fragments. For each BK-wide slice of k, the block stages A's BM x BK
// tile and B's BK x BN tile in shared memory (rows padded by 8 elements),
// zero-filling past the edges of the matrices, so that fragments never
// read outside them. Tiles are loaded 8 elements (16 bytes) at a time
// where the row length is a multiple of 8 (16-byte aligned rows) and the
// 8 elements are inside the matrix, element by element otherwise. Each
// warp writes its fragments through a 16 x 16 fp32 staging tile in shared
// memory (which reuses the tiles' space once the k loop is done), rounding
// to bf16 and leaving out elements past m and n.

#include <cuda_bf16.h>
#include <mma.h>

// kevo:param
//   BM in {32, 64, 128} = 128
//   BN in {32, 64, 128} = 128
//   BK in {16, 32, 64} = 32
//   WM in {16, 32, 64} = 32
//   WN in {16, 32, 64} = 32
//   require BM % WM == 0 && BN % WN == 0
//   require (BM / WM) * (BN / WN) <= 32
//   require 2 * BM * (BK + 8) + 2 * BK * (BN + 8) <= 49152
//   require ceil_div(m, BM) <= 65535

/* kevo:launch
 *   gemm_bf16<<<dim3(ceil_div(n, BN), ceil_div(m, BM)),
 *               32 * (BM / WM) * (BN / WN)>>>(A, B, C, m, n, k)
 */

using namespace nvcuda;

#define WARPS_M (BM / WM)
#define WARPS_N (BN / WN)
#define NTHREADS (32 * WARPS_M * WARPS_N)
#define FM (WM / 16)
#define FN (WN / 16)
#define AS (BK + 8) // shared row strides, in elements: multiples of 8
#define BS (BN + 8)
#define TILE_BYTES (2 * BM * AS + 2 * BK * BS)
#define STAGE_BYTES (1024 * WARPS_M * WARPS_N) // a 16 x 16 fp32 tile a warp
#define SMEM_BYTES (TILE_BYTES > STAGE_BYTES ? TILE_BYTES : STAGE_BYTES)

typedef __nv_bfloat16 bf16;

// Copies 8 elements from row r, columns c to c + 7, of a rows x cols
// row-major matrix into dst (16-byte aligned), zero past its edges; vec:
// cols is a multiple of 8, so that a full chunk is one 16-byte load.
__device__ __forceinline__ void load8(bf16 *dst, const bf16 *__restrict__ src,
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

extern "C" __global__ void __launch_bounds__(NTHREADS)
    gemm_bf16(const bf16 *__restrict__ A, const bf16 *__restrict__ B,
              bf16 *__restrict__ C, int m, int n, int k)
{
    __shared__ __align__(128) unsigned char smem[SMEM_BYTES];
    bf16 *As = (bf16 *)smem, *Bs = As + BM * AS;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const bool avec = k % 8 == 0, bvec = n % 8 == 0;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++)
            wmma::fill_fragment(acc[i][j], 0.0f);

    for (int k0 = 0; k0 < k; k0 += BK) {
        for (int c = tid; c < BM * (BK / 8); c += NTHREADS) {
            const int r = c / (BK / 8), kk = c % (BK / 8) * 8;
            load8(&As[r * AS + kk], A, row0 + r, k0 + kk, m, k, avec);
        }
        for (int c = tid; c < BK * (BN / 8); c += NTHREADS) {
            const int r = c / (BN / 8), cc = c % (BN / 8) * 8;
            load8(&Bs[r * BS + cc], B, k0 + r, col0 + cc, k, n, bvec);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major>
                a[FM];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major>
                b[FN];
#pragma unroll
            for (int i = 0; i < FM; i++)
                wmma::load_matrix_sync(a[i], &As[(wm * WM + i * 16) * AS + kk],
                                       AS);
#pragma unroll
            for (int j = 0; j < FN; j++)
                wmma::load_matrix_sync(b[j], &Bs[kk * BS + wn * WN + j * 16],
                                       BS);
#pragma unroll
            for (int i = 0; i < FM; i++)
#pragma unroll
                for (int j = 0; j < FN; j++)
                    wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }

    float *cs = (float *)smem + warp * 256; // the k loop ended in a barrier
#pragma unroll
    for (int i = 0; i < FM; i++) {
#pragma unroll
        for (int j = 0; j < FN; j++) {
            wmma::store_matrix_sync(cs, acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            const int r0 = row0 + wm * WM + i * 16;
            const int c0 = col0 + wn * WN + j * 16;
            for (int e = lane; e < 256; e += 32) {
                const int r = r0 + e / 16, c = c0 + e % 16;
                if (r < m && c < n)
                    C[(long long)r * n + c] = __float2bfloat16_rn(cs[e]);
            }
            __syncwarp();
        }
    }
}

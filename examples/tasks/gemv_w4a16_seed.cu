// gemv_w4a16 seed: a warp per row of W, for every vector of the batch
// (BT vectors at a time, each with its own fp32 accumulator in the
// lanes; W is read once per BT vectors). Where k is a multiple of 8 (rows
// of W 4-byte aligned, rows of x 16-byte aligned), lane j takes the 32-bit
// words j, j + 32, ... of the row: eight weights of one group, unpacked
// (low nibble first) and dequantised in fp32 as (q - zero) * scale, times
// eight fp16 values of x read in one 16-byte load. Otherwise lane j takes
// columns j, j + 32, ... one at a time. The lanes' sums are added with
// warp shuffles and lane 0 writes y, rounded to fp16.

#include <cuda_fp16.h>

// kevo:param
//   WARPS in pow2(1..16) = 4
//   BT in {1, 2, 4, 8, 16} = 16

/* kevo:launch
 *   gemv_w4a16<<<ceil_div(n, WARPS), 32 * WARPS>>>(W, scales, zeros, x, y,
 *                                                  batch, n, k)
 */

#define FULL 0xffffffffu

// The fp16 values in the low and the high half of a 32-bit word.
__device__ __forceinline__ float half_lo(unsigned u)
{
    return __half2float(__ushort_as_half((unsigned short)(u & 0xffffu)));
}

__device__ __forceinline__ float half_hi(unsigned u)
{
    return __half2float(__ushort_as_half((unsigned short)(u >> 16)));
}

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    gemv_w4a16(const unsigned char *__restrict__ W,
               const __half *__restrict__ scales,
               const unsigned char *__restrict__ zeros,
               const __half *__restrict__ x, __half *__restrict__ y,
               int batch, int n, int k)
{
    const int lane = threadIdx.x % 32;
    const long long r = (long long)blockIdx.x * WARPS + threadIdx.x / 32;
    if (r >= n)
        return;
    const long long kb = (k + 1) / 2, groups = (k + 127) / 128;
    const unsigned char *wr = W + r * kb;
    const __half *sr = scales + r * groups;
    const unsigned char *zr = zeros + r * groups;

    for (int b0 = 0; b0 < batch; b0 += BT) {
        float acc[BT];
#pragma unroll
        for (int bb = 0; bb < BT; bb++)
            acc[bb] = 0.0f;
        if (k % 8 == 0) {
            const unsigned *w32 = (const unsigned *)wr;
            for (int wi = lane; wi < k / 8; wi += 32) {
                const unsigned q = w32[wi];
                const int g = wi / 16; // 8 weights a word, 128 a group
                const float s = __half2float(sr[g]), z = (float)zr[g];
                float w[8];
#pragma unroll
                for (int e = 0; e < 8; e++)
                    w[e] = ((float)((q >> (4 * e)) & 0xfu) - z) * s;
#pragma unroll
                for (int bb = 0; bb < BT; bb++) {
                    if (b0 + bb >= batch)
                        break;
                    const uint4 xv =
                        *(const uint4 *)(x + (long long)(b0 + bb) * k + wi * 8);
                    const unsigned xw[4] = {xv.x, xv.y, xv.z, xv.w};
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        acc[bb] = fmaf(w[2 * e], half_lo(xw[e]), acc[bb]);
                        acc[bb] = fmaf(w[2 * e + 1], half_hi(xw[e]), acc[bb]);
                    }
                }
            }
        } else {
            for (int c = lane; c < k; c += 32) {
                const unsigned byte = wr[c / 2];
                const unsigned q = c % 2 ? byte >> 4 : byte & 0xfu;
                const int g = c / 128;
                const float w =
                    ((float)q - (float)zr[g]) * __half2float(sr[g]);
#pragma unroll
                for (int bb = 0; bb < BT; bb++) {
                    if (b0 + bb >= batch)
                        break;
                    acc[bb] = fmaf(
                        w, __half2float(x[(long long)(b0 + bb) * k + c]),
                        acc[bb]);
                }
            }
        }
#pragma unroll
        for (int bb = 0; bb < BT; bb++) {
            float v = acc[bb];
            for (int off = 16; off > 0; off >>= 1)
                v += __shfl_xor_sync(FULL, v, off);
            if (lane == 0 && b0 + bb < batch)
                y[(long long)(b0 + bb) * n + r] = __float2half_rn(v);
        }
    }
}

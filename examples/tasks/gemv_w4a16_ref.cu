// gemv_w4a16 reference: y = W x for each of batch vectors, W an n x k
// matrix of 4-bit weights in groups of 128 along k. One thread per output
// element: for c = 0 .. k - 1 in order, the weight (q - zero) * scale of
// row r, column c (q the nibble c % 2 of byte r * ceil(k / 2) + c / 2: low
// nibble for even c, high for odd; zero and scale those of group c / 128)
// times x[b][c], accumulated in fp32 with fused multiply-adds; y[b][r] is
// the sum rounded once to fp16.

#include <cuda_fp16.h>

/* kevo:launch
 *   gemv_w4a16_ref<<<dim3(ceil_div(n, 128), batch), 128>>>(
 *       W, scales, zeros, x, y, n, k)
 */

extern "C" __global__ void gemv_w4a16_ref(const unsigned char *W,
                                          const __half *scales,
                                          const unsigned char *zeros,
                                          const __half *x, __half *y, int n,
                                          int k)
{
    const long long r = (long long)blockIdx.x * 128 + threadIdx.x;
    const long long b = blockIdx.y;
    if (r >= n)
        return;
    const long long kb = (k + 1) / 2, groups = (k + 127) / 128;
    float acc = 0.0f;
    for (long long c = 0; c < k; c++) {
        const unsigned byte = W[r * kb + c / 2];
        const unsigned q = c % 2 ? byte >> 4 : byte & 0xfu;
        const long long g = r * groups + c / 128;
        const float w =
            ((float)q - (float)zeros[g]) * __half2float(scales[g]);
        acc = fmaf(w, __half2float(x[b * k + c]), acc);
    }
    y[b * n + r] = __float2half_rn(acc);
}

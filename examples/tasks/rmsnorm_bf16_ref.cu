// rmsnorm_bf16 reference: the pre-norm of a transformer block, fused with
// its residual add. One thread per row: h = x + residual, each element
// added in fp32 and rounded to bf16; then the mean of the squares of the
// bf16 values of h, summed in fp32 in order; y = h * (1 / sqrt(mean +
// eps)) * weight in fp32, rounded once to bf16.

#include <cuda_bf16.h>

/* kevo:launch
 *   rmsnorm_bf16_ref<<<ceil_div(rows, 128), 128>>>(x, residual, weight, h, y,
 *                                                  rows, hidden, eps)
 */

extern "C" __global__ void
rmsnorm_bf16_ref(const __nv_bfloat16 *x, const __nv_bfloat16 *residual,
                 const __nv_bfloat16 *weight, __nv_bfloat16 *h,
                 __nv_bfloat16 *y, int rows, int hidden, float eps)
{
    long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    const long long base = row * hidden;
    float ss = 0.0f;
    for (int c = 0; c < hidden; c++) {
        __nv_bfloat16 v = __float2bfloat16_rn(__bfloat162float(x[base + c]) +
                                              __bfloat162float(residual[base + c]));
        h[base + c] = v;
        float f = __bfloat162float(v);
        ss = fmaf(f, f, ss);
    }
    const float inv = 1.0f / sqrtf(ss / (float)hidden + eps);
    for (int c = 0; c < hidden; c++)
        y[base + c] = __float2bfloat16_rn(__bfloat162float(h[base + c]) * inv *
                                          __bfloat162float(weight[c]));
}

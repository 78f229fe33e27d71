// Attention for attention_bf16 with a softmax in fp16 and no running
// maximum.
//
// The bug: exp(score) is taken without subtracting the row's maximum and
// held in fp16, and the softmax's sum and the weighted sum of V are
// accumulated in fp16. A score above 11.09 overflows fp16 to infinity (the
// task's inputs keep the scaled scores below about 6, so it does not
// happen here), and the sums lose their precision: at 4096 keys the row's
// sum is near 6800, where fp16's step is 4 and a probability below 2 adds
// nothing. It must be judged wrong. A warp per query row, one key at a
// time.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

/* kevo:launch
 *   attention_fp16_softmax<<<dim3(ceil_div(seq, 4), heads, batch), 128>>>(
 *       Q, K, V, O, heads, kv_heads, seq, head_dim, causal)
 */

#define FULL 0xffffffffu
#define MAXD 256

extern "C" __global__ void
attention_fp16_softmax(const __nv_bfloat16 *Q, const __nv_bfloat16 *K,
                       const __nv_bfloat16 *V, __nv_bfloat16 *O, int heads,
                       int kv_heads, int seq, int head_dim, int causal)
{
    const int lane = threadIdx.x % 32;
    const long long i = (long long)blockIdx.x * 4 + threadIdx.x / 32;
    if (i >= seq)
        return;
    const long long b = blockIdx.z, h = blockIdx.y;
    const long long hk = h / (heads / kv_heads);
    const long long d = head_dim;
    const __nv_bfloat16 *q = Q + ((b * heads + h) * seq + i) * d;
    const __nv_bfloat16 *k = K + (b * kv_heads + hk) * seq * d;
    const __nv_bfloat16 *v = V + (b * kv_heads + hk) * seq * d;
    const float scale = 1.0f / sqrtf((float)head_dim);
    const long long nkeys = causal ? i + 1 : seq;

    __half l = __float2half(0.0f), acc[MAXD / 32];
    for (int t = 0; t < MAXD / 32; t++)
        acc[t] = __float2half(0.0f);
    for (long long j = 0; j < nkeys; j++) {
        float dot = 0.0f;
        for (int c = lane; c < head_dim; c += 32)
            dot = fmaf(__bfloat162float(q[c]), __bfloat162float(k[j * d + c]),
                       dot);
        for (int off = 16; off > 0; off >>= 1)
            dot += __shfl_xor_sync(FULL, dot, off);
        __half p = hexp(__float2half(dot * scale));
        l = __hadd(l, p);
#pragma unroll
        for (int t = 0; t < MAXD / 32; t++) {
            int c = lane + 32 * t;
            if (c < head_dim)
                acc[t] = __hfma(p, __float2half(__bfloat162float(v[j * d + c])),
                                acc[t]);
        }
    }
    __nv_bfloat16 *o = O + ((b * heads + h) * seq + i) * d;
#pragma unroll
    for (int t = 0; t < MAXD / 32; t++) {
        int c = lane + 32 * t;
        if (c < head_dim)
            o[c] = __float2bfloat16_rn(__half2float(acc[t]) / __half2float(l));
    }
}

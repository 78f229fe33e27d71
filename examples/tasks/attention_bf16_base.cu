// attention_bf16 baseline: the plain bf16 attention that FlashAttention's
// tests compare against (their reference with upcast=False), whose errors
// set the task's tolerance. For each query row: every score q . k_j is
// summed in fp32, scaled by 1 / sqrt(head_dim) and rounded to bf16; the
// softmax of those bf16 scores is computed in fp32 (maximum subtracted)
// and each probability rounded to bf16; O is the sum of the bf16
// probabilities times V, accumulated in fp32 and rounded once to bf16.
// One warp per query row, as the reference: a pass for the largest score,
// one for the softmax's sum and one for the weighted sum of V, the scores
// computed again in each (no memory beyond registers). It is not timed.
// Query head h reads key and value head h / (heads / kv_heads). head_dim is
// at most 256.

#include <cuda_bf16.h>

/* kevo:launch
 *   attention_bf16_base<<<dim3(ceil_div(seq, 4), heads, batch), 128>>>(
 *       Q, K, V, O, heads, kv_heads, seq, head_dim, causal)
 */

#define FULL 0xffffffffu
#define MAXD 256
#define NEG_INF __int_as_float(0xff800000)

// The score of key j as the baseline has it: q . k_j in fp32, scaled and
// rounded to bf16; the same value in every lane.
__device__ float score_bf16(const __nv_bfloat16 *q, const __nv_bfloat16 *k,
                            int head_dim, float scale, int lane)
{
    float dot = 0.0f;
    for (int c = lane; c < head_dim; c += 32)
        dot = fmaf(__bfloat162float(q[c]), __bfloat162float(k[c]), dot);
    for (int off = 16; off > 0; off >>= 1)
        dot += __shfl_down_sync(FULL, dot, off);
    dot = __shfl_sync(FULL, dot, 0);
    return __bfloat162float(__float2bfloat16_rn(dot * scale));
}

extern "C" __global__ void
attention_bf16_base(const __nv_bfloat16 *Q, const __nv_bfloat16 *K,
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

    float mx = NEG_INF;
    for (long long j = 0; j < nkeys; j++)
        mx = fmaxf(mx, score_bf16(q, k + j * d, head_dim, scale, lane));

    float sum = 0.0f;
    for (long long j = 0; j < nkeys; j++)
        sum += expf(score_bf16(q, k + j * d, head_dim, scale, lane) - mx);

    float acc[MAXD / 32];
    for (int t = 0; t < MAXD / 32; t++)
        acc[t] = 0.0f;
    for (long long j = 0; j < nkeys; j++) {
        float s = score_bf16(q, k + j * d, head_dim, scale, lane);
        float p = __bfloat162float(__float2bfloat16_rn(expf(s - mx) / sum));
#pragma unroll
        for (int t = 0; t < MAXD / 32; t++) {
            int c = lane + 32 * t;
            if (c < head_dim)
                acc[t] = fmaf(p, __bfloat162float(v[j * d + c]), acc[t]);
        }
    }
    __nv_bfloat16 *o = O + ((b * heads + h) * seq + i) * d;
#pragma unroll
    for (int t = 0; t < MAXD / 32; t++) {
        int c = lane + 32 * t;
        if (c < head_dim)
            o[c] = __float2bfloat16_rn(acc[t]);
    }
}

// attention_bf16 reference: O = softmax(Q K^T / sqrt(head_dim), masked) V
// for every batch and head. One warp per query row: the score of each key
// is a dot product over the head dimension, each lane adding its columns
// in fp32 and lane 0's warp total shared with all lanes; a first pass over
// the keys the row sees finds the largest score, a second adds
// exp(score - max) and exp(score - max) * V[key] in fp32; the row is the
// sum over the weights, rounded once to bf16. No memory beyond registers:
// O(1) per row, scores are computed twice. Query head h reads key and value
// head h / (heads / kv_heads). head_dim is at most 256.

#include <cuda_bf16.h>

/* kevo:launch
 *   attention_bf16_ref<<<dim3(ceil_div(seq, 4), heads, batch), 128>>>(
 *       Q, K, V, O, heads, kv_heads, seq, head_dim, causal)
 */

#define FULL 0xffffffffu
#define MAXD 256
#define NEG_INF __int_as_float(0xff800000)

// The score of key j: q . k_j, the same value in every lane.
__device__ float score(const __nv_bfloat16 *q, const __nv_bfloat16 *k,
                       int head_dim, int lane)
{
    float dot = 0.0f;
    for (int c = lane; c < head_dim; c += 32)
        dot = fmaf(__bfloat162float(q[c]), __bfloat162float(k[c]), dot);
    for (int off = 16; off > 0; off >>= 1)
        dot += __shfl_down_sync(FULL, dot, off);
    return __shfl_sync(FULL, dot, 0);
}

extern "C" __global__ void attention_bf16_ref(
    const __nv_bfloat16 *Q, const __nv_bfloat16 *K, const __nv_bfloat16 *V,
    __nv_bfloat16 *O, int heads, int kv_heads, int seq, int head_dim,
    int causal)
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
        mx = fmaxf(mx, score(q, k + j * d, head_dim, lane) * scale);

    float sum = 0.0f, acc[MAXD / 32];
    for (int t = 0; t < MAXD / 32; t++)
        acc[t] = 0.0f;
    for (long long j = 0; j < nkeys; j++) {
        float p = expf(score(q, k + j * d, head_dim, lane) * scale - mx);
        sum += p;
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
            o[c] = __float2bfloat16_rn(acc[t] / sum);
    }
}

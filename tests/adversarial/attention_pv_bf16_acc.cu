// Attention for attention_bf16 that accumulates P V in bf16.
//
// The bug: the row's accumulators are rounded to bf16 after every key (as
// an MMA with a bf16 accumulator would), so long rows lose the small
// products. It must be judged wrong.
// The rest is a flash-style attention on the CUDA cores: a warp per query
// row, keys in tiles of TILE, each tile's scores in fp32 (one per lane),
// an online softmax (the running maximum m and sum l rescaled by each new
// tile's maximum), and the tile's probabilities times V added to the
// row's accumulators.

#include <cuda_bf16.h>

/* kevo:launch
 *   attention_pv_bf16_acc<<<dim3(ceil_div(seq, 4), heads, batch), 128>>>(
 *       Q, K, V, O, heads, kv_heads, seq, head_dim, causal)
 */

#define FULL 0xffffffffu
#define MAXD 256
#define TILE 64
#define NEG_INF __int_as_float(0xff800000)

// q . k in fp32, the same value in every lane.
__device__ float dot_warp(const __nv_bfloat16 *q, const __nv_bfloat16 *k,
                          int head_dim, int lane)
{
    float dot = 0.0f;
    for (int c = lane; c < head_dim; c += 32)
        dot = fmaf(__bfloat162float(q[c]), __bfloat162float(k[c]), dot);
    for (int off = 16; off > 0; off >>= 1)
        dot += __shfl_xor_sync(FULL, dot, off);
    return dot;
}

__device__ float round_bf16(float x)
{
    return __bfloat162float(__float2bfloat16_rn(x));
}

extern "C" __global__ void
attention_pv_bf16_acc(const __nv_bfloat16 *Q, const __nv_bfloat16 *K,
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

    float m = NEG_INF, l = 0.0f, acc[MAXD / 32];
    for (int t = 0; t < MAXD / 32; t++)
        acc[t] = 0.0f;
    for (long long j0 = 0; j0 < nkeys; j0 += TILE) {
        const int n = nkeys - j0 < TILE ? (int)(nkeys - j0) : TILE;
        // Lane r holds the scores of keys j0 + r and j0 + 32 + r.
        float s0 = NEG_INF, s1 = NEG_INF, tmax = NEG_INF;
        for (int jj = 0; jj < n; jj++) {
            float x = dot_warp(q, k + (j0 + jj) * d, head_dim, lane) * scale;
            if (lane == (jj & 31)) {
                if (jj < 32)
                    s0 = x;
                else
                    s1 = x;
            }
            tmax = fmaxf(tmax, x);
        }
        const float mnew = fmaxf(m, tmax);
        const float corr = expf(m - mnew); // 0 for the first tile
        l *= corr;
        for (int t = 0; t < MAXD / 32; t++)
            acc[t] = round_bf16(acc[t] * corr);
        const float p0 = expf(s0 - mnew), p1 = expf(s1 - mnew);
        float psum = p0 + p1;
        for (int off = 16; off > 0; off >>= 1)
            psum += __shfl_xor_sync(FULL, psum, off);
        l += psum;
        for (int jj = 0; jj < n; jj++) {
            float pj = __shfl_sync(FULL, jj < 32 ? p0 : p1, jj & 31);
            pj = round_bf16(pj);
#pragma unroll
            for (int t = 0; t < MAXD / 32; t++) {
                int c = lane + 32 * t;
                if (c < head_dim)
                    acc[t] = round_bf16(fmaf(
                        pj, __bfloat162float(v[(j0 + jj) * d + c]), acc[t]));
            }
        }
        m = mnew;
    }
    __nv_bfloat16 *o = O + ((b * heads + h) * seq + i) * d;
#pragma unroll
    for (int t = 0; t < MAXD / 32; t++) {
        int c = lane + 32 * t;
        if (c < head_dim)
            o[c] = __float2bfloat16_rn(acc[t] / l);
    }
}

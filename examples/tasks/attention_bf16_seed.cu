// attention_bf16 seed: flash-style attention on the CUDA cores, O(seq)
// memory. A block takes WARPS consecutive query rows of one batch and
// head, one warp per row, and walks the keys in tiles of BKV: the block
// stages the tile's K and V rows in shared memory (rows padded to
// head_dim + 2 elements, so that lanes reading different rows hit
// different banks; rows past seq are zero), then each warp scores its row
// against the tile (lane j takes keys j, j + 32, ...; q, pre-scaled by
// 1/sqrt(head_dim), sits in shared memory as fp32), and updates an online
// softmax: the running maximum m, the running sum l of exp(score - m), and
// the output row in registers (lane j owns columns j, j + 32, ...),
// rescaled by exp(m_old - m_new) whenever the maximum grows. With the
// causal mask a block stops at the tile holding its last row's diagonal,
// and masked keys weigh 0. The row is acc / l, rounded to bf16. fp32
// throughout; exp is expf. head_dim is a multiple of 8, at most 256.

#include <cuda_bf16.h>

// kevo:param
//   WARPS in {2, 4, 8, 16} = 8
//   BKV in {32, 64, 128} = 64

/* kevo:launch
 *   attention_bf16<<<dim3(ceil_div(seq, WARPS), heads, batch), 32 * WARPS,
 *                    4 * BKV * (head_dim + 2) + 4 * WARPS * head_dim>>>(
 *       Q, K, V, O, heads, kv_heads, seq, head_dim, causal)
 */

#define FULL 0xffffffffu
#define MAXD 256
#define NEG_INF __int_as_float(0xff800000)
#define NT (BKV / 32)  // keys a lane scores in a tile
#define ND (MAXD / 32) // output columns a lane may own

typedef __nv_bfloat16 bf16;

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    attention_bf16(const bf16 *__restrict__ Q, const bf16 *__restrict__ K,
                   const bf16 *__restrict__ V, bf16 *__restrict__ O,
                   int heads, int kv_heads, int seq, int head_dim, int causal)
{
    extern __shared__ __align__(16) unsigned char smem[];
    const int d = head_dim, ks = head_dim + 2;
    bf16 *Ks = (bf16 *)smem;
    bf16 *Vs = Ks + BKV * ks;
    float *Qs = (float *)(Vs + BKV * ks);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long long b = blockIdx.z, h = blockIdx.y;
    const long long hk = h / (heads / kv_heads);
    const int q0 = blockIdx.x * WARPS, qi = q0 + warp;
    const bool active = qi < seq;
    const bf16 *Kh = K + (b * kv_heads + hk) * seq * d;
    const bf16 *Vh = V + (b * kv_heads + hk) * seq * d;
    const long long orow = ((b * heads + h) * seq + qi) * d;

    float *q = Qs + warp * d;
    const float scale = 1.0f / sqrtf((float)d);
    if (active)
        for (int c = lane; c < d; c += 32)
            q[c] = __bfloat162float(Q[orow + c]) * scale;

    float m = NEG_INF, l = 0.0f, acc[ND];
#pragma unroll
    for (int i = 0; i < ND; i++)
        acc[i] = 0.0f;
    const int last = min(q0 + WARPS, seq) - 1; // the block's last row
    const int kend = causal ? last + 1 : seq;  // the keys it needs
    const int pairs = d / 2;

    for (int t0 = 0; t0 < kend; t0 += BKV) {
        __syncthreads(); // q is written; the last tile is used up
        for (int e = threadIdx.x; e < BKV * pairs; e += 32 * WARPS) {
            const int r = e / pairs, c = e % pairs * 2, key = t0 + r;
            unsigned kv = 0, vv = 0;
            if (key < seq) {
                kv = *(const unsigned *)&Kh[(long long)key * d + c];
                vv = *(const unsigned *)&Vh[(long long)key * d + c];
            }
            *(unsigned *)&Ks[r * ks + c] = kv;
            *(unsigned *)&Vs[r * ks + c] = vv;
        }
        __syncthreads();
        if (!active)
            continue;

        float s[NT], tmax = NEG_INF;
#pragma unroll
        for (int t = 0; t < NT; t++) {
            const int j = t * 32 + lane, key = t0 + j;
            const __nv_bfloat162 *kr = (const __nv_bfloat162 *)&Ks[j * ks];
            float dot = 0.0f;
            for (int c = 0; c < pairs; c++) {
                float2 kf = __bfloat1622float2(kr[c]);
                dot = fmaf(q[2 * c], kf.x, dot);
                dot = fmaf(q[2 * c + 1], kf.y, dot);
            }
            const bool valid = key < seq && (!causal || key <= qi);
            s[t] = valid ? dot : NEG_INF;
            tmax = fmaxf(tmax, s[t]);
        }
        for (int off = 16; off > 0; off >>= 1)
            tmax = fmaxf(tmax, __shfl_xor_sync(FULL, tmax, off));
        const float mnew = fmaxf(m, tmax);
        if (mnew == NEG_INF) // no key of this row yet
            continue;
        const float alpha = expf(m - mnew);
        float psum = 0.0f;
#pragma unroll
        for (int t = 0; t < NT; t++) {
            s[t] = expf(s[t] - mnew);
            psum += s[t];
        }
        for (int off = 16; off > 0; off >>= 1)
            psum += __shfl_xor_sync(FULL, psum, off);
        l = l * alpha + psum;
#pragma unroll
        for (int i = 0; i < ND; i++)
            acc[i] *= alpha;
#pragma unroll
        for (int t = 0; t < NT; t++) {
            for (int src = 0; src < 32; src++) {
                const float p = __shfl_sync(FULL, s[t], src);
                if (p == 0.0f) // a masked key (or a weight that underflows)
                    continue;
                const bf16 *vr = &Vs[(t * 32 + src) * ks];
#pragma unroll
                for (int i = 0; i < ND; i++) {
                    const int c = lane + 32 * i;
                    if (c < d)
                        acc[i] = fmaf(p, __bfloat162float(vr[c]), acc[i]);
                }
            }
        }
        m = mnew;
    }
    if (active) {
#pragma unroll
        for (int i = 0; i < ND; i++) {
            const int c = lane + 32 * i;
            if (c < d)
                O[orow + c] = __float2bfloat16_rn(acc[i] / l);
        }
    }
}

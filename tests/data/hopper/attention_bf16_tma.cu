// attention_bf16 on Hopper, in the manner of FlashAttention-3: TMA loads
// of Q, K and V, wgmma for both products, a producer warpgroup and two
// consumer warpgroups. The kernel is persistent: each block walks work
// items (128 query rows of one batch and head; with the causal mask the
// items with the most keys first), and the producer loads the next item's
// Q into a second buffer and its first K and V tiles while the consumers
// finish this one. Each consumer owns 64 of the 128 rows. For each tile of
// 128 keys it computes S = Q K^T with wgmma from shared memory (fp32),
// applies the mask and an online softmax in registers (exp2 of the scores
// scaled by log2(e) / sqrt(head_dim), the running maximum subtracted, in
// one fused multiply-add), rounds P to bf16 and accumulates O += P V with
// wgmma, P coming from registers (the accumulator layout of S is the
// operand layout of P). K and V go through a ring of two stages. The maps
// are 3-D, (head_dim, seq, batch x heads), so that keys and queries past
// seq are the TMA's zero fill, never the next head's rows; masked and
// padded keys score -infinity.
//
// head_dim 64 and 128 take this path (attn_hd64, attn_hd128); other head
// dims take attention_any, the task's CUDA-core kernel.

#include <cuda_bf16.h>

/* kevo:launch
 *   tensormap tmQ Q bf16 dims(head_dim, seq, batch * heads) box(64, 128, 1) swizzle(128)
 *   tensormap tmK K bf16 dims(head_dim, seq, batch * kv_heads) box(64, 128, 1) swizzle(128)
 *   tensormap tmV V bf16 dims(head_dim, seq, batch * kv_heads) box(64, 128, 1) swizzle(128)
 *   attn_hd128<<<min(ceil_div(seq, 128) * heads * batch, sm_count), 384,
 *                197696>>>(tmQ, tmK, tmV, O, batch, heads, kv_heads, seq,
 *                          causal) if head_dim == 128
 *   attn_hd64<<<min(ceil_div(seq, 128) * heads * batch, sm_count), 384,
 *               99392>>>(tmQ, tmK, tmV, O, batch, heads, kv_heads, seq,
 *                        causal) if head_dim == 64
 *   attention_any<<<dim3(ceil_div(seq, 8), heads, batch), 256,
 *                   256 * (head_dim + 2) + 32 * head_dim>>>(Q, K, V, O,
 *       heads, kv_heads, seq, head_dim,
 *       causal) if head_dim != 64 && head_dim != 128
 */

typedef __nv_bfloat16 bf16;

// What kevo passes for a tensormap: the 128-byte CUtensorMap.
struct alignas(64) TmaMap {
    unsigned long long v[16];
};

#define BQ 128   // query rows a block
#define BKV 128  // keys a tile
#define STAGES 2 // K and V tiles in flight
#define NEG_INF __int_as_float(0xff800000)

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

// A box of a 3-D map at (c0, c1, c2) into shared memory at dst.
__device__ __forceinline__ void tma_load3(unsigned dst, const TmaMap *map,
                                          unsigned bar, int c0, int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::"
                 "complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(dst),
                 "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
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

// S (64 x 128) = Q (64 x 16, K-major) * K^T (16 x 128 keys, K-major), both
// from shared memory; scale_d 0 overwrites S.
__device__ __forceinline__ void wgmma_ss_n128(float d[64], unsigned long long da, unsigned long long db, int scale_d)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                 "{"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63 "
                 "}, %64, %65, p, 1, 1, 0, 0;\n"
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
                   "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db), "r"(scale_d));
}

// O (64 x 128) += P (64 x 16, registers) * V (16 keys x 128, N-major).
__device__ __forceinline__ void wgmma_rs_n128(float d[64], const unsigned a[4], unsigned long long db, int scale_d)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                 "{"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63 "
                 "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n"
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
                   "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));
}

// O (64 x 64) += P (64 x 16, registers) * V (16 keys x 64, N-major).
__device__ __forceinline__ void wgmma_rs_n64(float d[32], const unsigned a[4], unsigned long long db, int scale_d)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                 "{"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31 "
                 "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n"
                 "}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
                   "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
                   "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));
}

__device__ __forceinline__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void wgmma_wait0()
{
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}

__device__ __forceinline__ unsigned pack_bf16(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *(unsigned *)&v;
}

// Shared memory, for head dim HD: two Q tiles (BQ x HD: the block's next
// query tile loads while it works on this one), then STAGES x (K, V),
// each BKV x HD, every tile stored as HD / 64 column chunks of 128-byte
// rows; then the barriers. 1 KiB of slack aligns the tiles to 1024 bytes.
template <int HD> struct Layout {
    static const int CHUNKS = HD / 64;
    static const int Q_BYTES = BQ * HD * 2;
    static const int KV_BYTES = BKV * HD * 2;
    static const int STAGE = 2 * KV_BYTES;
    static const int BARS = 2 * Q_BYTES + STAGES * STAGE;
    // qfull[2], qempty[2], full[STAGES], empty[STAGES]
    static const int SMEM = BARS + 8 * (4 + 2 * STAGES) + 1024;
};

// Work item i of the grid's walk: query tile qb of (batch, head) bh. With
// the causal mask the tiles with the most keys come first, so that the
// blocks end together.
__device__ __forceinline__ void work_item(int i, int nqb, int nbh, int causal,
                                          int &qb, int &bh)
{
    qb = i / nbh;
    bh = i % nbh;
    if (causal)
        qb = nqb - 1 - qb;
}

template <int HD>
__device__ __forceinline__ void attention(const TmaMap *tmQ, const TmaMap *tmK,
                                          const TmaMap *tmV, bf16 *O,
                                          int batch, int heads, int kv_heads,
                                          int seq, int causal)
{
    typedef Layout<HD> L;
    extern __shared__ unsigned char smem_raw[];
    const unsigned base = (smem_addr(smem_raw) + 1023) & ~1023u;
    const unsigned qs = base, kvs = base + 2 * L::Q_BYTES;
    const unsigned bars = base + L::BARS;
    const unsigned qfull = bars, qempty = bars + 16;
    const unsigned full = bars + 32, empty = bars + 32 + 8 * STAGES;
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const int nqb = (seq + BQ - 1) / BQ, nbh = batch * heads;
    const int items = nqb * nbh;
    const int group = heads / kv_heads;

    if (threadIdx.x == 0) {
        for (int i = 0; i < 2; i++) {
            mbar_init(qfull + 8 * i, 1);
            mbar_init(qempty + 8 * i, 2);
        }
        for (int s = 0; s < STAGES; s++) {
            mbar_init(full + 8 * s, 1);
            mbar_init(empty + 8 * s, 2);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (tid == 0) {
            int it = 0; // K, V tiles loaded so far
            for (int i = blockIdx.x, j = 0; i < items; i += gridDim.x, j++) {
                int qb, bh;
                work_item(i, nqb, nbh, causal, qb, bh);
                const int q0 = qb * BQ;
                const int kvrow = bh / heads * kv_heads + bh % heads / group;
                const int kend = causal ? min(q0 + BQ, seq) : seq;
                const int tiles = (kend + BKV - 1) / BKV;
                const int qi = j & 1;
                mbar_wait(qempty + 8 * qi, (j / 2 & 1) ^ 1);
                mbar_expect(qfull + 8 * qi, L::Q_BYTES);
                for (int c = 0; c < L::CHUNKS; c++)
                    tma_load3(qs + qi * L::Q_BYTES + c * BQ * 128, tmQ,
                              qfull + 8 * qi, 64 * c, q0, bh);
                for (int t = 0; t < tiles; t++, it++) {
                    const int s = it % STAGES;
                    mbar_wait(empty + 8 * s, (it / STAGES & 1) ^ 1);
                    mbar_expect(full + 8 * s, L::STAGE);
                    const unsigned k = kvs + s * L::STAGE, v = k + L::KV_BYTES;
                    for (int c = 0; c < L::CHUNKS; c++) {
                        tma_load3(k + c * BKV * 128, tmK, full + 8 * s, 64 * c,
                                  t * BKV, kvrow);
                        tma_load3(v + c * BKV * 128, tmV, full + 8 * s, 64 * c,
                                  t * BKV, kvrow);
                    }
                }
            }
        }
        __syncwarp();
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    const int c = wg - 1, warp = tid / 32, lane = tid % 32;
    const int r = c * 64 + warp * 16 + lane / 4; // this thread's first row
    const float scale = 1.4426950408889634f * rsqrtf((float)HD);
    int it = 0;
    for (int i = blockIdx.x, j = 0; i < items; i += gridDim.x, j++) {
        int qb, bh;
        work_item(i, nqb, nbh, causal, qb, bh);
        const int q0 = qb * BQ, qa = q0 + r, qb8 = qa + 8;
        const int kend = causal ? min(q0 + BQ, seq) : seq;
        const int tiles = (kend + BKV - 1) / BKV;
        const int qi = j & 1;
        float o[HD / 2], s[64];
        float m0 = NEG_INF, m1 = NEG_INF, l0 = 0.0f, l1 = 0.0f;
#pragma unroll
        for (int e = 0; e < HD / 2; e++)
            o[e] = 0.0f;
        mbar_wait(qfull + 8 * qi, j / 2 & 1);
        // this consumer's 64 rows of the query tile
        const unsigned qc = qs + qi * L::Q_BYTES + c * 64 * 128;
        for (int t = 0; t < tiles; t++, it++) {
            const int st = it % STAGES;
            mbar_wait(full + 8 * st, it / STAGES & 1);
            const unsigned k = kvs + st * L::STAGE, v = k + L::KV_BYTES;
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < HD / 16; kk++) {
                const unsigned off = (kk % 4) * 32; // within a 128-byte row
                wgmma_ss_n128(
                    s, desc128(qc + (kk / 4) * BQ * 128 + off, 16, 1024),
                    desc128(k + (kk / 4) * BKV * 128 + off, 16, 1024), kk > 0);
            }
            wgmma_commit();
            wgmma_wait0();
            if (t == tiles - 1 && tid == 0) // Q is no longer read
                asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(
                                 qempty + 8 * qi)
                             : "memory");

            // s[4 j + {0, 1}]: row r, keys t BKV + 8 j + 2 (lane % 4) +
            // {0, 1}; s[4 j + {2, 3}]: row r + 8. Masked keys score -inf.
            if (t * BKV + BKV > seq ||
                (causal && t * BKV + BKV - 1 > q0 + c * 64)) {
                const int key0 = t * BKV + 2 * (lane % 4);
#pragma unroll
                for (int n = 0; n < 16; n++) {
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const int key = key0 + 8 * n + e;
                        if (key >= seq || (causal && key > qa))
                            s[4 * n + e] = NEG_INF;
                        if (key >= seq || (causal && key > qb8))
                            s[4 * n + 2 + e] = NEG_INF;
                    }
                }
            }
            float x0 = NEG_INF, x1 = NEG_INF;
#pragma unroll
            for (int n = 0; n < 16; n++) {
                x0 = fmaxf(x0, fmaxf(s[4 * n], s[4 * n + 1]));
                x1 = fmaxf(x1, fmaxf(s[4 * n + 2], s[4 * n + 3]));
            }
            x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, 1));
            x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, 2));
            x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, 1));
            x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, 2));
            // the running maxima, in units of the scaled scores
            const float n0 = fmaxf(m0, x0 * scale), n1 = fmaxf(m1, x1 * scale);
            const float f0 = exp2f(m0 - n0), f1 = exp2f(m1 - n1);
            m0 = n0;
            m1 = n1;
            float sum0 = 0.0f, sum1 = 0.0f;
            unsigned p[32];
#pragma unroll
            for (int n = 0; n < 16; n++) {
                const float a0 = exp2f(fmaf(s[4 * n], scale, -n0));
                const float a1 = exp2f(fmaf(s[4 * n + 1], scale, -n0));
                const float b0 = exp2f(fmaf(s[4 * n + 2], scale, -n1));
                const float b1 = exp2f(fmaf(s[4 * n + 3], scale, -n1));
                sum0 += a0 + a1;
                sum1 += b0 + b1;
                p[2 * n] = pack_bf16(a0, a1);
                p[2 * n + 1] = pack_bf16(b0, b1);
            }
            l0 = l0 * f0 + sum0;
            l1 = l1 * f1 + sum1;
#pragma unroll
            for (int n = 0; n < HD / 8; n++) {
                o[4 * n] *= f0;
                o[4 * n + 1] *= f0;
                o[4 * n + 2] *= f1;
                o[4 * n + 3] *= f1;
            }

            // P's 16-key chunk kc as the A operand: (row r, keys +0..1), (row
            // r + 8, +0..1), (row r, +8..9), (row r + 8, +8..9) of the chunk:
            // p[4 kc], p[4 kc + 1], p[4 kc + 2], p[4 kc + 3].
            wgmma_fence();
#pragma unroll
            for (int kc = 0; kc < BKV / 16; kc++) {
                const unsigned long long dv =
                    desc128(v + kc * 16 * 128, BKV * 128, 1024);
                if (HD == 128)
                    wgmma_rs_n128(o, &p[4 * kc], dv, 1);
                else
                    wgmma_rs_n64(o, &p[4 * kc], dv, 1);
            }
            wgmma_commit();
            wgmma_wait0();
            if (tid == 0)
                asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(
                                 empty + 8 * st)
                             : "memory");
        }

        l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
        l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
        l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
        l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
        const float i0 = 1.0f / l0, i1 = 1.0f / l1;
        bf16 *out = O + (long long)bh * seq * HD;
#pragma unroll
        for (int n = 0; n < HD / 8; n++) {
            const int col = 8 * n + 2 * (lane % 4);
            if (qa < seq)
                *(unsigned *)&out[(long long)qa * HD + col] =
                    pack_bf16(o[4 * n] * i0, o[4 * n + 1] * i0);
            if (qb8 < seq)
                *(unsigned *)&out[(long long)qb8 * HD + col] =
                    pack_bf16(o[4 * n + 2] * i1, o[4 * n + 3] * i1);
        }
    }
}

extern "C" __global__ void __launch_bounds__(384, 1)
    attn_hd128(const __grid_constant__ TmaMap tmQ,
               const __grid_constant__ TmaMap tmK,
               const __grid_constant__ TmaMap tmV, bf16 *__restrict__ O,
               int batch, int heads, int kv_heads, int seq, int causal)
{
    attention<128>(&tmQ, &tmK, &tmV, O, batch, heads, kv_heads, seq, causal);
}

extern "C" __global__ void __launch_bounds__(384, 1)
    attn_hd64(const __grid_constant__ TmaMap tmQ,
              const __grid_constant__ TmaMap tmK,
              const __grid_constant__ TmaMap tmV, bf16 *__restrict__ O,
              int batch, int heads, int kv_heads, int seq, int causal)
{
    attention<64>(&tmQ, &tmK, &tmV, O, batch, heads, kv_heads, seq, causal);
}

// ---- attention_any: the general path for other head dims, the task's
// CUDA-core kernel with 8 warps a block and tiles of 64 keys.
#define S_WARPS 8
#define S_BKV 64
#define S_FULL 0xffffffffu
#define S_MAXD 256
#define S_NEG_INF __int_as_float(0xff800000)
#define S_NT (S_BKV / 32)  // keys a lane scores in a tile
#define S_ND (S_MAXD / 32) // output columns a lane may own


extern "C" __global__ void __launch_bounds__(32 * S_WARPS)
    attention_any(const bf16 *__restrict__ Q, const bf16 *__restrict__ K,
                   const bf16 *__restrict__ V, bf16 *__restrict__ O,
                   int heads, int kv_heads, int seq, int head_dim, int causal)
{
    extern __shared__ __align__(16) unsigned char smem[];
    const int d = head_dim, ks = head_dim + 2;
    bf16 *Ks = (bf16 *)smem;
    bf16 *Vs = Ks + S_BKV * ks;
    float *Qs = (float *)(Vs + S_BKV * ks);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long long b = blockIdx.z, h = blockIdx.y;
    const long long hk = h / (heads / kv_heads);
    const int q0 = blockIdx.x * S_WARPS, qi = q0 + warp;
    const bool active = qi < seq;
    const bf16 *Kh = K + (b * kv_heads + hk) * seq * d;
    const bf16 *Vh = V + (b * kv_heads + hk) * seq * d;
    const long long orow = ((b * heads + h) * seq + qi) * d;

    float *q = Qs + warp * d;
    const float scale = 1.0f / sqrtf((float)d);
    if (active)
        for (int c = lane; c < d; c += 32)
            q[c] = __bfloat162float(Q[orow + c]) * scale;

    float m = S_NEG_INF, l = 0.0f, acc[S_ND];
#pragma unroll
    for (int i = 0; i < S_ND; i++)
        acc[i] = 0.0f;
    const int last = min(q0 + S_WARPS, seq) - 1; // the block's last row
    const int kend = causal ? last + 1 : seq;  // the keys it needs
    const int pairs = d / 2;

    for (int t0 = 0; t0 < kend; t0 += S_BKV) {
        __syncthreads(); // q is written; the last tile is used up
        for (int e = threadIdx.x; e < S_BKV * pairs; e += 32 * S_WARPS) {
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

        float s[S_NT], tmax = S_NEG_INF;
#pragma unroll
        for (int t = 0; t < S_NT; t++) {
            const int j = t * 32 + lane, key = t0 + j;
            const __nv_bfloat162 *kr = (const __nv_bfloat162 *)&Ks[j * ks];
            float dot = 0.0f;
            for (int c = 0; c < pairs; c++) {
                float2 kf = __bfloat1622float2(kr[c]);
                dot = fmaf(q[2 * c], kf.x, dot);
                dot = fmaf(q[2 * c + 1], kf.y, dot);
            }
            const bool valid = key < seq && (!causal || key <= qi);
            s[t] = valid ? dot : S_NEG_INF;
            tmax = fmaxf(tmax, s[t]);
        }
        for (int off = 16; off > 0; off >>= 1)
            tmax = fmaxf(tmax, __shfl_xor_sync(S_FULL, tmax, off));
        const float mnew = fmaxf(m, tmax);
        if (mnew == S_NEG_INF) // no key of this row yet
            continue;
        const float alpha = expf(m - mnew);
        float psum = 0.0f;
#pragma unroll
        for (int t = 0; t < S_NT; t++) {
            s[t] = expf(s[t] - mnew);
            psum += s[t];
        }
        for (int off = 16; off > 0; off >>= 1)
            psum += __shfl_xor_sync(S_FULL, psum, off);
        l = l * alpha + psum;
#pragma unroll
        for (int i = 0; i < S_ND; i++)
            acc[i] *= alpha;
#pragma unroll
        for (int t = 0; t < S_NT; t++) {
            for (int src = 0; src < 32; src++) {
                const float p = __shfl_sync(S_FULL, s[t], src);
                if (p == 0.0f) // a masked key (or a weight that underflows)
                    continue;
                const bf16 *vr = &Vs[(t * 32 + src) * ks];
#pragma unroll
                for (int i = 0; i < S_ND; i++) {
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
        for (int i = 0; i < S_ND; i++) {
            const int c = lane + 32 * i;
            if (c < d)
                O[orow + c] = __float2bfloat16_rn(acc[i] / l);
        }
    }
}

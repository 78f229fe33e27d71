// sgemm seed: C = A * B, fp32, row-major. Shared-memory tiling with
// register blocking: a block computes a BM x BN tile of C with
// (BM / TM) * (BN / TN) threads, each owning a TM x TN sub-tile in
// registers. For each BK-wide slice of k, the block stages A's BM x BK
// tile (transposed, so a thread's TM values are contiguous) and B's
// BK x BN tile in shared memory, zero-filling past the edges of the
// matrices, then accumulates outer products. Accumulation is in fp32 with
// plain FMAs (no tensor cores).

// kevo:param
//   BM in pow2(16..128) = 64
//   BN in pow2(16..128) = 64
//   BK in pow2(4..32) = 8
//   TM in pow2(1..8) = 4
//   TN in pow2(1..8) = 4
//   require (BM / TM) * (BN / TN) >= 32
//   require (BM / TM) * (BN / TN) <= 1024
//   require ceil_div(m, BM) <= 65535

/* kevo:launch
 *   sgemm<<<dim3(ceil_div(n, BN), ceil_div(m, BM)), (BM / TM) * (BN / TN)>>>(
 *       A, B, C, m, n, k)
 */

#define NTHREADS ((BM / TM) * (BN / TN))

extern "C" __global__ void __launch_bounds__(NTHREADS)
    sgemm(const float *__restrict__ A, const float *__restrict__ B,
          float *__restrict__ C, int m, int n, int k)
{
    __shared__ float As[BK][BM];
    __shared__ float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN);
    const int ty = tid / (BN / TN);
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
            acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < k; k0 += BK) {
        for (int e = tid; e < BM * BK; e += NTHREADS) {
            const int r = e / BK, kk = e % BK;
            const int gr = row0 + r, gk = k0 + kk;
            As[kk][r] = gr < m && gk < k ? A[(long long)gr * k + gk] : 0.0f;
        }
        for (int e = tid; e < BK * BN; e += NTHREADS) {
            const int kk = e / BN, c = e % BN;
            const int gk = k0 + kk, gc = col0 + c;
            Bs[kk][c] = gk < k && gc < n ? B[(long long)gk * n + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i++)
                a[i] = As[kk][ty * TM + i];
#pragma unroll
            for (int j = 0; j < TN; j++)
                b[j] = Bs[kk][tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; i++) {
        const int r = row0 + ty * TM + i;
        if (r >= m)
            continue;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            const int c = col0 + tx * TN + j;
            if (c < n)
                C[(long long)r * n + c] = acc[i][j];
        }
    }
}

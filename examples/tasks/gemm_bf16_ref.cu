// gemm_bf16 reference: C = A * B with A m x k, B k x n, C m x n, all
// row-major bf16. One thread per element of C; the dot product is
// accumulated in fp32 with fused multiply-adds in the order of k, and
// rounded once to bf16 (to nearest, ties to even).

#include <cuda_bf16.h>

/* kevo:launch
 *   gemm_bf16_ref<<<dim3(ceil_div(n, 32), ceil_div(m, 8)), dim3(32, 8)>>>(
 *       A, B, C, m, n, k)
 */

extern "C" __global__ void gemm_bf16_ref(const __nv_bfloat16 *A,
                                         const __nv_bfloat16 *B,
                                         __nv_bfloat16 *C, int m, int n,
                                         int k)
{
    long long col = (long long)blockIdx.x * 32 + threadIdx.x;
    long long row = (long long)blockIdx.y * 8 + threadIdx.y;
    if (row >= m || col >= n)
        return;
    float acc = 0.0f;
    for (long long i = 0; i < k; i++)
        acc = fmaf(__bfloat162float(A[row * k + i]),
                   __bfloat162float(B[i * n + col]), acc);
    C[row * n + col] = __float2bfloat16_rn(acc);
}

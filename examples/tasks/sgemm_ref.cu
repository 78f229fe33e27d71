// sgemm reference: C = A * B with A m x k, B k x n, C m x n, all row-major
// fp32. One thread per element of C; the dot product is accumulated in
// double and rounded once.

/* kevo:launch
 *   sgemm_ref<<<dim3(ceil_div(n, 32), ceil_div(m, 8)), dim3(32, 8)>>>(
 *       A, B, C, m, n, k)
 */

extern "C" __global__ void sgemm_ref(const float *A, const float *B, float *C,
                                     int m, int n, int k)
{
    long long col = (long long)blockIdx.x * 32 + threadIdx.x;
    long long row = (long long)blockIdx.y * 8 + threadIdx.y;
    if (row >= m || col >= n)
        return;
    double acc = 0.0;
    for (long long i = 0; i < k; i++)
        acc += (double)A[row * k + i] * (double)B[i * n + col];
    C[row * n + col] = (float)acc;
}

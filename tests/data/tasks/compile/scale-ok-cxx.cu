// expect ok
// A C++ kernel (no extern "C": it is found by its lowered name), an
// unsigned count and a 64-bit value, each passed with its cast.
/* kevo:launch
 *   scale<<<ceil_div(n, 256), 256>>>(x, y, alpha, n, (i64)n * 4, (u32)max(n, 0))
 */
__global__ void scale(const float *__restrict__ x, float *__restrict__ y,
                      float alpha, int n, long long bytes, unsigned count)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count && bytes == 4ll * n)
        y[i] = alpha * x[i];
}

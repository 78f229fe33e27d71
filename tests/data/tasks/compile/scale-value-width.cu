// expect rejected: scale-value-width.cu:4: kevo:launch: parameter 5 of kernel 'scale' is a pointer or a 64-bit integer (.u64) and the launch passes 'n * 4' (i32, received as int); cast it, (i64) or (u64), for a 64-bit parameter
// An expression without a cast is passed as an int.
/* kevo:launch
 *   scale<<<ceil_div(n, 256), 256>>>(x, y, alpha, n,
 *                                    n * 4)
 */
__global__ void scale(const float *x, float *y, float alpha, int n,
                      long long bytes)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && bytes > 0)
        y[i] = alpha * x[i];
}

// expect compile_error: compile error: scale-syntax.cu(9): error: expected a ";"
// NVRTC's own error: a missing semicolon.
/* kevo:launch
 *   scale<<<ceil_div(n, 256), 256>>>(x, y, alpha, n)
 */
__global__ void scale(const float *x, float *y, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x
    if (i < n)
        y[i] = alpha * x[i];
}

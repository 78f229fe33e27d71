// A baseline whose launch names an argument the task does not have.

/* kevo:launch
 *   scale_base<<<ceil_div(n, 256), 256>>>(x, y, beta, n)
 */

extern "C" __global__ void scale_base(const float *x, float *y, float beta,
                                      int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = beta * x[i];
}

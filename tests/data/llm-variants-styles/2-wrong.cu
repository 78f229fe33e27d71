// saxpy, "factored": z = a * (x + y), one multiply fewer per element. This
// one is deliberately wrong (a * (x + y) is not a * x + y): a search must
// judge it "wrong" and go on.

/* kevo:launch
 *   saxpy_factored<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)
 */

extern "C" __global__ void __launch_bounds__(256)
    saxpy_factored(float a, const float *__restrict__ x,
                   const float *__restrict__ y, float *__restrict__ z, int n)
{
    const long long i = (long long)blockIdx.x * 256 + threadIdx.x;
    if (i < n)
        z[i] = a * (x[i] + y[i]);
}

// saxpy reference: z[i] = a * x[i] + y[i], one thread per element, computed
// in double and rounded once.

/* kevo:launch
 *   saxpy_ref<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)
 */

extern "C" __global__ void saxpy_ref(float a, const float *x, const float *y,
                                     float *z, int n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        z[i] = (float)((double)a * (double)x[i] + (double)y[i]);
}

// Computes the right result and then overwrites its input x with it.

/* kevo:launch
 *   saxpy_inplace<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)
 */

extern "C" __global__ void saxpy_inplace(float a, float *x, const float *y,
                                         float *z, int n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float r = a * x[i] + y[i];
        z[i] = r;
        x[i] = r;
    }
}

// Traps on the device when it meets an element it does not like.

/* kevo:launch
 *   saxpy_trap<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)
 */

extern "C" __global__ void saxpy_trap(float a, const float *x, const float *y,
                                      float *z, int n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        if (i == n / 2)
            __trap();
        z[i] = a * x[i] + y[i];
    }
}

// Never finishes: one thread spins forever on a value nobody changes.

/* kevo:launch
 *   saxpy_spin<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)
 */

extern "C" __global__ void saxpy_spin(float a, const float *x, const float *y,
                                      float *z, int n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) {
        volatile int *flag = (volatile int *)&z[0];
        while (flag[0] != 12345)
            ;
    }
    if (i < n)
        z[i] = a * x[i] + y[i];
}

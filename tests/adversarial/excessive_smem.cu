// Asks for more dynamic shared memory per block than any GPU has (1 MiB).

/* kevo:launch
 *   saxpy_smem<<<ceil_div(n, 256), 256, 1048576>>>(a, x, y, z, n)
 */

extern "C" __global__ void saxpy_smem(float a, const float *x, const float *y,
                                      float *z, int n)
{
    extern __shared__ float stage[];
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        stage[threadIdx.x] = x[i];
        z[i] = a * stage[threadIdx.x] + y[i];
    }
}

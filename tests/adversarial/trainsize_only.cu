// Right only at saxpy's training sizes: at any other n it leaves y out. A
// kernel that learned the sizes instead of the operation; the held-out
// gate catches it as wrong at the first held-out shape.

/* kevo:launch
 *   saxpy_sizes<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)
 */

extern "C" __global__ void saxpy_sizes(float a, const float *x, const float *y,
                                       float *z, int n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    bool trained = n == 16777216 || n == 4194304 || n == 1000000;
    z[i] = trained ? a * x[i] + y[i] : a * x[i];
}

// Right everywhere, fast only at saxpy's training sizes: at any other n it
// takes a slow path (4096 dependent multiply-adds per element that leave
// the value unchanged). A kernel tuned to the sizes it was timed at; the
// held-out gate catches it by its time against the seed's there.

/* kevo:launch
 *   saxpy_fastpath<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)
 */

extern "C" __global__ void saxpy_fastpath(float a, const float *x,
                                          const float *y, float *z, int n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    if (n == 16777216 || n == 4194304 || n == 1000000) {
        z[i] = a * x[i] + y[i];
        return;
    }
    /* 1 and 0 at run time, so the loop cannot be folded away. */
    float one = 1.0f + (float)(n < 0), zero = (float)(n < 0);
    float t = x[i];
    for (int k = 0; k < 4096; k++)
        t = fmaf(t, one, zero);
    z[i] = a * t + y[i];
}

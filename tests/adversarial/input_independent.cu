// Writes values that look like a result (the right distribution, every
// element written) but never reads x or y.

/* kevo:launch
 *   saxpy_fake<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)
 */

extern "C" __global__ void saxpy_fake(float a, const float *x, const float *y,
                                      float *z, int n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned h = (unsigned)i * 2654435761u;
        h ^= h >> 16;
        z[i] = a * ((h & 0xffff) / 32768.0f - 1.0f);
    }
}

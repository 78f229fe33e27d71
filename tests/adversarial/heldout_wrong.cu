// Right on every training shape of saxpy (each n is a multiple of 4) and
// wrong at the held-out shapes: it works in float4 vectors and drops the
// last n % 4 elements. Shape-specialised code; the held-out gate catches it.

/* kevo:launch
 *   saxpy4<<<ceil_div(n / 4, 256), 256>>>(a, x, y, z, n)
 */

extern "C" __global__ void saxpy4(float a, const float4 *x, const float4 *y,
                                  float4 *z, int n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 4) {
        float4 u = x[i], v = y[i];
        z[i] = make_float4(a * u.x + v.x, a * u.y + v.y, a * u.z + v.z,
                           a * u.w + v.w);
    }
}

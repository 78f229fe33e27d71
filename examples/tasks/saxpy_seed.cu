// saxpy seed: z[i] = a * x[i] + y[i]. Each thread handles ITEMS vectors of
// VEC floats; consecutive threads touch consecutive vectors, so every load
// and store is coalesced. The last n % VEC elements are done by block 0.

// kevo:param
//   BLOCK in pow2(64..1024) = 256
//   VEC in {1, 2, 4} = 1
//   ITEMS in {1, 2, 4, 8} = 1

/* kevo:launch
 *   saxpy<<<ceil_div(n, BLOCK * VEC * ITEMS), BLOCK>>>(a, x, y, z, n)
 */

struct alignas(4 * VEC) fvec {
    float v[VEC];
};

extern "C" __global__ void __launch_bounds__(BLOCK)
    saxpy(float a, const float *__restrict__ x, const float *__restrict__ y,
          float *__restrict__ z, int n)
{
    const fvec *xv = reinterpret_cast<const fvec *>(x);
    const fvec *yv = reinterpret_cast<const fvec *>(y);
    fvec *zv = reinterpret_cast<fvec *>(z);
    const long long nvec = n / VEC;
    const long long base =
        (long long)blockIdx.x * (BLOCK * ITEMS) + threadIdx.x;

#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
        long long v = base + (long long)it * BLOCK;
        if (v < nvec) {
            fvec xa = xv[v], ya = yv[v], za;
#pragma unroll
            for (int k = 0; k < VEC; k++)
                za.v[k] = a * xa.v[k] + ya.v[k];
            zv[v] = za;
        }
    }

    if (blockIdx.x == 0 && threadIdx.x < n - nvec * VEC) {
        long long i = nvec * VEC + threadIdx.x;
        z[i] = a * x[i] + y[i];
    }
}

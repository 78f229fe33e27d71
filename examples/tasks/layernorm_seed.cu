// layernorm seed: one block of BLOCK threads per row. Threads stride over
// the row in VEC-float vectors (scalar loads when a row is not VEC-aligned,
// that is when cols % VEC != 0). By default three passes over the row: the
// mean, the variance as the mean of (x - mean)^2, the outputs; with
// ONEPASS=1 the mean and the variance come from one pass of sums of
// d = x - x[0] and d^2 (var = E[d^2] - E[d]^2). Block reductions use warp
// shuffles.

// kevo:param
//   BLOCK in pow2(32..1024) = 256
//   VEC in {1, 2, 4} = 1
//   ONEPASS in {0, 1} = 0

/* kevo:launch
 *   layernorm<<<rows, BLOCK>>>(x, gamma, beta, y, rows, cols, eps)
 */

#define NWARPS (BLOCK / 32)

struct alignas(4 * VEC) fvec {
    float v[VEC];
};

// The sum of v over the block, in every thread.
__device__ float block_sum(float v, float *red)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = v;
    __syncthreads();
    v = red[0];
    for (int w = 1; w < NWARPS; w++)
        v += red[w];
    __syncthreads();
    return v;
}

// Calls f(value, index) for every element of the row this thread owns.
template <typename F>
__device__ void for_row(const float *__restrict__ xr, int cols, F f)
{
    if (cols % VEC == 0) {
        const fvec *xv = reinterpret_cast<const fvec *>(xr);
        for (int v = threadIdx.x; v < cols / VEC; v += BLOCK) {
            fvec a = xv[v];
#pragma unroll
            for (int k = 0; k < VEC; k++)
                f(a.v[k], v * VEC + k);
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += BLOCK)
            f(xr[c], c);
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    layernorm(const float *__restrict__ x, const float *__restrict__ gamma,
              const float *__restrict__ beta, float *__restrict__ y, int rows,
              int cols, float eps)
{
    __shared__ float red[NWARPS];
    const float *xr = x + (long long)blockIdx.x * cols;
    float *yr = y + (long long)blockIdx.x * cols;
    const float rcols = 1.0f / (float)cols;

#if ONEPASS
    // Sums of d = x - x[0]: shifting by a value of the row keeps
    // E[d^2] - E[d]^2 from cancelling catastrophically when the row's mean
    // is large against its spread.
    const float shift = xr[0];
    float s = 0.0f, sq = 0.0f;
    for_row(xr, cols, [&](float v, int) {
        float d = v - shift;
        s += d;
        sq += d * d;
    });
    const float mean_d = block_sum(s, red) * rcols;
    const float var =
        fmaxf(block_sum(sq, red) * rcols - mean_d * mean_d, 0.0f);
    const float mean = shift + mean_d;
#else
    float s = 0.0f;
    for_row(xr, cols, [&](float v, int) { s += v; });
    const float mean = block_sum(s, red) * rcols;
    float sq = 0.0f;
    for_row(xr, cols, [&](float v, int) {
        float d = v - mean;
        sq += d * d;
    });
    const float var = block_sum(sq, red) * rcols;
#endif
    const float inv = rsqrtf(var + eps);

    if (cols % VEC == 0) {
        const fvec *xv = reinterpret_cast<const fvec *>(xr);
        const fvec *gv = reinterpret_cast<const fvec *>(gamma);
        const fvec *bv = reinterpret_cast<const fvec *>(beta);
        fvec *yv = reinterpret_cast<fvec *>(yr);
        for (int v = threadIdx.x; v < cols / VEC; v += BLOCK) {
            fvec a = xv[v], g = gv[v], b = bv[v], o;
#pragma unroll
            for (int k = 0; k < VEC; k++)
                o.v[k] = (a.v[k] - mean) * inv * g.v[k] + b.v[k];
            yv[v] = o;
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += BLOCK)
            yr[c] = (xr[c] - mean) * inv * gamma[c] + beta[c];
    }
}

// softmax seed: one block of BLOCK threads per row. Threads stride over the
// row in VEC-float vectors (scalar loads when a row is not VEC-aligned,
// that is when cols % VEC != 0). Three passes over the row in global
// memory: the maximum, the sum of exp(x - max), the outputs; with ONLINE=1
// the first two passes become one (a running maximum with a rescaled sum).
// Block reductions use warp shuffles and one shared slot per warp.

// kevo:param
//   BLOCK in pow2(32..1024) = 256
//   VEC in {1, 2, 4} = 1
//   ONLINE in {0, 1} = 0

/* kevo:launch
 *   softmax<<<rows, BLOCK>>>(x, y, rows, cols)
 */

#define NWARPS (BLOCK / 32)

struct alignas(4 * VEC) fvec {
    float v[VEC];
};

__device__ float neg_inf() { return __int_as_float(0xff800000); }

// The maximum of v over the block, in every thread.
__device__ float block_max(float v, float *red)
{
    for (int off = 16; off > 0; off >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = v;
    __syncthreads();
    v = red[0];
    for (int w = 1; w < NWARPS; w++)
        v = fmaxf(v, red[w]);
    __syncthreads();
    return v;
}

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
    softmax(const float *__restrict__ x, float *__restrict__ y, int rows,
            int cols)
{
    __shared__ float red[NWARPS];
    const float *xr = x + (long long)blockIdx.x * cols;
    float *yr = y + (long long)blockIdx.x * cols;

    float m = neg_inf(), s = 0.0f;
#if ONLINE
    for_row(xr, cols, [&](float v, int) {
        if (v > m) {
            s = s * expf(m - v) + 1.0f;
            m = v;
        } else {
            s += expf(v - m);
        }
    });
    const float rowmax = block_max(m, red);
    s = m == neg_inf() ? 0.0f : s * expf(m - rowmax);
#else
    for_row(xr, cols, [&](float v, int) { m = fmaxf(m, v); });
    const float rowmax = block_max(m, red);
    for_row(xr, cols, [&](float v, int) { s += expf(v - rowmax); });
#endif
    const float inv = 1.0f / block_sum(s, red);

    if (cols % VEC == 0) {
        const fvec *xv = reinterpret_cast<const fvec *>(xr);
        fvec *yv = reinterpret_cast<fvec *>(yr);
        for (int v = threadIdx.x; v < cols / VEC; v += BLOCK) {
            fvec a = xv[v], b;
#pragma unroll
            for (int k = 0; k < VEC; k++)
                b.v[k] = expf(a.v[k] - rowmax) * inv;
            yv[v] = b;
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += BLOCK)
            yr[c] = expf(xr[c] - rowmax) * inv;
    }
}

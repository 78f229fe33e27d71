// nbody seed: the shared-memory tile. Each thread owns one body; the block
// walks over all bodies BLOCK at a time, staging each tile of positions in
// shared memory (bodies past n are padded with mass 0, which adds nothing),
// and each thread accumulates its acceleration in fp32 with rsqrtf:
// 20 flops a pair.

// kevo:param
//   BLOCK in pow2(32..1024) = 128
//   UNROLL in {1, 2, 4, 8} = 4

/* kevo:launch
 *   nbody<<<ceil_div(n, BLOCK), BLOCK>>>(pos, acc, n, eps2)
 */

extern "C" __global__ void __launch_bounds__(BLOCK)
    nbody(const float4 *__restrict__ pos, float *__restrict__ acc, int n,
          float eps2)
{
    __shared__ float4 tile[BLOCK];
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    const float4 pi = i < n ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float ax = 0.0f, ay = 0.0f, az = 0.0f;

    for (int t = 0; t < n; t += BLOCK) {
        const int j = t + threadIdx.x;
        tile[threadIdx.x] =
            j < n ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
#pragma unroll UNROLL
        for (int jj = 0; jj < BLOCK; jj++) {
            const float4 pj = tile[jj];
            const float dx = pj.x - pi.x, dy = pj.y - pi.y, dz = pj.z - pi.z;
            const float r2 = dx * dx + dy * dy + dz * dz + eps2;
            const float inv = rsqrtf(r2);
            const float s = pj.w * inv * inv * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        __syncthreads();
    }

    if (i < n) {
        acc[3 * i] = ax;
        acc[3 * i + 1] = ay;
        acc[3 * i + 2] = az;
    }
}

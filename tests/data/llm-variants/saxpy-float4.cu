// saxpy, vectorised: each thread loads x and y as one float4 each (16-byte
// loads, so a warp moves 512 bytes of each per instruction) and stores one
// float4 of z; the n % 4 elements past the last whole float4 are done one
// by one by the first threads of block 0.

// kevo:param
//   BLOCK in pow2(64..1024) = 256

/* kevo:launch
 *   saxpy_vec4<<<max(1, ceil_div(n / 4, BLOCK)), BLOCK>>>(a, x, y, z, n)
 */

extern "C" __global__ void __launch_bounds__(BLOCK)
    saxpy_vec4(float a, const float *__restrict__ x,
               const float *__restrict__ y, float *__restrict__ z, int n)
{
    const int n4 = n / 4;
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n4) {
        const float4 xv = reinterpret_cast<const float4 *>(x)[i];
        const float4 yv = reinterpret_cast<const float4 *>(y)[i];
        float4 zv;
        zv.x = a * xv.x + yv.x;
        zv.y = a * xv.y + yv.y;
        zv.z = a * xv.z + yv.z;
        zv.w = a * xv.w + yv.w;
        reinterpret_cast<float4 *>(z)[i] = zv;
    }
    if (i < n - n4 * 4) {
        const int t = n4 * 4 + i;
        z[t] = a * x[t] + y[t];
    }
}

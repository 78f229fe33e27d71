// Does not compile: __ldg4 is no CUDA intrinsic (a repair turn gets
// NVRTC's error line).
// saxpy, float4 loads through the read-only path.

// kevo:param
//   BLOCK in pow2(64..1024) = 256

/* kevo:launch
 *   saxpy_ldg4<<<max(1, ceil_div(n / 4, BLOCK)), BLOCK>>>(a, x, y, z, n)
 */

extern "C" __global__ void __launch_bounds__(BLOCK)
    saxpy_ldg4(float a, const float *__restrict__ x,
               const float *__restrict__ y, float *__restrict__ z, int n)
{
    const int n4 = n / 4;
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n4) {
        const float4 xv = __ldg4(x + 4 * i);
        const float4 yv = __ldg4(y + 4 * i);
        float4 zv;
        zv.x = fmaf(a, xv.x, yv.x);
        zv.y = fmaf(a, xv.y, yv.y);
        zv.z = fmaf(a, xv.z, yv.z);
        zv.w = fmaf(a, xv.w, yv.w);
        reinterpret_cast<float4 *>(z)[i] = zv;
    }
    if (i < n - n4 * 4) {
        const int t = n4 * 4 + i;
        z[t] = fmaf(a, x[t], y[t]);
    }
}

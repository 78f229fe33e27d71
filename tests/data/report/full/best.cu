// kevo champion of task "saxpy <fp32>": fitness 0.91 (roofline)
// parameters: BLOCK=256 VEC=4; gate: passed (held-out 0.81 >= 0.7 * 0.91)
// command: kevo search examples/tasks/saxpy.json --run runs/saxpy
/* kevo:launch
 * saxpy: grid = ceil_div(n, BLOCK * VEC), block = BLOCK
 */
extern "C" __global__ void saxpy(int n, float a, const float *__restrict__ x,
                                 float *__restrict__ y)
{
    int i = (blockIdx.x * BLOCK + threadIdx.x) * VEC;
    if (i + VEC <= n && (reinterpret_cast<unsigned long>(x) & 15) == 0) {
        float4 xv = *reinterpret_cast<const float4 *>(x + i);
        float4 yv = *reinterpret_cast<float4 *>(y + i);
        yv.x = a * xv.x + yv.x;
        yv.y = a * xv.y + yv.y;
        yv.z = a * xv.z + yv.z;
        yv.w = a * xv.w + yv.w;
        *reinterpret_cast<float4 *>(y + i) = yv;
    } else {
        for (int k = i; k < n && k < i + VEC; k++)
            y[k] = a * x[k] + y[k];
    }
}

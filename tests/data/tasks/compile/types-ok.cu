// expect ok
// Each task scalar type received as its C type: f16 __half, bf16
// __nv_bfloat16, i8 signed char, u8 unsigned char, i16 short, u16
// unsigned short, i32 int, u32 unsigned, i64 long long, u64 unsigned long
// long, f32 float, f64 double.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

/* kevo:launch
 *   add_all<<<ceil_div(n, 256), 256>>>(x, y, h, b, c, u, s, t, i, j, l, m,
 *                                      f, d)
 */
__global__ void add_all(const float *x, float *y, __half h, __nv_bfloat16 b,
                        signed char c, unsigned char u, short s,
                        unsigned short t, int i, unsigned j, long long l,
                        unsigned long long m, float f, double d)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < i)
        y[k] = x[k] + __half2float(h) + __bfloat162float(b) + c + u + s + t +
               (float)(j + l + m) * 0.0f + f + (float)d;
}

// expect rejected: types-half-as-float.cu:5: kevo:launch: parameter 3 of kernel 'add_all' is a 32-bit float (.f32) and the launch passes scalar 'h' (f16, received as __half)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
/* kevo:launch
 *   add_all<<<ceil_div(n, 256), 256>>>(x, y, h, b, c, u, s, t, i, j, l, m,
 *                                      f, d)
 */
__global__ void add_all(const float *x, float *y, float h, __nv_bfloat16 b,
                        signed char c, unsigned char u, short s,
                        unsigned short t, int i, unsigned j, long long l,
                        unsigned long long m, float f, double d)
{
}

// expect rejected: types-u8-as-int.cu:5: kevo:launch: parameter 6 of kernel 'add_all' is a 32-bit integer (.u32) and the launch passes scalar 'u' (u8, received as unsigned char)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
/* kevo:launch
 *   add_all<<<ceil_div(n, 256), 256>>>(x, y, h, b, c, u, s, t, i, j, l, m,
 *                                      f, d)
 */
__global__ void add_all(const float *x, float *y, __half h, __nv_bfloat16 b,
                        signed char c, int u, short s, unsigned short t, int i,
                        unsigned j, long long l, unsigned long long m, float f,
                        double d)
{
}

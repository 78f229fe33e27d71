// expect rejected: types-double-as-long.cu:5: kevo:launch: parameter 14 of kernel 'add_all' is a pointer or a 64-bit integer (.u64) and the launch passes scalar 'd' (f64, received as double)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
/* kevo:launch
 *   add_all<<<ceil_div(n, 256), 256>>>(x, y, h, b, c, u, s, t, i, j, l, m,
 *                                      f, d)
 */
__global__ void add_all(const float *x, float *y, __half h, __nv_bfloat16 b,
                        signed char c, unsigned char u, short s,
                        unsigned short t, int i, unsigned j, long long l,
                        unsigned long long m, float f, long long d)
{
}

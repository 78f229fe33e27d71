#include <cuda_fp16.h>

/* kevo:launch
 *   scratch partial f32[ceil_div(n, BLOCK * VEC)]
 *   scratch counter u32[1] zero
 *   reduce_partial<<<ceil_div(n, BLOCK * VEC), BLOCK, BLOCK * 4>>>(x, partial, n)
 *   reduce_final<<<1, 1024>>>(partial, out,
 *                             (i32)ceil_div(n, BLOCK * VEC))
 */

/* kevo:param
 *   BLOCK in {128, 256, 512, 1024} = 256
 *   VEC in {1, 2, 4} = 4
 *   require BLOCK * VEC <= 4096
 */
__global__ void reduce_partial(const float *x, float *partial, int n) {}
__global__ void reduce_final(const float *partial, float *out, int m) {}

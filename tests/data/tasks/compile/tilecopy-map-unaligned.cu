// expect rejected: tilecopy-map-unaligned.cu:6: kevo:launch: parameter 1 of kernel 'tile_copy' is an object of 128 bytes aligned to 8 passed by value (.b8[128]) and the launch passes tensor map 'tmX' (received as a 128-byte object aligned to 64
#include <cuda_bf16.h>

/* kevo:launch
 *   tensormap tmX x bf16 dims(cols, rows) box(64, 32)
 *   tile_copy<<<dim3(cols / 64, rows / 32), 128>>>(tmX, y, cols)
 *       if cols % 128 == 0 && rows % 32 == 0
 *   copy_any<<<ceil_div(rows * cols, 256), 256>>>(x, y, rows * cols)
 *       if cols % 128 != 0 || rows % 32 != 0
 */

/* without alignas(64): the map's object is aligned to 8 */
struct TmaMap { unsigned long long v[16]; };

__global__ void tile_copy(const __grid_constant__ TmaMap tmX,
                          __nv_bfloat16 *y, int cols)
{
    y[threadIdx.x] = __ushort_as_bfloat16((unsigned short)tmX.v[0]);
}

__global__ void copy_any(const __nv_bfloat16 *x, __nv_bfloat16 *y, int n) {}

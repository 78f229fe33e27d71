// expect rejected: tilecopy-map-pointer.cu:4: kevo:launch: parameter 1 of kernel 'tile_copy' is a pointer or a 64-bit integer (.u64) and the launch passes tensor map 'tmX'
/* kevo:launch
 *   tensormap tmX x bf16 dims(cols, rows) box(64, 32)
 *   tile_copy<<<dim3(cols / 64, rows / 32), 128>>>(tmX, y, cols)
 *   copy_any<<<ceil_div(rows * cols, 256), 256>>>(x, y, rows * cols)
 *       if cols % 128 != 0 || rows % 32 != 0
 */

/* the map taken as a pointer: kevo passes the map itself */
__global__ void tile_copy(const unsigned long long *tmX, unsigned short *y,
                          int cols)
{
    y[threadIdx.x] = (unsigned short)tmX[0];
}

__global__ void copy_any(const unsigned short *x, unsigned short *y, int n) {}

// stencil2d seed: a block of BX x BY threads; each thread computes RY
// consecutive points of one column, keeping the north, centre and south
// values in registers as it walks down, so each input row is loaded about
// once per thread from global memory (the east and west neighbours come
// through the cache).

// kevo:param
//   BX in pow2(32..256) = 64
//   BY in pow2(1..16) = 4
//   RY in pow2(1..8) = 1
//   require BX * BY <= 1024
//   require ceil_div(ny, BY * RY) <= 65535

/* kevo:launch
 *   stencil2d<<<dim3(ceil_div(nx, BX), ceil_div(ny, BY * RY)), dim3(BX, BY)>>>(
 *       in, out, ny, nx)
 */

extern "C" __global__ void __launch_bounds__(BX * BY)
    stencil2d(const float *__restrict__ in, float *__restrict__ out, int ny,
              int nx)
{
    const int x = blockIdx.x * BX + threadIdx.x;
    const int y0 = (blockIdx.y * BY + threadIdx.y) * RY;
    if (x >= nx || y0 >= ny)
        return;
    const bool edge_col = x == 0 || x == nx - 1;

    float north = y0 > 0 ? in[(long long)(y0 - 1) * nx + x] : 0.0f;
    float centre = in[(long long)y0 * nx + x];
#pragma unroll
    for (int k = 0; k < RY; k++) {
        const int y = y0 + k;
        if (y >= ny)
            break;
        const long long i = (long long)y * nx + x;
        const float south = y + 1 < ny ? in[i + nx] : 0.0f;
        float v;
        if (edge_col || y == 0 || y == ny - 1)
            v = centre;
        else
            v = 0.25f * ((north + south) + (in[i - 1] + in[i + 1]));
        out[i] = v;
        north = centre;
        centre = south;
    }
}

// saxpy, one warp per tile: lane 0 works out where its warp's tile of
// 32 * ITEMS elements starts and how many of them exist, and broadcasts
// both to the warp with __shfl_sync; the lanes then walk the tile
// together, 32 consecutive elements at a time.

// kevo:param
//   ITEMS in {4, 8, 16} = 8
//   WARPS in {4, 8} = 8

/* kevo:launch
 *   saxpy_warp<<<ceil_div(n, 32 * ITEMS * WARPS), 32 * WARPS>>>(a, x, y, z, n)
 */

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    saxpy_warp(float a, const float *__restrict__ x,
               const float *__restrict__ y, float *__restrict__ z, int n)
{
    const int lane = threadIdx.x & 31;
    long long start = 0;
    int len = 0;
    if (lane == 0) {
        start = ((long long)blockIdx.x * WARPS + (threadIdx.x >> 5)) *
                (32 * ITEMS);
        const long long left = n - start;
        len = left <= 0 ? 0 : left < 32 * ITEMS ? (int)left : 32 * ITEMS;
    }
    start = __shfl_sync(0xffffffffu, start, 0);
    len = __shfl_sync(0xffffffffu, len, 0);
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        const int j = k * 32 + lane;
        if (j < len)
            z[start + j] = a * x[start + j] + y[start + j];
    }
}

// transpose seed: the classic shared-memory tile. A block of TILE x
// BLOCK_ROWS threads moves one TILE x TILE tile: it reads TILE rows of the
// input with coalesced loads into shared memory (padded by one column so
// the transposed reads are free of bank conflicts), then writes TILE rows
// of the output with coalesced stores. Partial tiles at the edges are
// guarded.

// kevo:param
//   TILE in pow2(16..64) = 32
//   BLOCK_ROWS in pow2(1..32) = 8
//   require BLOCK_ROWS <= TILE
//   require TILE * BLOCK_ROWS <= 1024
//   require ceil_div(rows, TILE) <= 65535

/* kevo:launch
 *   transpose<<<dim3(ceil_div(cols, TILE), ceil_div(rows, TILE)), dim3(TILE, BLOCK_ROWS)>>>(
 *       in, out, rows, cols)
 */

extern "C" __global__ void __launch_bounds__(TILE * BLOCK_ROWS)
    transpose(const float *__restrict__ in, float *__restrict__ out, int rows,
              int cols)
{
    __shared__ float tile[TILE][TILE + 1];
    const int c0 = blockIdx.x * TILE;
    const int r0 = blockIdx.y * TILE;

    const int c = c0 + threadIdx.x;
    for (int j = threadIdx.y; j < TILE; j += BLOCK_ROWS) {
        int r = r0 + j;
        if (r < rows && c < cols)
            tile[j][threadIdx.x] = in[(long long)r * cols + c];
    }
    __syncthreads();

    const int r = r0 + threadIdx.x;
    for (int j = threadIdx.y; j < TILE; j += BLOCK_ROWS) {
        int cc = c0 + j;
        if (cc < cols && r < rows)
            out[(long long)cc * rows + r] = tile[threadIdx.x][j];
    }
}

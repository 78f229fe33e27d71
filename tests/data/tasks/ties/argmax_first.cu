// The first column of each row's largest element: one thread a row.
/* kevo:launch
 *   argmax_first<<<rows, 1>>>(x, idx, rows, cols)
 */
extern "C" __global__ void argmax_first(const float *x, int *idx, int rows,
                                        int cols)
{
    int r = blockIdx.x;
    const float *row = x + (long long)r * cols;
    int best = 0;
    for (int c = 1; c < cols; c++)
        if (row[c] > row[best])
            best = c;
    idx[r] = best;
}

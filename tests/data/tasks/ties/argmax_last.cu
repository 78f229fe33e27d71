// The last column of each row's largest element: right only where a row's
// maximum is unique.
/* kevo:launch
 *   argmax_last<<<rows, 1>>>(x, idx, rows, cols)
 */
extern "C" __global__ void argmax_last(const float *x, int *idx, int rows,
                                       int cols)
{
    int r = blockIdx.x;
    const float *row = x + (long long)r * cols;
    int best = 0;
    for (int c = 1; c < cols; c++)
        if (row[c] >= row[best])
            best = c;
    idx[r] = best;
}

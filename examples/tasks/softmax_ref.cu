// softmax reference: one thread per row. The row maximum in float, then
// the sum of exp(x - max) and each output in double.

/* kevo:launch
 *   softmax_ref<<<ceil_div(rows, 128), 128>>>(x, y, rows, cols)
 */

extern "C" __global__ void softmax_ref(const float *x, float *y, int rows,
                                       int cols)
{
    long long r = (long long)blockIdx.x * 128 + threadIdx.x;
    if (r >= rows)
        return;
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    float m = xr[0];
    for (int c = 1; c < cols; c++)
        m = fmaxf(m, xr[c]);
    double s = 0.0;
    for (int c = 0; c < cols; c++)
        s += exp((double)xr[c] - (double)m);
    for (int c = 0; c < cols; c++)
        yr[c] = (float)(exp((double)xr[c] - (double)m) / s);
}

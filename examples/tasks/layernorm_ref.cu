// layernorm reference: one thread per row, two passes in double: the mean,
// then the (population) variance of the row; then
// y = (x - mean) / sqrt(var + eps) * gamma + beta, rounded once.

/* kevo:launch
 *   layernorm_ref<<<ceil_div(rows, 128), 128>>>(x, gamma, beta, y, rows, cols,
 *                                               eps)
 */

extern "C" __global__ void layernorm_ref(const float *x, const float *gamma,
                                         const float *beta, float *y, int rows,
                                         int cols, float eps)
{
    long long r = (long long)blockIdx.x * 128 + threadIdx.x;
    if (r >= rows)
        return;
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    double mean = 0.0;
    for (int c = 0; c < cols; c++)
        mean += (double)xr[c];
    mean /= cols;
    double var = 0.0;
    for (int c = 0; c < cols; c++) {
        double d = (double)xr[c] - mean;
        var += d * d;
    }
    var /= cols;
    double inv = 1.0 / sqrt(var + (double)eps);
    for (int c = 0; c < cols; c++)
        yr[c] = (float)(((double)xr[c] - mean) * inv * (double)gamma[c] +
                        (double)beta[c]);
}

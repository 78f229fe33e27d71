// transpose reference: out[c * rows + r] = in[r * cols + c], one thread per
// element.

/* kevo:launch
 *   transpose_ref<<<dim3(ceil_div(cols, 32), ceil_div(rows, 8)), dim3(32, 8)>>>(
 *       in, out, rows, cols)
 */

extern "C" __global__ void transpose_ref(const float *in, float *out, int rows,
                                         int cols)
{
    long long c = (long long)blockIdx.x * 32 + threadIdx.x;
    long long r = (long long)blockIdx.y * 8 + threadIdx.y;
    if (r < rows && c < cols)
        out[c * rows + r] = in[r * cols + c];
}

// stencil2d reference: one Jacobi step, one thread per point. Interior
// points get 0.25 * (north + south + west + east), computed in double and
// rounded once; points on the boundary are copied.

/* kevo:launch
 *   stencil2d_ref<<<dim3(ceil_div(nx, 32), ceil_div(ny, 8)), dim3(32, 8)>>>(
 *       in, out, ny, nx)
 */

extern "C" __global__ void stencil2d_ref(const float *in, float *out, int ny,
                                         int nx)
{
    long long x = (long long)blockIdx.x * 32 + threadIdx.x;
    long long y = (long long)blockIdx.y * 8 + threadIdx.y;
    if (x >= nx || y >= ny)
        return;
    long long i = y * nx + x;
    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1)
        out[i] = in[i];
    else
        out[i] = (float)(0.25 * ((double)in[i - nx] + (double)in[i + nx] +
                                 (double)in[i - 1] + (double)in[i + 1]));
}

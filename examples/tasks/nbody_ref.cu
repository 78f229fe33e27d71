// nbody reference: one thread per body, every pair in double:
// acc_i = sum over j of m_j * d / (|d|^2 + eps2)^(3/2), d = p_j - p_i
// (the j = i term is zero), rounded once.

/* kevo:launch
 *   nbody_ref<<<ceil_div(n, 64), 64>>>(pos, acc, n, eps2)
 */

extern "C" __global__ void nbody_ref(const float *pos, float *acc, int n,
                                     float eps2)
{
    long long i = (long long)blockIdx.x * 64 + threadIdx.x;
    if (i >= n)
        return;
    const double xi = pos[4 * i], yi = pos[4 * i + 1], zi = pos[4 * i + 2];
    double ax = 0.0, ay = 0.0, az = 0.0;
    for (long long j = 0; j < n; j++) {
        double dx = (double)pos[4 * j] - xi;
        double dy = (double)pos[4 * j + 1] - yi;
        double dz = (double)pos[4 * j + 2] - zi;
        double r2 = dx * dx + dy * dy + dz * dz + (double)eps2;
        double s = (double)pos[4 * j + 3] / (r2 * sqrt(r2));
        ax += dx * s;
        ay += dy * s;
        az += dz * s;
    }
    acc[3 * i] = (float)ax;
    acc[3 * i + 1] = (float)ay;
    acc[3 * i + 2] = (float)az;
}

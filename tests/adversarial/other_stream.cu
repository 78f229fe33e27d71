// Tries to do the work outside the launch kevo times: the timed kernel
// only launches the real one from the device (dynamic parallelism), which
// the launch that is timed need not wait for. kevo compiles without relocatable device code, so a
// device-side launch is refused at compile time; and were it allowed,
// CUPTI records every kernel of the context, whatever its stream.

/* kevo:launch
 *   saxpy_spawn<<<1, 1>>>(a, x, y, z, n)
 */

extern "C" __global__ void saxpy_work(float a, const float *x, const float *y,
                                      float *z, int n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        z[i] = a * x[i] + y[i];
}

extern "C" __global__ void saxpy_spawn(float a, const float *x,
                                       const float *y, float *z, int n)
{
    saxpy_work<<<(n + 255) / 256, 256>>>(a, x, y, z, n);
}

// reduce_sum reference: out[0] = x[0] + ... + x[n-1], summed in double.
// 1024 blocks each sum a strided slice into a double partial; one block
// then sums the partials and rounds once.

/* kevo:launch
 *   scratch partial f64[1024]
 *   reduce_ref_partial<<<1024, 256>>>(x, partial, n)
 *   reduce_ref_final<<<1, 1024>>>(partial, out)
 */

extern "C" __global__ void reduce_ref_partial(const float *x, double *partial,
                                              int n)
{
    __shared__ double s[256];
    double acc = 0.0;
    for (long long i = (long long)blockIdx.x * 256 + threadIdx.x; i < n;
         i += 1024LL * 256)
        acc += (double)x[i];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (threadIdx.x < w)
            s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = s[0];
}

extern "C" __global__ void reduce_ref_final(const double *partial, float *out)
{
    __shared__ double s[1024];
    s[threadIdx.x] = partial[threadIdx.x];
    __syncthreads();
    for (int w = 512; w > 0; w >>= 1) {
        if (threadIdx.x < w)
            s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[0] = (float)s[0];
}

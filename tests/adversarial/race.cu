// A sum reduction with a data race: each block adds its partial sum to
// out[0] with a plain read-modify-write instead of an atomic, so updates
// are lost, and which ones changes from run to run.

/* kevo:launch
 *   reduce_racy<<<ceil_div(n, 256), 256>>>(x, out, n)
 */

extern "C" __global__ void reduce_racy(const float *x, float *out, int n)
{
    __shared__ float part[256];
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    part[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        volatile float *o = out;
        if (blockIdx.x == 0)
            o[0] = 0.0f;
        float v = o[0];
        o[0] = v + part[0];
    }
}

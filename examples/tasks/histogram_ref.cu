// histogram reference: hist[b] = the number of bytes of data equal to b.
// Zero the 256 bins, then one thread per byte adds one to its bin with a
// global atomic.

/* kevo:launch
 *   hist_ref_zero<<<1, 256>>>(hist)
 *   hist_ref<<<ceil_div(n, 256), 256>>>(data, hist, n)
 */

extern "C" __global__ void hist_ref_zero(unsigned *hist)
{
    hist[threadIdx.x] = 0u;
}

extern "C" __global__ void hist_ref(const unsigned char *data, unsigned *hist,
                                    int n)
{
    long long i = (long long)blockIdx.x * 256 + threadIdx.x;
    if (i < n)
        atomicAdd(&hist[data[i]], 1u);
}

// warnings.cu: NVRTC's front end warns before ptxas speaks; the log scanner
// must skip its lines. A C++ kernel (mangled name) in a namespace.
namespace kv {
__global__ void axpy(float a, const float *x, float *y, int n)
{
    int unused = 3;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] += a * x[i];
}
} // namespace kv

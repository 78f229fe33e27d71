constexpr int big = 1'000'000;
constexpr double e = 1.5e+3'0;
#include <cuda_fp16.h>
constexpr char q = '\'';
__global__ void k(float *x) { x[0] = big; }

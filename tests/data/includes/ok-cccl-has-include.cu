#include <cuda/std/cstdint>
#if _CCCL_HAS_INCLUDE(<cuda_bf16.h>)
#include <cuda_bf16.h>
#endif
__global__ void k(float *x) { x[0] = 1; }

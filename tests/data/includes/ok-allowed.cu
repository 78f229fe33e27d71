// Every header that NVRTC has built in, spelled several ways.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#  include <cuda_pipeline.h>
#include<cooperative_groups.h>
# /* a comment */ include <cooperative_groups/reduce.h>
%:include <mma.h>
#include <cuda/std/cstdint>
#include <cuda/std/type_traits>
#include <cuda/std/detail/libcxx/include/limits>
#if __has_include(<cuda_fp16.h>)
#endif
__global__ void k(float *x) { x[0] = 1; }

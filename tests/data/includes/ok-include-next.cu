#include_next <cuda_fp16.h>

// cuda_fp16.h includes cuda_fp16.hpp: the compile worker has it, but a
// kernel may not name it.
#include <cuda_fp16.h>
#include <cuda_fp16.hpp>

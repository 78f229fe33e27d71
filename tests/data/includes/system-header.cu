#include <cuda_fp16.h>
#include <stdio.h>

// Kernels with one parameter of each kind kevo passes, compiled by NVRTC
// (-arch=sm_90a -std=c++17) into params.ptx for test-ptxscan.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__global__ void every_type(const float *__restrict__ x, double *y, int i32,
                           unsigned u32, long long i64,
                           unsigned long long u64, float f32, double f64,
                           __half f16, __nv_bfloat16 bf16, signed char i8,
                           unsigned char u8, short i16, unsigned short u16,
                           bool flag)
{
    y[0] = x[0] + f32 + f64 + (float)f16 + (float)bf16 + i8 + u8 + i16 + u16 +
           flag + i32 + u32 + i64 + u64;
}

struct pair {
    float *p;
    int n;
};

extern "C" __global__ void by_value(pair s, const __grid_constant__ int g)
{
    s.p[0] = s.n + g;
}

extern "C" __global__ void none() {}

__device__ float helper(float v) { return v * 2; }

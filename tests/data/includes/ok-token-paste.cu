#define CAT(a, b) a##b
#define STR(a) #a
#define CAT2(a, b) a %:%: b
__global__ void CAT(ker, nel)(float *x) { x[0] = 1; }

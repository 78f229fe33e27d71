// kevo:param
//   BLOCK in {128, 256} = 256
__global__ void saxpy(float *x, float *y, int n) {}

// Words that only look like directives.
int include = 3, import = 4;
#define embed(x) (x + include)
#pragma unroll
__global__ void k(int *x) { x[0] = embed(import); }

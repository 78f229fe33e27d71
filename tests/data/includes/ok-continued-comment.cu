// a comment that goes on \
#include "/etc/passwd"
__global__ void k(float *x) { x[0] = 1; }

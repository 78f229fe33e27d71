// reads a host file
__global__ void k(float *x) { x[0] = 1; }
#include "/etc/passwd"

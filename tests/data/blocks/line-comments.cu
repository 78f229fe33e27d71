// Softmax, one block per row.
// kevo:launch
//   softmax<<<rows, BLOCK, BLOCK * 4>>>(x, y, rows, cols)

// Not part of the block: a line without a comment ended it.
// kevo:param
//   BLOCK in pow2(32..1024) = 256
//   require cols % 4 == 0 || BLOCK <= 512
int after_the_block = 1; // see the kevo:param block above
// BLOCK in {1}
__global__ void softmax(const float *x, float *y, int rows, int cols) {}

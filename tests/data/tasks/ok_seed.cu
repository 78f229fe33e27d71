// Seed kernel of the test task: y = alpha * x, VEC elements a thread.

// kevo:param
//   BLOCK in {64, 128, 256, 512} = 256
//   VEC in {1, 2, 4} = 1
//   require BLOCK * VEC <= 2048

/* kevo:launch
 *   scale<<<ceil_div(n, BLOCK * VEC), BLOCK>>>(x, y, alpha, n)
 */

extern "C" __global__ void scale(const float *x, float *y, float alpha, int n)
{
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
    for (int k = 0; k < VEC; k++) {
        int i = base + k;
        if (i < n)
            y[i] = alpha * x[i];
    }
}

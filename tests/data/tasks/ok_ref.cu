// Reference kernel of the test task: y = alpha * x, one thread an element.

/* kevo:launch
 *   scale<<<ceil_div(n, 256), 256>>>(x, y, alpha, n)
 */

extern "C" __global__ void scale(const float *x, float *y, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i];
}

// expect rejected: scale-buffer-as-int.cu:4: kevo:launch: parameter 1 of kernel 'scale' is a 32-bit integer (.u32) and the launch passes buffer 'x' (f32, received as float *)
// The first parameter should be a pointer.
/* kevo:launch
 *   scale<<<ceil_div(n, 256), 256>>>(x, y, alpha, n)
 */
__global__ void scale(int x, float *y, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x;
}

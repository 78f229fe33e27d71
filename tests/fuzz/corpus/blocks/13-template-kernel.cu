/* kevo:launch
 *   saxpy<256><<<ceil_div(n, 256), 256>>>(x, y, n)
 */
template <int B>
__global__ void saxpy(float *x, float *y, int n) {}

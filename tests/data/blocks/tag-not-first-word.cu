/* This kernel has a kevo:launch block below. */
// TODO: kevo:param block
//kevo:launchers are not tags either
/* kevo:launch
 *   k<<<1, 32>>>(x)
 */
__global__ void k(float *x) {}

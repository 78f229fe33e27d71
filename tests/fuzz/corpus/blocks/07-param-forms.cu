// kevo:launch k<<<ceil_div(n, BLOCK), BLOCK>>>(x, n, OFFSET, SHIFT)
/* kevo:param
 *   BLOCK in pow2(64..1024) = 128
 *   UNROLL in 1..8
 *   STRIDE in 0..100 step 25 = 50
 *   OFFSET in {-4, -2, 0, 2} = -2
 *   SHIFT in {0x10, 0x20}=0x20
 *   ONE in pow2(1..1)
 *   NEG in -3..3 step 3
 *   require BLOCK * UNROLL <= 4096
 *   require n % UNROLL == 0 && warp_size == 32
 */
__global__ void k() {}

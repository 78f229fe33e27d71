/**
 * kevo:launch
 *
 *   # the partial sums
 *   scratch partial f64[sm_count * 4]
 *
 *   # then the final pass
 *   sum<<<sm_count * 4, 256>>>(x, partial, n)
 *   finish<<<1, 1024>>>(partial, out)
 *
 */
//    kevo:param
//
//    # the block size
//    BLOCK in {64, 128}
//    #require BLOCK > 64
__global__ void sum() {}

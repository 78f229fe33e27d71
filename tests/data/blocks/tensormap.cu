/* kevo:launch
 *   tensormap tmA a bf16 dims(k, m) box(BK, BM) swizzle(128)
 *   tensormap tmB b bf16 dims(k, n, batch) box(64, 128, 1)
 *             strides(ldb * 2, ldb * n * 2) offset(16) elementstrides(1, 1, 1)
 *             interleave(none) l2(256) oob(nan)
 *   scratch partial f32[m * n]
 *   gemm<<<dim3(m / BM, n / 128), 384, SMEM>>>(tmA, tmB, c, m, n, k)
 *       cluster(2, 1) if k % 64 == 0
 *   fallback<<<ceil_div(m * n, 256), 256>>>(a, b, c, m, n, k) if k % 64 != 0
 *   epilogue<<<m, 128>>>(partial, c) pdl cluster(2)
 *   tail<<<1, 32>>>(c) if max(m, n) > 4 pdl;
 */

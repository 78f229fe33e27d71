/* kevo:launch
 *   tensormap tmA a bf16 dims(k, m, b) box(8, 8, 1) interleave(32) swizzle(64)
 *   k1<<<1, 32>>>(tmA)
 */

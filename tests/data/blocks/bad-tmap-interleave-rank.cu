/* kevo:launch
 *   tensormap tmA a bf16 dims(k, m) box(8, 8) interleave(16)
 *   k1<<<1, 32>>>(tmA)
 */

/* kevo:launch
 *   tensormap tmA a bf16 dims(a, b, c, d, e, f) box(1, 1, 1, 1, 1, 1)
 *   k1<<<1, 32>>>(tmA)
 */

/* kevo:launch
 *   tensormap tmA a bf16 dims(k) box(64)
 *   tensormap tmA b bf16 dims(k) box(64)
 *   k1<<<1, 32>>>(tmA)
 */

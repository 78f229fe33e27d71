/* kevo:launch
 *   tensormap tmA a bf16 dims(k) box(64) box(32)
 *   k1<<<1, 32>>>(tmA)
 */

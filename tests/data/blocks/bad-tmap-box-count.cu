/* kevo:launch
 *   tensormap tmA a bf16 dims(k, m) box(64)
 *   k1<<<1, 32>>>(tmA)
 */

/* kevo:launch
 *   tensormap tmA a fp8 dims(k) box(64)
 *   k1<<<1, 32>>>(tmA)
 */

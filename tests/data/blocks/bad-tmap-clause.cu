/* kevo:launch
 *   tensormap tmA a bf16 dims(k) box(64) swizle(128)
 *   k1<<<1, 32>>>(tmA)
 */

/* kevo:launch
 *   tensormap tmA a bf16 dims(k) box(64) strides(128)
 *   k1<<<1, 32>>>(tmA)
 */

/* kevo:launch
 *   tensormap tmA a bf16 dims(k, m) box(64, 64) strides(128, 256)
 *   k1<<<1, 32>>>(tmA)
 */

/* kevo:launch
 *   scratch tmA f32[16]
 *   tensormap tmA a bf16 dims(k) box(64)
 *   k1<<<1, 32>>>(tmA)
 */

/* kevo:launch
 *   tensormap tmA a bf16 box(64) dims(k)
 *   k1<<<1, 32>>>(tmA)
 */

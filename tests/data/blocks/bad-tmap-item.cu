/* kevo:launch
 *   tensormap tmA a bf16 dims(k, ) box(64, 1)
 *   k1<<<1, 32>>>(tmA)
 */

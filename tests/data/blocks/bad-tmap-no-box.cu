/* kevo:launch
 *   tensormap tmA a bf16 dims(k, m)
 *   k1<<<1, 32>>>(tmA)
 */

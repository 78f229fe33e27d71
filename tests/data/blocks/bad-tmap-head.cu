/* kevo:launch
 *   tensormap tmA a
 *   k1<<<1, 32>>>(tmA)
 */

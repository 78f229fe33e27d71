/* kevo:launch
 *   tensormap tmA a i32 dims(k) box(64) oob(nan)
 *   k1<<<1, 32>>>(tmA)
 */

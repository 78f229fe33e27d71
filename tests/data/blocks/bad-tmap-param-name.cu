/* kevo:launch
 *   tensormap BM a bf16 dims(k) box(64)
 *   k1<<<1, 32>>>(BM)
 */
/* kevo:param
 *   BM in {64, 128}
 */

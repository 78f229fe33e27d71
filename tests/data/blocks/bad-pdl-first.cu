/* kevo:launch
 *   k1<<<8, 32>>>(x) pdl
 *   k2<<<8, 32>>>(x)
 */

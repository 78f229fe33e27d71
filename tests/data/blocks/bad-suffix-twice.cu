/* kevo:launch
 *   k1<<<8, 32>>>(x)
 *   k2<<<8, 32>>>(x) pdl pdl
 */

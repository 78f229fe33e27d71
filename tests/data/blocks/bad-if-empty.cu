/* kevo:launch
 *   k1<<<8, 32>>>(x) if
 */

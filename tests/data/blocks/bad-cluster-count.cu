/* kevo:launch
 *   k1<<<8, 32>>>(x) cluster(2, 1, 1, 1)
 */

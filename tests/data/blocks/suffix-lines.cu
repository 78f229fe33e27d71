// kevo:launch
//   k1<<<8, 32>>>(x)
//   k2<<<dim3(8, 2), 32>>>(x,
//                           n)
//       cluster(2, 2)
//       if n > 0

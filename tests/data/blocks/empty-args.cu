/* kevo:launch
 *   init<<<1, 1>>>();
 *   work<<<n, 1>>>(x) ;
 *   done<<<1,1>>>( )
 */
__global__ void init() {}

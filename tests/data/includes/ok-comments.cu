// #include "/etc/passwd"
/* #include </etc/shadow> */
/*
#include "/etc/passwd"
 * __has_include("/etc/passwd")
*/
//* still a line comment: #include "/etc/passwd"
__global__ void k(float *x) { x[0] = 1; } // #include <stdio.h>

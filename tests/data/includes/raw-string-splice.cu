const char *s = R"x(a)\
x" /* )x";
#include "/etc/passwd"
int y = 2 */ 1;

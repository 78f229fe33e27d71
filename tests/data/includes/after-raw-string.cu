const char *s = R"(
one
two
)";
#include <stdio.h>

const char *s = "abc
#include "/etc/passwd"

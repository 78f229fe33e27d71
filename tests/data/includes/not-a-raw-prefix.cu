const char *FOOR"(";
#include "/etc/passwd" //)"

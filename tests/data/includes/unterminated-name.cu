#include "/etc/passwd

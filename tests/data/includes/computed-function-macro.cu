#define H(x) <x>
#include H(stdio.h)

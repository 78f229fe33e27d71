#include_next <stdio.h>

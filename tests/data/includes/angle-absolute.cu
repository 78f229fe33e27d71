#include </etc/passwd>

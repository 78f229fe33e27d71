#include <cuda/std//etc/passwd>

#include <cuda/std/>

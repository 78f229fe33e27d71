#include <cuda/std/cstdint>
#if _CCCL_HAS_INCLUDE("/etc/passwd")
#endif

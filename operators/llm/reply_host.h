/*
 * reply_host.h: host code dropped from the child. Models often wrap the
 * kernel in a whole program: includes of host headers, a CUDA_CHECK
 * macro, a launcher, main with cudaMalloc and cudaMemcpy. kevo compiles
 * the child alone with NVRTC, where none of that compiles, and launches it
 * through its kevo:launch block.
 *
 * Dropped, whatever the kernel: every #include of a header a kernel may
 * not include (kevo says which, through the host table's
 * include_allowed(); it allows only <cuda_fp16.h>, <cuda_bf16.h>,
 * <cuda_pipeline.h>, <cooperative_groups.h>, <cooperative_groups/reduce.h>,
 * <mma.h> and <cuda/std/...>), except that <cstdint> and <stdint.h> become
 * <cuda/std/cstdint>, <climits> and <limits.h> <cuda/std/climits>, which
 * declare the same names at global scope under NVRTC. Host code, dropped when
 * nothing kept uses it: main; every other top-level function that is neither
 * __global__ nor
 * __device__ and calls the CUDA runtime or a CUDA host library (cuda*,
 * cublas*, cudnn*, cufft*, curand*, cusparse* followed by an upper-case
 * letter, then '('), launches a kernel (<<<...>>> outside comments), or
 * uses C++ streams, C files or the C library's random numbers (cout, cerr,
 * fprintf, fopen, exit, rand, ...); every macro and other top-level
 * statement that does so; and then whatever unannotated function,
 * variable or macro only the dropped code used. Whole lines go, with the
 * line comments right above a dropped item.
 *
 * When kept code uses dropped host code, or host code shares a line with
 * kept code, the child fails as host_code, naming both.
 */
#ifndef KEVO_LLM_REPLY_HOST_H
#define KEVO_LLM_REPLY_HOST_H

#include "reply_private.h"

/* A header a kernel may include: header is the name between the brackets
 * of an #include, angle whether they were <> (a "..." include is never
 * allowed). kevo says which (the host table's include_allowed()). */
bool kevo__reply_include_allowed(ctx *c, span header, bool angle);

/* Drops host code from *child (replacing it, *child_len updated) and says
 * what in c->note. Fails as host_code or nomem. */
kevo_reply_kind kevo__reply_drop_host_code(ctx *c, char **child,
                                           size_t *child_len);

#endif

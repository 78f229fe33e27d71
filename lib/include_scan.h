/*
 * include_scan.h: the check that keeps a kernel from reading host files
 * through the preprocessor.
 */
#ifndef KEVO_INCLUDE_SCAN_H
#define KEVO_INCLUDE_SCAN_H

#include <stddef.h>

#include "kevo_private.h"

/* The headers a kernel may include, as the error text lists them. */
#define KEVO__INCLUDE_ALLOWED_TEXT                                             \
    "<cuda_fp16.h>, <cuda_bf16.h>, <cuda_pipeline.h>, "                        \
    "<cooperative_groups.h>, <cooperative_groups/reduce.h>, <mma.h> and "      \
    "<cuda/std/...>"

/*
 * kevo__include_scan: scans len bytes of CUDA source the way the
 * preprocessor reads it (line continuations spliced; comments, string and
 * character literals, raw strings and digit separators skipped; `%:` read
 * as `#`) for every #include, #include_next, #import and #embed and every
 * __has_include, __has_include_next and __has_embed, wherever they stand.
 * Each must name an allowed NVRTC built-in header in angle brackets:
 * <cuda_fp16.h>, <cuda_bf16.h>, <cuda_pipeline.h>, <cooperative_groups.h>,
 * <cooperative_groups/reduce.h>, <mma.h>, or <cuda/std/NAME> (NAME made of
 * letters, digits, '_', '.' and '/', without "..", "//" or a trailing '/').
 * Returns KEVO_OK, or KEVO_EINVALID for the first other one, with err's
 * source set to name and its line to the line of the directive:
 *   line 3: #include of "/etc/passwd" is not allowed: kernels may include
 *   only <cuda_fp16.h>, ... and <cuda/std/...>
 *   line 5: computed #include (a macro, not a header name) is not allowed:
 *   ...
 *   line 7: __has_include of <stdio.h> is not allowed: ...
 * name may be NULL.
 */
kevo_status kevo__include_scan(const char *source, size_t len, const char *name,
                               kevo_error *err);

#endif

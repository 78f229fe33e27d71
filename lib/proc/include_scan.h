/*
 * include_scan.h: the check that keeps a kernel from reading host files
 * through the preprocessor.
 */
#ifndef KEVO_INCLUDE_SCAN_H
#define KEVO_INCLUDE_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/kevo_private.h"

/* The headers a kernel may include, as the error text lists them. */
#define KEVO__INCLUDE_ALLOWED_TEXT                                             \
    "<cuda_fp16.h>, <cuda_bf16.h>, <cuda_pipeline.h>, "                        \
    "<cooperative_groups.h>, <cooperative_groups/reduce.h>, <mma.h> and "      \
    "<cuda/std/...>"

/* The allowed headers by name ("cuda_fp16.h", ...), and the prefix under
 * which every header is allowed ("cuda/std/"). The compile worker loads
 * these headers and all they include (worker/headers.c). */
extern const char *const kevo__include_allowed[];
extern const size_t kevo__include_nallowed;
#define KEVO__INCLUDE_ALLOWED_PREFIX "cuda/std/"

/* Whether header (as written between < and >) is allowed: one of
 * kevo__include_allowed, or KEVO__INCLUDE_ALLOWED_PREFIX and a NAME made of
 * letters, digits, '_', '.' and '/', without "..", "//" or a trailing
 * '/'. */
bool kevo__include_allowed_name(const char *header);

/*
 * kevo__include_scan: scans len bytes of CUDA source the way the
 * preprocessor reads it (line continuations spliced; comments, string and
 * character literals, raw strings and digit separators skipped; `%:` read
 * as `#`) for every #include, #include_next, #import and #embed and every
 * __has_include, __has_include_next and __has_embed, wherever they stand,
 * and every _CCCL_HAS_INCLUDE (the macro of <cuda/std/...> that stands for
 * __has_include). Each must name an allowed header in angle brackets
 * (kevo__include_allowed_name). Returns KEVO_OK, or KEVO_EINVALID for the
 * first other one, with err's source set to name and its line to the line
 * of the directive:
 *   line 3: #include of "/etc/passwd" is not allowed: kernels may include
 *   only <cuda_fp16.h>, ... and <cuda/std/...>
 *   line 5: computed #include (a macro, not a header name) is not allowed:
 *   ...
 *   line 7: __has_include of <stdio.h> is not allowed: ...
 * name may be NULL.
 */
kevo_status kevo__include_scan(const char *source, size_t len, const char *name,
                               kevo_error *err);

/* Called by kevo__include_each for each header name: what is "#include",
 * "#include_next", "#import", "#embed", "__has_include",
 * "__has_include_next", "__has_embed" or "_CCCL_HAS_INCLUDE"; angle tells
 * <name> from "name"; line is the directive's. Returns KEVO_OK to go on;
 * any other status stops the scan. */
typedef kevo_status (*kevo__include_fn)(void *ctx, const char *what, bool angle,
                                        const char *name, int line);

/*
 * kevo__include_each: reads len bytes of source as kevo__include_scan does
 * and calls fn for every operand that is a header name (<...> or "...", up
 * to 1023 characters), allowed or not, in order; computed and unterminated
 * operands are passed over. Returns KEVO_OK, or the first status other than
 * KEVO_OK that fn returned.
 */
kevo_status kevo__include_each(const char *source, size_t len,
                               kevo__include_fn fn, void *ctx);

#endif

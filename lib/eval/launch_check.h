/*
 * launch_check.h: a compiled candidate's launches checked against the
 * kernels they call. NVRTC compiles a source whatever its launch block
 * says; a launch that names no kernel, passes the wrong number of
 * arguments or an argument of the wrong kind or width would only show on
 * the GPU, as a launch error, a fault or a wrong result. The parameter
 * lists come from the PTX (what a kernel's parameters are after
 * compilation, whatever C++ declared them with), the kernels from NVRTC's
 * lowered names.
 */
#ifndef KEVO_LAUNCH_CHECK_H
#define KEVO_LAUNCH_CHECK_H

#include "core/kevo_private.h"
#include "model/candidate_private.h"

/*
 * Checks every launch of cand, compiled into ptx (len bytes), against the
 * entry it calls: lowered[i] is the lowered name of launch i's kernel
 * (NULL, or i past nlowered: its plain name). The entry must be in the
 * PTX as a kernel (a __global__ function), take as many parameters as the
 * launch passes, and each parameter must be of the kind and the width of
 * what the launch passes for it: a pointer (.u64) for a buffer, a float
 * of the type's width for an f32 or f64 scalar, an integer of the type's
 * width for an integer scalar or an integer expression, an object of the
 * type's size for any (a __half, a struct). Returns KEVO_OK (also when the
 * PTX cannot be read: the compiler's text is not judged here); KEVO_EINVALID
 * with a message that names the source, the launch's line, the kernel and
 * the parameter ("seed.cu:3: kevo:launch: kernel 'saxpy' takes 5
 * parameters and the launch passes 4 (a, x, y, n)"), its source and line
 * set in err; or KEVO_ENOMEM.
 */
kevo_status kevo__launch_check_ptx(const kevo_task *task,
                                   const kevo_candidate *cand, const char *ptx,
                                   size_t len, char *const *lowered,
                                   size_t nlowered, kevo_error *err);

/*
 * The compile pool's message for a launched kernel that NVRTC could not
 * find ("kernel 'K' is not defined in NAME") rewritten to name the launch
 * block's line and, from NVRTC's log (may be NULL), why, in a new string:
 * "seed.cu:3: kevo:launch: kernel 'saxpyy' (launch 1) is not defined in
 * seed.cu: ...", or that K is not a __global__ function, or that it is
 * overloaded. NULL when error is not that message for a kernel of cand,
 * or on no memory.
 */
char *kevo__launch_missing_kernel(const kevo_candidate *cand, const char *error,
                                  const char *log);

#endif

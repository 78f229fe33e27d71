/*
 * launch_args.h: what each argument of a candidate's launch passes, for one
 * shape: a task buffer or scalar, a scratch buffer, or the value of an
 * integer expression over the dims, the device properties and the
 * candidate's parameters. The GPU worker builds its kernel parameters from
 * this, and the task-suite tests check PTX entries against it.
 */
#ifndef KEVO_LAUNCH_ARGS_H
#define KEVO_LAUNCH_ARGS_H

#include "candidate_private.h"
#include "core/kevo_private.h"
#include "tensormap.h"

/* What one launch argument passes. */
typedef enum kevo__arg_kind {
    KEVO__ARG_BUFFER = 0,   /* a task buffer: index is the task argument */
    KEVO__ARG_SCALAR = 1,   /* a task scalar: index is the task argument */
    KEVO__ARG_SCRATCH = 2,  /* a scratch buffer: index into blocks.scratch */
    KEVO__ARG_VALUE = 3,    /* an integer expression: value, of type */
    KEVO__ARG_TENSORMAP = 4 /* a tensor map: index into blocks.tensormaps;
                             * 128 bytes (KEVO__TMAP_BYTES) */
} kevo__arg_kind;

typedef struct kevo__resolved_arg {
    kevo__arg_kind kind;
    size_t index;
    kevo_dtype type; /* SCALAR: the argument's type; VALUE: the cast;
                      * TENSORMAP: the map's element type */
    size_t size;     /* bytes passed: 8 for a pointer, 128 for a tensor
                      * map, else the type's */
    int64_t value;   /* VALUE: evaluated over env (0 when env is NULL) */
} kevo__resolved_arg;

/*
 * Resolves the arguments of launch i of cand against task: a bare name of
 * a task argument or scratch buffer passes it; anything else is an integer
 * expression evaluated over env (dims, device properties) with the
 * assignment on top, unless env is NULL. Returns KEVO_OK and a new array
 * (free()) of *nargs entries in *args, or an error (a name no longer
 * resolving, an expression that fails, naming the kernel and the argument)
 * in err; KEVO_EINVALID for an expression whose value its type does not
 * hold (4100000000 for an i32, the type of an expression without a cast;
 * a negative value for a u32 or u64), naming the source, the launch's
 * line, the argument and the value.
 */
kevo_status kevo__launch_args(const kevo_task *task, const kevo_candidate *cand,
                              size_t i, const kevo_vars *env,
                              kevo__resolved_arg **args, size_t *nargs,
                              kevo_error *err);

/*
 * kevo__launches_at: every launch of cand at env (dims and device
 * properties): its geometry in geom[i] (nlaunches of them; geom[i].runs 0
 * for a launch whose "if" is 0 there), the arguments of every launch that
 * runs resolved and their values checked, and each tensor map that a
 * launch that runs names encoded and checked (kevo__tensormap_args) into
 * maps[m], with used[m] set (maps and used: ntensormaps each; both may be
 * NULL together, and then maps are checked only). Errors: those of
 * kevo_candidate_launch_geometry, kevo__launch_args and
 * kevo__tensormap_args, and KEVO_EINVALID when no launch runs at env
 * ("<place>no launch runs at this shape: ...").
 */
kevo_status kevo__launches_at(const kevo_task *task, const kevo_candidate *cand,
                              const kevo_vars *env, kevo_launch_geometry *geom,
                              kevo__tmap_args *maps, bool *used,
                              kevo_error *err);

/* "seed.cu:3: kevo:launch: " for a message about the launch at line (or
 * "line 3: kevo:launch: " for a source without a name), in buf. */
const char *kevo__launch_place(const kevo_candidate *cand, int line, char *buf,
                               size_t size);

/* Records "<place>message" (kevo__launch_place) with code, cand's origin
 * and line in err; returns code. */
kevo_status kevo__launch_error(const kevo_candidate *cand, int line,
                               kevo_status code, kevo_error *err,
                               const char *fmt, ...) KEVO_PRINTF(5, 6);

/* env (may be NULL) with cand's assignment on top, in a new set; NULL on no
 * memory. */
kevo_vars *kevo__env_with_params(const kevo_vars *env,
                                 const kevo_candidate *cand);

/* The element count of scratch buffer s of cand over env (with the
 * assignment on top): KEVO_OK, an expression error, or KEVO_ERANGE for a
 * count that is not positive. */
kevo_status kevo__scratch_count(const kevo_candidate *cand, size_t s,
                                const kevo_vars *env, uint64_t *count,
                                kevo_error *err);

#endif

/*
 * task_private.h: the task's insides, for the archive, the evaluator and
 * the tests.
 */
#ifndef KEVO_TASK_PRIVATE_H
#define KEVO_TASK_PRIVATE_H

#include "kevo_private.h"

/* A behaviour dimension the task chose, with its bins resolved: either
 * nbins equal bins over [lo, hi) (nedges 0), or nedges edges (nedges + 1
 * bins). */
typedef struct kevo_task_descriptor {
    char *name;
    size_t nbins;
    double lo, hi;
    size_t nedges;
    double *edges;
} kevo_task_descriptor;

/* The i-th behaviour dimension, for i < kevo_task_descriptor_count(task)
 * (a task that names none has the defaults, "memory" and "block_size",
 * with their default bins); NULL past the last. */
const kevo_task_descriptor *kevo__task_descriptor(const kevo_task *task,
                                                  size_t i);

/* ---- limits ---------------------------------------------------------------
 * Far above any real task; they keep a hostile task file from making the
 * checks quadratic in something huge. */
#define KEVO__TASK_NAME_MAX 128
#define KEVO__TASK_DIMS_MAX 32
#define KEVO__TASK_ARGS_MAX 256
#define KEVO__TASK_SHAPES_MAX 4096
#define KEVO__TASK_DESCRIPTORS_MAX 8
#define KEVO__TASK_BINS_MAX 256

/* One kernel argument. */
typedef struct kevo_task_arg {
    char *name;
    kevo_dtype type;
    kevo_role role;
    char *count;           /* buffers: element count expression; else NULL */
    kevo_expr *count_expr; /* parsed count */
    char *value;           /* scalars with a fixed value: its text */
    kevo_expr *value_expr; /* integer scalars with a fixed value: parsed */
    kevo_dist dist;        /* KEVO_DIST_DEFAULT until kevo_task_set_init() */
    double dist_a, dist_b;
    bool has_tolerance; /* outputs: an own tolerance (else the task's) */
    double rtol, atol;
} kevo_task_arg;

/* One set of shapes: count rows of one value per dim. */
typedef struct kevo_task_shapes {
    int64_t *values;
    size_t count;
} kevo_task_shapes;

/* A descriptor as the task holds it: by_name when it was named without
 * bins (it then has the default bins and is written back by name). */
typedef struct kevo_task_desc {
    kevo_task_descriptor d;
    bool by_name;
} kevo_task_desc;

struct kevo_task {
    char *name;
    char *description; /* NULL for none */
    char *origin;      /* the file (or text) the task came from, or NULL */
    bool from_json;    /* loaded: messages name JSON paths */

    char **dims;
    size_t ndims;
    kevo_task_arg *args;
    size_t nargs;

    kevo_candidate *reference; /* NULL until set */
    kevo_candidate *seed;

    bool has_tolerance; /* the default tolerance of every output */
    double rtol, atol;

    bool has_cost;
    kevo_expr *bytes;
    kevo_expr *flops;
    kevo_peak peak;

    kevo_task_shapes shapes[2]; /* indexed by kevo_shape_set */
    kevo_paramspace *params;

    kevo_task_desc *descriptors; /* what the task named */
    size_t ndescriptors;
    kevo_task_desc defaults[2]; /* "memory" and "block_size" */

    uint64_t memory_limit;
    uint64_t input_seed;
};

/* The index of the argument or dim called name, or -1. */
ptrdiff_t kevo__task_find_arg(const kevo_task *task, const char *name);
ptrdiff_t kevo__task_find_dim(const kevo_task *task, const char *name);

/* True for out and inout buffers. */
bool kevo__task_role_is_output(kevo_role role);

/* The name of a role as task files write it: "in", "out", "inout",
 * "scalar"; "?" otherwise. */
const char *kevo__role_name(kevo_role role);

/* The range of values an integer type holds (false for a float type). */
bool kevo__dtype_int_range(kevo_dtype type, double *lo, double *hi);

/* The largest finite value of a floating-point type (0 for an integer
 * type). */
double kevo__dtype_float_max(kevo_dtype type);

/* Records that the task came from JSON text called origin (may be NULL).
 * Returns KEVO_OK or KEVO_ENOMEM. */
kevo_status kevo__task_set_origin(kevo_task *task, const char *origin);

/* "rows=3001, cols=2999" for shape i of set, cut to fit size. */
void kevo__task_shape_text(const kevo_task *task, kevo_shape_set set, size_t i,
                           char *buf, size_t size);

/* The launch checks of kevo_candidate_new_for_task() on a candidate whose
 * parameters already hold the task's: launch arguments resolve, scratch
 * and parameter names do not collide, every output is passed. */
kevo_status kevo__task_check_launches(const kevo_task *task,
                                      const kevo_candidate *cand,
                                      kevo_error *err);

#endif

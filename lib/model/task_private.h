/*
 * task_private.h: the task's insides, for the archive, the evaluator and
 * the tests.
 */
#ifndef KEVO_TASK_PRIVATE_H
#define KEVO_TASK_PRIVATE_H

#include "core/jsonutil.h"
#include "core/kevo_private.h"

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

/* A tolerance: element-wise (kevo_task_set_tolerance_full()) when factor
 * is 0, else the baseline rule (kevo_task_set_tolerance_baseline()), of
 * which atol is the absolute term. */
typedef struct kevo_tolerance {
    double rtol, atol, rtol_amax, ulp, factor;
} kevo_tolerance;

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
    kevo_tolerance tol;
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
    kevo_candidate *baseline; /* NULL unless the baseline rule is used */

    bool has_tolerance; /* the default tolerance of every output */
    kevo_tolerance tol;

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

    uint64_t stamp; /* new with every change (kevo__task_touch) */
};

/*
 * What identifies a task's contents as they are now: it changes with every
 * change of the task, and no two tasks ever share one, even at one address
 * (the stamps come from one counter for the whole process), so a task's
 * JSON can be made once per version. The parameter space, which callers
 * may extend through kevo_task_params(), only ever grows: its counts see
 * each change.
 */
typedef struct kevo__task_version {
    uint64_t stamp;
    size_t nparams, nconstraints;
} kevo__task_version;

void kevo__task_version_of(const kevo_task *task, kevo__task_version *v);
bool kevo__task_version_equal(const kevo__task_version *a,
                              const kevo__task_version *b);

/* Gives the task a new stamp: every setter calls it. */
void kevo__task_touch(kevo_task *task);

/* The index of the argument or dim called name, or -1. */
ptrdiff_t kevo__task_find_arg(const kevo_task *task, const char *name);
ptrdiff_t kevo__task_find_dim(const kevo_task *task, const char *name);

/* True for out and inout buffers. */
bool kevo__task_role_is_output(kevo_role role);

/* The name of a role as task files write it: "in", "out", "inout",
 * "scalar"; "?" otherwise. */
const char *kevo__role_name(kevo_role role);

/* The name of a distribution as task files write it: "normal", "uniform",
 * "randint", "constant", "nibbles"; NULL for KEVO_DIST_DEFAULT, which has
 * none. */
const char *kevo__dist_name(kevo_dist dist);

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

/* Parses text as an expression into *out; errors read "<what>: <expression
 * error>". */
kevo_status kevo__task_parse_expr(const char *text, const char *what,
                                  kevo_expr **out, kevo_error *err);

/* Frees what an argument holds (not a itself). */
void kevo__task_arg_clear(kevo_task_arg *a);

/* The start of every setter: the NULL check (fn names it in the error),
 * and a new version of the task (kevo__task_touch). */
#define KEVO__CHECK_TASK(task, err, fn)                                        \
    do {                                                                       \
        if (!(task))                                                           \
            return kevo__error_set(err, KEVO_EINVAL, fn ": task is NULL");     \
        kevo__task_touch(task);                                                \
    } while (0)

/* ---- the task file loader -------------------------------------------------
 * Shared by task_json.c, task_json_args.c and task_json_spaces.c. */

typedef struct kevo_task_loader {
    const char *origin;   /* names the text in messages; may be NULL */
    const char *base_dir; /* where source files are looked up; may be NULL */
    kevo_jpath path;
    kevo_error *err;
    kevo_task *task;
} kevo_task_loader;

/* Records "<origin>: <path>: <message>" at the loader's path. Returns
 * code. */
kevo_status kevo__task_load_fail(kevo_task_loader *ld, kevo_status code,
                                 const char *fmt, ...) KEVO_PRINTF(3, 4);

/* A setter's error, at the current path. What a setter calls a bad
 * argument is, in a file, an invalid task. */
kevo_status kevo__task_load_fail_inner(kevo_task_loader *ld,
                                       const kevo_error *e);

/* Descends into key of obj (which may be missing: *v is then NULL).
 * Returns the length to give back to kevo__jpath_pop(). */
size_t kevo__task_load_enter(kevo_task_loader *ld, const json_t *obj,
                             const char *key, json_t **v);

/* Fails with "missing required key" and hint, what the key holds. */
kevo_status kevo__task_load_missing(kevo_task_loader *ld, const char *key,
                                    const char *hint);

/* An expression: a JSON string, or a JSON integer taken as its text
 * (written to buf). */
kevo_status kevo__task_load_expr(kevo_task_loader *ld, const json_t *v,
                                 char *buf, size_t size, const char **out);

/* An array at the current path with at least min items (what names one). */
kevo_status kevo__task_load_array(kevo_task_loader *ld, const json_t *v,
                                  size_t min, const char *what);

/* Checks v as kevo__task_load_array() does, then calls read on each element
 * with the path at that element, stopping at the first failure. */
kevo_status kevo__task_load_each(
    kevo_task_loader *ld, const json_t *v, size_t min, const char *what,
    kevo_status (*read)(kevo_task_loader *ld, const json_t *elem, void *arg),
    void *arg);

/* Readers of the parts of a task file, each at the part's path. Tolerance
 * is for output (NULL: the task's default). */
kevo_status kevo__task_read_args(kevo_task_loader *ld, const json_t *v);
kevo_status kevo__task_read_tolerance(kevo_task_loader *ld, const char *output,
                                      const json_t *v);
/* The task's tolerance object's "baseline" kernel, when it has one (read
 * after the parameters, as the reference is). */
kevo_status kevo__task_read_baseline(kevo_task_loader *ld, const json_t *v);

/* True when some output of the task is judged by the baseline rule. */
bool kevo__task_uses_baseline(const kevo_task *task);
kevo_status kevo__task_read_params(kevo_task_loader *ld, const json_t *v);
kevo_status kevo__task_read_constraints(kevo_task_loader *ld, const json_t *v);
kevo_status kevo__task_read_descriptors(kevo_task_loader *ld, const json_t *v);

#endif

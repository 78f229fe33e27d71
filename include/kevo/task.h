/*
 * kevo/task.h: a task. Everything the search may not change: the kernel's
 * arguments and how inputs are drawn, the reference kernel, the seed kernel,
 * the tolerance, the cost model, the training and held-out shapes, declared
 * parameters and the behaviour descriptors of the archive.
 *
 * Build a task in C with kevo_task_new() and the setters below, or load one
 * from JSON with kevo_task_load() (the format is in kevo-task(5)). Either way
 * kevo_task_validate() checks all that can be checked without a GPU: every
 * expression evaluates for every shape, element counts are positive, the
 * buffers of each shape fit in the memory limit, held-out shapes differ
 * from the training shapes, the reference and seed launch blocks resolve
 * against the arguments, and the default parameters satisfy the constraints.
 */
#ifndef KEVO_TASK_H
#define KEVO_TASK_H

#include <kevo/candidate.h>
#include <kevo/dtype.h>
#include <kevo/error.h>
#include <kevo/paramspace.h>
#include <kevo/vars.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_task kevo_task;

/* What a kernel argument is for. */
typedef enum kevo_role {
    KEVO_ROLE_IN = 0,    /* a buffer the kernel reads and must not change */
    KEVO_ROLE_OUT = 1,   /* a buffer the kernel must write in full */
    KEVO_ROLE_INOUT = 2, /* a buffer read and updated in place */
    KEVO_ROLE_SCALAR = 3 /* a value passed by value */
} kevo_role;

/* How an input is drawn. The meaning of a and b depends on the kind. */
typedef enum kevo_dist {
    KEVO_DIST_DEFAULT =
        0, /* normal(0, 1) for floats, randint(0, 127) for ints */
    KEVO_DIST_NORMAL = 1,   /* mean a, standard deviation b */
    KEVO_DIST_UNIFORM = 2,  /* uniform on [a, b) */
    KEVO_DIST_RANDINT = 3,  /* whole numbers uniform on [a, b], both
                               included (on a float type: ties) */
    KEVO_DIST_CONSTANT = 4, /* every element a */
    /* Integer types holding packed 4-bit values: every 4-bit field of an
     * element (bits 4j to 4j + 3, so the low nibble of each byte first on
     * the little-endian GPU) is an integer uniform on [a, b], both
     * included, stored as its low four bits: -8 <= a <= b <= 7 for signed
     * nibbles (two's complement), 0 <= a <= b <= 15 for unsigned ones. */
    KEVO_DIST_NIBBLES = 5
} kevo_dist;

/* Which ceiling a task's flops are measured against. */
typedef enum kevo_peak {
    KEVO_PEAK_FP32 = 0, /* FP32 FMA on the CUDA cores */
    KEVO_PEAK_FP64 = 1, /* FP64 FMA */
    KEVO_PEAK_TF32 = 2, /* TF32 tensor cores */
    KEVO_PEAK_FP16 = 3, /* FP16 tensor cores */
    KEVO_PEAK_BF16 = 4, /* BF16 tensor cores */
    KEVO_PEAK_FP8 = 5   /* FP8 (E4M3) tensor cores */
} kevo_peak;

/* The two kinds of shape. */
typedef enum kevo_shape_set {
    KEVO_SHAPES_TRAIN = 0,   /* evaluated for fitness, shown to the search */
    KEVO_SHAPES_HELD_OUT = 1 /* only for the gate, never shown to the search */
} kevo_shape_set;

/* The default memory limit for one shape's buffers: 16 GiB. */
#define KEVO_TASK_MEMORY_LIMIT_DEFAULT (16ull << 30)

/*
 * A description of one argument, filled by kevo_task_arg_info(). The caller
 * allocates it and sets size to sizeof(kevo_arg_info) (or zero-initialises
 * it). The strings are borrowed from the task and valid until it changes.
 */
typedef struct kevo_arg_info {
    size_t size;
    const char *name;
    kevo_dtype type;
    kevo_role role;
    const char *count; /* buffers: element count expression; scalars: NULL */
    const char *value; /* scalars with a fixed value: its text; else NULL */
    kevo_dist dist;    /* how the input is drawn (inputs and scalars) */
    double dist_a;
    double dist_b;
    double rtol; /* outputs: relative tolerance */
    double atol; /* outputs: absolute tolerance */
    /* Outputs: the tolerance relative to the largest finite |reference| of
     * the output, and in units in the last place of the reference's value
     * in the output's type (see kevo_task_set_tolerance_full()). */
    double rtol_amax;
    double ulp;
    /* Outputs: 0 for the element-wise rule above; above 0, the baseline
     * rule of kevo_task_set_tolerance_baseline(), with atol its absolute
     * term (rtol, rtol_amax and ulp are then 0). */
    double factor;
    unsigned char reserved[40];
} kevo_arg_info;

/*
 * kevo_task_new: an empty task called name (an identifier of letters,
 * digits, '_', '-' and '.'; copied) in *out. Returns KEVO_OK, KEVO_EINVAL
 * for a bad name, or KEVO_ENOMEM. On failure *out is NULL.
 */
KEVO_API kevo_status kevo_task_new(const char *name, kevo_task **out,
                                   kevo_error *err);

/*
 * kevo_task_load: reads the JSON task file at path, builds the task, reads
 * the reference and seed sources it names (relative to the file's
 * directory) and validates it with kevo_task_validate(). Returns KEVO_OK;
 * KEVO_ENOENT or KEVO_EIO for a file that cannot be read; KEVO_EPARSE for
 * JSON that does not parse (err has the line and column); KEVO_EINVALID for
 * a task that fails a check, with the file and the JSON path of the bad
 * value (such as "$.args[2].count") in the message; expression errors from
 * the checks. On failure *out is NULL.
 */
KEVO_API kevo_status kevo_task_load(const char *path, kevo_task **out,
                                    kevo_error *err);

/*
 * kevo_task_load_string: as kevo_task_load() for JSON text in memory.
 * origin names the text in messages (may be NULL); base_dir is where
 * relative source file names are looked up (NULL means the current
 * directory).
 */
KEVO_API kevo_status kevo_task_load_string(const char *json, const char *origin,
                                           const char *base_dir,
                                           kevo_task **out, kevo_error *err);

/* kevo_task_free: frees a task. NULL does nothing. */
KEVO_API void kevo_task_free(kevo_task *task);

/*
 * kevo_task_to_json: the task as JSON text in the kevo-task(5) format, with
 * the reference and seed sources inline, in a new string that the caller
 * frees with free(). kevo_task_load_string() of the text gives an equal
 * task. Returns KEVO_OK or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_task_to_json(const kevo_task *task, char **json,
                                       kevo_error *err);

/*
 * kevo_task_validate: runs every check that needs no GPU (see the top of
 * this header). Returns KEVO_OK or the first failure: KEVO_EINVALID, an
 * expression error, KEVO_ECONSTRAINT or KEVO_ELIMIT, each naming the part
 * of the task (and the shape) concerned.
 */
KEVO_API kevo_status kevo_task_validate(const kevo_task *task, kevo_error *err);

/* Building a task. Each setter copies its strings and returns KEVO_OK,
 * KEVO_EINVAL for a bad argument (named in err), KEVO_EEXIST for a name
 * already taken, or KEVO_ENOMEM. */

/* kevo_task_set_description: a free-text description shown to operators. */
KEVO_API kevo_status kevo_task_set_description(kevo_task *task,
                                               const char *text,
                                               kevo_error *err);

/* kevo_task_add_dim: appends a problem dimension, such as "rows". Dims are
 * named in expressions and given values by shapes, in the order added. */
KEVO_API kevo_status kevo_task_add_dim(kevo_task *task, const char *name,
                                       kevo_error *err);

/*
 * kevo_task_add_buffer: appends a buffer argument of count elements of type
 * (count is an expression over the dims) with role KEVO_ROLE_IN,
 * KEVO_ROLE_OUT or KEVO_ROLE_INOUT.
 */
KEVO_API kevo_status kevo_task_add_buffer(kevo_task *task, const char *name,
                                          kevo_dtype type, kevo_role role,
                                          const char *count, kevo_error *err);

/*
 * kevo_task_add_scalar: appends a by-value argument. value is an integer
 * expression over the dims for integer types, a decimal number for floating
 * types, or NULL for a scalar drawn at random like an input (see
 * kevo_task_set_init()).
 */
KEVO_API kevo_status kevo_task_add_scalar(kevo_task *task, const char *name,
                                          kevo_dtype type, const char *value,
                                          kevo_error *err);

/*
 * kevo_task_set_init: how the input buffer or random scalar called arg is
 * drawn (see kevo_dist for a and b). Returns KEVO_ENOENT for an unknown
 * argument, KEVO_EINVAL for an output or bad parameters.
 */
KEVO_API kevo_status kevo_task_set_init(kevo_task *task, const char *arg,
                                        kevo_dist dist, double a, double b,
                                        kevo_error *err);

/*
 * kevo_task_set_tolerance: an element of output passes when
 * |value - reference| <= atol + rtol * |reference|. output names an out or
 * inout buffer, or is NULL for every output (later per-output calls still
 * override it). Both must be finite and >= 0. The default is exact equality.
 */
KEVO_API kevo_status kevo_task_set_tolerance(kevo_task *task,
                                             const char *output, double rtol,
                                             double atol, kevo_error *err);

/*
 * kevo_task_set_tolerance_full: as kevo_task_set_tolerance(), with two more
 * terms: an element of output passes when
 *   |value - reference| <= atol + rtol * |reference|
 *                          + rtol_amax * amax + ulp * ulp(reference),
 * where amax is the largest finite |reference| over the whole output (the
 * scale of a matrix product or an attention output, whose small elements
 * carry the rounding error of the large ones) and ulp(reference) is the
 * gap between the reference's value and the next value of larger
 * magnitude in the output's type (2^(e - 7) for a bf16 value in
 * [2^e, 2^(e+1)), 2^(e - 10) for f16, 2^(e - 23) for f32, 2^(e - 52) for
 * f64, the smallest subnormal's gap below the normal range, and 1 for an
 * integer type). So "ulp" 1 lets a bf16 result differ from the reference's
 * by one rounding step, and 0 asks for the reference's bits (an infinite
 * reference always asks for the same infinity, and NaN passes only where
 * the reference is NaN). Every term must be finite and >= 0; a term of 0
 * is left out. kevo_task_set_tolerance(task, output, rtol, atol, err) is
 * this call with rtol_amax and ulp 0. Either call replaces a baseline rule
 * set for the output before.
 */
KEVO_API kevo_status kevo_task_set_tolerance_full(kevo_task *task,
                                                  const char *output,
                                                  double rtol, double atol,
                                                  double rtol_amax, double ulp,
                                                  kevo_error *err);

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_task_set_baseline: the baseline kernel: a plain implementation of
 * the task in the outputs' own precision (such as an attention that rounds
 * its scores and probabilities to bf16), with the same arguments and a
 * kevo:launch block as the reference has; origin names it in messages (may
 * be NULL). The worker runs it on the same inputs as the reference, and
 * outputs under the baseline rule (kevo_task_set_tolerance_baseline()) are
 * judged against its errors. Parsed now as kevo_task_set_reference() parses
 * the reference; kevo_task_validate() checks it against the arguments and
 * that some output uses the rule.
 */
KEVO_API kevo_status kevo_task_set_baseline(kevo_task *task, const char *source,
                                            const char *origin,
                                            kevo_error *err);

/*
 * kevo_task_set_tolerance_baseline: output (or every output, for NULL, as
 * kevo_task_set_tolerance()) is judged relative to the baseline kernel, the
 * rule FlashAttention's tests use: with err_b the baseline's errors
 * |baseline - reference| over the output's elements, and err the
 * candidate's, it passes when
 *   max err <= factor * max err_b + atol      (every element), and
 *   mean err <= factor * mean err_b + atol    (the whole output).
 * The first bound is uniform, so the candidate's worst element is held to
 * what the baseline's worst element needs; the second keeps the many small
 * elements as accurate as the baseline's on average. NaN where the
 * reference has none, and an unwritten element, still fail. factor must be
 * finite and > 0, atol finite and >= 0 (KEVO_EINVAL). The task needs a
 * baseline kernel (kevo_task_set_baseline()) by kevo_task_validate().
 */
KEVO_API kevo_status kevo_task_set_tolerance_baseline(kevo_task *task,
                                                      const char *output,
                                                      double factor,
                                                      double atol,
                                                      kevo_error *err);

/* kevo_task_baseline: the baseline kernel, borrowed, or NULL if unset. */
KEVO_API const kevo_candidate *kevo_task_baseline(const kevo_task *task);
#endif /* KEVO_EXPERIMENTAL */

/*
 * kevo_task_set_cost: the cost model: the fewest bytes the kernel must move
 * through device memory and the floating-point operations it must do, as
 * expressions over the dims, and the ceiling the flops count against.
 */
KEVO_API kevo_status kevo_task_set_cost(kevo_task *task, const char *bytes,
                                        const char *flops, kevo_peak peak,
                                        kevo_error *err);

/*
 * kevo_task_set_reference: the trusted reference kernel's source, with its
 * kevo:launch block; origin names it in messages (may be NULL). The blocks
 * are parsed now (KEVO_EPARSE, KEVO_EINVALID naming the line); the checks
 * against the arguments wait for kevo_task_validate().
 */
KEVO_API kevo_status kevo_task_set_reference(kevo_task *task,
                                             const char *source,
                                             const char *origin,
                                             kevo_error *err);

/* kevo_task_set_seed: the seed kernel the search starts from, as
 * kevo_task_set_reference(). */
KEVO_API kevo_status kevo_task_set_seed(kevo_task *task, const char *source,
                                        const char *origin, kevo_error *err);

/*
 * kevo_task_add_shape: appends a shape to set: values[i] is the value of the
 * i-th dim, and n must equal the number of dims. Values must be positive.
 */
KEVO_API kevo_status kevo_task_add_shape(kevo_task *task, kevo_shape_set set,
                                         const int64_t *values, size_t n,
                                         kevo_error *err);

/*
 * kevo_task_add_descriptor: appends a behaviour dimension of the archive:
 * name is one of the descriptors kevo-task(5) lists (such as "memory" or
 * "block_size"), split into nbins equal bins over [lo, hi). nbins 0 takes
 * that descriptor's default bins. With no descriptor added, a task uses
 * "memory" and "block_size".
 */
KEVO_API kevo_status kevo_task_add_descriptor(kevo_task *task, const char *name,
                                              size_t nbins, double lo,
                                              double hi, kevo_error *err);

/*
 * kevo_task_add_descriptor_edges: as kevo_task_add_descriptor() with bins
 * split at the n increasing edges: n + 1 bins.
 */
KEVO_API kevo_status kevo_task_add_descriptor_edges(kevo_task *task,
                                                    const char *name,
                                                    const double *edges,
                                                    size_t n, kevo_error *err);

/* kevo_task_set_memory_limit: the most bytes one shape's evaluation may
 * allocate (see kevo_task_footprint()); the default is
 * KEVO_TASK_MEMORY_LIMIT_DEFAULT. */
KEVO_API kevo_status kevo_task_set_memory_limit(kevo_task *task, uint64_t bytes,
                                                kevo_error *err);

/* kevo_task_set_input_seed: the base seed from which each evaluation's fresh
 * inputs are drawn (default 1). */
KEVO_API void kevo_task_set_input_seed(kevo_task *task, uint64_t seed);

/*
 * kevo_task_params: the task's own parameter space, borrowed; the caller may
 * add to it with the kevo_paramspace_add_* functions. Task parameters apply
 * to every candidate of the task, beside those its kevo:param block
 * declares (the candidate's declaration wins for a name in both); a task
 * constraint applies to a candidate that has all the parameters it names.
 */
KEVO_API kevo_paramspace *kevo_task_params(const kevo_task *task);

/* Reading a task. Strings are borrowed and valid until the task changes. */

/* kevo_task_name: the task's name. */
KEVO_API const char *kevo_task_name(const kevo_task *task);

/* kevo_task_description: the description, or "" when none was set. */
KEVO_API const char *kevo_task_description(const kevo_task *task);

/* kevo_task_origin: the file the task was loaded from, or NULL. */
KEVO_API const char *kevo_task_origin(const kevo_task *task);

/* kevo_task_dim_count: how many dims the task has. */
KEVO_API size_t kevo_task_dim_count(const kevo_task *task);

/* kevo_task_dim_name: the i-th dim's name, or NULL when out of range. */
KEVO_API const char *kevo_task_dim_name(const kevo_task *task, size_t i);

/* kevo_task_arg_count: how many kernel arguments the task has. */
KEVO_API size_t kevo_task_arg_count(const kevo_task *task);

/*
 * kevo_task_arg_info: fills *info for argument i. Returns KEVO_OK or
 * KEVO_EINVAL when i is out of range or info is NULL.
 */
KEVO_API kevo_status kevo_task_arg_info(const kevo_task *task, size_t i,
                                        kevo_arg_info *info);

/* kevo_task_reference: the reference kernel, borrowed, or NULL if unset. */
KEVO_API const kevo_candidate *kevo_task_reference(const kevo_task *task);

/* kevo_task_seed: the seed kernel, borrowed, or NULL if unset. */
KEVO_API const kevo_candidate *kevo_task_seed(const kevo_task *task);

/* kevo_task_shape_count: how many shapes set holds. */
KEVO_API size_t kevo_task_shape_count(const kevo_task *task,
                                      kevo_shape_set set);

/*
 * kevo_task_shape: the i-th shape of set as an array of one value per dim,
 * borrowed; NULL when out of range.
 */
KEVO_API const int64_t *kevo_task_shape(const kevo_task *task,
                                        kevo_shape_set set, size_t i);

/*
 * kevo_task_shape_vars: sets the dims of the i-th shape of set in vars
 * (other names there are kept). Returns KEVO_OK, KEVO_EINVAL when out of
 * range, or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_task_shape_vars(const kevo_task *task,
                                          kevo_shape_set set, size_t i,
                                          kevo_vars *vars);

/*
 * kevo_task_cost: evaluates the cost model for one shape (dims in shape) and
 * stores the bytes and flops (either pointer may be NULL). Returns KEVO_OK,
 * KEVO_ESTATE when no cost model was set, or an expression error.
 */
KEVO_API kevo_status kevo_task_cost(const kevo_task *task,
                                    const kevo_vars *shape, double *bytes,
                                    double *flops, kevo_error *err);

/* kevo_task_peak: the ceiling the flops count against. */
KEVO_API kevo_peak kevo_task_peak(const kevo_task *task);

/* kevo_peak_name: "fp32", "fp64", "tf32", "fp16", "bf16" or "fp8"; "?"
 * otherwise. */
KEVO_API const char *kevo_peak_name(kevo_peak peak);

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_task_footprint: the device memory one evaluation of the shape needs:
 * every buffer once, plus a second copy of each output (for the reference
 * result) and of each input (to check it is unchanged). Returns KEVO_OK or
 * an expression error.
 */
KEVO_API kevo_status kevo_task_footprint(const kevo_task *task,
                                         const kevo_vars *shape,
                                         uint64_t *bytes, kevo_error *err);
#endif /* KEVO_EXPERIMENTAL */

/* kevo_task_memory_limit: the memory limit in bytes. */
KEVO_API uint64_t kevo_task_memory_limit(const kevo_task *task);

/* kevo_task_input_seed: the base seed of input draws. */
KEVO_API uint64_t kevo_task_input_seed(const kevo_task *task);

/* kevo_task_descriptor_count: how many behaviour dimensions the task uses
 * (2 when it names none: the defaults). */
KEVO_API size_t kevo_task_descriptor_count(const kevo_task *task);

/* kevo_task_descriptor_name: the i-th behaviour dimension's name, or NULL. */
KEVO_API const char *kevo_task_descriptor_name(const kevo_task *task, size_t i);

/*
 * kevo_candidate_new_for_task: as kevo_candidate_new(), and then fits the
 * candidate to task: the task's parameters join the candidate's space, and
 * every launch argument must name an argument of the task or a scratch
 * buffer, or be an integer expression over dims, parameters and device
 * properties (KEVO_EINVALID naming the line otherwise).
 */
KEVO_API kevo_status kevo_candidate_new_for_task(const kevo_task *task,
                                                 const char *source,
                                                 const char *origin,
                                                 kevo_candidate **out,
                                                 kevo_error *err);

#ifdef __cplusplus
}
#endif

#endif

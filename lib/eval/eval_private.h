/*
 * eval_private.h: the evaluation result behind include/kevo/eval.h's
 * getters, the constructors the evaluator builds results with, and the
 * evaluator's options table.
 *
 * The evaluator (evaluator.c) hands a result constructor what the compile
 * step and the GPU worker said; the result computes the rest: the cost
 * model at each shape, the roofline figures, the fitness, the speedups and
 * the behaviour descriptors (eval_describe.c, from the PTX, ptxas's log and
 * the worker's kernel attributes). eval_result.c holds the object and its
 * getters, eval_worker.c reads the worker's result message,
 * eval_result_json.c writes and reads the result as JSON, eval_options.c
 * the option table.
 */
#ifndef KEVO_EVAL_PRIVATE_H
#define KEVO_EVAL_PRIVATE_H

#include <jansson.h>

#include "core/jsonutil.h"
#include "core/kevo_private.h"
#include "fitness/fitness.h"

/* ---- what the evaluator gives ------------------------------------------ */

/* What the compile step gave for a candidate. */
typedef struct kevo_compile_info {
    bool ok;
    const char *error; /* when !ok: one line (NULL: "compile failed") */
    const char *log;   /* NVRTC's log, with ptxas's -v lines; may be NULL */
    const char *ptx;   /* the PTX text, ptx_len bytes (no NUL needed); may
                          be NULL */
    size_t ptx_len;
    double seconds; /* NVRTC, or the cache lookup */
    bool cached;    /* the compile came from the cache */
} kevo_compile_info;

/* How measurements become figures. Every pointer may be NULL. */
typedef struct kevo_eval_context {
    const kevo_ceilings *ceilings;  /* NULL: every floor is unknown */
    const kevo_vars *device;        /* the device's properties (as
                                       kevo_evaluator_device() has them);
                                       NULL: the nominal device */
    const kevo_fitness_fn *fitness; /* NULL: roofline efficiency */
    double suspicious; /* efficiencies above this are flagged; 0 or less,
                          or NaN: KEVO__SUSPICIOUS_DEFAULT */
} kevo_eval_context;

/*
 * A result for cand (copied) evaluated on task's shapes of set (task is
 * only read during the call), from the GPU worker's result message
 * (worker: the JSON object of the "result" reply, whose "op" and "id" are
 * ignored; NULL for an evaluation that compiled only) and the compile
 * step's outcome (compile: NULL when unknown). A failed compile gives
 * verdict KEVO_VERDICT_COMPILE_ERROR whatever worker says. Returns KEVO_OK
 * and the result in *out; KEVO_EWORKER when the worker's message is
 * malformed or does not fit the task (the message names the JSON path,
 * "worker result: $.shapes[1].time.median: ..."); KEVO_EINVAL for a NULL
 * argument; KEVO_ENOMEM.
 */
kevo_status kevo__eval_result_new(const kevo_task *task,
                                  const kevo_candidate *cand,
                                  kevo_shape_set set, const json_t *worker,
                                  const kevo_compile_info *compile,
                                  const kevo_eval_context *ctx,
                                  kevo_eval_result **out, kevo_error *err);

/*
 * A result with a failure verdict that the evaluator decided (a compile
 * error, a timeout, a worker that died without replying): reason (copied;
 * NULL gives the verdict's name) says why. compile may be NULL; with it,
 * the compile log, time and the descriptors of the compiled code are kept.
 * Returns KEVO_OK, KEVO_EINVAL (NULL task or cand, or verdict
 * KEVO_VERDICT_OK) or KEVO_ENOMEM.
 */
kevo_status kevo__eval_result_new_failure(
    const kevo_task *task, const kevo_candidate *cand, kevo_shape_set set,
    kevo_verdict verdict, const char *reason, const kevo_compile_info *compile,
    const kevo_eval_context *ctx, kevo_eval_result **out, kevo_error *err);

/* Sets the ticket kevo_eval_result_ticket() returns. */
void kevo__eval_result_set_ticket(kevo_eval_result *res, uint64_t ticket);

/* Sets the device that measured the result, a free-form label (copied;
 * NULL: none), which kevo_eval_result_device() returns. */
void kevo__eval_result_set_device(kevo_eval_result *res, const char *label);

/* Sets the seconds of a phase (the evaluator knows KEVO_PHASE_TOTAL);
 * an unknown phase is ignored. */
void kevo__eval_result_set_seconds(kevo_eval_result *res, kevo_eval_phase phase,
                                   double seconds);

/*
 * Sets the baseline's time at each shape: times[i] is the time of shape i
 * of the result's set (NaN where unknown), n the number of shapes in the
 * set. The speedups, and the fitness when it is a speedup, are computed
 * again. Returns KEVO_OK, or KEVO_EINVAL when n does not cover every
 * shape of the result.
 */
kevo_status kevo__eval_result_set_baseline(kevo_eval_result *res,
                                           kevo_baseline which,
                                           const double *times, size_t n,
                                           kevo_error *err);

/*
 * Sets the baseline's times and their precision at each shape, measured
 * in pairs with the result's own (times[i] and spreads[i] for shape i of
 * the set, NaN where unknown), and marks the shapes paired. As
 * kevo__eval_result_set_baseline() otherwise.
 */
kevo_status kevo__eval_result_set_paired(kevo_eval_result *res,
                                         kevo_baseline which,
                                         const double *times,
                                         const double *spreads, size_t n);

/* The measured times of res by shape index into times[0..n) (NaN where a
 * shape was not timed or not evaluated): the candidate's own with
 * KEVO_BASELINE_SEED (so a seed's result gives the seed times), the
 * reference's that the worker measured beside it with
 * KEVO_BASELINE_REFERENCE. */
void kevo__eval_result_times(const kevo_eval_result *res, kevo_baseline which,
                             double *times, size_t n);

/* The name of the fitness function the result used ("roofline", ...). */
const char *kevo__eval_result_fitness_name(const kevo_eval_result *res);

/* Shape i's dims as "m=1000, n=1500, k=777" in buf (cut to size); "" when
 * i is out of range. Returns buf. */
const char *kevo__eval_result_shape_text(const kevo_eval_result *res, size_t i,
                                         char *buf, size_t size);

/* The result as a JSON object (the text kevo_eval_result_to_json()
 * writes), or NULL when out of memory. */
json_t *kevo__eval_result_to_json_value(const kevo_eval_result *res);

/*
 * The inverse, for checkpoints: a result from the object
 * kevo__eval_result_to_json_value() wrote, equal to the one written (its
 * JSON is the same text). Derived figures (floors, efficiencies, fitness,
 * speedups) are computed again from the measurements. Errors name origin
 * and the JSON path: KEVO_EINVALID, KEVO_EPARSE for a bad candidate
 * source, KEVO_ENOMEM.
 */
kevo_status kevo__eval_result_from_json(const json_t *v, const char *origin,
                                        kevo_jpath *path,
                                        kevo_eval_result **out,
                                        kevo_error *err);

/* The verdict called name ("ok", "compile_error", ...); false for an
 * unknown name. */
bool kevo__verdict_parse(const char *name, kevo_verdict *out);

/* ---- between the result's files ----------------------------------------- */

/* How many behaviour descriptors descriptor.c defines, at most. */
#define KEVO__DESCRIPTORS_MAX 16

/* One shape of a result. */
typedef struct kevo_eval_shape {
    kevo_shape_result r; /* worst_arg points at worst_arg below; floor,
                            efficiency, bound and the rates are derived */
    char *worst_arg;
    bool has_worst;
    size_t ndims;
    char **dim_names;
    int64_t *dim_values;
    double time_mean;
    double out_bytes; /* the outputs' bytes at this shape; NaN: unknown */
    double *samples;
    size_t nsamples;
    bool has_profile;
    /* Derived. */
    bool bound_known;
    bool suspicious;
    double score; /* the fitness function's score of the shape */
} kevo_eval_shape;

/* Worker-reported attributes of one kernel ("kernels"[] of the result
 * message); -1 or NaN where absent. */
typedef struct kevo_worker_kernel {
    const char *name; /* borrowed from the message */
    int64_t registers, local_bytes, static_smem, max_threads, dyn_smem;
    int64_t block[3];
    bool has_block;
    double occupancy;
    /* Blocks per cluster and cuOccupancyMaxActiveClusters, for a launch in
     * clusters (-1 otherwise); runs false for a launch whose "if" was 0 at
     * the shape. */
    int64_t cluster, cluster_occupancy;
    bool runs;
} kevo_worker_kernel;

struct kevo_eval_result {
    uint64_t ticket;
    kevo_candidate *cand;
    char *task; /* the task's name */
    kevo_shape_set set;
    kevo_verdict verdict;
    char *reason;         /* NULL when the verdict is ok */
    int64_t failed_shape; /* -1: none named */
    char *compile_log;    /* never NULL */
    bool compiled;        /* the compile succeeded */
    bool cached;
    double seconds[KEVO_PHASE_TOTAL + 1];
    /* How figures are made. */
    const kevo_fitness_fn *fitness_fn;
    double suspicious_level;
    kevo_peak peak;    /* the task's */
    double bandwidth;  /* the ceilings used; 0 when unknown */
    double peak_value; /* the task's peak; 0 when unknown */
    double launch;     /* the launch latency; 0 when unknown */
    double l2_bytes;   /* the device's L2 cache; 0 when unknown */
    /* Derived. */
    double fitness;
    bool suspicious;
    double speedup_seed, speedup_reference;
    /* Descriptors, by descriptor.c's index. */
    double descriptor[KEVO__DESCRIPTORS_MAX];
    bool has_descriptor[KEVO__DESCRIPTORS_MAX];
    char *describe_error; /* why descriptors are missing, or NULL */
    char *device;         /* the device that measured it, or NULL */
    json_t *kernels;      /* per launch: what the kernel is made of */
    kevo_eval_shape *shapes;
    size_t nshapes;
};

/* A new result for cand (copied; may be NULL) of the task called task
 * (copied), whose flops count against peak, on set, with nothing
 * measured: verdict ok, no shapes, 0 seconds, the context's fitness
 * function, level and ceilings (ctx may be NULL). NULL when out of
 * memory. (eval_result.c) */
kevo_eval_result *kevo__eval_result_alloc(const kevo_candidate *cand,
                                          const char *task, kevo_peak peak,
                                          kevo_shape_set set,
                                          const kevo_eval_context *ctx);

/* Adds room for n shapes (zeroed, NaN measurements); false when out of
 * memory. (eval_result.c) */
bool kevo__eval_result_add_shapes(kevo_eval_result *res, size_t n);

/* Computes every derived figure again: per shape the roofline figures,
 * the suspicious flag and the score; the fitness, the suspicious flag and
 * the speedups. (eval_result.c) */
void kevo__eval_result_recompute(kevo_eval_result *res);

/* Keeps the compile step's outcome (log, seconds, cached, compiled);
 * without one (NULL) the candidate counts as compiled unless the verdict
 * is a compile error. false when out of memory. (eval_result.c) */
bool kevo__eval_result_set_compile(kevo_eval_result *res,
                                   const kevo_compile_info *compile);

/* Fills s's dims and cost model from shape s->r.index of the task (in the
 * result's set); the cost model is NaN where the task has none.
 * (eval_result.c) */
kevo_status kevo__eval_result_shape_from_task(kevo_eval_result *res,
                                              kevo_eval_shape *s,
                                              const kevo_task *task,
                                              kevo_error *err);

/*
 * Computes the behaviour descriptors and the per-launch kernel records of
 * res from the PTX and the log in compile, the worker's kernel attributes
 * (nwk of them) and the launch geometry of the candidate at the largest
 * shape of the set. A PTX that cannot be read leaves descriptors out and
 * says why in res->describe_error. Returns KEVO_OK or KEVO_ENOMEM.
 * (eval_describe.c)
 */
kevo_status kevo__eval_describe(kevo_eval_result *res, const kevo_task *task,
                                const kevo_compile_info *compile,
                                const kevo_worker_kernel *wk, size_t nwk,
                                const kevo_eval_context *ctx, kevo_error *err);

/* The dram_fraction descriptor from the shapes' profiles: (DRAM bytes
 * read + written) / time / bandwidth at the largest profiled shape (by
 * the cost model's bytes). (eval_describe.c) */
void kevo__eval_describe_dram(kevo_eval_result *res);

/* The phases' names in JSON, by kevo_eval_phase, NULL-terminated.
 * (eval_result_json.c) */
extern const char *const kevo__eval_phase_names[];

/* JSON for a double that may be NaN (null) or infinite ("inf", "-inf");
 * NULL when out of memory. (eval_result_json.c) */
json_t *kevo__json_real_nf(double x);

/* Reads a number, null (NaN) or "nan", "inf", "-inf" at path. Errors
 * name origin and the path (KEVO_EINVALID). (eval_result_json.c) */
kevo_status kevo__json_number_nf(const json_t *v, const char *origin,
                                 const kevo_jpath *path, double *out,
                                 kevo_error *err);

#endif

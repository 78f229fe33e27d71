/*
 * kevo/eval.h: evaluating candidates on a GPU, and what an evaluation says.
 *
 * An evaluator owns the processes that do the work: a pool of compile
 * processes running NVRTC (one per core, with a compile cache on disk) and
 * one GPU worker process (kevo-worker) that loads, runs, checks and times
 * candidates. The calling process never loads the CUDA driver: a kernel
 * that faults or hangs takes down only its worker, which the evaluator
 * kills and restarts, and the candidate gets a failure verdict.
 *
 * Per training shape (or held-out shape, for the gate) a candidate is run
 * on fresh random inputs with its outputs poisoned, compared with the
 * task's reference within the task's tolerance, checked not to have
 * changed its inputs, run again on a second fresh input set and compared
 * again, and then timed: warm-ups, then repetitions with the L2 cache
 * flushed between them, every kernel of the context recorded by CUPTI,
 * until the spread of the repetitions is small or a time cap is reached.
 * The result carries the measurements, the roofline efficiency of each
 * shape (floor = max(bytes / bandwidth, flops / peak, launch latency),
 * efficiency = floor / time), the fitness (the geometric mean of the
 * efficiencies, 0 when any shape fails), speedups over the task's seed and
 * reference, and the behaviour descriptors of the compiled kernel.
 *
 * Typical use: kevo_evaluator_new(), options, kevo_evaluator_start(), then
 * kevo_evaluator_evaluate() for one candidate at a time, or
 * kevo_evaluator_submit() and kevo_evaluator_wait() to keep the compile
 * pool and the GPU busy at once; kevo_evaluator_free() stops the
 * processes.
 */
#ifndef KEVO_EVAL_H
#define KEVO_EVAL_H

#include <stdbool.h>

#include <kevo/candidate.h>
#include <kevo/error.h>
#include <kevo/task.h>
#include <kevo/vars.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_evaluator kevo_evaluator;
typedef struct kevo_eval_result kevo_eval_result;

/* How an evaluation ended. Values are only ever appended. */
typedef enum kevo_verdict {
    KEVO_VERDICT_OK = 0,             /* correct on every shape, timed */
    KEVO_VERDICT_COMPILE_ERROR = 1,  /* NVRTC failed or timed out */
    KEVO_VERDICT_REJECTED = 2,       /* refused before running (see reason) */
    KEVO_VERDICT_LAUNCH_ERROR = 3,   /* a launch was refused by the driver */
    KEVO_VERDICT_FAULT = 4,          /* the kernel faulted (illegal address,
                                        trap, misaligned access, ...) */
    KEVO_VERDICT_TIMEOUT = 5,        /* the run passed its deadline */
    KEVO_VERDICT_WRONG = 6,          /* an output is outside the tolerance */
    KEVO_VERDICT_INPUT_MODIFIED = 7, /* an input buffer was changed */
    KEVO_VERDICT_WORKER_DIED = 8     /* the worker died for another reason */
} kevo_verdict;

/* The verdict's name as it appears in JSON ("ok", "compile_error", ...), or
 * "unknown". Static. */
KEVO_API const char *kevo_verdict_name(kevo_verdict verdict);

/* Integer options of an evaluator. Each has a name, bounds and a default
 * (kevo_eval_option_name(), kevo_eval_option_bounds()); the four that
 * shape the processes and the input sets are fixed once
 * kevo_evaluator_start() has returned, the others may change at any time
 * (kevo_eval_option_live()). */
typedef enum kevo_eval_option {
    KEVO_EVAL_COMPILE_WORKERS = 0,    /* compile processes; 0: one per core
                                         (fixed at start) */
    KEVO_EVAL_DEVICE = 1,             /* the CUDA device index (fixed at
                                         start) */
    KEVO_EVAL_COMPILE_TIMEOUT_MS = 2, /* per compile */
    KEVO_EVAL_RUN_TIMEOUT_MS = 3,     /* per evaluation on the GPU, beyond
                                         the timing cap */
    KEVO_EVAL_WARMUP = 4,             /* warm-up runs before timing */
    KEVO_EVAL_MIN_REPS = 5,           /* timed repetitions, at least */
    KEVO_EVAL_MAX_REPS = 6,           /* timed repetitions, at most */
    KEVO_EVAL_TARGET_SPREAD_PPM = 7,  /* stop when the median is known to
                                         this, in parts per million: see
                                         kevo_shape_result.time_spread */
    KEVO_EVAL_TIME_CAP_MS = 8,        /* timing time per shape, at most */
    KEVO_EVAL_PROFILE = 9,            /* 1: CUPTI range profiler per shape */
    KEVO_EVAL_FLUSH_L2 = 10,          /* 1: flush L2 between repetitions */
    KEVO_EVAL_INPUT_SEEDS = 11,       /* input sets per shape to draw from,
                                         2 to 64 (fixed at start) */
    KEVO_EVAL_SUSPICIOUS_PPM = 12,    /* efficiency flagged above this */
    KEVO_EVAL_SEED = 13,              /* seeds the choice of input sets
                                         (fixed at start) */
    KEVO_EVAL_PAIRED_MIN_REPS = 14,   /* timed rounds, at least, of an
                                         evaluation that times several
                                         kernels together */
    KEVO_EVAL_PAIRED_SPREAD_PPM = 15  /* ... and the precision its medians
                                         are timed to */
} kevo_eval_option;

/* String options of an evaluator, set before kevo_evaluator_start(). */
typedef enum kevo_eval_string_option {
    KEVO_EVAL_WORKER_PATH = 0, /* the kevo-worker program; default: the
                                  KEVO_WORKER environment variable, else
                                  the installed one */
    KEVO_EVAL_CACHE_DIR = 1,   /* compile and ceiling caches; default:
                                  $KEVO_CACHE_DIR, $XDG_CACHE_HOME/kevo or
                                  ~/.cache/kevo */
    KEVO_EVAL_ARCH = 2,        /* "sm_90a": the compile target of an
                                  evaluator started without a GPU;
                                  default: the nominal device's, sm_90a */
    KEVO_EVAL_FITNESS = 3,     /* the fitness function: "roofline" (the
                                  default: the geometric mean of the
                                  shapes' roofline efficiencies),
                                  "speedup_seed" or "speedup_reference"
                                  (the geometric mean of the speedups) */
    KEVO_EVAL_DEVICES = 4      /* experimental: the GPUs to evaluate on,
                                  one worker each: "all", or device
                                  numbers such as "0,2,3" (at most 64);
                                  default (NULL or ""): the one of
                                  KEVO_EVAL_DEVICE */
} kevo_eval_string_option;

/* Flags of kevo_evaluator_start(). */
#define KEVO_EVAL_START_COMPILE_ONLY                                           \
    0x1u /* start no GPU worker: compile                                       \
            and describe only */

/* Flags of kevo_evaluator_submit() and kevo_evaluator_evaluate(). */
#define KEVO_EVAL_HELD_OUT 0x1u  /* the held-out shapes, for the gate */
#define KEVO_EVAL_NO_TIMING 0x2u /* correctness only */
#define KEVO_EVAL_COMPILE 0x4u   /* compile and describe only, no GPU */
#define KEVO_EVAL_PAIRED                                                       \
    0x8u /* time the task's seed (at the shapes where                          \
            it is correct) and its reference                                   \
            together with the candidate, interleaved                           \
            run by run: the result's seed and                                  \
            reference times are those paired times                             \
            (kevo_shape_result.paired) */

/*
 * kevo_eval_option_name: the option's name in configuration files
 * ("compile_workers", "device", ...), or NULL for an unknown option (the
 * options are numbered from 0: the first NULL ends them).
 * kevo_eval_option_from_name: the option called name in *out (out may be
 * NULL: is there one?). Returns KEVO_OK, KEVO_ENOENT for an unknown name,
 * or KEVO_EINVAL for a NULL name.
 */
KEVO_API const char *kevo_eval_option_name(kevo_eval_option opt);
KEVO_API kevo_status kevo_eval_option_from_name(const char *name,
                                                kevo_eval_option *out);

/*
 * kevo_eval_option_bounds: the smallest, largest and default value of opt
 * in *lo, *hi and *def (each may be NULL). Returns KEVO_OK or KEVO_EINVAL
 * for an unknown option.
 * kevo_eval_option_live: true when opt may change after
 * kevo_evaluator_start(); false for the options fixed at start and for an
 * unknown option.
 */
KEVO_API kevo_status kevo_eval_option_bounds(kevo_eval_option opt, int64_t *lo,
                                             int64_t *hi, int64_t *def);
KEVO_API bool kevo_eval_option_live(kevo_eval_option opt);

/*
 * kevo_evaluator_new: an evaluator with default options in *out; no process
 * is started until kevo_evaluator_start(). Returns KEVO_OK or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_evaluator_new(kevo_evaluator **out, kevo_error *err);

/* kevo_evaluator_free: stops the worker processes (killing any still busy)
 * and frees the evaluator and the results it still holds. NULL is fine. */
KEVO_API void kevo_evaluator_free(kevo_evaluator *ev);

/*
 * kevo_evaluator_set_int: sets an integer option. Returns KEVO_OK,
 * KEVO_ERANGE for a value outside kevo_eval_option_bounds() (the message
 * names the option and gives the bounds: "option min_reps: 0 is below the
 * lowest allowed value 1 (allowed 1..100000)"), KEVO_EINVAL for an unknown
 * option, or KEVO_ESTATE for an option fixed at start after
 * kevo_evaluator_start().
 */
KEVO_API kevo_status kevo_evaluator_set_int(kevo_evaluator *ev,
                                            kevo_eval_option opt, int64_t value,
                                            kevo_error *err);

/* kevo_evaluator_get_int: the option's current value (its default when
 * never set), or -1 for an unknown option. */
KEVO_API int64_t kevo_evaluator_get_int(const kevo_evaluator *ev,
                                        kevo_eval_option opt);

/*
 * kevo_evaluator_set_string: sets a string option (copied; NULL restores
 * the default). Returns KEVO_OK, KEVO_EINVAL, KEVO_ESTATE after start, or
 * KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_evaluator_set_string(kevo_evaluator *ev,
                                               kevo_eval_string_option opt,
                                               const char *value,
                                               kevo_error *err);

/*
 * kevo_evaluator_start: starts the compile processes and, unless flags has
 * KEVO_EVAL_START_COMPILE_ONLY, a GPU worker per device (the one of
 * KEVO_EVAL_DEVICE, or those of KEVO_EVAL_DEVICES); waits for each worker
 * to report its device and then loads the device's ceilings from the
 * cache, measuring them (a second or two) when they are not there.
 * Returns KEVO_OK; KEVO_ENODEV where there is no CUDA driver or no such
 * device (the message says which); KEVO_EINVALID when the devices differ
 * in compute capability (the message names both); KEVO_ENOENT when the
 * worker program is missing; KEVO_EWORKER when a worker fails to start;
 * KEVO_ESTATE when already started.
 */
KEVO_API kevo_status kevo_evaluator_start(kevo_evaluator *ev, unsigned flags,
                                          kevo_error *err);

/*
 * kevo_evaluator_device: the started GPU's properties, as named in
 * expressions (sm_count, max_smem_per_block, ...), borrowed from the
 * evaluator; NULL before start or when started without a GPU.
 * kevo_evaluator_device_name: the device's name, borrowed, or NULL.
 * With several devices (KEVO_EVAL_DEVICES) these, and the ceilings below,
 * are those of the first.
 */
KEVO_API const kevo_vars *kevo_evaluator_device(const kevo_evaluator *ev);
KEVO_API const char *kevo_evaluator_device_name(const kevo_evaluator *ev);

/*
 * kevo_evaluator_bandwidth: the measured memory bandwidth in bytes (read
 * plus written) per second: the best of four streams of 16-byte words over
 * buffers far larger than the L2 cache (read-only, write-only, copy and
 * triad), timed as candidates are; kevo_evaluator_peak: the measured peak
 * of a kind of arithmetic in operations (an FMA counts two) per second; a
 * tensor-core peak is the best of the instruction families the device has
 * (mma.sync, and wgmma at compute capability 9.0). Both return 0 before
 * start or when started without a GPU. A tensor-core peak is measured the
 * first time it is asked for, here or by a task that needs it.
 */
KEVO_API double kevo_evaluator_bandwidth(const kevo_evaluator *ev);

/* kevo_evaluator_latency: the measured launch latency in seconds: the time
 * of an empty kernel, start to end, as candidates are timed. It is the
 * floor of shapes too small to fill the device. 0 before start or without
 * a GPU. */
KEVO_API double kevo_evaluator_latency(const kevo_evaluator *ev);
KEVO_API double kevo_evaluator_peak(kevo_evaluator *ev, kevo_peak peak);

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_evaluator_ceiling: the measured ceiling called name, measured now
 * when not known yet: "bandwidth", "launch" and the kevo_peak_name()s as
 * above, and the figures of the probes they are the best of:
 * "bandwidth_read", "bandwidth_write", "bandwidth_copy" and
 * "bandwidth_triad" (bytes per second), and "K_mma_sync" and "K_wgmma" for
 * K of "tf32", "fp16", "bf16" and "fp8" (operations per second). Returns 0
 * for an unknown name, a figure the device cannot have (wgmma below or
 * above compute capability 9.0), before start and without a GPU.
 */
KEVO_API double kevo_evaluator_ceiling(kevo_evaluator *ev, const char *name);

/*
 * kevo_evaluator_device_count: how many GPUs the evaluator evaluates on
 * (one worker each: see KEVO_EVAL_DEVICES); 0 before start and when
 * started without a GPU.
 */
KEVO_API size_t kevo_evaluator_device_count(const kevo_evaluator *ev);
#endif /* KEVO_EXPERIMENTAL */

/*
 * kevo_evaluator_submit: queues an evaluation of cand for task
 * (which must stay alive and unchanged until the result is collected) and
 * returns at once with its ticket in *ticket. flags: KEVO_EVAL_HELD_OUT,
 * KEVO_EVAL_NO_TIMING, KEVO_EVAL_COMPILE. A candidate that cannot run
 * (a launch that does not fit the device, a broken constraint, a forbidden
 * #include) is not an error here: its result has KEVO_VERDICT_REJECTED and
 * says why. Returns KEVO_OK; KEVO_ESTATE before start; KEVO_EINVAL for an
 * unknown flag; KEVO_ENOMEM. The evaluator keeps a reference to cand
 * (kevo_candidate_ref), and so does its result: the caller may free its
 * own, but cannot change the candidate while it is shared.
 */
KEVO_API kevo_status kevo_evaluator_submit(kevo_evaluator *ev,
                                           const kevo_task *task,
                                           const kevo_candidate *cand,
                                           unsigned flags, uint64_t *ticket,
                                           kevo_error *err);

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_evaluator_submit_group: queues one evaluation of the n candidates
 * in cands (each kept by reference) on the same shapes and inputs, with their
 * timing interleaved run by run (to the precision of the paired_* options), so
 * that their times compare in pairs: the way to rank kernels whose
 * fitness differs by less than the noise of separate timings. Each is
 * checked for correctness as kevo_evaluator_submit() would (a candidate
 * that fails at a shape drops out of the shapes after it; cands[0] failing
 * ends the evaluation for all, whose results then stop at that shape), and
 * gets its own result and ticket: tickets[i] for cands[i] (tickets may be
 * NULL). flags: KEVO_EVAL_HELD_OUT and KEVO_EVAL_PAIRED. Returns as
 * kevo_evaluator_submit(), and KEVO_EINVAL for n of 0 or a NULL candidate.
 */
KEVO_API kevo_status
kevo_evaluator_submit_group(kevo_evaluator *ev, const kevo_task *task,
                            const kevo_candidate *const *cands, size_t n,
                            unsigned flags, uint64_t *tickets, kevo_error *err);
#endif /* KEVO_EXPERIMENTAL */

/*
 * kevo_evaluator_wait: the next finished evaluation in *out (the caller
 * owns it: kevo_eval_result_free()), waiting at most timeout_ms
 * milliseconds (negative: no limit). Returns KEVO_OK; KEVO_ETIMEDOUT when
 * none finished in time (*out NULL); KEVO_DONE when nothing is pending. A
 * candidate that fails gets a result with a failure verdict, not an error;
 * errors are for the evaluator itself (a worker that cannot be restarted).
 */
KEVO_API kevo_status kevo_evaluator_wait(kevo_evaluator *ev, int timeout_ms,
                                         kevo_eval_result **out,
                                         kevo_error *err);

/* kevo_evaluator_pending: how many submitted evaluations are not yet
 * collected. */
KEVO_API size_t kevo_evaluator_pending(const kevo_evaluator *ev);

/*
 * kevo_evaluator_evaluate: submits one evaluation and waits for it; the
 * result in *out is the caller's. Results of other submissions that finish
 * meanwhile stay queued for kevo_evaluator_wait(). Returns as
 * kevo_evaluator_submit() and kevo_evaluator_wait().
 */
KEVO_API kevo_status kevo_evaluator_evaluate(
    kevo_evaluator *ev, const kevo_task *task, const kevo_candidate *cand,
    unsigned flags, kevo_eval_result **out, kevo_error *err);

/* ---- results ------------------------------------------------------------ */

/* What limits a shape's floor. */
typedef enum kevo_bound {
    KEVO_BOUND_MEMORY = 0,  /* bytes / bandwidth is the largest */
    KEVO_BOUND_COMPUTE = 1, /* flops / peak is the largest */
    KEVO_BOUND_LATENCY = 2  /* the launch latency is the largest: a shape
                               too small to fill the GPU */
} kevo_bound;

/*
 * One shape of a result, filled by kevo_eval_result_shape(). The caller
 * allocates it and sets size to sizeof(kevo_shape_result). Times are in
 * seconds; a value that was not measured is NaN (timing after a failure,
 * profiler metrics when profiling was off). Strings are borrowed from the
 * result.
 */
typedef struct kevo_shape_result {
    size_t size;
    kevo_shape_set set;
    size_t index;       /* the shape's index within its set */
    bool correct;       /* both input sets within the tolerance */
    double max_abs_err; /* over every output element of both runs */
    double max_rel_err;
    uint64_t bad_elements; /* outside the tolerance, NaN or unwritten */
    const char *worst_arg; /* the output with the worst element, or NULL */
    uint64_t worst_index;
    double worst_got, worst_want;
    double time; /* median repetition time */
    double time_min, time_max, time_cv;
    double time_spread;       /* the precision of the median: the half-width of
                                 its ~95% confidence interval over it,
                                 1.57 (p75 - p25) / sqrt(reps) / median */
    uint32_t reps;            /* timed repetitions */
    uint32_t kernels_per_rep; /* kernels the candidate launched per run */
    double bytes, flops;      /* the task's cost model at this shape */
    double floor; /* max(bytes / bandwidth, flops / peak, launch latency) */
    double efficiency; /* floor / time */
    kevo_bound bound;
    double gbytes_per_s, gflops_per_s;        /* cost model over time */
    double dram_read_bytes, dram_write_bytes; /* profiler */
    double achieved_occupancy;                /* profiler, 0 to 1 */
    double seed_time, reference_time;     /* the task's seed and reference */
    double seed_spread, reference_spread; /* the precision of those two
                                             medians, as time_spread; NaN
                                             when unknown */
    bool paired;       /* the seed's and the reference's times were measured
                          together with this candidate's, interleaved run by
                          run by the same worker and timer
                          (KEVO_EVAL_PAIRED) */
    bool l2_explained; /* an efficiency above 1 that the L2 cache explains:
                          the outputs fit in it, wholly or in part, so
                          written lines can stay there past the end of the
                          timed run and the DRAM moves fewer bytes than the
                          cost model counts */
    double worst_tol;  /* what the tolerance allows at the worst element
                          (every term of it: atol, rtol, rtol_amax, ulp),
                          as the worker computed it; NaN when unknown */
    unsigned char reserved[32];
} kevo_shape_result;

/* kevo_eval_result_free: frees a result. NULL is fine. */
KEVO_API void kevo_eval_result_free(kevo_eval_result *res);

/* kevo_eval_result_ticket: the ticket kevo_evaluator_submit() gave. */
KEVO_API uint64_t kevo_eval_result_ticket(const kevo_eval_result *res);

/* kevo_eval_result_candidate: the evaluated candidate, borrowed. */
KEVO_API const kevo_candidate *
kevo_eval_result_candidate(const kevo_eval_result *res);

/* kevo_eval_result_verdict: how the evaluation ended. */
KEVO_API kevo_verdict kevo_eval_result_verdict(const kevo_eval_result *res);

/* kevo_eval_result_reason: one line saying why the candidate failed (it
 * names the shape, the argument and the element where there is one),
 * borrowed; NULL when the verdict is KEVO_VERDICT_OK. */
KEVO_API const char *kevo_eval_result_reason(const kevo_eval_result *res);

/* kevo_eval_result_compile_log: NVRTC's log, borrowed ("" when empty). */
KEVO_API const char *kevo_eval_result_compile_log(const kevo_eval_result *res);

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_eval_result_diagnostic: what kevo tells an operator that is to
 * repair the candidate: the reason (kevo_eval_result_reason()) and, after a
 * compile error, the compiler's error lines (at most 20, each cut to 300
 * bytes), each with the indented lines NVRTC prints under it to show
 * where. A new string that the caller frees with free(); NULL when the
 * verdict is KEVO_VERDICT_OK, for a NULL res, or when out of memory.
 */
KEVO_API char *kevo_eval_result_diagnostic(const kevo_eval_result *res);
#endif /* KEVO_EXPERIMENTAL */

/* kevo_eval_result_fitness: the geometric mean of the shapes' efficiencies;
 * 0 when the verdict is not KEVO_VERDICT_OK or timing was off. */
KEVO_API double kevo_eval_result_fitness(const kevo_eval_result *res);

/* The baselines a result's speedups are measured against. */
typedef enum kevo_baseline {
    KEVO_BASELINE_SEED = 0,     /* the task's seed kernel */
    KEVO_BASELINE_REFERENCE = 1 /* the task's reference kernel */
} kevo_baseline;

/* kevo_eval_result_speedup: the geometric mean over the shapes of the
 * baseline's time over the candidate's; NaN when a time is missing (the
 * candidate failed or was not timed, or the baseline's time is not known
 * yet) or for an unknown baseline. */
KEVO_API double kevo_eval_result_speedup(const kevo_eval_result *res,
                                         kevo_baseline baseline);

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/* kevo_eval_result_suspicious: true when some shape's efficiency is above
 * the suspicious level (1.05 by default): the cost model or the
 * measurement deserves a look. */
KEVO_API bool kevo_eval_result_suspicious(const kevo_eval_result *res);
#endif /* KEVO_EXPERIMENTAL */

/* kevo_eval_result_shape_set: which shapes were evaluated. */
KEVO_API kevo_shape_set kevo_eval_result_shape_set(const kevo_eval_result *res);

/* kevo_eval_result_shape_count: how many shapes the result describes (the
 * shapes evaluated before a failure, and the failing one). */
KEVO_API size_t kevo_eval_result_shape_count(const kevo_eval_result *res);

/*
 * kevo_eval_result_shape: fills *out with shape i. Returns KEVO_OK,
 * KEVO_ERANGE for i past the last, or KEVO_EINVAL when out->size is too
 * small.
 */
KEVO_API kevo_status kevo_eval_result_shape(const kevo_eval_result *res,
                                            size_t i, kevo_shape_result *out);

/*
 * kevo_eval_result_descriptor: the behaviour descriptor called name
 * ("memory", "block_size", "warp_ops", "occupancy", "registers",
 * "shared_bytes", "spills", "dram_fraction") in *value. Returns KEVO_OK,
 * KEVO_ENOENT for an unknown name, or KEVO_ERANGE when this result has no
 * value for it (dram_fraction without profiling, anything after a compile
 * error).
 */
KEVO_API kevo_status kevo_eval_result_descriptor(const kevo_eval_result *res,
                                                 const char *name,
                                                 double *value);

/* The phases of an evaluation, for kevo_eval_result_seconds(). */
typedef enum kevo_eval_phase {
    KEVO_PHASE_COMPILE = 0,  /* NVRTC, or the cache lookup */
    KEVO_PHASE_TRANSFER = 1, /* setup, inputs and copies */
    KEVO_PHASE_RUN = 2,      /* reference and candidate runs, checks */
    KEVO_PHASE_TIME = 3,     /* warm-ups and timed repetitions */
    KEVO_PHASE_TOTAL = 4     /* submit to result */
} kevo_eval_phase;

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/* kevo_eval_result_seconds: wall time spent in a phase; NaN for an unknown
 * phase. */
KEVO_API double kevo_eval_result_seconds(const kevo_eval_result *res,
                                         kevo_eval_phase phase);

/* kevo_eval_result_cached: true when the compile came from the cache. */
KEVO_API bool kevo_eval_result_cached(const kevo_eval_result *res);

/*
 * kevo_eval_result_device: which device measured the result, as the
 * evaluator labels it ("device 1 (NVIDIA H100 80GB HBM3)"), borrowed;
 * NULL when the evaluation never reached a GPU (compiled only, or
 * rejected or failed before running). Its times compare only with times
 * of the same device.
 */
KEVO_API const char *kevo_eval_result_device(const kevo_eval_result *res);
#endif /* KEVO_EXPERIMENTAL */

/*
 * kevo_eval_result_to_json: the whole result as a JSON object (verdict,
 * reason, kernels, shapes with measurements and fitness, descriptors,
 * phases) in *json, NUL-terminated, to be freed with free(). Returns KEVO_OK
 * or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_eval_result_to_json(const kevo_eval_result *res,
                                              char **json, kevo_error *err);

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_gate_check: the held-out gate: is the candidate's win real at
 * shapes the search never saw? held_out is its evaluation on the held-out
 * shapes (KEVO_EVAL_HELD_OUT, best with KEVO_EVAL_PAIRED). It passes when,
 * on every held-out shape, the candidate is correct and not slower than
 * the baseline there by more than slack (0.1: 10%): the baseline is the
 * task's seed, or the reference where the seed's time is unknown (no seed,
 * or a seed that is wrong at that shape). A difference inside the measured
 * precision of both medians (time_spread, seed_spread, reference_spread),
 * or below floor seconds (the launch latency is the natural floor: a
 * shape that takes a microsecond has nothing to win), counts as equal. A
 * shape with no baseline time is judged on correctness alone. The seed
 * itself passes when it is correct: it is its own baseline. Returns true
 * when it passes; why (may be NULL) receives a line per held-out shape
 * naming it, both times and their ratio, such as "held-out n=3001: 41.2 us
 * vs seed 12.1 us, 0.29x, allowed 0.91x: slower", the failing shape first,
 * NUL-terminated and cut to why_size bytes. kevo_search_gate_check() applies
 * it with a search's gate_slack_ppm and gate_floor_ns.
 */
KEVO_API bool kevo_gate_check(const kevo_eval_result *held_out, double slack,
                              double floor, char *why, size_t why_size);

#endif /* KEVO_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif

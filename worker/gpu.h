/*
 * gpu.h: the GPU side of kevo-worker, shared by its files: the device and
 * its internal kernels (gpu.c), loaded programs and their launches at a
 * shape (gpu_launch.c), a shape's buffers, inputs and the reference cache
 * (inputs.c), comparisons (check.c), timing (timing.c), the range profiler
 * (profile.c) and the ceilings (peaks.c).
 *
 * Everything runs on the calling thread, on the legacy default stream of
 * the device's primary context. A CUDA error that spoils the context
 * (kevo__cu_sticky) is passed up unchanged in kevo_error (domain
 * KEVO_DOMAIN_CUDA, foreign the CUresult): gpu.c turns it into a "fault"
 * verdict and the worker exits.
 */
#ifndef KEVO_WORKER_GPU_H
#define KEVO_WORKER_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/kevo_private.h"
#include "cuda_api.h"
#include "model/candidate_private.h"
#include "model/launch_args.h"

/* The number of element types (kevo_dtype's values are 0 to 11). */
#define KEVO__NDTYPES 12

/* Threads per block of the internal kernels that reduce in a block. */
#define KEVO__CMP_BLOCK 256

/* The comparison of one output with the reference, as the compare kernels
 * write it (struct kv_cmp in kernels.cu.h: the same eleven fields). key is
 * the worst element's error over its tolerance (infinite for a NaN or an
 * error where the tolerance is zero); err its absolute error; got and want
 * its values (exact values of the output's type); tol the tolerance there.
 * amax is the largest finite |want| of the output when the tolerance has
 * an amax term (else 0). sum_abs adds every element's error (infinite
 * where one is). */
typedef struct kevo__cmp {
    double max_abs;
    double max_rel;
    double key;
    double err;
    double got;
    double want;
    uint64_t index;
    uint64_t bad;
    double tol;
    double amax;
    double sum_abs;
} kevo__cmp;

typedef struct kevo__refcache kevo__refcache;
typedef struct kevo__pool kevo__pool;
typedef struct kevo__profiler kevo__profiler;
typedef struct kevo__probes kevo__probes;

/* The device, its context and the worker's own kernels. */
typedef struct kevo__gpu {
    int index;
    int device_count; /* the driver's; -1 before it is known */
    CUdevice dev;
    CUcontext ctx;
    char name[256];
    char uuid[48];    /* "GPU-xxxxxxxx-xxxx-..." */
    int driver;       /* cuDriverGetVersion: 13000 */
    kevo_vars *props; /* the properties expressions may name */
    int64_t cc, sm_count, max_threads_per_sm, max_threads_per_block,
        max_smem_per_block, l2_bytes;
    size_t total_mem;

    CUmodule module; /* kernels.cu.h, compiled for the device */
    CUfunction fill[KEVO__NDTYPES], compare[KEVO__NDTYPES];
    CUfunction compare_reduce, equal, flush_l2;
    kevo__probes *probes; /* the ceilings' kernels; NULL until needed */

    CUdeviceptr partial;  /* compare partials, then one kevo__cmp */
    unsigned npartial;    /* blocks a compare launches at most */
    CUdeviceptr word;     /* 8 bytes: kevo_internal_equal's result */
    CUdeviceptr flush;    /* 2 x L2 bytes, zeroed, for the L2 flush */
    uint64_t flush_words; /* its size in 16-byte words */

    kevo__pool *pool;     /* buffers kept for reuse */
    kevo__refcache *refs; /* reference results */
    kevo__profiler *prof; /* NULL until the first profile */
    bool cupti;           /* the CUPTI activity API times kernels */
    char cupti_note[KEVO_ERROR_TEXT_SIZE]; /* why not, when it does not */
} kevo__gpu;

/* ---- device memory (inputs.c) ------------------------------------------ */

/*
 * kevo__gpu_alloc: bytes of device memory in *ptr, reusing a kept buffer of
 * that size when there is one. When the device is out of memory, kept
 * buffers and then reference results cached on the device are freed and
 * the allocation is tried again. Errors: KEVO_EEXTERNAL with the CUDA error
 * (CUDA_ERROR_OUT_OF_MEMORY when it still does not fit).
 */
kevo_status kevo__gpu_alloc(kevo__gpu *g, CUdeviceptr *ptr, size_t bytes,
                            kevo_error *err);

/* kevo__gpu_release: gives a buffer back (kept for reuse, up to a cap;
 * freed beyond it). 0 does nothing. */
void kevo__gpu_release(kevo__gpu *g, CUdeviceptr ptr, size_t bytes);

/* Frees every kept buffer. */
void kevo__pool_free(kevo__pool *pool);
kevo__pool *kevo__pool_new(size_t cap);

/* ---- one shape's data (inputs.c) --------------------------------------- */

/* A scalar argument's bytes. */
typedef union kevo__value {
    unsigned char bytes[8];
    CUdeviceptr ptr;
    int64_t i64;
    double f64;
} kevo__value;

typedef struct kevo__shape {
    const kevo_task *task;
    kevo_shape_set set;
    size_t index;
    char label[256]; /* "train shape 0 (n=16777216)" */
    kevo_vars *env;  /* the dims and the device properties */
    size_t nargs;
    kevo_arg_info *info;
    uint64_t *count;       /* buffers: elements */
    size_t *bytes;         /* buffers: bytes */
    CUdeviceptr *buf;      /* buffers: what the kernels see */
    CUdeviceptr *pristine; /* in and inout: the drawn values */
    CUdeviceptr *want;     /* out and inout: the reference's result */
    kevo__value *value;    /* scalars */
    /* Outputs judged by the baseline rule: the baseline's largest and mean
     * error on the current inputs (kevo__baseline_error). */
    double *base_max, *base_mean;
} kevo__shape;

/* True for the roles. */
bool kevo__is_input(const kevo_arg_info *a);  /* in, inout */
bool kevo__is_output(const kevo_arg_info *a); /* out, inout */

/*
 * kevo__shape_setup: shape i of set: the environment, every buffer's
 * count, and the device buffers (buf, pristine copies of inputs, want
 * copies of outputs). Errors: expression errors, a count that is not
 * positive (KEVO_ERANGE), device memory (KEVO_EEXTERNAL). On failure the
 * shape is left for kevo__shape_free.
 */
kevo_status kevo__shape_setup(kevo__gpu *g, const kevo_task *task,
                              kevo_shape_set set, size_t i, kevo__shape *s,
                              kevo_error *err);
void kevo__shape_free(kevo__gpu *g, kevo__shape *s);

/*
 * kevo__shape_draw: fresh inputs for seed on the device (the fill kernels,
 * keyed by the seed and the argument's index) into the pristine copies and
 * the buffers, and the random scalars (drawn the same way).
 */
kevo_status kevo__shape_draw(kevo__gpu *g, kevo__shape *s, uint64_t seed,
                             kevo_error *err);

/* kevo__shape_reset: out buffers poisoned, inout buffers restored from
 * their pristine copies. poison names one of two patterns, each chosen per
 * element type: 0xff, every byte 0xff (a NaN for f16, bf16, f32 and f64;
 * -1 or the largest value for integers); 0x7f, a large finite value: 0x7f
 * bytes (f32 3.39e38, f64 about 1.4e306, bf16 0x7f7f = 3.39e38, its
 * largest finite value) except for f16, whose 0x7f7f is a NaN: there
 * 0x7bff, 65504, the largest finite f16. Any other byte fills every byte. */
kevo_status kevo__shape_reset(kevo__gpu *g, kevo__shape *s,
                              unsigned char poison, kevo_error *err);

/* kevo__shape_keep_reference: the outputs in buf copied to want. */
kevo_status kevo__shape_keep_reference(kevo__gpu *g, kevo__shape *s,
                                       kevo_error *err);

/* ---- reference results (inputs.c) -------------------------------------- */

/* A cache of reference results, least recently used out first: up to
 * device_cap bytes on the device, and what does not fit there up to
 * host_cap bytes in host memory. */
kevo__refcache *kevo__refcache_new(size_t device_cap, size_t host_cap);
void kevo__refcache_free(kevo__refcache *c);

/* The cache's key of a shape and seed, in buf. */
const char *kevo__refcache_key(const char *task_key, const kevo__shape *s,
                               uint64_t seed, char *buf, size_t size);

/* kevo__refcache_get: on a hit, copies the cached outputs into s->want
 * (and the baseline's errors into s->base_max and s->base_mean) and sets
 * *hit. */
kevo_status kevo__refcache_get(kevo__gpu *g, const char *key, kevo__shape *s,
                               bool *hit, kevo_error *err);

/* kevo__refcache_put: stores s->want and the baseline's errors under key
 * (when they fit a cap). */
kevo_status kevo__refcache_put(kevo__gpu *g, const char *key,
                               const kevo__shape *s, kevo_error *err);

/* Frees device entries, least recently used first, until at least need
 * bytes were freed (or none is left); returns the bytes freed. */
size_t kevo__refcache_evict_device(kevo__refcache *c, size_t need);

/* ---- programs and launches (gpu_launch.c) ------------------------------ */

/* A candidate's (or the reference's) loaded cubin. */
typedef struct kevo__program {
    const kevo_candidate *cand;
    CUmodule module;
    size_t nlaunches;
    CUfunction *fn; /* per launch */
    int *smem_set;  /* per launch: the dynamic shared memory allowed so far */
} kevo__program;

/*
 * kevo__program_load: loads image (a cubin) and finds each launch's kernel:
 * by its lowered name when lowered has one (a JSON object from the launch
 * block's kernel names to lowered names, or an array in launch order; may
 * be NULL), else by the name in the launch block, else by the one mangled
 * C++ function of that name. Errors: KEVO_EEXTERNAL (the CUDA error of the
 * load), KEVO_ENOENT naming a kernel that is not there.
 */
kevo_status kevo__program_load(kevo__gpu *g, const kevo_candidate *cand,
                               const void *image, size_t size,
                               const json_t *lowered, kevo__program *p,
                               kevo_error *err);
void kevo__program_unload(kevo__program *p);

/* A program's launches at one shape: geometry, kernel parameters, scratch
 * buffers. Scalar parameters point at the shape's values, so a plan stays
 * valid when kevo__shape_draw draws new ones; the shape must outlive it. */
typedef struct kevo__plan {
    const kevo__program *prog;
    const kevo__shape *shape;
    kevo_launch_geometry *geom; /* per launch; geom[l].runs 0 where the
                                 * launch's "if" is 0 at the shape */
    kevo__value **store;        /* per launch: argument values */
    void ***params;             /* per launch: pointers into store */
    bool *cluster_attr; /* per launch: launched with the cluster attribute */
    int *cluster_occ;   /* per launch: cuOccupancyMaxActiveClusters; -1 */
    size_t nscratch;
    CUdeviceptr *scratch;
    size_t *scratch_bytes;
    /* Tensor maps (tmap.c), per tensormap line: the encoded map (64-byte
     * aligned), its arguments at the shape, whether a launch that runs
     * names it, and the address it was encoded with (0 until then). */
    size_t nmaps;
    CUtensorMap *maps;
    kevo__tmap_args *margs;
    bool *map_used;
    CUdeviceptr *map_addr;
} kevo__plan;

/*
 * kevo__plan_make: evaluates every launch of p at shape s. Returns KEVO_OK;
 * KEVO_EINVALID for a launch the device cannot take (more dynamic shared
 * memory or threads per block than it has: the message names the kernel
 * and both numbers); expression errors and KEVO_ERANGE (geometry out of the
 * CUDA limits, a scratch count that is not positive); KEVO_EEXTERNAL for a
 * scratch allocation.
 */
kevo_status kevo__plan_make(kevo__gpu *g, const kevo__program *p,
                            const kevo__shape *s, kevo__plan *plan,
                            kevo_error *err);
void kevo__plan_free(kevo__gpu *g, kevo__plan *plan);

/* kevo__plan_scratch: scratch declared zero zeroed, the rest filled with
 * the poison byte. */
kevo_status kevo__plan_scratch(const kevo__plan *plan, unsigned char poison,
                               kevo_error *err);

/* kevo__plan_zero_scratch: only the scratch declared zero, zeroed (before
 * each timed repetition). */
kevo_status kevo__plan_zero_scratch(const kevo__plan *plan, kevo_error *err);

/* kevo__plan_prepare: what comes before a timed or profiled run: the zero
 * scratch zeroed and, with flush, the L2 flushed (kevo_internal_flush_l2
 * reads twice the L2's size). */
kevo_status kevo__plan_prepare(kevo__gpu *g, const kevo__plan *plan, bool flush,
                               kevo_error *err);

/* kevo__plan_launch: every launch that runs at the plan's shape, in order
 * on the default stream, without waiting: with cuLaunchKernelEx where it
 * has a cluster or is pdl (not the first that runs), else cuLaunchKernel.
 * Tensor maps whose buffer moved are encoded again first. The CUDA error
 * of a launch the driver refuses, naming the kernel. */
kevo_status kevo__plan_launch(const kevo__plan *plan, kevo_error *err);

/* kevo__plan_runs: how many of the plan's launches run at its shape. */
size_t kevo__plan_runs(const kevo__plan *plan);

/* kevo__gpu_sync: cuCtxSynchronize, its error naming what. */
kevo_status kevo__gpu_sync(const char *what, kevo_error *err);

/* ---- tensor maps (tmap.c) ---------------------------------------------- */

/* kevo__plan_maps_alloc: the plan's tensor map arrays, for nmaps maps. */
kevo_status kevo__plan_maps_alloc(kevo__plan *plan, size_t nmaps,
                                  kevo_error *err);
void kevo__plan_maps_free(kevo__plan *plan);

/* kevo__plan_maps_encode: every used map whose address (its buffer's plus
 * its offset) differs from the one it was encoded with encoded with
 * cuTensorMapEncodeTiled from plan->margs. Errors: KEVO_EEXTERNAL with the
 * CUDA error, naming the map and its line; KEVO_EINVALID when the driver
 * has no cuTensorMapEncodeTiled. */
kevo_status kevo__plan_maps_encode(const kevo__plan *plan, kevo_error *err);

/* kevo__tmap_encode: cuTensorMapEncodeTiled of a at address into *map. */
CUresult kevo__tmap_encode(CUtensorMap *map, const kevo__tmap_args *a,
                           CUdeviceptr address);

/* kevo__program_kernels: per launch {"name", "registers", "local_bytes",
 * "static_smem", "max_threads", "block", "dyn_smem", "occupancy"} at the
 * plan's geometry; NULL on no memory (or a CUDA error, in err). */
json_t *kevo__program_kernels(kevo__gpu *g, const kevo__plan *plan,
                              kevo_error *err);

/* Launches an internal kernel on the default stream (grid x, block x). */
kevo_status kevo__gpu_launch(CUfunction f, unsigned grid, unsigned block,
                             void **params, const char *what, kevo_error *err);

/* Blocks for a grid-stride internal kernel over n items: enough to fill
 * the device, at most what n needs. */
unsigned kevo__gpu_blocks(const kevo__gpu *g, uint64_t n, unsigned block);

/* ---- comparisons (check.c) --------------------------------------------- */

/* The mean error of an output under the baseline rule and what the rule
 * allows it: factor * the baseline's mean error + atol. */
typedef struct kevo__mean_check {
    bool applies; /* the output is judged by the baseline rule */
    bool bad;     /* err > bound */
    double err, bound;
} kevo__mean_check;

/* kevo__check_output: compares output argument a (buf against want) with
 * its tolerance on the device: first, when the tolerance has an amax term,
 * a pass that finds the largest finite |want| (its rtol_amax multiple then
 * joins atol), then the element-wise comparison. Under the baseline rule
 * every element's bound is factor * s->base_max[a] + atol, and *mean gets
 * the mean error and its bound (mean may be NULL). */
kevo_status kevo__check_output(kevo__gpu *g, const kevo__shape *s, size_t a,
                               kevo__cmp *out, kevo__mean_check *mean,
                               kevo_error *err);

/* kevo__baseline_error: the largest and the mean |buf - want| of output a
 * (the baseline's result in buf), each infinite where an element is NaN,
 * infinite or unwritten where the reference's is not. */
kevo_status kevo__baseline_error(kevo__gpu *g, const kevo__shape *s, size_t a,
                                 double *max, double *mean, kevo_error *err);

/* kevo__check_inputs: compares each in buffer with its pristine copy,
 * bit for bit; on the first that differs sets *changed, its argument index
 * in *arg and the element index of the first difference in *index. */
kevo_status kevo__check_inputs(kevo__gpu *g, const kevo__shape *s,
                               bool *changed, size_t *arg, uint64_t *index,
                               kevo_error *err);

/* A number for messages: "NaN", "inf", "-inf" or %.9g, in buf. */
const char *kevo__number_text(double x, char *buf, size_t size);

/* An element's value x (a value of type) for messages: as
 * kevo__number_text for f32, f64 and the integers; for f16 and bf16 the
 * value in the digits that tell it from its neighbours (5 and 4
 * significant digits) and its bits, such as "0.1235 (bf16 0x3dfd)"; NaN
 * and infinities as words. */
const char *kevo__value_text(kevo_dtype type, double x, char *buf, size_t size);

/* The tolerance of output in (c: its comparison) for messages:
 * "tolerance ATOL + RTOL * |want|", then, for the terms that are not 0,
 * " + M * amax (amax A)" and " + U ulp (ulp(want) in TYPE: Q)", and then
 * " = T" (the tolerance at the worst element) when either is there. Under
 * the baseline rule (base_max: the baseline's largest error): "tolerance
 * F * the baseline's largest error B + ATOL = T". */
const char *kevo__tolerance_text(const kevo_arg_info *in, const kevo__cmp *c,
                                 double base_max, char *buf, size_t size);

/* A JSON number, or null for NaN and infinities. */
json_t *kevo__json_number_or_null(double x);

/* ---- timing (timing.c) ------------------------------------------------- */

typedef struct kevo__timing_config {
    bool enabled;
    bool flush_l2;
    int warmup;
    int min_reps;
    int max_reps;
    double target_spread; /* (p75 - p25) / median */
    double cap_ms;        /* time spent repeating, at most */
} kevo__timing_config;

typedef struct kevo__times {
    double median, min, max, mean, cv, spread; /* seconds; ratios */
    size_t reps;
    size_t kernels_per_rep;
    double *samples;   /* reps values, seconds (owned) */
    const char *timer; /* "cupti" or "events": what timed every sample */
} kevo__times;

/* What a kernel that CUPTI recorded is, by its name. */
typedef enum kevo__krec_kind {
    KEVO__KREC_CANDIDATE,      /* any name but kevo_internal_* */
    KEVO__KREC_INTERNAL_FLUSH, /* kevo_internal_flush_l2 */
    KEVO__KREC_INTERNAL_OTHER, /* the worker's other kernels */
} kevo__krec_kind;

/* One kernel that CUPTI recorded. */
typedef struct kevo__krec {
    uint64_t start, end; /* ns, CUPTI's clock */
    kevo__krec_kind kind;
} kevo__krec;

/*
 * kevo__split_reps: splits the kernels of a batch of repetitions, each
 * begun by an L2 flush, into reps repetitions by the flush records. recs
 * (n of them) is sorted by start, a flush before any other record of the
 * same start. Repetition r holds the candidate kernels that start at or
 * after the start of the r-th flush record and before the start of the
 * next: a kernel still running when the next flush starts, or one that
 * starts while a flush runs on another stream, counts in the repetition
 * whose flush started last before it. Internal records, candidates before
 * the first flush and candidates after a flush beyond the reps-th are left
 * out. For each r < reps, the first start, the last end and the number of
 * its kernels go into first[r], last[r] and count[r] (0, 0, 0 for none).
 * Returns the number of flush records: the split holds only when it is
 * reps (one missing shifts every later repetition).
 */
size_t kevo__split_reps(const kevo__krec *recs, size_t n, size_t reps,
                        uint64_t *first, uint64_t *last, size_t *count);

/* kevo__timing_init: loads CUPTI and starts recording kernel activity
 * (sets g->cupti, or g->cupti_note saying why events are used). The
 * environment variable KEVO_WORKER_TIMER=events makes the worker time with
 * CUDA events alone (to compare the two timers). */
void kevo__timing_init(kevo__gpu *g);

/* kevo__timing_activity: stops (and flushes) or restarts CUPTI's kernel
 * records, around the range profiler. Does nothing without CUPTI. */
kevo_status kevo__timing_activity(kevo__gpu *g, bool on, kevo_error *err);

/*
 * kevo__time_plan: times plan's launches: warm-ups, then repetitions, each
 * after the zero scratch is zeroed and (with flush_l2) the L2 flushed,
 * until the spread is at most target_spread after min_reps, or max_reps, or
 * cap_ms. A repetition's time is first start to last end of the kernels
 * other than kevo_internal_* that CUPTI recorded in it (or, without CUPTI
 * or when a repetition's records are missing, CUDA events around the
 * launches of every repetition). With flush_l2, repetitions are enqueued
 * in batches (min_reps first, then 10, fewer near cap_ms) with one host
 * wait per batch, and kevo__split_reps assigns the kernels to them; without
 * it, the worker waits after each repetition. The stopping rule is looked
 * at after each batch. out->samples is the caller's to free.
 */
kevo_status kevo__time_plan(kevo__gpu *g, const kevo__plan *plan,
                            const kevo__timing_config *cfg, kevo__times *out,
                            kevo_error *err);

/*
 * kevo__time_plans: times n plans together, interleaved run by run: every
 * round runs each plan once, in order, so that the plans share the
 * device's state (clocks, temperature, neighbours) and their times can be
 * compared in pairs. Warm-ups, batches and the timers are as for
 * kevo__time_plan, with cap_ms per plan; timing stops once every plan's
 * spread is at most target_spread (after min_reps rounds), or after
 * max_reps rounds, or at n times the cap. out[0..n) gets each plan's
 * times; their samples are the caller's to free.
 */
kevo_status kevo__time_plans(kevo__gpu *g, const kevo__plan *const *plans,
                             size_t n, const kevo__timing_config *cfg,
                             kevo__times *out, kevo_error *err);

/* kevo__times_stats: median, min, max, mean, cv (stddev / mean) and spread
 * (1.57 (p75 - p25) / sqrt(n) / median: the relative half-width of the
 * median's ~95% confidence interval; percentiles by linear interpolation) of
 * samples[0..n) into out (samples is reordered). */
void kevo__times_stats(double *samples, size_t n, kevo__times *out);

/* ---- the range profiler (profile.c) ------------------------------------ */

/* DRAM bytes read and written and achieved occupancy (0 to 1) of one run
 * of plan's launches. A CUPTI failure (no permission to read counters:
 * CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) comes back with domain
 * KEVO_DOMAIN_CUPTI and is reported, not fatal; a CUDA error is the
 * candidate's. */
kevo_status kevo__profile_plan(kevo__gpu *g, const kevo__plan *plan,
                               bool flush_l2, double *dram_read,
                               double *dram_write, double *occupancy,
                               kevo_error *err);
void kevo__profiler_free(kevo__profiler *p);

/* ---- the worker's CUDA sources (gpu.c) --------------------------------- */

/* kevo__gpu_compile: compiles source (name for messages) with NVRTC for
 * arch ("sm_90", "sm_90a", or "compute_90" for PTX) into *image, a new
 * cubin or PTX text. Errors: KEVO_EEXTERNAL (domain NVRTC) with the log. */
kevo_status kevo__gpu_compile(const char *source, const char *name,
                              const char *arch, char **image, kevo_error *err);

/* kevo__gpu_build: source compiled to a cubin for the device or, where
 * NVRTC does not know the device's architecture, to PTX for the newest one
 * it knows that the device runs. */
kevo_status kevo__gpu_build(const kevo__gpu *g, const char *source,
                            const char *name, char **image, kevo_error *err);

/* ---- ceilings (peaks.c) ------------------------------------------------ */

/*
 * kevo__peaks_measure: for each name of which, the measured ceilings in
 * *peaks, by name: "bandwidth" (bytes read + written per second; also
 * "bandwidth_read", "_write", "_copy" and "_triad", the probes it is the
 * best of, measured with it whichever of the five is asked for), "launch"
 * (seconds), "fp32", "fp64", and for the tensor-core kinds K of "tf32",
 * "fp16", "bf16" and "fp8": K (the best of K_mma_sync and K_wgmma, both
 * measured where the device has them), "K_mma_sync" or "K_wgmma" alone
 * (operations per second). Each is the best of several runs (the highest
 * throughput, the lowest latency), and *spreads gets each figure's spread
 * over them, (highest - lowest) / highest; a large one is said on stderr.
 * What cannot be measured on this device goes to *errors, by name, with
 * the reason. The three new objects are the caller's.
 */
kevo_status kevo__peaks_measure(kevo__gpu *g, const json_t *which,
                                json_t **peaks, json_t **errors,
                                json_t **spreads, kevo_error *err);

/* kevo__probes_free: unloads the probe kernels (before the context goes). */
void kevo__probes_free(kevo__probes *p);

/* ---- seconds ------------------------------------------------------------ */

double kevo__seconds_now(void);

#endif

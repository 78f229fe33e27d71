/*
 * evaluator_private.h: what the evaluator's files share. evaluator.c
 * holds the object, its tasks and the public calls; eval_options.c its
 * options (the table is proc/eval_options.c); evaluator_devices.c its
 * devices: the `devices` option, one slot per device (its GPU worker, its
 * properties and its ceilings) and the measuring of ceilings;
 * evaluator_pipeline.c moves jobs through the compile pool and the GPU
 * workers: the checks before compiling, the eval message (with the group
 * members and the seed timed beside a candidate) and the dispatch to a
 * free slot; evaluator_replies.c reads the workers' replies and makes the
 * results.
 */
#ifndef KEVO_EVALUATOR_PRIVATE_H
#define KEVO_EVALUATOR_PRIVATE_H

#include <kevo/eval.h>

#include "ceilings.h"
#include "compile_pool.h"
#include "eval_private.h"
#include "gpu_client.h"
#include "model/devprops.h"
#include "model/task_private.h"
#include "proc/eval_options.h"

#define KEVO__EV_NSTRS (KEVO_EVAL_DEVICES + 1)
#define KEVO__EV_NSETS 2

/* The most devices one evaluator drives. */
#define KEVO__EV_DEVICES_MAX 64

/* A task's baselines on one device: times are only ever compared between
 * measurements of the same device, so each slot keeps its own. */
typedef struct taskbase {
    bool ref_timed[KEVO__EV_NSETS];     /* reference times were asked for */
    double *ref_times[KEVO__EV_NSETS];  /* per shape, NaN where unknown */
    double *seed_times[KEVO__EV_NSETS]; /* per shape, NaN where unknown */
    bool seed_queued[KEVO__EV_NSETS];
    bool seed_done[KEVO__EV_NSETS]; /* the seed's evaluation of the set ended */
} taskbase;

/* The task's own kernels, compiled once for all its evaluations and sent
 * with each: the reference, and the baseline where the task has one. */
enum { KEVO__EV_REFERENCE = 0, KEVO__EV_BASELINE = 1, KEVO__EV_TASK_KERNELS };

typedef struct taskkernel {
    uint64_t job;             /* its compile job, 0 once done */
    kevo__compile_result *cr; /* compiled; NULL before or without */
    char *error;              /* why it did not compile */
} taskkernel;

/* The per-task record: what every evaluation of the task shares. The
 * task's JSON is made once per version of the task, and reaches each GPU
 * worker process once (a "task" message); eval messages name it by key. */
typedef struct taskrec {
    const kevo_task *task;
    kevo__task_version version; /* of the task when last submitted */
    uint64_t key;               /* hash of the task's JSON */
    char key_text[17];          /* key in hex, as the messages carry it */
    json_t *json;               /* the task as the worker receives it */
    taskkernel kernels[KEVO__EV_TASK_KERNELS];
    uint64_t seeds[KEVO__EV_NSETS][KEVO__EVAL_INPUT_SEEDS_MAX];
    taskbase *base; /* one per slot (one without a GPU) */
    size_t nbase;
    unsigned char *seed_cubin; /* the seed compiled, for paired timing */
    size_t seed_cubin_len;
    json_t *seed_kernels; /* its kernels' lowered names */
    struct taskrec *next;
} taskrec;

typedef struct job job;

/* Candidates evaluated together (kevo_evaluator_submit_group()): their
 * jobs, in submission order. */
typedef struct group {
    job **member;
    size_t n;
    size_t refs; /* jobs that still point here */
} group;

typedef enum job_state {
    JOB_COMPILING = 0, /* waiting for the compile pool */
    JOB_READY = 1,     /* compiled, waiting for the GPU */
    JOB_RUNNING = 2,   /* on the GPU */
    JOB_DONE = 3       /* result made */
} job_state;

struct job {
    uint64_t ticket;
    taskrec *tr;
    kevo_candidate *cand;
    unsigned flags;
    bool hidden; /* a seed evaluation for the baselines */
    int slot;    /* the slot it must run on; -1: any */
    int on;      /* the slot it was sent to; -1: none (yet) */
    job_state state;
    uint64_t compile_id;
    kevo__compile_result *compiled;
    int64_t submitted_ms;
    kevo_eval_result *result;
    group *grp; /* NULL for a job on its own */
    /* Once running: the group's other members sent with it, in the
     * message's order, and whether the seed went last, for the pairing. */
    job **sent;
    size_t nsent;
    bool seed_sent;
    bool timed_ref; /* its dispatch set the slot's ref_timed */
    bool resent;    /* sent again after the worker lost its task */
    struct job *next;
};

/* One device: its GPU worker, what the worker's hello said of it, its
 * ceilings, and the job on it. */
typedef struct evslot {
    int ordinal; /* the CUDA device number */
    kevo__gpu_client *gpu;
    kevo_vars *device; /* properties, under the names expressions use */
    char *name;        /* "NVIDIA H100 80GB HBM3" */
    char *label;       /* "device 1 (NVIDIA H100 80GB HBM3)" */
    kevo__ceilings ceilings;
    job *running;
} evslot;

struct kevo_evaluator {
    int64_t opt[KEVO__EVAL_OPTION_COUNT];
    char *str[KEVO__EV_NSTRS];
    bool started, compile_only;
    kevo__compile_pool *pool;
    evslot *slots; /* one per device; none when compile-only */
    size_t nslots;
    kevo_vars *device;          /* the first device's properties (or the nominal
                                   ones without a GPU): what launches are checked
                                   against before compiling */
    char arch[KEVO__ARCH_SIZE]; /* the compile target (sm_90a) */
    kevo_rng *rng;
    taskrec *tasks;
    job *jobs, *jobs_tail; /* in submission order */
    uint64_t finished;     /* jobs finished so far */
    uint64_t next_ticket;
};

/* ---- evaluator.c -------------------------------------------------------- */

/* n NaNs in a new array; NULL when out of memory. */
double *kevo__ev_nan_array(size_t n);

/* Submits cand to the compile pool with its assignment as -D macros and
 * its kernels' names to lower; the job's id in *id. */
kevo_status kevo__ev_submit_compile(kevo_evaluator *ev,
                                    const kevo_candidate *cand,
                                    const char *name, uint64_t *id,
                                    kevo_error *err);

/* ---- evaluator_devices.c ------------------------------------------------ */

/*
 * Reads the devices option's text: "all" (*all), or a list of up to
 * KEVO__EV_DEVICES_MAX distinct device numbers such as "0,2,3" (in
 * list[0 .. *n)); NULL or "" gives *n of 0 and no *all. list may be NULL
 * (a check only). Returns KEVO_OK, or KEVO_EINVALID / KEVO_ELIMIT naming
 * the option and the value.
 */
kevo_status kevo__ev_devices_parse(const char *text, bool *all, int *list,
                                   size_t *n, kevo_error *err);

/* Starts one GPU worker per device of the devices option (or of the
 * device option when it is unset), reads each device, checks that they
 * compile to one arch, and loads and measures their ceilings. On an error
 * the slots started are stopped again. */
kevo_status kevo__ev_slots_start(kevo_evaluator *ev, const char *worker,
                                 kevo_error *err);

/* Stops the workers and frees the slots. */
void kevo__ev_slots_free(kevo_evaluator *ev);

/* The ceiling called which, measured now on every slot that lacks it
 * (all), or on the first slot only. Jobs on the slots to measure finish
 * first; the slots measure at the same time. */
kevo_status kevo__ev_ensure_ceiling(kevo_evaluator *ev, const char *which,
                                    bool all, kevo_error *err);

/* ---- evaluator_pipeline.c ----------------------------------------------- */

/* A job for cand (shared) on tr's shapes, appended to the queue, to run on
 * slot (-1: any): rejected at once when it cannot run on the device, else
 * sent to the compile pool. NULL on an error (in err). */
job *kevo__ev_job_add(kevo_evaluator *ev, taskrec *tr,
                      const kevo_candidate *cand, unsigned flags, bool hidden,
                      int slot, kevo_error *err);
void kevo__ev_job_free(job *j);

/* One round: collects compiles, dispatches to the free slots, reads the
 * busy ones, waiting up to timeout_ms for something to happen. */
kevo_status kevo__ev_pump(kevo_evaluator *ev, int timeout_ms, kevo_error *err);

/* Removes and returns the oldest finished visible job's result, dropping
 * finished hidden jobs on the way; NULL when there is none. */
kevo_eval_result *kevo__ev_take_finished(kevo_evaluator *ev);

/* kevo_shape_set of j's flags. */
kevo_shape_set kevo__ev_job_set(const job *j);

/* True when j evaluates the task's seed. */
bool kevo__ev_is_seed_job(const job *j);

/* The slot whose baselines j's times count for: the one it ran on, else
 * the one it was pinned to, else the only one; -1 when none. */
int kevo__ev_base_slot(const kevo_evaluator *ev, const job *j);

/* Finishes j with res (taken), labelled with the device it ran on. Seed
 * jobs leave their times in the task record. */
void kevo__ev_job_finish(kevo_evaluator *ev, job *j, kevo_eval_result *res);

/* A result that says the candidate failed (decided by the evaluator). */
kevo_status kevo__ev_finish_failure(kevo_evaluator *ev, job *j,
                                    kevo_verdict verdict, const char *reason,
                                    kevo_error *err);

/* The failure of the evaluation j was sent in: j and the members of its
 * group that went with it get it. */
kevo_status kevo__ev_finish_sent(kevo_evaluator *ev, job *j,
                                 kevo_verdict verdict, const char *reason,
                                 kevo_error *err);

/* How the measurements of slot (-1: before any GPU) become figures. */
typedef struct kevo__ev_figures {
    kevo_ceilings ceilings;
    kevo_eval_context ctx;
} kevo__ev_figures;
void kevo__ev_figures_of(const kevo_evaluator *ev, int slot,
                         kevo__ev_figures *f);

/* What the compile pool said, as the result wants it (NULL for NULL). */
const kevo_compile_info *kevo__ev_compile_info(const kevo__compile_result *cr,
                                               kevo_compile_info *ci);

/* ---- evaluator_replies.c ------------------------------------------------ */

/* Reads the reply of slot's worker to its running job, waiting at most
 * timeout_ms, and finishes the job (and the members sent with it). */
kevo_status kevo__ev_gpu_step(kevo_evaluator *ev, size_t slot, int timeout_ms,
                              kevo_error *err);

#endif

/*
 * evaluator_private.h: what the evaluator's files share. evaluator.c
 * holds the object, its tasks and the public calls; eval_options.c its
 * options (the table is proc/eval_options.c);
 * evaluator_pipeline.c moves jobs through the compile pool and the GPU
 * worker: the checks before compiling, the eval message (with the group
 * members and the seed timed beside a candidate), the worker's replies and
 * the results made of them.
 */
#ifndef KEVO_EVALUATOR_PRIVATE_H
#define KEVO_EVALUATOR_PRIVATE_H

#include <kevo/eval.h>

#include "ceilings.h"
#include "compile_pool.h"
#include "eval_private.h"
#include "gpu_client.h"
#include "model/task_private.h"
#include "proc/eval_options.h"

#define KEVO__EV_NSTRS (KEVO_EVAL_FITNESS + 1)
#define KEVO__EV_NSETS 2

/* The per-task record: what every evaluation of the task shares. The
 * task's JSON is made once per version of the task, and reaches each GPU
 * worker process once (a "task" message); eval messages name it by key. */
typedef struct taskrec {
    const kevo_task *task;
    kevo__task_version version; /* of the task when last submitted */
    uint64_t key;               /* hash of the task's JSON */
    char key_text[17];          /* key in hex, as the messages carry it */
    json_t *json;               /* the task as the worker receives it */
    uint64_t ref_job;           /* the reference's compile job, 0 once done */
    kevo__compile_result *ref;  /* the compiled reference */
    char *ref_error;            /* why the reference did not compile */
    uint64_t seeds[KEVO__EV_NSETS][KEVO__EVAL_INPUT_SEEDS_MAX];
    bool ref_timed[KEVO__EV_NSETS];     /* reference times were asked for */
    double *ref_times[KEVO__EV_NSETS];  /* per shape, NaN where unknown */
    double *seed_times[KEVO__EV_NSETS]; /* per shape, NaN where unknown */
    bool seed_queued[KEVO__EV_NSETS];
    bool seed_done[KEVO__EV_NSETS]; /* the seed's evaluation of the set ended */
    unsigned char *seed_cubin;      /* the seed compiled, for paired timing */
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
    bool timed_ref; /* its dispatch set tr->ref_timed */
    bool resent;    /* sent again after the worker lost its task */
    struct job *next;
};

struct kevo_evaluator {
    int64_t opt[KEVO__EVAL_OPTION_COUNT];
    char *str[KEVO__EV_NSTRS];
    bool started, compile_only;
    kevo__compile_pool *pool;
    kevo__gpu_client *gpu;
    kevo_vars *device;
    char *device_name;
    char arch[16];
    kevo__ceilings ceilings;
    kevo_rng *rng;
    taskrec *tasks;
    job *jobs, *jobs_tail; /* in submission order */
    job *running;          /* on the GPU */
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

/* ---- evaluator_pipeline.c ----------------------------------------------- */

/* A job for cand (copied) on tr's shapes, appended to the queue: rejected
 * at once when it cannot run on the device, else sent to the compile pool.
 * NULL on an error (in err). */
job *kevo__ev_job_add(kevo_evaluator *ev, taskrec *tr,
                      const kevo_candidate *cand, unsigned flags, bool hidden,
                      kevo_error *err);
void kevo__ev_job_free(job *j);

/* Reads the GPU worker's reply to the running job, waiting at most
 * timeout_ms, and finishes the job (and the members sent with it). */
kevo_status kevo__ev_gpu_step(kevo_evaluator *ev, int timeout_ms,
                              kevo_error *err);

/* One round: collects compiles, dispatches to the GPU, reads the GPU,
 * waiting up to timeout_ms for something to happen. */
kevo_status kevo__ev_pump(kevo_evaluator *ev, int timeout_ms, kevo_error *err);

/* Removes and returns the oldest finished visible job's result, dropping
 * finished hidden jobs on the way; NULL when there is none. */
kevo_eval_result *kevo__ev_take_finished(kevo_evaluator *ev);

#endif

/*
 * evaluator.c: kevo_evaluator, the core's side of evaluation: the start of
 * its processes (the compile pool and a GPU worker per device, whose slots
 * evaluator_devices.c keeps), the per-task records that every result is
 * compared with (the input sets, and per device the seed's times and the
 * reference's times), and the public calls that submit, wait and
 * evaluate. evaluator_pipeline.c moves the jobs through the compile pool
 * and the GPU workers.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evaluator_private.h"
#include "model/candidate_private.h"
#include "model/devprops.h"

/* ---- new -------------------------------------------------------------- */

kevo_status kevo_evaluator_new(kevo_evaluator **out, kevo_error *err)
{
    *out = NULL;
    kevo_evaluator *ev = calloc(1, sizeof *ev);
    if (!ev)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo__option_defaults(&kevo__eval_options, ev->opt);
    ev->next_ticket = 1;
    *out = ev;
    return KEVO_OK;
}

/* ---- start -------------------------------------------------------------- */

kevo_status kevo_evaluator_start(kevo_evaluator *ev, unsigned flags,
                                 kevo_error *err)
{
    if (ev->started)
        return kevo__error_set(err, KEVO_ESTATE, "the evaluator has started");
    if (flags & ~KEVO_EVAL_START_COMPILE_ONLY)
        return kevo__error_set(err, KEVO_EINVAL, "unknown flags 0x%x", flags);
    const char *worker = ev->str[KEVO_EVAL_WORKER_PATH]
                             ? ev->str[KEVO_EVAL_WORKER_PATH]
                             : kevo__worker_path();
    kevo_status rc = KEVO_OK;
    if (!(ev->rng = kevo_rng_new((uint64_t)ev->opt[KEVO_EVAL_SEED], "inputs")))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    ev->compile_only = flags & KEVO_EVAL_START_COMPILE_ONLY;
    if (!ev->compile_only) {
        if ((rc = kevo__ev_slots_start(ev, worker, err)) != KEVO_OK)
            goto fail;
    } else {
        if (!(ev->device = kevo_vars_new())) {
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            goto fail;
        }
        if ((rc = kevo__devprops_nominal(ev->device)) != KEVO_OK) {
            kevo__error_set(err, rc, "device properties");
            goto fail;
        }
        /* Without the option, the target a search on the nominal device
         * would compile for (sm_90a). */
        int64_t cc = 0;
        kevo_vars_get(ev->device, "cc", &cc);
        if (ev->str[KEVO_EVAL_ARCH])
            snprintf(ev->arch, sizeof ev->arch, "%s", ev->str[KEVO_EVAL_ARCH]);
        else
            kevo__devprops_arch(cc, ev->arch, sizeof ev->arch);
    }
    kevo__compile_pool_config cfg = {
        .processes = (size_t)ev->opt[KEVO_EVAL_COMPILE_WORKERS],
        .worker = worker,
        .cache_dir = ev->str[KEVO_EVAL_CACHE_DIR],
    };
    if (!(ev->pool = kevo__compile_pool_new(&cfg, err))) {
        rc = err ? err->code : KEVO_EWORKER;
        goto fail;
    }
    ev->started = true;
    return KEVO_OK;
fail:
    kevo__ev_slots_free(ev);
    kevo_vars_free(ev->device);
    ev->device = NULL;
    kevo_rng_free(ev->rng);
    ev->rng = NULL;
    return rc;
}

/* The first device's: see kevo_evaluator_device(3). */
const kevo_vars *kevo_evaluator_device(const kevo_evaluator *ev)
{
    return ev->started && !ev->compile_only ? ev->device : NULL;
}

const char *kevo_evaluator_device_name(const kevo_evaluator *ev)
{
    return ev->started && !ev->compile_only ? ev->slots[0].name : NULL;
}

double kevo_evaluator_latency(const kevo_evaluator *ev)
{
    return ev->started && !ev->compile_only && ev->slots[0].ceilings.has_launch
               ? ev->slots[0].ceilings.launch
               : 0;
}

double kevo_evaluator_bandwidth(const kevo_evaluator *ev)
{
    return ev->started && !ev->compile_only ? ev->slots[0].ceilings.bandwidth
                                            : 0;
}

/* ---- tasks -------------------------------------------------------------- */

static void taskrec_free(taskrec *tr)
{
    json_decref(tr->json);
    free(tr->seed_cubin);
    json_decref(tr->seed_kernels);
    for (int k = 0; k < KEVO__EV_TASK_KERNELS; k++) {
        kevo__compile_result_free(tr->kernels[k].cr);
        free(tr->kernels[k].error);
    }
    for (size_t b = 0; tr->base && b < tr->nbase; b++) {
        for (int s = 0; s < KEVO__EV_NSETS; s++) {
            free(tr->base[b].ref_times[s]);
            free(tr->base[b].seed_times[s]);
        }
    }
    free(tr->base);
    free(tr);
}

double *kevo__ev_nan_array(size_t n)
{
    double *a = malloc((n ? n : 1) * sizeof *a);
    for (size_t i = 0; a && i < n; i++)
        a[i] = NAN;
    return a;
}

/* Compile options of a candidate: its assignment as -D macros and the
 * lowered names of its kernels. */
kevo_status kevo__ev_submit_compile(kevo_evaluator *ev,
                                    const kevo_candidate *cand,
                                    const char *name, uint64_t *id,
                                    kevo_error *err)
{
    size_t n = kevo_candidate_launch_count(cand);
    const char **kernels = calloc(n ? n : 1, sizeof *kernels);
    if (!kernels)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        kernels[i] = kevo_candidate_launch_kernel(cand, i);
    kevo__compile_request req = {
        .source = kevo_candidate_source(cand),
        .name = name,
        .params = kevo_candidate_assignment(cand),
        .arch = ev->arch,
        .kernels = kernels,
        .nkernels = n,
        .timeout_ms = (int)ev->opt[KEVO_EVAL_COMPILE_TIMEOUT_MS],
    };
    kevo_status rc = kevo__compile_pool_submit(ev->pool, &req, id, err);
    free(kernels);
    return rc;
}

/* The record of task: the one of its present version; else the one whose
 * JSON it has (the same task, changed and changed back, say); else a new
 * one. Only a task that is new or changed is written as JSON. */
static taskrec *find_task(kevo_evaluator *ev, const kevo_task *task,
                          kevo_error *err)
{
    kevo__task_version version;
    kevo__task_version_of(task, &version);
    for (taskrec *tr = ev->tasks; tr; tr = tr->next) {
        if (tr->task == task &&
            kevo__task_version_equal(&tr->version, &version))
            return tr;
    }
    char *text = NULL;
    if (kevo_task_to_json(task, &text, err) != KEVO_OK)
        return NULL;
    uint64_t key = kevo__hash_finish(
        kevo__hash_bytes(0x6b65766f7461736bull, text, strlen(text)));
    for (taskrec *tr = ev->tasks; tr; tr = tr->next) {
        if (tr->task == task && tr->key == key) {
            tr->version = version;
            free(text);
            return tr;
        }
    }
    taskrec *tr = calloc(1, sizeof *tr);
    json_error_t jerr;
    if (!tr || !(tr->json = json_loads(text, 0, &jerr))) {
        free(text);
        free(tr);
        kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        return NULL;
    }
    free(text);
    tr->task = task;
    tr->version = version;
    tr->key = key;
    snprintf(tr->key_text, sizeof tr->key_text, "%016" PRIx64, key);
    tr->nbase = ev->nslots > 0 ? ev->nslots : 1;
    if (!(tr->base = calloc(tr->nbase, sizeof *tr->base))) {
        taskrec_free(tr);
        kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        return NULL;
    }
    for (int s = 0; s < KEVO__EV_NSETS; s++) {
        size_t n = kevo_task_shape_count(task, (kevo_shape_set)s);
        bool oom = false;
        for (size_t b = 0; b < tr->nbase; b++) {
            tr->base[b].ref_times[s] = kevo__ev_nan_array(n);
            tr->base[b].seed_times[s] = kevo__ev_nan_array(n);
            oom =
                oom || !tr->base[b].ref_times[s] || !tr->base[b].seed_times[s];
        }
        if (oom) {
            taskrec_free(tr);
            kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            return NULL;
        }
        /* The input sets: the task's input seed mixed with draws of the
         * evaluator's stream, so that they differ from run to run of a
         * search with another seed but repeat with the same one. */
        for (int k = 0; k < KEVO__EVAL_INPUT_SEEDS_MAX; k++) {
            uint64_t draw = kevo_rng_uniform_int(ev->rng, UINT64_MAX);
            uint64_t mix[2] = {kevo_task_input_seed(task), draw};
            tr->seeds[s][k] =
                kevo__hash_finish(kevo__hash_bytes(key, mix, sizeof mix));
        }
    }
    const kevo_candidate *own[KEVO__EV_TASK_KERNELS] = {
        kevo_task_reference(task), kevo_task_baseline(task)};
    static const char *const own_name[KEVO__EV_TASK_KERNELS] = {"reference.cu",
                                                                "baseline.cu"};
    for (int k = 0; k < KEVO__EV_TASK_KERNELS; k++) {
        if (!ev->compile_only && own[k] &&
            kevo__ev_submit_compile(ev, own[k], own_name[k],
                                    &tr->kernels[k].job, err) != KEVO_OK) {
            taskrec_free(tr);
            return NULL;
        }
    }
    tr->next = ev->tasks;
    ev->tasks = tr;
    return tr;
}

/* Submits the n candidates of cands as one group (n > 1) or one job. */
static kevo_status submit_jobs(kevo_evaluator *ev, const kevo_task *task,
                               const kevo_candidate *const *cands, size_t n,
                               unsigned flags, uint64_t *tickets,
                               kevo_error *err)
{
    for (size_t i = 0; tickets && i < n; i++)
        tickets[i] = 0;
    if (!ev->started)
        return kevo__error_set(err, KEVO_ESTATE,
                               "the evaluator has not started");
    if (flags & ~(KEVO_EVAL_HELD_OUT | KEVO_EVAL_NO_TIMING | KEVO_EVAL_COMPILE |
                  KEVO_EVAL_PAIRED))
        return kevo__error_set(err, KEVO_EINVAL, "unknown flags 0x%x", flags);
    if (ev->compile_only)
        flags |= KEVO_EVAL_COMPILE;
    taskrec *tr = find_task(ev, task, err);
    if (!tr)
        return err ? err->code : KEVO_ENOMEM;
    if (!(flags & KEVO_EVAL_COMPILE)) {
        /* The ceiling the task's flops count against: measured now, the
         * first time a task needs it (a tensor-core peak, say). */
        kevo_status rc = kevo__ev_ensure_ceiling(
            ev, kevo_peak_name(kevo_task_peak(task)), true, err);
        if (rc != KEVO_OK)
            return rc;
    }
    kevo_shape_set set =
        (flags & KEVO_EVAL_HELD_OUT) ? KEVO_SHAPES_HELD_OUT : KEVO_SHAPES_TRAIN;
    const kevo_candidate *seed = kevo_task_seed(task);
    uint64_t seed_hash = seed ? kevo_candidate_hash(seed) : 0;
    bool has_seed = false;
    for (size_t i = 0; seed && i < n; i++)
        has_seed = has_seed || kevo_candidate_hash(cands[i]) == seed_hash;
    /* The seed's times are each device's baseline: with one device, the
     * seed runs hidden unless it is among the candidates; with several, it
     * runs hidden on each (pinned to it), so that every device has its
     * own. */
    bool several = ev->nslots > 1;
    for (size_t b = 0; b < tr->nbase; b++) {
        taskbase *base = &tr->base[b];
        if (!(flags & (KEVO_EVAL_COMPILE | KEVO_EVAL_NO_TIMING)) && seed &&
            !base->seed_queued[set] && (!has_seed || several)) {
            base->seed_queued[set] = true;
            job *hidden =
                kevo__ev_job_add(ev, tr, seed, flags & ~KEVO_EVAL_PAIRED, true,
                                 several ? (int)b : -1, err);
            if (!hidden)
                return err ? err->code : KEVO_ENOMEM;
        }
        if (has_seed)
            base->seed_queued[set] = true;
    }
    group *grp = NULL;
    if (n > 1 && (!(grp = calloc(1, sizeof *grp)) ||
                  !(grp->member = calloc(n, sizeof *grp->member)))) {
        free(grp);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    kevo_status rc = KEVO_OK;
    for (size_t i = 0; i < n; i++) {
        job *j = kevo__ev_job_add(ev, tr, cands[i], flags, false, -1, err);
        if (!j) {
            rc = err ? err->code : KEVO_ENOMEM;
            break;
        }
        if (tickets)
            tickets[i] = j->ticket;
        if (grp) {
            j->grp = grp;
            grp->member[grp->n++] = j;
            grp->refs++;
        }
    }
    if (grp && grp->refs == 0) {
        free(grp->member);
        free(grp);
    }
    return rc;
}

kevo_status kevo_evaluator_submit(kevo_evaluator *ev, const kevo_task *task,
                                  const kevo_candidate *cand, unsigned flags,
                                  uint64_t *ticket, kevo_error *err)
{
    return submit_jobs(ev, task, &cand, 1, flags, ticket, err);
}

kevo_status kevo_evaluator_submit_group(kevo_evaluator *ev,
                                        const kevo_task *task,
                                        const kevo_candidate *const *cands,
                                        size_t n, unsigned flags,
                                        uint64_t *tickets, kevo_error *err)
{
    for (size_t i = 0; cands && i < n; i++) {
        if (!cands[i])
            return kevo__error_set(err, KEVO_EINVAL,
                                   "kevo_evaluator_submit_group: candidate "
                                   "%zu is NULL",
                                   i);
    }
    if (!cands || n == 0)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_evaluator_submit_group: no candidates");
    if (flags & (KEVO_EVAL_COMPILE | KEVO_EVAL_NO_TIMING))
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_evaluator_submit_group: a group is "
                               "timed: KEVO_EVAL_COMPILE and "
                               "KEVO_EVAL_NO_TIMING do not apply");
    return submit_jobs(ev, task, cands, n, flags, tickets, err);
}

size_t kevo_evaluator_pending(const kevo_evaluator *ev)
{
    size_t n = 0;
    for (const job *j = ev->jobs; j; j = j->next)
        n += !j->hidden;
    return n;
}

kevo_status kevo_evaluator_wait(kevo_evaluator *ev, int timeout_ms,
                                kevo_eval_result **out, kevo_error *err)
{
    *out = NULL;
    if (!ev->started)
        return kevo__error_set(err, KEVO_ESTATE,
                               "the evaluator has not started");
    int64_t until = timeout_ms < 0 ? -1 : kevo__now_ms() + timeout_ms;
    for (;;) {
        if ((*out = kevo__ev_take_finished(ev)))
            return KEVO_OK;
        if (kevo_evaluator_pending(ev) == 0)
            return KEVO_DONE;
        int left = kevo__ms_left(until);
        kevo_status rc = kevo__ev_pump(
            ev, left < 0 ? 1000 : (left < 1000 ? left : 1000), err);
        if (rc != KEVO_OK)
            return rc;
        if ((*out = kevo__ev_take_finished(ev)))
            return KEVO_OK;
        if (until >= 0 && kevo__ms_left(until) == 0)
            return kevo__error_set(err, KEVO_ETIMEDOUT,
                                   "no evaluation finished within %d ms",
                                   timeout_ms);
    }
}

kevo_status kevo_evaluator_evaluate(kevo_evaluator *ev, const kevo_task *task,
                                    const kevo_candidate *cand, unsigned flags,
                                    kevo_eval_result **out, kevo_error *err)
{
    *out = NULL;
    uint64_t ticket;
    kevo_status rc = kevo_evaluator_submit(ev, task, cand, flags, &ticket, err);
    if (rc != KEVO_OK)
        return rc;
    for (;;) {
        for (job *j = ev->jobs, *prev = NULL; j; prev = j, j = j->next) {
            if (j->ticket != ticket || j->state != JOB_DONE)
                continue;
            if (prev)
                prev->next = j->next;
            else
                ev->jobs = j->next;
            if (ev->jobs_tail == j)
                ev->jobs_tail = prev;
            *out = j->result;
            j->result = NULL;
            kevo__ev_job_free(j);
            return KEVO_OK;
        }
        if ((rc = kevo__ev_pump(ev, 1000, err)) != KEVO_OK)
            return rc;
    }
}

/* ---- free --------------------------------------------------------------- */

void kevo_evaluator_free(kevo_evaluator *ev)
{
    if (!ev)
        return;
    kevo__ev_slots_free(ev);
    kevo__compile_pool_free(ev->pool);
    while (ev->jobs) {
        job *next = ev->jobs->next;
        kevo__ev_job_free(ev->jobs);
        ev->jobs = next;
    }
    while (ev->tasks) {
        taskrec *next = ev->tasks->next;
        taskrec_free(ev->tasks);
        ev->tasks = next;
    }
    kevo_vars_free(ev->device);
    kevo_rng_free(ev->rng);
    for (int i = 0; i < KEVO__EV_NSTRS; i++)
        free(ev->str[i]);
    free(ev);
}

/*
 * evaluator.c: kevo_evaluator, the core's side of evaluation: the start of
 * its processes (the compile pool and the GPU worker) and the device's
 * ceilings, the per-task records that every result is compared
 * with (the seed's times, the reference's times, the input sets), and the
 * public calls that submit, wait and evaluate. evaluator_pipeline.c moves
 * the jobs through the compile pool and the GPU worker.
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

/* The device properties of the hello, under the names expressions use. */
static kevo_status read_device(kevo_evaluator *ev, kevo_error *err)
{
    const json_t *dev = kevo__gpu_client_device(ev->gpu);
    if (!(ev->device = kevo_vars_new()))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; kevo__devprop_name(i); i++) {
        const char *name = kevo__devprop_name(i);
        json_t *v = json_object_get(dev, name);
        if (!json_is_integer(v))
            return kevo__error_set(err, KEVO_EWORKER,
                                   "the GPU worker's hello lacks the device "
                                   "property \"%s\"",
                                   name);
        kevo_status rc = kevo_vars_set(ev->device, name, json_integer_value(v));
        if (rc != KEVO_OK)
            return kevo__error_set(err, rc, "device property %s", name);
    }
    const char *name = json_string_value(json_object_get(dev, "name"));
    if (!(ev->device_name = kevo__strdup(name ? name : "unknown GPU")))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    int64_t cc = 0;
    kevo_vars_get(ev->device, "cc", &cc);
    /* The arch-specific target (sm_90a) unlocks wgmma and TMA on the device
     * at hand; the code only ever runs there. */
    snprintf(ev->arch, sizeof ev->arch,
             cc >= 90 ? "sm_%" PRId64 "a" : "sm_%" PRId64, cc);
    return KEVO_OK;
}

/* The peaks a task of kind peak needs, measured by the worker unless the
 * cache has them. */
static kevo_status ensure_ceiling(kevo_evaluator *ev, const char *which,
                                  kevo_error *err);

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
        ev->gpu = kevo__gpu_client_new(worker, (int)ev->opt[KEVO_EVAL_DEVICE],
                                       60000, err);
        if (!ev->gpu) {
            rc = err ? err->code : KEVO_ENODEV;
            goto fail;
        }
        if ((rc = read_device(ev, err)) != KEVO_OK)
            goto fail;
        if ((rc = kevo__ceilings_load(
                 &ev->ceilings, ev->str[KEVO_EVAL_CACHE_DIR],
                 kevo__gpu_client_device(ev->gpu),
                 kevo__gpu_client_driver(ev->gpu), err)) != KEVO_OK)
            goto fail;
        if ((rc = ensure_ceiling(ev, "bandwidth", err)) != KEVO_OK ||
            (rc = ensure_ceiling(ev, "fp32", err)) != KEVO_OK ||
            (rc = ensure_ceiling(ev, "fp64", err)) != KEVO_OK ||
            (rc = ensure_ceiling(ev, "launch", err)) != KEVO_OK)
            goto fail;
    } else {
        const char *arch =
            ev->str[KEVO_EVAL_ARCH] ? ev->str[KEVO_EVAL_ARCH] : "sm_90";
        snprintf(ev->arch, sizeof ev->arch, "%s", arch);
        if (!(ev->device = kevo_vars_new())) {
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            goto fail;
        }
        if ((rc = kevo__devprops_nominal(ev->device)) != KEVO_OK) {
            kevo__error_set(err, rc, "device properties");
            goto fail;
        }
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
    kevo__gpu_client_free(ev->gpu);
    ev->gpu = NULL;
    kevo_vars_free(ev->device);
    ev->device = NULL;
    free(ev->device_name);
    ev->device_name = NULL;
    kevo__ceilings_clear(&ev->ceilings);
    kevo_rng_free(ev->rng);
    ev->rng = NULL;
    return rc;
}

const kevo_vars *kevo_evaluator_device(const kevo_evaluator *ev)
{
    return ev->started && !ev->compile_only ? ev->device : NULL;
}

const char *kevo_evaluator_device_name(const kevo_evaluator *ev)
{
    return ev->started && !ev->compile_only ? ev->device_name : NULL;
}

double kevo_evaluator_latency(const kevo_evaluator *ev)
{
    return ev->started && !ev->compile_only && ev->ceilings.has_launch
               ? ev->ceilings.launch
               : 0;
}

double kevo_evaluator_bandwidth(const kevo_evaluator *ev)
{
    return ev->started && !ev->compile_only ? ev->ceilings.bandwidth : 0;
}

/* ---- tasks -------------------------------------------------------------- */

static void taskrec_free(taskrec *tr)
{
    json_decref(tr->json);
    free(tr->seed_cubin);
    json_decref(tr->seed_kernels);
    kevo__compile_result_free(tr->ref);
    free(tr->ref_error);
    for (int s = 0; s < KEVO__EV_NSETS; s++) {
        free(tr->ref_times[s]);
        free(tr->seed_times[s]);
    }
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
    for (int s = 0; s < KEVO__EV_NSETS; s++) {
        size_t n = kevo_task_shape_count(task, (kevo_shape_set)s);
        tr->ref_times[s] = kevo__ev_nan_array(n);
        tr->seed_times[s] = kevo__ev_nan_array(n);
        if (!tr->ref_times[s] || !tr->seed_times[s]) {
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
    const kevo_candidate *ref = kevo_task_reference(task);
    if (!ev->compile_only && ref &&
        kevo__ev_submit_compile(ev, ref, "reference.cu", &tr->ref_job, err) !=
            KEVO_OK) {
        taskrec_free(tr);
        return NULL;
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
        kevo_status rc =
            ensure_ceiling(ev, kevo_peak_name(kevo_task_peak(task)), err);
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
    if (!(flags & (KEVO_EVAL_COMPILE | KEVO_EVAL_NO_TIMING)) && seed &&
        !tr->seed_queued[set] && !has_seed) {
        tr->seed_queued[set] = true;
        if (!kevo__ev_job_add(ev, tr, seed, flags & ~KEVO_EVAL_PAIRED, true,
                              err))
            return err ? err->code : KEVO_ENOMEM;
    }
    if (has_seed)
        tr->seed_queued[set] = true;
    group *grp = NULL;
    if (n > 1 && (!(grp = calloc(1, sizeof *grp)) ||
                  !(grp->member = calloc(n, sizeof *grp->member)))) {
        free(grp);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    kevo_status rc = KEVO_OK;
    for (size_t i = 0; i < n; i++) {
        job *j = kevo__ev_job_add(ev, tr, cands[i], flags, false, err);
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

/* ---- ceilings ----------------------------------------------------------- */

static kevo_status ensure_ceiling(kevo_evaluator *ev, const char *which,
                                  kevo_error *err)
{
    if (kevo__ceilings_has(&ev->ceilings, which))
        return KEVO_OK;
    /* Let the job on the GPU finish first: the worker does one thing at a
     * time. */
    while (ev->gpu && kevo__gpu_client_busy(ev->gpu)) {
        kevo_status rc = kevo__ev_gpu_step(ev, 1000, err);
        if (rc != KEVO_OK)
            return rc;
    }
    json_t *msg = json_pack("{s:s, s:I, s:[s]}", "op", "peaks", "id",
                            (json_int_t)0x7fffffff, "which", which);
    json_t *reply = NULL;
    if (!msg)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = kevo__gpu_client_call(
        ev->gpu, msg, kevo__now_ms() + 120000, &reply, err);
    json_decref(msg);
    if (rc != KEVO_OK)
        return rc;
    if (!json_is_true(json_object_get(reply, "ok"))) {
        const char *why = json_string_value(json_object_get(reply, "error"));
        rc = kevo__error_set(err, KEVO_EWORKER, "measuring the %s ceiling: %s",
                             which, why ? why : "failed");
        json_decref(reply);
        return rc;
    }
    rc = kevo__ceilings_update(&ev->ceilings, json_object_get(reply, "peaks"),
                               err);
    json_decref(reply);
    if (rc == KEVO_OK)
        rc = kevo__ceilings_save(&ev->ceilings, err);
    return rc;
}

double kevo_evaluator_peak(kevo_evaluator *ev, kevo_peak peak)
{
    if (!ev->started || ev->compile_only)
        return 0;
    const char *which = kevo_peak_name(peak);
    if (!which || ensure_ceiling(ev, which, NULL) != KEVO_OK)
        return 0;
    return kevo__ceilings_peak(&ev->ceilings, peak);
}

double kevo_evaluator_ceiling(kevo_evaluator *ev, const char *name)
{
    if (!ev || !ev->started || ev->compile_only ||
        !kevo__ceilings_known(name) ||
        ensure_ceiling(ev, name, NULL) != KEVO_OK)
        return 0;
    return kevo__ceilings_get(&ev->ceilings, name);
}

/* ---- free --------------------------------------------------------------- */

void kevo_evaluator_free(kevo_evaluator *ev)
{
    if (!ev)
        return;
    kevo__gpu_client_free(ev->gpu);
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
    kevo__ceilings_clear(&ev->ceilings);
    kevo_vars_free(ev->device);
    free(ev->device_name);
    kevo_rng_free(ev->rng);
    for (int i = 0; i < KEVO__EV_NSTRS; i++)
        free(ev->str[i]);
    free(ev);
}

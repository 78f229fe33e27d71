/*
 * evaluator_pipeline.c: the evaluator's jobs on their way. It checks a
 * candidate against the task and the device, sends it through the compile
 * pool, hands compiled candidates to the GPU worker one at a time (with
 * the members of its group, and the seed when the timing is paired), and
 * turns the worker's replies (or its death, or a missed deadline) into
 * results.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "evaluator_private.h"
#include "fitness/fitness.h"
#include "launch_check.h"
#include "model/candidate_private.h"
#include "model/launch_args.h"
#include "proc/include_scan.h"

/* ---- checks before compiling --------------------------------------------
 */

/* Why the candidate cannot run on this device at one of the set's shapes,
 * in a new string, or NULL when it can (or on no memory: *nomem). */
static char *launch_problem(kevo_evaluator *ev, const kevo_task *task,
                            const kevo_candidate *cand, kevo_shape_set set,
                            bool *nomem)
{
    kevo_error e;
    kevo_error_init(&e);
    char *why = NULL;
    *nomem = false;
    for (size_t l = 0; l < kevo_candidate_launch_count(cand); l++) {
        const char *k = kevo_candidate_launch_kernel(cand, l);
        if (strncmp(k, "kevo_internal_", 14) == 0)
            return kevo__asprintf("kernel name %s is reserved: names that "
                                  "start with kevo_internal_ belong to the "
                                  "evaluator",
                                  k);
    }
    if (kevo__include_scan(kevo_candidate_source(cand),
                           strlen(kevo_candidate_source(cand)),
                           kevo_candidate_origin(cand), &e) != KEVO_OK)
        return kevo__strdup(e.text);
    int64_t max_threads = 1024, max_smem = 0;
    kevo_vars_get(ev->device, "max_threads_per_block", &max_threads);
    kevo_vars_get(ev->device, "max_smem_per_block", &max_smem);
    size_t nshapes = kevo_task_shape_count(task, set);
    for (size_t s = 0; s < nshapes && !why; s++) {
        kevo_vars *env = kevo_vars_copy(ev->device);
        if (!env || kevo_task_shape_vars(task, set, s, env) != KEVO_OK) {
            kevo_vars_free(env);
            *nomem = true;
            return NULL;
        }
        kevo_error_init(&e);
        if (kevo_candidate_check(cand, env, &e) != KEVO_OK)
            why = kevo__asprintf("shape %zu: %s", s, e.text);
        for (size_t l = 0; !why && l < kevo_candidate_launch_count(cand); l++) {
            kevo_launch_geometry g = {.size = sizeof g};
            kevo__resolved_arg *args = NULL;
            size_t nargs = 0;
            kevo_error_init(&e);
            if (kevo_candidate_launch_geometry(cand, l, env, &g, &e) != KEVO_OK)
                why = kevo__asprintf("shape %zu: %s", s, e.text);
            else if ((int64_t)g.block[0] * g.block[1] * g.block[2] >
                     max_threads)
                why = kevo__asprintf(
                    "shape %zu: launch %zu (%s) asks for %u threads per "
                    "block; the device allows %" PRId64,
                    s, l + 1, kevo_candidate_launch_kernel(cand, l),
                    g.block[0] * g.block[1] * g.block[2], max_threads);
            else if ((int64_t)g.shared_bytes > max_smem)
                why = kevo__asprintf(
                    "shape %zu: launch %zu (%s) asks for %" PRIu64
                    " bytes of dynamic shared memory per block; the device "
                    "allows %" PRId64,
                    s, l + 1, kevo_candidate_launch_kernel(cand, l),
                    g.shared_bytes, max_smem);
            else if (kevo__launch_args(task, cand, l, env, &args, &nargs, &e) !=
                     KEVO_OK)
                why = kevo__asprintf("shape %zu: %s", s, e.text);
            free(args);
        }
        kevo_vars_free(env);
    }
    if (!why && nshapes == 0 && set == KEVO_SHAPES_HELD_OUT)
        why = kevo__strdup("the task has no held-out shapes");
    return why;
}

/* ---- results ------------------------------------------------------------ */

/* How the evaluator's measurements become figures. */
typedef struct figures {
    kevo_ceilings ceilings;
    kevo_eval_context ctx;
} figures;

static void figures_of(const kevo_evaluator *ev, figures *f)
{
    memset(f, 0, sizeof *f);
    f->ceilings.bandwidth =
        ev->ceilings.has_bandwidth ? ev->ceilings.bandwidth : 0;
    for (int p = 0; p < KEVO__PEAK_COUNT; p++)
        f->ceilings.peak[p] = kevo__ceilings_peak(&ev->ceilings, (kevo_peak)p);
    f->ceilings.launch = ev->ceilings.has_launch ? ev->ceilings.launch : 0;
    f->ctx.ceilings = ev->compile_only ? NULL : &f->ceilings;
    f->ctx.device = ev->device;
    f->ctx.fitness = ev->str[KEVO_EVAL_FITNESS]
                         ? kevo__fitness_find(ev->str[KEVO_EVAL_FITNESS])
                         : NULL;
    f->ctx.suspicious = (double)ev->opt[KEVO_EVAL_SUSPICIOUS_PPM] / 1e6;
}

/* What the compile pool said, as the result wants it. */
static const kevo_compile_info *compile_info(const kevo__compile_result *cr,
                                             kevo_compile_info *ci)
{
    if (!cr)
        return NULL;
    memset(ci, 0, sizeof *ci);
    ci->ok = cr->ok;
    ci->error = cr->error;
    ci->log = cr->log;
    ci->ptx = cr->ptx;
    ci->ptx_len = cr->ptx_len;
    ci->seconds = cr->cached ? 0 : cr->seconds;
    ci->cached = cr->cached;
    return ci;
}

/* ---- jobs --------------------------------------------------------------- */

void kevo__ev_job_free(job *j)
{
    if (!j)
        return;
    if (j->grp) {
        for (size_t i = 0; i < j->grp->n; i++) {
            if (j->grp->member[i] == j)
                j->grp->member[i] = NULL;
        }
        if (--j->grp->refs == 0) {
            free(j->grp->member);
            free(j->grp);
        }
    }
    free(j->sent);
    kevo_candidate_free(j->cand);
    kevo__compile_result_free(j->compiled);
    kevo_eval_result_free(j->result);
    free(j);
}

static kevo_shape_set job_set(const job *j)
{
    return (j->flags & KEVO_EVAL_HELD_OUT) ? KEVO_SHAPES_HELD_OUT
                                           : KEVO_SHAPES_TRAIN;
}

/* True when j evaluates the task's seed. */
static bool is_seed_job(const job *j)
{
    const kevo_candidate *seed = kevo_task_seed(j->tr->task);
    return j->hidden ||
           (seed && kevo_candidate_hash(seed) == kevo_candidate_hash(j->cand));
}

/* Finishes j with res (taken). Hidden seed jobs leave their times in the
 * task record. */
static void job_finish(kevo_evaluator *ev, job *j, kevo_eval_result *res)
{
    kevo__eval_result_set_ticket(res, j->ticket);
    kevo__eval_result_set_seconds(res, KEVO_PHASE_TOTAL,
                                  (double)(kevo__now_ms() - j->submitted_ms) /
                                      1e3);
    j->result = res;
    j->state = JOB_DONE;
    ev->finished++;
    kevo_shape_set set = job_set(j);
    /* The seed's times are the baseline, whether the seed ran hidden or
     * was submitted (a search's first evaluation): at the shapes where it
     * was correct, even when it failed at a later one. */
    if (is_seed_job(j) &&
        !(j->flags & (KEVO_EVAL_COMPILE | KEVO_EVAL_NO_TIMING))) {
        size_t n = kevo_task_shape_count(j->tr->task, set);
        double *t = kevo__ev_nan_array(n);
        kevo__eval_result_times(res, KEVO_BASELINE_SEED, t, n);
        for (size_t i = 0; t && i < res->nshapes; i++) {
            const kevo_shape_result *r = &res->shapes[i].r;
            if (r->index < n && r->correct && t[r->index] > 0)
                j->tr->seed_times[set][r->index] = t[r->index];
        }
        free(t);
        j->tr->seed_done[set] = true;
    }
}

/* A result that says the candidate failed before the GPU saw it. */
static kevo_status finish_failure(kevo_evaluator *ev, job *j,
                                  kevo_verdict verdict, const char *reason,
                                  kevo_error *err)
{
    kevo_eval_result *res = NULL;
    kevo_compile_info ci;
    figures f;
    figures_of(ev, &f);
    kevo_status rc = kevo__eval_result_new_failure(
        j->tr->task, j->cand, job_set(j), verdict, reason,
        compile_info(j->compiled, &ci), &f.ctx, &res, err);
    if (rc != KEVO_OK)
        return rc;
    job_finish(ev, j, res);
    return KEVO_OK;
}

/* A failure of the evaluation j was sent in: j and the members of its
 * group that went with it get it. */
static kevo_status finish_sent(kevo_evaluator *ev, job *j, kevo_verdict verdict,
                               const char *reason, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    for (size_t i = 0; i < j->nsent && rc == KEVO_OK; i++)
        rc = finish_failure(ev, j->sent[i], verdict, reason, err);
    j->nsent = 0;
    return rc == KEVO_OK ? finish_failure(ev, j, verdict, reason, err) : rc;
}

job *kevo__ev_job_add(kevo_evaluator *ev, taskrec *tr,
                      const kevo_candidate *cand, unsigned flags, bool hidden,
                      kevo_error *err)
{
    job *j = calloc(1, sizeof *j);
    if (!j) {
        kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        return NULL;
    }
    j->cand = kevo__candidate_share(cand);
    j->ticket = ev->next_ticket++;
    j->tr = tr;
    j->flags = flags;
    j->hidden = hidden;
    j->submitted_ms = kevo__now_ms();
    if (ev->jobs_tail)
        ev->jobs_tail->next = j;
    else
        ev->jobs = j;
    ev->jobs_tail = j;
    bool nomem = false;
    char *why = launch_problem(ev, tr->task, cand, job_set(j), &nomem);
    if (nomem) {
        kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        j->state = JOB_DONE; /* dropped by the next collection */
        return NULL;
    }
    if (why) {
        kevo_status rc = finish_failure(ev, j, KEVO_VERDICT_REJECTED, why, err);
        free(why);
        return rc == KEVO_OK ? j : NULL;
    }
    if (kevo__ev_submit_compile(ev, j->cand, kevo_candidate_origin(cand),
                                &j->compile_id, err) != KEVO_OK)
        return NULL;
    j->state = JOB_COMPILING;
    return j;
}

/* ---- the pipeline ------------------------------------------------------- */

static job *job_by_compile(kevo_evaluator *ev, uint64_t id)
{
    for (job *j = ev->jobs; j; j = j->next) {
        if (j->state == JOB_COMPILING && j->compile_id == id)
            return j;
    }
    return NULL;
}

static json_t *kernel_names(const kevo_candidate *cand,
                            const kevo__compile_result *cr)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < kevo_candidate_launch_count(cand); i++) {
        const char *name = kevo_candidate_launch_kernel(cand, i);
        const char *low =
            i < cr->nlowered && cr->lowered[i] ? cr->lowered[i] : name;
        json_object_set_new(o, name, json_string(low));
    }
    return o;
}

/* A compile finished: the task's reference or a job's candidate. */
static kevo_status compiled(kevo_evaluator *ev, kevo__compile_result *cr,
                            kevo_error *err)
{
    for (taskrec *tr = ev->tasks; tr; tr = tr->next) {
        if (tr->ref_job != cr->id)
            continue;
        tr->ref_job = 0;
        kevo_error mismatch = KEVO__ERROR_INIT;
        char *why = NULL;
        if (!cr->ok) {
            why = kevo__launch_missing_kernel(kevo_task_reference(tr->task),
                                              cr->error, cr->log);
            tr->ref_error =
                kevo__asprintf("the task's reference does not compile: %s",
                               why         ? why
                               : cr->error ? cr->error
                                           : "compile error");
        } else if (kevo__launch_check_ptx(tr->task,
                                          kevo_task_reference(tr->task),
                                          cr->ptx, cr->ptx_len, cr->lowered,
                                          cr->nlowered, &mismatch) != KEVO_OK) {
            tr->ref_error = kevo__asprintf(
                "the task's reference does not match its launches: %s",
                mismatch.text);
        } else {
            tr->ref = cr;
            cr = NULL;
        }
        free(why);
        kevo__compile_result_free(cr);
        return KEVO_OK;
    }
    job *j = job_by_compile(ev, cr->id);
    if (!j) {
        kevo__compile_result_free(cr);
        return KEVO_OK;
    }
    j->compiled = cr;
    if (!cr->ok) {
        char *why = kevo__launch_missing_kernel(j->cand, cr->error, cr->log);
        kevo_status rc = finish_failure(ev, j, KEVO_VERDICT_COMPILE_ERROR,
                                        why         ? why
                                        : cr->error ? cr->error
                                                    : "compile error",
                                        err);
        free(why);
        return rc;
    }
    kevo_error mismatch = KEVO__ERROR_INIT;
    kevo_status mrc =
        kevo__launch_check_ptx(j->tr->task, j->cand, cr->ptx, cr->ptx_len,
                               cr->lowered, cr->nlowered, &mismatch);
    if (mrc == KEVO_ENOMEM)
        return kevo__error_set(err, mrc, "out of memory");
    if (mrc != KEVO_OK)
        return finish_failure(ev, j, KEVO_VERDICT_REJECTED, mismatch.text, err);
    if (is_seed_job(j) && !j->tr->seed_cubin && cr->cubin_len > 0) {
        taskrec *tr = j->tr;
        tr->seed_kernels = kernel_names(j->cand, cr);
        tr->seed_cubin = malloc(cr->cubin_len);
        if (!tr->seed_cubin || !tr->seed_kernels) {
            free(tr->seed_cubin);
            tr->seed_cubin = NULL;
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        }
        memcpy(tr->seed_cubin, cr->cubin, cr->cubin_len);
        tr->seed_cubin_len = cr->cubin_len;
    }
    if (j->flags & KEVO_EVAL_COMPILE) {
        kevo_eval_result *res = NULL;
        kevo_compile_info ci;
        figures f;
        figures_of(ev, &f);
        kevo_status rc =
            kevo__eval_result_new(j->tr->task, j->cand, job_set(j), NULL,
                                  compile_info(cr, &ci), &f.ctx, &res, err);
        if (rc != KEVO_OK)
            return rc;
        job_finish(ev, j, res);
        return KEVO_OK;
    }
    j->state = JOB_READY;
    return KEVO_OK;
}

/* True when j's timing is paired with other kernels: a group, or the
 * seed and the reference beside it. */
static bool multi_timed(const job *j)
{
    return j->nsent > 0 || j->seed_sent || (j->flags & KEVO_EVAL_PAIRED);
}

/* The companion entry of a job sent beside the leader (check: it is
 * checked like the candidate), or of the seed at the shapes where it is
 * correct (shapes: the array, taken). */
static json_t *companion_json(const kevo_candidate *cand, size_t cubin_bytes,
                              json_t *kernels, bool check, json_t *shapes)
{
    json_t *c = kevo__candidate_to_json(cand);
    json_t *o =
        json_pack("{s:o, s:I, s:o, s:b}", "candidate", c ? c : json_null(),
                  "cubin_bytes", (json_int_t)cubin_bytes, "kernels",
                  kernels ? kernels : json_null(), "check", check);
    if (o && shapes && json_object_set_new(o, "shapes", shapes)) {
        json_decref(o);
        return NULL;
    }
    if (!o)
        json_decref(shapes);
    return o;
}

/* The "timing" object of j's eval message: the timing options under
 * their names, which the worker reads with the same option table. Kernels
 * timed to be compared in pairs are timed to the finer of the two
 * precisions. */
static json_t *timing_json(const kevo_evaluator *ev, const job *j, bool enabled)
{
    static const kevo_eval_option sent[] = KEVO__EVAL_TIMING_OPTIONS;
    int64_t v[KEVO__EVAL_OPTION_COUNT];
    memcpy(v, ev->opt, sizeof v);
    if (multi_timed(j)) {
        int64_t pm = v[KEVO_EVAL_PAIRED_MIN_REPS];
        int64_t ps = v[KEVO_EVAL_PAIRED_SPREAD_PPM];
        if (pm > v[KEVO_EVAL_MIN_REPS])
            v[KEVO_EVAL_MIN_REPS] = pm;
        if (ps < v[KEVO_EVAL_TARGET_SPREAD_PPM])
            v[KEVO_EVAL_TARGET_SPREAD_PPM] = ps;
    }
    if (v[KEVO_EVAL_MAX_REPS] < v[KEVO_EVAL_MIN_REPS])
        v[KEVO_EVAL_MAX_REPS] = v[KEVO_EVAL_MIN_REPS];
    json_t *o = json_pack("{s:b}", "enabled", enabled);
    for (size_t i = 0; o && i < KEVO_ARRAY_SIZE(sent); i++) {
        if (json_object_set_new(
                o, kevo__option_name(&kevo__eval_options, (int)sent[i]),
                kevo__option_json(&kevo__eval_options, (int)sent[i],
                                  v[sent[i]])) != 0) {
            json_decref(o);
            o = NULL;
        }
    }
    return o;
}

/* The eval message of j (with its group's members j->sent and, with
 * j->seed_sent, the seed), and its deadline. */
static json_t *eval_message(kevo_evaluator *ev, job *j, bool time_reference,
                            int64_t *deadline)
{
    kevo_shape_set set = job_set(j);
    taskrec *tr = j->tr;
    size_t k = (size_t)ev->opt[KEVO_EVAL_INPUT_SEEDS];
    size_t a = (size_t)kevo_rng_uniform_int(ev->rng, k);
    size_t b = (a + 1 + (size_t)kevo_rng_uniform_int(ev->rng, k - 1)) % k;
    bool timing = !(j->flags & KEVO_EVAL_NO_TIMING);
    json_t *times = timing_json(ev, j, timing);
    json_t *cand = kevo__candidate_to_json(j->cand);
    json_t *msg =
        json_pack("{s:s, s:I, s:s, s:o, s:s, s:[I,I], s:I, s:I, "
                  "s:o, s:b, s:b, s:b, s:o, s:o}",
                  "op", "eval", "id", (json_int_t)j->ticket, "task_key",
                  tr->key_text, "candidate", cand ? cand : json_null(), "set",
                  set == KEVO_SHAPES_TRAIN ? "train" : "held_out", "seeds",
                  (json_int_t)(tr->seeds[set][a] >> 1),
                  (json_int_t)(tr->seeds[set][b] >> 1), "reference_cubin_bytes",
                  (json_int_t)tr->ref->cubin_len, "candidate_cubin_bytes",
                  (json_int_t)j->compiled->cubin_len, "timing",
                  times ? times : json_null(), "profile",
                  ev->opt[KEVO_EVAL_PROFILE] != 0 && timing, "flush_l2",
                  ev->opt[KEVO_EVAL_FLUSH_L2] != 0, "time_reference",
                  time_reference && timing, "reference_kernels",
                  kernel_names(kevo_task_reference(tr->task), tr->ref),
                  "candidate_kernels", kernel_names(j->cand, j->compiled));
    if (msg && (j->nsent > 0 || j->seed_sent)) {
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < j->nsent; i++) {
            job *m = j->sent[i];
            if (json_array_append_new(
                    arr, companion_json(m->cand, m->compiled->cubin_len,
                                        kernel_names(m->cand, m->compiled),
                                        true, NULL))) {
                json_decref(arr);
                arr = NULL;
            }
        }
        if (arr && j->seed_sent) {
            size_t n = kevo_task_shape_count(tr->task, set);
            json_t *shapes = json_array();
            for (size_t i = 0; shapes && i < n; i++) {
                if (tr->seed_times[set][i] > 0)
                    json_array_append_new(shapes, json_integer((json_int_t)i));
            }
            if (!shapes ||
                json_array_append_new(
                    arr, companion_json(
                             kevo_task_seed(tr->task), tr->seed_cubin_len,
                             json_incref(tr->seed_kernels), false, shapes))) {
                json_decref(arr);
                arr = NULL;
            }
        }
        if (!arr || json_object_set_new(msg, "companions", arr)) {
            json_decref(msg);
            msg = NULL;
        }
    }
    size_t nshapes = kevo_task_shape_count(tr->task, set);
    size_t plans = 1 + j->nsent + j->seed_sent + (time_reference ? 1 : 0);
    int64_t per_shape =
        timing ? ev->opt[KEVO_EVAL_TIME_CAP_MS] * (int64_t)plans : 0;
    if (ev->opt[KEVO_EVAL_PROFILE] && timing)
        per_shape += 5000;
    *deadline = kevo__now_ms() + ev->opt[KEVO_EVAL_RUN_TIMEOUT_MS] +
                (int64_t)nshapes * per_shape;
    return msg;
}

/* Whether j can go to the GPU now: every other unfinished member of its
 * group is compiled too, and a paired job waits for the seed's own
 * evaluation of the set (its correctness decides where it is timed). */
static bool can_dispatch(const job *j)
{
    for (size_t i = 0; j->grp && i < j->grp->n; i++) {
        const job *m = j->grp->member[i];
        if (m && m != j && m->state != JOB_DONE && m->state != JOB_READY)
            return false;
    }
    kevo_shape_set set = job_set(j);
    return !(j->flags & KEVO_EVAL_PAIRED) || is_seed_job(j) ||
           !kevo_task_seed(j->tr->task) || j->tr->seed_done[set];
}

/* Fills j->sent with the members of its group that go with it, and
 * j->seed_sent. */
static bool choose_companions(job *j)
{
    j->nsent = 0;
    j->seed_sent = false;
    if (j->grp) {
        free(j->sent);
        if (!(j->sent = calloc(j->grp->n, sizeof *j->sent)))
            return false;
        for (size_t i = 0; i < j->grp->n; i++) {
            job *m = j->grp->member[i];
            if (m && m != j && m->state == JOB_READY) {
                j->sent[j->nsent++] = m;
                m->state = JOB_RUNNING;
            }
        }
    }
    bool seed_member = is_seed_job(j);
    for (size_t i = 0; i < j->nsent; i++)
        seed_member = seed_member || is_seed_job(j->sent[i]);
    j->seed_sent = (j->flags & KEVO_EVAL_PAIRED) && !seed_member &&
                   j->tr->seed_cubin != NULL;
    return true;
}

/* How long a worker may take to load a task. */
#define TASK_TIMEOUT_MS 60000

/* The task reaches each worker process once: sent now, unless the worker
 * holds it already. */
static kevo_status send_task(kevo_evaluator *ev, taskrec *tr, kevo_error *err)
{
    if (kevo__gpu_client_has_task(ev->gpu, tr->key_text))
        return KEVO_OK;
    return kevo__gpu_client_send_task(ev->gpu, tr->key_text, tr->json,
                                      kevo__now_ms() + TASK_TIMEOUT_MS, err);
}

/* Sends the first ready job whose reference is compiled to the GPU. */
static kevo_status dispatch(kevo_evaluator *ev, kevo_error *err)
{
    if (!ev->gpu || kevo__gpu_client_busy(ev->gpu))
        return KEVO_OK;
    for (job *j = ev->jobs; j; j = j->next) {
        if (j->state != JOB_READY || !can_dispatch(j))
            continue;
        taskrec *tr = j->tr;
        if (tr->ref_job)
            continue; /* the reference is still compiling */
        if (!tr->ref)
            return finish_failure(ev, j, KEVO_VERDICT_REJECTED,
                                  tr->ref_error ? tr->ref_error
                                                : "the task has no reference",
                                  err);
        if (!choose_companions(j))
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        kevo_error task_err;
        kevo_error_init(&task_err);
        if (send_task(ev, tr, &task_err) != KEVO_OK) {
            if (task_err.code == KEVO_ENOMEM)
                return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            return finish_sent(ev, j, KEVO_VERDICT_WORKER_DIED, task_err.text,
                               err);
        }
        kevo_shape_set set = job_set(j);
        bool time_ref = !tr->ref_timed[set] || (j->flags & KEVO_EVAL_PAIRED);
        int64_t deadline;
        json_t *msg = eval_message(ev, j, time_ref, &deadline);
        size_t len = tr->ref->cubin_len + j->compiled->cubin_len;
        for (size_t i = 0; i < j->nsent; i++)
            len += j->sent[i]->compiled->cubin_len;
        if (j->seed_sent)
            len += tr->seed_cubin_len;
        unsigned char *payload = malloc(len ? len : 1);
        if (!msg || !payload) {
            json_decref(msg);
            free(payload);
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        }
        unsigned char *at = payload;
        memcpy(at, tr->ref->cubin, tr->ref->cubin_len);
        at += tr->ref->cubin_len;
        memcpy(at, j->compiled->cubin, j->compiled->cubin_len);
        at += j->compiled->cubin_len;
        for (size_t i = 0; i < j->nsent; i++) {
            memcpy(at, j->sent[i]->compiled->cubin,
                   j->sent[i]->compiled->cubin_len);
            at += j->sent[i]->compiled->cubin_len;
        }
        if (j->seed_sent)
            memcpy(at, tr->seed_cubin, tr->seed_cubin_len);
        kevo_error send_err;
        kevo_error_init(&send_err);
        kevo_status rc = kevo__gpu_client_send(ev->gpu, msg, payload, len,
                                               deadline, &send_err);
        json_decref(msg);
        free(payload);
        if (rc != KEVO_OK)
            return finish_sent(ev, j, KEVO_VERDICT_WORKER_DIED, send_err.text,
                               err);
        j->timed_ref = time_ref && !(j->flags & KEVO_EVAL_NO_TIMING) &&
                       !tr->ref_timed[set];
        if (time_ref && !(j->flags & KEVO_EVAL_NO_TIMING))
            tr->ref_timed[set] = true;
        j->state = JOB_RUNNING;
        ev->running = j;
        return KEVO_OK;
    }
    return KEVO_OK;
}

/* Keeps the reference times a result carries (the worker times the
 * reference on the first evaluation of each task and set). */
static void take_reference_times(taskrec *tr, kevo_shape_set set,
                                 const kevo_eval_result *res)
{
    size_t n = kevo_task_shape_count(tr->task, set);
    double *t = kevo__ev_nan_array(n);
    if (!t)
        return;
    kevo__eval_result_times(res, KEVO_BASELINE_REFERENCE, t, n);
    for (size_t i = 0; i < n; i++) {
        if (t[i] > 0)
            tr->ref_times[set][i] = t[i];
    }
    free(t);
}

/* The pairing of a reply: per shape of the set, the seed's time and
 * spread (from its companion entry, the last) and the reference's (timed
 * beside the candidate), NaN where not measured. */
typedef struct pairing {
    double *seed_t, *seed_s, *ref_t, *ref_s;
    size_t n;
} pairing;

static void pairing_free(pairing *p)
{
    free(p->seed_t);
    free(p->seed_s);
    free(p->ref_t);
    free(p->ref_s);
}

/* Reads a "time" object's median and spread, if any. */
static void read_median(const json_t *t, double *median, double *spread)
{
    const json_t *m = json_object_get(t, "median");
    const json_t *sp = json_object_get(t, "spread");
    if (json_is_number(m) && json_number_value(m) > 0)
        *median = json_number_value(m);
    if (json_is_number(sp) && json_number_value(sp) >= 0)
        *spread = json_number_value(sp);
}

static bool pairing_read(pairing *p, const job *j, const json_t *reply)
{
    p->n = kevo_task_shape_count(j->tr->task, job_set(j));
    p->seed_t = kevo__ev_nan_array(p->n);
    p->seed_s = kevo__ev_nan_array(p->n);
    p->ref_t = kevo__ev_nan_array(p->n);
    p->ref_s = kevo__ev_nan_array(p->n);
    if (!p->seed_t || !p->seed_s || !p->ref_t || !p->ref_s)
        return false;
    size_t i;
    const json_t *sh;
    json_array_foreach (json_object_get(reply, "shapes"), i, sh) {
        json_int_t k = json_integer_value(json_object_get(sh, "index"));
        if (k >= 0 && (size_t)k < p->n)
            read_median(json_object_get(sh, "reference_time"), &p->ref_t[k],
                        &p->ref_s[k]);
    }
    const json_t *comp = json_object_get(reply, "companions");
    const json_t *seed =
        j->seed_sent ? json_array_get(comp, json_array_size(comp) - 1) : NULL;
    json_array_foreach (json_object_get(seed, "shapes"), i, sh) {
        json_int_t k = json_integer_value(json_object_get(sh, "index"));
        if (k >= 0 && (size_t)k < p->n &&
            json_is_true(json_object_get(sh, "correct")))
            read_median(json_object_get(sh, "time"), &p->seed_t[k],
                        &p->seed_s[k]);
    }
    return true;
}

/* Applies the pairing to res: the seed's own result is its own baseline. */
static void pairing_apply(const pairing *p, const job *m, kevo_eval_result *res)
{
    if (is_seed_job(m)) {
        double *t = kevo__ev_nan_array(p->n);
        if (t)
            kevo__eval_result_times(res, KEVO_BASELINE_SEED, t, p->n);
        double *sp = kevo__ev_nan_array(p->n);
        for (size_t i = 0; sp && i < res->nshapes; i++) {
            if (res->shapes[i].r.index < p->n)
                sp[res->shapes[i].r.index] = res->shapes[i].r.time_spread;
        }
        if (t && sp)
            kevo__eval_result_set_paired(res, KEVO_BASELINE_SEED, t, sp, p->n);
        free(t);
        free(sp);
    } else {
        kevo__eval_result_set_paired(res, KEVO_BASELINE_SEED, p->seed_t,
                                     p->seed_s, p->n);
    }
    kevo__eval_result_set_paired(res, KEVO_BASELINE_REFERENCE, p->ref_t,
                                 p->ref_s, p->n);
}

/* The result of member m, sent beside j, from its entry in the reply's
 * companions (k-th), or the failure that ended j before m was done. */
static kevo_status member_result(kevo_evaluator *ev, job *j, size_t k,
                                 const json_t *reply,
                                 const kevo_eval_result *lead, const pairing *p,
                                 kevo_error *err)
{
    job *m = j->sent[k];
    const json_t *entry =
        json_array_get(json_object_get(reply, "companions"), k);
    size_t nset = kevo_task_shape_count(j->tr->task, job_set(j));
    const char *verdict = json_string_value(json_object_get(entry, "verdict"));
    if (!entry || !verdict ||
        (json_array_size(json_object_get(entry, "shapes")) < nset &&
         strcmp(verdict, "ok") == 0)) {
        /* Left unfinished by the candidate it was timed with. */
        char *why = kevo__asprintf(
            "not evaluated to the end: candidate %" PRIu64
            " of its group failed first (%s: %s)",
            kevo_candidate_id(j->cand),
            kevo_verdict_name(kevo_eval_result_verdict(lead)),
            kevo_eval_result_reason(lead) ? kevo_eval_result_reason(lead) : "");
        kevo_status rc = finish_failure(ev, m, KEVO_VERDICT_WORKER_DIED,
                                        why ? why : "not evaluated", err);
        free(why);
        return rc;
    }
    json_t *msg = json_deep_copy(entry);
    json_object_set(msg, "timer", json_object_get(reply, "timer"));
    kevo_eval_result *res = NULL;
    kevo_compile_info ci;
    figures f;
    figures_of(ev, &f);
    kevo_status rc =
        msg ? kevo__eval_result_new(j->tr->task, m->cand, job_set(m), msg,
                                    compile_info(m->compiled, &ci), &f.ctx,
                                    &res, err)
            : kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    json_decref(msg);
    if (rc == KEVO_EWORKER) {
        char why[KEVO_ERROR_TEXT_SIZE + 64];
        snprintf(why, sizeof why, "the GPU worker's reply is malformed: %s",
                 err ? err->text : "");
        if (err)
            kevo_error_init(err);
        return finish_failure(ev, m, KEVO_VERDICT_WORKER_DIED, why, err);
    }
    if (rc != KEVO_OK)
        return rc;
    size_t n = kevo_task_shape_count(j->tr->task, job_set(j));
    kevo__eval_result_set_baseline(res, KEVO_BASELINE_SEED,
                                   j->tr->seed_times[job_set(j)], n, NULL);
    kevo__eval_result_set_baseline(res, KEVO_BASELINE_REFERENCE,
                                   j->tr->ref_times[job_set(j)], n, NULL);
    if (m->flags & KEVO_EVAL_PAIRED)
        pairing_apply(p, m, res);
    job_finish(ev, m, res);
    return KEVO_OK;
}

/* The worker did not hold j's task (it was restarted, or dropped it to make
 * room, without the evaluator knowing): j and the members sent with it go
 * back to the queue, to be sent again after the task, once. */
static bool resend(kevo_evaluator *ev, job *j, const json_t *reply)
{
    const char *lost =
        json_string_value(json_object_get(reply, "unknown_task_key"));
    if (!lost || !json_is_false(json_object_get(reply, "ok")))
        return false;
    kevo__gpu_client_forget_task(ev->gpu, lost);
    if (j->resent)
        return false;
    j->resent = true;
    j->state = JOB_READY;
    for (size_t i = 0; i < j->nsent; i++)
        j->sent[i]->state = JOB_READY;
    j->nsent = 0;
    j->seed_sent = false;
    if (j->timed_ref)
        j->tr->ref_timed[job_set(j)] = false;
    return true;
}

/* The GPU's reply to the running job, or its failure. */
kevo_status kevo__ev_gpu_step(kevo_evaluator *ev, int timeout_ms,
                              kevo_error *err)
{
    if (!ev->gpu || !kevo__gpu_client_busy(ev->gpu))
        return KEVO_OK;
    json_t *reply = NULL;
    kevo_error gerr;
    kevo_error_init(&gerr);
    kevo_status rc = kevo__gpu_client_poll(ev->gpu, timeout_ms, &reply, &gerr);
    job *j = ev->running;
    if (rc == KEVO_OK && !reply)
        return KEVO_OK;
    ev->running = NULL;
    if (rc == KEVO_ETIMEDOUT)
        return finish_sent(ev, j, KEVO_VERDICT_TIMEOUT, gerr.text, err);
    if (rc != KEVO_OK) {
        /* A worker that died without a verdict: a fault of the kernel as
         * far as anyone can tell, with how the process ended. */
        return finish_sent(ev, j, KEVO_VERDICT_WORKER_DIED, gerr.text, err);
    }
    if (resend(ev, j, reply)) {
        json_decref(reply);
        return KEVO_OK;
    }
    kevo_shape_set set = job_set(j);
    kevo_eval_result *res = NULL;
    kevo_compile_info ci;
    figures f;
    figures_of(ev, &f);
    rc = kevo__eval_result_new(j->tr->task, j->cand, set, reply,
                               compile_info(j->compiled, &ci), &f.ctx, &res,
                               err);
    if (rc != KEVO_OK) {
        json_decref(reply);
        char why[KEVO_ERROR_TEXT_SIZE + 64];
        snprintf(why, sizeof why, "the GPU worker's reply is malformed: %s",
                 err ? err->text : "");
        if (err)
            kevo_error_init(err);
        kevo__gpu_client_restart(ev->gpu, NULL);
        return finish_sent(ev, j, KEVO_VERDICT_WORKER_DIED, why, err);
    }
    take_reference_times(j->tr, set, res);
    size_t nshapes = kevo_task_shape_count(j->tr->task, set);
    kevo__eval_result_set_baseline(res, KEVO_BASELINE_SEED,
                                   j->tr->seed_times[set], nshapes, NULL);
    kevo__eval_result_set_baseline(res, KEVO_BASELINE_REFERENCE,
                                   j->tr->ref_times[set], nshapes, NULL);
    pairing p = {0};
    if ((j->flags & KEVO_EVAL_PAIRED) && !pairing_read(&p, j, reply)) {
        pairing_free(&p);
        json_decref(reply);
        kevo_eval_result_free(res);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    if (j->flags & KEVO_EVAL_PAIRED)
        pairing_apply(&p, j, res);
    if (kevo_eval_result_verdict(res) == KEVO_VERDICT_FAULT) {
        /* The worker ends itself after a fault; start the next one now. */
        kevo_error rerr;
        kevo_error_init(&rerr);
        kevo__gpu_client_restart(ev->gpu, &rerr);
    }
    rc = KEVO_OK;
    for (size_t k = 0; k < j->nsent && rc == KEVO_OK; k++)
        rc = member_result(ev, j, k, reply, res, &p, err);
    j->nsent = 0;
    pairing_free(&p);
    json_decref(reply);
    job_finish(ev, j, res);
    return rc;
}

/* One round: collect compiles, dispatch to the GPU, read the GPU, waiting
 * up to timeout_ms for something to happen. */
kevo_status kevo__ev_pump(kevo_evaluator *ev, int timeout_ms, kevo_error *err)
{
    kevo_status rc;
    kevo__compile_result *cr = NULL;
    uint64_t finished = ev->finished;
    while ((rc = kevo__compile_pool_poll(ev->pool, 0, &cr, err)) == KEVO_OK &&
           cr) {
        if ((rc = compiled(ev, cr, err)) != KEVO_OK)
            return rc;
    }
    if (rc != KEVO_OK && rc != KEVO_DONE)
        return rc;
    if ((rc = dispatch(ev, err)) != KEVO_OK)
        return rc;
    if (ev->gpu && kevo__gpu_client_busy(ev->gpu)) {
        if ((rc = kevo__ev_gpu_step(ev, 0, err)) != KEVO_OK)
            return rc;
        /* The GPU may be free again: give it the next job before anything
         * else, so that it never waits on the caller. */
        if ((rc = dispatch(ev, err)) != KEVO_OK)
            return rc;
    }
    /* Something finished: the caller has a result to take, so do not
     * wait. */
    if (timeout_ms == 0 || ev->finished != finished)
        return KEVO_OK;
    /* Wait on the compile processes and the GPU worker together. */
    size_t cap = kevo__compile_pool_processes(ev->pool) + 1;
    struct pollfd *fds = calloc(cap, sizeof *fds);
    if (!fds)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    size_t n = kevo__compile_pool_pollfds(ev->pool, fds, cap - 1);
    int wait = kevo__compile_pool_timeout_ms(ev->pool);
    if (ev->gpu && kevo__gpu_client_busy(ev->gpu)) {
        fds[n].fd = kevo__gpu_client_fd(ev->gpu);
        fds[n++].events = POLLIN;
        int left = kevo__ms_left(kevo__gpu_client_deadline(ev->gpu));
        if (left >= 0 && (wait < 0 || left < wait))
            wait = left;
    }
    if (timeout_ms >= 0 && (wait < 0 || timeout_ms < wait))
        wait = timeout_ms;
    if (poll(fds, n, wait) < 0 && errno != EINTR) {
        int e = errno;
        free(fds);
        return kevo__error_errno(err, e, NULL, "poll");
    }
    free(fds);
    return KEVO_OK;
}

/* Removes and returns the oldest finished visible job's result, dropping
 * finished hidden jobs on the way. */
kevo_eval_result *kevo__ev_take_finished(kevo_evaluator *ev)
{
    job *prev = NULL;
    for (job *j = ev->jobs; j;) {
        job *next = j->next;
        if (j->state == JOB_DONE && (j->hidden || j->result)) {
            if (prev)
                prev->next = next;
            else
                ev->jobs = next;
            if (ev->jobs_tail == j)
                ev->jobs_tail = prev;
            kevo_eval_result *res = j->hidden ? NULL : j->result;
            if (!j->hidden)
                j->result = NULL;
            kevo__ev_job_free(j);
            if (res)
                return res;
            j = next;
            continue;
        }
        prev = j;
        j = next;
    }
    return NULL;
}

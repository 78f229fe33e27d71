/*
 * evaluator_pipeline.c: the evaluator's jobs on their way. It checks a
 * candidate against the task and the device, sends it through the compile
 * pool, and hands compiled candidates to the free slots, one job per
 * device at a time (with the members of its group, and the seed when the
 * timing is paired), in the order they were submitted;
 * evaluator_replies.c turns the workers' replies into results.
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
        size_t nl = kevo_candidate_launch_count(cand);
        kevo_launch_geometry *geom = calloc(nl + 1, sizeof *geom);
        if (!geom) {
            kevo_vars_free(env);
            *nomem = true;
            return NULL;
        }
        kevo_error_init(&e);
        if (!why &&
            kevo__launches_at(task, cand, env, geom, NULL, NULL, &e) != KEVO_OK)
            why = kevo__asprintf("shape %zu: %s", s, e.text);
        for (size_t l = 0; !why && l < nl; l++) {
            const kevo_launch_geometry g = geom[l];
            if (!g.runs)
                continue;
            if ((int64_t)g.block[0] * g.block[1] * g.block[2] > max_threads)
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
        }
        free(geom);
        kevo_vars_free(env);
    }
    if (!why && nshapes == 0 && set == KEVO_SHAPES_HELD_OUT)
        why = kevo__strdup("the task has no held-out shapes");
    return why;
}

/* ---- results ------------------------------------------------------------ */

void kevo__ev_figures_of(const kevo_evaluator *ev, int slot,
                         kevo__ev_figures *f)
{
    memset(f, 0, sizeof *f);
    /* A result decided before any GPU is figured with the first device's
     * ceilings, as with one device. */
    const evslot *sl = ev->nslots == 0 ? NULL
                       : slot >= 0     ? &ev->slots[slot]
                                       : &ev->slots[0];
    const kevo__ceilings *c = sl ? &sl->ceilings : NULL;
    if (c) {
        f->ceilings.bandwidth = c->has_bandwidth ? c->bandwidth : 0;
        for (int p = 0; p < KEVO__PEAK_COUNT; p++)
            f->ceilings.peak[p] = kevo__ceilings_peak(c, (kevo_peak)p);
        f->ceilings.launch = c->has_launch ? c->launch : 0;
    }
    f->ctx.ceilings = ev->compile_only ? NULL : &f->ceilings;
    f->ctx.device = sl && slot >= 0 ? sl->device : ev->device;
    f->ctx.fitness = ev->str[KEVO_EVAL_FITNESS]
                         ? kevo__fitness_find(ev->str[KEVO_EVAL_FITNESS])
                         : NULL;
    f->ctx.suspicious = (double)ev->opt[KEVO_EVAL_SUSPICIOUS_PPM] / 1e6;
}

const kevo_compile_info *kevo__ev_compile_info(const kevo__compile_result *cr,
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

kevo_shape_set kevo__ev_job_set(const job *j)
{
    return (j->flags & KEVO_EVAL_HELD_OUT) ? KEVO_SHAPES_HELD_OUT
                                           : KEVO_SHAPES_TRAIN;
}

bool kevo__ev_is_seed_job(const job *j)
{
    const kevo_candidate *seed = kevo_task_seed(j->tr->task);
    return j->hidden ||
           (seed && kevo_candidate_hash(seed) == kevo_candidate_hash(j->cand));
}

int kevo__ev_base_slot(const kevo_evaluator *ev, const job *j)
{
    if (j->on >= 0)
        return j->on;
    if (j->slot >= 0)
        return j->slot;
    return ev->nslots == 1 ? 0 : -1;
}

void kevo__ev_job_finish(kevo_evaluator *ev, job *j, kevo_eval_result *res)
{
    kevo__eval_result_set_ticket(res, j->ticket);
    kevo__eval_result_set_seconds(res, KEVO_PHASE_TOTAL,
                                  (double)(kevo__now_ms() - j->submitted_ms) /
                                      1e3);
    if (j->on >= 0)
        kevo__eval_result_set_device(res, ev->slots[j->on].label);
    j->result = res;
    j->state = JOB_DONE;
    ev->finished++;
    kevo_shape_set set = kevo__ev_job_set(j);
    int b = kevo__ev_base_slot(ev, j);
    /* The seed's times are the baseline of the device that measured them,
     * whether the seed ran hidden or was submitted (a search's first
     * evaluation): at the shapes where it was correct, even when it failed
     * at a later one. */
    if (kevo__ev_is_seed_job(j) && b >= 0 &&
        !(j->flags & (KEVO_EVAL_COMPILE | KEVO_EVAL_NO_TIMING))) {
        taskbase *base = &j->tr->base[b];
        size_t n = kevo_task_shape_count(j->tr->task, set);
        double *t = kevo__ev_nan_array(n);
        kevo__eval_result_times(res, KEVO_BASELINE_SEED, t, n);
        for (size_t i = 0; t && i < res->nshapes; i++) {
            const kevo_shape_result *r = &res->shapes[i].r;
            if (r->index < n && r->correct && t[r->index] > 0)
                base->seed_times[set][r->index] = t[r->index];
        }
        free(t);
        base->seed_done[set] = true;
    }
}

kevo_status kevo__ev_finish_failure(kevo_evaluator *ev, job *j,
                                    kevo_verdict verdict, const char *reason,
                                    kevo_error *err)
{
    kevo_eval_result *res = NULL;
    kevo_compile_info ci;
    kevo__ev_figures f;
    kevo__ev_figures_of(ev, j->on, &f);
    kevo_status rc = kevo__eval_result_new_failure(
        j->tr->task, j->cand, kevo__ev_job_set(j), verdict, reason,
        kevo__ev_compile_info(j->compiled, &ci), &f.ctx, &res, err);
    if (rc != KEVO_OK)
        return rc;
    kevo__ev_job_finish(ev, j, res);
    return KEVO_OK;
}

kevo_status kevo__ev_finish_sent(kevo_evaluator *ev, job *j,
                                 kevo_verdict verdict, const char *reason,
                                 kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    for (size_t i = 0; i < j->nsent && rc == KEVO_OK; i++)
        rc = kevo__ev_finish_failure(ev, j->sent[i], verdict, reason, err);
    j->nsent = 0;
    return rc == KEVO_OK ? kevo__ev_finish_failure(ev, j, verdict, reason, err)
                         : rc;
}

job *kevo__ev_job_add(kevo_evaluator *ev, taskrec *tr,
                      const kevo_candidate *cand, unsigned flags, bool hidden,
                      int slot, kevo_error *err)
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
    j->slot = slot;
    j->on = -1;
    j->submitted_ms = kevo__now_ms();
    if (ev->jobs_tail)
        ev->jobs_tail->next = j;
    else
        ev->jobs = j;
    ev->jobs_tail = j;
    bool nomem = false;
    char *why = launch_problem(ev, tr->task, cand, kevo__ev_job_set(j), &nomem);
    if (nomem) {
        kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        j->state = JOB_DONE; /* dropped by the next collection */
        return NULL;
    }
    if (why) {
        kevo_status rc =
            kevo__ev_finish_failure(ev, j, KEVO_VERDICT_REJECTED, why, err);
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

/* The task's kernel k (KEVO__EV_REFERENCE, KEVO__EV_BASELINE). */
static const kevo_candidate *task_kernel(const taskrec *tr, int k)
{
    return k == KEVO__EV_BASELINE ? kevo_task_baseline(tr->task)
                                  : kevo_task_reference(tr->task);
}

/* A compile finished: one of a task's own kernels or a job's candidate. */
static kevo_status compiled(kevo_evaluator *ev, kevo__compile_result *cr,
                            kevo_error *err)
{
    static const char *const what[KEVO__EV_TASK_KERNELS] = {"reference",
                                                            "baseline"};
    for (taskrec *tr = ev->tasks; tr; tr = tr->next) {
        for (int k = 0; k < KEVO__EV_TASK_KERNELS; k++) {
            taskkernel *tk = &tr->kernels[k];
            if (tk->job != cr->id)
                continue;
            tk->job = 0;
            const kevo_candidate *cand = task_kernel(tr, k);
            kevo_error mismatch = KEVO__ERROR_INIT;
            char *why = NULL;
            if (!cr->ok) {
                why = kevo__launch_missing_kernel(cand, cr->error, cr->log);
                tk->error = kevo__asprintf("the task's %s does not compile: %s",
                                           what[k],
                                           why         ? why
                                           : cr->error ? cr->error
                                                       : "compile error");
            } else if (kevo__launch_check_ptx(
                           tr->task, cand, cr->ptx, cr->ptx_len, cr->lowered,
                           cr->nlowered, &mismatch) != KEVO_OK) {
                tk->error = kevo__asprintf(
                    "the task's %s does not match its launches: %s", what[k],
                    mismatch.text);
            } else {
                tk->cr = cr;
                cr = NULL;
            }
            free(why);
            kevo__compile_result_free(cr);
            return KEVO_OK;
        }
    }
    job *j = job_by_compile(ev, cr->id);
    if (!j) {
        kevo__compile_result_free(cr);
        return KEVO_OK;
    }
    j->compiled = cr;
    if (!cr->ok) {
        char *why = kevo__launch_missing_kernel(j->cand, cr->error, cr->log);
        kevo_status rc =
            kevo__ev_finish_failure(ev, j, KEVO_VERDICT_COMPILE_ERROR,
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
        return kevo__ev_finish_failure(ev, j, KEVO_VERDICT_REJECTED,
                                       mismatch.text, err);
    if (kevo__ev_is_seed_job(j) && !j->tr->seed_cubin && cr->cubin_len > 0) {
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
        kevo__ev_figures f;
        kevo__ev_figures_of(ev, -1, &f);
        kevo_status rc = kevo__eval_result_new(
            j->tr->task, j->cand, kevo__ev_job_set(j), NULL,
            kevo__ev_compile_info(cr, &ci), &f.ctx, &res, err);
        if (rc != KEVO_OK)
            return rc;
        kevo__ev_job_finish(ev, j, res);
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
 * j->seed_sent, the seed) to the worker of slot j->on, and its deadline. */
static json_t *eval_message(kevo_evaluator *ev, job *j, bool time_reference,
                            int64_t *deadline)
{
    kevo_shape_set set = kevo__ev_job_set(j);
    taskrec *tr = j->tr;
    const taskbase *base = &tr->base[j->on];
    size_t k = (size_t)ev->opt[KEVO_EVAL_INPUT_SEEDS];
    size_t a = (size_t)kevo_rng_uniform_int(ev->rng, k);
    size_t b = (a + 1 + (size_t)kevo_rng_uniform_int(ev->rng, k - 1)) % k;
    bool timing = !(j->flags & KEVO_EVAL_NO_TIMING);
    json_t *times = timing_json(ev, j, timing);
    json_t *cand = kevo__candidate_to_json(j->cand);
    const kevo__compile_result *ref = tr->kernels[KEVO__EV_REFERENCE].cr;
    const kevo__compile_result *bl = tr->kernels[KEVO__EV_BASELINE].cr;
    json_t *msg =
        json_pack("{s:s, s:I, s:s, s:o, s:s, s:[I,I], s:I, s:I, "
                  "s:o, s:b, s:b, s:b, s:o, s:o}",
                  "op", "eval", "id", (json_int_t)j->ticket, "task_key",
                  tr->key_text, "candidate", cand ? cand : json_null(), "set",
                  set == KEVO_SHAPES_TRAIN ? "train" : "held_out", "seeds",
                  (json_int_t)(tr->seeds[set][a] >> 1),
                  (json_int_t)(tr->seeds[set][b] >> 1), "reference_cubin_bytes",
                  (json_int_t)ref->cubin_len, "candidate_cubin_bytes",
                  (json_int_t)j->compiled->cubin_len, "timing",
                  times ? times : json_null(), "profile",
                  ev->opt[KEVO_EVAL_PROFILE] != 0 && timing, "flush_l2",
                  ev->opt[KEVO_EVAL_FLUSH_L2] != 0, "time_reference",
                  time_reference && timing, "reference_kernels",
                  kernel_names(kevo_task_reference(tr->task), ref),
                  "candidate_kernels", kernel_names(j->cand, j->compiled));
    if (msg && bl &&
        (json_object_set_new(msg, "baseline_cubin_bytes",
                             json_integer((json_int_t)bl->cubin_len)) ||
         json_object_set_new(msg, "baseline_kernels",
                             kernel_names(kevo_task_baseline(tr->task), bl)))) {
        json_decref(msg);
        msg = NULL;
    }
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
                if (base->seed_times[set][i] > 0)
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

/* Whether j can go to slot now: it is not pinned to another slot, every
 * other unfinished member of its group is compiled too, and a paired job
 * waits for the seed's own evaluation of the set on that slot's device
 * (its correctness there decides where it is timed). */
static bool can_dispatch(const job *j, size_t slot)
{
    if (j->slot >= 0 && (size_t)j->slot != slot)
        return false;
    for (size_t i = 0; j->grp && i < j->grp->n; i++) {
        const job *m = j->grp->member[i];
        if (m && m != j && m->state != JOB_DONE && m->state != JOB_READY)
            return false;
    }
    kevo_shape_set set = kevo__ev_job_set(j);
    return !(j->flags & KEVO_EVAL_PAIRED) || kevo__ev_is_seed_job(j) ||
           !kevo_task_seed(j->tr->task) || j->tr->base[slot].seed_done[set];
}

/* Fills j->sent with the members of its group that go with it (to the
 * same slot: a group is one message), and j->seed_sent. */
static bool choose_companions(job *j, size_t slot)
{
    j->nsent = 0;
    j->seed_sent = false;
    j->on = (int)slot;
    if (j->grp) {
        free(j->sent);
        if (!(j->sent = calloc(j->grp->n, sizeof *j->sent)))
            return false;
        for (size_t i = 0; i < j->grp->n; i++) {
            job *m = j->grp->member[i];
            if (m && m != j && m->state == JOB_READY) {
                j->sent[j->nsent++] = m;
                m->state = JOB_RUNNING;
                m->on = (int)slot;
            }
        }
    }
    bool seed_member = kevo__ev_is_seed_job(j);
    for (size_t i = 0; i < j->nsent; i++)
        seed_member = seed_member || kevo__ev_is_seed_job(j->sent[i]);
    j->seed_sent = (j->flags & KEVO_EVAL_PAIRED) && !seed_member &&
                   j->tr->seed_cubin != NULL;
    return true;
}

/* How long a worker may take to load a task. */
#define TASK_TIMEOUT_MS 60000

/* The task reaches each worker process once: sent now, unless the worker
 * holds it already. */
static kevo_status send_task(kevo__gpu_client *gpu, taskrec *tr,
                             kevo_error *err)
{
    if (kevo__gpu_client_has_task(gpu, tr->key_text))
        return KEVO_OK;
    return kevo__gpu_client_send_task(gpu, tr->key_text, tr->json,
                                      kevo__now_ms() + TASK_TIMEOUT_MS, err);
}

/* The job slot takes next: the first in submission order that may go
 * there and whose reference is compiled; NULL when none. A hidden seed
 * pinned to the slot goes first there: the slot waits for its compile,
 * so that the device has its baseline before the candidates. */
static job *next_job(kevo_evaluator *ev, size_t slot)
{
    for (job *j = ev->jobs; j; j = j->next) {
        bool pinned_seed = j->hidden && j->slot == (int)slot;
        if (j->state == JOB_READY && can_dispatch(j, slot) &&
            !j->tr->kernels[KEVO__EV_REFERENCE].job &&
            !j->tr->kernels[KEVO__EV_BASELINE].job)
            return j;
        if (pinned_seed && (j->state == JOB_COMPILING || j->state == JOB_READY))
            return NULL;
    }
    return NULL;
}

/* Sends the next job to the worker of slot, when it is free. */
static kevo_status dispatch_slot(kevo_evaluator *ev, size_t slot,
                                 kevo_error *err)
{
    evslot *sl = &ev->slots[slot];
    if (kevo__gpu_client_busy(sl->gpu))
        return KEVO_OK;
    job *j = next_job(ev, slot);
    if (!j)
        return KEVO_OK;
    taskrec *tr = j->tr;
    const kevo__compile_result *ref = tr->kernels[KEVO__EV_REFERENCE].cr;
    const kevo__compile_result *bl = tr->kernels[KEVO__EV_BASELINE].cr;
    if (!ref)
        return kevo__ev_finish_failure(
            ev, j, KEVO_VERDICT_REJECTED,
            tr->kernels[KEVO__EV_REFERENCE].error
                ? tr->kernels[KEVO__EV_REFERENCE].error
                : "the task has no reference",
            err);
    if (kevo_task_baseline(tr->task) && !bl)
        return kevo__ev_finish_failure(
            ev, j, KEVO_VERDICT_REJECTED,
            tr->kernels[KEVO__EV_BASELINE].error
                ? tr->kernels[KEVO__EV_BASELINE].error
                : "the task's baseline is not compiled",
            err);
    if (!choose_companions(j, slot))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_error task_err;
    kevo_error_init(&task_err);
    if (send_task(sl->gpu, tr, &task_err) != KEVO_OK) {
        if (task_err.code == KEVO_ENOMEM)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        return kevo__ev_finish_sent(ev, j, KEVO_VERDICT_WORKER_DIED,
                                    task_err.text, err);
    }
    kevo_shape_set set = kevo__ev_job_set(j);
    taskbase *base = &tr->base[slot];
    bool time_ref = !base->ref_timed[set] || (j->flags & KEVO_EVAL_PAIRED);
    int64_t deadline;
    json_t *msg = eval_message(ev, j, time_ref, &deadline);
    size_t len =
        ref->cubin_len + (bl ? bl->cubin_len : 0) + j->compiled->cubin_len;
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
    memcpy(at, ref->cubin, ref->cubin_len);
    at += ref->cubin_len;
    if (bl) {
        memcpy(at, bl->cubin, bl->cubin_len);
        at += bl->cubin_len;
    }
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
    kevo_status rc =
        kevo__gpu_client_send(sl->gpu, msg, payload, len, deadline, &send_err);
    json_decref(msg);
    free(payload);
    if (rc != KEVO_OK)
        return kevo__ev_finish_sent(ev, j, KEVO_VERDICT_WORKER_DIED,
                                    send_err.text, err);
    j->timed_ref =
        time_ref && !(j->flags & KEVO_EVAL_NO_TIMING) && !base->ref_timed[set];
    if (time_ref && !(j->flags & KEVO_EVAL_NO_TIMING))
        base->ref_timed[set] = true;
    j->state = JOB_RUNNING;
    sl->running = j;
    return KEVO_OK;
}

/* Every free slot takes the next job. */
static kevo_status dispatch(kevo_evaluator *ev, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    for (size_t s = 0; s < ev->nslots && rc == KEVO_OK; s++)
        rc = dispatch_slot(ev, s, err);
    return rc;
}

/* One round: collect compiles, dispatch to the free slots, read the busy
 * ones, waiting up to timeout_ms for something to happen. */
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
    bool stepped = false;
    for (size_t s = 0; s < ev->nslots; s++) {
        if (!kevo__gpu_client_busy(ev->slots[s].gpu))
            continue;
        if ((rc = kevo__ev_gpu_step(ev, s, 0, err)) != KEVO_OK)
            return rc;
        stepped = true;
    }
    /* A GPU may be free again: give it the next job before anything else,
     * so that it never waits on the caller. */
    if (stepped && (rc = dispatch(ev, err)) != KEVO_OK)
        return rc;
    /* Something finished: the caller has a result to take, so do not
     * wait. */
    if (timeout_ms == 0 || ev->finished != finished)
        return KEVO_OK;
    /* Wait on the compile processes and the GPU workers together. */
    size_t cap = kevo__compile_pool_processes(ev->pool) + ev->nslots + 1;
    struct pollfd *fds = calloc(cap, sizeof *fds);
    if (!fds)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    size_t n = kevo__compile_pool_pollfds(ev->pool, fds, cap - ev->nslots);
    int wait = kevo__compile_pool_timeout_ms(ev->pool);
    for (size_t s = 0; s < ev->nslots; s++) {
        kevo__gpu_client *gpu = ev->slots[s].gpu;
        if (!kevo__gpu_client_busy(gpu))
            continue;
        fds[n].fd = kevo__gpu_client_fd(gpu);
        fds[n++].events = POLLIN;
        int left = kevo__ms_left(kevo__gpu_client_deadline(gpu));
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

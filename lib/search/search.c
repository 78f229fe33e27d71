/*
 * search.c: the search engine's loop. Options, operators, the pipeline of
 * operator requests and evaluations, stop conditions and the phases after
 * the search proper (draining, gating, tuning, the last checkpoint).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fitness/fitness.h"
#include "model/devprops.h"
#include "search_private.h"

static const char *const stop_names[] = {
    "none",   "evaluations", "time",      "tokens",     "cost",
    "target", "stagnation",  "exhausted", "interrupted"};

const char *kevo_stop_reason_name(kevo_stop_reason reason)
{
    if ((unsigned)reason >= KEVO_ARRAY_SIZE(stop_names))
        return "unknown";
    return stop_names[reason];
}

/* ---- creation ------------------------------------------------------------ */

kevo_status kevo_search_new(const kevo_task *task, kevo_search **out,
                            kevo_error *err)
{
    if (out)
        *out = NULL;
    if (!task || !out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_search_new: task and out must not be "
                               "NULL");
    kevo_search *s = calloc(1, sizeof *s);
    if (!s)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    s->task = task;
    kevo__search_options_default(s->opt);
    s->best = -INFINITY;
    s->champion = -1;
    s->next_id = 1;
    kevo_status rc = kevo_operator_host_new(task, 1, &s->host, err);
    if (rc == KEVO_OK)
        rc = kevo_promptpool_new(32, &s->pool, err);
    if (rc != KEVO_OK) {
        kevo_search_free(s);
        return rc;
    }
    *out = s;
    return KEVO_OK;
}

void kevo__search_job_clear(kevo__search_job *job)
{
    kevo_candidate_free(job->cand);
    kevo_eval_result_free(job->result);
    free(job->fail_kind);
    free(job->fail_diagnostic);
    job->cand = NULL;
    job->result = NULL;
    job->fail_kind = job->fail_diagnostic = NULL;
}

void kevo_search_free(kevo_search *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->njobs; i++)
        kevo__search_job_clear(&s->jobs[i]);
    free(s->jobs);
    free(s->reqs);
    kevo_operator_host_free(s->host);
    for (size_t i = 0; i < s->nops; i++)
        free(s->ops[i].plugin);
    free(s->ops);
    kevo_promptpool_free(s->pool);
    for (size_t i = 0; i < s->nislands; i++)
        kevo_archive_free(s->islands[i]);
    free(s->islands);
    kevo_rng_free(s->rng);
    kevo_rundir_close(s->dir);
    free(s->command);
    free(s->history);
    for (size_t i = 0; i < s->ngates; i++) {
        free(s->gates[i].reason);
        kevo_eval_result_free(s->gates[i].train);
        kevo_eval_result_free(s->gates[i].held);
    }
    free(s->gates);
    free(s->finalists);
    kevo_candidate_free(s->champion_cand);
    for (size_t i = 0; i < s->nobs; i++) {
        kevo_vars_free(s->obs[i].params);
        free(s->obs[i].times);
    }
    free(s->obs);
    for (size_t i = 0; i < s->nnotes; i++)
        free(s->notes[i].json);
    free(s->notes);
    kevo__search_tune_free(s);
    kevo__search_repair_free(s);
    kevo__search_validity_free(s);
    free(s->dispatch);
    free(s);
}

kevo_status kevo_search_set_evaluator(kevo_search *s, kevo_evaluator *ev,
                                      kevo_error *err)
{
    if (!s || !ev)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_search_set_evaluator: NULL argument");
    if (s->started_flag || s->score)
        return kevo__error_set(err, KEVO_ESTATE,
                               "kevo_search_set_evaluator: the search has "
                               "started or scores with a function");
    s->ev = ev;
    return KEVO_OK;
}

kevo_status kevo_search_set_score_fn(kevo_search *s, kevo_search_score_fn fn,
                                     void *user, kevo_error *err)
{
    if (!s || !fn)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_search_set_score_fn: NULL argument");
    if (s->started_flag || s->ev)
        return kevo__error_set(err, KEVO_ESTATE,
                               "kevo_search_set_score_fn: the search has "
                               "started or has an evaluator");
    s->score = fn;
    s->score_user = user;
    return KEVO_OK;
}

kevo_operator_host *kevo_search_host(kevo_search *s)
{
    return s ? s->host : NULL;
}

kevo_promptpool *kevo_search_prompts(kevo_search *s)
{
    return s ? s->pool : NULL;
}

kevo_status kevo_search_set_callback(kevo_search *s, kevo_search_callback fn,
                                     void *user, kevo_error *err)
{
    if (!s)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_search_set_callback: search is NULL");
    s->callback = fn;
    s->callback_user = user;
    return KEVO_OK;
}

kevo_status kevo_search_add_operator(kevo_search *s, const char *plugin,
                                     const char *name, const char *config_json,
                                     double weight, kevo_error *err)
{
    if (!s || !plugin)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_search_add_operator: NULL argument");
    if (s->started_flag)
        return kevo__error_set(err, KEVO_ESTATE,
                               "kevo_search_add_operator: the search has "
                               "started");
    if (!isfinite(weight) || weight <= 0)
        return kevo__error_set(err, KEVO_ERANGE,
                               "operator %s: weight %g is not positive",
                               name ? name : plugin, weight);
    kevo__search_op *ops = realloc(s->ops, (s->nops + 1) * sizeof *ops);
    if (!ops)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    s->ops = ops;
    kevo__search_op *o = &ops[s->nops];
    memset(o, 0, sizeof *o);
    o->plugin = strdup(plugin);
    if (!o->plugin)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc =
        kevo_operator_new(s->host, plugin, name, config_json, &o->op, err);
    if (rc != KEVO_OK) {
        free(o->plugin);
        return rc;
    }
    o->weight = weight;
    o->prompts = kevo_operator_can_revise(o->op) != 0;
    s->nops++;
    return KEVO_OK;
}

void kevo_search_interrupt(kevo_search *s)
{
    if (s)
        s->interrupted = 1;
}

/* ---- clocks, logging, events --------------------------------------------- */

double kevo__search_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double kevo__search_elapsed(const kevo_search *s)
{
    if (!s->started_flag)
        return 0;
    return kevo__search_now() - s->started;
}

kevo_status kevo__search_log(kevo_search *s, const char *type, json_t *fields,
                             kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    if (!fields)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    if (s->dir) {
        char *text = json_dumps(fields, JSON_COMPACT);
        if (!text)
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        else
            rc = kevo_rundir_event(s->dir, type, text, err);
        free(text);
    }
    json_decref(fields);
    return rc;
}

void kevo__search_emit(kevo_search *s, const kevo_search_event *ev)
{
    if (s->callback)
        s->callback(s, ev, s->callback_user);
}

/* ---- submitting ---------------------------------------------------------- */

kevo_status kevo__search_submit(kevo_search *s, kevo__job_kind kind,
                                kevo_candidate *cand,
                                const kevo__search_job *proto, unsigned flags,
                                kevo_error *err)
{
    if (s->njobs == s->cjobs) {
        size_t c = s->cjobs ? 2 * s->cjobs : 16;
        kevo__search_job *j = realloc(s->jobs, c * sizeof *j);
        if (!j) {
            kevo_candidate_free(cand);
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        }
        s->jobs = j;
        s->cjobs = c;
    }
    kevo__search_job job = {0};
    if (proto)
        job = *proto;
    job.kind = kind;
    job.cand = cand;
    job.result = NULL;
    if (s->ev) {
        kevo_status rc = kevo_evaluator_submit(s->ev, s->task, cand, flags,
                                               &job.ticket, err);
        if (rc != KEVO_OK) {
            kevo_candidate_free(cand);
            return rc;
        }
    } else {
        job.ticket = ++s->next_ticket;
    }
    s->jobs[s->njobs++] = job;
    return KEVO_OK;
}

kevo_status kevo__search_submit_group(kevo_search *s, kevo__job_kind kind,
                                      kevo_candidate **cands, size_t n,
                                      unsigned flags, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    uint64_t *tickets = calloc(n ? n : 1, sizeof *tickets);
    if (!tickets || s->njobs + n > s->cjobs) {
        size_t c = s->cjobs ? s->cjobs : 16;
        while (c < s->njobs + n)
            c *= 2;
        kevo__search_job *j = tickets ? realloc(s->jobs, c * sizeof *j) : NULL;
        if (!j)
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        else {
            s->jobs = j;
            s->cjobs = c;
        }
    }
    if (rc == KEVO_OK)
        rc = kevo_evaluator_submit_group(s->ev, s->task,
                                         (const kevo_candidate *const *)cands,
                                         n, flags, tickets, err);
    for (size_t i = 0; i < n; i++) {
        if (rc != KEVO_OK) {
            kevo_candidate_free(cands[i]);
            continue;
        }
        kevo__search_job job = {0};
        job.kind = kind;
        job.cand = cands[i];
        job.ticket = tickets[i];
        job.parent_cell = KEVO_NO_CELL;
        job.parent_fitness = NAN;
        s->jobs[s->njobs++] = job;
    }
    free(tickets);
    return rc;
}

/* ---- the start ----------------------------------------------------------- */

static size_t auto_depth(const kevo_search *s)
{
    if (s->opt[KEVO_SEARCH_DEPTH] > 0)
        return (size_t)s->opt[KEVO_SEARCH_DEPTH];
    if (!s->ev)
        return 1;
    int64_t w = kevo_evaluator_get_int(s->ev, KEVO_EVAL_COMPILE_WORKERS);
    if (w <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        w = n > 0 ? n : 1;
    }
    return (size_t)w + 2 < 4 ? 4 : (size_t)w + 2;
}

/* Each operator's random stream restarts from the run seed, so that the
 * seed set after the host was made decides. */
static kevo_status reseed_operators(kevo_search *s, kevo_error *err)
{
    for (size_t i = 0; i < s->nops; i++) {
        char stream[256];
        snprintf(stream, sizeof stream, "operator:%s",
                 kevo_operator_name(s->ops[i].op));
        kevo_rng *r = kevo_rng_new((uint64_t)s->opt[KEVO_SEARCH_SEED], stream);
        char *state = NULL;
        kevo_status rc = r ? kevo_rng_save(r, &state) : KEVO_ENOMEM;
        if (rc == KEVO_OK)
            rc = kevo_rng_restore(kevo_operator_rng(s->ops[i].op), state, err);
        free(state);
        kevo_rng_free(r);
        if (rc != KEVO_OK)
            return kevo__error_set(err, rc, "out of memory");
    }
    return KEVO_OK;
}

/* Makes the islands and the engine's random stream (also done by
 * kevo_search_open_run() before it restores a checkpoint). */
kevo_status kevo__search_prepare(kevo_search *s, kevo_error *err)
{
    if (s->islands)
        return KEVO_OK;
    size_t k = (size_t)s->opt[KEVO_SEARCH_ISLANDS];
    s->islands = calloc(k, sizeof *s->islands);
    if (!s->islands)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    s->nislands = k;
    for (size_t i = 0; i < k; i++) {
        kevo_status rc =
            kevo_archive_new_for_task(s->task, &s->islands[i], err);
        if (rc != KEVO_OK)
            return rc;
    }
    s->rng = kevo_rng_new((uint64_t)s->opt[KEVO_SEARCH_SEED], "search");
    if (!s->rng)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    return KEVO_OK;
}

/* The device operators plan for: the evaluator's GPU, its properties for
 * checks and, for prompts, its name and measured ceilings (bandwidth,
 * launch latency, the FP32 and FP64 peaks, which are measured at start,
 * and the peak the task counts its flops against). */
static kevo_status set_device(kevo_search *s, kevo_error *err)
{
    const kevo_vars *props = kevo_evaluator_device(s->ev);
    char *json = NULL;
    if (props) {
        kevo_peak peak = kevo_task_peak(s->task);
        kevo_ceilings c = {.bandwidth = kevo_evaluator_bandwidth(s->ev),
                           .launch = kevo_evaluator_latency(s->ev)};
        c.peak[KEVO_PEAK_FP32] = kevo_evaluator_peak(s->ev, KEVO_PEAK_FP32);
        c.peak[KEVO_PEAK_FP64] = kevo_evaluator_peak(s->ev, KEVO_PEAK_FP64);
        if ((unsigned)peak < KEVO__PEAK_COUNT)
            c.peak[peak] = kevo_evaluator_peak(s->ev, peak);
        json = kevo__devprops_json(kevo_evaluator_device_name(s->ev), props, &c,
                                   peak);
        if (!json)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    kevo_status rc = kevo_operator_host_set_device(s->host, props, json, err);
    free(json);
    return rc;
}

static kevo_status start(kevo_search *s, kevo_error *err)
{
    if (!s->ev && !s->score)
        return kevo__error_set(err, KEVO_ESTATE,
                               "the search has neither an evaluator nor a "
                               "scoring function");
    if (s->nops == 0)
        return kevo__error_set(err, KEVO_ESTATE,
                               "the search has no operator: add one with "
                               "kevo_search_add_operator()");
    kevo_status rc = kevo__search_prepare(s, err);
    if (rc == KEVO_OK && !s->resumed)
        rc = reseed_operators(s, err);
    if (rc == KEVO_OK)
        rc = kevo_operator_host_set_archive(s->host, s->islands[0], err);
    if (rc == KEVO_OK && s->ev)
        rc = set_device(s, err);
    if (rc != KEVO_OK)
        return rc;
    s->started_flag = true;
    s->started = kevo__search_now();
    s->evaluations_start = s->evaluations;

    json_t *names = json_array();
    for (size_t i = 0; i < s->nops; i++)
        json_array_append_new(names,
                              json_string(kevo_operator_name(s->ops[i].op)));
    rc = kevo__search_log(
        s, "start",
        json_pack("{s:s, s:I, s:b, s:I, s:o, s:I, s:s?}", "task",
                  kevo_task_name(s->task), "seed",
                  (json_int_t)s->opt[KEVO_SEARCH_SEED], "resumed", s->resumed,
                  "evaluations", (json_int_t)s->evaluations, "operators", names,
                  "islands", (json_int_t)s->nislands, "command", s->command),
        err);
    if (rc != KEVO_OK || s->resumed)
        return rc;

    /* The seed is the first evaluation: the archive starts from it. */
    const kevo_candidate *seed = kevo_task_seed(s->task);
    if (!seed)
        return kevo__error_set(err, KEVO_EINVALID,
                               "task %s has no seed kernel to start from",
                               kevo_task_name(s->task));
    kevo_candidate *c = kevo_candidate_copy(seed);
    if (!c)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_candidate_set_id(c, s->next_id++);
    rc = kevo_operator_host_mark_seen(s->host, c, err);
    if (rc != KEVO_OK) {
        kevo_candidate_free(c);
        return rc;
    }
    kevo__search_job proto = {
        .op = SIZE_MAX, .parent_cell = KEVO_NO_CELL, .parent_fitness = NAN};
    s->submitted++;
    s->seeded = true;
    return kevo__search_submit(s, KEVO__JOB_CHILD, c, &proto, 0, err);
}

/* ---- evaluations --------------------------------------------------------- */

/* Collects finished evaluations, waiting at most timeout_ms for the
 * first. */
static kevo_status collect(kevo_search *s, int timeout_ms, kevo_error *err)
{
    bool waiting = false;
    for (size_t i = 0; i < s->njobs && !waiting; i++)
        waiting = s->jobs[i].result == NULL;
    if (!waiting || !s->ev)
        return KEVO_OK;
    int t = timeout_ms;
    for (;;) {
        kevo_eval_result *res = NULL;
        kevo_status rc = kevo_evaluator_wait(s->ev, t, &res, err);
        if (rc == KEVO_ETIMEDOUT || rc == KEVO_DONE)
            return KEVO_OK;
        if (rc != KEVO_OK)
            return rc;
        uint64_t ticket = kevo_eval_result_ticket(res);
        size_t i = 0;
        while (i < s->njobs && s->jobs[i].ticket != ticket)
            i++;
        if (i < s->njobs && !s->jobs[i].result)
            s->jobs[i].result = res;
        else
            kevo_eval_result_free(res); /* dropped by an interrupt */
        t = 0;
    }
}

/* Judges the finished jobs at the front of the queue, in ticket order. */
static kevo_status judge_ready(kevo_search *s, kevo_error *err)
{
    while (s->njobs > 0) {
        kevo__search_job *job = &s->jobs[0];
        kevo_status rc;
        if (s->score && job->kind == KEVO__JOB_CHILD) {
            size_t nd = kevo_archive_dimension_count(s->islands[0]);
            double desc[64] = {0};
            double fitness = 0;
            if (nd > KEVO_ARRAY_SIZE(desc))
                return kevo__error_set(err, KEVO_ELIMIT,
                                       "too many behaviour dimensions");
            s->scoring = true;
            rc = s->score(s->task, job->cand, &fitness, desc, s->score_user,
                          err);
            s->scoring = false;
            job->fail_kind = s->score_kind; /* kevo_search_fail_candidate() */
            job->fail_diagnostic = s->score_diagnostic;
            s->score_kind = s->score_diagnostic = NULL;
            if (rc == KEVO_OK && (!isfinite(fitness) || fitness < 0))
                rc = kevo__error_set(
                    err, KEVO_ERANGE,
                    "the scoring function gave fitness %g "
                    "for candidate %llu",
                    fitness, (unsigned long long)kevo_candidate_id(job->cand));
            if (rc == KEVO_OK)
                rc = kevo__search_judge_scored(s, job, fitness, desc, err);
        } else {
            if (!job->result)
                return KEVO_OK;
            rc = job->kind == KEVO__JOB_TUNE_HELD
                     ? kevo__search_tune_judge(s, job, err)
                     : kevo__search_judge(s, job, err);
            if (job->kind == KEVO__JOB_TUNE_HELD)
                s->tune_pending--;
        }
        kevo__search_job_clear(&s->jobs[0]);
        memmove(&s->jobs[0], &s->jobs[1], (s->njobs - 1) * sizeof *s->jobs);
        s->njobs--;
        if (rc != KEVO_OK)
            return rc;
        if (s->since_checkpoint >=
            (uint64_t)s->opt[KEVO_SEARCH_CHECKPOINT_EVERY]) {
            rc = kevo__search_checkpoint(s, err);
            if (rc != KEVO_OK)
                return rc;
        }
        if (s->nislands > 1 &&
            s->since_migration >= (uint64_t)s->opt[KEVO_SEARCH_MIGRATE_EVERY]) {
            s->since_migration = 0;
            rc = kevo__search_migrate(s, err);
            if (rc != KEVO_OK)
                return rc;
        }
    }
    return KEVO_OK;
}

/* ---- stopping ------------------------------------------------------------ */

static kevo_stop_reason stop_reason(kevo_search *s)
{
    const int64_t *o = s->opt;
    if (s->interrupted)
        return KEVO_STOP_INTERRUPTED;
    if (o[KEVO_SEARCH_MAX_EVALS] > 0 &&
        s->submitted >= (uint64_t)o[KEVO_SEARCH_MAX_EVALS])
        return KEVO_STOP_EVALUATIONS;
    if (o[KEVO_SEARCH_MAX_SECONDS] > 0 &&
        kevo__search_elapsed(s) >= (double)o[KEVO_SEARCH_MAX_SECONDS])
        return KEVO_STOP_TIME;
    uint64_t in = 0, out = 0;
    double cost = 0;
    kevo_operator_host_usage(s->host, &in, &out, &cost);
    if (o[KEVO_SEARCH_MAX_TOKENS] > 0 &&
        in + out >= (uint64_t)o[KEVO_SEARCH_MAX_TOKENS])
        return KEVO_STOP_TOKENS;
    if (o[KEVO_SEARCH_MAX_COST_MICROS] > 0 &&
        cost * 1e6 >= (double)o[KEVO_SEARCH_MAX_COST_MICROS])
        return KEVO_STOP_COST;
    if (o[KEVO_SEARCH_TARGET_PPM] > 0 &&
        s->best >= (double)o[KEVO_SEARCH_TARGET_PPM] / 1e6)
        return KEVO_STOP_TARGET;
    if (o[KEVO_SEARCH_STAGNATION] > 0 && s->evaluations > 0 &&
        s->evaluations - s->last_improvement >=
            (uint64_t)o[KEVO_SEARCH_STAGNATION])
        return KEVO_STOP_STAGNATION;
    if (s->exhausted_run >= 8 * s->nops &&
        kevo__search_children_in_flight(s) == 0 &&
        kevo__search_child_requests(s) == 0)
        return KEVO_STOP_EXHAUSTED;
    return KEVO_STOP_NONE;
}

/* Drops the work in flight (after an interrupt). */
static void drop_in_flight(kevo_search *s)
{
    for (size_t i = 0; i < s->njobs; i++)
        kevo__search_job_clear(&s->jobs[i]);
    s->njobs = 0;
}

static kevo_status finish(kevo_search *s, kevo_error *err)
{
    const char *state =
        s->stop == KEVO_STOP_INTERRUPTED ? "interrupted" : "finished";
    kevo_status rc = kevo__search_log(
        s, "stop",
        json_pack("{s:s, s:I}", "reason", kevo_stop_reason_name(s->stop), "n",
                  (json_int_t)s->evaluations),
        err);
    if (rc == KEVO_OK)
        rc = kevo__search_checkpoint(s, err);
    if (rc == KEVO_OK)
        rc = kevo__search_write_best(s, err);
    if (rc == KEVO_OK)
        rc = kevo__search_write_summary(s, state, err);
    s->phase = 4;
    kevo_search_event ev = {.size = sizeof ev,
                            .type = KEVO_SEARCH_STOPPED,
                            .fitness = isfinite(s->best) ? s->best : NAN};
    kevo__search_emit(s, &ev);
    return rc;
}

/* ---- the step ------------------------------------------------------------ */

static kevo_status search_phase(kevo_search *s, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    kevo_stop_reason why = stop_reason(s);
    if (why != KEVO_STOP_NONE) {
        s->stop = why;
        s->phase = 1;
        return KEVO_OK;
    }
    size_t depth = auto_depth(s);
    int64_t max = s->opt[KEVO_SEARCH_MAX_EVALS];
    /* Evaluations in flight keep the compile pool and the GPU busy;
     * requests to asynchronous operators (LLM replies) are capped apart, so
     * that slow replies never starve the GPU of the fast operators' work. */
    while (rc == KEVO_OK && s->njobs < depth && s->nreqs < depth) {
        uint64_t planned =
            s->submitted + kevo__search_child_requests(s) *
                               (uint64_t)s->opt[KEVO_SEARCH_CHILDREN];
        if (max > 0 && planned >= (uint64_t)max)
            break;
        bool sent;
        rc = kevo__search_request(s, &sent, err);
        if (rc == KEVO_OK && sent)
            rc = kevo__search_take_results(s, err);
        if (!sent || s->exhausted_run >= 8 * s->nops)
            break;
    }
    if (rc == KEVO_OK)
        rc = kevo__search_revise(s, err);
    return rc;
}

kevo_status kevo_search_step(kevo_search *s, int timeout_ms, kevo_error *err)
{
    if (!s)
        return kevo__error_set(err, KEVO_EINVAL, "kevo_search_step: NULL");
    if (s->phase == 4)
        return KEVO_DONE;
    kevo_status rc = KEVO_OK;
    if (!s->started_flag) {
        rc = start(s, err);
        if (rc != KEVO_OK && s->started_flag)
            goto fail; /* the search cannot go on */
        if (rc != KEVO_OK)
            return rc; /* set-up missing: the caller may fix it */
    }
    if (s->interrupted && s->phase < 4) {
        s->stop = KEVO_STOP_INTERRUPTED;
        drop_in_flight(s);
        rc = finish(s, err);
        return rc == KEVO_OK ? KEVO_DONE : rc;
    }
    if (s->phase == 0)
        rc = search_phase(s, err);

    /* Drive the operators and the evaluator. */
    if (rc == KEVO_OK)
        rc = kevo_operator_host_poll(s->host, 0, NULL, err);
    if (rc == KEVO_OK)
        rc = kevo__search_take_results(s, err);
    if (rc == KEVO_OK) {
        bool evals = false;
        for (size_t i = 0; i < s->njobs && !evals; i++)
            evals = s->jobs[i].result == NULL && s->ev;
        if (evals)
            rc = collect(
                s,
                s->nreqs ? (timeout_ms < 0 || timeout_ms > 5 ? 5 : timeout_ms)
                         : timeout_ms,
                err);
        else if (s->nreqs)
            rc = kevo_operator_host_poll(
                s->host, timeout_ms < 0 ? 100 : timeout_ms, NULL, err);
        if (rc == KEVO_OK)
            rc = kevo__search_take_results(s, err);
    }
    if (rc == KEVO_OK)
        rc = judge_ready(s, err);
    if (rc != KEVO_OK)
        goto fail;

    if (s->phase == 1 && s->njobs == 0 && kevo__search_child_requests(s) == 0)
        s->phase = 2;
    if (s->phase == 2) {
        bool done = true;
        if (s->ev)
            rc = kevo__search_final_gate(s, &done, err);
        if (rc == KEVO_OK && done)
            s->phase = 3;
    }
    if (rc == KEVO_OK && s->phase == 3) {
        if (!s->tune && s->ev && s->champion >= 0 && s->opt[KEVO_SEARCH_TUNE]) {
            int pending = 0;
            rc = kevo__search_tune_start(s, &pending, err);
            s->tune_pending = pending;
        }
        if (rc == KEVO_OK && s->tune_pending == 0) {
            if (s->tune)
                rc = kevo__search_tune_finish(s, err);
            if (rc == KEVO_OK)
                rc = finish(s, err);
            if (rc == KEVO_OK)
                return KEVO_DONE;
        }
    }
    if (rc == KEVO_OK)
        return KEVO_OK;
fail:
    s->stop = s->stop ? s->stop : KEVO_STOP_INTERRUPTED;
    s->phase = 4;
    if (s->dir)
        kevo__search_write_summary(s, "failed", NULL);
    return rc;
}

kevo_status kevo_search_run(kevo_search *s, kevo_error *err)
{
    for (;;) {
        kevo_status rc = kevo_search_step(s, 100, err);
        if (rc == KEVO_DONE)
            return KEVO_OK;
        if (rc != KEVO_OK)
            return rc;
    }
}

/* ---- queries ------------------------------------------------------------- */

kevo_status kevo_search_get_stats(const kevo_search *s, kevo_search_stats *st)
{
    if (!s || !st || st->size < sizeof *st)
        return KEVO_EINVAL;
    memset(st, 0, sizeof *st);
    st->size = sizeof *st;
    st->evaluations = s->evaluations;
    st->in_flight = s->nreqs + s->njobs;
    st->failures = s->failures;
    st->improvements = s->improvements;
    st->best_fitness = isfinite(s->best) ? s->best : NAN;
    st->champion_fitness =
        s->champion >= 0 ? kevo__search_gate_fitness(&s->gates[s->champion])
                         : NAN;
    if (s->score && isfinite(s->best))
        st->champion_fitness = s->best;
    size_t cells = 0;
    for (size_t i = 0; i < s->nislands; i++) {
        cells += kevo_archive_cell_count(s->islands[i]);
        st->filled += kevo_archive_size(s->islands[i]);
    }
    st->coverage = cells ? (double)st->filled / (double)cells : 0;
    st->elapsed = kevo__search_elapsed(s);
    st->evals_per_second =
        st->elapsed > 0
            ? (double)(s->evaluations - s->evaluations_start) / st->elapsed
            : 0;
    kevo_operator_host_usage(s->host, &st->input_tokens, &st->output_tokens,
                             &st->cost);
    kevo__validity v;
    kevo__search_validity_total(s, &v);
    st->proposals = v.proposals;
    st->valid = v.valid;
    st->repairs = v.repairs;
    st->seconds_left = NAN;
    if (s->opt[KEVO_SEARCH_MAX_SECONDS] > 0) {
        double left = (double)s->opt[KEVO_SEARCH_MAX_SECONDS] - st->elapsed;
        st->seconds_left = left > 0 ? left : 0;
    }
    st->stop = s->stop;
    return KEVO_OK;
}

size_t kevo_search_island_count(const kevo_search *s)
{
    return s ? s->nislands : 0;
}

const kevo_archive *kevo_search_archive(const kevo_search *s, size_t island)
{
    if (!s || island >= s->nislands)
        return NULL;
    return s->islands[island];
}

const kevo_candidate *kevo_search_champion(const kevo_search *s,
                                           double *fitness)
{
    if (fitness)
        *fitness = NAN;
    if (!s)
        return NULL;
    if (s->score) {
        for (size_t i = 0; i < s->nislands; i++) {
            kevo_archive_stats st = {.size = sizeof st};
            kevo_archive_get_stats(s->islands[i], &st);
            if (st.best_cell != KEVO_NO_CELL && st.best_fitness == s->best) {
                if (fitness)
                    *fitness = st.best_fitness;
                return kevo_archive_candidate(s->islands[i], st.best_cell);
            }
        }
        return NULL;
    }
    if (s->champion < 0)
        return NULL;
    if (fitness)
        *fitness = kevo__search_gate_fitness(&s->gates[s->champion]);
    return s->champion_cand;
}

const char *kevo_search_dispatch_json(const kevo_search *s)
{
    return s ? s->dispatch : NULL;
}

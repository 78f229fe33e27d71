/*
 * search.c: the search engine's life. Creation and set-up (operators, the
 * evaluator or scoring function, the callback), the start (islands, the
 * seed's evaluation), the stop conditions, and the step, which moves
 * through the phases: searching, draining, gating, tuning, done. The jobs
 * in flight are search_pipeline.c's; requests are search_request.c's.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "farm/farm_private.h"
#include "fitness/fitness.h"
#include "model/devprops.h"
#include "operators/operator_private.h"
#include "search_private.h"

static const char *const stop_names[] = {
    "none",   "evaluations", "time",      "tokens",      "cost",
    "target", "stagnation",  "exhausted", "interrupted", "operator_failures",
    "waiting"};

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
    s->cfg.task = task;
    kevo__search_options_default(s->cfg.opt);
    s->progress.best = -INFINITY;
    s->pick.champion = -1;
    s->progress.next_id = 1;
    kevo_status rc = kevo_operator_host_new(task, 1, &s->ops.host, err);
    if (rc == KEVO_OK)
        rc = kevo_promptpool_new(32, &s->ops.pool, err);
    if (rc != KEVO_OK) {
        kevo_search_free(s);
        return rc;
    }
    *out = s;
    return KEVO_OK;
}

void kevo_search_free(kevo_search *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->pipe.njobs; i++)
        kevo__search_job_clear(&s->pipe.jobs[i]);
    free(s->pipe.jobs);
    free(s->pipe.reqs);
    kevo__search_farm_free(s);
    kevo_operator_host_free(s->ops.host);
    for (size_t i = 0; i < s->ops.n; i++) {
        free(s->ops.list[i].plugin);
        kevo__search_streak_clear(&s->ops.list[i].streak);
    }
    free(s->ops.list);
    free(s->state.stop_text);
    json_decref(s->state.quiet);
    kevo_promptpool_free(s->ops.pool);
    for (size_t i = 0; i < s->pop.nislands; i++)
        kevo_archive_free(s->pop.islands[i]);
    free(s->pop.islands);
    kevo_rng_free(s->pop.rng);
    kevo_rundir_free(s->run.dir);
    free(s->run.command);
    free(s->progress.history);
    for (size_t i = 0; i < s->pick.ngates; i++) {
        free(s->pick.gates[i].reason);
        kevo_eval_result_free(s->pick.gates[i].train);
        kevo_eval_result_free(s->pick.gates[i].held);
    }
    free(s->pick.gates);
    free(s->pick.finalists);
    kevo__search_leaders_free(&s->pick.leaders);
    kevo_candidate_free(s->pick.champion_cand);
    kevo__search_tuning_free(&s->tuning);
    kevo__search_repair_free(&s->repair);
    kevo__search_validity_free(&s->ops);
    free(s);
}

kevo_status kevo_search_set_evaluator(kevo_search *s, kevo_evaluator *ev,
                                      kevo_error *err)
{
    if (!s || !ev)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_search_set_evaluator: NULL argument");
    if (s->state.started || s->cfg.score)
        return kevo__error_set(err, KEVO_ESTATE,
                               "kevo_search_set_evaluator: the search has "
                               "started or scores with a function");
    s->cfg.ev = ev;
    return KEVO_OK;
}

kevo_status kevo_search_set_score_fn(kevo_search *s, kevo_search_score_fn fn,
                                     void *user, kevo_error *err)
{
    if (!s || !fn)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_search_set_score_fn: NULL argument");
    if (s->state.started || s->cfg.ev)
        return kevo__error_set(err, KEVO_ESTATE,
                               "kevo_search_set_score_fn: the search has "
                               "started or has an evaluator");
    s->cfg.score = fn;
    s->cfg.score_user = user;
    return KEVO_OK;
}

kevo_status kevo_search_set_gate_fn(kevo_search *s, kevo_search_gate_fn fn,
                                    void *user, kevo_error *err)
{
    if (!s || !fn)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_search_set_gate_fn: NULL argument");
    if (s->state.started || !s->cfg.score)
        return kevo__error_set(err, KEVO_ESTATE,
                               "kevo_search_set_gate_fn: the search has "
                               "started or has no scoring function");
    s->cfg.gate = fn;
    s->cfg.gate_user = user;
    return KEVO_OK;
}

kevo_operator_host *kevo_search_host(kevo_search *s)
{
    return s ? s->ops.host : NULL;
}

kevo_promptpool *kevo_search_prompts(kevo_search *s)
{
    return s ? s->ops.pool : NULL;
}

kevo_status kevo_search_set_callback(kevo_search *s, kevo_search_callback fn,
                                     void *user, kevo_error *err)
{
    if (!s)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_search_set_callback: search is NULL");
    s->cfg.callback = fn;
    s->cfg.callback_user = user;
    return KEVO_OK;
}

kevo_status kevo_search_add_operator(kevo_search *s, const char *plugin,
                                     const char *name, const char *config_json,
                                     double weight, kevo_error *err)
{
    if (!s || !plugin)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_search_add_operator: NULL argument");
    if (s->state.started)
        return kevo__error_set(err, KEVO_ESTATE,
                               "kevo_search_add_operator: the search has "
                               "started");
    if (!isfinite(weight) || weight <= 0)
        return kevo__error_set(err, KEVO_ERANGE,
                               "operator %s: weight %g is not positive",
                               name ? name : plugin, weight);
    kevo__search_op *ops = realloc(s->ops.list, (s->ops.n + 1) * sizeof *ops);
    if (!ops)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    s->ops.list = ops;
    kevo__search_op *o = &ops[s->ops.n];
    memset(o, 0, sizeof *o);
    o->plugin = strdup(plugin);
    if (!o->plugin)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = kevo_operator_host_add(s->ops.host, plugin, name,
                                            config_json, &o->op, err);
    if (rc != KEVO_OK) {
        free(o->plugin);
        return rc;
    }
    o->weight = weight;
    o->prompts = kevo_operator_can_revise(o->op) != 0;
    s->ops.n++;
    return KEVO_OK;
}

void kevo_search_interrupt(kevo_search *s)
{
    if (s)
        s->state.interrupted = 1;
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
    if (!s->state.started)
        return 0;
    return kevo__search_now() - s->progress.start_time;
}

kevo_status kevo__search_log(kevo_search *s, const char *type, json_t *fields,
                             kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    if (!fields)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    if (s->run.dir) {
        char *text = json_dumps(fields, JSON_COMPACT);
        if (!text)
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        else
            rc = kevo_rundir_event(s->run.dir, type, text, err);
        free(text);
    }
    json_decref(fields);
    return rc;
}

void kevo__search_emit(kevo_search *s, const kevo_search_event *ev)
{
    if (s->cfg.callback)
        s->cfg.callback(s, ev, s->cfg.callback_user);
}

/* ---- the start ----------------------------------------------------------- */

size_t kevo__search_evaluator_depth(const kevo_search *s)
{
    int64_t w = kevo_evaluator_get_int(s->cfg.ev, KEVO_EVAL_COMPILE_WORKERS);
    if (w <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        w = n > 0 ? n : 1;
    }
    /* Two for every device: one on it, one ready. */
    size_t devices = kevo_evaluator_device_count(s->cfg.ev);
    return (size_t)w + 2 * (devices ? devices : 1);
}

static size_t auto_depth(const kevo_search *s)
{
    if (s->cfg.opt[KEVO_SEARCH_DEPTH] > 0)
        return (size_t)s->cfg.opt[KEVO_SEARCH_DEPTH];
    if (!s->cfg.ev)
        return 1;
    size_t depth = kevo__search_evaluator_depth(s);
    return depth < 4 ? 4 : depth;
}

/* Each operator's random stream restarts from the run seed, so that the
 * seed set after the host was made decides. */
static kevo_status reseed_operators(kevo_search *s, kevo_error *err)
{
    for (size_t i = 0; i < s->ops.n; i++) {
        char stream[256];
        snprintf(stream, sizeof stream, "operator:%s",
                 kevo_operator_name(s->ops.list[i].op));
        kevo_rng *r =
            kevo_rng_new((uint64_t)s->cfg.opt[KEVO_SEARCH_SEED], stream);
        char *state = NULL;
        kevo_status rc = r ? kevo_rng_save(r, &state) : KEVO_ENOMEM;
        if (rc == KEVO_OK)
            rc = kevo_rng_restore(kevo_operator_rng(s->ops.list[i].op), state,
                                  err);
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
    if (s->pop.islands)
        return KEVO_OK;
    size_t k = (size_t)s->cfg.opt[KEVO_SEARCH_ISLANDS];
    s->pop.islands = calloc(k, sizeof *s->pop.islands);
    if (!s->pop.islands)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    s->pop.nislands = k;
    for (size_t i = 0; i < k; i++) {
        kevo_status rc =
            kevo_archive_new_for_task(s->cfg.task, &s->pop.islands[i], err);
        if (rc != KEVO_OK)
            return rc;
    }
    s->pop.rng = kevo_rng_new((uint64_t)s->cfg.opt[KEVO_SEARCH_SEED], "search");
    if (!s->pop.rng)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    return KEVO_OK;
}

/* The device operators plan for: the evaluator's GPU, its properties for
 * checks and, for prompts, its name and measured ceilings (bandwidth,
 * launch latency, the FP32 and FP64 peaks, which are measured at start,
 * and the peak the task counts its flops against). */
static kevo_status set_device(kevo_search *s, kevo_error *err)
{
    const kevo_vars *props = kevo_evaluator_device(s->cfg.ev);
    char *json = NULL;
    if (props) {
        kevo_peak peak = kevo_task_peak(s->cfg.task);
        kevo_ceilings c = {.bandwidth = kevo_evaluator_bandwidth(s->cfg.ev),
                           .launch = kevo_evaluator_latency(s->cfg.ev)};
        c.peak[KEVO_PEAK_FP32] = kevo_evaluator_peak(s->cfg.ev, KEVO_PEAK_FP32);
        c.peak[KEVO_PEAK_FP64] = kevo_evaluator_peak(s->cfg.ev, KEVO_PEAK_FP64);
        if ((unsigned)peak < KEVO__PEAK_COUNT)
            c.peak[peak] = kevo_evaluator_peak(s->cfg.ev, peak);
        json = kevo__devprops_json(kevo_evaluator_device_name(s->cfg.ev), props,
                                   &c, peak);
        if (!json)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    kevo_status rc =
        kevo_operator_host_set_device(s->ops.host, props, json, err);
    free(json);
    return rc;
}

static kevo_status start(kevo_search *s, kevo_error *err)
{
    if (!s->cfg.ev && !s->cfg.score)
        return kevo__error_set(err, KEVO_ESTATE,
                               "the search has neither an evaluator nor a "
                               "scoring function");
    if (s->ops.n == 0)
        return kevo__error_set(err, KEVO_ESTATE,
                               "the search has no operator: add one with "
                               "kevo_search_add_operator()");
    kevo_status rc = kevo__search_prepare(s, err);
    if (rc == KEVO_OK && !s->run.resumed)
        rc = reseed_operators(s, err);
    if (rc == KEVO_OK)
        rc =
            kevo_operator_host_set_archive(s->ops.host, s->pop.islands[0], err);
    if (rc == KEVO_OK && s->cfg.ev)
        rc = set_device(s, err);
    if (rc != KEVO_OK)
        return rc;
    /* Wait for every member's hello first. Scored children are proposed
     * in batches as deep as the members' pipelines together, which then
     * does not depend on when the hellos came; a GPU member says hello
     * once its evaluator has started (its ceilings measured, as rank 0's
     * were), so that every GPU works from the first child. A member that
     * is not there within the time joins when it comes. */
    if (kevo__search_farming(s))
        rc = kevo__search_farm_join(s, s->cfg.score ? 60000 : 300000, err);
    if (rc != KEVO_OK)
        return rc;
    s->state.started = true;
    s->progress.start_time = kevo__search_now();
    s->progress.evaluations_start = s->progress.evaluations;
    /* A resumed run's first revision waits for children of its own. */
    s->ops.judged_at_revision = kevo__search_prompt_children_judged(s);

    json_t *names = json_array();
    for (size_t i = 0; i < s->ops.n; i++)
        json_array_append_new(
            names, json_string(kevo_operator_name(s->ops.list[i].op)));
    rc = kevo__search_log(s, "start",
                          json_pack("{s:s, s:I, s:b, s:I, s:o, s:I, s:s?}",
                                    "task", kevo_task_name(s->cfg.task), "seed",
                                    (json_int_t)s->cfg.opt[KEVO_SEARCH_SEED],
                                    "resumed", s->run.resumed, "evaluations",
                                    (json_int_t)s->progress.evaluations,
                                    "operators", names, "islands",
                                    (json_int_t)s->pop.nislands, "command",
                                    s->run.command),
                          err);
    if (rc != KEVO_OK || s->run.resumed)
        return rc;

    /* The seed is the first evaluation: the archive starts from it. */
    const kevo_candidate *seed = kevo_task_seed(s->cfg.task);
    if (!seed)
        return kevo__error_set(err, KEVO_EINVALID,
                               "task %s has no seed kernel to start from",
                               kevo_task_name(s->cfg.task));
    kevo_candidate *c = kevo_candidate_copy(seed);
    if (!c)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_candidate_set_id(c, s->progress.next_id++);
    rc = kevo_operator_host_mark_seen(s->ops.host, c, err);
    if (rc != KEVO_OK) {
        kevo_candidate_free(c);
        return rc;
    }
    kevo__search_job proto = {
        .op = SIZE_MAX, .parent_cell = KEVO_NO_CELL, .parent_fitness = NAN};
    s->progress.submitted++;
    return kevo__search_submit(s, KEVO__JOB_CHILD, c, &proto, 0, err);
}

/* ---- stopping ------------------------------------------------------------ */

static kevo_stop_reason stop_reason(kevo_search *s)
{
    const int64_t *o = s->cfg.opt;
    if (s->state.interrupted)
        return KEVO_STOP_INTERRUPTED;
    if (o[KEVO_SEARCH_MAX_EVALS] > 0 &&
        s->progress.submitted >= (uint64_t)o[KEVO_SEARCH_MAX_EVALS])
        return KEVO_STOP_EVALUATIONS;
    if (o[KEVO_SEARCH_MAX_SECONDS] > 0 &&
        kevo__search_elapsed(s) >= (double)o[KEVO_SEARCH_MAX_SECONDS])
        return KEVO_STOP_TIME;
    uint64_t in = 0, out = 0;
    double cost = 0;
    kevo_operator_host_usage(s->ops.host, &in, &out, &cost);
    if (o[KEVO_SEARCH_MAX_TOKENS] > 0 &&
        in + out >= (uint64_t)o[KEVO_SEARCH_MAX_TOKENS])
        return KEVO_STOP_TOKENS;
    if (o[KEVO_SEARCH_MAX_COST_MICROS] > 0 &&
        cost * 1e6 >= (double)o[KEVO_SEARCH_MAX_COST_MICROS])
        return KEVO_STOP_COST;
    if (o[KEVO_SEARCH_TARGET_PPM] > 0 &&
        s->progress.best >= (double)o[KEVO_SEARCH_TARGET_PPM] / 1e6)
        return KEVO_STOP_TARGET;
    if (o[KEVO_SEARCH_STAGNATION] > 0 && s->progress.evaluations > 0 &&
        s->progress.evaluations - s->progress.last_improvement >=
            (uint64_t)o[KEVO_SEARCH_STAGNATION])
        return KEVO_STOP_STAGNATION;
    if (kevo__search_failing_operator(s) != SIZE_MAX)
        return KEVO_STOP_OPERATOR_FAILURES;
    if (s->progress.exhausted_run >= 8 * s->ops.n &&
        kevo__search_children_in_flight(s) == 0 &&
        kevo__search_child_requests(s) == 0)
        return KEVO_STOP_EXHAUSTED;
    return KEVO_STOP_NONE;
}

/* Ends the search: done, and the callback told it stopped and why. */
static void stopped(kevo_search *s)
{
    s->state.phase = KEVO__PHASE_DONE;
    kevo_search_event ev = {
        .size = sizeof ev,
        .type = KEVO_SEARCH_STOPPED,
        .fitness = isfinite(s->progress.best) ? s->progress.best : NAN,
        .text = s->state.stop_text};
    kevo__search_emit(s, &ev);
}

static kevo_status finish(kevo_search *s, kevo_error *err)
{
    const char *state =
        s->state.stop == KEVO_STOP_INTERRUPTED ? "interrupted" : "finished";
    kevo_status rc =
        kevo__search_log(s, "stop",
                         json_pack("{s:s, s:I, s:s?}", "reason",
                                   kevo_stop_reason_name(s->state.stop), "n",
                                   (json_int_t)s->progress.evaluations,
                                   "message", s->state.stop_text),
                         err);
    if (rc == KEVO_OK)
        rc = kevo__search_checkpoint(s, err);
    if (rc == KEVO_OK)
        rc = kevo__search_write_best(s, err);
    if (rc == KEVO_OK)
        rc = kevo__search_write_summary(s, state, err);
    stopped(s);
    return rc;
}

/* Whether the search can only wait: every operator request in flight
 * waits on an outside party, the operators have been polled since the last
 * request began (a request that a resumed search makes again may find its
 * reply there: a repair turn begun while judging, say), and nothing is
 * being evaluated. */
static bool only_waiting(kevo_search *s)
{
    size_t n = s->ops.host->in_flight;
    return (s->state.phase == KEVO__PHASE_SEARCHING ||
            s->state.phase == KEVO__PHASE_DRAINING) &&
           s->pipe.njobs == 0 && n > 0 && !s->ops.host->unpolled &&
           kevo__op_host_waiting(s->ops.host, NULL) == n &&
           !s->ops.host->results_head && !s->state.interrupted;
}

/* Stops a search that can only wait: its checkpoint goes back to before
 * the requests it waits for (kevo__search_checkpoint_quiet), and the stop
 * event says how many wait, and where. */
static kevo_status suspend(kevo_search *s, kevo_error *err)
{
    const char *where = NULL;
    size_t n = kevo__op_host_waiting(s->ops.host, &where);
    s->state.stop = KEVO_STOP_WAITING;
    if (kevo__search_farming(s))
        kevo__farm_set_stop_reason(s->farm.farm,
                                   kevo_stop_reason_name(s->state.stop));
    free(s->state.stop_text);
    s->state.stop_text = kevo__asprintf(
        "%zu request%s wait%s for replies in %s", n, n == 1 ? "" : "s",
        n == 1 ? "s" : "", where ? where : "an outside party");
    if (!s->state.stop_text)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = kevo__search_log(
        s, "stop",
        json_pack("{s:s, s:I, s:s, s:I}", "reason",
                  kevo_stop_reason_name(s->state.stop), "n",
                  (json_int_t)s->progress.evaluations, "message",
                  s->state.stop_text, "waiting", (json_int_t)n),
        err);
    if (rc == KEVO_OK)
        rc = kevo__search_checkpoint_quiet(s, err);
    if (rc == KEVO_OK)
        rc = kevo__search_write_summary(s, "waiting", err);
    stopped(s);
    return rc;
}

/* ---- the step ------------------------------------------------------------ */

/* Every operator's requests in a row without a child, together. */
static uint64_t failures_in_a_row(const kevo_search *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->ops.n; i++)
        n += s->ops.list[i].streak.n;
    return n;
}

/* Waits at most timeout_ms (negative: no limit) while nothing is in
 * flight and every operator waits after failures, so that a search that
 * backs off does not spin. */
static void wait_backoff(kevo_search *s, int timeout_ms)
{
    if (s->state.phase != KEVO__PHASE_SEARCHING || s->pipe.njobs > 0 ||
        s->pipe.nreqs > 0 || s->state.interrupted)
        return;
    double left = kevo__search_backoff_left(s);
    if (timeout_ms >= 0 && left > timeout_ms / 1e3)
        left = timeout_ms / 1e3;
    if (left <= 0)
        return;
    struct timespec ts = {.tv_sec = (time_t)left,
                          .tv_nsec = (long)((left - floor(left)) * 1e9)};
    nanosleep(&ts, NULL);
}

static kevo_status search_phase(kevo_search *s, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    kevo_stop_reason why = stop_reason(s);
    if (why != KEVO_STOP_NONE) {
        s->state.stop = why;
        s->state.phase = KEVO__PHASE_DRAINING;
        if (why == KEVO_STOP_OPERATOR_FAILURES &&
            !(s->state.stop_text = kevo__search_failures_text(
                  s, kevo__search_failing_operator(s))))
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        return KEVO_OK;
    }
    size_t depth = auto_depth(s);
    if (kevo__search_farming(s) && s->cfg.opt[KEVO_SEARCH_DEPTH] == 0) {
        /* The members' pipelines, and rank 0's own evaluator beside them
         * (a scoring function runs here only when no member can). */
        size_t farmed = kevo__search_farm_depth(s);
        depth = s->cfg.score ? (farmed ? farmed : 1) : depth + farmed;
    }
    /* Scored children are judged in batches of depth, proposed from the
     * archive as the last batch left it: where they are scored changes no
     * decision. */
    if (s->cfg.score && kevo__search_farming(s) && s->pipe.njobs > 0)
        return KEVO_OK;
    int64_t max = s->cfg.opt[KEVO_SEARCH_MAX_EVALS];
    /* Evaluations in flight keep the compile pool and the GPU busy;
     * requests to asynchronous operators (LLM replies) are capped apart, so
     * that slow replies never starve the GPU of the fast operators' work. */
    while (rc == KEVO_OK && s->pipe.njobs < depth && s->pipe.nreqs < depth) {
        uint64_t planned = s->progress.submitted +
                           kevo__search_child_requests(s) *
                               (uint64_t)s->cfg.opt[KEVO_SEARCH_CHILDREN];
        if (max > 0 && planned >= (uint64_t)max)
            break;
        bool sent;
        uint64_t failed = failures_in_a_row(s);
        /* The state a suspended search goes back to: kept at the first
         * quiet moment, and at every one once some request has waited on
         * an outside party (the checkpoint costs too much to make at every
         * request of a search that never waits). */
        if (s->pipe.nreqs == 0 && s->pipe.njobs == 0 &&
            s->ops.host->in_flight == 0 &&
            (!s->state.quiet || s->ops.host->waited))
            rc = kevo__search_quiet_mark(s, err);
        if (rc == KEVO_OK)
            rc = kevo__search_request(s, &sent, err);
        if (rc != KEVO_OK)
            break;
        if (rc == KEVO_OK && sent)
            rc = kevo__search_take_results(s, err);
        /* A request that failed at once waits for the next step. */
        if (!sent || s->progress.exhausted_run >= 8 * s->ops.n ||
            failures_in_a_row(s) > failed)
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
    if (s->state.phase == KEVO__PHASE_DONE)
        return KEVO_DONE;
    kevo_status rc = KEVO_OK;
    if (s->farm.farm && kevo_farm_rank(s->farm.farm) != 0) {
        /* A member rank: it evaluates what rank 0 sends until it stops. */
        rc = kevo__search_serve(s, err);
        return rc == KEVO_OK ? KEVO_DONE : rc;
    }
    if (!s->state.started) {
        rc = start(s, err);
        if (rc != KEVO_OK && s->state.started)
            goto fail; /* the search cannot go on */
        if (rc != KEVO_OK)
            return rc; /* set-up missing: the caller may fix it */
    }
    if (s->state.interrupted && s->state.phase < KEVO__PHASE_DONE) {
        s->state.stop = KEVO_STOP_INTERRUPTED;
        kevo__search_drop_in_flight(s);
        rc = finish(s, err);
        return rc == KEVO_OK ? KEVO_DONE : rc;
    }
    if (s->state.phase == KEVO__PHASE_SEARCHING)
        rc = search_phase(s, err);

    /* Drive the operators, the other ranks and the evaluator. */
    if (rc == KEVO_OK)
        rc = kevo__search_farm_poll(s, 0, err);
    if (rc == KEVO_OK)
        rc = kevo_operator_host_poll(s->ops.host, 0, NULL, err);
    if (rc == KEVO_OK)
        rc = kevo__search_take_results(s, err);
    if (rc == KEVO_OK) {
        bool evals = false;
        for (size_t i = 0; i < s->pipe.njobs && !evals; i++) {
            const kevo__search_job *j = &s->pipe.jobs[i];
            evals =
                j->result == NULL && (s->cfg.ev || (j->rank > 0 && !j->scored));
        }
        if (evals)
            rc = kevo__search_collect(
                s,
                s->pipe.nreqs
                    ? (timeout_ms < 0 || timeout_ms > 5 ? 5 : timeout_ms)
                    : timeout_ms,
                err);
        else if (s->pipe.nreqs)
            rc = kevo_operator_host_poll(
                s->ops.host, timeout_ms < 0 ? 100 : timeout_ms, NULL, err);
        if (rc == KEVO_OK)
            rc = kevo__search_take_results(s, err);
    }
    if (rc == KEVO_OK)
        rc = kevo__search_judge_ready(s, err);
    if (rc != KEVO_OK)
        goto fail;
    wait_backoff(s, timeout_ms);
    if (only_waiting(s)) {
        rc = suspend(s, err);
        return rc == KEVO_OK ? KEVO_DONE : rc;
    }

    if (s->state.phase == KEVO__PHASE_DRAINING && s->pipe.njobs == 0 &&
        kevo__search_child_requests(s) == 0)
        s->state.phase = KEVO__PHASE_GATING;
    if (s->state.phase == KEVO__PHASE_GATING) {
        bool done = true;
        if (s->cfg.ev || s->cfg.gate)
            rc = kevo__search_final_gate(s, &done, err);
        if (rc == KEVO_OK && done)
            s->state.phase = KEVO__PHASE_TUNING;
    }
    if (rc == KEVO_OK && s->state.phase == KEVO__PHASE_TUNING) {
        if (!s->tuning.tune && s->cfg.ev && s->pick.champion >= 0 &&
            s->cfg.opt[KEVO_SEARCH_TUNE]) {
            int pending = 0;
            rc = kevo__search_tune_start(s, &pending, err);
            s->tuning.pending = pending;
        }
        if (rc == KEVO_OK && s->tuning.pending == 0) {
            if (s->tuning.tune)
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
    s->state.stop = s->state.stop ? s->state.stop : KEVO_STOP_INTERRUPTED;
    s->state.phase = KEVO__PHASE_DONE;
    if (s->run.dir)
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
    st->evaluations = s->progress.evaluations;
    st->in_flight = s->pipe.nreqs + s->pipe.njobs;
    st->failures = s->progress.failures;
    st->improvements = s->progress.improvements;
    st->best_fitness = isfinite(s->progress.best) ? s->progress.best : NAN;
    st->champion_fitness =
        s->pick.champion >= 0
            ? kevo__search_gate_fitness(&s->pick.gates[s->pick.champion])
            : NAN;
    if (s->cfg.score && !s->cfg.gate && isfinite(s->progress.best))
        st->champion_fitness = s->progress.best;
    size_t cells = 0;
    for (size_t i = 0; i < s->pop.nislands; i++) {
        cells += kevo_archive_cell_count(s->pop.islands[i]);
        st->filled += kevo_archive_size(s->pop.islands[i]);
    }
    st->coverage = cells ? (double)st->filled / (double)cells : 0;
    st->elapsed = kevo__search_elapsed(s);
    st->evals_per_second = st->elapsed > 0
                               ? (double)(s->progress.evaluations -
                                          s->progress.evaluations_start) /
                                     st->elapsed
                               : 0;
    kevo_operator_host_usage(s->ops.host, &st->input_tokens, &st->output_tokens,
                             &st->cost);
    kevo__validity v;
    kevo__search_validity_total(&s->ops, &v);
    st->proposals = v.proposals;
    st->valid = v.valid;
    st->repairs = v.repairs;
    st->seconds_left = NAN;
    if (s->cfg.opt[KEVO_SEARCH_MAX_SECONDS] > 0) {
        double left = (double)s->cfg.opt[KEVO_SEARCH_MAX_SECONDS] - st->elapsed;
        st->seconds_left = left > 0 ? left : 0;
    }
    st->stop = s->state.stop;
    return KEVO_OK;
}

size_t kevo_search_island_count(const kevo_search *s)
{
    return s ? s->pop.nislands : 0;
}

const kevo_archive *kevo_search_archive(const kevo_search *s, size_t island)
{
    if (!s || island >= s->pop.nislands)
        return NULL;
    return s->pop.islands[island];
}

const kevo_candidate *kevo_search_champion(const kevo_search *s,
                                           double *fitness)
{
    if (fitness)
        *fitness = NAN;
    if (!s)
        return NULL;
    if (s->cfg.score && !s->cfg.gate) {
        for (size_t i = 0; i < s->pop.nislands; i++) {
            kevo_archive_stats st = {.size = sizeof st};
            kevo_archive_get_stats(s->pop.islands[i], &st);
            if (st.best_cell != KEVO_NO_CELL &&
                st.best_fitness == s->progress.best) {
                if (fitness)
                    *fitness = st.best_fitness;
                return kevo_archive_candidate(s->pop.islands[i], st.best_cell);
            }
        }
        return NULL;
    }
    if (s->pick.champion < 0)
        return NULL;
    if (fitness)
        *fitness = kevo__search_gate_fitness(&s->pick.gates[s->pick.champion]);
    return s->pick.champion_cand;
}

const char *kevo_search_dispatch_json(const kevo_search *s)
{
    return s ? s->tuning.dispatch : NULL;
}

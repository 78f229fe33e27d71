/*
 * search_judge.c: what a finished evaluation does. A child enters its
 * island's archive or not (its evaluation kept beside it as a note), and
 * its operator, prompt and parent are credited; a rise of the best fitness
 * sends that elite through the held-out gate; a gate that passes may crown
 * a new champion. Also the ring migration between islands and the history
 * of the best fitness.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "archive/archive_notes.h"
#include "model/candidate_private.h"
#include "search_private.h"

bool kevo__search_find_elite(const kevo_search *s, uint64_t id, size_t *island,
                             size_t *cell)
{
    for (size_t i = 0; i < s->pop.nislands; i++) {
        const kevo_archive *a = s->pop.islands[i];
        for (size_t c = kevo_archive_first(a); c != KEVO_NO_CELL;
             c = kevo_archive_next(a, c)) {
            if (kevo_candidate_id(kevo_archive_candidate(a, c)) == id) {
                *island = i;
                *cell = c;
                return true;
            }
        }
    }
    return false;
}

kevo_status kevo__search_history_add(kevo__search_progress *p, double n,
                                     double best)
{
    if (p->nhistory == p->chistory) {
        size_t c = p->chistory ? 2 * p->chistory : 64;
        double *h = realloc(p->history, 2 * c * sizeof *h);
        if (!h)
            return KEVO_ENOMEM;
        p->history = h;
        p->chistory = c;
    }
    p->history[2 * p->nhistory] = n;
    p->history[2 * p->nhistory + 1] = best;
    p->nhistory++;
    return KEVO_OK;
}

/* ---- gates --------------------------------------------------------------- */

static kevo_status gate_verdict(kevo_search *s, kevo__search_gate *g,
                                const kevo_candidate *cand, kevo_error *err);
static kevo_status gate_by_function(kevo_search *s, kevo__search_gate *g,
                                    const kevo_candidate *cand,
                                    kevo_error *err);

kevo__search_gate *kevo__search_gate_find(kevo__search_pick *pick, uint64_t id)
{
    for (size_t i = 0; i < pick->ngates; i++) {
        if (pick->gates[i].id == id)
            return &pick->gates[i];
    }
    return NULL;
}

double kevo__search_gate_fitness(const kevo__search_gate *g)
{
    return isfinite(g->retimed) ? g->retimed : g->fitness;
}

kevo__search_gate *kevo__search_gate_get(kevo__search_pick *pick, uint64_t id,
                                         double fitness)
{
    kevo__search_gate *g = kevo__search_gate_find(pick, id);
    if (g)
        return g;
    if (pick->ngates == pick->cgates) {
        size_t c = pick->cgates ? 2 * pick->cgates : 16;
        kevo__search_gate *n = realloc(pick->gates, c * sizeof *n);
        if (!n)
            return NULL;
        pick->gates = n;
        pick->cgates = c;
    }
    g = &pick->gates[pick->ngates++];
    memset(g, 0, sizeof *g);
    g->id = id;
    g->fitness = fitness;
    g->retimed = g->held_fitness = NAN;
    return g;
}

kevo_status kevo__search_gate_start(kevo_search *s, const kevo_candidate *cand,
                                    double fitness, kevo_eval_result **res,
                                    kevo_error *err)
{
    uint64_t id = kevo_candidate_id(cand);
    kevo__search_gate *g = kevo__search_gate_find(&s->pick, id);
    if (g && ((g->started && !g->done) ||
              (g->done && (!g->passed || g->held || !s->cfg.ev))))
        return KEVO_OK; /* under way, or gated already */
    if (!g && !(g = kevo__search_gate_get(&s->pick, id, fitness)))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    /* A gate restored from a checkpoint without its results runs again. */
    g->done = false;
    g->started = true;
    if (!isfinite(g->fitness))
        g->fitness = fitness;
    g->held_fitness = NAN;
    if (!s->cfg.ev)
        return gate_by_function(s, g, cand, err);
    kevo_candidate *c = kevo__candidate_share(cand);
    if (res && *res) {
        kevo_eval_result_free(g->train);
        g->train = *res;
        *res = NULL;
    }
    if (g->train)
        return kevo__search_submit(s, KEVO__JOB_GATE_HELD, c, NULL,
                                   KEVO_EVAL_HELD_OUT | KEVO_EVAL_PAIRED, err);
    return kevo__search_submit(s, KEVO__JOB_GATE_TRAIN, c, NULL,
                               KEVO_EVAL_PAIRED, err);
}

kevo_status kevo__search_crown(kevo_search *s, kevo__search_gate *g,
                               const kevo_candidate *cand, bool forced,
                               kevo_error *err)
{
    long idx = (long)(g - s->pick.gates);
    if (s->pick.champion == idx && s->pick.champion_cand)
        return KEVO_OK;
    if (!forced && s->pick.champion >= 0 &&
        kevo__search_gate_fitness(&s->pick.gates[s->pick.champion]) >=
            kevo__search_gate_fitness(g))
        return KEVO_OK;
    kevo_candidate *champion = kevo__candidate_share(cand);
    kevo_candidate_free(s->pick.champion_cand);
    s->pick.champion_cand = champion;
    s->pick.champion = idx;
    double fitness = kevo__search_gate_fitness(g);
    json_t *f = json_pack("{s:I, s:f, s:I}", "id", (json_int_t)g->id, "fitness",
                          fitness, "n", (json_int_t)s->progress.evaluations);
    if (f && isfinite(g->retimed))
        json_object_set_new(f, "first_fitness", json_real(g->fitness));
    const char *device = g->train ? kevo_eval_result_device(g->train) : NULL;
    if (f && device)
        json_object_set_new(f, "device", json_string(device));
    kevo_status rc = kevo__search_log(s, "champion", f, err);
    if (rc == KEVO_OK)
        rc = kevo__search_write_best(s, err);
    kevo_search_event ev = {.size = sizeof ev,
                            .type = KEVO_SEARCH_CHAMPION,
                            .candidate = cand,
                            .fitness = fitness};
    kevo__search_emit(s, &ev);
    return rc;
}

/* A finalist timed again: its re-measured fitness, or, when it failed on
 * its own this time, a failed gate (a flaky kernel). */
static kevo_status judge_retime(kevo_search *s, kevo__search_job *job,
                                kevo_error *err)
{
    uint64_t id = kevo_candidate_id(job->cand);
    kevo__search_gate *g = kevo__search_gate_get(&s->pick, id, NAN);
    if (!g)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_eval_result *res = job->result;
    kevo_verdict v = kevo_eval_result_verdict(res);
    const char *reason = kevo_eval_result_reason(res);
    if (v == KEVO_VERDICT_OK) {
        g->retimed = kevo_eval_result_fitness(res);
        kevo_eval_result_free(g->train);
        g->train = res;
        job->result = NULL;
    } else if (v != KEVO_VERDICT_WORKER_DIED && v != KEVO_VERDICT_TIMEOUT) {
        /* Its own failure, not the group's: a flaky kernel. */
        g->done = true;
        g->passed = false;
        free(g->reason);
        g->reason = kevo__asprintf(
            "failed the training shapes when evaluated again: %s",
            reason ? reason : kevo_verdict_name(v));
    }
    json_t *f = json_pack("{s:I, s:s}", "id", (json_int_t)id, "verdict",
                          kevo_verdict_name(v));
    json_object_set_new(f, "fitness", kevo__search_num(g->fitness));
    json_object_set_new(f, "retimed", kevo__search_num(g->retimed));
    if (v != KEVO_VERDICT_OK && reason)
        json_object_set_new(f, "reason", json_string(reason));
    if (kevo_eval_result_device(res))
        json_object_set_new(f, "device",
                            json_string(kevo_eval_result_device(res)));
    return kevo__search_log(s, "retime", f, err);
}

static kevo_status judge_gate(kevo_search *s, kevo__search_job *job,
                              kevo_error *err)
{
    if (job->kind == KEVO__JOB_RETIME)
        return judge_retime(s, job, err);
    uint64_t id = kevo_candidate_id(job->cand);
    kevo__search_gate *g = kevo__search_gate_find(&s->pick, id);
    if (!g)
        return KEVO_OK;
    if (job->kind == KEVO__JOB_GATE_TRAIN) {
        kevo_eval_result_free(g->train);
        g->train = job->result;
        job->result = NULL;
        if (kevo_eval_result_verdict(g->train) == KEVO_VERDICT_OK) {
            g->fitness = kevo_eval_result_fitness(g->train);
            kevo_candidate *c = kevo__candidate_share(job->cand);
            return kevo__search_submit(s, KEVO__JOB_GATE_HELD, c, NULL,
                                       KEVO_EVAL_HELD_OUT | KEVO_EVAL_PAIRED,
                                       err);
        }
        /* Failed this time on the training shapes: a flaky kernel. */
        g->done = true;
        g->passed = false;
        free(g->reason);
        g->reason = kevo__asprintf(
            "failed the training shapes when evaluated again: %s",
            kevo_eval_result_reason(g->train)
                ? kevo_eval_result_reason(g->train)
                : kevo_verdict_name(kevo_eval_result_verdict(g->train)));
    } else {
        kevo_eval_result_free(g->held);
        g->held = job->result;
        job->result = NULL;
        char why[2048];
        g->passed = kevo_search_gate_check(s, g->held, why, sizeof why);
        g->held_fitness = kevo_eval_result_fitness(g->held);
        g->done = true;
        free(g->reason);
        g->reason = strdup(why);
    }
    return gate_verdict(s, g, job->cand, err);
}

static kevo_status gate_verdict(kevo_search *s, kevo__search_gate *g,
                                const kevo_candidate *cand, kevo_error *err)
{
    json_t *f = json_pack("{s:I, s:f, s:b}", "id", (json_int_t)g->id, "fitness",
                          g->fitness, "passed", g->passed);
    json_object_set_new(f, "retimed", kevo__search_num(g->retimed));
    json_object_set_new(f, "held_out_fitness",
                        kevo__search_num(g->held_fitness));
    json_object_set_new(f, "reason",
                        g->reason ? json_string(g->reason) : json_null());
    const kevo_eval_result *measured = g->held ? g->held : g->train;
    if (measured && kevo_eval_result_device(measured))
        json_object_set_new(f, "device",
                            json_string(kevo_eval_result_device(measured)));
    kevo_status rc = kevo__search_log(s, "gate", f, err);
    kevo_search_event ev = {.size = sizeof ev,
                            .type = KEVO_SEARCH_GATE,
                            .candidate = cand,
                            .result = g->held,
                            .fitness = kevo__search_gate_fitness(g),
                            .passed = g->passed,
                            .text = g->reason};
    kevo__search_emit(s, &ev);
    /* During the search a gate that passes may crown, and one that fails
     * hands the turn to the next leader; at the end the final gating
     * decides. */
    if (rc == KEVO_OK && g->passed && s->state.phase < KEVO__PHASE_GATING)
        rc = kevo__search_crown(s, g, cand, false, err);
    if (rc == KEVO_OK && !g->passed)
        rc = kevo__search_gate_next(s, NULL, NULL, err);
    return rc;
}

/* The gate of a search scored by a function: the caller's gate function
 * says at once. */
static kevo_status gate_by_function(kevo_search *s, kevo__search_gate *g,
                                    const kevo_candidate *cand, kevo_error *err)
{
    char why[2048] = "";
    g->passed = s->cfg.gate(s->cfg.task, cand, g->fitness, why, sizeof why,
                            s->cfg.gate_user);
    why[sizeof why - 1] = '\0';
    g->done = true;
    free(g->reason);
    g->reason = strdup(why[0] ? why : g->passed ? "passed" : "failed");
    return gate_verdict(s, g, cand, err);
}

/* ---- children ------------------------------------------------------------ */

static const char *outcome_name(kevo_insert_outcome o, bool judged)
{
    if (!judged)
        return "failed";
    switch (o) {
    case KEVO_INSERT_NEW_CELL: return "new_cell";
    case KEVO_INSERT_REPLACED: return "replaced";
    default: return "rejected";
    }
}

/* The event of a judged child. */
static json_t *eval_fields(kevo_search *s, const kevo__search_job *job,
                           const kevo_eval_result *res, double fitness,
                           bool judged, kevo_insert_outcome outcome,
                           size_t cell)
{
    const kevo_candidate *c = job->cand;
    json_t *parents = json_array();
    for (size_t i = 0; i < kevo_candidate_parent_count(c); i++)
        json_array_append_new(
            parents, json_integer((json_int_t)kevo_candidate_parent(c, i)));
    const char *op = job->op == SIZE_MAX
                         ? "seed"
                         : kevo_operator_name(s->ops.list[job->op].op);
    size_t cells = 0, filled = 0;
    for (size_t i = 0; i < s->pop.nislands; i++) {
        cells += kevo_archive_cell_count(s->pop.islands[i]);
        filled += kevo_archive_size(s->pop.islands[i]);
    }
    json_t *f = json_pack(
        "{s:I, s:I, s:I, s:s, s:o, s:s, s:f, s:s, s:f}", "n",
        (json_int_t)s->progress.evaluations, "id",
        (json_int_t)kevo_candidate_id(c), "island", (json_int_t)job->island,
        "operator", op, "parents", parents, "verdict",
        res              ? kevo_verdict_name(kevo_eval_result_verdict(res))
        : job->fail_kind ? job->fail_kind
                         : "ok",
        "fitness", fitness, "outcome", outcome_name(outcome, judged),
        "coverage", cells ? (double)filled / (double)cells : 0.0);
    int64_t p = kevo_candidate_prompt(c);
    json_object_set_new(f, "prompt", p >= 0 ? json_integer(p) : json_null());
    if (job->turn > 0)
        json_object_set_new(f, "repair", json_integer(job->turn));
    if (!res && job->fail_diagnostic)
        json_object_set_new(f, "reason", json_string(job->fail_diagnostic));
    json_object_set_new(f, "cell",
                        judged && outcome != KEVO_INSERT_REJECTED
                            ? json_integer((json_int_t)cell)
                            : json_null());
    json_object_set_new(f, "best",
                        isfinite(s->progress.best) ? json_real(s->progress.best)
                                                   : json_null());
    const kevo_vars *params = kevo_candidate_assignment(c);
    if (params && kevo_vars_count(params) > 0)
        json_object_set_new(f, "params", kevo__search_params_json(params));
    if (res) {
        const char *reason = kevo_eval_result_reason(res);
        if (kevo_eval_result_verdict(res) != KEVO_VERDICT_OK && reason)
            json_object_set_new(f, "reason", json_string(reason));
        json_t *shapes = json_array();
        for (size_t i = 0; i < kevo_eval_result_shape_count(res); i++) {
            kevo_shape_result sr = {.size = sizeof sr};
            if (kevo_eval_result_shape(res, i, &sr) != KEVO_OK)
                break;
            json_array_append_new(
                shapes,
                json_pack("{s:o, s:o}", "time",
                          isfinite(sr.time) ? json_real(sr.time) : json_null(),
                          "efficiency",
                          isfinite(sr.efficiency) ? json_real(sr.efficiency)
                                                  : json_null()));
        }
        json_object_set_new(f, "shapes", shapes);
        if (kevo_eval_result_suspicious(res))
            json_object_set_new(f, "suspicious", json_true());
        if (kevo_eval_result_device(res))
            json_object_set_new(f, "device",
                                json_string(kevo_eval_result_device(res)));
    }
    return f;
}

/* The common part of judging a child: insert, credit, log, gate. res is
 * NULL for a scored child; desc is NULL when the behaviour is unknown. */
static kevo_status judge_child(kevo_search *s, kevo__search_job *job,
                               kevo_eval_result **res, double fitness, bool ok,
                               const double *desc, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    bool seed = job->op == SIZE_MAX;
    s->progress.evaluations++;
    s->progress.since_checkpoint++;
    s->progress.since_migration++;
    if (!ok)
        s->progress.failures++;

    /* Failures stay out of the archive, except a seed with a known
     * behaviour, which must give the search a parent. */
    bool judged = desc && (ok || (seed && s->pop.islands &&
                                  kevo_archive_size(s->pop.islands[0]) == 0));
    kevo_insert_outcome outcome = KEVO_INSERT_REJECTED;
    size_t cell = KEVO_NO_CELL;
    if (judged) {
        rc = kevo_archive_insert(s->pop.islands[job->island], job->cand,
                                 ok ? fitness : 0, desc, &outcome, &cell, err);
        if (rc != KEVO_OK)
            return rc;
    }
    bool entered = judged && outcome != KEVO_INSERT_REJECTED;
    if (entered && *res) {
        /* Its evaluation, kept beside it for as long as it is an elite. */
        char *json = NULL;
        if (kevo_eval_result_to_json(*res, &json, NULL) == KEVO_OK)
            rc = kevo__archive_set_note(s->pop.islands[job->island], cell,
                                        KEVO_NOTE_EVALUATION, json);
        free(json);
        if (rc != KEVO_OK)
            return kevo__error_set(err, rc, "out of memory");
    }
    bool beat =
        ok && isfinite(job->parent_fitness) && fitness > job->parent_fitness;
    if (!seed) {
        kevo__search_op *o = &s->ops.list[job->op];
        o->evaluated++;
        o->entered += entered;
        o->improved += beat;
        if (job->parent_cell != KEVO_NO_CELL)
            kevo_archive_credit(s->pop.islands[job->island], job->parent_cell,
                                job->parent_id, entered);
        int64_t p = kevo_candidate_prompt(job->cand);
        if (p >= 0) {
            unsigned outc = (entered ? KEVO_PROMPT_ENTERED : 0u) |
                            (beat ? KEVO_PROMPT_BEAT_PARENT : 0u);
            kevo_promptpool_credit(s->ops.pool, (uint64_t)p, outc,
                                   ok ? fitness : 0,
                                   kevo_candidate_id(job->cand), NULL);
        }
        bool valid =
            *res ? kevo_eval_result_verdict(*res) == KEVO_VERDICT_OK : ok;
        if ((rc = kevo__search_judged(s, job, *res, valid, err)) != KEVO_OK)
            return rc;
    }
    if (ok && *res) {
        rc = kevo__search_observe(&s->tuning, s->cfg.task, job->cand, *res);
        if (rc != KEVO_OK)
            return rc;
    }
    if (ok && (rc = kevo__search_leaders_offer(s, job->cand, fitness, err)) !=
                  KEVO_OK)
        return rc;
    bool improved = entered && ok && fitness > s->progress.best;
    if (improved) {
        s->progress.best = fitness;
        s->progress.improvements++;
        s->progress.last_improvement = s->progress.evaluations;
        if (kevo__search_history_add(&s->progress,
                                     (double)s->progress.evaluations,
                                     fitness) != KEVO_OK)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    rc = kevo__search_log(
        s, "eval",
        eval_fields(s, job, *res, ok ? fitness : 0, judged, outcome, cell),
        err);
    if (rc != KEVO_OK)
        return rc;
    kevo_search_event ev = {.size = sizeof ev,
                            .type = KEVO_SEARCH_EVALUATED,
                            .candidate = job->cand,
                            .result = *res,
                            .fitness = ok ? fitness : 0,
                            .outcome = outcome,
                            .island = job->island};
    kevo__search_emit(s, &ev);
    if (ok && (s->cfg.ev || s->cfg.gate))
        rc = kevo__search_gate_next(s, job->cand, res, err);
    if (improved && s->cfg.score && !s->cfg.gate) {
        kevo_search_event cev = {.size = sizeof cev,
                                 .type = KEVO_SEARCH_CHAMPION,
                                 .candidate = job->cand,
                                 .fitness = fitness};
        kevo__search_emit(s, &cev);
    }
    return rc;
}

kevo_status kevo__search_judge_scored(kevo_search *s, kevo__search_job *job,
                                      double fitness, const double *desc,
                                      kevo_error *err)
{
    kevo_eval_result *none = NULL;
    return judge_child(s, job, &none, fitness, fitness > 0 && !job->fail_kind,
                       desc, err);
}

kevo_status kevo__search_judge(kevo_search *s, kevo__search_job *job,
                               kevo_error *err)
{
    if (job->kind != KEVO__JOB_CHILD)
        return judge_gate(s, job, err);
    kevo_eval_result *res = job->result;
    bool ok = kevo_eval_result_verdict(res) == KEVO_VERDICT_OK;
    double fitness = kevo_eval_result_fitness(res);
    if (!isfinite(fitness) || fitness < 0)
        fitness = 0;
    ok = ok && fitness > 0;
    size_t nd = kevo_archive_dimension_count(s->pop.islands[0]);
    double desc[64];
    bool known = nd <= KEVO_ARRAY_SIZE(desc);
    for (size_t d = 0; known && d < nd; d++) {
        const char *name = kevo_archive_dimension_name(s->pop.islands[0], d);
        known = kevo_eval_result_descriptor(res, name, &desc[d]) == KEVO_OK &&
                !isnan(desc[d]);
    }
    if (job->op == SIZE_MAX && !known) {
        return kevo__error_set(
            err, KEVO_EINVALID,
            "the seed kernel of task %s failed (%s): %s; the search needs a "
            "seed that compiles",
            kevo_task_name(s->cfg.task),
            kevo_verdict_name(kevo_eval_result_verdict(res)),
            kevo_eval_result_reason(res) ? kevo_eval_result_reason(res) : "");
    }
    kevo_status rc = judge_child(s, job, &job->result, fitness, ok,
                                 known ? desc : NULL, err);
    return rc;
}

/* ---- migration ----------------------------------------------------------- */

kevo_status kevo__search_migrate(kevo_search *s, kevo_error *err)
{
    size_t k = s->pop.nislands;
    size_t *best = calloc(k, sizeof *best);
    if (!best)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; i < k; i++) {
        kevo_archive_stats st = {.size = sizeof st};
        kevo_archive_get_stats(s->pop.islands[i], &st);
        best[i] = st.best_cell;
    }
    kevo_status rc = KEVO_OK;
    for (size_t i = 0; i < k && rc == KEVO_OK; i++) {
        if (best[i] == KEVO_NO_CELL)
            continue;
        size_t to = (i + 1) % k;
        const kevo_archive *a = s->pop.islands[i];
        double desc[64];
        if (kevo_archive_dimension_count(a) > KEVO_ARRAY_SIZE(desc) ||
            kevo_archive_descriptor(a, best[i], desc) != KEVO_OK)
            continue;
        const kevo_candidate *c = kevo_archive_candidate(a, best[i]);
        kevo_insert_outcome out;
        size_t cell;
        rc = kevo_archive_insert(s->pop.islands[to], c,
                                 kevo_archive_fitness(a, best[i]), desc, &out,
                                 &cell, err);
        /* The migrant takes its notes along. */
        if (rc == KEVO_OK && out != KEVO_INSERT_REJECTED &&
            kevo__archive_copy_notes(s->pop.islands[to], cell, a, best[i]) !=
                KEVO_OK)
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        if (rc == KEVO_OK)
            rc = kevo__search_log(s, "migration",
                                  json_pack("{s:I, s:I, s:I, s:s}", "from",
                                            (json_int_t)i, "to", (json_int_t)to,
                                            "id",
                                            (json_int_t)kevo_candidate_id(c),
                                            "outcome", outcome_name(out, true)),
                                  err);
    }
    free(best);
    return rc;
}

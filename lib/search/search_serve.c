/*
 * search_serve.c: a member rank of a farm. It says hello (how many
 * evaluations it keeps in flight and what it evaluates with), takes the
 * task from rank 0 once, then evaluates each candidate rank 0 sends: with
 * its evaluator, several at a time (the compile pool runs ahead of the
 * GPUs), or with the scoring function, one at a time, in the order they
 * came. It answers each with its result or score (search_farm.c has the
 * messages) and returns when rank 0 says stop or goes away.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_private.h"
#include "farm/farm_private.h"
#include "model/candidate_private.h"
#include "search_private.h"

/* What a member has in flight on its evaluator: the evaluator's ticket
 * and rank 0's. */
typedef struct served {
    uint64_t local, remote;
} served;

typedef struct server {
    kevo_search *s;
    kevo_farm *farm;
    kevo_task *task; /* rank 0's, once it came */
    served *flight;
    size_t nflight, cflight;
    bool stop;
} server;

size_t kevo__search_member_depth(const kevo_search *s)
{
    if (s->cfg.opt[KEVO_SEARCH_RANK_DEPTH] > 0)
        return (size_t)s->cfg.opt[KEVO_SEARCH_RANK_DEPTH];
    if (!s->cfg.ev)
        return 2; /* one scored, one waiting */
    return kevo__search_evaluator_depth(s);
}

static kevo_status hello(server *sv, kevo_error *err)
{
    kevo_search *s = sv->s;
    char *label;
    if (s->cfg.ev) {
        const char *name = kevo_evaluator_device_name(s->cfg.ev);
        size_t n = kevo_evaluator_device_count(s->cfg.ev);
        label = n > 1 ? kevo__asprintf("%zu GPUs (%s, ...)", n,
                                       name ? name : "unknown")
                      : kevo__strdup(name ? name : "no GPU");
    } else {
        label = kevo__strdup("a scoring function");
    }
    json_t *msg = label ? json_pack("{s:s, s:I, s:s}", "op", "hello", "depth",
                                    (json_int_t)kevo__search_member_depth(s),
                                    "label", label)
                        : NULL;
    free(label);
    if (!msg)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = kevo__farm_send(sv->farm, 0, msg, err);
    json_decref(msg);
    return rc;
}

static kevo_status on_task(server *sv, const json_t *msg, kevo_error *err)
{
    char *text = json_dumps(json_object_get(msg, "task"), JSON_COMPACT);
    if (!text)
        return kevo__error_set(err, KEVO_EWORKER,
                               "rank 0's task message has no task");
    kevo_task *task = NULL;
    kevo_status rc =
        kevo_task_load_string(text, "rank 0's task", NULL, &task, err);
    free(text);
    if (rc != KEVO_OK)
        return rc;
    kevo_task_free(sv->task);
    sv->task = task;
    return KEVO_OK;
}

/* Scores cand with the search's function and answers rank 0. */
static kevo_status score(server *sv, json_int_t ticket,
                         const kevo_candidate *cand, kevo_error *err)
{
    kevo_search *s = sv->s;
    size_t nd = kevo_archive_dimension_count(s->pop.islands[0]);
    double desc[KEVO__SCORE_DIMS_MAX] = {0};
    double fitness = 0;
    char *kind, *diag;
    kevo_status rc = kevo__search_score(s, sv->task, cand, &fitness, desc,
                                        &kind, &diag, err);
    if (rc != KEVO_OK) {
        free(kind);
        free(diag);
        return rc;
    }
    /* Numbers as they are, NaN and infinities included ("nan", "inf"):
     * rank 0 judges them as it judges its own. */
    json_t *d = json_array(), *fit = kevo__json_real_nf(fitness);
    bool ok = d && fit;
    for (size_t i = 0; ok && i < nd; i++)
        ok = json_array_append_new(d, kevo__json_real_nf(desc[i])) == 0;
    json_t *msg =
        ok ? json_pack("{s:s, s:I, s:O, s:O, s:s?, s:s?}", "op", "score",
                       "ticket", ticket, "fitness", fit, "descriptor", d,
                       "fail_kind", kind, "fail_diagnostic", diag)
           : NULL;
    json_decref(d);
    json_decref(fit);
    free(kind);
    free(diag);
    if (!msg)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    rc = kevo__farm_send(sv->farm, 0, msg, err);
    json_decref(msg);
    return rc;
}

static kevo_status on_eval(server *sv, const json_t *msg, kevo_error *err)
{
    if (!sv->task)
        return kevo__error_set(err, KEVO_EWORKER,
                               "rank 0 sent a candidate before the task");
    kevo_jpath path;
    kevo__jpath_init(&path);
    kevo__jpath_key(&path, "candidate");
    kevo_candidate *cand = NULL;
    kevo_status rc =
        kevo__candidate_from_json(json_object_get(msg, "candidate"),
                                  "rank 0's candidate", &path, &cand, err);
    if (rc != KEVO_OK)
        return rc;
    json_int_t ticket = json_integer_value(json_object_get(msg, "ticket"));
    if (!sv->s->cfg.ev) {
        rc = score(sv, ticket, cand, err);
        kevo_candidate_free(cand);
        return rc;
    }
    if (sv->nflight == sv->cflight) {
        size_t c = sv->cflight ? 2 * sv->cflight : 16;
        served *f = realloc(sv->flight, c * sizeof *f);
        if (!f) {
            kevo_candidate_free(cand);
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        }
        sv->flight = f;
        sv->cflight = c;
    }
    uint64_t local = 0;
    unsigned flags =
        (unsigned)json_integer_value(json_object_get(msg, "flags"));
    rc = kevo_evaluator_submit(sv->s->cfg.ev, sv->task, cand, flags, &local,
                               err);
    kevo_candidate_free(cand);
    if (rc != KEVO_OK)
        return rc;
    sv->flight[sv->nflight++] = (served){local, (uint64_t)ticket};
    return KEVO_OK;
}

/* Sends rank 0 the results its evaluator finished. */
static kevo_status answer(server *sv, int timeout_ms, kevo_error *err)
{
    for (;;) {
        kevo_eval_result *res = NULL;
        kevo_status rc =
            kevo_evaluator_wait(sv->s->cfg.ev, timeout_ms, &res, err);
        if (rc == KEVO_DONE || rc == KEVO_ETIMEDOUT) {
            if (err)
                kevo_error_init(err);
            return KEVO_OK;
        }
        if (rc != KEVO_OK)
            return rc;
        uint64_t t = kevo_eval_result_ticket(res);
        size_t i = 0;
        while (i < sv->nflight && sv->flight[i].local != t)
            i++;
        if (i == sv->nflight) {
            kevo_eval_result_free(res);
            continue;
        }
        uint64_t remote = sv->flight[i].remote;
        sv->flight[i] = sv->flight[--sv->nflight];
        json_t *r = kevo__eval_result_to_json_value(res);
        kevo_eval_result_free(res);
        json_t *msg = r ? json_pack("{s:s, s:I, s:o}", "op", "result", "ticket",
                                    (json_int_t)remote, "result", r)
                        : NULL;
        if (!msg)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        rc = kevo__farm_send(sv->farm, 0, msg, err);
        json_decref(msg);
        if (rc != KEVO_OK)
            return rc;
        timeout_ms = 0;
    }
}

/* Rank 0 says stop, and maybe why: a search that stopped to wait for
 * replies stops its members as waiting too, so that every rank of the job
 * ends alike (kevo search exits 4 on each). */
static void on_stop(server *sv, const json_t *msg)
{
    const char *why = json_string_value(json_object_get(msg, "reason"));
    sv->stop = true;
    for (int r = KEVO_STOP_NONE + 1; why && r <= KEVO_STOP_WAITING; r++)
        if (strcmp(why, kevo_stop_reason_name((kevo_stop_reason)r)) == 0)
            sv->s->state.stop = (kevo_stop_reason)r;
}

static kevo_status serve_loop(server *sv, kevo_error *err)
{
    kevo_status rc = hello(sv, err);
    while (rc == KEVO_OK && !sv->stop) {
        bool busy = sv->s->cfg.ev && sv->nflight > 0;
        int from = -1;
        json_t *msg = NULL;
        rc = kevo__farm_recv(sv->farm, busy ? 0 : 200, &from, &msg, err);
        if (rc == KEVO_DONE) {
            rc = KEVO_OK; /* rank 0 went away */
            break;
        }
        if (rc == KEVO_OK && msg) {
            const char *op = json_string_value(json_object_get(msg, "op"));
            if (op && strcmp(op, KEVO__FARM_STOP) == 0)
                on_stop(sv, msg);
            else if (op && strcmp(op, "task") == 0)
                rc = on_task(sv, msg, err);
            else if (op && strcmp(op, "eval") == 0)
                rc = on_eval(sv, msg, err);
            else
                rc = kevo__error_set(err, KEVO_EWORKER,
                                     "rank 0 sent an unknown message \"%s\"",
                                     op ? op : "(no op)");
            json_decref(msg);
            continue; /* every message waiting first, then the evaluator */
        }
        if (rc == KEVO_OK && busy)
            rc = answer(sv, 2, err);
    }
    return rc;
}

kevo_status kevo__search_serve(kevo_search *s, kevo_error *err)
{
    if (!s->cfg.ev && !s->cfg.score)
        return kevo__error_set(err, KEVO_ESTATE,
                               "the search has neither an evaluator nor a "
                               "scoring function");
    server sv = {.s = s, .farm = s->farm.farm};
    kevo_status rc = kevo__search_prepare(s, err); /* the archive's dims */
    if (rc == KEVO_OK)
        rc = serve_loop(&sv, err);
    if (rc != KEVO_OK && !sv.stop) {
        /* Tell rank 0 why this rank stops, so that it goes on without. */
        json_t *msg = json_pack("{s:s, s:s}", "op", "error", "error",
                                err ? err->text : kevo_strerror(rc));
        if (msg)
            kevo__farm_send(sv.farm, 0, msg, NULL);
        json_decref(msg);
    }
    kevo_task_free(sv.task);
    free(sv.flight);
    s->state.phase = KEVO__PHASE_DONE;
    return rc;
}

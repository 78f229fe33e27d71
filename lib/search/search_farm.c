/*
 * search_farm.c: rank 0 of a farm. The search sends each member rank the
 * task once, then children one message each, as long as the rank has room
 * (its depth: what its hello asks for, or the option rank_depth), and
 * reads back evaluation results (an evaluator's, as JSON) or scores (a
 * scoring function's). A member that ends gives its children in flight
 * back: they go to another rank, or stay here.
 *
 * The messages, all JSON objects:
 *   member -> 0  {"op":"hello","depth":N,"label":TEXT}
 *   0 -> member  {"op":"task","task":{kevo-task(5)}}
 *   0 -> member  {"op":"eval","ticket":T,"flags":F,"candidate":{...}}
 *   member -> 0  {"op":"result","ticket":T,"result":{kevo_eval_result}}
 *   member -> 0  {"op":"score","ticket":T,"fitness":X,"descriptor":[...],
 *                 "fail_kind":K,"fail_diagnostic":D}  (the last two may
 *                 be absent)
 *   member -> 0  {"op":"error","error":TEXT}: it cannot go on
 *   0 -> member  {"op":"stop","reason":R}  (R, a kevo_stop_reason_name,
 *                 only when the members are to know: "waiting")
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_private.h"
#include "farm/farm_private.h"
#include "model/candidate_private.h"
#include "proc/ipc.h"
#include "search_private.h"

/* How often a child goes to another rank after the one it was on ended. */
#define MAX_RESENDS 2

bool kevo__search_farming(const kevo_search *s)
{
    return s->farm.farm && s->farm.farm->rank == 0 && s->farm.farm->size > 1;
}

kevo_status kevo_search_set_farm(kevo_search *s, kevo_farm *farm,
                                 kevo_error *err)
{
    if (!s || !farm)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_search_set_farm: NULL argument");
    if (s->state.started || s->farm.farm)
        return kevo__error_set(err, KEVO_ESTATE,
                               "kevo_search_set_farm: the search has started "
                               "or has a farm");
    if (farm->rank == 0 && !(s->farm.members = calloc((size_t)farm->size,
                                                      sizeof *s->farm.members)))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    s->farm.farm = farm;
    return KEVO_OK;
}

void kevo__search_farm_free(kevo_search *s)
{
    for (int r = 0; s->farm.members && r < s->farm.farm->size; r++) {
        free(s->farm.members[r].label);
        free(s->farm.members[r].why);
    }
    free(s->farm.members);
    s->farm.members = NULL;
}

size_t kevo__search_farm_depth(const kevo_search *s)
{
    size_t n = 0;
    for (int r = 1; kevo__search_farming(s) && r < s->farm.farm->size; r++) {
        const kevo__search_member *m = &s->farm.members[r];
        if (m->joined && !m->ended)
            n += m->depth;
    }
    return n;
}

/* The member with the most room, or 0 when none has any or rank 0's own
 * evaluator has more. Children are spread by load so that every rank's
 * queue is as long as its pipeline allows: results then come back about in
 * the order the children were made, and judging in that order does not
 * leave a GPU idle behind a long queue elsewhere. A scoring function runs
 * here only when no member has room. */
static int pick_member(const kevo_search *s)
{
    double local = 2; /* above any member's load */
    if (s->cfg.ev)
        local = (double)kevo_evaluator_pending(s->cfg.ev) /
                (double)kevo__search_member_depth(s);
    int best = 0;
    double best_load = local;
    for (int r = 1; r < s->farm.farm->size; r++) {
        const kevo__search_member *m = &s->farm.members[r];
        if (!m->joined || m->ended || m->in_flight >= m->depth)
            continue;
        double load = (double)m->in_flight / (double)m->depth;
        if (load < best_load) {
            best = r;
            best_load = load;
        }
    }
    return best;
}

static kevo_status send_task(kevo_search *s, int r, kevo_error *err)
{
    char *text = NULL;
    kevo_status rc = kevo_task_to_json(s->cfg.task, &text, err);
    if (rc != KEVO_OK)
        return rc;
    json_error_t je;
    json_t *task = json_loads(text, 0, &je);
    free(text);
    json_t *msg =
        task ? json_pack("{s:s, s:o}", "op", "task", "task", task) : NULL;
    if (!msg)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    rc = kevo__farm_send(s->farm.farm, r, msg, err);
    json_decref(msg);
    return rc;
}

/* Sends job to rank r. */
static kevo_status send_job(kevo_search *s, int r, kevo__search_job *job,
                            unsigned flags, kevo_error *err)
{
    json_t *cand = kevo__candidate_to_json(job->cand);
    json_t *msg =
        cand ? json_pack("{s:s, s:I, s:I, s:o}", "op", "eval", "ticket",
                         (json_int_t)(job->ticket & ~KEVO__FARM_TICKET),
                         "flags", (json_int_t)flags, "candidate", cand)
             : NULL;
    if (!msg)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = kevo__farm_send(s->farm.farm, r, msg, err);
    json_decref(msg);
    if (rc == KEVO_OK) {
        job->rank = r;
        s->farm.members[r].in_flight++;
    }
    return rc;
}

static kevo_status member_ended(kevo_search *s, int r, const char *why,
                                kevo_error *err);

/* Sends job to the member with the most room, if one has any: *sent says
 * whether it went. A member that cannot be written to has ended. */
static kevo_status send_somewhere(kevo_search *s, kevo__search_job *job,
                                  unsigned flags, bool *sent, kevo_error *err)
{
    *sent = false;
    for (;;) {
        int r = pick_member(s);
        if (r == 0)
            return KEVO_OK;
        kevo_error e = KEVO__ERROR_INIT;
        kevo_status rc = send_job(s, r, job, flags, &e);
        if (rc == KEVO_OK) {
            *sent = true;
            return KEVO_OK;
        }
        if (rc != KEVO_EWORKER)
            return kevo__error_wrap(err, &e, "%s", "");
        char why[128];
        kevo__farm_ended(s->farm.farm, r, why, sizeof why);
        if ((rc = member_ended(s, r, *why ? why : e.text, err)) != KEVO_OK)
            return rc;
    }
}

kevo_status kevo__search_farm_send(kevo_search *s, kevo__search_job *job,
                                   unsigned flags, bool *sent, kevo_error *err)
{
    job->ticket = KEVO__FARM_TICKET | ++s->farm.next_ticket;
    return send_somewhere(s, job, flags, sent, err);
}

/* ---- what the members say ------------------------------------------------ */

static kevo__search_job *job_of(kevo_search *s, int r, json_int_t ticket)
{
    uint64_t t = KEVO__FARM_TICKET | (uint64_t)ticket;
    for (size_t i = 0; i < s->pipe.njobs; i++) {
        kevo__search_job *j = &s->pipe.jobs[i];
        if (j->ticket == t && j->rank == r)
            return j;
    }
    return NULL; /* dropped after an interrupt */
}

/* A job whose rank ended: to another rank, or here. */
static kevo_status resend(kevo_search *s, kevo__search_job *job, int from,
                          kevo_error *err)
{
    kevo__search_member *gone = &s->farm.members[from];
    job->rank = 0;
    if (++job->resent > MAX_RESENDS) {
        /* Every rank it went to ended: the child fails. */
        char *why =
            kevo__asprintf("rank %d ended while evaluating it (%s), as had "
                           "every rank it went to before (%" PRIu32 " in all)",
                           from, gone->why ? gone->why : "ended", job->resent);
        if (!why)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        if (s->cfg.score) {
            size_t nd = kevo_archive_dimension_count(s->pop.islands[0]);
            free(job->desc);
            if (!(job->desc = calloc(nd ? nd : 1, sizeof *job->desc))) {
                free(why);
                return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            }
            job->scored = true;
            job->fitness = 0;
            free(job->fail_kind);
            free(job->fail_diagnostic);
            job->fail_kind = kevo__strdup("rank_ended");
            job->fail_diagnostic = why;
            return KEVO_OK;
        }
        kevo_status rc = kevo__eval_result_new_failure(
            s->cfg.task, job->cand, KEVO_SHAPES_TRAIN, KEVO_VERDICT_WORKER_DIED,
            why, NULL, NULL, &job->result, err);
        if (rc == KEVO_OK)
            kevo__eval_result_set_ticket(job->result, job->ticket);
        free(why);
        return rc;
    }
    bool sent = false;
    kevo_status rc = send_somewhere(s, job, 0, &sent, err);
    if (rc != KEVO_OK || sent)
        return rc;
    if (s->cfg.score)
        return KEVO_OK; /* scored here when its turn comes */
    return kevo_evaluator_submit(s->cfg.ev, s->cfg.task, job->cand, 0,
                                 &job->ticket, err);
}

/* Rank r ended (why says how): its children in flight go elsewhere. */
static kevo_status member_ended(kevo_search *s, int r, const char *why,
                                kevo_error *err)
{
    kevo__search_member *m = &s->farm.members[r];
    if (m->ended)
        return KEVO_OK;
    m->ended = true;
    m->why = kevo__strdup(why && *why ? why : "its connection closed");
    m->in_flight = 0;
    kevo_status rc =
        kevo__search_log(s, "rank_ended",
                         json_pack("{s:i, s:s?, s:I}", "rank", r, "why", m->why,
                                   "evaluations", (json_int_t)m->done),
                         err);
    for (size_t i = 0; rc == KEVO_OK && i < s->pipe.njobs; i++) {
        kevo__search_job *j = &s->pipe.jobs[i];
        if (j->rank == r && !j->result && !j->scored)
            rc = resend(s, j, r, err);
    }
    return rc;
}

static kevo_status on_hello(kevo_search *s, int r, const json_t *msg,
                            kevo_error *err)
{
    kevo__search_member *m = &s->farm.members[r];
    json_int_t depth = json_integer_value(json_object_get(msg, "depth"));
    const char *label = json_string_value(json_object_get(msg, "label"));
    int64_t set = s->cfg.opt[KEVO_SEARCH_RANK_DEPTH];
    int64_t total = s->cfg.opt[KEVO_SEARCH_DEPTH];
    int members = s->farm.farm->size - 1;
    if (set > 0)
        m->depth = (size_t)set;
    else if (s->cfg.score && total > 0)
        /* A batch of scored children is spread over the members. */
        m->depth = (size_t)((total + members - 1) / members);
    else
        m->depth = depth > 0 && depth <= 4096 ? (size_t)depth : 2;
    free(m->label);
    m->label = kevo__strdup(label ? label : "");
    kevo_status rc = send_task(s, r, err);
    if (rc == KEVO_OK)
        m->joined = true;
    if (rc == KEVO_OK)
        rc =
            kevo__search_log(s, "rank_joined",
                             json_pack("{s:i, s:s?, s:I}", "rank", r, "label",
                                       m->label, "depth", (json_int_t)m->depth),
                             err);
    return rc;
}

static kevo_status on_result(kevo_search *s, int r, const json_t *msg,
                             kevo_error *err)
{
    kevo__search_job *job =
        job_of(s, r, json_integer_value(json_object_get(msg, "ticket")));
    if (!job)
        return KEVO_OK;
    char origin[64];
    snprintf(origin, sizeof origin, "rank %d's result", r);
    kevo_jpath path;
    kevo__jpath_init(&path);
    kevo_eval_result *res = NULL;
    kevo_status rc = kevo__eval_result_from_json(json_object_get(msg, "result"),
                                                 origin, &path, &res, err);
    if (rc != KEVO_OK)
        return rc;
    kevo__eval_result_set_ticket(res, job->ticket);
    /* Which rank measured it, before the device there. */
    const char *device = kevo_eval_result_device(res);
    char *label = kevo__asprintf("rank %d %s", r, device ? device : "");
    if (!label) {
        kevo_eval_result_free(res);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    kevo__eval_result_set_device(res, label);
    free(label);
    job->result = res;
    s->farm.members[r].in_flight--;
    s->farm.members[r].done++;
    return KEVO_OK;
}

static kevo_status on_score(kevo_search *s, int r, const json_t *msg,
                            kevo_error *err)
{
    kevo__search_job *job =
        job_of(s, r, json_integer_value(json_object_get(msg, "ticket")));
    if (!job)
        return KEVO_OK;
    const json_t *desc = json_object_get(msg, "descriptor");
    size_t nd = kevo_archive_dimension_count(s->pop.islands[0]);
    char origin[64];
    snprintf(origin, sizeof origin, "rank %d's score", r);
    if (!json_is_array(desc) || json_array_size(desc) != nd)
        return kevo__error_set(err, KEVO_EWORKER,
                               "%s of candidate %" PRIu64
                               ": $.descriptor must be an array of %zu "
                               "numbers",
                               origin, kevo_candidate_id(job->cand), nd);
    free(job->desc);
    if (!(job->desc = calloc(nd ? nd : 1, sizeof *job->desc)))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    /* NaN and infinities come as "nan", "inf": judged as rank 0 judges
     * its own scores. */
    kevo_jpath path;
    kevo__jpath_init(&path);
    size_t mark = kevo__jpath_key(&path, "fitness");
    kevo_status rc = kevo__json_number_nf(json_object_get(msg, "fitness"),
                                          origin, &path, &job->fitness, err);
    kevo__jpath_pop(&path, mark);
    mark = kevo__jpath_key(&path, "descriptor");
    for (size_t d = 0; rc == KEVO_OK && d < nd; d++) {
        size_t m = kevo__jpath_index(&path, d);
        rc = kevo__json_number_nf(json_array_get(desc, d), origin, &path,
                                  &job->desc[d], err);
        kevo__jpath_pop(&path, m);
    }
    kevo__jpath_pop(&path, mark);
    if (rc != KEVO_OK)
        return rc;
    const char *kind = json_string_value(json_object_get(msg, "fail_kind"));
    const char *diag =
        json_string_value(json_object_get(msg, "fail_diagnostic"));
    free(job->fail_kind);
    free(job->fail_diagnostic);
    job->fail_kind = kind ? kevo__strdup(kind) : NULL;
    job->fail_diagnostic = diag ? kevo__strdup(diag) : NULL;
    job->scored = true;
    s->farm.members[r].in_flight--;
    s->farm.members[r].done++;
    return KEVO_OK;
}

static kevo_status on_message(kevo_search *s, int r, const json_t *msg,
                              kevo_error *err)
{
    const char *op = json_string_value(json_object_get(msg, "op"));
    if (!op)
        return kevo__error_set(err, KEVO_EWORKER,
                               "rank %d sent a message without \"op\"", r);
    if (strcmp(op, "hello") == 0)
        return on_hello(s, r, msg, err);
    if (strcmp(op, "result") == 0)
        return on_result(s, r, msg, err);
    if (strcmp(op, "score") == 0)
        return on_score(s, r, msg, err);
    if (strcmp(op, "error") == 0) {
        const char *why = json_string_value(json_object_get(msg, "error"));
        return member_ended(s, r, why ? why : "it failed", err);
    }
    return kevo__error_set(err, KEVO_EWORKER,
                           "rank %d sent an unknown message \"%s\"", r, op);
}

kevo_status kevo__search_farm_poll(kevo_search *s, int timeout_ms,
                                   kevo_error *err)
{
    if (!kevo__search_farming(s))
        return KEVO_OK;
    int t = timeout_ms;
    for (;;) {
        int from = -1;
        json_t *msg = NULL;
        kevo_error e = KEVO__ERROR_INIT;
        kevo_status rc = kevo__farm_recv(s->farm.farm, t, &from, &msg, &e);
        if (rc == KEVO_OK && !msg)
            return KEVO_OK; /* nothing more */
        if (rc == KEVO_DONE) {
            char why[128];
            rc = member_ended(
                s, from, kevo__farm_ended(s->farm.farm, from, why, sizeof why),
                err);
        } else if (rc == KEVO_OK && !s->farm.members[from].ended) {
            rc = on_message(s, from, msg, &e);
        }
        json_decref(msg);
        if (rc != KEVO_OK && rc != KEVO_ENOMEM && from > 0) {
            /* A member that breaks the protocol (a message that does not
             * parse or does not fit) is let go, and its children go to the
             * others: the search loses nothing. */
            json_t *stop = json_pack("{s:s}", "op", KEVO__FARM_STOP);
            if (stop)
                kevo__farm_send(s->farm.farm, from, stop, NULL);
            json_decref(stop);
            rc = member_ended(s, from, e.text, err);
        } else if (rc != KEVO_OK && e.code) {
            kevo__error_wrap(err, &e, "%s", "");
        }
        if (rc != KEVO_OK)
            return rc;
        t = 0;
    }
}

kevo_status kevo__search_farm_join(kevo_search *s, int timeout_ms,
                                   kevo_error *err)
{
    if (!kevo__search_farming(s) || s->farm.joined)
        return KEVO_OK;
    int64_t until = kevo__now_ms() + timeout_ms;
    for (;;) {
        bool all = true;
        for (int r = 1; r < s->farm.farm->size; r++)
            all =
                all && (s->farm.members[r].joined || s->farm.members[r].ended);
        if (all || kevo__ms_left(until) == 0)
            break;
        int left = kevo__ms_left(until);
        kevo_status rc =
            kevo__search_farm_poll(s, left < 100 ? left : 100, err);
        if (rc != KEVO_OK)
            return rc;
    }
    s->farm.joined = true;
    return KEVO_OK;
}

json_t *kevo__search_farm_json(const kevo_search *s)
{
    if (!kevo__search_farming(s))
        return NULL;
    json_t *ranks = json_array();
    for (int r = 1; ranks && r < s->farm.farm->size; r++) {
        const kevo__search_member *m = &s->farm.members[r];
        json_array_append_new(
            ranks, json_pack("{s:i, s:s?, s:b, s:I, s:I, s:s?}", "rank", r,
                             "label", m->label, "joined", m->joined, "depth",
                             (json_int_t)m->depth, "evaluations",
                             (json_int_t)m->done, "ended", m->why));
    }
    return ranks ? json_pack("{s:s, s:i, s:o}", "transport",
                             kevo_farm_transport(s->farm.farm), "size",
                             s->farm.farm->size, "ranks", ranks)
                 : NULL;
}

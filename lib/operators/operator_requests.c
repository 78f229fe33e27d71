/*
 * operator_requests.c: the requests in flight and their results. The host
 * copies what a caller submits, gives it an id, hands it to the plugin and
 * keeps it by id until the plugin ends it; it drives asynchronous
 * operators, ends what a plugin forgot, and queues each ended request's
 * result (its children and failures) for the caller.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/candidate_private.h"
#include "operator_private.h"

/* The size of a version 1.0 request: what a caller must at least pass
 * (ABI 1.2's fields took its first reserved slots). */
#define REQUEST_SIZE_1_0                                                       \
    (offsetof(kevo_operator_request, failures) + 8 * sizeof(void *))

void kevo__op_result_free(kevo_operator_result *res)
{
    if (!res)
        return;
    for (size_t i = 0; i < res->nchildren; i++) {
        kevo_candidate_free(res->children[i].cand);
        free(res->children[i].note);
    }
    for (size_t i = 0; i < res->nfailures; i++) {
        free(res->failures[i].kind);
        free(res->failures[i].reason);
    }
    free(res->children);
    free(res->failures);
    kevo__op_result_prompts_free(res);
    kevo__op_result_refused_free(res);
    free(res->op_name);
    free(res);
}

kevo_op_pending *kevo__op_pending_new(kevo_operator *op)
{
    kevo_op_pending *p = calloc(1, sizeof *p);
    if (!p || !(p->res = calloc(1, sizeof *p->res)) ||
        !(p->res->op_name = kevo__strdup(op->name))) {
        kevo__op_pending_free(p);
        return NULL;
    }
    p->op = op;
    return p;
}

void kevo__op_pending_free(kevo_op_pending *p)
{
    if (!p)
        return;
    free(p->waiting);
    kevo__op_revision_free(p->revision);
    kevo__op_repair_free(p->repair);
    kevo__op_failures_free(&p->failures);
    kevo_candidate_free(p->parent);
    kevo_candidate_free(p->second);
    for (size_t i = 0; i < p->ninsp; i++) {
        if (p->insp_cands)
            kevo_candidate_free(p->insp_cands[i]);
        if (p->insp_summaries)
            free(p->insp_summaries[i]);
    }
    free(p->insp_cands);
    free(p->insp_summaries);
    free(p->insp);
    free(p->parent_summary);
    free(p->second_summary);
    free(p->target_cell);
    free(p->prompt);
    kevo__op_texts_free(&p->sections);
    kevo__op_notes_free(&p->notes);
    kevo__op_result_free(p->res);
    free(p);
}

/* ---- requests in flight, by id ---------------------------------------------
 * Ids are handed out in order; a multiplicative hash spreads them anyway,
 * so that the table stays sound whatever the pattern of ends. */

static size_t pending_slot(const kevo_operator_host *host, uint64_t id)
{
    return (size_t)((id * UINT64_C(0x9E3779B97F4A7C15)) >> 32) &
           (host->npending_slots - 1);
}

kevo_op_pending *kevo__op_find_pending(kevo_operator *op, uint64_t id)
{
    kevo_operator_host *host = op->host;
    if (host->npending_slots == 0)
        return NULL;
    size_t mask = host->npending_slots - 1;
    for (size_t i = pending_slot(host, id); host->pending[i];
         i = (i + 1) & mask) {
        kevo_op_pending *p = host->pending[i];
        if (p->id == id)
            return p->op == op && p->res ? p : NULL;
    }
    return NULL;
}

static void pending_put(kevo_operator_host *host, kevo_op_pending *p)
{
    size_t mask = host->npending_slots - 1;
    size_t i = pending_slot(host, p->id);
    while (host->pending[i])
        i = (i + 1) & mask;
    host->pending[i] = p;
}

/* Room for one more request at a load of at most a half. */
static kevo_status pending_reserve(kevo_operator_host *host)
{
    if (2 * (host->in_flight + 1) <= host->npending_slots)
        return KEVO_OK;
    size_t old_n = host->npending_slots;
    kevo_op_pending **old = host->pending;
    size_t n = old_n ? 2 * old_n : 16;
    kevo_op_pending **t = calloc(n, sizeof *t);
    if (!t)
        return KEVO_ENOMEM;
    host->pending = t;
    host->npending_slots = n;
    for (size_t i = 0; i < old_n; i++) {
        if (old[i])
            pending_put(host, old[i]);
    }
    free(old);
    return KEVO_OK;
}

/* Takes p out of the table, moving the entries after it back so that every
 * probe sequence stays unbroken. */
static void pending_remove(kevo_operator_host *host, const kevo_op_pending *p)
{
    size_t mask = host->npending_slots - 1;
    size_t i = pending_slot(host, p->id);
    while (host->pending[i] != p)
        i = (i + 1) & mask;
    host->pending[i] = NULL;
    for (size_t j = (i + 1) & mask; host->pending[j]; j = (j + 1) & mask) {
        size_t home = pending_slot(host, host->pending[j]->id);
        /* The entry at j stays when its home slot is in (i, j],
         * cyclically; otherwise it fills the hole at i. */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            host->pending[i] = host->pending[j];
            host->pending[j] = NULL;
            i = j;
        }
    }
}

kevo_status kevo__op_start(kevo_operator *op, kevo_op_pending *p, uint64_t *id)
{
    kevo_operator_host *host = op->host;
    if (pending_reserve(host) != KEVO_OK)
        return KEVO_ENOMEM;
    p->id = ++host->next_id;
    p->res->id = p->id;
    pending_put(host, p);
    op->in_flight++;
    host->in_flight++;
    host->unpolled = true;
    if (id)
        *id = p->id;
    op->error_msg[0] = '\0';
    host->epoch++;
    return KEVO_OK;
}

kevo_status kevo__op_add_child(kevo_op_pending *p, kevo_candidate *cand,
                               const char *note, uint32_t attempt)
{
    kevo_operator_result *r = p->res;
    char *copy = NULL;
    if (note && !(copy = kevo__strdup(note)))
        goto fail;
    if (r->nchildren == r->cchildren) {
        size_t c = r->cchildren ? 2 * r->cchildren : 4;
        kevo_op_child *ch = realloc(r->children, c * sizeof *ch);
        if (!ch)
            goto fail;
        r->children = ch;
        r->cchildren = c;
    }
    r->children[r->nchildren].cand = cand;
    r->children[r->nchildren].note = copy;
    r->children[r->nchildren].attempt = attempt;
    r->nchildren++;
    return KEVO_OK;
fail:
    free(copy);
    kevo_candidate_free(cand);
    return KEVO_ENOMEM;
}

kevo_status kevo__op_add_failure(kevo_op_pending *p, const char *kind,
                                 const char *reason)
{
    kevo_operator_result *r = p->res;
    char *k = kevo__strdup(kind && *kind ? kind : KEVO_FAIL_INTERNAL);
    char *why = kevo__strdup(reason && *reason ? reason : "no reason given");
    if (!k || !why)
        goto fail;
    if (r->nfailures == r->cfailures) {
        size_t c = r->cfailures ? 2 * r->cfailures : 4;
        kevo_op_failure *f = realloc(r->failures, c * sizeof *f);
        if (!f)
            goto fail;
        r->failures = f;
        r->cfailures = c;
    }
    r->failures[r->nfailures].kind = k;
    r->failures[r->nfailures].reason = why;
    r->nfailures++;
    return KEVO_OK;
fail:
    free(k);
    free(why);
    return KEVO_ENOMEM;
}

void kevo__op_end(kevo_op_pending *p)
{
    kevo_operator_host *host = p->op->host;
    kevo_operator_result *r = p->res;
    pending_remove(host, p);
    p->next = host->ended;
    host->ended = p;
    p->res = NULL;
    r->next = NULL;
    if (host->results_tail)
        host->results_tail->next = r;
    else
        host->results_head = r;
    host->results_tail = r;
    p->op->in_flight--;
    host->in_flight--;
    if (p->waiting)
        host->waiting--;
}

size_t kevo__op_host_waiting(const kevo_operator_host *host, const char **where)
{
    if (where) {
        *where = NULL;
        for (size_t i = 0; host->waiting && i < host->npending_slots; i++)
            if (host->pending[i] && host->pending[i]->waiting) {
                *where = host->pending[i]->waiting;
                break;
            }
    }
    return host->waiting;
}

/* Frees the requests that ended during the last plugin call. */
static void reap(kevo_operator_host *host)
{
    while (host->ended) {
        kevo_op_pending *p = host->ended;
        host->ended = p->next;
        kevo__op_pending_free(p);
    }
}

/* Ends a request the plugin did not end, with a failure saying why. */
static void end_with_failure(kevo_op_pending *p, const char *reason)
{
    char line[KEVO__OP_MSG_SIZE + 128];
    snprintf(line, sizeof line, "request %llu: %s", (unsigned long long)p->id,
             reason);
    kevo__op_log(p->op, KEVO_LOG_ERROR, line);
    kevo__op_add_failure(p, KEVO_FAIL_INTERNAL, reason);
    kevo__op_end(p);
}

static char *dup_or_null(const char *s, bool *failed)
{
    if (!s)
        return NULL;
    char *c = kevo__strdup(s);
    if (!c)
        *failed = true;
    return c;
}

/* What a plugin of ABI 1.3 reads of the prompt and the notes: their
 * arrays, from the caller's arrays or its JSON text. */
static kevo_status copy_texts(kevo_op_pending *p,
                              const kevo_operator_request *req, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    if (req->n_prompt_sections > 0)
        rc = kevo__op_texts_copy(&p->sections, req->prompt_sections,
                                 req->n_prompt_sections,
                                 "kevo_operator_submit: prompt_sections", err);
    else if (req->prompt_json)
        rc = kevo__op_texts_from_json(&p->sections, req->prompt_json,
                                      "kevo_operator_submit: prompt_json", err);
    if (rc != KEVO_OK)
        return rc;
    if (kevo__op_notes_init(&p->notes, 2 + p->ninsp) != KEVO_OK)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    const kevo_operator_notes *given = req->notes;
    size_t ngiven = req->n_notes;
    static const char what[] = "kevo_operator_submit: notes";
    for (size_t i = 0; rc == KEVO_OK && i < 2 + p->ninsp; i++) {
        const kevo_candidate *c = i == 0   ? p->parent
                                  : i == 1 ? p->second
                                           : p->insp_cands[i - 2];
        const char *summary = i == 0   ? req->parent_summary_json
                              : i == 1 ? req->second_summary_json
                                       : req->inspirations[i - 2].summary_json;
        if (!c)
            continue;
        rc = kevo__op_notes_set(&p->notes, i, kevo_candidate_id(c),
                                i < ngiven ? &given[i] : NULL, summary, what,
                                err);
    }
    return rc;
}

/* What a plugin of an older minor reads instead: JSON text, the caller's
 * or made from the caller's arrays. */
static bool copy_json(kevo_op_pending *p, const kevo_operator_request *req)
{
    bool failed = false;
    const kevo_operator_notes *given = req->notes;
    size_t ngiven = req->n_notes;
    p->parent_summary = dup_or_null(
        kevo__op_notes_evaluation(given, ngiven, 0, req->parent_summary_json),
        &failed);
    p->second_summary = dup_or_null(
        kevo__op_notes_evaluation(given, ngiven, 1, req->second_summary_json),
        &failed);
    for (size_t i = 0; i < p->ninsp; i++) {
        p->insp_summaries[i] = dup_or_null(
            kevo__op_notes_evaluation(given, ngiven, 2 + i,
                                      req->inspirations[i].summary_json),
            &failed);
        p->insp[i].summary_json = p->insp_summaries[i];
    }
    if (req->prompt_json)
        p->prompt = kevo__op_prompt_sections(req->prompt_json);
    else if (req->n_prompt_sections > 0)
        p->prompt =
            kevo__op_texts_json(req->prompt_sections, req->n_prompt_sections);
    if ((req->prompt_json || req->n_prompt_sections > 0) && !p->prompt)
        failed = true;
    return !failed;
}

/* The host's copy of a request, with its own id, in *out; the candidates
 * are shared, not copied. */
static kevo_status copy_request(kevo_operator *op,
                                const kevo_operator_request *req,
                                kevo_op_pending **out, kevo_error *err)
{
    bool failed = false;
    kevo_status rc = KEVO_OK;
    kevo_op_pending *p = kevo__op_pending_new(op);
    *out = NULL;
    if (!p)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    p->parent = kevo__candidate_share(req->parent);
    p->second = kevo__candidate_share(req->second_parent);
    p->target_cell = dup_or_null(req->target_cell_json, &failed);
    if (req->n_inspirations && req->inspirations && !failed) {
        size_t n = req->n_inspirations;
        p->insp_cands = calloc(n, sizeof *p->insp_cands);
        p->insp_summaries = calloc(n, sizeof *p->insp_summaries);
        p->insp = calloc(n, sizeof *p->insp);
        if (!p->insp_cands || !p->insp_summaries || !p->insp)
            failed = true;
        for (size_t i = 0; i < n && !failed; i++) {
            p->ninsp = i + 1;
            p->insp_cands[i] =
                kevo__candidate_share(req->inspirations[i].candidate);
            p->insp[i].candidate = p->insp_cands[i];
        }
    }
    if (!failed && req->n_failures &&
        kevo__op_failures_copy(&p->failures, req->failures, req->n_failures,
                               "failures", NULL) != KEVO_OK)
        failed = true;
    bool modern = op->plugin->desc->abi_minor >= 3;
    if (!failed && !modern && !copy_json(p, req))
        failed = true;
    if (failed)
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    else if (modern)
        rc = copy_texts(p, req, err);
    if (rc != KEVO_OK) {
        kevo__op_pending_free(p);
        return rc;
    }
    p->lineage[0] = kevo_candidate_id(p->parent);
    p->lineage[1] = p->second ? kevo_candidate_id(p->second) : 0;
    p->nlineage = p->second ? 2 : 1;
    p->prompt_id = req->prompt_id;
    p->generation = kevo_candidate_generation(p->parent) + 1;
    kevo_operator_request *r = &p->req;
    r->size = sizeof *r;
    r->parent = p->parent;
    r->parent_summary_json = p->parent_summary;
    r->inspirations = p->insp;
    r->n_inspirations = p->ninsp;
    r->target_cell_json = p->target_cell;
    r->second_parent = p->second;
    r->second_summary_json = p->second_summary;
    r->prompt_json = p->prompt;
    r->prompt_id = req->prompt_id;
    r->n_children = req->n_children;
    r->failures = p->failures.n ? p->failures.items : NULL;
    r->n_failures = p->failures.n;
    if (modern) {
        r->prompt_sections = p->sections.n ? p->sections.items : NULL;
        r->n_prompt_sections = p->sections.n;
        r->notes = p->notes.items;
        r->n_notes = p->notes.n;
    }
    *out = p;
    return KEVO_OK;
}

kevo_status kevo_operator_submit(kevo_operator *op,
                                 const kevo_operator_request *req, uint64_t *id,
                                 kevo_error *err)
{
    if (!op || !req)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_submit: %s is NULL",
                               !op ? "op" : "req");
    if (req->size < REQUEST_SIZE_1_0)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_submit: req->size is %zu, less "
                               "than sizeof(kevo_operator_request) (%zu)",
                               req->size, (size_t)REQUEST_SIZE_1_0);
    if (!req->parent)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_submit: the request has no "
                               "parent");
    if (req->n_children < 1)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_submit: n_children is 0");
    if (req->n_inspirations && !req->inspirations)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_submit: n_inspirations is %zu "
                               "but inspirations is NULL",
                               req->n_inspirations);
    for (size_t i = 0; i < req->n_inspirations; i++) {
        if (!req->inspirations[i].candidate)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "kevo_operator_submit: inspiration %zu has "
                                   "no candidate",
                                   i);
    }
    for (size_t i = 0; i < req->n_failures; i++) {
        if (!req->failures || !req->failures[i].kind)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "kevo_operator_submit: failure %zu has no "
                                   "kind",
                                   i);
    }
    if (req->n_notes > 2 + req->n_inspirations)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_submit: n_notes is %zu, more "
                               "than the request's %zu candidates",
                               req->n_notes, 2 + req->n_inspirations);
    kevo_status rc = kevo__op_check_texts(
        req->prompt_sections, req->n_prompt_sections, req->notes, req->n_notes,
        "kevo_operator_submit", err);
    if (rc != KEVO_OK)
        return rc;
    kevo_op_pending *p = NULL;
    rc = copy_request(op, req, &p, err);
    if (rc != KEVO_OK)
        return rc;
    if (kevo__op_start(op, p, id) != KEVO_OK) {
        kevo__op_pending_free(p);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    p->req.id = p->id;
    kevo__op_after_call(p, op->plugin->desc->propose(op->state, &p->req));
    return KEVO_OK;
}

void kevo__op_after_call(kevo_op_pending *p, kevo_status rc)
{
    kevo_operator *op = p->op;
    const kevo_operator_desc *d = op->plugin->desc;
    const char *fn = p->revision ? "revise" : p->repair ? "repair" : "propose";
    if (p->res) {
        /* Still in flight: acceptable only from an asynchronous operator
         * that took the request on. */
        if (rc != KEVO_OK) {
            char why[KEVO__OP_MSG_SIZE + 64];
            snprintf(why, sizeof why, "%s failed: %s", fn,
                     op->error_msg[0] ? op->error_msg : kevo_strerror(rc));
            end_with_failure(p, why);
        } else if (!d->poll) {
            char why[160];
            snprintf(why, sizeof why,
                     "%s returned without ending the request (a synchronous "
                     "operator must call done)",
                     fn);
            end_with_failure(p, why);
        }
    } else if (rc != KEVO_OK) {
        char line[KEVO__OP_MSG_SIZE + 64];
        snprintf(line, sizeof line,
                 "%s returned '%s' after ending "
                 "request %llu: %s",
                 fn, kevo_strerror(rc), (unsigned long long)p->id,
                 op->error_msg);
        kevo__op_log(op, KEVO_LOG_WARN, line);
    }
    reap(op->host);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Calls op's poll; requests the plugin says it no longer holds, but never
 * ended, are ended with a failure. Returns true when a request ended. */
static bool poll_one(kevo_operator *op, int timeout_ms)
{
    kevo_operator_host *host = op->host;
    size_t before = host->in_flight;
    host->epoch++;
    size_t left = op->plugin->desc->poll(op->state, timeout_ms);
    /* Ending a request moves later entries of the table back into its
     * slot, so that slot is looked at again. */
    for (size_t i = 0;
         left == 0 && op->in_flight > 0 && i < host->npending_slots;) {
        kevo_op_pending *p = host->pending[i];
        if (p && p->op == op)
            end_with_failure(p, "the operator reports nothing in flight but "
                                "never ended this request");
        else
            i++;
    }
    reap(host);
    return host->in_flight < before;
}

kevo_status kevo_operator_host_poll(kevo_operator_host *host, int timeout_ms,
                                    size_t *in_flight, kevo_error *err)
{
    if (!host || timeout_ms < 0)
        return kevo__error_set(err, KEVO_EINVAL, "kevo_operator_host_poll: %s",
                               !host ? "host is NULL" : "negative timeout");
    size_t busy = 0;
    kevo_operator *only = NULL;
    host->unpolled = false;
    for (size_t i = 0; i < host->nops; i++) {
        if (host->ops[i]->in_flight > 0 && host->ops[i]->plugin->desc->poll) {
            busy++;
            only = host->ops[i];
        }
    }
    if (busy == 1) {
        poll_one(only, timeout_ms);
    } else if (busy > 1) {
        /* Several asynchronous operators: no one of them can wait for all,
         * so poll each without waiting, and nap briefly between rounds. */
        double deadline = now_ms() + timeout_ms;
        for (;;) {
            bool ended = false;
            for (size_t i = 0; i < host->nops; i++) {
                kevo_operator *op = host->ops[i];
                if (op->in_flight > 0 && op->plugin->desc->poll)
                    ended |= poll_one(op, 0);
            }
            double left = deadline - now_ms();
            if (ended || host->in_flight == 0 || left <= 0)
                break;
            double nap = left < 2.0 ? left : 2.0;
            struct timespec ts = {0, (long)(nap * 1e6)};
            nanosleep(&ts, NULL);
        }
    }
    if (in_flight)
        *in_flight = host->in_flight;
    return KEVO_OK;
}

/* ---- results ------------------------------------------------------------- */

kevo_status kevo_operator_host_next_result(kevo_operator_host *host,
                                           kevo_operator_result **out)
{
    if (!out)
        return KEVO_EINVAL;
    *out = NULL;
    if (!host)
        return KEVO_EINVAL;
    kevo_operator_result *r = host->results_head;
    if (!r)
        return KEVO_DONE;
    host->results_head = r->next;
    if (!host->results_head)
        host->results_tail = NULL;
    r->next = NULL;
    *out = r;
    return KEVO_OK;
}

void kevo_operator_result_free(kevo_operator_result *res)
{
    kevo__op_result_free(res);
}

uint64_t kevo_operator_result_id(const kevo_operator_result *res)
{
    return res ? res->id : 0;
}

const char *kevo_operator_result_operator(const kevo_operator_result *res)
{
    return res ? res->op_name : NULL;
}

size_t kevo_operator_result_child_count(const kevo_operator_result *res)
{
    return res ? res->nchildren : 0;
}

const kevo_candidate *
kevo_operator_result_child(const kevo_operator_result *res, size_t i)
{
    return res && i < res->nchildren ? res->children[i].cand : NULL;
}

const char *kevo_operator_result_child_note(const kevo_operator_result *res,
                                            size_t i)
{
    return res && i < res->nchildren ? res->children[i].note : NULL;
}

kevo_candidate *kevo_operator_result_take_child(kevo_operator_result *res,
                                                size_t i)
{
    if (!res || i >= res->nchildren)
        return NULL;
    kevo_candidate *c = res->children[i].cand;
    res->children[i].cand = NULL;
    return c;
}

size_t kevo_operator_result_failure_count(const kevo_operator_result *res)
{
    return res ? res->nfailures : 0;
}

const char *kevo_operator_result_failure_kind(const kevo_operator_result *res,
                                              size_t i)
{
    return res && i < res->nfailures ? res->failures[i].kind : NULL;
}

const char *kevo_operator_result_failure_reason(const kevo_operator_result *res,
                                                size_t i)
{
    return res && i < res->nfailures ? res->failures[i].reason : NULL;
}

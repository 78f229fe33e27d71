/*
 * evaluator_replies.c: what a GPU worker replied to the job on its slot
 * (or its death, or a missed deadline), turned into results: the
 * candidate's, those of the group members sent with it, and the baselines
 * they are compared with, which are those of the slot's own device (the
 * reference's times it measured, the seed's, and the times of the seed
 * and the reference paired with the candidate in the same message).
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evaluator_private.h"

/* Keeps the reference times a result carries (the worker times the
 * reference on the first evaluation of each task and set on each device)
 * in the baselines of the device. */
static void take_reference_times(taskrec *tr, taskbase *base,
                                 kevo_shape_set set,
                                 const kevo_eval_result *res)
{
    size_t n = kevo_task_shape_count(tr->task, set);
    double *t = kevo__ev_nan_array(n);
    if (!t)
        return;
    kevo__eval_result_times(res, KEVO_BASELINE_REFERENCE, t, n);
    for (size_t i = 0; i < n; i++) {
        if (t[i] > 0)
            base->ref_times[set][i] = t[i];
    }
    free(t);
}

/* The pairing of a reply: per shape of the set, the seed's time and
 * spread (from its entry: the companion sent last, or the group's member
 * that is the seed) and the reference's (timed beside the candidate), NaN
 * where not measured. */
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
    p->n = kevo_task_shape_count(j->tr->task, kevo__ev_job_set(j));
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
    /* The seed's times: its companion entry (the last) when it was sent
     * beside j; the entry of the member that is the seed when it is one of
     * the group (the finalists timed again together). */
    const json_t *comp = json_object_get(reply, "companions");
    const json_t *seed =
        j->seed_sent ? json_array_get(comp, json_array_size(comp) - 1) : NULL;
    for (size_t k = 0; !seed && k < j->nsent; k++) {
        if (kevo__ev_is_seed_job(j->sent[k]))
            seed = json_array_get(comp, k);
    }
    if (!seed && kevo__ev_is_seed_job(j))
        seed = reply;
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
    if (kevo__ev_is_seed_job(m)) {
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
    size_t nset = kevo_task_shape_count(j->tr->task, kevo__ev_job_set(j));
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
        kevo_status rc = kevo__ev_finish_failure(
            ev, m, KEVO_VERDICT_WORKER_DIED, why ? why : "not evaluated", err);
        free(why);
        return rc;
    }
    json_t *msg = json_deep_copy(entry);
    json_object_set(msg, "timer", json_object_get(reply, "timer"));
    kevo_eval_result *res = NULL;
    kevo_compile_info ci;
    kevo__ev_figures f;
    kevo__ev_figures_of(ev, j->on, &f);
    kevo_status rc =
        msg ? kevo__eval_result_new(
                  j->tr->task, m->cand, kevo__ev_job_set(m), msg,
                  kevo__ev_compile_info(m->compiled, &ci), &f.ctx, &res, err)
            : kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    json_decref(msg);
    if (rc == KEVO_EWORKER) {
        char why[KEVO_ERROR_TEXT_SIZE + 64];
        snprintf(why, sizeof why, "the GPU worker's reply is malformed: %s",
                 err ? err->text : "");
        if (err)
            kevo_error_init(err);
        return kevo__ev_finish_failure(ev, m, KEVO_VERDICT_WORKER_DIED, why,
                                       err);
    }
    if (rc != KEVO_OK)
        return rc;
    kevo_shape_set set = kevo__ev_job_set(j);
    const taskbase *base = &j->tr->base[j->on];
    size_t n = kevo_task_shape_count(j->tr->task, set);
    kevo__eval_result_set_baseline(res, KEVO_BASELINE_SEED,
                                   base->seed_times[set], n, NULL);
    kevo__eval_result_set_baseline(res, KEVO_BASELINE_REFERENCE,
                                   base->ref_times[set], n, NULL);
    if (m->flags & KEVO_EVAL_PAIRED)
        pairing_apply(p, m, res);
    kevo__ev_job_finish(ev, m, res);
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
    kevo__gpu_client_forget_task(ev->slots[j->on].gpu, lost);
    if (j->resent)
        return false;
    j->resent = true;
    j->state = JOB_READY;
    for (size_t i = 0; i < j->nsent; i++) {
        j->sent[i]->state = JOB_READY;
        j->sent[i]->on = -1;
    }
    j->nsent = 0;
    j->seed_sent = false;
    if (j->timed_ref)
        j->tr->base[j->on].ref_timed[kevo__ev_job_set(j)] = false;
    j->on = -1;
    return true;
}

kevo_status kevo__ev_gpu_step(kevo_evaluator *ev, size_t slot, int timeout_ms,
                              kevo_error *err)
{
    evslot *sl = &ev->slots[slot];
    if (!kevo__gpu_client_busy(sl->gpu))
        return KEVO_OK;
    json_t *reply = NULL;
    kevo_error gerr;
    kevo_error_init(&gerr);
    kevo_status rc = kevo__gpu_client_poll(sl->gpu, timeout_ms, &reply, &gerr);
    job *j = sl->running;
    if (rc == KEVO_OK && !reply)
        return KEVO_OK;
    sl->running = NULL;
    if (rc == KEVO_ETIMEDOUT)
        return kevo__ev_finish_sent(ev, j, KEVO_VERDICT_TIMEOUT, gerr.text,
                                    err);
    if (rc != KEVO_OK) {
        /* A worker that died without a verdict: a fault of the kernel as
         * far as anyone can tell, with how the process ended. */
        return kevo__ev_finish_sent(ev, j, KEVO_VERDICT_WORKER_DIED, gerr.text,
                                    err);
    }
    if (resend(ev, j, reply)) {
        json_decref(reply);
        return KEVO_OK;
    }
    kevo_shape_set set = kevo__ev_job_set(j);
    taskbase *base = &j->tr->base[slot];
    kevo_eval_result *res = NULL;
    kevo_compile_info ci;
    kevo__ev_figures f;
    kevo__ev_figures_of(ev, (int)slot, &f);
    rc = kevo__eval_result_new(j->tr->task, j->cand, set, reply,
                               kevo__ev_compile_info(j->compiled, &ci), &f.ctx,
                               &res, err);
    if (rc != KEVO_OK) {
        json_decref(reply);
        char why[KEVO_ERROR_TEXT_SIZE + 64];
        snprintf(why, sizeof why, "the GPU worker's reply is malformed: %s",
                 err ? err->text : "");
        if (err)
            kevo_error_init(err);
        kevo__gpu_client_restart(sl->gpu, NULL);
        return kevo__ev_finish_sent(ev, j, KEVO_VERDICT_WORKER_DIED, why, err);
    }
    take_reference_times(j->tr, base, set, res);
    size_t nshapes = kevo_task_shape_count(j->tr->task, set);
    kevo__eval_result_set_baseline(res, KEVO_BASELINE_SEED,
                                   base->seed_times[set], nshapes, NULL);
    kevo__eval_result_set_baseline(res, KEVO_BASELINE_REFERENCE,
                                   base->ref_times[set], nshapes, NULL);
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
        kevo__gpu_client_restart(sl->gpu, &rerr);
    }
    rc = KEVO_OK;
    for (size_t k = 0; k < j->nsent && rc == KEVO_OK; k++)
        rc = member_result(ev, j, k, reply, res, &p, err);
    j->nsent = 0;
    pairing_free(&p);
    json_decref(reply);
    kevo__ev_job_finish(ev, j, res);
    return rc;
}

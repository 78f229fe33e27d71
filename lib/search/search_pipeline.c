/*
 * search_pipeline.c: the evaluations in flight. Candidates are submitted
 * to the evaluator (or queued for the scoring function) as jobs in ticket
 * order; finished evaluations are collected into their jobs, and the jobs
 * at the front of the queue are judged in that order, so that the order
 * of judging does not depend on the order in which evaluations finish.
 * Judging triggers the periodic checkpoints and the migrations between
 * islands.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proc/ipc.h"
#include "search_private.h"

/* ---- submitting ---------------------------------------------------------- */

void kevo__search_job_clear(kevo__search_job *job)
{
    kevo_candidate_free(job->cand);
    kevo_eval_result_free(job->result);
    free(job->fail_kind);
    free(job->fail_diagnostic);
    free(job->desc);
    job->cand = NULL;
    job->result = NULL;
    job->desc = NULL;
    job->fail_kind = job->fail_diagnostic = NULL;
}

kevo_status kevo__search_submit(kevo_search *s, kevo__job_kind kind,
                                kevo_candidate *cand,
                                const kevo__search_job *proto, unsigned flags,
                                kevo_error *err)
{
    if (s->pipe.njobs == s->pipe.cjobs) {
        size_t c = s->pipe.cjobs ? 2 * s->pipe.cjobs : 16;
        kevo__search_job *j = realloc(s->pipe.jobs, c * sizeof *j);
        if (!j) {
            kevo_candidate_free(cand);
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        }
        s->pipe.jobs = j;
        s->pipe.cjobs = c;
    }
    kevo__search_job job = {0};
    if (proto)
        job = *proto;
    job.kind = kind;
    job.cand = cand;
    job.result = NULL;
    job.rank = 0;
    job.scored = false;
    job.desc = NULL;
    job.resent = 0;
    bool farmed = false;
    /* Children go to the other ranks of a farm while they have room; the
     * seed, the gate and the tuning stay here. */
    if (kevo__search_farming(s) && kind == KEVO__JOB_CHILD &&
        job.op != SIZE_MAX) {
        kevo_status rc = kevo__search_farm_send(s, &job, flags, &farmed, err);
        if (rc != KEVO_OK) {
            kevo_candidate_free(cand);
            return rc;
        }
    }
    if (farmed) {
        /* sent */
    } else if (s->cfg.ev) {
        kevo_status rc = kevo_evaluator_submit(s->cfg.ev, s->cfg.task, cand,
                                               flags, &job.ticket, err);
        if (rc != KEVO_OK) {
            kevo_candidate_free(cand);
            return rc;
        }
    } else {
        job.ticket = ++s->pipe.next_ticket;
    }
    s->pipe.jobs[s->pipe.njobs++] = job;
    return KEVO_OK;
}

kevo_status kevo__search_submit_group(kevo_search *s, kevo__job_kind kind,
                                      kevo_candidate **cands, size_t n,
                                      unsigned flags, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    uint64_t *tickets = calloc(n ? n : 1, sizeof *tickets);
    if (!tickets || s->pipe.njobs + n > s->pipe.cjobs) {
        size_t c = s->pipe.cjobs ? s->pipe.cjobs : 16;
        while (c < s->pipe.njobs + n)
            c *= 2;
        kevo__search_job *j =
            tickets ? realloc(s->pipe.jobs, c * sizeof *j) : NULL;
        if (!j)
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        else {
            s->pipe.jobs = j;
            s->pipe.cjobs = c;
        }
    }
    if (rc == KEVO_OK)
        rc = kevo_evaluator_submit_group(s->cfg.ev, s->cfg.task,
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
        s->pipe.jobs[s->pipe.njobs++] = job;
    }
    free(tickets);
    return rc;
}

/* ---- collecting and judging ---------------------------------------------- */

/* Collects finished evaluations, waiting at most timeout_ms for the
 * first. */
/* Collects what the evaluator finished, waiting at most timeout_ms for
 * the first. */
static kevo_status collect_local(kevo_search *s, int timeout_ms,
                                 kevo_error *err)
{
    int t = timeout_ms;
    for (;;) {
        kevo_eval_result *res = NULL;
        kevo_status rc = kevo_evaluator_wait(s->cfg.ev, t, &res, err);
        if (rc == KEVO_ETIMEDOUT || rc == KEVO_DONE)
            return KEVO_OK;
        if (rc != KEVO_OK)
            return rc;
        uint64_t ticket = kevo_eval_result_ticket(res);
        size_t i = 0;
        while (i < s->pipe.njobs && s->pipe.jobs[i].ticket != ticket)
            i++;
        if (i < s->pipe.njobs && !s->pipe.jobs[i].result)
            s->pipe.jobs[i].result = res;
        else
            kevo_eval_result_free(res); /* dropped by an interrupt */
        t = 0;
    }
}

/* True when the job at the front of the queue can be judged. */
static bool front_ready(const kevo_search *s)
{
    if (s->pipe.njobs == 0)
        return false;
    const kevo__search_job *j = &s->pipe.jobs[0];
    return j->result || j->scored || (s->cfg.score && j->rank == 0);
}

kevo_status kevo__search_collect(kevo_search *s, int timeout_ms,
                                 kevo_error *err)
{
    bool local = false, farmed = false;
    for (size_t i = 0; i < s->pipe.njobs; i++) {
        const kevo__search_job *j = &s->pipe.jobs[i];
        if (j->result || j->scored)
            continue;
        if (j->rank > 0)
            farmed = true;
        else if (s->cfg.ev)
            local = true;
    }
    if (!farmed && !kevo__search_farming(s))
        return local ? collect_local(s, timeout_ms, err) : KEVO_OK;
    /* Both rank 0's evaluator and the members: each in turn, in short
     * slices, until the front of the queue can be judged or the time is
     * up. */
    int64_t until = kevo__now_ms() + (timeout_ms < 0 ? 100 : timeout_ms);
    for (;;) {
        kevo_status rc = kevo__search_farm_poll(s, 0, err);
        if (rc == KEVO_OK && local)
            rc = collect_local(s, 0, err);
        if (rc != KEVO_OK || front_ready(s))
            return rc;
        int left = kevo__ms_left(until);
        if (left == 0)
            return KEVO_OK;
        int slice = local ? 1 : (left < 5 ? left : 5);
        if ((rc = kevo__search_farm_poll(s, slice, err)) != KEVO_OK)
            return rc;
        if (local && (rc = collect_local(s, 1, err)) != KEVO_OK)
            return rc;
    }
}

kevo_status kevo__search_score(kevo_search *s, const kevo_task *task,
                               const kevo_candidate *cand, double *fitness,
                               double *desc, char **kind, char **diagnostic,
                               kevo_error *err)
{
    size_t nd = kevo_archive_dimension_count(s->pop.islands[0]);
    *kind = *diagnostic = NULL;
    if (nd > KEVO__SCORE_DIMS_MAX)
        return kevo__error_set(err, KEVO_ELIMIT,
                               "too many behaviour dimensions");
    s->repair.scoring = true;
    kevo_status rc =
        s->cfg.score(task, cand, fitness, desc, s->cfg.score_user, err);
    s->repair.scoring = false;
    /* What kevo_search_fail_candidate() said. */
    *kind = s->repair.score_kind;
    *diagnostic = s->repair.score_diagnostic;
    s->repair.score_kind = s->repair.score_diagnostic = NULL;
    return rc;
}

/* Judges the finished jobs at the front of the queue, in ticket order. */
kevo_status kevo__search_judge_ready(kevo_search *s, kevo_error *err)
{
    while (s->pipe.njobs > 0) {
        kevo__search_job *job = &s->pipe.jobs[0];
        kevo_status rc;
        if (s->cfg.score && job->kind == KEVO__JOB_CHILD && job->rank > 0) {
            /* Scored by another rank. */
            if (!job->scored)
                return KEVO_OK;
            double fitness = job->fitness;
            if (!isfinite(fitness) || fitness < 0)
                rc = kevo__error_set(
                    err, KEVO_ERANGE,
                    "the scoring function gave fitness %g for candidate "
                    "%llu on rank %d",
                    fitness, (unsigned long long)kevo_candidate_id(job->cand),
                    job->rank);
            else
                rc = kevo__search_judge_scored(s, job, fitness, job->desc, err);
        } else if (s->cfg.score && job->kind == KEVO__JOB_CHILD &&
                   job->scored) {
            /* Failed where every rank it went to ended. */
            rc = kevo__search_judge_scored(s, job, 0, job->desc, err);
        } else if (s->cfg.score && job->kind == KEVO__JOB_CHILD) {
            double desc[KEVO__SCORE_DIMS_MAX] = {0};
            double fitness = 0;
            rc =
                kevo__search_score(s, s->cfg.task, job->cand, &fitness, desc,
                                   &job->fail_kind, &job->fail_diagnostic, err);
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
                s->tuning.pending--;
        }
        kevo__search_job_clear(&s->pipe.jobs[0]);
        memmove(&s->pipe.jobs[0], &s->pipe.jobs[1],
                (s->pipe.njobs - 1) * sizeof *s->pipe.jobs);
        s->pipe.njobs--;
        if (rc != KEVO_OK)
            return rc;
        if (s->progress.since_checkpoint >=
            (uint64_t)s->cfg.opt[KEVO_SEARCH_CHECKPOINT_EVERY]) {
            rc = kevo__search_checkpoint(s, err);
            if (rc != KEVO_OK)
                return rc;
        }
        if (s->pop.nislands > 1 &&
            s->progress.since_migration >=
                (uint64_t)s->cfg.opt[KEVO_SEARCH_MIGRATE_EVERY]) {
            s->progress.since_migration = 0;
            rc = kevo__search_migrate(s, err);
            if (rc != KEVO_OK)
                return rc;
        }
    }
    return KEVO_OK;
}

/* Drops the work in flight (after an interrupt). */
void kevo__search_drop_in_flight(kevo_search *s)
{
    for (size_t i = 0; i < s->pipe.njobs; i++)
        kevo__search_job_clear(&s->pipe.jobs[i]);
    s->pipe.njobs = 0;
}

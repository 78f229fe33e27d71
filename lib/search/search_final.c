/*
 * search_final.c: the end of a search. The finalists (the leaders, the
 * gate_top fittest correct candidates ever judged, with the running
 * champion and the task's seed) are timed again together,
 * interleaved run by run, so that near-ties are decided by paired times
 * rather than by the noise of separate ones; then they are gated in the
 * order of those times until one passes, and that one is the champion.
 * The seed passes against itself when it is correct, so a search whose
 * seed is correct ends with a champion at least as fast as the seed.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/candidate_private.h"
#include "search_private.h"

/* The candidate of finalist id: a reference to the leader, the champion,
 * or a copy of the seed with the id; NULL when out of memory or gone. */
static kevo_candidate *finalist_candidate(kevo_search *s, uint64_t id)
{
    const kevo__search_leader *l = kevo__search_leader_find(s, id);
    if (l)
        return kevo__candidate_share(l->cand);
    if (s->pick.champion_cand && kevo_candidate_id(s->pick.champion_cand) == id)
        return kevo__candidate_share(s->pick.champion_cand);
    if (id != KEVO__SEARCH_SEED_ID || !kevo_task_seed(s->cfg.task))
        return NULL;
    kevo_candidate *c = kevo_candidate_copy(kevo_task_seed(s->cfg.task));
    if (c)
        kevo_candidate_set_id(c, id);
    return c;
}

/* Adds id to the finalists unless it is there. */
static void add_finalist(kevo__search_pick *pick, uint64_t id)
{
    for (size_t i = 0; i < pick->nfinalists; i++) {
        if (pick->finalists[i] == id)
            return;
    }
    pick->finalists[pick->nfinalists++] = id;
}

/* The finalists: the leaders (the gate_top fittest correct candidates
 * ever judged, elites or not), the running champion, which passed its gate
 * already, and the seed, which passes against itself when it is correct:
 * a search whose seed is correct ends with a champion at least as fast,
 * and one that crowned a champion never ends with a worse one. */
static kevo_status choose_finalists(kevo_search *s, kevo_error *err)
{
    const kevo__search_leaders *L = &s->pick.leaders;
    free(s->pick.finalists);
    s->pick.nfinalists = 0;
    s->pick.finalists = calloc(L->n + 2, sizeof *s->pick.finalists);
    if (!s->pick.finalists)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; i < L->n; i++) {
        if (!kevo__search_gate_get(&s->pick, L->list[i].id, L->list[i].fitness))
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        add_finalist(&s->pick, L->list[i].id);
    }
    if (s->pick.champion_cand)
        add_finalist(&s->pick, kevo_candidate_id(s->pick.champion_cand));
    if (kevo_task_seed(s->cfg.task))
        add_finalist(&s->pick, KEVO__SEARCH_SEED_ID);
    return KEVO_OK;
}

/* Times the finalists again, together, interleaved, so that near-ties are
 * decided by paired times rather than by the noise of separate ones.
 * *sent is false when there is nothing to compare. */
static kevo_status retime(kevo_search *s, bool *sent, kevo_error *err)
{
    *sent = false;
    kevo_status rc = choose_finalists(s, err);
    if (rc != KEVO_OK || s->pick.nfinalists < 2 || !s->cfg.ev)
        return rc; /* a scoring function times nothing */
    kevo_candidate **c = calloc(s->pick.nfinalists, sizeof *c);
    if (!c)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < s->pick.nfinalists; i++) {
        kevo__search_gate *g =
            kevo__search_gate_find(&s->pick, s->pick.finalists[i]);
        if (g && g->done && !g->passed)
            continue; /* failed its gate already */
        if ((c[n] = finalist_candidate(s, s->pick.finalists[i])))
            n++;
    }
    if (n >= 2) {
        rc = kevo__search_submit_group(s, KEVO__JOB_RETIME, c, n,
                                       KEVO_EVAL_PAIRED, err);
        *sent = rc == KEVO_OK;
    } else {
        for (size_t i = 0; i < n; i++)
            kevo_candidate_free(c[i]);
    }
    free(c);
    return rc;
}

/* The fitness finalist id is ranked by: its re-measured one when known;
 * -infinity when it has none. */
static double rank_fitness(kevo_search *s, uint64_t id)
{
    const kevo__search_gate *g = kevo__search_gate_find(&s->pick, id);
    double f = g ? kevo__search_gate_fitness(g) : NAN;
    return isfinite(f) ? f : -INFINITY;
}

/* Sorts the finalists, fittest first (ties: lower id). */
static void rank_finalists(kevo_search *s)
{
    for (size_t i = 1; i < s->pick.nfinalists; i++) {
        uint64_t id = s->pick.finalists[i];
        double f = rank_fitness(s, id);
        size_t j = i;
        while (j > 0) {
            double fp = rank_fitness(s, s->pick.finalists[j - 1]);
            if (fp > f || (fp == f && s->pick.finalists[j - 1] < id))
                break;
            s->pick.finalists[j] = s->pick.finalists[j - 1];
            j--;
        }
        s->pick.finalists[j] = id;
    }
}

/* The final gating: the finalists timed again together, then gated in the
 * order of their re-measured fitness until one passes; it is the
 * champion. Sets *done when nothing more is to be gated. */
kevo_status kevo__search_final_gate(kevo_search *s, bool *done, kevo_error *err)
{
    *done = false;
    if (s->pipe.njobs > 0)
        return KEVO_OK; /* a retime or a gate is under way */
    kevo_status rc = KEVO_OK;
    if (!s->pick.retime_sent) {
        bool sent = false;
        s->pick.retime_sent = true;
        rc = retime(s, &sent, err);
        if (rc != KEVO_OK || sent)
            return rc;
    }
    if (!s->pick.retime_done) {
        s->pick.retime_done = true;
        rank_finalists(s);
    }
    *done = true;
    for (size_t i = 0; i < s->pick.nfinalists; i++) {
        kevo__search_gate *g =
            kevo__search_gate_find(&s->pick, s->pick.finalists[i]);
        if (g && g->done && !g->passed)
            continue;
        kevo_candidate *c = finalist_candidate(s, s->pick.finalists[i]);
        if (!c)
            continue; /* gone: nothing to gate */
        if (g && g->done && g->passed && (g->held || !s->cfg.ev)) {
            rc = kevo__search_crown(s, g, c, true, err);
        } else {
            double f = g ? g->fitness : NAN;
            rc = kevo__search_gate_start(s, c, f, NULL, err);
            *done = false;
        }
        kevo_candidate_free(c);
        break;
    }
    return rc;
}

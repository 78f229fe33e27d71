/*
 * search_final.c: the end of a search. The finalists (the gate_top
 * fittest elites and the task's seed) are timed again together,
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

/* The elites of every island, fittest first (ties: lower id). */
typedef struct ranked {
    size_t island, cell;
    double fitness;
    uint64_t id;
} ranked;

static int by_fitness(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->fitness != y->fitness)
        return x->fitness > y->fitness ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The candidate of finalist id: a reference to its elite, or a copy of the
 * seed with the id; NULL when out of memory or gone. */
static kevo_candidate *finalist_candidate(kevo_search *s, uint64_t id)
{
    size_t island, cell;
    if (kevo__search_find_elite(s, id, &island, &cell))
        return kevo__candidate_share(
            kevo_archive_candidate(s->pop.islands[island], cell));
    if (id != KEVO__SEARCH_SEED_ID || !kevo_task_seed(s->cfg.task))
        return NULL;
    kevo_candidate *c = kevo_candidate_copy(kevo_task_seed(s->cfg.task));
    if (c)
        kevo_candidate_set_id(c, id);
    return c;
}

/* The finalists: the gate_top fittest elites (one of each, whatever its
 * islands) and the seed, which passes against itself when it is correct:
 * a search whose seed is correct ends with a champion at least as fast. */
static kevo_status choose_finalists(kevo_search *s, kevo_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < s->pop.nislands; i++)
        total += kevo_archive_size(s->pop.islands[i]);
    ranked *r = calloc(total ? total : 1, sizeof *r);
    free(s->pick.finalists);
    s->pick.nfinalists = 0;
    s->pick.finalists = calloc(total + 1, sizeof *s->pick.finalists);
    if (!r || !s->pick.finalists) {
        free(r);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    size_t n = 0;
    for (size_t i = 0; i < s->pop.nislands; i++) {
        const kevo_archive *a = s->pop.islands[i];
        for (size_t c = kevo_archive_first(a); c != KEVO_NO_CELL;
             c = kevo_archive_next(a, c)) {
            r[n].island = i;
            r[n].cell = c;
            r[n].fitness = kevo_archive_fitness(a, c);
            r[n].id = kevo_candidate_id(kevo_archive_candidate(a, c));
            n++;
        }
    }
    qsort(r, n, sizeof *r, by_fitness);
    size_t top = (size_t)s->cfg.opt[KEVO_SEARCH_GATE_TOP];
    bool seed = false;
    for (size_t i = 0; i < n && s->pick.nfinalists < top; i++) {
        if ((i > 0 && r[i].id == r[i - 1].id) || !(r[i].fitness > 0))
            continue; /* migrated copies; failures */
        s->pick.finalists[s->pick.nfinalists++] = r[i].id;
        seed = seed || r[i].id == KEVO__SEARCH_SEED_ID;
        kevo__search_gate *g =
            kevo__search_gate_get(&s->pick, r[i].id, r[i].fitness);
        if (!g) {
            free(r);
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        }
    }
    free(r);
    if (!seed && kevo_task_seed(s->cfg.task))
        s->pick.finalists[s->pick.nfinalists++] = KEVO__SEARCH_SEED_ID;
    return KEVO_OK;
}

/* Times the finalists again, together, interleaved, so that near-ties are
 * decided by paired times rather than by the noise of separate ones.
 * *sent is false when there is nothing to compare. */
static kevo_status retime(kevo_search *s, bool *sent, kevo_error *err)
{
    *sent = false;
    kevo_status rc = choose_finalists(s, err);
    if (rc != KEVO_OK || s->pick.nfinalists < 2)
        return rc;
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
        if (g && g->done && g->passed && g->held) {
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

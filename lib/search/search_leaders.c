/*
 * search_leaders.c: the leaders, the fittest correct candidates the search
 * ever judged, by training fitness, at most gate_top of them. The archive
 * is for diversity: an elite there gives way to a fitter child of its cell,
 * whatever happens to that child at the held-out gate. The leaders do not
 * depend on the archive, so a gated win is never lost to a fitter child
 * that fails the gate: the running champion, the finalists and the gates
 * started after a failed one draw from them, and checkpoints keep them.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonutil.h"
#include "model/candidate_private.h"
#include "search_private.h"

/* True when a ranks before b: fitter, or as fit with a lower id. */
static bool ranks_before(double fa, uint64_t ia, double fb, uint64_t ib)
{
    return fa > fb || (fa == fb && ia < ib);
}

static void leader_clear(kevo__search_leader *l)
{
    kevo_candidate_free(l->cand);
    memset(l, 0, sizeof *l);
}

/* Drops the leaders beyond the first keep. */
static void trim(kevo__search_leaders *L, size_t keep)
{
    while (L->n > keep)
        leader_clear(&L->list[--L->n]);
}

kevo_status kevo__search_leaders_offer(kevo_search *s,
                                       const kevo_candidate *cand,
                                       double fitness, kevo_error *err)
{
    kevo__search_leaders *L = &s->pick.leaders;
    size_t cap = (size_t)s->cfg.opt[KEVO_SEARCH_GATE_TOP];
    uint64_t id = kevo_candidate_id(cand);
    if (!(fitness > 0) || !isfinite(fitness) || cap == 0)
        return KEVO_OK;
    for (size_t i = 0; i < L->n; i++) {
        if (L->list[i].id == id)
            return KEVO_OK; /* a migrated copy, or judged before */
    }
    trim(L, cap);
    size_t at = L->n;
    while (at > 0 && ranks_before(fitness, id, L->list[at - 1].fitness,
                                  L->list[at - 1].id))
        at--;
    if (at >= cap)
        return KEVO_OK; /* less fit than every leader */
    if (L->n == L->cap) {
        size_t c = L->cap ? 2 * L->cap : 16;
        kevo__search_leader *n = realloc(L->list, c * sizeof *n);
        if (!n)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        L->list = n;
        L->cap = c;
    }
    memmove(&L->list[at + 1], &L->list[at], (L->n - at) * sizeof *L->list);
    L->list[at] = (kevo__search_leader){
        .id = id, .fitness = fitness, .cand = kevo__candidate_share(cand)};
    L->n++;
    trim(L, cap);
    return KEVO_OK;
}

const kevo__search_leader *kevo__search_leader_find(const kevo_search *s,
                                                    uint64_t id)
{
    const kevo__search_leaders *L = &s->pick.leaders;
    for (size_t i = 0; i < L->n; i++) {
        if (L->list[i].id == id)
            return &L->list[i];
    }
    return NULL;
}

/* The fitness the running champion holds, or -infinity without one. */
static double champion_fitness(const kevo_search *s)
{
    if (s->pick.champion < 0)
        return -INFINITY;
    return s->pick.gates[s->pick.champion].fitness;
}

kevo_status kevo__search_gate_next(kevo_search *s, const kevo_candidate *just,
                                   kevo_eval_result **res, kevo_error *err)
{
    if (s->state.phase >= KEVO__PHASE_GATING || (!s->cfg.ev && !s->cfg.gate))
        return KEVO_OK; /* the final gating decides from here on */
    const kevo__search_leaders *L = &s->pick.leaders;
    double champ = champion_fitness(s);
    for (size_t i = 0; i < L->n; i++) {
        const kevo__search_leader *l = &L->list[i];
        if (!(l->fitness > champ))
            return KEVO_OK; /* the champion is the fittest that passed */
        const kevo__search_gate *g = kevo__search_gate_find(&s->pick, l->id);
        if (g && g->started && !g->done)
            return KEVO_OK; /* under way: wait for its verdict */
        if (g && g->done && !g->passed)
            continue;
        if (g && g->done && g->passed)
            return KEVO_OK;
        bool fresh = just && kevo_candidate_id(just) == l->id;
        return kevo__search_gate_start(s, l->cand, l->fitness,
                                       fresh ? res : NULL, err);
    }
    return KEVO_OK;
}

json_t *kevo__search_leaders_json(const kevo_search *s)
{
    const kevo__search_leaders *L = &s->pick.leaders;
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < L->n; i++) {
        json_t *o =
            json_pack("{s:I, s:f, s:o}", "id", (json_int_t)L->list[i].id,
                      "fitness", L->list[i].fitness, "candidate",
                      kevo__candidate_to_json(L->list[i].cand));
        if (!o || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

kevo_status kevo__search_leaders_restore(kevo_search *s, const json_t *arr,
                                         const char *origin, kevo_jpath *path,
                                         kevo_error *err)
{
    size_t i;
    const json_t *o;
    json_array_foreach (arr, i, o) {
        size_t mark = kevo__jpath_index(path, i);
        const json_t *f = json_object_get(o, "fitness");
        const json_t *c = json_object_get(o, "candidate");
        kevo_status rc = KEVO_OK;
        kevo_candidate *cand = NULL;
        if (!json_is_number(f) || !json_is_object(c))
            rc = kevo__json_fail(err, KEVO_EINVALID, origin, path,
                                 "a leader needs a number \"fitness\" and "
                                 "an object \"candidate\"");
        if (rc == KEVO_OK) {
            size_t m = kevo__jpath_key(path, "candidate");
            rc = kevo__candidate_from_json(c, origin, path, &cand, err);
            kevo__jpath_pop(path, m);
        }
        if (rc == KEVO_OK)
            rc = kevo__search_leaders_offer(s, cand, json_number_value(f), err);
        kevo_candidate_free(cand);
        kevo__jpath_pop(path, mark);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}

void kevo__search_leaders_free(kevo__search_leaders *L)
{
    trim(L, 0);
    free(L->list);
    memset(L, 0, sizeof *L);
}

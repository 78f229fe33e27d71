/*
 * llm_search.c: the scored search of llm_search.h.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm_search.h"

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* A fitness from the source alone: the same child scores the same. */
static kevo_status score(const kevo_task *task, const kevo_candidate *c,
                         double *fitness, double *desc, void *user,
                         kevo_error *err)
{
    (void)task;
    (void)user;
    (void)err;
    uint64_t h = fnv(kevo_candidate_source(c));
    *fitness = 0.1 + (double)(h % 800) / 1000.0;
    desc[0] = 0;
    desc[1] = 256;
    return KEVO_OK;
}

static void on_event(kevo_search *s, const kevo_search_event *ev, void *user)
{
    (void)s;
    llm_trace *tr = user;
    if (ev->type != KEVO_SEARCH_EVALUATED)
        return;
    char line[64];
    int n =
        snprintf(line, sizeof line, "%.3f %016llx\n", ev->fitness,
                 (unsigned long long)fnv(kevo_candidate_source(ev->candidate)));
    char *t = realloc(tr->text, tr->len + (size_t)n + 1);
    if (!t)
        abort();
    memcpy(t + tr->len, line, (size_t)n + 1);
    tr->text = t;
    tr->len += (size_t)n;
    tr->judged++;
}

kevo_search *llm_search_new(const kevo_task *task, llm_trace *tr,
                            const char *models, long evals, kevo_farm *farm,
                            const char *run, unsigned flags, kevo_error *err)
{
    kevo_search *s = NULL;
    if (kevo_search_new(task, &s, err) != KEVO_OK)
        return NULL;
    if (kevo_search_set_score_fn(s, score, NULL, err) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, evals, err) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_DEPTH, 1, err) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_SEED, 7, err) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_INSPIRATIONS, 0, err) != KEVO_OK ||
        kevo_search_add_operator(s, "llm", NULL, models, 1.0, err) != KEVO_OK ||
        kevo_promptpool_set(kevo_search_prompts(s),
                            KEVO_PROMPTPOOL_REVISE_EVERY, 0, err) != KEVO_OK ||
        kevo_search_set_callback(s, on_event, tr, err) != KEVO_OK ||
        (farm && kevo_search_set_farm(s, farm, err) != KEVO_OK) ||
        (run && kevo_farm_rank(farm) == 0 &&
         kevo_search_open_run(s, run, flags, "llm search", err) != KEVO_OK)) {
        kevo_search_free(s);
        return NULL;
    }
    return s;
}

void llm_trace_free(llm_trace *tr)
{
    free(tr->text);
    memset(tr, 0, sizeof *tr);
}

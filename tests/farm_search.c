/*
 * farm_search.c: the scored search of farm_search.h.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/kevo_private.h"
#include "farm_search.h"

static long long param(const kevo_candidate *c, const char *name)
{
    int64_t v = 0;
    kevo_vars_get(kevo_candidate_assignment(c), name, &v);
    return (long long)v;
}

/* A landscape over saxpy's parameters with its peak at BLOCK=256, VEC=4,
 * ITEMS=2; the behaviour is (vector loads, block size). */
static kevo_status score(const kevo_task *task, const kevo_candidate *c,
                         double *fitness, double *desc, void *user,
                         kevo_error *err)
{
    (void)task;
    (void)err;
    farm_scoring *sc = user;
    sc->scored++;
    if (sc->die_rank > 0 && sc->rank == sc->die_rank &&
        sc->scored == sc->die_at) {
        if (!sc->nan)
            _exit(3);
        *fitness = NAN;
        return KEVO_OK;
    }
    double b = log2((double)param(c, "BLOCK")),
           v = log2((double)param(c, "VEC"));
    double i = log2((double)param(c, "ITEMS"));
    *fitness =
        1.0 / (1.0 + 0.3 * fabs(b - 8) + 0.4 * fabs(v - 2) + 0.2 * fabs(i - 1));
    desc[0] = param(c, "VEC") > 1 ? 1 : 0;
    desc[1] = (double)param(c, "BLOCK");
    return KEVO_OK;
}

static void append(farm_trace *tr, const char *s)
{
    size_t n = strlen(s);
    if (tr->len + n + 1 > tr->cap) {
        size_t c = tr->cap ? 2 * tr->cap : 4096;
        while (c < tr->len + n + 1)
            c *= 2;
        char *t = realloc(tr->text, c);
        if (!t)
            abort();
        tr->text = t;
        tr->cap = c;
    }
    memcpy(tr->text + tr->len, s, n + 1);
    tr->len += n;
}

static void on_event(kevo_search *s, const kevo_search_event *ev, void *user)
{
    (void)s;
    farm_trace *tr = user;
    if (ev->type != KEVO_SEARCH_EVALUATED)
        return;
    unsigned long long id = kevo_candidate_id(ev->candidate);
    for (unsigned i = 0; i < tr->judged; i++)
        tr->duplicates += tr->ids[i] == id;
    unsigned long long *ids =
        realloc(tr->ids, (tr->judged + 1) * sizeof *tr->ids);
    if (!ids)
        abort();
    tr->ids = ids;
    tr->ids[tr->judged++] = id;
    char line[128];
    snprintf(line, sizeof line, "%llu:%lld/%lld/%lld=%.6f ", id,
             param(ev->candidate, "BLOCK"), param(ev->candidate, "VEC"),
             param(ev->candidate, "ITEMS"), ev->fitness);
    append(tr, line);
}

kevo_search *farm_search_new(kevo_task *task, kevo_farm *farm, farm_scoring *sc,
                             farm_trace *tr, long evals, const char *run,
                             int resume, kevo_error *err)
{
    kevo_search *s = NULL;
    if (kevo_search_new(task, &s, err) != KEVO_OK)
        return NULL;
    if (kevo_search_set_score_fn(s, score, sc, err) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_SEED, 11, err) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, evals, err) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_DEPTH, 8, err) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_CHECKPOINT_EVERY, 10, err) !=
            KEVO_OK ||
        kevo_search_add_operator(s, "params", NULL, NULL, 1.0, err) !=
            KEVO_OK ||
        kevo_search_set_callback(s, on_event, tr, err) != KEVO_OK ||
        (farm && kevo_search_set_farm(s, farm, err) != KEVO_OK) ||
        (run && kevo_farm_rank(farm) == 0 &&
         kevo_search_open_run(s, run, resume ? KEVO_SEARCH_RUN_RESUME : 0,
                              "farm test", err) != KEVO_OK)) {
        kevo_search_free(s);
        return NULL;
    }
    return s;
}

kevo_status farm_search_saxpy(kevo_task **task, kevo_error *err)
{
    const char *b = getenv("KEVO_BUILDDIR");
    char *path = kevo__asprintf("%s/operators/.libs", b && *b ? b : ".");
    const char *src = getenv("KEVO_SRCDIR");
    char *tpath =
        kevo__asprintf("%s/examples/tasks/saxpy.json", src && *src ? src : ".");
    kevo_status rc = KEVO_ENOMEM;
    if (path && tpath) {
        setenv(KEVO_OPERATOR_PATH_ENV, path, 1);
        rc = kevo_task_load(tpath, task, err);
    }
    free(path);
    free(tpath);
    return rc;
}

void farm_trace_free(farm_trace *tr)
{
    free(tr->text);
    free(tr->ids);
    memset(tr, 0, sizeof *tr);
}

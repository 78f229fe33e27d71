/*
 * llm_search.c: the scored search of llm_search.h and what the tests that
 * run it share.
 */
#include "config.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/kevo_private.h"
#include "farm_search.h"
#include "llm_search.h"
#include "tap.h"

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* A fitness from the source alone: the same child scores the same. A
 * child that calls __ldg4, which is no CUDA function, fails as NVRTC fails
 * it (tests/data/llm-variants-styles/1-compile-error.cu), so that the
 * search hands it back to the operator for a repair turn. user: the
 * search. */
static kevo_status score(const kevo_task *task, const kevo_candidate *c,
                         double *fitness, double *desc, void *user,
                         kevo_error *err)
{
    (void)task;
    const char *src = kevo_candidate_source(c);
    if (strstr(src, "__ldg4(")) {
        *fitness = 0;
        return kevo_search_fail_candidate(
            user, "compile_error",
            "compile error: llm#1(20): error: identifier \"__ldg4\" is "
            "undefined",
            err);
    }
    uint64_t h = fnv(src);
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
                            const char *models, long evals, long depth,
                            kevo_farm *farm, const char *run, unsigned flags,
                            kevo_error *err)
{
    kevo_search *s = NULL;
    if (kevo_search_new(task, &s, err) != KEVO_OK)
        return NULL;
    if (kevo_search_set_score_fn(s, score, s, err) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, evals, err) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_DEPTH, depth, err) != KEVO_OK ||
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

kevo_search *llm_search_open(const kevo_task *task, llm_trace *tr,
                             const char *models, long evals, long depth,
                             const char *run, unsigned flags)
{
    kevo_error e = KEVO__ERROR_INIT;
    kevo_search *s =
        llm_search_new(task, tr, models, evals, depth, NULL, run, flags, &e);
    if (!s)
        bail_out("cannot set up a search in %s: %s", run, e.text);
    return s;
}

void llm_trace_free(llm_trace *tr)
{
    free(tr->text);
    memset(tr, 0, sizeof *tr);
}

static const char *const kernels[] = {"saxpy-float4.cu", "saxpy-gridstride.cu",
                                      "saxpy-shared.cu", "saxpy-warp.cu",
                                      "saxpy-onethread.cu"};

void llm_search_texts(loopback *srv)
{
    for (size_t i = 0; i < 5; i++) {
        char *path = kevo__asprintf("%s/tests/data/llm-variants/%s",
                                    tap_srcdir(), kernels[i]);
        char *k = NULL;
        size_t len;
        if (kevo__read_file(path, true, &k, &len, NULL) != KEVO_OK)
            bail_out("cannot read %s", path);
        char *t = kevo__asprintf("Here it is.\n\n```cuda\n%s```\n", k);
        char name[8];
        snprintf(name, sizeof name, "k%zu", i);
        loopback_set_text(srv, name, t);
        free(path);
        free(k);
        free(t);
    }
    char *path = kevo__asprintf(
        "%s/tests/data/llm-variants-styles/1-compile-error.cu", tap_srcdir());
    char *k = NULL;
    size_t len;
    if (kevo__read_file(path, true, &k, &len, NULL) != KEVO_OK)
        bail_out("cannot read %s", path);
    char *t = kevo__asprintf("Here it is.\n\n```cuda\n%s```\n", k);
    loopback_set_text(srv, "kf", t);
    free(path);
    free(k);
    free(t);
}

kevo_task *llm_search_task(void)
{
    kevo_task *task = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if (farm_search_saxpy(&task, &e) != KEVO_OK)
        bail_out("cannot load saxpy: %s", e.text);
    return task;
}

bool llm_search_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

char *llm_search_failures(const char *run)
{
    char *path = kevo__path_join(run, "events.jsonl");
    FILE *f = fopen(path, "r");
    char line[65536];
    char *all = strdup("");
    while (f && fgets(line, sizeof line, f)) {
        json_t *ev = json_loads(line, 0, NULL);
        const char *t = json_string_value(json_object_get(ev, "type"));
        if (t && strcmp(t, "failure") == 0) {
            const char *k = json_string_value(json_object_get(ev, "kind"));
            const char *r = json_string_value(json_object_get(ev, "reason"));
            char *more =
                kevo__asprintf("%s%s: %s\n", all, k ? k : "", r ? r : "");
            free(all);
            all = more;
        }
        json_decref(ev);
    }
    if (f)
        fclose(f);
    free(path);
    return all;
}

char *llm_search_evals(const char *run)
{
    char *path = kevo__path_join(run, "events.jsonl");
    FILE *f = fopen(path, "r");
    char line[65536];
    char **rows = NULL;
    size_t nrows = 0;
    while (f && fgets(line, sizeof line, f)) {
        json_t *ev = json_loads(line, 0, NULL);
        const char *t = json_string_value(json_object_get(ev, "type"));
        json_int_t n = json_integer_value(json_object_get(ev, "n"));
        if (t && strcmp(t, "resume") == 0) {
            /* what was logged after the checkpoint is made again */
            while (nrows > 0 && atoll(rows[nrows - 1]) > n)
                free(rows[--nrows]);
        } else if (t && strcmp(t, "eval") == 0) {
            char *parents = json_dumps(json_object_get(ev, "parents"),
                                       JSON_COMPACT | JSON_ENCODE_ANY);
            const char *v = json_string_value(json_object_get(ev, "verdict"));
            json_int_t id = json_integer_value(json_object_get(ev, "id"));
            char *src =
                kevo__asprintf("%s/candidates/%lld.cu", run, (long long)id);
            char *text = NULL;
            size_t len;
            kevo__read_file(src, false, &text, &len, NULL);
            char **r = realloc(rows, (nrows + 1) * sizeof *r);
            if (!r)
                abort();
            rows = r;
            rows[nrows++] = kevo__asprintf(
                "%lld id %lld parents %s %s %.17g source %016llx\n",
                (long long)n, (long long)id, parents ? parents : "-",
                v ? v : "-", json_number_value(json_object_get(ev, "fitness")),
                text ? (unsigned long long)fnv(text) : 0ull);
            free(parents);
            free(src);
            free(text);
        }
        json_decref(ev);
    }
    if (f)
        fclose(f);
    free(path);
    char *all = strdup("");
    for (size_t i = 0; i < nrows; i++) {
        char *more = kevo__asprintf("%s%s", all, rows[i]);
        free(all);
        free(rows[i]);
        all = more;
    }
    free(rows);
    return all;
}

char *llm_search_strip_runs(char *text)
{
    char *w = text;
    for (char *l = text; *l;) {
        char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l + 1) : strlen(l);
        bool named = false;
        for (size_t i = 0; i + 5 < n && !named; i++)
            named = strncmp(l + i, "/run-", 5) == 0;
        if (!named) {
            memmove(w, l, n);
            w += n;
        }
        l += n;
    }
    *w = '\0';
    return text;
}

bool llm_search_same_best(const char *a, const char *b)
{
    char *ta = NULL, *tb = NULL;
    size_t len;
    char *p1 = kevo__path_join(a, "best.cu");
    char *p2 = kevo__path_join(b, "best.cu");
    kevo__read_file(p1, false, &ta, &len, NULL);
    kevo__read_file(p2, false, &tb, &len, NULL);
    bool same =
        ta && tb &&
        strcmp(llm_search_strip_runs(ta), llm_search_strip_runs(tb)) == 0;
    free(p1);
    free(p2);
    free(ta);
    free(tb);
    return same;
}

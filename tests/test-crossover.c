/*
 * test-crossover.c: the second parent the search hands operators, on the
 * search engine's CPU path (a scoring function, the real params plugin).
 *
 * Beside params runs an operator that writes code, as the llm operator
 * does: it takes prompts (it has revise()), records every request and
 * answers with a child whose source differs from its parent's. The search
 * must give a second parent only to some requests; never the parent
 * itself, nor an elite shown among the same request's inspirations; to
 * the code writer an elite with other code, and to params one with the
 * parent's source and another assignment (the only crossover params can
 * make: it refuses two sources).
 */
#include "config.h"

#include <jansson.h>

#include "../lib/kevo_private.h"
#include "tap.h"

static kevo_task *load_task(const char *name)
{
    char *path =
        kevo__asprintf("%s/examples/tasks/%s.json", tap_srcdir(), name);
    kevo_task *t = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_task_load(path, &t, &e) != KEVO_OK)
        bail_out("cannot load %s: %s", path, e.text);
    free(path);
    return t;
}

static int64_t param(const kevo_candidate *c, const char *name)
{
    int64_t v = 0;
    kevo_vars_get(kevo_candidate_assignment(c), name, &v);
    return v;
}

/* saxpy's parameters scored on a smooth landscape; code the writer made
 * scores a little higher, so that it takes cells from the seed's code.
 * The behaviour is (vector loads, block size). */
static kevo_status score(const kevo_task *task, const kevo_candidate *c,
                         double *fitness, double *desc, void *user,
                         kevo_error *err)
{
    (void)task;
    (void)user;
    (void)err;
    double b = log2((double)param(c, "BLOCK")),
           v = log2((double)param(c, "VEC"));
    double i = log2((double)param(c, "ITEMS"));
    *fitness =
        1.0 / (1.0 + 0.3 * fabs(b - 8) + 0.4 * fabs(v - 2) + 0.2 * fabs(i - 1));
    if (strstr(kevo_candidate_source(c), "// variant"))
        *fitness *= 1.02;
    desc[0] = param(c, "VEC") > 1 ? 1 : 0;
    desc[1] = (double)param(c, "BLOCK");
    return KEVO_OK;
}

/* ---- an operator that writes code ------------------------------------- */

typedef struct record {
    unsigned requests, seconds;
    unsigned second_is_parent, second_same_source, second_in_inspirations;
    unsigned inspirations;
} record;

static record rec;

typedef struct writer {
    const kevo_host_api *api;
    kevo_host_ctx *ctx;
    unsigned made;
} writer;

static kevo_status writer_init(const kevo_host_api *api, kevo_host_ctx *ctx,
                               const char *config_json, void **state)
{
    (void)config_json;
    writer *w = calloc(1, sizeof *w);
    if (!w)
        return KEVO_ENOMEM;
    w->api = api;
    w->ctx = ctx;
    *state = w;
    return KEVO_OK;
}

static kevo_status writer_propose(void *state, const kevo_operator_request *req)
{
    writer *w = state;
    const kevo_host_api *api = w->api;
    const char *psrc = api->cand_source(w->ctx, req->parent);
    rec.requests++;
    rec.inspirations += (unsigned)req->n_inspirations;
    if (req->second_parent) {
        uint64_t sid = api->cand_id(w->ctx, req->second_parent);
        rec.seconds++;
        rec.second_is_parent += sid == api->cand_id(w->ctx, req->parent);
        rec.second_same_source +=
            strcmp(api->cand_source(w->ctx, req->second_parent), psrc) == 0;
        for (size_t i = 0; i < req->n_inspirations; i++)
            rec.second_in_inspirations +=
                api->cand_id(w->ctx, req->inspirations[i].candidate) == sid;
    }
    /* New code: the parent's with a line of its own, at a random point of
     * the parameter space. */
    static const int blocks[] = {64, 128, 256, 512, 1024};
    static const int vecs[] = {1, 2, 4}, items[] = {1, 2, 4, 8};
    char *src = kevo__asprintf("// variant %u\n%s", w->made++, psrc);
    char *assignment = kevo__asprintf(
        "{\"BLOCK\": %d, \"VEC\": %d, \"ITEMS\": %d}",
        blocks[api->uniform_int(w->ctx, 5)], vecs[api->uniform_int(w->ctx, 3)],
        items[api->uniform_int(w->ctx, 4)]);
    if (!src || !assignment ||
        api->emit_child(w->ctx, req->id, src, assignment, "a variant") !=
            KEVO_OK)
        api->fail(w->ctx, req->id, KEVO_FAIL_INVALID, api->last_error(w->ctx));
    free(src);
    free(assignment);
    api->done(w->ctx, req->id);
    return KEVO_OK;
}

static kevo_status writer_revise(void *state, const kevo_operator_revision *rev)
{
    writer *w = state;
    w->api->fail(w->ctx, rev->id, KEVO_FAIL_UNSUPPORTED, "no revisions here");
    w->api->done(w->ctx, rev->id);
    return KEVO_OK;
}

static void writer_fini(void *state)
{
    free(state);
}

static const kevo_operator_desc writer_desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = KEVO_OPERATOR_ABI_MINOR,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "writer",
    .version = "1.0",
    .description = "writes code, records requests",
    .init = writer_init,
    .propose = writer_propose,
    .fini = writer_fini,
    .revise = writer_revise,
};

/* ---- the run --------------------------------------------------------- */

typedef struct trace {
    unsigned evaluated, failures, two_sources, params_crossovers;
} trace;

static void on_event(kevo_search *s, const kevo_search_event *ev, void *user)
{
    (void)s;
    trace *t = user;
    if (ev->type == KEVO_SEARCH_EVALUATED) {
        const char *op = kevo_candidate_operator(ev->candidate);
        t->evaluated++;
        t->params_crossovers += op && strcmp(op, "params") == 0 &&
                                kevo_candidate_parent_count(ev->candidate) == 2;
    }
    if (ev->type == KEVO_SEARCH_FAILURE) {
        t->failures++;
        t->two_sources += ev->text && strstr(ev->text, "same source") != NULL;
    }
}

int main(void)
{
    const char *b = getenv("KEVO_BUILDDIR");
    char *path = kevo__asprintf("%s/operators/.libs", b && *b ? b : ".");
    setenv(KEVO_OPERATOR_PATH_ENV, path, 1);
    free(path);
    kevo_task *task = load_task("saxpy");
    kevo_search *s = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    trace tr = {0, 0, 0, 0};
    if (kevo_search_new(task, &s, &e) != KEVO_OK ||
        kevo_search_set_score_fn(s, score, NULL, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_SEED, 11, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, 240, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_INSPIRATIONS, 3, &e) != KEVO_OK ||
        kevo_operator_host_register(kevo_search_host(s), &writer_desc, "test",
                                    &e) != KEVO_OK ||
        kevo_search_add_operator(s, "params", NULL, NULL, 1.0, &e) != KEVO_OK ||
        kevo_search_add_operator(s, "writer", NULL, NULL, 1.0, &e) != KEVO_OK ||
        kevo_search_set_callback(s, on_event, &tr, &e) != KEVO_OK)
        bail_out("cannot set up a search: %s", e.text);
    ok(kevo_search_run(s, &e) == KEVO_OK, "the search runs (%s)", e.text);
    diag("%u evaluations, %u writer requests, %u with a second parent, %u "
         "failures",
         tr.evaluated, rec.requests, rec.seconds, tr.failures);
    ok(rec.requests >= 60, "the writer got requests (%u)", rec.requests);
    ok(rec.inspirations > 0, "with inspirations");
    ok(rec.seconds > 0, "some of them with a second parent (%u)", rec.seconds);
    ok(rec.seconds * 10 < rec.requests * 6,
       "but only some (%u of %u): crossover is the exception", rec.seconds,
       rec.requests);
    is_uint(rec.second_is_parent, 0, "the second parent is never the parent");
    is_uint(rec.second_same_source, 0,
            "the code writer's second parent has other code");
    is_uint(rec.second_in_inspirations, 0,
            "the second parent is not shown again among the inspirations");
    ok(tr.params_crossovers > 0,
       "params makes crossovers of elites that share its parent's source "
       "(%u)",
       tr.params_crossovers);
    is_uint(tr.two_sources, 0,
            "params never gets a second parent with another source");
    kevo_search_free(s);
    kevo_task_free(task);
    return done_testing();
}

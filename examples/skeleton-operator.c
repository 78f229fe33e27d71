/*
 * skeleton-operator.c: a complete, small kevo mutation operator, to copy
 * when writing your own. kevo-operator(7) walks through it.
 *
 * What it does: for each child wanted, it picks one tunable parameter of
 * the parent at random and moves it to the next value of its domain
 * (wrapping around), keeping the parent's source. It asks the host whether
 * the new assignment is valid (domains, constraints, launch limits) and
 * whether it was already tried, and hands back only children that are both
 * valid and new. A parent without parameters, or one whose neighbours are
 * all taken, fails the request with a reason.
 *
 * Build it as a shared object that does not link libkevo:
 *
 *     cc -shared -fPIC -fvisibility=hidden $(pkg-config --cflags kevo) \
 *        skeleton-operator.c -o skeleton.so $(pkg-config --libs jansson)
 *
 * and load it by name with KEVO_OPERATOR_PATH=DIR, or by path.
 *
 * Config (a JSON object, every key optional):
 *     {"tries": 16}   how many parameters to try per child
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* The operator ABI: types and macros only, and the only kevo header a
 * plugin includes. A plugin never calls a kevo_ function directly;
 * everything goes through the host table. */
#include <kevo/operator.h>

/* The state of one instance: what init makes and fini frees. */
typedef struct skeleton {
    const kevo_host_api *api; /* the host's functions */
    kevo_host_ctx *ctx;       /* passed back to each of them */
    int tries;
} skeleton;

/* init: read the config, keep api and ctx. On failure, say why with
 * api->error() and return a code; fini is not called then. */
static kevo_status skeleton_init(const kevo_host_api *api, kevo_host_ctx *ctx,
                                 const char *config_json, void **state)
{
    int tries = 16;
    if (config_json) {
        /* The host has checked that the config is a JSON object. */
        json_t *config = json_loads(config_json, 0, NULL);
        json_t *v = json_object_get(config, "tries");
        if (v && (!json_is_integer(v) || json_integer_value(v) < 1 ||
                  json_integer_value(v) > 1000)) {
            api->error(ctx, "config: \"tries\" must be an integer from 1 to "
                            "1000");
            json_decref(config);
            return KEVO_EINVALID;
        }
        if (v)
            tries = (int)json_integer_value(v);
        json_decref(config);
    }
    skeleton *s = api->alloc(ctx, sizeof *s);
    if (!s) {
        api->error(ctx, "out of memory");
        return KEVO_ENOMEM;
    }
    s->api = api;
    s->ctx = ctx;
    s->tries = tries;
    *state = s;
    return KEVO_OK;
}

/* One child: a random parameter moved to its next value. Returns 1 when a
 * child was emitted. */
static int one_child(skeleton *s, const kevo_operator_request *req,
                     json_t *params, json_t *assignment)
{
    const kevo_host_api *api = s->api;
    size_t n = json_array_size(params);
    for (int t = 0; t < s->tries; t++) {
        /* The host's random stream: same run seed, same choices. */
        json_t *p = json_array_get(params, api->uniform_int(s->ctx, n));
        const char *name = json_string_value(json_object_get(p, "name"));
        json_t *values = json_object_get(p, "values");
        size_t nv = json_array_size(values);
        if (nv < 2)
            continue;
        json_int_t now = json_integer_value(json_object_get(assignment, name));
        size_t k = 0;
        while (k < nv && json_integer_value(json_array_get(values, k)) != now)
            k++;
        json_int_t next =
            json_integer_value(json_array_get(values, (k + 1) % nv));

        /* An assignment names only what changes; the rest stays as in the
         * parent. */
        char change[160];
        snprintf(change, sizeof change, "{\"%s\": %lld}", name,
                 (long long)next);
        /* Ask before proposing: never a duplicate, never an invalid child. */
        if (api->seen(s->ctx, req->parent, change))
            continue;
        if (api->check(s->ctx, req->parent, change) != KEVO_OK) {
            api->log(s->ctx, KEVO_LOG_DEBUG, "%s=%lld rejected: %s", name,
                     (long long)next, api->last_error(s->ctx));
            continue;
        }
        char note[160];
        snprintf(note, sizeof note, "%s %lld -> %lld", name, (long long)now,
                 (long long)next);
        /* The same source, with the new value. The host parses it, checks
         * it again, records the lineage and keeps the child. */
        if (api->emit_child(s->ctx, req->id,
                            api->cand_source(s->ctx, req->parent), change,
                            note) == KEVO_OK)
            return 1;
        api->log(s->ctx, KEVO_LOG_WARN, "child refused: %s",
                 api->last_error(s->ctx));
    }
    return 0;
}

/* The note called name that kevo keeps beside candidate i of the request
 * (0: the parent, 1: the second parent, 2 + k: inspiration k), or NULL.
 * Notes, like a prompt's sections, are named texts. */
static const char *note_of(const kevo_operator_request *req, size_t i,
                           const char *name)
{
    for (size_t k = 0; i < req->n_notes && k < req->notes[i].n_items; k++) {
        if (strcmp(req->notes[i].items[k].name, name) == 0)
            return req->notes[i].items[k].text;
    }
    return NULL;
}

/* propose: this operator is synchronous, so it does all the work here and
 * ends the request with api->done() before returning. */
static kevo_status skeleton_propose(void *state,
                                    const kevo_operator_request *req)
{
    skeleton *s = state;
    const kevo_host_api *api = s->api;
    /* Strings the host makes are "new": free them with api->free(). */
    char *params_text = api->cand_params(s->ctx, req->parent);
    char *assignment_text = api->cand_assignment(s->ctx, req->parent);
    json_t *space = params_text ? json_loads(params_text, 0, NULL) : NULL;
    json_t *assignment =
        assignment_text ? json_loads(assignment_text, 0, NULL) : NULL;
    json_t *params = json_object_get(space, "params");
    uint32_t made = 0;
    /* The parent's evaluation (a JSON object) is there for an operator
     * that wants it; this one only says whether it came. */
    api->log(s->ctx, KEVO_LOG_DEBUG, "the parent has %s evaluation",
             note_of(req, 0, KEVO_NOTE_EVALUATION) ? "an" : "no");

    if (!space || !assignment) {
        api->fail(s->ctx, req->id, KEVO_FAIL_INTERNAL, "out of memory");
    } else if (json_array_size(params) == 0) {
        api->fail(s->ctx, req->id, KEVO_FAIL_UNSUPPORTED,
                  "the parent declares no parameters");
    } else {
        while (made < req->n_children && one_child(s, req, params, assignment))
            made++;
        if (made == 0)
            api->fail(s->ctx, req->id, KEVO_FAIL_EXHAUSTED,
                      "no parameter has a next value that is valid and new");
    }
    /* Exactly one done per request, whatever happened. */
    api->done(s->ctx, req->id);

    json_decref(space);
    json_decref(assignment);
    api->free(s->ctx, params_text);
    api->free(s->ctx, assignment_text);
    return KEVO_OK;
}

/* fini: free the instance. */
static void skeleton_fini(void *state)
{
    skeleton *s = state;
    if (s)
        s->api->free(s->ctx, s);
}

/* The descriptor: the ABI version this file was built against, its size,
 * the name the host knows the operator by, and the functions. poll is NULL:
 * a synchronous operator. */
static const kevo_operator_desc skeleton_desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = KEVO_OPERATOR_ABI_MINOR,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "skeleton",
    .version = "1.0",
    .description = "moves one parameter to the next value of its domain",
    .init = skeleton_init,
    .propose = skeleton_propose,
    .poll = NULL,
    .fini = skeleton_fini,
};

/* The one exported symbol: kevo_operator_entry(), returning &skeleton_desc. */
KEVO_OPERATOR_ENTRY(skeleton_desc)

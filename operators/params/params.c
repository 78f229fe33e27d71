/*
 * params.c: the params operator. Tunes a candidate's declared parameters
 * without touching its code: a child keeps its parent's source and gets a
 * new assignment, within the domains and constraints the source (and the
 * task) declare.
 *
 * Mutations: step (one parameter to a neighbouring value of its domain),
 * jump (one parameter to any other value), multi (two or more parameters at
 * once, each stepped or jumped). Crossover: with a second parent of the
 * same source, each parameter is taken from one parent or the other.
 *
 * Every proposal is checked with the host before it is emitted (api->check:
 * domains, constraints and launch limits at every shape) and skipped when
 * the host has seen it (api->seen: evaluated, or proposed before). When
 * random tries find nothing new, a space small enough is enumerated; when
 * nothing new is left, the request fails with kind "exhausted".
 *
 * Config (a JSON object, every key optional):
 *   "step", "jump", "multi"  relative weights of the mutations (0.5, 0.3,
 *                            0.2); at least one must be positive
 *   "max_changes"            the most parameters a multi mutation changes
 *                            (3; at least 2)
 *   "tries"                  random proposals tried per child (64)
 *   "enumerate_limit"        the largest space enumerated when random tries
 *                            fail (20000 assignments; 0: never)
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <kevo/operator.h>

/* Crossover enumerates at most 2^CROSS_BITS_MAX mixes of its parents. */
#define CROSS_BITS_MAX 16

typedef struct params_op {
    const kevo_host_api *api;
    kevo_host_ctx *ctx;
    double w_step, w_jump, w_multi;
    size_t max_changes;
    int tries;
    uint64_t enumerate_limit;
} params_op;

/* One parameter of the parent's space; the name is borrowed from the
 * parsed space. */
typedef struct param {
    const char *name;
    json_int_t *values;
    size_t n;
} param;

/* What one request works on. Assignments are arrays of value indices, one
 * per parameter. */
typedef struct work {
    params_op *op;
    const kevo_operator_request *req;
    json_t *space;
    param *params;
    size_t n;
    size_t *parent;
    size_t *second; /* NULL without a second parent */
    size_t *trial;
    uint64_t combos; /* product of the domain sizes; UINT64_MAX if larger */
    uint32_t emitted;
    char *text; /* JSON of the last assignment formatted */
    size_t text_cap;
} work;

typedef enum outcome { EMITTED, SKIPPED, FAILED } outcome;

/* ---- config ----------------------------------------------------------------
 */

static kevo_status config_number(params_op *op, json_t *config, const char *key,
                                 double lo, double hi, double *out)
{
    json_t *v = json_object_get(config, key);
    if (!v)
        return KEVO_OK;
    if (!json_is_number(v) || json_number_value(v) < lo ||
        json_number_value(v) > hi) {
        op->api->error(op->ctx, "config: \"%s\" must be a number from %g to %g",
                       key, lo, hi);
        return KEVO_EINVALID;
    }
    *out = json_number_value(v);
    return KEVO_OK;
}

static kevo_status read_config(params_op *op, const char *config_json)
{
    static const char *const known[] = {
        "step", "jump", "multi", "max_changes", "tries", "enumerate_limit",
    };
    kevo_status rc = KEVO_OK;
    json_error_t jerr;
    json_t *config = json_loads(config_json, 0, &jerr);
    if (!config) {
        op->api->error(op->ctx, "config: %s", jerr.text);
        return KEVO_EPARSE;
    }
    const char *key;
    json_t *value;
    json_object_foreach (config, key, value) {
        size_t k = 0;
        while (k < sizeof known / sizeof known[0] && strcmp(key, known[k]))
            k++;
        if (k == sizeof known / sizeof known[0]) {
            op->api->error(op->ctx,
                           "config: unknown key \"%s\"; the keys are step, "
                           "jump, multi, max_changes, tries, enumerate_limit",
                           key);
            rc = KEVO_EINVALID;
            goto out;
        }
    }
    double changes = (double)op->max_changes, tries = op->tries,
           limit = (double)op->enumerate_limit;
    if ((rc = config_number(op, config, "step", 0, 1e6, &op->w_step)) ||
        (rc = config_number(op, config, "jump", 0, 1e6, &op->w_jump)) ||
        (rc = config_number(op, config, "multi", 0, 1e6, &op->w_multi)) ||
        (rc = config_number(op, config, "max_changes", 2, 64, &changes)) ||
        (rc = config_number(op, config, "tries", 1, 1e6, &tries)) ||
        (rc = config_number(op, config, "enumerate_limit", 0, 1e9, &limit)))
        goto out;
    if (op->w_step + op->w_jump + op->w_multi <= 0) {
        op->api->error(op->ctx, "config: step, jump and multi are all 0");
        rc = KEVO_EINVALID;
        goto out;
    }
    op->max_changes = (size_t)changes;
    op->tries = (int)tries;
    op->enumerate_limit = (uint64_t)limit;
out:
    json_decref(config);
    return rc;
}

static kevo_status params_init(const kevo_host_api *api, kevo_host_ctx *ctx,
                               const char *config_json, void **state)
{
    params_op *op = api->alloc(ctx, sizeof *op);
    if (!op) {
        api->error(ctx, "out of memory");
        return KEVO_ENOMEM;
    }
    *op = (params_op){.api = api,
                      .ctx = ctx,
                      .w_step = 0.5,
                      .w_jump = 0.3,
                      .w_multi = 0.2,
                      .max_changes = 3,
                      .tries = 64,
                      .enumerate_limit = 20000};
    kevo_status rc = config_json ? read_config(op, config_json) : KEVO_OK;
    if (rc != KEVO_OK) {
        api->free(ctx, op);
        return rc;
    }
    *state = op;
    return KEVO_OK;
}

static void params_fini(void *state)
{
    params_op *op = state;
    if (op)
        op->api->free(op->ctx, op);
}

/* ---- the space of one request ---------------------------------------------
 */

static void work_clear(work *w)
{
    for (size_t i = 0; w->params && i < w->n; i++)
        free(w->params[i].values);
    free(w->params);
    free(w->parent);
    free(w->second);
    free(w->trial);
    free(w->text);
    json_decref(w->space);
}

/* Fills idx with the indices of cand's values; false when cand's
 * assignment cannot be read or a value is not in its domain. */
static bool read_assignment(work *w, const kevo_candidate *cand, size_t *idx)
{
    const kevo_host_api *api = w->op->api;
    char *text = api->cand_assignment(w->op->ctx, cand);
    json_t *a = text ? json_loads(text, 0, NULL) : NULL;
    bool ok = a != NULL;
    for (size_t i = 0; ok && i < w->n; i++) {
        json_t *v = json_object_get(a, w->params[i].name);
        size_t k = 0;
        while (v && k < w->params[i].n &&
               w->params[i].values[k] != json_integer_value(v))
            k++;
        ok = v && k < w->params[i].n;
        idx[i] = k;
    }
    json_decref(a);
    api->free(w->op->ctx, text);
    return ok;
}

/* Reads the parent's space and assignments. On failure, the request has
 * been failed with the reason. */
static bool work_init(work *w)
{
    const kevo_host_api *api = w->op->api;
    kevo_host_ctx *ctx = w->op->ctx;
    const kevo_operator_request *req = w->req;
    char *text = api->cand_params(ctx, req->parent);
    w->space = text ? json_loads(text, 0, NULL) : NULL;
    api->free(ctx, text);
    json_t *list = json_object_get(w->space, "params");
    if (!w->space || !json_is_array(list)) {
        api->fail(ctx, req->id, KEVO_FAIL_INTERNAL,
                  "cannot read the parent's parameter space");
        return false;
    }
    w->n = json_array_size(list);
    if (w->n == 0) {
        api->fail(ctx, req->id, KEVO_FAIL_UNSUPPORTED,
                  "the parent declares no tunable parameters");
        return false;
    }
    w->params = calloc(w->n, sizeof *w->params);
    w->parent = calloc(w->n, sizeof *w->parent);
    w->trial = calloc(w->n, sizeof *w->trial);
    if (req->second_parent)
        w->second = calloc(w->n, sizeof *w->second);
    if (!w->params || !w->parent || !w->trial ||
        (req->second_parent && !w->second)) {
        api->fail(ctx, req->id, KEVO_FAIL_INTERNAL, "out of memory");
        return false;
    }
    w->combos = 1;
    for (size_t i = 0; i < w->n; i++) {
        json_t *p = json_array_get(list, i);
        json_t *values = json_object_get(p, "values");
        param *q = &w->params[i];
        q->name = json_string_value(json_object_get(p, "name"));
        q->n = json_array_size(values);
        q->values = calloc(q->n ? q->n : 1, sizeof *q->values);
        if (!q->name || !q->n || !q->values) {
            api->fail(ctx, req->id, KEVO_FAIL_INTERNAL,
                      "cannot read the parent's parameter space");
            return false;
        }
        for (size_t k = 0; k < q->n; k++)
            q->values[k] = json_integer_value(json_array_get(values, k));
        if (w->combos > UINT64_MAX / q->n)
            w->combos = UINT64_MAX;
        else
            w->combos *= q->n;
    }
    if (!read_assignment(w, req->parent, w->parent)) {
        api->fail(ctx, req->id, KEVO_FAIL_INTERNAL,
                  "cannot read the parent's assignment");
        return false;
    }
    if (req->second_parent) {
        const char *a = api->cand_source(ctx, req->parent);
        const char *b = api->cand_source(ctx, req->second_parent);
        if (strcmp(a, b) != 0) {
            api->fail(ctx, req->id, KEVO_FAIL_UNSUPPORTED,
                      "crossover needs two parents with the same source; "
                      "these two differ");
            return false;
        }
        if (!read_assignment(w, req->second_parent, w->second)) {
            api->fail(ctx, req->id, KEVO_FAIL_INTERNAL,
                      "cannot read the second parent's assignment");
            return false;
        }
    }
    return true;
}

/* ---- proposals --------------------------------------------------------------
 */

/* idx as a JSON object of every parameter's value, in w->text. */
static const char *format(work *w, const size_t *idx)
{
    size_t need = 3;
    for (size_t i = 0; i < w->n; i++)
        need += strlen(w->params[i].name) + 32;
    if (need > w->text_cap) {
        char *t = realloc(w->text, need);
        if (!t)
            return NULL;
        w->text = t;
        w->text_cap = need;
    }
    size_t len = 0;
    w->text[len++] = '{';
    for (size_t i = 0; i < w->n; i++)
        len += (size_t)snprintf(
            w->text + len, w->text_cap - len, "%s\"%s\": %lld", i ? ", " : "",
            w->params[i].name, (long long)w->params[i].values[idx[i]]);
    w->text[len++] = '}';
    w->text[len] = '\0';
    return w->text;
}

/* A short note: what changed from the parent. */
static void describe(const work *w, const size_t *idx, const char *what,
                     char *note, size_t size)
{
    size_t len = (size_t)snprintf(note, size, "%s:", what);
    for (size_t i = 0; i < w->n && len < size; i++) {
        if (idx[i] == w->parent[i])
            continue;
        len += (size_t)snprintf(note + len, size - len, " %s %lld -> %lld",
                                w->params[i].name,
                                (long long)w->params[i].values[w->parent[i]],
                                (long long)w->params[i].values[idx[i]]);
    }
}

static bool same(const work *w, const size_t *a, const size_t *b)
{
    return memcmp(a, b, w->n * sizeof *a) == 0;
}

/* Offers the trial assignment: skipped when it is the parent, seen or
 * invalid; emitted otherwise. */
static outcome offer(work *w, const size_t *idx, const char *what)
{
    const kevo_host_api *api = w->op->api;
    kevo_host_ctx *ctx = w->op->ctx;
    const kevo_operator_request *req = w->req;
    if (same(w, idx, w->parent) || (w->second && same(w, idx, w->second)))
        return SKIPPED;
    const char *text = format(w, idx);
    if (!text)
        return FAILED;
    if (api->seen(ctx, req->parent, text))
        return SKIPPED;
    if (api->check(ctx, req->parent, text) != KEVO_OK) {
        api->log(ctx, KEVO_LOG_DEBUG, "%s rejected: %s", text,
                 api->last_error(ctx));
        return SKIPPED;
    }
    char note[512];
    describe(w, idx, what, note, sizeof note);
    if (api->emit_child(ctx, req->id, api->cand_source(ctx, req->parent), text,
                        note) != KEVO_OK) {
        api->log(ctx, KEVO_LOG_WARN, "the host refused %s: %s", text,
                 api->last_error(ctx));
        return SKIPPED;
    }
    w->emitted++;
    return EMITTED;
}

/* Moves parameter i of idx: to a neighbour (step) or any other value. */
static void move(work *w, size_t *idx, size_t i, bool step)
{
    const kevo_host_api *api = w->op->api;
    size_t n = w->params[i].n;
    if (n < 2)
        return;
    if (step) {
        bool up = api->uniform01(w->op->ctx) < 0.5;
        if (idx[i] == 0)
            up = true;
        else if (idx[i] == n - 1)
            up = false;
        idx[i] = up ? idx[i] + 1 : idx[i] - 1;
    } else {
        size_t k = (size_t)api->uniform_int(w->op->ctx, n - 1);
        idx[i] = k >= idx[i] ? k + 1 : k;
    }
}

/* The parameters that can change (domains of two or more values). */
static size_t movable(const work *w, size_t *which)
{
    size_t m = 0;
    for (size_t i = 0; i < w->n; i++) {
        if (w->params[i].n > 1)
            which[m++] = i;
    }
    return m;
}

/* One random mutation of base into w->trial; the name of the kind. */
static const char *mutate(work *w, const size_t *base, size_t *which, size_t m)
{
    params_op *op = w->op;
    const kevo_host_api *api = op->api;
    memcpy(w->trial, base, w->n * sizeof *base);
    double ws = op->w_step, wj = op->w_jump;
    double wm = m >= 2 ? op->w_multi : 0;
    if (ws + wj + wm <= 0)
        ws = 1; /* only multi was asked for, but one parameter can move */
    double r = api->uniform01(op->ctx) * (ws + wj + wm);
    if (r < ws) {
        move(w, w->trial, which[api->uniform_int(op->ctx, m)], true);
        return "step";
    }
    if (r < ws + wj) {
        move(w, w->trial, which[api->uniform_int(op->ctx, m)], false);
        return "jump";
    }
    /* multi: k distinct parameters, chosen by a partial shuffle of which. */
    size_t most = op->max_changes < m ? op->max_changes : m;
    size_t k = 2 + (size_t)api->uniform_int(op->ctx, most - 1);
    for (size_t j = 0; j < k; j++) {
        size_t pick = j + (size_t)api->uniform_int(op->ctx, m - j);
        size_t t = which[j];
        which[j] = which[pick];
        which[pick] = t;
        move(w, w->trial, which[j], api->uniform01(op->ctx) < 0.5);
    }
    return "multi";
}

/* Walks every assignment of the space from a random starting point and
 * offers each until one is emitted. Returns EMITTED, or SKIPPED when the
 * space holds nothing new. */
static outcome enumerate(work *w)
{
    const kevo_host_api *api = w->op->api;
    for (size_t i = 0; i < w->n; i++)
        w->trial[i] = (size_t)api->uniform_int(w->op->ctx, w->params[i].n);
    for (uint64_t c = 0; c < w->combos; c++) {
        outcome o = offer(w, w->trial, "enumerated");
        if (o != SKIPPED)
            return o;
        for (size_t i = 0; i < w->n; i++) {
            if (++w->trial[i] < w->params[i].n)
                break;
            w->trial[i] = 0;
        }
    }
    return SKIPPED;
}

/* One crossover child: random mixes, then every mix when few enough. */
static outcome crossover(work *w)
{
    const kevo_host_api *api = w->op->api;
    size_t diff[CROSS_BITS_MAX], d = 0;
    for (size_t i = 0; i < w->n; i++) {
        if (w->parent[i] != w->second[i] && d < CROSS_BITS_MAX)
            diff[d++] = i;
    }
    if (d < 2)
        return SKIPPED; /* the only mixes are the parents themselves */
    for (int t = 0; t < w->op->tries; t++) {
        memcpy(w->trial, w->parent, w->n * sizeof *w->trial);
        for (size_t j = 0; j < d; j++) {
            if (api->uniform01(w->op->ctx) < 0.5)
                w->trial[diff[j]] = w->second[diff[j]];
        }
        outcome o = offer(w, w->trial, "crossover");
        if (o != SKIPPED)
            return o;
    }
    if (((uint64_t)1 << d) > w->op->enumerate_limit)
        return SKIPPED;
    for (uint64_t mask = 1; mask + 1 < ((uint64_t)1 << d); mask++) {
        memcpy(w->trial, w->parent, w->n * sizeof *w->trial);
        for (size_t j = 0; j < d; j++) {
            if (mask >> j & 1)
                w->trial[diff[j]] = w->second[diff[j]];
        }
        outcome o = offer(w, w->trial, "crossover");
        if (o != SKIPPED)
            return o;
    }
    return SKIPPED;
}

/* One child by mutation of the parent (or, after a crossover, of either
 * parent); enumeration when random tries find nothing. Sets *exhausted
 * when the whole space was searched in vain. */
static outcome mutation(work *w, size_t *which, bool *exhausted)
{
    const kevo_host_api *api = w->op->api;
    size_t m = movable(w, which);
    if (m == 0) {
        *exhausted = true;
        return SKIPPED;
    }
    for (int t = 0; t < w->op->tries; t++) {
        const size_t *base = w->parent;
        if (w->second && api->uniform01(w->op->ctx) < 0.5)
            base = w->second;
        const char *what = mutate(w, base, which, m);
        outcome o = offer(w, w->trial, what);
        if (o != SKIPPED)
            return o;
    }
    if (w->combos > w->op->enumerate_limit)
        return SKIPPED;
    outcome o = enumerate(w);
    if (o == SKIPPED)
        *exhausted = true;
    return o;
}

static kevo_status params_propose(void *state, const kevo_operator_request *req)
{
    params_op *op = state;
    const kevo_host_api *api = op->api;
    work w = {.op = op, .req = req};
    size_t *which = NULL;
    bool exhausted = false;
    if (!work_init(&w))
        goto done;
    if (!(which = calloc(w.n, sizeof *which))) {
        api->fail(op->ctx, req->id, KEVO_FAIL_INTERNAL, "out of memory");
        goto done;
    }
    while (w.emitted < req->n_children && !exhausted) {
        outcome o = w.second ? crossover(&w) : SKIPPED;
        if (o == SKIPPED)
            o = mutation(&w, which, &exhausted);
        if (o == FAILED) {
            api->fail(op->ctx, req->id, KEVO_FAIL_INTERNAL, "out of memory");
            goto done;
        }
        if (o == SKIPPED)
            break;
    }
    if (w.emitted == 0) {
        char why[256];
        if (exhausted)
            snprintf(why, sizeof why,
                     "the parameter space of this source is exhausted: all "
                     "%" PRIu64 " assignments are invalid, evaluated or "
                     "already proposed",
                     w.combos);
        else
            snprintf(why, sizeof why,
                     "no new valid assignment found in %d tries, and the "
                     "space (%" PRIu64 " assignments) is larger than "
                     "enumerate_limit",
                     op->tries, w.combos);
        api->fail(op->ctx, req->id, KEVO_FAIL_EXHAUSTED, why);
    }
done:
    api->done(op->ctx, req->id);
    free(which);
    work_clear(&w);
    return KEVO_OK;
}

static const kevo_operator_desc params_desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = KEVO_OPERATOR_ABI_MINOR,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "params",
    .version = "1.0",
    .description = "mutates and crosses parameter assignments within their "
                   "domains and constraints",
    .init = params_init,
    .propose = params_propose,
    .poll = NULL,
    .fini = params_fini,
};

KEVO_OPERATOR_ENTRY(params_desc)

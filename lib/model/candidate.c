/*
 * candidate.c: a kernel variant: its source, the blocks parsed from it,
 * the assignment of its parameters, and its lineage.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidate_private.h"
#include "devprops.h"

/* Ids travel as JSON integers, which are signed 64-bit. */
#define ID_MAX UINT64_C(0x7fffffffffffffff)

/* ---- references ---------------------------------------------------------- */

kevo_candidate *kevo_candidate_ref(kevo_candidate *cand)
{
    if (cand)
        atomic_fetch_add_explicit(&cand->refs, 1, memory_order_relaxed);
    return cand;
}

kevo_candidate *kevo__candidate_share(const kevo_candidate *cand)
{
    return kevo_candidate_ref((kevo_candidate *)cand);
}

/* A candidate changes only while whoever made it holds the only reference:
 * once shared (with an evaluator, an archive, a result), every holder sees
 * the same candidate for as long as it holds it. */
static kevo_status check_unshared(const kevo_candidate *cand, const char *fn,
                                  kevo_error *err)
{
    size_t refs = atomic_load_explicit(&((kevo_candidate *)cand)->refs,
                                       memory_order_acquire);
    if (refs == 1)
        return KEVO_OK;
    return kevo__error_set(err, KEVO_ESTATE,
                           "%s: the candidate is shared (%zu references) "
                           "and so cannot change: change a copy "
                           "(kevo_candidate_copy)",
                           fn, refs);
}

void kevo_candidate_free(kevo_candidate *cand)
{
    if (!cand ||
        atomic_fetch_sub_explicit(&cand->refs, 1, memory_order_acq_rel) != 1)
        return;
    free(cand->source);
    free(cand->origin);
    kevo__blocks_free(&cand->blocks);
    kevo_paramspace_free(cand->task_params);
    kevo_vars_free(cand->assignment);
    free(cand->op);
    free(cand);
}

/* Sources must be UTF-8: they travel in JSON (archives, checkpoints, LLM
 * requests), which holds nothing else. */
static kevo_status check_utf8(const char *source, const char *origin,
                              kevo_error *err)
{
    const unsigned char *s = (const unsigned char *)source;
    int line = 1, column = 1;
    for (size_t i = 0; s[i];) {
        size_t n = kevo__utf8_length(source + i);
        if (n == 0) {
            char where[KEVO_ERROR_SOURCE_SIZE + 32];
            if (origin)
                snprintf(where, sizeof where, "%s:%d", origin, line);
            else
                snprintf(where, sizeof where, "line %d", line);
            return kevo__error_set_at(err, KEVO_EINVALID, origin, line, column,
                                      "%s: byte 0x%02x at column %d is not "
                                      "valid UTF-8: kernel sources must be "
                                      "UTF-8",
                                      where, s[i], column);
        }
        if (s[i] == '\n') {
            if (line < INT32_MAX)
                line++;
            column = 1;
        } else if (column < INT32_MAX) {
            column++;
        }
        i += n;
    }
    return KEVO_OK;
}

kevo_status kevo_candidate_new(const char *source, const char *origin,
                               kevo_candidate **out, kevo_error *err)
{
    if (out)
        *out = NULL;
    if (!source || !out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_candidate_new: NULL argument");
    kevo_status rc = KEVO_OK;
    kevo_candidate *cand = calloc(1, sizeof *cand);
    if (!cand)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    atomic_init(&cand->refs, 1);
    cand->prompt = -1;
    rc = kevo__blocks_parse(source, origin, &cand->blocks, err);
    if (rc == KEVO_OK)
        rc = check_utf8(source, origin, err);
    if (rc != KEVO_OK)
        goto fail;
    cand->source = kevo__strdup(source);
    cand->origin = origin ? kevo__strdup(origin) : NULL;
    cand->assignment = kevo_vars_new();
    if (!cand->source || (origin && !cand->origin) || !cand->assignment ||
        kevo_paramspace_defaults(cand->blocks.params, cand->assignment) !=
            KEVO_OK) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto fail;
    }
    *out = cand;
    return KEVO_OK;
fail:
    kevo_candidate_free(cand);
    return rc;
}

kevo_status kevo_candidate_load(const char *path, kevo_candidate **out,
                                kevo_error *err)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_candidate_load: NULL argument");
    char *text;
    size_t len;
    kevo_status rc = kevo__read_file(path, true, &text, &len, err);
    if (rc != KEVO_OK)
        return rc;
    rc = kevo_candidate_new(text, path, out, err);
    free(text);
    return rc;
}

kevo_candidate *kevo_candidate_copy(const kevo_candidate *cand)
{
    if (!cand)
        return NULL;
    kevo_candidate *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    atomic_init(&c->refs, 1);
    c->source = kevo__strdup(cand->source);
    c->origin = cand->origin ? kevo__strdup(cand->origin) : NULL;
    c->op = cand->op ? kevo__strdup(cand->op) : NULL;
    c->assignment = kevo_vars_copy(cand->assignment);
    if (cand->task_params)
        c->task_params = kevo_paramspace_copy(cand->task_params);
    if (!c->source || (cand->origin && !c->origin) || (cand->op && !c->op) ||
        !c->assignment || (cand->task_params && !c->task_params) ||
        kevo__blocks_copy(&cand->blocks, &c->blocks) != KEVO_OK) {
        kevo_candidate_free(c);
        return NULL;
    }
    c->id = cand->id;
    memcpy(c->parents, cand->parents, sizeof c->parents);
    c->nparents = cand->nparents;
    c->prompt = cand->prompt;
    c->generation = cand->generation;
    return c;
}

const char *kevo_candidate_source(const kevo_candidate *cand)
{
    return cand ? cand->source : NULL;
}

const char *kevo_candidate_origin(const kevo_candidate *cand)
{
    return cand ? cand->origin : NULL;
}

static uint64_t hash_u64(uint64_t h, uint64_t v)
{
    unsigned char bytes[8];
    for (int k = 0; k < 8; k++)
        bytes[k] = (unsigned char)(v >> (8 * k));
    return kevo__hash_bytes(h, bytes, sizeof bytes);
}

/* Every field is preceded by its length, so that no two different
 * candidates feed the hash the same bytes. */
uint64_t kevo_candidate_hash(const kevo_candidate *cand)
{
    if (!cand)
        return 0;
    uint64_t h = KEVO__HASH_INIT;
    size_t len = strlen(cand->source);
    h = hash_u64(h, len);
    h = kevo__hash_bytes(h, cand->source, len);
    const kevo_paramspace *space = cand->blocks.params;
    size_t n = kevo_paramspace_count(space);
    h = hash_u64(h, n);
    for (size_t i = 0; i < n; i++) {
        const char *name = kevo_paramspace_name(space, i);
        int64_t value = 0;
        kevo_vars_get(cand->assignment, name, &value);
        h = hash_u64(h, strlen(name));
        h = kevo__hash_bytes(h, name, strlen(name));
        h = hash_u64(h, (uint64_t)value);
    }
    return kevo__hash_finish(h);
}

const kevo_paramspace *kevo_candidate_params(const kevo_candidate *cand)
{
    return cand ? cand->blocks.params : NULL;
}

const kevo_vars *kevo_candidate_assignment(const kevo_candidate *cand)
{
    return cand ? cand->assignment : NULL;
}

/* "BLOCK, VEC", for messages. */
static void param_names(const kevo_paramspace *space, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < kevo_paramspace_count(space) && len < size; i++) {
        int n = snprintf(out + len, size - len, "%s%s", i ? ", " : "",
                         kevo_paramspace_name(space, i));
        if (n < 0)
            break;
        len += (size_t)n;
    }
}

static kevo_status unknown_param(const kevo_paramspace *space, const char *name,
                                 kevo_error *err)
{
    if (kevo_paramspace_count(space) == 0)
        return kevo__error_set(err, KEVO_ENOENT,
                               "'%.64s' is not a parameter of this candidate "
                               "(it declares none)",
                               name);
    char names[512];
    param_names(space, names, sizeof names);
    return kevo__error_set(err, KEVO_ENOENT,
                           "'%.64s' is not a parameter of this candidate "
                           "(its parameters: %s)",
                           name, names);
}

kevo_status kevo_candidate_set_param(kevo_candidate *cand, const char *name,
                                     int64_t value, kevo_error *err)
{
    if (!cand || !name)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_candidate_set_param: NULL argument");
    kevo_status rc = check_unshared(cand, "kevo_candidate_set_param", err);
    if (rc != KEVO_OK)
        return rc;
    size_t i;
    if (kevo_paramspace_find(cand->blocks.params, name, &i) != KEVO_OK)
        return unknown_param(cand->blocks.params, name, err);
    rc = kevo__paramspace_check_value(cand->blocks.params, i, value, err);
    if (rc != KEVO_OK)
        return rc;
    if (kevo_vars_set(cand->assignment, name, value) != KEVO_OK)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    return KEVO_OK;
}

kevo_status kevo_candidate_check(const kevo_candidate *cand,
                                 const kevo_vars *env, kevo_error *err)
{
    if (!cand)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_candidate_check: NULL candidate");
    return kevo_paramspace_check(cand->blocks.params, cand->assignment, env,
                                 err);
}

size_t kevo_candidate_launch_count(const kevo_candidate *cand)
{
    return cand ? cand->blocks.nlaunches : 0;
}

const char *kevo_candidate_launch_kernel(const kevo_candidate *cand, size_t i)
{
    return cand && i < cand->blocks.nlaunches ? cand->blocks.launches[i].kernel
                                              : NULL;
}

/* ---- launch geometry ----------------------------------------------------- */

static kevo_status geometry_fail(const kevo_candidate *cand,
                                 const kevo_launch *l, kevo_status code,
                                 int column, kevo_error *err, const char *fmt,
                                 ...) KEVO_PRINTF(6, 7);

/* "<origin>:<line>: kevo:launch: <message>", as the block parser says it. */
static kevo_status geometry_fail(const kevo_candidate *cand,
                                 const kevo_launch *l, kevo_status code,
                                 int column, kevo_error *err, const char *fmt,
                                 ...)
{
    char msg[KEVO_ERROR_TEXT_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char where[KEVO_ERROR_SOURCE_SIZE + 32];
    if (cand->origin)
        snprintf(where, sizeof where, "%s:%d", cand->origin, l->line);
    else
        snprintf(where, sizeof where, "line %d", l->line);
    return kevo__error_set_at(err, code, cand->origin, l->line, column,
                              "%s: kevo:launch: %s", where, msg);
}

static kevo_status eval_item(const kevo_candidate *cand, const kevo_launch *l,
                             const kevo_expr *e, int64_t absent,
                             const kevo_vars *vars, const char *what,
                             int64_t *out, kevo_error *err)
{
    if (!e) {
        *out = absent;
        return KEVO_OK;
    }
    kevo_error inner = KEVO__ERROR_INIT;
    kevo_status rc = kevo_expr_eval(e, vars, out, &inner);
    if (rc != KEVO_OK)
        return geometry_fail(cand, l, rc, inner.column, err, "%s of '%s': %s",
                             what, l->kernel, inner.text);
    return KEVO_OK;
}

/* Evaluates GRID or BLOCK and checks each component against its limit. */
static kevo_status eval_dims(const kevo_candidate *cand, const kevo_launch *l,
                             kevo_expr *const dims[3], const kevo_vars *vars,
                             const char *what, const int64_t limits[3],
                             uint32_t out[3], kevo_error *err)
{
    bool single = !dims[1] && !dims[2];
    for (int k = 0; k < 3; k++) {
        char label[16];
        if (single)
            snprintf(label, sizeof label, "%s", what);
        else
            snprintf(label, sizeof label, "%s.%c", what, "xyz"[k]);
        int64_t v;
        kevo_status rc = eval_item(cand, l, dims[k], 1, vars, label, &v, err);
        if (rc != KEVO_OK)
            return rc;
        if (v <= 0)
            return geometry_fail(cand, l, KEVO_ERANGE, 0, err,
                                 "%s of '%s' is %" PRId64
                                 ": it must be positive",
                                 label, l->kernel, v);
        if (v > limits[k])
            return geometry_fail(cand, l, KEVO_ERANGE, 0, err,
                                 "%s of '%s' is %" PRId64
                                 ": CUDA allows at most %" PRId64,
                                 label, l->kernel, v, limits[k]);
        out[k] = (uint32_t)v;
    }
    return KEVO_OK;
}

/* The most blocks a cluster may have: 8 is portable, up to 16 with the
 * non-portable opt-in (which the worker sets). */
#define CLUSTER_MAX 16

/* cluster(X, Y, Z): each positive, the product at most CLUSTER_MAX, and
 * each grid dimension a multiple of the cluster's. */
static kevo_status eval_cluster(const kevo_candidate *cand,
                                const kevo_launch *l, const kevo_vars *vars,
                                kevo_launch_geometry *g, kevo_error *err)
{
    static const int64_t limits[3] = {CLUSTER_MAX, CLUSTER_MAX, CLUSTER_MAX};
    kevo_status rc = eval_dims(cand, l, l->cluster, vars, "cluster", limits,
                               g->cluster, err);
    if (rc != KEVO_OK)
        return rc;
    uint64_t size = (uint64_t)g->cluster[0] * g->cluster[1] * g->cluster[2];
    if (size > CLUSTER_MAX)
        return geometry_fail(
            cand, l, KEVO_ERANGE, 0, err,
            "cluster of '%s' has %" PRIu64 " blocks (%" PRIu32 " x %" PRIu32
            " x %" PRIu32 "): at most 8 are portable and 16 the most with "
            "the non-portable opt-in",
            l->kernel, size, g->cluster[0], g->cluster[1], g->cluster[2]);
    for (int k = 0; k < 3; k++) {
        if (g->grid[k] % g->cluster[k] != 0)
            return geometry_fail(cand, l, KEVO_ERANGE, 0, err,
                                 "grid.%c of '%s' is %" PRIu32
                                 ", not a multiple of cluster.%c (%" PRIu32
                                 "): a grid is made of whole clusters",
                                 "xyz"[k], l -> kernel, g -> grid[k], "xyz"[k],
                                 g -> cluster[k]);
    }
    return KEVO_OK;
}

kevo_status kevo_candidate_launch_geometry(const kevo_candidate *cand, size_t i,
                                           const kevo_vars *env,
                                           kevo_launch_geometry *geometry,
                                           kevo_error *err)
{
    static const int64_t grid_limits[3] = {INT64_C(2147483647), 65535, 65535};
    static const int64_t block_limits[3] = {1024, 1024, 64};
    if (!cand || !geometry)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_candidate_launch_geometry: NULL argument");
    if (geometry->size != 0 && geometry->size != sizeof *geometry)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_launch_geometry.size is %zu: set it to "
                               "sizeof(kevo_launch_geometry), %zu",
                               geometry->size, sizeof *geometry);
    if (i >= cand->blocks.nlaunches)
        return kevo__error_set(err, KEVO_EINVAL,
                               "launch %zu does not exist: the candidate has "
                               "%zu",
                               i, cand->blocks.nlaunches);
    const kevo_launch *l = &cand->blocks.launches[i];
    kevo_launch_geometry g = {.size = sizeof g};
    kevo_status rc = KEVO_OK;
    kevo_vars *vars = kevo_vars_copy(env);
    if (!vars || kevo_vars_update(vars, cand->assignment) != KEVO_OK) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    if (l->cond) {
        int64_t runs;
        rc = eval_item(cand, l, l->cond, 1, vars, "condition", &runs, err);
        if (rc != KEVO_OK)
            goto done;
        if (runs == 0) {
            *geometry = g;
            goto done;
        }
    }
    g.runs = 1;
    g.pdl = l->pdl;
    rc = eval_dims(cand, l, l->grid, vars, "grid", grid_limits, g.grid, err);
    if (rc == KEVO_OK)
        rc = eval_dims(cand, l, l->block, vars, "block", block_limits, g.block,
                       err);
    if (rc != KEVO_OK)
        goto done;
    uint64_t threads = (uint64_t)g.block[0] * g.block[1] * g.block[2];
    if (threads > 1024) {
        rc = geometry_fail(
            cand, l, KEVO_ERANGE, 0, err,
            "block of '%s' has %" PRIu64 " threads (%" PRIu32 " x %" PRIu32
            " x %" PRIu32 "): CUDA allows at most 1024 per block",
            l->kernel, threads, g.block[0], g.block[1], g.block[2]);
        goto done;
    }
    int64_t smem;
    rc = eval_item(cand, l, l->smem, 0, vars, "shared memory size", &smem, err);
    if (rc != KEVO_OK)
        goto done;
    if (smem < 0) {
        rc = geometry_fail(cand, l, KEVO_ERANGE, 0, err,
                           "shared memory size of '%s' is %" PRId64
                           " bytes: it must not be negative",
                           l->kernel, smem);
        goto done;
    }
    g.shared_bytes = (uint64_t)smem;
    if (l->cluster[0]) {
        rc = eval_cluster(cand, l, vars, &g, err);
        if (rc != KEVO_OK)
            goto done;
    }
    *geometry = g;
done:
    kevo_vars_free(vars);
    return rc;
}

/* ---- identity and lineage ------------------------------------------------ */

uint64_t kevo_candidate_id(const kevo_candidate *cand)
{
    return cand ? cand->id : 0;
}

kevo_status kevo_candidate_set_id(kevo_candidate *cand, uint64_t id)
{
    if (!cand)
        return KEVO_EINVAL;
    kevo_status rc = check_unshared(cand, "kevo_candidate_set_id", NULL);
    if (rc == KEVO_OK)
        cand->id = id;
    return rc;
}

kevo_status kevo_candidate_set_lineage(kevo_candidate *cand,
                                       const uint64_t *parents, size_t n,
                                       const char *operator_name,
                                       int64_t prompt, uint32_t generation,
                                       kevo_error *err)
{
    if (!cand || (n > 0 && !parents))
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_candidate_set_lineage: NULL argument");
    kevo_status rc = check_unshared(cand, "kevo_candidate_set_lineage", err);
    if (rc != KEVO_OK)
        return rc;
    if (n > KEVO__PARENTS_MAX)
        return kevo__error_set(err, KEVO_EINVAL,
                               "%zu parents: a candidate records at most %d", n,
                               KEVO__PARENTS_MAX);
    char *op = NULL;
    if (operator_name && !(op = kevo__strdup(operator_name)))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    free(cand->op);
    cand->op = op;
    memset(cand->parents, 0, sizeof cand->parents);
    if (n > 0)
        memcpy(cand->parents, parents, n * sizeof *parents);
    cand->nparents = n;
    cand->prompt = prompt;
    cand->generation = generation;
    return KEVO_OK;
}

size_t kevo_candidate_parent_count(const kevo_candidate *cand)
{
    return cand ? cand->nparents : 0;
}

uint64_t kevo_candidate_parent(const kevo_candidate *cand, size_t i)
{
    return cand && i < cand->nparents ? cand->parents[i] : 0;
}

const char *kevo_candidate_operator(const kevo_candidate *cand)
{
    return cand ? cand->op : NULL;
}

int64_t kevo_candidate_prompt(const kevo_candidate *cand)
{
    return cand ? cand->prompt : -1;
}

uint32_t kevo_candidate_generation(const kevo_candidate *cand)
{
    return cand ? cand->generation : 0;
}

/* ---- task parameters ----------------------------------------------------- */

static bool has_constraint(const kevo_paramspace *space, const char *text)
{
    for (size_t i = 0; i < kevo_paramspace_constraint_count(space); i++) {
        if (strcmp(kevo_paramspace_constraint(space, i), text) == 0)
            return true;
    }
    return false;
}

/* Whether every name of the constraint text has a meaning for this
 * candidate: a parameter of space, a dim or a device property. */
static kevo_status constraint_applies(const char *text,
                                      const kevo_paramspace *space,
                                      const char *const *dims, size_t ndims,
                                      bool *applies, kevo_error *err)
{
    kevo_expr *e;
    kevo_status rc = kevo_expr_parse(text, &e, err);
    if (rc != KEVO_OK)
        return rc;
    *applies = true;
    for (size_t k = 0; k < kevo_expr_var_count(e) && *applies; k++) {
        const char *name = kevo_expr_var_name(e, k);
        bool known = kevo_paramspace_find(space, name, NULL) == KEVO_OK ||
                     kevo__devprop_is_name(name);
        for (size_t d = 0; d < ndims && !known; d++)
            known = dims[d] && strcmp(dims[d], name) == 0;
        *applies = known;
    }
    kevo_expr_free(e);
    return KEVO_OK;
}

static kevo_status add_param_like(kevo_paramspace *dst,
                                  const kevo_paramspace *src, size_t i,
                                  kevo_error *err)
{
    size_t n = kevo_paramspace_domain_size(src, i);
    int64_t *values = malloc(n * sizeof *values);
    if (!values)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    for (size_t k = 0; k < n; k++)
        values[k] = kevo_paramspace_domain_value(src, i, k);
    kevo_status rc =
        kevo_paramspace_add_values(dst, kevo_paramspace_name(src, i), values, n,
                                   kevo_paramspace_default(src, i), err);
    free(values);
    return rc;
}

/* Merges task_space in; with filter, a constraint joins only when it
 * applies (constraint_applies); without, every one does (for JSON, where
 * the filter already ran). The candidate changes only on success. */
static kevo_status merge(kevo_candidate *cand, const kevo_paramspace *task,
                         const char *const *dims, size_t ndims, bool filter,
                         kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    bool any = false;
    kevo_paramspace *space = kevo_paramspace_copy(cand->blocks.params);
    kevo_paramspace *merged = cand->task_params
                                  ? kevo_paramspace_copy(cand->task_params)
                                  : kevo_paramspace_new();
    kevo_vars *assignment = kevo_vars_copy(cand->assignment);
    if (!space || !merged || !assignment) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < kevo_paramspace_count(task); i++) {
        const char *name = kevo_paramspace_name(task, i);
        /* The candidate's own declaration wins. */
        if (kevo_paramspace_find(space, name, NULL) == KEVO_OK)
            continue;
        if ((rc = add_param_like(space, task, i, err)) != KEVO_OK ||
            (rc = add_param_like(merged, task, i, err)) != KEVO_OK)
            goto done;
        if (kevo_vars_set(assignment, name, kevo_paramspace_default(task, i)) !=
            KEVO_OK) {
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            goto done;
        }
        any = true;
    }
    for (size_t i = 0; i < kevo_paramspace_constraint_count(task); i++) {
        const char *text = kevo_paramspace_constraint(task, i);
        if (has_constraint(space, text))
            continue;
        bool applies = true;
        if (filter && (rc = constraint_applies(text, space, dims, ndims,
                                               &applies, err)) != KEVO_OK)
            goto done;
        if (!applies)
            continue;
        if ((rc = kevo_paramspace_add_constraint(space, text, err)) !=
                KEVO_OK ||
            (rc = kevo_paramspace_add_constraint(merged, text, err)) != KEVO_OK)
            goto done;
        any = true;
    }
    if (any) {
        kevo_paramspace *old_space = cand->blocks.params;
        kevo_paramspace *old_merged = cand->task_params;
        kevo_vars *old_assignment = cand->assignment;
        cand->blocks.params = space;
        cand->task_params = merged;
        cand->assignment = assignment;
        space = old_space;
        merged = old_merged;
        assignment = old_assignment;
    }
done:
    kevo_paramspace_free(space);
    kevo_paramspace_free(merged);
    kevo_vars_free(assignment);
    return rc;
}

kevo_status kevo__candidate_merge_params(kevo_candidate *cand,
                                         const kevo_paramspace *task_space,
                                         const char *const *dims, size_t n,
                                         kevo_error *err)
{
    if (!cand || (n > 0 && !dims))
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo__candidate_merge_params: NULL argument");
    kevo_status rc = check_unshared(cand, "kevo__candidate_merge_params", err);
    if (rc != KEVO_OK || !task_space)
        return rc;
    return merge(cand, task_space, dims, n, true, err);
}

/* ---- JSON ---------------------------------------------------------------- */

/* A JSON string for a label (origin, operator): jansson takes only UTF-8,
 * so other bytes become '?'. */
static json_t *label_json(const char *s)
{
    if (!s)
        return json_null();
    json_t *v = json_string(s);
    if (v)
        return v;
    char *copy = kevo__strdup(s);
    if (!copy)
        return NULL;
    for (size_t i = 0; copy[i];) {
        size_t n = kevo__utf8_length(copy + i);
        if (n == 0) {
            copy[i] = '?';
            n = 1;
        }
        i += n;
    }
    v = json_string(copy);
    free(copy);
    return v;
}

json_t *kevo__candidate_to_json(const kevo_candidate *cand)
{
    if (!cand || cand->id > ID_MAX)
        return NULL;
    for (size_t i = 0; i < cand->nparents; i++) {
        if (cand->parents[i] > ID_MAX)
            return NULL;
    }
    json_t *obj = json_object();
    json_t *params = json_object();
    json_t *parents = json_array();
    if (json_object_set_new(obj, "params", params) != 0 ||
        json_object_set_new(obj, "parents", parents) != 0 ||
        json_object_set_new(obj, "id", json_integer((json_int_t)cand->id)) !=
            0 ||
        json_object_set_new(obj, "source", json_string(cand->source)) != 0 ||
        json_object_set_new(obj, "origin", label_json(cand->origin)) != 0 ||
        json_object_set_new(obj, "operator", label_json(cand->op)) != 0 ||
        json_object_set_new(obj, "prompt", json_integer(cand->prompt)) != 0 ||
        json_object_set_new(obj, "generation",
                            json_integer(cand->generation)) != 0)
        goto fail;
    for (size_t i = 0; i < cand->nparents; i++) {
        if (json_array_append_new(
                parents, json_integer((json_int_t)cand->parents[i])) != 0)
            goto fail;
    }
    const kevo_paramspace *space = cand->blocks.params;
    for (size_t i = 0; i < kevo_paramspace_count(space); i++) {
        const char *name = kevo_paramspace_name(space, i);
        int64_t value = 0;
        kevo_vars_get(cand->assignment, name, &value);
        if (json_object_set_new(params, name, json_integer(value)) != 0)
            goto fail;
    }
    if (cand->task_params &&
        json_object_set_new(obj, "task_params",
                            kevo__paramspace_to_json(cand->task_params)) != 0)
        goto fail;
    return obj;
fail:
    json_decref(obj);
    return NULL;
}

/* Reads obj.key (which must be present) at path.key with reader. */
static const json_t *member(const json_t *obj, const char *key,
                            const char *origin, kevo_jpath *path,
                            kevo_error *err)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        kevo__json_fail(err, KEVO_EINVALID, origin, path, "missing key \"%s\"",
                        key);
    return v;
}

/* A string or null at path; *out is NULL for null. */
static kevo_status string_or_null(const json_t *v, const char *origin,
                                  const kevo_jpath *path, const char **out,
                                  kevo_error *err)
{
    *out = NULL;
    if (json_is_null(v))
        return KEVO_OK;
    if (!json_is_string(v))
        return kevo__json_fail(err, KEVO_EINVALID, origin, path,
                               "expected a string or null, found %s",
                               kevo__json_type_name(v));
    return kevo__json_string(v, origin, path, out, err);
}

/* An integer in [lo, hi] at path; what names it in the message. */
static kevo_status int_in(const json_t *v, const char *origin,
                          const kevo_jpath *path, int64_t lo, int64_t hi,
                          const char *what, int64_t *out, kevo_error *err)
{
    kevo_status rc = kevo__json_int(v, origin, path, out, err);
    if (rc != KEVO_OK)
        return rc;
    if (*out < lo || *out > hi)
        return kevo__json_fail(err, KEVO_EINVALID, origin, path,
                               "%s %" PRId64 " is out of range (%" PRId64
                               " to %" PRId64 ")",
                               what, *out, lo, hi);
    return KEVO_OK;
}

static kevo_status read_params(kevo_candidate *cand, const json_t *v,
                               const char *origin, kevo_jpath *path,
                               kevo_error *err)
{
    kevo_status rc = kevo__json_object(v, origin, path, err);
    if (rc != KEVO_OK)
        return rc;
    const kevo_paramspace *space = cand->blocks.params;
    const char *key;
    json_t *value;
    json_object_foreach ((json_t *)v, key, value) {
        size_t mark = kevo__jpath_key(path, key);
        int64_t x;
        kevo_error inner = KEVO__ERROR_INIT;
        rc = kevo__json_int(value, origin, path, &x, err);
        if (rc == KEVO_OK &&
            kevo_candidate_set_param(cand, key, x, &inner) != KEVO_OK)
            rc = kevo__json_fail(
                err, inner.code == KEVO_ENOMEM ? KEVO_ENOMEM : KEVO_EINVALID,
                origin, path, "%s", inner.text);
        kevo__jpath_pop(path, mark);
        if (rc != KEVO_OK)
            return rc;
    }
    for (size_t i = 0; i < kevo_paramspace_count(space); i++) {
        const char *name = kevo_paramspace_name(space, i);
        if (!json_object_get(v, name))
            return kevo__json_fail(err, KEVO_EINVALID, origin, path,
                                   "no value for parameter '%s'", name);
    }
    return KEVO_OK;
}

static kevo_status read_parents(const json_t *v, const char *origin,
                                kevo_jpath *path, uint64_t *parents, size_t *n,
                                kevo_error *err)
{
    kevo_status rc = kevo__json_array(v, origin, path, err);
    if (rc != KEVO_OK)
        return rc;
    if (json_array_size(v) > KEVO__PARENTS_MAX)
        return kevo__json_fail(err, KEVO_EINVALID, origin, path,
                               "%zu parents: a candidate records at most %d",
                               json_array_size(v), KEVO__PARENTS_MAX);
    for (size_t i = 0; i < json_array_size(v); i++) {
        size_t mark = kevo__jpath_index(path, i);
        int64_t id;
        rc = int_in(json_array_get(v, i), origin, path, 0, INT64_MAX,
                    "parent id", &id, err);
        kevo__jpath_pop(path, mark);
        if (rc != KEVO_OK)
            return rc;
        parents[i] = (uint64_t)id;
    }
    *n = json_array_size(v);
    return KEVO_OK;
}

kevo_status kevo__candidate_from_json(const json_t *v, const char *origin,
                                      kevo_jpath *path, kevo_candidate **out,
                                      kevo_error *err)
{
    static const char *const known[] = {
        "id",       "source", "origin",     "params",      "parents",
        "operator", "prompt", "generation", "task_params", NULL};
    *out = NULL;
    if (!v)
        return kevo__json_fail(err, KEVO_EINVALID, origin, path,
                               "missing candidate");
    kevo_candidate *cand = NULL;
    kevo_paramspace *task = NULL;
    const char *source, *cand_origin, *op;
    int64_t id, prompt, generation;
    uint64_t parents[KEVO__PARENTS_MAX];
    size_t nparents = 0, mark;
    kevo_error inner = KEVO__ERROR_INIT;
    kevo_status rc = kevo__json_object(v, origin, path, err);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(v, known, origin, path, err);
    if (rc != KEVO_OK)
        return rc;
    for (size_t k = 0; known[k]; k++) {
        if (strcmp(known[k], "task_params") != 0 &&
            !member(v, known[k], origin, path, err))
            return KEVO_EINVALID;
    }

#define FIELD(key, call)                                                       \
    do {                                                                       \
        mark = kevo__jpath_key(path, key);                                     \
        rc = (call);                                                           \
        if (rc != KEVO_OK)                                                     \
            goto done;                                                         \
        kevo__jpath_pop(path, mark);                                           \
    } while (0)

    FIELD("id", int_in(json_object_get(v, "id"), origin, path, 0, INT64_MAX,
                       "id", &id, err));
    FIELD("source", kevo__json_string(json_object_get(v, "source"), origin,
                                      path, &source, err));
    FIELD("origin", string_or_null(json_object_get(v, "origin"), origin, path,
                                   &cand_origin, err));
    FIELD("operator", string_or_null(json_object_get(v, "operator"), origin,
                                     path, &op, err));
    FIELD("prompt", int_in(json_object_get(v, "prompt"), origin, path, -1,
                           INT64_MAX, "prompt id", &prompt, err));
    FIELD("generation", int_in(json_object_get(v, "generation"), origin, path,
                               0, UINT32_MAX, "generation", &generation, err));
    FIELD("parents", read_parents(json_object_get(v, "parents"), origin, path,
                                  parents, &nparents, err));

    mark = kevo__jpath_key(path, "source");
    rc = kevo_candidate_new(source, cand_origin, &cand, &inner);
    if (rc != KEVO_OK) {
        rc = kevo__json_fail(err, rc, origin, path, "%s", inner.text);
        goto done;
    }
    kevo__jpath_pop(path, mark);

    const json_t *tp = json_object_get(v, "task_params");
    if (tp) {
        mark = kevo__jpath_key(path, "task_params");
        rc = kevo__paramspace_from_json(tp, origin, path, &task, err);
        if (rc != KEVO_OK)
            goto done;
        rc = merge(cand, task, NULL, 0, false, &inner);
        if (rc != KEVO_OK) {
            rc = kevo__json_fail(err, rc, origin, path, "%s", inner.text);
            goto done;
        }
        /* Keep the record exactly as it was written. */
        kevo_paramspace_free(cand->task_params);
        cand->task_params = task;
        task = NULL;
        kevo__jpath_pop(path, mark);
    }
    FIELD("params",
          read_params(cand, json_object_get(v, "params"), origin, path, err));
#undef FIELD

    kevo_candidate_set_id(cand, (uint64_t)id);
    rc = kevo_candidate_set_lineage(cand, parents, nparents, op, prompt,
                                    (uint32_t)generation, err);
    if (rc != KEVO_OK)
        goto done;
    *out = cand;
    cand = NULL;
done:
    kevo__jpath_pop(path, mark);
    kevo_candidate_free(cand);
    kevo_paramspace_free(task);
    return rc;
}

/*
 * operator_api.c: the table of host functions every operator plugin
 * receives (kevo_host_api): logging, memory, randomness, the task, the
 * candidates, the archive, assignment checks and the results.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonutil.h"
#include "model/task_private.h"
#include "operator_private.h"
#include "proc/include_scan.h"

/* ---- the task's texts, built once ------------------------------------------
 */

kevo_status kevo__op_task_texts(kevo_operator_host *host, kevo_error *err)
{
    const kevo_task *task = host->task;
    kevo_status rc = KEVO_OK;
    kevo_buf args = {0}, cost = {0};
    json_t *dims = json_object(), *names = json_array(), *shapes = json_array();
    if (!dims || !names || !shapes)
        goto oom;
    for (size_t i = 0; i < kevo_task_arg_count(task); i++) {
        kevo_arg_info a = {.size = sizeof a};
        kevo_task_arg_info(task, i, &a);
        if (a.role == KEVO_ROLE_SCALAR) {
            kevo__buf_printf(&args, "%s: %s scalar", a.name,
                             kevo_dtype_name(a.type));
            if (a.value)
                kevo__buf_printf(&args, " = %s", a.value);
            else
                kevo__buf_puts(&args, ", drawn at random");
        } else {
            kevo__buf_printf(&args, "%s: %s buffer, %s, count %s", a.name,
                             kevo_dtype_name(a.type), kevo__role_name(a.role),
                             a.count);
        }
        kevo__buf_puts(&args, "\n");
    }
    if (task->has_cost)
        kevo__buf_printf(&cost, "bytes: %s\nflops: %s\npeak: %s\n",
                         kevo_expr_text(task->bytes),
                         kevo_expr_text(task->flops),
                         kevo_peak_name(task->peak));
    for (size_t d = 0; d < kevo_task_dim_count(task); d++) {
        if (json_array_append_new(names,
                                  json_string(kevo_task_dim_name(task, d))))
            goto oom;
    }
    for (size_t i = 0; i < kevo_task_shape_count(task, KEVO_SHAPES_TRAIN);
         i++) {
        const int64_t *v = kevo_task_shape(task, KEVO_SHAPES_TRAIN, i);
        json_t *shape = json_object();
        if (json_array_append_new(shapes, shape))
            goto oom;
        for (size_t d = 0; d < kevo_task_dim_count(task); d++) {
            if (json_object_set_new(shape, kevo_task_dim_name(task, d),
                                    json_integer(v[d])))
                goto oom;
        }
    }
    if (json_object_set(dims, "dims", names) ||
        json_object_set(dims, "shapes", shapes))
        goto oom;
    host->task_args = kevo__buf_take(&args);
    host->task_cost = kevo__buf_take(&cost);
    host->task_dims = json_dumps(dims, JSON_COMPACT);
    if (!host->task_args || !host->task_cost || !host->task_dims)
        goto oom;
    goto out;
oom:
    rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
out:
    kevo__buf_free(&args);
    kevo__buf_free(&cost);
    json_decref(dims);
    json_decref(names);
    json_decref(shapes);
    return rc;
}

/* ---- the seen set ----------------------------------------------------------
 */

uint64_t kevo__op_source_hash(const char *source)
{
    return kevo__hash_bytes(KEVO__HASH_INIT, source, strlen(source) + 1);
}

uint64_t kevo__op_candidate_key(const kevo_candidate *cand)
{
    return kevo__op_seen_key(kevo__op_source_hash(kevo_candidate_source(cand)),
                             kevo_candidate_assignment(cand));
}

uint64_t kevo__op_seen_key(uint64_t source_hash, const kevo_vars *assignment)
{
    uint64_t h = source_hash;
    size_t n = kevo_vars_count(assignment);
    /* The names in sorted order, so the key does not depend on the order
     * in which an assignment was built. */
    size_t done = 0;
    const char *last = NULL;
    while (done < n) {
        const char *next = NULL;
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
            const char *name = kevo_vars_name(assignment, i);
            if ((!last || strcmp(name, last) > 0) &&
                (!next || strcmp(name, next) < 0)) {
                next = name;
                at = i;
            }
        }
        int64_t v = kevo_vars_value(assignment, at);
        unsigned char bytes[8];
        for (int k = 0; k < 8; k++)
            bytes[k] = (unsigned char)((uint64_t)v >> (8 * k));
        h = kevo__hash_bytes(h, next, strlen(next) + 1);
        h = kevo__hash_bytes(h, bytes, sizeof bytes);
        last = next;
        done++;
    }
    h = kevo__hash_finish(h);
    return h ? h : 1;
}

bool kevo__op_seen_has(const kevo_operator_host *host, uint64_t key)
{
    if (!host->cseen)
        return false;
    size_t mask = host->cseen - 1;
    for (size_t i = key & mask;; i = (i + 1) & mask) {
        if (host->seen[i] == key)
            return true;
        if (host->seen[i] == 0)
            return false;
    }
}

static void seen_put(uint64_t *table, size_t cap, uint64_t key)
{
    size_t mask = cap - 1;
    size_t i = key & mask;
    while (table[i] != 0 && table[i] != key)
        i = (i + 1) & mask;
    table[i] = key;
}

kevo_status kevo__op_seen_add(kevo_operator_host *host, uint64_t key)
{
    if (kevo__op_seen_has(host, key))
        return KEVO_OK;
    if (2 * (host->nseen + 1) > host->cseen) {
        size_t cap = host->cseen ? 2 * host->cseen : 64;
        uint64_t *t = calloc(cap, sizeof *t);
        if (!t)
            return KEVO_ENOMEM;
        for (size_t i = 0; i < host->cseen; i++) {
            if (host->seen[i])
                seen_put(t, cap, host->seen[i]);
        }
        free(host->seen);
        host->seen = t;
        host->cseen = cap;
    }
    seen_put(host->seen, host->cseen, key);
    host->nseen++;
    return KEVO_OK;
}

/* ---- logging, errors, memory, randomness -----------------------------------
 */

static void api_log(kevo_host_ctx *ctx, kevo_log_level level, const char *fmt,
                    ...)
{
    char line[KEVO__OP_MSG_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    kevo__op_log(ctx->op, level, line);
}

static void api_error(kevo_host_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->op->error_msg, sizeof ctx->op->error_msg, fmt, ap);
    va_end(ap);
}

static const char *api_last_error(kevo_host_ctx *ctx)
{
    return ctx->op->last_error;
}

static void *api_alloc(kevo_host_ctx *ctx, size_t size)
{
    (void)ctx;
    return malloc(size ? size : 1);
}

static void api_free(kevo_host_ctx *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static double api_uniform01(kevo_host_ctx *ctx)
{
    return kevo_rng_uniform(ctx->op->rng);
}

static uint64_t api_uniform_int(kevo_host_ctx *ctx, uint64_t n)
{
    return kevo_rng_uniform_int(ctx->op->rng, n);
}

static double api_gaussian(kevo_host_ctx *ctx, double sigma)
{
    return kevo_rng_gaussian(ctx->op->rng, sigma < 0 ? -sigma : sigma);
}

/* ---- the task and the run ---------------------------------------------------
 */

static const char *api_task_name(kevo_host_ctx *ctx)
{
    return kevo_task_name(ctx->op->host->task);
}

static const char *api_task_description(kevo_host_ctx *ctx)
{
    return kevo_task_description(ctx->op->host->task);
}

static const char *api_task_args(kevo_host_ctx *ctx)
{
    return ctx->op->host->task_args;
}

static const char *api_task_dims(kevo_host_ctx *ctx)
{
    return ctx->op->host->task_dims;
}

static const char *api_task_cost(kevo_host_ctx *ctx)
{
    return ctx->op->host->task_cost;
}

static const char *api_device_json(kevo_host_ctx *ctx)
{
    return ctx->op->host->device_json;
}

static const char *api_run_dir(kevo_host_ctx *ctx)
{
    return ctx->op->host->run_dir;
}

/* ---- candidates -------------------------------------------------------------
 */

static const char *api_cand_source(kevo_host_ctx *ctx, const kevo_candidate *c)
{
    (void)ctx;
    return c ? kevo_candidate_source(c) : NULL;
}

/* v as compact JSON text in a new string (freed with free(), as api->free
 * does); v is released. */
static char *dump_new(json_t *v)
{
    char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    return s;
}

/* {"params": [{"name", "values", "default"}, ...], "constraints": [...]} */
static json_t *space_json(const kevo_paramspace *ps)
{
    /* The _new setters take their value's reference even when they fail,
     * so each new value is attached as soon as it is made. */
    json_t *obj = json_object();
    json_t *params = json_array(), *cons = json_array();
    if (json_object_set_new(obj, "params", params) ||
        json_object_set_new(obj, "constraints", cons))
        goto fail;
    for (size_t i = 0; i < kevo_paramspace_count(ps); i++) {
        json_t *p = json_object();
        if (json_array_append_new(params, p))
            goto fail;
        json_t *values;
        if (json_object_set_new(p, "name",
                                json_string(kevo_paramspace_name(ps, i))) ||
            json_object_set_new(p, "values", values = json_array()) ||
            json_object_set_new(p, "default",
                                json_integer(kevo_paramspace_default(ps, i))))
            goto fail;
        for (size_t k = 0; k < kevo_paramspace_domain_size(ps, i); k++) {
            if (json_array_append_new(
                    values,
                    json_integer(kevo_paramspace_domain_value(ps, i, k))))
                goto fail;
        }
    }
    for (size_t i = 0; i < kevo_paramspace_constraint_count(ps); i++) {
        if (json_array_append_new(
                cons, json_string(kevo_paramspace_constraint(ps, i))))
            goto fail;
    }
    return obj;
fail:
    json_decref(obj);
    return NULL;
}

static char *api_cand_params(kevo_host_ctx *ctx, const kevo_candidate *c)
{
    (void)ctx;
    return c ? dump_new(space_json(kevo_candidate_params(c))) : NULL;
}

static json_t *assignment_json(const kevo_vars *a)
{
    json_t *obj = json_object();
    for (size_t i = 0; obj && i < kevo_vars_count(a); i++) {
        if (json_object_set_new(obj, kevo_vars_name(a, i),
                                json_integer(kevo_vars_value(a, i)))) {
            json_decref(obj);
            return NULL;
        }
    }
    return obj;
}

static char *api_cand_assignment(kevo_host_ctx *ctx, const kevo_candidate *c)
{
    (void)ctx;
    return c ? dump_new(assignment_json(kevo_candidate_assignment(c))) : NULL;
}

static uint64_t api_cand_hash(kevo_host_ctx *ctx, const kevo_candidate *c)
{
    (void)ctx;
    return c ? kevo_candidate_hash(c) : 0;
}

static uint64_t api_cand_id(kevo_host_ctx *ctx, const kevo_candidate *c)
{
    (void)ctx;
    return c ? kevo_candidate_id(c) : 0;
}

static uint32_t api_cand_generation(kevo_host_ctx *ctx, const kevo_candidate *c)
{
    (void)ctx;
    return c ? kevo_candidate_generation(c) : 0;
}

/* ---- the archive ------------------------------------------------------------
 */

/* The filled cells in order, rebuilt once per plugin call. */
static bool elites(kevo_operator_host *host)
{
    if (host->elites_epoch == host->epoch)
        return true;
    host->nelites = 0;
    size_t n = host->archive ? kevo_archive_size(host->archive) : 0;
    if (n > host->celites) {
        size_t *cells = realloc(host->elite_cells, n * sizeof *cells);
        if (!cells)
            return false;
        host->elite_cells = cells;
        host->celites = n;
    }
    if (host->archive) {
        for (size_t c = kevo_archive_first(host->archive);
             c != KEVO_NO_CELL && host->nelites < n;
             c = kevo_archive_next(host->archive, c))
            host->elite_cells[host->nelites++] = c;
    }
    host->elites_epoch = host->epoch;
    return true;
}

static size_t api_elite_count(kevo_host_ctx *ctx)
{
    kevo_operator_host *host = ctx->op->host;
    return elites(host) ? host->nelites : 0;
}

static const kevo_candidate *api_elite(kevo_host_ctx *ctx, size_t i)
{
    kevo_operator_host *host = ctx->op->host;
    if (!elites(host) || i >= host->nelites)
        return NULL;
    return kevo_archive_candidate(host->archive, host->elite_cells[i]);
}

static char *api_elite_summary(kevo_host_ctx *ctx, size_t i)
{
    kevo_operator_host *host = ctx->op->host;
    if (!elites(host) || i >= host->nelites)
        return NULL;
    const kevo_archive *a = host->archive;
    size_t cell = host->elite_cells[i];
    size_t nd = kevo_archive_dimension_count(a);
    double *d = calloc(nd ? nd : 1, sizeof *d);
    json_t *obj = json_object(), *desc = json_object();
    char *s = NULL;
    if (!d || !obj || !desc || kevo_archive_descriptor(a, cell, d) != KEVO_OK)
        goto out;
    for (size_t k = 0; k < nd; k++) {
        if (json_object_set_new(desc, kevo_archive_dimension_name(a, k),
                                json_real(d[k])))
            goto out;
    }
    if (json_object_set_new(obj, "cell", json_integer((json_int_t)cell)) ||
        json_object_set_new(obj, "fitness",
                            json_real(kevo_archive_fitness(a, cell))) ||
        json_object_set(obj, "descriptor", desc) ||
        json_object_set_new(obj, "curiosity",
                            json_real(kevo_archive_curiosity(a, cell))))
        goto out;
    s = json_dumps(obj, JSON_COMPACT);
out:
    free(d);
    json_decref(obj);
    json_decref(desc);
    return s;
}

/* ---- assignments ------------------------------------------------------------
 */

/* Lays assignment_json (NULL: nothing) over target's assignment. Failures
 * go into op's last_error; target may then be partly changed. */
static kevo_status apply_assignment(kevo_operator *op, kevo_candidate *target,
                                    const char *assignment_json)
{
    if (!assignment_json)
        return KEVO_OK;
    kevo_status rc;
    json_t *v = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if ((rc = kevo__json_parse(assignment_json, "assignment", &v, &e)) !=
        KEVO_OK) {
        kevo__op_fail(op, rc, "%s", e.text);
        goto out;
    }
    if (!json_is_object(v)) {
        rc = kevo__op_fail(op, KEVO_EINVALID,
                           "assignment: expected a JSON object of parameter "
                           "values, found %s",
                           kevo__json_type_name(v));
        goto out;
    }
    const char *name;
    json_t *value;
    json_object_foreach (v, name, value) {
        if (!json_is_integer(value)) {
            rc = kevo__op_fail(op, KEVO_EINVALID,
                               "assignment: $.%s: expected an integer, found "
                               "%s",
                               name, kevo__json_type_name(value));
            goto out;
        }
        if ((rc = kevo_candidate_set_param(
                 target, name, json_integer_value(value), &e)) != KEVO_OK) {
            kevo__op_fail(op, rc, "assignment: %s", e.text);
            goto out;
        }
    }
out:
    json_decref(v);
    return rc;
}

/* c with assignment_json laid over its assignment, in op's scratch copy
 * (borrowed). */
static kevo_status probe(kevo_operator *op, const kevo_candidate *c,
                         const char *assignment_json, kevo_candidate **out)
{
    /* The same candidate as last time: the same address and source. */
    if (op->probe && op->probe_of == c &&
        strcmp(kevo_candidate_source(op->probe), kevo_candidate_source(c)) ==
            0) {
        const kevo_vars *a = kevo_candidate_assignment(c);
        for (size_t i = 0; i < kevo_vars_count(a); i++)
            kevo_candidate_set_param(op->probe, kevo_vars_name(a, i),
                                     kevo_vars_value(a, i), NULL);
    } else {
        kevo_candidate_free(op->probe);
        op->probe_of = NULL;
        if (!(op->probe = kevo_candidate_copy(c)))
            return kevo__op_fail(op, KEVO_ENOMEM, "out of memory");
        op->probe_of = c;
        op->probe_source_hash =
            kevo__op_source_hash(kevo_candidate_source(op->probe));
        op->probe_scanned = false;
    }
    *out = op->probe;
    return apply_assignment(op, op->probe, assignment_json);
}

/* Checks c's assignment at every shape of the task: domains, constraints,
 * launch limits. Held-out shapes are never named in the reason. */
static kevo_status check_shapes(kevo_operator *op, const kevo_candidate *c)
{
    kevo_operator_host *host = op->host;
    const kevo_task *task = host->task;
    kevo_status rc = KEVO_OK;
    kevo_vars *env = kevo_vars_new();
    if (!env)
        return kevo__op_fail(op, KEVO_ENOMEM, "out of memory");
    int64_t smem_max = INT64_MAX;
    kevo_vars_get(host->device, "max_smem_per_block", &smem_max);
    for (int s = 0; s < 2 && rc == KEVO_OK; s++) {
        kevo_shape_set set = (kevo_shape_set)s;
        for (size_t i = 0; i < kevo_task_shape_count(task, set); i++) {
            kevo_error e = KEVO__ERROR_INIT;
            kevo_vars_clear(env);
            if (kevo_vars_update(env, host->device) != KEVO_OK ||
                kevo_task_shape_vars(task, set, i, env) != KEVO_OK) {
                rc = kevo__op_fail(op, KEVO_ENOMEM, "out of memory");
                break;
            }
            rc = kevo_candidate_check(c, env, &e);
            for (size_t l = 0;
                 rc == KEVO_OK && l < kevo_candidate_launch_count(c); l++) {
                kevo_launch_geometry g = {.size = sizeof g};
                rc = kevo_candidate_launch_geometry(c, l, env, &g, &e);
                if (rc == KEVO_OK && g.shared_bytes > (uint64_t)smem_max)
                    rc = kevo__error_set(
                        &e, KEVO_ELIMIT,
                        "kernel '%s' asks for %llu bytes of dynamic shared "
                        "memory, more than max_smem_per_block (%lld)",
                        kevo_candidate_launch_kernel(c, l),
                        (unsigned long long)g.shared_bytes,
                        (long long)smem_max);
            }
            if (rc == KEVO_OK)
                continue;
            if (set == KEVO_SHAPES_TRAIN) {
                char at[256];
                kevo__task_shape_text(task, set, i, at, sizeof at);
                kevo__op_fail(op, rc, "at %s: %s", at, e.text);
            } else {
                kevo__op_fail(op, rc,
                              "the assignment fails at a held-out shape (%s); "
                              "held-out shapes are not shown",
                              kevo_strerror(rc));
            }
            break;
        }
    }
    kevo_vars_free(env);
    return rc;
}

static int api_seen(kevo_host_ctx *ctx, const kevo_candidate *c,
                    const char *assignment_json)
{
    kevo_operator *op = ctx->op;
    kevo_candidate *p = NULL;
    if (!c || probe(op, c, assignment_json, &p) != KEVO_OK)
        return 0;
    return kevo__op_seen_has(
        op->host,
        kevo__op_seen_key(op->probe_source_hash, kevo_candidate_assignment(p)));
}

static kevo_status api_check(kevo_host_ctx *ctx, const kevo_candidate *c,
                             const char *assignment_json)
{
    kevo_operator *op = ctx->op;
    if (!c)
        return kevo__op_fail(op, KEVO_EINVAL, "check: the candidate is NULL");
    kevo_candidate *p = NULL;
    kevo_status rc = probe(op, c, assignment_json, &p);
    if (rc == KEVO_OK && !op->probe_scanned) {
        /* Once per source: the scan does not depend on the assignment. */
        const char *src = kevo_candidate_source(p);
        kevo_error e = KEVO__ERROR_INIT;
        free(op->probe_scan_msg);
        op->probe_scan =
            kevo__include_scan(src, strlen(src), kevo_candidate_origin(p), &e);
        op->probe_scan_msg =
            op->probe_scan != KEVO_OK ? kevo__strdup(e.text) : NULL;
        op->probe_scanned = true;
    }
    if (rc == KEVO_OK && op->probe_scan != KEVO_OK)
        return kevo__op_fail(op, op->probe_scan, "%s",
                             op->probe_scan_msg ? op->probe_scan_msg
                                                : "out of memory");
    return rc == KEVO_OK ? check_shapes(op, p) : rc;
}

/* ---- results ----------------------------------------------------------------
 */

static kevo_op_pending *pending_or_fail(kevo_operator *op, uint64_t req_id,
                                        const char *fn)
{
    kevo_op_pending *p = kevo__op_find_pending(op, req_id);
    if (!p)
        kevo__op_fail(op, KEVO_EINVAL,
                      "%s: request %llu is not in flight for operator '%s'", fn,
                      (unsigned long long)req_id, op->name);
    return p;
}

/* Why source has an #include kernels may not have, in op's last_error:
 * the include scan's own message. */
static kevo_status scan_includes(kevo_operator *op, const char *source,
                                 const char *origin)
{
    kevo_error e = KEVO__ERROR_INIT;
    kevo_status rc = kevo__include_scan(source, strlen(source), origin, &e);
    if (rc != KEVO_OK)
        kevo__op_fail(op, rc, "%s", e.text);
    return rc;
}

/* Makes p's child from source: parsed, with its assignment, checked and
 * new. Failures go into op's last_error. */
static kevo_status make_child(kevo_operator *op, kevo_op_pending *p,
                              const char *source, const char *assignment_json,
                              kevo_candidate **out)
{
    kevo_operator_host *host = op->host;
    kevo_status rc;
    kevo_error e = KEVO__ERROR_INIT;
    kevo_candidate *fresh = NULL;
    char origin[160];
    snprintf(origin, sizeof origin, "%s#%llu", op->name,
             (unsigned long long)p->id);
    *out = NULL;
    if ((rc = kevo_candidate_new_for_task(host->task, source, origin, &fresh,
                                          &e)) != KEVO_OK) {
        kevo__op_fail(op, rc, "%s", e.text);
        goto out;
    }
    if ((rc = scan_includes(op, source, origin)) != KEVO_OK)
        goto out;
    /* A child with its parent's source starts from the parent's values. */
    if (strcmp(source, kevo_candidate_source(p->parent)) == 0) {
        const kevo_vars *a = kevo_candidate_assignment(p->parent);
        for (size_t i = 0; i < kevo_vars_count(a); i++) {
            /* A value outside the child's domain keeps the default. */
            (void)kevo_candidate_set_param(fresh, kevo_vars_name(a, i),
                                           kevo_vars_value(a, i), NULL);
        }
    }
    if ((rc = apply_assignment(op, fresh, assignment_json)) != KEVO_OK ||
        (rc = check_shapes(op, fresh)) != KEVO_OK)
        goto out;
    uint64_t key = kevo__op_candidate_key(fresh);
    if (key == kevo__op_candidate_key(p->parent)) {
        rc = kevo__op_fail(op, KEVO_EEXIST,
                           p->repair && p->repair->child
                               ? "emit_child: the repair is the failed child "
                                 "unchanged"
                               : "emit_child: the child is its parent "
                                 "unchanged");
        goto out;
    }
    if (kevo__op_seen_has(host, key)) {
        rc = kevo__op_fail(op, KEVO_EEXIST,
                           "emit_child: this source with this assignment was "
                           "already evaluated or proposed");
        goto out;
    }
    if ((rc = kevo_candidate_set_lineage(fresh, p->lineage, p->nlineage,
                                         op->name, p->prompt_id, p->generation,
                                         &e)) != KEVO_OK) {
        kevo__op_fail(op, rc, "%s", e.text);
        goto out;
    }
    if (kevo__op_seen_add(host, key) != KEVO_OK) {
        rc = kevo__op_fail(op, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    *out = fresh;
    fresh = NULL;
out:
    kevo_candidate_free(fresh);
    return rc;
}

static kevo_status api_emit_child(kevo_host_ctx *ctx, uint64_t req_id,
                                  const char *source,
                                  const char *assignment_json, const char *note)
{
    kevo_operator *op = ctx->op;
    kevo_op_pending *p = pending_or_fail(op, req_id, "emit_child");
    if (!p)
        return KEVO_EINVAL;
    if (p->revision)
        return kevo__op_fail(op, KEVO_EINVAL,
                             "emit_child: request %llu asks for a revised "
                             "prompt, not for children (see emit_prompt)",
                             (unsigned long long)req_id);
    uint32_t attempt = p->attempts++;
    kevo_status rc;
    kevo_candidate *child = NULL;
    if (!source)
        rc = kevo__op_fail(op, KEVO_EINVAL, "emit_child: source is NULL");
    else if (p->repair && p->res->nchildren > 0)
        rc = kevo__op_fail(op, KEVO_EEXIST,
                           "emit_child: a repair request takes one child, "
                           "and request %llu has it",
                           (unsigned long long)req_id);
    else
        rc = make_child(op, p, source, assignment_json, &child);
    if (rc == KEVO_OK) {
        rc = kevo__op_add_child(p, child, note, attempt);
        if (rc != KEVO_OK)
            kevo__op_fail(op, rc, "out of memory");
    }
    if (rc != KEVO_OK && rc != KEVO_ENOMEM)
        kevo__op_add_refused(p, attempt, source, rc, op->last_error);
    return rc;
}

static kevo_status api_fail(kevo_host_ctx *ctx, uint64_t req_id,
                            const char *kind, const char *reason)
{
    kevo_operator *op = ctx->op;
    kevo_op_pending *p = pending_or_fail(op, req_id, "fail");
    if (!p)
        return KEVO_EINVAL;
    char line[KEVO__OP_MSG_SIZE + 160];
    snprintf(line, sizeof line, "request %llu failed (%s): %s",
             (unsigned long long)req_id, kind ? kind : KEVO_FAIL_INTERNAL,
             reason ? reason : "no reason given");
    kevo__op_log(op, KEVO_LOG_INFO, line);
    if (kevo__op_add_failure(p, kind, reason) != KEVO_OK)
        return kevo__op_fail(op, KEVO_ENOMEM, "out of memory");
    return KEVO_OK;
}

static kevo_status api_done(kevo_host_ctx *ctx, uint64_t req_id)
{
    kevo_operator *op = ctx->op;
    kevo_op_pending *p = pending_or_fail(op, req_id, "done");
    if (!p)
        return KEVO_EINVAL;
    kevo__op_end(p);
    return KEVO_OK;
}

static kevo_status api_emit_prompt(kevo_host_ctx *ctx, uint64_t req_id,
                                   const char *sections_json, const char *note)
{
    return kevo__op_emit_prompt(ctx->op, req_id, sections_json, note);
}

static uint64_t add_saturated(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static kevo_status api_report_usage(kevo_host_ctx *ctx, uint64_t input_tokens,
                                    uint64_t output_tokens, double cost)
{
    kevo_operator *op = ctx->op;
    if (!isfinite(cost) || cost < 0)
        return kevo__op_fail(op, KEVO_EINVAL,
                             "report_usage: the cost %g is not a finite, "
                             "non-negative number",
                             cost);
    op->input_tokens = add_saturated(op->input_tokens, input_tokens);
    op->output_tokens = add_saturated(op->output_tokens, output_tokens);
    op->cost += cost;
    return KEVO_OK;
}

static const char *api_instance_name(kevo_host_ctx *ctx)
{
    return ctx->op->name;
}

/* ABI 1.1 took reserved slots: every struct keeps its 1.0 size, so a 1.0
 * plugin's descriptor and requests and a 1.0 host's table line up. */
_Static_assert(sizeof(kevo_host_api) == offsetof(kevo_host_api, emit_prompt) +
                                            16 * sizeof(void (*)(void)),
               "kevo_host_api changed size");
_Static_assert(sizeof(kevo_operator_desc) == KEVO_OPERATOR_DESC_SIZE_1_0,
               "kevo_operator_desc changed size");
_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
               "function pointers fill pointer-sized slots");

const kevo_host_api kevo__host_api = {
    .size = sizeof(kevo_host_api),
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = KEVO_OPERATOR_ABI_MINOR,
    .log = api_log,
    .error = api_error,
    .last_error = api_last_error,
    .alloc = api_alloc,
    .free = api_free,
    .uniform01 = api_uniform01,
    .uniform_int = api_uniform_int,
    .gaussian = api_gaussian,
    .task_name = api_task_name,
    .task_description = api_task_description,
    .task_args = api_task_args,
    .task_dims = api_task_dims,
    .task_cost = api_task_cost,
    .device_json = api_device_json,
    .cand_source = api_cand_source,
    .cand_params = api_cand_params,
    .cand_assignment = api_cand_assignment,
    .cand_hash = api_cand_hash,
    .cand_id = api_cand_id,
    .cand_generation = api_cand_generation,
    .elite_count = api_elite_count,
    .elite = api_elite,
    .elite_summary = api_elite_summary,
    .seen = api_seen,
    .check = api_check,
    .run_dir = api_run_dir,
    .emit_child = api_emit_child,
    .fail = api_fail,
    .done = api_done,
    .emit_prompt = api_emit_prompt,
    .report_usage = api_report_usage,
    .instance_name = api_instance_name,
};

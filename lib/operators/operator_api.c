/*
 * operator_api.c: the table of host functions every operator plugin
 * receives (kevo_host_api): logging, memory, randomness, the task, the
 * candidates, the archive, assignment checks (operator_check.c does them)
 * and the results.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonutil.h"
#include "operator_private.h"
#include "proc/include_scan.h"

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

/* ---- assignments ------------------------------------------------------- */

static int api_seen(kevo_host_ctx *ctx, const kevo_candidate *c,
                    const char *assignment_json)
{
    return kevo__op_seen_probe(ctx->op, c, assignment_json);
}

static kevo_status api_check(kevo_host_ctx *ctx, const kevo_candidate *c,
                             const char *assignment_json)
{
    return kevo__op_check(ctx->op, c, assignment_json);
}

/* ---- results ------------------------------------------------------------- */

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
        rc = kevo__op_make_child(op, p, source, assignment_json, &child);
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

static kevo_status api_waiting(kevo_host_ctx *ctx, uint64_t req_id,
                               const char *where)
{
    kevo_operator *op = ctx->op;
    kevo_op_pending *p = pending_or_fail(op, req_id, "waiting");
    if (!p)
        return KEVO_EINVAL;
    char *w = kevo__strdup(where && *where ? where : "an outside party");
    if (!w)
        return kevo__op_fail(op, KEVO_ENOMEM, "out of memory");
    if (!p->waiting)
        op->host->waiting++;
    op->host->waited = true;
    free(p->waiting);
    p->waiting = w;
    return KEVO_OK;
}

static void api_usage(kevo_host_ctx *ctx, uint64_t *input_tokens,
                      uint64_t *output_tokens, double *cost)
{
    kevo_operator_usage(ctx->op, input_tokens, output_tokens, cost);
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

/* ---- ABI 1.3 ------------------------------------------------------------- */

static kevo_status api_emit_prompt_sections(kevo_host_ctx *ctx, uint64_t req_id,
                                            const kevo_operator_text *sections,
                                            size_t n, const char *note)
{
    return kevo__op_emit_prompt_sections(ctx->op, req_id, sections, n, note);
}

static int api_include_allowed(kevo_host_ctx *ctx, const char *header)
{
    (void)ctx;
    return header && kevo__include_allowed_name(header);
}

static const char *api_include_rule(kevo_host_ctx *ctx)
{
    (void)ctx;
    return KEVO__INCLUDE_ALLOWED_TEXT;
}

/* The size of a version 1.3 kevo_operator_blocks. */
#define BLOCKS_SIZE_1_3                                                        \
    (offsetof(kevo_operator_blocks, reserved) + 4 * sizeof(void *))

/* pl as the plugin sees it: its names in a new string, each followed by a
 * newline (NULL for none). False when out of memory. */
static bool block_out(kevo_operator_block *out, const kevo_block_place *pl)
{
    kevo_buf names = {0};
    for (size_t i = 0; i < pl->nnames; i++)
        kevo__buf_printf(&names, "%s\n", pl->names[i]);
    *out = (kevo_operator_block){.found = pl->found,
                                 .closed = pl->closed,
                                 .start = pl->start,
                                 .end = pl->end,
                                 .n_names = pl->nnames};
    if (pl->nnames && !(out->names = kevo__buf_take(&names)))
        return false;
    kevo__buf_free(&names);
    return true;
}

static kevo_status api_find_blocks(kevo_host_ctx *ctx, const char *source,
                                   size_t len, kevo_operator_blocks *out)
{
    kevo_operator *op = ctx->op;
    if (!source || !out || out->size < BLOCKS_SIZE_1_3)
        return kevo__op_fail(op, KEVO_EINVAL, "find_blocks: %s",
                             !source ? "source is NULL"
                             : !out  ? "out is NULL"
                                     : "out->size is smaller than "
                                       "sizeof(kevo_operator_blocks)");
    /* The scan reads up to a NUL. */
    kevo_block_place places[2];
    char *text = kevo__strndup(source, len);
    kevo_status rc = text ? kevo__blocks_locate(text, places) : KEVO_ENOMEM;
    free(text);
    if (rc != KEVO_OK)
        return kevo__op_fail(op, KEVO_ENOMEM, "out of memory");
    bool ok = block_out(&out->launch, &places[0]);
    if (ok && !block_out(&out->param, &places[1])) {
        free(out->launch.names);
        out->launch.names = NULL;
        ok = false;
    }
    kevo__block_places_free(places);
    return ok ? KEVO_OK : kevo__op_fail(op, KEVO_ENOMEM, "out of memory");
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
    .emit_prompt_sections = api_emit_prompt_sections,
    .include_allowed = api_include_allowed,
    .include_rule = api_include_rule,
    .find_blocks = api_find_blocks,
    .waiting = api_waiting,
    .usage = api_usage,
};

/*
 * operator_host.c: the operator host itself: making and freeing it, what
 * its caller sets (the log, the archive, the device, the run directory),
 * the texts of the task it shows plugins, and the set of sources and
 * assignments already evaluated or proposed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonutil.h"
#include "model/devprops.h"
#include "model/task_private.h"
#include "operator_private.h"

/* ---- log ------------------------------------------------------------------
 */

static void log_stderr(void *user, kevo_log_level level, const char *op_name,
                       const char *message)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    (void)user;
    fprintf(stderr, "kevo: operator %s: %s: %s\n", op_name,
            (unsigned)level < KEVO_ARRAY_SIZE(names) ? names[level] : "?",
            message);
}

void kevo__op_log(kevo_operator *op, kevo_log_level level, const char *msg)
{
    kevo_operator_host *host = op->host;
    if (host->log_fn && level <= host->log_max)
        host->log_fn(host->log_user, level, op->name, msg);
}

kevo_status kevo__op_fail(kevo_operator *op, kevo_status code, const char *fmt,
                          ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(op->last_error, sizeof op->last_error, fmt, ap);
    va_end(ap);
    return code;
}

/* ---- the host ------------------------------------------------------------ */

kevo_status kevo_operator_host_new(const kevo_task *task, uint64_t seed,
                                   kevo_operator_host **out, kevo_error *err)
{
    if (!out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_host_new: out is NULL");
    *out = NULL;
    if (!task)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_host_new: task is NULL");
    kevo_status rc = KEVO_OK;
    kevo_operator_host *host = calloc(1, sizeof *host);
    if (!host || !(host->device = kevo_vars_new()) ||
        kevo__devprops_nominal(host->device) != KEVO_OK) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    host->task = task;
    host->seed = seed;
    host->log_max = KEVO_LOG_WARN;
    host->log_fn = log_stderr;
    host->epoch = 1;
    if ((rc = kevo__op_task_texts(host, err)) != KEVO_OK)
        goto out;
    *out = host;
    host = NULL;
out:
    kevo_operator_host_free(host);
    return rc;
}

void kevo_operator_host_free(kevo_operator_host *host)
{
    if (!host)
        return;
    for (size_t i = 0; i < host->nops; i++) {
        kevo_operator *op = host->ops[i];
        op->plugin->desc->fini(op->state);
        kevo_candidate_free(op->probe);
        free(op->probe_scan_msg);
        kevo_rng_free(op->rng);
        free(op->name);
        free(op);
    }
    for (size_t i = 0; i < host->npending_slots; i++)
        kevo__op_pending_free(host->pending[i]);
    free(host->pending);
    while (host->ended) {
        kevo_op_pending *p = host->ended;
        host->ended = p->next;
        kevo__op_pending_free(p);
    }
    while (host->results_head) {
        kevo_operator_result *r = host->results_head;
        host->results_head = r->next;
        kevo__op_result_free(r);
    }
    for (size_t i = 0; i < host->nplugins; i++)
        free(host->plugins[i].file);
    free(host->plugins);
    free(host->ops);
    kevo_vars_free(host->device);
    free(host->device_json);
    free(host->run_dir);
    free(host->task_args);
    free(host->task_dims);
    free(host->task_cost);
    free(host->elite_cells);
    free(host->seen);
    free(host);
}

kevo_status kevo_operator_host_set_log(kevo_operator_host *host,
                                       kevo_log_level max,
                                       kevo_operator_log_fn fn, void *user,
                                       kevo_error *err)
{
    if (!host || (unsigned)max > KEVO_LOG_DEBUG)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_host_set_log: %s",
                               !host ? "host is NULL" : "unknown log level");
    host->log_max = max;
    host->log_fn = fn;
    host->log_user = user;
    return KEVO_OK;
}

kevo_status kevo_operator_host_set_archive(kevo_operator_host *host,
                                           const kevo_archive *archive,
                                           kevo_error *err)
{
    if (!host)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_host_set_archive: host is NULL");
    host->archive = archive;
    host->epoch++;
    return KEVO_OK;
}

kevo_status kevo_operator_host_set_device(kevo_operator_host *host,
                                          const kevo_vars *props,
                                          const char *ceilings_json,
                                          kevo_error *err)
{
    if (!host)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_host_set_device: host is NULL");
    kevo_status rc = KEVO_OK;
    json_t *v = NULL;
    char *text = NULL;
    kevo_vars *dev = props ? kevo_vars_copy(props) : kevo_vars_new();
    if (!dev || (!props && kevo__devprops_nominal(dev) != KEVO_OK)) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    if (ceilings_json) {
        if ((rc = kevo__json_parse(ceilings_json, "device ceilings", &v,
                                   err)) != KEVO_OK)
            goto out;
        if (!json_is_object(v)) {
            rc = kevo__error_set(err, KEVO_EINVALID,
                                 "device ceilings: expected a JSON object, "
                                 "found %s",
                                 kevo__json_type_name(v));
            goto out;
        }
        if (!(text = kevo__strdup(ceilings_json))) {
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            goto out;
        }
    }
    kevo_vars_free(host->device);
    free(host->device_json);
    host->device = dev;
    host->device_json = text;
    dev = NULL;
    text = NULL;
out:
    json_decref(v);
    kevo_vars_free(dev);
    free(text);
    return rc;
}

kevo_status kevo_operator_host_set_run_dir(kevo_operator_host *host,
                                           const char *path, kevo_error *err)
{
    if (!host)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_host_set_run_dir: host is NULL");
    char *copy = NULL;
    if (path && !(copy = kevo__strdup(path)))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    free(host->run_dir);
    host->run_dir = copy;
    return KEVO_OK;
}

kevo_status kevo_operator_host_mark_seen(kevo_operator_host *host,
                                         const kevo_candidate *cand,
                                         kevo_error *err)
{
    if (!host || !cand)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_host_mark_seen: %s is NULL",
                               !host ? "host" : "cand");
    uint64_t key = kevo__op_candidate_key(cand);
    if (kevo__op_seen_add(host, key) != KEVO_OK)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    return KEVO_OK;
}

int kevo_operator_host_seen(const kevo_operator_host *host,
                            const kevo_candidate *cand)
{
    if (!host || !cand)
        return 0;
    return kevo__op_seen_has(host, kevo__op_candidate_key(cand));
}

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

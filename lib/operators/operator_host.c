/*
 * operator_host.c: the operator host. Finds and loads plugins, checks their
 * descriptors before calling anything, makes instances, hands them
 * requests, drives asynchronous ones and queues what they give back.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/jsonutil.h"
#include "model/candidate_private.h"
#include "model/devprops.h"
#include "operator_private.h"

#ifndef KEVO_OPERATOR_DIR
#error "KEVO_OPERATOR_DIR must name the installed operator directory"
#endif

/* The size of a version 1.0 request: what a caller must at least pass
 * (ABI 1.2's fields took its first reserved slots). */
#define REQUEST_SIZE_1_0                                                       \
    (offsetof(kevo_operator_request, failures) + 8 * sizeof(void *))

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

static void result_free(kevo_operator_result *res)
{
    if (!res)
        return;
    for (size_t i = 0; i < res->nchildren; i++) {
        kevo_candidate_free(res->children[i].cand);
        free(res->children[i].note);
    }
    for (size_t i = 0; i < res->nfailures; i++) {
        free(res->failures[i].kind);
        free(res->failures[i].reason);
    }
    free(res->children);
    free(res->failures);
    kevo__op_result_prompts_free(res);
    kevo__op_result_refused_free(res);
    free(res->op_name);
    free(res);
}

kevo_op_pending *kevo__op_pending_new(kevo_operator *op)
{
    kevo_op_pending *p = calloc(1, sizeof *p);
    if (!p || !(p->res = calloc(1, sizeof *p->res)) ||
        !(p->res->op_name = kevo__strdup(op->name))) {
        kevo__op_pending_free(p);
        return NULL;
    }
    p->op = op;
    return p;
}

void kevo__op_pending_free(kevo_op_pending *p)
{
    if (!p)
        return;
    kevo__op_revision_free(p->revision);
    kevo__op_repair_free(p->repair);
    kevo__op_failures_free(&p->failures);
    kevo_candidate_free(p->parent);
    kevo_candidate_free(p->second);
    for (size_t i = 0; i < p->ninsp; i++) {
        if (p->insp_cands)
            kevo_candidate_free(p->insp_cands[i]);
        if (p->insp_summaries)
            free(p->insp_summaries[i]);
    }
    free(p->insp_cands);
    free(p->insp_summaries);
    free(p->insp);
    free(p->parent_summary);
    free(p->second_summary);
    free(p->target_cell);
    free(p->prompt);
    result_free(p->res);
    free(p);
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
        result_free(r);
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

/* ---- plugins ------------------------------------------------------------- */

static const kevo_plugin *find_plugin(const kevo_operator_host *host,
                                      const char *name)
{
    for (size_t i = 0; i < host->nplugins; i++) {
        if (strcmp(host->plugins[i].desc->name, name) == 0)
            return &host->plugins[i];
    }
    return NULL;
}

/* Every check of a descriptor, in the order that makes reading each field
 * safe: the version and size first, then the rest. Nothing of the plugin is
 * called here. */
static kevo_status check_desc(const kevo_operator_desc *d, const char *file,
                              kevo_error *err)
{
    if (!d)
        return kevo__error_set_at(err, KEVO_EINVALID, file, 0, 0,
                                  "%s: %s() returned NULL instead of a "
                                  "descriptor",
                                  file, KEVO_OPERATOR_ENTRY_SYMBOL);
    if (d->abi_major != KEVO_OPERATOR_ABI_MAJOR)
        return kevo__error_set_at(
            err, KEVO_EFORMAT, file, 0, 0,
            "%s: built for operator ABI %u.%u, but this kevo speaks major "
            "version %u: rebuild the plugin against this kevo's "
            "<kevo/operator.h>",
            file, d->abi_major, d->abi_minor, KEVO_OPERATOR_ABI_MAJOR);
    if (d->abi_minor > KEVO_OPERATOR_ABI_MINOR)
        return kevo__error_set_at(
            err, KEVO_EFORMAT, file, 0, 0,
            "%s: built for operator ABI %u.%u, newer than this kevo's %u.%u: "
            "it may need host functions this kevo lacks; upgrade kevo",
            file, d->abi_major, d->abi_minor, KEVO_OPERATOR_ABI_MAJOR,
            KEVO_OPERATOR_ABI_MINOR);
    if (d->struct_size < KEVO_OPERATOR_DESC_SIZE_1_0)
        return kevo__error_set_at(
            err, KEVO_EFORMAT, file, 0, 0,
            "%s: descriptor struct_size is %zu bytes, smaller than the %zu "
            "of an ABI 1.0 descriptor: set it to sizeof(kevo_operator_desc)",
            file, d->struct_size, (size_t)KEVO_OPERATOR_DESC_SIZE_1_0);
    if (!d->name || !kevo__is_identifier(d->name))
        return kevo__error_set_at(err, KEVO_EINVALID, file, 0, 0,
                                  "%s: the descriptor's name %s%s%s is not an "
                                  "identifier",
                                  file, d->name ? "'" : "",
                                  d->name ? d->name : "(NULL)",
                                  d->name ? "'" : "");
    if (!d->version)
        return kevo__error_set_at(err, KEVO_EINVALID, file, 0, 0,
                                  "%s: operator '%s': version is NULL", file,
                                  d->name);
    const char *missing = !d->init      ? "init"
                          : !d->propose ? "propose"
                          : !d->fini    ? "fini"
                                        : NULL;
    if (missing)
        return kevo__error_set_at(err, KEVO_EINVALID, file, 0, 0,
                                  "%s: operator '%s': the required function "
                                  "%s is NULL",
                                  file, d->name, missing);
    return KEVO_OK;
}

/* Registers d from file (handle NULL in-process). A descriptor already
 * registered under its name is accepted again when it is the same one. */
static kevo_status add_plugin(kevo_operator_host *host,
                              const kevo_operator_desc *d, const char *file,
                              void *handle, const kevo_plugin **out,
                              kevo_error *err)
{
    kevo_status rc = check_desc(d, file, err);
    if (rc != KEVO_OK)
        return rc;
    const kevo_plugin *old = find_plugin(host, d->name);
    if (old) {
        if (old->desc == d) {
            *out = old;
            return KEVO_OK;
        }
        return kevo__error_set_at(err, KEVO_EEXIST, file, 0, 0,
                                  "%s: an operator called '%s' is already "
                                  "registered, from %s",
                                  file, d->name, old->file);
    }
    if (host->nplugins == host->cplugins) {
        size_t c = host->cplugins ? 2 * host->cplugins : 4;
        kevo_plugin *p = realloc(host->plugins, c * sizeof *p);
        if (!p)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        host->plugins = p;
        host->cplugins = c;
    }
    kevo_plugin *p = &host->plugins[host->nplugins];
    if (!(p->file = kevo__strdup(file)))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    p->desc = d;
    p->handle = handle;
    host->nplugins++;
    *out = p;
    return KEVO_OK;
}

kevo_status kevo_operator_host_register(kevo_operator_host *host,
                                        const kevo_operator_desc *desc,
                                        const char *origin, kevo_error *err)
{
    if (!host || !desc)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_host_register: %s is NULL",
                               !host ? "host" : "desc");
    const kevo_plugin *p;
    return add_plugin(host, desc, origin ? origin : "(in-process operator)",
                      NULL, &p, err);
}

/* Looks name.so up on KEVO_OPERATOR_PATH, then in KEVO_OPERATOR_DIR; the
 * path found in *path (new string). */
static kevo_status search_path(const char *name, char **path, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    kevo_buf searched = {0};
    char *file = kevo__asprintf("%s.so", name);
    const char *env = getenv(KEVO_OPERATOR_PATH_ENV);
    char *dirs = kevo__asprintf("%s%s%s", env ? env : "", env ? ":" : "",
                                KEVO_OPERATOR_DIR);
    if (!file || !dirs) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    *path = NULL;
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d;
         d = strtok_r(NULL, ":", &save)) {
        char *candidate = kevo__path_join(d, file);
        if (!candidate) {
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            goto out;
        }
        if (access(candidate, F_OK) == 0) {
            *path = candidate;
            goto out;
        }
        free(candidate);
        kevo__buf_printf(&searched, "%s%s", searched.len ? ", " : "", d);
    }
    if (searched.failed) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    rc = kevo__error_set(err, KEVO_ENOENT,
                         "operator '%s': %s is not in any directory searched "
                         "(%s, then the installed operators): %s",
                         name, file, KEVO_OPERATOR_PATH_ENV,
                         searched.data ? searched.data : "(none)");
out:
    kevo__buf_free(&searched);
    free(file);
    free(dirs);
    return rc;
}

/* Opens file and registers its descriptor; a plugin that fails a check is
 * closed again (nothing of it was kept). */
static kevo_status open_plugin(kevo_operator_host *host, const char *file,
                               const kevo_plugin **out, kevo_error *err)
{
    dlerror();
    void *handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        return kevo__error_set_at(err, KEVO_EEXTERNAL, file, 0, 0,
                                  "%s: cannot load operator plugin: %s", file,
                                  why ? why : "dlopen failed");
    }
    kevo_status rc;
    dlerror();
    void *sym = dlsym(handle, KEVO_OPERATOR_ENTRY_SYMBOL);
    if (!sym) {
        const char *why = dlerror();
        rc = kevo__error_set_at(err, KEVO_EINVALID, file, 0, 0,
                                "%s: not a kevo operator plugin: no symbol "
                                "%s (%s)",
                                file, KEVO_OPERATOR_ENTRY_SYMBOL,
                                why ? why : "it is NULL");
        goto fail;
    }
    kevo_operator_entry_fn entry;
    /* ISO C has no cast from an object pointer to a function pointer;
     * POSIX requires that dlsym's result converts. */
    memcpy(&entry, &sym, sizeof entry);
    const kevo_operator_desc *d = entry();
    const kevo_plugin *p = NULL;
    size_t before = host->nplugins;
    if ((rc = add_plugin(host, d, file, handle, &p, err)) != KEVO_OK)
        goto fail;
    if (host->nplugins == before) {
        /* The same descriptor was registered before: this file is the one
         * already loaded, so drop the extra reference dlopen took. */
        dlclose(handle);
    }
    *out = p;
    return KEVO_OK;
fail:
    dlclose(handle);
    return rc;
}

kevo_status kevo_operator_host_load(kevo_operator_host *host, const char *name,
                                    const char **plugin, kevo_error *err)
{
    if (!host || !name || !*name)
        return kevo__error_set(err, KEVO_EINVAL, "kevo_operator_host_load: %s",
                               !host ? "host is NULL" : "no plugin name");
    kevo_status rc;
    char *path = NULL;
    const kevo_plugin *p = NULL;
    if (strchr(name, '/')) {
        if (access(name, F_OK) != 0) {
            rc = kevo__error_errno(err, errno, name, "operator plugin");
            goto out;
        }
        if (!(path = kevo__strdup(name))) {
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            goto out;
        }
    } else {
        if (!kevo__is_identifier(name)) {
            rc = kevo__error_set(err, KEVO_EINVAL,
                                 "operator '%s': a plugin name is an "
                                 "identifier, or a path with a '/'",
                                 name);
            goto out;
        }
        if ((p = find_plugin(host, name)) != NULL) {
            rc = KEVO_OK;
            goto out;
        }
        if ((rc = search_path(name, &path, err)) != KEVO_OK)
            goto out;
    }
    if ((rc = open_plugin(host, path, &p, err)) != KEVO_OK)
        goto out;
    if (!strchr(name, '/') && strcmp(p->desc->name, name) != 0) {
        rc = kevo__error_set_at(err, KEVO_EINVALID, path, 0, 0,
                                "%s: the file for operator '%s' defines "
                                "operator '%s'",
                                path, name, p->desc->name);
        goto out;
    }
out:
    if (rc == KEVO_OK && plugin)
        *plugin = p->desc->name;
    free(path);
    return rc;
}

/* ---- instances ----------------------------------------------------------- */

kevo_status kevo_operator_host_add(kevo_operator_host *host, const char *plugin,
                                   const char *name, const char *config_json,
                                   kevo_operator **out, kevo_error *err)
{
    if (!out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_host_add: out is NULL");
    *out = NULL;
    if (!host || !plugin)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_host_add: %s is NULL",
                               !host ? "host" : "plugin");
    kevo_status rc;
    kevo_operator *op = NULL;
    json_t *config = NULL;
    const char *pname = NULL;
    if ((rc = kevo_operator_host_load(host, plugin, &pname, err)) != KEVO_OK)
        return rc;
    const kevo_plugin *p = find_plugin(host, pname);
    if (!name)
        name = pname;
    if (!kevo__is_identifier(name))
        return kevo__error_set(err, KEVO_EINVAL,
                               "operator instance name '%s' is not an "
                               "identifier",
                               name);
    for (size_t i = 0; i < host->nops; i++) {
        if (strcmp(host->ops[i]->name, name) == 0)
            return kevo__error_set(err, KEVO_EEXIST,
                                   "an operator instance called '%s' exists "
                                   "already",
                                   name);
    }
    if (config_json) {
        char origin[128];
        snprintf(origin, sizeof origin, "config of operator '%s'", name);
        if ((rc = kevo__json_parse(config_json, origin, &config, err)) !=
            KEVO_OK)
            goto out;
        if (!json_is_object(config)) {
            rc = kevo__error_set(err, KEVO_EINVALID,
                                 "%s: expected a JSON object, found %s", origin,
                                 kevo__json_type_name(config));
            goto out;
        }
    }
    if (host->nops == host->cops) {
        size_t c = host->cops ? 2 * host->cops : 4;
        kevo_operator **ops = realloc(host->ops, c * sizeof *ops);
        if (!ops) {
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            goto out;
        }
        host->ops = ops;
        host->cops = c;
    }
    char stream[96];
    snprintf(stream, sizeof stream, "operator:%s", name);
    if (!(op = calloc(1, sizeof *op)) || !(op->name = kevo__strdup(name)) ||
        !(op->rng = kevo_rng_new(host->seed, stream))) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    op->ctx.op = op;
    op->host = host;
    op->plugin = p;
    op->in_init = true;
    host->epoch++;
    rc = p->desc->init(&kevo__host_api, &op->ctx, config_json, &op->state);
    op->in_init = false;
    if (rc != KEVO_OK) {
        rc = kevo__error_set_at(
            err, rc, p->file, 0, 0, "%s: operator '%s': init failed: %s",
            p->file, name,
            op->error_msg[0] ? op->error_msg : kevo_strerror(rc));
        goto out;
    }
    host->ops[host->nops++] = op;
    *out = op;
    op = NULL;
out:
    if (op) {
        kevo_rng_free(op->rng);
        free(op->name);
        free(op);
    }
    json_decref(config);
    return rc;
}

const char *kevo_operator_name(const kevo_operator *op)
{
    return op ? op->name : NULL;
}

const kevo_operator_desc *kevo_operator_plugin(const kevo_operator *op)
{
    return op ? op->plugin->desc : NULL;
}

kevo_rng *kevo_operator_rng(kevo_operator *op)
{
    return op ? op->rng : NULL;
}

size_t kevo_operator_in_flight(const kevo_operator *op)
{
    return op ? op->in_flight : 0;
}

/* ---- requests ------------------------------------------------------------ */

kevo_status kevo_operator_usage(const kevo_operator *op, uint64_t *input_tokens,
                                uint64_t *output_tokens, double *cost)
{
    if (input_tokens)
        *input_tokens = op ? op->input_tokens : 0;
    if (output_tokens)
        *output_tokens = op ? op->output_tokens : 0;
    if (cost)
        *cost = op ? op->cost : 0;
    return op ? KEVO_OK : KEVO_EINVAL;
}

kevo_status kevo_operator_host_usage(const kevo_operator_host *host,
                                     uint64_t *input_tokens,
                                     uint64_t *output_tokens, double *cost)
{
    uint64_t in = 0, out = 0;
    double sum = 0;
    for (size_t i = 0; host && i < host->nops; i++) {
        const kevo_operator *op = host->ops[i];
        in = in + op->input_tokens < in ? UINT64_MAX : in + op->input_tokens;
        out = out + op->output_tokens < out ? UINT64_MAX
                                            : out + op->output_tokens;
        sum += op->cost;
    }
    if (input_tokens)
        *input_tokens = in;
    if (output_tokens)
        *output_tokens = out;
    if (cost)
        *cost = sum;
    return host ? KEVO_OK : KEVO_EINVAL;
}

/* ---- requests in flight, by id ---------------------------------------------
 * Ids are handed out in order; a multiplicative hash spreads them anyway,
 * so that the table stays sound whatever the pattern of ends. */

static size_t pending_slot(const kevo_operator_host *host, uint64_t id)
{
    return (size_t)((id * UINT64_C(0x9E3779B97F4A7C15)) >> 32) &
           (host->npending_slots - 1);
}

kevo_op_pending *kevo__op_find_pending(kevo_operator *op, uint64_t id)
{
    kevo_operator_host *host = op->host;
    if (host->npending_slots == 0)
        return NULL;
    size_t mask = host->npending_slots - 1;
    for (size_t i = pending_slot(host, id); host->pending[i];
         i = (i + 1) & mask) {
        kevo_op_pending *p = host->pending[i];
        if (p->id == id)
            return p->op == op && p->res ? p : NULL;
    }
    return NULL;
}

static void pending_put(kevo_operator_host *host, kevo_op_pending *p)
{
    size_t mask = host->npending_slots - 1;
    size_t i = pending_slot(host, p->id);
    while (host->pending[i])
        i = (i + 1) & mask;
    host->pending[i] = p;
}

/* Room for one more request at a load of at most a half. */
static kevo_status pending_reserve(kevo_operator_host *host)
{
    if (2 * (host->in_flight + 1) <= host->npending_slots)
        return KEVO_OK;
    size_t old_n = host->npending_slots;
    kevo_op_pending **old = host->pending;
    size_t n = old_n ? 2 * old_n : 16;
    kevo_op_pending **t = calloc(n, sizeof *t);
    if (!t)
        return KEVO_ENOMEM;
    host->pending = t;
    host->npending_slots = n;
    for (size_t i = 0; i < old_n; i++) {
        if (old[i])
            pending_put(host, old[i]);
    }
    free(old);
    return KEVO_OK;
}

/* Takes p out of the table, moving the entries after it back so that every
 * probe sequence stays unbroken. */
static void pending_remove(kevo_operator_host *host, const kevo_op_pending *p)
{
    size_t mask = host->npending_slots - 1;
    size_t i = pending_slot(host, p->id);
    while (host->pending[i] != p)
        i = (i + 1) & mask;
    host->pending[i] = NULL;
    for (size_t j = (i + 1) & mask; host->pending[j]; j = (j + 1) & mask) {
        size_t home = pending_slot(host, host->pending[j]->id);
        /* The entry at j stays when its home slot is in (i, j],
         * cyclically; otherwise it fills the hole at i. */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            host->pending[i] = host->pending[j];
            host->pending[j] = NULL;
            i = j;
        }
    }
}

kevo_status kevo__op_start(kevo_operator *op, kevo_op_pending *p, uint64_t *id)
{
    kevo_operator_host *host = op->host;
    if (pending_reserve(host) != KEVO_OK)
        return KEVO_ENOMEM;
    p->id = ++host->next_id;
    p->res->id = p->id;
    pending_put(host, p);
    op->in_flight++;
    host->in_flight++;
    if (id)
        *id = p->id;
    op->error_msg[0] = '\0';
    host->epoch++;
    return KEVO_OK;
}

kevo_status kevo__op_add_child(kevo_op_pending *p, kevo_candidate *cand,
                               const char *note, uint32_t attempt)
{
    kevo_operator_result *r = p->res;
    char *copy = NULL;
    if (note && !(copy = kevo__strdup(note)))
        goto fail;
    if (r->nchildren == r->cchildren) {
        size_t c = r->cchildren ? 2 * r->cchildren : 4;
        kevo_op_child *ch = realloc(r->children, c * sizeof *ch);
        if (!ch)
            goto fail;
        r->children = ch;
        r->cchildren = c;
    }
    r->children[r->nchildren].cand = cand;
    r->children[r->nchildren].note = copy;
    r->children[r->nchildren].attempt = attempt;
    r->nchildren++;
    return KEVO_OK;
fail:
    free(copy);
    kevo_candidate_free(cand);
    return KEVO_ENOMEM;
}

kevo_status kevo__op_add_failure(kevo_op_pending *p, const char *kind,
                                 const char *reason)
{
    kevo_operator_result *r = p->res;
    char *k = kevo__strdup(kind && *kind ? kind : KEVO_FAIL_INTERNAL);
    char *why = kevo__strdup(reason && *reason ? reason : "no reason given");
    if (!k || !why)
        goto fail;
    if (r->nfailures == r->cfailures) {
        size_t c = r->cfailures ? 2 * r->cfailures : 4;
        kevo_op_failure *f = realloc(r->failures, c * sizeof *f);
        if (!f)
            goto fail;
        r->failures = f;
        r->cfailures = c;
    }
    r->failures[r->nfailures].kind = k;
    r->failures[r->nfailures].reason = why;
    r->nfailures++;
    return KEVO_OK;
fail:
    free(k);
    free(why);
    return KEVO_ENOMEM;
}

void kevo__op_end(kevo_op_pending *p)
{
    kevo_operator_host *host = p->op->host;
    kevo_operator_result *r = p->res;
    pending_remove(host, p);
    p->next = host->ended;
    host->ended = p;
    p->res = NULL;
    r->next = NULL;
    if (host->results_tail)
        host->results_tail->next = r;
    else
        host->results_head = r;
    host->results_tail = r;
    p->op->in_flight--;
    host->in_flight--;
}

/* Frees the requests that ended during the last plugin call. */
static void reap(kevo_operator_host *host)
{
    while (host->ended) {
        kevo_op_pending *p = host->ended;
        host->ended = p->next;
        kevo__op_pending_free(p);
    }
}

/* Ends a request the plugin did not end, with a failure saying why. */
static void end_with_failure(kevo_op_pending *p, const char *reason)
{
    char line[KEVO__OP_MSG_SIZE + 128];
    snprintf(line, sizeof line, "request %llu: %s", (unsigned long long)p->id,
             reason);
    kevo__op_log(p->op, KEVO_LOG_ERROR, line);
    kevo__op_add_failure(p, KEVO_FAIL_INTERNAL, reason);
    kevo__op_end(p);
}

static char *dup_or_null(const char *s, bool *failed)
{
    if (!s)
        return NULL;
    char *c = kevo__strdup(s);
    if (!c)
        *failed = true;
    return c;
}

/* The host's copy of a request, with its own id; the candidates are
 * shared, not copied. */
static kevo_op_pending *copy_request(kevo_operator *op,
                                     const kevo_operator_request *req)
{
    bool failed = false;
    kevo_op_pending *p = kevo__op_pending_new(op);
    if (!p)
        return NULL;
    p->parent = kevo__candidate_share(req->parent);
    p->second = kevo__candidate_share(req->second_parent);
    p->parent_summary = dup_or_null(req->parent_summary_json, &failed);
    p->second_summary = dup_or_null(req->second_summary_json, &failed);
    p->target_cell = dup_or_null(req->target_cell_json, &failed);
    if (req->prompt_json &&
        !(p->prompt = kevo__op_prompt_sections(req->prompt_json)))
        failed = true;
    if (req->n_inspirations && req->inspirations && !failed) {
        size_t n = req->n_inspirations;
        p->insp_cands = calloc(n, sizeof *p->insp_cands);
        p->insp_summaries = calloc(n, sizeof *p->insp_summaries);
        p->insp = calloc(n, sizeof *p->insp);
        if (!p->insp_cands || !p->insp_summaries || !p->insp)
            failed = true;
        for (size_t i = 0; i < n && !failed; i++) {
            p->ninsp = i + 1;
            p->insp_cands[i] =
                kevo__candidate_share(req->inspirations[i].candidate);
            p->insp_summaries[i] =
                dup_or_null(req->inspirations[i].summary_json, &failed);
            p->insp[i].candidate = p->insp_cands[i];
            p->insp[i].summary_json = p->insp_summaries[i];
        }
    }
    if (!failed && req->n_failures &&
        kevo__op_failures_copy(&p->failures, req->failures, req->n_failures,
                               "failures", NULL) != KEVO_OK)
        failed = true;
    if (failed) {
        kevo__op_pending_free(p);
        return NULL;
    }
    p->lineage[0] = kevo_candidate_id(p->parent);
    p->lineage[1] = p->second ? kevo_candidate_id(p->second) : 0;
    p->nlineage = p->second ? 2 : 1;
    p->prompt_id = req->prompt_id;
    p->generation = kevo_candidate_generation(p->parent) + 1;
    kevo_operator_request *r = &p->req;
    r->size = sizeof *r;
    r->parent = p->parent;
    r->parent_summary_json = p->parent_summary;
    r->inspirations = p->insp;
    r->n_inspirations = p->ninsp;
    r->target_cell_json = p->target_cell;
    r->second_parent = p->second;
    r->second_summary_json = p->second_summary;
    r->prompt_json = p->prompt;
    r->prompt_id = req->prompt_id;
    r->n_children = req->n_children;
    r->failures = p->failures.n ? p->failures.items : NULL;
    r->n_failures = p->failures.n;
    return p;
}

kevo_status kevo_operator_submit(kevo_operator *op,
                                 const kevo_operator_request *req, uint64_t *id,
                                 kevo_error *err)
{
    if (!op || !req)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_submit: %s is NULL",
                               !op ? "op" : "req");
    if (req->size < REQUEST_SIZE_1_0)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_submit: req->size is %zu, less "
                               "than sizeof(kevo_operator_request) (%zu)",
                               req->size, (size_t)REQUEST_SIZE_1_0);
    if (!req->parent)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_submit: the request has no "
                               "parent");
    if (req->n_children < 1)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_submit: n_children is 0");
    if (req->n_inspirations && !req->inspirations)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_submit: n_inspirations is %zu "
                               "but inspirations is NULL",
                               req->n_inspirations);
    for (size_t i = 0; i < req->n_inspirations; i++) {
        if (!req->inspirations[i].candidate)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "kevo_operator_submit: inspiration %zu has "
                                   "no candidate",
                                   i);
    }
    for (size_t i = 0; i < req->n_failures; i++) {
        if (!req->failures || !req->failures[i].kind)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "kevo_operator_submit: failure %zu has no "
                                   "kind",
                                   i);
    }
    kevo_op_pending *p = copy_request(op, req);
    if (!p || kevo__op_start(op, p, id) != KEVO_OK) {
        kevo__op_pending_free(p);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    p->req.id = p->id;
    kevo__op_after_call(p, op->plugin->desc->propose(op->state, &p->req));
    return KEVO_OK;
}

void kevo__op_after_call(kevo_op_pending *p, kevo_status rc)
{
    kevo_operator *op = p->op;
    const kevo_operator_desc *d = op->plugin->desc;
    const char *fn = p->revision ? "revise" : p->repair ? "repair" : "propose";
    if (p->res) {
        /* Still in flight: acceptable only from an asynchronous operator
         * that took the request on. */
        if (rc != KEVO_OK) {
            char why[KEVO__OP_MSG_SIZE + 64];
            snprintf(why, sizeof why, "%s failed: %s", fn,
                     op->error_msg[0] ? op->error_msg : kevo_strerror(rc));
            end_with_failure(p, why);
        } else if (!d->poll) {
            char why[160];
            snprintf(why, sizeof why,
                     "%s returned without ending the request (a synchronous "
                     "operator must call done)",
                     fn);
            end_with_failure(p, why);
        }
    } else if (rc != KEVO_OK) {
        char line[KEVO__OP_MSG_SIZE + 64];
        snprintf(line, sizeof line,
                 "%s returned '%s' after ending "
                 "request %llu: %s",
                 fn, kevo_strerror(rc), (unsigned long long)p->id,
                 op->error_msg);
        kevo__op_log(op, KEVO_LOG_WARN, line);
    }
    reap(op->host);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Calls op's poll; requests the plugin says it no longer holds, but never
 * ended, are ended with a failure. Returns true when a request ended. */
static bool poll_one(kevo_operator *op, int timeout_ms)
{
    kevo_operator_host *host = op->host;
    size_t before = host->in_flight;
    host->epoch++;
    size_t left = op->plugin->desc->poll(op->state, timeout_ms);
    /* Ending a request moves later entries of the table back into its
     * slot, so that slot is looked at again. */
    for (size_t i = 0;
         left == 0 && op->in_flight > 0 && i < host->npending_slots;) {
        kevo_op_pending *p = host->pending[i];
        if (p && p->op == op)
            end_with_failure(p, "the operator reports nothing in flight but "
                                "never ended this request");
        else
            i++;
    }
    reap(host);
    return host->in_flight < before;
}

kevo_status kevo_operator_host_poll(kevo_operator_host *host, int timeout_ms,
                                    size_t *in_flight, kevo_error *err)
{
    if (!host || timeout_ms < 0)
        return kevo__error_set(err, KEVO_EINVAL, "kevo_operator_host_poll: %s",
                               !host ? "host is NULL" : "negative timeout");
    size_t busy = 0;
    kevo_operator *only = NULL;
    for (size_t i = 0; i < host->nops; i++) {
        if (host->ops[i]->in_flight > 0 && host->ops[i]->plugin->desc->poll) {
            busy++;
            only = host->ops[i];
        }
    }
    if (busy == 1) {
        poll_one(only, timeout_ms);
    } else if (busy > 1) {
        /* Several asynchronous operators: no one of them can wait for all,
         * so poll each without waiting, and nap briefly between rounds. */
        double deadline = now_ms() + timeout_ms;
        for (;;) {
            bool ended = false;
            for (size_t i = 0; i < host->nops; i++) {
                kevo_operator *op = host->ops[i];
                if (op->in_flight > 0 && op->plugin->desc->poll)
                    ended |= poll_one(op, 0);
            }
            double left = deadline - now_ms();
            if (ended || host->in_flight == 0 || left <= 0)
                break;
            double nap = left < 2.0 ? left : 2.0;
            struct timespec ts = {0, (long)(nap * 1e6)};
            nanosleep(&ts, NULL);
        }
    }
    if (in_flight)
        *in_flight = host->in_flight;
    return KEVO_OK;
}

/* ---- results ------------------------------------------------------------- */

kevo_status kevo_operator_host_next_result(kevo_operator_host *host,
                                           kevo_operator_result **out)
{
    if (!out)
        return KEVO_EINVAL;
    *out = NULL;
    if (!host)
        return KEVO_EINVAL;
    kevo_operator_result *r = host->results_head;
    if (!r)
        return KEVO_DONE;
    host->results_head = r->next;
    if (!host->results_head)
        host->results_tail = NULL;
    r->next = NULL;
    *out = r;
    return KEVO_OK;
}

void kevo_operator_result_free(kevo_operator_result *res)
{
    result_free(res);
}

uint64_t kevo_operator_result_id(const kevo_operator_result *res)
{
    return res ? res->id : 0;
}

const char *kevo_operator_result_operator(const kevo_operator_result *res)
{
    return res ? res->op_name : NULL;
}

size_t kevo_operator_result_child_count(const kevo_operator_result *res)
{
    return res ? res->nchildren : 0;
}

const kevo_candidate *
kevo_operator_result_child(const kevo_operator_result *res, size_t i)
{
    return res && i < res->nchildren ? res->children[i].cand : NULL;
}

const char *kevo_operator_result_child_note(const kevo_operator_result *res,
                                            size_t i)
{
    return res && i < res->nchildren ? res->children[i].note : NULL;
}

kevo_candidate *kevo_operator_result_take_child(kevo_operator_result *res,
                                                size_t i)
{
    if (!res || i >= res->nchildren)
        return NULL;
    kevo_candidate *c = res->children[i].cand;
    res->children[i].cand = NULL;
    return c;
}

size_t kevo_operator_result_failure_count(const kevo_operator_result *res)
{
    return res ? res->nfailures : 0;
}

const char *kevo_operator_result_failure_kind(const kevo_operator_result *res,
                                              size_t i)
{
    return res && i < res->nfailures ? res->failures[i].kind : NULL;
}

const char *kevo_operator_result_failure_reason(const kevo_operator_result *res,
                                                size_t i)
{
    return res && i < res->nfailures ? res->failures[i].reason : NULL;
}

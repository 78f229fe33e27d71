/*
 * operator_plugins.c: plugins and their instances. Finds and loads
 * plugins, checks their descriptors before calling anything, registers
 * them, makes instances (calling init) and keeps what each instance
 * spent.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/jsonutil.h"
#include "operator_private.h"

#ifndef KEVO_OPERATOR_DIR
#error "KEVO_OPERATOR_DIR must name the installed operator directory"
#endif

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

/* ---- what instances spent ---------------------------------------------- */

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

void kevo__op_restore_usage(kevo_operator *op, uint64_t input_tokens,
                            uint64_t output_tokens, double cost)
{
    op->input_tokens = input_tokens;
    op->output_tokens = output_tokens;
    op->cost = cost;
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

/*
 * compile_job.c: the compile pool's jobs and their results. The fixed
 * compile options, a job's and a result's lifetimes, the queue of jobs
 * waiting for a process, the list of finished results waiting to be handed
 * back, the compile cache (looked up at submit, filled with what the
 * processes compiled) and kevo__compile_pool_submit, which checks a
 * request, scans its #include directives and asks the cache before it
 * queues the job.
 */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_pool_private.h"
#include "proc/compile_log.h"
#include "proc/include_scan.h"

static double now_seconds(void)
{
    return (double)kevo__now_ms() / 1000.0;
}

/* ---- options ----------------------------------------------------------- */

static bool valid_arch(const char *arch)
{
    if (!arch || strncmp(arch, "sm_", 3) != 0)
        return false;
    const char *p = arch + 3;
    size_t digits = 0;
    while (isdigit((unsigned char)p[digits]))
        digits++;
    if (digits < 2 || digits > 4)
        return false;
    p += digits;
    return *p == '\0' || (islower((unsigned char)p[0]) && p[1] == '\0');
}

void kevo__compile_options_free(char **options)
{
    for (size_t i = 0; options && options[i]; i++)
        free(options[i]);
    free(options);
}

char **kevo__compile_options(const char *arch, const kevo_vars *params,
                             size_t *n, kevo_error *err)
{
    static const char *const fixed[] = {"-std=c++17", "--ptxas-options=-v",
                                        "-default-device",
                                        "--no-source-include"};
    size_t np = params ? kevo_vars_count(params) : 0;
    size_t total = 1 + KEVO_ARRAY_SIZE(fixed) + np + 1, k = 0;
    char **v = NULL;

    if (!valid_arch(arch)) {
        kevo__error_set(err, KEVO_EINVAL,
                        "arch \"%s\" is not a GPU architecture (sm_90, "
                        "sm_90a, ...)",
                        arch ? arch : "(null)");
        return NULL;
    }
    v = calloc(total + 1, sizeof *v);
    if (!v)
        goto nomem;
    if (!(v[k++] = kevo__asprintf("-arch=%s", arch)))
        goto nomem;
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(fixed); i++) {
        if (!(v[k++] = kevo__strdup(fixed[i])))
            goto nomem;
    }
    for (size_t i = 0; i < np; i++) {
        if (!(v[k++] =
                  kevo__asprintf("-D%s=%" PRId64, kevo_vars_name(params, i),
                                 kevo_vars_value(params, i))))
            goto nomem;
    }
    if (!(v[k++] = kevo__strdup("-DKEVO_EVAL=1")))
        goto nomem;
    *n = k;
    return v;
nomem:
    kevo__compile_options_free(v);
    kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    return NULL;
}

/* ---- jobs and results -------------------------------------------------- */

void kevo__compile_job_free(kevo__compile_job *j)
{
    if (!j)
        return;
    free(j->source);
    free(j->name);
    kevo__compile_options_free(j->options);
    for (size_t i = 0; i < j->nkernels; i++)
        free(j->kernels[i]);
    free(j->kernels);
    free(j);
}

void kevo__compile_result_free(kevo__compile_result *r)
{
    if (!r)
        return;
    free(r->error);
    free(r->log);
    free(r->ptx);
    free(r->cubin);
    for (size_t i = 0; r->lowered && i < r->nlowered; i++)
        free(r->lowered[i]);
    free(r->lowered);
    free(r->nvrtc);
    free(r);
}

/* A new result for j with nothing in it but the id and the lowered array;
 * NULL on no memory. */
kevo__compile_result *kevo__compile_result_new(const kevo__compile_job *j)
{
    kevo__compile_result *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->id = j->id;
    r->nlowered = j->nkernels;
    if (j->nkernels && !(r->lowered = calloc(j->nkernels, sizeof(char *)))) {
        free(r);
        return NULL;
    }
    return r;
}

/* Queues r as finished and frees j. */
void kevo__compile_finish(kevo__compile_pool *pool, kevo__compile_job *j,
                          kevo__compile_result *r)
{
    kevo__compile_node *node = calloc(1, sizeof *node);
    r->wall_seconds = now_seconds() - j->submitted;
    if (!r->log)
        r->log = kevo__strdup("");
    if (!node || !r->log) {
        /* No memory to hand back what happened: hand back that. */
        free(r->log);
        r->log = NULL;
        free(r->error);
        r->error = NULL;
        r->ok = false;
    }
    if (!node) {
        kevo__compile_result_free(r);
        kevo__compile_job_free(j);
        pool->stats.finished++;
        pool->stats.failed++;
        return;
    }
    pool->stats.finished++;
    if (!r->ok)
        pool->stats.failed++;
    node->result = r;
    if (pool->done_tail)
        pool->done_tail->next = node;
    else
        pool->done = node;
    pool->done_tail = node;
    pool->ndone++;
    kevo__compile_job_free(j);
}

/* Finishes j as failed with a formatted reason. */
void kevo__compile_fail(kevo__compile_pool *pool, kevo__compile_job *j,
                        const char *fmt, ...)
{
    kevo__compile_result *r = kevo__compile_result_new(j);
    if (!r) {
        pool->stats.finished++;
        pool->stats.failed++;
        kevo__compile_job_free(j);
        return;
    }
    kevo_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    kevo__buf_vprintf(&b, fmt, ap);
    va_end(ap);
    r->ok = false;
    r->error = kevo__buf_take(&b);
    r->nvrtc = kevo__strdup(pool->nvrtc);
    kevo__compile_finish(pool, j, r);
}

void kevo__compile_queue_push(kevo__compile_pool *pool, kevo__compile_job *j,
                              bool front)
{
    if (front) {
        j->next = pool->queue;
        pool->queue = j;
        if (!pool->queue_tail)
            pool->queue_tail = j;
    } else {
        j->next = NULL;
        if (pool->queue_tail)
            pool->queue_tail->next = j;
        else
            pool->queue = j;
        pool->queue_tail = j;
    }
    pool->queued++;
}

kevo__compile_job *kevo__compile_queue_pop(kevo__compile_pool *pool)
{
    kevo__compile_job *j = pool->queue;
    if (!j)
        return NULL;
    pool->queue = j->next;
    if (!pool->queue)
        pool->queue_tail = NULL;
    j->next = NULL;
    pool->queued--;
    return j;
}

/* ---- the cache --------------------------------------------------------- */

void kevo__compile_cache_put(kevo__compile_pool *pool,
                             const kevo__compile_job *j,
                             const kevo__compile_result *r)
{
    kevo__cache_entry e = {
        .ok = r->ok,
        .error = r->error,
        .log = r->log,
        .ptx = r->ptx,
        .ptx_len = r->ptx_len,
        .cubin = r->cubin,
        .cubin_len = r->cubin_len,
        .lowered = r->lowered,
        .nlowered = r->nlowered,
        .nvrtc = r->nvrtc,
        .seconds = r->seconds,
    };
    if (pool->cache &&
        kevo__compile_cache_store(pool->cache, j->key, &e, NULL) != KEVO_OK)
        pool->stats.cache_errors++;
}

/* A result from a cache entry (which it empties); NULL on no memory. */
static kevo__compile_result *result_from_entry(const kevo__compile_job *j,
                                               kevo__cache_entry *e)
{
    kevo__compile_result *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->id = j->id;
    r->ok = e->ok;
    r->cached = true;
    r->error = e->error;
    r->log = e->log;
    r->ptx = e->ptx;
    r->ptx_len = e->ptx_len;
    r->cubin = e->cubin;
    r->cubin_len = e->cubin_len;
    r->nvrtc = e->nvrtc;
    r->seconds = e->seconds;
    r->nlowered = j->nkernels;
    if (e->nlowered == j->nkernels) {
        r->lowered = e->lowered;
        e->lowered = NULL;
        e->nlowered = 0;
    } else if (j->nkernels &&
               !(r->lowered = calloc(j->nkernels, sizeof(char *)))) {
        free(r);
        return NULL;
    }
    e->error = e->log = e->ptx = e->nvrtc = NULL;
    e->cubin = NULL;
    kevo__cache_entry_clear(e);
    /* An entry stored by an older kevo may give ptxas's closing line
     * ("Ptx assembly aborted due to errors") for a reason: it is made
     * again from the log, as the compile process makes it now. */
    if (!r->ok && r->log && kevo__compile_log_reason_is(r->error)) {
        char *why = kevo__compile_log_reason(r->log);
        if (why) {
            free(r->error);
            r->error = why;
        }
    }
    return r;
}

/* ---- finished results ------------------------------------------------- */

/* Unlinks and returns the first finished result with id (any when id is
 * 0), or NULL. */
kevo__compile_result *kevo__compile_take_done(kevo__compile_pool *pool,
                                              uint64_t id)
{
    kevo__compile_node **pp = &pool->done, *prev = NULL;
    while (*pp) {
        kevo__compile_node *node = *pp;
        if (id == 0 || node->result->id == id) {
            *pp = node->next;
            if (pool->done_tail == node)
                pool->done_tail = prev;
            pool->ndone--;
            kevo__compile_result *r = node->result;
            free(node);
            return r;
        }
        prev = node;
        pp = &node->next;
    }
    return NULL;
}

bool kevo__compile_job_pending(const kevo__compile_pool *pool, uint64_t id)
{
    for (const kevo__compile_job *j = pool->queue; j; j = j->next) {
        if (j->id == id)
            return true;
    }
    for (size_t i = 0; i < pool->n; i++) {
        if (pool->slots[i].job && pool->slots[i].job->id == id)
            return true;
    }
    for (const kevo__compile_node *r = pool->done; r; r = r->next) {
        if (r->result->id == id)
            return true;
    }
    return false;
}

/* ---- submit ------------------------------------------------------------ */

static bool valid_kernel_name(const char *k)
{
    if (!k || !*k || strlen(k) > 1024)
        return false;
    for (const char *p = k; *p; p++) {
        if ((unsigned char)*p < 32 || *p == 127)
            return false;
    }
    return true;
}

kevo_status kevo__compile_pool_submit(kevo__compile_pool *pool,
                                      const kevo__compile_request *req,
                                      uint64_t *id, kevo_error *err)
{
    kevo_error scan = KEVO__ERROR_INIT;
    kevo__compile_job *j = NULL;

    if (!req || !req->source)
        return kevo__error_set(err, KEVO_EINVAL,
                               "a compile job needs a source");
    if (req->nkernels && !req->kernels)
        return kevo__error_set(err, KEVO_EINVAL, "kernels is NULL");
    for (size_t i = 0; i < req->nkernels; i++) {
        if (!valid_kernel_name(req->kernels[i]))
            return kevo__error_set(err, KEVO_EINVAL,
                                   "kernel name %zu is empty, too long or "
                                   "has control characters",
                                   i);
    }
    j = calloc(1, sizeof *j);
    if (!j)
        goto nomem;
    j->options =
        kevo__compile_options(req->arch, req->params, &j->noptions, err);
    if (!j->options) {
        kevo__compile_job_free(j);
        return err ? err->code : KEVO_EINVAL;
    }
    j->source = kevo__strdup(req->source);
    j->name =
        kevo__strdup(req->name && *req->name ? req->name : "candidate.cu");
    if (!j->source || !j->name)
        goto nomem;
    if (req->nkernels) {
        j->kernels = calloc(req->nkernels, sizeof *j->kernels);
        if (!j->kernels)
            goto nomem;
        j->nkernels = req->nkernels;
        for (size_t i = 0; i < req->nkernels; i++) {
            if (!(j->kernels[i] = kevo__strdup(req->kernels[i])))
                goto nomem;
        }
    }
    j->timeout_ms = req->timeout_ms > 0 ? req->timeout_ms
                                        : KEVO__COMPILE_TIMEOUT_DEFAULT_MS;
    j->submitted = now_seconds();
    j->id = ++pool->next_id;
    *id = j->id;
    pool->stats.submitted++;

    if (kevo__include_scan(j->source, strlen(j->source), j->name, &scan) !=
        KEVO_OK) {
        pool->stats.rejected++;
        kevo__compile_fail(pool, j, "%s", scan.text);
        return KEVO_OK;
    }
    if (pool->cache) {
        kevo__cache_entry e;
        kevo__compile_cache_key(j->source, (const char *const *)j->options,
                                j->noptions, (const char *const *)j->kernels,
                                j->nkernels, pool->key_version, j->key);
        if (kevo__compile_cache_lookup(pool->cache, j->key, &e)) {
            kevo__compile_result *r = result_from_entry(j, &e);
            pool->stats.cache_hits++;
            if (r) {
                kevo__compile_finish(pool, j, r);
                return KEVO_OK;
            }
            kevo__cache_entry_clear(&e);
        } else {
            pool->stats.cache_misses++;
        }
    }
    kevo__compile_queue_push(pool, j, false);
    kevo__compile_dispatch(pool);
    return KEVO_OK;
nomem:
    kevo__compile_job_free(j);
    return kevo__error_set(err, KEVO_ENOMEM, "out of memory for a compile job");
}

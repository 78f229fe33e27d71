/*
 * compile_pool.c: the core's side of the compile processes: a job queue,
 * dispatch to idle processes, replies, time limits, restarts, the include
 * scan and the compile cache.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "compile_cache.h"
#include "compile_pool.h"
#include "proc/include_scan.h"
#include "proc/ipc.h"
#include "proc/procpool.h"

#ifndef KEVO_WORKER_PATH
#error "KEVO_WORKER_PATH (the installed kevo-worker) must be defined"
#endif

/* How long a restart waits after a failed one. */
#define RESTART_RETRY_MS 1000
/* How often a job is offered to a process that dies before it took it. */
#define SEND_ATTEMPTS 3
/* Time that idle processes get to exit when the pool is freed. */
#define FREE_GRACE_MS 2000

typedef struct job {
    uint64_t id;
    char *source;
    char *name;
    char **options; /* NULL-terminated */
    size_t noptions;
    char **kernels;
    size_t nkernels;
    int timeout_ms;
    char key[KEVO__CACHE_KEY_SIZE];
    double submitted; /* seconds */
    int attempts;
    struct job *next;
} job;

typedef struct slot {
    job *job;         /* the job it compiles, or NULL */
    bool hello;       /* the process said hello */
    int64_t deadline; /* of that job, kevo__now_ms() time */
    kevo__ipc_reader *reader;
    bool down;        /* no process: the last restart failed */
    int64_t retry_at; /* when to try again */
    char down_error[KEVO_ERROR_TEXT_SIZE];
} slot;

typedef struct result_node {
    kevo__compile_result *result;
    struct result_node *next;
} result_node;

struct kevo__compile_pool {
    kevo__procpool *procs;
    slot *slots;
    size_t n;
    job *queue; /* waiting for a process, oldest first */
    job *queue_tail;
    size_t queued;
    size_t running;
    result_node *done; /* finished, not yet handed back, oldest first */
    result_node *done_tail;
    size_t ndone;
    kevo__compile_cache *cache;
    char *nvrtc;
    /* What the first process loaded: the header hash is in every cache key
     * (key_version: "13.0 headers HASH"), so that entries of another
     * toolkit's headers are never taken. */
    kevo__compile_headers headers;
    char *headers_dir;
    char headers_hash[17];
    char *key_version;
    char *sandbox; /* the first hello's "sandbox": "landlock ABI 7", "none: ..."
                    */
    uint64_t next_id;
    kevo__compile_pool_stats stats;
    struct pollfd *pfds;
};

static double now_seconds(void)
{
    return (double)kevo__now_ms() / 1000.0;
}

const char *kevo__worker_path(void)
{
    const char *w = getenv("KEVO_WORKER");
    return w && *w ? w : KEVO_WORKER_PATH;
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

static void job_free(job *j)
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
static kevo__compile_result *result_new(const job *j)
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
static void finish(kevo__compile_pool *pool, job *j, kevo__compile_result *r)
{
    result_node *node = calloc(1, sizeof *node);
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
        job_free(j);
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
    job_free(j);
}

/* Finishes j as failed with a formatted reason. */
static void fail_job(kevo__compile_pool *pool, job *j, const char *fmt, ...)
    KEVO_PRINTF(3, 4);

static void fail_job(kevo__compile_pool *pool, job *j, const char *fmt, ...)
{
    kevo__compile_result *r = result_new(j);
    if (!r) {
        pool->stats.finished++;
        pool->stats.failed++;
        job_free(j);
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
    finish(pool, j, r);
}

static void queue_push(kevo__compile_pool *pool, job *j, bool front)
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

static job *queue_pop(kevo__compile_pool *pool)
{
    job *j = pool->queue;
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

static void cache_store(kevo__compile_pool *pool, const job *j,
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
static kevo__compile_result *result_from_entry(const job *j,
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
    return r;
}

/* ---- processes --------------------------------------------------------- */

/* Kills and restarts slot i (its job, if any, must have been dealt with).
 * *status gets the old process's wait status. */
static void restart_slot(kevo__compile_pool *pool, size_t i, int *status)
{
    slot *s = &pool->slots[i];
    kevo_error err = KEVO__ERROR_INIT;
    kevo__proc *p = kevo__procpool_proc(pool->procs, i);
    if (kevo__proc_running(p)) {
        int st = -1;
        kevo__proc_kill(p, &st);
        if (status)
            *status = st;
        status = NULL;
    }
    kevo__ipc_reader_reset(s->reader);
    s->job = NULL;
    s->hello = false;
    pool->stats.restarts++;
    if (kevo__procpool_restart(pool->procs, i, status, &err) != KEVO_OK) {
        s->down = true;
        s->retry_at = kevo__now_ms() + RESTART_RETRY_MS;
        snprintf(s->down_error, sizeof s->down_error, "%s", err.text);
    } else {
        s->down = false;
    }
}

/* Ends slot i's process and leaves the slot without one until a while
 * later: for a process that fails before it ever worked, so that a broken
 * installation does not turn into a storm of restarts. */
static void park_slot(kevo__compile_pool *pool, size_t i, const char *why)
{
    slot *s = &pool->slots[i];
    kevo__proc_kill(kevo__procpool_proc(pool->procs, i), NULL);
    kevo__procpool_set_busy(pool->procs, i, false);
    kevo__ipc_reader_reset(s->reader);
    s->hello = false;
    s->down = true;
    s->retry_at = kevo__now_ms() + RESTART_RETRY_MS;
    snprintf(s->down_error, sizeof s->down_error, "%s", why);
}

/* The slot's job failed because its process ended or broke the protocol:
 * restart it and fail the job with the reason. */
static void slot_failed(kevo__compile_pool *pool, size_t i, bool protocol,
                        const char *why)
{
    slot *s = &pool->slots[i];
    job *j = s->job;
    int status = -1;
    char text[128];

    if (j)
        pool->running--;
    s->job = NULL;
    kevo__procpool_set_busy(pool->procs, i, false);
    /* A process that closed its end is ending: let it, so that its own
     * exit status or signal is what gets reported. */
    if (!protocol)
        kevo__proc_finish(kevo__procpool_proc(pool->procs, i), 500, &status);
    if (s->hello || j) {
        restart_slot(pool, i, status == -1 ? &status : NULL);
    } else {
        char reason[KEVO_ERROR_TEXT_SIZE];
        snprintf(reason, sizeof reason, "the compile process %s: %s",
                 protocol ? "broke the protocol"
                          : kevo__wait_status_text(status, text, sizeof text),
                 why);
        park_slot(pool, i, reason);
    }
    if (!j)
        return;
    pool->stats.deaths++;
    if (protocol)
        fail_job(pool, j, "compile process broke the protocol: %s", why);
    else
        fail_job(pool, j, "compile process died (%s)",
                 kevo__wait_status_text(status, text, sizeof text));
}

/* Hands a queued job to each idle process. */
static void dispatch(kevo__compile_pool *pool)
{
    int64_t now = kevo__now_ms();
    for (size_t i = 0; i < pool->n; i++) {
        slot *s = &pool->slots[i];
        if (s->down && now >= s->retry_at)
            restart_slot(pool, i, NULL);
    }
    /* With every process down, nothing queued can run: say why. */
    bool any_up = false;
    for (size_t i = 0; i < pool->n; i++)
        any_up = any_up || !pool->slots[i].down;
    while (!any_up && pool->queue) {
        job *j = queue_pop(pool);
        fail_job(pool, j, "no compile process: %s", pool->slots[0].down_error);
    }

    long idle;
    while (pool->queue && (idle = kevo__procpool_idle(pool->procs)) >= 0) {
        size_t i = (size_t)idle;
        slot *s = &pool->slots[i];
        job *j = queue_pop(pool);
        kevo_error err = KEVO__ERROR_INIT;
        json_t *opts = json_array(), *kernels = json_array(), *msg = NULL;
        bool built = opts && kernels;
        for (size_t k = 0; built && k < j->noptions; k++)
            built =
                json_array_append_new(opts, json_string(j->options[k])) == 0;
        for (size_t k = 0; built && k < j->nkernels; k++)
            built =
                json_array_append_new(kernels, json_string(j->kernels[k])) == 0;
        if (built)
            msg = json_pack("{s:s, s:I, s:s, s:s, s:O, s:O, s:i}", "op",
                            "compile", "id", (json_int_t)j->id, "source",
                            j->source, "name", j->name, "options", opts,
                            "kernels", kernels, "timeout_ms", j->timeout_ms);
        json_decref(opts);
        json_decref(kernels);
        if (!msg) {
            fail_job(pool, j, "out of memory for the compile request");
            continue;
        }
        kevo__proc *p = kevo__procpool_proc(pool->procs, i);
        kevo_status rc =
            kevo__ipc_send(p->to_fd, msg, NULL, 0, j->timeout_ms, &err);
        json_decref(msg);
        if (rc != KEVO_OK) {
            /* The process died while idle, or does not read: restart it
             * and offer the job again, a few times. */
            restart_slot(pool, i, NULL);
            if (++j->attempts >= SEND_ATTEMPTS)
                fail_job(pool, j, "cannot send to a compile process: %s",
                         err.text);
            else
                queue_push(pool, j, true);
            continue;
        }
        pool->stats.dispatched++;
        s->job = j;
        s->deadline = kevo__now_ms() + j->timeout_ms;
        kevo__procpool_set_busy(pool->procs, i, true);
        pool->running++;
    }
}

/* A JSON string member copied, or NULL. */
static char *member_string(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_string(v)
               ? kevo__strndup(json_string_value(v), json_string_length(v))
               : NULL;
}

/* Turns a "compiled" reply into the job's result. Returns false with why
 * on a malformed reply. */
static bool take_reply(kevo__compile_pool *pool, size_t i, kevo__frame *f,
                       char *why, size_t why_size)
{
    slot *s = &pool->slots[i];
    job *j = s->job;
    json_t *m = f->json;
    json_t *jok = json_object_get(m, "ok");
    json_int_t ptx_n = json_integer_value(json_object_get(m, "ptx_bytes"));
    json_int_t cubin_n = json_integer_value(json_object_get(m, "cubin_bytes"));
    json_t *lowered = json_object_get(m, "lowered");
    kevo__compile_result *r;

    if (!json_is_boolean(jok) || ptx_n < 0 || cubin_n < 0 ||
        (json_is_true(jok) &&
         (uint64_t)ptx_n + (uint64_t)cubin_n != f->payload_len)) {
        snprintf(why, why_size,
                 "a \"compiled\" reply without \"ok\" or with lengths that "
                 "do not match its payload of %zu bytes",
                 f->payload_len);
        return false;
    }
    s->job = NULL;
    pool->running--;
    kevo__procpool_set_busy(pool->procs, i, false);
    r = result_new(j);
    if (!r) {
        pool->stats.finished++;
        pool->stats.failed++;
        job_free(j);
        return true;
    }
    r->ok = json_is_true(jok);
    r->error = r->ok ? NULL : member_string(m, "error");
    if (!r->ok && !r->error)
        r->error = kevo__strdup("compile failed");
    r->log = member_string(m, "log");
    r->nvrtc = member_string(m, "nvrtc");
    if (!r->nvrtc)
        r->nvrtc = kevo__strdup(pool->nvrtc);
    r->seconds = json_number_value(json_object_get(m, "seconds"));
    pool->stats.compile_seconds += r->seconds;
    if (r->ok) {
        r->ptx = malloc((size_t)ptx_n + 1);
        r->cubin = malloc((size_t)cubin_n + 1);
        if (r->ptx && r->cubin) {
            memcpy(r->ptx, f->payload, (size_t)ptx_n);
            r->ptx[ptx_n] = '\0';
            r->ptx_len = (size_t)ptx_n;
            memcpy(r->cubin, f->payload + ptx_n, (size_t)cubin_n);
            r->cubin_len = (size_t)cubin_n;
        } else {
            r->ok = false;
            free(r->ptx);
            free(r->cubin);
            r->ptx = NULL;
            r->cubin = NULL;
            r->error = kevo__strdup("out of memory for the compiled code");
        }
        for (size_t k = 0; r->ok && k < r->nlowered; k++) {
            json_t *v = json_array_get(lowered, k);
            if (json_is_string(v))
                r->lowered[k] = kevo__strdup(json_string_value(v));
        }
    }
    if (json_is_true(json_object_get(m, "cacheable")))
        cache_store(pool, j, r);
    finish(pool, j, r);
    return true;
}

/* Acts on one frame from slot i. */
static void handle_frame(kevo__compile_pool *pool, size_t i, kevo__frame *f)
{
    slot *s = &pool->slots[i];
    const char *op = json_string_value(json_object_get(f->json, "op"));
    json_t *jid = json_object_get(f->json, "id");
    char why[256];

    if (op && strcmp(op, "hello") == 0) {
        if (!json_is_true(json_object_get(f->json, "ok"))) {
            const char *e =
                json_string_value(json_object_get(f->json, "error"));
            job *j = s->job;
            snprintf(why, sizeof why, "the compile process cannot compile: %s",
                     e ? e : "no reason given");
            park_slot(pool, i, why);
            if (j) {
                /* It never ran: another process may take it. */
                s->job = NULL;
                pool->running--;
                queue_push(pool, j, true);
            }
        } else {
            s->hello = true;
        }
        return;
    }
    if (!op || (strcmp(op, "compiled") != 0 && strcmp(op, "error") != 0) ||
        !s->job || !json_is_integer(jid) ||
        (uint64_t)json_integer_value(jid) != s->job->id) {
        snprintf(why, sizeof why,
                 "an unexpected \"%s\" message (id %" PRIu64 ") while %s",
                 op ? op : "(no op)", (uint64_t)json_integer_value(jid),
                 s->job ? "compiling" : "idle");
        slot_failed(pool, i, true, why);
        return;
    }
    if (strcmp(op, "error") == 0) {
        const char *e = json_string_value(json_object_get(f->json, "error"));
        job *j = s->job;
        s->job = NULL;
        pool->running--;
        kevo__procpool_set_busy(pool->procs, i, false);
        fail_job(pool, j, "compile worker: %s", e ? e : "error");
        return;
    }
    if (!take_reply(pool, i, f, why, sizeof why))
        slot_failed(pool, i, true, why);
}

/* Reads every complete frame that slot i's process has sent. */
static void read_slot(kevo__compile_pool *pool, size_t i)
{
    slot *s = &pool->slots[i];
    for (;;) {
        kevo__proc *p = kevo__procpool_proc(pool->procs, i);
        kevo__frame f = {0};
        kevo_error err = KEVO__ERROR_INIT;
        bool complete = false;
        if (!kevo__proc_running(p))
            return;
        pid_t pid = p->pid;
        kevo_status rc =
            kevo__ipc_reader_read(s->reader, p->from_fd, &f, &complete, &err);
        if (rc == KEVO_DONE || rc == KEVO_EIO) {
            slot_failed(pool, i, false, err.text);
            return;
        }
        if (rc != KEVO_OK) {
            slot_failed(pool, i, true, err.text);
            return;
        }
        if (!complete)
            return;
        handle_frame(pool, i, &f);
        kevo__frame_clear(&f);
        if (kevo__procpool_proc(pool->procs, i)->pid != pid)
            return;
    }
}

/* Kills the processes whose job passed its time limit. */
static void check_deadlines(kevo__compile_pool *pool)
{
    int64_t now = kevo__now_ms();
    for (size_t i = 0; i < pool->n; i++) {
        slot *s = &pool->slots[i];
        if (!s->job || now < s->deadline)
            continue;
        job *j = s->job;
        s->job = NULL;
        pool->running--;
        pool->stats.timeouts++;
        restart_slot(pool, i, NULL);
        fail_job(pool, j, "compile timed out after %d ms", j->timeout_ms);
    }
}

int kevo__compile_pool_timeout_ms(const kevo__compile_pool *pool)
{
    if (pool->ndone)
        return 0;
    if (pool->queued && kevo__procpool_idle(pool->procs) >= 0)
        return 0;
    int64_t next = -1;
    for (size_t i = 0; i < pool->n; i++) {
        const slot *s = &pool->slots[i];
        int64_t t = s->job ? s->deadline : s->down ? s->retry_at : -1;
        if (t >= 0 && (next < 0 || t < next))
            next = t;
    }
    return next < 0 ? -1 : kevo__ms_left(next);
}

size_t kevo__compile_pool_pollfds(const kevo__compile_pool *pool,
                                  struct pollfd *fds, size_t cap)
{
    return kevo__procpool_pollfds(pool->procs, fds, cap);
}

/* One round: dispatch, wait up to wait_ms for replies, read them, enforce
 * time limits, dispatch again. */
static void run_once(kevo__compile_pool *pool, int wait_ms)
{
    dispatch(pool);
    int t = kevo__compile_pool_timeout_ms(pool);
    if (t >= 0 && (wait_ms < 0 || t < wait_ms))
        wait_ms = t;
    if (pool->ndone)
        wait_ms = 0;
    size_t n = kevo__procpool_pollfds(pool->procs, pool->pfds, pool->n);
    int rc = poll(pool->pfds, (nfds_t)n, wait_ms);
    if (rc > 0) {
        for (size_t i = 0; i < n; i++) {
            if (pool->pfds[i].fd >= 0 && pool->pfds[i].revents)
                read_slot(pool, i);
        }
    } else if (rc < 0 && errno != EINTR) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    check_deadlines(pool);
    dispatch(pool);
}

/* Unlinks and returns the first finished result with id (any when id is
 * 0), or NULL. */
static kevo__compile_result *take_done(kevo__compile_pool *pool, uint64_t id)
{
    result_node **pp = &pool->done, *prev = NULL;
    while (*pp) {
        result_node *node = *pp;
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

static bool job_pending(const kevo__compile_pool *pool, uint64_t id)
{
    for (const job *j = pool->queue; j; j = j->next) {
        if (j->id == id)
            return true;
    }
    for (size_t i = 0; i < pool->n; i++) {
        if (pool->slots[i].job && pool->slots[i].job->id == id)
            return true;
    }
    for (const result_node *r = pool->done; r; r = r->next) {
        if (r->result->id == id)
            return true;
    }
    return false;
}

static kevo_status wait_for(kevo__compile_pool *pool, uint64_t id,
                            int timeout_ms, kevo__compile_result **result,
                            kevo_error *err)
{
    int64_t deadline = timeout_ms < 0 ? -1 : kevo__now_ms() + timeout_ms;
    *result = NULL;
    if (id != 0 && !job_pending(pool, id))
        return kevo__error_set(err, KEVO_ENOENT,
                               "no compile job %" PRIu64 " is pending", id);
    for (;;) {
        if ((*result = take_done(pool, id)))
            return KEVO_OK;
        if (id == 0 && pool->queued == 0 && pool->running == 0)
            return KEVO_DONE;
        if (id != 0 && !job_pending(pool, id))
            return kevo__error_set(err, KEVO_ENOENT,
                                   "compile job %" PRIu64 " was lost", id);
        int left = kevo__ms_left(deadline);
        run_once(pool, left);
        if ((*result = take_done(pool, id)))
            return KEVO_OK;
        if (deadline >= 0 && kevo__ms_left(deadline) == 0)
            return KEVO_OK;
    }
}

kevo_status kevo__compile_pool_poll(kevo__compile_pool *pool, int timeout_ms,
                                    kevo__compile_result **result,
                                    kevo_error *err)
{
    return wait_for(pool, 0, timeout_ms, result, err);
}

kevo_status kevo__compile_pool_wait(kevo__compile_pool *pool, uint64_t id,
                                    int timeout_ms,
                                    kevo__compile_result **result,
                                    kevo_error *err)
{
    if (id == 0) {
        *result = NULL;
        return kevo__error_set(err, KEVO_ENOENT, "no compile job 0");
    }
    return wait_for(pool, id, timeout_ms, result, err);
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
    job *j = NULL;

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
        job_free(j);
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
        fail_job(pool, j, "%s", scan.text);
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
                finish(pool, j, r);
                return KEVO_OK;
            }
            kevo__cache_entry_clear(&e);
        } else {
            pool->stats.cache_misses++;
        }
    }
    queue_push(pool, j, false);
    dispatch(pool);
    return KEVO_OK;
nomem:
    job_free(j);
    return kevo__error_set(err, KEVO_ENOMEM, "out of memory for a compile job");
}

/* ---- the pool ---------------------------------------------------------- */

static size_t online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (size_t)n : 1;
}

/* Waits for slot 0's hello and keeps its NVRTC version. */
static kevo_status first_hello(kevo__compile_pool *pool, const char *worker,
                               int timeout_ms, kevo_error *err)
{
    kevo__proc *p = kevo__procpool_proc(pool->procs, 0);
    kevo__frame f = {0};
    kevo_error inner = KEVO__ERROR_INIT;
    kevo_status rc = kevo__ipc_recv(p->from_fd, timeout_ms, &f, &inner);
    if (rc != KEVO_OK) {
        int status = -1;
        char text[128];
        if (rc == KEVO_ETIMEDOUT)
            kevo__proc_kill(p, &status);
        else
            kevo__proc_finish(p, 1000, &status);
        return kevo__error_set(
            err, rc == KEVO_ETIMEDOUT ? KEVO_ETIMEDOUT : KEVO_EWORKER,
            "%s compile: no hello: %s (%s)", worker, inner.text,
            kevo__wait_status_text(status, text, sizeof text));
    }
    const char *op = json_string_value(json_object_get(f.json, "op"));
    const char *nvrtc = json_string_value(json_object_get(f.json, "nvrtc"));
    if (!op || strcmp(op, "hello") != 0) {
        kevo__frame_clear(&f);
        return kevo__error_set(err, KEVO_EWORKER,
                               "%s compile: the first message is not a hello",
                               worker);
    }
    if (!json_is_true(json_object_get(f.json, "ok")) || !nvrtc) {
        const char *e = json_string_value(json_object_get(f.json, "error"));
        rc = kevo__error_set(err, KEVO_EEXTERNAL, "%s compile: %s", worker,
                             e ? e : "the hello has no NVRTC version");
        kevo__frame_clear(&f);
        return rc;
    }
    json_t *h = json_object_get(f.json, "headers");
    const char *hash = json_string_value(json_object_get(h, "hash"));
    const char *dir = json_string_value(json_object_get(h, "dir"));
    snprintf(pool->headers_hash, sizeof pool->headers_hash, "%s",
             hash ? hash : "");
    pool->headers.files =
        (size_t)json_integer_value(json_object_get(h, "files"));
    pool->headers.names =
        (size_t)json_integer_value(json_object_get(h, "names"));
    pool->headers.bytes =
        (size_t)json_integer_value(json_object_get(h, "bytes"));
    pool->headers.seconds = json_number_value(json_object_get(h, "seconds"));
    pool->headers.hash = pool->headers_hash;
    pool->headers_dir = dir ? kevo__strdup(dir) : NULL;
    pool->headers.dir = pool->headers_dir;
    pool->nvrtc = kevo__strdup(nvrtc);
    const char *sandbox = json_string_value(json_object_get(f.json, "sandbox"));
    pool->sandbox = kevo__strdup(sandbox ? sandbox : "none: not reported");
    /* Whether the compile ran confined is part of the key: without the
     * sandbox, a kernel can probe host files with a pasted __has_include,
     * and what it compiled to then must not be replayed in a confined
     * run. */
    pool->key_version = kevo__asprintf(
        "%s headers %s sandbox %s", nvrtc,
        *pool->headers_hash ? pool->headers_hash : "none",
        strncmp(pool->sandbox ? pool->sandbox : "", "landlock", 8) == 0
            ? "on"
            : "off");
    pool->slots[0].hello = true;
    kevo__frame_clear(&f);
    if (!pool->nvrtc || !pool->key_version || !pool->sandbox ||
        (dir && !pool->headers_dir))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    return KEVO_OK;
}

kevo__compile_pool *kevo__compile_pool_new(const kevo__compile_pool_config *cfg,
                                           kevo_error *err)
{
    kevo__compile_pool_config defaults = {0};
    kevo__compile_pool *pool = NULL;

    if (!cfg)
        cfg = &defaults;
    const char *worker = cfg->worker ? cfg->worker : kevo__worker_path();
    size_t n = cfg->processes ? cfg->processes : online_cpus();
    char *argv[] = {(char *)worker, "compile", NULL};

    pool = calloc(1, sizeof *pool);
    if (!pool)
        goto nomem;
    pool->n = n;
    pool->slots = calloc(n, sizeof *pool->slots);
    pool->pfds = calloc(n, sizeof *pool->pfds);
    if (!pool->slots || !pool->pfds)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        if (!(pool->slots[i].reader = kevo__ipc_reader_new()))
            goto nomem;
    }
    if (!cfg->no_cache) {
        pool->cache = kevo__compile_cache_open(cfg->cache_dir, err);
        if (!pool->cache)
            goto fail;
    }
    pool->procs = kevo__procpool_new(worker, argv, n, err);
    if (!pool->procs)
        goto fail;
    if (first_hello(pool, worker,
                    cfg->start_timeout_ms > 0 ? cfg->start_timeout_ms : 30000,
                    err) != KEVO_OK)
        goto fail;
    return pool;
nomem:
    kevo__error_set(err, KEVO_ENOMEM, "out of memory for a compile pool");
fail:
    kevo__compile_pool_free(pool);
    return NULL;
}

void kevo__compile_pool_free(kevo__compile_pool *pool)
{
    if (!pool)
        return;
    if (pool->procs) {
        /* A process still compiling would only finish work nobody wants. */
        for (size_t i = 0; i < pool->n; i++) {
            if (pool->slots[i].job)
                kevo__proc_kill(kevo__procpool_proc(pool->procs, i), NULL);
        }
        kevo__procpool_free(pool->procs, FREE_GRACE_MS);
    }
    for (size_t i = 0; pool->slots && i < pool->n; i++) {
        job_free(pool->slots[i].job);
        kevo__ipc_reader_free(pool->slots[i].reader);
    }
    job *j;
    while ((j = queue_pop(pool)))
        job_free(j);
    kevo__compile_result *r;
    while ((r = take_done(pool, 0)))
        kevo__compile_result_free(r);
    kevo__compile_cache_close(pool->cache);
    free(pool->slots);
    free(pool->pfds);
    free(pool->nvrtc);
    free(pool->key_version);
    free(pool->sandbox);
    free(pool->headers_dir);
    free(pool);
}

const char *kevo__compile_pool_sandbox(const kevo__compile_pool *pool)
{
    return pool->sandbox;
}

const char *kevo__compile_pool_nvrtc_version(const kevo__compile_pool *pool)
{
    return pool->nvrtc;
}

void kevo__compile_pool_headers(const kevo__compile_pool *pool,
                                kevo__compile_headers *headers)
{
    *headers = pool->headers;
}

size_t kevo__compile_pool_processes(const kevo__compile_pool *pool)
{
    return pool->n;
}

size_t kevo__compile_pool_pending(const kevo__compile_pool *pool)
{
    return pool->queued + pool->running + pool->ndone;
}

void kevo__compile_pool_stats_get(const kevo__compile_pool *pool,
                                  kevo__compile_pool_stats *stats)
{
    *stats = pool->stats;
}

long kevo__compile_pool_pid(const kevo__compile_pool *pool, size_t i)
{
    if (i >= pool->n)
        return 0;
    return (long)kevo__procpool_proc(pool->procs, i)->pid;
}

long kevo__compile_pool_job_slot(const kevo__compile_pool *pool, uint64_t id)
{
    for (size_t i = 0; i < pool->n; i++) {
        if (pool->slots[i].job && pool->slots[i].job->id == id)
            return (long)i;
    }
    return -1;
}

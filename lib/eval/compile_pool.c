/*
 * compile_pool.c: the core's side of the compile processes. Queued jobs
 * are dispatched to idle processes; their replies are read and acted on;
 * time limits are enforced; processes that die, hang or break the
 * protocol are restarted (or, when they never worked, left down for a
 * while); and the callers wait for results. Jobs and their results are
 * compile_job.c's, the messages compile_message.c's.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compile_pool_private.h"

#ifndef KEVO_WORKER_PATH
#error "KEVO_WORKER_PATH (the installed kevo-worker) must be defined"
#endif

/* How long a restart waits after a failed one. */
#define RESTART_RETRY_MS 1000
/* How often a job is offered to a process that dies before it took it. */
#define SEND_ATTEMPTS 3
/* Time that idle processes get to exit when the pool is freed. */
#define FREE_GRACE_MS 2000

const char *kevo__worker_path(void)
{
    const char *w = getenv("KEVO_WORKER");
    return w && *w ? w : KEVO_WORKER_PATH;
}

/* ---- processes --------------------------------------------------------- */

/* Kills and restarts slot i (its job, if any, must have been dealt with).
 * *status gets the old process's wait status. */
static void restart_slot(kevo__compile_pool *pool, size_t i, int *status)
{
    kevo__compile_slot *s = &pool->slots[i];
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
    kevo__compile_slot *s = &pool->slots[i];
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
    kevo__compile_slot *s = &pool->slots[i];
    kevo__compile_job *j = s->job;
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
        kevo__compile_fail(pool, j, "compile process broke the protocol: %s",
                           why);
    else
        kevo__compile_fail(pool, j, "compile process died (%s)",
                           kevo__wait_status_text(status, text, sizeof text));
}

/* Hands a queued job to each idle process. */
void kevo__compile_dispatch(kevo__compile_pool *pool)
{
    int64_t now = kevo__now_ms();
    for (size_t i = 0; i < pool->n; i++) {
        kevo__compile_slot *s = &pool->slots[i];
        if (s->down && now >= s->retry_at)
            restart_slot(pool, i, NULL);
    }
    /* With every process down, nothing queued can run: say why. */
    bool any_up = false;
    for (size_t i = 0; i < pool->n; i++)
        any_up = any_up || !pool->slots[i].down;
    while (!any_up && pool->queue) {
        kevo__compile_job *j = kevo__compile_queue_pop(pool);
        kevo__compile_fail(pool, j, "no compile process: %s",
                           pool->slots[0].down_error);
    }

    long idle;
    while (pool->queue && (idle = kevo__procpool_idle(pool->procs)) >= 0) {
        size_t i = (size_t)idle;
        kevo__compile_slot *s = &pool->slots[i];
        kevo__compile_job *j = kevo__compile_queue_pop(pool);
        kevo_error err = KEVO__ERROR_INIT;
        json_t *msg = kevo__compile_request_message(j);
        if (!msg) {
            kevo__compile_fail(pool, j,
                               "out of memory for the compile request");
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
                kevo__compile_fail(
                    pool, j, "cannot send to a compile process: %s", err.text);
            else
                kevo__compile_queue_push(pool, j, true);
            continue;
        }
        pool->stats.dispatched++;
        s->job = j;
        s->deadline = kevo__now_ms() + j->timeout_ms;
        kevo__procpool_set_busy(pool->procs, i, true);
        pool->running++;
    }
}

/* Turns a "compiled" reply into the job's result. Returns false with why
 * on a malformed reply. */
static bool take_reply(kevo__compile_pool *pool, size_t i, kevo__frame *f,
                       char *why, size_t why_size)
{
    kevo__compile_slot *s = &pool->slots[i];
    kevo__compile_job *j = s->job;
    bool cacheable = false;

    if (!kevo__compile_reply_check(f, why, why_size))
        return false;
    s->job = NULL;
    pool->running--;
    kevo__procpool_set_busy(pool->procs, i, false);
    kevo__compile_result *r =
        kevo__compile_reply_result(f, j, pool->nvrtc, &cacheable);
    if (!r) {
        pool->stats.finished++;
        pool->stats.failed++;
        kevo__compile_job_free(j);
        return true;
    }
    pool->stats.compile_seconds += r->seconds;
    if (cacheable)
        kevo__compile_cache_put(pool, j, r);
    kevo__compile_finish(pool, j, r);
    return true;
}

/* Acts on one frame from slot i. */
static void handle_frame(kevo__compile_pool *pool, size_t i, kevo__frame *f)
{
    kevo__compile_slot *s = &pool->slots[i];
    const char *op = json_string_value(json_object_get(f->json, "op"));
    json_t *jid = json_object_get(f->json, "id");
    char why[256];

    if (op && strcmp(op, "hello") == 0) {
        if (!json_is_true(json_object_get(f->json, "ok"))) {
            const char *e =
                json_string_value(json_object_get(f->json, "error"));
            kevo__compile_job *j = s->job;
            snprintf(why, sizeof why, "the compile process cannot compile: %s",
                     e ? e : "no reason given");
            park_slot(pool, i, why);
            if (j) {
                /* It never ran: another process may take it. */
                s->job = NULL;
                pool->running--;
                kevo__compile_queue_push(pool, j, true);
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
        kevo__compile_job *j = s->job;
        s->job = NULL;
        pool->running--;
        kevo__procpool_set_busy(pool->procs, i, false);
        kevo__compile_fail(pool, j, "compile worker: %s", e ? e : "error");
        return;
    }
    if (!take_reply(pool, i, f, why, sizeof why))
        slot_failed(pool, i, true, why);
}

/* Reads every complete frame that slot i's process has sent. */
static void read_slot(kevo__compile_pool *pool, size_t i)
{
    kevo__compile_slot *s = &pool->slots[i];
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
        kevo__compile_slot *s = &pool->slots[i];
        if (!s->job || now < s->deadline)
            continue;
        kevo__compile_job *j = s->job;
        s->job = NULL;
        pool->running--;
        pool->stats.timeouts++;
        restart_slot(pool, i, NULL);
        kevo__compile_fail(pool, j, "compile timed out after %d ms",
                           j->timeout_ms);
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
        const kevo__compile_slot *s = &pool->slots[i];
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
    kevo__compile_dispatch(pool);
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
    kevo__compile_dispatch(pool);
}

/* ---- waiting ------------------------------------------------------------ */

static kevo_status wait_for(kevo__compile_pool *pool, uint64_t id,
                            int timeout_ms, kevo__compile_result **result,
                            kevo_error *err)
{
    int64_t deadline = timeout_ms < 0 ? -1 : kevo__now_ms() + timeout_ms;
    *result = NULL;
    if (id != 0 && !kevo__compile_job_pending(pool, id))
        return kevo__error_set(err, KEVO_ENOENT,
                               "no compile job %" PRIu64 " is pending", id);
    for (;;) {
        if ((*result = kevo__compile_take_done(pool, id)))
            return KEVO_OK;
        if (id == 0 && pool->queued == 0 && pool->running == 0)
            return KEVO_DONE;
        if (id != 0 && !kevo__compile_job_pending(pool, id))
            return kevo__error_set(err, KEVO_ENOENT,
                                   "compile job %" PRIu64 " was lost", id);
        int left = kevo__ms_left(deadline);
        run_once(pool, left);
        if ((*result = kevo__compile_take_done(pool, id)))
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
    rc = kevo__compile_hello_read(pool, &f, worker, err);
    if (rc == KEVO_OK)
        pool->slots[0].hello = true;
    kevo__frame_clear(&f);
    return rc;
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
        kevo__compile_job_free(pool->slots[i].job);
        kevo__ipc_reader_free(pool->slots[i].reader);
    }
    kevo__compile_job *j;
    while ((j = kevo__compile_queue_pop(pool)))
        kevo__compile_job_free(j);
    kevo__compile_result *r;
    while ((r = kevo__compile_take_done(pool, 0)))
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

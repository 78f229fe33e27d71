/*
 * gpu_client.c: the core's side of one GPU worker process.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_client.h"
#include "proc/procpool.h"

/* How long a worker that is told to end may take before it is killed. */
#define GRACE_MS 2000

struct kevo__gpu_client {
    char *worker;
    int device;
    int start_timeout_ms;
    kevo__proc proc;
    kevo__ipc_reader *reader;
    json_t *device_info;
    int driver;
    int device_count; /* the driver's, from the last hello; -1: unknown */
    bool busy;
    int64_t sent_ms; /* when the request out was sent */
    int64_t deadline;
    unsigned long restarts;
    kevo__task_keys tasks; /* what the process now running holds */
    uint64_t task_messages;
};

/* Starts the process and reads its hello. */
static kevo_status start(kevo__gpu_client *c, kevo_error *err)
{
    char devarg[24];
    snprintf(devarg, sizeof devarg, "%d", c->device);
    char *argv[] = {c->worker, "gpu", "--device", devarg, NULL};
    kevo__frame hello = {0};
    kevo__task_keys_clear(&c->tasks); /* a new process holds no task */
    kevo_status rc = kevo__proc_spawn(&c->proc, c->worker, argv, err);
    if (rc != KEVO_OK)
        return rc;
    kevo__ipc_reader_reset(c->reader);
    kevo_error inner;
    kevo_error_init(&inner);
    rc = kevo__ipc_recv(c->proc.from_fd, c->start_timeout_ms, &hello, &inner);
    if (rc != KEVO_OK) {
        int status = -1;
        char how[128];
        kevo__proc_kill(&c->proc, &status);
        return kevo__error_set(err, KEVO_EWORKER,
                               "the GPU worker %s did not say hello (%s; %s)",
                               c->worker, inner.text,
                               kevo__wait_status_text(status, how, sizeof how));
    }
    const char *op = json_string_value(json_object_get(hello.json, "op"));
    json_t *count = json_object_get(hello.json, "device_count");
    c->device_count = json_is_integer(count) &&
                              json_integer_value(count) >= 0 &&
                              json_integer_value(count) <= INT_MAX
                          ? (int)json_integer_value(count)
                          : -1;
    if (!op || strcmp(op, "hello") != 0) {
        kevo__frame_clear(&hello);
        kevo__proc_kill(&c->proc, NULL);
        return kevo__error_set(err, KEVO_EWORKER,
                               "the GPU worker %s broke the protocol: its "
                               "first message is not a hello",
                               c->worker);
    }
    if (!json_is_true(json_object_get(hello.json, "ok"))) {
        const char *why =
            json_string_value(json_object_get(hello.json, "error"));
        rc = kevo__error_set(err, KEVO_ENODEV, "%s",
                             why ? why : "the GPU worker found no device");
        kevo__frame_clear(&hello);
        kevo__proc_finish(&c->proc, GRACE_MS, NULL);
        return rc;
    }
    json_t *dev = json_object_get(hello.json, "device");
    if (!json_is_object(dev)) {
        kevo__frame_clear(&hello);
        kevo__proc_kill(&c->proc, NULL);
        return kevo__error_set(err, KEVO_EWORKER,
                               "the GPU worker's hello has no \"device\" "
                               "object");
    }
    json_decref(c->device_info);
    c->device_info = json_incref(dev);
    c->driver = (int)json_integer_value(json_object_get(hello.json, "driver"));
    kevo__frame_clear(&hello);
    return KEVO_OK;
}

kevo__gpu_client *kevo__gpu_client_new(const char *worker, int device,
                                       int start_timeout_ms, kevo_error *err)
{
    return kevo__gpu_client_open(worker, device, start_timeout_ms, NULL, err);
}

kevo__gpu_client *kevo__gpu_client_open(const char *worker, int device,
                                        int start_timeout_ms, int *device_count,
                                        kevo_error *err)
{
    if (device_count)
        *device_count = -1;
    kevo__gpu_client *c = calloc(1, sizeof *c);
    if (!c) {
        kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        return NULL;
    }
    c->proc = (kevo__proc)KEVO__PROC_INIT;
    c->device = device;
    c->device_count = -1;
    c->start_timeout_ms = start_timeout_ms > 0 ? start_timeout_ms : 60000;
    c->deadline = -1;
    kevo__task_keys_init(&c->tasks, NULL);
    c->worker = kevo__strdup(worker);
    c->reader = kevo__ipc_reader_new();
    if (!c->worker || !c->reader) {
        kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto fail;
    }
    kevo_status rc = start(c, err);
    if (device_count)
        *device_count = c->device_count;
    if (rc != KEVO_OK)
        goto fail;
    return c;
fail:
    kevo__gpu_client_free(c);
    return NULL;
}

void kevo__gpu_client_free(kevo__gpu_client *c)
{
    if (!c)
        return;
    if (kevo__proc_running(&c->proc))
        kevo__proc_finish(&c->proc, c->busy ? 0 : GRACE_MS, NULL);
    kevo__ipc_reader_free(c->reader);
    json_decref(c->device_info);
    free(c->worker);
    free(c);
}

const json_t *kevo__gpu_client_device(const kevo__gpu_client *c)
{
    return c->device_info;
}

int kevo__gpu_client_driver(const kevo__gpu_client *c)
{
    return c->driver;
}

int kevo__gpu_client_device_count(const kevo__gpu_client *c)
{
    return c->device_count;
}

bool kevo__gpu_client_busy(const kevo__gpu_client *c)
{
    return c->busy;
}

int kevo__gpu_client_fd(const kevo__gpu_client *c)
{
    return kevo__proc_running(&c->proc) ? c->proc.from_fd : -1;
}

int64_t kevo__gpu_client_deadline(const kevo__gpu_client *c)
{
    return c->busy ? c->deadline : -1;
}

unsigned long kevo__gpu_client_restarts(const kevo__gpu_client *c)
{
    return c->restarts;
}

long kevo__gpu_client_pid(const kevo__gpu_client *c)
{
    return (long)c->proc.pid;
}

kevo_status kevo__gpu_client_restart(kevo__gpu_client *c, kevo_error *err)
{
    if (kevo__proc_running(&c->proc))
        kevo__proc_finish(&c->proc, 200, NULL);
    c->busy = false;
    c->deadline = -1;
    c->restarts++;
    return start(c, err);
}

/* Kills the worker after a failure, restarts it, and returns code with a
 * message that says what happened and how the worker ended. */
static kevo_status fail_and_restart(kevo__gpu_client *c, kevo_status code,
                                    const char *what, kevo_error *err)
{
    int status = -1;
    char how[128];
    /* A worker that is dying gets a moment to exit, so that the message
     * can say how it ended; one that passed its deadline is killed. */
    if (kevo__proc_running(&c->proc) && !kevo__proc_reap(&c->proc, &status))
        kevo__proc_finish(&c->proc, code == KEVO_ETIMEDOUT ? 0 : 500, &status);
    kevo__error_set(err, code, "%s (GPU worker %s)", what,
                    kevo__wait_status_text(status, how, sizeof how));
    c->busy = false;
    c->deadline = -1;
    c->restarts++;
    kevo_error restart_err;
    kevo_error_init(&restart_err);
    if (start(c, &restart_err) != KEVO_OK)
        kevo__error_set(err, code, "%s; the restart failed: %s", what,
                        restart_err.text);
    return code;
}

kevo_status kevo__gpu_client_send(kevo__gpu_client *c, const json_t *msg,
                                  const void *payload, size_t len,
                                  int64_t deadline_ms, kevo_error *err)
{
    if (c->busy)
        return kevo__error_set(err, KEVO_ESTATE,
                               "the GPU worker is busy with a request");
    if (!kevo__proc_running(&c->proc)) {
        kevo_status rc = kevo__gpu_client_restart(c, err);
        if (rc != KEVO_OK)
            return rc;
    }
    kevo_error inner;
    kevo_error_init(&inner);
    int left = kevo__ms_left(deadline_ms);
    if (kevo__ipc_send(c->proc.to_fd, msg, payload, len, left < 0 ? -1 : left,
                       &inner) != KEVO_OK) {
        char what[KEVO_ERROR_TEXT_SIZE + 64];
        snprintf(what, sizeof what, "cannot send a request: %s", inner.text);
        return fail_and_restart(c, KEVO_EWORKER, what, err);
    }
    c->busy = true;
    c->sent_ms = kevo__now_ms();
    c->deadline = deadline_ms;
    return KEVO_OK;
}

kevo_status kevo__gpu_client_poll(kevo__gpu_client *c, int timeout_ms,
                                  json_t **reply, kevo_error *err)
{
    *reply = NULL;
    if (!c->busy)
        return kevo__error_set(err, KEVO_ESTATE, "no request is out");
    int64_t start_ms = kevo__now_ms();
    int64_t until = c->deadline;
    if (timeout_ms >= 0 && (until < 0 || start_ms + timeout_ms < until))
        until = start_ms + timeout_ms;
    for (;;) {
        kevo__frame frame = {0};
        bool complete = false;
        kevo_error inner;
        kevo_error_init(&inner);
        kevo_status rc = kevo__ipc_reader_read(c->reader, c->proc.from_fd,
                                               &frame, &complete, &inner);
        if (rc == KEVO_DONE || rc == KEVO_EIO || rc == KEVO_EFORMAT) {
            char what[KEVO_ERROR_TEXT_SIZE + 64];
            snprintf(what, sizeof what, "the GPU worker %s",
                     rc == KEVO_EFORMAT ? inner.text : "ended without a reply");
            return fail_and_restart(c, KEVO_EWORKER, what, err);
        }
        if (rc != KEVO_OK)
            return kevo__error_wrap(err, &inner, "%s", "");
        if (complete) {
            c->busy = false;
            c->deadline = -1;
            *reply = frame.json;
            frame.json = NULL;
            kevo__frame_clear(&frame);
            return KEVO_OK;
        }
        int64_t now = kevo__now_ms();
        if (c->deadline >= 0 && now >= c->deadline) {
            char what[128];
            snprintf(what, sizeof what,
                     "no reply within the deadline: killed %.1f s after the "
                     "request",
                     (double)(now - c->sent_ms) / 1e3);
            return fail_and_restart(c, KEVO_ETIMEDOUT, what, err);
        }
        if (until >= 0 && now >= until)
            return KEVO_OK;
        struct pollfd pfd = {.fd = c->proc.from_fd, .events = POLLIN};
        int wait = kevo__ms_left(until);
        if (poll(&pfd, 1, wait) < 0 && errno != EINTR)
            return kevo__error_errno(err, errno, NULL, "poll");
    }
}

bool kevo__gpu_client_has_task(kevo__gpu_client *c, const char *key)
{
    return kevo__proc_running(&c->proc) &&
           kevo__task_keys_use(&c->tasks, key, NULL);
}

void kevo__gpu_client_forget_task(kevo__gpu_client *c, const char *key)
{
    kevo__task_keys_forget(&c->tasks, key);
}

kevo_status kevo__gpu_client_send_task(kevo__gpu_client *c, const char *key,
                                       const json_t *task, int64_t deadline_ms,
                                       kevo_error *err)
{
    json_t *msg = json_pack("{s:s, s:I, s:s, s:O}", "op", "task", "id",
                            (json_int_t)++c->task_messages, "task_key", key,
                            "task", (json_t *)task);
    json_t *reply = NULL;
    if (!msg)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = kevo__gpu_client_call(c, msg, deadline_ms, &reply, err);
    json_decref(msg);
    if (rc != KEVO_OK)
        return rc;
    const char *op = json_string_value(json_object_get(reply, "op"));
    if (!op || strcmp(op, "task") != 0 ||
        !json_is_true(json_object_get(reply, "ok"))) {
        const char *why = json_string_value(json_object_get(reply, "error"));
        rc = kevo__error_set(err, KEVO_EINVALID,
                             "the GPU worker cannot take the task: %s",
                             why ? why : "it says no more");
    } else {
        rc = kevo__task_keys_put(&c->tasks, key, NULL, err);
    }
    json_decref(reply);
    return rc;
}

kevo_status kevo__gpu_client_call(kevo__gpu_client *c, const json_t *msg,
                                  int64_t deadline_ms, json_t **reply,
                                  kevo_error *err)
{
    *reply = NULL;
    kevo_status rc = kevo__gpu_client_send(c, msg, NULL, 0, deadline_ms, err);
    while (rc == KEVO_OK && !*reply)
        rc = kevo__gpu_client_poll(c, -1, reply, err);
    return rc;
}

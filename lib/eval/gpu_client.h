/*
 * gpu_client.h: the core's side of one GPU worker process
 * (`kevo-worker gpu --device N`): start it and read its hello, send it one
 * request at a time, wait for the reply within a deadline, and kill and
 * restart it when it passes the deadline, dies, or breaks the protocol.
 * It also counts which tasks the worker process holds (proc/task_keys.h),
 * so that each reaches it once.
 */
#ifndef KEVO_GPU_CLIENT_H
#define KEVO_GPU_CLIENT_H

#include <jansson.h>
#include <stdbool.h>

#include "core/kevo_private.h"
#include "proc/ipc.h"
#include "proc/task_keys.h"

typedef struct kevo__gpu_client kevo__gpu_client;

/*
 * kevo__gpu_client_new: starts worker in GPU mode on device and waits up to
 * start_timeout_ms for its hello. Returns the client, or NULL with err set:
 * KEVO_ENODEV when the worker reports no driver or no such device (its
 * message), KEVO_ENOENT when the program cannot be run, KEVO_EWORKER when
 * it dies or does not say hello in time.
 */
kevo__gpu_client *kevo__gpu_client_new(const char *worker, int device,
                                       int start_timeout_ms, kevo_error *err);

/* As kevo__gpu_client_new, and *device_count (when not NULL) gets the
 * number of devices the worker's driver has, from its hello, whether the
 * start succeeded or not; -1 when the worker did not say. */
kevo__gpu_client *kevo__gpu_client_open(const char *worker, int device,
                                        int start_timeout_ms, int *device_count,
                                        kevo_error *err);

/* Ends the worker (end of file, then a kill after a short grace time) and
 * frees the client. NULL does nothing. */
void kevo__gpu_client_free(kevo__gpu_client *c);

/* The hello's "device" object (borrowed) and "driver" version. */
const json_t *kevo__gpu_client_device(const kevo__gpu_client *c);
int kevo__gpu_client_driver(const kevo__gpu_client *c);

/* The hello's "device_count": how many devices the driver has; -1 when
 * the worker did not say. */
int kevo__gpu_client_device_count(const kevo__gpu_client *c);

/* True while a request is out and its reply not yet read. */
bool kevo__gpu_client_busy(const kevo__gpu_client *c);

/*
 * kevo__gpu_client_send: sends msg (borrowed) with payload and marks the
 * client busy until the reply; deadline_ms is a kevo__now_ms() time after
 * which kevo__gpu_client_poll gives up on the reply. Returns KEVO_OK,
 * KEVO_ESTATE while busy, or KEVO_EWORKER when the worker cannot take the
 * request (it is then restarted; the caller may send again).
 */
kevo_status kevo__gpu_client_send(kevo__gpu_client *c, const json_t *msg,
                                  const void *payload, size_t len,
                                  int64_t deadline_ms, kevo_error *err);

/*
 * kevo__gpu_client_poll: waits up to timeout_ms (-1: until the deadline)
 * for the reply to the request out. Returns KEVO_OK with the reply in
 * *reply (the caller's reference) or with *reply NULL when it is not there
 * yet; KEVO_ETIMEDOUT when the deadline passed (the worker was killed and
 * restarted; err says after how long); KEVO_EWORKER when the worker died or
 * broke the protocol (restarted; err says how it ended, "killed by signal
 * 11 (Segmentation fault)"); KEVO_ESTATE when no request is out. After a
 * reply whose verdict says the worker ends itself (a fault), call
 * kevo__gpu_client_restart.
 */
kevo_status kevo__gpu_client_poll(kevo__gpu_client *c, int timeout_ms,
                                  json_t **reply, kevo_error *err);

/* The descriptor to poll() for the reply, or -1. */
int kevo__gpu_client_fd(const kevo__gpu_client *c);

/* The deadline of the request out (kevo__now_ms() time), or -1. */
int64_t kevo__gpu_client_deadline(const kevo__gpu_client *c);

/*
 * kevo__gpu_client_restart: ends the worker (waiting briefly for it to exit
 * on its own) and starts a new one, waiting for its hello. Returns KEVO_OK
 * or the errors of kevo__gpu_client_new.
 */
kevo_status kevo__gpu_client_restart(kevo__gpu_client *c, kevo_error *err);

/* How often the worker was restarted; its process id (0 while none). */
unsigned long kevo__gpu_client_restarts(const kevo__gpu_client *c);
long kevo__gpu_client_pid(const kevo__gpu_client *c);

/*
 * kevo__gpu_client_has_task: true when the worker process now running holds
 * the task of key: it was sent with kevo__gpu_client_send_task since the
 * process started, and not dropped since to make room. The key then counts
 * as used, as the worker counts it when it reads the eval message: call
 * this once for every eval message, just before sending it.
 */
bool kevo__gpu_client_has_task(kevo__gpu_client *c, const char *key);

/*
 * kevo__gpu_client_send_task: sends {"op":"task","id":N,"task_key":key,
 * "task":task} (task borrowed) and waits for the answer until deadline_ms.
 * Returns KEVO_OK once the worker holds the task; KEVO_EINVALID with the
 * worker's words when it cannot take it ("the task: ..."); the errors of
 * kevo__gpu_client_call otherwise (the worker was then restarted and holds
 * no task). KEVO_ESTATE while a request is out.
 */
kevo_status kevo__gpu_client_send_task(kevo__gpu_client *c, const char *key,
                                       const json_t *task, int64_t deadline_ms,
                                       kevo_error *err);

/* kevo__gpu_client_forget_task: the worker said it does not hold key. */
void kevo__gpu_client_forget_task(kevo__gpu_client *c, const char *key);

/*
 * kevo__gpu_client_call: send, then wait for the reply until deadline_ms:
 * for requests outside the evaluation pipeline (peaks). Returns as
 * kevo__gpu_client_poll, never with a NULL reply on KEVO_OK.
 */
kevo_status kevo__gpu_client_call(kevo__gpu_client *c, const json_t *msg,
                                  int64_t deadline_ms, json_t **reply,
                                  kevo_error *err);

#endif

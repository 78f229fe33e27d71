/*
 * worker_client.h: what the GPU tests that drive a real `kevo-worker gpu`
 * process share (worker_client.c). Everything bails out of the test on a
 * failure that is not the kernel's.
 */
#ifndef KEVO_TESTS_WORKER_CLIENT_H
#define KEVO_TESTS_WORKER_CLIENT_H

#include <stdbool.h>

#include <jansson.h>

#include "core/kevo_private.h"
#include "proc/ipc.h"
#include "proc/procpool.h"
#include "proc/task_keys.h"

/* How long a reply may take. */
#define REPLY_TIMEOUT_MS 300000

/* The worker process, and the device's architecture ("sm_90") once
 * wk_start() read the hello. */
extern kevo__proc wk_proc;
extern char wk_arch[32];

/* The id of the next message. */
extern uint64_t wk_next_id;

/* The tasks the worker process holds, counted as the evaluator counts
 * them: emptied by wk_start(), filled by wk_task_send(). */
extern kevo__task_keys wk_tasks;

/* The worker program: $KEVO_WORKER, else worker/kevo-worker under
 * $KEVO_BUILDDIR (or "."), in a new string. */
char *wk_worker_path(void);

/* Starts the worker program and reads its hello; the hello's JSON (the
 * caller's), or a skip (exit 77) when the worker has no GPU. */
json_t *wk_start(const char *worker);

/* Sends msg (taking it) with a payload and returns the reply, or NULL with
 * a diagnostic. */
json_t *wk_call(json_t *msg, const void *payload, size_t len);

/* A kernel compiled for the device, with each launch's lowered name. */
typedef struct wk_compiled {
    char *cubin;
    size_t size;
    json_t *lowered; /* {"kernel": "lowered name"} */
} wk_compiled;

void wk_compile(const kevo_candidate *cand, wk_compiled *out);
void wk_compiled_free(wk_compiled *c);

/* A task as the task message carries it, with its compiled reference and
 * its key in the worker's reference cache. */
typedef struct wk_task {
    kevo_task *task;
    json_t *json;
    wk_compiled ref;
    char key[64];
} wk_task;

/* examples/tasks/NAME.json of the source tree. */
void wk_task_open(wk_task *t, const char *name);

/* A task from JSON text (sources inline); key names it in the worker's
 * reference cache, so each variant needs its own. */
void wk_task_text(wk_task *t, const char *json, const char *key);
void wk_task_close(wk_task *t);

/* A candidate of the task from source. */
kevo_candidate *wk_candidate(const wk_task *t, const char *source);

/* Sends t in a "task" message under t->key; the reply (or NULL). On "ok"
 * the key joins wk_tasks. */
json_t *wk_task_send(const wk_task *t);

/* Evaluates cand at the training shapes (compiled here unless code is
 * given) with the seeds 12345 and 67890; the reply, or NULL. The task goes
 * first in a "task" message when the worker does not hold it. */
json_t *wk_eval(const wk_task *t, const kevo_candidate *cand,
                const wk_compiled *code, bool profile);

/* As wk_eval(), naming t->key whether the worker holds it or not. */
json_t *wk_eval_by_key(const wk_task *t, const kevo_candidate *cand,
                       const wk_compiled *code, bool profile);

/* The reply's verdict ("(none)" without one) and reason (or error, or
 * ""). */
const char *wk_verdict(const json_t *reply);
const char *wk_reason(const json_t *reply);

#endif

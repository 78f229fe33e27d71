/*
 * worker_client.c: driving a real `kevo-worker gpu` process over pipes
 * for the GPU tests (gpu-worker, gpu-dtypes): its start and hello,
 * messages and replies, tasks and kernels compiled with NVRTC for the
 * device, and evaluations.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../suite_util.h"
#include "../tap.h"
#include "worker_client.h"

kevo__proc wk_proc = KEVO__PROC_INIT;
char wk_arch[32];
uint64_t wk_next_id = 1;
kevo__task_keys wk_tasks;

/* Starts the worker and reads its hello; the hello's JSON (the caller's),
 * or a skip when there is no GPU. */
char *wk_worker_path(void)
{
    const char *w = getenv("KEVO_WORKER");
    const char *b = getenv("KEVO_BUILDDIR");
    char *path = w && *w
                     ? kevo__strdup(w)
                     : kevo__path_join(b && *b ? b : ".", "worker/kevo-worker");
    if (!path)
        bail_out("out of memory");
    return path;
}

json_t *wk_start(const char *worker)
{
    char *argv[] = {(char *)worker, "gpu", "--device", "0", NULL};
    kevo__frame f = {0};
    kevo_error err = KEVO__ERROR_INIT;
    kevo__task_keys_init(&wk_tasks, NULL);
    if (kevo__proc_spawn(&wk_proc, worker, argv, &err) != KEVO_OK)
        bail_out("cannot start %s: %s", worker, err.text);
    if (kevo__ipc_recv(wk_proc.from_fd, REPLY_TIMEOUT_MS, &f, &err) != KEVO_OK)
        bail_out("no hello from the worker: %s", err.text);
    if (!json_is_true(json_object_get(f.json, "ok"))) {
        const char *why = json_string_value(json_object_get(f.json, "error"));
        skip_all("the GPU worker has no GPU: %s", why ? why : "?");
    }
    json_t *hello = f.json;
    f.json = NULL;
    kevo__frame_clear(&f);
    return hello;
}

/* Sends msg (taking it) with a payload and returns the reply, or NULL with
 * a diagnostic. */
json_t *wk_call(json_t *msg, const void *payload, size_t len)
{
    kevo__frame f = {0};
    kevo_error err = KEVO__ERROR_INIT;
    json_t *reply = NULL;
    if (!msg)
        bail_out("out of memory");
    if (kevo__ipc_send(wk_proc.to_fd, msg, payload, len, REPLY_TIMEOUT_MS,
                       &err) != KEVO_OK ||
        kevo__ipc_recv(wk_proc.from_fd, REPLY_TIMEOUT_MS, &f, &err) != KEVO_OK)
        diag("no reply: %s", err.text);
    else
        reply = f.json;
    f.json = NULL;
    kevo__frame_clear(&f);
    json_decref(msg);
    return reply;
}

/* ---- tasks and candidates ---------------------------------------------- */

void wk_compiled_free(wk_compiled *c)
{
    free(c->cubin);
    json_decref(c->lowered);
    memset(c, 0, sizeof(*c));
}

void wk_compile(const kevo_candidate *cand, wk_compiled *out)
{
    suite_build b;
    memset(out, 0, sizeof(*out));
    if (!suite_compile(cand, wk_arch, true, &b))
        bail_out("out of memory");
    if (b.status != SUITE_COMPILED)
        bail_out("%s does not compile for %s:\n%s",
                 kevo_candidate_origin(cand) ? kevo_candidate_origin(cand)
                                             : "a kernel",
                 wk_arch, b.log);
    out->lowered = json_object();
    for (size_t i = 0; i < b.nlaunches; i++)
        json_object_set_new(out->lowered, kevo_candidate_launch_kernel(cand, i),
                            json_string(b.lowered[i]));
    out->cubin = b.image;
    out->size = b.size;
    b.image = NULL;
    suite_build_free(&b);
}

/* The message's task and the reference's code, for t->task (taken). */
static void task_ready(wk_task *t, const char *name)
{
    kevo_error err = KEVO__ERROR_INIT;
    char *text = NULL;
    if (kevo_task_to_json(t->task, &text, &err) != KEVO_OK)
        bail_out("%s: %s", name, err.text);
    t->json = json_loads(text, 0, NULL);
    if (!t->json)
        bail_out("%s: kevo_task_to_json wrote bad JSON", name);
    wk_compile(kevo_task_reference(t->task), &t->ref);
    snprintf(t->key, sizeof(t->key), "gpu-worker-%s", name);
    free(text);
}

void wk_task_open(wk_task *t, const char *name)
{
    char file[64];
    kevo_error err = KEVO__ERROR_INIT;
    snprintf(file, sizeof(file), "examples/tasks/%s.json", name);
    char *path = kevo__path_join(tap_srcdir(), file);
    memset(t, 0, sizeof(*t));
    if (!path || kevo_task_load(path, &t->task, &err) != KEVO_OK)
        bail_out("%s: %s", file, err.text);
    task_ready(t, name);
    free(path);
}

/* A task from JSON text (sources inline); key names it in the worker's
 * reference cache, so each variant needs its own. */
void wk_task_text(wk_task *t, const char *json, const char *key)
{
    kevo_error err = KEVO__ERROR_INIT;
    memset(t, 0, sizeof(*t));
    if (kevo_task_load_string(json, key, NULL, &t->task, &err) != KEVO_OK)
        bail_out("%s: %s", key, err.text);
    task_ready(t, key);
}

void wk_task_close(wk_task *t)
{
    kevo_task_free(t->task);
    json_decref(t->json);
    wk_compiled_free(&t->ref);
}

kevo_candidate *wk_candidate(const wk_task *t, const char *source)
{
    kevo_candidate *c = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo_candidate_new_for_task(t->task, source, "test.cu", &c, &err) !=
        KEVO_OK)
        bail_out("a test kernel: %s", err.text);
    return c;
}

json_t *wk_task_send(const wk_task *t)
{
    json_t *reply = wk_call(json_pack("{s:s, s:I, s:s, s:O}", "op", "task",
                                      "id", (json_int_t)wk_next_id++,
                                      "task_key", t->key, "task", t->json),
                            NULL, 0);
    if (json_is_true(json_object_get(reply, "ok")) &&
        kevo__task_keys_put(&wk_tasks, t->key, NULL, NULL) != KEVO_OK)
        bail_out("task key %s is too long", t->key);
    return reply;
}

json_t *wk_eval(const wk_task *t, const kevo_candidate *cand,
                const wk_compiled *code, bool profile)
{
    if (!kevo__task_keys_use(&wk_tasks, t->key, NULL)) {
        json_t *reply = wk_task_send(t);
        if (!json_is_true(json_object_get(reply, "ok")))
            bail_out("the worker does not take the task %s: %s", t->key,
                     wk_reason(reply));
        json_decref(reply);
    }
    return wk_eval_by_key(t, cand, code, profile);
}

json_t *wk_eval_by_key(const wk_task *t, const kevo_candidate *cand,
                       const wk_compiled *code, bool profile)
{
    wk_compiled own = {0};
    if (!code) {
        wk_compile(cand, &own);
        code = &own;
    }
    json_t *msg = json_pack(
        "{s:s, s:I, s:s, s:o, s:s, s:[I,I], s:I, s:I, "
        "s:{s:i, s:i, s:i, s:i, s:i, s:b}, s:b, s:b, s:O, s:O}",
        "op", "eval", "id", (json_int_t)wk_next_id++, "task_key", t->key,
        "candidate", kevo__candidate_to_json(cand), "set", "train", "seeds",
        (json_int_t)12345, (json_int_t)67890, "reference_cubin_bytes",
        (json_int_t)t->ref.size, "candidate_cubin_bytes",
        (json_int_t)code->size, "timing", "warmup", 1, "min_reps", 5,
        "max_reps", 40, "target_spread_ppm", 20000, "time_cap_ms", 300,
        "enabled", 1, "profile", profile, "flush_l2", 1, "reference_kernels",
        t->ref.lowered, "candidate_kernels", code->lowered);
    unsigned char *payload = malloc(t->ref.size + code->size);
    if (!payload)
        bail_out("out of memory");
    memcpy(payload, t->ref.cubin, t->ref.size);
    memcpy(payload + t->ref.size, code->cubin, code->size);
    json_t *reply = wk_call(msg, payload, t->ref.size + code->size);
    free(payload);
    wk_compiled_free(&own);
    return reply;
}

const char *wk_verdict(const json_t *reply)
{
    const char *v = json_string_value(json_object_get(reply, "verdict"));
    return v ? v : "(none)";
}

const char *wk_reason(const json_t *reply)
{
    const char *r = json_string_value(json_object_get(reply, "reason"));
    if (!r)
        r = json_string_value(json_object_get(reply, "error"));
    return r ? r : "";
}

/*
 * compile_message.c: the messages of the compile protocol, as the pool
 * reads and writes them (lib/proc/ipc.h frames; worker/ writes the other
 * ends). A job goes to a process as a "compile" request (source, name,
 * options, kernel names, time limit); the process answers with a
 * "compiled" reply whose payload is the PTX and the cubin, one after the
 * other; the first process's hello tells the NVRTC version, the headers it
 * loaded and how it is confined, which make the cache key's version.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_pool_private.h"

/* ---- the request --------------------------------------------------------- */

json_t *kevo__compile_request_message(const kevo__compile_job *j)
{
    json_t *opts = json_array(), *kernels = json_array(), *msg = NULL;
    bool built = opts && kernels;
    for (size_t k = 0; built && k < j->noptions; k++)
        built = json_array_append_new(opts, json_string(j->options[k])) == 0;
    for (size_t k = 0; built && k < j->nkernels; k++)
        built = json_array_append_new(kernels, json_string(j->kernels[k])) == 0;
    if (built)
        msg = json_pack("{s:s, s:I, s:s, s:s, s:O, s:O, s:i}", "op", "compile",
                        "id", (json_int_t)j->id, "source", j->source, "name",
                        j->name, "options", opts, "kernels", kernels,
                        "timeout_ms", j->timeout_ms);
    json_decref(opts);
    json_decref(kernels);
    return msg;
}

/* ---- the reply ----------------------------------------------------------- */

/* A JSON string member copied, or NULL. */
static char *member_string(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_string(v)
               ? kevo__strndup(json_string_value(v), json_string_length(v))
               : NULL;
}

bool kevo__compile_reply_check(const kevo__frame *f, char *why, size_t why_size)
{
    json_t *m = f->json;
    json_t *jok = json_object_get(m, "ok");
    json_int_t ptx_n = json_integer_value(json_object_get(m, "ptx_bytes"));
    json_int_t cubin_n = json_integer_value(json_object_get(m, "cubin_bytes"));

    if (!json_is_boolean(jok) || ptx_n < 0 || cubin_n < 0 ||
        (json_is_true(jok) &&
         (uint64_t)ptx_n + (uint64_t)cubin_n != f->payload_len)) {
        snprintf(why, why_size,
                 "a \"compiled\" reply without \"ok\" or with lengths that "
                 "do not match its payload of %zu bytes",
                 f->payload_len);
        return false;
    }
    return true;
}

kevo__compile_result *kevo__compile_reply_result(const kevo__frame *f,
                                                 const kevo__compile_job *j,
                                                 const char *nvrtc,
                                                 bool *cacheable)
{
    json_t *m = f->json;
    json_t *jok = json_object_get(m, "ok");
    json_int_t ptx_n = json_integer_value(json_object_get(m, "ptx_bytes"));
    json_int_t cubin_n = json_integer_value(json_object_get(m, "cubin_bytes"));
    json_t *lowered = json_object_get(m, "lowered");
    kevo__compile_result *r = kevo__compile_result_new(j);

    *cacheable = json_is_true(json_object_get(m, "cacheable"));
    if (!r)
        return NULL;
    r->ok = json_is_true(jok);
    r->error = r->ok ? NULL : member_string(m, "error");
    if (!r->ok && !r->error)
        r->error = kevo__strdup("compile failed");
    r->log = member_string(m, "log");
    r->nvrtc = member_string(m, "nvrtc");
    if (!r->nvrtc)
        r->nvrtc = kevo__strdup(nvrtc);
    r->seconds = json_number_value(json_object_get(m, "seconds"));
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
    return r;
}

/* ---- the hello ----------------------------------------------------------- */

kevo_status kevo__compile_hello_read(kevo__compile_pool *pool,
                                     const kevo__frame *f, const char *worker,
                                     kevo_error *err)
{
    const char *op = json_string_value(json_object_get(f->json, "op"));
    const char *nvrtc = json_string_value(json_object_get(f->json, "nvrtc"));
    if (!op || strcmp(op, "hello") != 0)
        return kevo__error_set(err, KEVO_EWORKER,
                               "%s compile: the first message is not a hello",
                               worker);
    if (!json_is_true(json_object_get(f->json, "ok")) || !nvrtc) {
        const char *e = json_string_value(json_object_get(f->json, "error"));
        return kevo__error_set(err, KEVO_EEXTERNAL, "%s compile: %s", worker,
                               e ? e : "the hello has no NVRTC version");
    }
    json_t *h = json_object_get(f->json, "headers");
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
    const char *sandbox =
        json_string_value(json_object_get(f->json, "sandbox"));
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
    if (!pool->nvrtc || !pool->key_version || !pool->sandbox ||
        (dir && !pool->headers_dir))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    return KEVO_OK;
}

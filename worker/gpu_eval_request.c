/*
 * gpu_eval_request.c: the "eval" message as the GPU worker reads it (see
 * gpu_eval.h for the protocol): every field checked, defaults filled in,
 * the payload split into the reference's, the candidate's and the
 * companions' cubins; and the "task" message, whose task the worker keeps
 * by key for the evals that follow.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_eval.h"

#define ORIGIN "eval message"

static kevo_status get_field(const json_t *obj, const char *key, bool required,
                             const json_t **out, kevo_error *err)
{
    *out = json_object_get(obj, key);
    if (!*out && required)
        return kevo__error_set(err, KEVO_EFORMAT, "%s: \"%s\" is missing",
                               ORIGIN, key);
    return KEVO_OK;
}

/* An integer field in [lo, hi], or def when absent. */
static kevo_status get_int(const json_t *obj, const char *key, int64_t def,
                           int64_t lo, int64_t hi, int64_t *out,
                           kevo_error *err)
{
    const json_t *v = json_object_get(obj, key);
    *out = def;
    if (!v)
        return KEVO_OK;
    if (!json_is_integer(v) || json_integer_value(v) < lo ||
        json_integer_value(v) > hi)
        return kevo__error_set(err, KEVO_EFORMAT,
                               "%s: \"%s\" must be an integer from %" PRId64
                               " to %" PRId64,
                               ORIGIN, key, lo, hi);
    *out = json_integer_value(v);
    return KEVO_OK;
}

static kevo_status get_bool(const json_t *obj, const char *key, bool def,
                            bool *out, kevo_error *err)
{
    const json_t *v = json_object_get(obj, key);
    *out = def;
    if (!v)
        return KEVO_OK;
    if (!json_is_boolean(v))
        return kevo__error_set(err, KEVO_EFORMAT,
                               "%s: \"%s\" must be true or false", ORIGIN, key);
    *out = json_is_true(v);
    return KEVO_OK;
}

static kevo_status parse_timing(const json_t *t, kevo__timing_config *c,
                                kevo_error *err)
{
    int64_t warmup, min_reps, max_reps;
    const json_t *spread = json_object_get(t, "target_spread");
    const json_t *cap = json_object_get(t, "cap_ms");
    kevo_status rc = get_int(t, "warmup", 3, 0, 1000, &warmup, err);
    if (rc == KEVO_OK)
        rc = get_int(t, "min_reps", 10, 1, 100000, &min_reps, err);
    if (rc == KEVO_OK)
        rc = get_int(t, "max_reps", 300, 1, 100000, &max_reps, err);
    if (rc == KEVO_OK)
        rc = get_bool(t, "enabled", true, &c->enabled, err);
    if (rc != KEVO_OK)
        return rc;
    if ((spread &&
         (!json_is_number(spread) || json_number_value(spread) < 0)) ||
        (cap && (!json_is_number(cap) || json_number_value(cap) <= 0)))
        return kevo__error_set(err, KEVO_EFORMAT,
                               "%s: \"timing\": target_spread must be a "
                               "number >= 0 and cap_ms one > 0",
                               ORIGIN);
    c->warmup = (int)warmup;
    c->min_reps = (int)min_reps;
    c->max_reps = (int)(max_reps < min_reps ? min_reps : max_reps);
    c->target_spread = spread ? json_number_value(spread) : 0.01;
    c->cap_ms = cap ? json_number_value(cap) : 1000.0;
    return KEVO_OK;
}

/* "companions": [{"candidate": {...}, "cubin_bytes": N, "kernels": {...},
 * "check": bool, "shapes": [i, ...]}, ...]; the sum of their cubin sizes
 * in *extra. */
static kevo_status parse_companions(const json_t *m, kevo__eval_req *r,
                                    uint64_t *extra, kevo_error *err)
{
    const json_t *arr = json_object_get(m, "companions");
    *extra = 0;
    if (!arr)
        return KEVO_OK;
    if (!json_is_array(arr))
        return kevo__error_set(err, KEVO_EFORMAT,
                               "%s: \"companions\" must be an array", ORIGIN);
    r->ncomp = json_array_size(arr);
    r->comp = calloc(r->ncomp ? r->ncomp : 1, sizeof(*r->comp));
    if (!r->comp)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    for (size_t k = 0; k < r->ncomp; k++) {
        const json_t *c = json_array_get(arr, k);
        kevo__companion_req *q = &r->comp[k];
        int64_t size;
        kevo_status rc =
            json_is_object(c)
                ? get_int(c, "cubin_bytes", -1, 1, INT64_MAX, &size, err)
                : kevo__error_set(err, KEVO_EFORMAT,
                                  "%s: companion %zu must be an object", ORIGIN,
                                  k);
        if (rc == KEVO_OK)
            rc = get_bool(c, "check", true, &q->check, err);
        if (rc != KEVO_OK)
            return rc;
        q->candidate = json_object_get(c, "candidate");
        q->kernels = json_object_get(c, "kernels");
        q->shapes = json_object_get(c, "shapes");
        q->size = (size_t)size;
        if (size < 0 || !json_is_object(q->candidate) ||
            (q->shapes && !json_is_array(q->shapes)))
            return kevo__error_set(err, KEVO_EFORMAT,
                                   "%s: companion %zu needs \"candidate\" "
                                   "(an object), \"cubin_bytes\" and, if "
                                   "any, \"shapes\" as an array",
                                   ORIGIN, k);
        *extra += (uint64_t)size;
    }
    return KEVO_OK;
}

kevo_status kevo__eval_req_parse(const kevo__frame *f, kevo__eval_req *r,
                                 kevo_error *err)
{
    const json_t *m = f->json, *v, *seeds, *timing;
    int64_t rsize, csize;
    kevo_status rc;
    memset(r, 0, sizeof(*r));
    r->id = json_object_get(m, "id");
    if (!json_is_integer(r->id))
        return kevo__error_set(err, KEVO_EFORMAT,
                               "%s: \"id\" must be an integer", ORIGIN);
    if ((rc = get_field(m, "task_key", true, &v, err)) != KEVO_OK ||
        (rc = get_field(m, "candidate", true, &r->candidate, err)) != KEVO_OK)
        return rc;
    r->task_key = json_string_value(v);
    if (!json_is_object(r->candidate) || !r->task_key)
        return kevo__error_set(err, KEVO_EFORMAT,
                               "%s: \"candidate\" must be an object and "
                               "\"task_key\" a string",
                               ORIGIN);
    const char *set = json_string_value(json_object_get(m, "set"));
    if (!set || strcmp(set, "train") == 0)
        r->set = KEVO_SHAPES_TRAIN;
    else if (strcmp(set, "held_out") == 0)
        r->set = KEVO_SHAPES_HELD_OUT;
    else
        return kevo__error_set(err, KEVO_EFORMAT,
                               "%s: \"set\" must be \"train\" or "
                               "\"held_out\"",
                               ORIGIN);
    seeds = json_object_get(m, "seeds");
    if (!json_is_array(seeds) || json_array_size(seeds) != 2 ||
        !json_is_integer(json_array_get(seeds, 0)) ||
        !json_is_integer(json_array_get(seeds, 1)))
        return kevo__error_set(err, KEVO_EFORMAT,
                               "%s: \"seeds\" must be two integers", ORIGIN);
    for (int k = 0; k < 2; k++)
        r->seeds[k] = (uint64_t)json_integer_value(json_array_get(seeds, k));
    if ((rc = get_int(m, "reference_cubin_bytes", -1, 1, INT64_MAX, &rsize,
                      err)) != KEVO_OK ||
        (rc = get_int(m, "candidate_cubin_bytes", -1, 1, INT64_MAX, &csize,
                      err)) != KEVO_OK)
        return rc;
    uint64_t extra = 0;
    if ((rc = parse_companions(m, r, &extra, err)) != KEVO_OK)
        return rc;
    if (rsize < 0 || csize < 0 ||
        (uint64_t)rsize + (uint64_t)csize + extra != f->payload_len)
        return kevo__error_set(err, KEVO_EFORMAT,
                               "%s: reference_cubin_bytes, "
                               "candidate_cubin_bytes and the companions' "
                               "cubin_bytes must add up to the payload's "
                               "%zu bytes",
                               ORIGIN, f->payload_len);
    r->ref_cubin = f->payload;
    r->ref_size = (size_t)rsize;
    r->cand_cubin = f->payload + rsize;
    r->cand_size = (size_t)csize;
    const unsigned char *at = r->cand_cubin + csize;
    for (size_t k = 0; k < r->ncomp; k++) {
        r->comp[k].cubin = at;
        at += r->comp[k].size;
    }
    r->ref_kernels = json_object_get(m, "reference_kernels");
    r->cand_kernels = json_object_get(m, "candidate_kernels");
    timing = json_object_get(m, "timing");
    if (timing && !json_is_object(timing))
        return kevo__error_set(err, KEVO_EFORMAT,
                               "%s: \"timing\" must be an object", ORIGIN);
    rc = parse_timing(timing, &r->timing, err);
    if (rc == KEVO_OK)
        rc = get_bool(m, "profile", false, &r->profile, err);
    if (rc == KEVO_OK)
        rc = get_bool(m, "flush_l2", true, &r->timing.flush_l2, err);
    if (rc == KEVO_OK)
        rc = get_bool(m, "time_reference", false, &r->time_reference, err);
    return rc;
}

/* ---- the task message ---------------------------------------------------- */

static void free_task(void *task)
{
    kevo_task_free(task);
}

void kevo__gpu_cache_init(kevo__gpu_cache *cache)
{
    memset(cache, 0, sizeof(*cache));
    kevo__task_keys_init(&cache->tasks, free_task);
}

/* Loads the message's task and keeps it under its key. */
static kevo_status take_task(kevo__gpu_cache *cache, const json_t *m,
                             const char **key, kevo_error *err)
{
    const json_t *task = json_object_get(m, "task");
    *key = json_string_value(json_object_get(m, "task_key"));
    if (!json_is_integer(json_object_get(m, "id")) || !*key ||
        !json_is_object(task))
        return kevo__error_set(err, KEVO_EFORMAT,
                               "task message: \"id\" must be an integer, "
                               "\"task_key\" a string and \"task\" an "
                               "object");
    char *text = json_dumps(task, JSON_COMPACT);
    kevo_task *t = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    kevo_status rc = text
                         ? kevo_task_load_string(text, "the task", NULL, &t, &e)
                         : kevo__error_set(&e, KEVO_ENOMEM, "out of memory");
    free(text);
    if (rc == KEVO_OK)
        rc = kevo__task_keys_put(&cache->tasks, *key, t, &e);
    if (rc != KEVO_OK)
        return kevo__error_wrap(err, &e, "%s", "");
    return KEVO_OK;
}

int kevo__gpu_task(kevo__gpu_cache *cache, const kevo__frame *f, int out_fd)
{
    kevo_error e = KEVO__ERROR_INIT;
    const char *key = NULL;
    json_t *id = json_object_get(f->json, "id");
    json_t *reply;
    if (take_task(cache, f->json, &key, &e) == KEVO_OK)
        reply = json_pack("{s:s, s:O?, s:b, s:s, s:I}", "op", "task", "id", id,
                          "ok", 1, "task_key", key, "tasks",
                          (json_int_t)kevo__task_keys_count(&cache->tasks));
    else
        reply = json_pack("{s:s, s:O?, s:b, s:s}", "op", "task", "id", id, "ok",
                          0, "error", e.text);
    return kevo__gpu_send(out_fd, reply) == KEVO_OK ? 0 : 1;
}

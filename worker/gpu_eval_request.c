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
#include "proc/eval_options.h"

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

/* The "timing" object (t may be NULL): the evaluator's timing options
 * under their names, read with the evaluator's option table (its defaults
 * for a missing field, its bounds), and "enabled". */
static kevo_status parse_timing(const json_t *t, kevo__timing_config *c,
                                kevo_error *err)
{
    static const kevo_eval_option opts[] = KEVO__EVAL_TIMING_OPTIONS;
    int64_t v[KEVO__EVAL_OPTION_COUNT] = {0};
    kevo_error inner = KEVO__ERROR_INIT;
    const char *key;
    json_t *x;
    json_object_foreach ((json_t *)t, key, x) {
        int opt = -1;
        bool known = strcmp(key, "enabled") == 0;
        if (kevo__option_find(&kevo__eval_options, key, &opt, NULL) == KEVO_OK)
            for (size_t i = 0; i < KEVO_ARRAY_SIZE(opts); i++)
                known = known || (int)opts[i] == opt;
        if (!known)
            return kevo__error_set(err, KEVO_EFORMAT,
                                   "%s: \"timing\": unknown field \"%s\"",
                                   ORIGIN, key);
    }
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(opts); i++) {
        if (kevo__option_read(&kevo__eval_options, (int)opts[i], t, &v[opts[i]],
                              &inner) != KEVO_OK)
            return kevo__error_set(err, KEVO_EFORMAT, "%s: \"timing\": %s",
                                   ORIGIN, inner.text);
    }
    kevo_status rc = get_bool(t, "enabled", true, &c->enabled, err);
    if (rc != KEVO_OK)
        return rc;
    int64_t min_reps = v[KEVO_EVAL_MIN_REPS], max_reps = v[KEVO_EVAL_MAX_REPS];
    c->warmup = (int)v[KEVO_EVAL_WARMUP];
    c->min_reps = (int)min_reps;
    c->max_reps = (int)(max_reps < min_reps ? min_reps : max_reps);
    c->target_spread = (double)v[KEVO_EVAL_TARGET_SPREAD_PPM] / 1e6;
    c->cap_ms = (double)v[KEVO_EVAL_TIME_CAP_MS];
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
    int64_t bsize;
    if ((rc = get_int(m, "reference_cubin_bytes", -1, 1, INT64_MAX, &rsize,
                      err)) != KEVO_OK ||
        (rc = get_int(m, "baseline_cubin_bytes", 0, 1, INT64_MAX, &bsize,
                      err)) != KEVO_OK ||
        (rc = get_int(m, "candidate_cubin_bytes", -1, 1, INT64_MAX, &csize,
                      err)) != KEVO_OK)
        return rc;
    uint64_t extra = 0;
    if ((rc = parse_companions(m, r, &extra, err)) != KEVO_OK)
        return rc;
    if (rsize < 0 || csize < 0 ||
        (uint64_t)rsize + (uint64_t)bsize + (uint64_t)csize + extra !=
            f->payload_len)
        return kevo__error_set(err, KEVO_EFORMAT,
                               "%s: reference_cubin_bytes, "
                               "baseline_cubin_bytes, candidate_cubin_bytes "
                               "and the companions' cubin_bytes must add up "
                               "to the payload's %zu bytes",
                               ORIGIN, f->payload_len);
    r->ref_cubin = f->payload;
    r->ref_size = (size_t)rsize;
    r->base_cubin = bsize > 0 ? f->payload + rsize : NULL;
    r->base_size = (size_t)bsize;
    r->base_kernels = json_object_get(m, "baseline_kernels");
    r->cand_cubin = f->payload + rsize + bsize;
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
    int64_t profile = 0, flush_l2 = 1;
    kevo_error inner = KEVO__ERROR_INIT;
    if (rc == KEVO_OK &&
        (kevo__option_read(&kevo__eval_options, KEVO_EVAL_PROFILE, m, &profile,
                           &inner) != KEVO_OK ||
         kevo__option_read(&kevo__eval_options, KEVO_EVAL_FLUSH_L2, m,
                           &flush_l2, &inner) != KEVO_OK))
        rc = kevo__error_set(err, KEVO_EFORMAT, "%s: %s", ORIGIN, inner.text);
    r->profile = profile != 0;
    r->timing.flush_l2 = flush_l2 != 0;
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

/*
 * eval_result_json.c: an evaluation result as JSON. The JSON says
 * everything (the measurements, the figures derived from them, the
 * descriptors, the kernel records and the phases); eval_result_read.c
 * reads it back. A value that was not measured is null; an infinite one
 * is the string "inf" or "-inf".
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_private.h"
#include "model/candidate_private.h"
#include "model/descriptor.h"

json_t *kevo__json_real_nf(double x)
{
    if (isnan(x))
        return json_null();
    if (isinf(x))
        return json_string(x > 0 ? "inf" : "-inf");
    return json_real(x);
}

kevo_status kevo__json_number_nf(const json_t *v, const char *origin,
                                 const kevo_jpath *path, double *out,
                                 kevo_error *err)
{
    if (json_is_null(v)) {
        *out = NAN;
        return KEVO_OK;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (strcmp(s, "nan") == 0)
            *out = NAN;
        else if (strcmp(s, "inf") == 0)
            *out = INFINITY;
        else if (strcmp(s, "-inf") == 0)
            *out = -INFINITY;
        else
            return kevo__json_fail(err, KEVO_EINVALID, origin, path,
                                   "expected a number, null, \"inf\", "
                                   "\"-inf\" or \"nan\", found \"%s\"",
                                   s);
        return KEVO_OK;
    }
    return kevo__json_number(v, origin, path, out, err);
}

/* ---- writing ------------------------------------------------------------ */

const char *const kevo__eval_phase_names[] = {"compile", "transfer", "run",
                                              "time",    "total",    NULL};

static bool put(json_t *obj, const char *key, json_t *v)
{
    return v && json_object_set_new(obj, key, v) == 0;
}

static const char *set_name(kevo_shape_set set)
{
    return set == KEVO_SHAPES_HELD_OUT ? "held_out" : "train";
}

static json_t *time_json(const kevo_eval_shape *s)
{
    const kevo_shape_result *r = &s->r;
    if (isnan(r->time))
        return json_null();
    json_t *o = json_object();
    if (!o || !put(o, "samples", json_array()))
        goto fail;
    json_t *samples = json_object_get(o, "samples");
    for (size_t i = 0; i < s->nsamples; i++) {
        if (json_array_append_new(samples, kevo__json_real_nf(s->samples[i])))
            goto fail;
    }
    if (put(o, "median", kevo__json_real_nf(r->time)) &&
        put(o, "min", kevo__json_real_nf(r->time_min)) &&
        put(o, "max", kevo__json_real_nf(r->time_max)) &&
        put(o, "mean", kevo__json_real_nf(s->time_mean)) &&
        put(o, "cv", kevo__json_real_nf(r->time_cv)) &&
        put(o, "spread", kevo__json_real_nf(r->time_spread)) &&
        put(o, "reps", json_integer(r->reps)) &&
        put(o, "kernels_per_rep", json_integer(r->kernels_per_rep)))
        return o;
fail:
    json_decref(o);
    return NULL;
}

static json_t *worst_json(const kevo_eval_shape *s)
{
    const kevo_shape_result *r = &s->r;
    if (!s->has_worst)
        return json_null();
    json_t *o = json_pack(
        "{s:o,s:I,s:o,s:o}", "arg",
        s->worst_arg ? json_string(s->worst_arg) : json_null(), "index",
        (json_int_t)r->worst_index, "got", kevo__json_real_nf(r->worst_got),
        "want", kevo__json_real_nf(r->worst_want));
    /* Written since the worker sends it: left out when unknown, so that
     * results written before read back to the same text. */
    if (o && !isnan(r->worst_tol) &&
        json_object_set_new(o, "tol", kevo__json_real_nf(r->worst_tol))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *profile_json(const kevo_eval_shape *s)
{
    const kevo_shape_result *r = &s->r;
    if (!s->has_profile)
        return json_null();
    return json_pack("{s:o,s:o,s:o}", "dram_read_bytes",
                     kevo__json_real_nf(r->dram_read_bytes), "dram_write_bytes",
                     kevo__json_real_nf(r->dram_write_bytes),
                     "achieved_occupancy",
                     kevo__json_real_nf(r->achieved_occupancy));
}

static json_t *shape_json(const kevo_eval_result *res, const kevo_eval_shape *s)
{
    const kevo_shape_result *r = &s->r;
    json_t *o = json_object();
    if (!o || !put(o, "dims", json_object()))
        goto fail;
    json_t *dims = json_object_get(o, "dims");
    for (size_t d = 0; d < s->ndims; d++) {
        if (!put(dims, s->dim_names[d], json_integer(s->dim_values[d])))
            goto fail;
    }
    if (put(o, "worst", worst_json(s)) && put(o, "profile", profile_json(s)) &&
        put(o, "set", json_string(set_name(res->set))) &&
        put(o, "index", json_integer((json_int_t)r->index)) &&
        put(o, "correct", json_boolean(r->correct)) &&
        put(o, "max_abs_err", kevo__json_real_nf(r->max_abs_err)) &&
        put(o, "max_rel_err", kevo__json_real_nf(r->max_rel_err)) &&
        put(o, "bad_elements", json_integer((json_int_t)r->bad_elements)) &&
        put(o, "time", time_json(s)) &&
        put(o, "seed_time", kevo__json_real_nf(r->seed_time)) &&
        put(o, "reference_time", kevo__json_real_nf(r->reference_time)) &&
        put(o, "seed_spread", kevo__json_real_nf(r->seed_spread)) &&
        put(o, "reference_spread", kevo__json_real_nf(r->reference_spread)) &&
        put(o, "paired", json_boolean(r->paired)) &&
        put(o, "l2_explained", json_boolean(r->l2_explained)) &&
        put(o, "bytes", kevo__json_real_nf(r->bytes)) &&
        put(o, "flops", kevo__json_real_nf(r->flops)) &&
        put(o, "floor", kevo__json_real_nf(r->floor)) &&
        put(o, "efficiency", kevo__json_real_nf(r->efficiency)) &&
        put(o, "bound",
            s->bound_known ? json_string(kevo__bound_name(r->bound))
                           : json_null()) &&
        put(o, "gbytes_per_s", kevo__json_real_nf(r->gbytes_per_s)) &&
        put(o, "gflops_per_s", kevo__json_real_nf(r->gflops_per_s)) &&
        put(o, "suspicious", json_boolean(s->suspicious)) &&
        put(o, "score", kevo__json_real_nf(s->score)))
        return o;
fail:
    json_decref(o);
    return NULL;
}

json_t *kevo__eval_result_to_json_value(const kevo_eval_result *res)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    /* json_object_set_new() takes the value also when it fails, so every
     * value is made where it is put. */
    if (!put(o, "shapes", json_array()) ||
        !put(o, "descriptors", json_object()) ||
        !put(o, "seconds", json_object()) ||
        !put(o, "candidate",
             res->cand ? kevo__candidate_to_json(res->cand) : json_null()))
        goto fail;
    json_t *js = json_object_get(o, "shapes");
    for (size_t i = 0; i < res->nshapes; i++) {
        if (json_array_append_new(js, shape_json(res, &res->shapes[i])))
            goto fail;
    }
    json_t *jd = json_object_get(o, "descriptors");
    const kevo_descriptor_def *d;
    for (size_t i = 0;
         i < KEVO__DESCRIPTORS_MAX && (d = kevo__descriptor_at(i)) != NULL;
         i++) {
        if (res->has_descriptor[i] &&
            !put(jd, d->name, kevo__json_real_nf(res->descriptor[i])))
            goto fail;
    }
    json_t *jsec = json_object_get(o, "seconds");
    for (size_t i = 0; i <= KEVO_PHASE_TOTAL; i++) {
        if (!put(jsec, kevo__eval_phase_names[i],
                 kevo__json_real_nf(res->seconds[i])))
            goto fail;
    }
    if (!put(o, "task", json_string(res->task)) ||
        !put(o, "ticket", json_integer((json_int_t)res->ticket)) ||
        !put(o, "set", json_string(set_name(res->set))) ||
        !put(o, "verdict", json_string(kevo_verdict_name(res->verdict))) ||
        (res->verdict != KEVO_VERDICT_OK && res->reason &&
         !put(o, "reason", json_string(res->reason))) ||
        (res->failed_shape >= 0 &&
         !put(o, "failed_shape", json_integer(res->failed_shape))) ||
        (res->describe_error &&
         !put(o, "describe_error", json_string(res->describe_error))) ||
        (res->device && !put(o, "device", json_string(res->device))) ||
        !put(o, "compile",
             json_pack("{s:b,s:b,s:s}", "ok", res->compiled, "cached",
                       res->cached, "log", res->compile_log)) ||
        !put(o, "fitness",
             json_pack("{s:s,s:o,s:b,s:o}", "function", res->fitness_fn->name,
                       "value", kevo__json_real_nf(res->fitness), "suspicious",
                       res->suspicious, "suspicious_level",
                       kevo__json_real_nf(res->suspicious_level))) ||
        !put(o, "speedup",
             json_pack("{s:o,s:o}", "seed",
                       kevo__json_real_nf(res->speedup_seed), "reference",
                       kevo__json_real_nf(res->speedup_reference))) ||
        !put(o, "ceilings",
             json_pack(
                 "{s:o,s:s,s:o,s:o}", "bandwidth",
                 kevo__json_real_nf(res->bandwidth), "peak",
                 kevo_peak_name(res->peak), "peak_value",
                 kevo__json_real_nf(res->peak_value), "launch",
                 kevo__json_real_nf(res->launch > 0 ? res->launch : NAN))) ||
        !put(o, "kernels",
             res->kernels ? json_deep_copy(res->kernels) : json_array()))
        goto fail;
    return o;
fail:
    json_decref(o);
    return NULL;
}

kevo_status kevo_eval_result_to_json(const kevo_eval_result *res, char **json,
                                     kevo_error *err)
{
    if (json)
        *json = NULL;
    if (!res || !json)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_eval_result_to_json: NULL argument");
    json_t *v = kevo__eval_result_to_json_value(res);
    *json = v ? kevo__json_dump(v) : NULL;
    json_decref(v);
    if (!*json)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    return KEVO_OK;
}

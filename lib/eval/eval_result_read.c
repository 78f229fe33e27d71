/*
 * eval_result_read.c: an evaluation result read back from the JSON that
 * eval_result_json.c writes (for checkpoints). Every key is checked, the
 * measurements are read and the derived figures computed again, so that
 * the result writes the same text.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_private.h"
#include "model/candidate_private.h"
#include "model/descriptor.h"

static const char *set_name(kevo_shape_set set)
{
    return set == KEVO_SHAPES_HELD_OUT ? "held_out" : "train";
}

typedef struct reader {
    const char *origin;
    kevo_jpath *path;
    kevo_error *err;
} reader;

/* The member key of obj, or a "missing" error (NULL). */
static const json_t *need(reader *rd, const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        kevo__json_fail(rd->err, KEVO_EINVALID, rd->origin, rd->path,
                        "\"%s\" is missing", key);
    return v;
}

static kevo_status get_number(reader *rd, const json_t *obj, const char *key,
                              double *out)
{
    const json_t *v = need(rd, obj, key);
    if (!v)
        return KEVO_EINVALID;
    size_t mark = kevo__jpath_key(rd->path, key);
    kevo_status rc =
        kevo__json_number_nf(v, rd->origin, rd->path, out, rd->err);
    kevo__jpath_pop(rd->path, mark);
    return rc;
}

static kevo_status get_int(reader *rd, const json_t *obj, const char *key,
                           int64_t lo, int64_t *out)
{
    const json_t *v = need(rd, obj, key);
    if (!v)
        return KEVO_EINVALID;
    size_t mark = kevo__jpath_key(rd->path, key);
    kevo_status rc = kevo__json_int(v, rd->origin, rd->path, out, rd->err);
    if (rc == KEVO_OK && *out < lo)
        rc = kevo__json_fail(rd->err, KEVO_EINVALID, rd->origin, rd->path,
                             "%" PRId64 " is below %" PRId64, *out, lo);
    kevo__jpath_pop(rd->path, mark);
    return rc;
}

static kevo_status get_bool(reader *rd, const json_t *obj, const char *key,
                            bool *out)
{
    const json_t *v = need(rd, obj, key);
    if (!v)
        return KEVO_EINVALID;
    if (!json_is_boolean(v)) {
        size_t mark = kevo__jpath_key(rd->path, key);
        kevo__json_fail(rd->err, KEVO_EINVALID, rd->origin, rd->path,
                        "expected true or false, found %s",
                        kevo__json_type_name(v));
        kevo__jpath_pop(rd->path, mark);
        return KEVO_EINVALID;
    }
    *out = json_is_true(v);
    return KEVO_OK;
}

/* A string member (NULL allowed when nullable) copied into *out. */
static kevo_status get_string(reader *rd, const json_t *obj, const char *key,
                              bool nullable, char **out)
{
    const json_t *v = need(rd, obj, key);
    const char *s;
    if (!v)
        return KEVO_EINVALID;
    if (nullable && json_is_null(v))
        return KEVO_OK;
    size_t mark = kevo__jpath_key(rd->path, key);
    kevo_status rc = kevo__json_string(v, rd->origin, rd->path, &s, rd->err);
    kevo__jpath_pop(rd->path, mark);
    if (rc != KEVO_OK)
        return rc;
    if (!(*out = kevo__strdup(s)))
        return kevo__error_set(rd->err, KEVO_ENOMEM, "out of memory");
    return KEVO_OK;
}

/* Checks that v is an object (or null, when nullable) with only the keys
 * known; *present says which it was. */
static kevo_status object_at(reader *rd, const json_t *v, const char *key,
                             const char *const *known, bool nullable,
                             bool *present)
{
    size_t mark = kevo__jpath_key(rd->path, key);
    kevo_status rc = KEVO_OK;
    *present = !json_is_null(v);
    if (!*present && !nullable)
        rc = kevo__json_object(v, rd->origin, rd->path, rd->err);
    else if (*present && (rc = kevo__json_object(v, rd->origin, rd->path,
                                                 rd->err)) == KEVO_OK)
        rc = kevo__json_check_keys(v, known, rd->origin, rd->path, rd->err);
    kevo__jpath_pop(rd->path, mark);
    return rc;
}

/* Runs call with the path at key; returns from the caller on failure. */
#define AT(rd, key, call)                                                      \
    do {                                                                       \
        size_t mark_ = kevo__jpath_key((rd)->path, key);                       \
        kevo_status rc_ = (call);                                              \
        kevo__jpath_pop((rd)->path, mark_);                                    \
        if (rc_ != KEVO_OK)                                                    \
            return rc_;                                                        \
    } while (0)

static kevo_status read_time(reader *rd, const json_t *t, kevo_eval_shape *s)
{
    static const char *const known[] = {
        "median",          "min",     "max", "mean", "cv", "spread", "reps",
        "kernels_per_rep", "samples", NULL};
    bool present;
    kevo_status rc;
    kevo_shape_result *r = &s->r;
    int64_t reps, kpr;
    if ((rc = object_at(rd, t, "time", known, true, &present)) != KEVO_OK ||
        !present)
        return rc;
    size_t mark = kevo__jpath_key(rd->path, "time");
    if ((rc = get_number(rd, t, "median", &r->time)) != KEVO_OK ||
        (rc = get_number(rd, t, "min", &r->time_min)) != KEVO_OK ||
        (rc = get_number(rd, t, "max", &r->time_max)) != KEVO_OK ||
        (rc = get_number(rd, t, "mean", &s->time_mean)) != KEVO_OK ||
        (rc = get_number(rd, t, "cv", &r->time_cv)) != KEVO_OK ||
        (rc = get_number(rd, t, "spread", &r->time_spread)) != KEVO_OK ||
        (rc = get_int(rd, t, "reps", 0, &reps)) != KEVO_OK ||
        (rc = get_int(rd, t, "kernels_per_rep", 0, &kpr)) != KEVO_OK)
        goto done;
    r->reps = (uint32_t)reps;
    r->kernels_per_rep = (uint32_t)kpr;
    const json_t *samples = need(rd, t, "samples");
    if (!samples) {
        rc = KEVO_EINVALID;
        goto done;
    }
    size_t m2 = kevo__jpath_key(rd->path, "samples");
    rc = kevo__json_array(samples, rd->origin, rd->path, rd->err);
    size_t n = rc == KEVO_OK ? json_array_size(samples) : 0;
    if (n && !(s->samples = malloc(n * sizeof(*s->samples))))
        rc = kevo__error_set(rd->err, KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; rc == KEVO_OK && i < n; i++) {
        size_t m3 = kevo__jpath_index(rd->path, i);
        rc = kevo__json_number_nf(json_array_get(samples, i), rd->origin,
                                  rd->path, &s->samples[i], rd->err);
        kevo__jpath_pop(rd->path, m3);
        s->nsamples = i + 1;
    }
    kevo__jpath_pop(rd->path, m2);
done:
    kevo__jpath_pop(rd->path, mark);
    return rc;
}

static kevo_status read_worst(reader *rd, const json_t *w, kevo_eval_shape *s)
{
    static const char *const known[] = {"arg",  "index", "got",
                                        "want", "tol",   NULL};
    bool present;
    kevo_status rc;
    int64_t index;
    if ((rc = object_at(rd, w, "worst", known, true, &present)) != KEVO_OK ||
        !present)
        return rc;
    size_t mark = kevo__jpath_key(rd->path, "worst");
    if ((rc = get_string(rd, w, "arg", true, &s->worst_arg)) == KEVO_OK &&
        (rc = get_int(rd, w, "index", 0, &index)) == KEVO_OK &&
        (rc = get_number(rd, w, "got", &s->r.worst_got)) == KEVO_OK &&
        (rc = get_number(rd, w, "want", &s->r.worst_want)) == KEVO_OK &&
        (!json_object_get(w, "tol") ||
         (rc = get_number(rd, w, "tol", &s->r.worst_tol)) == KEVO_OK)) {
        s->r.worst_index = (uint64_t)index;
        s->has_worst = true;
    }
    kevo__jpath_pop(rd->path, mark);
    return rc;
}

static kevo_status read_profile(reader *rd, const json_t *p, kevo_eval_shape *s)
{
    static const char *const known[] = {"dram_read_bytes", "dram_write_bytes",
                                        "achieved_occupancy", NULL};
    bool present;
    kevo_status rc;
    if ((rc = object_at(rd, p, "profile", known, true, &present)) != KEVO_OK ||
        !present)
        return rc;
    size_t mark = kevo__jpath_key(rd->path, "profile");
    if ((rc = get_number(rd, p, "dram_read_bytes", &s->r.dram_read_bytes)) ==
            KEVO_OK &&
        (rc = get_number(rd, p, "dram_write_bytes", &s->r.dram_write_bytes)) ==
            KEVO_OK &&
        (rc = get_number(rd, p, "achieved_occupancy",
                         &s->r.achieved_occupancy)) == KEVO_OK)
        s->has_profile = true;
    kevo__jpath_pop(rd->path, mark);
    return rc;
}

static kevo_status read_dims(reader *rd, const json_t *dims, kevo_eval_shape *s)
{
    size_t n = json_object_size(dims);
    const char *key;
    const json_t *v;
    AT(rd, "dims", kevo__json_object(dims, rd->origin, rd->path, rd->err));
    s->dim_names = calloc(n ? n : 1, sizeof(*s->dim_names));
    s->dim_values = calloc(n ? n : 1, sizeof(*s->dim_values));
    if (!s->dim_names || !s->dim_values)
        return kevo__error_set(rd->err, KEVO_ENOMEM, "out of memory");
    size_t mark = kevo__jpath_key(rd->path, "dims");
    kevo_status rc = KEVO_OK;
    json_object_foreach ((json_t *)dims, key, v) {
        size_t m2 = kevo__jpath_key(rd->path, key);
        rc = kevo__json_int(v, rd->origin, rd->path, &s->dim_values[s->ndims],
                            rd->err);
        kevo__jpath_pop(rd->path, m2);
        if (rc != KEVO_OK)
            break;
        if (!(s->dim_names[s->ndims] = kevo__strdup(key))) {
            rc = kevo__error_set(rd->err, KEVO_ENOMEM, "out of memory");
            break;
        }
        s->ndims++;
    }
    kevo__jpath_pop(rd->path, mark);
    return rc;
}

static kevo_status read_shape(reader *rd, kevo_eval_result *res,
                              const json_t *o, kevo_eval_shape *s)
{
    static const char *const known[] = {"set",
                                        "index",
                                        "dims",
                                        "correct",
                                        "max_abs_err",
                                        "max_rel_err",
                                        "bad_elements",
                                        "worst",
                                        "time",
                                        "seed_time",
                                        "reference_time",
                                        "seed_spread",
                                        "reference_spread",
                                        "paired",
                                        "l2_explained",
                                        "bytes",
                                        "flops",
                                        "profile",
                                        "floor",
                                        "efficiency",
                                        "bound",
                                        "gbytes_per_s",
                                        "gflops_per_s",
                                        "suspicious",
                                        "score",
                                        NULL};
    kevo_status rc;
    int64_t index, bad;
    char *set = NULL;
    if ((rc = kevo__json_object(o, rd->origin, rd->path, rd->err)) != KEVO_OK ||
        (rc = kevo__json_check_keys(o, known, rd->origin, rd->path, rd->err)) !=
            KEVO_OK ||
        (rc = get_string(rd, o, "set", false, &set)) != KEVO_OK)
        return rc;
    bool same = strcmp(set, set_name(res->set)) == 0;
    free(set);
    if (!same) {
        size_t mark = kevo__jpath_key(rd->path, "set");
        kevo__json_fail(rd->err, KEVO_EINVALID, rd->origin, rd->path,
                        "a shape of another set than the result's \"%s\"",
                        set_name(res->set));
        kevo__jpath_pop(rd->path, mark);
        return KEVO_EINVALID;
    }
    const json_t *dims = need(rd, o, "dims");
    if (!dims)
        return KEVO_EINVALID;
    if ((rc = get_int(rd, o, "index", 0, &index)) != KEVO_OK ||
        (rc = read_dims(rd, dims, s)) != KEVO_OK ||
        (rc = get_bool(rd, o, "correct", &s->r.correct)) != KEVO_OK ||
        (rc = get_number(rd, o, "max_abs_err", &s->r.max_abs_err)) != KEVO_OK ||
        (rc = get_number(rd, o, "max_rel_err", &s->r.max_rel_err)) != KEVO_OK ||
        (rc = get_int(rd, o, "bad_elements", 0, &bad)) != KEVO_OK ||
        (rc = get_number(rd, o, "seed_time", &s->r.seed_time)) != KEVO_OK ||
        (rc = get_number(rd, o, "reference_time", &s->r.reference_time)) !=
            KEVO_OK ||
        (rc = get_number(rd, o, "bytes", &s->r.bytes)) != KEVO_OK ||
        (rc = get_number(rd, o, "flops", &s->r.flops)) != KEVO_OK)
        return rc;
    s->r.index = (size_t)index;
    s->r.bad_elements = (uint64_t)bad;
    /* Written since the gate compares with the seed in pairs: optional. */
    const json_t *v;
    if (((v = json_object_get(o, "seed_spread")) &&
         (rc = get_number(rd, o, "seed_spread", &s->r.seed_spread)) !=
             KEVO_OK) ||
        ((v = json_object_get(o, "reference_spread")) &&
         (rc = get_number(rd, o, "reference_spread", &s->r.reference_spread)) !=
             KEVO_OK) ||
        ((v = json_object_get(o, "paired")) &&
         (rc = get_bool(rd, o, "paired", &s->r.paired)) != KEVO_OK))
        return rc;
    if (!(v = need(rd, o, "worst")) || (rc = read_worst(rd, v, s)) != KEVO_OK)
        return v ? rc : KEVO_EINVALID;
    if (!(v = need(rd, o, "time")) || (rc = read_time(rd, v, s)) != KEVO_OK)
        return v ? rc : KEVO_EINVALID;
    if (!(v = need(rd, o, "profile")) ||
        (rc = read_profile(rd, v, s)) != KEVO_OK)
        return v ? rc : KEVO_EINVALID;
    return KEVO_OK;
}

/* The peak called name. */
static bool peak_parse(const char *name, kevo_peak *out)
{
    for (int p = 0; p < KEVO__PEAK_COUNT; p++) {
        if (strcmp(kevo_peak_name((kevo_peak)p), name) == 0) {
            *out = (kevo_peak)p;
            return true;
        }
    }
    return false;
}

/* The parts that decide how the result is made: task, set, candidate,
 * ceilings, fitness function and level. */
static kevo_status read_frame(reader *rd, const json_t *v,
                              kevo_eval_result **out)
{
    static const char *const ceil_keys[] = {"bandwidth", "peak", "peak_value",
                                            "launch", NULL};
    static const char *const fit_keys[] = {"function", "value", "suspicious",
                                           "suspicious_level", NULL};
    kevo_status rc;
    char *task = NULL, *set = NULL, *peak = NULL, *fn = NULL;
    kevo_candidate *cand = NULL;
    bool present;
    kevo_eval_context ctx = {NULL, NULL, NULL, 0};
    double bandwidth = NAN, peak_value = NAN, launch = NAN;
    kevo_peak pk = KEVO_PEAK_FP32;
    kevo_shape_set sset = KEVO_SHAPES_TRAIN;
    const json_t *c = need(rd, v, "ceilings"), *f = need(rd, v, "fitness");
    const json_t *jc = need(rd, v, "candidate");
    if (!c || !f || !jc)
        return KEVO_EINVALID;
    if ((rc = get_string(rd, v, "task", false, &task)) != KEVO_OK ||
        (rc = get_string(rd, v, "set", false, &set)) != KEVO_OK ||
        (rc = object_at(rd, c, "ceilings", ceil_keys, false, &present)) !=
            KEVO_OK ||
        (rc = object_at(rd, f, "fitness", fit_keys, false, &present)) !=
            KEVO_OK)
        goto done;
    if (strcmp(set, "train") == 0 || strcmp(set, "held_out") == 0) {
        sset = set[0] == 't' ? KEVO_SHAPES_TRAIN : KEVO_SHAPES_HELD_OUT;
    } else {
        size_t mark = kevo__jpath_key(rd->path, "set");
        rc = kevo__json_fail(rd->err, KEVO_EINVALID, rd->origin, rd->path,
                             "\"%s\" is neither \"train\" nor \"held_out\"",
                             set);
        kevo__jpath_pop(rd->path, mark);
        goto done;
    }
    size_t mark = kevo__jpath_key(rd->path, "ceilings");
    if ((rc = get_number(rd, c, "bandwidth", &bandwidth)) == KEVO_OK &&
        (rc = get_number(rd, c, "peak_value", &peak_value)) == KEVO_OK &&
        (rc = json_object_get(c, "launch")
                  ? get_number(rd, c, "launch", &launch)
                  : KEVO_OK) == KEVO_OK &&
        (rc = get_string(rd, c, "peak", false, &peak)) == KEVO_OK &&
        !peak_parse(peak, &pk)) {
        size_t m2 = kevo__jpath_key(rd->path, "peak");
        rc = kevo__json_fail(rd->err, KEVO_EINVALID, rd->origin, rd->path,
                             "unknown peak \"%s\"", peak);
        kevo__jpath_pop(rd->path, m2);
    }
    kevo__jpath_pop(rd->path, mark);
    if (rc != KEVO_OK)
        goto done;
    mark = kevo__jpath_key(rd->path, "fitness");
    if ((rc = get_string(rd, f, "function", false, &fn)) == KEVO_OK &&
        (rc = get_number(rd, f, "suspicious_level", &ctx.suspicious)) ==
            KEVO_OK) {
        if (!(ctx.fitness = kevo__fitness_find(fn))) {
            size_t m2 = kevo__jpath_key(rd->path, "function");
            rc = kevo__json_fail(rd->err, KEVO_EINVALID, rd->origin, rd->path,
                                 "unknown fitness function \"%s\"", fn);
            kevo__jpath_pop(rd->path, m2);
        } else if (!(isfinite(ctx.suspicious) && ctx.suspicious > 0)) {
            size_t m2 = kevo__jpath_key(rd->path, "suspicious_level");
            rc = kevo__json_fail(rd->err, KEVO_EINVALID, rd->origin, rd->path,
                                 "the level must be a positive number");
            kevo__jpath_pop(rd->path, m2);
        }
    }
    kevo__jpath_pop(rd->path, mark);
    if (rc != KEVO_OK)
        goto done;
    if (!json_is_null(jc)) {
        mark = kevo__jpath_key(rd->path, "candidate");
        rc =
            kevo__candidate_from_json(jc, rd->origin, rd->path, &cand, rd->err);
        kevo__jpath_pop(rd->path, mark);
        if (rc != KEVO_OK)
            goto done;
    }
    if (!(*out = kevo__eval_result_alloc(cand, task, pk, sset, &ctx))) {
        rc = kevo__error_set(rd->err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    (*out)->bandwidth = isfinite(bandwidth) && bandwidth > 0 ? bandwidth : 0;
    (*out)->peak_value =
        isfinite(peak_value) && peak_value > 0 ? peak_value : 0;
    (*out)->launch = isfinite(launch) && launch > 0 ? launch : 0;
done:
    kevo_candidate_free(cand);
    free(task);
    free(set);
    free(peak);
    free(fn);
    return rc;
}

static kevo_status read_result(reader *rd, const json_t *v,
                               kevo_eval_result *res)
{
    static const char *const compile_keys[] = {"ok", "cached", "log", NULL};
    static const char *const speedup_keys[] = {"seed", "reference", NULL};
    kevo_status rc;
    char *verdict = NULL;
    bool present;
    int64_t x;
    const json_t *c = need(rd, v, "compile"), *sp = need(rd, v, "speedup");
    const json_t *desc = need(rd, v, "descriptors");
    const json_t *kernels = need(rd, v, "kernels"),
                 *sec = need(rd, v, "seconds");
    const json_t *shapes = need(rd, v, "shapes");
    if (!c || !sp || !desc || !kernels || !sec || !shapes)
        return KEVO_EINVALID;
    if ((rc = get_int(rd, v, "ticket", 0, &x)) != KEVO_OK)
        return rc;
    res->ticket = (uint64_t)x;
    if ((rc = get_string(rd, v, "verdict", false, &verdict)) != KEVO_OK)
        return rc;
    bool known = kevo__verdict_parse(verdict, &res->verdict);
    free(verdict);
    if (!known) {
        size_t mark = kevo__jpath_key(rd->path, "verdict");
        kevo__json_fail(rd->err, KEVO_EINVALID, rd->origin, rd->path,
                        "unknown verdict");
        kevo__jpath_pop(rd->path, mark);
        return KEVO_EINVALID;
    }
    if (res->verdict != KEVO_VERDICT_OK) {
        if (json_object_get(v, "reason") &&
            (rc = get_string(rd, v, "reason", false, &res->reason)) != KEVO_OK)
            return rc;
        if (!res->reason &&
            !(res->reason = kevo__strdup(kevo_verdict_name(res->verdict))))
            return kevo__error_set(rd->err, KEVO_ENOMEM, "out of memory");
    }
    if (json_object_get(v, "failed_shape")) {
        if ((rc = get_int(rd, v, "failed_shape", 0, &x)) != KEVO_OK)
            return rc;
        res->failed_shape = x;
    }
    if (json_object_get(v, "describe_error") &&
        (rc = get_string(rd, v, "describe_error", false,
                         &res->describe_error)) != KEVO_OK)
        return rc;
    /* Written since results say which device measured them: absent in
     * older ones, and for results that never reached a GPU. */
    if (json_object_get(v, "device") &&
        (rc = get_string(rd, v, "device", false, &res->device)) != KEVO_OK)
        return rc;

    if ((rc = object_at(rd, c, "compile", compile_keys, false, &present)) !=
        KEVO_OK)
        return rc;
    free(res->compile_log);
    res->compile_log = NULL;
    size_t mark = kevo__jpath_key(rd->path, "compile");
    if ((rc = get_bool(rd, c, "ok", &res->compiled)) == KEVO_OK &&
        (rc = get_bool(rd, c, "cached", &res->cached)) == KEVO_OK)
        rc = get_string(rd, c, "log", false, &res->compile_log);
    kevo__jpath_pop(rd->path, mark);
    if (rc != KEVO_OK)
        return rc;
    if ((rc = object_at(rd, sp, "speedup", speedup_keys, false, &present)) !=
        KEVO_OK)
        return rc;

    AT(rd, "descriptors",
       kevo__json_object(desc, rd->origin, rd->path, rd->err));
    const char *key;
    const json_t *val;
    json_object_foreach ((json_t *)desc, key, val) {
        const kevo_descriptor_def *d = kevo__descriptor_find(key);
        size_t i = 0;
        while (d && kevo__descriptor_at(i) != d)
            i++;
        mark = kevo__jpath_key(rd->path, "descriptors");
        size_t m2 = kevo__jpath_key(rd->path, key);
        if (!d || i >= KEVO__DESCRIPTORS_MAX)
            rc = kevo__json_fail(rd->err, KEVO_EINVALID, rd->origin, rd->path,
                                 "unknown descriptor (known: %s)",
                                 kevo__descriptor_names());
        else
            rc = kevo__json_number_nf(val, rd->origin, rd->path,
                                      &res->descriptor[i], rd->err);
        kevo__jpath_pop(rd->path, m2);
        kevo__jpath_pop(rd->path, mark);
        if (rc != KEVO_OK)
            return rc;
        res->has_descriptor[i] = true;
    }

    AT(rd, "kernels", kevo__json_array(kernels, rd->origin, rd->path, rd->err));
    if (!(res->kernels = json_deep_copy(kernels)))
        return kevo__error_set(rd->err, KEVO_ENOMEM, "out of memory");

    AT(rd, "seconds", kevo__json_object(sec, rd->origin, rd->path, rd->err));
    AT(rd, "seconds",
       kevo__json_check_keys(sec, kevo__eval_phase_names, rd->origin, rd->path,
                             rd->err));
    mark = kevo__jpath_key(rd->path, "seconds");
    for (size_t i = 0; rc == KEVO_OK && i <= KEVO_PHASE_TOTAL; i++)
        rc = get_number(rd, sec, kevo__eval_phase_names[i], &res->seconds[i]);
    kevo__jpath_pop(rd->path, mark);
    if (rc != KEVO_OK)
        return rc;

    AT(rd, "shapes", kevo__json_array(shapes, rd->origin, rd->path, rd->err));
    size_t n = json_array_size(shapes);
    if (!kevo__eval_result_add_shapes(res, n))
        return kevo__error_set(rd->err, KEVO_ENOMEM, "out of memory");
    mark = kevo__jpath_key(rd->path, "shapes");
    for (size_t i = 0; rc == KEVO_OK && i < n; i++) {
        size_t m2 = kevo__jpath_index(rd->path, i);
        rc = read_shape(rd, res, json_array_get(shapes, i), &res->shapes[i]);
        kevo__jpath_pop(rd->path, m2);
    }
    kevo__jpath_pop(rd->path, mark);
    return rc;
}

kevo_status kevo__eval_result_from_json(const json_t *v, const char *origin,
                                        kevo_jpath *path,
                                        kevo_eval_result **out, kevo_error *err)
{
    static const char *const known[] = {
        "task",        "candidate", "ticket",       "set",
        "verdict",     "reason",    "failed_shape", "describe_error",
        "compile",     "fitness",   "speedup",      "ceilings",
        "descriptors", "kernels",   "shapes",       "seconds",
        "device",      NULL};
    kevo_jpath local;
    kevo_eval_result *res = NULL;
    kevo_status rc;
    if (out)
        *out = NULL;
    if (!v || !out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo__eval_result_from_json: NULL argument");
    if (!path) {
        kevo__jpath_init(&local);
        path = &local;
    }
    reader rd = {origin, path, err};
    if ((rc = kevo__json_object(v, origin, path, err)) != KEVO_OK ||
        (rc = kevo__json_check_keys(v, known, origin, path, err)) != KEVO_OK ||
        (rc = read_frame(&rd, v, &res)) != KEVO_OK ||
        (rc = read_result(&rd, v, res)) != KEVO_OK) {
        kevo_eval_result_free(res);
        return rc;
    }
    kevo__eval_result_recompute(res);
    *out = res;
    return KEVO_OK;
}

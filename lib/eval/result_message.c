/*
 * result_message.c: a result from the GPU worker's result message (the
 * protocol is in the comment of kevo__eval_result_new()). The message is
 * checked as strictly as a task file: a value of the wrong type, a shape
 * the task does not have or dims that differ from the task's, an "ok"
 * verdict with a failing or missing shape, each gives KEVO_EWORKER with the
 * JSON path. Keys this reader does not know are skipped, so that a worker
 * may say more than the core reads.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_private.h"

#define ORIGIN "worker result"

/* What one reading needs. */
typedef struct reader {
    kevo_eval_result *res;
    const kevo_task *task;
    kevo_jpath path;
    kevo_error *err;
} reader;

static const char *set_name(kevo_shape_set set)
{
    return set == KEVO_SHAPES_HELD_OUT ? "held_out" : "train";
}

static const char *set_words(kevo_shape_set set)
{
    return set == KEVO_SHAPES_HELD_OUT ? "held-out" : "training";
}

/* An optional member: NULL when absent. */
static const json_t *member(const json_t *obj, const char *key)
{
    return json_object_get(obj, key);
}

/* Reads an optional number-like member into *out (left alone when absent). */
static kevo_status opt_number(reader *rd, const json_t *obj, const char *key,
                              double *out)
{
    const json_t *v = member(obj, key);
    if (!v)
        return KEVO_OK;
    size_t mark = kevo__jpath_key(&rd->path, key);
    kevo_status rc = kevo__json_number_nf(v, ORIGIN, &rd->path, out, rd->err);
    kevo__jpath_pop(&rd->path, mark);
    return rc;
}

/* Reads an optional non-negative integer member (left alone when absent). */
static kevo_status opt_count(reader *rd, const json_t *obj, const char *key,
                             int64_t max, int64_t *out)
{
    const json_t *v = member(obj, key);
    if (!v)
        return KEVO_OK;
    size_t mark = kevo__jpath_key(&rd->path, key);
    int64_t x = 0;
    kevo_status rc = kevo__json_int(v, ORIGIN, &rd->path, &x, rd->err);
    if (rc == KEVO_OK && (x < 0 || x > max))
        rc = kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                             "%" PRId64 " is outside [0, %" PRId64 "]", x, max);
    if (rc == KEVO_OK)
        *out = x;
    kevo__jpath_pop(&rd->path, mark);
    return rc;
}

/* Reads an optional attribute of a kernel: an integer in [0, max], or -1
 * or null for one the worker could not read (left at -1). */
static kevo_status opt_attr(reader *rd, const json_t *obj, const char *key,
                            int64_t max, int64_t *out)
{
    const json_t *v = member(obj, key);
    if (!v || json_is_null(v) ||
        (json_is_integer(v) && json_integer_value(v) == -1))
        return KEVO_OK;
    return opt_count(rd, obj, key, max, out);
}

/* The "time" object of a shape: the median is required and must be a
 * positive number of seconds, or null for a shape that was not timed. */
static kevo_status read_time(reader *rd, const json_t *t, kevo_eval_shape *s,
                             bool reference)
{
    kevo_status rc;
    if ((rc = kevo__json_object(t, ORIGIN, &rd->path, rd->err)) != KEVO_OK)
        return rc;
    const json_t *m = member(t, "median");
    double median = NAN;
    if (!m)
        return kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                               "\"median\" is missing");
    size_t mark = kevo__jpath_key(&rd->path, "median");
    rc = kevo__json_number_nf(m, ORIGIN, &rd->path, &median, rd->err);
    if (rc == KEVO_OK && !isnan(median) && !(isfinite(median) && median > 0))
        rc = kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                             "%g is not a positive number of seconds", median);
    kevo__jpath_pop(&rd->path, mark);
    if (rc != KEVO_OK || isnan(median)) /* null: no time was taken */
        return rc;
    if (reference) {
        s->r.reference_time = median;
        return opt_number(rd, t, "spread", &s->r.reference_spread);
    }
    kevo_shape_result *r = &s->r;
    int64_t reps = 0, kpr = 0;
    r->time = median;
    if ((rc = opt_number(rd, t, "min", &r->time_min)) != KEVO_OK ||
        (rc = opt_number(rd, t, "max", &r->time_max)) != KEVO_OK ||
        (rc = opt_number(rd, t, "mean", &s->time_mean)) != KEVO_OK ||
        (rc = opt_number(rd, t, "cv", &r->time_cv)) != KEVO_OK ||
        (rc = opt_number(rd, t, "spread", &r->time_spread)) != KEVO_OK ||
        (rc = opt_count(rd, t, "reps", UINT32_MAX, &reps)) != KEVO_OK ||
        (rc = opt_count(rd, t, "kernels_per_rep", UINT32_MAX, &kpr)) != KEVO_OK)
        return rc;
    r->reps = (uint32_t)reps;
    r->kernels_per_rep = (uint32_t)kpr;
    const json_t *samples = member(t, "samples");
    if (!samples)
        return KEVO_OK;
    mark = kevo__jpath_key(&rd->path, "samples");
    if ((rc = kevo__json_array(samples, ORIGIN, &rd->path, rd->err)) != KEVO_OK)
        goto done;
    size_t n = json_array_size(samples);
    if (n && !(s->samples = malloc(n * sizeof(*s->samples)))) {
        rc = kevo__error_set(rd->err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        size_t m2 = kevo__jpath_index(&rd->path, i);
        rc = kevo__json_number_nf(json_array_get(samples, i), ORIGIN, &rd->path,
                                  &s->samples[i], rd->err);
        kevo__jpath_pop(&rd->path, m2);
        if (rc != KEVO_OK)
            goto done;
        s->nsamples = i + 1;
    }
done:
    kevo__jpath_pop(&rd->path, mark);
    return rc;
}

static kevo_status read_worst(reader *rd, const json_t *w, kevo_eval_shape *s)
{
    kevo_status rc;
    if (json_is_null(w))
        return KEVO_OK;
    if ((rc = kevo__json_object(w, ORIGIN, &rd->path, rd->err)) != KEVO_OK)
        return rc;
    const json_t *arg = member(w, "arg");
    if (arg) {
        const char *a;
        size_t mark = kevo__jpath_key(&rd->path, "arg");
        rc = kevo__json_string(arg, ORIGIN, &rd->path, &a, rd->err);
        kevo__jpath_pop(&rd->path, mark);
        if (rc != KEVO_OK)
            return rc;
        if (!(s->worst_arg = kevo__strdup(a)))
            return kevo__error_set(rd->err, KEVO_ENOMEM, "out of memory");
    }
    int64_t index = 0;
    if ((rc = opt_count(rd, w, "index", INT64_MAX, &index)) != KEVO_OK ||
        (rc = opt_number(rd, w, "got", &s->r.worst_got)) != KEVO_OK ||
        (rc = opt_number(rd, w, "want", &s->r.worst_want)) != KEVO_OK ||
        (rc = opt_number(rd, w, "tol", &s->r.worst_tol)) != KEVO_OK)
        return rc;
    s->r.worst_index = (uint64_t)index;
    s->has_worst = true;
    return KEVO_OK;
}

static kevo_status read_profile(reader *rd, const json_t *p, kevo_eval_shape *s)
{
    kevo_status rc;
    if (json_is_null(p))
        return KEVO_OK;
    if ((rc = kevo__json_object(p, ORIGIN, &rd->path, rd->err)) != KEVO_OK ||
        (rc = opt_number(rd, p, "dram_read_bytes", &s->r.dram_read_bytes)) !=
            KEVO_OK ||
        (rc = opt_number(rd, p, "dram_write_bytes", &s->r.dram_write_bytes)) !=
            KEVO_OK ||
        (rc = opt_number(rd, p, "achieved_occupancy",
                         &s->r.achieved_occupancy)) != KEVO_OK)
        return rc;
    s->has_profile = true;
    return KEVO_OK;
}

/* The worker's dims of a shape must be the task's. */
static kevo_status check_dims(reader *rd, const json_t *dims,
                              const kevo_eval_shape *s)
{
    kevo_status rc;
    if ((rc = kevo__json_object(dims, ORIGIN, &rd->path, rd->err)) != KEVO_OK)
        return rc;
    const char *key;
    const json_t *v;
    json_object_foreach ((json_t *)dims, key, v) {
        size_t mark = kevo__jpath_key(&rd->path, key);
        int64_t x = 0;
        size_t d = 0;
        while (d < s->ndims && strcmp(s->dim_names[d], key) != 0)
            d++;
        rc = kevo__json_int(v, ORIGIN, &rd->path, &x, rd->err);
        if (rc == KEVO_OK && d == s->ndims)
            rc = kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                                 "the task has no dim '%s'", key);
        else if (rc == KEVO_OK && x != s->dim_values[d])
            rc = kevo__json_fail(
                rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                "%" PRId64 ", but %s shape %zu has %s=%" PRId64, x,
                set_words(rd->res->set), s->r.index, key, s->dim_values[d]);
        kevo__jpath_pop(&rd->path, mark);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}

/* Reads one member of a shape with fn, with the path at its key. */
#define WITH_KEY(rd, key, call)                                                \
    do {                                                                       \
        size_t mark_ = kevo__jpath_key(&(rd)->path, key);                      \
        rc = (call);                                                           \
        kevo__jpath_pop(&(rd)->path, mark_);                                   \
        if (rc != KEVO_OK)                                                     \
            return rc;                                                         \
    } while (0)

static kevo_status read_shape(reader *rd, const json_t *o, kevo_eval_shape *s,
                              bool *seen, size_t nset)
{
    kevo_status rc;
    kevo_eval_result *res = rd->res;
    if ((rc = kevo__json_object(o, ORIGIN, &rd->path, rd->err)) != KEVO_OK)
        return rc;
    const json_t *v;
    if ((v = member(o, "set")) != NULL) {
        const char *name;
        WITH_KEY(rd, "set",
                 kevo__json_string(v, ORIGIN, &rd->path, &name, rd->err));
        if (strcmp(name, set_name(res->set)) != 0) {
            size_t mark = kevo__jpath_key(&rd->path, "set");
            rc = kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                                 "\"%s\", but the %s shapes were asked for",
                                 name, set_words(res->set));
            kevo__jpath_pop(&rd->path, mark);
            return rc;
        }
    }
    int64_t index = -1;
    if (!member(o, "index"))
        return kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                               "\"index\" is missing");
    WITH_KEY(
        rd, "index",
        kevo__json_int(member(o, "index"), ORIGIN, &rd->path, &index, rd->err));
    if (index < 0 || (uint64_t)index >= nset || seen[index]) {
        size_t mark = kevo__jpath_key(&rd->path, "index");
        if (index >= 0 && (uint64_t)index < nset)
            rc = kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                                 "shape %" PRId64 " appears twice", index);
        else
            rc = kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                                 "%" PRId64 ", but the task has %zu %s "
                                 "shapes",
                                 index, nset, set_words(res->set));
        kevo__jpath_pop(&rd->path, mark);
        return rc;
    }
    seen[index] = true;
    s->r.index = (size_t)index;
    if ((rc = kevo__eval_result_shape_from_task(res, s, rd->task, rd->err)) !=
        KEVO_OK)
        return rc;
    if ((v = member(o, "dims")) != NULL)
        WITH_KEY(rd, "dims", check_dims(rd, v, s));
    if (!(v = member(o, "correct")))
        return kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                               "\"correct\" is missing");
    if (!json_is_boolean(v)) {
        size_t mark = kevo__jpath_key(&rd->path, "correct");
        rc = kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                             "expected true or false, found %s",
                             kevo__json_type_name(v));
        kevo__jpath_pop(&rd->path, mark);
        return rc;
    }
    s->r.correct = json_is_true(v);
    int64_t bad = 0;
    if ((rc = opt_number(rd, o, "max_abs_err", &s->r.max_abs_err)) != KEVO_OK ||
        (rc = opt_number(rd, o, "max_rel_err", &s->r.max_rel_err)) != KEVO_OK ||
        (rc = opt_count(rd, o, "bad_elements", INT64_MAX, &bad)) != KEVO_OK)
        return rc;
    s->r.bad_elements = (uint64_t)bad;
    if ((v = member(o, "worst")) != NULL)
        WITH_KEY(rd, "worst", read_worst(rd, v, s));
    if ((v = member(o, "time")) != NULL && !json_is_null(v))
        WITH_KEY(rd, "time", read_time(rd, v, s, false));
    if ((v = member(o, "reference_time")) != NULL && !json_is_null(v))
        WITH_KEY(rd, "reference_time", read_time(rd, v, s, true));
    if ((v = member(o, "profile")) != NULL)
        WITH_KEY(rd, "profile", read_profile(rd, v, s));
    return KEVO_OK;
}

static kevo_status read_kernel(reader *rd, const json_t *o,
                               kevo_worker_kernel *k)
{
    kevo_status rc;
    if ((rc = kevo__json_object(o, ORIGIN, &rd->path, rd->err)) != KEVO_OK)
        return rc;
    const json_t *v = member(o, "name");
    if (!v)
        return kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                               "\"name\" is missing");
    WITH_KEY(rd, "name",
             kevo__json_string(v, ORIGIN, &rd->path, &k->name, rd->err));
    if ((rc = opt_attr(rd, o, "registers", 65536, &k->registers)) != KEVO_OK ||
        (rc = opt_attr(rd, o, "local_bytes", INT64_MAX, &k->local_bytes)) !=
            KEVO_OK ||
        (rc = opt_attr(rd, o, "static_smem", INT64_MAX, &k->static_smem)) !=
            KEVO_OK ||
        (rc = opt_attr(rd, o, "max_threads", 65536, &k->max_threads)) !=
            KEVO_OK ||
        (rc = opt_attr(rd, o, "dyn_smem", INT64_MAX, &k->dyn_smem)) !=
            KEVO_OK ||
        (rc = opt_number(rd, o, "occupancy", &k->occupancy)) != KEVO_OK ||
        (rc = opt_attr(rd, o, "cluster", 16, &k->cluster)) != KEVO_OK ||
        (rc = opt_attr(rd, o, "cluster_occupancy", INT64_MAX,
                       &k->cluster_occupancy)) != KEVO_OK)
        return rc;
    k->runs = !json_is_false(member(o, "runs"));
    if ((v = member(o, "block")) != NULL) {
        size_t mark = kevo__jpath_key(&rd->path, "block");
        rc = kevo__json_array(v, ORIGIN, &rd->path, rd->err);
        if (rc == KEVO_OK && json_array_size(v) != 3)
            rc = kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                                 "expected [x, y, z], found %zu values",
                                 json_array_size(v));
        for (size_t i = 0; rc == KEVO_OK && i < 3; i++) {
            size_t m2 = kevo__jpath_index(&rd->path, i);
            rc = kevo__json_int(json_array_get(v, i), ORIGIN, &rd->path,
                                &k->block[i], rd->err);
            if (rc == KEVO_OK && (k->block[i] < 1 || k->block[i] > 1024))
                rc = kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                                     "%" PRId64 " is outside [1, 1024]",
                                     k->block[i]);
            kevo__jpath_pop(&rd->path, m2);
        }
        kevo__jpath_pop(&rd->path, mark);
        if (rc != KEVO_OK)
            return rc;
        k->has_block = true;
    }
    return KEVO_OK;
}

static int by_index(const void *a, const void *b)
{
    size_t x = ((const kevo_eval_shape *)a)->r.index;
    size_t y = ((const kevo_eval_shape *)b)->r.index;
    return (x > y) - (x < y);
}

/* Reads the message into rd->res; the worker's kernels into *wk. */
static kevo_status read_message(reader *rd, const json_t *msg,
                                kevo_worker_kernel **wk, size_t *nwk)
{
    kevo_status rc;
    kevo_eval_result *res = rd->res;
    size_t nset = kevo_task_shape_count(rd->task, res->set);
    bool *seen = NULL;
    const json_t *v;
    if ((rc = kevo__json_object(msg, ORIGIN, &rd->path, rd->err)) != KEVO_OK)
        return rc;

    const char *verdict = NULL;
    v = member(msg, "ok");
    if (v && json_is_false(v) && !member(msg, "verdict")) {
        const json_t *e = member(msg, "error");
        return kevo__json_fail(
            rd->err, KEVO_EINVALID, ORIGIN, &rd->path, "the worker failed: %s",
            json_is_string(e) ? json_string_value(e) : "(no error given)");
    }
    if (!(v = member(msg, "verdict")))
        return kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                               "\"verdict\" is missing");
    WITH_KEY(rd, "verdict",
             kevo__json_string(v, ORIGIN, &rd->path, &verdict, rd->err));
    if (!kevo__verdict_parse(verdict, &res->verdict)) {
        size_t mark = kevo__jpath_key(&rd->path, "verdict");
        rc = kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                             "unknown verdict \"%s\" (known: ok, "
                             "compile_error, rejected, launch_error, fault, "
                             "timeout, wrong, input_modified, worker_died)",
                             verdict);
        kevo__jpath_pop(&rd->path, mark);
        return rc;
    }
    if (res->verdict != KEVO_VERDICT_OK) {
        const char *reason = verdict;
        if ((v = member(msg, "reason")) != NULL)
            WITH_KEY(rd, "reason",
                     kevo__json_string(v, ORIGIN, &rd->path, &reason, rd->err));
        if (!(res->reason = kevo__strdup(reason)))
            return kevo__error_set(rd->err, KEVO_ENOMEM, "out of memory");
    }
    int64_t failed = -1;
    if ((v = member(msg, "failed_shape")) != NULL && !json_is_null(v)) {
        if ((rc = opt_count(rd, msg, "failed_shape", INT64_MAX, &failed)) !=
            KEVO_OK)
            return rc;
        if ((uint64_t)failed >= nset) {
            size_t mark = kevo__jpath_key(&rd->path, "failed_shape");
            rc = kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                                 "%" PRId64 ", but the task has %zu %s "
                                 "shapes",
                                 failed, nset, set_words(res->set));
            kevo__jpath_pop(&rd->path, mark);
            return rc;
        }
    }
    res->failed_shape = failed;

    if ((v = member(msg, "kernels")) != NULL) {
        size_t mark = kevo__jpath_key(&rd->path, "kernels");
        rc = kevo__json_array(v, ORIGIN, &rd->path, rd->err);
        size_t n = rc == KEVO_OK ? json_array_size(v) : 0;
        if (n && !(*wk = calloc(n, sizeof(**wk))))
            rc = kevo__error_set(rd->err, KEVO_ENOMEM, "out of memory");
        for (size_t i = 0; rc == KEVO_OK && i < n; i++) {
            kevo_worker_kernel *k = &(*wk)[i];
            k->registers = k->local_bytes = k->static_smem = -1;
            k->max_threads = k->dyn_smem = -1;
            k->cluster = k->cluster_occupancy = -1;
            k->occupancy = NAN;
            k->runs = true;
            size_t m2 = kevo__jpath_index(&rd->path, i);
            rc = read_kernel(rd, json_array_get(v, i), k);
            kevo__jpath_pop(&rd->path, m2);
            *nwk = i + 1;
        }
        kevo__jpath_pop(&rd->path, mark);
        if (rc != KEVO_OK)
            return rc;
    }

    const json_t *shapes = member(msg, "shapes");
    if (shapes) {
        size_t mark = kevo__jpath_key(&rd->path, "shapes");
        rc = kevo__json_array(shapes, ORIGIN, &rd->path, rd->err);
        size_t n = rc == KEVO_OK ? json_array_size(shapes) : 0;
        if (rc == KEVO_OK && n > nset)
            rc = kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                                 "%zu shapes, but the task has %zu %s shapes",
                                 n, nset, set_words(res->set));
        if (rc == KEVO_OK &&
            (!(seen = calloc(nset ? nset : 1, sizeof(*seen))) ||
             !kevo__eval_result_add_shapes(res, n)))
            rc = kevo__error_set(rd->err, KEVO_ENOMEM, "out of memory");
        for (size_t i = 0; rc == KEVO_OK && i < n; i++) {
            size_t m2 = kevo__jpath_index(&rd->path, i);
            rc = read_shape(rd, json_array_get(shapes, i), &res->shapes[i],
                            seen, nset);
            if (rc == KEVO_OK && res->verdict == KEVO_VERDICT_OK &&
                !res->shapes[i].r.correct)
                rc = kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                                     "the shape is not correct, but the "
                                     "verdict is \"ok\"");
            kevo__jpath_pop(&rd->path, m2);
        }
        kevo__jpath_pop(&rd->path, mark);
        free(seen);
        if (rc != KEVO_OK)
            return rc;
        qsort(res->shapes, res->nshapes, sizeof(*res->shapes), by_index);
    }
    if (res->verdict == KEVO_VERDICT_OK && res->nshapes != nset)
        return kevo__json_fail(rd->err, KEVO_EINVALID, ORIGIN, &rd->path,
                               "the verdict is \"ok\" with %zu of the %zu %s "
                               "shapes",
                               res->nshapes, nset, set_words(res->set));

    if ((v = member(msg, "seconds")) != NULL) {
        static const struct {
            const char *key;
            kevo_eval_phase phase;
        } phases[] = {{"transfer", KEVO_PHASE_TRANSFER},
                      {"run", KEVO_PHASE_RUN},
                      {"check", KEVO_PHASE_RUN},
                      {"time", KEVO_PHASE_TIME},
                      {"total", KEVO_PHASE_TOTAL}};
        size_t mark = kevo__jpath_key(&rd->path, "seconds");
        rc = kevo__json_object(v, ORIGIN, &rd->path, rd->err);
        for (size_t i = 0; rc == KEVO_OK && i < KEVO_ARRAY_SIZE(phases); i++) {
            double x = NAN;
            rc = opt_number(rd, v, phases[i].key, &x);
            if (rc == KEVO_OK && isfinite(x) && x > 0)
                res->seconds[phases[i].phase] += x;
        }
        kevo__jpath_pop(&rd->path, mark);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}

kevo_status kevo__eval_result_new(const kevo_task *task,
                                  const kevo_candidate *cand,
                                  kevo_shape_set set, const json_t *worker,
                                  const kevo_compile_info *compile,
                                  const kevo_eval_context *ctx,
                                  kevo_eval_result **out, kevo_error *err)
{
    kevo_worker_kernel *wk = NULL;
    size_t nwk = 0;
    kevo_status rc = KEVO_ENOMEM;
    if (out)
        *out = NULL;
    if (!task || !cand || !out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo__eval_result_new: NULL argument");
    if (compile && !compile->ok)
        return kevo__eval_result_new_failure(
            task, cand, set, KEVO_VERDICT_COMPILE_ERROR,
            compile->error ? compile->error : "compile failed", compile, ctx,
            out, err);
    kevo_eval_result *res = kevo__eval_result_alloc(
        cand, kevo_task_name(task), kevo_task_peak(task), set, ctx);
    if (!res || !kevo__eval_result_set_compile(res, compile)) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto fail;
    }
    if (worker) {
        kevo_error local = KEVO__ERROR_INIT;
        reader rd = {res, task, {{0}, 0}, &local};
        kevo__jpath_init(&rd.path);
        rc = read_message(&rd, worker, &wk, &nwk);
        if (rc == KEVO_ENOMEM) {
            kevo__error_set(err, rc, "out of memory");
            goto fail;
        }
        if (rc != KEVO_OK) {
            rc = kevo__error_set(err, KEVO_EWORKER, "%s", local.text);
            goto fail;
        }
    }
    if ((rc = kevo__eval_describe(res, task, compile, wk, nwk, ctx, err)) !=
        KEVO_OK)
        goto fail;
    kevo__eval_describe_dram(res);
    kevo__eval_result_recompute(res);
    free(wk);
    *out = res;
    return KEVO_OK;
fail:
    free(wk);
    kevo_eval_result_free(res);
    return rc;
}

/*
 * task_write.c: writing a task back as a task file (kevo-task(5)):
 * kevo_task_to_json, with reals in the fewest digits that read back
 * exactly.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/jsonutil.h"
#include "task_private.h"

/* Sets key to value in obj, taking the reference; false when out of memory
 * (value NULL included). */
static bool put(json_t *obj, const char *key, json_t *value)
{
    return value && json_object_set_new(obj, key, value) == 0;
}

static bool push(json_t *arr, json_t *value)
{
    return value && json_array_append_new(arr, value) == 0;
}

/* An integer-valued double as a JSON integer when it fits, else a real. */
static json_t *json_whole(double v)
{
    if (v == floor(v) && v >= -9223372036854775808.0 &&
        v < 9223372036854775808.0)
        return json_integer((json_int_t)v);
    return json_real(v);
}

static json_t *init_to_json(const kevo_task_arg *a)
{
    json_t *o = json_object();
    if (!o || !put(o, "dist", json_string(kevo__dist_name(a->dist))))
        goto fail;
    bool ok = true;
    bool is_float = kevo_dtype_is_float(a->type);
    switch (a->dist) {
    case KEVO_DIST_NORMAL:
        ok = put(o, "mean", json_real(a->dist_a)) &&
             put(o, "std", json_real(a->dist_b));
        break;
    case KEVO_DIST_UNIFORM:
        ok = put(o, "lo", json_real(a->dist_a)) &&
             put(o, "hi", json_real(a->dist_b));
        break;
    case KEVO_DIST_RANDINT:
    case KEVO_DIST_NIBBLES:
        ok = put(o, "lo", json_whole(a->dist_a)) &&
             put(o, "hi", json_whole(a->dist_b));
        break;
    case KEVO_DIST_CONSTANT:
        ok = put(o, "value",
                 is_float ? json_real(a->dist_a) : json_whole(a->dist_a));
        break;
    default: break;
    }
    if (ok)
        return o;
fail:
    json_decref(o);
    return NULL;
}

/* rtol and atol always; rtol_amax and ulp where they are not 0. The
 * baseline rule: factor and atol. */
static json_t *tolerance_to_json(const kevo_tolerance *t)
{
    json_t *o = json_object();
    if (o && t->factor > 0) {
        if (put(o, "factor", json_real(t->factor)) &&
            put(o, "atol", json_real(t->atol)))
            return o;
    } else if (o && put(o, "rtol", json_real(t->rtol)) &&
               put(o, "atol", json_real(t->atol)) &&
               (t->rtol_amax == 0 ||
                put(o, "rtol_amax", json_real(t->rtol_amax))) &&
               (t->ulp == 0 || put(o, "ulp", json_real(t->ulp))))
        return o;
    json_decref(o);
    return NULL;
}

static json_t *arg_to_json(const kevo_task_arg *a)
{
    json_t *o = json_object();
    if (!o || !put(o, "name", json_string(a->name)) ||
        !put(o, "type", json_string(kevo_dtype_name(a->type))))
        goto fail;
    if (a->role != KEVO_ROLE_SCALAR &&
        (!put(o, "role", json_string(kevo__role_name(a->role))) ||
         !put(o, "count", json_string(a->count))))
        goto fail;
    if (a->value &&
        !put(o, "value",
             kevo_dtype_is_float(a->type) ? json_real(strtod(a->value, NULL))
                                          : json_string(a->value)))
        goto fail;
    if (a->dist != KEVO_DIST_DEFAULT && !put(o, "init", init_to_json(a)))
        goto fail;
    if (a->has_tolerance && !put(o, "tolerance", tolerance_to_json(&a->tol)))
        goto fail;
    return o;
fail:
    json_decref(o);
    return NULL;
}

static json_t *kernel_to_json(const kevo_candidate *c)
{
    json_t *o = json_object();
    if (o && put(o, "code", json_string(kevo_candidate_source(c))))
        return o;
    json_decref(o);
    return NULL;
}

static json_t *shapes_to_json(const kevo_task *t, kevo_shape_set set)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < t->shapes[set].count; i++) {
        const int64_t *v = kevo_task_shape(t, set, i);
        json_t *o = json_object();
        for (size_t d = 0; o && d < t->ndims; d++) {
            if (!put(o, t->dims[d], json_integer((json_int_t)v[d]))) {
                json_decref(o);
                o = NULL;
            }
        }
        if (!push(arr, o)) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

static json_t *param_to_json(const kevo_paramspace *ps, size_t i)
{
    json_t *p = json_object(), *values = json_array();
    if (!p || !values)
        goto fail;
    for (size_t k = 0; k < kevo_paramspace_domain_size(ps, i); k++) {
        json_int_t v = (json_int_t)kevo_paramspace_domain_value(ps, i, k);
        if (!push(values, json_integer(v)))
            goto fail;
    }
    bool ok = put(p, "values", values); /* takes values, even on failure */
    values = NULL;
    if (ok && put(p, "default",
                  json_integer((json_int_t)kevo_paramspace_default(ps, i))))
        return p;
fail:
    json_decref(values);
    json_decref(p);
    return NULL;
}

static json_t *params_to_json(const kevo_paramspace *ps)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < kevo_paramspace_count(ps); i++) {
        if (!put(o, kevo_paramspace_name(ps, i), param_to_json(ps, i))) {
            json_decref(o);
            o = NULL;
        }
    }
    return o;
}

static json_t *real_array(const double *v, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        if (!push(arr, json_real(v[i]))) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return arr;
}

static json_t *descriptor_to_json(const kevo_task_desc *d)
{
    if (d->by_name)
        return json_string(d->d.name);
    json_t *o = json_object();
    if (!o || !put(o, "name", json_string(d->d.name)))
        goto fail;
    if (d->d.nedges) {
        if (!put(o, "edges", real_array(d->d.edges, d->d.nedges)))
            goto fail;
    } else {
        double range[2] = {d->d.lo, d->d.hi};
        if (!put(o, "bins", json_integer((json_int_t)d->d.nbins)) ||
            !put(o, "range", real_array(range, 2)))
            goto fail;
    }
    return o;
fail:
    json_decref(o);
    return NULL;
}

/* The memory limit as "16GiB" when a binary unit divides it, else bytes. */
static json_t *memory_limit_to_json(uint64_t bytes)
{
    static const char *const units[] = {"TiB", "GiB", "MiB", "KiB"};
    for (int i = 0; i < 4; i++) {
        uint64_t f = 1ull << (10 * (4 - i));
        if (bytes % f == 0) {
            char text[64];
            snprintf(text, sizeof text, "%" PRIu64 "%s", bytes / f, units[i]);
            return json_string(text);
        }
    }
    if (bytes <= INT64_MAX)
        return json_integer((json_int_t)bytes);
    char text[32];
    snprintf(text, sizeof text, "%" PRIu64 "B", bytes);
    return json_string(text);
}

static json_t *task_to_json(const kevo_task *t)
{
    json_t *o = json_object(), *dims = json_array(), *args = json_array();
    if (!o || !dims || !args)
        goto fail;
    for (size_t i = 0; i < t->ndims; i++) {
        if (!push(dims, json_string(t->dims[i])))
            goto fail;
    }
    for (size_t i = 0; i < t->nargs; i++) {
        if (!push(args, arg_to_json(&t->args[i])))
            goto fail;
    }
    if (!put(o, "name", json_string(t->name)) ||
        (t->description && !put(o, "description", json_string(t->description))))
        goto fail;
    /* put() takes its value, even on failure. */
    bool ok = put(o, "dims", dims);
    dims = NULL;
    if (!ok)
        goto fail;
    ok = put(o, "args", args);
    args = NULL;
    if (!ok)
        goto fail;
    if ((t->reference && !put(o, "reference", kernel_to_json(t->reference))) ||
        (t->seed && !put(o, "seed", kernel_to_json(t->seed))))
        goto fail;
    if (t->has_tolerance || t->baseline) {
        json_t *tol =
            t->has_tolerance ? tolerance_to_json(&t->tol) : json_object();
        if (tol && t->baseline &&
            !put(tol, "baseline", kernel_to_json(t->baseline))) {
            json_decref(tol);
            tol = NULL;
        }
        if (!put(o, "tolerance", tol))
            goto fail;
    }
    if (t->has_cost) {
        json_t *cost = json_object();
        if (!cost ||
            !put(cost, "bytes", json_string(kevo_expr_text(t->bytes))) ||
            !put(cost, "flops", json_string(kevo_expr_text(t->flops))) ||
            !put(cost, "peak", json_string(kevo_peak_name(t->peak)))) {
            json_decref(cost);
            goto fail;
        }
        if (!put(o, "cost", cost))
            goto fail;
    }
    if (!put(o, "shapes", shapes_to_json(t, KEVO_SHAPES_TRAIN)))
        goto fail;
    if (t->shapes[KEVO_SHAPES_HELD_OUT].count &&
        !put(o, "held_out", shapes_to_json(t, KEVO_SHAPES_HELD_OUT)))
        goto fail;
    if (kevo_paramspace_count(t->params) &&
        !put(o, "params", params_to_json(t->params)))
        goto fail;
    size_t nc = kevo_paramspace_constraint_count(t->params);
    if (nc) {
        json_t *cs = json_array();
        for (size_t i = 0; cs && i < nc; i++) {
            if (!push(cs,
                      json_string(kevo_paramspace_constraint(t->params, i)))) {
                json_decref(cs);
                cs = NULL;
            }
        }
        if (!put(o, "constraints", cs))
            goto fail;
    }
    if (t->ndescriptors) {
        json_t *ds = json_array();
        for (size_t i = 0; ds && i < t->ndescriptors; i++) {
            if (!push(ds, descriptor_to_json(&t->descriptors[i]))) {
                json_decref(ds);
                ds = NULL;
            }
        }
        if (!put(o, "descriptors", ds))
            goto fail;
    }
    if (t->memory_limit != KEVO_TASK_MEMORY_LIMIT_DEFAULT &&
        !put(o, "memory_limit", memory_limit_to_json(t->memory_limit)))
        goto fail;
    if (t->input_seed != 1) {
        char text[32];
        snprintf(text, sizeof text, "%" PRIu64, t->input_seed);
        if (!put(o, "input_seed",
                 t->input_seed <= INT64_MAX
                     ? json_integer((json_int_t)t->input_seed)
                     : json_string(text)))
            goto fail;
    }
    return o;
fail:
    json_decref(dims);
    json_decref(args);
    json_decref(o);
    return NULL;
}

/* The most significant digits any real in v needs to read back exactly:
 * dumping with that many writes 1e-05 rather than 1.0000000000000001e-05,
 * and every value still reads back as itself. */
static int real_precision(const json_t *v)
{
    int p = 1;
    if (json_is_real(v)) {
        double x = json_real_value(v);
        char buf[40];
        for (p = 1; p < 17; p++) {
            snprintf(buf, sizeof buf, "%.*g", p, x);
            if (strtod(buf, NULL) == x)
                break;
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            int q = real_precision(json_array_get(v, i));
            p = q > p ? q : p;
        }
    } else if (json_is_object(v)) {
        const char *key;
        json_t *x;
        json_object_foreach ((json_t *)v, key, x) {
            int q = real_precision(x);
            p = q > p ? q : p;
        }
    }
    return p;
}

kevo_status kevo_task_to_json(const kevo_task *task, char **json,
                              kevo_error *err)
{
    if (!task || !json)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_task_to_json: task or json is NULL");
    *json = NULL;
    json_t *root = task_to_json(task);
    /* Written in the order of kevo-task(5), not sorted: parameters keep
     * their declaration order. */
    char *text =
        root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                                    JSON_REAL_PRECISION(real_precision(root)))
             : NULL;
    json_decref(root);
    if (!text)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    *json = text;
    return KEVO_OK;
}

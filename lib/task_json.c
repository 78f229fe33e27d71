/*
 * task_json.c: the task file format (kevo-task(5)): loading a task from
 * JSON, strictly, and writing it back.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidate_private.h"
#include "jsonutil.h"
#include "task_private.h"

typedef struct loader {
    const char *origin;   /* names the text in messages; may be NULL */
    const char *base_dir; /* where source files are looked up; may be NULL */
    kevo_jpath path;
    kevo_error *err;
    kevo_task *task;
} loader;

static kevo_status fail(loader *ld, kevo_status code, const char *fmt, ...)
    KEVO_PRINTF(3, 4);

static kevo_status fail(loader *ld, kevo_status code, const char *fmt, ...)
{
    char msg[KEVO_ERROR_TEXT_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return kevo__json_fail(ld->err, code, ld->origin, &ld->path, "%s", msg);
}

/* A setter's error, at the current path. What a setter calls a bad
 * argument is, in a file, an invalid task. */
static kevo_status fail_inner(loader *ld, const kevo_error *e)
{
    kevo_status code = e->code;
    if (code == KEVO_EINVAL || code == KEVO_ESTATE)
        code = KEVO_EINVALID;
    return fail(ld, code, "%s", e->text);
}

/* Descends into key of obj (which may be missing: *v is then NULL). */
static size_t enter(loader *ld, const json_t *obj, const char *key, json_t **v)
{
    *v = json_object_get(obj, key);
    return kevo__jpath_key(&ld->path, key);
}

static kevo_status missing(loader *ld, const char *key, const char *hint)
{
    return fail(ld, KEVO_EINVALID, "missing required key \"%s\" (%s)", key,
                hint);
}

/* An expression: a JSON string, or a JSON integer taken as its text. */
static kevo_status read_expr(loader *ld, const json_t *v, char *buf,
                             size_t size, const char **out)
{
    if (json_is_integer(v)) {
        snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        *out = buf;
        return KEVO_OK;
    }
    if (!json_is_string(v))
        return fail(ld, KEVO_EINVALID,
                    "expected an expression (a string such as \"2*n\", or an "
                    "integer), found %s",
                    kevo__json_type_name(v));
    return kevo__json_string(v, ld->origin, &ld->path, out, ld->err);
}

/* Parses text at the current path, only to place its error there. */
static kevo_status check_expr(loader *ld, const char *text)
{
    kevo_error e = KEVO__ERROR_INIT;
    kevo_expr *x = NULL;
    kevo_status rc = kevo_expr_parse(text, &x, &e);
    kevo_expr_free(x);
    return rc == KEVO_OK ? KEVO_OK : fail_inner(ld, &e);
}

/* The shortest decimal text that reads back as v. */
static void shortest_double(double v, char *buf, size_t size)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, size, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* ---- arguments ----------------------------------------------------------- */

static const char *const dist_names[] = {
    [KEVO_DIST_NORMAL] = "normal",
    [KEVO_DIST_UNIFORM] = "uniform",
    [KEVO_DIST_RANDINT] = "randint",
    [KEVO_DIST_CONSTANT] = "constant",
};

/* A number at key of obj (def when absent, required when def is NULL). */
static kevo_status read_number_key(loader *ld, const json_t *obj,
                                   const char *key, const double *def,
                                   double *out)
{
    json_t *v;
    size_t mark = enter(ld, obj, key, &v);
    kevo_status rc = KEVO_OK;
    if (v)
        rc = kevo__json_number(v, ld->origin, &ld->path, out, ld->err);
    else if (def)
        *out = *def;
    kevo__jpath_pop(&ld->path, mark);
    if (!v && !def)
        rc = missing(ld, key, "a number");
    return rc;
}

static kevo_status read_init(loader *ld, const char *arg, const json_t *v)
{
    kevo_status rc = kevo__json_object(v, ld->origin, &ld->path, ld->err);
    if (rc != KEVO_OK)
        return rc;
    json_t *d = json_object_get(v, "dist");
    const char *dist_name = NULL;
    if (!d)
        return missing(ld, "dist", "one of normal, uniform, randint, constant");
    size_t mark = kevo__jpath_key(&ld->path, "dist");
    rc = kevo__json_string(d, ld->origin, &ld->path, &dist_name, ld->err);
    kevo_dist dist = KEVO_DIST_DEFAULT;
    for (size_t i = 1; rc == KEVO_OK && i < KEVO_ARRAY_SIZE(dist_names); i++) {
        if (strcmp(dist_name, dist_names[i]) == 0)
            dist = (kevo_dist)i;
    }
    if (rc == KEVO_OK && dist == KEVO_DIST_DEFAULT)
        rc = fail(ld, KEVO_EINVALID,
                  "unknown distribution '%s' (known: normal, uniform, "
                  "randint, constant)",
                  dist_name);
    kevo__jpath_pop(&ld->path, mark);
    if (rc != KEVO_OK)
        return rc;
    static const char *const keys[][4] = {
        [KEVO_DIST_NORMAL] = {"dist", "mean", "std", NULL},
        [KEVO_DIST_UNIFORM] = {"dist", "lo", "hi", NULL},
        [KEVO_DIST_RANDINT] = {"dist", "lo", "hi", NULL},
        [KEVO_DIST_CONSTANT] = {"dist", "value", NULL, NULL},
    };
    rc = kevo__json_check_keys(v, keys[dist], ld->origin, &ld->path, ld->err);
    if (rc != KEVO_OK)
        return rc;
    double a = 0, b = 0;
    static const double zero = 0, one = 1;
    switch (dist) {
    case KEVO_DIST_NORMAL:
        rc = read_number_key(ld, v, "mean", &zero, &a);
        if (rc == KEVO_OK)
            rc = read_number_key(ld, v, "std", &one, &b);
        break;
    case KEVO_DIST_CONSTANT:
        rc = read_number_key(ld, v, "value", NULL, &a);
        break;
    default:
        rc = read_number_key(ld, v, "lo", NULL, &a);
        if (rc == KEVO_OK)
            rc = read_number_key(ld, v, "hi", NULL, &b);
        break;
    }
    if (rc != KEVO_OK)
        return rc;
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_task_set_init(ld->task, arg, dist, a, b, &e) != KEVO_OK)
        return fail_inner(ld, &e);
    return KEVO_OK;
}

/* {"rtol": R, "atol": A} for output (NULL: the task's default). */
static kevo_status read_tolerance(loader *ld, const char *output,
                                  const json_t *v)
{
    static const char *const keys[] = {"rtol", "atol", NULL};
    kevo_status rc = kevo__json_object(v, ld->origin, &ld->path, ld->err);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(v, keys, ld->origin, &ld->path, ld->err);
    static const double zero = 0;
    double rtol = 0, atol = 0;
    if (rc == KEVO_OK)
        rc = read_number_key(ld, v, "rtol", &zero, &rtol);
    if (rc == KEVO_OK)
        rc = read_number_key(ld, v, "atol", &zero, &atol);
    if (rc != KEVO_OK)
        return rc;
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_task_set_tolerance(ld->task, output, rtol, atol, &e) != KEVO_OK)
        return fail_inner(ld, &e);
    return KEVO_OK;
}

static kevo_status read_arg(loader *ld, const json_t *v)
{
    static const char *const keys[] = {"name",  "type", "role",      "count",
                                       "value", "init", "tolerance", NULL};
    kevo_status rc = kevo__json_object(v, ld->origin, &ld->path, ld->err);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(v, keys, ld->origin, &ld->path, ld->err);
    if (rc != KEVO_OK)
        return rc;
    json_t *name_v = json_object_get(v, "name");
    json_t *type_v = json_object_get(v, "type");
    json_t *role_v = json_object_get(v, "role");
    json_t *count_v = json_object_get(v, "count");
    json_t *value_v = json_object_get(v, "value");
    if (!name_v)
        return missing(ld, "name", "the argument's name in the kernel");
    if (!type_v)
        return missing(ld, "type",
                       "f32, f64, f16, bf16, i8, u8, i16, u16, "
                       "i32, u32, i64 or u64");

    const char *name, *type_name, *role_name = NULL;
    json_t *x;
    size_t mark = enter(ld, v, "name", &x);
    rc = kevo__json_string(x, ld->origin, &ld->path, &name, ld->err);
    if (rc == KEVO_OK && !kevo__is_identifier(name))
        rc = fail(ld, KEVO_EINVALID,
                  "argument name '%s' is not an identifier "
                  "([A-Za-z_][A-Za-z0-9_]*, at most %d characters)",
                  name, KEVO__IDENT_MAX);
    if (rc == KEVO_OK && kevo__task_find_arg(ld->task, name) >= 0)
        rc = fail(ld, KEVO_EEXIST, "argument '%s' is declared twice", name);
    kevo__jpath_pop(&ld->path, mark);
    if (rc != KEVO_OK)
        return rc;

    kevo_dtype type = KEVO_DTYPE_F32;
    mark = enter(ld, v, "type", &x);
    rc = kevo__json_string(x, ld->origin, &ld->path, &type_name, ld->err);
    if (rc == KEVO_OK && kevo_dtype_parse(type_name, &type) != KEVO_OK)
        rc = fail(ld, KEVO_EINVALID,
                  "unknown type '%s' (known: f32, f64, f16, bf16, i8, u8, "
                  "i16, u16, i32, u32, i64, u64)",
                  type_name);
    kevo__jpath_pop(&ld->path, mark);
    if (rc != KEVO_OK)
        return rc;

    kevo_role role = KEVO_ROLE_SCALAR;
    if (role_v) {
        static const kevo_role roles[] = {KEVO_ROLE_IN, KEVO_ROLE_OUT,
                                          KEVO_ROLE_INOUT, KEVO_ROLE_SCALAR};
        mark = enter(ld, v, "role", &x);
        rc = kevo__json_string(x, ld->origin, &ld->path, &role_name, ld->err);
        bool found = false;
        for (size_t i = 0; rc == KEVO_OK && i < KEVO_ARRAY_SIZE(roles); i++) {
            if (strcmp(role_name, kevo__role_name(roles[i])) == 0) {
                role = roles[i];
                found = true;
            }
        }
        if (rc == KEVO_OK && !found)
            rc = fail(ld, KEVO_EINVALID,
                      "unknown role '%s' (known: in, out, inout, scalar)",
                      role_name);
        kevo__jpath_pop(&ld->path, mark);
        if (rc != KEVO_OK)
            return rc;
    }

    kevo_error e = KEVO__ERROR_INIT;
    char text[64];
    if (role != KEVO_ROLE_SCALAR) {
        if (!count_v)
            return missing(ld, "count",
                           "a buffer's element count, an expression over the "
                           "dims");
        if (value_v) {
            mark = kevo__jpath_key(&ld->path, "value");
            rc = fail(ld, KEVO_EINVALID,
                      "buffer '%s' has a count, not a value (a value is for "
                      "scalars)",
                      name);
            kevo__jpath_pop(&ld->path, mark);
            return rc;
        }
        const char *count;
        mark = enter(ld, v, "count", &x);
        rc = read_expr(ld, x, text, sizeof text, &count);
        if (rc == KEVO_OK && kevo_task_add_buffer(ld->task, name, type, role,
                                                  count, &e) != KEVO_OK)
            rc = fail_inner(ld, &e);
        kevo__jpath_pop(&ld->path, mark);
    } else {
        if (count_v) {
            mark = kevo__jpath_key(&ld->path, role_v ? "count" : "role");
            rc = role_v ? fail(ld, KEVO_EINVALID,
                               "scalar '%s' has no count; a buffer has the "
                               "role in, out or inout",
                               name)
                        : fail(ld, KEVO_EINVALID,
                               "buffer '%s' has a count but no role: give "
                               "\"role\": \"in\", \"out\" or \"inout\"",
                               name);
            kevo__jpath_pop(&ld->path, mark);
            return rc;
        }
        const char *value = NULL;
        mark = enter(ld, v, "value", &x);
        if (x && kevo_dtype_is_float(type)) {
            if (!json_is_number(x))
                rc = fail(ld, KEVO_EINVALID,
                          "scalar '%s' is %s: its value is a JSON number, "
                          "found %s",
                          name, type_name, kevo__json_type_name(x));
            else {
                shortest_double(json_number_value(x), text, sizeof text);
                value = text;
            }
        } else if (x) {
            if (json_is_real(x))
                rc = fail(ld, KEVO_EINVALID,
                          "scalar '%s' is %s: its value is an integer or an "
                          "integer expression, found a real number",
                          name, type_name);
            else
                rc = read_expr(ld, x, text, sizeof text, &value);
        }
        if (rc == KEVO_OK &&
            kevo_task_add_scalar(ld->task, name, type, value, &e) != KEVO_OK)
            rc = fail_inner(ld, &e);
        kevo__jpath_pop(&ld->path, mark);
    }
    if (rc != KEVO_OK)
        return rc;

    mark = enter(ld, v, "init", &x);
    if (x)
        rc = read_init(ld, name, x);
    kevo__jpath_pop(&ld->path, mark);
    if (rc != KEVO_OK)
        return rc;
    mark = enter(ld, v, "tolerance", &x);
    if (x)
        rc = read_tolerance(ld, name, x);
    kevo__jpath_pop(&ld->path, mark);
    return rc;
}

/* ---- the other parts ----------------------------------------------------- */

/* An array at the current path with at least min items. */
static kevo_status read_array(loader *ld, const json_t *v, size_t min,
                              const char *what)
{
    kevo_status rc = kevo__json_array(v, ld->origin, &ld->path, ld->err);
    if (rc == KEVO_OK && json_array_size(v) < min)
        rc = fail(ld, KEVO_EINVALID, "needs at least %zu %s", min, what);
    return rc;
}

static kevo_status read_dims(loader *ld, const json_t *v)
{
    kevo_status rc = read_array(ld, v, 1, "dim, such as \"n\"");
    for (size_t i = 0; rc == KEVO_OK && i < json_array_size(v); i++) {
        size_t mark = kevo__jpath_index(&ld->path, i);
        const char *name;
        rc = kevo__json_string(json_array_get(v, i), ld->origin, &ld->path,
                               &name, ld->err);
        kevo_error e = KEVO__ERROR_INIT;
        if (rc == KEVO_OK && kevo_task_add_dim(ld->task, name, &e) != KEVO_OK)
            rc = fail_inner(ld, &e);
        kevo__jpath_pop(&ld->path, mark);
    }
    return rc;
}

static kevo_status read_args(loader *ld, const json_t *v)
{
    kevo_status rc = read_array(ld, v, 1, "argument");
    for (size_t i = 0; rc == KEVO_OK && i < json_array_size(v); i++) {
        size_t mark = kevo__jpath_index(&ld->path, i);
        rc = read_arg(ld, json_array_get(v, i));
        kevo__jpath_pop(&ld->path, mark);
    }
    return rc;
}

/* A kernel: "FILE" | {"source": FILE} | {"code": TEXT}. */
static kevo_status read_kernel(loader *ld, const json_t *v, bool seed)
{
    static const char *const keys[] = {"source", "code", NULL};
    const char *file = NULL, *code = NULL;
    kevo_status rc = KEVO_OK;
    if (json_is_string(v)) {
        rc = kevo__json_string(v, ld->origin, &ld->path, &file, ld->err);
    } else if (json_is_object(v)) {
        rc = kevo__json_check_keys(v, keys, ld->origin, &ld->path, ld->err);
        json_t *s = json_object_get(v, "source"),
               *c = json_object_get(v, "code");
        if (rc == KEVO_OK && (!s) == (!c))
            rc = fail(ld, KEVO_EINVALID,
                      "give either \"source\" (a file) or \"code\" (the "
                      "kernel's text)");
        size_t mark = kevo__jpath_key(&ld->path, s ? "source" : "code");
        if (rc == KEVO_OK)
            rc = kevo__json_string(s ? s : c, ld->origin, &ld->path,
                                   s ? &file : &code, ld->err);
        kevo__jpath_pop(&ld->path, mark);
    } else {
        rc = fail(ld, KEVO_EINVALID,
                  "expected a file name, {\"source\": FILE} or {\"code\": "
                  "TEXT}, found %s",
                  kevo__json_type_name(v));
    }
    if (rc != KEVO_OK)
        return rc;
    char *data = NULL, *path = NULL;
    if (file) {
        if (!(path = kevo__path_join(ld->base_dir, file)))
            return kevo__error_set(ld->err, KEVO_ENOMEM, "out of memory");
        kevo_error e = KEVO__ERROR_INIT;
        rc = kevo__read_file(path, true, &data, NULL, &e);
        if (rc != KEVO_OK && e.domain == KEVO_DOMAIN_SYSTEM)
            rc = fail(ld, rc, "cannot open '%s': %s", path,
                      strerror((int)e.foreign));
        else if (rc != KEVO_OK)
            rc = fail_inner(ld, &e);
        free(path);
        if (rc != KEVO_OK)
            return rc;
        code = data;
    }
    kevo_error e = KEVO__ERROR_INIT;
    rc = seed ? kevo_task_set_seed(ld->task, code, file, &e)
              : kevo_task_set_reference(ld->task, code, file, &e);
    if (rc != KEVO_OK)
        rc = fail_inner(ld, &e);
    free(data);
    return rc;
}

static kevo_status read_cost(loader *ld, const json_t *v)
{
    static const char *const keys[] = {"bytes", "flops", "peak", NULL};
    kevo_status rc = kevo__json_object(v, ld->origin, &ld->path, ld->err);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(v, keys, ld->origin, &ld->path, ld->err);
    if (rc == KEVO_OK && !json_object_get(v, "bytes"))
        rc = missing(ld, "bytes",
                     "the fewest bytes the kernel must move, an expression "
                     "over the dims");
    if (rc != KEVO_OK)
        return rc;
    const char *text[2] = {NULL, "0"};
    char buf[2][64];
    static const char *const exprs[] = {"bytes", "flops"};
    for (int k = 0; k < 2 && rc == KEVO_OK; k++) {
        json_t *x;
        size_t mark = enter(ld, v, exprs[k], &x);
        if (x)
            rc = read_expr(ld, x, buf[k], sizeof buf[k], &text[k]);
        if (rc == KEVO_OK)
            rc = check_expr(ld, text[k]);
        kevo__jpath_pop(&ld->path, mark);
    }
    if (rc != KEVO_OK)
        return rc;
    kevo_peak peak = KEVO_PEAK_FP32;
    json_t *x;
    size_t mark = enter(ld, v, "peak", &x);
    if (x) {
        const char *name;
        rc = kevo__json_string(x, ld->origin, &ld->path, &name, ld->err);
        bool found = false;
        for (int p = KEVO_PEAK_FP32; rc == KEVO_OK && p <= KEVO_PEAK_BF16;
             p++) {
            if (strcmp(name, kevo_peak_name((kevo_peak)p)) == 0) {
                peak = (kevo_peak)p;
                found = true;
            }
        }
        if (rc == KEVO_OK && !found)
            rc = fail(ld, KEVO_EINVALID,
                      "unknown peak '%s' (known: fp32, fp64, tf32, fp16, "
                      "bf16)",
                      name);
    }
    kevo__jpath_pop(&ld->path, mark);
    kevo_error e = KEVO__ERROR_INIT;
    if (rc == KEVO_OK &&
        kevo_task_set_cost(ld->task, text[0], text[1], peak, &e) != KEVO_OK)
        rc = fail_inner(ld, &e);
    return rc;
}

static kevo_status read_shape(loader *ld, const json_t *v, kevo_shape_set set)
{
    const kevo_task *t = ld->task;
    int64_t values[KEVO__TASK_DIMS_MAX];
    kevo_status rc = kevo__json_object(v, ld->origin, &ld->path, ld->err);
    if (rc != KEVO_OK)
        return rc;
    const char *key;
    json_t *x;
    json_object_foreach ((json_t *)v, key, x) {
        if (kevo__task_find_dim(t, key) >= 0)
            continue;
        char dims[512] = "";
        size_t n = 0;
        for (size_t d = 0; d < t->ndims && n < sizeof dims; d++)
            n += (size_t)snprintf(dims + n, sizeof dims - n, "%s%s",
                                  d ? ", " : "", t->dims[d]);
        return fail(ld, KEVO_EINVALID, "unknown dim \"%s\" (the dims: %s)", key,
                    dims);
    }
    for (size_t d = 0; d < t->ndims; d++) {
        size_t mark = enter(ld, v, t->dims[d], &x);
        if (!x) {
            kevo__jpath_pop(&ld->path, mark);
            return fail(ld, KEVO_EINVALID,
                        "missing dim \"%s\": a shape gives every dim a value",
                        t->dims[d]);
        }
        if (!json_is_integer(x))
            rc = fail(ld, KEVO_EINVALID,
                      "a dim value is a positive integer, found %s",
                      kevo__json_type_name(x));
        else if (json_integer_value(x) <= 0)
            rc = fail(ld, KEVO_EINVALID,
                      "a dim value is a positive integer, found "
                      "%" JSON_INTEGER_FORMAT,
                      json_integer_value(x));
        else
            values[d] = (int64_t)json_integer_value(x);
        kevo__jpath_pop(&ld->path, mark);
        if (rc != KEVO_OK)
            return rc;
    }
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_task_add_shape(ld->task, set, values, t->ndims, &e) != KEVO_OK)
        return fail_inner(ld, &e);
    return KEVO_OK;
}

static kevo_status read_shapes(loader *ld, const json_t *v, kevo_shape_set set)
{
    kevo_status rc =
        read_array(ld, v, set == KEVO_SHAPES_TRAIN ? 1 : 0, "shape");
    for (size_t i = 0; rc == KEVO_OK && i < json_array_size(v); i++) {
        size_t mark = kevo__jpath_index(&ld->path, i);
        rc = read_shape(ld, json_array_get(v, i), set);
        kevo__jpath_pop(&ld->path, mark);
    }
    return rc;
}

/* [lo, hi] as two integers. */
static kevo_status read_pair(loader *ld, const json_t *v, int64_t *lo,
                             int64_t *hi)
{
    kevo_status rc = kevo__json_array(v, ld->origin, &ld->path, ld->err);
    if (rc == KEVO_OK && json_array_size(v) != 2)
        rc = fail(ld, KEVO_EINVALID, "expected [lo, hi], found %zu items",
                  json_array_size(v));
    for (size_t i = 0; rc == KEVO_OK && i < 2; i++) {
        size_t mark = kevo__jpath_index(&ld->path, i);
        rc = kevo__json_int(json_array_get(v, i), ld->origin, &ld->path,
                            i ? hi : lo, ld->err);
        kevo__jpath_pop(&ld->path, mark);
    }
    return rc;
}

static kevo_status read_param(loader *ld, const char *name, const json_t *v)
{
    static const char *const keys[] = {"values", "range",   "step",
                                       "pow2",   "default", NULL};
    kevo_status rc = kevo__json_object(v, ld->origin, &ld->path, ld->err);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(v, keys, ld->origin, &ld->path, ld->err);
    if (rc != KEVO_OK)
        return rc;
    json_t *values = json_object_get(v, "values");
    json_t *range = json_object_get(v, "range");
    json_t *pow2 = json_object_get(v, "pow2");
    json_t *step = json_object_get(v, "step");
    json_t *def = json_object_get(v, "default");
    if ((values != NULL) + (range != NULL) + (pow2 != NULL) != 1)
        return fail(ld, KEVO_EINVALID,
                    "give the domain of '%s' as one of \"values\": [...], "
                    "\"range\": [lo, hi] or \"pow2\": [lo, hi]",
                    name);
    if (step && !range)
        return fail(ld, KEVO_EINVALID, "\"step\" goes with \"range\" only");
    int64_t *list = NULL, lo = 0, hi = 0, by = 1, dflt = 0;
    size_t n = 0;
    size_t mark;
    if (values) {
        mark = kevo__jpath_key(&ld->path, "values");
        rc = read_array(ld, values, 1, "value");
        n = json_array_size(values);
        if (rc == KEVO_OK && n > KEVO_PARAM_DOMAIN_MAX)
            rc = fail(ld, KEVO_ELIMIT, "%zu values, more than %d", n,
                      KEVO_PARAM_DOMAIN_MAX);
        if (rc == KEVO_OK && !(list = malloc(n * sizeof *list)))
            rc = kevo__error_set(ld->err, KEVO_ENOMEM, "out of memory");
        for (size_t i = 0; rc == KEVO_OK && i < n; i++) {
            size_t m = kevo__jpath_index(&ld->path, i);
            rc = kevo__json_int(json_array_get(values, i), ld->origin,
                                &ld->path, &list[i], ld->err);
            kevo__jpath_pop(&ld->path, m);
        }
        if (rc == KEVO_OK)
            dflt = list[0];
    } else {
        mark = kevo__jpath_key(&ld->path, range ? "range" : "pow2");
        rc = read_pair(ld, range ? range : pow2, &lo, &hi);
        dflt = lo;
    }
    kevo__jpath_pop(&ld->path, mark);
    if (rc == KEVO_OK && step) {
        mark = kevo__jpath_key(&ld->path, "step");
        rc = kevo__json_int(step, ld->origin, &ld->path, &by, ld->err);
        kevo__jpath_pop(&ld->path, mark);
    }
    if (rc == KEVO_OK && def) {
        mark = kevo__jpath_key(&ld->path, "default");
        rc = kevo__json_int(def, ld->origin, &ld->path, &dflt, ld->err);
        kevo__jpath_pop(&ld->path, mark);
    }
    kevo_error e = KEVO__ERROR_INIT;
    kevo_paramspace *space = ld->task->params;
    if (rc == KEVO_OK) {
        kevo_status r =
            values ? kevo_paramspace_add_values(space, name, list, n, dflt, &e)
            : range
                ? kevo_paramspace_add_range(space, name, lo, hi, by, dflt, &e)
                : kevo_paramspace_add_pow2(space, name, lo, hi, dflt, &e);
        if (r != KEVO_OK)
            rc = fail_inner(ld, &e);
    }
    free(list);
    return rc;
}

static kevo_status read_params(loader *ld, const json_t *v)
{
    kevo_status rc = kevo__json_object(v, ld->origin, &ld->path, ld->err);
    const char *name;
    json_t *x;
    json_object_foreach ((json_t *)v, name, x) {
        if (rc != KEVO_OK)
            break;
        size_t mark = kevo__jpath_key(&ld->path, name);
        if (!kevo__is_identifier(name))
            rc = fail(ld, KEVO_EINVALID,
                      "parameter name '%s' is not an identifier "
                      "([A-Za-z_][A-Za-z0-9_]*, at most %d characters)",
                      name, KEVO__IDENT_MAX);
        else
            rc = read_param(ld, name, x);
        kevo__jpath_pop(&ld->path, mark);
    }
    return rc;
}

static kevo_status read_constraints(loader *ld, const json_t *v)
{
    kevo_status rc = read_array(ld, v, 0, "constraint");
    for (size_t i = 0; rc == KEVO_OK && i < json_array_size(v); i++) {
        size_t mark = kevo__jpath_index(&ld->path, i);
        const char *text;
        rc = kevo__json_string(json_array_get(v, i), ld->origin, &ld->path,
                               &text, ld->err);
        kevo_error e = KEVO__ERROR_INIT;
        if (rc == KEVO_OK && kevo_paramspace_add_constraint(
                                 ld->task->params, text, &e) != KEVO_OK)
            rc = fail_inner(ld, &e);
        kevo__jpath_pop(&ld->path, mark);
    }
    return rc;
}

static kevo_status read_descriptor(loader *ld, const json_t *v)
{
    static const char *const keys[] = {"name", "bins", "range", "edges", NULL};
    kevo_error e = KEVO__ERROR_INIT;
    kevo_status rc = KEVO_OK;
    if (json_is_string(v)) {
        const char *name;
        rc = kevo__json_string(v, ld->origin, &ld->path, &name, ld->err);
        if (rc == KEVO_OK &&
            kevo_task_add_descriptor(ld->task, name, 0, 0, 0, &e) != KEVO_OK)
            rc = fail_inner(ld, &e);
        return rc;
    }
    if (!json_is_object(v))
        return fail(ld, KEVO_EINVALID,
                    "expected a descriptor name or {\"name\", \"bins\", "
                    "\"range\"} or {\"name\", \"edges\"}, found %s",
                    kevo__json_type_name(v));
    rc = kevo__json_check_keys(v, keys, ld->origin, &ld->path, ld->err);
    json_t *name_v = json_object_get(v, "name"),
           *bins = json_object_get(v, "bins");
    json_t *range = json_object_get(v, "range"),
           *edges = json_object_get(v, "edges");
    if (rc == KEVO_OK && !name_v)
        rc = missing(ld, "name", "one of the descriptors kevo-task(5) lists");
    if (rc == KEVO_OK && (edges ? bins || range : !bins != !range))
        rc = fail(ld, KEVO_EINVALID,
                  "give \"bins\" with \"range\", or \"edges\" alone, or "
                  "neither (the default bins)");
    const char *name = NULL;
    json_t *x;
    size_t mark = enter(ld, v, "name", &x);
    if (rc == KEVO_OK)
        rc = kevo__json_string(x, ld->origin, &ld->path, &name, ld->err);
    kevo__jpath_pop(&ld->path, mark);
    if (rc != KEVO_OK)
        return rc;
    if (edges) {
        mark = kevo__jpath_key(&ld->path, "edges");
        rc = read_array(ld, edges, 1, "edge");
        size_t n = json_array_size(edges);
        double *list = NULL;
        if (rc == KEVO_OK && n >= KEVO__TASK_BINS_MAX)
            rc = fail(ld, KEVO_ELIMIT, "%zu edges, more than %d", n,
                      KEVO__TASK_BINS_MAX - 1);
        if (rc == KEVO_OK && !(list = malloc(n * sizeof *list)))
            rc = kevo__error_set(ld->err, KEVO_ENOMEM, "out of memory");
        for (size_t i = 0; rc == KEVO_OK && i < n; i++) {
            size_t m = kevo__jpath_index(&ld->path, i);
            rc = kevo__json_number(json_array_get(edges, i), ld->origin,
                                   &ld->path, &list[i], ld->err);
            kevo__jpath_pop(&ld->path, m);
        }
        if (rc == KEVO_OK && kevo_task_add_descriptor_edges(
                                 ld->task, name, list, n, &e) != KEVO_OK)
            rc = fail_inner(ld, &e);
        free(list);
        kevo__jpath_pop(&ld->path, mark);
        return rc;
    }
    int64_t nbins = 0;
    double lohi[2] = {0, 0};
    if (bins) {
        mark = kevo__jpath_key(&ld->path, "bins");
        rc = kevo__json_int(bins, ld->origin, &ld->path, &nbins, ld->err);
        if (rc == KEVO_OK && (nbins < 1 || nbins > KEVO__TASK_BINS_MAX))
            rc = fail(ld, KEVO_EINVALID, "bins must be 1 to %d, found %lld",
                      KEVO__TASK_BINS_MAX, (long long)nbins);
        kevo__jpath_pop(&ld->path, mark);
        mark = kevo__jpath_key(&ld->path, "range");
        if (rc == KEVO_OK)
            rc = kevo__json_array(range, ld->origin, &ld->path, ld->err);
        if (rc == KEVO_OK && json_array_size(range) != 2)
            rc = fail(ld, KEVO_EINVALID, "expected [lo, hi], found %zu items",
                      json_array_size(range));
        for (size_t i = 0; rc == KEVO_OK && i < 2; i++) {
            size_t m = kevo__jpath_index(&ld->path, i);
            rc = kevo__json_number(json_array_get(range, i), ld->origin,
                                   &ld->path, &lohi[i], ld->err);
            kevo__jpath_pop(&ld->path, m);
        }
        kevo__jpath_pop(&ld->path, mark);
    }
    if (rc == KEVO_OK &&
        kevo_task_add_descriptor(ld->task, name, (size_t)nbins, lohi[0],
                                 lohi[1], &e) != KEVO_OK)
        rc = fail_inner(ld, &e);
    return rc;
}

static kevo_status read_descriptors(loader *ld, const json_t *v)
{
    kevo_status rc = read_array(ld, v, 1, "descriptor");
    for (size_t i = 0; rc == KEVO_OK && i < json_array_size(v); i++) {
        size_t mark = kevo__jpath_index(&ld->path, i);
        rc = read_descriptor(ld, json_array_get(v, i));
        kevo__jpath_pop(&ld->path, mark);
    }
    return rc;
}

static const struct {
    const char *name;
    uint64_t factor;
} size_units[] = {
    {"B", 1},
    {"KB", 1000ull},
    {"kB", 1000ull},
    {"MB", 1000000ull},
    {"GB", 1000000000ull},
    {"TB", 1000000000000ull},
    {"KiB", 1ull << 10},
    {"MiB", 1ull << 20},
    {"GiB", 1ull << 30},
    {"TiB", 1ull << 40},
};

/* "16GiB", "1.5 GB", "4096": a size in bytes (rounded down). */
static bool parse_size(const char *s, uint64_t *out)
{
    const char *p = s;
    uint64_t whole = 0, frac_num = 0, frac_den = 1;
    if (*p < '0' || *p > '9')
        return false;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (__builtin_mul_overflow(whole, 10, &whole) ||
            __builtin_add_overflow(whole, (uint64_t)(*p - '0'), &whole))
            return false;
    }
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return false;
        for (; *p >= '0' && *p <= '9'; p++) {
            if (frac_den < 1000000000000ull) {
                frac_num = frac_num * 10 + (uint64_t)(*p - '0');
                frac_den *= 10;
            }
        }
    }
    if (*p == ' ')
        p++;
    uint64_t factor = 1;
    if (*p) {
        bool found = false;
        for (size_t i = 0; i < KEVO_ARRAY_SIZE(size_units) && !found; i++) {
            if (strcmp(p, size_units[i].name) == 0) {
                factor = size_units[i].factor;
                found = true;
            }
        }
        if (!found)
            return false;
    }
    uint64_t bytes;
    if (__builtin_mul_overflow(whole, factor, &bytes))
        return false;
    /* factor < 2^41 and frac_num < 10^12 < 2^40: the product fits. */
    unsigned __int128 frac = (unsigned __int128)frac_num * factor / frac_den;
    if (__builtin_add_overflow(bytes, (uint64_t)frac, &bytes))
        return false;
    *out = bytes;
    return true;
}

static kevo_status read_memory_limit(loader *ld, const json_t *v)
{
    uint64_t bytes = 0;
    if (json_is_integer(v)) {
        if (json_integer_value(v) <= 0)
            return fail(ld, KEVO_EINVALID,
                        "the memory limit must be positive, found "
                        "%" JSON_INTEGER_FORMAT,
                        json_integer_value(v));
        bytes = (uint64_t)json_integer_value(v);
    } else if (json_is_string(v)) {
        const char *s;
        kevo_status rc =
            kevo__json_string(v, ld->origin, &ld->path, &s, ld->err);
        if (rc != KEVO_OK)
            return rc;
        if (!parse_size(s, &bytes) || bytes == 0)
            return fail(ld, KEVO_EINVALID,
                        "'%s' is not a size: write a positive number of "
                        "bytes, or a number with a unit (B, KB, MB, GB, TB, "
                        "KiB, MiB, GiB, TiB), such as \"16GiB\"",
                        s);
    } else {
        return fail(ld, KEVO_EINVALID,
                    "expected a number of bytes or a size such as \"16GiB\", "
                    "found %s",
                    kevo__json_type_name(v));
    }
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_task_set_memory_limit(ld->task, bytes, &e) != KEVO_OK)
        return fail_inner(ld, &e);
    return KEVO_OK;
}

static kevo_status read_input_seed(loader *ld, const json_t *v)
{
    uint64_t seed = 0;
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        seed = (uint64_t)json_integer_value(v);
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        errno = 0;
        unsigned long long x = strtoull(s, &end, 10);
        if (*s < '0' || *s > '9' || *end || errno == ERANGE)
            return fail(ld, KEVO_EINVALID,
                        "'%s' is not a seed: write an integer from 0 to "
                        "2^64 - 1",
                        s);
        seed = x;
    } else {
        return fail(
            ld, KEVO_EINVALID, "expected a non-negative integer, found %s%s",
            kevo__json_type_name(v), json_is_integer(v) ? " below 0" : "");
    }
    kevo_task_set_input_seed(ld->task, seed);
    return KEVO_OK;
}

/* ---- the loader ---------------------------------------------------------- */

typedef kevo_status (*part_reader)(loader *ld, const json_t *v);

static kevo_status read_description(loader *ld, const json_t *v)
{
    const char *text;
    kevo_status rc =
        kevo__json_string(v, ld->origin, &ld->path, &text, ld->err);
    kevo_error e = KEVO__ERROR_INIT;
    if (rc == KEVO_OK &&
        kevo_task_set_description(ld->task, text, &e) != KEVO_OK)
        rc = fail_inner(ld, &e);
    return rc;
}

static kevo_status read_tolerance_part(loader *ld, const json_t *v)
{
    return read_tolerance(ld, NULL, v);
}

static kevo_status read_reference(loader *ld, const json_t *v)
{
    return read_kernel(ld, v, false);
}

static kevo_status read_seed(loader *ld, const json_t *v)
{
    return read_kernel(ld, v, true);
}

static kevo_status read_train(loader *ld, const json_t *v)
{
    return read_shapes(ld, v, KEVO_SHAPES_TRAIN);
}

static kevo_status read_held_out(loader *ld, const json_t *v)
{
    return read_shapes(ld, v, KEVO_SHAPES_HELD_OUT);
}

/* The parts after the name, in the order they are read: dims before what
 * uses them, parameters before the kernels that take them. */
static const struct {
    const char *key;
    part_reader read;
    const char *required; /* a hint when it is required; NULL if optional */
} parts[] = {
    {"description", read_description, NULL},
    {"dims", read_dims, "the problem dims, such as [\"rows\", \"cols\"]"},
    {"args", read_args, "the kernel's arguments"},
    {"tolerance", read_tolerance_part, NULL},
    {"params", read_params, NULL},
    {"constraints", read_constraints, NULL},
    {"reference", read_reference, "the reference kernel's file"},
    {"seed", read_seed, "the seed kernel's file"},
    {"cost", read_cost, "{\"bytes\": EXPR, \"flops\": EXPR}"},
    {"shapes", read_train, "the training shapes, such as [{\"n\": 1024}]"},
    {"held_out", read_held_out, NULL},
    {"descriptors", read_descriptors, NULL},
    {"memory_limit", read_memory_limit, NULL},
    {"input_seed", read_input_seed, NULL},
};

static kevo_status load_json(const json_t *root, loader *ld)
{
    static const char *const keys[] = {
        "name",        "description",  "dims",       "args",
        "reference",   "seed",         "tolerance",  "cost",
        "shapes",      "held_out",     "params",     "constraints",
        "descriptors", "memory_limit", "input_seed", NULL};
    kevo__jpath_init(&ld->path);
    kevo_status rc = kevo__json_object(root, ld->origin, &ld->path, ld->err);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(root, keys, ld->origin, &ld->path, ld->err);
    if (rc != KEVO_OK)
        return rc;
    if (!json_object_get(root, "name"))
        return missing(ld, "name", "the task's name, such as \"softmax\"");
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(parts); i++) {
        if (parts[i].required && !json_object_get(root, parts[i].key))
            return missing(ld, parts[i].key, parts[i].required);
    }
    json_t *x;
    const char *name;
    size_t mark = enter(ld, root, "name", &x);
    rc = kevo__json_string(x, ld->origin, &ld->path, &name, ld->err);
    kevo_error e = KEVO__ERROR_INIT;
    if (rc == KEVO_OK && kevo_task_new(name, &ld->task, &e) != KEVO_OK)
        rc = fail_inner(ld, &e);
    kevo__jpath_pop(&ld->path, mark);
    if (rc == KEVO_OK && kevo__task_set_origin(ld->task, ld->origin) != KEVO_OK)
        rc = kevo__error_set(ld->err, KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; rc == KEVO_OK && i < KEVO_ARRAY_SIZE(parts); i++) {
        mark = enter(ld, root, parts[i].key, &x);
        if (x)
            rc = parts[i].read(ld, x);
        kevo__jpath_pop(&ld->path, mark);
    }
    if (rc == KEVO_OK)
        rc = kevo_task_validate(ld->task, ld->err);
    return rc;
}

kevo_status kevo_task_load_string(const char *json, const char *origin,
                                  const char *base_dir, kevo_task **out,
                                  kevo_error *err)
{
    if (!out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_task_load_string: out is NULL");
    *out = NULL;
    if (!json)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_task_load_string: json is NULL");
    json_t *root = NULL;
    kevo_status rc = kevo__json_parse(json, origin, &root, err);
    if (rc != KEVO_OK)
        return rc;
    loader ld = {.origin = origin, .base_dir = base_dir, .err = err};
    rc = load_json(root, &ld);
    json_decref(root);
    if (rc != KEVO_OK) {
        kevo_task_free(ld.task);
        return rc;
    }
    *out = ld.task;
    return KEVO_OK;
}

kevo_status kevo_task_load(const char *path, kevo_task **out, kevo_error *err)
{
    if (!out)
        return kevo__error_set(err, KEVO_EINVAL, "kevo_task_load: out is NULL");
    *out = NULL;
    if (!path)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_task_load: path is NULL");
    char *text = NULL, *dir = NULL;
    kevo_status rc = kevo__read_file(path, true, &text, NULL, err);
    if (rc != KEVO_OK)
        return rc;
    if (!(dir = kevo__dirname(path)))
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    else
        rc = kevo_task_load_string(text, path, dir, out, err);
    free(dir);
    free(text);
    return rc;
}

/* ---- writing ------------------------------------------------------------- */

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
    if (!o || !put(o, "dist", json_string(dist_names[a->dist])))
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

static json_t *tolerance_to_json(double rtol, double atol)
{
    json_t *o = json_object();
    if (o && put(o, "rtol", json_real(rtol)) && put(o, "atol", json_real(atol)))
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
    if (a->has_tolerance &&
        !put(o, "tolerance", tolerance_to_json(a->rtol, a->atol)))
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
    if (t->has_tolerance &&
        !put(o, "tolerance", tolerance_to_json(t->rtol, t->atol)))
        goto fail;
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

/*
 * task_json_args.c: reading the arguments of a task file (kevo-task(5),
 * ARGUMENTS): each argument's name, type, role, count or value, init and
 * tolerance; and the task's default tolerance.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonutil.h"
#include "task_private.h"

/* The shortest decimal text that reads back as v. */
static void shortest_double(double v, char *buf, size_t size)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, size, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* A number at key of obj (def when absent, required when def is NULL). */
static kevo_status read_number_key(kevo_task_loader *ld, const json_t *obj,
                                   const char *key, const double *def,
                                   double *out)
{
    json_t *v;
    size_t mark = kevo__task_load_enter(ld, obj, key, &v);
    kevo_status rc = KEVO_OK;
    if (v)
        rc = kevo__json_number(v, ld->origin, &ld->path, out, ld->err);
    else if (def)
        *out = *def;
    kevo__jpath_pop(&ld->path, mark);
    if (!v && !def)
        rc = kevo__task_load_missing(ld, key, "a number");
    return rc;
}

static kevo_status read_init(kevo_task_loader *ld, const char *arg,
                             const json_t *v)
{
    kevo_status rc = kevo__json_object(v, ld->origin, &ld->path, ld->err);
    if (rc != KEVO_OK)
        return rc;
    json_t *d = json_object_get(v, "dist");
    const char *dist_name = NULL;
    if (!d)
        return kevo__task_load_missing(
            ld, "dist", "one of normal, uniform, randint, constant, nibbles");
    size_t mark = kevo__jpath_key(&ld->path, "dist");
    rc = kevo__json_string(d, ld->origin, &ld->path, &dist_name, ld->err);
    kevo_dist dist = KEVO_DIST_DEFAULT;
    for (int i = KEVO_DIST_NORMAL; rc == KEVO_OK && i <= KEVO_DIST_NIBBLES;
         i++) {
        if (strcmp(dist_name, kevo__dist_name((kevo_dist)i)) == 0)
            dist = (kevo_dist)i;
    }
    if (rc == KEVO_OK && dist == KEVO_DIST_DEFAULT)
        rc = kevo__task_load_fail(
            ld, KEVO_EINVALID,
            "unknown distribution '%s' (known: normal, uniform, "
            "randint, constant, nibbles)",
            dist_name);
    kevo__jpath_pop(&ld->path, mark);
    if (rc != KEVO_OK)
        return rc;
    static const char *const keys[][4] = {
        [KEVO_DIST_NORMAL] = {"dist", "mean", "std", NULL},
        [KEVO_DIST_UNIFORM] = {"dist", "lo", "hi", NULL},
        [KEVO_DIST_RANDINT] = {"dist", "lo", "hi", NULL},
        [KEVO_DIST_CONSTANT] = {"dist", "value", NULL, NULL},
        [KEVO_DIST_NIBBLES] = {"dist", "lo", "hi", NULL},
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
        return kevo__task_load_fail_inner(ld, &e);
    return KEVO_OK;
}

/* The element-wise terms of a tolerance object. */
static const char *const tolerance_terms[] = {"rtol", "atol", "rtol_amax",
                                              "ulp"};

static kevo_status fail_at_key(kevo_task_loader *ld, const char *key,
                               const char *fmt, ...) KEVO_PRINTF(3, 4);

/* Fails at key of the object at the current path. */
static kevo_status fail_at_key(kevo_task_loader *ld, const char *key,
                               const char *fmt, ...)
{
    char msg[KEVO_ERROR_TEXT_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t mark = kevo__jpath_key(&ld->path, key);
    kevo_status rc = kevo__task_load_fail(ld, KEVO_EINVALID, "%s", msg);
    kevo__jpath_pop(&ld->path, mark);
    return rc;
}

/* {"rtol": R, "atol": A, "rtol_amax": M, "ulp": U} (the element-wise rule)
 * or {"factor": F, "atol": A} (the baseline rule) for output; the task's
 * default (output NULL) may name the baseline kernel as well ("baseline",
 * read by kevo__task_read_baseline()). Each term defaults to 0 and must be
 * finite and >= 0; a factor must be > 0 and excludes rtol, rtol_amax and
 * ulp, and the task's factor needs its baseline. */
kevo_status kevo__task_read_tolerance(kevo_task_loader *ld, const char *output,
                                      const json_t *v)
{
    static const char *const keys[] = {"rtol", "atol",   "rtol_amax",
                                       "ulp",  "factor", NULL};
    static const char *const task_keys[] = {
        "rtol", "atol", "rtol_amax", "ulp", "factor", "baseline", NULL};
    kevo_status rc = kevo__json_object(v, ld->origin, &ld->path, ld->err);
    if (rc == KEVO_OK && output && json_object_get(v, "baseline"))
        rc = fail_at_key(ld, "baseline",
                         "the baseline kernel is the task's, not one "
                         "output's: name it in the task's tolerance "
                         "($.tolerance.baseline)");
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(v, output ? keys : task_keys, ld->origin,
                                   &ld->path, ld->err);
    static const double zero = 0;
    double terms[4] = {0, 0, 0, 0}, factor = 0;
    for (size_t i = 0; rc == KEVO_OK && i < 4; i++) {
        rc = read_number_key(ld, v, tolerance_terms[i], &zero, &terms[i]);
        if (rc == KEVO_OK && !(terms[i] >= 0 && isfinite(terms[i])))
            rc = fail_at_key(ld, tolerance_terms[i],
                             "tolerance: %s must be a number >= 0 (got %g)",
                             tolerance_terms[i], terms[i]);
    }
    bool baseline_rule = rc == KEVO_OK && json_object_get(v, "factor");
    if (baseline_rule) {
        rc = read_number_key(ld, v, "factor", &zero, &factor);
        if (rc == KEVO_OK && !(factor > 0 && isfinite(factor)))
            rc = fail_at_key(ld, "factor",
                             "tolerance: factor must be a number > 0 (got "
                             "%g): the candidate's error may be at most "
                             "factor times the baseline's",
                             factor);
        for (size_t i = 0; rc == KEVO_OK && i < 4; i++) {
            if (i != 1 && json_object_get(v, tolerance_terms[i]))
                rc = fail_at_key(ld, tolerance_terms[i],
                                 "tolerance: \"%s\" does not combine with "
                                 "\"factor\" (%g): the baseline rule "
                                 "bounds the error by factor times the "
                                 "baseline's plus atol, and has no other "
                                 "term",
                                 tolerance_terms[i], factor);
        }
        if (rc == KEVO_OK && !output && !json_object_get(v, "baseline"))
            rc = fail_at_key(ld, "factor",
                             "tolerance: \"factor\" (%g) needs the "
                             "baseline kernel it is relative to: add "
                             "\"baseline\": FILE",
                             factor);
    }
    if (rc != KEVO_OK)
        return rc;
    /* {"baseline": ...} alone names the kernel and leaves the task's
     * default as it is, as the writer leaves it out. */
    if (!output && json_object_size(v) == 1 && json_object_get(v, "baseline"))
        return KEVO_OK;
    kevo_error e = KEVO__ERROR_INIT;
    if ((baseline_rule ? kevo_task_set_tolerance_baseline(ld->task, output,
                                                          factor, terms[1], &e)
                       : kevo_task_set_tolerance_full(
                             ld->task, output, terms[0], terms[1], terms[2],
                             terms[3], &e)) != KEVO_OK)
        return kevo__task_load_fail_inner(ld, &e);
    return KEVO_OK;
}

/* One element of "args"; arg is unused (kevo__task_load_each). */
static kevo_status read_arg(kevo_task_loader *ld, const json_t *v, void *arg)
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
        return kevo__task_load_missing(ld, "name",
                                       "the argument's name in the kernel");
    if (!type_v)
        return kevo__task_load_missing(ld, "type",
                                       "f32, f64, f16, bf16, i8, u8, i16, u16, "
                                       "i32, u32, i64 or u64");

    const char *name, *type_name, *role_name = NULL;
    json_t *x;
    size_t mark = kevo__task_load_enter(ld, v, "name", &x);
    rc = kevo__json_string(x, ld->origin, &ld->path, &name, ld->err);
    if (rc == KEVO_OK && !kevo__is_identifier(name))
        rc = kevo__task_load_fail(
            ld, KEVO_EINVALID,
            "argument name '%s' is not an identifier "
            "([A-Za-z_][A-Za-z0-9_]*, at most %d characters)",
            name, KEVO__IDENT_MAX);
    if (rc == KEVO_OK && kevo__task_find_arg(ld->task, name) >= 0)
        rc = kevo__task_load_fail(ld, KEVO_EEXIST,
                                  "argument '%s' is declared twice", name);
    kevo__jpath_pop(&ld->path, mark);
    if (rc != KEVO_OK)
        return rc;

    kevo_dtype type = KEVO_DTYPE_F32;
    mark = kevo__task_load_enter(ld, v, "type", &x);
    rc = kevo__json_string(x, ld->origin, &ld->path, &type_name, ld->err);
    if (rc == KEVO_OK && kevo_dtype_parse(type_name, &type) != KEVO_OK)
        rc = kevo__task_load_fail(
            ld, KEVO_EINVALID,
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
        mark = kevo__task_load_enter(ld, v, "role", &x);
        rc = kevo__json_string(x, ld->origin, &ld->path, &role_name, ld->err);
        bool found = false;
        for (size_t i = 0; rc == KEVO_OK && i < KEVO_ARRAY_SIZE(roles); i++) {
            if (strcmp(role_name, kevo__role_name(roles[i])) == 0) {
                role = roles[i];
                found = true;
            }
        }
        if (rc == KEVO_OK && !found)
            rc = kevo__task_load_fail(
                ld, KEVO_EINVALID,
                "unknown role '%s' (known: in, out, inout, scalar)", role_name);
        kevo__jpath_pop(&ld->path, mark);
        if (rc != KEVO_OK)
            return rc;
    }

    kevo_error e = KEVO__ERROR_INIT;
    char text[64];
    if (role != KEVO_ROLE_SCALAR) {
        if (!count_v)
            return kevo__task_load_missing(
                ld, "count",
                "a buffer's element count, an expression over the "
                "dims");
        if (value_v) {
            mark = kevo__jpath_key(&ld->path, "value");
            rc = kevo__task_load_fail(
                ld, KEVO_EINVALID,
                "buffer '%s' has a count, not a value (a value is for "
                "scalars)",
                name);
            kevo__jpath_pop(&ld->path, mark);
            return rc;
        }
        const char *count;
        mark = kevo__task_load_enter(ld, v, "count", &x);
        rc = kevo__task_load_expr(ld, x, text, sizeof text, &count);
        if (rc == KEVO_OK && kevo_task_add_buffer(ld->task, name, type, role,
                                                  count, &e) != KEVO_OK)
            rc = kevo__task_load_fail_inner(ld, &e);
        kevo__jpath_pop(&ld->path, mark);
    } else {
        if (count_v) {
            mark = kevo__jpath_key(&ld->path, role_v ? "count" : "role");
            rc = role_v ? kevo__task_load_fail(
                              ld, KEVO_EINVALID,
                              "scalar '%s' has no count; a buffer has the "
                              "role in, out or inout",
                              name)
                        : kevo__task_load_fail(
                              ld, KEVO_EINVALID,
                              "buffer '%s' has a count but no role: give "
                              "\"role\": \"in\", \"out\" or \"inout\"",
                              name);
            kevo__jpath_pop(&ld->path, mark);
            return rc;
        }
        const char *value = NULL;
        mark = kevo__task_load_enter(ld, v, "value", &x);
        if (x && kevo_dtype_is_float(type)) {
            if (!json_is_number(x))
                rc = kevo__task_load_fail(
                    ld, KEVO_EINVALID,
                    "scalar '%s' is %s: its value is a JSON number, "
                    "found %s",
                    name, type_name, kevo__json_type_name(x));
            else {
                shortest_double(json_number_value(x), text, sizeof text);
                value = text;
            }
        } else if (x) {
            if (json_is_real(x))
                rc = kevo__task_load_fail(
                    ld, KEVO_EINVALID,
                    "scalar '%s' is %s: its value is an integer or an "
                    "integer expression, found a real number",
                    name, type_name);
            else
                rc = kevo__task_load_expr(ld, x, text, sizeof text, &value);
        }
        if (rc == KEVO_OK &&
            kevo_task_add_scalar(ld->task, name, type, value, &e) != KEVO_OK)
            rc = kevo__task_load_fail_inner(ld, &e);
        kevo__jpath_pop(&ld->path, mark);
    }
    if (rc != KEVO_OK)
        return rc;

    mark = kevo__task_load_enter(ld, v, "init", &x);
    if (x)
        rc = read_init(ld, name, x);
    kevo__jpath_pop(&ld->path, mark);
    if (rc != KEVO_OK)
        return rc;
    mark = kevo__task_load_enter(ld, v, "tolerance", &x);
    if (x)
        rc = kevo__task_read_tolerance(ld, name, x);
    kevo__jpath_pop(&ld->path, mark);
    return rc;
}

kevo_status kevo__task_read_args(kevo_task_loader *ld, const json_t *v)
{
    return kevo__task_load_each(ld, v, 1, "argument", read_arg, NULL);
}

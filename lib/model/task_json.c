/*
 * task_json.c: loading a task file (kevo-task(5)) strictly: the loader's
 * shared helpers, the top-level keys and their order, and the parts that
 * need no file of their own. The arguments are read in task_json_args.c,
 * params, constraints and descriptors in task_json_spaces.c; writing a task
 * back is task_write.c.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonutil.h"
#include "task_private.h"

/* ---- helpers of every part ----------------------------------------------- */

kevo_status kevo__task_load_fail(kevo_task_loader *ld, kevo_status code,
                                 const char *fmt, ...)
{
    char msg[KEVO_ERROR_TEXT_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return kevo__json_fail(ld->err, code, ld->origin, &ld->path, "%s", msg);
}

kevo_status kevo__task_load_fail_inner(kevo_task_loader *ld,
                                       const kevo_error *e)
{
    kevo_status code = e->code;
    if (code == KEVO_EINVAL || code == KEVO_ESTATE)
        code = KEVO_EINVALID;
    return kevo__task_load_fail(ld, code, "%s", e->text);
}

size_t kevo__task_load_enter(kevo_task_loader *ld, const json_t *obj,
                             const char *key, json_t **v)
{
    *v = json_object_get(obj, key);
    return kevo__jpath_key(&ld->path, key);
}

kevo_status kevo__task_load_missing(kevo_task_loader *ld, const char *key,
                                    const char *hint)
{
    return kevo__task_load_fail(ld, KEVO_EINVALID,
                                "missing required key \"%s\" (%s)", key, hint);
}

kevo_status kevo__task_load_expr(kevo_task_loader *ld, const json_t *v,
                                 char *buf, size_t size, const char **out)
{
    if (json_is_integer(v)) {
        snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        *out = buf;
        return KEVO_OK;
    }
    if (!json_is_string(v))
        return kevo__task_load_fail(
            ld, KEVO_EINVALID,
            "expected an expression (a string such as \"2*n\", or an "
            "integer), found %s",
            kevo__json_type_name(v));
    return kevo__json_string(v, ld->origin, &ld->path, out, ld->err);
}

kevo_status kevo__task_load_array(kevo_task_loader *ld, const json_t *v,
                                  size_t min, const char *what)
{
    kevo_status rc = kevo__json_array(v, ld->origin, &ld->path, ld->err);
    if (rc == KEVO_OK && json_array_size(v) < min)
        rc = kevo__task_load_fail(ld, KEVO_EINVALID, "needs at least %zu %s",
                                  min, what);
    return rc;
}

kevo_status kevo__task_load_each(
    kevo_task_loader *ld, const json_t *v, size_t min, const char *what,
    kevo_status (*read)(kevo_task_loader *ld, const json_t *elem, void *arg),
    void *arg)
{
    kevo_status rc = kevo__task_load_array(ld, v, min, what);
    for (size_t i = 0; rc == KEVO_OK && i < json_array_size(v); i++) {
        size_t mark = kevo__jpath_index(&ld->path, i);
        rc = read(ld, json_array_get(v, i), arg);
        kevo__jpath_pop(&ld->path, mark);
    }
    return rc;
}

/* Parses text at the current path, only to place its error there. */
static kevo_status check_expr(kevo_task_loader *ld, const char *text)
{
    kevo_error e = KEVO__ERROR_INIT;
    kevo_expr *x = NULL;
    kevo_status rc = kevo_expr_parse(text, &x, &e);
    kevo_expr_free(x);
    return rc == KEVO_OK ? KEVO_OK : kevo__task_load_fail_inner(ld, &e);
}

/* ---- the parts ----------------------------------------------------------- */

static kevo_status read_dim(kevo_task_loader *ld, const json_t *v, void *arg)
{
    const char *name;
    kevo_status rc =
        kevo__json_string(v, ld->origin, &ld->path, &name, ld->err);
    kevo_error e = KEVO__ERROR_INIT;
    if (rc == KEVO_OK && kevo_task_add_dim(ld->task, name, &e) != KEVO_OK)
        rc = kevo__task_load_fail_inner(ld, &e);
    return rc;
}

static kevo_status read_dims(kevo_task_loader *ld, const json_t *v)
{
    return kevo__task_load_each(ld, v, 1, "dim, such as \"n\"", read_dim, NULL);
}

/* The task's kernels a file names. */
typedef enum task_kernel {
    KERNEL_REFERENCE,
    KERNEL_SEED,
    KERNEL_BASELINE
} task_kernel;

/* A kernel: "FILE" | {"source": FILE} | {"code": TEXT}. */
static kevo_status read_kernel(kevo_task_loader *ld, const json_t *v,
                               task_kernel which)
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
            rc = kevo__task_load_fail(
                ld, KEVO_EINVALID,
                "give either \"source\" (a file) or \"code\" (the "
                "kernel's text)");
        size_t mark = kevo__jpath_key(&ld->path, s ? "source" : "code");
        if (rc == KEVO_OK)
            rc = kevo__json_string(s ? s : c, ld->origin, &ld->path,
                                   s ? &file : &code, ld->err);
        kevo__jpath_pop(&ld->path, mark);
    } else {
        rc = kevo__task_load_fail(
            ld, KEVO_EINVALID,
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
            rc = kevo__task_load_fail(ld, rc, "cannot open '%s': %s", path,
                                      strerror((int)e.foreign));
        else if (rc != KEVO_OK)
            rc = kevo__task_load_fail_inner(ld, &e);
        free(path);
        if (rc != KEVO_OK)
            return rc;
        code = data;
    }
    kevo_error e = KEVO__ERROR_INIT;
    rc = which == KERNEL_SEED ? kevo_task_set_seed(ld->task, code, file, &e)
         : which == KERNEL_BASELINE
             ? kevo_task_set_baseline(ld->task, code, file, &e)
             : kevo_task_set_reference(ld->task, code, file, &e);
    if (rc != KEVO_OK)
        rc = kevo__task_load_fail_inner(ld, &e);
    free(data);
    return rc;
}

static kevo_status read_cost(kevo_task_loader *ld, const json_t *v)
{
    static const char *const keys[] = {"bytes", "flops", "peak", NULL};
    kevo_status rc = kevo__json_object(v, ld->origin, &ld->path, ld->err);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(v, keys, ld->origin, &ld->path, ld->err);
    if (rc == KEVO_OK && !json_object_get(v, "bytes"))
        rc = kevo__task_load_missing(
            ld, "bytes",
            "the fewest bytes the kernel must move, an expression "
            "over the dims");
    if (rc != KEVO_OK)
        return rc;
    const char *text[2] = {NULL, "0"};
    char buf[2][64];
    static const char *const exprs[] = {"bytes", "flops"};
    for (int k = 0; k < 2 && rc == KEVO_OK; k++) {
        json_t *x;
        size_t mark = kevo__task_load_enter(ld, v, exprs[k], &x);
        if (x)
            rc = kevo__task_load_expr(ld, x, buf[k], sizeof buf[k], &text[k]);
        if (rc == KEVO_OK)
            rc = check_expr(ld, text[k]);
        kevo__jpath_pop(&ld->path, mark);
    }
    if (rc != KEVO_OK)
        return rc;
    kevo_peak peak = KEVO_PEAK_FP32;
    json_t *x;
    size_t mark = kevo__task_load_enter(ld, v, "peak", &x);
    if (x) {
        const char *name;
        rc = kevo__json_string(x, ld->origin, &ld->path, &name, ld->err);
        bool found = false;
        for (int p = KEVO_PEAK_FP32; rc == KEVO_OK && p <= KEVO_PEAK_FP8; p++) {
            if (strcmp(name, kevo_peak_name((kevo_peak)p)) == 0) {
                peak = (kevo_peak)p;
                found = true;
            }
        }
        if (rc == KEVO_OK && !found)
            rc = kevo__task_load_fail(
                ld, KEVO_EINVALID,
                "unknown peak '%s' (known: fp32, fp64, tf32, fp16, "
                "bf16, fp8)",
                name);
    }
    kevo__jpath_pop(&ld->path, mark);
    kevo_error e = KEVO__ERROR_INIT;
    if (rc == KEVO_OK &&
        kevo_task_set_cost(ld->task, text[0], text[1], peak, &e) != KEVO_OK)
        rc = kevo__task_load_fail_inner(ld, &e);
    return rc;
}

static kevo_status read_shape(kevo_task_loader *ld, const json_t *v,
                              kevo_shape_set set)
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
        return kevo__task_load_fail(
            ld, KEVO_EINVALID, "unknown dim \"%s\" (the dims: %s)", key, dims);
    }
    for (size_t d = 0; d < t->ndims; d++) {
        size_t mark = kevo__task_load_enter(ld, v, t->dims[d], &x);
        if (!x) {
            kevo__jpath_pop(&ld->path, mark);
            return kevo__task_load_fail(
                ld, KEVO_EINVALID,
                "missing dim \"%s\": a shape gives every dim a value",
                t->dims[d]);
        }
        if (!json_is_integer(x))
            rc = kevo__task_load_fail(
                ld, KEVO_EINVALID,
                "a dim value is a positive integer, found %s",
                kevo__json_type_name(x));
        else if (json_integer_value(x) <= 0)
            rc =
                kevo__task_load_fail(ld, KEVO_EINVALID,
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
        return kevo__task_load_fail_inner(ld, &e);
    return KEVO_OK;
}

static kevo_status read_shape_of(kevo_task_loader *ld, const json_t *v,
                                 void *set)
{
    return read_shape(ld, v, *(const kevo_shape_set *)set);
}

static kevo_status read_shapes(kevo_task_loader *ld, const json_t *v,
                               kevo_shape_set set)
{
    return kevo__task_load_each(ld, v, set == KEVO_SHAPES_TRAIN ? 1 : 0,
                                "shape", read_shape_of, &set);
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

static kevo_status read_memory_limit(kevo_task_loader *ld, const json_t *v)
{
    uint64_t bytes = 0;
    if (json_is_integer(v)) {
        if (json_integer_value(v) <= 0)
            return kevo__task_load_fail(
                ld, KEVO_EINVALID,
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
            return kevo__task_load_fail(
                ld, KEVO_EINVALID,
                "'%s' is not a size: write a positive number of "
                "bytes, or a number with a unit (B, KB, MB, GB, TB, "
                "KiB, MiB, GiB, TiB), such as \"16GiB\"",
                s);
    } else {
        return kevo__task_load_fail(
            ld, KEVO_EINVALID,
            "expected a number of bytes or a size such as \"16GiB\", "
            "found %s",
            kevo__json_type_name(v));
    }
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_task_set_memory_limit(ld->task, bytes, &e) != KEVO_OK)
        return kevo__task_load_fail_inner(ld, &e);
    return KEVO_OK;
}

static kevo_status read_input_seed(kevo_task_loader *ld, const json_t *v)
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
            return kevo__task_load_fail(
                ld, KEVO_EINVALID,
                "'%s' is not a seed: write an integer from 0 to "
                "2^64 - 1",
                s);
        seed = x;
    } else {
        return kevo__task_load_fail(
            ld, KEVO_EINVALID, "expected a non-negative integer, found %s%s",
            kevo__json_type_name(v), json_is_integer(v) ? " below 0" : "");
    }
    kevo_task_set_input_seed(ld->task, seed);
    return KEVO_OK;
}

/* ---- the loader ---------------------------------------------------------- */

typedef kevo_status (*part_reader)(kevo_task_loader *ld, const json_t *v);

static kevo_status read_description(kevo_task_loader *ld, const json_t *v)
{
    const char *text;
    kevo_status rc =
        kevo__json_string(v, ld->origin, &ld->path, &text, ld->err);
    kevo_error e = KEVO__ERROR_INIT;
    if (rc == KEVO_OK &&
        kevo_task_set_description(ld->task, text, &e) != KEVO_OK)
        rc = kevo__task_load_fail_inner(ld, &e);
    return rc;
}

static kevo_status read_tolerance_part(kevo_task_loader *ld, const json_t *v)
{
    return kevo__task_read_tolerance(ld, NULL, v);
}

static kevo_status read_reference(kevo_task_loader *ld, const json_t *v)
{
    return read_kernel(ld, v, KERNEL_REFERENCE);
}

static kevo_status read_seed(kevo_task_loader *ld, const json_t *v)
{
    return read_kernel(ld, v, KERNEL_SEED);
}

kevo_status kevo__task_read_baseline(kevo_task_loader *ld, const json_t *v)
{
    json_t *x;
    if (!json_is_object(v))
        return KEVO_OK; /* read_tolerance_part said so */
    size_t mark = kevo__task_load_enter(ld, v, "baseline", &x);
    kevo_status rc = x ? read_kernel(ld, x, KERNEL_BASELINE) : KEVO_OK;
    kevo__jpath_pop(&ld->path, mark);
    return rc;
}

static kevo_status read_train(kevo_task_loader *ld, const json_t *v)
{
    return read_shapes(ld, v, KEVO_SHAPES_TRAIN);
}

static kevo_status read_held_out(kevo_task_loader *ld, const json_t *v)
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
    {"args", kevo__task_read_args, "the kernel's arguments"},
    {"tolerance", read_tolerance_part, NULL},
    {"params", kevo__task_read_params, NULL},
    {"constraints", kevo__task_read_constraints, NULL},
    {"reference", read_reference, "the reference kernel's file"},
    {"seed", read_seed, "the seed kernel's file"},
    {"tolerance", kevo__task_read_baseline, NULL},
    {"cost", read_cost, "{\"bytes\": EXPR, \"flops\": EXPR}"},
    {"shapes", read_train, "the training shapes, such as [{\"n\": 1024}]"},
    {"held_out", read_held_out, NULL},
    {"descriptors", kevo__task_read_descriptors, NULL},
    {"memory_limit", read_memory_limit, NULL},
    {"input_seed", read_input_seed, NULL},
};

static kevo_status load_json(const json_t *root, kevo_task_loader *ld)
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
        return kevo__task_load_missing(ld, "name",
                                       "the task's name, such as \"softmax\"");
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(parts); i++) {
        if (parts[i].required && !json_object_get(root, parts[i].key))
            return kevo__task_load_missing(ld, parts[i].key, parts[i].required);
    }
    json_t *x;
    const char *name;
    size_t mark = kevo__task_load_enter(ld, root, "name", &x);
    rc = kevo__json_string(x, ld->origin, &ld->path, &name, ld->err);
    kevo_error e = KEVO__ERROR_INIT;
    if (rc == KEVO_OK && kevo_task_new(name, &ld->task, &e) != KEVO_OK)
        rc = kevo__task_load_fail_inner(ld, &e);
    kevo__jpath_pop(&ld->path, mark);
    if (rc == KEVO_OK && kevo__task_set_origin(ld->task, ld->origin) != KEVO_OK)
        rc = kevo__error_set(ld->err, KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; rc == KEVO_OK && i < KEVO_ARRAY_SIZE(parts); i++) {
        mark = kevo__task_load_enter(ld, root, parts[i].key, &x);
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
    kevo_task_loader ld = {.origin = origin, .base_dir = base_dir, .err = err};
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

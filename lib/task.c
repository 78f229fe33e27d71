/*
 * task.c: the task model: building a task, reading it back, its cost model
 * and memory footprint, and fitting candidates to it.
 */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidate_private.h"
#include "descriptor.h"
#include "devprops.h"
#include "task_private.h"

/* ---- small shared helpers ------------------------------------------------ */

ptrdiff_t kevo__task_find_arg(const kevo_task *task, const char *name)
{
    for (size_t i = 0; i < task->nargs; i++) {
        if (strcmp(task->args[i].name, name) == 0)
            return (ptrdiff_t)i;
    }
    return -1;
}

ptrdiff_t kevo__task_find_dim(const kevo_task *task, const char *name)
{
    for (size_t i = 0; i < task->ndims; i++) {
        if (strcmp(task->dims[i], name) == 0)
            return (ptrdiff_t)i;
    }
    return -1;
}

bool kevo__task_role_is_output(kevo_role role)
{
    return role == KEVO_ROLE_OUT || role == KEVO_ROLE_INOUT;
}

const char *kevo__role_name(kevo_role role)
{
    switch (role) {
    case KEVO_ROLE_IN: return "in";
    case KEVO_ROLE_OUT: return "out";
    case KEVO_ROLE_INOUT: return "inout";
    case KEVO_ROLE_SCALAR: return "scalar";
    }
    return "?";
}

bool kevo__dtype_int_range(kevo_dtype type, double *lo, double *hi)
{
    switch (type) {
    case KEVO_DTYPE_I8: *lo = -128.0, *hi = 127.0; return true;
    case KEVO_DTYPE_U8: *lo = 0.0, *hi = 255.0; return true;
    case KEVO_DTYPE_I16: *lo = -32768.0, *hi = 32767.0; return true;
    case KEVO_DTYPE_U16: *lo = 0.0, *hi = 65535.0; return true;
    case KEVO_DTYPE_I32: *lo = -2147483648.0, *hi = 2147483647.0; return true;
    case KEVO_DTYPE_U32: *lo = 0.0, *hi = 4294967295.0; return true;
    case KEVO_DTYPE_I64:
        *lo = -9223372036854775808.0, *hi = 9223372036854775807.0;
        return true;
    case KEVO_DTYPE_U64: *lo = 0.0, *hi = 18446744073709551615.0; return true;
    default: return false;
    }
}

double kevo__dtype_float_max(kevo_dtype type)
{
    switch (type) {
    case KEVO_DTYPE_F32: return FLT_MAX;
    case KEVO_DTYPE_F64: return DBL_MAX;
    case KEVO_DTYPE_F16: return 65504.0;
    case KEVO_DTYPE_BF16: return 3.3895313892515355e38;
    default: return 0.0;
    }
}

/* True when s is valid UTF-8 (JSON holds nothing else). */
static bool utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char c = *p;
        size_t n;
        uint32_t cp;
        if (c < 0x80) {
            p++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf)
            n = 2, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef)
            n = 3, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4)
            n = 4, cp = c & 0x07;
        else
            return false;
        for (size_t k = 1; k < n; k++) {
            if ((p[k] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (p[k] & 0x3f);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        p += n;
    }
    return true;
}

static bool dtype_valid(kevo_dtype type)
{
    return (unsigned)type <= (unsigned)KEVO_DTYPE_U64;
}

/* An integer-valued double within [lo, hi]. The hi of i64 and u64 rounds
 * up to 2^63 and 2^64, which those types do not hold. */
static bool int_in_range(double v, double lo, double hi)
{
    if (!isfinite(v) || v != floor(v) || v < lo || v > hi)
        return false;
    return v < hi || hi < 9223372036854775808.0;
}

void kevo__task_shape_text(const kevo_task *task, kevo_shape_set set, size_t i,
                           char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    const int64_t *v = kevo_task_shape(task, set, i);
    if (!v)
        return;
    for (size_t d = 0; d < task->ndims && n < size; d++) {
        int w = snprintf(buf + n, size - n, "%s%s=%lld", d ? ", " : "",
                         task->dims[d], (long long)v[d]);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

kevo_status kevo__task_set_origin(kevo_task *task, const char *origin)
{
    char *copy = NULL;
    if (origin && !(copy = kevo__strdup(origin)))
        return KEVO_ENOMEM;
    free(task->origin);
    task->origin = copy;
    task->from_json = true;
    return KEVO_OK;
}

/* ---- descriptors --------------------------------------------------------- */

static void desc_clear(kevo_task_desc *d)
{
    free(d->d.name);
    free(d->d.edges);
    memset(d, 0, sizeof *d);
}

/* Fills *d from name with nbins equal bins over [lo, hi), or with the n
 * edges, or (nbins 0 and no edges) with the descriptor's default bins. */
static kevo_status desc_fill(kevo_task_desc *d, const kevo_descriptor_def *def,
                             size_t nbins, double lo, double hi,
                             const double *edges, size_t n)
{
    memset(d, 0, sizeof *d);
    if (!edges && nbins == 0) {
        d->by_name = true;
        nbins = def->nbins;
        lo = def->lo;
        hi = def->hi;
        edges = def->nedges ? def->edges : NULL;
        n = def->nedges;
    }
    if (!(d->d.name = kevo__strdup(def->name)))
        return KEVO_ENOMEM;
    if (edges) {
        if (!(d->d.edges = malloc(n * sizeof *edges))) {
            desc_clear(d);
            return KEVO_ENOMEM;
        }
        memcpy(d->d.edges, edges, n * sizeof *edges);
        d->d.nedges = n;
    } else {
        d->d.nbins = nbins;
        d->d.lo = lo;
        d->d.hi = hi;
    }
    return KEVO_OK;
}

const kevo_task_descriptor *kevo__task_descriptor(const kevo_task *task,
                                                  size_t i)
{
    if (!task)
        return NULL;
    if (task->ndescriptors == 0)
        return i < KEVO_ARRAY_SIZE(task->defaults) ? &task->defaults[i].d
                                                   : NULL;
    return i < task->ndescriptors ? &task->descriptors[i].d : NULL;
}

/* ---- life cycle ---------------------------------------------------------- */

static bool task_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > KEVO__TASK_NAME_MAX || name[0] == '.' || name[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
            return false;
    }
    return true;
}

kevo_status kevo_task_new(const char *name, kevo_task **out, kevo_error *err)
{
    if (!out)
        return kevo__error_set(err, KEVO_EINVAL, "kevo_task_new: out is NULL");
    *out = NULL;
    if (!name || !task_name_ok(name))
        return kevo__error_set(
            err, KEVO_EINVAL,
            "task name '%s' is not valid: use 1 to %d letters, digits, '_', "
            "'-' and '.', starting with a letter, a digit or '_'",
            name ? name : "(null)", KEVO__TASK_NAME_MAX);
    kevo_task *t = calloc(1, sizeof *t);
    if (!t)
        goto nomem;
    t->memory_limit = KEVO_TASK_MEMORY_LIMIT_DEFAULT;
    t->input_seed = 1;
    t->peak = KEVO_PEAK_FP32;
    if (!(t->name = kevo__strdup(name)) || !(t->params = kevo_paramspace_new()))
        goto nomem;
    static const char *const defaults[] = {"memory", "block_size"};
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(defaults); i++) {
        const kevo_descriptor_def *def = kevo__descriptor_find(defaults[i]);
        if (!def ||
            desc_fill(&t->defaults[i], def, 0, 0, 0, NULL, 0) != KEVO_OK)
            goto nomem;
    }
    *out = t;
    return KEVO_OK;
nomem:
    kevo_task_free(t);
    return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
}

static void arg_clear(kevo_task_arg *a)
{
    free(a->name);
    free(a->count);
    kevo_expr_free(a->count_expr);
    free(a->value);
    kevo_expr_free(a->value_expr);
}

void kevo_task_free(kevo_task *task)
{
    if (!task)
        return;
    free(task->name);
    free(task->description);
    free(task->origin);
    for (size_t i = 0; i < task->ndims; i++)
        free(task->dims[i]);
    free(task->dims);
    for (size_t i = 0; i < task->nargs; i++)
        arg_clear(&task->args[i]);
    free(task->args);
    kevo_candidate_free(task->reference);
    kevo_candidate_free(task->seed);
    kevo_expr_free(task->bytes);
    kevo_expr_free(task->flops);
    free(task->shapes[0].values);
    free(task->shapes[1].values);
    kevo_paramspace_free(task->params);
    for (size_t i = 0; i < task->ndescriptors; i++)
        desc_clear(&task->descriptors[i]);
    free(task->descriptors);
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(task->defaults); i++)
        desc_clear(&task->defaults[i]);
    free(task);
}

/* ---- setters ------------------------------------------------------------- */

#define CHECK_TASK(task, err, fn)                                              \
    do {                                                                       \
        if (!(task))                                                           \
            return kevo__error_set(err, KEVO_EINVAL, fn ": task is NULL");     \
    } while (0)

kevo_status kevo_task_set_description(kevo_task *task, const char *text,
                                      kevo_error *err)
{
    CHECK_TASK(task, err, "kevo_task_set_description");
    if (!text)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_task_set_description: text is NULL");
    if (!utf8_valid(text))
        return kevo__error_set(err, KEVO_EINVAL,
                               "description: the text is not valid UTF-8");
    char *copy = kevo__strdup(text);
    if (!copy)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    free(task->description);
    task->description = copy;
    return KEVO_OK;
}

kevo_status kevo_task_add_dim(kevo_task *task, const char *name,
                              kevo_error *err)
{
    CHECK_TASK(task, err, "kevo_task_add_dim");
    if (!name || !kevo__is_identifier(name))
        return kevo__error_set(
            err, KEVO_EINVAL,
            "dim name '%s' is not an identifier "
            "([A-Za-z_][A-Za-z0-9_]*, at most %d characters)",
            name ? name : "(null)", KEVO__IDENT_MAX);
    if (kevo__devprop_is_name(name))
        return kevo__error_set(
            err, KEVO_EINVAL,
            "dim name '%s' is the name of a device property; "
            "choose another name",
            name);
    if (kevo__task_find_dim(task, name) >= 0)
        return kevo__error_set(err, KEVO_EEXIST, "dim '%s' is declared twice",
                               name);
    if (task->shapes[0].count || task->shapes[1].count)
        return kevo__error_set(err, KEVO_ESTATE,
                               "dim '%s' added after shapes: add every dim "
                               "before the first shape",
                               name);
    if (task->ndims >= KEVO__TASK_DIMS_MAX)
        return kevo__error_set(err, KEVO_ELIMIT, "too many dims: at most %d",
                               KEVO__TASK_DIMS_MAX);
    char *copy = kevo__strdup(name);
    char **dims =
        copy ? realloc(task->dims, (task->ndims + 1) * sizeof *dims) : NULL;
    if (!dims) {
        free(copy);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    dims[task->ndims++] = copy;
    task->dims = dims;
    return KEVO_OK;
}

/* The checks every new argument passes, by kind ("buffer" or "scalar"). */
static kevo_status arg_precheck(const kevo_task *task, const char *kind,
                                const char *name, kevo_dtype type,
                                kevo_error *err)
{
    if (!name || !kevo__is_identifier(name))
        return kevo__error_set(
            err, KEVO_EINVAL,
            "%s name '%s' is not an identifier "
            "([A-Za-z_][A-Za-z0-9_]*, at most %d characters)",
            kind, name ? name : "(null)", KEVO__IDENT_MAX);
    if (kevo__task_find_arg(task, name) >= 0)
        return kevo__error_set(err, KEVO_EEXIST,
                               "argument '%s' is declared twice", name);
    if (!dtype_valid(type))
        return kevo__error_set(err, KEVO_EINVAL,
                               "%s '%s' has an unknown element type %d", kind,
                               name, (int)type);
    if (task->nargs >= KEVO__TASK_ARGS_MAX)
        return kevo__error_set(err, KEVO_ELIMIT,
                               "too many arguments: at most %d",
                               KEVO__TASK_ARGS_MAX);
    return KEVO_OK;
}

/* Appends a (moved) argument. */
static kevo_status arg_append(kevo_task *task, kevo_task_arg *a,
                              kevo_error *err)
{
    kevo_task_arg *args = realloc(task->args, (task->nargs + 1) * sizeof *args);
    if (!args) {
        arg_clear(a);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    args[task->nargs++] = *a;
    task->args = args;
    return KEVO_OK;
}

/* Parses text as an expression; errors read "<what>: <expression error>". */
static kevo_status parse_expr(const char *text, const char *what,
                              kevo_expr **out, kevo_error *err)
{
    kevo_error e = KEVO__ERROR_INIT;
    kevo_status rc = kevo_expr_parse(text, out, &e);
    if (rc != KEVO_OK)
        return kevo__error_wrap(err, &e, "%s", what);
    return KEVO_OK;
}

kevo_status kevo_task_add_buffer(kevo_task *task, const char *name,
                                 kevo_dtype type, kevo_role role,
                                 const char *count, kevo_error *err)
{
    CHECK_TASK(task, err, "kevo_task_add_buffer");
    kevo_status rc = arg_precheck(task, "buffer", name, type, err);
    if (rc != KEVO_OK)
        return rc;
    if (role != KEVO_ROLE_IN && role != KEVO_ROLE_OUT &&
        role != KEVO_ROLE_INOUT)
        return kevo__error_set(err, KEVO_EINVAL,
                               "buffer '%s' needs the role in, out or inout "
                               "(a scalar is added with kevo_task_add_scalar)",
                               name);
    if (!count)
        return kevo__error_set(err, KEVO_EINVAL,
                               "buffer '%s' has no element count", name);
    kevo_task_arg a = {.type = type, .role = role};
    char what[128];
    snprintf(what, sizeof what, "count of buffer '%s'", name);
    rc = parse_expr(count, what, &a.count_expr, err);
    if (rc != KEVO_OK)
        return rc;
    a.name = kevo__strdup(name);
    a.count = kevo__strdup(count);
    if (!a.name || !a.count) {
        arg_clear(&a);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    return arg_append(task, &a, err);
}

/* A decimal number that a float type holds. */
static bool float_text_ok(const char *text, kevo_dtype type, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !isfinite(v) ||
        fabs(v) > kevo__dtype_float_max(type))
        return false;
    if (out)
        *out = v;
    return true;
}

kevo_status kevo_task_add_scalar(kevo_task *task, const char *name,
                                 kevo_dtype type, const char *value,
                                 kevo_error *err)
{
    CHECK_TASK(task, err, "kevo_task_add_scalar");
    kevo_status rc = arg_precheck(task, "scalar", name, type, err);
    if (rc != KEVO_OK)
        return rc;
    kevo_task_arg a = {.type = type, .role = KEVO_ROLE_SCALAR};
    if (value && kevo_dtype_is_float(type)) {
        if (!float_text_ok(value, type, NULL))
            return kevo__error_set(err, KEVO_EINVAL,
                                   "value '%s' of scalar '%s' is not a finite "
                                   "decimal number that %s holds",
                                   value, name, kevo_dtype_name(type));
    } else if (value) {
        char what[128];
        snprintf(what, sizeof what, "value of scalar '%s'", name);
        rc = parse_expr(value, what, &a.value_expr, err);
        if (rc != KEVO_OK)
            return rc;
    }
    a.name = kevo__strdup(name);
    if (!a.name || (value && !(a.value = kevo__strdup(value)))) {
        arg_clear(&a);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    return arg_append(task, &a, err);
}

kevo_status kevo_task_set_init(kevo_task *task, const char *arg, kevo_dist dist,
                               double a, double b, kevo_error *err)
{
    CHECK_TASK(task, err, "kevo_task_set_init");
    ptrdiff_t i = arg ? kevo__task_find_arg(task, arg) : -1;
    if (i < 0)
        return kevo__error_set(err, KEVO_ENOENT,
                               "init: the task has no argument called '%s'",
                               arg ? arg : "(null)");
    kevo_task_arg *t = &task->args[i];
    const char *type = kevo_dtype_name(t->type);
    bool is_float = kevo_dtype_is_float(t->type);
    if (t->role == KEVO_ROLE_OUT)
        return kevo__error_set(err, KEVO_EINVAL,
                               "init on output '%s': an out buffer is written "
                               "by the kernel, not drawn (init is for in and "
                               "inout buffers and scalars)",
                               arg);
    if (t->value)
        return kevo__error_set(
            err, KEVO_EINVAL,
            "init on scalar '%s', which has the fixed value "
            "'%s': give a scalar a value or an init, not both",
            arg, t->value);
    double lo = 0, hi = 0;
    if (!is_float)
        kevo__dtype_int_range(t->type, &lo, &hi);
    double fmax = kevo__dtype_float_max(t->type);
    switch (dist) {
    case KEVO_DIST_DEFAULT: a = b = 0; break;
    case KEVO_DIST_NORMAL:
        if (!is_float)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "init of '%s': 'normal' draws real numbers "
                                   "and '%s' is %s: use 'randint' or "
                                   "'constant'",
                                   arg, arg, type);
        if (!isfinite(a) || !isfinite(b) || b <= 0 || fabs(a) > fmax)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "init of '%s': normal needs a finite mean "
                                   "and a standard deviation > 0 (got mean "
                                   "%g, std %g)",
                                   arg, a, b);
        break;
    case KEVO_DIST_UNIFORM:
        if (!is_float)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "init of '%s': 'uniform' draws real numbers "
                                   "and '%s' is %s: use 'randint' or "
                                   "'constant'",
                                   arg, arg, type);
        if (!isfinite(a) || !isfinite(b) || !(a < b) || fabs(a) > fmax ||
            fabs(b) > fmax)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "init of '%s': uniform needs lo < hi, both "
                                   "finite values of %s (got lo %g, hi %g)",
                                   arg, type, a, b);
        break;
    case KEVO_DIST_RANDINT:
        if (is_float)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "init of '%s': 'randint' is for integer "
                                   "types and '%s' is %s: use 'uniform'",
                                   arg, arg, type);
        if (!int_in_range(a, lo, hi) || !int_in_range(b, lo, hi) || a > b)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "init of '%s': randint needs integers lo <= "
                                   "hi that %s holds (got lo %g, hi %g)",
                                   arg, type, a, b);
        break;
    case KEVO_DIST_CONSTANT:
        b = 0;
        if (is_float ? !isfinite(a) || fabs(a) > fmax
                     : !int_in_range(a, lo, hi))
            return kevo__error_set(err, KEVO_EINVAL,
                                   "init of '%s': constant %g is not a value "
                                   "of %s",
                                   arg, a, type);
        break;
    default:
        return kevo__error_set(err, KEVO_EINVAL,
                               "init of '%s': unknown distribution %d", arg,
                               (int)dist);
    }
    t->dist = dist;
    t->dist_a = a;
    t->dist_b = b;
    return KEVO_OK;
}

kevo_status kevo_task_set_tolerance(kevo_task *task, const char *output,
                                    double rtol, double atol, kevo_error *err)
{
    CHECK_TASK(task, err, "kevo_task_set_tolerance");
    if (!isfinite(rtol) || !isfinite(atol) || rtol < 0 || atol < 0)
        return kevo__error_set(err, KEVO_EINVAL,
                               "tolerance: rtol and atol must be finite and "
                               ">= 0 (got rtol %g, atol %g)",
                               rtol, atol);
    if (!output) {
        task->has_tolerance = true;
        task->rtol = rtol;
        task->atol = atol;
        return KEVO_OK;
    }
    ptrdiff_t i = kevo__task_find_arg(task, output);
    if (i < 0)
        return kevo__error_set(err, KEVO_ENOENT,
                               "tolerance: the task has no argument called "
                               "'%s'",
                               output);
    kevo_task_arg *t = &task->args[i];
    if (!kevo__task_role_is_output(t->role))
        return kevo__error_set(err, KEVO_EINVAL,
                               "tolerance on %s '%s': a tolerance applies to "
                               "out and inout buffers only",
                               t->role == KEVO_ROLE_SCALAR ? "scalar" : "input",
                               output);
    t->has_tolerance = true;
    t->rtol = rtol;
    t->atol = atol;
    return KEVO_OK;
}

kevo_status kevo_task_set_cost(kevo_task *task, const char *bytes,
                               const char *flops, kevo_peak peak,
                               kevo_error *err)
{
    CHECK_TASK(task, err, "kevo_task_set_cost");
    if (!bytes)
        return kevo__error_set(err, KEVO_EINVAL,
                               "cost: the bytes expression is required");
    if ((unsigned)peak > (unsigned)KEVO_PEAK_BF16)
        return kevo__error_set(err, KEVO_EINVAL,
                               "cost: unknown peak %d (known: fp32, fp64, "
                               "tf32, fp16, bf16)",
                               (int)peak);
    kevo_expr *b = NULL, *f = NULL;
    kevo_status rc = parse_expr(bytes, "cost bytes", &b, err);
    if (rc == KEVO_OK)
        rc = parse_expr(flops ? flops : "0", "cost flops", &f, err);
    if (rc != KEVO_OK) {
        kevo_expr_free(b);
        return rc;
    }
    kevo_expr_free(task->bytes);
    kevo_expr_free(task->flops);
    task->bytes = b;
    task->flops = f;
    task->peak = peak;
    task->has_cost = true;
    return KEVO_OK;
}

/* Parses a reference or seed and gives it the task's parameters known so
 * far; the checks against the arguments wait for validation. */
static kevo_status set_kernel(kevo_task *task, kevo_candidate **slot,
                              const char *source, const char *origin,
                              const char *fn, kevo_error *err)
{
    if (!source)
        return kevo__error_set(err, KEVO_EINVAL, "%s: source is NULL", fn);
    kevo_candidate *c = NULL;
    kevo_status rc = kevo_candidate_new(source, origin, &c, err);
    if (rc != KEVO_OK)
        return rc;
    rc = kevo__candidate_merge_params(
        c, task->params, (const char *const *)task->dims, task->ndims, err);
    if (rc != KEVO_OK) {
        kevo_candidate_free(c);
        return rc;
    }
    kevo_candidate_free(*slot);
    *slot = c;
    return KEVO_OK;
}

kevo_status kevo_task_set_reference(kevo_task *task, const char *source,
                                    const char *origin, kevo_error *err)
{
    CHECK_TASK(task, err, "kevo_task_set_reference");
    return set_kernel(task, &task->reference, source, origin,
                      "kevo_task_set_reference", err);
}

kevo_status kevo_task_set_seed(kevo_task *task, const char *source,
                               const char *origin, kevo_error *err)
{
    CHECK_TASK(task, err, "kevo_task_set_seed");
    return set_kernel(task, &task->seed, source, origin, "kevo_task_set_seed",
                      err);
}

kevo_status kevo_task_add_shape(kevo_task *task, kevo_shape_set set,
                                const int64_t *values, size_t n,
                                kevo_error *err)
{
    CHECK_TASK(task, err, "kevo_task_add_shape");
    if (set != KEVO_SHAPES_TRAIN && set != KEVO_SHAPES_HELD_OUT)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_task_add_shape: unknown shape set %d",
                               (int)set);
    if (task->ndims == 0)
        return kevo__error_set(err, KEVO_ESTATE,
                               "a shape needs dims: add them first with "
                               "kevo_task_add_dim");
    if (n != task->ndims || !values) {
        char dims[512] = "";
        size_t len = 0;
        for (size_t d = 0; d < task->ndims && len < sizeof dims; d++)
            len += (size_t)snprintf(dims + len, sizeof dims - len, "%s%s",
                                    d ? ", " : "", task->dims[d]);
        return kevo__error_set(err, KEVO_EINVAL,
                               "a shape needs %zu values, one per dim (%s), "
                               "got %zu",
                               task->ndims, dims, values ? n : 0);
    }
    for (size_t d = 0; d < n; d++) {
        if (values[d] <= 0)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "shape value %lld of dim '%s' is not "
                                   "positive: dims must be at least 1",
                                   (long long)values[d], task->dims[d]);
    }
    kevo_task_shapes *s = &task->shapes[set];
    if (s->count >= KEVO__TASK_SHAPES_MAX)
        return kevo__error_set(err, KEVO_ELIMIT,
                               "too many shapes: at most %d in a set",
                               KEVO__TASK_SHAPES_MAX);
    int64_t *v = realloc(s->values, (s->count + 1) * n * sizeof *v);
    if (!v)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    memcpy(v + s->count * n, values, n * sizeof *v);
    s->values = v;
    s->count++;
    return KEVO_OK;
}

static kevo_status desc_add(kevo_task *task, const char *name, size_t nbins,
                            double lo, double hi, const double *edges, size_t n,
                            kevo_error *err)
{
    const kevo_descriptor_def *def = name ? kevo__descriptor_find(name) : NULL;
    if (!def)
        return kevo__error_set(
            err, KEVO_EINVAL, "unknown descriptor '%s' (known: %s)",
            name ? name : "(null)", kevo__descriptor_names());
    for (size_t i = 0; i < task->ndescriptors; i++) {
        if (strcmp(task->descriptors[i].d.name, name) == 0)
            return kevo__error_set(err, KEVO_EEXIST,
                                   "descriptor '%s' is named twice", name);
    }
    if (task->ndescriptors >= KEVO__TASK_DESCRIPTORS_MAX)
        return kevo__error_set(err, KEVO_ELIMIT,
                               "too many descriptors: at most %d",
                               KEVO__TASK_DESCRIPTORS_MAX);
    kevo_task_desc *d =
        realloc(task->descriptors, (task->ndescriptors + 1) * sizeof *d);
    if (!d)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    task->descriptors = d;
    if (desc_fill(&d[task->ndescriptors], def, nbins, lo, hi, edges, n) !=
        KEVO_OK)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    task->ndescriptors++;
    return KEVO_OK;
}

kevo_status kevo_task_add_descriptor(kevo_task *task, const char *name,
                                     size_t nbins, double lo, double hi,
                                     kevo_error *err)
{
    CHECK_TASK(task, err, "kevo_task_add_descriptor");
    if (nbins > KEVO__TASK_BINS_MAX ||
        (nbins > 0 && (!isfinite(lo) || !isfinite(hi) || !(lo < hi))))
        return kevo__error_set(err, KEVO_EINVAL,
                               "descriptor '%s': bins must be 1 to %d over a "
                               "range lo < hi, both finite (got %zu bins over "
                               "[%g, %g))",
                               name ? name : "(null)", KEVO__TASK_BINS_MAX,
                               nbins, lo, hi);
    return desc_add(task, name, nbins, lo, hi, NULL, 0, err);
}

kevo_status kevo_task_add_descriptor_edges(kevo_task *task, const char *name,
                                           const double *edges, size_t n,
                                           kevo_error *err)
{
    CHECK_TASK(task, err, "kevo_task_add_descriptor_edges");
    if (!edges || n == 0 || n >= KEVO__TASK_BINS_MAX)
        return kevo__error_set(
            err, KEVO_EINVAL, "descriptor '%s': give 1 to %d edges (got %zu)",
            name ? name : "(null)", KEVO__TASK_BINS_MAX - 1, edges ? n : 0);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(edges[i]) || (i > 0 && !(edges[i - 1] < edges[i])))
            return kevo__error_set(err, KEVO_EINVAL,
                                   "descriptor '%s': edges must be finite and "
                                   "increasing (edge %zu is %g)",
                                   name ? name : "(null)", i, edges[i]);
    }
    return desc_add(task, name, 0, 0, 0, edges, n, err);
}

kevo_status kevo_task_set_memory_limit(kevo_task *task, uint64_t bytes,
                                       kevo_error *err)
{
    CHECK_TASK(task, err, "kevo_task_set_memory_limit");
    if (bytes == 0)
        return kevo__error_set(err, KEVO_EINVAL,
                               "memory limit: must be at least 1 byte");
    task->memory_limit = bytes;
    return KEVO_OK;
}

void kevo_task_set_input_seed(kevo_task *task, uint64_t seed)
{
    if (task)
        task->input_seed = seed;
}

kevo_paramspace *kevo_task_params(const kevo_task *task)
{
    return task ? task->params : NULL;
}

/* ---- getters ------------------------------------------------------------- */

const char *kevo_task_name(const kevo_task *task)
{
    return task ? task->name : NULL;
}

const char *kevo_task_description(const kevo_task *task)
{
    return task && task->description ? task->description : "";
}

const char *kevo_task_origin(const kevo_task *task)
{
    return task ? task->origin : NULL;
}

size_t kevo_task_dim_count(const kevo_task *task)
{
    return task ? task->ndims : 0;
}

const char *kevo_task_dim_name(const kevo_task *task, size_t i)
{
    return task && i < task->ndims ? task->dims[i] : NULL;
}

size_t kevo_task_arg_count(const kevo_task *task)
{
    return task ? task->nargs : 0;
}

kevo_status kevo_task_arg_info(const kevo_task *task, size_t i,
                               kevo_arg_info *info)
{
    if (!task || !info || i >= task->nargs)
        return KEVO_EINVAL;
    const kevo_task_arg *a = &task->args[i];
    kevo_arg_info full = {.size = sizeof full};
    full.name = a->name;
    full.type = a->type;
    full.role = a->role;
    full.count = a->count;
    full.value = a->value;
    full.dist = a->dist;
    full.dist_a = a->dist_a;
    full.dist_b = a->dist_b;
    if (a->dist == KEVO_DIST_DEFAULT && !a->value && a->role != KEVO_ROLE_OUT) {
        /* Spell out what the default draws. */
        full.dist_a = 0;
        full.dist_b = kevo_dtype_is_float(a->type) ? 1 : 127;
    }
    if (kevo__task_role_is_output(a->role)) {
        full.rtol = a->has_tolerance ? a->rtol : task->rtol;
        full.atol = a->has_tolerance ? a->atol : task->atol;
    }
    /* A caller built against an older, smaller struct gets what fits. */
    size_t size = info->size ? info->size : sizeof full;
    if (size > sizeof full)
        size = sizeof full;
    memcpy(info, &full, size);
    info->size = size;
    return KEVO_OK;
}

const kevo_candidate *kevo_task_reference(const kevo_task *task)
{
    return task ? task->reference : NULL;
}

const kevo_candidate *kevo_task_seed(const kevo_task *task)
{
    return task ? task->seed : NULL;
}

size_t kevo_task_shape_count(const kevo_task *task, kevo_shape_set set)
{
    if (!task || (set != KEVO_SHAPES_TRAIN && set != KEVO_SHAPES_HELD_OUT))
        return 0;
    return task->shapes[set].count;
}

const int64_t *kevo_task_shape(const kevo_task *task, kevo_shape_set set,
                               size_t i)
{
    if (i >= kevo_task_shape_count(task, set))
        return NULL;
    return task->shapes[set].values + i * task->ndims;
}

kevo_status kevo_task_shape_vars(const kevo_task *task, kevo_shape_set set,
                                 size_t i, kevo_vars *vars)
{
    const int64_t *v = kevo_task_shape(task, set, i);
    if (!v || !vars)
        return KEVO_EINVAL;
    for (size_t d = 0; d < task->ndims; d++) {
        kevo_status rc = kevo_vars_set(vars, task->dims[d], v[d]);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}

kevo_status kevo_task_cost(const kevo_task *task, const kevo_vars *shape,
                           double *bytes, double *flops, kevo_error *err)
{
    if (!task)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_task_cost: task is NULL");
    if (!task->has_cost)
        return kevo__error_set(err, KEVO_ESTATE, "task '%s' has no cost model",
                               task->name);
    int64_t b, f;
    kevo_status rc = kevo_expr_eval(task->bytes, shape, &b, err);
    if (rc == KEVO_OK)
        rc = kevo_expr_eval(task->flops, shape, &f, err);
    if (rc != KEVO_OK)
        return rc;
    if (bytes)
        *bytes = (double)b;
    if (flops)
        *flops = (double)f;
    return KEVO_OK;
}

kevo_peak kevo_task_peak(const kevo_task *task)
{
    return task ? task->peak : KEVO_PEAK_FP32;
}

const char *kevo_peak_name(kevo_peak peak)
{
    switch (peak) {
    case KEVO_PEAK_FP32: return "fp32";
    case KEVO_PEAK_FP64: return "fp64";
    case KEVO_PEAK_TF32: return "tf32";
    case KEVO_PEAK_FP16: return "fp16";
    case KEVO_PEAK_BF16: return "bf16";
    }
    return "?";
}

kevo_status kevo_task_footprint(const kevo_task *task, const kevo_vars *shape,
                                uint64_t *bytes, kevo_error *err)
{
    if (!task || !bytes)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_task_footprint: task or bytes is NULL");
    uint64_t total = 0;
    for (size_t i = 0; i < task->nargs; i++) {
        const kevo_task_arg *a = &task->args[i];
        if (a->role == KEVO_ROLE_SCALAR)
            continue;
        int64_t count;
        kevo_status rc = kevo_expr_eval(a->count_expr, shape, &count, err);
        if (rc != KEVO_OK)
            return rc;
        if (count <= 0)
            return kevo__error_set(err, KEVO_ERANGE,
                                   "count '%s' of buffer '%s' is %lld; element "
                                   "counts must be positive",
                                   a->count, a->name, (long long)count);
        /* The buffer, and a second copy of an input (to check it is left
         * unchanged) and of an output (the reference result). */
        uint64_t copies = a->role == KEVO_ROLE_INOUT ? 3 : 2, size;
        if (__builtin_mul_overflow((uint64_t)count,
                                   (uint64_t)kevo_dtype_size(a->type), &size) ||
            __builtin_mul_overflow(size, copies, &size) ||
            __builtin_add_overflow(total, size, &total))
            return kevo__error_set(err, KEVO_EOVERFLOW,
                                   "buffer '%s': %lld elements of %s overflow "
                                   "a 64-bit byte count",
                                   a->name, (long long)count,
                                   kevo_dtype_name(a->type));
    }
    *bytes = total;
    return KEVO_OK;
}

uint64_t kevo_task_memory_limit(const kevo_task *task)
{
    return task ? task->memory_limit : 0;
}

uint64_t kevo_task_input_seed(const kevo_task *task)
{
    return task ? task->input_seed : 0;
}

size_t kevo_task_descriptor_count(const kevo_task *task)
{
    if (!task)
        return 0;
    return task->ndescriptors ? task->ndescriptors
                              : KEVO_ARRAY_SIZE(task->defaults);
}

const char *kevo_task_descriptor_name(const kevo_task *task, size_t i)
{
    const kevo_task_descriptor *d = kevo__task_descriptor(task, i);
    return d ? d->name : NULL;
}

/* ---- fitting a candidate to the task ------------------------------------- */

/* Records "<origin>:<line>: <block>: <message>" (origin or line left out
 * when unknown) with the line in err. */
static kevo_status launch_fail(kevo_error *err, const kevo_candidate *c,
                               int line, const char *block, const char *fmt,
                               ...) KEVO_PRINTF(5, 6);

static kevo_status launch_fail(kevo_error *err, const kevo_candidate *c,
                               int line, const char *block, const char *fmt,
                               ...)
{
    char msg[768], where[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->origin && line > 0)
        snprintf(where, sizeof where, "%s:%d: ", c->origin, line);
    else if (c->origin)
        snprintf(where, sizeof where, "%s: ", c->origin);
    else if (line > 0)
        snprintf(where, sizeof where, "line %d: ", line);
    else
        where[0] = '\0';
    return kevo__error_set_at(err, KEVO_EINVALID, c->origin, line, 0,
                              "%s%s: %s", where, block, msg);
}

static bool is_scratch(const kevo_candidate *c, const char *name)
{
    for (size_t i = 0; i < c->blocks.nscratch; i++) {
        if (strcmp(c->blocks.scratch[i].name, name) == 0)
            return true;
    }
    return false;
}

/* A name an expression of the candidate may use: a dim, a parameter or a
 * device property. */
static bool is_variable(const kevo_task *task, const kevo_candidate *c,
                        const char *name)
{
    size_t index;
    return kevo__task_find_dim(task, name) >= 0 ||
           kevo_paramspace_find(c->blocks.params, name, &index) == KEVO_OK ||
           kevo__devprop_is_name(name);
}

/* Every name of expr must be a variable; what says which expression. */
static kevo_status check_expr_names(const kevo_task *task,
                                    const kevo_candidate *c,
                                    const kevo_expr *expr, int line,
                                    const char *what, kevo_error *err)
{
    if (!expr)
        return KEVO_OK;
    for (size_t k = 0; k < kevo_expr_var_count(expr); k++) {
        const char *name = kevo_expr_var_name(expr, k);
        if (is_variable(task, c, name))
            continue;
        bool buffer =
            kevo__task_find_arg(task, name) >= 0 || is_scratch(c, name);
        return launch_fail(err, c, line, "kevo:launch",
                           "%s names '%s', which is no dim, parameter or "
                           "device property%s",
                           what, name,
                           buffer ? " (task arguments and scratch buffers are "
                                    "passed by their bare name, never inside "
                                    "an expression)"
                                  : "");
    }
    return KEVO_OK;
}

/* Scratch buffers and parameters become names in the launch arguments and
 * -D macros: neither may take a name that is already something else. */
static kevo_status check_collisions(const kevo_task *task,
                                    const kevo_candidate *c, kevo_error *err)
{
    size_t index;
    for (size_t i = 0; i < c->blocks.nscratch; i++) {
        const kevo_scratch *s = &c->blocks.scratch[i];
        const char *what =
            kevo__task_find_arg(task, s->name) >= 0   ? "a task argument"
            : kevo__task_find_dim(task, s->name) >= 0 ? "a dim"
            : kevo_paramspace_find(c->blocks.params, s->name, &index) == KEVO_OK
                ? "a parameter"
            : kevo__devprop_is_name(s->name) ? "a device property"
                                             : NULL;
        if (what)
            return launch_fail(err, c, s->line, "kevo:launch",
                               "scratch buffer '%s' has the name of %s; "
                               "rename it",
                               s->name, what);
    }
    const kevo_paramspace *ps = c->blocks.params;
    for (size_t i = 0; i < kevo_paramspace_count(ps); i++) {
        const char *name = kevo_paramspace_name(ps, i);
        const char *what = kevo__task_find_dim(task, name) >= 0 ? "a dim"
                           : kevo__task_find_arg(task, name) >= 0
                               ? "a task argument"
                           : kevo__devprop_is_name(name) ? "a device property"
                                                         : NULL;
        if (!what)
            continue;
        bool own = kevo_paramspace_find(task->params, name, &index) != KEVO_OK;
        return launch_fail(err, c, own ? c->blocks.param_line : 0, "kevo:param",
                           "%sparameter '%s' has the name of %s; parameters "
                           "become -D macros and must not shadow it",
                           own ? "" : "task ", name, what);
    }
    return KEVO_OK;
}

/* The name a bare-identifier argument passes (after any cast), or NULL. */
static const char *arg_name(const kevo_launch_arg *a)
{
    return a->is_name && a->expr ? kevo_expr_var_name(a->expr, 0) : NULL;
}

static kevo_status check_launch(const kevo_task *task, const kevo_candidate *c,
                                const kevo_launch *l, kevo_error *err)
{
    static const char *const axis[] = {"x", "y", "z"};
    char what[160];
    kevo_status rc = KEVO_OK;
    for (int d = 0; d < 3 && rc == KEVO_OK; d++) {
        snprintf(what, sizeof what, "grid %s of kernel '%s'", axis[d],
                 l->kernel);
        rc = check_expr_names(task, c, l->grid[d], l->line, what, err);
        if (rc != KEVO_OK)
            break;
        snprintf(what, sizeof what, "block %s of kernel '%s'", axis[d],
                 l->kernel);
        rc = check_expr_names(task, c, l->block[d], l->line, what, err);
    }
    if (rc != KEVO_OK)
        return rc;
    snprintf(what, sizeof what, "shared memory size of kernel '%s'", l->kernel);
    rc = check_expr_names(task, c, l->smem, l->line, what, err);
    for (size_t k = 0; k < l->nargs && rc == KEVO_OK; k++) {
        const kevo_launch_arg *a = &l->args[k];
        const char *name = arg_name(a);
        if (name &&
            (kevo__task_find_arg(task, name) >= 0 || is_scratch(c, name))) {
            if (a->has_cast)
                return launch_fail(err, c, l->line, "kevo:launch",
                                   "argument '%s' of kernel '%s' casts '%s' to "
                                   "%s, but a task argument or scratch buffer "
                                   "is passed as it is: drop the cast",
                                   a->text, l->kernel, name,
                                   kevo_dtype_name(a->cast));
            continue;
        }
        if (name) {
            if (!is_variable(task, c, name))
                return launch_fail(err, c, l->line, "kevo:launch",
                                   "argument '%s' of kernel '%s' names no task "
                                   "argument, scratch buffer, dim, parameter "
                                   "or device property",
                                   name, l->kernel);
            continue;
        }
        snprintf(what, sizeof what, "argument '%.60s' of kernel '%s'", a->text,
                 l->kernel);
        rc = check_expr_names(task, c, a->expr, l->line, what, err);
    }
    return rc;
}

static bool passed_to_a_launch(const kevo_candidate *c, const char *name)
{
    for (size_t i = 0; i < c->blocks.nlaunches; i++) {
        const kevo_launch *l = &c->blocks.launches[i];
        for (size_t k = 0; k < l->nargs; k++) {
            const char *passed = arg_name(&l->args[k]);
            if (passed && strcmp(passed, name) == 0)
                return true;
        }
    }
    return false;
}

kevo_status kevo__task_check_launches(const kevo_task *task,
                                      const kevo_candidate *cand,
                                      kevo_error *err)
{
    kevo_status rc = check_collisions(task, cand, err);
    for (size_t i = 0; i < cand->blocks.nscratch && rc == KEVO_OK; i++) {
        const kevo_scratch *s = &cand->blocks.scratch[i];
        char what[160];
        snprintf(what, sizeof what, "count of scratch buffer '%s'", s->name);
        rc = check_expr_names(task, cand, s->count, s->line, what, err);
    }
    for (size_t i = 0; i < cand->blocks.nlaunches && rc == KEVO_OK; i++)
        rc = check_launch(task, cand, &cand->blocks.launches[i], err);
    for (size_t i = 0; i < task->nargs && rc == KEVO_OK; i++) {
        const kevo_task_arg *a = &task->args[i];
        if (kevo__task_role_is_output(a->role) &&
            !passed_to_a_launch(cand, a->name))
            rc = launch_fail(err, cand, cand->blocks.launch_line, "kevo:launch",
                             "%s buffer '%s' of the task is passed to no "
                             "launch; every out and inout buffer must be "
                             "written",
                             kevo__role_name(a->role), a->name);
    }
    return rc;
}

kevo_status kevo_candidate_new_for_task(const kevo_task *task,
                                        const char *source, const char *origin,
                                        kevo_candidate **out, kevo_error *err)
{
    if (!out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_candidate_new_for_task: out is NULL");
    *out = NULL;
    if (!task || !source)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_candidate_new_for_task: task or source is "
                               "NULL");
    kevo_candidate *c = NULL;
    kevo_status rc = kevo_candidate_new(source, origin, &c, err);
    if (rc != KEVO_OK)
        return rc;
    rc = kevo__candidate_merge_params(
        c, task->params, (const char *const *)task->dims, task->ndims, err);
    if (rc == KEVO_OK)
        rc = kevo__task_check_launches(task, c, err);
    if (rc != KEVO_OK) {
        kevo_candidate_free(c);
        return rc;
    }
    *out = c;
    return KEVO_OK;
}

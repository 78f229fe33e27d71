/*
 * task_args.c: a task's kernel arguments: adding buffers and scalars, how
 * inputs are drawn, the tolerance of outputs, reading them back and the
 * memory their buffers take.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task_private.h"

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

/* The largest whole number up to which a floating-point type holds every
 * whole number: 2^(mantissa bits + 1). */
static double float_whole_max(kevo_dtype type)
{
    switch (type) {
    case KEVO_DTYPE_F16: return 2048.0;
    case KEVO_DTYPE_BF16: return 256.0;
    case KEVO_DTYPE_F32: return 16777216.0;
    default: return 9007199254740992.0;
    }
}

void kevo__task_arg_clear(kevo_task_arg *a)
{
    free(a->name);
    free(a->count);
    kevo_expr_free(a->count_expr);
    free(a->value);
    kevo_expr_free(a->value_expr);
}

/* ---- setters ------------------------------------------------------------- */

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
        kevo__task_arg_clear(a);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    args[task->nargs++] = *a;
    task->args = args;
    return KEVO_OK;
}

kevo_status kevo_task_add_buffer(kevo_task *task, const char *name,
                                 kevo_dtype type, kevo_role role,
                                 const char *count, kevo_error *err)
{
    KEVO__CHECK_TASK(task, err, "kevo_task_add_buffer");
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
    rc = kevo__task_parse_expr(count, what, &a.count_expr, err);
    if (rc != KEVO_OK)
        return rc;
    a.name = kevo__strdup(name);
    a.count = kevo__strdup(count);
    if (!a.name || !a.count) {
        kevo__task_arg_clear(&a);
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
    KEVO__CHECK_TASK(task, err, "kevo_task_add_scalar");
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
        rc = kevo__task_parse_expr(value, what, &a.value_expr, err);
        if (rc != KEVO_OK)
            return rc;
    }
    a.name = kevo__strdup(name);
    if (!a.name || (value && !(a.value = kevo__strdup(value)))) {
        kevo__task_arg_clear(&a);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    return arg_append(task, &a, err);
}

kevo_status kevo_task_set_init(kevo_task *task, const char *arg, kevo_dist dist,
                               double a, double b, kevo_error *err)
{
    KEVO__CHECK_TASK(task, err, "kevo_task_set_init");
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
        /* On a floating-point type: whole numbers, each held exactly, so
         * that elements tie. */
        if (is_float) {
            hi = float_whole_max(t->type);
            lo = -hi;
        }
        if (is_float &&
            (!int_in_range(a, lo, hi) || !int_in_range(b, lo, hi) || a > b))
            return kevo__error_set(err, KEVO_EINVAL,
                                   "init of '%s': randint on %s needs whole "
                                   "numbers lo <= hi from %g to %g, where %s "
                                   "holds every whole number (got lo %g, hi "
                                   "%g)",
                                   arg, type, lo, hi, type, a, b);
        if (!int_in_range(a, lo, hi) || !int_in_range(b, lo, hi) || a > b)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "init of '%s': randint needs integers lo <= "
                                   "hi that %s holds (got lo %g, hi %g)",
                                   arg, type, a, b);
        break;
    case KEVO_DIST_NIBBLES:
        if (is_float)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "init of '%s': 'nibbles' packs 4-bit "
                                   "integers into an integer type and '%s' is "
                                   "%s: use u8, i32 or another integer type",
                                   arg, arg, type);
        if (!int_in_range(a, -8, 15) || !int_in_range(b, -8, 15) || a > b ||
            (a < 0 && b > 7))
            return kevo__error_set(err, KEVO_EINVAL,
                                   "init of '%s': nibbles needs integers lo <= "
                                   "hi within [-8, 7] (signed 4-bit values) or "
                                   "[0, 15] (unsigned) (got lo %g, hi %g)",
                                   arg, a, b);
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

/* The tolerance of output, or the task's default for NULL. */
static kevo_status set_tolerance(kevo_task *task, const char *output,
                                 const kevo_tolerance *tol, kevo_error *err)
{
    if (!output) {
        task->has_tolerance = true;
        task->tol = *tol;
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
    t->tol = *tol;
    return KEVO_OK;
}

kevo_status kevo_task_set_tolerance_full(kevo_task *task, const char *output,
                                         double rtol, double atol,
                                         double rtol_amax, double ulp,
                                         kevo_error *err)
{
    KEVO__CHECK_TASK(task, err, "kevo_task_set_tolerance_full");
    const double terms[] = {rtol, atol, rtol_amax, ulp};
    static const char *const names[] = {"rtol", "atol", "rtol_amax", "ulp"};
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(terms); i++) {
        if (!isfinite(terms[i]) || terms[i] < 0)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "tolerance: %s must be finite and >= 0 "
                                   "(got %g)",
                                   names[i], terms[i]);
    }
    kevo_tolerance tol = {rtol, atol, rtol_amax, ulp, 0};
    return set_tolerance(task, output, &tol, err);
}

kevo_status kevo_task_set_tolerance_baseline(kevo_task *task,
                                             const char *output, double factor,
                                             double atol, kevo_error *err)
{
    KEVO__CHECK_TASK(task, err, "kevo_task_set_tolerance_baseline");
    if (!isfinite(factor) || factor <= 0)
        return kevo__error_set(err, KEVO_EINVAL,
                               "tolerance: factor must be finite and > 0 "
                               "(got %g)",
                               factor);
    if (!isfinite(atol) || atol < 0)
        return kevo__error_set(err, KEVO_EINVAL,
                               "tolerance: atol must be finite and >= 0 "
                               "(got %g)",
                               atol);
    kevo_tolerance tol = {0, atol, 0, 0, factor};
    return set_tolerance(task, output, &tol, err);
}

bool kevo__task_uses_baseline(const kevo_task *task)
{
    for (size_t i = 0; i < task->nargs; i++) {
        const kevo_task_arg *a = &task->args[i];
        if (kevo__task_role_is_output(a->role) &&
            (a->has_tolerance ? a->tol.factor : task->tol.factor) > 0)
            return true;
    }
    return false;
}

kevo_status kevo_task_set_tolerance(kevo_task *task, const char *output,
                                    double rtol, double atol, kevo_error *err)
{
    KEVO__CHECK_TASK(task, err, "kevo_task_set_tolerance");
    if (!isfinite(rtol) || !isfinite(atol) || rtol < 0 || atol < 0)
        return kevo__error_set(err, KEVO_EINVAL,
                               "tolerance: rtol and atol must be finite and "
                               ">= 0 (got rtol %g, atol %g)",
                               rtol, atol);
    return kevo_task_set_tolerance_full(task, output, rtol, atol, 0, 0, err);
}

/* ---- getters ------------------------------------------------------------- */

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
        const kevo_tolerance *tol = a->has_tolerance ? &a->tol : &task->tol;
        full.rtol = tol->rtol;
        full.atol = tol->atol;
        full.rtol_amax = tol->rtol_amax;
        full.ulp = tol->ulp;
        full.factor = tol->factor;
    }
    /* A caller built against an older, smaller struct gets what fits. */
    size_t size = info->size ? info->size : sizeof full;
    if (size > sizeof full)
        size = sizeof full;
    memcpy(info, &full, size);
    info->size = size;
    return KEVO_OK;
}

kevo_status kevo__task_output_bytes(const kevo_task *task,
                                    const kevo_vars *shape, uint64_t *bytes,
                                    kevo_error *err)
{
    uint64_t total = 0;
    for (size_t i = 0; i < task->nargs; i++) {
        const kevo_task_arg *a = &task->args[i];
        if (a->role == KEVO_ROLE_SCALAR || !kevo__task_role_is_output(a->role))
            continue;
        int64_t count;
        uint64_t size;
        kevo_status rc = kevo_expr_eval(a->count_expr, shape, &count, err);
        if (rc != KEVO_OK)
            return rc;
        if (count <= 0 ||
            __builtin_mul_overflow((uint64_t)count,
                                   (uint64_t)kevo_dtype_size(a->type), &size) ||
            __builtin_add_overflow(total, size, &total))
            return kevo__error_set(err, KEVO_ERANGE,
                                   "buffer '%s': no byte count", a->name);
    }
    *bytes = total;
    return KEVO_OK;
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

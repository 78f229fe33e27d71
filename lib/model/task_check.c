/*
 * task_check.c: kevo_task_validate, every check of a task that needs no GPU,
 * for every training and held-out shape, against the nominal device.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidate_private.h"
#include "devprops.h"
#include "launch_args.h"
#include "task_private.h"

typedef struct checker {
    const kevo_task *task;
    kevo_error *err;
    kevo_vars *dims;            /* the current shape's dims */
    kevo_vars *env;             /* the nominal device with the dims on top */
    kevo_vars *scratch;         /* env with a candidate's assignment on top */
    kevo_candidate *kernels[3]; /* the reference, the seed and the
                                   baseline (NULL without one), fitted */
    kevo_shape_set set;
    size_t index;
    char at[512]; /* "n=1024, m=3" */
} checker;

static const char *const kernel_key[3] = {"reference", "seed",
                                          "tolerance.baseline"};
static const char *const kernel_name[3] = {"reference", "seed", "baseline"};

/* The task's kernel k (kernel_key), or NULL. */
static const kevo_candidate *task_kernel(const kevo_task *t, int k)
{
    return k == 0 ? t->reference : k == 1 ? t->seed : t->baseline;
}

/* Records "<where>: <message>". where is the file and JSON path for a task
 * loaded from JSON, and "task 'NAME': <cwhere>" for one built in C. Codes,
 * foreign codes and the place come from inner when it is given. */
static kevo_status report(const checker *c, kevo_status code,
                          const kevo_error *inner, const char *jpath,
                          const char *cwhere, const char *fmt, ...)
    KEVO_PRINTF(6, 7);

static kevo_status report(const checker *c, kevo_status code,
                          const kevo_error *inner, const char *jpath,
                          const char *cwhere, const char *fmt, ...)
{
    char msg[KEVO_ERROR_TEXT_SIZE], where[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const kevo_task *t = c->task;
    if (t->from_json && t->origin)
        snprintf(where, sizeof where, "%s: %s", t->origin, jpath);
    else if (t->from_json)
        snprintf(where, sizeof where, "%s", jpath);
    else if (cwhere)
        snprintf(where, sizeof where, "task '%s': %s", t->name, cwhere);
    else
        snprintf(where, sizeof where, "task '%s'", t->name);
    const char *source = t->from_json ? t->origin : NULL;
    int line = 0, column = 0;
    if (inner && inner->source[0]) {
        source = inner->source;
        line = inner->line;
        column = inner->column;
    }
    kevo_status rc = kevo__error_set_at(c->err, code, source, line, column,
                                        "%s: %s", where, msg);
    if (inner && c->err && c->err->code == code && code == inner->code) {
        c->err->domain = inner->domain;
        c->err->foreign = inner->foreign;
    }
    return rc;
}

/* "desc ($.path)" for a task loaded from JSON, "desc" otherwise. */
static const char *elem(const checker *c, char *buf, size_t size,
                        const char *jpath, const char *fmt, ...)
    KEVO_PRINTF(5, 6);

static const char *elem(const checker *c, char *buf, size_t size,
                        const char *jpath, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    if (c->task->from_json && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " (%s)", jpath);
    return buf;
}

/* The current shape's JSON path and C description. */
static void shape_where(const checker *c, char *jpath, size_t jsize,
                        char *cwhere, size_t csize)
{
    bool train = c->set == KEVO_SHAPES_TRAIN;
    snprintf(jpath, jsize, "$.%s[%zu]", train ? "shapes" : "held_out",
             c->index);
    snprintf(cwhere, csize, "%s shape %zu", train ? "training" : "held-out",
             c->index);
}

/* Records a failure at the current shape. */
static kevo_status shape_fail(const checker *c, kevo_status code,
                              const kevo_error *inner, const char *fmt, ...)
    KEVO_PRINTF(4, 5);

static kevo_status shape_fail(const checker *c, kevo_status code,
                              const kevo_error *inner, const char *fmt, ...)
{
    char msg[KEVO_ERROR_TEXT_SIZE], jpath[64], cwhere[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    shape_where(c, jpath, sizeof jpath, cwhere, sizeof cwhere);
    return report(c, code, inner, jpath, cwhere, "%s", msg);
}

/* ---- checks without a shape ---------------------------------------------- */

/* An output under the baseline rule needs the baseline kernel, and the
 * baseline kernel needs an output that uses it. */
static kevo_status check_baseline_rule(const checker *c)
{
    const kevo_task *t = c->task;
    char jpath[64], cwhere[64];
    for (size_t i = 0; !t->baseline && i < t->nargs; i++) {
        const kevo_task_arg *a = &t->args[i];
        const kevo_tolerance *tol = a->has_tolerance ? &a->tol : &t->tol;
        if (!kevo__task_role_is_output(a->role) || tol->factor <= 0)
            continue;
        if (a->has_tolerance)
            snprintf(jpath, sizeof jpath, "$.args[%zu].tolerance.factor", i);
        else
            snprintf(jpath, sizeof jpath, "$.tolerance.factor");
        snprintf(cwhere, sizeof cwhere, "tolerance of '%s'", a->name);
        return report(c, KEVO_EINVALID, NULL, jpath, cwhere,
                      "output '%s' is judged relative to the baseline "
                      "(factor %g), but the task has no baseline kernel: "
                      "give one (\"baseline\" in the task's tolerance)",
                      a->name, tol->factor);
    }
    if (t->baseline && !kevo__task_uses_baseline(t))
        return report(c, KEVO_EINVALID, NULL, "$.tolerance.baseline",
                      "baseline",
                      "the task has a baseline kernel but no output is "
                      "judged relative to it: give a \"factor\"");
    return KEVO_OK;
}

static kevo_status check_structure(const checker *c)
{
    const kevo_task *t = c->task;
    if (t->ndims == 0)
        return report(c, KEVO_EINVALID, NULL, "$.dims", NULL,
                      "the task has no dim: declare at least one, such as "
                      "\"n\"");
    if (t->nargs == 0)
        return report(c, KEVO_EINVALID, NULL, "$.args", NULL,
                      "the task has no argument");
    bool output = false;
    for (size_t i = 0; i < t->nargs; i++)
        output = output || kevo__task_role_is_output(t->args[i].role);
    if (!output)
        return report(c, KEVO_EINVALID, NULL, "$.args", NULL,
                      "no out or inout buffer: a task needs at least one "
                      "output to check");
    if (!t->has_cost)
        return report(c, KEVO_EINVALID, NULL, "$.cost", NULL,
                      "no cost model: give the bytes (and flops) as "
                      "expressions over the dims");
    if (!t->reference)
        return report(c, KEVO_EINVALID, NULL, "$.reference", NULL,
                      "no reference kernel");
    if (!t->seed)
        return report(c, KEVO_EINVALID, NULL, "$.seed", NULL, "no seed kernel");
    if (t->shapes[KEVO_SHAPES_TRAIN].count == 0)
        return report(c, KEVO_EINVALID, NULL, "$.shapes", NULL,
                      "no training shape: give at least one");
    return check_baseline_rule(c);
}

static kevo_status check_params(const checker *c)
{
    const kevo_task *t = c->task;
    char jpath[128], cwhere[128];
    for (size_t i = 0; i < kevo_paramspace_count(t->params); i++) {
        const char *name = kevo_paramspace_name(t->params, i);
        const char *what = kevo__task_find_dim(t, name) >= 0   ? "a dim"
                           : kevo__task_find_arg(t, name) >= 0 ? "an argument"
                           : kevo__devprop_is_name(name) ? "a device property"
                                                         : NULL;
        if (!what)
            continue;
        snprintf(jpath, sizeof jpath, "$.params.%s", name);
        snprintf(cwhere, sizeof cwhere, "parameter '%s'", name);
        return report(c, KEVO_EINVALID, NULL, jpath, cwhere,
                      "parameter '%s' has the name of %s; parameters become "
                      "-D macros and must not shadow it",
                      name, what);
    }
    return KEVO_OK;
}

/* True when name is a parameter of the task or of one of its kernels. */
static bool is_some_param(const checker *c, const char *name)
{
    size_t index;
    if (kevo_paramspace_find(c->task->params, name, &index) == KEVO_OK)
        return true;
    for (int k = 0; k < 3; k++) {
        const kevo_candidate *kc = task_kernel(c->task, k);
        if (kc &&
            kevo_paramspace_find(kc->blocks.params, name, &index) == KEVO_OK)
            return true;
    }
    return false;
}

/* Parses task constraint i (already parsed once by the space, so only
 * out of memory can fail here). */
static kevo_status constraint_expr(const checker *c, size_t i, kevo_expr **out)
{
    kevo_error e = KEVO__ERROR_INIT;
    kevo_status rc = kevo_expr_parse(
        kevo_paramspace_constraint(c->task->params, i), out, &e);
    if (rc != KEVO_OK)
        return kevo__error_wrap(c->err, &e, "task constraint %zu", i);
    return KEVO_OK;
}

/* True when every name of expr is a task parameter, a dim or a device
 * property, so that the constraint can be checked on its own. */
static bool task_only(const kevo_task *t, const kevo_expr *expr)
{
    size_t index;
    for (size_t k = 0; k < kevo_expr_var_count(expr); k++) {
        const char *name = kevo_expr_var_name(expr, k);
        if (kevo_paramspace_find(t->params, name, &index) != KEVO_OK &&
            kevo__task_find_dim(t, name) < 0 && !kevo__devprop_is_name(name))
            return false;
    }
    return true;
}

static kevo_status check_constraint_names(const checker *c)
{
    const kevo_task *t = c->task;
    kevo_status rc = KEVO_OK;
    for (size_t i = 0;
         i < kevo_paramspace_constraint_count(t->params) && rc == KEVO_OK;
         i++) {
        kevo_expr *e = NULL;
        if ((rc = constraint_expr(c, i, &e)) != KEVO_OK)
            break;
        for (size_t k = 0; k < kevo_expr_var_count(e); k++) {
            const char *name = kevo_expr_var_name(e, k);
            if (is_some_param(c, name) || kevo__task_find_dim(t, name) >= 0 ||
                kevo__devprop_is_name(name))
                continue;
            char jpath[64], cwhere[64];
            snprintf(jpath, sizeof jpath, "$.constraints[%zu]", i);
            snprintf(cwhere, sizeof cwhere, "constraint %zu", i);
            rc = report(c, KEVO_EINVALID, NULL, jpath, cwhere,
                        "constraint '%s' names '%s', which is no parameter "
                        "(of the task or one of its kernels), dim or "
                        "device property",
                        kevo_expr_text(e), name);
            break;
        }
        kevo_expr_free(e);
    }
    return rc;
}

static bool same_shape(const int64_t *a, const int64_t *b, size_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

static kevo_status check_shapes_unique(const checker *c)
{
    const kevo_task *t = c->task;
    const kevo_task_shapes *train = &t->shapes[KEVO_SHAPES_TRAIN];
    const kevo_task_shapes *held = &t->shapes[KEVO_SHAPES_HELD_OUT];
    size_t n = t->ndims;
    char jpath[64], cwhere[64], at[512];
    for (int s = 0; s < 2; s++) {
        const kevo_task_shapes *set = s ? held : train;
        const char *key = s ? "held_out" : "shapes";
        const char *kind = s ? "held-out" : "training";
        for (size_t j = 0; j < set->count; j++) {
            const int64_t *v = set->values + j * n;
            snprintf(jpath, sizeof jpath, "$.%s[%zu]", key, j);
            snprintf(cwhere, sizeof cwhere, "%s shape %zu", kind, j);
            kevo__task_shape_text(t, (kevo_shape_set)s, j, at, sizeof at);
            for (size_t i = 0; i < j; i++) {
                if (same_shape(set->values + i * n, v, n))
                    return report(c, KEVO_EINVALID, NULL, jpath, cwhere,
                                  "%s shape (%s) repeats %s shape %zu; each "
                                  "shape may appear once",
                                  kind, at, kind, i);
            }
            for (size_t i = 0; s == 1 && i < train->count; i++) {
                if (same_shape(train->values + i * n, v, n))
                    return report(c, KEVO_EINVALID, NULL, jpath, cwhere,
                                  "held-out shape (%s) equals training shape "
                                  "%zu%s; held-out shapes must differ from "
                                  "every training shape",
                                  at, i, t->from_json ? " ($.shapes)" : "");
            }
        }
    }
    return KEVO_OK;
}

/* Fits the reference and the seed to the task, as the search fits every
 * candidate. */
static kevo_status fit_kernels(checker *c)
{
    const kevo_task *t = c->task;
    for (int k = 0; k < 3; k++) {
        const kevo_candidate *src = task_kernel(t, k);
        if (!src)
            continue;
        kevo_error e = KEVO__ERROR_INIT;
        kevo_status rc = kevo_candidate_new_for_task(
            t, kevo_candidate_source(src), kevo_candidate_origin(src),
            &c->kernels[k], &e);
        if (rc != KEVO_OK) {
            char jpath[32];
            snprintf(jpath, sizeof jpath, "$.%s", kernel_key[k]);
            return report(c, rc, &e, jpath, kernel_name[k], "%s", e.text);
        }
    }
    return KEVO_OK;
}

/* ---- checks at one shape ------------------------------------------------- */

/* "1.5 GiB", for messages. */
static void human_size(uint64_t bytes, char *buf, size_t size)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB",
                                        "TiB",   "PiB", "EiB"};
    double v = (double)bytes;
    size_t u = 0;
    while (v >= 1024 && u + 1 < KEVO_ARRAY_SIZE(units)) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
    else
        snprintf(buf, size, "%.1f %s", v, units[u]);
}

static kevo_status check_buffers(checker *c)
{
    const kevo_task *t = c->task;
    char what[256], jpath[64];
    for (size_t i = 0; i < t->nargs; i++) {
        const kevo_task_arg *a = &t->args[i];
        if (a->role == KEVO_ROLE_SCALAR)
            continue;
        snprintf(jpath, sizeof jpath, "$.args[%zu].count", i);
        elem(c, what, sizeof what, jpath, "count '%s' of buffer '%s'", a->count,
             a->name);
        kevo_error e = KEVO__ERROR_INIT;
        int64_t count;
        kevo_status rc = kevo_expr_eval(a->count_expr, c->dims, &count, &e);
        if (rc != KEVO_OK)
            return shape_fail(c, rc, &e, "%s: %s at %s", what, e.text, c->at);
        if (count <= 0)
            return shape_fail(c, KEVO_EINVALID, NULL,
                              "%s is %lld at %s; element counts must be "
                              "positive",
                              what, (long long)count, c->at);
        /* Each copy that kevo_task_footprint() counts. */
        uint64_t copies = a->role == KEVO_ROLE_INOUT ? 3 : 2, bytes;
        if (__builtin_mul_overflow((uint64_t)count,
                                   (uint64_t)kevo_dtype_size(a->type) * copies,
                                   &bytes))
            return shape_fail(c, KEVO_EOVERFLOW, NULL,
                              "%s is %lld at %s: %lld elements of %s overflow "
                              "a 64-bit byte count",
                              what, (long long)count, c->at, (long long)count,
                              kevo_dtype_name(a->type));
    }
    kevo_error e = KEVO__ERROR_INIT;
    uint64_t total;
    kevo_status rc = kevo_task_footprint(t, c->dims, &total, &e);
    if (rc != KEVO_OK)
        return shape_fail(c, rc, &e, "%s at %s", e.text, c->at);
    if (total > t->memory_limit) {
        char need[32], limit[32];
        human_size(total, need, sizeof need);
        human_size(t->memory_limit, limit, sizeof limit);
        elem(c, what, sizeof what, "$.memory_limit", "the memory limit");
        return shape_fail(c, KEVO_ELIMIT, NULL,
                          "one evaluation needs %llu bytes of device memory "
                          "(%s: every buffer, with a second copy of each "
                          "input and output) at %s, more than %s of %s",
                          (unsigned long long)total, need, c->at, what, limit);
    }
    return KEVO_OK;
}

static kevo_status check_scalars(checker *c)
{
    const kevo_task *t = c->task;
    char what[256], jpath[64];
    for (size_t i = 0; i < t->nargs; i++) {
        const kevo_task_arg *a = &t->args[i];
        if (!a->value_expr)
            continue;
        snprintf(jpath, sizeof jpath, "$.args[%zu].value", i);
        elem(c, what, sizeof what, jpath, "value '%s' of scalar '%s'", a->value,
             a->name);
        kevo_error e = KEVO__ERROR_INIT;
        int64_t v;
        kevo_status rc = kevo_expr_eval(a->value_expr, c->dims, &v, &e);
        if (rc != KEVO_OK)
            return shape_fail(c, rc, &e, "%s: %s at %s", what, e.text, c->at);
        double lo, hi;
        kevo__dtype_int_range(a->type, &lo, &hi);
        if ((double)v < lo || (a->type != KEVO_DTYPE_I64 &&
                               a->type != KEVO_DTYPE_U64 && (double)v > hi))
            return shape_fail(c, KEVO_EINVALID, NULL,
                              "%s is %lld at %s, which %s does not hold", what,
                              (long long)v, c->at, kevo_dtype_name(a->type));
    }
    return KEVO_OK;
}

static kevo_status check_cost(checker *c)
{
    const kevo_task *t = c->task;
    const kevo_expr *exprs[2] = {t->bytes, t->flops};
    static const char *const keys[2] = {"bytes", "flops"};
    int64_t v[2];
    char what[256], jpath[64];
    for (int k = 0; k < 2; k++) {
        snprintf(jpath, sizeof jpath, "$.cost.%s", keys[k]);
        elem(c, what, sizeof what, jpath, "cost %s '%s'", keys[k],
             kevo_expr_text(exprs[k]));
        kevo_error e = KEVO__ERROR_INIT;
        kevo_status rc = kevo_expr_eval(exprs[k], c->dims, &v[k], &e);
        if (rc != KEVO_OK)
            return shape_fail(c, rc, &e, "%s: %s at %s", what, e.text, c->at);
        if (v[k] < 0)
            return shape_fail(c, KEVO_EINVALID, NULL,
                              "%s is %lld at %s; a cost must not be negative",
                              what, (long long)v[k], c->at);
    }
    if (v[0] == 0 && v[1] == 0) {
        elem(c, what, sizeof what, "$.cost", "the cost model");
        return shape_fail(c, KEVO_EINVALID, NULL,
                          "%s gives 0 bytes and 0 flops at %s; at least one "
                          "must be positive",
                          what, c->at);
    }
    return KEVO_OK;
}

/* The task's own constraints that name only task parameters, dims and
 * device properties, with the parameters at their defaults. (The others
 * apply to the kernels that declare the parameters they name, and are
 * checked there.) */
static kevo_status check_task_constraints(checker *c)
{
    const kevo_task *t = c->task;
    kevo_status rc = KEVO_OK;
    kevo_vars *vars = kevo_vars_copy(c->env);
    if (!vars || kevo_paramspace_defaults(t->params, vars) != KEVO_OK) {
        kevo_vars_free(vars);
        return kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
    }
    for (size_t i = 0;
         i < kevo_paramspace_constraint_count(t->params) && rc == KEVO_OK;
         i++) {
        kevo_expr *e = NULL;
        if ((rc = constraint_expr(c, i, &e)) != KEVO_OK)
            break;
        if (task_only(t, e)) {
            char what[256], jpath[64], params[256] = "";
            size_t n = 0;
            for (size_t k = 0; k < kevo_expr_var_count(e) && n < sizeof params;
                 k++) {
                const char *name = kevo_expr_var_name(e, k);
                size_t index;
                if (kevo_paramspace_find(t->params, name, &index) != KEVO_OK)
                    continue;
                n += (size_t)snprintf(
                    params + n, sizeof params - n, "%s%s=%lld", n ? ", " : "",
                    name, (long long)kevo_paramspace_default(t->params, index));
            }
            snprintf(jpath, sizeof jpath, "$.constraints[%zu]", i);
            elem(c, what, sizeof what, jpath, "constraint '%s'",
                 kevo_expr_text(e));
            kevo_error ee = KEVO__ERROR_INIT;
            int64_t v;
            rc = kevo_expr_eval(e, vars, &v, &ee);
            if (rc != KEVO_OK)
                rc = shape_fail(c, rc, &ee, "%s: %s at %s", what, ee.text,
                                c->at);
            else if (v == 0)
                rc = shape_fail(c, KEVO_ECONSTRAINT, NULL,
                                "%s fails with the default parameters%s%s%s "
                                "at %s",
                                what, n ? " (" : "", params, n ? ")" : "",
                                c->at);
        }
        kevo_expr_free(e);
    }
    kevo_vars_free(vars);
    return rc;
}

/* "seed <inner message> at <dims>", at the current shape. A message that
 * does not name the kernel's source (a constraint's) gets it in front. */
static kevo_status kernel_fail(const checker *c, int k, const kevo_error *e)
{
    /* kevo_task_validate() reports a launch out of CUDA's range (or any
     * other misfit) as an invalid task. */
    kevo_status code = e->code;
    if (code != KEVO_EUNDEFINED && code != KEVO_EOVERFLOW &&
        code != KEVO_EDIVZERO && code != KEVO_ECONSTRAINT &&
        code != KEVO_ELIMIT && code != KEVO_ENOMEM)
        code = KEVO_EINVALID;
    const char *origin = kevo_candidate_origin(c->kernels[k]);
    bool placed = strncmp(e->text, "line ", 5) == 0 ||
                  (origin && strncmp(e->text, origin, strlen(origin)) == 0);
    if (placed || !origin)
        return shape_fail(c, code, e, "%s%s%s at %s", kernel_name[k],
                          placed ? " " : ": ", e->text, c->at);
    return shape_fail(c, code, e, "%s (%s): %s at %s", kernel_name[k], origin,
                      e->text, c->at);
}

static kevo_status check_kernel(checker *c, int k)
{
    const kevo_candidate *cand = c->kernels[k];
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_candidate_check(cand, c->env, &e) != KEVO_OK)
        return kernel_fail(c, k, &e);
    int64_t smem_max = 0;
    kevo_vars_get(c->env, "max_smem_per_block", &smem_max);
    /* Every launch's geometry, every launch expression's value fits its
     * type, as every integer scalar's does (check_scalars), and every
     * tensor map a launch that runs names keeps the rules. */
    kevo_launch_geometry *geom =
        calloc(cand->blocks.nlaunches + 1, sizeof *geom);
    if (!geom)
        return kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
    if (kevo__launches_at(c->task, cand, c->env, geom, NULL, NULL, &e) !=
        KEVO_OK) {
        free(geom);
        return kernel_fail(c, k, &e);
    }
    for (size_t i = 0; i < cand->blocks.nlaunches; i++) {
        const kevo_launch *l = &cand->blocks.launches[i];
        kevo_launch_geometry g = geom[i];
        if (g.shared_bytes > (uint64_t)smem_max) {
            free(geom);
            kevo__error_set_at(&e, KEVO_ELIMIT, cand->origin, l->line, 0,
                               "%s%s%d: kevo:launch: kernel '%s' asks for "
                               "%llu bytes of dynamic shared memory, more "
                               "than max_smem_per_block (%lld)",
                               cand->origin ? cand->origin : "",
                               cand->origin ? ":" : "line ", l->line, l->kernel,
                               (unsigned long long)g.shared_bytes,
                               (long long)smem_max);
            return kernel_fail(c, k, &e);
        }
    }
    free(geom);
    kevo_vars_clear(c->scratch);
    if (kevo_vars_update(c->scratch, c->env) != KEVO_OK ||
        kevo_vars_update(c->scratch, kevo_candidate_assignment(cand)) !=
            KEVO_OK)
        return kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; i < cand->blocks.nscratch; i++) {
        const kevo_scratch *s = &cand->blocks.scratch[i];
        int64_t count;
        kevo_error ee = KEVO__ERROR_INIT;
        if (kevo_expr_eval(s->count, c->scratch, &count, &ee) != KEVO_OK) {
            kevo__error_set_at(&e, ee.code, cand->origin, s->line, 0,
                               "%s%s%d: kevo:launch: count of scratch buffer "
                               "'%s': %s",
                               cand->origin ? cand->origin : "",
                               cand->origin ? ":" : "line ", s->line, s->name,
                               ee.text);
            return kernel_fail(c, k, &e);
        }
        uint64_t bytes;
        if (count <= 0 ||
            __builtin_mul_overflow(
                (uint64_t)count, (uint64_t)kevo_dtype_size(s->type), &bytes)) {
            kevo__error_set_at(&e, KEVO_EINVALID, cand->origin, s->line, 0,
                               "%s%s%d: kevo:launch: scratch buffer '%s' has "
                               "%lld elements ('%s'); it needs a positive "
                               "count whose size fits 64 bits",
                               cand->origin ? cand->origin : "",
                               cand->origin ? ":" : "line ", s->line, s->name,
                               (long long)count, kevo_expr_text(s->count));
            return kernel_fail(c, k, &e);
        }
    }
    return KEVO_OK;
}

static kevo_status check_shape(checker *c, kevo_shape_set set, size_t i)
{
    c->set = set;
    c->index = i;
    kevo__task_shape_text(c->task, set, i, c->at, sizeof c->at);
    kevo_vars_clear(c->dims);
    kevo_vars_clear(c->env);
    if (kevo_task_shape_vars(c->task, set, i, c->dims) != KEVO_OK ||
        kevo__devprops_nominal(c->env) != KEVO_OK ||
        kevo_vars_update(c->env, c->dims) != KEVO_OK)
        return kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = check_buffers(c);
    if (rc == KEVO_OK)
        rc = check_scalars(c);
    if (rc == KEVO_OK)
        rc = check_cost(c);
    if (rc == KEVO_OK)
        rc = check_task_constraints(c);
    for (int k = 0; k < 3 && rc == KEVO_OK; k++)
        rc = c->kernels[k] ? check_kernel(c, k) : KEVO_OK;
    return rc;
}

kevo_status kevo_task_validate(const kevo_task *task, kevo_error *err)
{
    if (!task)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_task_validate: task is NULL");
    checker c = {.task = task, .err = err};
    kevo_status rc = KEVO_OK;
    c.dims = kevo_vars_new();
    c.env = kevo_vars_new();
    c.scratch = kevo_vars_new();
    if (!c.dims || !c.env || !c.scratch) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = check_structure(&c)) != KEVO_OK ||
        (rc = check_params(&c)) != KEVO_OK ||
        (rc = check_constraint_names(&c)) != KEVO_OK ||
        (rc = check_shapes_unique(&c)) != KEVO_OK ||
        (rc = fit_kernels(&c)) != KEVO_OK)
        goto out;
    for (int s = 0; s < 2 && rc == KEVO_OK; s++) {
        for (size_t i = 0; i < task->shapes[s].count && rc == KEVO_OK; i++)
            rc = check_shape(&c, (kevo_shape_set)s, i);
    }
out:
    for (int k = 0; k < 3; k++)
        kevo_candidate_free(c.kernels[k]);
    kevo_vars_free(c.dims);
    kevo_vars_free(c.env);
    kevo_vars_free(c.scratch);
    return rc;
}

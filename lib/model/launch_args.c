/*
 * launch_args.c: resolving the arguments of a candidate's launches against
 * a task (see launch_args.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch_args.h"

kevo_vars *kevo__env_with_params(const kevo_vars *env,
                                 const kevo_candidate *cand)
{
    kevo_vars *v = env ? kevo_vars_copy(env) : kevo_vars_new();
    if (v && kevo_vars_update(v, kevo_candidate_assignment(cand)) != KEVO_OK) {
        kevo_vars_free(v);
        v = NULL;
    }
    return v;
}

const char *kevo__launch_place(const kevo_candidate *cand, int line, char *buf,
                               size_t size)
{
    if (cand->origin)
        snprintf(buf, size, "%s:%d: kevo:launch: ", cand->origin, line);
    else
        snprintf(buf, size, "line %d: kevo:launch: ", line);
    return buf;
}

kevo_status kevo__launch_error(const kevo_candidate *cand, int line,
                               kevo_status code, kevo_error *err,
                               const char *fmt, ...)
{
    char where[512], msg[KEVO_ERROR_TEXT_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return kevo__error_set_at(
        err, code, cand->origin, line, 0, "%s%s",
        kevo__launch_place(cand, line, where, sizeof where), msg);
}

/* Whether type (i32, u32, i64 or u64: the casts of a launch expression)
 * holds v. */
static bool holds(kevo_dtype type, int64_t v)
{
    switch (type) {
    case KEVO_DTYPE_I32: return v >= INT32_MIN && v <= INT32_MAX;
    case KEVO_DTYPE_U32: return v >= 0 && v <= (int64_t)UINT32_MAX;
    case KEVO_DTYPE_U64: return v >= 0;
    default: return true;
    }
}

/* The error of a launch expression whose value v its type does not hold. */
static kevo_status range_error(const kevo_candidate *cand, const kevo_launch *l,
                               size_t a, kevo_dtype type, int64_t v,
                               kevo_error *err)
{
    char where[512];
    const kevo_launch_arg *la = &l->args[a];
    const char *hint =
        v < 0 ? "a negative value needs a signed type: cast it to (i32) or "
                "(i64) and take a kernel parameter of that type"
        : !la->has_cast
            ? "an expression without a cast is passed as i32: cast it to "
              "(i64) (or (u32) for values below 2^32) and take a kernel "
              "parameter of that type"
            : "cast it to (i64) and take a 64-bit kernel parameter";
    return kevo__error_set_at(
        err, KEVO_EINVALID, cand->origin, l->line, 0,
        "%sargument %zu '%s' of '%s' is %" PRId64 ", which %s does not hold "
        "(%s)",
        kevo__launch_place(cand, l->line, where, sizeof where), a + 1, la->text,
        l->kernel, v, kevo_dtype_name(type), hint);
}

/* The index of the task argument called name, or -1. */
static long task_arg_index(const kevo_task *task, const char *name,
                           kevo_arg_info *info)
{
    for (size_t i = 0; i < kevo_task_arg_count(task); i++) {
        memset(info, 0, sizeof(*info));
        info->size = sizeof(*info);
        if (kevo_task_arg_info(task, i, info) == KEVO_OK &&
            strcmp(info->name, name) == 0)
            return (long)i;
    }
    return -1;
}

kevo_status kevo__launch_args(const kevo_task *task, const kevo_candidate *cand,
                              size_t i, const kevo_vars *env,
                              kevo__resolved_arg **args, size_t *nargs,
                              kevo_error *err)
{
    const kevo_blocks *b = &cand->blocks;
    kevo_vars *vars = NULL;
    kevo__resolved_arg *v = NULL;
    kevo_status rc = KEVO_OK;

    *args = NULL;
    *nargs = 0;
    if (i >= b->nlaunches)
        return kevo__error_set(err, KEVO_EINVAL, "no launch %zu", i);
    const kevo_launch *l = &b->launches[i];
    v = calloc(l->nargs + 1, sizeof(*v));
    if (!v)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    if (env && !(vars = kevo__env_with_params(env, cand))) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t a = 0; a < l->nargs; a++) {
        const kevo_launch_arg *la = &l->args[a];
        kevo_arg_info info;
        long t = la->is_name ? task_arg_index(task, la->text, &info) : -1;
        if (t >= 0) {
            v[a].index = (size_t)t;
            v[a].type = info.type;
            if (info.role == KEVO_ROLE_SCALAR) {
                v[a].kind = KEVO__ARG_SCALAR;
                v[a].size = kevo_dtype_size(info.type);
            } else {
                v[a].kind = KEVO__ARG_BUFFER;
                v[a].size = sizeof(void *);
            }
            continue;
        }
        bool scratch = false;
        for (size_t s = 0; la->is_name && s < b->nscratch; s++) {
            if (strcmp(b->scratch[s].name, la->text) == 0) {
                v[a] =
                    (kevo__resolved_arg){KEVO__ARG_SCRATCH, s,
                                         b->scratch[s].type, sizeof(void *), 0};
                scratch = true;
                break;
            }
        }
        if (scratch)
            continue;
        long m = la->is_name ? kevo__tensormap_find(cand, la->text) : -1;
        if (m >= 0) {
            v[a] = (kevo__resolved_arg){KEVO__ARG_TENSORMAP, (size_t)m,
                                        b->tensormaps[m].type, KEVO__TMAP_BYTES,
                                        0};
            continue;
        }
        v[a].kind = KEVO__ARG_VALUE;
        v[a].type = la->has_cast ? la->cast : KEVO_DTYPE_I32;
        v[a].size = kevo_dtype_size(v[a].type);
        if (vars) {
            kevo_error e = KEVO__ERROR_INIT;
            rc = kevo_expr_eval(la->expr, vars, &v[a].value, &e);
            if (rc != KEVO_OK) {
                kevo__error_wrap(err, &e, "launch of %s, argument %zu '%s'",
                                 l->kernel, a + 1, la->text);
                goto done;
            }
            if (!holds(v[a].type, v[a].value)) {
                rc = range_error(cand, l, a, v[a].type, v[a].value, err);
                goto done;
            }
        }
    }
    *args = v;
    *nargs = l->nargs;
    v = NULL;
done:
    free(v);
    kevo_vars_free(vars);
    return rc;
}

kevo_status kevo__scratch_count(const kevo_candidate *cand, size_t s,
                                const kevo_vars *env, uint64_t *count,
                                kevo_error *err)
{
    const kevo_blocks *b = &cand->blocks;
    if (s >= b->nscratch)
        return kevo__error_set(err, KEVO_EINVAL, "no scratch buffer %zu", s);
    kevo_vars *vars = kevo__env_with_params(env, cand);
    if (!vars)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    int64_t c = 0;
    kevo_status rc = kevo_expr_eval(b->scratch[s].count, vars, &c, err);
    kevo_vars_free(vars);
    if (rc == KEVO_OK && c <= 0)
        rc = kevo__error_set(err, KEVO_ERANGE,
                             "scratch buffer '%s' has %" PRId64 " elements",
                             b->scratch[s].name, c);
    if (rc == KEVO_OK)
        *count = (uint64_t)c;
    return rc;
}

kevo_status kevo__launches_at(const kevo_task *task, const kevo_candidate *cand,
                              const kevo_vars *env, kevo_launch_geometry *geom,
                              kevo__tmap_args *maps, bool *used,
                              kevo_error *err)
{
    const kevo_blocks *b = &cand->blocks;
    size_t nmaps = b->ntensormaps;
    bool *named = calloc(nmaps + 1, sizeof *named);
    if (!named)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = KEVO_OK;
    size_t runs = 0;
    for (size_t i = 0; i < b->nlaunches && rc == KEVO_OK; i++) {
        geom[i] = (kevo_launch_geometry){.size = sizeof geom[i]};
        rc = kevo_candidate_launch_geometry(cand, i, env, &geom[i], err);
        if (rc != KEVO_OK || !geom[i].runs)
            continue;
        runs++;
        kevo__resolved_arg *args = NULL;
        size_t nargs = 0;
        rc = kevo__launch_args(task, cand, i, env, &args, &nargs, err);
        for (size_t a = 0; a < nargs && rc == KEVO_OK; a++) {
            if (args[a].kind == KEVO__ARG_TENSORMAP)
                named[args[a].index] = true;
        }
        free(args);
    }
    if (rc == KEVO_OK && runs == 0 && b->nlaunches > 0) {
        char where[512];
        rc = kevo__error_set_at(
            err, KEVO_EINVALID, cand->origin, b->launch_line, 0,
            "%sno launch runs at this shape: the 'if' condition of every "
            "launch is 0, and at least one launch must run",
            kevo__launch_place(cand, b->launch_line, where, sizeof where));
    }
    for (size_t m = 0; m < nmaps && rc == KEVO_OK; m++) {
        kevo__tmap_args one;
        if (used)
            used[m] = named[m];
        if (named[m])
            rc = kevo__tensormap_args(task, cand, m, env,
                                      maps ? &maps[m] : &one, err);
    }
    free(named);
    return rc;
}

/*
 * task_candidate.c: fitting a candidate to a task: kevo_candidate_new_for_task
 * and the checks of the candidate's launch blocks against the task's
 * arguments, dims and parameters.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "candidate_private.h"
#include "devprops.h"
#include "task_private.h"
#include "tensormap.h"

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
        bool buffer = kevo__task_find_arg(task, name) >= 0 ||
                      is_scratch(c, name) || kevo__tensormap_find(c, name) >= 0;
        return launch_fail(err, c, line, "kevo:launch",
                           "%s names '%s', which is no dim, parameter or "
                           "device property%s",
                           what, name,
                           buffer ? " (task arguments, scratch buffers and "
                                    "tensor maps are passed by their bare "
                                    "name, never inside an expression)"
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
    const kevo_blocks *b = &c->blocks;
    for (size_t i = 0; i < b->nscratch + b->ntensormaps; i++) {
        bool scratch = i < b->nscratch;
        const char *name =
            scratch ? b->scratch[i].name : b->tensormaps[i - b->nscratch].name;
        int line =
            scratch ? b->scratch[i].line : b->tensormaps[i - b->nscratch].line;
        const char *what =
            kevo__task_find_arg(task, name) >= 0   ? "a task argument"
            : kevo__task_find_dim(task, name) >= 0 ? "a dim"
            : kevo_paramspace_find(b->params, name, &index) == KEVO_OK
                ? "a parameter"
            : kevo__devprop_is_name(name) ? "a device property"
                                          : NULL;
        if (what)
            return launch_fail(err, c, line, "kevo:launch",
                               "%s '%s' has the name of %s; rename it",
                               scratch ? "scratch buffer" : "tensormap", name,
                               what);
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
    for (int d = 0; d < 3 && rc == KEVO_OK; d++) {
        snprintf(what, sizeof what, "cluster %s of kernel '%s'", axis[d],
                 l->kernel);
        rc = check_expr_names(task, c, l->cluster[d], l->line, what, err);
    }
    snprintf(what, sizeof what, "condition of kernel '%s'", l->kernel);
    if (rc == KEVO_OK)
        rc = check_expr_names(task, c, l->cond, l->line, what, err);
    for (size_t k = 0; k < l->nargs && rc == KEVO_OK; k++) {
        const kevo_launch_arg *a = &l->args[k];
        const char *name = arg_name(a);
        if (name &&
            (kevo__task_find_arg(task, name) >= 0 || is_scratch(c, name) ||
             kevo__tensormap_find(c, name) >= 0)) {
            if (a->has_cast)
                return launch_fail(err, c, l->line, "kevo:launch",
                                   "argument '%s' of kernel '%s' casts '%s' to "
                                   "%s, but a task argument, scratch buffer "
                                   "or tensor map is passed as it is: drop "
                                   "the cast",
                                   a->text, l->kernel, name,
                                   kevo_dtype_name(a->cast));
            continue;
        }
        if (name) {
            if (!is_variable(task, c, name))
                return launch_fail(err, c, l->line, "kevo:launch",
                                   "argument '%s' of kernel '%s' names no task "
                                   "argument, scratch buffer, tensor map, "
                                   "dim, parameter or device property",
                                   name, l->kernel);
            continue;
        }
        snprintf(what, sizeof what, "argument '%.60s' of kernel '%s'", a->text,
                 l->kernel);
        rc = check_expr_names(task, c, a->expr, l->line, what, err);
    }
    return rc;
}

/* Whether a launch passes the buffer called name, itself or through a
 * tensor map over it. */
static bool passed_to_a_launch(const kevo_candidate *c, const char *name)
{
    for (size_t i = 0; i < c->blocks.nlaunches; i++) {
        const kevo_launch *l = &c->blocks.launches[i];
        for (size_t k = 0; k < l->nargs; k++) {
            const char *passed = arg_name(&l->args[k]);
            long m = passed ? kevo__tensormap_find(c, passed) : -1;
            if (passed &&
                (strcmp(passed, name) == 0 ||
                 (m >= 0 && strcmp(c->blocks.tensormaps[m].buffer, name) == 0)))
                return true;
        }
    }
    return false;
}

/* A tensor map's buffer and the names of its expressions. */
static kevo_status check_tensormap(const kevo_task *task,
                                   const kevo_candidate *c, size_t i,
                                   kevo_error *err)
{
    const kevo_tensormap *m = &c->blocks.tensormaps[i];
    bool scratch;
    size_t index;
    kevo_status rc = kevo__tensormap_buffer(task, c, i, &scratch, &index, err);
    char what[160];
    static const char *const lists[] = {"dims", "box", "strides",
                                        "elementstrides"};
    kevo_expr *const *exprs[] = {m->dims, m->box, m->strides, m->elemstrides};
    for (size_t k = 0; k < KEVO_ARRAY_SIZE(lists) && rc == KEVO_OK; k++) {
        for (size_t j = 0; j < KEVO__TMAP_RANK_MAX && rc == KEVO_OK; j++) {
            snprintf(what, sizeof what, "%s[%zu] of tensormap '%s'", lists[k],
                     j, m->name);
            rc = check_expr_names(task, c, exprs[k][j], m->line, what, err);
        }
    }
    snprintf(what, sizeof what, "offset of tensormap '%s'", m->name);
    if (rc == KEVO_OK)
        rc = check_expr_names(task, c, m->offset, m->line, what, err);
    return rc;
}

/* The launch checks on a candidate whose parameters already hold the
 * task's: launch arguments resolve, scratch and parameter names do not
 * collide, every output is passed. */
static kevo_status check_launches(const kevo_task *task,
                                  const kevo_candidate *cand, kevo_error *err)
{
    kevo_status rc = check_collisions(task, cand, err);
    for (size_t i = 0; i < cand->blocks.nscratch && rc == KEVO_OK; i++) {
        const kevo_scratch *s = &cand->blocks.scratch[i];
        char what[160];
        snprintf(what, sizeof what, "count of scratch buffer '%s'", s->name);
        rc = check_expr_names(task, cand, s->count, s->line, what, err);
    }
    for (size_t i = 0; i < cand->blocks.ntensormaps && rc == KEVO_OK; i++)
        rc = check_tensormap(task, cand, i, err);
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
        rc = check_launches(task, c, err);
    if (rc != KEVO_OK) {
        kevo_candidate_free(c);
        return rc;
    }
    *out = c;
    return KEVO_OK;
}

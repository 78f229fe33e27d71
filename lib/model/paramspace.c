/*
 * paramspace.c: tunable parameters with finite integer domains, and the
 * constraints an assignment of them must meet. Each domain is kept in its
 * declaration order (which the search and the JSON preserve) and sorted
 * (for the membership test that every check makes).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidate_private.h"

typedef struct param {
    char *name;
    int64_t *values; /* declaration order */
    int64_t *sorted; /* ascending, for lookups */
    size_t n;
    int64_t def;
} param;

typedef struct constraint {
    kevo_expr *expr; /* its text is the constraint's text */
} constraint;

struct kevo_paramspace {
    param *params;
    size_t nparams, pcap;
    constraint *cons;
    size_t ncons, ccap;
};

kevo_paramspace *kevo_paramspace_new(void)
{
    return calloc(1, sizeof(kevo_paramspace));
}

static void param_clear(param *p)
{
    free(p->name);
    free(p->values);
    free(p->sorted);
}

void kevo_paramspace_free(kevo_paramspace *space)
{
    if (!space)
        return;
    for (size_t i = 0; i < space->nparams; i++)
        param_clear(&space->params[i]);
    free(space->params);
    for (size_t i = 0; i < space->ncons; i++)
        kevo_expr_free(space->cons[i].expr);
    free(space->cons);
    free(space);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static bool param_has(const param *p, int64_t v)
{
    return bsearch(&v, p->sorted, p->n, sizeof v, cmp_i64) != NULL;
}

/* "{128, 256, 512, 1024}", or for a long domain its first values, "..."
 * and the last value with the count. */
static void domain_text(const param *p, char *out, size_t size)
{
    kevo_buf b = {0};
    size_t shown = p->n <= 12 ? p->n : 8;
    kevo__buf_puts(&b, "{");
    for (size_t k = 0; k < shown; k++)
        kevo__buf_printf(&b, "%s%" PRId64, k ? ", " : "", p->values[k]);
    if (shown < p->n)
        kevo__buf_printf(&b, ", ..., %" PRId64 "} (%zu values)",
                         p->values[p->n - 1], p->n);
    else
        kevo__buf_puts(&b, "}");
    snprintf(out, size, "%s", b.failed || !b.data ? "{...}" : b.data);
    kevo__buf_free(&b);
}

static param *find_param(const kevo_paramspace *space, const char *name)
{
    for (size_t i = 0; i < space->nparams; i++) {
        if (strcmp(space->params[i].name, name) == 0)
            return &space->params[i];
    }
    return NULL;
}

/* Declares a parameter, taking ownership of values (n of them, already
 * checked against KEVO_PARAM_DOMAIN_MAX) whether it succeeds or not. */
static kevo_status add_param(kevo_paramspace *space, const char *name,
                             int64_t *values, size_t n, int64_t def,
                             kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    param p = {.values = values, .n = n, .def = def};
    if (n == 0) {
        rc = kevo__error_set(err, KEVO_EINVAL, "the domain of '%s' is empty",
                             name);
        goto done;
    }
    p.sorted = malloc(n * sizeof *p.sorted);
    p.name = kevo__strdup(name);
    if (!p.sorted || !p.name) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    memcpy(p.sorted, values, n * sizeof *values);
    qsort(p.sorted, n, sizeof *p.sorted, cmp_i64);
    for (size_t k = 1; k < n; k++) {
        if (p.sorted[k] == p.sorted[k - 1]) {
            rc = kevo__error_set(err, KEVO_EINVAL,
                                 "value %" PRId64
                                 " is listed twice in the domain of '%s'",
                                 p.sorted[k], name);
            goto done;
        }
    }
    if (!param_has(&p, def)) {
        char dom[256];
        domain_text(&p, dom, sizeof dom);
        rc = kevo__error_set(err, KEVO_EINVAL,
                             "default %" PRId64 " of '%s' is not in its "
                             "domain %s",
                             def, name, dom);
        goto done;
    }
    if (space->nparams == space->pcap) {
        size_t cap = space->pcap ? space->pcap * 2 : 8;
        param *grown = realloc(space->params, cap * sizeof *grown);
        if (!grown) {
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            goto done;
        }
        space->params = grown;
        space->pcap = cap;
    }
    space->params[space->nparams++] = p;
    return KEVO_OK;
done:
    param_clear(&p);
    return rc;
}

/* The checks every add_* makes before building a domain. */
static kevo_status check_new_name(kevo_paramspace *space, const char *name,
                                  kevo_error *err)
{
    if (!space || !name)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_paramspace: NULL argument");
    if (!kevo__is_identifier(name))
        return kevo__error_set(err, KEVO_EINVAL,
                               "parameter name '%.64s' is not an identifier "
                               "([A-Za-z_][A-Za-z0-9_]*, at most %d "
                               "characters)",
                               name, KEVO__IDENT_MAX);
    if (find_param(space, name))
        return kevo__error_set(err, KEVO_EEXIST,
                               "parameter '%s' is already declared", name);
    return KEVO_OK;
}

static kevo_status too_many(kevo_error *err, const char *name, uint64_t n)
{
    return kevo__error_set(err, KEVO_ELIMIT,
                           "the domain of '%s' has %" PRIu64
                           " values: the limit is %d",
                           name, n, KEVO_PARAM_DOMAIN_MAX);
}

kevo_status kevo_paramspace_add_values(kevo_paramspace *space, const char *name,
                                       const int64_t *values, size_t n,
                                       int64_t def, kevo_error *err)
{
    kevo_status rc = check_new_name(space, name, err);
    if (rc != KEVO_OK)
        return rc;
    if (n > 0 && !values)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_paramspace_add_values: NULL values");
    if (n > KEVO_PARAM_DOMAIN_MAX)
        return too_many(err, name, n);
    int64_t *copy = NULL;
    if (n > 0) {
        copy = malloc(n * sizeof *copy);
        if (!copy)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        memcpy(copy, values, n * sizeof *copy);
    }
    return add_param(space, name, copy, n, def, err);
}

kevo_status kevo_paramspace_add_range(kevo_paramspace *space, const char *name,
                                      int64_t lo, int64_t hi, int64_t step,
                                      int64_t def, kevo_error *err)
{
    kevo_status rc = check_new_name(space, name, err);
    if (rc != KEVO_OK)
        return rc;
    if (step <= 0)
        return kevo__error_set(err, KEVO_EINVAL,
                               "step %" PRId64 " of '%s' must be positive",
                               step, name);
    if (lo > hi)
        return kevo__error_set(err, KEVO_EINVAL,
                               "range %" PRId64 "..%" PRId64
                               " of '%s' is empty (the low end must not "
                               "exceed the high end)",
                               lo, hi, name);
    /* Unsigned arithmetic: hi - lo may not fit in int64_t. */
    uint64_t steps = ((uint64_t)hi - (uint64_t)lo) / (uint64_t)step;
    if (steps >= KEVO_PARAM_DOMAIN_MAX) {
        if (steps == UINT64_MAX)
            return kevo__error_set(err, KEVO_ELIMIT,
                                   "the domain of '%s' has 2^64 values: the "
                                   "limit is %d",
                                   name, KEVO_PARAM_DOMAIN_MAX);
        return too_many(err, name, steps + 1);
    }
    uint64_t n = steps + 1;
    int64_t *values = malloc((size_t)n * sizeof *values);
    if (!values)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    for (uint64_t k = 0; k < n; k++)
        values[k] = (int64_t)((uint64_t)lo + k * (uint64_t)step);
    return add_param(space, name, values, (size_t)n, def, err);
}

static bool is_pow2(int64_t v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

kevo_status kevo_paramspace_add_pow2(kevo_paramspace *space, const char *name,
                                     int64_t lo, int64_t hi, int64_t def,
                                     kevo_error *err)
{
    kevo_status rc = check_new_name(space, name, err);
    if (rc != KEVO_OK)
        return rc;
    if (!is_pow2(lo) || !is_pow2(hi))
        return kevo__error_set(err, KEVO_EINVAL,
                               "pow2 bounds of '%s' must be powers of two "
                               "(1, 2, 4, ...): %" PRId64 " is not",
                               name, is_pow2(lo) ? hi : lo);
    if (lo > hi)
        return kevo__error_set(err, KEVO_EINVAL,
                               "range pow2(%" PRId64 "..%" PRId64
                               ") of '%s' is empty (the low end must not "
                               "exceed the high end)",
                               lo, hi, name);
    size_t n = 0;
    int64_t values_buf[64];
    for (int64_t v = lo;; v *= 2) {
        values_buf[n++] = v;
        if (v == hi)
            break;
    }
    int64_t *values = malloc(n * sizeof *values);
    if (!values)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    memcpy(values, values_buf, n * sizeof *values);
    return add_param(space, name, values, n, def, err);
}

static kevo_status push_constraint(kevo_paramspace *space, kevo_expr *e,
                                   kevo_error *err)
{
    if (space->ncons == space->ccap) {
        size_t cap = space->ccap ? space->ccap * 2 : 4;
        constraint *grown = realloc(space->cons, cap * sizeof *grown);
        if (!grown) {
            kevo_expr_free(e);
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        }
        space->cons = grown;
        space->ccap = cap;
    }
    space->cons[space->ncons++].expr = e;
    return KEVO_OK;
}

kevo_status kevo_paramspace_add_constraint(kevo_paramspace *space,
                                           const char *text, kevo_error *err)
{
    if (!space || !text)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_paramspace_add_constraint: NULL argument");
    kevo_expr *e;
    kevo_status rc = kevo_expr_parse(text, &e, err);
    if (rc != KEVO_OK)
        return rc;
    return push_constraint(space, e, err);
}

kevo_paramspace *kevo_paramspace_copy(const kevo_paramspace *space)
{
    kevo_paramspace *copy = kevo_paramspace_new();
    if (!copy || !space)
        return copy;
    for (size_t i = 0; i < space->nparams; i++) {
        const param *p = &space->params[i];
        if (kevo_paramspace_add_values(copy, p->name, p->values, p->n, p->def,
                                       NULL) != KEVO_OK)
            goto fail;
    }
    if (space->ncons > 0) {
        copy->cons = calloc(space->ncons, sizeof *copy->cons);
        if (!copy->cons)
            goto fail;
        copy->ccap = space->ncons;
    }
    for (; copy->ncons < space->ncons; copy->ncons++) {
        copy->cons[copy->ncons].expr =
            kevo__expr_copy(space->cons[copy->ncons].expr);
        if (!copy->cons[copy->ncons].expr)
            goto fail;
    }
    return copy;
fail:
    kevo_paramspace_free(copy);
    return NULL;
}

size_t kevo_paramspace_count(const kevo_paramspace *space)
{
    return space ? space->nparams : 0;
}

const char *kevo_paramspace_name(const kevo_paramspace *space, size_t i)
{
    return space && i < space->nparams ? space->params[i].name : NULL;
}

kevo_status kevo_paramspace_find(const kevo_paramspace *space, const char *name,
                                 size_t *index)
{
    if (!space || !name)
        return KEVO_ENOENT;
    const param *p = find_param(space, name);
    if (!p)
        return KEVO_ENOENT;
    if (index)
        *index = (size_t)(p - space->params);
    return KEVO_OK;
}

size_t kevo_paramspace_domain_size(const kevo_paramspace *space, size_t i)
{
    return space && i < space->nparams ? space->params[i].n : 0;
}

int64_t kevo_paramspace_domain_value(const kevo_paramspace *space, size_t i,
                                     size_t k)
{
    if (!space || i >= space->nparams || k >= space->params[i].n)
        return 0;
    return space->params[i].values[k];
}

int64_t kevo_paramspace_default(const kevo_paramspace *space, size_t i)
{
    return space && i < space->nparams ? space->params[i].def : 0;
}

size_t kevo_paramspace_constraint_count(const kevo_paramspace *space)
{
    return space ? space->ncons : 0;
}

const char *kevo_paramspace_constraint(const kevo_paramspace *space, size_t i)
{
    return space && i < space->ncons ? kevo_expr_text(space->cons[i].expr)
                                     : NULL;
}

kevo_status kevo_paramspace_defaults(const kevo_paramspace *space,
                                     kevo_vars *assignment)
{
    if (!space || !assignment)
        return KEVO_EINVAL;
    for (size_t i = 0; i < space->nparams; i++) {
        kevo_status rc = kevo_vars_set(assignment, space->params[i].name,
                                       space->params[i].def);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}

kevo_status kevo__paramspace_check_value(const kevo_paramspace *space, size_t i,
                                         int64_t value, kevo_error *err)
{
    if (!space || i >= space->nparams)
        return kevo__error_set(err, KEVO_EINVAL,
                               "parameter index %zu is out of range", i);
    const param *p = &space->params[i];
    if (param_has(p, value))
        return KEVO_OK;
    char dom[256];
    domain_text(p, dom, sizeof dom);
    return kevo__error_set(err, KEVO_ERANGE,
                           "%s=%" PRId64 " is not in the domain of '%s' %s",
                           p->name, value, p->name, dom);
}

/* The ECONSTRAINT message: the constraint and the values of its names. */
static kevo_status constraint_fails(const kevo_expr *e, const kevo_vars *vars,
                                    kevo_error *err)
{
    kevo_buf b = {0};
    kevo__buf_printf(&b, "constraint '%s' fails", kevo_expr_text(e));
    size_t shown = 0;
    for (size_t k = 0; k < kevo_expr_var_count(e); k++) {
        const char *name = kevo_expr_var_name(e, k);
        int64_t v;
        /* A name skipped by && or || or ?: may have no value. */
        if (kevo_vars_get(vars, name, &v) != KEVO_OK)
            continue;
        kevo__buf_printf(&b, "%s%s=%" PRId64, shown++ ? ", " : " with ", name,
                         v);
    }
    kevo_status rc;
    if (b.failed)
        rc = kevo__error_set(err, KEVO_ECONSTRAINT, "constraint '%s' fails",
                             kevo_expr_text(e));
    else
        rc = kevo__error_set(err, KEVO_ECONSTRAINT, "%s", b.data);
    kevo__buf_free(&b);
    return rc;
}

kevo_status kevo_paramspace_check(const kevo_paramspace *space,
                                  const kevo_vars *assignment,
                                  const kevo_vars *env, kevo_error *err)
{
    if (!space)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_paramspace_check: NULL space");
    for (size_t i = 0; i < space->nparams; i++) {
        const param *p = &space->params[i];
        int64_t v;
        if (kevo_vars_get(assignment, p->name, &v) != KEVO_OK)
            return kevo__error_set(err, KEVO_ENOENT,
                                   "parameter '%s' has no value", p->name);
        kevo_status rc = kevo__paramspace_check_value(space, i, v, err);
        if (rc != KEVO_OK)
            return rc;
    }
    if (space->ncons == 0)
        return KEVO_OK;
    kevo_status rc = KEVO_OK;
    kevo_vars *vars = kevo_vars_copy(env);
    if (!vars || kevo_vars_update(vars, assignment) != KEVO_OK) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < space->ncons; i++) {
        const kevo_expr *e = space->cons[i].expr;
        kevo_error inner = KEVO__ERROR_INIT;
        int64_t v;
        rc = kevo_expr_eval(e, vars, &v, &inner);
        if (rc != KEVO_OK) {
            kevo__error_wrap(err, &inner, "cannot evaluate constraint");
            goto done;
        }
        if (v == 0) {
            rc = constraint_fails(e, vars, err);
            goto done;
        }
    }
done:
    kevo_vars_free(vars);
    return rc;
}

/* ---- JSON ----------------------------------------------------------------
 * {"params": [{"name": "BLOCK", "values": [128, 256], "default": 256}],
 *  "constraints": ["BLOCK * VEC <= 4096"]} */

json_t *kevo__paramspace_to_json(const kevo_paramspace *space)
{
    json_t *obj = json_object();
    json_t *params = json_array();
    json_t *cons = json_array();
    if (!obj || !params || !cons)
        goto fail;
    for (size_t i = 0; space && i < space->nparams; i++) {
        const param *p = &space->params[i];
        json_t *item = json_object();
        if (json_array_append_new(params, item) != 0)
            goto fail;
        json_t *values = json_array();
        if (json_object_set_new(item, "values", values) != 0 ||
            json_object_set_new(item, "name", json_string(p->name)) != 0 ||
            json_object_set_new(item, "default", json_integer(p->def)) != 0)
            goto fail;
        for (size_t k = 0; k < p->n; k++) {
            if (json_array_append_new(values, json_integer(p->values[k])) != 0)
                goto fail;
        }
    }
    for (size_t i = 0; space && i < space->ncons; i++) {
        if (json_array_append_new(
                cons, json_string(kevo_expr_text(space->cons[i].expr))) != 0)
            goto fail;
    }
    if (json_object_set_new(obj, "params", params) != 0) {
        params = NULL;
        goto fail;
    }
    params = NULL;
    if (json_object_set_new(obj, "constraints", cons) != 0) {
        cons = NULL;
        goto fail;
    }
    return obj;
fail:
    json_decref(params);
    json_decref(cons);
    json_decref(obj);
    return NULL;
}

/* A paramspace error recorded at a JSON path: invalid input, not a bad
 * argument. */
static kevo_status json_wrap(kevo_error *err, const kevo_error *inner,
                             const char *origin, const kevo_jpath *path)
{
    kevo_status code = inner->code == KEVO_ENOMEM ? KEVO_ENOMEM : KEVO_EINVALID;
    return kevo__json_fail(err, code, origin, path, "%s", inner->text);
}

static kevo_status param_from_json(kevo_paramspace *space, const json_t *v,
                                   const char *origin, kevo_jpath *path,
                                   kevo_error *err)
{
    static const char *const known[] = {"name", "values", "default", NULL};
    kevo_status rc = kevo__json_object(v, origin, path, err);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(v, known, origin, path, err);
    if (rc != KEVO_OK)
        return rc;
    const char *name = NULL;
    int64_t def = 0;
    int64_t *values = NULL;
    size_t mark;
    for (size_t k = 0; known[k]; k++) {
        if (!json_object_get(v, known[k]))
            return kevo__json_fail(err, KEVO_EINVALID, origin, path,
                                   "missing key \"%s\"", known[k]);
    }
    mark = kevo__jpath_key(path, "name");
    rc =
        kevo__json_string(json_object_get(v, "name"), origin, path, &name, err);
    kevo__jpath_pop(path, mark);
    if (rc != KEVO_OK)
        return rc;
    mark = kevo__jpath_key(path, "default");
    rc = kevo__json_int(json_object_get(v, "default"), origin, path, &def, err);
    kevo__jpath_pop(path, mark);
    if (rc != KEVO_OK)
        return rc;
    const json_t *arr = json_object_get(v, "values");
    mark = kevo__jpath_key(path, "values");
    rc = kevo__json_array(arr, origin, path, err);
    if (rc != KEVO_OK)
        goto done;
    size_t n = json_array_size(arr);
    if (n > KEVO_PARAM_DOMAIN_MAX) {
        rc = kevo__json_fail(err, KEVO_EINVALID, origin, path,
                             "%zu values: the limit is %d", n,
                             KEVO_PARAM_DOMAIN_MAX);
        goto done;
    }
    values = malloc((n ? n : 1) * sizeof *values);
    if (!values) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        size_t m = kevo__jpath_index(path, k);
        rc = kevo__json_int(json_array_get(arr, k), origin, path, &values[k],
                            err);
        kevo__jpath_pop(path, m);
        if (rc != KEVO_OK)
            goto done;
    }
    kevo__jpath_pop(path, mark);
    kevo_error inner = KEVO__ERROR_INIT;
    rc = kevo_paramspace_add_values(space, name, values, n, def, &inner);
    if (rc != KEVO_OK)
        rc = json_wrap(err, &inner, origin, path);
done:
    kevo__jpath_pop(path, mark);
    free(values);
    return rc;
}

kevo_status kevo__paramspace_from_json(const json_t *v, const char *origin,
                                       kevo_jpath *path, kevo_paramspace **out,
                                       kevo_error *err)
{
    static const char *const known[] = {"params", "constraints", NULL};
    *out = NULL;
    if (!v)
        return kevo__json_fail(err, KEVO_EINVALID, origin, path,
                               "missing parameter space");
    kevo_status rc = kevo__json_object(v, origin, path, err);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(v, known, origin, path, err);
    if (rc != KEVO_OK)
        return rc;
    const json_t *params = json_object_get(v, "params");
    const json_t *cons = json_object_get(v, "constraints");
    if (!params)
        return kevo__json_fail(err, KEVO_EINVALID, origin, path,
                               "missing key \"params\"");
    kevo_paramspace *space = kevo_paramspace_new();
    if (!space)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    size_t mark = kevo__jpath_key(path, "params");
    rc = kevo__json_array(params, origin, path, err);
    for (size_t i = 0; rc == KEVO_OK && i < json_array_size(params); i++) {
        size_t m = kevo__jpath_index(path, i);
        rc = param_from_json(space, json_array_get(params, i), origin, path,
                             err);
        kevo__jpath_pop(path, m);
    }
    kevo__jpath_pop(path, mark);
    if (rc != KEVO_OK || !cons)
        goto done;
    mark = kevo__jpath_key(path, "constraints");
    rc = kevo__json_array(cons, origin, path, err);
    for (size_t i = 0; rc == KEVO_OK && i < json_array_size(cons); i++) {
        size_t m = kevo__jpath_index(path, i);
        const char *text;
        rc = kevo__json_string(json_array_get(cons, i), origin, path, &text,
                               err);
        if (rc == KEVO_OK) {
            kevo_error inner = KEVO__ERROR_INIT;
            rc = kevo_paramspace_add_constraint(space, text, &inner);
            if (rc != KEVO_OK)
                rc = json_wrap(err, &inner, origin, path);
        }
        kevo__jpath_pop(path, m);
    }
    kevo__jpath_pop(path, mark);
done:
    if (rc != KEVO_OK) {
        kevo_paramspace_free(space);
        return rc;
    }
    *out = space;
    return KEVO_OK;
}

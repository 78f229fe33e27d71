/*
 * task_json_spaces.c: reading the spaces of a task file (kevo-task(5)): the
 * search space (params and constraints) and the behaviour space
 * (descriptors).
 */
#include "config.h"

#include <stdlib.h>

#include "core/jsonutil.h"
#include "task_private.h"

/* [lo, hi] as two integers. */
static kevo_status read_pair(kevo_task_loader *ld, const json_t *v, int64_t *lo,
                             int64_t *hi)
{
    kevo_status rc = kevo__json_array(v, ld->origin, &ld->path, ld->err);
    if (rc == KEVO_OK && json_array_size(v) != 2)
        rc = kevo__task_load_fail(ld, KEVO_EINVALID,
                                  "expected [lo, hi], found %zu items",
                                  json_array_size(v));
    for (size_t i = 0; rc == KEVO_OK && i < 2; i++) {
        size_t mark = kevo__jpath_index(&ld->path, i);
        rc = kevo__json_int(json_array_get(v, i), ld->origin, &ld->path,
                            i ? hi : lo, ld->err);
        kevo__jpath_pop(&ld->path, mark);
    }
    return rc;
}

static kevo_status read_param(kevo_task_loader *ld, const char *name,
                              const json_t *v)
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
        return kevo__task_load_fail(
            ld, KEVO_EINVALID,
            "give the domain of '%s' as one of \"values\": [...], "
            "\"range\": [lo, hi] or \"pow2\": [lo, hi]",
            name);
    if (step && !range)
        return kevo__task_load_fail(ld, KEVO_EINVALID,
                                    "\"step\" goes with \"range\" only");
    int64_t *list = NULL, lo = 0, hi = 0, by = 1, dflt = 0;
    size_t n = 0;
    size_t mark;
    if (values) {
        mark = kevo__jpath_key(&ld->path, "values");
        rc = kevo__task_load_array(ld, values, 1, "value");
        n = json_array_size(values);
        if (rc == KEVO_OK && n > KEVO_PARAM_DOMAIN_MAX)
            rc = kevo__task_load_fail(ld, KEVO_ELIMIT,
                                      "%zu values, more than %d", n,
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
            rc = kevo__task_load_fail_inner(ld, &e);
    }
    free(list);
    return rc;
}

kevo_status kevo__task_read_params(kevo_task_loader *ld, const json_t *v)
{
    kevo_status rc = kevo__json_object(v, ld->origin, &ld->path, ld->err);
    const char *name;
    json_t *x;
    json_object_foreach ((json_t *)v, name, x) {
        if (rc != KEVO_OK)
            break;
        size_t mark = kevo__jpath_key(&ld->path, name);
        if (!kevo__is_identifier(name))
            rc = kevo__task_load_fail(
                ld, KEVO_EINVALID,
                "parameter name '%s' is not an identifier "
                "([A-Za-z_][A-Za-z0-9_]*, at most %d characters)",
                name, KEVO__IDENT_MAX);
        else
            rc = read_param(ld, name, x);
        kevo__jpath_pop(&ld->path, mark);
    }
    return rc;
}

static kevo_status read_constraint(kevo_task_loader *ld, const json_t *v,
                                   void *arg)
{
    const char *text;
    kevo_status rc =
        kevo__json_string(v, ld->origin, &ld->path, &text, ld->err);
    kevo_error e = KEVO__ERROR_INIT;
    if (rc == KEVO_OK &&
        kevo_paramspace_add_constraint(ld->task->params, text, &e) != KEVO_OK)
        rc = kevo__task_load_fail_inner(ld, &e);
    return rc;
}

kevo_status kevo__task_read_constraints(kevo_task_loader *ld, const json_t *v)
{
    return kevo__task_load_each(ld, v, 0, "constraint", read_constraint, NULL);
}

/* One element of "descriptors"; arg is unused (kevo__task_load_each). */
static kevo_status read_descriptor(kevo_task_loader *ld, const json_t *v,
                                   void *arg)
{
    static const char *const keys[] = {"name", "bins", "range", "edges", NULL};
    kevo_error e = KEVO__ERROR_INIT;
    kevo_status rc = KEVO_OK;
    if (json_is_string(v)) {
        const char *name;
        rc = kevo__json_string(v, ld->origin, &ld->path, &name, ld->err);
        if (rc == KEVO_OK &&
            kevo_task_add_descriptor(ld->task, name, 0, 0, 0, &e) != KEVO_OK)
            rc = kevo__task_load_fail_inner(ld, &e);
        return rc;
    }
    if (!json_is_object(v))
        return kevo__task_load_fail(
            ld, KEVO_EINVALID,
            "expected a descriptor name or {\"name\", \"bins\", "
            "\"range\"} or {\"name\", \"edges\"}, found %s",
            kevo__json_type_name(v));
    rc = kevo__json_check_keys(v, keys, ld->origin, &ld->path, ld->err);
    json_t *name_v = json_object_get(v, "name"),
           *bins = json_object_get(v, "bins");
    json_t *range = json_object_get(v, "range"),
           *edges = json_object_get(v, "edges");
    if (rc == KEVO_OK && !name_v)
        rc = kevo__task_load_missing(
            ld, "name", "one of the descriptors kevo-task(5) lists");
    if (rc == KEVO_OK && (edges ? bins || range : !bins != !range))
        rc = kevo__task_load_fail(
            ld, KEVO_EINVALID,
            "give \"bins\" with \"range\", or \"edges\" alone, or "
            "neither (the default bins)");
    const char *name = NULL;
    json_t *x;
    size_t mark = kevo__task_load_enter(ld, v, "name", &x);
    if (rc == KEVO_OK)
        rc = kevo__json_string(x, ld->origin, &ld->path, &name, ld->err);
    kevo__jpath_pop(&ld->path, mark);
    if (rc != KEVO_OK)
        return rc;
    if (edges) {
        mark = kevo__jpath_key(&ld->path, "edges");
        rc = kevo__task_load_array(ld, edges, 1, "edge");
        size_t n = json_array_size(edges);
        double *list = NULL;
        if (rc == KEVO_OK && n >= KEVO__TASK_BINS_MAX)
            rc =
                kevo__task_load_fail(ld, KEVO_ELIMIT, "%zu edges, more than %d",
                                     n, KEVO__TASK_BINS_MAX - 1);
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
            rc = kevo__task_load_fail_inner(ld, &e);
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
            rc = kevo__task_load_fail(ld, KEVO_EINVALID,
                                      "bins must be 1 to %d, found %lld",
                                      KEVO__TASK_BINS_MAX, (long long)nbins);
        kevo__jpath_pop(&ld->path, mark);
        mark = kevo__jpath_key(&ld->path, "range");
        if (rc == KEVO_OK)
            rc = kevo__json_array(range, ld->origin, &ld->path, ld->err);
        if (rc == KEVO_OK && json_array_size(range) != 2)
            rc = kevo__task_load_fail(ld, KEVO_EINVALID,
                                      "expected [lo, hi], found %zu items",
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
        rc = kevo__task_load_fail_inner(ld, &e);
    return rc;
}

kevo_status kevo__task_read_descriptors(kevo_task_loader *ld, const json_t *v)
{
    return kevo__task_load_each(ld, v, 1, "descriptor", read_descriptor, NULL);
}

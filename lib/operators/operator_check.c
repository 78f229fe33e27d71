/*
 * operator_check.c: the checks of what a plugin offers. An assignment
 * laid over a candidate, checked at every shape of the task (domains,
 * constraints, launch limits, shared memory), the #include scan of its
 * source, and a child made from a plugin's source: parsed for the task,
 * checked, new (neither its parent nor anything seen before) and given
 * its request's lineage.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonutil.h"
#include "model/task_private.h"
#include "operator_private.h"
#include "proc/include_scan.h"

/* ---- assignments ------------------------------------------------------- */

/* Lays assignment_json (NULL: nothing) over target's assignment. Failures
 * go into op's last_error; target may then be partly changed. */
static kevo_status apply_assignment(kevo_operator *op, kevo_candidate *target,
                                    const char *assignment_json)
{
    if (!assignment_json)
        return KEVO_OK;
    kevo_status rc;
    json_t *v = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if ((rc = kevo__json_parse(assignment_json, "assignment", &v, &e)) !=
        KEVO_OK) {
        kevo__op_fail(op, rc, "%s", e.text);
        goto out;
    }
    if (!json_is_object(v)) {
        rc = kevo__op_fail(op, KEVO_EINVALID,
                           "assignment: expected a JSON object of parameter "
                           "values, found %s",
                           kevo__json_type_name(v));
        goto out;
    }
    const char *name;
    json_t *value;
    json_object_foreach (v, name, value) {
        if (!json_is_integer(value)) {
            rc = kevo__op_fail(op, KEVO_EINVALID,
                               "assignment: $.%s: expected an integer, found "
                               "%s",
                               name, kevo__json_type_name(value));
            goto out;
        }
        if ((rc = kevo_candidate_set_param(
                 target, name, json_integer_value(value), &e)) != KEVO_OK) {
            kevo__op_fail(op, rc, "assignment: %s", e.text);
            goto out;
        }
    }
out:
    json_decref(v);
    return rc;
}

/* c with assignment_json laid over its assignment, in op's scratch copy
 * (borrowed). */
static kevo_status probe(kevo_operator *op, const kevo_candidate *c,
                         const char *assignment_json, kevo_candidate **out)
{
    /* The same candidate as last time: the same address and source. */
    if (op->probe && op->probe_of == c &&
        strcmp(kevo_candidate_source(op->probe), kevo_candidate_source(c)) ==
            0) {
        const kevo_vars *a = kevo_candidate_assignment(c);
        for (size_t i = 0; i < kevo_vars_count(a); i++)
            kevo_candidate_set_param(op->probe, kevo_vars_name(a, i),
                                     kevo_vars_value(a, i), NULL);
    } else {
        kevo_candidate_free(op->probe);
        op->probe_of = NULL;
        if (!(op->probe = kevo_candidate_copy(c)))
            return kevo__op_fail(op, KEVO_ENOMEM, "out of memory");
        op->probe_of = c;
        op->probe_source_hash =
            kevo__op_source_hash(kevo_candidate_source(op->probe));
        op->probe_scanned = false;
    }
    *out = op->probe;
    return apply_assignment(op, op->probe, assignment_json);
}

/* Checks c's assignment at every shape of the task: domains, constraints,
 * launch limits. Held-out shapes are never named in the reason. */
static kevo_status check_shapes(kevo_operator *op, const kevo_candidate *c)
{
    kevo_operator_host *host = op->host;
    const kevo_task *task = host->task;
    kevo_status rc = KEVO_OK;
    kevo_vars *env = kevo_vars_new();
    if (!env)
        return kevo__op_fail(op, KEVO_ENOMEM, "out of memory");
    int64_t smem_max = INT64_MAX;
    kevo_vars_get(host->device, "max_smem_per_block", &smem_max);
    for (int s = 0; s < 2 && rc == KEVO_OK; s++) {
        kevo_shape_set set = (kevo_shape_set)s;
        for (size_t i = 0; i < kevo_task_shape_count(task, set); i++) {
            kevo_error e = KEVO__ERROR_INIT;
            kevo_vars_clear(env);
            if (kevo_vars_update(env, host->device) != KEVO_OK ||
                kevo_task_shape_vars(task, set, i, env) != KEVO_OK) {
                rc = kevo__op_fail(op, KEVO_ENOMEM, "out of memory");
                break;
            }
            rc = kevo_candidate_check(c, env, &e);
            for (size_t l = 0;
                 rc == KEVO_OK && l < kevo_candidate_launch_count(c); l++) {
                kevo_launch_geometry g = {.size = sizeof g};
                rc = kevo_candidate_launch_geometry(c, l, env, &g, &e);
                if (rc == KEVO_OK && g.shared_bytes > (uint64_t)smem_max)
                    rc = kevo__error_set(
                        &e, KEVO_ELIMIT,
                        "kernel '%s' asks for %llu bytes of dynamic shared "
                        "memory, more than max_smem_per_block (%lld)",
                        kevo_candidate_launch_kernel(c, l),
                        (unsigned long long)g.shared_bytes,
                        (long long)smem_max);
            }
            if (rc == KEVO_OK)
                continue;
            if (set == KEVO_SHAPES_TRAIN) {
                char at[256];
                kevo__task_shape_text(task, set, i, at, sizeof at);
                kevo__op_fail(op, rc, "at %s: %s", at, e.text);
            } else {
                kevo__op_fail(op, rc,
                              "the assignment fails at a held-out shape (%s); "
                              "held-out shapes are not shown",
                              kevo_strerror(rc));
            }
            break;
        }
    }
    kevo_vars_free(env);
    return rc;
}

int kevo__op_seen_probe(kevo_operator *op, const kevo_candidate *c,
                        const char *assignment_json)
{
    kevo_candidate *p = NULL;
    if (!c || probe(op, c, assignment_json, &p) != KEVO_OK)
        return 0;
    return kevo__op_seen_has(
        op->host,
        kevo__op_seen_key(op->probe_source_hash, kevo_candidate_assignment(p)));
}

kevo_status kevo__op_check(kevo_operator *op, const kevo_candidate *c,
                           const char *assignment_json)
{
    if (!c)
        return kevo__op_fail(op, KEVO_EINVAL, "check: the candidate is NULL");
    kevo_candidate *p = NULL;
    kevo_status rc = probe(op, c, assignment_json, &p);
    if (rc == KEVO_OK && !op->probe_scanned) {
        /* Once per source: the scan does not depend on the assignment. */
        const char *src = kevo_candidate_source(p);
        kevo_error e = KEVO__ERROR_INIT;
        free(op->probe_scan_msg);
        op->probe_scan =
            kevo__include_scan(src, strlen(src), kevo_candidate_origin(p), &e);
        op->probe_scan_msg =
            op->probe_scan != KEVO_OK ? kevo__strdup(e.text) : NULL;
        op->probe_scanned = true;
    }
    if (rc == KEVO_OK && op->probe_scan != KEVO_OK)
        return kevo__op_fail(op, op->probe_scan, "%s",
                             op->probe_scan_msg ? op->probe_scan_msg
                                                : "out of memory");
    return rc == KEVO_OK ? check_shapes(op, p) : rc;
}

/* ---- children ---------------------------------------------------------- */

/* Why source has an #include kernels may not have, in op's last_error:
 * the include scan's own message. */
static kevo_status scan_includes(kevo_operator *op, const char *source,
                                 const char *origin)
{
    kevo_error e = KEVO__ERROR_INIT;
    kevo_status rc = kevo__include_scan(source, strlen(source), origin, &e);
    if (rc != KEVO_OK)
        kevo__op_fail(op, rc, "%s", e.text);
    return rc;
}

kevo_status kevo__op_make_child(kevo_operator *op, kevo_op_pending *p,
                                const char *source, const char *assignment_json,
                                kevo_candidate **out)
{
    kevo_operator_host *host = op->host;
    kevo_status rc;
    kevo_error e = KEVO__ERROR_INIT;
    kevo_candidate *fresh = NULL;
    char origin[160];
    snprintf(origin, sizeof origin, "%s#%llu", op->name,
             (unsigned long long)p->id);
    *out = NULL;
    if ((rc = kevo_candidate_new_for_task(host->task, source, origin, &fresh,
                                          &e)) != KEVO_OK) {
        kevo__op_fail(op, rc, "%s", e.text);
        goto out;
    }
    if ((rc = scan_includes(op, source, origin)) != KEVO_OK)
        goto out;
    /* A child with its parent's source starts from the parent's values. */
    if (strcmp(source, kevo_candidate_source(p->parent)) == 0) {
        const kevo_vars *a = kevo_candidate_assignment(p->parent);
        for (size_t i = 0; i < kevo_vars_count(a); i++) {
            /* A value outside the child's domain keeps the default. */
            (void)kevo_candidate_set_param(fresh, kevo_vars_name(a, i),
                                           kevo_vars_value(a, i), NULL);
        }
    }
    if ((rc = apply_assignment(op, fresh, assignment_json)) != KEVO_OK ||
        (rc = check_shapes(op, fresh)) != KEVO_OK)
        goto out;
    uint64_t key = kevo__op_candidate_key(fresh);
    if (key == kevo__op_candidate_key(p->parent)) {
        rc = kevo__op_fail(op, KEVO_EEXIST,
                           p->repair && p->repair->child
                               ? "emit_child: the repair is the failed child "
                                 "unchanged"
                               : "emit_child: the child is its parent "
                                 "unchanged");
        goto out;
    }
    if (kevo__op_seen_has(host, key)) {
        rc = kevo__op_fail(op, KEVO_EEXIST,
                           "emit_child: this source with this assignment was "
                           "already evaluated or proposed");
        goto out;
    }
    if ((rc = kevo_candidate_set_lineage(fresh, p->lineage, p->nlineage,
                                         op->name, p->prompt_id, p->generation,
                                         &e)) != KEVO_OK) {
        kevo__op_fail(op, rc, "%s", e.text);
        goto out;
    }
    if (kevo__op_seen_add(host, key) != KEVO_OK) {
        rc = kevo__op_fail(op, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    *out = fresh;
    fresh = NULL;
out:
    kevo_candidate_free(fresh);
    return rc;
}

/*
 * operator_repair.c: what ABI 1.2 added to the operator host: requests to
 * repair a failed child (checked, copied and handed to the plugin's
 * repair()), the lists of failures that requests and revision requests
 * carry, and the refused calls of emit_child() that a result keeps so that
 * they can be repaired too.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/candidate_private.h"
#include "operator_private.h"

/* The size of a version 1.2 repair request: what a caller must at least
 * pass. */
#define REPAIR_SIZE_1_2                                                        \
    (offsetof(kevo_operator_repair_request, reserved) + 8 * sizeof(void *))

/* ABI 1.2 took reserved slots of the request and the revision request:
 * their sizes are those of 1.0 and 1.1. */
_Static_assert(sizeof(size_t) == sizeof(void *),
               "a size_t fills a pointer-sized slot");
_Static_assert(sizeof(kevo_operator_request) ==
                   offsetof(kevo_operator_request, failures) +
                       8 * sizeof(void *),
               "kevo_operator_request changed size");
_Static_assert(sizeof(kevo_operator_revision) ==
                   offsetof(kevo_operator_revision, failure_kinds) +
                       8 * sizeof(void *),
               "kevo_operator_revision changed size");

/* ---- lists of failures ----------------------------------------------------
 */

void kevo__op_failures_free(kevo_op_failures *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free((char *)f->items[i].kind);
        free((char *)f->items[i].diagnostic);
    }
    free(f->items);
    f->items = NULL;
    f->n = 0;
}

kevo_status kevo__op_failures_copy(kevo_op_failures *out,
                                   const kevo_operator_failure *items, size_t n,
                                   const char *what, kevo_error *err)
{
    out->items = NULL;
    out->n = 0;
    if (n == 0)
        return KEVO_OK;
    for (size_t i = 0; i < n; i++) {
        if (!items || !items[i].kind)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "%s: entry %zu has no kind", what, i);
    }
    if (!(out->items = calloc(n, sizeof *out->items)))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        kevo_operator_failure *f = &out->items[out->n++];
        f->count = items[i].count ? items[i].count : 1;
        f->candidate = items[i].candidate;
        f->kind = kevo__strdup(items[i].kind);
        f->diagnostic =
            items[i].diagnostic ? kevo__strdup(items[i].diagnostic) : NULL;
        if (!f->kind || (items[i].diagnostic && !f->diagnostic)) {
            kevo__op_failures_free(out);
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        }
    }
    return KEVO_OK;
}

/* ---- refused attempts -----------------------------------------------------
 */

void kevo__op_add_refused(kevo_op_pending *p, uint32_t attempt,
                          const char *source, kevo_status code,
                          const char *reason)
{
    kevo_operator_result *r = p->res;
    if (r->nrefused == r->crefused) {
        size_t c = r->crefused ? 2 * r->crefused : 2;
        kevo_op_refused *n = realloc(r->refused, c * sizeof *n);
        if (!n)
            return; /* out of memory: the attempt is only not kept */
        r->refused = n;
        r->crefused = c;
    }
    kevo_op_refused *f = &r->refused[r->nrefused];
    f->source = source ? kevo__strdup(source) : NULL;
    f->reason = kevo__strdup(reason && *reason ? reason : kevo_strerror(code));
    f->kind = code == KEVO_EEXIST ? "duplicate" : KEVO_FAIL_INVALID;
    f->attempt = attempt;
    if ((source && !f->source) || !f->reason) {
        free(f->source);
        free(f->reason);
        return;
    }
    r->nrefused++;
}

void kevo__op_result_refused_free(kevo_operator_result *res)
{
    for (size_t i = 0; i < res->nrefused; i++) {
        free(res->refused[i].source);
        free(res->refused[i].reason);
    }
    free(res->refused);
}

size_t kevo_operator_result_refused_count(const kevo_operator_result *res)
{
    return res ? res->nrefused : 0;
}

const char *kevo_operator_result_refused(const kevo_operator_result *res,
                                         size_t i, uint32_t *attempt,
                                         const char **kind, const char **reason)
{
    const kevo_op_refused *f =
        res && i < res->nrefused ? &res->refused[i] : NULL;
    if (attempt)
        *attempt = f ? f->attempt : 0;
    if (kind)
        *kind = f ? f->kind : NULL;
    if (reason)
        *reason = f ? f->reason : NULL;
    return f ? f->source : NULL;
}

uint32_t kevo_operator_result_child_attempt(const kevo_operator_result *res,
                                            size_t i)
{
    return res && i < res->nchildren ? res->children[i].attempt : 0;
}

/* ---- repair requests ------------------------------------------------------
 */

void kevo__op_repair_free(kevo_op_repair *r)
{
    if (!r)
        return;
    kevo_candidate_free(r->child);
    free(r->source);
    free(r->kind);
    free(r->diagnostic);
    free(r);
}

int kevo_operator_can_repair(const kevo_operator *op)
{
    return KEVO__OP_DESC_HAS(op, 2, repair);
}

/* Checks rep; the reason in err. */
static kevo_status check_repair(const kevo_operator *op,
                                const kevo_operator_repair_request *rep,
                                kevo_error *err)
{
    const kevo_operator_desc *d = op->plugin->desc;
    if (!kevo_operator_can_repair(op))
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_repair: operator '%s' cannot "
                               "repair children (plugin '%s', ABI %u.%u, has "
                               "no repair function)",
                               op->name, d->name, d->abi_major, d->abi_minor);
    if (rep->size < REPAIR_SIZE_1_2)
        return kevo__error_set(
            err, KEVO_EINVAL,
            "kevo_operator_repair: rep->size is %zu, less "
            "than sizeof(kevo_operator_repair_request) (%zu)",
            rep->size, (size_t)REPAIR_SIZE_1_2);
    const char *missing = !rep->source                  ? "source"
                          : !rep->kind                  ? "kind"
                          : !rep->diagnostic            ? "diagnostic"
                          : !rep->child && !rep->parent ? "parent (the "
                                                          "child is NULL)"
                                                        : NULL;
    if (missing)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_repair: the request has no %s",
                               missing);
    if (rep->turn < 1)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_repair: turn is 0; the first "
                               "repair of a child is turn 1");
    return KEVO_OK;
}

/* The host's copy of rep in p: p->parent is what a repaired child must
 * differ from (the failed child, or the parent of a refused one), and the
 * lineage is the failed child's. */
static kevo_status copy_repair(kevo_op_pending *p,
                               const kevo_operator_repair_request *rep,
                               kevo_error *err)
{
    kevo_op_repair *r = calloc(1, sizeof *r);
    if (!r)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    p->repair = r;
    const kevo_candidate *base = rep->child ? rep->child : rep->parent;
    r->child = kevo__candidate_share(rep->child);
    p->parent = kevo__candidate_share(base);
    if (!(r->source = kevo__strdup(rep->source)) ||
        !(r->kind = kevo__strdup(rep->kind)) ||
        !(r->diagnostic = kevo__strdup(rep->diagnostic)))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    if (rep->child) {
        size_t n = kevo_candidate_parent_count(rep->child);
        p->nlineage = n < 2 ? n : 2;
        for (size_t i = 0; i < p->nlineage; i++)
            p->lineage[i] = kevo_candidate_parent(rep->child, i);
        p->prompt_id = kevo_candidate_prompt(rep->child);
        p->generation = kevo_candidate_generation(rep->child);
    } else {
        p->lineage[0] = kevo_candidate_id(rep->parent);
        p->nlineage = 1;
        p->prompt_id = rep->prompt_id;
        p->generation = kevo_candidate_generation(rep->parent) + 1;
    }
    kevo_operator_repair_request *c = &r->rep;
    c->size = sizeof *c;
    c->request_id = rep->request_id;
    c->attempt = rep->attempt;
    c->turn = rep->turn;
    c->turns_left = rep->turns_left;
    c->child = r->child;
    c->source = r->source;
    c->kind = r->kind;
    c->diagnostic = r->diagnostic;
    c->prompt_id = p->prompt_id;
    c->parent = rep->child ? NULL : p->parent;
    /* What emit_child() reads of a request: its parent and prompt. */
    p->req.size = sizeof p->req;
    p->req.parent = p->parent;
    p->req.prompt_id = p->prompt_id;
    p->req.n_children = 1;
    return KEVO_OK;
}

kevo_status kevo_operator_repair(kevo_operator *op,
                                 const kevo_operator_repair_request *rep,
                                 uint64_t *id, kevo_error *err)
{
    if (!op || !rep)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_repair: %s is NULL",
                               !op ? "op" : "rep");
    kevo_status rc = check_repair(op, rep, err);
    if (rc != KEVO_OK)
        return rc;
    kevo_op_pending *p = kevo__op_pending_new(op);
    if (!p) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = copy_repair(p, rep, err)) != KEVO_OK)
        goto fail;
    if (kevo__op_start(op, p, id) != KEVO_OK) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto fail;
    }
    p->repair->rep.id = p->id;
    p->req.id = p->id;
    kevo__op_after_call(p,
                        op->plugin->desc->repair(op->state, &p->repair->rep));
    return KEVO_OK;
fail:
    kevo__op_pending_free(p);
    return rc;
}

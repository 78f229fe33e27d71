/*
 * operator_revise.c: requests to revise a meta-prompt (ABI 1.1). The host
 * checks and copies the caller's revision request, hands it to the
 * plugin's revise(), checks each prompt the plugin gives back with
 * emit_prompt() as the prompt pool would, and keeps them in the request's
 * result in the form kevo_promptpool_add_json() takes.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonutil.h"
#include "operator_private.h"

/* The size of a version 1.1 revision request: what a caller must at least
 * pass. */
#define REVISION_SIZE_1_1                                                      \
    (offsetof(kevo_operator_revision, failure_kinds) + 8 * sizeof(void *))

/* ---- the prompt's forms ---------------------------------------------------
 */

/* The sections object of v: v["sections"] when v is a whole prompt (an
 * object whose "sections" is an object; a section's text is never one),
 * else v itself. */
static json_t *sections_of(json_t *v)
{
    json_t *s = json_is_object(v) ? json_object_get(v, "sections") : NULL;
    return json_is_object(s) ? s : v;
}

char *kevo__op_prompt_sections(const char *prompt_json)
{
    json_t *v = json_loads(prompt_json, 0, NULL);
    json_t *s = sections_of(v);
    char *text = s && s != v ? json_dumps(s, JSON_COMPACT | JSON_PRESERVE_ORDER)
                             : kevo__strdup(prompt_json);
    json_decref(v);
    return text;
}

/* Sets o[key] to v, taking v; false when v is NULL or out of memory. */
static bool put(json_t *o, const char *key, json_t *v)
{
    return json_object_set_new(o, key, v) == 0;
}

/* p as the result shows it: {"sections": {...}}, sorted and compact. */
static char *prompt_text(const kevo__prompt *p)
{
    json_t *o = json_object();
    char *text = NULL;
    if (o && put(o, "sections", kevo__prompt_sections_json(p)))
        text = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(o);
    return text;
}

/* p's sections alone, as the plugin sees them. */
static char *sections_text(const kevo__prompt *p)
{
    json_t *o = kevo__prompt_sections_json(p);
    char *text = o ? json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

/* A number of the record, saturated to JSON's integers. */
static json_t *count_json(uint64_t v)
{
    return json_integer((json_int_t)(v > (uint64_t)INT64_MAX ? INT64_MAX : v));
}

static json_t *fitness_json(double f)
{
    return isfinite(f) ? json_real(f) : json_null();
}

/* The record as the plugin reads it. */
static char *record_text(const kevo_prompt_record *r)
{
    json_t *o = json_object();
    char *text = NULL;
    if (o && put(o, "uses", count_json(r->uses)) &&
        put(o, "children", count_json(r->children)) &&
        put(o, "entered", count_json(r->entered)) &&
        put(o, "beat_parent", count_json(r->beat_parent)) &&
        put(o, "best_fitness", fitness_json(r->best_fitness)) &&
        put(o, "best_child", count_json(r->best_child)) &&
        put(o, "worst_fitness", fitness_json(r->worst_fitness)) &&
        put(o, "worst_child", count_json(r->worst_child)) &&
        put(o, "mean", fitness_json(r->mean)) &&
        put(o, "revisions", count_json(r->revisions)))
        text = json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT |
                                 JSON_REAL_PRECISION(17));
    json_decref(o);
    return text;
}

/* ---- revision requests ----------------------------------------------------
 */

void kevo__op_revision_free(kevo_op_revision *r)
{
    if (!r)
        return;
    free(r->original);
    free(r->name);
    free(r->sections);
    free(r->record_json);
    free(r->best_source);
    free(r->best_summary);
    free(r->worst_source);
    free(r->worst_summary);
    kevo__op_failures_free(&r->kinds);
    kevo__op_failures_free(&r->failed);
    free(r);
}

void kevo__op_result_prompts_free(kevo_operator_result *res)
{
    for (size_t i = 0; i < res->nprompts; i++) {
        free(res->prompts[i].json);
        free(res->prompts[i].note);
    }
    free(res->prompts);
}

int kevo_operator_can_revise(const kevo_operator *op)
{
    return KEVO__OP_DESC_HAS(op, 1, revise);
}

/* Copies s into *dst (NULL stays NULL); false when out of memory. */
static bool dup_into(char **dst, const char *s)
{
    *dst = NULL;
    return !s || (*dst = kevo__strdup(s)) != NULL;
}

/* The host's copy of the caller's rev, checked. */
static kevo_status copy_revision(const kevo_operator_revision *rev,
                                 kevo_op_revision **out, kevo_error *err)
{
    static const char origin[] = "kevo_operator_revise: sections_json";
    kevo_status rc;
    json_t *v = NULL;
    kevo__prompt *prompt = NULL;
    kevo_op_revision *r = calloc(1, sizeof *r);
    *out = NULL;
    if (!r)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    if ((rc = kevo__json_parse(rev->sections_json, origin, &v, err)) != KEVO_OK)
        goto out;
    kevo_jpath path;
    kevo__jpath_init(&path);
    json_t *sections = sections_of(v);
    const char *name = rev->prompt_name;
    if (sections != v) {
        kevo__jpath_key(&path, "sections");
        json_t *n = json_object_get(v, "name");
        if (!name && json_is_string(n))
            name = json_string_value(n);
    }
    if ((rc = kevo__prompt_from_sections(sections, origin, &path, &prompt,
                                         err)) != KEVO_OK)
        goto out;
    if (rev->record && rev->record->size != 0 &&
        rev->record->size < sizeof(kevo_prompt_record)) {
        rc = kevo__error_set(err, KEVO_EINVAL,
                             "kevo_operator_revise: record->size is %zu, less "
                             "than sizeof(kevo_prompt_record) (%zu)",
                             rev->record->size, sizeof(kevo_prompt_record));
        goto out;
    }
    if (rev->record) {
        memcpy(&r->record, rev->record, sizeof r->record);
        r->record.size = sizeof r->record;
    }
    if (!(r->original = prompt_text(prompt)) ||
        !(r->sections = sections_text(prompt)) || !dup_into(&r->name, name) ||
        (rev->record && !(r->record_json = record_text(&r->record))) ||
        !dup_into(&r->best_source, rev->best_source) ||
        !dup_into(&r->best_summary, rev->best_summary_json) ||
        !dup_into(&r->worst_source, rev->worst_source) ||
        !dup_into(&r->worst_summary, rev->worst_summary_json)) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = kevo__op_failures_copy(
             &r->kinds, rev->failure_kinds, rev->n_failure_kinds,
             "kevo_operator_revise: failure_kinds", err)) != KEVO_OK ||
        (rc = kevo__op_failures_copy(
             &r->failed, rev->failed_children, rev->n_failed_children,
             "kevo_operator_revise: failed_children", err)) != KEVO_OK)
        goto out;
    kevo_operator_revision *c = &r->rev;
    c->size = sizeof *c;
    c->prompt_id = rev->prompt_id;
    c->prompt_name = r->name;
    c->sections_json = r->sections;
    c->record = rev->record ? &r->record : NULL;
    c->record_json = r->record_json;
    c->best_source = r->best_source;
    c->best_summary_json = r->best_summary;
    c->worst_source = r->worst_source;
    c->worst_summary_json = r->worst_summary;
    c->failure_kinds = r->kinds.n ? r->kinds.items : NULL;
    c->n_failure_kinds = r->kinds.n;
    c->failed_children = r->failed.n ? r->failed.items : NULL;
    c->n_failed_children = r->failed.n;
    *out = r;
    r = NULL;
out:
    kevo__prompt_free(prompt);
    json_decref(v);
    kevo__op_revision_free(r);
    return rc;
}

kevo_status kevo_operator_revise(kevo_operator *op,
                                 const kevo_operator_revision *rev,
                                 uint64_t *id, kevo_error *err)
{
    if (!op || !rev)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_revise: %s is NULL",
                               !op ? "op" : "rev");
    if (!kevo_operator_can_revise(op))
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_revise: operator '%s' cannot "
                               "revise prompts (plugin '%s', ABI %u.%u, has "
                               "no revise function)",
                               op->name, op->plugin->desc->name,
                               op->plugin->desc->abi_major,
                               op->plugin->desc->abi_minor);
    if (rev->size < REVISION_SIZE_1_1)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_revise: rev->size is %zu, less "
                               "than sizeof(kevo_operator_revision) (%zu)",
                               rev->size, (size_t)REVISION_SIZE_1_1);
    if (!rev->sections_json)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_revise: the request has no "
                               "sections_json");
    kevo_status rc;
    kevo_op_pending *p = kevo__op_pending_new(op);
    if (!p) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = copy_revision(rev, &p->revision, err)) != KEVO_OK)
        goto fail;
    if (kevo__op_start(op, p, id) != KEVO_OK) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto fail;
    }
    p->revision->rev.id = p->id;
    kevo__op_after_call(p,
                        op->plugin->desc->revise(op->state, &p->revision->rev));
    return KEVO_OK;
fail:
    kevo__op_pending_free(p);
    return rc;
}

/* ---- emit_prompt ----------------------------------------------------------
 */

kevo_status kevo__op_emit_prompt(kevo_operator *op, uint64_t req_id,
                                 const char *sections_json, const char *note)
{
    kevo_op_pending *p = kevo__op_find_pending(op, req_id);
    if (!p)
        return kevo__op_fail(op, KEVO_EINVAL,
                             "emit_prompt: request %" PRIu64
                             " is not in flight for operator '%s'",
                             req_id, op->name);
    if (!p->revision)
        return kevo__op_fail(op, KEVO_EINVAL,
                             "emit_prompt: request %" PRIu64
                             " asks for children, not for a revised prompt",
                             req_id);
    if (!sections_json)
        return kevo__op_fail(op, KEVO_EINVAL,
                             "emit_prompt: sections_json is NULL");
    kevo_status rc;
    kevo_error e = KEVO__ERROR_INIT;
    json_t *v = NULL;
    kevo__prompt *prompt = NULL;
    char *text = NULL, *copy = NULL;
    kevo_jpath path;
    kevo__jpath_init(&path);
    if ((rc = kevo__json_parse(sections_json, "emit_prompt", &v, &e)) !=
            KEVO_OK ||
        (rc = kevo__prompt_from_sections(v, "emit_prompt", &path, &prompt,
                                         &e)) != KEVO_OK) {
        kevo__op_fail(op, rc, "%s", e.text);
        goto out;
    }
    if (!(text = prompt_text(prompt)) || !dup_into(&copy, note)) {
        rc = kevo__op_fail(op, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    if (strcmp(text, p->revision->original) == 0) {
        rc = kevo__op_fail(op, KEVO_EEXIST,
                           "emit_prompt: the revision is the prompt "
                           "unchanged");
        goto out;
    }
    kevo_operator_result *r = p->res;
    for (size_t i = 0; i < r->nprompts; i++) {
        if (strcmp(text, r->prompts[i].json) == 0) {
            rc = kevo__op_fail(op, KEVO_EEXIST,
                               "emit_prompt: request %" PRIu64
                               " already gave this prompt",
                               req_id);
            goto out;
        }
    }
    if (r->nprompts == r->cprompts) {
        size_t c = r->cprompts ? 2 * r->cprompts : 2;
        kevo_op_prompt *ps = realloc(r->prompts, c * sizeof *ps);
        if (!ps) {
            rc = kevo__op_fail(op, KEVO_ENOMEM, "out of memory");
            goto out;
        }
        r->prompts = ps;
        r->cprompts = c;
    }
    r->prompts[r->nprompts].json = text;
    r->prompts[r->nprompts].note = copy;
    r->nprompts++;
    text = copy = NULL;
out:
    json_decref(v);
    kevo__prompt_free(prompt);
    free(text);
    free(copy);
    return rc;
}

/* ---- results --------------------------------------------------------------
 */

size_t kevo_operator_result_prompt_count(const kevo_operator_result *res)
{
    return res ? res->nprompts : 0;
}

const char *kevo_operator_result_prompt(const kevo_operator_result *res,
                                        size_t i)
{
    return res && i < res->nprompts ? res->prompts[i].json : NULL;
}

const char *kevo_operator_result_prompt_note(const kevo_operator_result *res,
                                             size_t i)
{
    return res && i < res->nprompts ? res->prompts[i].note : NULL;
}

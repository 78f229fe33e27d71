/*
 * operator_revise.c: requests to revise a meta-prompt (ABI 1.1). The host
 * checks and copies the caller's revision request, hands it to the
 * plugin's revise(), checks each prompt the plugin gives back with
 * emit_prompt() or emit_prompt_sections() (ABI 1.3) as the prompt pool
 * would, and keeps them in the request's result as named texts, the form
 * kevo_promptpool_add() takes (and as JSON text when asked for).
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

char *kevo__op_prompt_sections(const char *prompt_json)
{
    json_t *v = json_loads(prompt_json, 0, NULL);
    json_t *s = kevo__op_sections_of(v);
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

/* p's sections as named texts pointing into p: a new array, or NULL when
 * out of memory. */
static kevo_operator_text *prompt_texts(const kevo__prompt *p)
{
    kevo_operator_text *t = calloc(p->nsections, sizeof *t);
    for (size_t i = 0; t && i < p->nsections; i++)
        t[i] = (kevo_operator_text){p->keys[i], p->texts[i]};
    return t;
}

/* p's sections alone, as a plugin of an older minor sees them. */
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
    kevo__prompt_free(r->original);
    free(r->name);
    free(r->sections);
    free(r->record_json);
    free(r->best_source);
    free(r->best_summary);
    free(r->worst_source);
    free(r->worst_summary);
    free(r->texts);
    kevo__op_notes_free(&r->notes);
    kevo__op_failures_free(&r->kinds);
    kevo__op_failures_free(&r->failed);
    free(r);
}

void kevo__op_result_prompts_free(kevo_operator_result *res)
{
    for (size_t i = 0; i < res->nprompts; i++) {
        kevo__prompt_free(res->prompts[i].prompt);
        free(res->prompts[i].sections);
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

/* The prompt of the caller's rev, checked, in *out; *name gets the name a
 * whole prompt gives (borrowed from *v, which the caller releases). */
static kevo_status revision_prompt(const kevo_operator_revision *rev,
                                   json_t **v, const char **name,
                                   kevo__prompt **out, kevo_error *err)
{
    static const char origin[] = "kevo_operator_revise: sections_json";
    *name = rev->prompt_name;
    if (rev->n_sections > 0) {
        const char *keys[KEVO_PROMPT_SECTIONS_MAX];
        const char *texts[KEVO_PROMPT_SECTIONS_MAX];
        for (size_t i = 0; i < rev->n_sections && i < KEVO_ARRAY_SIZE(keys);
             i++) {
            keys[i] = rev->sections[i].name;
            texts[i] = rev->sections[i].text;
        }
        return kevo__prompt_from_arrays("kevo_operator_revise: sections", NULL,
                                        keys, texts, rev->n_sections, out, err);
    }
    kevo_status rc = kevo__json_parse(rev->sections_json, origin, v, err);
    if (rc != KEVO_OK)
        return rc;
    kevo_jpath path;
    kevo__jpath_init(&path);
    json_t *sections = kevo__op_sections_of(*v);
    if (sections != *v) {
        kevo__jpath_key(&path, "sections");
        json_t *n = json_object_get(*v, "name");
        if (!*name && json_is_string(n))
            *name = json_string_value(n);
    }
    return kevo__prompt_from_sections(sections, origin, &path, out, err);
}

/* The host's copy of the caller's rev, checked, for op's plugin. */
static kevo_status copy_revision(const kevo_operator *op,
                                 const kevo_operator_revision *rev,
                                 kevo_op_revision **out, kevo_error *err)
{
    kevo_status rc;
    json_t *v = NULL;
    const char *name = NULL;
    bool modern = op->plugin->desc->abi_minor >= 3;
    kevo_op_revision *r = calloc(1, sizeof *r);
    *out = NULL;
    if (!r)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    if ((rc = revision_prompt(rev, &v, &name, &r->original, err)) != KEVO_OK)
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
    const kevo_operator_notes *given = rev->notes;
    size_t ngiven = rev->n_notes;
    if (!dup_into(&r->name, name) ||
        !dup_into(&r->best_source, rev->best_source) ||
        !dup_into(&r->worst_source, rev->worst_source) ||
        (modern && !(r->texts = prompt_texts(r->original))) ||
        (!modern &&
         (!(r->sections = sections_text(r->original)) ||
          (rev->record && !(r->record_json = record_text(&r->record))) ||
          !dup_into(&r->best_summary,
                    kevo__op_notes_evaluation(given, ngiven, 0,
                                              rev->best_summary_json)) ||
          !dup_into(&r->worst_summary,
                    kevo__op_notes_evaluation(given, ngiven, 1,
                                              rev->worst_summary_json))))) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    if (modern) {
        static const char what[] = "kevo_operator_revise: notes";
        if (kevo__op_notes_init(&r->notes, 2) != KEVO_OK) {
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            goto out;
        }
        if ((rc = kevo__op_notes_set(&r->notes, 0, r->record.best_child,
                                     ngiven > 0 ? &given[0] : NULL,
                                     rev->best_summary_json, what, err)) !=
                KEVO_OK ||
            (rc = kevo__op_notes_set(&r->notes, 1, r->record.worst_child,
                                     ngiven > 1 ? &given[1] : NULL,
                                     rev->worst_summary_json, what, err)) !=
                KEVO_OK)
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
    if (modern) {
        c->sections = r->texts;
        c->n_sections = r->original->nsections;
        c->notes = r->notes.items;
        c->n_notes = r->notes.n;
    }
    *out = r;
    r = NULL;
out:
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
    if (rev->n_notes > 2)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_revise: n_notes is %zu, more "
                               "than 2 (the best and the worst child)",
                               rev->n_notes);
    kevo_status rc =
        kevo__op_check_texts(rev->sections, rev->n_sections, rev->notes,
                             rev->n_notes, "kevo_operator_revise", err);
    if (rc != KEVO_OK)
        return rc;
    if (!rev->sections_json && rev->n_sections == 0)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_operator_revise: the request has neither "
                               "sections nor sections_json");
    kevo_op_pending *p = kevo__op_pending_new(op);
    if (!p) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = copy_revision(op, rev, &p->revision, err)) != KEVO_OK)
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

/* ---- emit_prompt and emit_prompt_sections ---------------------------------
 */

/* The revision request req_id of op, or NULL with the reason in op's
 * last_error. */
static kevo_op_pending *revision_of(kevo_operator *op, uint64_t req_id,
                                    const char *fn)
{
    kevo_op_pending *p = kevo__op_find_pending(op, req_id);
    if (!p)
        kevo__op_fail(op, KEVO_EINVAL,
                      "%s: request %" PRIu64
                      " is not in flight for operator '%s'",
                      fn, req_id, op->name);
    else if (!p->revision)
        kevo__op_fail(op, KEVO_EINVAL,
                      "%s: request %" PRIu64
                      " asks for children, not for a revised prompt",
                      fn, req_id);
    return p && p->revision ? p : NULL;
}

/* Keeps prompt (taken) with a copy of note in p's result, unless it is the
 * prompt to revise or one the request gave. */
static kevo_status keep_prompt(kevo_operator *op, kevo_op_pending *p,
                               kevo__prompt *prompt, const char *note)
{
    kevo_status rc = KEVO_OK;
    kevo_operator_result *r = p->res;
    kevo_operator_text *texts = NULL;
    char *copy = NULL;
    if (kevo__prompt_same(prompt, p->revision->original)) {
        rc = kevo__op_fail(op, KEVO_EEXIST,
                           "emit_prompt: the revision is the prompt "
                           "unchanged");
        goto out;
    }
    for (size_t i = 0; i < r->nprompts; i++) {
        if (kevo__prompt_same(prompt, r->prompts[i].prompt)) {
            rc = kevo__op_fail(op, KEVO_EEXIST,
                               "emit_prompt: request %" PRIu64
                               " already gave this prompt",
                               p->id);
            goto out;
        }
    }
    if (!(texts = prompt_texts(prompt)) || !dup_into(&copy, note)) {
        rc = kevo__op_fail(op, KEVO_ENOMEM, "out of memory");
        goto out;
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
    r->prompts[r->nprompts++] =
        (kevo_op_prompt){.prompt = prompt, .sections = texts, .note = copy};
    prompt = NULL;
    texts = NULL;
    copy = NULL;
out:
    kevo__prompt_free(prompt);
    free(texts);
    free(copy);
    return rc;
}

kevo_status kevo__op_emit_prompt(kevo_operator *op, uint64_t req_id,
                                 const char *sections_json, const char *note)
{
    kevo_op_pending *p = revision_of(op, req_id, "emit_prompt");
    if (!p)
        return KEVO_EINVAL;
    if (!sections_json)
        return kevo__op_fail(op, KEVO_EINVAL,
                             "emit_prompt: sections_json is NULL");
    kevo_status rc;
    kevo_error e = KEVO__ERROR_INIT;
    json_t *v = NULL;
    kevo__prompt *prompt = NULL;
    kevo_jpath path;
    kevo__jpath_init(&path);
    if ((rc = kevo__json_parse(sections_json, "emit_prompt", &v, &e)) ==
            KEVO_OK &&
        (rc = kevo__prompt_from_sections(v, "emit_prompt", &path, &prompt,
                                         &e)) == KEVO_OK)
        rc = keep_prompt(op, p, prompt, note);
    else
        kevo__op_fail(op, rc, "%s", e.text);
    json_decref(v);
    return rc;
}

kevo_status kevo__op_emit_prompt_sections(kevo_operator *op, uint64_t req_id,
                                          const kevo_operator_text *sections,
                                          size_t n, const char *note)
{
    kevo_op_pending *p = revision_of(op, req_id, "emit_prompt_sections");
    if (!p)
        return KEVO_EINVAL;
    const char *keys[KEVO_PROMPT_SECTIONS_MAX];
    const char *texts[KEVO_PROMPT_SECTIONS_MAX];
    for (size_t i = 0; sections && i < n && i < KEVO_ARRAY_SIZE(keys); i++) {
        keys[i] = sections[i].name;
        texts[i] = sections[i].text;
    }
    if (n > 0 && !sections)
        return kevo__op_fail(op, KEVO_EINVAL,
                             "emit_prompt_sections: sections is NULL");
    kevo_error e = KEVO__ERROR_INIT;
    kevo__prompt *prompt = NULL;
    kevo_status rc = kevo__prompt_from_arrays("emit_prompt_sections", NULL,
                                              keys, texts, n, &prompt, &e);
    if (rc != KEVO_OK)
        /* A bad section is invalid input, as its JSON form would be. */
        return kevo__op_fail(
            op, rc == KEVO_ENOMEM ? KEVO_ENOMEM : KEVO_EINVALID, "%s", e.text);
    return keep_prompt(op, p, prompt, note);
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
    if (!res || i >= res->nprompts)
        return NULL;
    /* Made when first asked for: the search reads the sections instead.
     * The text is the result's, so the cache is not a change a caller
     * sees. */
    kevo_op_prompt *p = &((kevo_operator_result *)res)->prompts[i];
    if (!p->json)
        p->json = prompt_text(p->prompt);
    return p->json;
}

const kevo_operator_text *
kevo_operator_result_prompt_sections(const kevo_operator_result *res, size_t i,
                                     size_t *n)
{
    bool ok = res && i < res->nprompts;
    if (n)
        *n = ok ? res->prompts[i].prompt->nsections : 0;
    return ok ? res->prompts[i].sections : NULL;
}

const char *kevo_operator_result_prompt_note(const kevo_operator_result *res,
                                             size_t i)
{
    return res && i < res->nprompts ? res->prompts[i].note : NULL;
}

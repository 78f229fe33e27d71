/*
 * operator_texts.c: named texts (ABI 1.3), the form in which prompts and
 * notes cross the plugin boundary. The host's own copies of a request's
 * prompt sections and of its candidates' notes, made from the arrays a
 * caller gives or from the JSON text an older caller gives; and, for a
 * plugin of an older minor, the JSON text it reads instead.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/jsonutil.h"
#include "operator_private.h"

/* ---- lists of named texts ------------------------------------------------ */

void kevo__op_texts_free(kevo_op_texts *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free((char *)t->items[i].name);
        free((char *)t->items[i].text);
    }
    free(t->items);
    t->items = NULL;
    t->n = 0;
}

kevo_status kevo__op_texts_add(kevo_op_texts *t, const char *name,
                               const char *text)
{
    kevo_operator_text *grown =
        realloc(t->items, (t->n + 1) * sizeof *t->items);
    if (!grown)
        return KEVO_ENOMEM;
    t->items = grown;
    char *n = kevo__strdup(name), *x = kevo__strdup(text);
    if (!n || !x) {
        free(n);
        free(x);
        return KEVO_ENOMEM;
    }
    t->items[t->n++] = (kevo_operator_text){n, x};
    return KEVO_OK;
}

kevo_status kevo__op_texts_copy(kevo_op_texts *out,
                                const kevo_operator_text *items, size_t n,
                                const char *what, kevo_error *err)
{
    *out = (kevo_op_texts){0};
    for (size_t i = 0; i < n; i++) {
        if (!items || !items[i].name || !items[i].text)
            return kevo__error_set(err, KEVO_EINVAL, "%s: entry %zu has no %s",
                                   what, i,
                                   !items || !items[i].name ? "name" : "text");
    }
    for (size_t i = 0; i < n; i++) {
        if (kevo__op_texts_add(out, items[i].name, items[i].text) != KEVO_OK) {
            kevo__op_texts_free(out);
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        }
    }
    return KEVO_OK;
}

const char *kevo__op_texts_find(const kevo_operator_text *items, size_t n,
                                const char *name)
{
    for (size_t i = 0; items && i < n; i++) {
        if (strcmp(items[i].name, name) == 0)
            return items[i].text;
    }
    return NULL;
}

kevo_status kevo__op_check_texts(const kevo_operator_text *sections,
                                 size_t n_sections,
                                 const kevo_operator_notes *notes,
                                 size_t n_notes, const char *fn,
                                 kevo_error *err)
{
    if (n_sections > 0 && !sections)
        return kevo__error_set(err, KEVO_EINVAL,
                               "%s: %zu sections, but the array is NULL", fn,
                               n_sections);
    for (size_t i = 0; i < n_sections; i++) {
        if (!sections[i].name || !sections[i].text)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "%s: section %zu has no %s", fn, i,
                                   !sections[i].name ? "name" : "text");
    }
    if (n_notes > 0 && !notes)
        return kevo__error_set(err, KEVO_EINVAL,
                               "%s: %zu notes, but the array is NULL", fn,
                               n_notes);
    for (size_t i = 0; i < n_notes; i++) {
        for (size_t k = 0; k < notes[i].n_items; k++) {
            const kevo_operator_text *t =
                notes[i].items ? &notes[i].items[k] : NULL;
            if (!t || !t->name || !t->text)
                return kevo__error_set(err, KEVO_EINVAL,
                                       "%s: note %zu of candidate %zu has no "
                                       "%s",
                                       fn, k, i,
                                       !t || !t->name ? "name" : "text");
        }
    }
    return KEVO_OK;
}

/* ---- their JSON forms ---------------------------------------------------- */

json_t *kevo__op_sections_of(json_t *v)
{
    json_t *s = json_is_object(v) ? json_object_get(v, "sections") : NULL;
    return json_is_object(s) ? s : v;
}

kevo_status kevo__op_texts_from_json(kevo_op_texts *out, const char *json,
                                     const char *what, kevo_error *err)
{
    *out = (kevo_op_texts){0};
    json_t *v = NULL;
    kevo_status rc = kevo__json_parse(json, what, &v, err);
    if (rc != KEVO_OK)
        return rc;
    json_t *sections = kevo__op_sections_of(v);
    const char *name;
    json_t *text;
    if (!json_is_object(sections)) {
        rc = kevo__error_set(err, KEVO_EINVALID,
                             "%s: expected a JSON object of named texts, "
                             "found %s",
                             what, kevo__json_type_name(sections));
        goto out;
    }
    json_object_foreach (sections, name, text) {
        if (!json_is_string(text)) {
            rc = kevo__error_set(err, KEVO_EINVALID,
                                 "%s: $%s.%s: expected a string, found %s",
                                 what, sections != v ? ".sections" : "", name,
                                 kevo__json_type_name(text));
            goto out;
        }
        if (kevo__op_texts_add(out, name, json_string_value(text)) != KEVO_OK) {
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            goto out;
        }
    }
out:
    if (rc != KEVO_OK)
        kevo__op_texts_free(out);
    json_decref(v);
    return rc;
}

char *kevo__op_texts_json(const kevo_operator_text *items, size_t n)
{
    json_t *o = json_object();
    char *text = NULL;
    for (size_t i = 0; o && i < n; i++) {
        if (json_object_set_new(o, items[i].name, json_string(items[i].text)) !=
            0)
            goto out;
    }
    if (o)
        text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
out:
    json_decref(o);
    return text;
}

/* ---- the notes of a request's candidates --------------------------------- */

void kevo__op_notes_free(kevo_op_notes *notes)
{
    for (size_t i = 0; notes->texts && i < notes->n; i++)
        kevo__op_texts_free(&notes->texts[i]);
    free(notes->texts);
    free(notes->items);
    *notes = (kevo_op_notes){0};
}

kevo_status kevo__op_notes_init(kevo_op_notes *notes, size_t n)
{
    *notes = (kevo_op_notes){0};
    notes->items = calloc(n ? n : 1, sizeof *notes->items);
    notes->texts = calloc(n ? n : 1, sizeof *notes->texts);
    if (!notes->items || !notes->texts) {
        kevo__op_notes_free(notes);
        return KEVO_ENOMEM;
    }
    notes->n = n;
    return KEVO_OK;
}

kevo_status kevo__op_notes_set(kevo_op_notes *notes, size_t i,
                               uint64_t candidate,
                               const kevo_operator_notes *given,
                               const char *summary_json, const char *what,
                               kevo_error *err)
{
    kevo_op_texts *t = &notes->texts[i];
    kevo_status rc = KEVO_OK;
    if (given && given->n_items > 0)
        rc = kevo__op_texts_copy(t, given->items, given->n_items, what, err);
    else if (summary_json && kevo__op_texts_add(t, KEVO_NOTE_EVALUATION,
                                                summary_json) != KEVO_OK)
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    notes->items[i] = (kevo_operator_notes){.candidate = candidate,
                                            .items = t->n ? t->items : NULL,
                                            .n_items = t->n};
    return rc;
}

const char *kevo__op_notes_evaluation(const kevo_operator_notes *given,
                                      size_t n, size_t i,
                                      const char *summary_json)
{
    if (summary_json || !given || i >= n)
        return summary_json;
    return kevo__op_texts_find(given[i].items, given[i].n_items,
                               KEVO_NOTE_EVALUATION);
}

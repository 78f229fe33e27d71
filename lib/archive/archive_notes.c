/*
 * archive_notes.c: the notes kept beside an archive's elites (see
 * archive_notes.h). Each filled cell may hold a short list of named
 * texts; archive.c drops a cell's list when its elite leaves.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "archive_notes.h"
#include "archive_private.h"

void kevo__archive_drop_notes(kevo_archive *a, size_t cell)
{
    kevo__archive_note_list *l = a->notes ? &a->notes[cell] : NULL;
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free((char *)l->items[i].name);
        free((char *)l->items[i].text);
    }
    free(l->items);
    *l = (kevo__archive_note_list){0};
}

void kevo__archive_free_notes(kevo_archive *a)
{
    for (size_t c = 0; a->notes && c < a->ncells; c++)
        kevo__archive_drop_notes(a, c);
    free(a->notes);
    a->notes = NULL;
}

kevo_status kevo__archive_set_note(kevo_archive *archive, size_t cell,
                                   const char *name, const char *text)
{
    if (!archive || !name || !text)
        return KEVO_EINVAL;
    if (cell >= archive->ncells || !archive->cand || !archive->cand[cell])
        return KEVO_ENOENT;
    if (!archive->notes &&
        !(archive->notes = calloc(archive->ncells, sizeof *archive->notes)))
        return KEVO_ENOMEM;
    kevo__archive_note_list *l = &archive->notes[cell];
    char *copy = kevo__strdup(text);
    if (!copy)
        return KEVO_ENOMEM;
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->items[i].name, name) == 0) {
            free((char *)l->items[i].text);
            l->items[i].text = copy;
            return KEVO_OK;
        }
    }
    kevo_operator_text *grown = realloc(l->items, (l->n + 1) * sizeof *grown);
    char *key = kevo__strdup(name);
    if (grown)
        l->items = grown;
    if (!grown || !key) {
        free(copy);
        free(key);
        return KEVO_ENOMEM;
    }
    l->items[l->n++] = (kevo_operator_text){key, copy};
    return KEVO_OK;
}

const kevo_operator_text *kevo__archive_notes(const kevo_archive *archive,
                                              size_t cell, size_t *n)
{
    const kevo__archive_note_list *l =
        archive && archive->notes && cell < archive->ncells
            ? &archive->notes[cell]
            : NULL;
    *n = l ? l->n : 0;
    return l && l->n ? l->items : NULL;
}

const char *kevo__archive_note(const kevo_archive *archive, size_t cell,
                               const char *name)
{
    size_t n;
    const kevo_operator_text *items = kevo__archive_notes(archive, cell, &n);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(items[i].name, name) == 0)
            return items[i].text;
    }
    return NULL;
}

kevo_status kevo__archive_copy_notes(kevo_archive *archive, size_t to,
                                     const kevo_archive *from, size_t cell)
{
    size_t n;
    const kevo_operator_text *items = kevo__archive_notes(from, cell, &n);
    kevo_status rc = KEVO_OK;
    for (size_t i = 0; rc == KEVO_OK && i < n; i++)
        rc = kevo__archive_set_note(archive, to, items[i].name, items[i].text);
    return rc;
}

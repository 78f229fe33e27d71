/*
 * archive_notes.h: notes kept beside an archive's elites: named texts,
 * such as the evaluation an operator is shown beside an elite. A cell's
 * notes belong to its elite: they go when another elite takes the cell or
 * the archive is freed. archive_notes.c keeps them; the search sets and
 * reads them.
 */
#ifndef KEVO_ARCHIVE_NOTES_H
#define KEVO_ARCHIVE_NOTES_H

#include "core/kevo_private.h"

/* Sets the note name of cell's elite to a copy of text, replacing a note
 * of that name. Returns KEVO_OK, KEVO_ENOENT for an empty cell (or one out
 * of range), KEVO_EINVAL for a NULL argument, or KEVO_ENOMEM. */
kevo_status kevo__archive_set_note(kevo_archive *archive, size_t cell,
                                   const char *name, const char *text);

/* The notes of cell's elite, borrowed until the cell changes, with their
 * number in *n; NULL and 0 when it has none. */
const kevo_operator_text *kevo__archive_notes(const kevo_archive *archive,
                                              size_t cell, size_t *n);

/* The text of the note name of cell's elite, borrowed as above, or
 * NULL. */
const char *kevo__archive_note(const kevo_archive *archive, size_t cell,
                               const char *name);

/* Copies the notes of cell in from to cell to of archive (whose elite is
 * the same candidate, migrated). Returns KEVO_OK, KEVO_ENOENT or
 * KEVO_ENOMEM. */
kevo_status kevo__archive_copy_notes(kevo_archive *archive, size_t to,
                                     const kevo_archive *from, size_t cell);

#endif

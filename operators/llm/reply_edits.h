/*
 * reply_edits.h: SEARCH/REPLACE edits. A reply with a SEARCH marker line
 * (5 to 9 '<' and the word SEARCH) is read as edits:
 *
 *     <<<<<<< SEARCH
 *     lines of the parent
 *     =======
 *     the lines that replace them
 *     >>>>>>> REPLACE
 *
 * and they are applied to the parent in order, each to the text the
 * previous ones left, all or none (the matching rules are in reply.h).
 */
#ifndef KEVO_LLM_REPLY_EDITS_H
#define KEVO_LLM_REPLY_EDITS_H

#include "reply_private.h"

/* The reply (c->text) holds a SEARCH marker line. */
bool kevo__reply_has_edits(const ctx *c);

/* Reads the edits of the reply and applies them to c->parent. On success
 * *child is the edited parent (malloc'ed, *child_len bytes), c->note says
 * what was done, and the result's form and nedits are set. A reply that
 * was cut off (KEVO_REPLY_CUT_OFF) fails as truncated once its edits are
 * read: a later edit may be missing. */
kevo_reply_kind kevo__reply_apply_edits(ctx *c, char **child,
                                        size_t *child_len);

#endif

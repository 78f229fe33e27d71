/*
 * reply_diff.h: unified diffs of the parent, as models write them: in a
 * fence labelled diff, patch or udiff (where the ---/+++ file headers may
 * be left out), or in any other fence or in the reply's text, as a "--- "
 * line, a "+++ " line and an "@@" hunk header in a row. Each hunk is an
 * "@@" line, with or without "-a,b +c,d" line numbers, and its lines: ' '
 * context (an empty line counts as an empty context line), '-' removed,
 * '+' added; "\ No newline at end of file" is ignored.
 *
 * The hunks apply in order, each to the text the previous ones left, all
 * or none. A hunk's old lines (context and removed) must match one place:
 * exactly first, then ignoring each line's indentation and trailing white
 * space (then each added line is re-indented by what the old line before
 * it lacked or had in excess of the parent's). Its line numbers are hints only:
 * where the old lines match several places, the one nearest to the line the
 * header names (moved by what the earlier hunks added and removed) is taken,
 * and two places as near are ambiguous; a hunk without line numbers must match
 * one place. A hunk with no old lines is inserted after the line its header
 * names.
 */
#ifndef KEVO_LLM_REPLY_DIFF_H
#define KEVO_LLM_REPLY_DIFF_H

#include "reply_private.h"

/* A fence label that says the fence holds a diff. */
bool kevo__reply_is_diff_label(const char *label);

/* The reply's lines [first, end) hold a "--- ", "+++ ", "@@" run. */
bool kevo__reply_holds_diff(const ctx *c, size_t first, size_t end);

/* The reply holds a unified diff with at least one hunk (after
 * kevo__reply_read_fences). */
bool kevo__reply_has_diff(const ctx *c);

/* Applies the reply's diff to c->parent: on success *child is the new
 * source (*child_len bytes), c->note says what was done, and the result's
 * form (KEVO_REPLY_FORM_DIFF) and nedits (the hunks) are set. Fails as
 * malformed_edit, edit_not_found, edit_ambiguous, no_parent, too_large, or
 * truncated (a diff fence left open; a hunk at the end of the reply with
 * fewer lines than its header counts; any diff with KEVO_REPLY_CUT_OFF). */
kevo_reply_kind kevo__reply_apply_diff(ctx *c, char **child, size_t *child_len);

#endif

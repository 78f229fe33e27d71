/*
 * reply_lines.h: the text of a reply and of a parent as lines: spans and
 * character classes, splitting into lines, quoting a line for a message,
 * and finding a run of lines in a text, exactly or ignoring white space,
 * with the re-indentation that a tolerant match implies. The SEARCH/REPLACE
 * edits (reply_edits.c) and the unified diffs (reply_diff.c) place their
 * lines with it.
 */
#ifndef KEVO_LLM_REPLY_LINES_H
#define KEVO_LLM_REPLY_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "buf.h"

/* ---- characters and spans ------------------------------------------------ */

static inline bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static inline bool is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static inline bool is_ident_char(char c)
{
    return is_ident_start(c) || is_digit(c);
}

static inline char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* A piece of some text; not NUL-terminated. */
typedef struct span {
    const char *s;
    size_t n;
} span;

static inline span trim(span t)
{
    while (t.n > 0 && is_space(t.s[0])) {
        t.s++;
        t.n--;
    }
    while (t.n > 0 && is_space(t.s[t.n - 1]))
        t.n--;
    return t;
}

static inline bool starts_with(span t, const char *prefix)
{
    size_t n = strlen(prefix);
    return t.n >= n && memcmp(t.s, prefix, n) == 0;
}

/* t starts with the word w, followed by the end or a non-identifier. */
static inline bool starts_with_word(span t, const char *w)
{
    size_t n = strlen(w);
    return starts_with(t, w) && (t.n == n || !is_ident_char(t.s[n]));
}

static inline bool span_eq(span a, span b)
{
    return a.n == b.n && memcmp(a.s, b.s, a.n) == 0;
}

static inline bool span_is(span t, const char *w)
{
    return span_eq(t, (span){w, strlen(w)});
}

static inline bool is_blank(span t)
{
    return trim(t).n == 0;
}

/* The leading white space (blanks and tabs) of t. */
static inline span indent_of(span t)
{
    size_t k = 0;
    while (k < t.n && (t.s[k] == ' ' || t.s[k] == '\t'))
        k++;
    return (span){t.s, k};
}

/* name appears in t as an identifier (not inside a longer one). */
bool kevo__reply_has_word(span t, const char *name);

/* Appends text for a message: trimmed, control characters as '?', cut
 * after 60 bytes (at a character boundary, then "..."). */
void kevo__reply_put_clean(llm_buf *b, span t);

/* The same in single quotes. */
void kevo__reply_quote(llm_buf *b, span t);

/* ---- lines --------------------------------------------------------------- */

/* A line: its content at off (len bytes, without the line ending) and the
 * length of its ending: 0 (last line, none), 1 ("\n") or 2 ("\r\n"). */
typedef struct rline {
    size_t off, len;
    unsigned eol;
} rline;

typedef struct lines {
    rline *v;
    size_t n;
} lines;

/* Splits len bytes of s into lines (out->v is malloc'ed; free it). Returns
 * false when out of memory. */
bool kevo__reply_split_lines(const char *s, size_t len, lines *out);

static inline span line_span(const char *s, const rline *l)
{
    return (span){s + l->off, l->len};
}

/* The 1-based line number of offset off in s. */
size_t kevo__reply_line_of(const char *s, size_t off);

/* ---- placing lines ------------------------------------------------------- */

/* Where a run of wanted lines was found in a text: how many places match
 * (counting stops at cap), the first place and the first three as line
 * indexes (0-based). */
typedef struct place {
    size_t count;
    size_t first;
    size_t at[3];
} place;

/* Finds the n lines want of wtext among the lines cl of text, exactly or (when
 * tolerant) ignoring leading and trailing white space of each line, and
 * fills *p. Each comparison of a line adds to *work; the search stops, with
 * no place found, as soon as *work passes work_max. Places are tried from
 * the top; when near is not SIZE_MAX, p->first is instead the place
 * nearest to line index near (the earlier of two at the same distance,
 * with *tie set). */
void kevo__reply_place(const char *text, const lines *cl, const char *wtext,
                       const rline *want, size_t n, bool tolerant, size_t near,
                       size_t cap, size_t *work, size_t work_max, place *p,
                       bool *tie);

/* How lines placed ignoring white space are re-indented: the white space
 * the text has in front of what the wanted lines have (add), or how many
 * leading blanks of theirs it lacks (remove). */
typedef struct reindent {
    span add;
    size_t remove;
} reindent;

/* The re-indentation from the first non-blank wanted line and the text's
 * line it matched. */
reindent kevo__reply_reindent(span wanted, span matched);

/* Appends t, re-indented (a blank line as it is). */
void kevo__reply_put_reindented(llm_buf *b, span t, reindent r);

#endif

/*
 * blocks_private.h: the insides of the kevo:launch and kevo:param parser,
 * shared by srcscan.c (the comments of a source and the stripped lines of
 * each block), paramblock.c (the kevo:param block) and blocks.c (the
 * kevo:launch block, the source as a whole, and the error messages).
 * blocks.h is what the rest of kevo uses.
 */
#ifndef KEVO_BLOCKS_PRIVATE_H
#define KEVO_BLOCKS_PRIVATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "blocks.h"

#define TAG_LAUNCH "kevo:launch"
#define TAG_PARAM "kevo:param"

/* ---- small helpers ------------------------------------------------------- */

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

/* A piece of the source or of a joined statement; not NUL-terminated. */
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

static inline bool span_is(span t, const char *word)
{
    size_t n = strlen(word);
    return t.n == n && memcmp(t.s, word, n) == 0;
}

/* The identifier at the start of t (empty when there is none). */
static inline span leading_ident(span t)
{
    span w = {t.s, 0};
    if (t.n > 0 && is_ident_start(t.s[0])) {
        while (w.n < t.n && is_ident_char(t.s[w.n]))
            w.n++;
    }
    return w;
}

static inline int next_line(int line)
{
    return line < INT_MAX ? line + 1 : line;
}

/* Quoted text in messages is cut to this many bytes. */
#define QUOTE_MAX 60

static inline int quote_len(span t)
{
    return (int)(t.n < QUOTE_MAX ? t.n : QUOTE_MAX);
}

static inline const char *quote_more(span t)
{
    return t.n > QUOTE_MAX ? "..." : "";
}

/* ---- the parse in progress ----------------------------------------------- */

typedef struct ctx {
    const char *source;
    const char *origin;
    kevo_error *err;
    const char *tag; /* the block being parsed, for messages */
    kevo_blocks *b;
    size_t launch_cap, scratch_cap, tensormap_cap;
    int *param_lines; /* the line of each parameter of b->params */
    size_t param_lines_cap;
    /* Locating blocks rather than parsing them (kevo__blocks_locate): a
     * second block of a kind is passed over and an unterminated one kept,
     * neither an error. */
    bool lenient;
} ctx;

/* One stripped line of a block and its line in the source. */
typedef struct bline {
    span text;
    int line;
} bline;

typedef struct block {
    bline *lines;
    size_t n, cap;
    int line; /* of the tag; 0 when there is no such block */
    /* Where it is: [start, end) from the first comment's opening
     * delimiter to past the last one's end (its closing delimiter, or the
     * end of a line comment's line); closed unless a slash-star comment
     * runs to the end of the source. */
    size_t start, end;
    bool closed;
} block;

/* The kinds of block, which index the array of blocks. */
enum { TAG_NONE, KIND_LAUNCH, KIND_PARAM };

/* ---- errors (blocks.c) --------------------------------------------------- */

/* "<origin>:<line>: <tag>: <message>", with c->tag as the tag. Sets c->err
 * and returns code. */
kevo_status kevo__blocks_fail(ctx *c, kevo_status code, int line,
                              const char *fmt, ...) KEVO_PRINTF(4, 5);

/* "<origin>:<line>: <message>", for errors about a block as a whole. */
kevo_status kevo__blocks_fail_block(ctx *c, kevo_status code, int line,
                                    const char *fmt, ...) KEVO_PRINTF(4, 5);

/* An error from another part of kevo (the expression parser, the parameter
 * space) at a line, keeping the column it found: "<what>: <its text>", or
 * its text alone when what is "". Syntax errors are KEVO_EPARSE, the rest
 * KEVO_EINVALID, and KEVO_ENOMEM stays KEVO_ENOMEM. */
kevo_status kevo__blocks_fail_inner(ctx *c, const kevo_error *inner,
                                    bool syntax, int line, const char *what);

/* ---- pieces of a statement (blocks.c) ------------------------------------ */

/* Parses the expression text t into *out; what names it in messages. */
kevo_status kevo__blocks_expr(ctx *c, span t, int line, const char *what,
                              kevo_expr **out);

/* Splits t at the commas outside parentheses and brackets into trimmed
 * items (none for an all-blank t): a new array (free()) in *items. */
kevo_status kevo__blocks_split(ctx *c, span t, span **items, size_t *count);

/* A copy of src (NULL for NULL) in *dst; false on no memory. */
bool kevo__blocks_copy_expr(const kevo_expr *src, kevo_expr **dst);

/* KEVO_OK when no scratch buffer or tensormap is called name yet; else
 * KEVO_EINVALID at line: "<kind> 'NAME' is declared twice (first at line
 * N)" or "<kind> 'NAME' has the name of <other kind> 'NAME' (line N)".
 * kind is "scratch buffer" or "tensormap". */
kevo_status kevo__blocks_name_free(ctx *c, const char *kind, const char *name,
                                   int line);

/* Index of the ')' that closes the '(' at t.s[open], or t.n. */
size_t kevo__blocks_close_paren(span t, size_t open);

/* ---- tensormap lines (tmapline.c) ---------------------------------------- */

/* Whether t is a tensormap statement (starts with the word). */
bool kevo__tmapline_is(span t);

/* Whether t starts with a tensormap clause (dims(, box(, ...), so that a
 * line holding one continues the tensormap line above it. */
bool kevo__tmapline_continues(span t);

/* Parses "tensormap NAME BUFFER TYPE dims(...) box(...) [...]" at line and
 * appends it to c->b->tensormaps; a name already taken by a scratch buffer
 * or another tensor map is an error. */
kevo_status kevo__tmapline_parse(ctx *c, span t, int line);

void kevo__tensormap_free(kevo_tensormap *m);

/* Deep copy into *dst (zeroed first); false on no memory (*dst then holds
 * what was copied, for kevo__tensormap_free). */
bool kevo__tensormap_copy(const kevo_tensormap *src, kevo_tensormap *dst);

/* ---- launch suffixes (launch_suffix.c) ----------------------------------- */

/* Whether t starts with a launch suffix (cluster(, pdl, if), so that a
 * line holding one continues the launch above it. */
bool kevo__launch_suffix_starts(span t);

/* Parses what follows a launch's argument list: any of "cluster(X[, Y[,
 * Z]])", "pdl" and "if EXPR", in any order, each at most once, into l. An
 * empty t is fine. */
kevo_status kevo__launch_suffix_parse(ctx *c, span t, int line, kevo_launch *l);

/* ---- the blocks of a source (srcscan.c) ---------------------------------- */

/* Scans c->source for its comments and gathers those that start with a tag
 * into blocks[KIND_LAUNCH] and blocks[KIND_PARAM] (blocks[TAG_NONE] stays
 * unused): their stripped lines, which point into the source, without
 * blank lines and '#' comments, and where each is. A block that is absent
 * keeps line 0. Fails with KEVO_EINVALID for a second block of a kind,
 * KEVO_EPARSE for an unterminated one (neither when c->lenient), or
 * KEVO_ENOMEM. The caller frees the lines of each block, also on
 * failure. */
kevo_status kevo__srcscan_blocks(ctx *c, block blocks[3]);

/* ---- kevo:param (paramblock.c) ------------------------------------------- */

/* Parses the lines of the kevo:param block into c->b->params, noting the
 * line of each parameter in c->param_lines. Sets c->tag. */
kevo_status kevo__paramblock_parse(ctx *c, const block *bk);

#endif

/*
 * srcscan.c: the comments of a C/CUDA source, and the kevo:launch and
 * kevo:param blocks among them as stripped lines with their line numbers.
 *
 * A scanner walks the source once, skipping string, character and raw
 * string literals, and records every comment with its line. Comments whose
 * first word is a tag become blocks: lists of stripped lines with their
 * source line numbers, which blocks.c and paramblock.c then parse, and
 * where each block is with the names it holds, for tools that copy blocks
 * (kevo__blocks_locate). Nothing here recurses, and every scan is bounded
 * by the NUL at the end of the source.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "blocks_private.h"

/* ---- the scanner --------------------------------------------------------- */

typedef struct comment {
    size_t start, end; /* the text between the delimiters */
    int line;          /* where it starts */
    int end_line;      /* where it ends */
    bool is_block;     /* a slash-star comment */
    bool terminated;   /* its closing star-slash was found */
    bool own_line;     /* nothing but white space before it on its line */
} comment;

typedef struct comments {
    comment *items;
    size_t n, cap;
} comments;

static bool push_comment(comments *cs, const comment *cm)
{
    if (cs->n == cs->cap) {
        size_t cap = cs->cap ? cs->cap * 2 : 32;
        comment *grown = realloc(cs->items, cap * sizeof *grown);
        if (!grown)
            return false;
        cs->items = grown;
        cs->cap = cap;
    }
    cs->items[cs->n++] = *cm;
    return true;
}

/* Skips a string or character literal that opens at s[i]; a literal ends at
 * its quote or, unterminated, at the end of the line. Returns the index
 * just past it. */
static size_t skip_literal(const char *s, size_t i, int *line)
{
    char quote = s[i];
    size_t j = i + 1;
    while (s[j] && s[j] != quote && s[j] != '\n') {
        if (s[j] == '\\' && s[j + 1]) {
            if (s[j + 1] == '\n') {
                *line = next_line(*line);
            } else if (s[j + 1] == '\r' && s[j + 2] == '\n') {
                *line = next_line(*line);
                j++;
            }
            j += 2;
        } else {
            j++;
        }
    }
    return s[j] == quote ? j + 1 : j;
}

/* A C++ raw string R"delim(...)delim" whose quote is at s[i]. Returns the
 * index just past it, or 0 when s[i] does not open a raw string. */
static size_t skip_raw_string(const char *s, size_t i, int *line)
{
    size_t k = i + 1;
    while (s[k] && s[k] != '(' && k - (i + 1) < 16 &&
           !strchr(" \t\n\r\\)\"", s[k]))
        k++;
    if (s[k] != '(')
        return 0;
    const char *delim = s + i + 1;
    size_t dlen = k - (i + 1);
    size_t j = k + 1;
    for (; s[j]; j++) {
        if (s[j] == '\n')
            *line = next_line(*line);
        if (s[j] == ')' && strncmp(s + j + 1, delim, dlen) == 0 &&
            s[j + 1 + dlen] == '"')
            return j + dlen + 2;
    }
    return j;
}

/* Skips a preprocessing number (1.5e-3f, 0x1p+4, 1'000'000) at s[i]. */
static size_t skip_number(const char *s, size_t i)
{
    size_t j = i + 1;
    for (;;) {
        char d = s[j];
        if ((d == 'e' || d == 'E' || d == 'p' || d == 'P') &&
            (s[j + 1] == '+' || s[j + 1] == '-'))
            j += 2;
        else if (is_ident_char(d) || d == '.')
            j++;
        else if (d == '\'' && is_ident_char(s[j + 1]))
            j += 2;
        else
            return j;
    }
}

static bool is_raw_prefix(const char *s, size_t n)
{
    static const char *const prefixes[] = {"R", "u8R", "uR", "UR", "LR"};
    for (size_t k = 0; k < KEVO_ARRAY_SIZE(prefixes); k++) {
        if (strlen(prefixes[k]) == n && memcmp(prefixes[k], s, n) == 0)
            return true;
    }
    return false;
}

/* Records every comment of the source. */
static bool scan_comments(const char *s, comments *cs)
{
    size_t i = 0;
    int line = 1;
    bool code_on_line = false;
    while (s[i]) {
        char c = s[i];
        if (c == '\n') {
            line = next_line(line);
            code_on_line = false;
            i++;
        } else if (c == '/' && s[i + 1] == '/') {
            comment cm = {.start = i + 2,
                          .line = line,
                          .terminated = true,
                          .own_line = !code_on_line};
            size_t j = i + 2;
            /* A backslash at the end of the line continues the comment. */
            while (s[j] && s[j] != '\n') {
                if (s[j] == '\\' && s[j + 1] == '\n') {
                    line = next_line(line);
                    j += 2;
                } else if (s[j] == '\\' && s[j + 1] == '\r' &&
                           s[j + 2] == '\n') {
                    line = next_line(line);
                    j += 3;
                } else {
                    j++;
                }
            }
            cm.end = j;
            cm.end_line = line;
            if (!push_comment(cs, &cm))
                return false;
            i = j;
        } else if (c == '/' && s[i + 1] == '*') {
            comment cm = {.start = i + 2,
                          .line = line,
                          .is_block = true,
                          .own_line = !code_on_line};
            size_t j = i + 2;
            while (s[j] && !(s[j] == '*' && s[j + 1] == '/')) {
                if (s[j] == '\n')
                    line = next_line(line);
                j++;
            }
            cm.end = j;
            cm.end_line = line;
            cm.terminated = s[j] != '\0';
            if (!push_comment(cs, &cm))
                return false;
            i = cm.terminated ? j + 2 : j;
            code_on_line = true;
        } else if (c == '"' || c == '\'') {
            i = skip_literal(s, i, &line);
            code_on_line = true;
        } else if (is_ident_start(c)) {
            size_t j = i;
            while (is_ident_char(s[j]))
                j++;
            size_t end;
            if (s[j] == '"' && is_raw_prefix(s + i, j - i) &&
                (end = skip_raw_string(s, j, &line)) != 0)
                j = end;
            i = j;
            code_on_line = true;
        } else if (is_digit(c) || (c == '.' && is_digit(s[i + 1]))) {
            i = skip_number(s, i);
            code_on_line = true;
        } else {
            if (!is_space(c))
                code_on_line = true;
            i++;
        }
    }
    return true;
}

/* ---- blocks: stripped lines with their line numbers ---------------------- */

/* Adds a line to a block, unless it is blank or a '#' comment. */
static bool block_add(block *bk, span text, int line)
{
    text = trim(text);
    if (text.n == 0 || text.s[0] == '#')
        return true;
    if (bk->n == bk->cap) {
        size_t cap = bk->cap ? bk->cap * 2 : 16;
        bline *grown = realloc(bk->lines, cap * sizeof *grown);
        if (!grown)
            return false;
        bk->lines = grown;
        bk->cap = cap;
    }
    bk->lines[bk->n++] = (bline){text, line};
    return true;
}

/* The line of s that starts at *pos, up to end; *pos moves past its
 * newline. Returns false when no line starts at *pos. */
static bool take_line(const char *s, size_t *pos, size_t end, span *out,
                      bool *more)
{
    if (*pos > end)
        return false;
    size_t j = *pos;
    while (j < end && s[j] != '\n')
        j++;
    *out = (span){s + *pos, j - *pos};
    *more = j < end;
    *pos = j + 1;
    return true;
}

/* A slash-star line loses its leading white space and one '*'. */
static span strip_star(span t)
{
    t = trim(t);
    if (t.n > 0 && t.s[0] == '*') {
        t.s++;
        t.n--;
    }
    return trim(t);
}

/* Which tag starts t (stripped), and the text after it in *rest. */
static int tag_of(span t, span *rest)
{
    static const struct {
        const char *tag;
        int kind;
    } tags[] = {{TAG_LAUNCH, KIND_LAUNCH}, {TAG_PARAM, KIND_PARAM}};
    for (size_t k = 0; k < KEVO_ARRAY_SIZE(tags); k++) {
        size_t n = strlen(tags[k].tag);
        if (t.n >= n && memcmp(t.s, tags[k].tag, n) == 0 &&
            (t.n == n || is_space(t.s[n]))) {
            *rest = trim((span){t.s + n, t.n - n});
            return tags[k].kind;
        }
    }
    return TAG_NONE;
}

/* The first line of a line comment (stripped): the tag line of a block
 * when it starts with a tag. */
static span first_piece(const char *s, const comment *cm)
{
    size_t pos = cm->start;
    span t = {s + pos, 0};
    bool more;
    take_line(s, &pos, cm->end, &t, &more);
    return trim(t);
}

/* Starts the block of a comment at offset start; KEVO_DONE for a second
 * one when locating (it is passed over). */
static kevo_status start_block(ctx *c, block *blocks, int kind, int line,
                               const comment *cm)
{
    block *bk = &blocks[kind];
    const char *tag = kind == KIND_LAUNCH ? TAG_LAUNCH : TAG_PARAM;
    if (bk->line && c->lenient)
        return KEVO_DONE;
    if (bk->line)
        return kevo__blocks_fail_block(
            c, KEVO_EINVALID, line,
            "a second %s block (the first starts at line %d)", tag, bk->line);
    bk->line = line;
    bk->start = cm->start - 2;
    bk->end = cm->is_block && cm->terminated ? cm->end + 2 : cm->end;
    bk->closed = cm->terminated;
    return KEVO_OK;
}

/* Turns the comments that start with a tag into blocks. */
static kevo_status collect_blocks(ctx *c, const comments *cs, block *blocks)
{
    const char *s = c->source;
    for (size_t k = 0; k < cs->n; k++) {
        const comment *cm = &cs->items[k];
        size_t pos = cm->start;
        int line = cm->line;
        span t, rest = {NULL, 0};
        bool more = false;
        int kind = TAG_NONE;
        if (cm->is_block) {
            /* The first word of the comment, past any blank lines. */
            while (take_line(s, &pos, cm->end, &t, &more)) {
                t = strip_star(t);
                if (t.n > 0) {
                    kind = tag_of(t, &rest);
                    break;
                }
                if (!more)
                    break;
                line = next_line(line);
            }
            if (kind == TAG_NONE)
                continue;
            kevo_status rc = start_block(c, blocks, kind, line, cm);
            if (rc == KEVO_DONE)
                continue;
            if (rc != KEVO_OK)
                return rc;
            if (!cm->terminated && !c->lenient)
                return kevo__blocks_fail_block(
                    c, KEVO_EPARSE, line,
                    "unterminated %s block (no '*/' closes "
                    "the comment)",
                    kind == KIND_LAUNCH ? TAG_LAUNCH : TAG_PARAM);
            block *bk = &blocks[kind];
            if (!block_add(bk, rest, line))
                goto nomem;
            while (more && take_line(s, &pos, cm->end, &t, &more)) {
                line = next_line(line);
                if (!block_add(bk, strip_star(t), line))
                    goto nomem;
            }
            continue;
        }
        kind = tag_of(first_piece(s, cm), &rest);
        if (kind == TAG_NONE)
            continue;
        kevo_status rc = start_block(c, blocks, kind, line, cm);
        if (rc == KEVO_DONE)
            continue;
        if (rc != KEVO_OK)
            return rc;
        block *bk = &blocks[kind];
        /* The tag line (and any lines a backslash joined to it), then the
         * line comments on the lines that follow. */
        take_line(s, &pos, cm->end, &t, &more);
        if (!block_add(bk, rest, line))
            goto nomem;
        for (;;) {
            while (more && take_line(s, &pos, cm->end, &t, &more)) {
                line = next_line(line);
                if (!block_add(bk, t, line))
                    goto nomem;
            }
            if (k + 1 >= cs->n)
                break;
            const comment *nx = &cs->items[k + 1];
            if (nx->is_block || !nx->own_line ||
                nx->line != next_line(cm->end_line) ||
                tag_of(first_piece(s, nx), &rest) != TAG_NONE)
                break;
            cm = nx;
            k++;
            bk->end = cm->end;
            pos = cm->start;
            line = cm->line;
            take_line(s, &pos, cm->end, &t, &more);
            if (!block_add(bk, t, line))
                goto nomem;
        }
    }
    return KEVO_OK;
nomem:
    return kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
}

kevo_status kevo__srcscan_blocks(ctx *c, block blocks[3])
{
    comments cs = {0};
    kevo_status rc;
    if (scan_comments(c->source, &cs))
        rc = collect_blocks(c, &cs, blocks);
    else
        rc = kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
    free(cs.items);
    return rc;
}

/* ---- locating blocks ----------------------------------------------------- */

void kevo__block_places_free(kevo_block_place places[2])
{
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < places[k].nnames; i++)
            free(places[k].names[i]);
        free(places[k].names);
        places[k] = (kevo_block_place){0};
    }
}

/* Adds name w to pl unless it is there; false when out of memory. */
static bool place_add_name(kevo_block_place *pl, span w)
{
    for (size_t i = 0; i < pl->nnames; i++) {
        if (span_is(w, pl->names[i]))
            return true;
    }
    char **grown = realloc(pl->names, (pl->nnames + 1) * sizeof *grown);
    if (!grown)
        return false;
    pl->names = grown;
    if (!(pl->names[pl->nnames] = kevo__strndup(w.s, w.n)))
        return false;
    pl->nnames++;
    return true;
}

/* The names a block's line holds: for a launch block each identifier
 * before a '<<<', for a param block the NAME of 'NAME in ...'. */
static bool line_names(kevo_block_place *pl, int kind, span t)
{
    if (kind == KIND_PARAM) {
        span w = leading_ident(t);
        span rest = trim((span){t.s + w.n, t.n - w.n});
        bool in = rest.n >= 2 && memcmp(rest.s, "in", 2) == 0 &&
                  (rest.n == 2 || is_space(rest.s[2]) || rest.s[2] == '{');
        return w.n == 0 || !in || place_add_name(pl, w);
    }
    for (size_t i = 0; i + 3 <= t.n; i++) {
        if (memcmp(t.s + i, "<<<", 3) != 0)
            continue;
        size_t e = i;
        while (e > 0 && is_space(t.s[e - 1]))
            e--;
        size_t b = e;
        while (b > 0 && is_ident_char(t.s[b - 1]))
            b--;
        if (b < e && is_ident_start(t.s[b]) &&
            !place_add_name(pl, (span){t.s + b, e - b}))
            return false;
        while (i + 1 < t.n && t.s[i + 1] == '<')
            i++;
    }
    return true;
}

kevo_status kevo__blocks_locate(const char *source, kevo_block_place out[2])
{
    ctx c = {.source = source, .lenient = true};
    block blocks[3] = {{0}};
    out[0] = out[1] = (kevo_block_place){0};
    kevo_status rc = kevo__srcscan_blocks(&c, blocks);
    for (int kind = KIND_LAUNCH; rc == KEVO_OK && kind <= KIND_PARAM; kind++) {
        const block *bk = &blocks[kind];
        kevo_block_place *pl = &out[kind - KIND_LAUNCH];
        if (!bk->line)
            continue;
        pl->found = true;
        pl->closed = bk->closed;
        pl->start = bk->start;
        pl->end = bk->end;
        for (size_t i = 0; rc == KEVO_OK && i < bk->n; i++) {
            if (!line_names(pl, kind, bk->lines[i].text))
                rc = KEVO_ENOMEM;
        }
    }
    for (int kind = KIND_LAUNCH; kind <= KIND_PARAM; kind++)
        free(blocks[kind].lines);
    if (rc != KEVO_OK)
        kevo__block_places_free(out);
    return rc;
}

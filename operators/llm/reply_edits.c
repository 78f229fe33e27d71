/*
 * reply_edits.c: SEARCH/REPLACE edits, read from the reply and applied to
 * the parent (see reply_edits.h).
 */
#include "reply_edits.h"

#include <stdint.h>
#include <stdlib.h>

enum { MARK_NONE, MARK_SEARCH, MARK_DIVIDER, MARK_REPLACE };

static int marker_of(span t)
{
    t = trim(t);
    if (t.n < 5)
        return MARK_NONE;
    char ch = t.s[0];
    if (ch != '<' && ch != '=' && ch != '>')
        return MARK_NONE;
    size_t k = 0;
    while (k < t.n && t.s[k] == ch)
        k++;
    if (k < 5 || k > 9)
        return MARK_NONE;
    span rest = trim((span){t.s + k, t.n - k});
    if (ch == '=')
        return rest.n == 0 ? MARK_DIVIDER : MARK_NONE;
    if (ch == '<')
        return starts_with_word(rest, "SEARCH") ? MARK_SEARCH : MARK_NONE;
    return starts_with_word(rest, "REPLACE") ? MARK_REPLACE : MARK_NONE;
}

/* An edit: the reply lines [s0, s1) of its SEARCH part and [r0, r1) of its
 * REPLACE part; at is the line of its SEARCH marker. */
typedef struct edit {
    size_t at, s0, s1, r0, r1;
} edit;

bool kevo__reply_has_edits(const ctx *c)
{
    for (size_t i = 0; i < c->rl.n; i++) {
        if (marker_of(line_span(c->text, &c->rl.v[i])) == MARK_SEARCH)
            return true;
    }
    return false;
}

static kevo_reply_kind read_edits(ctx *c, edit **out, size_t *nout)
{
    size_t cap = 0, n = 0;
    for (size_t i = 0; i < c->rl.n; i++)
        cap += marker_of(line_span(c->text, &c->rl.v[i])) == MARK_SEARCH;
    edit *ed = calloc(cap ? cap : 1, sizeof *ed);
    if (!ed)
        return kevo__reply_nomem(c);
    *out = ed;
    /* A divider outside a block is prose (a heading's underline, say); a
     * stray REPLACE marker means a SEARCH marker was lost. */
    enum { OUT, IN_SEARCH, IN_REPLACE } state = OUT;
    for (size_t i = 0; i < c->rl.n; i++) {
        int m = marker_of(line_span(c->text, &c->rl.v[i]));
        size_t at = i + 1;
        if (state == OUT) {
            if (m == MARK_SEARCH) {
                ed[n] = (edit){.at = i, .s0 = i + 1};
                state = IN_SEARCH;
            } else if (m == MARK_REPLACE) {
                return kevo__reply_fail(
                    c, KEVO_REPLY_MALFORMED_EDIT,
                    "a '>>>>>>> REPLACE' marker at line %zu of the "
                    "reply has no SEARCH block before it",
                    at);
            }
        } else if (state == IN_SEARCH) {
            if (m == MARK_DIVIDER) {
                ed[n].s1 = i;
                ed[n].r0 = i + 1;
                state = IN_REPLACE;
            } else if (m != MARK_NONE) {
                return kevo__reply_fail(
                    c, KEVO_REPLY_MALFORMED_EDIT,
                    "SEARCH block %zu of %zu (line %zu of the reply) "
                    "has no '=======' divider before the %s at line "
                    "%zu",
                    n + 1, cap, ed[n].at + 1,
                    m == MARK_SEARCH ? "next SEARCH marker"
                                     : "'>>>>>>> REPLACE' marker",
                    at);
            }
        } else {
            if (m == MARK_REPLACE) {
                ed[n].r1 = i;
                n++;
                state = OUT;
            } else if (m != MARK_NONE) {
                return kevo__reply_fail(
                    c, KEVO_REPLY_MALFORMED_EDIT,
                    "SEARCH block %zu of %zu (line %zu of the reply) "
                    "is not closed by '>>>>>>> REPLACE' before the %s "
                    "at line %zu",
                    n + 1, cap, ed[n].at + 1,
                    m == MARK_SEARCH ? "next SEARCH marker"
                                     : "second '=======' divider",
                    at);
            }
        }
    }
    if (state != OUT)
        return kevo__reply_fail(
            c, KEVO_REPLY_TRUNCATED,
            "the reply ends inside SEARCH block %zu of %zu (line %zu "
            "of the reply), before its %s",
            n + 1, cap, ed[n].at + 1,
            state == IN_SEARCH ? "'=======' divider"
                               : "'>>>>>>> REPLACE' marker");
    for (size_t k = 0; k < n; k++) {
        bool empty = true;
        for (size_t i = ed[k].s0; i < ed[k].s1 && empty; i++)
            empty = is_blank(line_span(c->text, &c->rl.v[i]));
        if (empty)
            return kevo__reply_fail(
                c, KEVO_REPLY_MALFORMED_EDIT,
                "SEARCH block %zu of %zu (line %zu of the reply) has "
                "an empty SEARCH part: say which lines of the parent "
                "to replace",
                k + 1, n, ed[k].at + 1);
    }
    *nout = n;
    return KEVO_REPLY_OK;
}

enum { HOW_EXACT, HOW_TOLERANT, HOW_TRIMMED, HOW_SUBSTRING, HOW_COUNT };
static const char *const how_names[] = {
    "exactly", "ignoring indentation and trailing white space",
    "ignoring indentation, trailing white space and blank lines around it",
    "as a substring of the parent"};

#define MATCH_CAP 10

/* Where an edit matched: the first matched line (or byte offset for a
 * substring), how many places matched (up to MATCH_CAP), and the first few
 * places as line numbers. */
typedef struct match {
    int how;
    size_t count;
    size_t first;      /* line index, or byte offset for HOW_SUBSTRING */
    size_t sfirst, sn; /* the SEARCH lines matched (for HOW_TRIMMED) */
    size_t at[3];      /* 1-based line numbers */
} match;

/* Finds the SEARCH lines [s0, s0 + sn) of the reply among the lines of
 * cur. */
static size_t match_lines(ctx *c, const char *cur, const lines *cl, size_t s0,
                          size_t sn, bool tolerant, match *m)
{
    place p;
    kevo__reply_place(cur, cl, c->text, c->rl.v + s0, sn, tolerant, SIZE_MAX,
                      MATCH_CAP, &c->work, c->work_max, &p, NULL);
    m->first = p.first;
    for (size_t k = 0; k < 3; k++)
        m->at[k] = p.at[k] + 1;
    return p.count;
}

/* Finds the SEARCH text of edit e in cur, trying each kind of match in
 * turn. Returns the number of places the first successful kind found. */
static size_t find_edit(ctx *c, const char *cur, size_t cur_len,
                        const lines *cl, const edit *e, match *m)
{
    *m = (match){0};
    size_t s0 = e->s0, sn = e->s1 - e->s0;
    for (int how = HOW_EXACT; how < HOW_COUNT; how++) {
        m->how = how;
        m->sfirst = s0;
        m->sn = sn;
        if (how == HOW_EXACT || how == HOW_TOLERANT) {
            m->count = match_lines(c, cur, cl, s0, sn, how == HOW_TOLERANT, m);
        } else if (how == HOW_TRIMMED) {
            size_t a = s0, b = s0 + sn;
            while (a < b && is_blank(line_span(c->text, &c->rl.v[a])))
                a++;
            while (b > a && is_blank(line_span(c->text, &c->rl.v[b - 1])))
                b--;
            if (a == s0 && b == s0 + sn)
                continue;
            m->sfirst = a;
            m->sn = b - a;
            m->count = match_lines(c, cur, cl, a, b - a, true, m);
        } else {
            /* The SEARCH lines as one string, without the last newline. */
            const char *needle = c->text + c->rl.v[s0].off;
            const rline *last = &c->rl.v[s0 + sn - 1];
            size_t nlen = last->off + last->len - c->rl.v[s0].off;
            m->count = 0;
            if (nlen == 0 || nlen > cur_len)
                continue;
            for (size_t i = 0; i + nlen <= cur_len && m->count < MATCH_CAP;
                 i++) {
                if (cur[i] != needle[0])
                    continue;
                c->work += 1 + nlen / 64;
                if (c->work > c->work_max)
                    return 0;
                if (memcmp(cur + i, needle, nlen) != 0)
                    continue;
                if (m->count == 0)
                    m->first = i;
                if (m->count < 3)
                    m->at[m->count] = kevo__reply_line_of(cur, i);
                m->count++;
            }
        }
        if (m->count > 0 || c->work > c->work_max)
            return c->work > c->work_max ? 0 : m->count;
    }
    return 0;
}

/* Writes cur with the matched lines replaced by the REPLACE lines of e,
 * re-indented by the difference between the parent's and the SEARCH part's
 * indentation, with the parent's line ending. */
static void replace_lines(const ctx *c, const char *cur, size_t cur_len,
                          const lines *cl, const edit *e, const match *m,
                          llm_buf *b)
{
    const rline *first = &cl->v[m->first];
    const rline *lastm = &cl->v[m->first + m->sn - 1];
    const char *eol = first->eol == 2 ? "\r\n" : "\n";
    reindent r = {{NULL, 0}, 0};
    for (size_t j = 0; j < m->sn; j++) {
        span sl = line_span(c->text, &c->rl.v[m->sfirst + j]);
        if (!is_blank(sl)) {
            r = kevo__reply_reindent(sl, line_span(cur, &cl->v[m->first + j]));
            break;
        }
    }
    kevo__llm_buf_append(b, cur, first->off);
    for (size_t i = e->r0; i < e->r1; i++) {
        kevo__reply_put_reindented(b, line_span(c->text, &c->rl.v[i]), r);
        kevo__llm_buf_puts(b, eol);
    }
    size_t rest = lastm->off + lastm->len + lastm->eol;
    kevo__llm_buf_append(b, cur + rest, cur_len - rest);
}

static void replace_substring(const ctx *c, const char *cur, size_t cur_len,
                              const edit *e, const match *m, llm_buf *b)
{
    const rline *last = &c->rl.v[e->s1 - 1];
    size_t nlen = last->off + last->len - c->rl.v[e->s0].off;
    kevo__llm_buf_append(b, cur, m->first);
    if (e->r1 > e->r0) {
        size_t r0 = c->rl.v[e->r0].off;
        const rline *rl = &c->rl.v[e->r1 - 1];
        kevo__llm_buf_append(b, c->text + r0, rl->off + rl->len - r0);
    }
    kevo__llm_buf_append(b, cur + m->first + nlen, cur_len - m->first - nlen);
}

/* "first line: '...'" of an edit's SEARCH part. */
static void first_search_line(llm_buf *b, const ctx *c, const edit *e)
{
    for (size_t i = e->s0; i < e->s1; i++) {
        span t = line_span(c->text, &c->rl.v[i]);
        if (!is_blank(t)) {
            kevo__llm_buf_puts(b, "first line: ");
            kevo__reply_quote(b, t);
            return;
        }
    }
}

kevo_reply_kind kevo__reply_apply_edits(ctx *c, char **child, size_t *child_len)
{
    edit *ed = NULL;
    size_t n = 0;
    lines cl = {0};
    llm_buf cur = {0}, next = {0}, msg = {0};
    size_t loose = 0; /* edits not matched exactly */
    size_t loose_at[4];
    int loose_how[4];
    kevo_reply_kind kind = read_edits(c, &ed, &n);
    if (kind != KEVO_REPLY_OK)
        goto done;
    if (c->flags & KEVO_REPLY_CUT_OFF) {
        kind = kevo__reply_fail(
            c, KEVO_REPLY_TRUNCATED,
            "the reply was cut off at its token limit after %zu "
            "SEARCH/REPLACE edit%s, so an edit it meant to give may be "
            "missing",
            n, n == 1 ? "" : "s");
        goto done;
    }
    if (!c->parent) {
        kind = kevo__reply_fail(
            c, KEVO_REPLY_NO_PARENT,
            "the reply holds %zu SEARCH/REPLACE edit%s, but there is "
            "no parent source to apply %s to",
            n, n == 1 ? "" : "s", n == 1 ? "it" : "them");
        goto done;
    }
    kevo__llm_buf_append(&cur, c->parent, c->parent_len);
    for (size_t k = 0; k < n; k++) {
        if (cur.failed) {
            kind = kevo__reply_nomem(c);
            goto done;
        }
        free(cl.v);
        if (!kevo__reply_split_lines(cur.data, cur.len, &cl)) {
            cl.v = NULL;
            kind = kevo__reply_nomem(c);
            goto done;
        }
        c->work += cl.n;
        match m;
        size_t count = find_edit(c, cur.data, cur.len, &cl, &ed[k], &m);
        if (c->work > c->work_max) {
            kind = kevo__reply_fail(
                c, KEVO_REPLY_TOO_LARGE,
                "placing SEARCH block %zu of %zu takes more than %zu "
                "line comparisons (the reply or the parent is too "
                "repetitive)",
                k + 1, n, c->work_max);
            goto done;
        }
        if (count == 0) {
            kevo__llm_buf_printf(
                &msg, "SEARCH block %zu of %zu not found in the parent", k + 1,
                n);
            if (k == 1)
                kevo__llm_buf_puts(&msg, " as edited by block 1");
            else if (k > 1)
                kevo__llm_buf_printf(&msg, " as edited by blocks 1-%zu", k);
            kevo__llm_buf_puts(&msg, " (");
            first_search_line(&msg, c, &ed[k]);
            if (k > 0) {
                lines pl = {0};
                match pm;
                if (!kevo__reply_split_lines(c->parent, c->parent_len, &pl)) {
                    kind = kevo__reply_nomem(c);
                    goto done;
                }
                if (find_edit(c, c->parent, c->parent_len, &pl, &ed[k], &pm))
                    kevo__llm_buf_puts(&msg,
                                       "; it matches the parent before the "
                                       "earlier edits changed it");
                free(pl.v);
            }
            kevo__llm_buf_puts(&msg, ")");
            kind = kevo__reply_fail_with(c, KEVO_REPLY_EDIT_NOT_FOUND, &msg);
            goto done;
        }
        if (count > 1) {
            kevo__llm_buf_printf(
                &msg,
                "SEARCH block %zu of %zu matches %s%zu places in the "
                "parent (lines",
                k + 1, n, count >= MATCH_CAP ? "at least " : "", count);
            for (size_t i = 0; i < count && i < 3; i++) {
                const char *sep = i == 0                         ? " "
                                  : i + 1 == count && count <= 3 ? " and "
                                                                 : ", ";
                kevo__llm_buf_printf(&msg, "%s%zu", sep, m.at[i]);
            }
            kevo__llm_buf_puts(&msg, count > 3 ? ", ...; " : "; ");
            first_search_line(&msg, c, &ed[k]);
            kevo__llm_buf_puts(&msg,
                               "): add lines around it to make it unique");
            kind = kevo__reply_fail_with(c, KEVO_REPLY_EDIT_AMBIGUOUS, &msg);
            goto done;
        }
        if (m.how == HOW_SUBSTRING)
            replace_substring(c, cur.data, cur.len, &ed[k], &m, &next);
        else
            replace_lines(c, cur.data, cur.len, &cl, &ed[k], &m, &next);
        if (next.failed) {
            kind = kevo__reply_nomem(c);
            goto done;
        }
        if (next.len > c->max_child) {
            kind = kevo__reply_fail(
                c, KEVO_REPLY_TOO_LARGE,
                "applying SEARCH block %zu of %zu makes the child "
                "%zu bytes, over the limit of %zu",
                k + 1, n, next.len, c->max_child);
            goto done;
        }
        kevo__llm_buf_free(&cur);
        cur = next;
        next = (llm_buf){0};
        if (m.how != HOW_EXACT) {
            if (loose < 4) {
                loose_at[loose] = k;
                loose_how[loose] = m.how;
            }
            loose++;
        }
    }
    kevo__llm_buf_printf(&c->note, "%zu edit%s applied", n, n == 1 ? "" : "s");
    for (size_t i = 0; i < loose && i < 4; i++)
        kevo__llm_buf_printf(&c->note, "%sedit %zu %s", i ? ", " : " (",
                             loose_at[i] + 1, how_names[loose_how[i]]);
    if (loose > 4)
        kevo__llm_buf_printf(&c->note, " and %zu more not exactly", loose - 4);
    if (loose)
        kevo__llm_buf_puts(&c->note, ")");
    c->out->nedits = n;
    c->out->form = KEVO_REPLY_FORM_EDITS;
    if (cur.failed) {
        kind = kevo__reply_nomem(c);
        goto done;
    }
    *child_len = cur.len;
    *child = kevo__llm_buf_take(&cur);
    if (!*child)
        kind = kevo__reply_nomem(c);
done:
    free(ed);
    free(cl.v);
    kevo__llm_buf_free(&cur);
    kevo__llm_buf_free(&next);
    kevo__llm_buf_free(&msg);
    return kind;
}

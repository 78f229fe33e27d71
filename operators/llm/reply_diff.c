/*
 * reply_diff.c: unified diffs read from the reply and applied to the
 * parent (see reply_diff.h).
 */
#include "reply_diff.h"

#include <stdint.h>
#include <stdlib.h>

/* A hunk: its header's reply line, its body lines [l0, l1) of the reply,
 * each with up to cut blanks of indentation dropped (a fence's), and the
 * header's line numbers when it has them. */
typedef struct hunk {
    size_t at, l0, l1, cut;
    bool nums;
    size_t old_start, old_count, new_start, new_count;
} hunk;

/* The hunks of a reply, and what the file headers named. */
typedef struct diff {
    hunk *h;
    size_t n, cap;
    span file, other; /* the first file named, a different second one */
    bool new_file;    /* a header's old file is /dev/null */
} diff;

enum { BODY_NONE, BODY_CONTEXT, BODY_DEL, BODY_ADD, BODY_NOTE };

bool kevo__reply_is_diff_label(const char *label)
{
    return strcmp(label, "diff") == 0 || strcmp(label, "patch") == 0 ||
           strcmp(label, "udiff") == 0;
}

/* Line i of the reply without up to cut blanks of indentation. */
static span dline(const ctx *c, size_t i, size_t cut)
{
    span t = line_span(c->text, &c->rl.v[i]);
    for (size_t k = 0; k < cut && t.n > 0 && (t.s[0] == ' ' || t.s[0] == '\t');
         k++) {
        t.s++;
        t.n--;
    }
    return t;
}

static int body_kind(span t)
{
    if (t.n == 0)
        return BODY_CONTEXT;
    switch (t.s[0]) {
    case ' ': return BODY_CONTEXT;
    case '-': return BODY_DEL;
    case '+': return BODY_ADD;
    case '\\': return BODY_NOTE;
    default: return BODY_NONE;
    }
}

/* A number of at most 9 digits at *t, which moves past it. */
static bool number(span *t, size_t *v)
{
    size_t k = 0;
    *v = 0;
    while (k < t->n && k < 9 && is_digit(t->s[k]))
        *v = *v * 10 + (size_t)(t->s[k++] - '0');
    if (k == 0 || (k < t->n && is_digit(t->s[k])))
        return false;
    t->s += k;
    t->n -= k;
    return true;
}

/* "-a[,b]" or "+c[,d]" at *t. */
static bool range(span *t, char sign, size_t *start, size_t *count)
{
    *t = trim(*t);
    if (t->n == 0 || t->s[0] != sign)
        return false;
    t->s++;
    t->n--;
    *count = 1;
    if (!number(t, start))
        return false;
    if (t->n > 0 && t->s[0] == ',') {
        t->s++;
        t->n--;
        return number(t, count);
    }
    return true;
}

/* An "@@" line: "@@" alone or before a blank, with "-a,b +c,d @@" line
 * numbers or without. */
static bool hunk_header(span t, hunk *h)
{
    if (!starts_with(t, "@@") || (t.n > 2 && t.s[2] != ' ' && t.s[2] != '\t'))
        return false;
    span r = {t.s + 2, t.n - 2};
    hunk got = {0};
    got.nums = range(&r, '-', &got.old_start, &got.old_count) &&
               range(&r, '+', &got.new_start, &got.new_count) &&
               starts_with(trim(r), "@@");
    if (h) {
        h->nums = got.nums;
        h->old_start = got.nums ? got.old_start : 0;
        h->old_count = got.nums ? got.old_count : 0;
        h->new_start = got.nums ? got.new_start : 0;
        h->new_count = got.nums ? got.new_count : 0;
    }
    return true;
}

static bool file_header(const ctx *c, size_t i, size_t end, size_t cut)
{
    return i + 1 < end && starts_with(dline(c, i, cut), "--- ") &&
           starts_with(dline(c, i + 1, cut), "+++ ");
}

/* The lines of git's own that may stand between a diff's parts. */
static bool git_line(span t)
{
    static const char *const words[] = {
        "diff ",    "index ",   "new file mode", "deleted file mode",
        "old mode", "new mode", "similarity",    "dissimilarity",
        "rename ",  "copy ",    "Binary files"};
    for (size_t k = 0; k < LLM_ARRAY_SIZE(words); k++) {
        if (starts_with(t, words[k]))
            return true;
    }
    return false;
}

bool kevo__reply_holds_diff(const ctx *c, size_t first, size_t end)
{
    for (size_t i = first; i + 2 < end; i++) {
        if (file_header(c, i, end, 0) &&
            hunk_header(line_span(c->text, &c->rl.v[i + 2]), NULL))
            return true;
    }
    return false;
}

/* The file a "--- " or "+++ " header names: up to a tab, without an a/ or
 * b/ prefix. */
static span header_file(span t)
{
    t = (span){t.s + 4, t.n - 4};
    const char *tab = memchr(t.s, '\t', t.n);
    if (tab)
        t.n = (size_t)(tab - t.s);
    t = trim(t);
    if (t.n > 2 && (t.s[0] == 'a' || t.s[0] == 'b') && t.s[1] == '/') {
        t.s += 2;
        t.n -= 2;
    }
    return t;
}

static void take_files(const ctx *c, diff *d, size_t i, size_t cut)
{
    span old = header_file(dline(c, i, cut));
    span new = header_file(dline(c, i + 1, cut));
    if (span_is(old, "/dev/null"))
        d->new_file = true;
    span f = span_is(new, "/dev/null") ? old : new;
    if (!d->file.s)
        d->file = f;
    else if (!span_eq(d->file, f) && !d->other.s)
        d->other = f;
}

static bool push_hunk(diff *d, const hunk *h)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        hunk *grown = realloc(d->h, cap * sizeof *grown);
        if (!grown)
            return false;
        d->h = grown;
        d->cap = cap;
    }
    d->h[d->n++] = *h;
    return true;
}

/* Reads the hunks of lines [a, b): a diff fence's content (fenced: lines
 * before the first hunk are ignored, and a line after it that is no part
 * of a diff is an error) or a diff in the reply's text, which ends at the
 * first line that is no part of it (*stop). */
static kevo_reply_kind read_region(ctx *c, diff *d, size_t a, size_t b,
                                   size_t cut, bool fenced, size_t *stop)
{
    size_t i = a;
    size_t first_hunk = d->n;
    while (i < b) {
        span t = dline(c, i, cut);
        hunk h = {.at = i, .cut = cut};
        if (file_header(c, i, b, cut)) {
            take_files(c, d, i, cut);
            i += 2;
            continue;
        }
        if (hunk_header(t, &h)) {
            size_t j = i + 1, old_seen = 0, new_seen = 0;
            for (; j < b; j++) {
                span u = dline(c, j, cut);
                int k = body_kind(u);
                if (k == BODY_NONE || hunk_header(u, NULL) ||
                    file_header(c, j, b, cut))
                    break;
                if (u.n == 0 && !fenced) {
                    /* A blank line in the text: the end of the diff when
                     * the counts are met, or (without counts) when no
                     * body line follows. */
                    bool more = j + 1 < b && dline(c, j + 1, cut).n > 0 &&
                                body_kind(dline(c, j + 1, cut)) != BODY_NONE;
                    if (h.nums
                            ? old_seen >= h.old_count && new_seen >= h.new_count
                            : !more)
                        break;
                }
                old_seen += k == BODY_CONTEXT || k == BODY_DEL;
                new_seen += k == BODY_CONTEXT || k == BODY_ADD;
            }
            size_t end = j;
            while (end > i + 1 && dline(c, end - 1, cut).n == 0)
                end--;
            h.l0 = i + 1;
            h.l1 = end;
            if (!push_hunk(d, &h))
                return kevo__reply_nomem(c);
            i = j;
            continue;
        }
        if (!fenced)
            break;
        if (d->n > first_hunk && !is_blank(t) && !git_line(t)) {
            llm_buf msg = {0};
            kevo__llm_buf_printf(&msg,
                                 "line %zu of the reply, after hunk %zu of the "
                                 "diff, is no part of a diff: ",
                                 i + 1, d->n);
            kevo__reply_quote(&msg, t);
            kevo__llm_buf_puts(&msg, " (each line of a hunk starts with ' ', "
                                     "'-' or '+')");
            return kevo__reply_fail_with(c, KEVO_REPLY_MALFORMED_EDIT, &msg);
        }
        i++;
    }
    *stop = i;
    return KEVO_REPLY_OK;
}

/* The fence that line i of the reply is part of (its fence lines too), or
 * NULL. */
static const fence *fence_at(const ctx *c, size_t i)
{
    return i < c->rl.n && c->fence_of[i] ? &c->fences[c->fence_of[i] - 1]
                                         : NULL;
}

/* Reads every hunk of the reply, in reply order. */
static kevo_reply_kind read_diff(ctx *c, diff *d)
{
    size_t i = 0;
    while (i < c->rl.n) {
        const fence *f = fence_at(c, i);
        size_t stop = i + 1;
        kevo_reply_kind kind = KEVO_REPLY_OK;
        if (f && f->is_diff && i == f->open) {
            kind = read_region(c, d, f->first, f->first + f->nlines, f->indent,
                               true, &stop);
            stop = f->first + f->nlines + f->closed;
        } else if (f) {
            stop = f->first + f->nlines + f->closed;
        } else if (i + 2 < c->rl.n && kevo__reply_holds_diff(c, i, i + 3) &&
                   !fence_at(c, i + 2)) {
            size_t end = i;
            while (end < c->rl.n && !fence_at(c, end))
                end++;
            kind = read_region(c, d, i, end, 0, false, &stop);
        }
        if (kind != KEVO_REPLY_OK)
            return kind;
        i = stop > i ? stop : i + 1;
    }
    return KEVO_REPLY_OK;
}

bool kevo__reply_has_diff(const ctx *c)
{
    /* A diff fence with a hunk header; or one with changed lines but no
     * hunk header (an error that read_diff reports), when no fence holds a
     * kernel to take instead. */
    bool changed = false, kernel = false;
    for (size_t k = 0; k < c->nfences; k++) {
        const fence *f = &c->fences[k];
        kernel = kernel || (f->c_family && f->has_global);
        for (size_t i = f->first; f->is_diff && i < f->first + f->nlines; i++) {
            span t = dline(c, i, f->indent);
            if (hunk_header(t, NULL))
                return true;
            changed =
                changed || (t.n > 1 && (t.s[0] == '+' || t.s[0] == '-') &&
                            !starts_with(t, "--- ") && !starts_with(t, "+++ "));
        }
    }
    if (changed && !kernel)
        return true;
    for (size_t i = 0; i + 2 < c->rl.n; i++) {
        if (!fence_at(c, i) && !fence_at(c, i + 2) &&
            kevo__reply_holds_diff(c, i, i + 3))
            return true;
    }
    return false;
}

/* ---- applying ------------------------------------------------------------ */

/* "hunk 2 of 3 ('@@ -10,7 +10,8 @@')" */
static void name_hunk(llm_buf *b, const ctx *c, const diff *d, size_t k)
{
    kevo__llm_buf_printf(b, "hunk %zu of %zu (", k + 1, d->n);
    kevo__reply_quote(b, dline(c, d->h[k].at, d->h[k].cut));
    kevo__llm_buf_puts(b, ")");
}

/* The old lines of a hunk (context and removed) as a text of their own. */
static bool old_lines(const ctx *c, const hunk *h, llm_buf *text, lines *ol,
                      span *first)
{
    *first = (span){NULL, 0};
    for (size_t i = h->l0; i < h->l1; i++) {
        span t = dline(c, i, h->cut);
        int k = body_kind(t);
        if (k != BODY_CONTEXT && k != BODY_DEL)
            continue;
        span body = t.n ? (span){t.s + 1, t.n - 1} : t;
        if (!first->s && !is_blank(body))
            *first = body;
        kevo__llm_buf_append(text, body.s, body.n);
        kevo__llm_buf_puts(text, "\n");
    }
    if (text->failed)
        return false;
    return kevo__reply_split_lines(text->data ? text->data : "", text->len, ol);
}

/* Writes cur with hunk h applied at line index at. Each added line is
 * re-indented as the old line before it (or, before any, the first) was
 * to match: r at first. */
static void apply_at(const ctx *c, const hunk *h, const char *cur,
                     size_t cur_len, const lines *cl, size_t at, reindent r,
                     llm_buf *b)
{
    size_t p = at; /* the next line of cur the hunk reaches */
    const char *eol = at < cl->n && cl->v[at].eol == 2 ? "\r\n" : "\n";
    size_t head = at < cl->n ? cl->v[at].off : cur_len;
    kevo__llm_buf_append(b, cur, head);
    if (at >= cl->n && cur_len > 0 && cur[cur_len - 1] != '\n')
        kevo__llm_buf_puts(b, "\n");
    for (size_t i = h->l0; i < h->l1; i++) {
        span t = dline(c, i, h->cut);
        int k = body_kind(t);
        if (k == BODY_CONTEXT || k == BODY_DEL) {
            span body = t.n ? (span){t.s + 1, t.n - 1} : t;
            if (!is_blank(body))
                r = kevo__reply_reindent(body, line_span(cur, &cl->v[p]));
            if (k == BODY_CONTEXT) {
                kevo__llm_buf_append(b, cur + cl->v[p].off, cl->v[p].len);
                kevo__llm_buf_puts(b, cl->v[p].eol == 2 ? "\r\n" : "\n");
            }
            p++;
        } else if (k == BODY_ADD) {
            kevo__reply_put_reindented(b, (span){t.s + 1, t.n - 1}, r);
            kevo__llm_buf_puts(b, eol);
        }
    }
    if (p < cl->n)
        kevo__llm_buf_append(b, cur + cl->v[p].off, cur_len - cl->v[p].off);
}

/* Where hunk k goes in cur: fills *at and *tolerant and returns OK, or
 * fails naming the hunk. */
static kevo_reply_kind place_hunk(ctx *c, const diff *d, size_t k,
                                  const char *cur, const lines *cl,
                                  const char *otext, const lines *ol,
                                  span first, long delta, size_t *at,
                                  bool *tolerant, reindent *r)
{
    const hunk *h = &d->h[k];
    size_t near = SIZE_MAX;
    *at = 0;
    *tolerant = false;
    if (h->nums) {
        long line = (long)h->old_start - (h->old_count > 0) + delta;
        near = line < 0 ? 0 : (size_t)line;
    }
    llm_buf msg = {0};
    *r = (reindent){{NULL, 0}, 0};
    if (ol->n == 0) {
        if (!h->nums) {
            name_hunk(&msg, c, d, k);
            kevo__llm_buf_puts(&msg,
                               " of the diff has no context or removed "
                               "lines and no line numbers, so it cannot be "
                               "placed");
            return kevo__reply_fail_with(c, KEVO_REPLY_MALFORMED_EDIT, &msg);
        }
        *at = near < cl->n ? near : cl->n;
        *tolerant = false;
        return KEVO_REPLY_OK;
    }
    place p = {0};
    bool tie = false;
    for (int pass = 0; pass < 2 && p.count == 0; pass++) {
        *tolerant = pass == 1;
        kevo__reply_place(cur, cl, otext, ol->v, ol->n, *tolerant, near,
                          SIZE_MAX, &c->work, c->work_max, &p, &tie);
        if (c->work > c->work_max) {
            kevo__llm_buf_puts(&msg, "placing ");
            name_hunk(&msg, c, d, k);
            kevo__llm_buf_printf(&msg,
                                 " of the diff takes more than %zu line "
                                 "comparisons (the reply or the parent is too "
                                 "repetitive)",
                                 c->work_max);
            return kevo__reply_fail_with(c, KEVO_REPLY_TOO_LARGE, &msg);
        }
    }
    if (p.count == 1 || (p.count > 1 && near != SIZE_MAX && !tie)) {
        *at = p.first;
        for (size_t j = 0; j < ol->n; j++) {
            span w = line_span(otext, &ol->v[j]);
            if (!is_blank(w)) {
                *r = kevo__reply_reindent(w,
                                          line_span(cur, &cl->v[p.first + j]));
                break;
            }
        }
        return KEVO_REPLY_OK;
    }
    name_hunk(&msg, c, d, k);
    if (p.count == 0) {
        kevo__llm_buf_puts(&msg, " of the diff not found in the parent");
        if (k == 1)
            kevo__llm_buf_puts(&msg, " as changed by hunk 1");
        else if (k > 1)
            kevo__llm_buf_printf(&msg, " as changed by hunks 1-%zu", k);
        kevo__llm_buf_puts(&msg, " (first line: ");
        kevo__reply_quote(&msg, first);
        kevo__llm_buf_puts(&msg, ")");
        return kevo__reply_fail_with(c, KEVO_REPLY_EDIT_NOT_FOUND, &msg);
    }
    kevo__llm_buf_printf(&msg,
                         " of the diff matches %zu places in the parent "
                         "(lines ",
                         p.count);
    for (size_t i = 0; i < p.count && i < 3; i++) {
        const char *sep = i == 0                             ? ""
                          : i + 1 == p.count && p.count <= 3 ? " and "
                                                             : ", ";
        kevo__llm_buf_printf(&msg, "%s%zu", sep, p.at[i] + 1);
    }
    kevo__llm_buf_puts(&msg,
                       p.count > 3 ? ", ...; first line: " : "; first line: ");
    kevo__reply_quote(&msg, first);
    kevo__llm_buf_puts(&msg, h->nums ? "), as near to its line numbers as each "
                                       "other: add context lines"
                                     : ") and has no line numbers: add context "
                                       "lines");
    return kevo__reply_fail_with(c, KEVO_REPLY_EDIT_AMBIGUOUS, &msg);
}

/* The diff was cut off: a diff fence left open, a last hunk short of its
 * counts, or a reply stopped at its token limit. */
static kevo_reply_kind check_cut(ctx *c, const diff *d)
{
    for (size_t k = 0; k < c->nfences; k++) {
        const fence *f = &c->fences[k];
        if (f->is_diff && !f->closed) {
            llm_buf msg = {0};
            kevo__llm_buf_printf(&msg,
                                 "the reply ends inside fence %zu of %zu (",
                                 k + 1, c->nfences);
            kevo__reply_fence_label(&msg, f);
            kevo__llm_buf_puts(&msg, "), so the diff's last hunk may be "
                                     "incomplete");
            return kevo__reply_fail_with(c, KEVO_REPLY_TRUNCATED, &msg);
        }
    }
    if (d->n == 0)
        return KEVO_REPLY_OK;
    const hunk *h = &d->h[d->n - 1];
    size_t old_seen = 0, new_seen = 0;
    for (size_t i = h->l0; i < h->l1; i++) {
        int k = body_kind(dline(c, i, h->cut));
        old_seen += k == BODY_CONTEXT || k == BODY_DEL;
        new_seen += k == BODY_CONTEXT || k == BODY_ADD;
    }
    bool at_end = true;
    for (size_t i = h->l1; i < c->rl.n && at_end; i++)
        at_end = is_blank(line_span(c->text, &c->rl.v[i]));
    if (h->nums && at_end &&
        (old_seen < h->old_count || new_seen < h->new_count)) {
        llm_buf msg = {0};
        kevo__llm_buf_puts(&msg, "the reply ends inside ");
        name_hunk(&msg, c, d, d->n - 1);
        kevo__llm_buf_printf(
            &msg,
            " of the diff: it has %zu old and %zu new lines of "
            "the %zu and %zu its header counts",
            old_seen, new_seen, h->old_count, h->new_count);
        return kevo__reply_fail_with(c, KEVO_REPLY_TRUNCATED, &msg);
    }
    if (c->flags & KEVO_REPLY_CUT_OFF)
        return kevo__reply_fail(c, KEVO_REPLY_TRUNCATED,
                                "the reply was cut off at its token limit "
                                "after %zu hunk%s of a unified diff, so a "
                                "hunk it meant to give may be missing",
                                d->n, d->n == 1 ? "" : "s");
    return KEVO_REPLY_OK;
}

static kevo_reply_kind check_files(ctx *c, const diff *d)
{
    llm_buf msg = {0};
    if (d->new_file) {
        kevo__llm_buf_puts(&msg, "the diff creates a new file (");
        kevo__reply_quote(&msg, d->file);
        kevo__llm_buf_puts(&msg, " from /dev/null): give a whole kernel in a "
                                 "```cuda fence instead");
        return kevo__reply_fail_with(c, KEVO_REPLY_MALFORMED_EDIT, &msg);
    }
    if (d->other.s) {
        kevo__llm_buf_puts(&msg, "the diff changes more than one file (");
        kevo__reply_quote(&msg, d->file);
        kevo__llm_buf_puts(&msg, " and ");
        kevo__reply_quote(&msg, d->other);
        kevo__llm_buf_puts(&msg, "), but the parent is a single source");
        return kevo__reply_fail_with(c, KEVO_REPLY_MALFORMED_EDIT, &msg);
    }
    return KEVO_REPLY_OK;
}

kevo_reply_kind kevo__reply_apply_diff(ctx *c, char **child, size_t *child_len)
{
    diff d = {0};
    lines cl = {0}, ol = {0};
    llm_buf cur = {0}, next = {0}, otext = {0};
    size_t loose = 0, loose_at[4];
    long delta = 0;
    kevo_reply_kind kind = read_diff(c, &d);
    if (kind == KEVO_REPLY_OK && d.n == 0)
        kind = kevo__reply_fail(c, KEVO_REPLY_MALFORMED_EDIT,
                                "the reply's diff has changed lines but no "
                                "'@@' hunk header: start each hunk with a "
                                "line '@@ -a,b +c,d @@'");
    if (kind == KEVO_REPLY_OK)
        kind = check_files(c, &d);
    if (kind == KEVO_REPLY_OK)
        kind = check_cut(c, &d);
    if (kind != KEVO_REPLY_OK)
        goto done;
    if (!c->parent) {
        kind = kevo__reply_fail(c, KEVO_REPLY_NO_PARENT,
                                "the reply holds a unified diff of %zu "
                                "hunk%s, but there is no parent source to "
                                "apply it to",
                                d.n, d.n == 1 ? "" : "s");
        goto done;
    }
    kevo__llm_buf_append(&cur, c->parent, c->parent_len);
    for (size_t k = 0; k < d.n; k++) {
        free(cl.v);
        free(ol.v);
        cl.v = ol.v = NULL;
        kevo__llm_buf_free(&otext);
        span first;
        if (cur.failed ||
            !kevo__reply_split_lines(cur.data ? cur.data : "", cur.len, &cl) ||
            !old_lines(c, &d.h[k], &otext, &ol, &first)) {
            kind = kevo__reply_nomem(c);
            goto done;
        }
        /* Each hunk writes the whole text anew. */
        c->work += cl.n + cur.len;
        if (c->work > c->work_max) {
            kind = kevo__reply_fail(c, KEVO_REPLY_TOO_LARGE,
                                    "applying the diff's %zu hunks takes more "
                                    "than %zu steps (the diff or the parent "
                                    "is too large)",
                                    d.n, c->work_max);
            goto done;
        }
        size_t at = 0;
        bool tolerant = false;
        reindent r;
        kind = place_hunk(c, &d, k, cur.data ? cur.data : "", &cl,
                          otext.data ? otext.data : "", &ol, first, delta, &at,
                          &tolerant, &r);
        if (kind != KEVO_REPLY_OK)
            goto done;
        apply_at(c, &d.h[k], cur.data ? cur.data : "", cur.len, &cl, at, r,
                 &next);
        if (next.failed) {
            kind = kevo__reply_nomem(c);
            goto done;
        }
        if (next.len > c->max_child) {
            kind = kevo__reply_fail(c, KEVO_REPLY_TOO_LARGE,
                                    "applying hunk %zu of %zu of the diff "
                                    "makes the child %zu bytes, over the limit "
                                    "of %zu",
                                    k + 1, d.n, next.len, c->max_child);
            goto done;
        }
        for (size_t i = d.h[k].l0; i < d.h[k].l1; i++) {
            int b = body_kind(dline(c, i, d.h[k].cut));
            delta += (b == BODY_ADD) - (b == BODY_DEL);
        }
        kevo__llm_buf_free(&cur);
        cur = next;
        next = (llm_buf){0};
        if (tolerant) {
            if (loose < 4)
                loose_at[loose] = k;
            loose++;
        }
    }
    kevo__llm_buf_printf(&c->note, "%zu hunk%s of a unified diff applied", d.n,
                         d.n == 1 ? "" : "s");
    for (size_t i = 0; i < loose && i < 4; i++)
        kevo__llm_buf_printf(&c->note, "%shunk %zu", i ? ", " : " (",
                             loose_at[i] + 1);
    if (loose > 4)
        kevo__llm_buf_printf(&c->note, " and %zu more", loose - 4);
    if (loose)
        kevo__llm_buf_puts(&c->note,
                           " ignoring indentation and trailing white space)");
    c->out->nedits = d.n;
    c->out->form = KEVO_REPLY_FORM_DIFF;
    *child_len = cur.len;
    *child = kevo__llm_buf_take(&cur);
    if (!*child)
        kind = kevo__reply_nomem(c);
done:
    free(d.h);
    free(cl.v);
    free(ol.v);
    kevo__llm_buf_free(&cur);
    kevo__llm_buf_free(&next);
    kevo__llm_buf_free(&otext);
    return kind;
}

/*
 * reply_lines.c: lines of text, and finding a run of lines in a text (see
 * reply_lines.h).
 */
#include "reply_lines.h"

#include <stdint.h>
#include <stdlib.h>

bool kevo__reply_has_word(span t, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; n > 0 && i + n <= t.n; i++) {
        if (memcmp(t.s + i, name, n) == 0 &&
            (i == 0 || !is_ident_char(t.s[i - 1])) &&
            (i + n == t.n || !is_ident_char(t.s[i + n])))
            return true;
    }
    return false;
}

void kevo__reply_put_clean(llm_buf *b, span t)
{
    t = trim(t);
    size_t n = t.n;
    bool cut = false;
    if (n > 60) {
        n = 60;
        while (n > 0 && ((unsigned char)t.s[n] & 0xC0) == 0x80)
            n--;
        cut = true;
    }
    for (size_t i = 0; i < n; i++) {
        char c = t.s[i];
        if ((unsigned char)c < 0x20 || c == 0x7f)
            c = '?';
        kevo__llm_buf_append(b, &c, 1);
    }
    if (cut)
        kevo__llm_buf_puts(b, "...");
}

void kevo__reply_quote(llm_buf *b, span t)
{
    kevo__llm_buf_puts(b, "'");
    kevo__reply_put_clean(b, t);
    kevo__llm_buf_puts(b, "'");
}

bool kevo__reply_split_lines(const char *s, size_t len, lines *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += s[i] == '\n';
    out->v = malloc((n + 1) * sizeof *out->v);
    out->n = 0;
    if (!out->v)
        return false;
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '\n')
            continue;
        rline l = {start, i - start, 1};
        if (l.len > 0 && s[i - 1] == '\r') {
            l.len--;
            l.eol = 2;
        }
        out->v[out->n++] = l;
        start = i + 1;
    }
    if (start < len)
        out->v[out->n++] = (rline){start, len - start, 0};
    return true;
}

size_t kevo__reply_line_of(const char *s, size_t off)
{
    size_t n = 1;
    for (size_t i = 0; i < off; i++)
        n += s[i] == '\n';
    return n;
}

static bool line_eq(span a, span b, bool tolerant)
{
    if (tolerant) {
        a = trim(a);
        b = trim(b);
    }
    return span_eq(a, b);
}

static size_t distance(size_t a, size_t b)
{
    return a > b ? a - b : b - a;
}

void kevo__reply_place(const char *text, const lines *cl, const char *wtext,
                       const rline *want, size_t n, bool tolerant, size_t near,
                       size_t cap, size_t *work, size_t work_max, place *p,
                       bool *tie)
{
    *p = (place){0};
    if (tie)
        *tie = false;
    if (n == 0 || n > cl->n)
        return;
    for (size_t i = 0; i + n <= cl->n && p->count < cap; i++) {
        size_t j = 0;
        while (j < n && line_eq(line_span(text, &cl->v[i + j]),
                                line_span(wtext, &want[j]), tolerant))
            j++;
        *work += j + 1;
        if (*work > work_max) {
            p->count = 0;
            return;
        }
        if (j < n)
            continue;
        if (p->count < 3)
            p->at[p->count] = i;
        if (p->count == 0 || (near != SIZE_MAX &&
                              distance(i, near) < distance(p->first, near))) {
            p->first = i;
            if (tie)
                *tie = false;
        } else if (near != SIZE_MAX && tie &&
                   distance(i, near) == distance(p->first, near)) {
            *tie = true;
        }
        p->count++;
    }
}

reindent kevo__reply_reindent(span wanted, span matched)
{
    reindent r = {{NULL, 0}, 0};
    span si = indent_of(wanted);
    span pi = indent_of(matched);
    if (pi.n > si.n && memcmp(pi.s, si.s, si.n) == 0)
        r.add = (span){pi.s + si.n, pi.n - si.n};
    else if (si.n > pi.n && memcmp(si.s, pi.s, pi.n) == 0)
        r.remove = si.n - pi.n;
    return r;
}

void kevo__reply_put_reindented(llm_buf *b, span t, reindent r)
{
    if (!is_blank(t)) {
        if (r.add.n)
            kevo__llm_buf_append(b, r.add.s, r.add.n);
        size_t w = indent_of(t).n;
        size_t cut = w < r.remove ? w : r.remove;
        t.s += cut;
        t.n -= cut;
    }
    kevo__llm_buf_append(b, t.s, t.n);
}

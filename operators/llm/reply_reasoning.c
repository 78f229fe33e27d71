/*
 * reply_reasoning.c: reasoning sections set aside (see
 * reply_reasoning.h).
 */
#include "reply_reasoning.h"

#include <stdio.h>

static const char *const tag_names[] = {"think", "thinking", "reasoning"};

/* A reasoning tag at s[i]: returns its length (0 when there is none), and
 * whether it closes and which name it has. */
static size_t tag_at(const char *s, size_t n, size_t i, bool *closing,
                     size_t *name)
{
    size_t j = i + 1;
    *closing = j < n && s[j] == '/';
    j += *closing;
    for (size_t k = 0; k < LLM_ARRAY_SIZE(tag_names); k++) {
        size_t len = strlen(tag_names[k]), m = 0;
        while (m < len && j + m < n && lower(s[j + m]) == tag_names[k][m])
            m++;
        if (m == len && j + len < n && s[j + len] == '>') {
            *name = k;
            return j + len + 1 - i;
        }
    }
    return 0;
}

static size_t count_breaks(const char *s, size_t from, size_t to)
{
    size_t n = 0;
    for (size_t i = from; i < to; i++)
        n += s[i] == '\n';
    return n;
}

/* Notes a section from line first to line last in c->thought. */
static void record(ctx *c, size_t first, size_t last, size_t name, bool lone)
{
    reasoning *r = &c->thought;
    if (r->count == 0) {
        r->first = first;
        snprintf(r->tag, sizeof r->tag, "%s", tag_names[name]);
        r->lone_close = lone;
    }
    r->last = last;
    r->count++;
}

/* "line 3" or "lines 1-40" */
static void put_lines(llm_buf *b, size_t first, size_t last)
{
    if (first == last)
        kevo__llm_buf_printf(b, "line %zu", first);
    else
        kevo__llm_buf_printf(b, "lines %zu-%zu", first, last);
}

kevo_reply_kind kevo__reply_strip_reasoning(ctx *c)
{
    char *s = c->text;
    size_t n = c->text_len;
    /* Sections are removed as they are found: the text before r is done
     * (kept text and line breaks written before w), the rest untouched.
     * line is the line of the reply at r. */
    size_t w = 0, r = 0, line = 1;
    size_t from = 0; /* where a lone closing tag's section begins */
    size_t open_at = 0, open_name = 0;
    bool inside = false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '<')
            continue;
        bool closing;
        size_t name;
        size_t len = tag_at(s, n, i, &closing, &name);
        if (len == 0)
            continue;
        size_t start;
        bool lone = false;
        if (!inside && !closing) {
            inside = true;
            open_at = i;
            open_name = name;
            i += len - 1;
            continue;
        }
        if (inside && (!closing || name != open_name))
            continue;
        if (inside) {
            start = open_at;
            inside = false;
        } else {
            start = from;
            lone = true;
        }
        size_t end = i + len;
        size_t first = line + count_breaks(s, r, start);
        size_t breaks = count_breaks(s, start, end);
        record(c, first, first + breaks, lone ? name : open_name, lone);
        /* Keep [r, start), then the section's line breaks. */
        memmove(s + w, s + r, start - r);
        w += start - r;
        line = first + breaks;
        if (breaks == 0)
            s[w++] = ' ';
        for (size_t k = 0; k < breaks; k++)
            s[w++] = '\n';
        r = end;
        from = end;
        i = end - 1;
    }
    if (inside) {
        line += count_breaks(s, r, open_at);
        return kevo__reply_fail(
            c, KEVO_REPLY_NO_CODE,
            "the reply ends inside its reasoning: '<%s>' at line %zu is "
            "never closed, so the reply holds no answer",
            tag_names[open_name], line);
    }
    memmove(s + w, s + r, n - r);
    w += n - r;
    s[w] = '\0';
    c->text_len = w;
    bool blank = true;
    for (size_t i = 0; i < w && blank; i++)
        blank = is_space(s[i]) || s[i] == '\n';
    if (blank && c->thought.count > 0) {
        llm_buf msg = {0};
        kevo__llm_buf_puts(&msg, "the reply holds only reasoning (");
        put_lines(&msg, c->thought.first, c->thought.last);
        kevo__llm_buf_puts(&msg, "), and no answer after it");
        return kevo__reply_fail_with(c, KEVO_REPLY_NO_CODE, &msg);
    }
    return KEVO_REPLY_OK;
}

void kevo__reply_note_reasoning(ctx *c)
{
    const reasoning *r = &c->thought;
    if (r->count == 0)
        return;
    if (r->count == 1 && r->lone_close)
        kevo__llm_buf_printf(&c->note, "; the reasoning before '</%s>' (",
                             r->tag);
    else if (r->count == 1)
        kevo__llm_buf_printf(&c->note, "; the reasoning in '<%s>' (", r->tag);
    else
        kevo__llm_buf_printf(&c->note, "; %zu reasoning sections (", r->count);
    put_lines(&c->note, r->first, r->last);
    kevo__llm_buf_puts(&c->note,
                       r->count == 1 ? ") was set aside" : ") were set aside");
}

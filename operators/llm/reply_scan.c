/*
 * reply_scan.c: a scanner of C/CUDA source, and the kevo:launch and
 * kevo:param blocks kevo finds in it (see reply_scan.h).
 */
#include "reply_scan.h"

#include "reply_private.h"

#include <stdlib.h>

/* ---- the scanner --------------------------------------------------------- */

static void push_cmt(cscan *sc, const cmt *cm)
{
    if (sc->failed)
        return;
    if (sc->nc == sc->capc) {
        size_t cap = sc->capc ? sc->capc * 2 : 16;
        cmt *grown = realloc(sc->c, cap * sizeof *grown);
        if (!grown) {
            sc->failed = true;
            return;
        }
        sc->c = grown;
        sc->capc = cap;
    }
    sc->c[sc->nc++] = *cm;
}

static void push_tok(cscan *sc, size_t off, size_t len)
{
    if (sc->failed)
        return;
    if (sc->nt == sc->capt) {
        size_t cap = sc->capt ? sc->capt * 2 : 256;
        tok *grown = realloc(sc->t, cap * sizeof *grown);
        if (!grown) {
            sc->failed = true;
            return;
        }
        sc->t = grown;
        sc->capt = cap;
    }
    sc->t[sc->nt++] = (tok){off, len};
}

void kevo__reply_scan_free(cscan *sc)
{
    free(sc->c);
    free(sc->t);
    *sc = (cscan){0};
}

/* Skips a string or character literal opening at s[i]; an unclosed one
 * ends at its line's end. */
static size_t skip_literal(cscan *sc, size_t i, size_t *line)
{
    const char *s = sc->s;
    char quote = s[i];
    size_t j = i + 1;
    while (j < sc->n && s[j] != quote && s[j] != '\n') {
        if (s[j] == '\\' && j + 1 < sc->n) {
            if (s[j + 1] == '\n')
                (*line)++;
            j += 2;
        } else {
            j++;
        }
    }
    if (j < sc->n && s[j] == quote)
        return j + 1;
    sc->open_string = true;
    return j;
}

/* A raw string R"delim(...)delim" whose quote is at s[i]; returns the
 * index past it, or 0 when s[i] opens no raw string. */
static size_t skip_raw_string(cscan *sc, size_t i, size_t *line)
{
    const char *s = sc->s;
    size_t k = i + 1;
    while (k < sc->n && s[k] != '(' && k - (i + 1) < 16 &&
           !strchr(" \t\n\r\\)\"", s[k]))
        k++;
    if (k >= sc->n || s[k] != '(')
        return 0;
    const char *delim = s + i + 1;
    size_t dlen = k - (i + 1);
    for (size_t j = k + 1; j < sc->n; j++) {
        if (s[j] == '\n')
            (*line)++;
        if (s[j] == ')' && sc->n - (j + 1) > dlen &&
            memcmp(s + j + 1, delim, dlen) == 0 && s[j + 1 + dlen] == '"')
            return j + dlen + 2;
    }
    sc->open_string = true;
    return sc->n;
}

static size_t skip_number(const cscan *sc, size_t i)
{
    const char *s = sc->s;
    size_t j = i + 1;
    while (j < sc->n) {
        char d = s[j];
        if ((d == 'e' || d == 'E' || d == 'p' || d == 'P') && j + 1 < sc->n &&
            (s[j + 1] == '+' || s[j + 1] == '-'))
            j += 2;
        else if (is_ident_char(d) || d == '.')
            j++;
        else if (d == '\'' && j + 1 < sc->n && is_ident_char(s[j + 1]))
            j += 2;
        else
            break;
    }
    return j;
}

static bool is_raw_prefix(const char *s, size_t n)
{
    static const char *const prefixes[] = {"R", "u8R", "uR", "UR", "LR"};
    for (size_t k = 0; k < LLM_ARRAY_SIZE(prefixes); k++) {
        if (strlen(prefixes[k]) == n && memcmp(prefixes[k], s, n) == 0)
            return true;
    }
    return false;
}

bool kevo__reply_scan(cscan *sc, const char *s, size_t n)
{
    *sc = (cscan){.s = s, .n = n};
    size_t i = 0, line = 1;
    bool code_on_line = false;
    while (i < n && !sc->failed) {
        char c = s[i];
        char c1 = i + 1 < n ? s[i + 1] : '\0';
        if (c == '\n') {
            line++;
            code_on_line = false;
            i++;
        } else if (c == '/' && c1 == '/') {
            cmt cm = {.start = i,
                      .line = line,
                      .terminated = true,
                      .own_line = !code_on_line};
            size_t j = i + 2;
            while (j < n && s[j] != '\n') {
                if (s[j] == '\\' && j + 1 < n && s[j + 1] == '\n') {
                    line++;
                    j += 2;
                } else if (s[j] == '\\' && j + 2 < n && s[j + 1] == '\r' &&
                           s[j + 2] == '\n') {
                    line++;
                    j += 3;
                } else {
                    j++;
                }
            }
            cm.end = j;
            cm.end_line = line;
            push_cmt(sc, &cm);
            i = j;
        } else if (c == '/' && c1 == '*') {
            cmt cm = {.start = i,
                      .line = line,
                      .is_block = true,
                      .own_line = !code_on_line};
            size_t j = i + 2;
            while (j < n && !(s[j] == '*' && j + 1 < n && s[j + 1] == '/')) {
                if (s[j] == '\n')
                    line++;
                j++;
            }
            cm.terminated = j < n;
            cm.end = cm.terminated ? j + 2 : n;
            cm.end_line = line;
            if (!cm.terminated)
                sc->open_comment = true;
            push_cmt(sc, &cm);
            i = cm.end;
            code_on_line = true;
        } else if (c == '"' || c == '\'') {
            i = skip_literal(sc, i, &line);
            code_on_line = true;
        } else if (is_ident_start(c)) {
            size_t j = i;
            while (j < n && is_ident_char(s[j]))
                j++;
            size_t end;
            if (j < n && s[j] == '"' && is_raw_prefix(s + i, j - i) &&
                (end = skip_raw_string(sc, j, &line)) != 0) {
                i = end;
            } else {
                push_tok(sc, i, j - i);
                i = j;
            }
            code_on_line = true;
        } else if (is_digit(c) || (c == '.' && is_digit(c1))) {
            i = skip_number(sc, i);
            code_on_line = true;
        } else {
            static const char opens[] = "{([", closes[] = "})]";
            const char *o = strchr(opens, c), *cl = strchr(closes, c);
            if (c && o)
                sc->depth[o - opens]++;
            else if (c && cl)
                sc->depth[cl - closes]--;
            if (!is_space(c))
                code_on_line = true;
            if (c == '<' && c1 == '<' && i + 2 < n && s[i + 2] == '<') {
                push_tok(sc, i, 3); /* a kernel launch */
                i += 3;
                continue;
            }
            bool lone_eq = c == '=' && c1 != '=' &&
                           (i == 0 || !strchr("=!<>+-*/%&|^", s[i - 1]));
            /* Angle brackets, for template headers: not '<=', '->' or
             * '>='. */
            bool angle = (c == '<' && c1 != '=') ||
                         (c == '>' && c1 != '=' && (i == 0 || s[i - 1] != '-'));
            if ((c && strchr("(){}[];#,", c)) || lone_eq || angle)
                push_tok(sc, i, 1);
            i++;
        }
    }
    return !sc->failed;
}

bool kevo__reply_has_ident(const cscan *sc, size_t from, size_t to, span name)
{
    for (size_t k = from; k < to && k < sc->nt; k++) {
        if (span_eq(tok_span(sc, k), name))
            return true;
    }
    return false;
}

bool kevo__reply_scan_complete(const cscan *sc)
{
    return !sc->open_comment && !sc->open_string && sc->depth[0] == 0 &&
           sc->depth[1] == 0 && sc->depth[2] == 0;
}

void kevo__reply_describe_incomplete(llm_buf *b, const cscan *sc)
{
    static const char *const opener[] = {"'{'", "'('", "'['"};
    const char *sep = "";
    for (int k = 0; k < 3; k++) {
        if (sc->depth[k] > 0)
            kevo__llm_buf_printf(b, "%s%ld unclosed %s", sep, sc->depth[k],
                                 opener[k]);
        else if (sc->depth[k] < 0)
            kevo__llm_buf_printf(b, "%s%ld unmatched closing of %s", sep,
                                 -sc->depth[k], opener[k]);
        else
            continue;
        sep = ", ";
    }
    if (sc->open_comment) {
        kevo__llm_buf_printf(b, "%san unterminated comment", sep);
        sep = ", ";
    }
    if (sc->open_string)
        kevo__llm_buf_printf(b, "%san unterminated string or character literal",
                             sep);
}

/* ---- kevo:launch and kevo:param blocks ----------------------------------- */

blocks kevo__reply_blocks(ctx *c, const char *s, size_t n)
{
    blocks bl;
    memset(&bl, 0, sizeof bl);
    const kevo_host_api *api = c->host->api;
    kevo_operator_blocks ob = {.size = sizeof ob};
    if (api->find_blocks(c->host->ctx, s, n, &ob) != KEVO_OK) {
        c->nomem = true;
        return bl;
    }
    const kevo_operator_block *b[2] = {&ob.launch, &ob.param};
    for (int t = 0; t < 2; t++) {
        bl.found[t] = b[t]->found;
        bl.whole[t] = b[t]->closed;
        bl.start[t] = b[t]->start;
        bl.end[t] = b[t]->end;
        /* A name a line. */
        for (const char *p = b[t]->names, *nl; p && (nl = strchr(p, '\n'));
             p = nl + 1)
            kevo__reply_names_add(&bl.names[t], (span){p, (size_t)(nl - p)});
        api->free(c->host->ctx, b[t]->names);
    }
    return bl;
}

void kevo__reply_names_add(names *ns, span w)
{
    if (w.n == 0 || w.n > NAME_MAX_LEN)
        return;
    for (size_t k = 0; k < ns->n; k++) {
        if (strlen(ns->v[k]) == w.n && memcmp(ns->v[k], w.s, w.n) == 0)
            return;
    }
    if (ns->n == NAMES_MAX) {
        ns->overflow = true;
        return;
    }
    memcpy(ns->v[ns->n], w.s, w.n);
    ns->v[ns->n][w.n] = '\0';
    ns->n++;
}

bool kevo__reply_names_has(const names *ns, const char *name)
{
    for (size_t k = 0; k < ns->n; k++) {
        if (strcmp(ns->v[k], name) == 0)
            return true;
    }
    return false;
}

void kevo__reply_names_list(llm_buf *b, const names *ns)
{
    for (size_t k = 0; k < ns->n; k++)
        kevo__llm_buf_printf(b, "%s%s", k ? ", " : "", ns->v[k]);
    if (ns->overflow)
        kevo__llm_buf_puts(b, ", ...");
}

bool kevo__reply_is_attribute(span t)
{
    static const char *const attrs[] = {
        "__launch_bounds__", "__launch_bounds", "__cluster_dims__",
        "__maxnreg__",       "__attribute__",   "__declspec",
        "alignas",           "__align__",       "__nv_pure__"};
    for (size_t a = 0; a < LLM_ARRAY_SIZE(attrs); a++) {
        if (span_is(t, attrs[a]))
            return true;
    }
    return false;
}

/* The names of the __global__ functions of a source. */
void kevo__reply_global_kernels(const cscan *sc, names *ns)
{
    for (size_t k = 0; k < sc->nt; k++) {
        if (!tok_is(sc, k, "__global__"))
            continue;
        span last = {NULL, 0};
        for (size_t j = k + 1; j < sc->nt && j < k + 256; j++) {
            span t = tok_span(sc, j);
            if (t.n == 1 && strchr("{};", t.s[0]))
                break;
            if (t.n == 1 && t.s[0] == '(') {
                if (!last.s || !kevo__reply_is_attribute(last)) {
                    if (last.s)
                        kevo__reply_names_add(ns, last);
                    break;
                }
                /* Skip the attribute's parenthesised arguments. */
                long depth = 0;
                for (; j < sc->nt; j++) {
                    if (tok_is(sc, j, "("))
                        depth++;
                    else if (tok_is(sc, j, ")") && --depth == 0)
                        break;
                }
                last = (span){NULL, 0};
                continue;
            }
            if (is_ident_start(t.s[0]))
                last = t;
        }
    }
}

/* name is #define'd in the source. */
bool kevo__reply_defines(const cscan *sc, const char *name)
{
    size_t n = strlen(name);
    for (size_t k = 0; k + 2 < sc->nt; k++) {
        if (tok_is(sc, k, "#") && tok_is(sc, k + 1, "define") &&
            sc->t[k + 2].len == n &&
            memcmp(sc->s + sc->t[k + 2].off, name, n) == 0)
            return true;
    }
    return false;
}

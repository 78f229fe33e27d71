/*
 * reply_items.c: the top-level items of a source (see reply_items.h).
 */
#include "reply_items.h"

#include <stdint.h>
#include <stdlib.h>

/* Scopes inside scopes are followed this deep. */
#define SCOPE_DEPTH_MAX 4

static bool tok_char(const cscan *sc, size_t k, char c)
{
    return k < sc->nt && sc->t[k].len == 1 && sc->s[sc->t[k].off] == c;
}

static bool tok_ident(const cscan *sc, size_t k)
{
    return k < sc->nt && is_ident_start(sc->s[sc->t[k].off]);
}

/* Words that never name what a declaration declares. */
static bool keyword(span t)
{
    static const char *const words[] = {"auto",
                                        "bool",
                                        "char",
                                        "class",
                                        "const",
                                        "constexpr",
                                        "consteval",
                                        "double",
                                        "enum",
                                        "extern",
                                        "float",
                                        "inline",
                                        "int",
                                        "long",
                                        "namespace",
                                        "return",
                                        "short",
                                        "signed",
                                        "static",
                                        "struct",
                                        "template",
                                        "typedef",
                                        "typename",
                                        "union",
                                        "unsigned",
                                        "using",
                                        "void",
                                        "volatile",
                                        "__device__",
                                        "__global__",
                                        "__host__",
                                        "__constant__",
                                        "__shared__",
                                        "__managed__",
                                        "__forceinline__",
                                        "__noinline__",
                                        "__restrict__",
                                        "operator",
                                        "decltype",
                                        "sizeof"};
    for (size_t k = 0; k < LLM_ARRAY_SIZE(words); k++) {
        if (span_is(t, words[k]))
            return true;
    }
    return false;
}

/* The '#' at token k is the first thing on its line. */
static bool starts_line(const cscan *sc, size_t k)
{
    size_t i = sc->t[k].off;
    while (i > 0 && (sc->s[i - 1] == ' ' || sc->s[i - 1] == '\t'))
        i--;
    return i == 0 || sc->s[i - 1] == '\n';
}

/* The end of the directive at off: its line's newline, past any
 * backslash-newlines. */
static size_t directive_end(const cscan *sc, size_t off)
{
    for (size_t i = off; i < sc->n; i++) {
        if (sc->s[i] != '\n')
            continue;
        size_t j = i;
        if (j > off && sc->s[j - 1] == '\r')
            j--;
        if (j > off && sc->s[j - 1] == '\\')
            continue;
        return i;
    }
    return sc->n;
}

/* The token after the '>' closing the template header whose '<' is token
 * k (or b when it is not closed). */
static size_t skip_template(const cscan *sc, size_t k, size_t b)
{
    long angle = 0, paren = 0;
    for (; k < b; k++) {
        if (tok_char(sc, k, '('))
            paren++;
        else if (tok_char(sc, k, ')') && paren > 0)
            paren--;
        else if (paren == 0 && tok_char(sc, k, '<'))
            angle++;
        else if (paren == 0 && tok_char(sc, k, '>') && --angle == 0)
            return k + 1;
        else if (tok_char(sc, k, '{') || tok_char(sc, k, ';'))
            return k;
    }
    return b;
}

/* The token after the parenthesised arguments opening at token k. */
static size_t skip_parens(const cscan *sc, size_t k, size_t b)
{
    long depth = 0;
    for (; k < b; k++) {
        if (tok_char(sc, k, '('))
            depth++;
        else if (tok_char(sc, k, ')') && --depth <= 0)
            return k + 1;
    }
    return b;
}

/* The comment of sc that holds byte i, or NULL (comments are in order). */
static const cmt *comment_at(const cscan *sc, size_t i)
{
    size_t lo = 0, hi = sc->nc;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sc->c[mid].end <= i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < sc->nc && sc->c[lo].start <= i ? &sc->c[lo] : NULL;
}

/* Bytes [from, to) of the source, comments aside, hold one of chars. */
static bool gap_has(const cscan *sc, size_t from, size_t to, const char *chars)
{
    for (size_t i = from; i < to && i < sc->n; i++) {
        const cmt *cm = comment_at(sc, i);
        if (cm) {
            i = cm->end - 1;
            continue;
        }
        if (strchr(chars, sc->s[i]) && sc->s[i])
            return true;
    }
    return false;
}

/* Where the text before token k on its line starts: its line's start, or
 * the end of the token before it when that is on the line too. (Bounded
 * by that token, so that reading every item stays linear.) */
static size_t line_before(const cscan *sc, size_t k)
{
    size_t from = k > 0 ? sc->t[k - 1].off + sc->t[k - 1].len : 0;
    size_t i = sc->t[k].off;
    while (i > from && sc->s[i - 1] != '\n')
        i--;
    return i;
}

/* Token k is the first thing on its line, after some indentation. */
static bool indented(const cscan *sc, size_t k)
{
    size_t off = sc->t[k].off, i = off;
    while (i > 0 && (sc->s[i - 1] == ' ' || sc->s[i - 1] == '\t'))
        i--;
    return i < off && (i == 0 || sc->s[i - 1] == '\n');
}

/* t names a macro by the convention of capitals, digits and '_'. */
static bool capitals(span t)
{
    bool letter = false;
    for (size_t i = 0; i < t.n; i++) {
        if (t.s[i] >= 'a' && t.s[i] <= 'z')
            return false;
        letter = letter || (t.s[i] >= 'A' && t.s[i] <= 'Z');
    }
    return letter;
}

/* The item reads as a statement of a function's body (reply_items.h). */
static bool statement(const cscan *sc, const item *it)
{
    static const char *const words[] = {
        "for",   "if",       "while", "do",   "switch", "return",
        "break", "continue", "goto",  "else", "case",   "default",
        "asm",   "__asm__",  "__asm", "try",  "throw",  "delete"};
    size_t k = it->tok0;
    if (it->kind != ITEM_DECL && it->kind != ITEM_FUNCTION)
        return false;
    for (size_t w = 0; w < LLM_ARRAY_SIZE(words); w++) {
        if (tok_is(sc, k, words[w]))
            return true;
    }
    if (tok_char(sc, k, '(') || tok_char(sc, k, '{'))
        return true;
    span first = tok_span(sc, k);
    if (!tok_ident(sc, k) || keyword(first) ||
        kevo__reply_is_attribute(first) || span_is(first, "static_assert"))
        return false;
    /* *p = v; ++i; */
    size_t off = sc->t[k].off;
    if (gap_has(sc, line_before(sc, k), off, "*&+-!~"))
        return true;
    if (k + 1 >= it->tok1)
        return false;
    if (tok_char(sc, k + 1, '=') || tok_char(sc, k + 1, '['))
        return true;
    if (tok_char(sc, k + 1, '('))
        return it->kind == ITEM_DECL && !capitals(first);
    /* acc += x; s.v = 1; p->v = 1; i++; */
    return gap_has(sc, off + sc->t[k].len, sc->t[k + 1].off, "+-/%^|!~.?=<>");
}

/* The variable the declaration it declares reads as a function's local
 * one (reply_items.h). */
static bool local(const cscan *sc, const item *it)
{
    static const char *const builtins[] = {"threadIdx", "blockIdx", "blockDim",
                                           "gridDim", "warpSize"};
    bool konst = it->konst, space = false, shared = false;
    for (size_t k = it->tok0; k < it->tok1; k++) {
        konst = konst || tok_is(sc, k, "const");
        space = space || tok_is(sc, k, "__device__") ||
                tok_is(sc, k, "__constant__") || tok_is(sc, k, "__managed__");
        shared = shared || tok_is(sc, k, "__shared__");
        for (size_t b = 0; b < LLM_ARRAY_SIZE(builtins); b++) {
            if (tok_is(sc, k, builtins[b]))
                return true;
        }
    }
    if (shared)
        return true;
    if (space)
        return false;
    return !konst || indented(sc, it->tok0);
}

static void directive(const cscan *sc, item *it)
{
    size_t k = it->tok0 + 1;
    it->kind = ITEM_DIRECTIVE;
    if (k >= it->tok1)
        return;
    if (tok_is(sc, k, "define") && tok_ident(sc, k + 1) && k + 1 < it->tok1) {
        it->kind = ITEM_DEFINE;
        it->name = tok_span(sc, k + 1);
        it->defines = true;
    } else if (tok_is(sc, k, "include")) {
        it->kind = ITEM_INCLUDE;
        size_t i = sc->t[k].off + sc->t[k].len;
        while (i < it->end && (sc->s[i] == ' ' || sc->s[i] == '\t'))
            i++;
        char close = i < it->end && sc->s[i] == '<'   ? '>'
                     : i < it->end && sc->s[i] == '"' ? '"'
                                                      : '\0';
        if (!close)
            return;
        const char *e = memchr(sc->s + i + 1, close, it->end - i - 1);
        if (!e)
            return;
        it->header = (span){sc->s + i + 1, (size_t)(e - (sc->s + i + 1))};
        it->angle = close == '>';
    }
}

/* The qualifiers among tokens [a, b). */
static void qualifiers(const cscan *sc, size_t a, size_t b, item *it)
{
    for (size_t k = a; k < b; k++) {
        it->global = it->global || tok_is(sc, k, "__global__");
        it->device = it->device || tok_is(sc, k, "__device__");
        it->konst = it->konst || tok_is(sc, k, "constexpr") ||
                    tok_is(sc, k, "consteval");
    }
}

/* The name before the first of the delimiters (depth 0, past template
 * headers and attributes' arguments) among tokens [a, b), and where that
 * delimiter is (b when none). */
static span declarator(const cscan *sc, size_t a, size_t b, const char *delims,
                       size_t *at)
{
    span last = {NULL, 0};
    for (size_t k = a; k < b; k++) {
        span t = tok_span(sc, k);
        if (tok_is(sc, k, "template") && tok_char(sc, k + 1, '<')) {
            k = skip_template(sc, k + 1, b) - 1;
            continue;
        }
        if (t.n == 1 && strchr(delims, t.s[0])) {
            if (t.s[0] == '(' && last.s && kevo__reply_is_attribute(last)) {
                k = skip_parens(sc, k, b) - 1;
                last = (span){NULL, 0};
                continue;
            }
            *at = k;
            return last;
        }
        if (tok_ident(sc, k))
            last = keyword(t) ? (span){NULL, 0} : t;
    }
    *at = b;
    return last;
}

static void declaration(const cscan *sc, item *it, bool braces)
{
    size_t a = it->tok0, b = it->tok1, at;
    it->kind = ITEM_DECL;
    qualifiers(sc, a, b, it);
    if (tok_is(sc, a, "typedef")) {
        span last = {NULL, 0};
        long depth = 0;
        for (size_t k = a; k < b; k++) {
            if (tok_char(sc, k, '(') || tok_char(sc, k, '{'))
                depth++;
            else if (tok_char(sc, k, ')') || tok_char(sc, k, '}'))
                depth--;
            else if (depth == 0 && tok_ident(sc, k) &&
                     !keyword(tok_span(sc, k)))
                last = tok_span(sc, k);
        }
        it->name = last;
        it->defines = last.s != NULL;
        return;
    }
    if (tok_is(sc, a, "using")) {
        if (tok_ident(sc, a + 1) && tok_char(sc, a + 2, '=')) {
            it->name = tok_span(sc, a + 1);
            it->defines = true;
        }
        return;
    }
    for (size_t k = a; braces && k < b && !tok_char(sc, k, '{'); k++) {
        static const char *const tags[] = {"struct", "class", "union", "enum"};
        for (size_t t = 0; t < LLM_ARRAY_SIZE(tags); t++) {
            if (!tok_is(sc, k, tags[t]))
                continue;
            it->name = declarator(sc, k + 1, b, "{:;", &at);
            it->defines = it->name.s != NULL;
            return;
        }
    }
    it->name = declarator(sc, a, b, "=,[({;", &at);
    it->defines =
        it->name.s && !tok_char(sc, at, '(') && !tok_is(sc, a, "extern");
    it->local = it->defines && local(sc, it);
}

static bool push(items *out, const item *it)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 16;
        item *grown = realloc(out->v, cap * sizeof *grown);
        if (!grown)
            return false;
        out->v = grown;
        out->cap = cap;
    }
    out->v[out->n++] = *it;
    return true;
}

/* What a '{' at depth 0 (token k of an item from token a) opens: a
 * function body (1), a scope (2), or an initializer or a class (0). */
static int brace_opens(const cscan *sc, size_t a, size_t k, bool eq)
{
    static const char *const after[] = {"const",       "noexcept", "override",
                                        "final",       "mutable",  "volatile",
                                        "__restrict__"};
    if (tok_is(sc, a, "namespace") ||
        (tok_is(sc, a, "inline") && tok_is(sc, a + 1, "namespace")) ||
        (k == a + 1 && tok_is(sc, a, "extern")))
        return 2;
    if (k == a || eq)
        return 0;
    if (tok_char(sc, k - 1, ')'))
        return 1;
    for (size_t q = 0; q < LLM_ARRAY_SIZE(after); q++) {
        if (!tok_is(sc, k - 1, after[q]))
            continue;
        for (size_t j = a; j < k; j++) {
            if (tok_char(sc, j, ')'))
                return 1;
        }
    }
    return 0;
}

static bool split(const cscan *sc, size_t a, size_t b, size_t depth, items *out)
{
    size_t k = a;
    while (k < b) {
        item it = {.tok0 = k, .start = sc->t[k].off, .depth = depth};
        if (tok_char(sc, k, '#') && starts_line(sc, k)) {
            it.end = directive_end(sc, sc->t[k].off);
            size_t j = k + 1;
            while (j < b && sc->t[j].off < it.end)
                j++;
            it.tok1 = j;
            directive(sc, &it);
            if (!push(out, &it))
                return false;
            k = j;
            continue;
        }
        long paren = 0, brace = 0;
        bool eq = false, braces = false;
        int opens = -1;
        size_t body = SIZE_MAX, j = k;
        for (; j < b; j++) {
            if (paren == 0 && brace == 0 && tok_is(sc, j, "template") &&
                tok_char(sc, j + 1, '<')) {
                j = skip_template(sc, j + 1, b) - 1;
                continue;
            }
            if (j > k && paren == 0 && brace == 0 && tok_char(sc, j, '#') &&
                starts_line(sc, j))
                break; /* a directive: the item lacked its ';' */
            if (tok_char(sc, j, '(')) {
                paren++;
            } else if (tok_char(sc, j, ')')) {
                paren -= paren > 0;
            } else if (tok_char(sc, j, '=') && paren == 0 && brace == 0) {
                eq = true;
            } else if (tok_char(sc, j, '{')) {
                if (brace == 0 && paren == 0 && opens < 0) {
                    opens = brace_opens(sc, k, j, eq);
                    body = j;
                    braces = true;
                }
                brace++;
            } else if (tok_char(sc, j, '}')) {
                if (brace == 0 || (--brace == 0 && paren == 0 && opens > 0)) {
                    j++;
                    break;
                }
            } else if (tok_char(sc, j, ';') && brace == 0 && paren == 0) {
                j++;
                break;
            }
        }
        it.tok1 = j > k ? j : k + 1;
        it.end = sc->t[it.tok1 - 1].off + sc->t[it.tok1 - 1].len;
        if (opens == 1) {
            size_t at;
            it.kind = ITEM_FUNCTION;
            it.name = declarator(sc, k, body, "(", &at);
            it.defines = it.name.s != NULL;
            qualifiers(sc, k, at, &it);
        } else if (opens == 2) {
            it.kind = ITEM_SCOPE;
        } else {
            declaration(sc, &it, braces);
        }
        it.statement = statement(sc, &it);
        if (!push(out, &it))
            return false;
        if (opens == 2 && depth < SCOPE_DEPTH_MAX && it.tok1 > body + 1 &&
            tok_char(sc, it.tok1 - 1, '}') &&
            !split(sc, body + 1, it.tok1 - 1, depth + 1, out))
            return false;
        k = it.tok1;
    }
    return true;
}

bool kevo__reply_items(const cscan *sc, items *out)
{
    *out = (items){0};
    return split(sc, 0, sc->nt, 0, out);
}

void kevo__reply_items_free(items *it)
{
    free(it->v);
    *it = (items){0};
}

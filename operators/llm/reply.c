/*
 * reply.c: the llm operator's reply parser (see reply.h for what it
 * accepts).
 *
 * The reply is first normalised (CRLF to LF) and split into lines. A reply
 * with a SEARCH marker line is read as edits and applied to the parent;
 * any other reply is searched for a whole kernel in its fences (or, with no
 * fence at all, in its bare text). Then the child's kevo:launch and
 * kevo:param blocks are checked and, where lost, restored. A small scanner
 * of C/CUDA source (comments, literals, identifiers and brackets) serves
 * the fence choice, the completeness check of a cut-off fence, and the
 * block repair. Everything is plain C and libc, with lib/strbuf.c's
 * kevo_buf for the strings it builds.
 */
#include "reply.h"

#include "kevo_private.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define REPLY_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define REPLY_PRINTF(f, a)
#endif

/* ---- characters ---------------------------------------------------------- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_ident_char(char c)
{
    return is_ident_start(c) || is_digit(c);
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* A piece of some text; not NUL-terminated. */
typedef struct span {
    const char *s;
    size_t n;
} span;

static span trim(span t)
{
    while (t.n > 0 && is_space(t.s[0])) {
        t.s++;
        t.n--;
    }
    while (t.n > 0 && is_space(t.s[t.n - 1]))
        t.n--;
    return t;
}

static bool starts_with(span t, const char *prefix)
{
    size_t n = strlen(prefix);
    return t.n >= n && memcmp(t.s, prefix, n) == 0;
}

/* t starts with the word w, followed by the end or a non-identifier. */
static bool starts_with_word(span t, const char *w)
{
    size_t n = strlen(w);
    return starts_with(t, w) && (t.n == n || !is_ident_char(t.s[n]));
}

static bool span_eq(span a, span b)
{
    return a.n == b.n && memcmp(a.s, b.s, a.n) == 0;
}

/* ---- messages ------------------------------------------------------------ */

/* Appends a line of text, quoted, for a message: trimmed, control
 * characters as '?', cut after 60 bytes (at a character boundary). */
static void rb_quote(kevo_buf *b, span t)
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
    kevo__buf_puts(b, "'");
    for (size_t i = 0; i < n; i++) {
        char c = t.s[i];
        if ((unsigned char)c < 0x20 || c == 0x7f)
            c = '?';
        kevo__buf_append(b, &c, 1);
    }
    kevo__buf_puts(b, cut ? "...'" : "'");
}

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

static bool split_lines(const char *s, size_t len, lines *out)
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

static span line_span(const char *s, const rline *l)
{
    return (span){s + l->off, l->len};
}

static bool is_blank(span t)
{
    return trim(t).n == 0;
}

/* 1-based line number of offset off in s. */
static size_t line_of(const char *s, size_t off)
{
    size_t n = 1;
    for (size_t i = 0; i < off; i++)
        n += s[i] == '\n';
    return n;
}

/* ---- a scanner of C/CUDA source ------------------------------------------ */

/* A comment: [start, end) from its opening delimiter to past its closing
 * one (a line comment ends before its newline). */
typedef struct cmt {
    size_t start, end;
    size_t line, end_line;
    bool is_block, terminated, own_line;
} cmt;

/* An identifier, or one of the characters ( ) { } ; # (len 1). */
typedef struct tok {
    size_t off, len;
} tok;

typedef struct cscan {
    const char *s;
    size_t n;
    cmt *c;
    size_t nc, capc;
    tok *t;
    size_t nt, capt;
    long depth[3];     /* { ( [ still open */
    bool open_comment; /* a slash-star comment runs to the end */
    bool open_string;  /* a literal is not closed on its line */
    bool failed;       /* out of memory */
} cscan;

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

static void cscan_free(cscan *sc)
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
    for (size_t k = 0; k < sizeof prefixes / sizeof prefixes[0]; k++) {
        if (strlen(prefixes[k]) == n && memcmp(prefixes[k], s, n) == 0)
            return true;
    }
    return false;
}

/* Scans n bytes of source s. Returns false when out of memory. */
static bool cscan_run(cscan *sc, const char *s, size_t n)
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
            if (c && strchr("(){};#", c))
                push_tok(sc, i, 1);
            if (!is_space(c))
                code_on_line = true;
            i++;
        }
    }
    return !sc->failed;
}

static span tok_span(const cscan *sc, size_t k)
{
    return (span){sc->s + sc->t[k].off, sc->t[k].len};
}

static bool tok_is(const cscan *sc, size_t k, const char *w)
{
    size_t n = strlen(w);
    return k < sc->nt && sc->t[k].len == n &&
           memcmp(sc->s + sc->t[k].off, w, n) == 0;
}

static bool has_ident(const cscan *sc, span name)
{
    for (size_t k = 0; k < sc->nt; k++) {
        if (span_eq(tok_span(sc, k), name))
            return true;
    }
    return false;
}

/* The code is complete: no open bracket, comment or literal. */
static bool cscan_complete(const cscan *sc)
{
    return !sc->open_comment && !sc->open_string && sc->depth[0] == 0 &&
           sc->depth[1] == 0 && sc->depth[2] == 0;
}

/* Why the code is not complete, for a message. */
static void describe_incomplete(kevo_buf *b, const cscan *sc)
{
    static const char *const names[] = {"'{'", "'('", "'['"};
    const char *sep = "";
    for (int k = 0; k < 3; k++) {
        if (sc->depth[k] > 0)
            kevo__buf_printf(b, "%s%ld unclosed %s", sep, sc->depth[k],
                             names[k]);
        else if (sc->depth[k] < 0)
            kevo__buf_printf(b, "%s%ld unmatched closing of %s", sep,
                             -sc->depth[k], names[k]);
        else
            continue;
        sep = ", ";
    }
    if (sc->open_comment) {
        kevo__buf_printf(b, "%san unterminated comment", sep);
        sep = ", ";
    }
    if (sc->open_string)
        kevo__buf_printf(b, "%san unterminated string or character literal",
                         sep);
}

/* ---- kevo:launch and kevo:param blocks ----------------------------------- */

enum { TAG_NONE = -1, TAG_LAUNCH = 0, TAG_PARAM = 1 };
static const char *const tag_names[] = {"kevo:launch", "kevo:param"};

static int tag_of(span t)
{
    t = trim(t);
    for (int k = 0; k < 2; k++) {
        size_t n = strlen(tag_names[k]);
        if (starts_with(t, tag_names[k]) && (t.n == n || is_space(t.s[n])))
            return k;
    }
    return TAG_NONE;
}

/* The text of a comment between its delimiters. */
static span cmt_text(const cscan *sc, const cmt *cm)
{
    size_t end = cm->is_block && cm->terminated ? cm->end - 2 : cm->end;
    return (span){sc->s + cm->start + 2, end - (cm->start + 2)};
}

/* The tag a comment starts with: for a slash-star comment its first
 * non-blank line without one leading '*', for a line comment its first
 * line. */
static int cmt_tag(const cscan *sc, const cmt *cm)
{
    span t = cmt_text(sc, cm);
    while (t.n > 0) {
        const char *nl = memchr(t.s, '\n', t.n);
        size_t len = nl ? (size_t)(nl - t.s) : t.n;
        span piece = trim((span){t.s, len});
        if (cm->is_block && piece.n > 0 && piece.s[0] == '*') {
            piece.s++;
            piece.n--;
            piece = trim(piece);
        }
        if (piece.n > 0 || !cm->is_block)
            return tag_of(piece);
        if (!nl)
            break;
        t.s += len + 1;
        t.n -= len + 1;
    }
    return TAG_NONE;
}

/* Where a source's blocks are: the first of each tag, as [start, end) of
 * its whole comment (a run of line comments included). */
typedef struct blocks {
    bool found[2];
    bool whole[2]; /* not a slash-star comment left open */
    size_t start[2], end[2];
} blocks;

static blocks find_blocks(const cscan *sc)
{
    blocks bl = {{false, false}, {false, false}, {0, 0}, {0, 0}};
    for (size_t k = 0; k < sc->nc; k++) {
        const cmt *cm = &sc->c[k];
        int tag = cmt_tag(sc, cm);
        if (tag == TAG_NONE)
            continue;
        size_t end = cm->end;
        if (!cm->is_block) {
            /* The run of line comments, each alone on the next line. */
            size_t last = cm->end_line;
            while (k + 1 < sc->nc) {
                const cmt *nx = &sc->c[k + 1];
                if (nx->is_block || !nx->own_line || nx->line != last + 1 ||
                    cmt_tag(sc, nx) != TAG_NONE)
                    break;
                end = nx->end;
                last = nx->end_line;
                k++;
            }
        }
        if (!bl.found[tag]) {
            bl.found[tag] = true;
            bl.whole[tag] = cm->terminated;
            bl.start[tag] = cm->start;
            bl.end[tag] = end;
        }
    }
    return bl;
}

/* A short list of names, each at most 63 characters. */
#define NAME_MAX_LEN 63
#define NAMES_MAX 32
typedef struct names {
    char v[NAMES_MAX][NAME_MAX_LEN + 1];
    size_t n;
    bool overflow;
} names;

static void names_add(names *ns, span w)
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

static bool names_has(const names *ns, const char *name)
{
    for (size_t k = 0; k < ns->n; k++) {
        if (strcmp(ns->v[k], name) == 0)
            return true;
    }
    return false;
}

static void names_list(kevo_buf *b, const names *ns)
{
    for (size_t k = 0; k < ns->n; k++)
        kevo__buf_printf(b, "%s%s", k ? ", " : "", ns->v[k]);
    if (ns->overflow)
        kevo__buf_puts(b, ", ...");
}

/* The kernels a launch block launches: each identifier before a '<<<'. */
static void launch_kernels(span block, names *ns)
{
    for (size_t i = 0; i + 3 <= block.n; i++) {
        if (memcmp(block.s + i, "<<<", 3) != 0)
            continue;
        size_t e = i;
        while (e > 0 && is_space(block.s[e - 1]))
            e--;
        size_t b = e;
        while (b > 0 && is_ident_char(block.s[b - 1]))
            b--;
        if (b < e && is_ident_start(block.s[b]))
            names_add(ns, (span){block.s + b, e - b});
        while (i + 1 < block.n && block.s[i + 1] == '<')
            i++;
    }
}

/* The parameters a param block declares: each 'NAME in ...' line. */
static void param_names(span block, names *ns)
{
    size_t i = 0;
    while (i < block.n) {
        const char *nl = memchr(block.s + i, '\n', block.n - i);
        size_t len = nl ? (size_t)(nl - (block.s + i)) : block.n - i;
        span t = trim((span){block.s + i, len});
        i += len + 1;
        if (starts_with(t, "//") || starts_with(t, "/*")) {
            t.s += 2;
            t.n -= 2;
        } else if (starts_with(t, "*") && !starts_with(t, "*/")) {
            t.s++;
            t.n--;
        }
        t = trim(t);
        if (tag_of(t) == TAG_PARAM) {
            size_t n = strlen(tag_names[TAG_PARAM]);
            t = trim((span){t.s + n, t.n - n});
        }
        size_t w = 0;
        while (w < t.n && is_ident_char(t.s[w]))
            w++;
        if (w == 0 || !is_ident_start(t.s[0]))
            continue;
        span rest = trim((span){t.s + w, t.n - w});
        if (starts_with(rest, "in") &&
            (rest.n == 2 || is_space(rest.s[2]) || rest.s[2] == '{'))
            names_add(ns, (span){t.s, w});
    }
}

/* The names of the __global__ functions of a source. */
static void global_kernels(const cscan *sc, names *ns)
{
    static const char *const attrs[] = {
        "__launch_bounds__", "__launch_bounds", "__cluster_dims__",
        "__maxnreg__",       "__attribute__",   "__declspec",
        "alignas",           "__align__",       "__nv_pure__"};
    for (size_t k = 0; k < sc->nt; k++) {
        if (!tok_is(sc, k, "__global__"))
            continue;
        span last = {NULL, 0};
        for (size_t j = k + 1; j < sc->nt && j < k + 256; j++) {
            span t = tok_span(sc, j);
            if (t.n == 1 && strchr("{};", t.s[0]))
                break;
            if (t.n == 1 && t.s[0] == '(') {
                bool attr = false;
                for (size_t a = 0; a < sizeof attrs / sizeof attrs[0]; a++)
                    attr = attr ||
                           (last.s &&
                            span_eq(last, (span){attrs[a], strlen(attrs[a])}));
                if (!attr) {
                    if (last.s)
                        names_add(ns, last);
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
            if (t.n == 1 && strchr(")#", t.s[0]))
                continue;
            last = t;
        }
    }
}

/* name is #define'd in the source. */
static bool defines(const cscan *sc, const char *name)
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

/* name appears as an identifier in t. */
static bool span_has_ident(span t, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i + n <= t.n; i++) {
        if (memcmp(t.s + i, name, n) == 0 &&
            (i == 0 || !is_ident_char(t.s[i - 1])) &&
            (i + n == t.n || !is_ident_char(t.s[i + n])))
            return true;
    }
    return false;
}

/* ---- the parse ----------------------------------------------------------- */

/* A fenced block of the reply. */
typedef struct fence {
    size_t open;     /* reply line of the opening fence (0-based) */
    size_t nlines;   /* content lines */
    char label[24];  /* the info string's first word, lower case */
    char ch;         /* '`' or '~' */
    bool closed;     /* a closing fence was found */
    bool c_family;   /* labelled as C/C++/CUDA, or not labelled */
    bool has_global; /* holds a __global__ identifier */
    bool has_launch; /* holds a kevo:launch block */
    bool complete;   /* no open bracket, comment or literal */
    char *code;      /* its content (C-family fences only) */
    size_t code_len;
    cscan sc; /* the scan of code */
} fence;

/* A source a lost block can be restored from. */
typedef struct source {
    const char *text;
    size_t len;
    char label[32];
} source;

typedef struct ctx {
    const char *parent;
    size_t parent_len;
    size_t max_child;
    char *text; /* the normalised reply */
    size_t text_len;
    lines rl;
    fence *fences;
    size_t nfences;
    kevo_reply_result *out;
    kevo_buf why;  /* the failure's reason */
    kevo_buf note; /* what was done */
    bool nomem;
    size_t work;     /* line and substring comparisons made placing edits */
    size_t work_max; /* WORK_PER_BYTE for each byte of max_child */
} ctx;

/* Placing edits compares lines; a reply and a parent made to be slow to
 * match (thousands of identical lines) stop at this many comparisons per
 * byte of the child limit: 2e8 for the default limit, well under a
 * second. */
#define WORK_PER_BYTE 200

static kevo_reply_kind fail(ctx *c, kevo_reply_kind kind, const char *fmt, ...)
    REPLY_PRINTF(3, 4);

static kevo_reply_kind fail(ctx *c, kevo_reply_kind kind, const char *fmt, ...)
{
    kevo__buf_free(&c->why);
    va_list ap;
    va_start(ap, fmt);
    kevo__buf_vprintf(&c->why, fmt, ap);
    va_end(ap);
    c->out->kind = kind;
    return kind;
}

static kevo_reply_kind nomem(ctx *c)
{
    c->nomem = true;
    c->out->kind = KEVO_REPLY_NOMEM;
    return KEVO_REPLY_NOMEM;
}

/* The reason as built so far, for appending: the failure kind is set. */
static kevo_reply_kind fail_with(ctx *c, kevo_reply_kind kind, kevo_buf *b)
{
    kevo__buf_free(&c->why);
    c->why = *b;
    *b = (kevo_buf){0};
    c->out->kind = kind;
    return kind;
}

/* ---- edits --------------------------------------------------------------- */

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

static bool reply_has_edits(const ctx *c)
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
        return nomem(c);
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
                return fail(c, KEVO_REPLY_MALFORMED_EDIT,
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
                return fail(c, KEVO_REPLY_MALFORMED_EDIT,
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
                return fail(c, KEVO_REPLY_MALFORMED_EDIT,
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
        return fail(c, KEVO_REPLY_TRUNCATED,
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
            return fail(c, KEVO_REPLY_MALFORMED_EDIT,
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

static bool line_eq(span a, span b, bool tolerant)
{
    if (tolerant) {
        a = trim(a);
        b = trim(b);
    }
    return span_eq(a, b);
}

/* Finds the SEARCH lines [s0, s0 + sn) of the reply among the lines of
 * cur. */
static size_t match_lines(ctx *c, const char *cur, const lines *cl, size_t s0,
                          size_t sn, bool tolerant, match *m)
{
    size_t count = 0;
    if (sn == 0 || sn > cl->n)
        return 0;
    for (size_t i = 0; i + sn <= cl->n && count < MATCH_CAP; i++) {
        size_t j = 0;
        while (j < sn &&
               line_eq(line_span(cur, &cl->v[i + j]),
                       line_span(c->text, &c->rl.v[s0 + j]), tolerant))
            j++;
        c->work += j + 1;
        if (c->work > c->work_max)
            return 0;
        if (j < sn)
            continue;
        if (count == 0)
            m->first = i;
        if (count < 3)
            m->at[count] = i + 1;
        count++;
    }
    return count;
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
                    m->at[m->count] = line_of(cur, i);
                m->count++;
            }
        }
        if (m->count > 0 || c->work > c->work_max)
            return c->work > c->work_max ? 0 : m->count;
    }
    return 0;
}

/* Leading white space of t. */
static span indent_of(span t)
{
    size_t k = 0;
    while (k < t.n && (t.s[k] == ' ' || t.s[k] == '\t'))
        k++;
    return (span){t.s, k};
}

/* Writes cur with the matched lines replaced by the REPLACE lines of e,
 * re-indented by the difference between the parent's and the SEARCH part's
 * indentation, with the parent's line ending. */
static void replace_lines(const ctx *c, const char *cur, size_t cur_len,
                          const lines *cl, const edit *e, const match *m,
                          kevo_buf *b)
{
    const rline *first = &cl->v[m->first];
    const rline *lastm = &cl->v[m->first + m->sn - 1];
    const char *eol = first->eol == 2 ? "\r\n" : "\n";
    span add = {NULL, 0};
    size_t remove = 0;
    for (size_t j = 0; j < m->sn; j++) {
        span sl = line_span(c->text, &c->rl.v[m->sfirst + j]);
        if (is_blank(sl))
            continue;
        span si = indent_of(sl);
        span pi = indent_of(line_span(cur, &cl->v[m->first + j]));
        if (pi.n > si.n && memcmp(pi.s, si.s, si.n) == 0)
            add = (span){pi.s + si.n, pi.n - si.n};
        else if (si.n > pi.n && memcmp(si.s, pi.s, pi.n) == 0)
            remove = si.n - pi.n;
        break;
    }
    kevo__buf_append(b, cur, first->off);
    for (size_t i = e->r0; i < e->r1; i++) {
        span t = line_span(c->text, &c->rl.v[i]);
        if (!is_blank(t)) {
            if (add.n)
                kevo__buf_append(b, add.s, add.n);
            size_t w = indent_of(t).n;
            size_t cut = w < remove ? w : remove;
            t.s += cut;
            t.n -= cut;
        }
        kevo__buf_append(b, t.s, t.n);
        kevo__buf_puts(b, eol);
    }
    size_t rest = lastm->off + lastm->len + lastm->eol;
    kevo__buf_append(b, cur + rest, cur_len - rest);
}

static void replace_substring(const ctx *c, const char *cur, size_t cur_len,
                              const edit *e, const match *m, kevo_buf *b)
{
    const rline *last = &c->rl.v[e->s1 - 1];
    size_t nlen = last->off + last->len - c->rl.v[e->s0].off;
    kevo__buf_append(b, cur, m->first);
    if (e->r1 > e->r0) {
        size_t r0 = c->rl.v[e->r0].off;
        const rline *rl = &c->rl.v[e->r1 - 1];
        kevo__buf_append(b, c->text + r0, rl->off + rl->len - r0);
    }
    kevo__buf_append(b, cur + m->first + nlen, cur_len - m->first - nlen);
}

/* "first line: '...'" of an edit's SEARCH part. */
static void first_search_line(kevo_buf *b, const ctx *c, const edit *e)
{
    for (size_t i = e->s0; i < e->s1; i++) {
        span t = line_span(c->text, &c->rl.v[i]);
        if (!is_blank(t)) {
            kevo__buf_puts(b, "first line: ");
            rb_quote(b, t);
            return;
        }
    }
}

static kevo_reply_kind apply_edits(ctx *c, char **child, size_t *child_len)
{
    edit *ed = NULL;
    size_t n = 0;
    lines cl = {0};
    kevo_buf cur = {0}, next = {0}, msg = {0};
    size_t loose = 0; /* edits not matched exactly */
    size_t loose_at[4];
    int loose_how[4];
    kevo_reply_kind kind = read_edits(c, &ed, &n);
    if (kind != KEVO_REPLY_OK)
        goto done;
    if (!c->parent) {
        kind = fail(c, KEVO_REPLY_NO_PARENT,
                    "the reply holds %zu SEARCH/REPLACE edit%s, but there is "
                    "no parent source to apply %s to",
                    n, n == 1 ? "" : "s", n == 1 ? "it" : "them");
        goto done;
    }
    kevo__buf_append(&cur, c->parent, c->parent_len);
    for (size_t k = 0; k < n; k++) {
        if (cur.failed) {
            kind = nomem(c);
            goto done;
        }
        free(cl.v);
        if (!split_lines(cur.data, cur.len, &cl)) {
            cl.v = NULL;
            kind = nomem(c);
            goto done;
        }
        c->work += cl.n;
        match m;
        size_t count = find_edit(c, cur.data, cur.len, &cl, &ed[k], &m);
        if (c->work > c->work_max) {
            kind = fail(c, KEVO_REPLY_TOO_LARGE,
                        "placing SEARCH block %zu of %zu takes more than %zu "
                        "line comparisons (the reply or the parent is too "
                        "repetitive)",
                        k + 1, n, c->work_max);
            goto done;
        }
        if (count == 0) {
            kevo__buf_printf(&msg,
                             "SEARCH block %zu of %zu not found in the parent",
                             k + 1, n);
            if (k == 1)
                kevo__buf_puts(&msg, " as edited by block 1");
            else if (k > 1)
                kevo__buf_printf(&msg, " as edited by blocks 1-%zu", k);
            kevo__buf_puts(&msg, " (");
            first_search_line(&msg, c, &ed[k]);
            if (k > 0) {
                lines pl = {0};
                match pm;
                if (!split_lines(c->parent, c->parent_len, &pl)) {
                    kind = nomem(c);
                    goto done;
                }
                if (find_edit(c, c->parent, c->parent_len, &pl, &ed[k], &pm))
                    kevo__buf_puts(&msg, "; it matches the parent before the "
                                         "earlier edits changed it");
                free(pl.v);
            }
            kevo__buf_puts(&msg, ")");
            kind = fail_with(c, KEVO_REPLY_EDIT_NOT_FOUND, &msg);
            goto done;
        }
        if (count > 1) {
            kevo__buf_printf(
                &msg,
                "SEARCH block %zu of %zu matches %s%zu places in the "
                "parent (lines",
                k + 1, n, count >= MATCH_CAP ? "at least " : "", count);
            for (size_t i = 0; i < count && i < 3; i++) {
                const char *sep = i == 0                         ? " "
                                  : i + 1 == count && count <= 3 ? " and "
                                                                 : ", ";
                kevo__buf_printf(&msg, "%s%zu", sep, m.at[i]);
            }
            kevo__buf_puts(&msg, count > 3 ? ", ...; " : "; ");
            first_search_line(&msg, c, &ed[k]);
            kevo__buf_puts(&msg, "): add lines around it to make it unique");
            kind = fail_with(c, KEVO_REPLY_EDIT_AMBIGUOUS, &msg);
            goto done;
        }
        if (m.how == HOW_SUBSTRING)
            replace_substring(c, cur.data, cur.len, &ed[k], &m, &next);
        else
            replace_lines(c, cur.data, cur.len, &cl, &ed[k], &m, &next);
        if (next.failed) {
            kind = nomem(c);
            goto done;
        }
        if (next.len > c->max_child) {
            kind = fail(c, KEVO_REPLY_TOO_LARGE,
                        "applying SEARCH block %zu of %zu makes the child "
                        "%zu bytes, over the limit of %zu",
                        k + 1, n, next.len, c->max_child);
            goto done;
        }
        kevo__buf_free(&cur);
        cur = next;
        next = (kevo_buf){0};
        if (m.how != HOW_EXACT) {
            if (loose < 4) {
                loose_at[loose] = k;
                loose_how[loose] = m.how;
            }
            loose++;
        }
    }
    kevo__buf_printf(&c->note, "%zu edit%s applied", n, n == 1 ? "" : "s");
    for (size_t i = 0; i < loose && i < 4; i++)
        kevo__buf_printf(&c->note, "%sedit %zu %s", i ? ", " : " (",
                         loose_at[i] + 1, how_names[loose_how[i]]);
    if (loose > 4)
        kevo__buf_printf(&c->note, " and %zu more not exactly", loose - 4);
    if (loose)
        kevo__buf_puts(&c->note, ")");
    c->out->nedits = n;
    c->out->form = KEVO_REPLY_FORM_EDITS;
    if (cur.failed) {
        kind = nomem(c);
        goto done;
    }
    *child_len = cur.len;
    *child = kevo__buf_take(&cur);
    if (!*child)
        kind = nomem(c);
done:
    free(ed);
    free(cl.v);
    kevo__buf_free(&cur);
    kevo__buf_free(&next);
    kevo__buf_free(&msg);
    return kind;
}

/* ---- whole kernels ------------------------------------------------------- */

/* A fence line: a run of 3 or more '`' or '~' after optional indentation.
 * Returns the run's length (0 when t is no fence), its character and
 * indentation. */
static size_t fence_run(span t, char *ch, size_t *indent)
{
    size_t k = 0;
    while (k < t.n && (t.s[k] == ' ' || t.s[k] == '\t'))
        k++;
    *indent = k;
    if (k == t.n || (t.s[k] != '`' && t.s[k] != '~'))
        return 0;
    *ch = t.s[k];
    size_t r = 0;
    while (k + r < t.n && t.s[k + r] == *ch)
        r++;
    return r >= 3 ? r : 0;
}

static bool c_family_label(const char *label)
{
    static const char *const words[] = {
        "",    "cuda", "cu",  "cuh", "c",        "h",        "c++", "cpp",
        "cxx", "cc",   "hpp", "hxx", "cuda-c++", "cuda_c++", "hh"};
    static const char *const exts[] = {".cu", ".cuh", ".c",   ".h",
                                       ".cc", ".cpp", ".cxx", ".hpp"};
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
        if (strcmp(label, words[k]) == 0)
            return true;
    }
    size_t n = strlen(label);
    for (size_t k = 0; k < sizeof exts / sizeof exts[0]; k++) {
        size_t e = strlen(exts[k]);
        if (n > e && strcmp(label + n - e, exts[k]) == 0)
            return true;
    }
    return false;
}

static void fence_label(kevo_buf *b, const fence *f)
{
    kevo__buf_printf(b, "%c%c%c%s, %zu line%s", f->ch, f->ch, f->ch, f->label,
                     f->nlines, f->nlines == 1 ? "" : "s");
}

static void fences_free(ctx *c)
{
    for (size_t k = 0; k < c->nfences; k++) {
        free(c->fences[k].code);
        cscan_free(&c->fences[k].sc);
    }
    free(c->fences);
    c->fences = NULL;
    c->nfences = 0;
}

/* Collects the fences of the reply, with the code of the C-family ones
 * scanned. */
static kevo_reply_kind read_fences(ctx *c)
{
    size_t cap = 0;
    for (size_t i = 0; i < c->rl.n; i++) {
        char ch;
        size_t ind;
        cap += fence_run(line_span(c->text, &c->rl.v[i]), &ch, &ind) > 0;
    }
    c->fences = calloc(cap ? cap : 1, sizeof *c->fences);
    if (!c->fences)
        return nomem(c);
    for (size_t i = 0; i < c->rl.n; i++) {
        span t = line_span(c->text, &c->rl.v[i]);
        char ch;
        size_t indent;
        size_t run = fence_run(t, &ch, &indent);
        if (!run)
            continue;
        span info = trim((span){t.s + indent + run, t.n - indent - run});
        if (ch == '`' && memchr(info.s, '`', info.n))
            continue; /* inline code, not a fence */
        fence *f = &c->fences[c->nfences++];
        f->open = i;
        f->ch = ch;
        size_t w = 0;
        while (w < info.n && w + 1 < sizeof f->label && info.s[w] > ' ' &&
               info.s[w] < 0x7f && !strchr(":,{}", info.s[w])) {
            f->label[w] = lower(info.s[w]);
            w++;
        }
        f->label[w] = '\0';
        f->c_family = c_family_label(f->label);
        kevo_buf code = {0};
        size_t j = i + 1;
        for (; j < c->rl.n; j++) {
            span u = line_span(c->text, &c->rl.v[j]);
            char ch2;
            size_t ind2;
            size_t run2 = fence_run(u, &ch2, &ind2);
            if (run2 >= run && ch2 == ch &&
                trim((span){u.s + ind2 + run2, u.n - ind2 - run2}).n == 0) {
                f->closed = true;
                break;
            }
            size_t cut = 0;
            while (cut < indent && cut < u.n &&
                   (u.s[cut] == ' ' || u.s[cut] == '\t'))
                cut++;
            if (f->c_family) {
                kevo__buf_append(&code, u.s + cut, u.n - cut);
                kevo__buf_puts(&code, "\n");
            }
            f->nlines++;
        }
        i = j;
        if (!f->c_family)
            continue;
        f->code_len = code.len;
        f->code = kevo__buf_take(&code);
        if (!f->code || !cscan_run(&f->sc, f->code, f->code_len))
            return nomem(c);
        f->has_global = false;
        for (size_t k = 0; k < f->sc.nt; k++)
            f->has_global = f->has_global || tok_is(&f->sc, k, "__global__");
        f->has_launch = find_blocks(&f->sc).found[TAG_LAUNCH];
        f->complete = cscan_complete(&f->sc);
    }
    return KEVO_REPLY_OK;
}

/* The reply, fence-less, starts like C/CUDA source. */
static bool looks_like_code(span t)
{
    static const char *const words[] = {"__global__",
                                        "__device__",
                                        "__host__",
                                        "__constant__",
                                        "__shared__",
                                        "__forceinline__",
                                        "__launch_bounds__",
                                        "template",
                                        "extern",
                                        "static",
                                        "struct",
                                        "typedef",
                                        "namespace",
                                        "using",
                                        "constexpr",
                                        "const",
                                        "inline",
                                        "union",
                                        "enum",
                                        "class",
                                        "void"};
    t = trim(t);
    if (starts_with(t, "#") || starts_with(t, "//") || starts_with(t, "/*"))
        return true;
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
        if (starts_with_word(t, words[k]))
            return true;
    }
    return false;
}

static kevo_reply_kind whole_kernel(ctx *c, char **child, size_t *child_len,
                                    size_t *chosen)
{
    kevo_reply_kind kind = read_fences(c);
    if (kind != KEVO_REPLY_OK)
        return kind;
    *chosen = SIZE_MAX;
    if (c->nfences == 0) {
        /* Bare code: a reply that is nothing but a complete source. */
        size_t first = 0;
        while (first < c->rl.n && is_blank(line_span(c->text, &c->rl.v[first])))
            first++;
        cscan sc;
        if (!cscan_run(&sc, c->text, c->text_len)) {
            cscan_free(&sc);
            return nomem(c);
        }
        bool global = false;
        for (size_t k = 0; k < sc.nt; k++)
            global = global || tok_is(&sc, k, "__global__");
        bool code = first < c->rl.n &&
                    looks_like_code(line_span(c->text, &c->rl.v[first]));
        bool complete = cscan_complete(&sc);
        cscan_free(&sc);
        if (global && code && complete) {
            const char *from = c->text + c->rl.v[first].off;
            size_t len = c->text_len - c->rl.v[first].off;
            *child = malloc(len + 1);
            if (!*child)
                return nomem(c);
            memcpy(*child, from, len);
            (*child)[len] = '\0';
            *child_len = len;
            kevo__buf_printf(&c->note,
                             "whole kernel from the reply's text, which has no "
                             "fences (%zu lines)",
                             c->rl.n - first);
            c->out->form = KEVO_REPLY_FORM_WHOLE;
            return KEVO_REPLY_OK;
        }
        if (global && code)
            return fail(c, KEVO_REPLY_TRUNCATED,
                        "the reply is unfenced code that is incomplete (it "
                        "may have been cut off)");
        if (global)
            return fail(c, KEVO_REPLY_NO_CODE,
                        "the reply mentions __global__ but has no fenced code "
                        "block and no SEARCH/REPLACE edits, and its text does "
                        "not start as code");
        return fail(c, KEVO_REPLY_NO_CODE,
                    "the reply has no fenced code block and no "
                    "SEARCH/REPLACE edits");
    }

    /* The largest fence with a __global__ kernel; the last of equal size. */
    size_t best = SIZE_MAX;
    const fence *cut = NULL;
    for (size_t k = 0; k < c->nfences; k++) {
        const fence *f = &c->fences[k];
        if (!f->c_family)
            continue;
        if (!f->closed && !f->complete) {
            cut = f;
            continue;
        }
        if (f->has_global &&
            (best == SIZE_MAX || f->code_len >= c->fences[best].code_len))
            best = k;
    }
    /* A cut-off fence that was the answer being written. */
    if (cut && (cut->has_global || cut->has_launch || best == SIZE_MAX)) {
        kevo_buf msg = {0};
        kevo__buf_printf(&msg, "the reply ends inside fence %zu of %zu (",
                         (size_t)(cut - c->fences) + 1, c->nfences);
        fence_label(&msg, cut);
        kevo__buf_printf(&msg,
                         ", opened at line %zu of the reply) and its code is "
                         "incomplete: ",
                         cut->open + 1);
        describe_incomplete(&msg, &cut->sc);
        return fail_with(c, KEVO_REPLY_TRUNCATED, &msg);
    }
    if (best == SIZE_MAX) {
        kevo_buf msg = {0};
        bool launch_only = false;
        for (size_t k = 0; k < c->nfences; k++)
            launch_only = launch_only || c->fences[k].has_launch;
        if (c->nfences == 1)
            kevo__buf_puts(&msg, "the reply's only fenced block (");
        else
            kevo__buf_printf(&msg, "none of the reply's %zu fenced blocks (",
                             c->nfences);
        for (size_t k = 0; k < c->nfences && k < 5; k++) {
            if (k)
                kevo__buf_puts(&msg, "; ");
            fence_label(&msg, &c->fences[k]);
        }
        if (c->nfences > 5)
            kevo__buf_puts(&msg, "; ...");
        kevo__buf_printf(
            &msg, ") holds %s__global__ kernel%s",
            c->nfences == 1 ? "no " : "a ",
            launch_only ? " (a kevo:launch block alone is not a kernel)" : "");
        return fail_with(c, KEVO_REPLY_NO_CODE, &msg);
    }
    fence *f = &c->fences[best];
    *chosen = best;
    *child = malloc(f->code_len + 1);
    if (!*child)
        return nomem(c);
    memcpy(*child, f->code, f->code_len + 1);
    *child_len = f->code_len;
    size_t ncode = 0;
    for (size_t k = 0; k < c->nfences; k++)
        ncode += c->fences[k].has_global;
    if (c->nfences == 1)
        kevo__buf_puts(&c->note,
                       "whole kernel from the reply's fenced block (");
    else
        kevo__buf_printf(&c->note, "whole kernel from fence %zu of %zu (",
                         best + 1, c->nfences);
    fence_label(&c->note, f);
    kevo__buf_puts(&c->note, ")");
    if (ncode > 1)
        kevo__buf_printf(
            &c->note, ", the largest of %zu with a __global__ kernel", ncode);
    if (!f->closed) {
        kevo__buf_puts(&c->note, "; the fence is not closed, but its code is "
                                 "complete");
        c->out->fence_unterminated = true;
    }
    c->out->form = KEVO_REPLY_FORM_WHOLE;
    return KEVO_REPLY_OK;
}

/* ---- block repair -------------------------------------------------------- */

/* Restores lost kevo:launch and kevo:param blocks into *child from the
 * sources, in order. */
static kevo_reply_kind repair_blocks(ctx *c, char **child, size_t *child_len,
                                     const source *src, size_t nsrc)
{
    cscan cs = {0};
    cscan ss = {0};
    kevo_buf msg = {0}, head = {0};
    kevo_reply_kind kind = KEVO_REPLY_OK;
    if (!cscan_run(&cs, *child, *child_len)) {
        kind = nomem(c);
        goto done;
    }
    blocks have = find_blocks(&cs);
    names kernels = {0};
    global_kernels(&cs, &kernels);
    span launch = {NULL, 0}, param = {NULL, 0};
    const char *launch_from = NULL, *param_from = NULL;

    if (!have.found[TAG_LAUNCH]) {
        bool any = false;
        for (size_t k = 0; k < nsrc && !launch.s; k++) {
            cscan_free(&ss);
            if (!cscan_run(&ss, src[k].text, src[k].len)) {
                kind = nomem(c);
                goto done;
            }
            blocks bl = find_blocks(&ss);
            if (!bl.found[TAG_LAUNCH] || !bl.whole[TAG_LAUNCH])
                continue;
            span text = {src[k].text + bl.start[TAG_LAUNCH],
                         bl.end[TAG_LAUNCH] - bl.start[TAG_LAUNCH]};
            names want = {0};
            launch_kernels(text, &want);
            const char *missing = NULL, *defined = NULL;
            for (size_t i = 0; i < want.n && !missing; i++) {
                span w = {want.v[i], strlen(want.v[i])};
                if (!names_has(&kernels, want.v[i]) &&
                    !(kernels.overflow && has_ident(&cs, w)))
                    missing = want.v[i];
            }
            /* A parameter of the block's launches that the child turned
             * into a macro of its own leaves the launch unevaluable. */
            names params = {0};
            if (bl.found[TAG_PARAM] && bl.whole[TAG_PARAM])
                param_names((span){src[k].text + bl.start[TAG_PARAM],
                                   bl.end[TAG_PARAM] - bl.start[TAG_PARAM]},
                            &params);
            for (size_t i = 0; i < params.n && !defined; i++) {
                if (span_has_ident(text, params.v[i]) &&
                    defines(&cs, params.v[i]))
                    defined = params.v[i];
            }
            if (!missing && !defined && want.n > 0) {
                launch = text;
                launch_from = src[k].label;
                break;
            }
            if (!any) {
                kevo__buf_printf(&msg,
                                 "the child has no kevo:launch block, and %s's "
                                 "cannot be restored: ",
                                 src[k].label);
                if (missing)
                    kevo__buf_printf(
                        &msg,
                        "it launches '%s', which is not a __global__ "
                        "kernel of the child",
                        missing);
                else if (defined)
                    kevo__buf_printf(
                        &msg,
                        "it uses the parameter '%s', which the child "
                        "#defines itself",
                        defined);
                else
                    kevo__buf_puts(&msg, "it names no kernel");
                if (missing && kernels.n) {
                    kevo__buf_puts(&msg, " (the child's kernels: ");
                    names_list(&msg, &kernels);
                    kevo__buf_puts(&msg, ")");
                } else if (missing) {
                    kevo__buf_puts(&msg,
                                   " (the child has no __global__ kernel)");
                }
            }
            any = true;
        }
        if (!launch.s) {
            if (!any) {
                if (c->parent)
                    kevo__buf_puts(&msg,
                                   "the child has no kevo:launch block, and "
                                   "the parent has none to restore");
                else
                    kevo__buf_puts(&msg,
                                   "the child has no kevo:launch block, and "
                                   "there is no parent to restore one from");
            }
            kind = fail_with(c, KEVO_REPLY_LAUNCH_BLOCK_LOST, &msg);
            goto done;
        }
    }

    if (!have.found[TAG_PARAM]) {
        span own_launch = launch;
        if (have.found[TAG_LAUNCH])
            own_launch = (span){*child + have.start[TAG_LAUNCH],
                                have.end[TAG_LAUNCH] - have.start[TAG_LAUNCH]};
        for (size_t k = 0; k < nsrc && !param.s; k++) {
            cscan_free(&ss);
            if (!cscan_run(&ss, src[k].text, src[k].len)) {
                kind = nomem(c);
                goto done;
            }
            blocks bl = find_blocks(&ss);
            if (!bl.found[TAG_PARAM] || !bl.whole[TAG_PARAM])
                continue;
            span text = {src[k].text + bl.start[TAG_PARAM],
                         bl.end[TAG_PARAM] - bl.start[TAG_PARAM]};
            names declared = {0};
            param_names(text, &declared);
            for (size_t i = 0; i < declared.n; i++) {
                span name = {declared.v[i], strlen(declared.v[i])};
                bool used = has_ident(&cs, name) ||
                            span_has_ident(own_launch, declared.v[i]);
                if (used && !defines(&cs, declared.v[i])) {
                    param = text;
                    param_from = src[k].label;
                    break;
                }
            }
        }
    }

    if (launch.s || param.s) {
        if (launch.s) {
            kevo__buf_append(&head, launch.s, launch.n);
            kevo__buf_puts(&head, "\n");
            kevo__buf_printf(&c->note, "; kevo:launch block restored from %s",
                             launch_from);
            c->out->launch_restored = true;
        }
        if (param.s) {
            kevo__buf_append(&head, param.s, param.n);
            kevo__buf_puts(&head, "\n");
            kevo__buf_printf(&c->note, "; kevo:param block restored from %s",
                             param_from);
            c->out->param_restored = true;
        }
        kevo__buf_puts(&head, "\n");
        kevo__buf_append(&head, *child, *child_len);
        if (head.failed) {
            kind = nomem(c);
            goto done;
        }
        free(*child);
        *child_len = head.len;
        *child = kevo__buf_take(&head);
        if (!*child)
            kind = nomem(c);
    }
done:
    cscan_free(&cs);
    cscan_free(&ss);
    kevo__buf_free(&msg);
    kevo__buf_free(&head);
    return kind;
}

/* ---- the entry points ---------------------------------------------------- */

static kevo_reply_kind check_reply(ctx *c, const char *reply, size_t len)
{
    size_t max_reply =
        c->max_child > SIZE_MAX / 8 ? SIZE_MAX : c->max_child * 8;
    if (len > max_reply)
        return fail(c, KEVO_REPLY_TOO_LARGE,
                    "the reply is %zu bytes, over the limit of %zu", len,
                    max_reply);
    const char *nul = len ? memchr(reply, '\0', len) : NULL;
    if (nul)
        return fail(c, KEVO_REPLY_NUL_BYTE,
                    "the reply holds a NUL byte at offset %zu",
                    (size_t)(nul - reply));
    size_t k = 0;
    while (k < len && (is_space(reply[k]) || reply[k] == '\n'))
        k++;
    if (len == 0)
        return fail(c, KEVO_REPLY_EMPTY, "the reply is empty");
    if (k == len)
        return fail(c, KEVO_REPLY_EMPTY,
                    "the reply holds only white space (%zu bytes)", len);
    return KEVO_REPLY_OK;
}

kevo_reply_kind kevo__reply_parse(const char *reply, size_t reply_len,
                                  const char *parent, size_t max_child,
                                  kevo_reply_result *out)
{
    *out = (kevo_reply_result){0};
    ctx c = {.parent = parent,
             .parent_len = parent ? strlen(parent) : 0,
             .max_child = max_child ? max_child : KEVO_REPLY_DEFAULT_MAX_CHILD,
             .out = out};
    c.work_max = c.max_child > SIZE_MAX / WORK_PER_BYTE
                     ? SIZE_MAX
                     : c.max_child * WORK_PER_BYTE;
    char *child = NULL;
    size_t child_len = 0, chosen = SIZE_MAX;
    source *src = NULL;
    if (!reply)
        reply_len = 0;
    kevo_reply_kind kind = check_reply(&c, reply, reply_len);
    if (kind != KEVO_REPLY_OK)
        goto done;

    /* CRLF (and any run of CRs before an LF) to LF. */
    c.text = malloc(reply_len + 1);
    if (!c.text) {
        kind = nomem(&c);
        goto done;
    }
    for (size_t i = 0; i < reply_len; i++) {
        size_t j = i;
        while (j < reply_len && reply[j] == '\r')
            j++;
        if (j > i && j < reply_len && reply[j] == '\n')
            i = j;
        c.text[c.text_len++] = reply[i];
    }
    c.text[c.text_len] = '\0';
    if (!split_lines(c.text, c.text_len, &c.rl)) {
        kind = nomem(&c);
        goto done;
    }

    if (reply_has_edits(&c))
        kind = apply_edits(&c, &child, &child_len);
    else
        kind = whole_kernel(&c, &child, &child_len, &chosen);
    if (kind != KEVO_REPLY_OK)
        goto done;

    /* Where lost blocks may come from: the reply's other C fences, then
     * the parent. */
    src = calloc(c.nfences + 1, sizeof *src);
    if (!src) {
        kind = nomem(&c);
        goto done;
    }
    size_t nsrc = 0;
    for (size_t k = 0; k < c.nfences; k++) {
        if (k == chosen || !c.fences[k].code)
            continue;
        src[nsrc] = (source){c.fences[k].code, c.fences[k].code_len, ""};
        snprintf(src[nsrc].label, sizeof src[nsrc].label, "fence %zu", k + 1);
        nsrc++;
    }
    if (parent) {
        src[nsrc] = (source){parent, c.parent_len, "the parent"};
        nsrc++;
    }
    kind = repair_blocks(&c, &child, &child_len, src, nsrc);
    if (kind != KEVO_REPLY_OK)
        goto done;

    if (child_len == 0 || child[child_len - 1] != '\n') {
        char *grown = realloc(child, child_len + 2);
        if (!grown) {
            kind = nomem(&c);
            goto done;
        }
        child = grown;
        child[child_len++] = '\n';
        child[child_len] = '\0';
    }
    if (child_len > c.max_child) {
        kind = fail(&c, KEVO_REPLY_TOO_LARGE,
                    "the child is %zu bytes, over the limit of %zu", child_len,
                    c.max_child);
        goto done;
    }
    if (parent) {
        size_t pl = c.parent_len;
        if (pl > 0 && parent[pl - 1] == '\n')
            pl--;
        if (pl == child_len - 1 && memcmp(parent, child, pl) == 0) {
            kind = fail(&c, KEVO_REPLY_UNCHANGED,
                        out->form == KEVO_REPLY_FORM_EDITS
                            ? "the edits leave the parent unchanged"
                            : "the kernel in the reply is the parent's "
                              "source, unchanged");
            goto done;
        }
    }
    if (c.note.failed) {
        kind = nomem(&c);
        goto done;
    }
done:
    if (c.nomem || c.why.failed)
        kind = KEVO_REPLY_NOMEM;
    out->kind = kind;
    if (kind == KEVO_REPLY_OK) {
        out->child = child;
        out->child_len = child_len;
        out->reason = kevo__buf_take(&c.note);
        if (!out->reason) {
            free(child);
            out->child = NULL;
            out->child_len = 0;
            kind = out->kind = KEVO_REPLY_NOMEM;
        }
    } else {
        free(child);
        out->form = KEVO_REPLY_FORM_NONE;
        out->nedits = 0;
        out->launch_restored = out->param_restored = false;
        out->fence_unterminated = false;
        if (kind == KEVO_REPLY_NOMEM) {
            out->reason = malloc(sizeof "out of memory");
            if (out->reason)
                memcpy(out->reason, "out of memory", sizeof "out of memory");
        } else {
            out->reason = kevo__buf_take(&c.why);
        }
    }
    free(src);
    fences_free(&c);
    free(c.rl.v);
    free(c.text);
    kevo__buf_free(&c.why);
    kevo__buf_free(&c.note);
    return kind;
}

void kevo__reply_result_free(kevo_reply_result *r)
{
    if (!r)
        return;
    free(r->child);
    free(r->reason);
    *r = (kevo_reply_result){0};
}

const char *kevo__reply_kind_name(kevo_reply_kind kind)
{
    static const char *const kind_names[] = {
        "ok",        "empty",          "nul_byte",       "no_code",
        "truncated", "malformed_edit", "edit_not_found", "edit_ambiguous",
        "no_parent", "unchanged",      "too_large",      "launch_block_lost",
        "nomem"};
    if ((unsigned)kind >= sizeof kind_names / sizeof kind_names[0])
        return "unknown";
    return kind_names[kind];
}

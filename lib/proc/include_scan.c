/*
 * include_scan.c: finds every way a CUDA source could make the
 * preprocessor open a file, and lets through only the allowed CUDA headers
 * (which the compile worker hands NVRTC from memory: worker/headers.h).
 * The same reading lists the header names a source names, for the worker
 * to follow through the toolkit's headers (kevo__include_each).
 *
 * The scanner reads the source as translation phases 1 to 3 do: a
 * backslash-newline joins two lines, comments are skipped, and string and
 * character literals are skipped so that text inside them is never taken
 * for a directive. Raw strings are matched on the unspliced text, as the
 * compiler does. It is deliberately more suspicious than the preprocessor:
 * a `#` followed by `include` is checked wherever it stands (also inside a
 * macro body), so no way of reaching a directive through macros is missed.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "include_scan.h"

typedef struct scanner {
    const char *s;
    size_t len;
    size_t pos; /* in the raw text */
    int line;   /* 1-based line of pos */
    const char *name;
    kevo_error *err;
    /* Listing instead of checking (kevo__include_each). */
    kevo__include_fn each;
    void *ctx;
} scanner;

/* How long a header name kevo__include_each passes on can be. */
#define EACH_NAME_MAX 1024

const char *const kevo__include_allowed[] = {
    "cuda_fp16.h",
    "cuda_bf16.h",
    "cuda_pipeline.h",
    "cooperative_groups.h",
    "cooperative_groups/reduce.h",
    "mma.h",
};
const size_t kevo__include_nallowed = KEVO_ARRAY_SIZE(kevo__include_allowed);

/* The position after any backslash-newlines at p; *lines counts them. */
static size_t skip_splices(const scanner *sc, size_t p, int *lines)
{
    while (p < sc->len && sc->s[p] == '\\') {
        if (p + 1 < sc->len && sc->s[p + 1] == '\n')
            p += 2;
        else if (p + 2 < sc->len && sc->s[p + 1] == '\r' &&
                 sc->s[p + 2] == '\n')
            p += 3;
        else
            break;
        if (lines)
            (*lines)++;
    }
    return p;
}

/* The k-th logical character from pos (0: the current one), or -1. */
static int peek(const scanner *sc, int k)
{
    if (k == 0 && sc->pos < sc->len && sc->s[sc->pos] != '\\')
        return (unsigned char)sc->s[sc->pos];
    size_t p = skip_splices(sc, sc->pos, NULL);
    for (int i = 0; i < k && p < sc->len; i++)
        p = skip_splices(sc, p + 1, NULL);
    return p < sc->len ? (unsigned char)sc->s[p] : -1;
}

/* Consumes one logical character and returns it (-1 at the end). */
static int get(scanner *sc)
{
    if (sc->pos < sc->len && sc->s[sc->pos] != '\\' && sc->s[sc->pos] != '\n')
        return (unsigned char)sc->s[sc->pos++];
    int lines = 0;
    sc->pos = skip_splices(sc, sc->pos, &lines);
    sc->line += lines;
    if (sc->pos >= sc->len)
        return -1;
    int c = (unsigned char)sc->s[sc->pos++];
    if (c == '\n')
        sc->line++;
    return c;
}

static bool ident_start(int c)
{
    return c == '_' || (c >= 0 && c < 128 && isalpha(c)) || c >= 128;
}

static bool ident_char(int c)
{
    return ident_start(c) || (c >= '0' && c <= '9');
}

/* An identifier from the current character; keeps the first size-1
 * characters in buf. */
static void read_ident(scanner *sc, char *buf, size_t size)
{
    size_t n = 0;
    while (ident_char(peek(sc, 0))) {
        int c = get(sc);
        if (n + 1 < size)
            buf[n++] = (char)c;
    }
    buf[n] = '\0';
}

/* A quoted literal whose opening quote was consumed: up to the matching
 * quote, with backslash escapes, or to the end of the line. */
static void skip_quoted(scanner *sc, int quote)
{
    for (;;) {
        int c = peek(sc, 0);
        if (c < 0 || c == '\n')
            return;
        get(sc);
        if (c == quote)
            return;
        if (c == '\\' && peek(sc, 0) >= 0 && peek(sc, 0) != '\n')
            get(sc);
    }
}

/* A raw string from its opening quote (not yet consumed): matched on the
 * raw text, where line continuations do not count. */
static void skip_raw_string(scanner *sc)
{
    char delim[20];
    size_t n = 0;
    get(sc); /* the quote */
    size_t p = sc->pos;
    while (p < sc->len && sc->s[p] != '(' && n < 16 && sc->s[p] != '\n' &&
           sc->s[p] != '"' && sc->s[p] != ' ' && sc->s[p] != '\\' &&
           sc->s[p] != ')')
        delim[n++] = sc->s[p++];
    if (p >= sc->len || sc->s[p] != '(') {
        /* Not a valid raw string: the compiler rejects it; read on. */
        return;
    }
    p++;
    for (; p < sc->len; p++) {
        if (sc->s[p] == '\n')
            sc->line++;
        if (sc->s[p] == ')' && p + 1 + n < sc->len &&
            memcmp(sc->s + p + 1, delim, n) == 0 && sc->s[p + 1 + n] == '"') {
            sc->pos = p + n + 2;
            return;
        }
    }
    sc->pos = sc->len;
}

/* A pp-number from its first character: digits, letters, '_', '.', signs
 * after e/E/p/P, and digit separators. */
static void skip_number(scanner *sc)
{
    int prev = get(sc);
    for (;;) {
        int c = peek(sc, 0);
        if (ident_char(c) || c == '.') {
            prev = get(sc);
        } else if ((c == '+' || c == '-') &&
                   (prev == 'e' || prev == 'E' || prev == 'p' || prev == 'P')) {
            prev = get(sc);
        } else if (c == '\'' && ident_char(peek(sc, 1))) {
            get(sc);
            prev = get(sc);
        } else {
            return;
        }
    }
}

/* Skips spaces, tabs and block comments (which may span lines); with
 * newlines, also newlines and line comments. */
static void skip_space(scanner *sc, bool newlines)
{
    for (;;) {
        int c = peek(sc, 0);
        if (c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r' ||
            (newlines && c == '\n')) {
            get(sc);
        } else if (c == '/' && peek(sc, 1) == '*') {
            get(sc);
            get(sc);
            for (;;) {
                int d = get(sc);
                if (d < 0 || (d == '*' && peek(sc, 0) == '/')) {
                    get(sc);
                    break;
                }
            }
        } else if (newlines && c == '/' && peek(sc, 1) == '/') {
            while (peek(sc, 0) >= 0 && peek(sc, 0) != '\n')
                get(sc);
        } else {
            return;
        }
    }
}

static bool allowed_std_name(const char *rest)
{
    size_t n = strlen(rest);
    if (n == 0 || rest[0] == '/' || rest[n - 1] == '/' || strstr(rest, "..") ||
        strstr(rest, "//"))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)rest[i];
        if (!(isalnum(c) || c == '_' || c == '.' || c == '/'))
            return false;
    }
    return true;
}

bool kevo__include_allowed_name(const char *header)
{
    size_t prefix = strlen(KEVO__INCLUDE_ALLOWED_PREFIX);
    for (size_t i = 0; i < kevo__include_nallowed; i++) {
        if (strcmp(header, kevo__include_allowed[i]) == 0)
            return true;
    }
    return strncmp(header, KEVO__INCLUDE_ALLOWED_PREFIX, prefix) == 0 &&
           allowed_std_name(header + prefix);
}

/* A header name from the opening '<' or '"' (not yet consumed) to its
 * close on the same logical line. Returns false when it is not closed; buf
 * keeps the first size-1 characters, with unprintable ones as '?'. */
static bool read_header_name(scanner *sc, char *buf, size_t size,
                             bool *truncated)
{
    int close = get(sc) == '<' ? '>' : '"';
    size_t n = 0;
    *truncated = false;
    for (;;) {
        int c = peek(sc, 0);
        if (c < 0 || c == '\n') {
            buf[n] = '\0';
            return false;
        }
        get(sc);
        if (c == close)
            break;
        if (n + 1 < size)
            buf[n++] = (char)(c >= 32 && c < 127 ? c : '?');
        else
            *truncated = true;
    }
    buf[n] = '\0';
    return true;
}

/* Checks the operand of a directive or __has_include at the current
 * position. what is "#include" or "__has_include" and so on. */
static kevo_status check_operand(scanner *sc, const char *what, int line)
{
    char header[EACH_NAME_MAX];
    size_t size = sc->each ? sizeof header : 256;
    bool truncated = false;
    int c = peek(sc, 0);
    if (sc->each) {
        if (c != '<' && c != '"')
            return KEVO_OK;
        bool closed = read_header_name(sc, header, size, &truncated);
        if (!closed || truncated)
            return KEVO_OK;
        return sc->each(sc->ctx, what, c == '<', header, line);
    }
    if (c == '<' || c == '"') {
        bool angle = c == '<';
        bool closed = read_header_name(sc, header, size, &truncated);
        if (closed && angle && !truncated && kevo__include_allowed_name(header))
            return KEVO_OK;
        if (!closed)
            return kevo__error_set_at(
                sc->err, KEVO_EINVALID, sc->name, line, 0,
                "line %d: %s of an unterminated name is not allowed: "
                "kernels may include only " KEVO__INCLUDE_ALLOWED_TEXT,
                line, what);
        return kevo__error_set_at(
            sc->err, KEVO_EINVALID, sc->name, line, 0,
            "line %d: %s of %c%s%s%c is not allowed: kernels may include "
            "only " KEVO__INCLUDE_ALLOWED_TEXT,
            line, what, angle ? '<' : '"', header, truncated ? "..." : "",
            angle ? '>' : '"');
    }
    return kevo__error_set_at(
        sc->err, KEVO_EINVALID, sc->name, line, 0,
        "line %d: computed %s (a macro, not a header name) is not allowed: "
        "kernels may include only " KEVO__INCLUDE_ALLOWED_TEXT,
        line, what);
}

/* After a '#' (consumed): a directive name that opens a file? */
static kevo_status check_directive(scanner *sc, int line)
{
    static const char *const opens[] = {"include", "include_next", "import",
                                        "embed"};
    char word[32], what[40];
    skip_space(sc, false);
    if (!ident_start(peek(sc, 0)))
        return KEVO_OK;
    read_ident(sc, word, sizeof word);
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(opens); i++) {
        if (strcmp(word, opens[i]) == 0) {
            snprintf(what, sizeof what, "#%s", word);
            skip_space(sc, false);
            return check_operand(sc, what, line);
        }
    }
    return KEVO_OK;
}

/* After __has_include and its kin (consumed). */
static kevo_status check_has_include(scanner *sc, const char *word, int line)
{
    skip_space(sc, true);
    if (peek(sc, 0) == '(') {
        get(sc);
        skip_space(sc, true);
    }
    return check_operand(sc, word, line);
}

/* Probes for a file's existence: __has_include and its kin, and the
 * macros of NVRTC's headers that stand for them. */
static bool probe_word(const char *word)
{
    static const char *const probes[] = {"__has_include", "__has_include_next",
                                         "__has_embed", "_CCCL_HAS_INCLUDE"};
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(probes); i++) {
        if (strcmp(word, probes[i]) == 0)
            return true;
    }
    return false;
}

static kevo_status scan(scanner *sc)
{
    char word[32];
    kevo_status rc = KEVO_OK;

    while (rc == KEVO_OK) {
        int c = peek(sc, 0);
        if (c < 0)
            break;
        if (c == '/' && peek(sc, 1) == '/') {
            while (peek(sc, 0) >= 0 && peek(sc, 0) != '\n')
                get(sc);
        } else if (c == '/' && peek(sc, 1) == '*') {
            skip_space(sc, false);
        } else if (c == '"' || c == '\'') {
            get(sc);
            skip_quoted(sc, c);
        } else if ((c >= '0' && c <= '9') ||
                   (c == '.' && peek(sc, 1) >= '0' && peek(sc, 1) <= '9')) {
            skip_number(sc);
        } else if (ident_start(c)) {
            read_ident(sc, word, sizeof word);
            int q = peek(sc, 0);
            bool raw = strcmp(word, "R") == 0 || strcmp(word, "u8R") == 0 ||
                       strcmp(word, "uR") == 0 || strcmp(word, "UR") == 0 ||
                       strcmp(word, "LR") == 0;
            bool prefix = strcmp(word, "u8") == 0 || strcmp(word, "u") == 0 ||
                          strcmp(word, "U") == 0 || strcmp(word, "L") == 0;
            if (raw && q == '"') {
                skip_raw_string(sc);
            } else if (prefix && (q == '"' || q == '\'')) {
                get(sc);
                skip_quoted(sc, q);
            } else if (probe_word(word)) {
                rc = check_has_include(sc, word, sc->line);
            }
        } else if (c == '#' || (c == '%' && peek(sc, 1) == ':') ||
                   (c == '?' && peek(sc, 1) == '?' && peek(sc, 2) == '=')) {
            int line = sc->line;
            get(sc);
            if (c != '#')
                get(sc);
            if (c == '?')
                get(sc);
            int d = peek(sc, 0);
            if (d == '#' || (d == '%' && peek(sc, 1) == ':')) {
                /* ## (token pasting) is no directive. */
                get(sc);
                if (d == '%')
                    get(sc);
                continue;
            }
            rc = check_directive(sc, line);
        } else {
            get(sc);
        }
    }
    return rc;
}

kevo_status kevo__include_scan(const char *source, size_t len, const char *name,
                               kevo_error *err)
{
    scanner sc = {.s = source,
                  .len = source ? len : 0,
                  .line = 1,
                  .name = name,
                  .err = err};
    return scan(&sc);
}

kevo_status kevo__include_each(const char *source, size_t len,
                               kevo__include_fn fn, void *ctx)
{
    scanner sc = {.s = source,
                  .len = source ? len : 0,
                  .line = 1,
                  .each = fn,
                  .ctx = ctx};
    return fn ? scan(&sc) : KEVO_OK;
}

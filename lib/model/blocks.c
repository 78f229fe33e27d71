/*
 * blocks.c: the kevo:launch and kevo:param blocks of a kernel source.
 *
 * srcscan.c finds the blocks among the comments of the source, as lists of
 * stripped lines with their source line numbers. Each block is then parsed
 * line by line: the kevo:launch block here (a launch may continue over
 * lines until its argument list closes), the kevo:param block in
 * paramblock.c. This file also holds the error messages of all three, and
 * the checks, copy and free of the result. Nothing here recurses, and
 * expressions go to kevo_expr_parse(), which bounds its own depth.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks_private.h"

/* ---- errors -------------------------------------------------------------- */

static kevo_status failv(kevo_error *err, kevo_status code, const char *origin,
                         int line, int column, const char *tag, const char *fmt,
                         va_list ap) KEVO_PRINTF(7, 0);

size_t kevo__utf8_length(const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    unsigned char c = s[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (size_t k = 1; k < n; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[k] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* Messages quote source text, which may hold any byte: keep them printable
 * UTF-8, so that they can go to a terminal or into JSON. */
static void sanitize(char *msg)
{
    for (size_t i = 0; msg[i];) {
        size_t n = kevo__utf8_length(msg + i);
        if (n == 0 || (unsigned char)msg[i] < 0x20 || msg[i] == 0x7f) {
            msg[i] = '?';
            n = 1;
        }
        i += n;
    }
}

static kevo_status failv(kevo_error *err, kevo_status code, const char *origin,
                         int line, int column, const char *tag, const char *fmt,
                         va_list ap)
{
    char msg[KEVO_ERROR_TEXT_SIZE];
    vsnprintf(msg, sizeof msg, fmt, ap);
    sanitize(msg);
    char where[KEVO_ERROR_SOURCE_SIZE + 32];
    if (origin)
        snprintf(where, sizeof where, "%s:%d", origin, line);
    else
        snprintf(where, sizeof where, "line %d", line);
    if (tag)
        return kevo__error_set_at(err, code, origin, line, column, "%s: %s: %s",
                                  where, tag, msg);
    return kevo__error_set_at(err, code, origin, line, column, "%s: %s", where,
                              msg);
}

kevo_status kevo__blocks_fail(ctx *c, kevo_status code, int line,
                              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kevo_status rc = failv(c->err, code, c->origin, line, 0, c->tag, fmt, ap);
    va_end(ap);
    return rc;
}

static kevo_status fail_at_column(ctx *c, kevo_status code, int line,
                                  int column, const char *fmt, ...)
    KEVO_PRINTF(5, 6);

static kevo_status fail_at_column(ctx *c, kevo_status code, int line,
                                  int column, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kevo_status rc =
        failv(c->err, code, c->origin, line, column, c->tag, fmt, ap);
    va_end(ap);
    return rc;
}

kevo_status kevo__blocks_fail_block(ctx *c, kevo_status code, int line,
                                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kevo_status rc = failv(c->err, code, c->origin, line, 0, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

kevo_status kevo__blocks_fail_inner(ctx *c, const kevo_error *inner,
                                    bool syntax, int line, const char *what)
{
    kevo_status code = inner->code == KEVO_ENOMEM ? KEVO_ENOMEM
                       : syntax                   ? KEVO_EPARSE
                                                  : KEVO_EINVALID;
    return fail_at_column(c, code, line, inner->column, "%s%s%s", what,
                          *what ? ": " : "", inner->text);
}

kevo_status kevo__blocks_expr(ctx *c, span t, int line, const char *what,
                              kevo_expr **out)
{
    *out = NULL;
    char *text = kevo__strndup(t.s, t.n);
    if (!text)
        return kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
    kevo_error inner = KEVO__ERROR_INIT;
    kevo_status rc = kevo_expr_parse(text, out, &inner);
    free(text);
    if (rc != KEVO_OK)
        return kevo__blocks_fail_inner(c, &inner, true, line, what);
    return KEVO_OK;
}

/* ---- kevo:launch --------------------------------------------------------- */

static void launch_free(kevo_launch *l)
{
    free(l->kernel);
    for (int k = 0; k < 3; k++) {
        kevo_expr_free(l->grid[k]);
        kevo_expr_free(l->block[k]);
    }
    kevo_expr_free(l->smem);
    for (int k = 0; k < 3; k++)
        kevo_expr_free(l->cluster[k]);
    kevo_expr_free(l->cond);
    for (size_t k = 0; k < l->nargs; k++) {
        free(l->args[k].text);
        kevo_expr_free(l->args[k].expr);
    }
    free(l->args);
    memset(l, 0, sizeof *l);
}

static void scratch_free(kevo_scratch *sc)
{
    free(sc->name);
    kevo_expr_free(sc->count);
    memset(sc, 0, sizeof *sc);
}

kevo_status kevo__blocks_split(ctx *c, span t, span **items, size_t *count)
{
    *items = NULL;
    *count = 0;
    t = trim(t);
    if (t.n == 0)
        return KEVO_OK;
    size_t n = 1;
    long depth = 0;
    for (size_t i = 0; i < t.n; i++) {
        char ch = t.s[i];
        if (ch == '(' || ch == '[')
            depth++;
        else if (ch == ')' || ch == ']')
            depth--;
        else if (ch == ',' && depth == 0)
            n++;
    }
    span *out = malloc(n * sizeof *out);
    if (!out)
        return kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
    size_t k = 0, from = 0;
    depth = 0;
    for (size_t i = 0; i <= t.n; i++) {
        char ch = i < t.n ? t.s[i] : ',';
        if (ch == '(' || ch == '[')
            depth++;
        else if (ch == ')' || ch == ']')
            depth--;
        else if (ch == ',' && (depth == 0 || i == t.n)) {
            out[k++] = trim((span){t.s + from, i - from});
            from = i + 1;
        }
    }
    *items = out;
    *count = k;
    return KEVO_OK;
}

size_t kevo__blocks_close_paren(span t, size_t open)
{
    long depth = 0;
    for (size_t i = open; i < t.n; i++) {
        if (t.s[i] == '(')
            depth++;
        else if (t.s[i] == ')' && --depth == 0)
            return i;
    }
    return t.n;
}

/* GRID or BLOCK: an expression or dim3(X[, Y[, Z]]). */
static kevo_status parse_dims(ctx *c, span t, int line, const char *what,
                              const char *kernel, kevo_expr **dims)
{
    char label[128];
    static const char axis[] = "xyz";
    span word = leading_ident(t);
    span after = trim((span){t.s + word.n, t.n - word.n});
    if (!span_is(word, "dim3") || after.n == 0 || after.s[0] != '(') {
        snprintf(label, sizeof label, "%s of '%s'", what, kernel);
        return kevo__blocks_expr(c, t, line, label, &dims[0]);
    }
    size_t close = kevo__blocks_close_paren(after, 0);
    if (close != after.n - 1)
        return kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "%s of '%s': expected 'dim3(X[, Y[, Z]])', found "
            "'%.*s%s'",
            what, kernel, quote_len(t), t.s, quote_more(t));
    span *items;
    size_t n;
    kevo_status rc =
        kevo__blocks_split(c, (span){after.s + 1, after.n - 2}, &items, &n);
    if (rc != KEVO_OK)
        return rc;
    if (n == 0 || n > 3) {
        rc = kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "%s of '%s': dim3 takes 1 to 3 components, found %zu", what, kernel,
            n);
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        snprintf(label, sizeof label, "%s.%c of '%s'", what, axis[k], kernel);
        if (items[k].n == 0) {
            rc = kevo__blocks_fail(c, KEVO_EPARSE, line, "%s is empty", label);
            goto done;
        }
        rc = kevo__blocks_expr(c, items[k], line, label, &dims[k]);
        if (rc != KEVO_OK)
            goto done;
    }
done:
    free(items);
    return rc;
}

/* Words that name a C type: a cast to one is recognisable as a cast. */
static bool is_type_word(span w)
{
    static const char *const words[] = {
        "int",     "unsigned",     "signed",  "long",     "short",
        "char",    "float",        "double",  "bool",     "void",
        "size_t",  "int8_t",       "uint8_t", "int16_t",  "uint16_t",
        "int32_t", "uint32_t",     "int64_t", "uint64_t", "ptrdiff_t",
        "half",    "__half",       "const",   "f32",      "f64",
        "f16",     "bf16",         "i8",      "u8",       "i16",
        "u16",     "__nv_bfloat16"};
    for (size_t k = 0; k < KEVO_ARRAY_SIZE(words); k++) {
        if (span_is(w, words[k]))
            return true;
    }
    return false;
}

/* Recognises "(TYPE)" at the start of an argument: a parenthesised run of
 * words with optional trailing '*'. Sets *type to what is inside and *rest
 * to what follows; returns false when t does not start with a cast (a
 * parenthesised expression such as "(n + 1) / 2"). */
static bool leading_cast(span t, span *type, span *rest)
{
    if (t.n == 0 || t.s[0] != '(')
        return false;
    size_t i = 1, words = 0;
    bool stars = false;
    span first = {NULL, 0};
    for (;;) {
        while (i < t.n && is_space(t.s[i]))
            i++;
        if (i < t.n && is_ident_start(t.s[i]) && !stars) {
            span w = leading_ident((span){t.s + i, t.n - i});
            if (words++ == 0)
                first = w;
            i += w.n;
        } else if (i < t.n && t.s[i] == '*' && words > 0) {
            stars = true;
            i++;
        } else {
            break;
        }
    }
    if (words == 0 || i >= t.n || t.s[i] != ')')
        return false;
    span after = trim((span){t.s + i + 1, t.n - i - 1});
    /* "(n) x" is not an expression, so "(n)" must be meant as a cast. */
    bool cast =
        words > 1 || stars || is_type_word(first) || span_is(first, "i32") ||
        span_is(first, "u32") || span_is(first, "i64") ||
        span_is(first, "u64") ||
        (after.n > 0 && (is_ident_char(after.s[0]) || after.s[0] == '('));
    if (cast) {
        *type = trim((span){t.s + 1, i - 1});
        *rest = after;
    }
    return cast;
}

static kevo_status parse_arg(ctx *c, span t, int line, const char *kernel,
                             size_t index, kevo_launch_arg *arg)
{
    char label[128];
    snprintf(label, sizeof label, "argument %zu of '%s'", index + 1, kernel);
    if (t.n == 0)
        return kevo__blocks_fail(c, KEVO_EPARSE, line, "%s is empty", label);
    span type, rest = t;
    arg->cast = KEVO_DTYPE_I32;
    if (leading_cast(t, &type, &rest)) {
        char name[8] = "";
        if (type.n < sizeof name)
            memcpy(name, type.s, type.n);
        kevo_dtype dt;
        if (type.n >= sizeof name || kevo_dtype_parse(name, &dt) != KEVO_OK ||
            !(dt == KEVO_DTYPE_I32 || dt == KEVO_DTYPE_U32 ||
              dt == KEVO_DTYPE_I64 || dt == KEVO_DTYPE_U64))
            return kevo__blocks_fail(
                c, KEVO_EINVALID, line,
                "%s: cast to '%.*s%s' is not allowed: an integer "
                "argument is passed as (i32), (u32), (i64) or (u64)",
                label, quote_len(type), type.s, quote_more(type));
        if (rest.n == 0)
            return kevo__blocks_fail(
                c, KEVO_EPARSE, line,
                "%s: expected an expression after the cast (%s)", label, name);
        arg->has_cast = true;
        arg->cast = dt;
    }
    arg->text = kevo__strndup(t.s, t.n);
    if (!arg->text)
        return kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
    span ident = leading_ident(rest);
    arg->is_name = ident.n == rest.n && ident.n <= KEVO__IDENT_MAX;
    return kevo__blocks_expr(c, rest, line, label, &arg->expr);
}

static kevo_status push_launch(ctx *c, kevo_launch *l)
{
    kevo_blocks *b = c->b;
    if (b->nlaunches == c->launch_cap) {
        size_t cap = c->launch_cap ? c->launch_cap * 2 : 4;
        kevo_launch *grown = realloc(b->launches, cap * sizeof *grown);
        if (!grown)
            return kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
        b->launches = grown;
        c->launch_cap = cap;
    }
    b->launches[b->nlaunches++] = *l;
    memset(l, 0, sizeof *l);
    return KEVO_OK;
}

static const char launch_form[] = "KERNEL<<<GRID, BLOCK[, SMEM]>>>(ARGS)";
static const char scratch_form[] = "scratch NAME TYPE[COUNT] [zero]";
static const char tensormap_form[] = "tensormap NAME BUFFER TYPE dims(...) "
                                     "box(...) [...]";

/* KERNEL<<<GRID, BLOCK[, SMEM]>>>(ARG, ...), as one joined statement. */
static kevo_status parse_launch(ctx *c, span t, int line)
{
    kevo_launch l = {.line = line};
    span *cfg = NULL, *args = NULL;
    size_t ncfg = 0, nargs = 0;
    kevo_status rc = KEVO_OK;
    span name = leading_ident(t);
    span after = trim((span){t.s + name.n, t.n - name.n});
    if (name.n == 0) {
        rc = kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "unknown statement '%.*s%s': expected a launch '%s', "
            "'%s' or '%s'",
            quote_len(t), t.s, quote_more(t), launch_form, scratch_form,
            tensormap_form);
        goto done;
    }
    l.kernel = kevo__strndup(name.s, name.n);
    if (!l.kernel) {
        rc = kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    if (after.n < 3 || memcmp(after.s, "<<<", 3) != 0) {
        if (after.n > 1 && after.s[0] == '<' && after.s[1] != '<')
            rc = kevo__blocks_fail(
                c, KEVO_EINVALID, line,
                "kernel '%s' is launched with a template argument "
                "list: kevo launches plain kernels, so make template "
                "parameters kevo:param macros (e.g. 'BLOCK in {128, "
                "256}', used as BLOCK in the kernel)",
                l.kernel);
        else if (after.n > 0 && is_ident_start(after.s[0]))
            rc = kevo__blocks_fail(
                c, KEVO_EPARSE, line,
                "unknown statement '%.*s%s': expected a launch '%s', "
                "'%s' or '%s'",
                quote_len(t), t.s, quote_more(t), launch_form, scratch_form,
                tensormap_form);
        else
            rc = kevo__blocks_fail(
                c, KEVO_EPARSE, line,
                "expected '<<<' after kernel name '%s' (a launch reads "
                "'%s')",
                l.kernel, launch_form);
        goto done;
    }
    span inner = {after.s + 3, after.n - 3};
    const char *close = NULL;
    for (size_t i = 0; i + 3 <= inner.n; i++) {
        if (memcmp(inner.s + i, ">>>", 3) == 0) {
            close = inner.s + i;
            break;
        }
    }
    if (!close) {
        rc = kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "missing '>>>' to close the launch configuration of '%s'",
            l.kernel);
        goto done;
    }
    rc = kevo__blocks_split(c, (span){inner.s, (size_t)(close - inner.s)}, &cfg,
                            &ncfg);
    if (rc != KEVO_OK)
        goto done;
    if (ncfg < 2 || ncfg > 4) {
        rc = kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "launch configuration of '%s' has %zu item%s: write '%s'", l.kernel,
            ncfg, ncfg == 1 ? "" : "s", launch_form);
        goto done;
    }
    static const char *const cfg_names[] = {"grid", "block",
                                            "shared memory size", "stream"};
    for (size_t k = 0; k < ncfg; k++) {
        if (cfg[k].n == 0) {
            rc = kevo__blocks_fail(c, KEVO_EPARSE, line, "%s of '%s' is empty",
                                   cfg_names[k], l.kernel);
            goto done;
        }
    }
    if (ncfg == 4) {
        rc = kevo__blocks_fail(
            c, KEVO_EINVALID, line,
            "launch of '%s' has a fourth configuration item '%.*s%s' "
            "(a stream): kevo runs all launches on one stream of its "
            "own; write '%s'",
            l.kernel, quote_len(cfg[3]), cfg[3].s, quote_more(cfg[3]),
            launch_form);
        goto done;
    }
    rc = parse_dims(c, cfg[0], line, "grid", l.kernel, l.grid);
    if (rc == KEVO_OK)
        rc = parse_dims(c, cfg[1], line, "block", l.kernel, l.block);
    if (rc == KEVO_OK && ncfg == 3) {
        char label[128];
        snprintf(label, sizeof label, "shared memory size of '%s'", l.kernel);
        rc = kevo__blocks_expr(c, cfg[2], line, label, &l.smem);
    }
    if (rc != KEVO_OK)
        goto done;
    span tail = trim((span){close + 3, (size_t)(t.s + t.n - (close + 3))});
    if (tail.n == 0 || tail.s[0] != '(') {
        rc = kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "expected '(' and the arguments of '%s' after '>>>'", l.kernel);
        goto done;
    }
    size_t rparen = kevo__blocks_close_paren(tail, 0);
    if (rparen == tail.n) {
        rc = kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "missing ')' at the end of the arguments of '%s'", l.kernel);
        goto done;
    }
    span end = trim((span){tail.s + rparen + 1, tail.n - rparen - 1});
    if (end.n > 0 && end.s[0] == ';')
        end = trim((span){end.s + 1, end.n - 1});
    rc = kevo__launch_suffix_parse(c, end, line, &l);
    if (rc != KEVO_OK)
        goto done;
    if (l.pdl && c->b->nlaunches == 0) {
        rc = kevo__blocks_fail(
            c, KEVO_EINVALID, line,
            "the first launch ('%s') cannot be pdl: a programmatic "
            "dependent launch overlaps the launch before it in the block",
            l.kernel);
        goto done;
    }
    rc = kevo__blocks_split(c, (span){tail.s + 1, rparen - 1}, &args, &nargs);
    if (rc != KEVO_OK)
        goto done;
    if (nargs > 0) {
        l.args = calloc(nargs, sizeof *l.args);
        if (!l.args) {
            rc = kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
            goto done;
        }
    }
    for (size_t k = 0; k < nargs; k++) {
        l.nargs = k + 1;
        rc = parse_arg(c, args[k], line, l.kernel, k, &l.args[k]);
        if (rc != KEVO_OK)
            goto done;
    }
    rc = push_launch(c, &l);
done:
    free(cfg);
    free(args);
    launch_free(&l);
    return rc;
}

static const char dtype_list[] =
    "f32, f64, f16, bf16, i8, u8, i16, u16, i32, u32, i64, u64";

/* scratch NAME TYPE[COUNT] [zero] */
static kevo_status parse_scratch(ctx *c, span t, int line)
{
    kevo_blocks *b = c->b;
    kevo_scratch sc = {.line = line};
    kevo_status rc = KEVO_OK;
    span rest = trim((span){t.s + 7, t.n - 7});
    span name = {rest.s, 0};
    while (name.n < rest.n && !is_space(rest.s[name.n]) &&
           rest.s[name.n] != '[')
        name.n++;
    if (name.n == 0) {
        rc =
            kevo__blocks_fail(c, KEVO_EPARSE, line,
                              "scratch needs a name: write '%s'", scratch_form);
        goto done;
    }
    sc.name = kevo__strndup(name.s, name.n);
    if (!sc.name) {
        rc = kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    if (!kevo__is_identifier(sc.name)) {
        rc = kevo__blocks_fail(
            c, KEVO_EINVALID, line,
            "scratch buffer name '%.*s%s' is not an identifier "
            "([A-Za-z_][A-Za-z0-9_]*, at most %d characters)",
            quote_len(name), name.s, quote_more(name), KEVO__IDENT_MAX);
        goto done;
    }
    rest = trim(
        (span){name.s + name.n, (size_t)(rest.s + rest.n - (name.s + name.n))});
    span type = {rest.s, 0};
    while (type.n < rest.n && !is_space(rest.s[type.n]) &&
           rest.s[type.n] != '[')
        type.n++;
    span open = trim((span){type.s + type.n, rest.n - type.n});
    if (type.n == 0 || open.n == 0 || open.s[0] != '[') {
        rc = kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "expected TYPE[COUNT] after scratch buffer '%s': write '%s'",
            sc.name, scratch_form);
        goto done;
    }
    char tname[8] = "";
    if (type.n < sizeof tname)
        memcpy(tname, type.s, type.n);
    if (type.n >= sizeof tname ||
        kevo_dtype_parse(tname, &sc.type) != KEVO_OK) {
        rc = kevo__blocks_fail(
            c, KEVO_EINVALID, line,
            "unknown element type '%.*s%s' for scratch buffer '%s' "
            "(known: %s)",
            quote_len(type), type.s, quote_more(type), sc.name, dtype_list);
        goto done;
    }
    long depth = 0;
    size_t close = 0;
    for (size_t i = 0; i < open.n && !close; i++) {
        if (open.s[i] == '[' || open.s[i] == '(')
            depth++;
        else if ((open.s[i] == ']' || open.s[i] == ')') && --depth == 0)
            close = i;
    }
    if (!close || open.s[close] != ']') {
        rc = kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "missing ']' after the element count of scratch buffer "
            "'%s'",
            sc.name);
        goto done;
    }
    span count = trim((span){open.s + 1, close - 1});
    if (count.n == 0) {
        rc = kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "scratch buffer '%s' needs an element count in '[ ]'", sc.name);
        goto done;
    }
    char label[128];
    snprintf(label, sizeof label, "element count of scratch buffer '%s'",
             sc.name);
    rc = kevo__blocks_expr(c, count, line, label, &sc.count);
    if (rc != KEVO_OK)
        goto done;
    span tail = trim((span){open.s + close + 1, open.n - close - 1});
    if (span_is(tail, "zero")) {
        sc.zero = true;
    } else if (tail.n > 0) {
        rc = kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "unexpected '%.*s%s' after scratch buffer '%s' (only "
            "'zero' may follow the count)",
            quote_len(tail), tail.s, quote_more(tail), sc.name);
        goto done;
    }
    rc = kevo__blocks_name_free(c, "scratch buffer", sc.name, line);
    if (rc != KEVO_OK)
        goto done;
    if (b->nscratch == c->scratch_cap) {
        size_t cap = c->scratch_cap ? c->scratch_cap * 2 : 4;
        kevo_scratch *grown = realloc(b->scratch, cap * sizeof *grown);
        if (!grown) {
            rc = kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
            goto done;
        }
        b->scratch = grown;
        c->scratch_cap = cap;
    }
    b->scratch[b->nscratch++] = sc;
    return KEVO_OK;
done:
    scratch_free(&sc);
    return rc;
}

static bool is_scratch_statement(span t)
{
    span w = leading_ident(t);
    return span_is(w, "scratch") && (t.n == w.n || is_space(t.s[w.n]));
}

/* Whether a launch that reads t so far goes on over the next line: its
 * parentheses are open, or it stops at a ',' or '<<<' or '>>>'. */
static bool launch_continues(span t, long depth)
{
    if (depth > 0)
        return true;
    if (t.n > 0 && t.s[t.n - 1] == ',')
        return true;
    return t.n >= 3 && (memcmp(t.s + t.n - 3, "<<<", 3) == 0 ||
                        memcmp(t.s + t.n - 3, ">>>", 3) == 0);
}

/* Whether the line after line k of bk continues the statement above it
 * without an open parenthesis or a trailing comma: a launch suffix
 * (cluster, pdl, if) after a launch, a clause after a tensormap line. */
static bool next_continues(const block *bk, size_t k, bool tmap)
{
    if (k + 1 >= bk->n)
        return false;
    span nx = bk->lines[k + 1].text;
    return tmap ? kevo__tmapline_continues(nx) : kevo__launch_suffix_starts(nx);
}

static long paren_balance(span t)
{
    long d = 0;
    for (size_t i = 0; i < t.n; i++)
        d += t.s[i] == '(' ? 1 : t.s[i] == ')' ? -1 : 0;
    return d;
}

static kevo_status parse_launch_block(ctx *c, const block *bk)
{
    c->tag = TAG_LAUNCH;
    kevo_status rc = KEVO_OK;
    kevo_buf joined = {0};
    for (size_t k = 0; k < bk->n && rc == KEVO_OK; k++) {
        span t = bk->lines[k].text;
        int line = bk->lines[k].line;
        if (is_scratch_statement(t)) {
            rc = parse_scratch(c, t, line);
            continue;
        }
        bool tmap = kevo__tmapline_is(t);
        long depth = paren_balance(t);
        bool more = launch_continues(t, depth);
        if ((more || next_continues(bk, k, tmap)) && k + 1 < bk->n) {
            kevo__buf_append(&joined, t.s, t.n);
            while (k + 1 < bk->n) {
                if (!more && !next_continues(bk, k, tmap))
                    break;
                span nx = bk->lines[++k].text;
                kevo__buf_append(&joined, " ", 1);
                kevo__buf_append(&joined, nx.s, nx.n);
                depth += paren_balance(nx);
                more = launch_continues(nx, depth);
            }
            if (joined.failed) {
                rc = kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
                break;
            }
            t = (span){joined.data, joined.len};
        }
        rc = tmap ? kevo__tmapline_parse(c, t, line) : parse_launch(c, t, line);
        joined.len = 0;
    }
    kevo__buf_free(&joined);
    if (rc == KEVO_OK && c->b->nlaunches == 0)
        rc = kevo__blocks_fail(c, KEVO_EINVALID, bk->line,
                               "the block declares no launch: add a line '%s'",
                               launch_form);
    return rc;
}

/* ---- the whole source ---------------------------------------------------- */

kevo_status kevo__blocks_name_free(ctx *c, const char *kind, const char *name,
                                   int line)
{
    const kevo_blocks *b = c->b;
    const char *kinds[2] = {"scratch buffer", "tensormap"};
    for (size_t k = 0; k < b->nscratch + b->ntensormaps; k++) {
        bool scratch = k < b->nscratch;
        const char *other =
            scratch ? b->scratch[k].name : b->tensormaps[k - b->nscratch].name;
        int at =
            scratch ? b->scratch[k].line : b->tensormaps[k - b->nscratch].line;
        if (strcmp(other, name) != 0)
            continue;
        if (strcmp(kind, kinds[!scratch]) == 0)
            return kevo__blocks_fail(c, KEVO_EINVALID, line,
                                     "%s '%s' is declared twice (first at "
                                     "line %d)",
                                     kind, name, at);
        return kevo__blocks_fail(c, KEVO_EINVALID, line,
                                 "%s '%s' has the name of %s '%s' (line %d)",
                                 kind, name, kinds[!scratch], name, at);
    }
    return KEVO_OK;
}

/* A name that is not a parameter's: they would clash once parameters
 * become -D macros. */
static kevo_status check_name(ctx *c, const char *kind, const char *name,
                              int line)
{
    size_t index;
    if (kevo_paramspace_find(c->b->params, name, &index) == KEVO_OK)
        return kevo__blocks_fail(c, KEVO_EINVALID, line,
                                 "%s '%s' has the name of a parameter "
                                 "(kevo:param, line %d)",
                                 kind, name, c->param_lines[index]);
    return KEVO_OK;
}

static kevo_status check_names(ctx *c)
{
    const kevo_blocks *b = c->b;
    kevo_status rc = KEVO_OK;
    c->tag = TAG_LAUNCH;
    for (size_t k = 0; k < b->nscratch && rc == KEVO_OK; k++)
        rc = check_name(c, "scratch buffer", b->scratch[k].name,
                        b->scratch[k].line);
    for (size_t k = 0; k < b->ntensormaps && rc == KEVO_OK; k++)
        rc = check_name(c, "tensormap", b->tensormaps[k].name,
                        b->tensormaps[k].line);
    return rc;
}

kevo_status kevo__blocks_parse(const char *source, const char *origin,
                               kevo_blocks *out, kevo_error *err)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!source || !out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo__blocks_parse: NULL argument");
    kevo_blocks b = {0};
    ctx c = {.source = source, .origin = origin, .err = err, .b = &b};
    block blocks[3] = {{0}};
    kevo_status rc = KEVO_OK;
    b.params = kevo_paramspace_new();
    if (!b.params) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    rc = kevo__srcscan_blocks(&c, blocks);
    if (rc != KEVO_OK)
        goto done;
    const block *launch = &blocks[KIND_LAUNCH], *param = &blocks[KIND_PARAM];
    if (!launch->line) {
        if (origin)
            rc = kevo__error_set_at(err, KEVO_EINVALID, origin, 0, 0,
                                    "%s: no kevo:launch block: every kernel "
                                    "source must declare its launches (see "
                                    "kevo-blocks(5))",
                                    origin);
        else
            rc = kevo__error_set(err, KEVO_EINVALID,
                                 "no kevo:launch block: every kernel source "
                                 "must declare its launches (see "
                                 "kevo-blocks(5))");
        goto done;
    }
    b.launch_line = launch->line;
    b.param_line = param->line;
    /* Report the error that comes first in the source. */
    if (param->line && param->line < launch->line) {
        rc = kevo__paramblock_parse(&c, param);
        if (rc == KEVO_OK)
            rc = parse_launch_block(&c, launch);
    } else {
        rc = parse_launch_block(&c, launch);
        if (rc == KEVO_OK && param->line)
            rc = kevo__paramblock_parse(&c, param);
    }
    if (rc == KEVO_OK)
        rc = check_names(&c);
done:
    for (size_t k = 0; k < KEVO_ARRAY_SIZE(blocks); k++)
        free(blocks[k].lines);
    free(c.param_lines);
    if (rc != KEVO_OK) {
        kevo__blocks_free(&b);
        return rc;
    }
    *out = b;
    return KEVO_OK;
}

void kevo__blocks_free(kevo_blocks *b)
{
    if (!b)
        return;
    for (size_t k = 0; k < b->nlaunches; k++)
        launch_free(&b->launches[k]);
    free(b->launches);
    for (size_t k = 0; k < b->nscratch; k++)
        scratch_free(&b->scratch[k]);
    free(b->scratch);
    for (size_t k = 0; k < b->ntensormaps; k++)
        kevo__tensormap_free(&b->tensormaps[k]);
    free(b->tensormaps);
    kevo_paramspace_free(b->params);
    memset(b, 0, sizeof *b);
}

bool kevo__blocks_copy_expr(const kevo_expr *src, kevo_expr **dst)
{
    *dst = src ? kevo__expr_copy(src) : NULL;
    return !src || *dst;
}

static bool copy_launch(const kevo_launch *src, kevo_launch *dst)
{
    dst->line = src->line;
    if (!(dst->kernel = kevo__strdup(src->kernel)))
        return false;
    for (int k = 0; k < 3; k++) {
        if (!kevo__blocks_copy_expr(src->grid[k], &dst->grid[k]) ||
            !kevo__blocks_copy_expr(src->block[k], &dst->block[k]))
            return false;
    }
    if (!kevo__blocks_copy_expr(src->smem, &dst->smem) ||
        !kevo__blocks_copy_expr(src->cond, &dst->cond))
        return false;
    for (int k = 0; k < 3; k++) {
        if (!kevo__blocks_copy_expr(src->cluster[k], &dst->cluster[k]))
            return false;
    }
    dst->pdl = src->pdl;
    if (src->nargs == 0)
        return true;
    if (!(dst->args = calloc(src->nargs, sizeof *dst->args)))
        return false;
    dst->nargs = src->nargs;
    for (size_t k = 0; k < src->nargs; k++) {
        const kevo_launch_arg *a = &src->args[k];
        kevo_launch_arg *d = &dst->args[k];
        d->is_name = a->is_name;
        d->has_cast = a->has_cast;
        d->cast = a->cast;
        if (!(d->text = kevo__strdup(a->text)) ||
            !kevo__blocks_copy_expr(a->expr, &d->expr))
            return false;
    }
    return true;
}

kevo_status kevo__blocks_copy(const kevo_blocks *src, kevo_blocks *dst)
{
    memset(dst, 0, sizeof *dst);
    kevo_blocks b = {.launch_line = src->launch_line,
                     .param_line = src->param_line};
    b.params = kevo_paramspace_copy(src->params);
    if (!b.params)
        goto fail;
    if (src->nlaunches > 0) {
        if (!(b.launches = calloc(src->nlaunches, sizeof *b.launches)))
            goto fail;
        b.nlaunches = src->nlaunches;
        for (size_t k = 0; k < src->nlaunches; k++) {
            if (!copy_launch(&src->launches[k], &b.launches[k]))
                goto fail;
        }
    }
    if (src->nscratch > 0) {
        if (!(b.scratch = calloc(src->nscratch, sizeof *b.scratch)))
            goto fail;
        b.nscratch = src->nscratch;
        for (size_t k = 0; k < src->nscratch; k++) {
            const kevo_scratch *s = &src->scratch[k];
            kevo_scratch *d = &b.scratch[k];
            d->type = s->type;
            d->zero = s->zero;
            d->line = s->line;
            if (!(d->name = kevo__strdup(s->name)) ||
                !kevo__blocks_copy_expr(s->count, &d->count))
                goto fail;
        }
    }
    if (src->ntensormaps > 0) {
        if (!(b.tensormaps = calloc(src->ntensormaps, sizeof *b.tensormaps)))
            goto fail;
        for (size_t k = 0; k < src->ntensormaps; k++) {
            b.ntensormaps = k + 1;
            if (!kevo__tensormap_copy(&src->tensormaps[k], &b.tensormaps[k]))
                goto fail;
        }
    }
    *dst = b;
    return KEVO_OK;
fail:
    kevo__blocks_free(&b);
    return KEVO_ENOMEM;
}

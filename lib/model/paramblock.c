/*
 * paramblock.c: the kevo:param block, one statement a line: the domain of
 * each tuning parameter ('NAME in {V1, V2, ...}', 'NAME in LO..HI [step S]'
 * or 'NAME in pow2(LO..HI)', each with an optional '= DEFAULT') and the
 * constraints between them ('require EXPR'), added to a parameter space.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blocks_private.h"
#include "devprops.h"

/* A cursor over one line. */
typedef struct cursor {
    span t;
    size_t i;
} cursor;

static void skip_ws(cursor *cu)
{
    while (cu->i < cu->t.n && is_space(cu->t.s[cu->i]))
        cu->i++;
}

static span rest_of(const cursor *cu)
{
    return (span){cu->t.s + cu->i, cu->t.n - cu->i};
}

static bool eat(cursor *cu, const char *text)
{
    skip_ws(cu);
    size_t n = strlen(text);
    if (cu->t.n - cu->i >= n && memcmp(cu->t.s + cu->i, text, n) == 0) {
        cu->i += n;
        return true;
    }
    return false;
}

static bool eat_word(cursor *cu, const char *word)
{
    skip_ws(cu);
    span w = leading_ident(rest_of(cu));
    if (!span_is(w, word))
        return false;
    cu->i += w.n;
    return true;
}

/* An integer literal: an optional sign, then decimal or 0x hexadecimal
 * digits. */
static kevo_status parse_int(ctx *c, cursor *cu, int line, const char *name,
                             int64_t *out)
{
    skip_ws(cu);
    span start = rest_of(cu);
    size_t i = cu->i;
    bool neg = false;
    if (i < cu->t.n && (cu->t.s[i] == '-' || cu->t.s[i] == '+'))
        neg = cu->t.s[i++] == '-';
    unsigned base = 10;
    if (i + 1 < cu->t.n && cu->t.s[i] == '0' &&
        (cu->t.s[i + 1] == 'x' || cu->t.s[i + 1] == 'X')) {
        base = 16;
        i += 2;
    }
    uint64_t limit = neg ? UINT64_C(1) << 63 : (UINT64_C(1) << 63) - 1;
    uint64_t v = 0;
    size_t digits = 0;
    bool overflow = false;
    for (; i < cu->t.n; i++, digits++) {
        char d = cu->t.s[i];
        unsigned dv;
        if (is_digit(d))
            dv = (unsigned)(d - '0');
        else if (base == 16 && d >= 'a' && d <= 'f')
            dv = (unsigned)(d - 'a' + 10);
        else if (base == 16 && d >= 'A' && d <= 'F')
            dv = (unsigned)(d - 'A' + 10);
        else
            break;
        if (v > (limit - dv) / base)
            overflow = true;
        else
            v = v * base + dv;
    }
    if (digits == 0 || (i < cu->t.n && is_ident_char(cu->t.s[i]))) {
        span shown = {start.s, 0};
        while (shown.n < start.n && !is_space(start.s[shown.n]) &&
               !strchr(",}=)", start.s[shown.n]))
            shown.n++;
        if (shown.n == 0)
            shown = start;
        if (shown.n == 0)
            return kevo__blocks_fail(
                c, KEVO_EPARSE, line,
                "expected an integer in the declaration of '%s', "
                "found the end of the line",
                name);
        return kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "expected an integer in the declaration of '%s', found "
            "'%.*s%s'",
            name, quote_len(shown), shown.s, quote_more(shown));
    }
    if (overflow)
        return kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "an integer in the declaration of '%s' does not fit in "
            "64 bits",
            name);
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    cu->i = i;
    return KEVO_OK;
}

static kevo_status parse_bounds(ctx *c, cursor *cu, int line, const char *name,
                                int64_t *lo, int64_t *hi)
{
    kevo_status rc = parse_int(c, cu, line, name, lo);
    if (rc != KEVO_OK)
        return rc;
    if (!eat(cu, ".."))
        return kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "expected '..' between the bounds of '%s' (write "
            "'LO..HI')",
            name);
    return parse_int(c, cu, line, name, hi);
}

static const char param_forms[] =
    "'NAME in {V1, V2, ...}', 'NAME in LO..HI [step S]' or "
    "'NAME in pow2(LO..HI)', each with an optional '= DEFAULT', or "
    "'require EXPR'";

static kevo_status note_param_line(ctx *c, int line)
{
    size_t n = kevo_paramspace_count(c->b->params);
    if (n > c->param_lines_cap) {
        size_t cap = c->param_lines_cap ? c->param_lines_cap * 2 : 8;
        while (cap < n)
            cap *= 2;
        int *grown = realloc(c->param_lines, cap * sizeof *grown);
        if (!grown)
            return kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
        c->param_lines = grown;
        c->param_lines_cap = cap;
    }
    c->param_lines[n - 1] = line;
    return KEVO_OK;
}

static kevo_status parse_param_line(ctx *c, span t, int line)
{
    kevo_paramspace *space = c->b->params;
    cursor cu = {t, 0};
    span word = leading_ident(t);
    if (span_is(word, "require")) {
        span expr = trim((span){t.s + word.n, t.n - word.n});
        if (expr.n == 0)
            return kevo__blocks_fail(
                c, KEVO_EPARSE, line,
                "'require' needs an expression, such as 'require "
                "BLOCK * VEC <= 4096'");
        char *text = kevo__strndup(expr.s, expr.n);
        if (!text)
            return kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
        kevo_error inner = KEVO__ERROR_INIT;
        kevo_status rc = kevo_paramspace_add_constraint(space, text, &inner);
        free(text);
        return rc == KEVO_OK
                   ? KEVO_OK
                   : kevo__blocks_fail_inner(c, &inner, true, line, "require");
    }
    cu.i = word.n;
    if (word.n == 0 || !eat_word(&cu, "in"))
        return kevo__blocks_fail(c, KEVO_EPARSE, line,
                                 "unknown statement '%.*s%s': expected %s",
                                 quote_len(t), t.s, quote_more(t), param_forms);
    if (word.n > KEVO__IDENT_MAX)
        return kevo__blocks_fail(
            c, KEVO_EINVALID, line,
            "parameter name '%.*s%s' is longer than %d characters",
            quote_len(word), word.s, quote_more(word), KEVO__IDENT_MAX);
    char name[KEVO__IDENT_MAX + 1];
    memcpy(name, word.s, word.n);
    name[word.n] = '\0';
    size_t index;
    if (kevo_paramspace_find(space, name, &index) == KEVO_OK)
        return kevo__blocks_fail(c, KEVO_EINVALID, line,
                                 "'%s' is declared twice (first at line %d)",
                                 name, c->param_lines[index]);
    if (kevo__devprop_is_name(name))
        return kevo__blocks_fail(
            c, KEVO_EINVALID, line,
            "'%s' is a device property: give the parameter another "
            "name",
            name);

    enum { LIST, RANGE, POW2 } form;
    int64_t *values = NULL;
    size_t nvalues = 0, cap = 0;
    int64_t lo = 0, hi = 0, step = 1, def = 0;
    kevo_status rc = KEVO_OK;
    if (eat(&cu, "{")) {
        form = LIST;
        if (!eat(&cu, "}")) {
            for (;;) {
                int64_t v;
                if ((rc = parse_int(c, &cu, line, name, &v)) != KEVO_OK)
                    goto done;
                if (nvalues >= KEVO_PARAM_DOMAIN_MAX) {
                    rc = kevo__blocks_fail(
                        c, KEVO_EINVALID, line,
                        "the domain of '%s' lists more than %d values", name,
                        KEVO_PARAM_DOMAIN_MAX);
                    goto done;
                }
                if (nvalues == cap) {
                    cap = cap ? cap * 2 : 16;
                    int64_t *grown = realloc(values, cap * sizeof *grown);
                    if (!grown) {
                        rc = kevo__error_set(c->err, KEVO_ENOMEM,
                                             "out of memory");
                        goto done;
                    }
                    values = grown;
                }
                values[nvalues++] = v;
                if (eat(&cu, "}"))
                    break;
                if (!eat(&cu, ",")) {
                    rc = kevo__blocks_fail(
                        c, KEVO_EPARSE, line,
                        "expected ',' or '}' in the domain of '%s'", name);
                    goto done;
                }
            }
        }
        def = nvalues > 0 ? values[0] : 0;
    } else if (eat_word(&cu, "pow2")) {
        form = POW2;
        if (!eat(&cu, "(")) {
            rc = kevo__blocks_fail(
                c, KEVO_EPARSE, line,
                "expected '(' after 'pow2' in the domain of '%s'", name);
            goto done;
        }
        if ((rc = parse_bounds(c, &cu, line, name, &lo, &hi)) != KEVO_OK)
            goto done;
        if (!eat(&cu, ")")) {
            rc = kevo__blocks_fail(
                c, KEVO_EPARSE, line,
                "expected ')' closing 'pow2(' in the domain of '%s'", name);
            goto done;
        }
        def = lo;
    } else {
        form = RANGE;
        skip_ws(&cu);
        span at = rest_of(&cu);
        if (at.n == 0 ||
            !(is_digit(at.s[0]) || at.s[0] == '-' || at.s[0] == '+')) {
            rc = kevo__blocks_fail(
                c, KEVO_EPARSE, line,
                "expected a domain after '%s in': '{V1, V2, ...}', "
                "'LO..HI [step S]' or 'pow2(LO..HI)'",
                name);
            goto done;
        }
        if ((rc = parse_bounds(c, &cu, line, name, &lo, &hi)) != KEVO_OK)
            goto done;
        if (eat_word(&cu, "step") &&
            (rc = parse_int(c, &cu, line, name, &step)) != KEVO_OK)
            goto done;
        def = lo;
    }
    if (eat(&cu, "=") && (rc = parse_int(c, &cu, line, name, &def)) != KEVO_OK)
        goto done;
    skip_ws(&cu);
    if (cu.i < t.n) {
        span extra = rest_of(&cu);
        rc = kevo__blocks_fail(c, KEVO_EPARSE, line,
                               "unexpected '%.*s%s' after the domain of '%s'",
                               quote_len(extra), extra.s, quote_more(extra),
                               name);
        goto done;
    }
    kevo_error inner = KEVO__ERROR_INIT;
    switch (form) {
    case LIST:
        rc = kevo_paramspace_add_values(space, name, values, nvalues, def,
                                        &inner);
        break;
    case RANGE:
        rc = kevo_paramspace_add_range(space, name, lo, hi, step, def, &inner);
        break;
    case POW2:
        rc = kevo_paramspace_add_pow2(space, name, lo, hi, def, &inner);
        break;
    }
    if (rc != KEVO_OK)
        rc = kevo__blocks_fail_inner(c, &inner, false, line, "");
    else
        rc = note_param_line(c, line);
done:
    free(values);
    return rc;
}

kevo_status kevo__paramblock_parse(ctx *c, const block *bk)
{
    c->tag = TAG_PARAM;
    for (size_t k = 0; k < bk->n; k++) {
        kevo_status rc =
            parse_param_line(c, bk->lines[k].text, bk->lines[k].line);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}

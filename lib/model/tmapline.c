/*
 * tmapline.c: the tensormap line of a kevo:launch block,
 *
 *   tensormap NAME BUFFER TYPE dims(D0, ...) box(B0, ...) [strides(S1, ...)]
 *             [offset(E)] [elementstrides(E0, ...)] [swizzle(none|32|64|128)]
 *             [interleave(none|16|32)] [l2(none|64|128|256)] [oob(zero|nan)]
 *
 * parsed into a kevo_tensormap (see kevo-blocks(5)). The clauses after TYPE
 * come in any order, each at most once; dims and box are required. What
 * can only be known at a shape (the values, the alignment rules) is
 * tensormap.c's.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks_private.h"

static const char tmap_form[] =
    "tensormap NAME BUFFER TYPE dims(D0, ...) box(B0, ...) [strides(S1, ...)] "
    "[offset(E)] [elementstrides(E0, ...)] [swizzle(none|32|64|128)] "
    "[interleave(none|16|32)] [l2(none|64|128|256)] [oob(zero|nan)]";

bool kevo__tmapline_continues(span t)
{
    static const char *const words[] = {
        "dims",    "box",        "strides", "offset", "elementstrides",
        "swizzle", "interleave", "l2",      "oob"};
    t = trim(t);
    span w = leading_ident(t);
    span after = trim((span){t.s + w.n, t.n - w.n});
    for (size_t k = 0; k < KEVO_ARRAY_SIZE(words); k++) {
        if (span_is(w, words[k]))
            return after.n > 0 && after.s[0] == '(';
    }
    return false;
}

bool kevo__tmapline_is(span t)
{
    span w = leading_ident(t);
    return span_is(w, "tensormap") && (t.n == w.n || is_space(t.s[w.n]));
}

void kevo__tensormap_free(kevo_tensormap *m)
{
    free(m->name);
    free(m->buffer);
    for (size_t k = 0; k < KEVO__TMAP_RANK_MAX; k++) {
        kevo_expr_free(m->dims[k]);
        kevo_expr_free(m->box[k]);
        kevo_expr_free(m->strides[k]);
        kevo_expr_free(m->elemstrides[k]);
    }
    kevo_expr_free(m->offset);
    memset(m, 0, sizeof *m);
}

bool kevo__tensormap_copy(const kevo_tensormap *src, kevo_tensormap *dst)
{
    memset(dst, 0, sizeof *dst);
    dst->type = src->type;
    dst->line = src->line;
    dst->rank = src->rank;
    dst->swizzle = src->swizzle;
    dst->interleave = src->interleave;
    dst->l2 = src->l2;
    dst->oob_nan = src->oob_nan;
    if (!(dst->name = kevo__strdup(src->name)) ||
        !(dst->buffer = kevo__strdup(src->buffer)) ||
        !kevo__blocks_copy_expr(src->offset, &dst->offset))
        return false;
    for (size_t k = 0; k < KEVO__TMAP_RANK_MAX; k++) {
        if (!kevo__blocks_copy_expr(src->dims[k], &dst->dims[k]) ||
            !kevo__blocks_copy_expr(src->box[k], &dst->box[k]) ||
            !kevo__blocks_copy_expr(src->strides[k], &dst->strides[k]) ||
            !kevo__blocks_copy_expr(src->elemstrides[k], &dst->elemstrides[k]))
            return false;
    }
    return true;
}

/* The next white-space separated word of *rest (moved past it). */
static span next_word(span *rest)
{
    span t = trim(*rest);
    span w = {t.s, 0};
    while (w.n < t.n && !is_space(t.s[w.n]))
        w.n++;
    *rest = (span){t.s + w.n, t.n - w.n};
    return w;
}

/* The clauses, in the order of the form. */
enum {
    CL_DIMS,
    CL_BOX,
    CL_STRIDES,
    CL_OFFSET,
    CL_ELEMSTRIDES,
    CL_SWIZZLE,
    CL_INTERLEAVE,
    CL_L2,
    CL_OOB,
    CL_COUNT
};

static const char *const clause_names[CL_COUNT] = {
    "dims",    "box",        "strides", "offset", "elementstrides",
    "swizzle", "interleave", "l2",      "oob"};

/* A keyword clause's allowed words and the values they stand for. */
typedef struct choice {
    const char *words[4];
    int values[4];
    const char *list; /* for messages */
} choice;

static const choice choices[CL_COUNT] = {
    [CL_SWIZZLE] = {{"none", "32", "64", "128"},
                    {0, 32, 64, 128},
                    "none, 32, 64 or 128"},
    [CL_INTERLEAVE] = {{"none", "16", "32"}, {0, 16, 32}, "none, 16 or 32"},
    [CL_L2] = {{"none", "64", "128", "256"},
               {0, 64, 128, 256},
               "none, 64, 128 or 256"},
    [CL_OOB] = {{"zero", "nan"}, {0, 1}, "zero or nan"},
};

/* The items of a list clause parsed into out[0..n). */
static kevo_status parse_list(ctx *c, const kevo_tensormap *m, int clause,
                              const span *items, size_t n, int line,
                              kevo_expr **out)
{
    for (size_t k = 0; k < n; k++) {
        char label[160];
        snprintf(label, sizeof label, "%s item %zu of tensormap '%s'",
                 clause_names[clause], k + 1, m->name);
        if (items[k].n == 0)
            return kevo__blocks_fail(c, KEVO_EPARSE, line, "%s is empty",
                                     label);
        kevo_status rc = kevo__blocks_expr(c, items[k], line, label, &out[k]);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}

/* How many items the list clause takes for a map of rank (the rank is
 * known once dims was read; dims itself takes 1 to 5). */
static kevo_status check_count(ctx *c, const kevo_tensormap *m, int clause,
                               size_t n, int line)
{
    size_t want = clause == CL_STRIDES ? m->rank - 1 : m->rank;
    if (clause == CL_OFFSET)
        want = 1;
    if (n == want)
        return KEVO_OK;
    if (clause == CL_OFFSET)
        return kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "offset of tensormap '%s' takes one expression (elements from the "
            "start of the buffer), found %zu items",
            m->name, n);
    if (clause == CL_STRIDES && m->rank == 1)
        return kevo__blocks_fail(
            c, KEVO_EINVALID, line,
            "tensormap '%s' has one dimension, which has no stride: leave "
            "strides() out",
            m->name);
    return kevo__blocks_fail(
        c, KEVO_EINVALID, line,
        "%s of tensormap '%s' has %zu item%s and dims has %zu: %s takes %zu "
        "(%s)",
        clause_names[clause], m->name, n, n == 1 ? "" : "s", m->rank,
        clause_names[clause], want,
        clause == CL_STRIDES ? "the byte strides of dims 1 to rank-1"
                             : "one per dimension");
}

static kevo_status parse_choice(ctx *c, const kevo_tensormap *m, int clause,
                                span arg, int line, int *out)
{
    const choice *ch = &choices[clause];
    arg = trim(arg);
    for (size_t k = 0; k < KEVO_ARRAY_SIZE(ch->words) && ch->words[k]; k++) {
        if (span_is(arg, ch->words[k])) {
            *out = ch->values[k];
            return KEVO_OK;
        }
    }
    return kevo__blocks_fail(c, KEVO_EINVALID, line,
                             "%s(%.*s%s) of tensormap '%s': expected %s",
                             clause_names[clause], quote_len(arg), arg.s,
                             quote_more(arg), m->name, ch->list);
}

/* One clause "WORD(ARGS)" at the start of *rest (moved past it). */
static kevo_status parse_clause(ctx *c, kevo_tensormap *m, span *rest, int line,
                                bool seen[CL_COUNT])
{
    span t = trim(*rest);
    span w = leading_ident(t);
    span after = trim((span){t.s + w.n, t.n - w.n});
    int clause = -1;
    for (int k = 0; k < CL_COUNT && w.n; k++) {
        if (span_is(w, clause_names[k]))
            clause = k;
    }
    if (clause < 0) {
        span bad = t;
        bad.n = w.n ? w.n : 1;
        return kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "unknown clause '%.*s%s' in tensormap '%s' (known: dims, box, "
            "strides, offset, elementstrides, swizzle, interleave, l2, oob)",
            quote_len(bad), bad.s, quote_more(bad), m->name);
    }
    if (after.n == 0 || after.s[0] != '(')
        return kevo__blocks_fail(c, KEVO_EPARSE, line,
                                 "expected '(' after '%s' in tensormap '%s'",
                                 clause_names[clause], m->name);
    size_t close = kevo__blocks_close_paren(after, 0);
    if (close == after.n)
        return kevo__blocks_fail(c, KEVO_EPARSE, line,
                                 "missing ')' after %s( in tensormap '%s'",
                                 clause_names[clause], m->name);
    if (seen[clause])
        return kevo__blocks_fail(c, KEVO_EINVALID, line,
                                 "tensormap '%s' has %s() twice", m->name,
                                 clause_names[clause]);
    if (clause != CL_DIMS && !seen[CL_DIMS])
        return kevo__blocks_fail(
            c, KEVO_EPARSE, line,
            "tensormap '%s': dims(...) comes first after the type, before "
            "%s()",
            m->name, clause_names[clause]);
    seen[clause] = true;
    span inner = {after.s + 1, close - 1};
    *rest = (span){after.s + close + 1, after.n - close - 1};
    if (choices[clause].list) {
        int v = 0;
        kevo_status rc = parse_choice(c, m, clause, inner, line, &v);
        if (clause == CL_SWIZZLE)
            m->swizzle = v;
        else if (clause == CL_INTERLEAVE)
            m->interleave = v;
        else if (clause == CL_L2)
            m->l2 = v;
        else
            m->oob_nan = v == 1;
        return rc;
    }
    span *items = NULL;
    size_t n = 0;
    kevo_status rc = kevo__blocks_split(c, inner, &items, &n);
    if (rc != KEVO_OK)
        return rc;
    if (clause == CL_DIMS) {
        if (n == 0 || n > KEVO__TMAP_RANK_MAX)
            rc = kevo__blocks_fail(c, KEVO_EINVALID, line,
                                   "dims of tensormap '%s' has %zu items: a "
                                   "tensor map has 1 to %d dimensions",
                                   m->name, n, KEVO__TMAP_RANK_MAX);
        else
            m->rank = n;
    } else {
        rc = check_count(c, m, clause, n, line);
    }
    kevo_expr **out = clause == CL_DIMS      ? m->dims
                      : clause == CL_BOX     ? m->box
                      : clause == CL_STRIDES ? m->strides
                      : clause == CL_OFFSET  ? &m->offset
                                             : m->elemstrides;
    if (rc == KEVO_OK)
        rc = parse_list(c, m, clause, items, n, line, out);
    free(items);
    return rc;
}

static kevo_status push(ctx *c, kevo_tensormap *m)
{
    kevo_blocks *b = c->b;
    if (b->ntensormaps == c->tensormap_cap) {
        size_t cap = c->tensormap_cap ? c->tensormap_cap * 2 : 4;
        kevo_tensormap *grown = realloc(b->tensormaps, cap * sizeof *grown);
        if (!grown)
            return kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
        b->tensormaps = grown;
        c->tensormap_cap = cap;
    }
    b->tensormaps[b->ntensormaps++] = *m;
    memset(m, 0, sizeof *m);
    return KEVO_OK;
}

/* The header: NAME BUFFER TYPE. */
static kevo_status parse_head(ctx *c, kevo_tensormap *m, span *rest, int line)
{
    static const char dtype_list[] =
        "f32, f64, f16, bf16, i8, u8, i16, u16, i32, u32, i64, u64";
    span name = next_word(rest), buffer = next_word(rest),
         type = next_word(rest);
    if (type.n == 0)
        return kevo__blocks_fail(c, KEVO_EPARSE, line,
                                 "tensormap needs a name, a buffer and an "
                                 "element type: write '%s'",
                                 tmap_form);
    if (!(m->name = kevo__strndup(name.s, name.n)) ||
        !(m->buffer = kevo__strndup(buffer.s, buffer.n)))
        return kevo__error_set(c->err, KEVO_ENOMEM, "out of memory");
    if (!kevo__is_identifier(m->name))
        return kevo__blocks_fail(c, KEVO_EINVALID, line,
                                 "tensormap name '%.*s%s' is not an identifier "
                                 "([A-Za-z_][A-Za-z0-9_]*, "
                                 "at most %d characters)",
                                 quote_len(name), name.s, quote_more(name),
                                 KEVO__IDENT_MAX);
    if (!kevo__is_identifier(m->buffer))
        return kevo__blocks_fail(
            c, KEVO_EINVALID, line,
            "buffer '%.*s%s' of tensormap '%s' is not an identifier: name a "
            "task buffer or a scratch buffer",
            quote_len(buffer), buffer.s, quote_more(buffer), m->name);
    char tname[8] = "";
    if (type.n < sizeof tname)
        memcpy(tname, type.s, type.n);
    if (type.n >= sizeof tname || kevo_dtype_parse(tname, &m->type) != KEVO_OK)
        return kevo__blocks_fail(
            c, KEVO_EINVALID, line,
            "unknown element type '%.*s%s' for tensormap '%s' (known: %s)",
            quote_len(type), type.s, quote_more(type), m->name, dtype_list);
    return KEVO_OK;
}

kevo_status kevo__tmapline_parse(ctx *c, span t, int line)
{
    kevo_tensormap m = {.line = line};
    bool seen[CL_COUNT] = {false};
    span rest = trim((span){t.s + 9, t.n - 9});
    kevo_status rc = parse_head(c, &m, &rest, line);
    while (rc == KEVO_OK && trim(rest).n > 0)
        rc = parse_clause(c, &m, &rest, line, seen);
    if (rc != KEVO_OK)
        goto done;
    if (!seen[CL_DIMS] || !seen[CL_BOX]) {
        rc = kevo__blocks_fail(
            c, KEVO_EPARSE, line, "tensormap '%s' needs %s: write '%s'", m.name,
            seen[CL_DIMS] ? "box(...)" : "dims(...)", tmap_form);
        goto done;
    }
    if (m.interleave == 32 && m.swizzle != 32) {
        rc = kevo__blocks_fail(c, KEVO_EINVALID, line,
                               "tensormap '%s' has interleave(32), which "
                               "requires swizzle(32) (cuTensorMapEncodeTiled)",
                               m.name);
        goto done;
    }
    if (m.interleave != 0 && m.rank < 3) {
        rc = kevo__blocks_fail(c, KEVO_EINVALID, line,
                               "tensormap '%s' has interleave(%d) and %zu "
                               "dimension%s: an interleaved map has at least "
                               "3 (cuTensorMapEncodeTiled)",
                               m.name, m.interleave, m.rank,
                               m.rank == 1 ? "" : "s");
        goto done;
    }
    if (m.oob_nan && !kevo_dtype_is_float(m.type)) {
        rc = kevo__blocks_fail(c, KEVO_EINVALID, line,
                               "tensormap '%s' has oob(nan) and element type "
                               "%s: a NaN fill needs a floating-point type",
                               m.name, kevo_dtype_name(m.type));
        goto done;
    }
    rc = kevo__blocks_name_free(c, "tensormap", m.name, line);
    if (rc == KEVO_OK)
        rc = push(c, &m);
done:
    kevo__tensormap_free(&m);
    return rc;
}

/*
 * launch_suffix.c: what may follow a launch's argument list in a
 * kevo:launch block, in any order, each at most once:
 *
 *   cluster(X[, Y[, Z]])   blocks per thread-block cluster
 *   pdl                    programmatic dependent launch
 *   if EXPR                the launch runs only where EXPR is non-zero
 *
 * The expression of an if runs to the end of the statement or to the next
 * suffix word ("pdl", or "cluster" followed by '(') outside parentheses.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks_private.h"

/* Whether the word at t.s[i] (length n) stands alone there. */
static bool word_at(span t, size_t i, const char *word)
{
    size_t n = strlen(word);
    if (i + n > t.n || memcmp(t.s + i, word, n) != 0)
        return false;
    if (i > 0 && is_ident_char(t.s[i - 1]))
        return false;
    return i + n == t.n || !is_ident_char(t.s[i + n]);
}

/* Whether a suffix starts at t.s[i]. */
static bool suffix_at(span t, size_t i)
{
    if (word_at(t, i, "pdl") || word_at(t, i, "if"))
        return true;
    if (!word_at(t, i, "cluster"))
        return false;
    span after = trim((span){t.s + i + 7, t.n - i - 7});
    return after.n > 0 && after.s[0] == '(';
}

bool kevo__launch_suffix_starts(span t)
{
    t = trim(t);
    return t.n > 0 && suffix_at(t, 0);
}

/* cluster(X[, Y[, Z]]) at the start of *rest (moved past it). */
static kevo_status parse_cluster(ctx *c, span *rest, int line, kevo_launch *l)
{
    span after = trim((span){rest->s + 7, rest->n - 7});
    size_t close = kevo__blocks_close_paren(after, 0);
    if (close == after.n)
        return kevo__blocks_fail(c, KEVO_EPARSE, line,
                                 "missing ')' after cluster( of '%s'",
                                 l->kernel);
    *rest = (span){after.s + close + 1, after.n - close - 1};
    span *items = NULL;
    size_t n = 0;
    kevo_status rc =
        kevo__blocks_split(c, (span){after.s + 1, close - 1}, &items, &n);
    if (rc != KEVO_OK)
        return rc;
    if (n == 0 || n > 3) {
        rc = kevo__blocks_fail(c, KEVO_EPARSE, line,
                               "cluster of '%s' takes 1 to 3 components "
                               "(X[, Y[, Z]]), found %zu",
                               l->kernel, n);
        goto done;
    }
    for (size_t k = 0; k < n && rc == KEVO_OK; k++) {
        char label[128];
        snprintf(label, sizeof label, "cluster.%c of '%s'", "xyz"[k],
                 l -> kernel);
        if (items[k].n == 0)
            rc = kevo__blocks_fail(c, KEVO_EPARSE, line, "%s is empty", label);
        else
            rc = kevo__blocks_expr(c, items[k], line, label, &l->cluster[k]);
    }
done:
    free(items);
    return rc;
}

/* The expression of an if: up to the next suffix outside parentheses. */
static span if_expr(span t)
{
    long depth = 0;
    for (size_t i = 0; i < t.n; i++) {
        char ch = t.s[i];
        if (ch == '(')
            depth++;
        else if (ch == ')')
            depth--;
        else if (depth == 0 && i > 0 && suffix_at(t, i))
            return (span){t.s, i};
    }
    return t;
}

kevo_status kevo__launch_suffix_parse(ctx *c, span t, int line, kevo_launch *l)
{
    bool seen_cluster = false, seen_pdl = false, seen_if = false;
    span rest = trim(t);
    while (rest.n > 0) {
        bool *seen;
        const char *what;
        if (word_at(rest, 0, "pdl")) {
            seen = &seen_pdl;
            what = "pdl";
        } else if (word_at(rest, 0, "if")) {
            seen = &seen_if;
            what = "if";
        } else if (suffix_at(rest, 0)) {
            seen = &seen_cluster;
            what = "cluster()";
        } else {
            return kevo__blocks_fail(
                c, KEVO_EPARSE, line,
                "unexpected '%.*s%s' after the launch of '%s' (a launch "
                "may end with cluster(X[, Y[, Z]]), pdl and if EXPR)",
                quote_len(rest), rest.s, quote_more(rest), l->kernel);
        }
        if (*seen)
            return kevo__blocks_fail(c, KEVO_EINVALID, line,
                                     "launch of '%s' has %s twice", l->kernel,
                                     what);
        *seen = true;
        kevo_status rc = KEVO_OK;
        if (seen == &seen_pdl) {
            l->pdl = true;
            rest = (span){rest.s + 3, rest.n - 3};
        } else if (seen == &seen_cluster) {
            rc = parse_cluster(c, &rest, line, l);
        } else {
            span body = trim((span){rest.s + 2, rest.n - 2});
            span e = trim(if_expr(body));
            if (e.n == 0)
                return kevo__blocks_fail(c, KEVO_EPARSE, line,
                                         "'if' after the launch of '%s' needs "
                                         "an expression: write 'if EXPR'",
                                         l->kernel);
            char label[128];
            snprintf(label, sizeof label, "condition of '%s'", l->kernel);
            rc = kevo__blocks_expr(c, e, line, label, &l->cond);
            rest = (span){e.s + e.n, (size_t)(body.s + body.n - (e.s + e.n))};
        }
        if (rc != KEVO_OK)
            return rc;
        rest = trim(rest);
        if (rest.n > 0 && rest.s[0] == ';' &&
            trim((span){rest.s + 1, rest.n - 1}).n == 0)
            rest.n = 0;
    }
    return KEVO_OK;
}

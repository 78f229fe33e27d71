/*
 * reply_join.c: the helper fences a whole kernel needs, joined to it (see
 * reply_join.h).
 */
#include "reply_join.h"

#include <stdlib.h>

#include "reply_items.h"

/* The fences joined so far, and what they launch. */
typedef struct joining {
    ctx *c;
    items *it;    /* the items of each fence (C fences that can join) */
    bool *usable; /* a C fence whose code is complete */
    bool *quoted; /* ... that holds statements: a piece of a body */
    bool *joined;
    size_t *order; /* the joined fences, in the order they joined */
    size_t njoined;
    names launched; /* kernels their kevo:launch blocks launch */
    bool blocks[2]; /* they hold a kevo:launch, kevo:param block */
    bool over;      /* the work limit was passed */
} joining;

/* Some joined fence uses name in its code or launches it. */
static bool used(joining *j, span name)
{
    ctx *c = j->c;
    for (size_t o = 0; o < j->njoined; o++) {
        size_t k = j->order[o];
        c->work += 1 + c->fences[k].sc.nt;
        if (kevo__reply_has_ident(&c->fences[k].sc, 0, c->fences[k].sc.nt,
                                  name))
            return true;
    }
    for (size_t k = 0; k < j->launched.n; k++) {
        if (span_is(name, j->launched.v[k]))
            return true;
    }
    return false;
}

/* Some joined fence defines name. */
static bool defined(joining *j, span name)
{
    ctx *c = j->c;
    for (size_t o = 0; o < j->njoined; o++) {
        size_t k = j->order[o];
        c->work++;
        for (size_t i = 0; i < j->it[k].n; i++) {
            const item *d = &j->it[k].v[i];
            c->work++;
            if (d->defines && span_eq(d->name, name))
                return true;
        }
    }
    return false;
}

static void join(joining *j, size_t k)
{
    const fence *f = &j->c->fences[k];
    blocks bl = kevo__reply_blocks(j->c, f->code, f->code_len);
    j->joined[k] = true;
    j->order[j->njoined++] = k;
    for (int t = 0; t < 2; t++)
        j->blocks[t] = j->blocks[t] || bl.found[t];
    const names *launched = &bl.names[TAG_LAUNCH];
    for (size_t i = 0; i < launched->n; i++)
        kevo__reply_names_add(&j->launched,
                              (span){launched->v[i], strlen(launched->v[i])});
}

/* What fence k would join for (a name the joined fences need, which it
 * declares), and what keeps it out (a name they define already, or a block
 * they hold). When it declares no such name, *body is a name it would
 * join for were its statements and local variables declarations (a piece
 * of a function's body quoted on its own), if any. */
static void weigh(joining *j, size_t k, span *need, span *dup,
                  const char **block, span *body)
{
    *need = *dup = *body = (span){NULL, 0};
    *block = NULL;
    const items *it = &j->it[k];
    for (int lax = 0; lax < 2 && !need->s && !body->s; lax++) {
        for (size_t i = 0; i < it->n && !need->s && !body->s; i++) {
            const item *d = &it->v[i];
            if (!d->defines || !d->name.s ||
                (!lax && (j->quoted[k] || d->local)) || !used(j, d->name) ||
                defined(j, d->name))
                continue;
            if (lax)
                *body = d->name;
            else
                *need = d->name;
        }
    }
    if (!need->s)
        return;
    for (size_t i = 0; i < it->n && !dup->s; i++) {
        const item *d = &it->v[i];
        if (d->defines && d->name.s && defined(j, d->name))
            *dup = d->name;
    }
    const fence *f = &j->c->fences[k];
    blocks bl = kevo__reply_blocks(j->c, f->code, f->code_len);
    if (bl.found[TAG_LAUNCH] && j->blocks[TAG_LAUNCH])
        *block = "kevo:launch";
    else if (bl.found[TAG_PARAM] && j->blocks[TAG_PARAM])
        *block = "kevo:param";
}

/* "fence 1", "fences 1 and 3", "fences 1, 2 and 4" */
static void list_fences(llm_buf *b, const bool *set, size_t n)
{
    size_t count = 0, seen = 0;
    for (size_t k = 0; k < n; k++)
        count += set[k];
    kevo__llm_buf_puts(b, count == 1 ? "fence " : "fences ");
    for (size_t k = 0; k < n; k++) {
        if (!set[k])
            continue;
        seen++;
        kevo__llm_buf_printf(b, "%s%zu",
                             seen == 1       ? ""
                             : seen == count ? " and "
                                             : ", ",
                             k + 1);
    }
}

/* Decides which fences join; the note's parts go to *why and *left.
 * Returns false when out of memory. */
static bool choose(joining *j, size_t chosen, llm_buf *why, llm_buf *left)
{
    ctx *c = j->c;
    size_t nwhy = 0;
    bool *refused = calloc(c->nfences, sizeof *refused);
    if (!refused)
        return false;
    join(j, chosen);
    for (bool changed = true; changed && !j->over;) {
        changed = false;
        /* The last fence that defines a needed name wins. */
        for (size_t k = c->nfences; k-- > 0 && !changed && !j->over;) {
            c->work++;
            if (!j->usable[k] || j->joined[k] || refused[k])
                continue;
            span need, dup, body;
            const char *block;
            weigh(j, k, &need, &dup, &block, &body);
            j->over = c->work > c->work_max;
            if (body.s) {
                refused[k] = true;
                kevo__llm_buf_printf(left,
                                     "; fence %zu is not joined: ", k + 1);
                if (j->quoted[k])
                    kevo__llm_buf_puts(left, "it holds statements, a piece "
                                             "of a function's body");
                else
                    kevo__llm_buf_printf(left,
                                         "it declares '%.*s' as a "
                                         "function's local variable",
                                         (int)body.n, body.s);
                continue;
            }
            if (!need.s)
                continue;
            if (dup.s || block) {
                refused[k] = true;
                kevo__llm_buf_printf(left,
                                     "; fence %zu, which defines '%.*s', "
                                     "is not joined: ",
                                     k + 1, (int)need.n, need.s);
                if (dup.s)
                    kevo__llm_buf_printf(left, "it defines '%.*s' again",
                                         (int)dup.n, dup.s);
                else
                    kevo__llm_buf_printf(left, "it holds a second %s block",
                                         block);
                continue;
            }
            join(j, k);
            changed = true;
            if (nwhy < 4)
                kevo__llm_buf_printf(why, "%s'%.*s'", nwhy ? ", " : "",
                                     (int)need.n, need.s);
            else if (nwhy == 4)
                kevo__llm_buf_puts(why, ", ...");
            nwhy++;
        }
    }
    free(refused);
    return !why->failed && !left->failed;
}

kevo_reply_kind kevo__reply_join_helpers(ctx *c, size_t chosen, char **child,
                                         size_t *child_len)
{
    if (c->nfences < 2)
        return KEVO_REPLY_OK;
    kevo_reply_kind kind = KEVO_REPLY_OK;
    llm_buf why = {0}, left = {0}, code = {0};
    joining j = {.c = c};
    j.it = calloc(c->nfences, sizeof *j.it);
    j.usable = calloc(c->nfences, sizeof *j.usable);
    j.quoted = calloc(c->nfences, sizeof *j.quoted);
    j.joined = calloc(c->nfences, sizeof *j.joined);
    j.order = calloc(c->nfences, sizeof *j.order);
    if (!j.it || !j.usable || !j.quoted || !j.joined || !j.order) {
        kind = kevo__reply_nomem(c);
        goto done;
    }
    for (size_t k = 0; k < c->nfences; k++) {
        const fence *f = &c->fences[k];
        j.usable[k] = f->code && f->complete;
        if (j.usable[k] && !kevo__reply_items(&f->sc, &j.it[k])) {
            kind = kevo__reply_nomem(c);
            goto done;
        }
        for (size_t i = 0; i < j.it[k].n; i++)
            j.quoted[k] = j.quoted[k] || j.it[k].v[i].statement;
    }
    if (!choose(&j, chosen, &why, &left)) {
        kind = kevo__reply_nomem(c);
        goto done;
    }
    if (j.over) {
        kind = kevo__reply_fail(c, KEVO_REPLY_TOO_LARGE,
                                "joining the reply's %zu fences to the "
                                "kernel's takes more than %zu comparisons",
                                c->nfences, c->work_max);
        goto done;
    }
    if (why.len > 0) {
        for (size_t k = 0; k < c->nfences; k++) {
            if (!j.joined[k] || k == chosen)
                continue;
            kevo__llm_buf_append(&code, c->fences[k].code,
                                 c->fences[k].code_len);
            kevo__llm_buf_puts(&code, "\n");
        }
        kevo__llm_buf_append(&code, *child, *child_len);
        j.joined[chosen] = false;
        kevo__llm_buf_puts(&c->note, "; ");
        list_fences(&c->note, j.joined, c->nfences);
        kevo__llm_buf_printf(&c->note, " joined before it, for %s", why.data);
        if (code.failed) {
            kind = kevo__reply_nomem(c);
            goto done;
        }
        free(*child);
        *child_len = code.len;
        *child = kevo__llm_buf_take(&code);
        if (!*child) {
            kind = kevo__reply_nomem(c);
            goto done;
        }
    }
    if (left.len > 0)
        kevo__llm_buf_append(&c->note, left.data, left.len);
done:
    for (size_t k = 0; j.it && k < c->nfences; k++)
        kevo__reply_items_free(&j.it[k]);
    free(j.it);
    free(j.usable);
    free(j.quoted);
    free(j.joined);
    free(j.order);
    kevo__llm_buf_free(&why);
    kevo__llm_buf_free(&left);
    kevo__llm_buf_free(&code);
    return kind;
}

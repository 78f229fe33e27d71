/*
 * reply_host.c: host code dropped from the child (see reply_host.h).
 */
#include "reply_host.h"

#include <stdlib.h>

#include "reply_items.h"

bool kevo__reply_include_allowed(ctx *c, span header, bool angle)
{
    /* A header name longer than this is no header a kernel may have. */
    char name[256];
    if (!angle || header.n == 0 || header.n >= sizeof name)
        return false;
    memcpy(name, header.s, header.n);
    name[header.n] = '\0';
    return c->host->api->include_allowed(c->host->ctx, name) != 0;
}

/* What makes code host code: a call of a host API, a launch, or a name of
 * the C++ streams, C files or the C library's random numbers. */
static bool host_marker(const cscan *sc, size_t k)
{
    static const char *const apis[] = {"cuda",   "cublas",   "cudnn",   "cufft",
                                       "curand", "cusparse", "cusolver"};
    static const char *const words[] = {
        "cout",   "cerr",  "clog",   "endl",    "fprintf", "fopen",
        "fclose", "fread", "fwrite", "fflush",  "fputs",   "fgets",
        "exit",   "rand",  "srand",  "RAND_MAX"};
    span t = tok_span(sc, k);
    if (t.n == 3 && memcmp(t.s, "<<<", 3) == 0)
        return true;
    if (!is_ident_start(t.s[0]))
        return false;
    for (size_t a = 0; a < LLM_ARRAY_SIZE(apis); a++) {
        size_t n = strlen(apis[a]);
        if (t.n > n && memcmp(t.s, apis[a], n) == 0 && t.s[n] >= 'A' &&
            t.s[n] <= 'Z' && k + 1 < sc->nt && tok_is(sc, k + 1, "("))
            return true;
    }
    for (size_t w = 0; w < LLM_ARRAY_SIZE(words); w++) {
        if (span_is(t, words[w]))
            return true;
    }
    return false;
}

enum { KEEP, DROP_INCLUDE, SWAP_INCLUDE, DROP_HOST, DROP_UNUSED };

/* The host headers whose names a kernel can have from one it may include
 * (<cuda/std/cstdint> declares uint32_t and the rest at global scope
 * under NVRTC too), or NULL. */
static const char *swap_for(span header)
{
    static const char *const swaps[][2] = {{"cstdint", "cuda/std/cstdint"},
                                           {"stdint.h", "cuda/std/cstdint"},
                                           {"climits", "cuda/std/climits"},
                                           {"limits.h", "cuda/std/climits"}};
    for (size_t k = 0; k < LLM_ARRAY_SIZE(swaps); k++) {
        if (span_is(header, swaps[k][0]))
            return swaps[k][1];
    }
    return NULL;
}

/* The work on one child. */
typedef struct hosting {
    ctx *c;
    const char *s;
    size_t n;
    cscan sc;
    items it;
    blocks bl;       /* its kevo:launch and kevo:param blocks */
    int *fate;       /* KEEP or why it is dropped, per item */
    bool *tok_gone;  /* per token: part of a dropped item */
    size_t *kept_at; /* per line: 1 + where kept code starts on it, or 0 */
    size_t *starts;  /* where each line starts */
    size_t nlines;
    size_t *kept, nkept;       /* the kept leaf items */
    size_t *dropped, ndropped; /* the dropped ones */
} hosting;

static bool leaf(const item *it)
{
    return it->kind != ITEM_SCOPE;
}

/* Host code by what it is: main, or an unannotated function, a macro or
 * a statement that uses a host marker. */
static bool is_host(const hosting *h, const item *it)
{
    if (it->global || it->device)
        return false;
    if (it->kind == ITEM_FUNCTION && span_is(it->name, "main"))
        return true;
    if (it->kind != ITEM_DEFINE && it->kind != ITEM_DECL &&
        it->kind != ITEM_FUNCTION)
        return false;
    for (size_t k = it->tok0; k < it->tok1; k++) {
        if (host_marker(&h->sc, k))
            return true;
    }
    return false;
}

/* An item of the child that kevo would compile as host or device code
 * alike: an unannotated function, a macro, or a plain variable. */
static bool unannotated(const hosting *h, const item *it)
{
    if (!it->name.s || !it->defines || it->global || it->device || it->konst)
        return false;
    if (it->kind == ITEM_FUNCTION || it->kind == ITEM_DEFINE)
        return true;
    if (it->kind != ITEM_DECL)
        return false;
    for (size_t k = it->tok0; k < it->tok1; k++) {
        if (tok_is(&h->sc, k, "__constant__") ||
            tok_is(&h->sc, k, "__shared__") ||
            tok_is(&h->sc, k, "__managed__") || tok_is(&h->sc, k, "const") ||
            tok_is(&h->sc, k, "typedef") || tok_is(&h->sc, k, "using") ||
            tok_is(&h->sc, k, "struct") || tok_is(&h->sc, k, "class") ||
            tok_is(&h->sc, k, "union") || tok_is(&h->sc, k, "enum"))
            return false;
    }
    return true;
}

/* Lists the kept and the dropped leaf items (as item indexes). */
static void sort_out(hosting *h)
{
    h->nkept = h->ndropped = 0;
    for (size_t i = 0; i < h->it.n; i++) {
        if (!leaf(&h->it.v[i]))
            continue;
        if (h->fate[i] == KEEP)
            h->kept[h->nkept++] = i;
        else
            h->dropped[h->ndropped++] = i;
    }
}

/* The first item other than self that uses name, among the kept or the
 * dropped ones (as sort_out listed them). The tokens it reads count as
 * the parse's work. */
static const item *user(const hosting *h, span name, size_t self, bool kept)
{
    const size_t *list = kept ? h->kept : h->dropped;
    size_t n = kept ? h->nkept : h->ndropped;
    for (size_t k = 0; k < n; k++) {
        const item *u = &h->it.v[list[k]];
        if (list[k] == self)
            continue;
        h->c->work += 1 + u->tok1 - u->tok0;
        if (item_uses(&h->sc, u, name))
            return u;
    }
    return NULL;
}

/* Decides each item's fate. */
static void decide(hosting *h)
{
    for (size_t i = 0; i < h->it.n; i++) {
        const item *it = &h->it.v[i];
        if (!leaf(it))
            h->fate[i] = KEEP;
        else if (it->kind == ITEM_INCLUDE && it->header.s &&
                 !kevo__reply_include_allowed(h->c, it->header, it->angle))
            h->fate[i] =
                it->angle && swap_for(it->header) ? SWAP_INCLUDE : DROP_INCLUDE;
        else
            h->fate[i] = is_host(h, it) ? DROP_HOST : KEEP;
    }
    /* What only the dropped code used goes too, pass after pass. */
    for (bool changed = true; changed && h->c->work <= h->c->work_max;) {
        changed = false;
        sort_out(h);
        for (size_t k = 0; k < h->nkept && h->c->work <= h->c->work_max; k++) {
            size_t i = h->kept[k];
            const item *it = &h->it.v[i];
            h->c->work++;
            if (h->fate[i] != KEEP || !unannotated(h, it))
                continue;
            if (user(h, it->name, i, false) && !user(h, it->name, i, true)) {
                h->fate[i] = DROP_UNUSED;
                changed = true;
            }
        }
    }
    sort_out(h);
}

static span line_at(const char *s, size_t n, size_t off)
{
    size_t a = off, b = off;
    while (a > 0 && s[a - 1] != '\n')
        a--;
    while (b < n && s[b] != '\n')
        b++;
    return (span){s + a, b - a};
}

/* Offset off is inside a kevo:launch or kevo:param block. */
static bool in_block(const hosting *h, size_t off)
{
    for (int t = 0; t < 2; t++) {
        if (h->bl.found[t] && off >= h->bl.start[t] && off < h->bl.end[t])
            return true;
    }
    return false;
}

/* The first comment that ends after off (comments are in source order). */
static size_t comment_after(const hosting *h, size_t off)
{
    size_t lo = 0, hi = h->sc.nc;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->sc.c[mid].end > off)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The 0-based line of offset off. */
static size_t line_index(const hosting *h, size_t off)
{
    size_t lo = 0, hi = h->nlines;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->starts[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The lines [*a, *b) of a dropped item: its own, and the line comments
 * right above it (not kevo blocks). */
static void item_lines(const hosting *h, const item *it, size_t *a, size_t *b)
{
    size_t last = line_index(h, it->end > it->start ? it->end - 1 : it->end);
    *a = h->starts[line_index(h, it->start)];
    *b = last + 1 < h->nlines ? h->starts[last + 1] : h->n;
    for (size_t k = comment_after(h, *a);
         h->fate[it - h->it.v] != SWAP_INCLUDE && k-- > 0;) {
        const cmt *cm = &h->sc.c[k];
        size_t e = cm->end;
        if (cm->is_block || !cm->own_line || e + 1 != *a || h->s[e] != '\n' ||
            in_block(h, cm->start))
            break;
        *a = h->starts[line_index(h, cm->start)];
    }
}

/* A __global__ token is kept. */
static bool kernel_kept(const hosting *h)
{
    for (size_t k = 0; k < h->sc.nt; k++) {
        if (tok_is(&h->sc, k, "__global__") && !h->tok_gone[k])
            return true;
    }
    return false;
}

/* Marks the tokens of dropped items, and the lines where kept code is.
 * Returns false when out of memory. */
static bool mark(hosting *h)
{
    h->nlines = 1;
    for (size_t i = 0; i < h->n; i++)
        h->nlines += h->s[i] == '\n';
    h->tok_gone = calloc(h->sc.nt + 1, sizeof *h->tok_gone);
    h->kept_at = calloc(h->nlines, sizeof *h->kept_at);
    h->starts = calloc(h->nlines, sizeof *h->starts);
    if (!h->tok_gone || !h->kept_at || !h->starts)
        return false;
    for (size_t i = 0, l = 1; i < h->n; i++) {
        if (h->s[i] == '\n' && l < h->nlines)
            h->starts[l++] = i + 1;
    }
    for (size_t i = 0; i < h->it.n; i++) {
        const item *it = &h->it.v[i];
        for (size_t k = it->tok0; h->fate[i] != KEEP && k < it->tok1; k++)
            h->tok_gone[k] = true;
    }
    size_t line = 0, pos = 0;
    for (size_t k = 0; k < h->sc.nt; k++) {
        for (; pos < h->sc.t[k].off; pos++)
            line += h->s[pos] == '\n';
        if (!h->tok_gone[k] && !h->kept_at[line])
            h->kept_at[line] = h->sc.t[k].off + 1;
    }
    return true;
}

/* "line 3 of the kernel's code, '...'" for the line at off. */
static void name_line(llm_buf *b, const hosting *h, size_t off)
{
    kevo__llm_buf_printf(b, "line %zu of the kernel's code, ",
                         kevo__reply_line_of(h->s, off));
    kevo__reply_quote(b, line_at(h->s, h->n, off));
}

/* Fails when kept code uses dropped host code, shares its lines, or a
 * comment runs across where dropped lines would cut it. */
static kevo_reply_kind check(hosting *h)
{
    llm_buf msg = {0};
    for (size_t k = 0; k < h->ndropped && h->c->work <= h->c->work_max; k++) {
        size_t i = h->dropped[k];
        const item *it = &h->it.v[i];
        if (h->fate[i] == DROP_INCLUDE || h->fate[i] == SWAP_INCLUDE ||
            !it->name.s)
            continue;
        const item *u = user(h, it->name, i, true);
        if (!u)
            continue;
        name_line(&msg, h, u->start);
        kevo__llm_buf_printf(
            &msg, ", uses '%.*s', which is host code (line %zu, ",
            (int)it->name.n, it->name.s, kevo__reply_line_of(h->s, it->start));
        kevo__reply_quote(&msg, line_at(h->s, h->n, it->start));
        kevo__llm_buf_puts(&msg,
                           "): kernels compile without the host's "
                           "headers and libraries, so keep host code out");
        return kevo__reply_fail_with(h->c, KEVO_REPLY_HOST_CODE, &msg);
    }
    if (h->c->work > h->c->work_max)
        return kevo__reply_fail(h->c, KEVO_REPLY_TOO_LARGE,
                                "dropping host code takes more than %zu "
                                "comparisons",
                                h->c->work_max);
    if (!mark(h))
        return kevo__reply_nomem(h->c);
    for (size_t i = 0; i < h->it.n; i++) {
        if (h->fate[i] == KEEP)
            continue;
        size_t a, b;
        item_lines(h, &h->it.v[i], &a, &b);
        for (size_t l = line_index(h, a); l <= line_index(h, b - 1); l++) {
            if (h->kept_at[l]) {
                name_line(&msg, h, h->kept_at[l] - 1);
                kevo__llm_buf_puts(&msg, ", holds host code and kernel code "
                                         "together: put each on lines of its "
                                         "own");
                return kevo__reply_fail_with(h->c, KEVO_REPLY_HOST_CODE, &msg);
            }
        }
        /* A comment across the first or the last line's edge. */
        for (int edge = 0; edge < 2; edge++) {
            size_t at = edge ? b : a;
            size_t k = comment_after(h, at);
            if (k == h->sc.nc || h->sc.c[k].start >= at)
                continue;
            name_line(&msg, h, edge ? b - 1 : a);
            kevo__llm_buf_puts(&msg,
                               ", holds host code and a comment that goes "
                               "on past it: put each on lines of its own");
            return kevo__reply_fail_with(h->c, KEVO_REPLY_HOST_CODE, &msg);
        }
    }
    return KEVO_REPLY_OK;
}

/* The child without the dropped lines, and blank lines where they were
 * squeezed to one. A kevo block on lines of its own inside dropped code
 * stays. */
static bool rebuild(const hosting *h, llm_buf *out)
{
    /* Where dropped ranges start and end, then how many cover each
     * byte. */
    long *gone = calloc(h->n + 1, sizeof *gone);
    if (!gone)
        return false;
    for (size_t k = 0; k < h->ndropped; k++) {
        size_t a, b;
        item_lines(h, &h->it.v[h->dropped[k]], &a, &b);
        gone[a]++;
        gone[b]--;
    }
    for (size_t i = 1; i <= h->n; i++)
        gone[i] += gone[i - 1];
    for (int t = 0; t < 2; t++) {
        if (!h->bl.found[t])
            continue;
        size_t a = h->bl.start[t], b = h->bl.end[t];
        bool alone = true;
        while (a > 0 && h->s[a - 1] != '\n')
            a--;
        while (b < h->n && h->s[b] != '\n')
            b++;
        for (size_t k = 0; k < h->sc.nt && alone; k++)
            alone = h->sc.t[k].off < a || h->sc.t[k].off >= b;
        for (size_t i = a; alone && i < b + (b < h->n); i++)
            gone[i] = 0;
    }
    /* The include each swapped one becomes, at its first line. */
    const char **swap = calloc(h->nlines, sizeof *swap);
    if (!swap) {
        free(gone);
        return false;
    }
    for (size_t k = 0; k < h->ndropped; k++) {
        const item *it = &h->it.v[h->dropped[k]];
        if (h->fate[h->dropped[k]] == SWAP_INCLUDE)
            swap[line_index(h, it->start)] = swap_for(it->header);
    }
    bool after_gone = false;
    for (size_t i = 0, e, line = 0; i < h->n; i = e, line++) {
        for (e = i; e < h->n && h->s[e] != '\n';)
            e++;
        bool blank = is_blank((span){h->s + i, e - i});
        e += e < h->n;
        if (gone[i] && swap[line]) {
            kevo__llm_buf_printf(out, "#include <%s>\n", swap[line]);
            after_gone = false;
            continue;
        }
        if (gone[i]) {
            after_gone = true;
            continue;
        }
        if (blank && after_gone &&
            (out->len == 0 ||
             (out->len >= 2 && out->data[out->len - 1] == '\n' &&
              out->data[out->len - 2] == '\n')))
            continue;
        after_gone = after_gone && blank;
        kevo__llm_buf_append(out, h->s + i, e - i);
    }
    while (out->len >= 2 && out->data[out->len - 1] == '\n' &&
           out->data[out->len - 2] == '\n')
        out->data[--out->len] = '\0';
    free(gone);
    free(swap);
    return !out->failed;
}

static void name_of(llm_buf *b, const hosting *h, const item *it)
{
    if (it->name.s && it->defines)
        kevo__llm_buf_printf(b, "'%.*s'", (int)it->name.n, it->name.s);
    else
        kevo__llm_buf_printf(b, "the statement at line %zu",
                             kevo__reply_line_of(h->s, it->start));
}

/* "; host code dropped: ..." */
static void note(const hosting *h)
{
    llm_buf *b = &h->c->note;
    size_t nin = 0, nhost = 0, shown = 0;
    for (size_t i = 0; i < h->it.n; i++) {
        const item *it = &h->it.v[i];
        nin += h->fate[i] == DROP_INCLUDE;
        nhost += h->fate[i] == DROP_HOST || h->fate[i] == DROP_UNUSED;
        if (h->fate[i] == SWAP_INCLUDE && shown++ < 4) {
            kevo__llm_buf_puts(b, "; #include <");
            kevo__reply_put_clean(b, it->header);
            kevo__llm_buf_printf(b, "> became <%s>", swap_for(it->header));
        }
    }
    shown = 0;
    if (nin + nhost == 0)
        return;
    kevo__llm_buf_puts(b, "; host code dropped: ");
    for (size_t i = 0; i < h->it.n && nin; i++) {
        const item *it = &h->it.v[i];
        if (h->fate[i] != DROP_INCLUDE)
            continue;
        if (shown == 6) {
            kevo__llm_buf_printf(b, " and %zu more", nin - shown);
            break;
        }
        kevo__llm_buf_printf(b, "%s%c", shown ? ", " : "#include ",
                             it->angle ? '<' : '"');
        kevo__reply_put_clean(b, it->header);
        kevo__llm_buf_puts(b, it->angle ? ">" : "\"");
        shown++;
    }
    if (nin)
        kevo__llm_buf_printf(b, " (a kernel may include only %s)",
                             h->c->host->api->include_rule(h->c->host->ctx));
    shown = 0;
    for (size_t i = 0; i < h->it.n && nhost; i++) {
        if (h->fate[i] != DROP_HOST && h->fate[i] != DROP_UNUSED)
            continue;
        if (shown == 6) {
            kevo__llm_buf_printf(b, " and %zu more", nhost - shown);
            break;
        }
        kevo__llm_buf_puts(b, shown ? ", " : nin ? "; " : "");
        name_of(b, h, &h->it.v[i]);
        shown++;
    }
}

kevo_reply_kind kevo__reply_drop_host_code(ctx *c, char **child,
                                           size_t *child_len)
{
    hosting h = {.c = c, .s = *child, .n = *child_len};
    llm_buf out = {0};
    kevo_reply_kind kind = KEVO_REPLY_OK;
    if (!kevo__reply_scan(&h.sc, h.s, h.n) ||
        !kevo__reply_items(&h.sc, &h.it)) {
        kind = kevo__reply_nomem(c);
        goto done;
    }
    h.bl = kevo__reply_blocks(c, h.s, h.n);
    h.fate = calloc(h.it.n + 1, sizeof *h.fate);
    h.kept = calloc(h.it.n + 1, sizeof *h.kept);
    h.dropped = calloc(h.it.n + 1, sizeof *h.dropped);
    if (!h.fate || !h.kept || !h.dropped) {
        kind = kevo__reply_nomem(c);
        goto done;
    }
    decide(&h);
    bool any = false;
    for (size_t i = 0; i < h.it.n; i++)
        any = any || h.fate[i] != KEEP;
    if (!any)
        goto done;
    kind = check(&h);
    if (kind != KEVO_REPLY_OK)
        goto done;
    if (c->out->form == KEVO_REPLY_FORM_WHOLE && !kernel_kept(&h)) {
        kind = kevo__reply_fail(c, KEVO_REPLY_NO_CODE,
                                "the reply's code holds no __global__ kernel "
                                "once its host code is dropped");
        goto done;
    }
    if (!rebuild(&h, &out)) {
        kind = kevo__reply_nomem(c);
        goto done;
    }
    note(&h);
    free(*child);
    *child_len = out.len;
    *child = kevo__llm_buf_take(&out);
    if (!*child)
        kind = kevo__reply_nomem(c);
done:
    free(h.fate);
    free(h.tok_gone);
    free(h.kept_at);
    free(h.starts);
    free(h.kept);
    free(h.dropped);
    kevo__reply_items_free(&h.it);
    kevo__reply_scan_free(&h.sc);
    kevo__llm_buf_free(&out);
    return kind;
}

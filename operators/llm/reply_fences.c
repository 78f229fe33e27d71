/*
 * reply_fences.c: the fenced blocks of a reply, and the whole kernel among
 * them (see reply_fences.h).
 */
#include "reply_fences.h"

#include <stdint.h>
#include <stdlib.h>

#include "reply_diff.h"

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
    for (size_t k = 0; k < LLM_ARRAY_SIZE(words); k++) {
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

void kevo__reply_fence_label(llm_buf *b, const fence *f)
{
    kevo__llm_buf_printf(b, "%c%c%c%s, %zu line%s", f->ch, f->ch, f->ch,
                         f->label, f->nlines, f->nlines == 1 ? "" : "s");
}

void kevo__reply_fences_free(ctx *c)
{
    for (size_t k = 0; k < c->nfences; k++) {
        free(c->fences[k].code);
        kevo__reply_scan_free(&c->fences[k].sc);
    }
    free(c->fences);
    free(c->fence_of);
    c->fences = NULL;
    c->fence_of = NULL;
    c->nfences = 0;
}

/* Collects the fences of the reply, with the code of the C-family ones
 * scanned. */
kevo_reply_kind kevo__reply_read_fences(ctx *c)
{
    size_t cap = 0;
    for (size_t i = 0; i < c->rl.n; i++) {
        char ch;
        size_t ind;
        cap += fence_run(line_span(c->text, &c->rl.v[i]), &ch, &ind) > 0;
    }
    c->fences = calloc(cap ? cap : 1, sizeof *c->fences);
    c->fence_of = calloc(c->rl.n + 1, sizeof *c->fence_of);
    if (!c->fences || !c->fence_of)
        return kevo__reply_nomem(c);
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
        f->first = i + 1;
        f->indent = indent;
        f->ch = ch;
        size_t w = 0;
        while (w < info.n && w + 1 < sizeof f->label && info.s[w] > ' ' &&
               info.s[w] < 0x7f && !strchr(":,{}", info.s[w])) {
            f->label[w] = lower(info.s[w]);
            w++;
        }
        f->label[w] = '\0';
        f->c_family = c_family_label(f->label);
        llm_buf code = {0};
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
                kevo__llm_buf_append(&code, u.s + cut, u.n - cut);
                kevo__llm_buf_puts(&code, "\n");
            }
            f->nlines++;
        }
        for (size_t k = i; k < j + f->closed && k < c->rl.n; k++)
            c->fence_of[k] = c->nfences;
        i = j;
        if (kevo__reply_is_diff_label(f->label) ||
            (f->c_family &&
             kevo__reply_holds_diff(c, f->first, f->first + f->nlines))) {
            f->is_diff = true;
            f->c_family = false;
        }
        if (!f->c_family) {
            kevo__llm_buf_free(&code);
            continue;
        }
        f->code_len = code.len;
        f->code = kevo__llm_buf_take(&code);
        if (!f->code || !kevo__reply_scan(&f->sc, f->code, f->code_len))
            return kevo__reply_nomem(c);
        f->has_global = false;
        for (size_t k = 0; k < f->sc.nt; k++)
            f->has_global = f->has_global || tok_is(&f->sc, k, "__global__");
        f->has_launch =
            kevo__reply_blocks(c, f->code, f->code_len).found[TAG_LAUNCH];
        f->complete = kevo__reply_scan_complete(&f->sc);
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
    for (size_t k = 0; k < LLM_ARRAY_SIZE(words); k++) {
        if (starts_with_word(t, words[k]))
            return true;
    }
    return false;
}

/* A reply cut off at its token limit gives a whole kernel only when the
 * cut fell in prose after its last fence: that fence is closed and a line
 * of text follows it. Anything else may have stopped before the reply
 * said all it meant to (a fence that looks complete may lack its last
 * function; a helper fence may be missing). */
static kevo_reply_kind cut_off(ctx *c)
{
    if (!(c->flags & KEVO_REPLY_CUT_OFF))
        return KEVO_REPLY_OK;
    const fence *last = &c->fences[c->nfences - 1];
    size_t n = (size_t)(last - c->fences) + 1;
    llm_buf msg = {0};
    if (!last->closed) {
        kevo__llm_buf_printf(&msg,
                             "the reply was cut off at its token limit inside "
                             "fence %zu of %zu (",
                             n, c->nfences);
        kevo__reply_fence_label(&msg, last);
        kevo__llm_buf_printf(&msg, ", opened at line %zu of the reply)",
                             last->open + 1);
        if (last->c_family && last->complete)
            kevo__llm_buf_puts(&msg, ": its brackets balance, but its code may "
                                     "stop early");
        else if (last->c_family) {
            kevo__llm_buf_puts(&msg, ": ");
            kevo__reply_describe_incomplete(&msg, &last->sc);
        }
        return kevo__reply_fail_with(c, KEVO_REPLY_TRUNCATED, &msg);
    }
    for (size_t i = last->first + last->nlines + 1; i < c->rl.n; i++) {
        if (!is_blank(line_span(c->text, &c->rl.v[i])))
            return KEVO_REPLY_OK;
    }
    kevo__llm_buf_printf(&msg,
                         "the reply was cut off at its token limit right after "
                         "fence %zu of %zu (",
                         n, c->nfences);
    kevo__reply_fence_label(&msg, last);
    kevo__llm_buf_puts(&msg, "), so what it meant to give after it is unknown");
    return kevo__reply_fail_with(c, KEVO_REPLY_TRUNCATED, &msg);
}

kevo_reply_kind kevo__reply_whole_kernel(ctx *c, char **child,
                                         size_t *child_len, size_t *chosen)
{
    *chosen = SIZE_MAX;
    if (c->nfences == 0) {
        /* Bare code: a reply that is nothing but a complete source. */
        size_t first = 0;
        while (first < c->rl.n && is_blank(line_span(c->text, &c->rl.v[first])))
            first++;
        cscan sc;
        if (!kevo__reply_scan(&sc, c->text, c->text_len)) {
            kevo__reply_scan_free(&sc);
            return kevo__reply_nomem(c);
        }
        bool global = false;
        for (size_t k = 0; k < sc.nt; k++)
            global = global || tok_is(&sc, k, "__global__");
        bool code = first < c->rl.n &&
                    looks_like_code(line_span(c->text, &c->rl.v[first]));
        bool complete = kevo__reply_scan_complete(&sc);
        kevo__reply_scan_free(&sc);
        if (global && code && complete && !(c->flags & KEVO_REPLY_CUT_OFF)) {
            const char *from = c->text + c->rl.v[first].off;
            size_t len = c->text_len - c->rl.v[first].off;
            *child = malloc(len + 1);
            if (!*child)
                return kevo__reply_nomem(c);
            memcpy(*child, from, len);
            (*child)[len] = '\0';
            *child_len = len;
            kevo__llm_buf_printf(
                &c->note,
                "whole kernel from the reply's text, which has no "
                "fences (%zu lines)",
                c->rl.n - first);
            c->out->form = KEVO_REPLY_FORM_WHOLE;
            return KEVO_REPLY_OK;
        }
        if (global && code && complete)
            return kevo__reply_fail(
                c, KEVO_REPLY_TRUNCATED,
                "the reply was cut off at its token limit, and it is "
                "unfenced code that may stop early though its brackets "
                "balance");
        if (global && code)
            return kevo__reply_fail(
                c, KEVO_REPLY_TRUNCATED,
                "the reply is unfenced code that is incomplete (it "
                "may have been cut off)");
        if (global)
            return kevo__reply_fail(
                c, KEVO_REPLY_NO_CODE,
                "the reply mentions __global__ but has no fenced code "
                "block, no SEARCH/REPLACE edits and no unified diff, "
                "and its text does not start as code");
        return kevo__reply_fail(c, KEVO_REPLY_NO_CODE,
                                "the reply has no fenced code block, no "
                                "SEARCH/REPLACE edits and no unified diff");
    }

    kevo_reply_kind kind = cut_off(c);
    if (kind != KEVO_REPLY_OK)
        return kind;

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
        llm_buf msg = {0};
        kevo__llm_buf_printf(&msg, "the reply ends inside fence %zu of %zu (",
                             (size_t)(cut - c->fences) + 1, c->nfences);
        kevo__reply_fence_label(&msg, cut);
        kevo__llm_buf_printf(
            &msg,
            ", opened at line %zu of the reply) and its code is "
            "incomplete: ",
            cut->open + 1);
        kevo__reply_describe_incomplete(&msg, &cut->sc);
        return kevo__reply_fail_with(c, KEVO_REPLY_TRUNCATED, &msg);
    }
    if (best == SIZE_MAX) {
        llm_buf msg = {0};
        bool launch_only = false;
        for (size_t k = 0; k < c->nfences; k++)
            launch_only = launch_only || c->fences[k].has_launch;
        if (c->nfences == 1)
            kevo__llm_buf_puts(&msg, "the reply's only fenced block (");
        else
            kevo__llm_buf_printf(
                &msg, "none of the reply's %zu fenced blocks (", c->nfences);
        for (size_t k = 0; k < c->nfences && k < 5; k++) {
            if (k)
                kevo__llm_buf_puts(&msg, "; ");
            kevo__reply_fence_label(&msg, &c->fences[k]);
        }
        if (c->nfences > 5)
            kevo__llm_buf_puts(&msg, "; ...");
        kevo__llm_buf_printf(
            &msg, ") holds %s__global__ kernel%s",
            c->nfences == 1 ? "no " : "a ",
            launch_only ? " (a kevo:launch block alone is not a kernel)" : "");
        return kevo__reply_fail_with(c, KEVO_REPLY_NO_CODE, &msg);
    }
    fence *f = &c->fences[best];
    *chosen = best;
    *child = malloc(f->code_len + 1);
    if (!*child)
        return kevo__reply_nomem(c);
    memcpy(*child, f->code, f->code_len + 1);
    *child_len = f->code_len;
    size_t ncode = 0;
    for (size_t k = 0; k < c->nfences; k++)
        ncode += c->fences[k].has_global;
    if (c->nfences == 1)
        kevo__llm_buf_puts(&c->note,
                           "whole kernel from the reply's fenced block (");
    else
        kevo__llm_buf_printf(&c->note, "whole kernel from fence %zu of %zu (",
                             best + 1, c->nfences);
    kevo__reply_fence_label(&c->note, f);
    kevo__llm_buf_puts(&c->note, ")");
    if (ncode > 1)
        kevo__llm_buf_printf(
            &c->note, ", the largest of %zu with a __global__ kernel", ncode);
    if (!f->closed) {
        kevo__llm_buf_puts(&c->note,
                           "; the fence is not closed, but its code is "
                           "complete");
        c->out->fence_unterminated = true;
    }
    if (c->flags & KEVO_REPLY_CUT_OFF)
        kevo__llm_buf_puts(&c->note,
                           "; the reply was cut off at its token limit "
                           "in the text after its last fence");
    c->out->form = KEVO_REPLY_FORM_WHOLE;
    return KEVO_REPLY_OK;
}

/*
 * reply.c: the llm operator's reply parser (see reply.h for what it
 * accepts): the entry point, which runs the stages in order.
 *
 * The reply is checked (size, NUL bytes, white space), its line endings
 * are made LF, and its reasoning is set aside (reply_reasoning.c). Its
 * fences are read (reply_fences.c). A reply with a SEARCH marker is read
 * as edits (reply_edits.c); else one with a unified diff as a diff
 * (reply_diff.c); else its whole kernel is chosen (reply_fences.c) and the
 * helper fences it needs are joined to it (reply_join.c). Host code is
 * dropped from the child (reply_host.c), and its lost kevo:launch and
 * kevo:param blocks are restored (reply_restore.c). Everything is plain C
 * and libc, with the operator's llm_buf for the strings it builds; what
 * kevo decides (headers, blocks) comes from the host table.
 */
#include "reply.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reply_diff.h"
#include "reply_edits.h"
#include "reply_fences.h"
#include "reply_host.h"
#include "reply_join.h"
#include "reply_private.h"
#include "reply_reasoning.h"
#include "reply_restore.h"

kevo_reply_kind kevo__reply_fail(ctx *c, kevo_reply_kind kind, const char *fmt,
                                 ...)
{
    kevo__llm_buf_free(&c->why);
    va_list ap;
    va_start(ap, fmt);
    kevo__llm_buf_vprintf(&c->why, fmt, ap);
    va_end(ap);
    c->out->kind = kind;
    return kind;
}

kevo_reply_kind kevo__reply_nomem(ctx *c)
{
    c->nomem = true;
    c->out->kind = KEVO_REPLY_NOMEM;
    return KEVO_REPLY_NOMEM;
}

kevo_reply_kind kevo__reply_fail_with(ctx *c, kevo_reply_kind kind, llm_buf *b)
{
    kevo__llm_buf_free(&c->why);
    c->why = *b;
    *b = (llm_buf){0};
    c->out->kind = kind;
    return kind;
}

static kevo_reply_kind check_reply(ctx *c, const char *reply, size_t len)
{
    size_t max_reply =
        c->max_child > SIZE_MAX / 8 ? SIZE_MAX : c->max_child * 8;
    if (len > max_reply)
        return kevo__reply_fail(c, KEVO_REPLY_TOO_LARGE,
                                "the reply is %zu bytes, over the limit of %zu",
                                len, max_reply);
    const char *nul = len ? memchr(reply, '\0', len) : NULL;
    if (nul)
        return kevo__reply_fail(c, KEVO_REPLY_NUL_BYTE,
                                "the reply holds a NUL byte at offset %zu",
                                (size_t)(nul - reply));
    size_t k = 0;
    while (k < len && (is_space(reply[k]) || reply[k] == '\n'))
        k++;
    if (len == 0)
        return kevo__reply_fail(c, KEVO_REPLY_EMPTY, "the reply is empty");
    if (k == len)
        return kevo__reply_fail(c, KEVO_REPLY_EMPTY,
                                "the reply holds only white space (%zu bytes)",
                                len);
    return KEVO_REPLY_OK;
}

/* The child from the reply's edits, diff or whole kernel, with the helper
 * fences a whole kernel needs; *chosen is the whole kernel's fence. */
static kevo_reply_kind take_child(ctx *c, char **child, size_t *child_len,
                                  size_t *chosen)
{
    if (kevo__reply_has_edits(c))
        return kevo__reply_apply_edits(c, child, child_len);
    if (kevo__reply_has_diff(c))
        return kevo__reply_apply_diff(c, child, child_len);
    kevo_reply_kind kind =
        kevo__reply_whole_kernel(c, child, child_len, chosen);
    if (kind == KEVO_REPLY_OK && *chosen != SIZE_MAX)
        kind = kevo__reply_join_helpers(c, *chosen, child, child_len);
    return kind;
}

/* Restores lost blocks from the reply's other C fences (for a whole
 * kernel), then from the parent. */
static kevo_reply_kind restore(ctx *c, char **child, size_t *child_len,
                               size_t chosen)
{
    source *src = calloc(c->nfences + 1, sizeof *src);
    if (!src)
        return kevo__reply_nomem(c);
    size_t nsrc = 0;
    for (size_t k = 0; c->out->form == KEVO_REPLY_FORM_WHOLE && k < c->nfences;
         k++) {
        if (k == chosen || !c->fences[k].code)
            continue;
        src[nsrc] = (source){c->fences[k].code, c->fences[k].code_len, ""};
        snprintf(src[nsrc].label, sizeof src[nsrc].label, "fence %zu", k + 1);
        nsrc++;
    }
    if (c->parent) {
        src[nsrc] = (source){c->parent, c->parent_len, "the parent"};
        nsrc++;
    }
    kevo_reply_kind kind =
        kevo__reply_restore_blocks(c, child, child_len, src, nsrc);
    free(src);
    return kind;
}

/* The child ends in a newline, is within the limit and is not the parent. */
static kevo_reply_kind finish(ctx *c, char **child, size_t *child_len)
{
    if (*child_len == 0 || (*child)[*child_len - 1] != '\n') {
        char *grown = realloc(*child, *child_len + 2);
        if (!grown)
            return kevo__reply_nomem(c);
        *child = grown;
        (*child)[(*child_len)++] = '\n';
        (*child)[*child_len] = '\0';
    }
    if (*child_len > c->max_child)
        return kevo__reply_fail(c, KEVO_REPLY_TOO_LARGE,
                                "the child is %zu bytes, over the limit of %zu",
                                *child_len, c->max_child);
    if (c->parent) {
        size_t pl = c->parent_len;
        if (pl > 0 && c->parent[pl - 1] == '\n')
            pl--;
        if (pl == *child_len - 1 && memcmp(c->parent, *child, pl) == 0)
            return kevo__reply_fail(
                c, KEVO_REPLY_UNCHANGED,
                c->out->form == KEVO_REPLY_FORM_WHOLE
                    ? "the kernel in the reply is the parent's source, "
                      "unchanged"
                : c->out->form == KEVO_REPLY_FORM_DIFF
                    ? "the diff leaves the parent unchanged"
                    : "the edits leave the parent unchanged");
    }
    kevo__reply_note_reasoning(c);
    if (c->note.failed)
        return kevo__reply_nomem(c);
    return KEVO_REPLY_OK;
}

kevo_reply_kind kevo__reply_parse(const char *reply, size_t reply_len,
                                  const char *parent, size_t max_child,
                                  unsigned flags, const kevo_reply_host *host,
                                  kevo_reply_result *out)
{
    *out = (kevo_reply_result){0};
    ctx c = {.host = host,
             .parent = parent,
             .parent_len = parent ? strlen(parent) : 0,
             .max_child = max_child ? max_child : KEVO_REPLY_DEFAULT_MAX_CHILD,
             .flags = flags,
             .out = out};
    c.work_max = c.max_child > SIZE_MAX / WORK_PER_BYTE
                     ? SIZE_MAX
                     : c.max_child * WORK_PER_BYTE;
    char *child = NULL;
    size_t child_len = 0, chosen = SIZE_MAX;
    if (!reply)
        reply_len = 0;
    kevo_reply_kind kind = check_reply(&c, reply, reply_len);
    if (kind != KEVO_REPLY_OK)
        goto done;

    /* CRLF (and any run of CRs before an LF) to LF. */
    c.text = malloc(reply_len + 1);
    if (!c.text) {
        kind = kevo__reply_nomem(&c);
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
    kind = kevo__reply_strip_reasoning(&c);
    if (kind != KEVO_REPLY_OK)
        goto done;
    if (!kevo__reply_split_lines(c.text, c.text_len, &c.rl)) {
        kind = kevo__reply_nomem(&c);
        goto done;
    }
    kind = kevo__reply_read_fences(&c);
    if (kind == KEVO_REPLY_OK)
        kind = take_child(&c, &child, &child_len, &chosen);
    if (kind == KEVO_REPLY_OK)
        kind = kevo__reply_drop_host_code(&c, &child, &child_len);
    if (kind == KEVO_REPLY_OK)
        kind = restore(&c, &child, &child_len, chosen);
    if (kind == KEVO_REPLY_OK)
        kind = finish(&c, &child, &child_len);
done:
    if (c.nomem || c.why.failed)
        kind = KEVO_REPLY_NOMEM;
    out->kind = kind;
    if (kind == KEVO_REPLY_OK) {
        out->child = child;
        out->child_len = child_len;
        out->reason = kevo__llm_buf_take(&c.note);
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
            out->reason = kevo__llm_buf_take(&c.why);
        }
    }
    kevo__reply_fences_free(&c);
    free(c.rl.v);
    free(c.text);
    kevo__llm_buf_free(&c.why);
    kevo__llm_buf_free(&c.note);
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
        "nomem",     "host_code"};
    if ((unsigned)kind >= LLM_ARRAY_SIZE(kind_names))
        return "unknown";
    return kind_names[kind];
}

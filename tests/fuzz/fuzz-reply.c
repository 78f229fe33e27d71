/*
 * fuzz-reply.c: the llm operator's reply parser on arbitrary bytes.
 *
 * The input is a reply; when it holds a line "@@parent@@", the text before
 * that line is the parent's source (up to any NUL) and the text after it
 * the reply, otherwise a fixed saxpy kernel is the parent. Whatever the
 * input, kevo__reply_parse() must either fail with a one-line reason and no
 * child, or give a child within the limit that ends in a newline and holds
 * a kevo:launch block. The same input parses the same way twice, and a
 * whole-kernel child sent back in a fence, with no parent, comes back
 * unchanged. Parsed again as cut off at the token limit, the input gives
 * no child, or the same whole kernel. What the parser asks kevo, a real
 * operator host answers (tests/plugin_host.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plugin_host.h"
#include "reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The host the parser asks, opened at the first input and closed at
 * exit. */
static plugin_host host;
static kevo_reply_host reply_host;

static void close_host(void)
{
    plugin_host_close(&host);
}

#define MAX_CHILD 4096

static const char saxpy[] =
    "// kevo:param\n"
    "//   BLOCK in pow2(64..1024) = 256\n"
    "\n"
    "/* kevo:launch\n"
    " *   saxpy<<<ceil_div(n, BLOCK), BLOCK>>>(a, x, y, n)\n"
    " */\n"
    "\n"
    "__global__ void saxpy(float a, const float *x, float *y, int n)\n"
    "{\n"
    "    int i = blockIdx.x * BLOCK + threadIdx.x;\n"
    "    if (i < n)\n"
    "        y[i] = a * x[i] + y[i];\n"
    "}\n";

static bool same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void check(const kevo_reply_result *r, kevo_reply_kind kind,
                  const char *parent)
{
    if (r->kind != kind || (unsigned)kind > KEVO_REPLY_KIND_LAST)
        abort();
    if (strcmp(kevo__reply_kind_name(kind), "unknown") == 0)
        abort();
    if (kind == KEVO_REPLY_NOMEM)
        return;
    if (!r->reason || r->reason[0] == '\0')
        abort(); /* every outcome says what happened */
    for (const char *p = r->reason; *p; p++) {
        if ((unsigned char)*p < 0x20)
            abort(); /* one line, no control characters */
    }
    if (kind != KEVO_REPLY_OK) {
        if (r->child || r->child_len || r->form != KEVO_REPLY_FORM_NONE ||
            r->nedits || r->launch_restored || r->param_restored)
            abort();
        return;
    }
    if (!r->child || r->child_len != strlen(r->child) || r->child_len == 0 ||
        r->child_len > MAX_CHILD || r->child[r->child_len - 1] != '\n')
        abort();
    if (!strstr(r->child, "kevo:launch"))
        abort();
    if ((r->form == KEVO_REPLY_FORM_EDITS || r->form == KEVO_REPLY_FORM_DIFF) &&
        (!parent || r->nedits == 0))
        abort();
    if (r->form != KEVO_REPLY_FORM_EDITS && r->form != KEVO_REPLY_FORM_WHOLE &&
        r->form != KEVO_REPLY_FORM_DIFF)
        abort();
    if (parent && strcmp(parent, r->child) == 0)
        abort(); /* an unchanged child is a failure */
}

/* The child holds what the parser reads as more than code: fences, edit
 * markers, diff lines or reasoning tags (restored blocks copy them from
 * the parent as they are). */
static bool holds_markup(const char *c)
{
    static const char *const marks[] = {
        "```",    "~~~",  "<<<<<",  "=====",   ">>>>>",   "\n--- ",
        "\n+++ ", "\n@@", "<think", "</think", "<reason", "</reason"};
    if (strncmp(c, "--- ", 4) == 0 || strncmp(c, "+++ ", 4) == 0 ||
        strncmp(c, "@@", 2) == 0)
        return true;
    for (const char *p = c; *p; p++) {
        for (size_t k = 0; k < sizeof marks / sizeof marks[0]; k++) {
            if (strncasecmp(p, marks[k], strlen(marks[k])) == 0)
                return true;
        }
    }
    return false;
}

/* A whole-kernel child, fenced again, parses to itself (LF endings). */
static void round_trip(const kevo_reply_result *r)
{
    const char *c = r->child;
    if (r->form != KEVO_REPLY_FORM_WHOLE || holds_markup(c))
        return;
    size_t n = r->child_len;
    char *reply = malloc(n + 16);
    char *lf = malloc(n + 1);
    if (!reply || !lf)
        abort();
    memcpy(reply, "```cuda\n", 8);
    memcpy(reply + 8, c, n);
    memcpy(reply + 8 + n, "```\n", 4);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (c[j] == '\r')
            j++;
        if (j > i && c[j] == '\n')
            i = j;
        lf[w++] = c[i];
    }
    lf[w] = '\0';
    kevo_reply_result again;
    kevo_reply_kind kind = kevo__reply_parse(reply, n + 12, NULL, MAX_CHILD, 0,
                                             &reply_host, &again);
    if (kind != KEVO_REPLY_NOMEM &&
        (kind != KEVO_REPLY_OK || !same(again.child, lf)))
        abort();
    kevo__reply_result_free(&again);
    free(lf);
    free(reply);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char sep[] = "\n@@parent@@\n";
    if (!reply_host.api) {
        if (plugin_host_open(&host) != KEVO_OK)
            abort();
        reply_host = (kevo_reply_host){host.api, host.ctx};
        atexit(close_host);
    }
    const char *text = (const char *)data;
    const char *reply = text;
    size_t reply_len = size;
    char *parent = NULL;
    const char *at = NULL;
    for (size_t i = 0; i + sizeof sep - 1 <= size && !at; i++) {
        if (memcmp(text + i, sep, sizeof sep - 1) == 0)
            at = text + i;
    }
    if (at) {
        size_t plen = (size_t)(at - text) + 1;
        parent = malloc(plen + 1);
        if (!parent)
            return 0;
        memcpy(parent, text, plen);
        parent[plen] = '\0';
        reply = at + sizeof sep - 1;
        reply_len = size - (size_t)(reply - text);
    } else {
        parent = malloc(sizeof saxpy);
        if (!parent)
            return 0;
        memcpy(parent, saxpy, sizeof saxpy);
    }

    kevo_reply_result r, r2;
    kevo_reply_kind kind = kevo__reply_parse(reply, reply_len, parent,
                                             MAX_CHILD, 0, &reply_host, &r);
    check(&r, kind, parent);
    kevo_reply_kind kind2 = kevo__reply_parse(reply, reply_len, parent,
                                              MAX_CHILD, 0, &reply_host, &r2);
    if (kind != KEVO_REPLY_NOMEM && kind2 != KEVO_REPLY_NOMEM &&
        (kind2 != kind || !same(r.child, r2.child) ||
         !same(r.reason, r2.reason)))
        abort(); /* the same input parses the same way */
    if (kind == KEVO_REPLY_OK)
        round_trip(&r);
    kevo_reply_result cut;
    kevo_reply_kind kind3 =
        kevo__reply_parse(reply, reply_len, parent, MAX_CHILD,
                          KEVO_REPLY_CUT_OFF, &reply_host, &cut);
    check(&cut, kind3, parent);
    if (kind3 == KEVO_REPLY_OK &&
        (kind != KEVO_REPLY_OK || cut.form != KEVO_REPLY_FORM_WHOLE ||
         !same(cut.child, r.child)))
        abort(); /* a cut-off reply gives only the kernel it gives uncut */
    kevo__reply_result_free(&cut);
    kevo__reply_result_free(&r);
    kevo__reply_result_free(&r2);
    if (r.child || r.reason)
        abort();
    free(parent);
    return 0;
}

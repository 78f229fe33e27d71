/*
 * test-reply.c: the llm operator's reply parser (operators/llm/reply.c).
 *
 * Data-driven over tests/data/reply/: every NAME.reply is parsed against
 * NAME.parent (when it exists; otherwise with no parent), with the child
 * limit in NAME.max when it exists. When NAME.err exists, the parse must
 * fail: its first line is the failure kind's name and its second line the
 * whole reason. Otherwise NAME.out is the expected child, and NAME.note,
 * when it exists, the expected note of what was done. Every child found is
 * also fed back as a fenced whole kernel and must come out unchanged, and
 * must be a source that kevo's own block parser accepts (a candidate).
 * Adding a case needs no change here.
 *
 * Then every allocation the parser makes, on several replies, fails in
 * turn (through glibc's replaceable malloc; skipped where that cannot be
 * done, as under valgrind, which replaces malloc itself): each parse either
 * gives the same result as without the failure or fails as nomem, and
 * leaves nothing allocated.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kevo.h>

#include "plugin_host.h"
#include "proc/include_scan.h"
#include "reply.h"
#include "reply_host.h"
#include "reply_private.h"
#include "tap.h"

/* What the parser asks kevo, a real operator host answers. */
static plugin_host kevo_host;
static kevo_reply_host reply_host;

/* ---- allocation failures ------------------------------------------------- */

/* fail_in: allocations left before one fails (-1: none will); live: blocks
 * allocated and not freed. */
static long fail_in = -1;
static long live;

#if defined(__GLIBC__)
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static int injected(void)
{
    if (fail_in < 0)
        return 0;
    return fail_in-- == 0;
}

void *malloc(size_t n)
{
    void *p = injected() ? NULL : __libc_malloc(n);
    live += p != NULL;
    return p;
}

void *calloc(size_t n, size_t size)
{
    void *p = injected() ? NULL : __libc_calloc(n, size);
    live += p != NULL;
    return p;
}

void *realloc(void *old, size_t n)
{
    void *p = injected() ? NULL : __libc_realloc(old, n);
    live += p != NULL && old == NULL;
    return p;
}

void free(void *p)
{
    live -= p != NULL;
    __libc_free(p);
}
#endif

/* A whole file in a new NUL-terminated buffer (NULL when it cannot be
 * read); its length in *len. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *data = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (cap - n < 4096) {
            cap = cap ? cap * 2 : 8192;
            char *grown = realloc(data, cap + 1);
            if (!grown)
                bail_out("out of memory");
            data = grown;
        }
        size_t got = fread(data + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    data[n] = '\0';
    if (len)
        *len = n;
    return data;
}

static char *path_of(const char *dir, const char *stem, const char *ext)
{
    size_t n = strlen(dir) + strlen(stem) + strlen(ext) + 2;
    char *p = malloc(n);
    if (!p)
        bail_out("out of memory");
    snprintf(p, n, "%s/%s%s", dir, stem, ext);
    return p;
}

static char *read_case(const char *dir, const char *stem, const char *ext,
                       size_t *len)
{
    char *p = path_of(dir, stem, ext);
    char *data = slurp(p, len);
    free(p);
    return data;
}

/* The second line of an .err file, or the text after the first line. */
static void split_err(char *text, const char **kind, const char **reason)
{
    char *nl = strchr(text, '\n');
    *kind = text;
    *reason = "";
    if (nl) {
        *nl = '\0';
        *reason = nl + 1;
        nl = strchr(nl + 1, '\n');
        if (nl)
            *nl = '\0';
    }
}

/* A reply that gives code as a whole kernel, in a new string. */
static char *fenced(const char *code)
{
    size_t n = strlen(code) + 64;
    char *reply = malloc(n);
    if (!reply)
        bail_out("out of memory");
    snprintf(reply, n, "Here it is:\n```cuda\n%s```\nDone.\n", code);
    return reply;
}

/* A child comes back unchanged when it is sent as a fenced whole kernel
 * with no parent. */
static void check_round_trip(const char *stem, const char *child)
{
    if (strstr(child, "```") || strstr(child, "SEARCH"))
        return;
    char *reply = fenced(child);
    kevo_reply_result r;
    kevo__reply_parse(reply, strlen(reply), NULL, 0, 0, &reply_host, &r);
    is_str(kevo__reply_kind_name(r.kind), "ok", "%s: the child parses again",
           stem);
    /* ... to the same child, with its line endings made LF. */
    char *lf = strdup(child);
    if (!lf)
        bail_out("out of memory");
    size_t w = 0;
    for (size_t i = 0; child[i]; i++) {
        size_t j = i;
        while (child[j] == '\r')
            j++;
        if (j > i && child[j] == '\n')
            i = j;
        lf[w++] = child[i];
    }
    lf[w] = '\0';
    is_str(r.child, lf, "%s: ... to the same child", stem);
    free(lf);
    kevo__reply_result_free(&r);
    free(reply);
}

static size_t ncases_ok, ncases_err;

/* The flags a NAME.flags file names (white-space separated words). */
static unsigned case_flags(const char *stem, const char *words)
{
    unsigned flags = 0;
    const char *p = words;
    while (p && *p) {
        size_t n = strcspn(p, " \t\n");
        if (n == strlen("cut_off") && strncmp(p, "cut_off", n) == 0)
            flags |= KEVO_REPLY_CUT_OFF;
        else if (n > 0)
            bail_out("%s.flags: unknown flag '%.*s'", stem, (int)n, p);
        p += n;
        p += strspn(p, " \t\n");
    }
    return flags;
}

static void run_case(const char *dir, const char *stem)
{
    size_t reply_len = 0;
    char *reply = read_case(dir, stem, ".reply", &reply_len);
    char *parent = read_case(dir, stem, ".parent", NULL);
    char *want_out = read_case(dir, stem, ".out", NULL);
    char *want_err = read_case(dir, stem, ".err", NULL);
    char *want_note = read_case(dir, stem, ".note", NULL);
    char *max = read_case(dir, stem, ".max", NULL);
    size_t max_child = max ? strtoull(max, NULL, 10) : 0;
    char *flag_words = read_case(dir, stem, ".flags", NULL);
    unsigned flags = case_flags(stem, flag_words);
    if (!reply)
        bail_out("%s/%s.reply cannot be read", dir, stem);

    kevo_reply_result r;
    kevo_reply_kind kind = kevo__reply_parse(reply, reply_len, parent,
                                             max_child, flags, &reply_host, &r);
    is_int(kind, r.kind, "%s: the result holds the kind returned", stem);
    ok(r.reason != NULL, "%s: a reason or note is given", stem);
    if (want_err) {
        const char *wkind, *wreason;
        split_err(want_err, &wkind, &wreason);
        is_str(kevo__reply_kind_name(kind), wkind, "%s: fails as %s", stem,
               wkind);
        is_str(r.reason, wreason, "%s: reason", stem);
        ok(r.child == NULL && r.child_len == 0 &&
               r.form == KEVO_REPLY_FORM_NONE && !r.launch_restored &&
               !r.param_restored,
           "%s: no child on failure", stem);
        ncases_err++;
    } else if (want_out) {
        is_str(kevo__reply_kind_name(kind), "ok", "%s: gives a child", stem);
        if (kind != KEVO_REPLY_OK)
            diag("%s", r.reason ? r.reason : "(no reason)");
        is_str(r.child, want_out, "%s: the child is %s.out", stem, stem);
        ok(r.child && r.child_len == strlen(r.child) &&
               r.child[r.child_len - 1] == '\n',
           "%s: child_len is its length, and it ends in a newline", stem);
        ok(r.form != KEVO_REPLY_FORM_NONE, "%s: the form is set", stem);
        if (want_note) {
            want_note[strcspn(want_note, "\n")] = '\0';
            is_str(r.reason, want_note, "%s: note", stem);
        }
        if (r.child) {
            check_round_trip(stem, r.child);
            kevo_error err;
            kevo_error_init(&err);
            kevo_candidate *cand = NULL;
            is_int(kevo_candidate_new(r.child, stem, &cand, &err), KEVO_OK,
                   "%s: the child's blocks parse", stem);
            if (!cand)
                diag("%s", err.text);
            kevo_candidate_free(cand);
        }
        ncases_ok++;
    } else {
        ok(0, "%s: has a .out or a .err file", stem);
    }
    kevo__reply_result_free(&r);
    ok(r.child == NULL && r.reason == NULL && r.kind == KEVO_REPLY_OK,
       "%s: free empties the result", stem);
    free(reply);
    free(parent);
    free(want_out);
    free(want_err);
    free(want_note);
    free(max);
    free(flag_words);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The directory $srcdir/sub (malloc'ed), and the stems of its files that
 * end in suffix, sorted (malloc'ed, each too), *count of them. */
static char *list_dir(const char *sub, const char *suffix, char ***stems,
                      size_t *count)
{
    size_t n = strlen(tap_srcdir()) + strlen(sub) + 2;
    char *dir = malloc(n);
    if (!dir)
        bail_out("out of memory");
    snprintf(dir, n, "%s/%s", tap_srcdir(), sub);
    DIR *d = opendir(dir);
    if (!d)
        bail_out("cannot open %s", dir);
    size_t cap = 0, sl = strlen(suffix);
    *stems = NULL;
    *count = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len <= sl || strcmp(de->d_name + len - sl, suffix) != 0)
            continue;
        if (*count == cap) {
            cap = cap ? cap * 2 : 64;
            *stems = realloc(*stems, cap * sizeof **stems);
            if (!*stems)
                bail_out("out of memory");
        }
        char *stem = strdup(de->d_name);
        if (!stem)
            bail_out("out of memory");
        stem[len - sl] = '\0';
        (*stems)[(*count)++] = stem;
    }
    closedir(d);
    qsort(*stems, *count, sizeof **stems, cmp_names);
    return dir;
}

static void test_data(void)
{
    char **stems;
    size_t count;
    char *dir = list_dir("tests/data/reply", ".reply", &stems, &count);
    for (size_t i = 0; i < count; i++) {
        run_case(dir, stems[i]);
        free(stems[i]);
    }
    ok(count >= 25, "%zu cases in tests/data/reply", count);
    ok(ncases_ok >= 10 && ncases_err >= 10, "%zu give a child, %zu fail",
       ncases_ok, ncases_err);
    free(stems);
    free(dir);
}

static const char parent_src[] =
    "/* kevo:launch\n"
    " *   scale<<<ceil_div(n, BLOCK), BLOCK>>>(x, y, n)\n"
    " */\n"
    "// kevo:param\n"
    "//   BLOCK in {128, 256} = 256\n"
    "\n"
    "__global__ void scale(const float *x, float *y, int n)\n"
    "{\n"
    "    int i = blockIdx.x * BLOCK + threadIdx.x;\n"
    "    if (i < n)\n"
    "        y[i] = 2.0f * x[i];\n"
    "}\n";

static void test_kind_names(void)
{
    static const char *const want[] = {
        "ok",        "empty",          "nul_byte",       "no_code",
        "truncated", "malformed_edit", "edit_not_found", "edit_ambiguous",
        "no_parent", "unchanged",      "too_large",      "launch_block_lost",
        "nomem",     "host_code"};
    size_t n = sizeof want / sizeof want[0];
    is_int(n, KEVO_REPLY_KIND_LAST + 1, "every kind has a name here");
    for (size_t k = 0; k < n; k++)
        is_str(kevo__reply_kind_name((kevo_reply_kind)k), want[k],
               "kind %zu has its name", k);
    is_str(kevo__reply_kind_name((kevo_reply_kind)99), "unknown",
           "a kind out of range is unknown");
    is_str(kevo__reply_kind_name((kevo_reply_kind)-1), "unknown",
           "a negative kind is unknown");
}

static void test_edge_inputs(void)
{
    kevo_reply_result r;
    is_int(kevo__reply_parse(NULL, 10, parent_src, 0, 0, &reply_host, &r),
           KEVO_REPLY_EMPTY, "a NULL reply is empty");
    is_str(r.reason, "the reply is empty", "... and says so");
    kevo__reply_result_free(&r);
    kevo__reply_result_free(NULL);
    ok(1, "freeing NULL does nothing");

    static const char nul[] = "```cuda\n__global__ void k() {}\0\n```\n";
    is_int(kevo__reply_parse(nul, sizeof nul - 1, parent_src, 0, 0, &reply_host,
                             &r),
           KEVO_REPLY_NUL_BYTE, "a NUL byte inside the reply");
    is_str(r.reason, "the reply holds a NUL byte at offset 30",
           "... names its offset");
    kevo__reply_result_free(&r);

    /* The default limit: a reply over 8 MiB is refused unread. */
    size_t big = 8 * KEVO_REPLY_DEFAULT_MAX_CHILD + 1;
    char *huge = malloc(big);
    if (!huge)
        bail_out("out of memory");
    memset(huge, 'x', big);
    is_int(kevo__reply_parse(huge, big, parent_src, 0, 0, &reply_host, &r),
           KEVO_REPLY_TOO_LARGE, "a reply over the default limit");
    is_str(r.reason, "the reply is 8388609 bytes, over the limit of 8388608",
           "... says by how much");
    kevo__reply_result_free(&r);

    /* A child of 1 MiB + 9 bytes (the fence's content and its newline):
     * too large under the default limit. */
    size_t body = KEVO_REPLY_DEFAULT_MAX_CHILD + 16;
    const char *head = "```cuda\n/* kevo:launch k<<<1, 1>>>() */\n"
                       "__global__ void k() {}\n//";
    const char *tail = "\n```\n";
    size_t hl = strlen(head), tl = strlen(tail);
    memcpy(huge, head, hl);
    memset(huge + hl, 'x', body - hl);
    memcpy(huge + body, tail, tl);
    is_int(kevo__reply_parse(huge, body + tl, NULL, 0, 0, &reply_host, &r),
           KEVO_REPLY_TOO_LARGE, "a child over the default limit");
    is_str(r.reason, "the child is 1048585 bytes, over the limit of 1048576",
           "... says by how much");
    kevo__reply_result_free(&r);
    free(huge);
}

static void test_flags(void)
{
    kevo_reply_result r;
    const char *whole = "```cu\n"
                        "__global__ void scale(const float *x, float *y, "
                        "int n)\n"
                        "{\n"
                        "    int i = blockIdx.x * BLOCK + threadIdx.x;\n"
                        "    if (i < n) y[i] = 3.0f * x[i];\n"
                        "}\n";
    is_int(kevo__reply_parse(whole, strlen(whole), parent_src, 0, 0,
                             &reply_host, &r),
           KEVO_REPLY_OK, "an unclosed fence with complete code");
    ok(r.launch_restored && r.param_restored && r.fence_unterminated &&
           r.form == KEVO_REPLY_FORM_WHOLE && r.nedits == 0,
       "... restores both blocks, from an unclosed fence, as a whole kernel");
    is_str(r.reason,
           "whole kernel from the reply's fenced block (```cu, 5 lines); the "
           "fence is not closed, but its code is complete; kevo:launch block "
           "restored from the parent; kevo:param block restored from the "
           "parent",
           "... and says so");
    size_t blocks_len = (size_t)(strstr(parent_src, "__global__") - parent_src);
    ok(r.child && strncmp(r.child, parent_src, blocks_len) == 0,
       "... with the parent's blocks first, then a blank line");
    kevo__reply_result_free(&r);

    const char *edits = "<<<<<<< SEARCH\n"
                        "y[i] = 2.0f * x[i];\n"
                        "=======\n"
                        "y[i] = 4.0f * x[i];\n"
                        ">>>>>>> REPLACE\n"
                        "<<<<<<< SEARCH\n"
                        "    if (i < n)\n"
                        "=======\n"
                        "    if (i < n && n > 0)\n"
                        ">>>>>>> REPLACE\n";
    is_int(kevo__reply_parse(edits, strlen(edits), parent_src, 0, 0,
                             &reply_host, &r),
           KEVO_REPLY_OK, "two edits");
    ok(r.form == KEVO_REPLY_FORM_EDITS && r.nedits == 2 && !r.launch_restored &&
           !r.param_restored && !r.fence_unterminated,
       "... as edits, with nothing restored");
    like_str(r.child, "        y[i] = 4.0f * x[i];\n",
             "... re-indenting the first");
    like_str(r.child, "    if (i < n && n > 0)\n",
             "... and the second applied");
    kevo__reply_result_free(&r);

    /* The same reply twice gives the same result. */
    kevo_reply_result a, b;
    kevo__reply_parse(edits, strlen(edits), parent_src, 0, 0, &reply_host, &a);
    kevo__reply_parse(edits, strlen(edits), parent_src, 0, 0, &reply_host, &b);
    is_str(a.child, b.child, "parsing is deterministic");
    is_str(a.reason, b.reason, "... notes included");
    kevo__reply_result_free(&a);
    kevo__reply_result_free(&b);

    /* A child limit of exactly the child's size is enough. */
    const char *exact = "```\n/* kevo:launch k<<<1, 1>>>() */\n"
                        "__global__ void k() {}\n```\n";
    size_t want = strlen(exact) - 8;
    is_int(
        kevo__reply_parse(exact, strlen(exact), NULL, want, 0, &reply_host, &r),
        KEVO_REPLY_OK, "a child exactly at the limit");
    is_int(r.child_len, want, "... of that size");
    kevo__reply_result_free(&r);
    is_int(kevo__reply_parse(exact, strlen(exact), NULL, want - 1, 0,
                             &reply_host, &r),
           KEVO_REPLY_TOO_LARGE, "one byte over the limit");
    kevo__reply_result_free(&r);
}

/* KEVO_REPLY_CUT_OFF on the replies of the data cases that have no
 * .flags file: the result is the same without the flag, or truncated,
 * except that a whole kernel with prose after its last fence stays. */
static void test_cut_off(void)
{
    kevo_reply_result r;
    const char *closed = "Each thread handles one element:\n"
                         "```cuda\n"
                         "/* kevo:launch k<<<1, 1>>>(y) */\n"
                         "__global__ void k(float *y) { y[0] = 1.0f; }\n"
                         "```\n"
                         "It is the simplest kernel that";
    is_int(kevo__reply_parse(closed, strlen(closed), NULL, 0,
                             KEVO_REPLY_CUT_OFF, &reply_host, &r),
           KEVO_REPLY_OK, "cut off in the prose after a closed fence");
    is_str(r.reason,
           "whole kernel from the reply's fenced block (```cuda, 2 lines); "
           "the reply was cut off at its token limit in the text after its "
           "last fence",
           "... says where the cut fell");
    kevo__reply_result_free(&r);
    is_int(kevo__reply_parse(closed, strlen(closed), NULL, 0, 0x2u, &reply_host,
                             &r),
           KEVO_REPLY_OK, "other flag bits are ignored");
    is_str(r.reason,
           "whole kernel from the reply's fenced block (```cuda, 2 lines)",
           "... and say nothing of a cut");
    kevo__reply_result_free(&r);

    /* The same unclosed fence with complete code: taken without the flag,
     * truncated with it. */
    const char *open = "```cuda\n"
                       "/* kevo:launch k<<<1, 1>>>(y) */\n"
                       "__global__ void k(float *y) { y[0] = 1.0f; }\n";
    is_int(kevo__reply_parse(open, strlen(open), NULL, 0, 0, &reply_host, &r),
           KEVO_REPLY_OK, "an unclosed fence with complete code");
    ok(r.fence_unterminated, "... is taken, unterminated");
    kevo__reply_result_free(&r);
    is_int(kevo__reply_parse(open, strlen(open), NULL, 0, KEVO_REPLY_CUT_OFF,
                             &reply_host, &r),
           KEVO_REPLY_TRUNCATED, "... but not when the reply was cut off");
    is_str(r.reason,
           "the reply was cut off at its token limit inside fence 1 of 1 "
           "(```cuda, 2 lines, opened at line 1 of the reply): its brackets "
           "balance, but its code may stop early",
           "... and says why");
    kevo__reply_result_free(&r);

    const char *bare = "/* kevo:launch k<<<1, 1>>>(y) */\n"
                       "__global__ void k(float *y) { y[0] = 1.0f; }\n";
    is_int(kevo__reply_parse(bare, strlen(bare), NULL, 0, KEVO_REPLY_CUT_OFF,
                             &reply_host, &r),
           KEVO_REPLY_TRUNCATED, "unfenced code that was cut off");
    kevo__reply_result_free(&r);

    /* A cut inside reasoning leaves no answer, whatever the flag. */
    const char *thought = "<think>\nDraft:\n```cuda\n"
                          "/* kevo:launch k<<<1, 1>>>(y) */\n"
                          "__global__ void k(float *y) { y[0] = 1.0f; }\n"
                          "```\nBut then";
    is_int(kevo__reply_parse(thought, strlen(thought), NULL, 0, 0, &reply_host,
                             &r),
           KEVO_REPLY_NO_CODE, "a reply that ends inside its reasoning");
    kevo__reply_result_free(&r);
}

/* Reasoning tags wherever models put them. */
static void test_reasoning(void)
{
    static const char kernel[] = "```cuda\n"
                                 "/* kevo:launch k<<<1, 1>>>(y) */\n"
                                 "__global__ void k(float *y) { y[0] = 2; }\n"
                                 "```\n";
    static const struct {
        const char *head, *note;
    } cases[] = {
        {"<Think>\nUpper case tags.\n</Think>\n",
         "; the reasoning in '<think>' (lines 1-3) was set aside"},
        {"Okay.</think>\n\n",
         "; the reasoning before '</think>' (line 1) was set aside"},
        {"Sure.<think>inline</think> Here it is:\n",
         "; the reasoning in '<think>' (line 1) was set aside"},
        {"<think>\none\n</think>\n<reasoning>\ntwo\n</reasoning>\n",
         "; 2 reasoning sections (lines 1-6) were set aside"},
        {"<think>\na </reasoning> and a <thinking> are text here\n"
         "</think>\r\n\r\n",
         "; the reasoning in '<think>' (lines 1-3) was set aside"},
        {"<thinking>\n```cuda\n__global__ void k(float *y) { y[0] = 1; "
         "y[1] = 1; y[2] = 1; }\n```\n</thinking>\n",
         "; the reasoning in '<thinking>' (lines 1-5) was set aside"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char reply[512];
        snprintf(reply, sizeof reply, "%s%s", cases[k].head, kernel);
        kevo_reply_result r;
        is_int(kevo__reply_parse(reply, strlen(reply), NULL, 0, 0, &reply_host,
                                 &r),
               KEVO_REPLY_OK, "reasoning case %zu gives a child", k);
        like_str(r.reason, cases[k].note, "... and sets aside its reasoning");
        like_str(r.child, "y[0] = 2;", "... the answer's kernel");
        kevo__reply_result_free(&r);
    }

    /* Edits inside reasoning do not make the reply edits. */
    const char *draft = "<think>\n<<<<<<< SEARCH\nnothing\n=======\n"
                        "something\n>>>>>>> REPLACE\n</think>\n";
    char reply[512];
    snprintf(reply, sizeof reply, "%s%s", draft, kernel);
    kevo_reply_result r;
    is_int(kevo__reply_parse(reply, strlen(reply), parent_src, 0, 0,
                             &reply_host, &r),
           KEVO_REPLY_OK, "a draft edit in the reasoning");
    is_int(r.form, KEVO_REPLY_FORM_WHOLE,
           "... leaves the reply a whole kernel");
    kevo__reply_result_free(&r);
}

/* The headers the reply parser keeps are those kevo allows: it asks the
 * host, which answers with the include scan's own list. */
static void test_includes(void)
{
    ctx c = {.host = &reply_host};
    for (size_t k = 0; k < kevo__include_nallowed; k++) {
        const char *h = kevo__include_allowed[k];
        span t = {h, strlen(h)};
        ok(kevo__reply_include_allowed(&c, t, true), "<%s> is kept", h);
        ok(!kevo__reply_include_allowed(&c, t, false), "\"%s\" is not", h);
    }
    static const char *const headers[] = {"cstdio",
                                          "cuda_runtime.h",
                                          "iostream",
                                          "cuda/std/cstdint",
                                          "cuda/std/type_traits",
                                          "cuda_fp16.hpp",
                                          "cooperative_groups/memcpy_async.h",
                                          "cuda/barrier",
                                          "mma.h",
                                          "stdint.h"};
    for (size_t k = 0; k < sizeof headers / sizeof headers[0]; k++) {
        span t = {headers[k], strlen(headers[k])};
        is_int(kevo__reply_include_allowed(&c, t, true),
               kevo__include_allowed_name(headers[k]),
               "<%s>: the parser and the include scan agree", headers[k]);
    }
}

/* Every kernel of the task suite, fenced, comes back as it is: nothing in
 * real kernels is taken for host code or joined. */
static void test_suite_kernels(void)
{
    char **stems;
    size_t count;
    char *dir = list_dir("examples/tasks", ".cu", &stems, &count);
    for (size_t i = 0; i < count; i++) {
        size_t src_len;
        char *src = read_case(dir, stems[i], ".cu", &src_len);
        if (!src)
            bail_out("%s/%s.cu cannot be read", dir, stems[i]);
        char *reply = fenced(src);
        kevo_reply_result r;
        kevo__reply_parse(reply, strlen(reply), NULL, 0, 0, &reply_host, &r);
        is_str(kevo__reply_kind_name(r.kind), "ok", "%s.cu: parses", stems[i]);
        is_str(r.child, src, "%s.cu: comes back unchanged", stems[i]);
        kevo__reply_result_free(&r);
        free(reply);
        free(src);
        free(stems[i]);
    }
    ok(count >= 10, "%zu kernels of the task suite", count);
    free(stems);
    free(dir);
}

static int same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Fails each allocation of a parse in turn. */
static void fail_each_allocation(const char *name, const char *reply,
                                 const char *parent)
{
    kevo_reply_result want, r;
    kevo__reply_parse(reply, strlen(reply), parent, 0, 0, &reply_host, &want);
    int bad = 0;
    long n = 0;
    for (;; n++) {
        long before = live;
        fail_in = n;
        kevo_reply_kind kind = kevo__reply_parse(reply, strlen(reply), parent,
                                                 0, 0, &reply_host, &r);
        int hit = fail_in < 0;
        fail_in = -1;
        if (hit ? kind != KEVO_REPLY_NOMEM || r.child ||
                      !same(r.reason, "out of memory")
                : kind != want.kind || !same(r.child, want.child) ||
                      !same(r.reason, want.reason)) {
            if (!bad++)
                diag("%s: allocation %ld failing gives %s: %s", name, n,
                     kevo__reply_kind_name(kind),
                     r.reason ? r.reason : "(no reason)");
        }
        kevo__reply_result_free(&r);
        if (live != before && !bad++)
            diag("%s: allocation %ld failing leaks %ld blocks", name, n,
                 live - before);
        if (!hit)
            break;
    }
    ok(!bad, "%s: each of its %ld allocations can fail cleanly", name, n);
    kevo__reply_result_free(&want);
}

static void test_allocation_failures(void)
{
    /* Called through a volatile pointer, so the compiler cannot drop the
     * allocation. */
    void *(*volatile alloc)(size_t) = malloc;
    fail_in = 0;
    void *probe = alloc(1);
    fail_in = -1;
    if (probe) {
        free(probe);
        diag("malloc cannot be made to fail here: allocation failures "
             "not tested");
        return;
    }
    const char *whole = "Two fences:\n```cuda\n"
                        "/* kevo:launch scale<<<n, 1>>>(x, y, n) */\n"
                        "```\nand\n```cuda\n"
                        "__global__ void scale(const float *x, float *y, "
                        "int n)\n{\n    y[0] = BLOCK * x[0];\n}\n```\n";
    fail_each_allocation("whole kernel, blocks restored", whole, parent_src);
    const char *edits = "<<<<<<< SEARCH\n"
                        "y[i] = 2.0f * x[i];\n"
                        "=======\n"
                        "y[i] = 4.0f * x[i];\n"
                        ">>>>>>> REPLACE\n"
                        "<<<<<<< SEARCH\n"
                        "/* kevo:launch\n"
                        "=======\n"
                        "/* launches:\n"
                        ">>>>>>> REPLACE\n";
    fail_each_allocation("edits, launch block restored", edits, parent_src);
    const char *missing = "<<<<<<< SEARCH\n"
                          "y[i] = 2.0f * x[i];\n"
                          "=======\n"
                          "y[i] = 4.0f * x[i];\n"
                          ">>>>>>> REPLACE\n"
                          "<<<<<<< SEARCH\n"
                          "y[i] = 2.0f * x[i];\n"
                          "=======\n"
                          ">>>>>>> REPLACE\n";
    fail_each_allocation("edit not found", missing, parent_src);
    const char *cut = "```cuda\n__global__ void k(int *p)\n{\n    p[0] = (";
    fail_each_allocation("truncated fence", cut, parent_src);
    const char *bare = "#include <cuda_fp16.h>\n"
                       "__global__ void scale(const float *x, float *y, int "
                       "n) { y[0] = x[0]; }\n";
    fail_each_allocation("bare code", bare, parent_src);
    const char *helper = "</think>\nA helper:\n```cuda\n"
                         "__device__ float twice(float v) { return 2 * v; }\n"
                         "```\nThe kernel:\n```cuda\n"
                         "__global__ void scale(const float *x, float *y, "
                         "int n)\n{\n    y[0] = twice(x[0]);\n}\n```\n";
    fail_each_allocation("reasoning, helper fence joined", helper, parent_src);
    const char *diff = "```diff\n--- a/k.cu\n+++ b/k.cu\n"
                       "@@ -11,1 +11,1 @@\n"
                       "-        y[i] = 2.0f * x[i];\n"
                       "+        y[i] = 3.0f * x[i];\n```\n";
    fail_each_allocation("unified diff", diff, parent_src);
    const char *host = "```cuda\n#include <cstdio>\n"
                       "__global__ void scale(const float *x, float *y, "
                       "int n)\n{\n    y[0] = x[0];\n}\n"
                       "int main()\n{\n    scale<<<1, 1>>>(0, 0, 0);\n}\n"
                       "```\n";
    fail_each_allocation("host code dropped", host, parent_src);
}

int main(void)
{
    if (plugin_host_open(&kevo_host) != KEVO_OK)
        bail_out("no operator host");
    reply_host = (kevo_reply_host){kevo_host.api, kevo_host.ctx};
    test_data();
    test_kind_names();
    test_edge_inputs();
    test_flags();
    test_cut_off();
    test_reasoning();
    test_includes();
    test_suite_kernels();
    test_allocation_failures();
    plugin_host_close(&kevo_host);
    return done_testing();
}

/*
 * prompt_failures.c: the sections of the llm operator's prompts that speak
 * of failures: the parent's recent failed attempts in a child prompt, and a
 * prompt's failure kinds and failed children in a revision prompt.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "prompt_failures.h"

/* A diagnostic as one line, at most this many bytes shown. */
#define LINE_MAX_SHOWN 300

/* Appends text as one line: each run of white space and control
 * characters one space, cut after LINE_MAX_SHOWN bytes (at the start of a
 * character, "..." at the end), as valid UTF-8. kevo's diagnostics come as
 * such lines already; this keeps any other text from breaking the list. */
static void put_line(llm_buf *b, const char *text)
{
    llm_buf line = {0};
    bool space = false;
    for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
        if (*s <= ' ' || *s == 0x7F) {
            space = line.len > 0;
            continue;
        }
        if (space)
            kevo__llm_buf_puts(&line, " ");
        space = false;
        kevo__llm_buf_append(&line, (const char *)s, 1);
    }
    if (line.len > LINE_MAX_SHOWN) {
        line.len = LINE_MAX_SHOWN - 3;
        while (line.len > 0 && (line.data[line.len] & 0xC0) == 0x80)
            line.len--;
        kevo__llm_buf_puts(&line, "...");
    }
    char *clean = line.failed || !line.data
                      ? NULL
                      : kevo__llm_utf8_clean(line.data, line.len);
    kevo__llm_buf_puts(b, clean ? clean : "");
    free(clean);
    kevo__llm_buf_free(&line);
}

void kevo__llm_prompt_failures(llm_buf *b, const kevo_operator_failure *f,
                               size_t n)
{
    if (!f || n == 0)
        return;
    if (n > LLM_PROMPT_FAILURES_MAX)
        n = LLM_PROMPT_FAILURES_MAX;
    kevo__llm_buf_puts(b, "\n# Recent failed attempts from this kernel\n"
                          "Other variants of the current kernel failed like "
                          "this; do not repeat their mistakes:\n");
    for (size_t i = 0; i < n; i++) {
        kevo__llm_buf_printf(b, "- %s", f[i].kind ? f[i].kind : "failed");
        if (f[i].diagnostic && *f[i].diagnostic) {
            kevo__llm_buf_puts(b, ": ");
            put_line(b, f[i].diagnostic);
        }
        kevo__llm_buf_puts(b, "\n");
    }
}

/* The section of a revision prompt, or "" when rev has no failures. */
static void put_revision_section(llm_buf *b, const kevo_operator_revision *rev)
{
    uint64_t total = 0;
    for (size_t i = 0; i < rev->n_failure_kinds; i++)
        total += rev->failure_kinds[i].count;
    if (total == 0 && rev->n_failed_children == 0)
        return;
    kevo__llm_buf_puts(b, "\n# How its children failed\n");
    if (total > 0) {
        kevo__llm_buf_printf(
            b, "%llu failures credited to it:", (unsigned long long)total);
        for (size_t i = 0; i < rev->n_failure_kinds; i++)
            kevo__llm_buf_printf(
                b, "%s %s %llu", i ? "," : "", rev->failure_kinds[i].kind,
                (unsigned long long)rev->failure_kinds[i].count);
        kevo__llm_buf_puts(b, " (compile_error: it did not compile; rejected: "
                              "kevo refused it before running it; wrong: an "
                              "output element was wrong; invalid: its source "
                              "was not a kernel of this task; no_code or edit: "
                              "the reply held no usable kernel).\n");
    }
    if (rev->n_failed_children > 0) {
        kevo__llm_buf_puts(b, "The most recent failed children, with kevo's "
                              "diagnostic:\n");
        for (size_t i = 0; i < rev->n_failed_children; i++) {
            const kevo_operator_failure *f = &rev->failed_children[i];
            kevo__llm_buf_puts(b, "- ");
            if (f->candidate)
                kevo__llm_buf_printf(b, "child %llu ",
                                     (unsigned long long)f->candidate);
            kevo__llm_buf_printf(b, "(%s)", f->kind);
            if (f->diagnostic && *f->diagnostic) {
                kevo__llm_buf_puts(b, ": ");
                put_line(b, f->diagnostic);
            }
            kevo__llm_buf_puts(b, "\n");
        }
    }
    kevo__llm_buf_puts(b, "Where a failure is common, the guidance should warn "
                          "against its cause.\n");
}

bool kevo__llm_revision_failures(char **user, const kevo_operator_revision *rev)
{
    llm_buf sec = {0};
    put_revision_section(&sec, rev);
    if (sec.failed) {
        kevo__llm_buf_free(&sec);
        return false;
    }
    if (sec.len == 0)
        return true;
    static const char heading[] = "\n# Reply format\n";
    const char *at = NULL;
    for (const char *p = strstr(*user, heading); p; p = strstr(p + 1, heading))
        at = p;
    size_t head = at ? (size_t)(at - *user) : strlen(*user);
    llm_buf b = {0};
    kevo__llm_buf_append(&b, *user, head);
    kevo__llm_buf_append(&b, sec.data, sec.len);
    kevo__llm_buf_puts(&b, *user + head);
    kevo__llm_buf_free(&sec);
    if (b.failed) {
        kevo__llm_buf_free(&b);
        return false;
    }
    free(*user);
    *user = kevo__llm_buf_take(&b);
    return true;
}

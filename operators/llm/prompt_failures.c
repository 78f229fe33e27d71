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

/* Appends text as one line of at most LINE_MAX_SHOWN bytes. */
static void put_line(kevo_buf *b, const char *text)
{
    char *line = kevo__one_line(text, LINE_MAX_SHOWN);
    kevo__buf_puts(b, line ? line : "");
    free(line);
}

void kevo__llm_prompt_failures(kevo_buf *b, const kevo_operator_failure *f,
                               size_t n)
{
    if (!f || n == 0)
        return;
    if (n > LLM_PROMPT_FAILURES_MAX)
        n = LLM_PROMPT_FAILURES_MAX;
    kevo__buf_puts(b, "\n# Recent failed attempts from this kernel\n"
                      "Other variants of the current kernel failed like "
                      "this; do not repeat their mistakes:\n");
    for (size_t i = 0; i < n; i++) {
        kevo__buf_printf(b, "- %s", f[i].kind ? f[i].kind : "failed");
        if (f[i].diagnostic && *f[i].diagnostic) {
            kevo__buf_puts(b, ": ");
            put_line(b, f[i].diagnostic);
        }
        kevo__buf_puts(b, "\n");
    }
}

/* The section of a revision prompt, or "" when rev has no failures. */
static void put_revision_section(kevo_buf *b, const kevo_operator_revision *rev)
{
    uint64_t total = 0;
    for (size_t i = 0; i < rev->n_failure_kinds; i++)
        total += rev->failure_kinds[i].count;
    if (total == 0 && rev->n_failed_children == 0)
        return;
    kevo__buf_puts(b, "\n# How its children failed\n");
    if (total > 0) {
        kevo__buf_printf(
            b, "%llu failures credited to it:", (unsigned long long)total);
        for (size_t i = 0; i < rev->n_failure_kinds; i++)
            kevo__buf_printf(b, "%s %s %llu", i ? "," : "",
                             rev->failure_kinds[i].kind,
                             (unsigned long long)rev->failure_kinds[i].count);
        kevo__buf_puts(b, " (compile_error: it did not compile; rejected: "
                          "kevo refused it before running it; wrong: an "
                          "output element was wrong; invalid: its source "
                          "was not a kernel of this task; no_code or edit: "
                          "the reply held no usable kernel).\n");
    }
    if (rev->n_failed_children > 0) {
        kevo__buf_puts(b, "The most recent failed children, with kevo's "
                          "diagnostic:\n");
        for (size_t i = 0; i < rev->n_failed_children; i++) {
            const kevo_operator_failure *f = &rev->failed_children[i];
            kevo__buf_puts(b, "- ");
            if (f->candidate)
                kevo__buf_printf(b, "child %llu ",
                                 (unsigned long long)f->candidate);
            kevo__buf_printf(b, "(%s)", f->kind);
            if (f->diagnostic && *f->diagnostic) {
                kevo__buf_puts(b, ": ");
                put_line(b, f->diagnostic);
            }
            kevo__buf_puts(b, "\n");
        }
    }
    kevo__buf_puts(b, "Where a failure is common, the guidance should warn "
                      "against its cause.\n");
}

bool kevo__llm_revision_failures(char **user, const kevo_operator_revision *rev)
{
    kevo_buf sec = {0};
    put_revision_section(&sec, rev);
    if (sec.failed) {
        kevo__buf_free(&sec);
        return false;
    }
    if (sec.len == 0)
        return true;
    static const char heading[] = "\n# Reply format\n";
    const char *at = NULL;
    for (const char *p = strstr(*user, heading); p; p = strstr(p + 1, heading))
        at = p;
    size_t head = at ? (size_t)(at - *user) : strlen(*user);
    kevo_buf b = {0};
    kevo__buf_append(&b, *user, head);
    kevo__buf_append(&b, sec.data, sec.len);
    kevo__buf_puts(&b, *user + head);
    kevo__buf_free(&sec);
    if (b.failed) {
        kevo__buf_free(&b);
        return false;
    }
    free(*user);
    *user = kevo__buf_take(&b);
    return true;
}

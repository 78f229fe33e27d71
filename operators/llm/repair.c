/*
 * repair.c: the llm operator's repair turns: the bounded memory of the
 * conversations that gave children, the user turn that tells the model why
 * its kernel failed, and the conversation's later turns in a request.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "repair.h"

/* ---- conversations --------------------------------------------------------
 */

void kevo__llm_convo_free(llm_convo *c)
{
    free(c->system);
    for (size_t i = 0; i < c->nturns; i++)
        free(c->turns[i]);
    free(c->turns);
    memset(c, 0, sizeof *c);
}

/* Copies c's texts and the extra turns (NULL ones left out) into out. */
static bool convo_copy(const llm_convo *c, const char *const *extra,
                       size_t nextra, llm_convo *out)
{
    memset(out, 0, sizeof *out);
    size_t n = c->nturns + nextra;
    if (!(out->system = kevo__llm_strdup(c->system ? c->system : "")) ||
        !(out->turns = calloc(n ? n : 1, sizeof *out->turns)))
        goto fail;
    for (size_t i = 0; i < n; i++) {
        const char *t = i < c->nturns ? c->turns[i] : extra[i - c->nturns];
        if (!(out->turns[out->nturns] = kevo__llm_strdup(t ? t : "")))
            goto fail;
        out->nturns++;
    }
    return true;
fail:
    kevo__llm_convo_free(out);
    return false;
}

bool kevo__llm_convo_extend(const llm_convo *c, const char *reply,
                            const char *next, llm_convo *out)
{
    const char *extra[2] = {reply, next};
    return convo_copy(c, extra, 2, out);
}

static size_t convo_bytes(const llm_convo *c)
{
    size_t n = c->system ? strlen(c->system) : 0;
    for (size_t i = 0; i < c->nturns; i++)
        n += strlen(c->turns[i]);
    return n;
}

static void entry_free(llm_convo_entry *e)
{
    kevo__llm_convo_free(&e->convo);
    free(e->reply);
}

/* Forgets the oldest entry. */
static void drop_oldest(llm_convos *cs)
{
    cs->bytes -= cs->e[0].bytes;
    entry_free(&cs->e[0]);
    memmove(&cs->e[0], &cs->e[1], (cs->n - 1) * sizeof cs->e[0]);
    cs->n--;
}

void kevo__llm_convos_put(llm_convos *cs, uint64_t request, uint32_t attempt,
                          const llm_convo *c, const char *reply)
{
    llm_convo_entry e = {.request = request, .attempt = attempt};
    if (!convo_copy(c, NULL, 0, &e.convo))
        return;
    if (!(e.reply = kevo__llm_strdup(reply ? reply : ""))) {
        entry_free(&e);
        return;
    }
    e.bytes = convo_bytes(&e.convo) + strlen(e.reply);
    if (cs->n == cs->cap) {
        size_t cap = cs->cap ? 2 * cs->cap : 8;
        if (cap > LLM_CONVOS_MAX)
            cap = LLM_CONVOS_MAX;
        llm_convo_entry *n =
            cap > cs->cap ? realloc(cs->e, cap * sizeof *n) : cs->e;
        if (!n) {
            entry_free(&e);
            return;
        }
        cs->e = n;
        cs->cap = cap;
    }
    while (cs->n > 0 &&
           (cs->n == LLM_CONVOS_MAX || cs->bytes + e.bytes > LLM_CONVOS_BYTES))
        drop_oldest(cs);
    cs->e[cs->n++] = e;
    cs->bytes += e.bytes;
}

const llm_convo_entry *kevo__llm_convos_find(const llm_convos *cs,
                                             uint64_t request, uint32_t attempt)
{
    for (size_t i = cs->n; i-- > 0;) {
        if (cs->e[i].request == request && cs->e[i].attempt == attempt)
            return &cs->e[i];
    }
    return NULL;
}

void kevo__llm_convos_free(llm_convos *cs)
{
    for (size_t i = 0; i < cs->n; i++)
        entry_free(&cs->e[i]);
    free(cs->e);
    memset(cs, 0, sizeof *cs);
}

/* ---- the repair turn ------------------------------------------------------
 */

/* What went wrong, in words, for a failure kind. */
static const char *kind_words(const char *kind)
{
    static const struct {
        const char *kind, *words;
    } k[] = {
        {"compile_error", "it does not compile"},
        {"rejected", "kevo rejected it before running it"},
        {"launch_error", "a launch of it failed"},
        {"fault", "it faulted on the GPU"},
        {"timeout", "it ran past its time limit"},
        {"wrong", "it computed wrong results"},
        {"input_modified", "it changed an input buffer"},
        {"invalid", "kevo could not accept it as a kernel of this task"},
        {"duplicate", "it is a kernel kevo has already evaluated"},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        if (strcmp(kind, k[i].kind) == 0)
            return k[i].words;
    }
    return NULL;
}

static const char *format_text(llm_reply_format format)
{
    switch (format) {
    case LLM_FORMAT_WHOLE:
        return "the complete corrected source in one fenced block that "
               "starts with ```cuda and ends with ```, with its kevo:launch "
               "block (and kevo:param block, if any) true to the code";
    case LLM_FORMAT_EDITS:
        return "SEARCH/REPLACE edits of the kernel you gave, in the form "
               "asked for before; each SEARCH part must match exactly one "
               "place in that kernel";
    default:
        return "the complete corrected source in one ```cuda fenced block, "
               "or SEARCH/REPLACE edits of the kernel you gave (each SEARCH "
               "part matching exactly one place in it), as before";
    }
}

char *kevo__llm_repair_text(const char *kind, const char *diagnostic,
                            uint32_t turns_left, llm_reply_format format)
{
    llm_buf b = {0};
    const char *words = kind ? kind_words(kind) : NULL;
    if (words)
        kevo__llm_buf_printf(&b, "Your kernel failed (%s): %s.\n", kind, words);
    else
        kevo__llm_buf_printf(&b, "Your kernel failed (%s).\n",
                             kind ? kind : "failed");
    kevo__llm_buf_printf(
        &b, "\nkevo's diagnostic:\n%s%s\n", diagnostic ? diagnostic : "(none)",
        diagnostic && *diagnostic && diagnostic[strlen(diagnostic) - 1] == '\n'
            ? ""
            : "\n");
    kevo__llm_buf_puts(&b,
                       "Repair the kernel so that it compiles and computes "
                       "every element correctly at every shape, keeping its "
                       "speed-ups where they are sound. Change what the "
                       "diagnostic points at; do not start over unless the "
                       "approach itself is wrong.");
    if (turns_left == 0)
        kevo__llm_buf_puts(&b, " This is the last chance to repair it.");
    kevo__llm_buf_printf(&b,
                         "\n\nReply with %s. A sentence before the code "
                         "saying what you fixed is welcome.\n",
                         format_text(format));
    return kevo__llm_buf_take(&b);
}

static const char fresh_system[] =
    "You are an expert CUDA performance engineer. A kernel written to run "
    "faster than the one before it failed kevo's checks: it is compiled "
    "with NVRTC (no host code, no include files beyond what NVRTC "
    "provides), checked against a trusted reference on fresh random inputs "
    "at several shapes, and timed. Its source declares how it is launched "
    "in a kevo:launch comment block, and may declare tunable parameters in "
    "a kevo:param block; parameters reach the code as macros. Repair it.\n";

bool kevo__llm_repair_fresh(const char *task_name, const char *task_args,
                            const char *source, const char *repair_text,
                            llm_convo *out)
{
    llm_buf b = {0};
    memset(out, 0, sizeof *out);
    kevo__llm_buf_printf(&b, "# Task: %s\n",
                         task_name ? task_name : "(unnamed)");
    if (task_args && *task_args)
        kevo__llm_buf_printf(&b, "\n## Kernel arguments\n%s%s", task_args,
                             task_args[strlen(task_args) - 1] == '\n' ? ""
                                                                      : "\n");
    kevo__llm_buf_printf(
        &b, "\n# The kernel that failed\n```cuda\n%s%s```\n\n%s", source,
        *source && source[strlen(source) - 1] == '\n' ? "" : "\n", repair_text);
    char *user = kevo__llm_buf_take(&b);
    const char *turns[1] = {user};
    llm_convo tmp = {
        .system = (char *)fresh_system, .turns = (char **)turns, .nturns = 1};
    bool ok = user && convo_copy(&tmp, NULL, 0, out);
    free(user);
    return ok;
}

/*
 * nvrtc-tasks: kernels compiled by the evaluator's compile-only mode (real
 * kevo-worker compile processes, real NVRTC, no GPU; the compile cache as
 * every command has it) and their launches checked against the compiled
 * kernels. Every tests/data/tasks/compile/
 * TASK-CASE.cu is a kernel for TASK.json whose first line says the verdict
 * it must get and a text its reason must hold:
 *     // expect rejected: scale-few-args.cu:4: kevo:launch: kernel ...
 *     // expect ok
 * The cases: a kernel-name typo, a __device__ function launched, an
 * overloaded kernel, too few and too many arguments, a float scalar for
 * an int parameter, a buffer for an int parameter, an i32 scalar and an
 * i32 expression for 64-bit parameters, a mismatch in a second launch,
 * NVRTC's own error, and kernels that are right (a C++ kernel with
 * casts; every scalar type).
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kevo/eval.h>

#include "core/kevo_private.h"
#include "tap.h"

#define MAX_CASES 64

typedef struct test_case {
    char *file;    /* TASK-CASE.cu */
    char *verdict; /* "ok", "rejected", "compile_error" */
    char *reason;  /* text the reason must hold; NULL for ok */
    kevo_task *task;
    kevo_candidate *cand;
    uint64_t ticket;
    bool done;
} test_case;

static char *path_of(const char *dir, const char *name)
{
    char *p = kevo__asprintf("%s/%s", dir, name);
    if (!p)
        bail_out("out of memory");
    return p;
}

static int is_source(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 3 && strcmp(d->d_name + n - 3, ".cu") == 0 &&
           strchr(d->d_name, '-') != NULL;
}

/* Reads a case: its expectation and its candidate for its task. */
static bool read_case(const char *dir, const char *name, test_case *c)
{
    char *path = path_of(dir, name), *text = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    memset(c, 0, sizeof *c);
    c->file = kevo__strdup(name);
    if (kevo__read_file(path, true, &text, NULL, &err) != KEVO_OK)
        bail_out("%s", err.text);
    free(path);
    static const char tag[] = "// expect ";
    size_t eol = strcspn(text, "\n");
    if (strncmp(text, tag, sizeof tag - 1) != 0)
        bail_out("%s: the first line is not '// expect VERDICT[: TEXT]'", name);
    char *line = kevo__strndup(text + sizeof tag - 1, eol - (sizeof tag - 1));
    char *colon = line ? strchr(line, ':') : NULL;
    if (colon) {
        *colon = '\0';
        c->reason = kevo__strdup(colon + 2);
    }
    c->verdict = line;

    char *task_file =
        kevo__asprintf("%.*s.json", (int)strcspn(name, "-"), name);
    char *task_path = path_of(dir, task_file);
    bool loaded = kevo_task_load(task_path, &c->task, &err) == KEVO_OK;
    if (!ok(loaded, "%s: its task %s loads", name, task_file))
        diag("%s", err.text);
    else if (!ok(kevo_candidate_new_for_task(c->task, text, name, &c->cand,
                                             &err) == KEVO_OK,
                 "%s: a candidate for the task", name))
        diag("%s", err.text);
    free(task_path);
    free(task_file);
    free(text);
    return c->cand != NULL;
}

static void free_case(test_case *c)
{
    kevo_candidate_free(c->cand);
    kevo_task_free(c->task);
    free(c->file);
    free(c->verdict);
    free(c->reason);
}

int main(void)
{
    char *dir = path_of(tap_srcdir(), "tests/data/tasks/compile");
    kevo_error err = KEVO__ERROR_INIT;
    kevo_evaluator *ev = NULL;
    if (kevo_evaluator_new(&ev, &err) != KEVO_OK ||
        kevo_evaluator_set_string(ev, KEVO_EVAL_ARCH, "sm_90", &err) != KEVO_OK)
        bail_out("%s", err.text);
    if (kevo_evaluator_start(ev, KEVO_EVAL_START_COMPILE_ONLY, &err) !=
        KEVO_OK) {
        kevo_evaluator_free(ev);
        skip_all("no compile processes (%s)", err.text);
    }

    struct dirent **names = NULL;
    int n = scandir(dir, &names, is_source, alphasort);
    ok(n >= 12 && n <= MAX_CASES, "%d cases in %s", n, dir);
    test_case cases[MAX_CASES];
    int ncases = 0;
    for (int i = 0; i < n; i++) {
        if (ncases < MAX_CASES &&
            read_case(dir, names[i]->d_name, &cases[ncases])) {
            test_case *c = &cases[ncases];
            ok(kevo_evaluator_submit(ev, c->task, c->cand, KEVO_EVAL_COMPILE,
                                     &c->ticket, &err) == KEVO_OK,
               "%s: submitted", c->file);
            ncases++;
        }
        free(names[i]);
    }
    free(names);

    /* The compiles run in parallel; results come in any order. */
    kevo_eval_result *res = NULL;
    while (kevo_evaluator_wait(ev, 120000, &res, &err) == KEVO_OK && res) {
        uint64_t t = kevo_eval_result_ticket(res);
        for (int i = 0; i < ncases; i++) {
            test_case *c = &cases[i];
            if (c->ticket != t)
                continue;
            c->done = true;
            const char *got = kevo_verdict_name(kevo_eval_result_verdict(res));
            const char *why = kevo_eval_result_reason(res);
            if (!ok(strcmp(got, c->verdict) == 0, "%s: verdict %s (%s)",
                    c->file, c->verdict, got))
                diag("reason: %s", why ? why : "(none)");
            if (c->reason)
                like_str(why ? why : "", c->reason, "%s: reason", c->file);
            else
                ok(why == NULL, "%s: no reason", c->file);
        }
        kevo_eval_result_free(res);
        res = NULL;
    }
    for (int i = 0; i < ncases; i++) {
        ok(cases[i].done, "%s: a result came", cases[i].file);
        free_case(&cases[i]);
    }
    kevo_evaluator_free(ev);
    free(dir);
    return done_testing();
}

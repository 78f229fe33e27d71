/*
 * gpu-adversarial: every kernel of the adversarial corpus
 * (tests/adversarial/corpus.txt) must get its verdict, with a reason that
 * says what happened, and after each one an evaluation of the task's seed
 * must still succeed: a kernel that cheats, faults or hangs never takes
 * the evaluator down.
 *
 * Where there is no GPU, the lines whose verdict is decided before a kernel
 * runs (compile errors, rejections) run through an evaluator started
 * without one, and the others are skipped.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kevo.h>

#include "../tap.h"

typedef struct entry {
    char file[64], task[64], set[16], verdict[32], reason[128];
} entry;

/* The corpus lines, in a new array of *n entries. */
static entry *read_corpus(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        bail_out("cannot open %s", path);
    entry *v = NULL;
    char line[512];
    *n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        entry e;
        memset(&e, 0, sizeof e);
        int k = sscanf(line, "%63s %63s %15s %31s %127[^\n]", e.file, e.task,
                       e.set, e.verdict, e.reason);
        if (k < 4)
            bail_out("%s: malformed line: %s", path, line);
        entry *more = realloc(v, (*n + 1) * sizeof *v);
        if (!more)
            bail_out("out of memory");
        v = more;
        v[(*n)++] = e;
    }
    fclose(f);
    return v;
}

static kevo_task *load_task(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/tasks/%s.json", tap_srcdir(),
             name);
    kevo_error err;
    kevo_error_init(&err);
    kevo_task *task = NULL;
    if (kevo_task_load(path, &task, &err) != KEVO_OK)
        bail_out("%s: %s", path, err.text);
    return task;
}

static kevo_candidate *load_kernel(const kevo_task *task, const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/adversarial/%s", tap_srcdir(), file);
    FILE *f = fopen(path, "rb");
    if (!f)
        bail_out("cannot open %s", path);
    static char source[65536];
    size_t len = fread(source, 1, sizeof source - 1, f);
    fclose(f);
    source[len] = '\0';
    kevo_error err;
    kevo_error_init(&err);
    kevo_candidate *cand = NULL;
    if (kevo_candidate_new_for_task(task, source, file, &cand, &err) != KEVO_OK)
        bail_out("%s: %s", path, err.text);
    return cand;
}

static bool decided_before_running(const char *verdict)
{
    return strcmp(verdict, "compile_error") == 0 ||
           strcmp(verdict, "rejected") == 0;
}

/* A short evaluator configuration: the corpus needs verdicts, not precise
 * times, and the hanging kernel should be caught in seconds. */
static kevo_evaluator *make_evaluator(unsigned flags, kevo_status *rc,
                                      kevo_error *err)
{
    kevo_evaluator *ev = NULL;
    if ((*rc = kevo_evaluator_new(&ev, err)) != KEVO_OK)
        return NULL;
    kevo_evaluator_set_int(ev, KEVO_EVAL_RUN_TIMEOUT_MS, 4000, NULL);
    kevo_evaluator_set_int(ev, KEVO_EVAL_TIME_CAP_MS, 100, NULL);
    kevo_evaluator_set_int(ev, KEVO_EVAL_MIN_REPS, 3, NULL);
    kevo_evaluator_set_int(ev, KEVO_EVAL_WARMUP, 1, NULL);
    kevo_evaluator_set_int(ev, KEVO_EVAL_COMPILE_WORKERS, 2, NULL);
    if ((*rc = kevo_evaluator_start(ev, flags, err)) != KEVO_OK) {
        kevo_evaluator_free(ev);
        return NULL;
    }
    return ev;
}

static void check_entry(kevo_evaluator *ev, const entry *e, bool gpu)
{
    kevo_task *task = load_task(e->task);
    kevo_candidate *cand = load_kernel(task, e->file);
    bool held = strcmp(e->set, "held_out") == 0;
    kevo_error err;
    kevo_error_init(&err);
    kevo_eval_result *res = NULL;
    kevo_status rc = kevo_evaluator_evaluate(
        ev, task, cand, held ? KEVO_EVAL_HELD_OUT : 0, &res, &err);
    if (!ok(rc == KEVO_OK, "%s (%s): evaluated", e->file, e->set))
        diag("%s", err.text);
    if (res) {
        const char *got = kevo_verdict_name(kevo_eval_result_verdict(res));
        const char *why = kevo_eval_result_reason(res);
        is_str(got, e->verdict, "%s (%s): verdict %s", e->file, e->set,
               e->verdict);
        if (e->reason[0])
            ok(why && strstr(why, e->reason), "%s: the reason says '%s'",
               e->file, e->reason);
        diag("%s: %s%s%s", e->file, got, why ? ": " : "", why ? why : "");
    }
    kevo_eval_result_free(res);
    if (gpu) {
        /* The evaluator still works: the task's seed is correct. */
        kevo_eval_result *seed = NULL;
        kevo_error_init(&err);
        rc = kevo_evaluator_evaluate(ev, task, kevo_task_seed(task),
                                     KEVO_EVAL_NO_TIMING, &seed, &err);
        ok(rc == KEVO_OK && seed &&
               kevo_eval_result_verdict(seed) == KEVO_VERDICT_OK,
           "%s: the seed of %s still evaluates correctly afterwards", e->file,
           e->task);
        if (seed && kevo_eval_result_verdict(seed) != KEVO_VERDICT_OK)
            diag("seed: %s", kevo_eval_result_reason(seed));
        kevo_eval_result_free(seed);
    }
    kevo_candidate_free(cand);
    kevo_task_free(task);
}

/* Shape-specialised kernels pass training and fail the gate, which names
 * the held-out shape: one wrong at the held-out sizes, one right only at
 * the training sizes, one fast only there. */
static void check_gate(kevo_evaluator *ev)
{
    static const struct {
        const char *file, *why;
    } cases[] = {
        {"heldout_wrong.cu", "held-out shape 0 (n=1000003) fails: wrong"},
        {"trainsize_only.cu", "held-out shape 0 (n=1000003) fails: wrong"},
        {"trainsize_fastpath.cu", "held-out n=1000003: "},
    };
    kevo_task *task = load_task("saxpy");
    /* The gate as a search applies it: its default slack and floor. */
    kevo_search *s = NULL;
    if (kevo_search_new(task, &s, NULL) != KEVO_OK ||
        kevo_search_set_evaluator(s, ev, NULL) != KEVO_OK)
        bail_out("a search for the gate");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kevo_candidate *cand = load_kernel(task, cases[i].file);
        kevo_eval_result *train = NULL, *held = NULL;
        kevo_evaluator_evaluate(ev, task, cand, 0, &train, NULL);
        kevo_evaluator_evaluate(
            ev, task, cand, KEVO_EVAL_HELD_OUT | KEVO_EVAL_PAIRED, &held, NULL);
        char why[2048] = "";
        ok(train && kevo_eval_result_verdict(train) == KEVO_VERDICT_OK,
           "%s: correct on the training shapes", cases[i].file);
        ok(held && !kevo_search_gate_check(s, held, why, sizeof why),
           "%s: the held-out gate fails it", cases[i].file);
        ok(strncmp(why, cases[i].why, strlen(cases[i].why)) == 0,
           "%s: the gate's reason starts '%s'", cases[i].file, cases[i].why);
        diag("gate: %s", why);
        kevo_eval_result_free(train);
        kevo_eval_result_free(held);
        kevo_candidate_free(cand);
    }
    /* The seed passes against itself. */
    kevo_eval_result *held = NULL;
    char why[2048] = "";
    kevo_evaluator_evaluate(ev, task, kevo_task_seed(task),
                            KEVO_EVAL_HELD_OUT | KEVO_EVAL_PAIRED, &held, NULL);
    ok(held && kevo_search_gate_check(s, held, why, sizeof why),
       "the seed passes the gate against itself");
    diag("gate: %s", why);
    kevo_eval_result_free(held);
    kevo_search_free(s);
    kevo_task_free(task);
}

int main(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/adversarial/corpus.txt",
             tap_srcdir());
    size_t n = 0;
    entry *corpus = read_corpus(path, &n);
    kevo_error err;
    kevo_error_init(&err);
    kevo_status rc;
    kevo_evaluator *ev = make_evaluator(0, &rc, &err);
    bool gpu = ev != NULL;
    if (!gpu) {
        if (rc != KEVO_ENODEV)
            bail_out("the evaluator does not start: %s", err.text);
        diag("no GPU (%s): only the verdicts decided before a kernel runs",
             err.text);
        kevo_error_init(&err);
        ev = make_evaluator(KEVO_EVAL_START_COMPILE_ONLY, &rc, &err);
        if (!ev)
            bail_out("the compile-only evaluator does not start: %s", err.text);
    }
    size_t checked = 0;
    for (size_t i = 0; i < n; i++) {
        if (!gpu && !decided_before_running(corpus[i].verdict))
            continue;
        check_entry(ev, &corpus[i], gpu);
        checked++;
    }
    if (gpu)
        check_gate(ev);
    ok(checked > 0, "%zu of %zu corpus kernels checked%s", checked, n,
       gpu ? "" : " (no GPU)");
    kevo_evaluator_free(ev);
    free(corpus);
    return done_testing();
}

/*
 * gpu-ties: inputs drawn with ties. The argmax task of tests/data/tasks/
 * ties draws its floats as whole numbers ("randint" on f32), so every row
 * has several columns at its largest value: a kernel that returns the last
 * of them instead of the first is wrong there, and the same kernel passes
 * when the floats are drawn normal (no ties). Without a GPU only the task
 * is checked (it loads, and randint on a float survives a round trip
 * through JSON).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "core/kevo_private.h"

static char *path_of(const char *name)
{
    char *p = kevo__asprintf("%s/tests/data/tasks/ties/%s", tap_srcdir(), name);
    if (!p)
        bail_out("out of memory");
    return p;
}

static kevo_candidate *load_kernel(const kevo_task *task, const char *name)
{
    char *path = path_of(name), *text = NULL;
    kevo_candidate *c = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo__read_file(path, true, &text, NULL, &err) != KEVO_OK ||
        kevo_candidate_new_for_task(task, text, name, &c, &err) != KEVO_OK)
        bail_out("%s: %s", name, err.text);
    free(text);
    free(path);
    return c;
}

/* The task: x drawn randint(-3, 3) on f32, also after a round trip. */
static kevo_task *check_task(void)
{
    char *path = path_of("argmax.json"), *json = NULL;
    kevo_task *task = NULL, *back = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo_task_load(path, &task, &err) != KEVO_OK)
        bail_out("argmax.json: %s", err.text);
    free(path);
    kevo_arg_info info = {.size = sizeof info};
    ok(kevo_task_arg_info(task, 0, &info) == KEVO_OK &&
           info.type == KEVO_DTYPE_F32 && info.dist == KEVO_DIST_RANDINT &&
           info.dist_a == -3 && info.dist_b == 3,
       "x: f32 drawn randint(-3, 3)");
    ok(kevo_task_to_json(task, &json, &err) == KEVO_OK &&
           strstr(json, "\"dist\": \"randint\"") &&
           kevo_task_load_string(json, "argmax (written)", NULL, &back, &err) ==
               KEVO_OK,
       "written and read back (%s)", err.text);
    kevo_arg_info again = {.size = sizeof again};
    ok(back && kevo_task_arg_info(back, 0, &again) == KEVO_OK &&
           again.dist == KEVO_DIST_RANDINT && again.dist_a == -3 &&
           again.dist_b == 3,
       "the same distribution after the round trip");
    kevo_task_free(back);
    free(json);
    return task;
}

static void evaluate(kevo_evaluator *ev, const kevo_task *task,
                     const kevo_candidate *c, kevo_verdict want,
                     const char *reason, const char *what)
{
    kevo_eval_result *res = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo_evaluator_evaluate(ev, task, c, KEVO_EVAL_NO_TIMING, &res, &err) !=
        KEVO_OK)
        bail_out("%s: %s", what, err.text);
    const char *why = kevo_eval_result_reason(res);
    if (!ok(kevo_eval_result_verdict(res) == want, "%s: %s", what,
            kevo_verdict_name(want)))
        diag("verdict %s: %s", kevo_verdict_name(kevo_eval_result_verdict(res)),
             why ? why : "");
    if (reason)
        like_str(why ? why : "", reason, "%s: the reason names it", what);
    kevo_eval_result_free(res);
}

int main(void)
{
    kevo_task *task = check_task();
    kevo_error err = KEVO__ERROR_INIT;
    kevo_evaluator *ev = NULL;
    if (kevo_evaluator_new(&ev, &err) != KEVO_OK)
        bail_out("%s", err.text);
    kevo_status rc = kevo_evaluator_start(ev, 0, &err);
    if (rc == KEVO_ENODEV) {
        kevo_evaluator_free(ev);
        kevo_task_free(task);
        diag("no GPU (%s): the evaluations are skipped", err.text);
        return done_testing();
    }
    if (rc != KEVO_OK)
        bail_out("the evaluator does not start: %s", err.text);

    kevo_candidate *first = load_kernel(task, "argmax_first.cu");
    kevo_candidate *last = load_kernel(task, "argmax_last.cu");
    evaluate(ev, task, first, KEVO_VERDICT_OK, NULL, "first column, ties");
    evaluate(ev, task, last, KEVO_VERDICT_WRONG, "idx[", "last column, ties");
    /* Drawn normal, a row's largest value is unique: both agree. */
    if (kevo_task_set_init(task, "x", KEVO_DIST_NORMAL, 0, 1, &err) != KEVO_OK)
        bail_out("%s", err.text);
    evaluate(ev, task, last, KEVO_VERDICT_OK, NULL, "last column, no ties");

    kevo_candidate_free(first);
    kevo_candidate_free(last);
    kevo_evaluator_free(ev);
    kevo_task_free(task);
    return done_testing();
}

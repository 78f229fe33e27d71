/*
 * gpu-baseline: the tolerance relative to a baseline kernel, on the GPU.
 * The shift task of tests/data/tasks/baseline copies x to y; its baseline
 * is 0.5 off at one element and 0.001 off everywhere else, and its factor
 * is 2, so an element may be off by up to 1.0 and the mean error may be up
 * to about 0.002. A kernel 0.9 off at one element passes, one 1.1 off
 * fails on its largest error, one 0.0025 off everywhere fails on its mean,
 * and one that leaves an element unwritten fails; each reason says which
 * bound, with the baseline's error. Without a GPU only the task is checked
 * (it loads, its output is under the rule, and it survives a round trip
 * through JSON).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "core/kevo_private.h"

static char *path_of(const char *name)
{
    char *p =
        kevo__asprintf("%s/tests/data/tasks/baseline/%s", tap_srcdir(), name);
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

/* The task: y under the baseline rule, factor 2, also after a round trip. */
static kevo_task *check_task(void)
{
    char *path = path_of("shift.json"), *json = NULL;
    kevo_task *task = NULL, *back = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo_task_load(path, &task, &err) != KEVO_OK)
        bail_out("shift.json: %s", err.text);
    free(path);
    kevo_arg_info info = {.size = sizeof info};
    ok(kevo_task_arg_info(task, 1, &info) == KEVO_OK && info.factor == 2 &&
           info.atol == 0 && info.ulp == 0,
       "y: the baseline rule, factor 2");
    ok(kevo_task_baseline(task) != NULL, "the task has its baseline kernel");
    ok(kevo_task_to_json(task, &json, &err) == KEVO_OK &&
           kevo_task_load_string(json, "shift (written)", NULL, &back, &err) ==
               KEVO_OK,
       "written and read back (%s)", err.text);
    ok(back && kevo_task_baseline(back) &&
           strcmp(kevo_candidate_source(kevo_task_baseline(back)),
                  kevo_candidate_source(kevo_task_baseline(task))) == 0,
       "the same baseline after the round trip");
    kevo_task_free(back);
    free(json);
    return task;
}

/* Evaluates kernel file; its verdict must be want, its reason must hold
 * reason (unless NULL), and where it passes the worst element's bound is
 * 2 * 0.5. */
static void evaluate(kevo_evaluator *ev, const kevo_task *task,
                     const char *file, kevo_verdict want, const char *reason)
{
    kevo_candidate *c = load_kernel(task, file);
    kevo_eval_result *res = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo_evaluator_evaluate(ev, task, c, KEVO_EVAL_NO_TIMING, &res, &err) !=
        KEVO_OK)
        bail_out("%s: %s", file, err.text);
    const char *why = kevo_eval_result_reason(res);
    if (!ok(kevo_eval_result_verdict(res) == want, "%s: %s", file,
            kevo_verdict_name(want)))
        diag("verdict %s: %s", kevo_verdict_name(kevo_eval_result_verdict(res)),
             why ? why : "");
    if (why)
        diag("%s: %s", file, why);
    if (reason)
        like_str(why ? why : "", reason, "%s: the reason says why", file);
    if (want == KEVO_VERDICT_OK) {
        kevo_shape_result s = {.size = sizeof s};
        ok(kevo_eval_result_shape(res, 0, &s) == KEVO_OK &&
               fabs(s.worst_tol - 1.0) < 1e-6,
           "%s: the worst element's bound is 2 * 0.5 (%g)", file, s.worst_tol);
    }
    kevo_eval_result_free(res);
    kevo_candidate_free(c);
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

    evaluate(ev, task, "copy.cu", KEVO_VERDICT_OK, NULL);
    evaluate(ev, task, "one_big.cu", KEVO_VERDICT_OK, NULL);
    evaluate(ev, task, "too_big.cu", KEVO_VERDICT_WRONG,
             "2 * the baseline's largest error");
    evaluate(ev, task, "spread.cu", KEVO_VERDICT_WRONG, "y: mean error");
    evaluate(ev, task, "unwritten.cu", KEVO_VERDICT_WRONG, "NaN");

    kevo_evaluator_free(ev);
    kevo_task_free(task);
    return done_testing();
}

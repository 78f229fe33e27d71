/*
 * test-tolerance.c: the error column of `kevo eval` (examples/
 * kevo_tolerance.c) on results read through the library's readers: the
 * worker's result messages of tests/data/eval and the result kevo eval
 * wrote on an H100 (h100_sgemm_result.json), and a result of
 * attention_bf16 under its tolerance relative to a baseline kernel, each
 * against its task's tolerance. Passing kernels show a fraction below 1
 * where the relative error said 1.0e+00 or 8.6; a zero tolerance, a NaN and
 * a failure show as such.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_private.h"
#include "kevo_tolerance.h"
#include "tap.h"

static kevo_task *load_task(const char *name)
{
    char *path =
        kevo__asprintf("%s/examples/tasks/%s.json", tap_srcdir(), name);
    kevo_task *task = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (!path || kevo_task_load(path, &task, &err) != KEVO_OK)
        bail_out("cannot load task %s: %s", name, err.text);
    free(path);
    return task;
}

static json_t *load_json(const char *name)
{
    char *path = kevo__asprintf("%s/tests/data/eval/%s", tap_srcdir(), name);
    char *text = NULL;
    json_t *v = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (!path || kevo__read_file(path, true, &text, NULL, &err) != KEVO_OK ||
        kevo__json_parse(text, name, &v, &err) != KEVO_OK)
        bail_out("%s: %s", name, err.text);
    free(text);
    free(path);
    return v;
}

/* The result of task's seed from the worker's message in file. */
static kevo_eval_result *worker_result(const kevo_task *task, const char *file)
{
    static const kevo_ceilings ceilings = {
        3e12, {5e13, 2.5e13, 4e14, 8e14, 8e14}, 0};
    kevo_eval_context ctx = {&ceilings, NULL, NULL, 0};
    json_t *msg = load_json(file);
    kevo_eval_result *res = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo__eval_result_new(task, kevo_task_seed(task), KEVO_SHAPES_TRAIN,
                              msg, NULL, &ctx, &res, &err) != KEVO_OK)
        bail_out("%s: %s", file, err.text);
    json_decref(msg);
    return res;
}

static kevo_shape_result shape(const kevo_eval_result *res, size_t i)
{
    kevo_shape_result r = {.size = sizeof(r)};
    if (kevo_eval_result_shape(res, i, &r) != KEVO_OK)
        bail_out("no shape %zu", i);
    return r;
}

/* Shape i of res: its fraction (NaN: not checked) and its text. */
static void check(const kevo_task *task, const kevo_eval_result *res, size_t i,
                  double fraction, const char *text, const char *what)
{
    kevo_shape_result s = shape(res, i);
    error_fraction f = error_fraction_of(task, &s);
    char buf[32];
    if (isinf(fraction))
        ok(isinf(f.fraction), "%s: err/tol infinite", what);
    else if (!isnan(fraction))
        is_double(f.fraction, fraction, 1e-12 * fraction, "%s: err/tol", what);
    is_str(error_fraction_text(&f, buf, sizeof buf), text, "%s: column", what);
    ok(strlen(buf) <= 9, "%s: fits the column", what);
}

int main(void)
{
    kevo_task *saxpy = load_task("saxpy"), *sgemm = load_task("sgemm");

    /* saxpy's tolerance: rtol 1e-6, atol 1e-6. */
    kevo_eval_result *res = worker_result(saxpy, "saxpy_train_ok.json");
    is_double(shape(res, 0).max_rel_err, 1.1920928955078125e-07, 0,
              "saxpy: the relative error the column used to show");
    check(saxpy, res, 0, (1.5 - 1.4999998) / (1e-6 + 1e-6 * 1.4999998), "0.08",
          "saxpy n=16777216");
    check(saxpy, res, 1, 0, "0", "saxpy n=4194304: equal");
    kevo_shape_result s = shape(res, 0);
    error_fraction f = error_fraction_of(saxpy, &s);
    ok(f.known && !f.exact && f.rtol == 1e-6 && f.atol == 1e-6,
       "saxpy: the tolerance of z");
    is_double(f.allowed, 1e-6 + 1e-6 * 1.4999998, 1e-18,
              "saxpy: allowed = atol + rtol * |want|");

    /* A zero tolerance: the output must match exactly. */
    kevo_error err = KEVO__ERROR_INIT;
    ok(kevo_task_set_tolerance(saxpy, "z", 0, 0, &err) == KEVO_OK,
       "saxpy: z made exact");
    check(saxpy, res, 0, INFINITY, "over 0", "exact z, different");
    check(saxpy, res, 1, 0, "exact", "exact z, equal");
    kevo_eval_result_free(res);

    /* An element left unwritten: the poison (NaN) where the reference is
     * a number. */
    ok(kevo_task_set_tolerance(saxpy, "z", 1e-6, 1e-6, &err) == KEVO_OK,
       "saxpy: z's tolerance back");
    res = worker_result(saxpy, "saxpy_train_wrong.json");
    check(saxpy, res, 1, INFINITY, "NaN", "an unwritten element");
    s = shape(res, 1);
    f = error_fraction_of(saxpy, &s);
    ok(f.unwritten && !s.correct, "unwritten, and the shape failed");
    kevo_eval_result_free(res);

    /* sgemm: rtol 2e-4, atol 2e-3; shapes without a worst element. */
    res = worker_result(sgemm, "sgemm_train_ok.json");
    check(sgemm, res, 0, (15.75 - 15.7495) / (2e-3 + 2e-4 * 15.7495), "0.10",
          "sgemm: worker message");
    check(sgemm, res, 1, NAN, "-", "sgemm: no worst element");
    kevo_eval_result_free(res);

    /* What kevo eval wrote on an H100: max rel 8.6 at 4096^3, a passing
     * kernel. */
    json_t *v = load_json("h100_sgemm_result.json");
    res = NULL;
    if (kevo__eval_result_from_json(v, "h100_sgemm_result.json", NULL, &res,
                                    &err) != KEVO_OK)
        bail_out("h100_sgemm_result.json: %s", err.text);
    json_decref(v);
    is_double(shape(res, 0).max_rel_err, 8.60795260916714, 1e-12,
              "H100 sgemm 4096^3: max rel 8.6 on a correct kernel");
    check(sgemm, res, 0,
          fabs(-1.0169332027435303 - -1.017103672027588) /
              (2e-3 + 2e-4 * 1.017103672027588),
          "0.08", "H100 sgemm 4096^3");
    check(sgemm, res, 1,
          fabs(3.0177905559539795 - 3.017828941345215) /
              (2e-3 + 2e-4 * 3.017828941345215),
          "0.01", "H100 sgemm 1024^3");
    check(sgemm, res, 2,
          fabs(-0.15277725458145142 - -0.15282991528511047) /
              (2e-3 + 2e-4 * 0.15282991528511047),
          "0.03", "H100 sgemm 2048x512x1536");
    for (size_t i = 0; i < kevo_eval_result_shape_count(res); i++) {
        s = shape(res, i);
        f = error_fraction_of(sgemm, &s);
        ok(s.correct && f.fraction <= 1, "H100 shape %zu: correct, within 1",
           i);
    }
    kevo_eval_result_free(res);

    /* attention_bf16, relative to its baseline: the worker's bound at the
     * worst element is 2 * the baseline's largest error + 1e-5 (here
     * 2 * 0.015625 + 1e-5 = 0.03126, and 2 * 0.005859375 + 1e-5), and an
     * output whose errors are all 0 reads 0, not "exact". */
    kevo_task *attention = load_task("attention_bf16");
    res = worker_result(attention, "attention_train_baseline.json");
    check(attention, res, 0, 0.015625 / 0.03126, "0.50",
          "attention: one ulp at [2, 4), the baseline's own largest error");
    check(attention, res, 1, 0.001953125 / 0.01172875, "0.17",
          "attention: a third of the baseline's largest error");
    check(attention, res, 2, 0, "0", "attention: no error");
    check(attention, res, 3, 0.0078125 / 0.03126, "0.25",
          "attention: half the baseline's largest error");
    s = shape(res, 2);
    f = error_fraction_of(attention, &s);
    ok(f.known && !f.exact && f.rtol == 0 && f.atol == 1e-5,
       "attention: the baseline rule's atol, and not exact");
    kevo_eval_result_free(res);
    kevo_task_free(attention);

    /* Values no result file has: a failure far over, tiny fractions, an
     * infinity, an output the task does not have. Without the worker's
     * tolerance at the element (NaN), it is atol + rtol |want|. */
    kevo_shape_result t = {
        .size = sizeof t, .worst_arg = "z", .worst_tol = NAN};
    t.worst_got = 1;
    t.worst_want = 2;
    f = error_fraction_of(saxpy, &t);
    is_str(error_fraction_text(&f, (char[32]){0}, 32), "3.3e+05",
           "a failure: the fraction in exponent form");
    t.worst_tol = 1e-3; /* the worker's, with an ulp or amax term */
    f = error_fraction_of(saxpy, &t);
    is_str(error_fraction_text(&f, (char[32]){0}, 32), "1.0e+03",
           "the worker's tolerance at the element is used when known");
    t.worst_tol = NAN;
    t.worst_got = 2 + 1e-9;
    f = error_fraction_of(saxpy, &t);
    is_str(error_fraction_text(&f, (char[32]){0}, 32), "3.3e-04",
           "far within: the fraction in exponent form");
    t.worst_got = INFINITY;
    f = error_fraction_of(saxpy, &t);
    is_str(error_fraction_text(&f, (char[32]){0}, 32), "inf",
           "an infinity the reference does not have");
    t.worst_got = t.worst_want = -INFINITY;
    f = error_fraction_of(saxpy, &t);
    is_str(error_fraction_text(&f, (char[32]){0}, 32), "0",
           "the same infinity as the reference");
    t.worst_got = t.worst_want = NAN;
    f = error_fraction_of(saxpy, &t);
    is_str(error_fraction_text(&f, (char[32]){0}, 32), "0",
           "a NaN where the reference has one");
    t.worst_arg = "nosuch";
    f = error_fraction_of(saxpy, &t);
    is_str(error_fraction_text(&f, (char[32]){0}, 32), "-",
           "an argument the task does not have");

    kevo_task_free(saxpy);
    kevo_task_free(sgemm);
    return done_testing();
}

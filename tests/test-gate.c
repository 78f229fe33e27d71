/*
 * test-gate.c: the held-out gate's arithmetic. A candidate passes when, at
 * every held-out shape, it is correct and not slower than the baseline (the
 * seed; the reference where the seed's time is unknown) by more than the
 * slack, a difference inside the precision of both medians or below the
 * floor counting as equal. Cases: the slack, the precision, the floor, a
 * missing seed, a seed wrong at one shape, no baseline at all, a wrong
 * candidate, the order and the text of the why, and bad arguments.
 *
 * Results are made the way the evaluator makes them: the GPU worker's
 * result message for saxpy's held-out shapes (n=1000003, n=77), then the
 * paired baseline times.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_private.h"
#include "tap.h"

static const kevo_ceilings dev = {
    3e12, {5e13, 2.5e13, 4e14, 8e14, 8e14}, 0.86e-6};
static kevo_task *saxpy;

/* One held-out shape: the candidate's time and spread (time NaN: wrong
 * there), the seed's and the reference's (NaN: unknown). */
typedef struct shape_in {
    double t, ts;
    double seed, seed_s;
    double ref, ref_s;
} shape_in;

static kevo_eval_result *held(const shape_in *in, size_t n)
{
    json_t *shapes = json_array();
    const char *verdict = "ok";
    for (size_t i = 0; i < n; i++) {
        const int64_t *dims = kevo_task_shape(saxpy, KEVO_SHAPES_HELD_OUT, i);
        bool wrong = isnan(in[i].t);
        json_t *time =
            wrong
                ? json_null()
                : json_pack("{s:f,s:o,s:i,s:i}", "median", in[i].t, "spread",
                            isnan(in[i].ts) ? json_null() : json_real(in[i].ts),
                            "reps", 30, "kernels_per_rep", 1);
        json_array_append_new(
            shapes, json_pack("{s:s,s:i,s:{s:I},s:b,s:o}", "set", "held_out",
                              "index", (int)i, "dims", "n", (json_int_t)dims[0],
                              "correct", !wrong, "time", time));
        if (wrong) {
            verdict = "wrong";
            break;
        }
    }
    json_t *msg = json_pack("{s:s,s:o}", "verdict", verdict, "shapes", shapes);
    if (strcmp(verdict, "wrong") == 0)
        json_object_set_new(msg, "reason",
                            json_string("held-out shape 1 (n=77): z[76] = nan, "
                                        "want 0.5 (1 bad element)"));
    kevo_eval_context ctx = {&dev, NULL, NULL, 0};
    kevo_eval_result *res = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo__eval_result_new(saxpy, kevo_task_seed(saxpy),
                              KEVO_SHAPES_HELD_OUT, msg, NULL, &ctx, &res,
                              &err) != KEVO_OK)
        bail_out("result: %s", err.text);
    json_decref(msg);
    double st[2] = {NAN, NAN}, ss[2] = {NAN, NAN}, rt[2] = {NAN, NAN},
           rs[2] = {NAN, NAN};
    for (size_t i = 0; i < n && i < 2; i++) {
        st[i] = in[i].seed, ss[i] = in[i].seed_s;
        rt[i] = in[i].ref, rs[i] = in[i].ref_s;
    }
    kevo__eval_result_set_paired(res, KEVO_BASELINE_SEED, st, ss, 2);
    kevo__eval_result_set_paired(res, KEVO_BASELINE_REFERENCE, rt, rs, 2);
    return res;
}

static bool gate(const shape_in *in, double slack, double floor, char *why,
                 size_t size)
{
    kevo_eval_result *h = held(in, 2);
    bool pass = kevo_gate_check(h, slack, floor, why, size);
    kevo_eval_result_free(h);
    return pass;
}

static void test_slack(void)
{
    char why[1024];
    /* Faster at both shapes. */
    shape_in fast[2] = {{10e-6, 0, 12e-6, 0, 20e-6, 0},
                        {2.0e-6, 0, 2.2e-6, 0, 3e-6, 0}};
    ok(gate(fast, 0.1, 0, why, sizeof why), "faster everywhere: passes");
    is_str(why,
           "held-out n=1000003: 10 us vs seed 12 us, 1.20x, allowed 0.91x: "
           "faster; held-out n=77: 2 us vs seed 2.2 us, 1.10x, allowed 0.91x: "
           "faster",
           "why names each shape, both times, the ratio and what is allowed");

    /* 8% slower at one shape: inside a 10% slack, outside 5%. */
    shape_in slower8[2] = {{10.8e-6, 0, 10e-6, 0, 20e-6, 0},
                           {2e-6, 0, 2e-6, 0, 3e-6, 0}};
    ok(gate(slower8, 0.1, 0, why, sizeof why),
       "8%% slower, slack 10%%: passes");
    like_str(why, "within the slack", "why: within the slack");
    ok(!gate(slower8, 0.05, 0, why, sizeof why),
       "8%% slower, slack 5%%: fails");
    like_str(why,
             "held-out n=1000003: 10.8 us vs seed 10 us, 0.93x, "
             "allowed 0.95x: slower",
             "why: the failing shape");

    /* The collapse the gate exists for: 0.29x of the seed. */
    shape_in collapse[2] = {{10e-6, 0, 12e-6, 0, 20e-6, 0},
                            {41.2e-6, 0.002, 12.1e-6, 0.002, 13e-6, 0.002}};
    ok(!gate(collapse, 0.1, 0.86e-6, why, sizeof why),
       "0.29x of the seed at one shape: fails");
    ok(strncmp(why,
               "held-out n=77: 41.2 us vs seed 12.1 us, 0.29x, allowed "
               "0.91x: slower",
               strlen("held-out n=77: 41.2 us vs seed 12.1 us, 0.29x, allowed "
                      "0.91x: slower")) == 0,
       "why: the failing shape comes first");
    diag("%s", why);
    ok(gate(collapse, 3.0, 0, why, sizeof why), "slack 300%%: passes");
}

static void test_precision(void)
{
    char why[1024];
    /* 12% slower: outside the 10% slack by 2% of the seed's time. */
    shape_in noisy[2] = {{11.2e-6, 0.03, 10e-6, 0.03, 20e-6, 0},
                         {2e-6, 0.01, 2e-6, 0.01, 3e-6, 0}};
    ok(gate(noisy, 0.1, 0, why, sizeof why),
       "12%% slower with medians known to 3%%: equal within the precision");
    like_str(why, "equal within the timing precision", "why: the precision");
    shape_in precise[2] = {{11.2e-6, 0.001, 10e-6, 0.001, 20e-6, 0},
                           {2e-6, 0.001, 2e-6, 0.001, 3e-6, 0}};
    ok(!gate(precise, 0.1, 0, why, sizeof why),
       "12%% slower with medians known to 0.1%%: fails");
    /* Unknown spreads count as exact. */
    shape_in unknown[2] = {{11.2e-6, NAN, 10e-6, NAN, 20e-6, NAN},
                           {2e-6, NAN, 2e-6, NAN, 3e-6, NAN}};
    ok(!gate(unknown, 0.1, 0, why, sizeof why),
       "unknown precision: judged on the medians");
}

static void test_floor(void)
{
    char why[1024];
    /* A 77-element launch: 1.34 us against the seed's 1.18 us is 0.88x,
     * but a 0.16 us difference is below the launch latency. */
    shape_in tiny[2] = {{8e-6, 0.001, 8e-6, 0.001, 9e-6, 0},
                        {1.34e-6, 0.001, 1.18e-6, 0.001, 2e-6, 0}};
    ok(gate(tiny, 0.1, 0.86e-6, why, sizeof why),
       "0.16 us slower on a tiny shape, floor 0.86 us: passes");
    like_str(why,
             "held-out n=77: 1.34 us vs seed 1.18 us, 0.88x, allowed "
             "0.91x: equal below the floor",
             "why: the floor");
    ok(!gate(tiny, 0.1, 0, why, sizeof why), "without a floor: fails");
    ok(!gate(tiny, 0.1, 0.1e-6, why, sizeof why), "a floor of 0.1 us: fails");
}

static void test_baselines(void)
{
    char why[1024];
    /* No seed: the reference is the baseline. */
    shape_in noseed[2] = {{10e-6, 0, NAN, NAN, 9.5e-6, 0},
                          {2e-6, 0, NAN, NAN, 2.5e-6, 0}};
    ok(gate(noseed, 0.1, 0, why, sizeof why), "no seed: against the reference");
    like_str(why, "10 us vs reference 9.5 us", "why names the reference");

    /* The seed is wrong at n=77 (no time there): the reference decides
     * there, the seed elsewhere. */
    shape_in seed_wrong[2] = {{10e-6, 0, 10e-6, 0, 30e-6, 0},
                              {5e-6, 0, NAN, NAN, 2.5e-6, 0}};
    ok(!gate(seed_wrong, 0.1, 0, why, sizeof why),
       "seed wrong at n=77: twice the reference's time there fails");
    like_str(why, "held-out n=77: 5 us vs reference 2.5 us, 0.50x",
             "why: the reference at the seed's wrong shape");
    like_str(why, "held-out n=1000003: 10 us vs seed 10 us",
             "why: the seed where it is right");

    /* No baseline at all: correctness alone. */
    shape_in none[2] = {{10e-6, 0, NAN, NAN, NAN, NAN},
                        {5e-6, 0, NAN, NAN, NAN, NAN}};
    ok(gate(none, 0.1, 0, why, sizeof why), "no baseline: correct passes");
    like_str(why, "correct, no baseline time", "why says so");

    /* The seed against itself. */
    shape_in self[2] = {{10e-6, 0.01, 10e-6, 0.01, 12e-6, 0},
                        {2e-6, 0.01, 2e-6, 0.01, 3e-6, 0}};
    ok(gate(self, 0, 0, why, sizeof why), "the seed passes against itself");
}

static void test_failures(void)
{
    char why[1024];
    shape_in wrong[2] = {{1e-6, 0, 10e-6, 0, 20e-6, 0},
                         {NAN, 0, 2e-6, 0, 3e-6, 0}};
    ok(!gate(wrong, 0.1, 0, why, sizeof why),
       "wrong at a held-out shape: fails, however fast elsewhere");
    is_str(why,
           "held-out shape 1 (n=77) fails: wrong: held-out shape 1 (n=77): "
           "z[76] = nan, want 0.5 (1 bad element)",
           "why names the shape");

    shape_in fast[2] = {{10e-6, 0, 12e-6, 0, 20e-6, 0},
                        {2e-6, 0, 2.2e-6, 0, 3e-6, 0}};
    kevo_eval_result *h = held(fast, 2);
    ok(!kevo_gate_check(h, NAN, 0, why, sizeof why), "NaN slack");
    like_str(why, "is not a number >= 0", "why");
    ok(!kevo_gate_check(h, -0.1, 0, why, sizeof why), "negative slack");
    ok(!kevo_gate_check(h, 0.1, -1, why, sizeof why), "negative floor");
    like_str(why, "floor", "why");
    ok(!kevo_gate_check(NULL, 0.1, 0, why, sizeof why), "no result");
    is_str(why, "no held-out result", "why");
    ok(kevo_gate_check(h, 0.1, 0, NULL, 0), "no why asked for");
    char small[12];
    ok(kevo_gate_check(h, 0.1, 0, small, sizeof small), "a short why");
    is_str(small, "held-out n=", "the why is cut and terminated");
    kevo_eval_result_free(h);

    /* A training result is not a held-out one. */
    json_t *msg = json_pack("{s:s,s:[]}", "verdict", "ok", "shapes");
    kevo_eval_context ctx = {&dev, NULL, NULL, 0};
    kevo_eval_result *t = NULL;
    kevo__eval_result_new(saxpy, kevo_task_seed(saxpy), KEVO_SHAPES_TRAIN, NULL,
                          NULL, &ctx, &t, NULL);
    ok(t && !kevo_gate_check(t, 0.1, 0, why, sizeof why),
       "a training result fails");
    like_str(why, "not of the held-out shapes", "why");
    kevo_eval_result_free(t);
    json_decref(msg);
}

/* Each shape's call, as summaries and reports show it. */
static void test_rows(void)
{
    shape_in in[2] = {{11.2e-6, 0.03, 10e-6, 0.03, 20e-6, 0},
                      {5e-6, 0, NAN, NAN, 2.5e-6, 0.01}};
    kevo_eval_result *h = held(in, 2);
    kevo_shape_result r = {.size = sizeof r};
    kevo__gate_row row;
    kevo_eval_result_shape(h, 0, &r);
    ok(r.paired, "the baselines were set in pairs");
    is_double(r.seed_spread, 0.03, 1e-12, "the seed's spread is kept");
    kevo__gate_judge(&r, 0.1, 0, &row);
    is_int(row.call, KEVO__GATE_EQUAL_NOISE, "row 0: equal within the noise");
    is_str(row.baseline, "seed", "row 0: against the seed");
    is_double(row.speed, 10.0 / 11.2, 1e-9, "row 0: speed");
    is_double(row.allowed, 1 / 1.1, 1e-12, "row 0: allowed");
    ok(kevo__gate_call_passes(row.call), "row 0 passes");
    kevo_eval_result_shape(h, 1, &r);
    kevo__gate_judge(&r, 0.1, 0, &row);
    is_int(row.call, KEVO__GATE_SLOWER, "row 1: slower");
    is_str(row.baseline, "reference", "row 1: against the reference");
    ok(!kevo__gate_call_passes(row.call), "row 1 fails");
    kevo_eval_result_free(h);
}

/* What kevo eval --held-out --json wrote on an H200 (the seed of saxpy,
 * and the kernel that is fast only at the training sizes): the held-out
 * results, with the seed and the reference timed in pairs, read back and
 * gated again give the verdict and the text it printed. */
static void test_real(const char *file, bool want)
{
    char *path = kevo__asprintf("%s/tests/data/eval/%s", tap_srcdir(), file);
    json_error_t jerr;
    json_t *root = path ? json_load_file(path, 0, &jerr) : NULL;
    free(path);
    if (!root)
        bail_out("%s: %s", file, jerr.text);
    kevo_eval_result *res = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    is_int(kevo__eval_result_from_json(json_object_get(root, "held_out"), file,
                                       NULL, &res, &err),
           KEVO_OK, "%s: the held-out result reads (%s)", file, err.text);
    kevo_shape_result r = {.size = sizeof r};
    ok(res && kevo_eval_result_shape(res, 0, &r) == KEVO_OK && r.paired &&
           r.seed_spread > 0 && r.reference_spread > 0,
       "%s: its baselines were timed in pairs, with their precision", file);
    char why[2048];
    /* The H200's measured launch latency was 0.58 us. */
    bool pass = kevo_gate_check(res, 0.1, 0.58e-6, why, sizeof why);
    json_t *gate = json_object_get(root, "gate");
    is_int(pass, want, "%s: the gate %s", file, want ? "passes" : "fails");
    is_int(pass, json_is_true(json_object_get(gate, "passed")),
           "%s: as it did on the GPU", file);
    is_str(why, json_string_value(json_object_get(gate, "why")),
           "%s: with the same text", file);
    kevo_eval_result_free(res);
    json_decref(root);
}

int main(void)
{
    char *path = kevo__asprintf("%s/examples/tasks/saxpy.json", tap_srcdir());
    kevo_error err = KEVO__ERROR_INIT;
    if (!path || kevo_task_load(path, &saxpy, &err) != KEVO_OK)
        bail_out("saxpy.json: %s", err.text);
    free(path);
    test_slack();
    test_precision();
    test_floor();
    test_baselines();
    test_failures();
    test_rows();
    test_real("h200_saxpy_seed_eval.json", true);
    test_real("h200_saxpy_fastpath_eval.json", false);
    kevo_task_free(saxpy);
    return done_testing();
}

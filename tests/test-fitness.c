/*
 * test-fitness.c: the roofline arithmetic against hand-computed values
 * (memory-bound and compute-bound shapes, the peak a task names, unknown
 * ceilings), the geometric mean, the fitness functions (roofline and
 * speedups), zero fitness on any failure and the suspicious flag (the
 * held-out gate has tests/test-gate.c).
 *
 * The device: 3e12 bytes/s of copy bandwidth, 5e13 FP32 flop/s, 4e14 TF32
 * flop/s.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_private.h"
#include "tap.h"

static const kevo_ceilings dev = {3e12, {5e13, 2.5e13, 4e14, 8e14, 8e14}, 0};

static kevo_fitness_shape fshape(double bytes, double flops, kevo_peak peak,
                                 double time)
{
    kevo_fitness_shape s = {true, time, bytes, flops, peak, NAN, NAN};
    return s;
}

static void test_roofline(void)
{
    kevo_roofline r;
    /* saxpy at n = 2^24: 12n bytes, 2n flops. 201326592 / 3e12 =
     * 6.7108864e-5 s > 33554432 / 5e13 = 6.7108864e-7 s: memory-bound. */
    kevo_fitness_shape s = fshape(201326592, 33554432, KEVO_PEAK_FP32, 8e-5);
    kevo__roofline(&s, &dev, &r);
    ok(r.bound_known && r.bound == KEVO_BOUND_MEMORY, "saxpy: memory-bound");
    is_double(r.floor, 6.7108864e-5, 1e-18, "saxpy: floor");
    is_double(r.efficiency, 0.8388608, 1e-12, "saxpy: efficiency");
    is_double(r.gbytes_per_s, 2516.5824, 1e-9, "saxpy: GB/s");
    is_double(r.gflops_per_s, 419.4304, 1e-9, "saxpy: GFLOP/s");

    /* saxpy at n = 77: 924 bytes (3.08e-10 s) against a launch latency of
     * 2e-6 s: the latency is the floor; at 2.5e-6 s, 0.8. Without a known
     * latency the term is left out. */
    kevo_ceilings lat = dev;
    lat.launch = 2e-6;
    s = fshape(924, 154, KEVO_PEAK_FP32, 2.5e-6);
    kevo__roofline(&s, &lat, &r);
    is_int(r.bound, KEVO_BOUND_LATENCY, "saxpy 77: latency-bound");
    is_double(r.floor, 2e-6, 1e-20, "saxpy 77: the floor is the latency");
    is_double(r.efficiency, 0.8, 1e-12, "saxpy 77: efficiency");
    kevo__roofline(&s, &dev, &r);
    is_int(r.bound, KEVO_BOUND_MEMORY, "saxpy 77, no latency: memory-bound");
    s = fshape(201326592, 33554432, KEVO_PEAK_FP32, 8e-5);
    kevo__roofline(&s, &lat, &r);
    is_double(r.floor, 6.7108864e-5, 1e-18,
              "saxpy 2^24: the latency does not change a large shape");

    /* sgemm 4096^3: 4 * 3 * 4096^2 = 201326592 bytes (6.7108864e-5 s),
     * 2 * 4096^3 = 137438953472 flops (2.74877906944e-3 s): compute. */
    s = fshape(201326592, 137438953472.0, KEVO_PEAK_FP32, 4e-3);
    kevo__roofline(&s, &dev, &r);
    is_int(r.bound, KEVO_BOUND_COMPUTE, "sgemm 4096: compute-bound");
    is_double(r.floor, 2.74877906944e-3, 1e-17, "sgemm 4096: floor");
    is_double(r.efficiency, 0.68719476736, 1e-12, "sgemm 4096: efficiency");
    is_double(r.gflops_per_s, 34359.738368, 1e-7, "sgemm 4096: GFLOP/s");

    /* sgemm 1024^3: 12582912 bytes (4.194304e-6 s), 2147483648 flops
     * (4.294967296e-5 s); at 6e-5 s: 0.715827882666... */
    s = fshape(12582912, 2147483648.0, KEVO_PEAK_FP32, 6e-5);
    kevo__roofline(&s, &dev, &r);
    is_int(r.bound, KEVO_BOUND_COMPUTE, "sgemm 1024: compute-bound");
    is_double(r.efficiency, 0.71582788266666667, 1e-12,
              "sgemm 1024: efficiency");

    /* The same flops against the TF32 peak: 137438953472 / 4e14 =
     * 3.4359738368e-4 s. */
    s = fshape(201326592, 137438953472.0, KEVO_PEAK_TF32, 5e-4);
    kevo__roofline(&s, &dev, &r);
    is_double(r.floor, 3.4359738368e-4, 1e-18, "tf32: the task's peak");
    is_double(r.efficiency, 0.68719476736, 1e-12, "tf32: efficiency");

    /* A balanced shape is memory-bound: 3e12 bytes and 5e13 flops. */
    s = fshape(3e12, 5e13, KEVO_PEAK_FP32, 2);
    kevo__roofline(&s, &dev, &r);
    ok(r.bound == KEVO_BOUND_MEMORY && r.floor == 1 && r.efficiency == 0.5,
       "balanced: memory-bound, floor 1 s, efficiency 0.5");

    /* transpose: bytes only, so the peak is not needed. */
    kevo_ceilings bw_only = {3e12, {0}, 0};
    s = fshape(8.0 * 8192 * 8192, 0, KEVO_PEAK_FP32, 2e-4);
    kevo__roofline(&s, &bw_only, &r);
    is_double(r.efficiency, 0.89478485333333333, 1e-12,
              "transpose: no flops, no peak needed");
    is_double(r.gflops_per_s, 0, 0, "transpose: 0 GFLOP/s");

    /* Unknown ceilings give unknown floors. */
    s = fshape(201326592, 137438953472.0, KEVO_PEAK_FP32, 4e-3);
    kevo__roofline(&s, &bw_only, &r);
    ok(isnan(r.floor) && isnan(r.efficiency) && !r.bound_known,
       "no FP32 peak: unknown floor");
    ok(!isnan(r.gflops_per_s), "no FP32 peak: the rates are still known");
    kevo_ceilings none = {0, {5e13}, 0};
    kevo__roofline(&s, &none, &r);
    ok(isnan(r.floor), "no bandwidth: unknown floor");
    kevo__roofline(&s, NULL, &r);
    ok(isnan(r.floor), "no ceilings: unknown floor");
    s = fshape(201326592, 137438953472.0, KEVO_PEAK_BF16, 4e-3);
    kevo_ceilings no_bf16 = {3e12, {5e13, 2.5e13, 4e14, 8e14, 0}, 0};
    kevo__roofline(&s, &no_bf16, &r);
    ok(isnan(r.floor), "no BF16 peak: unknown floor");

    /* Untimed: a floor, no efficiency. */
    s = fshape(201326592, 33554432, KEVO_PEAK_FP32, NAN);
    kevo__roofline(&s, &dev, &r);
    ok(r.floor > 0 && isnan(r.efficiency) && isnan(r.gbytes_per_s),
       "untimed: floor without efficiency");
    s = fshape(NAN, NAN, KEVO_PEAK_FP32, 1e-3);
    kevo__roofline(&s, &dev, &r);
    ok(isnan(r.floor) && isnan(r.gbytes_per_s), "no cost model: nothing");
    is_str(kevo__bound_name(KEVO_BOUND_MEMORY), "memory", "bound name");
    is_str(kevo__bound_name(KEVO_BOUND_COMPUTE), "compute", "bound name");
    is_str(kevo__bound_name((kevo_bound)7), "?", "bound name: unknown");
}

static void test_geomean(void)
{
    double a[] = {0.5, 2};
    is_double(kevo__geomean(a, 2), 1, 1e-15, "geomean(0.5, 2) = 1");
    double b[] = {0.8388608, 0.67108864, 0.5};
    is_double(kevo__geomean(b, 3), cbrt(0.8388608 * 0.67108864 * 0.5), 1e-15,
              "geomean of three");
    double c[] = {4};
    is_double(kevo__geomean(c, 1), 4, 1e-15, "geomean of one");
    is_double(kevo__geomean(c, 0), 0, 0, "geomean of none is 0");
    double d[] = {0.5, NAN, 2};
    is_double(kevo__geomean(d, 3), 0, 0, "a NaN makes it 0");
    double e[] = {0.5, 0, 2};
    is_double(kevo__geomean(e, 3), 0, 0, "a 0 makes it 0");
    double f[] = {0.5, -1, 2};
    is_double(kevo__geomean(f, 3), 0, 0, "a negative makes it 0");
    double g[] = {0.5, INFINITY};
    is_double(kevo__geomean(g, 2), 0, 0, "an infinity makes it 0");
}

static void test_functions(void)
{
    const kevo_fitness_fn *rf = kevo__fitness_find("roofline");
    ok(rf == &kevo__fitness_roofline, "find roofline");
    ok(kevo__fitness_find("speedup_seed") == &kevo__fitness_speedup_seed,
       "find speedup_seed");
    ok(kevo__fitness_find("speedup_reference") ==
           &kevo__fitness_speedup_reference,
       "find speedup_reference");
    ok(kevo__fitness_find("flops") == NULL && kevo__fitness_find(NULL) == NULL,
       "unknown function");
    size_t n = 0;
    while (kevo__fitness_at(n))
        n++;
    is_uint(n, 3, "three fitness functions");
    ok(kevo__fitness_at(0) == rf, "roofline first");

    kevo_fitness_shape s = fshape(201326592, 33554432, KEVO_PEAK_FP32, 8e-5);
    is_double(rf->score(&s, &dev), 0.8388608, 1e-12, "roofline score");
    s.correct = false;
    ok(isnan(rf->score(&s, &dev)), "roofline: a failed shape has no score");
    s.correct = true;
    s.time = NAN;
    ok(isnan(rf->score(&s, &dev)), "roofline: untimed shape has no score");

    double scores[] = {0.8388608, 0.68719476736, NAN};
    is_double(rf->combine(scores, 2), sqrt(0.8388608 * 0.68719476736), 1e-15,
              "roofline combine");
    is_double(rf->combine(scores, 3), 0, 0,
              "roofline combine: 0 with a failed shape");

    s = fshape(1, 1, KEVO_PEAK_FP32, 2e-3);
    s.seed_time = 3e-3;
    s.reference_time = 1e-3;
    is_double(kevo__fitness_speedup_seed.score(&s, NULL), 1.5, 1e-15,
              "speedup over the seed");
    is_double(kevo__fitness_speedup_reference.score(&s, NULL), 0.5, 1e-15,
              "speedup over the reference");
    s.seed_time = NAN;
    ok(isnan(kevo__fitness_speedup_seed.score(&s, NULL)),
       "no seed time: no score");
    s.correct = false;
    ok(isnan(kevo__fitness_speedup_reference.score(&s, NULL)),
       "failed shape: no speedup score");
    double sp[] = {1.5, 2.0 / 3.0};
    is_double(kevo__fitness_speedup_seed.combine(sp, 2), 1, 1e-15,
              "speedup combine: geometric mean");
}

/* ---- results from worker messages ---------------------------------------
 * The saxpy task: training n = 16777216, 4194304, 1000000; held-out n =
 * 1000003, 77. Its floor at n is 12n / 3e12 s; a shape of efficiency e
 * takes floor / e. */

static kevo_task *saxpy;

static double saxpy_floor(double n)
{
    return 12 * n / 3e12;
}

/* A worker message: shape i has efficiency eff[i] (NaN: not timed; a
 * negative value: the shape is wrong). */
static json_t *message(kevo_shape_set set, const double *eff, size_t n)
{
    json_t *shapes = json_array();
    const char *verdict = "ok";
    for (size_t i = 0; i < n; i++) {
        const int64_t *dims = kevo_task_shape(saxpy, set, i);
        bool wrong = eff[i] < 0;
        json_t *time = isnan(eff[i]) || wrong
                           ? json_null()
                           : json_pack("{s:f,s:i,s:i}", "median",
                                       saxpy_floor((double)dims[0]) / eff[i],
                                       "reps", 10, "kernels_per_rep", 1);
        json_array_append_new(
            shapes, json_pack("{s:s,s:i,s:{s:I},s:b,s:o}", "set",
                              set == KEVO_SHAPES_TRAIN ? "train" : "held_out",
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
                            json_string("z[76] = nan, want 0.5 (1 bad "
                                        "element)"));
    return msg;
}

static kevo_eval_result *result(kevo_shape_set set, const double *eff, size_t n,
                                double level)
{
    json_t *msg = message(set, eff, n);
    kevo_eval_context ctx = {&dev, NULL, NULL, level};
    kevo_eval_result *res = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo__eval_result_new(saxpy, kevo_task_seed(saxpy), set, msg, NULL,
                              &ctx, &res, &err) != KEVO_OK)
        bail_out("result: %s", err.text);
    json_decref(msg);
    return res;
}

static void test_result_fitness(void)
{
    double e1[] = {0.8, 0.5, 0.4};
    kevo_eval_result *r = result(KEVO_SHAPES_TRAIN, e1, 3, 0);
    is_double(kevo_eval_result_fitness(r), cbrt(0.8 * 0.5 * 0.4), 1e-12,
              "fitness: the geometric mean of 0.8, 0.5, 0.4");
    ok(!kevo_eval_result_suspicious(r), "fitness: not suspicious");
    kevo_eval_result_free(r);

    double e2[] = {0.8, -1};
    r = result(KEVO_SHAPES_TRAIN, e2, 2, 0);
    is_int(kevo_eval_result_verdict(r), KEVO_VERDICT_WRONG, "a wrong shape");
    is_double(kevo_eval_result_fitness(r), 0, 0, "a wrong shape: fitness 0");
    kevo_shape_result s = {.size = sizeof(s)};
    kevo_eval_result_shape(r, 0, &s);
    is_double(s.efficiency, 0.8, 1e-12,
              "a wrong shape: the others keep their efficiency");
    kevo_eval_result_free(r);

    double e3[] = {0.8, NAN, 0.4};
    r = result(KEVO_SHAPES_TRAIN, e3, 3, 0);
    is_int(kevo_eval_result_verdict(r), KEVO_VERDICT_OK, "an untimed shape");
    is_double(kevo_eval_result_fitness(r), 0, 0,
              "a shape without a time: fitness 0");
    kevo_eval_result_free(r);

    double e4[] = {0.8, 1.2, 0.4};
    r = result(KEVO_SHAPES_TRAIN, e4, 3, 0);
    ok(kevo_eval_result_suspicious(r), "efficiency 1.2 is suspicious");
    is_double(kevo_eval_result_fitness(r), cbrt(0.8 * 1.2 * 0.4), 1e-12,
              "a suspicious result keeps its fitness");
    kevo_eval_result_free(r);
    r = result(KEVO_SHAPES_TRAIN, e4, 3, 1.25);
    ok(!kevo_eval_result_suspicious(r), "not at level 1.25");
    kevo_eval_result_free(r);
    double e5[] = {0.8, 1.05, 0.4};
    r = result(KEVO_SHAPES_TRAIN, e5, 3, 0);
    kevo_eval_result_shape(r, 1, &s);
    ok(s.efficiency <= 1.05 + 1e-12, "1.05 exactly");
    ok(kevo_eval_result_suspicious(r) == (s.efficiency > 1.05),
       "flagged only above the level");
    kevo_eval_result_free(r);
}

int main(void)
{
    char *path = kevo__asprintf("%s/examples/tasks/saxpy.json", tap_srcdir());
    kevo_error err = KEVO__ERROR_INIT;
    if (!path || kevo_task_load(path, &saxpy, &err) != KEVO_OK)
        bail_out("saxpy.json: %s", err.text);
    free(path);
    test_roofline();
    test_geomean();
    test_functions();
    test_result_fitness();
    kevo_task_free(saxpy);
    return done_testing();
}

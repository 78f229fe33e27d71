/*
 * test-eval-result.c: evaluation results built from GPU worker result
 * messages (the JSON files of tests/data/eval) and the NVRTC output of the
 * suite's seeds (tests/data/ptx): the getters, the fitness and the speedups,
 * the behaviour descriptors, JSON written and read back, malformed messages
 * and failure results. The evaluator's options: test-options.c.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_private.h"
#include "tap.h"

static const kevo_ceilings ceilings = {
    3e12, {5e13, 2.5e13, 4e14, 8e14, 8e14}, 0};

static char *slurp(const char *dir, const char *name, size_t *len)
{
    char *path = kevo__asprintf("%s/%s/%s", tap_srcdir(), dir, name);
    char *data = NULL;
    size_t n = 0;
    if (!path || kevo__read_file(path, true, &data, &n, NULL) != KEVO_OK)
        bail_out("cannot read %s", path ? path : name);
    free(path);
    if (len)
        *len = n;
    return data;
}

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
    char *text = slurp("tests/data/eval", name, NULL);
    json_t *v = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo__json_parse(text, name, &v, &err) != KEVO_OK)
        bail_out("%s", err.text);
    free(text);
    return v;
}

/* The compile outcome of a seed: its PTX and log from tests/data/ptx. */
typedef struct seed_build {
    char *ptx, *log;
    kevo_compile_info info;
} seed_build;

static void seed_build_load(seed_build *b, const char *task)
{
    char name[128];
    size_t n = 0;
    snprintf(name, sizeof name, "%s_seed.ptx", task);
    b->ptx = slurp("tests/data/ptx", name, &n);
    snprintf(name, sizeof name, "%s_seed.log", task);
    b->log = slurp("tests/data/ptx", name, NULL);
    b->info = (kevo_compile_info){true, NULL, b->log, b->ptx, n, 0.125, false};
}

static void seed_build_free(seed_build *b)
{
    free(b->ptx);
    free(b->log);
}

/* A result of task's seed from the worker message in file. */
static kevo_eval_result *build(const kevo_task *task, const char *file,
                               kevo_shape_set set, const seed_build *b,
                               const kevo_fitness_fn *fn)
{
    json_t *msg = load_json(file);
    kevo_eval_context ctx = {&ceilings, NULL, fn, 0};
    kevo_eval_result *res = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo__eval_result_new(task, kevo_task_seed(task), set, msg,
                              b ? &b->info : NULL, &ctx, &res, &err) != KEVO_OK)
        bail_out("%s: %s", file, err.text);
    json_decref(msg);
    return res;
}

static double descriptor(const kevo_eval_result *res, const char *name)
{
    double v = NAN;
    if (kevo_eval_result_descriptor(res, name, &v) != KEVO_OK)
        return NAN;
    return v;
}

static kevo_shape_result shape(const kevo_eval_result *res, size_t i)
{
    kevo_shape_result r = {.size = sizeof(r)};
    if (kevo_eval_result_shape(res, i, &r) != KEVO_OK)
        bail_out("no shape %zu", i);
    return r;
}

/* to_json, from_json and to_json again give the same text. */
static void round_trip(const kevo_eval_result *res, const char *what)
{
    char *a = NULL, *b = NULL;
    json_t *v = NULL;
    kevo_eval_result *back = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    ok(kevo_eval_result_to_json(res, &a, &err) == KEVO_OK, "%s: to JSON", what);
    ok(a && kevo__json_parse(a, what, &v, &err) == KEVO_OK,
       "%s: the JSON parses", what);
    ok(v && kevo__eval_result_from_json(v, what, NULL, &back, &err) == KEVO_OK,
       "%s: read back (%s)", what, err.text);
    ok(back && kevo_eval_result_to_json(back, &b, &err) == KEVO_OK,
       "%s: to JSON again", what);
    ok(a && b && strcmp(a, b) == 0, "%s: the same text", what);
    if (back) {
        is_double(kevo_eval_result_fitness(back), kevo_eval_result_fitness(res),
                  0, "%s: same fitness", what);
        is_int(kevo_eval_result_verdict(back), kevo_eval_result_verdict(res),
               "%s: same verdict", what);
        is_uint(kevo_candidate_hash(kevo_eval_result_candidate(back)),
                kevo_candidate_hash(kevo_eval_result_candidate(res)),
                "%s: same candidate", what);
    }
    kevo_eval_result_free(back);
    json_decref(v);
    free(a);
    free(b);
}

static void test_saxpy(void)
{
    kevo_task *task = load_task("saxpy");
    seed_build b;
    seed_build_load(&b, "saxpy");
    kevo_eval_result *res =
        build(task, "saxpy_train_ok.json", KEVO_SHAPES_TRAIN, &b, NULL);
    kevo__eval_result_set_ticket(res, 42);

    is_int(kevo_eval_result_verdict(res), KEVO_VERDICT_OK, "saxpy: ok");
    is_str(kevo_eval_result_reason(res), NULL, "saxpy: no reason");
    is_uint(kevo_eval_result_ticket(res), 42, "saxpy: ticket");
    ok(kevo_eval_result_candidate(res) == kevo_task_seed(task),
       "saxpy: the result keeps a reference to the candidate, not a copy");
    is_str(kevo_eval_result_compile_log(res), b.log, "saxpy: compile log");
    ok(!kevo_eval_result_cached(res), "saxpy: not from the cache");
    is_int(kevo_eval_result_shape_set(res), KEVO_SHAPES_TRAIN, "saxpy: set");
    is_uint(kevo_eval_result_shape_count(res), 3, "saxpy: 3 shapes");

    kevo_shape_result r = shape(res, 0);
    is_uint(r.size, sizeof(r), "shape 0: size");
    ok(r.correct, "shape 0: correct");
    is_uint(r.index, 0, "shape 0: index");
    is_double(r.max_abs_err, 2.384185791015625e-07, 0, "shape 0: abs error");
    is_double(r.max_rel_err, 1.1920928955078125e-07, 0, "shape 0: rel error");
    is_uint(r.bad_elements, 0, "shape 0: no bad element");
    is_str(r.worst_arg, "z", "shape 0: worst arg");
    is_uint(r.worst_index, 123, "shape 0: worst index");
    is_double(r.worst_got, 1.5, 0, "shape 0: worst got");
    is_double(r.worst_want, 1.4999998, 0, "shape 0: worst want");
    is_double(r.time, 8e-5, 0, "shape 0: median time");
    is_double(r.time_min, 7.9e-5, 0, "shape 0: min");
    is_double(r.time_max, 8.3e-5, 0, "shape 0: max");
    is_double(r.time_cv, 0.004, 0, "shape 0: cv");
    is_double(r.time_spread, 0.003, 0, "shape 0: spread");
    is_uint(r.reps, 40, "shape 0: reps");
    is_uint(r.kernels_per_rep, 1, "shape 0: kernels per rep");
    is_double(r.bytes, 12.0 * 16777216, 0, "shape 0: bytes 12n");
    is_double(r.flops, 2.0 * 16777216, 0, "shape 0: flops 2n");
    /* 201326592 B / 3e12 B/s = 6.7108864e-5 s; / 8e-5 s = 0.8388608. */
    is_double(r.floor, 6.7108864e-5, 1e-18, "shape 0: floor");
    is_double(r.efficiency, 0.8388608, 1e-12, "shape 0: efficiency");
    is_int(r.bound, KEVO_BOUND_MEMORY, "shape 0: memory-bound");
    is_double(r.gbytes_per_s, 2516.5824, 1e-9, "shape 0: GB/s");
    is_double(r.gflops_per_s, 419.4304, 1e-9, "shape 0: GFLOP/s");
    is_double(r.dram_read_bytes, 134217728, 0, "shape 0: DRAM read");
    is_double(r.dram_write_bytes, 67108864, 0, "shape 0: DRAM written");
    is_double(r.achieved_occupancy, 0.87, 0, "shape 0: achieved occupancy");
    is_double(r.reference_time, 9.6e-5, 0, "shape 0: reference time");
    ok(isnan(r.seed_time), "shape 0: no seed time yet");
    r = shape(res, 2);
    ok(isnan(r.achieved_occupancy), "shape 2: a null metric is NaN");
    is_double(r.efficiency, 0.5, 1e-12, "shape 2: efficiency 4e-6 / 8e-6");

    double fit = cbrt(0.8388608 * 0.67108864 * 0.5);
    is_double(kevo_eval_result_fitness(res), fit, 1e-12,
              "saxpy: fitness is the geometric mean");
    ok(!kevo_eval_result_suspicious(res), "saxpy: nothing suspicious");

    is_double(descriptor(res, "memory"), 0, 0, "saxpy: scalar loads");
    is_double(descriptor(res, "block_size"), 256, 0, "saxpy: 256 threads");
    is_double(descriptor(res, "warp_ops"), 0, 0, "saxpy: no warp ops");
    is_double(descriptor(res, "registers"), 12, 0, "saxpy: 12 registers");
    is_double(descriptor(res, "shared_bytes"), 0, 0, "saxpy: no shared");
    is_double(descriptor(res, "spills"), 0, 0, "saxpy: no spills");
    is_double(descriptor(res, "occupancy"), 1, 0,
              "saxpy: occupancy calculated (256 threads, 12 registers)");
    /* (134217728 + 67108864) B / 8e-5 s / 3e12 B/s at the largest shape. */
    is_double(descriptor(res, "dram_fraction"), 0.8388608, 1e-12,
              "saxpy: DRAM fraction at the largest shape");
    is_int(kevo_eval_result_descriptor(res, "colour", NULL), KEVO_ENOENT,
           "unknown descriptor");

    is_double(kevo_eval_result_seconds(res, KEVO_PHASE_COMPILE), 0.125, 0,
              "seconds: compile");
    is_double(kevo_eval_result_seconds(res, KEVO_PHASE_TRANSFER), 0.002, 0,
              "seconds: transfer");
    is_double(kevo_eval_result_seconds(res, KEVO_PHASE_RUN), 0.004, 1e-15,
              "seconds: run and check");
    is_double(kevo_eval_result_seconds(res, KEVO_PHASE_TIME), 0.05, 0,
              "seconds: time");
    is_double(kevo_eval_result_seconds(res, KEVO_PHASE_TOTAL), 0.185, 1e-15,
              "seconds: total is compile + the worker's");
    ok(isnan(kevo_eval_result_seconds(res, (kevo_eval_phase)9)),
       "seconds: unknown phase is NaN");
    kevo__eval_result_set_seconds(res, KEVO_PHASE_TOTAL, 0.25);
    is_double(kevo_eval_result_seconds(res, KEVO_PHASE_TOTAL), 0.25, 0,
              "seconds: the evaluator sets the total");

    /* Speedups: over the reference the worker timed, over the seed once
     * its times are attached. */
    double ref_times[3], own[3];
    kevo__eval_result_times(res, KEVO_BASELINE_REFERENCE, ref_times, 3);
    kevo__eval_result_times(res, KEVO_BASELINE_SEED, own, 3);
    is_double(ref_times[1], 2.8e-5, 0, "reference times read back");
    is_double(own[2], 8e-6, 0, "own times read back");
    char *json = NULL;
    kevo_eval_result_to_json(res, &json, NULL);
    like_str(json, "\"reference\": 1.1", "speedup over the reference");
    like_str(json, "\"seed\": null", "no speedup over the seed yet");
    free(json);
    double seed_times[3] = {1.6e-4, 2.5e-5, NAN};
    kevo_error err = KEVO__ERROR_INIT;
    is_int(kevo__eval_result_set_baseline(res, KEVO_BASELINE_SEED, seed_times,
                                          2, &err),
           KEVO_EINVAL, "baseline times must cover every shape");
    is_int(kevo__eval_result_set_baseline(res, KEVO_BASELINE_SEED, seed_times,
                                          3, NULL),
           KEVO_OK, "seed times attached");
    is_double(shape(res, 0).seed_time, 1.6e-4, 0, "shape 0: seed time");
    ok(isnan(shape(res, 2).seed_time), "shape 2: unknown seed time");
    round_trip(res, "saxpy");

    /* The same measurements scored as speedup over the reference. */
    kevo_eval_result *sp = build(task, "saxpy_train_ok.json", KEVO_SHAPES_TRAIN,
                                 &b, &kevo__fitness_speedup_reference);
    is_double(kevo_eval_result_fitness(sp), cbrt(1.2 * 1.12 * 1.125), 1e-12,
              "speedup_reference fitness");
    is_str(kevo__eval_result_fitness_name(sp), "speedup_reference",
           "fitness function name");
    kevo_eval_result *ss = build(task, "saxpy_train_ok.json", KEVO_SHAPES_TRAIN,
                                 &b, &kevo__fitness_speedup_seed);
    is_double(kevo_eval_result_fitness(ss), 0, 0,
              "speedup_seed fitness is 0 without seed times");
    seed_times[2] = 1.6e-5;
    kevo__eval_result_set_baseline(ss, KEVO_BASELINE_SEED, seed_times, 3, NULL);
    is_double(kevo_eval_result_fitness(ss), cbrt(2.0 * 1.0 * 2.0), 1e-12,
              "speedup_seed fitness once seed times are attached");
    round_trip(ss, "speedup_seed");

    kevo_eval_result_free(ss);
    kevo_eval_result_free(sp);
    kevo_eval_result_free(res);
    seed_build_free(&b);
    kevo_task_free(task);
}

static void test_wrong(void)
{
    kevo_task *task = load_task("saxpy");
    seed_build b;
    seed_build_load(&b, "saxpy");
    kevo_eval_result *res =
        build(task, "saxpy_train_wrong.json", KEVO_SHAPES_TRAIN, &b, NULL);
    is_int(kevo_eval_result_verdict(res), KEVO_VERDICT_WRONG, "wrong: verdict");
    like_str(kevo_eval_result_reason(res), "z[4194303] = nan",
             "wrong: the reason names the element");
    is_double(kevo_eval_result_fitness(res), 0, 0, "wrong: fitness 0");
    is_uint(kevo_eval_result_shape_count(res), 2,
            "wrong: the shapes up to the failing one");
    kevo_shape_result r = shape(res, 1);
    ok(!r.correct, "wrong: shape 1 not correct");
    ok(isnan(r.worst_got), "wrong: got null is NaN");
    ok(isnan(r.max_abs_err), "wrong: abs error null is NaN");
    ok(isinf(r.max_rel_err), "wrong: rel error \"inf\"");
    ok(isnan(r.time) && isnan(r.efficiency), "wrong: shape 1 not timed");
    is_double(shape(res, 0).efficiency, 0.8388608, 1e-12,
              "wrong: shape 0 keeps its efficiency");
    is_double(descriptor(res, "occupancy"), 1, 0,
              "wrong: the worker's occupancy");
    round_trip(res, "wrong");
    kevo_eval_result_free(res);
    seed_build_free(&b);
    kevo_task_free(task);
}

static void test_sgemm(void)
{
    kevo_task *task = load_task("sgemm");
    seed_build b;
    seed_build_load(&b, "sgemm");
    kevo_eval_result *res =
        build(task, "sgemm_train_ok.json", KEVO_SHAPES_TRAIN, &b, NULL);
    kevo_shape_result r = shape(res, 0);
    /* 2 * 4096^3 flops / 5e13 = 2.74877906944e-3 s, more than 201326592 B
     * / 3e12 B/s = 6.7108864e-5 s. */
    is_int(r.bound, KEVO_BOUND_COMPUTE, "sgemm 4096^3: compute-bound");
    is_double(r.floor, 2.74877906944e-3, 1e-16, "sgemm 4096^3: floor");
    is_double(r.efficiency, 0.68719476736, 1e-12, "sgemm 4096^3: efficiency");
    is_double(r.gflops_per_s, 34359.738368, 1e-6, "sgemm 4096^3: GFLOP/s");
    r = shape(res, 1);
    is_double(r.efficiency, 4.294967296e-5 / 3.5e-5, 1e-12,
              "sgemm 1024^3: efficiency above 1");
    ok(kevo_eval_result_suspicious(res), "sgemm: suspicious");
    is_double(kevo_eval_result_fitness(res),
              cbrt(0.68719476736 * (4.294967296e-5 / 3.5e-5) * 0.6442450944),
              1e-12, "sgemm: fitness");
    is_double(descriptor(res, "memory"), 2, 0, "sgemm: shared staging");
    is_double(descriptor(res, "registers"), 58, 0, "sgemm: 58 registers");
    is_double(descriptor(res, "shared_bytes"), 4096, 0, "sgemm: 4 KiB shared");
    /* 58 registers: 2048 a warp, 8 warps a sub-partition, 32 warps, 4
     * blocks of 8 warps: 32 / 64. */
    is_double(descriptor(res, "occupancy"), 0.5, 0,
              "sgemm: occupancy calculated 0.5");
    is_int(kevo_eval_result_descriptor(res, "dram_fraction", NULL), KEVO_ERANGE,
           "sgemm: no DRAM fraction without profiling");
    round_trip(res, "sgemm");

    /* At a higher suspicious level nothing is flagged. */
    json_t *msg = load_json("sgemm_train_ok.json");
    kevo_eval_context ctx = {&ceilings, NULL, NULL, 1.25};
    kevo_eval_result *calm = NULL;
    kevo__eval_result_new(task, kevo_task_seed(task), KEVO_SHAPES_TRAIN, msg,
                          &b.info, &ctx, &calm, NULL);
    ok(calm && !kevo_eval_result_suspicious(calm),
       "sgemm: not suspicious at level 1.25");
    kevo_eval_result_free(calm);
    json_decref(msg);
    kevo_eval_result_free(res);
    seed_build_free(&b);
    kevo_task_free(task);
}

static void test_reduce(void)
{
    kevo_task *task = load_task("reduce_sum");
    seed_build b;
    seed_build_load(&b, "reduce_sum");
    kevo_eval_result *res =
        build(task, "reduce_sum_train_ok.json", KEVO_SHAPES_TRAIN, &b, NULL);
    /* reduce_partial (528 blocks of 256 at n = 2^24) outweighs
     * reduce_final (1 block of 1024). */
    is_double(descriptor(res, "block_size"), 256, 0,
              "reduce: the main launch's block");
    is_double(descriptor(res, "registers"), 26, 0,
              "reduce: the main launch's registers");
    is_double(descriptor(res, "shared_bytes"), 32, 0,
              "reduce: the main launch's shared memory");
    is_double(descriptor(res, "occupancy"), 0.75, 0,
              "reduce: the worker's occupancy is preferred");
    is_double(descriptor(res, "warp_ops"), 1, 0, "reduce: shuffles");
    is_double(descriptor(res, "memory"), 0, 0,
              "reduce: 32 bytes of shared memory are not staging");
    char *json = NULL;
    kevo_eval_result_to_json(res, &json, NULL);
    like_str(json, "\"kernel\": \"reduce_final\"", "reduce: both launches");
    like_str(json, "\"shuffles\": 10", "reduce: PTX features in the JSON");
    free(json);
    round_trip(res, "reduce");
    kevo_eval_result_free(res);

    /* Without the worker's attributes: the launch block and ptxas. */
    kevo_eval_result *bare = NULL;
    kevo__eval_result_new(task, kevo_task_seed(task), KEVO_SHAPES_TRAIN, NULL,
                          &b.info, NULL, &bare, NULL);
    ok(bare != NULL, "compile-only result");
    is_int(kevo_eval_result_verdict(bare), KEVO_VERDICT_OK, "compile-only: ok");
    is_uint(kevo_eval_result_shape_count(bare), 0, "compile-only: no shapes");
    is_double(kevo_eval_result_fitness(bare), 0, 0, "compile-only: fitness 0");
    is_double(descriptor(bare, "block_size"), 256, 0,
              "compile-only: block from the launch block");
    is_double(descriptor(bare, "registers"), 26, 0,
              "compile-only: registers from ptxas");
    is_double(descriptor(bare, "occupancy"), 1, 0,
              "compile-only: occupancy calculated");
    round_trip(bare, "compile-only");
    kevo_eval_result_free(bare);
    seed_build_free(&b);
    kevo_task_free(task);
}

static void test_held_out(void)
{
    kevo_task *task = load_task("saxpy");
    kevo_eval_result *res =
        build(task, "saxpy_held_out_ok.json", KEVO_SHAPES_HELD_OUT, NULL, NULL);
    is_int(kevo_eval_result_shape_set(res), KEVO_SHAPES_HELD_OUT,
           "held-out: set");
    is_double(shape(res, 1).efficiency, 0.07, 1e-12,
              "held-out n=77: efficiency");
    is_double(kevo_eval_result_fitness(res), sqrt(0.5 * 0.07), 1e-12,
              "held-out: fitness");
    char text[64];
    is_str(kevo__eval_result_shape_text(res, 1, text, sizeof text), "n=77",
           "held-out: shape text");
    is_int(kevo_eval_result_descriptor(res, "memory", NULL), KEVO_ERANGE,
           "held-out without PTX: no memory descriptor");
    round_trip(res, "held-out");
    kevo_eval_result_free(res);
    kevo_task_free(task);
}

static void test_failures(void)
{
    kevo_task *task = load_task("saxpy");
    kevo_eval_result *res = NULL;
    kevo_compile_info bad = {false,
                             "candidate.cu(12): error: expected a ';'",
                             "candidate.cu(12): error: expected a ';'\n",
                             NULL,
                             0,
                             0.5,
                             true};
    kevo_error err = KEVO__ERROR_INIT;
    json_t *msg = load_json("saxpy_train_ok.json");
    is_int(kevo__eval_result_new(task, kevo_task_seed(task), KEVO_SHAPES_TRAIN,
                                 msg, &bad, NULL, &res, &err),
           KEVO_OK, "compile error: a result");
    is_int(kevo_eval_result_verdict(res), KEVO_VERDICT_COMPILE_ERROR,
           "compile error: verdict");
    is_str(kevo_eval_result_reason(res),
           "candidate.cu(12): error: expected a ';'", "compile error: reason");
    like_str(kevo_eval_result_compile_log(res), "expected a ';'",
             "compile error: log");
    ok(kevo_eval_result_cached(res), "compile error: from the cache");
    is_double(kevo_eval_result_fitness(res), 0, 0, "compile error: fitness 0");
    is_uint(kevo_eval_result_shape_count(res), 0, "compile error: no shapes");
    is_int(kevo_eval_result_descriptor(res, "registers", NULL), KEVO_ERANGE,
           "compile error: no descriptors");
    round_trip(res, "compile error");
    kevo_eval_result_free(res);

    /* ptxas's fatal error, the line that says what is wrong, is among the
     * compiler's errors of the diagnostic. */
    kevo_compile_info regs = bad;
    regs.error = "compile error: ptxas fatal   : (C7602) Insufficient "
                 "registers (40) to compile instruction at line 102 in "
                 "function gemm_bf16. Try to compile with register target "
                 "of 90 or higher.";
    regs.log = "ptxas fatal   : (C7602) Insufficient registers (40) to "
               "compile instruction at line 102 in function gemm_bf16. Try "
               "to compile with register target of 90 or higher.\n"
               "ptxas fatal   : Ptx assembly aborted due to errors\n";
    is_int(kevo__eval_result_new(task, kevo_task_seed(task), KEVO_SHAPES_TRAIN,
                                 msg, &regs, NULL, &res, &err),
           KEVO_OK, "ptxas error: a result");
    char *diag = kevo_eval_result_diagnostic(res);
    like_str(diag,
             "The compiler's errors:\nptxas fatal   : (C7602) Insufficient "
             "registers (40)",
             "ptxas error: the diagnostic shows ptxas's fatal error");
    free(diag);
    kevo_eval_result_free(res);
    json_decref(msg);

    seed_build b;
    seed_build_load(&b, "saxpy");
    is_int(kevo__eval_result_new_failure(
               task, kevo_task_seed(task), KEVO_SHAPES_TRAIN,
               KEVO_VERDICT_TIMEOUT, "no reply within 11000 ms", &b.info, NULL,
               &res, NULL),
           KEVO_OK, "timeout: a result");
    is_int(kevo_eval_result_verdict(res), KEVO_VERDICT_TIMEOUT,
           "timeout: verdict");
    is_str(kevo_eval_result_reason(res), "no reply within 11000 ms",
           "timeout: reason");
    is_double(descriptor(res, "registers"), 12, 0,
              "timeout: the compiled code is still described");
    round_trip(res, "timeout");
    kevo_eval_result_free(res);
    is_int(kevo__eval_result_new_failure(
               task, kevo_task_seed(task), KEVO_SHAPES_TRAIN,
               KEVO_VERDICT_WORKER_DIED, NULL, NULL, NULL, &res, NULL),
           KEVO_OK, "worker died: a result");
    is_str(kevo_eval_result_reason(res), "worker_died",
           "worker died: the verdict's name as reason");
    kevo_eval_result_free(res);
    is_int(kevo__eval_result_new_failure(task, kevo_task_seed(task),
                                         KEVO_SHAPES_TRAIN, KEVO_VERDICT_OK,
                                         NULL, NULL, NULL, &res, NULL),
           KEVO_EINVAL, "a failure with verdict ok is refused");

    /* A PTX that does not parse leaves the PTX descriptors out. */
    kevo_compile_info cut = b.info;
    cut.ptx_len = strstr(b.ptx, "ret;") - b.ptx;
    kevo__eval_result_new(task, kevo_task_seed(task), KEVO_SHAPES_TRAIN, NULL,
                          &cut, NULL, &res, NULL);
    is_int(kevo_eval_result_descriptor(res, "memory", NULL), KEVO_ERANGE,
           "cut PTX: no memory descriptor");
    is_double(descriptor(res, "registers"), 12, 0,
              "cut PTX: registers from the log");
    char *json = NULL;
    kevo_eval_result_to_json(res, &json, NULL);
    like_str(json, "does not end", "cut PTX: the JSON says why");
    free(json);
    kevo_eval_result_free(res);
    seed_build_free(&b);
    kevo_task_free(task);
}

/* What the worker says when it could not read something. */
static void test_worker_unknowns(void)
{
    kevo_task *task = load_task("saxpy");
    seed_build b;
    seed_build_load(&b, "saxpy");
    json_t *msg = json_pack(
        "{s:s,s:s,s:[{s:s,s:i,s:i,s:i,s:i,s:[i,i,i],s:i,s:f}],"
        "s:[{s:s,s:i,s:b,s:{s:n,s:i,s:i}}]}",
        "verdict", "wrong", "reason", "z[0] = nan, want 1", "kernels", "name",
        "saxpy", "registers", -1, "local_bytes", -1, "static_smem", -1,
        "max_threads", -1, "block", 256, 1, 1, "dyn_smem", 0, "occupancy", 0.0,
        "shapes", "set", "train", "index", 0, "correct", 0, "time", "median",
        "reps", 0, "kernels_per_rep", 0);
    kevo_eval_result *res = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    is_int(kevo__eval_result_new(task, kevo_task_seed(task), KEVO_SHAPES_TRAIN,
                                 msg, &b.info, NULL, &res, &err),
           KEVO_OK, "attributes of -1 and a null median are accepted (%s)",
           err.text);
    if (res) {
        is_double(descriptor(res, "registers"), 12, 0,
                  "registers the worker could not read come from ptxas");
        is_double(descriptor(res, "occupancy"), 1, 0,
                  "an occupancy of 0 from the worker is calculated instead");
        ok(isnan(shape(res, 0).time), "a null median is no time");
    }
    kevo_eval_result_free(res);
    json_decref(msg);
    seed_build_free(&b);
    kevo_task_free(task);
}

/* A result that kevo eval wrote on an H100 (before results said how
 * their baselines were timed) reads with the same figures, and what it is
 * written back as reads back to the same text. */
static void test_h100(void)
{
    json_t *v = load_json("h100_sgemm_result.json");
    kevo_eval_result *res = NULL, *again = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    char *want = NULL, *got = NULL;
    is_int(kevo__eval_result_from_json(v, "h100_sgemm_result.json", NULL, &res,
                                       &err),
           KEVO_OK, "H100 result: read (%s)", err.text);
    json_t *w = NULL;
    ok(res && kevo_eval_result_to_json(res, &want, NULL) == KEVO_OK &&
           kevo__json_parse(want, "written", &w, NULL) == KEVO_OK &&
           kevo__eval_result_from_json(w, "written", NULL, &again, NULL) ==
               KEVO_OK &&
           kevo_eval_result_to_json(again, &got, NULL) == KEVO_OK &&
           strcmp(got, want) == 0,
       "H100 result: written back, it reads back to the same text");
    json_decref(w);
    kevo_eval_result_free(again);
    if (res) {
        is_double(kevo_eval_result_fitness(res), 0.1726384174277673, 1e-15,
                  "H100 result: fitness");
        is_double(shape(res, 0).efficiency, 0.2651583643069004, 1e-15,
                  "H100 result: efficiency of 4096^3");
        is_double(descriptor(res, "occupancy"), 0.5, 0,
                  "H100 result: occupancy");
        is_int(shape(res, 2).bound, KEVO_BOUND_COMPUTE,
               "H100 result: compute-bound");
        ok(!kevo_eval_result_suspicious(res), "H100 result: not suspicious");
    }
    kevo_eval_result_free(res);
    free(want);
    free(got);
    json_decref(v);

    /* A key that a checkpoint does not know is refused. */
    v = load_json("h100_sgemm_result.json");
    json_object_set_new(json_object_get(v, "fitness"), "colour",
                        json_string("red"));
    kevo_error_init(&err);
    is_int(kevo__eval_result_from_json(v, "h100_sgemm_result.json", NULL, &res,
                                       &err),
           KEVO_EINVALID, "H100 result: an unknown key");
    like_str(err.text, "$.fitness", "the message names where");
    json_decref(v);
    v = load_json("h100_sgemm_result.json");
    json_object_set_new(json_array_get(json_object_get(v, "shapes"), 1),
                        "correct", json_string("yes"));
    kevo_error_init(&err);
    is_int(kevo__eval_result_from_json(v, "h100_sgemm_result.json", NULL, &res,
                                       &err),
           KEVO_EINVALID, "H100 result: a value of the wrong type");
    like_str(err.text, "$.shapes[1].correct: expected true or false",
             "the message names the field");
    json_decref(v);
}

/* Which device measured a result: none in JSON written before results
 * said (the H100 result reads with none and is written without one), and
 * a label set by the evaluator (or with a rank before it) written as
 * "device" and read back. */
static void test_device(void)
{
    json_t *v = load_json("h100_sgemm_result.json");
    kevo_eval_result *res = NULL, *back = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    char *text = NULL, *again = NULL;
    if (kevo__eval_result_from_json(v, "h100_sgemm_result.json", NULL, &res,
                                    &err) != KEVO_OK)
        bail_out("%s", err.text);
    ok(kevo_eval_result_device(res) == NULL,
       "old JSON: no device, and it still reads");
    kevo_eval_result_to_json(res, &text, NULL);
    ok(text && !strstr(text, "\"device\""),
       "no device: no \"device\" key written");
    free(text);
    text = NULL;

    const char *label = "rank 2 device 1 (NVIDIA H100 80GB HBM3)";
    char copy[64];
    snprintf(copy, sizeof copy, "%s", label);
    kevo__eval_result_set_device(res, copy);
    memset(copy, 'x', sizeof copy - 1);
    is_str(kevo_eval_result_device(res), label,
           "the label is copied, a free-form string");
    json_t *w = NULL;
    ok(kevo_eval_result_to_json(res, &text, NULL) == KEVO_OK &&
           strstr(text, "\"device\": \"rank 2 device 1 (NVIDIA H100 80GB "
                        "HBM3)\""),
       "written as \"device\"");
    ok(text && kevo__json_parse(text, "written", &w, NULL) == KEVO_OK &&
           kevo__eval_result_from_json(w, "written", NULL, &back, &err) ==
               KEVO_OK,
       "read back (%s)", err.text);
    is_str(kevo_eval_result_device(back), label, "the device read back");
    ok(back && kevo_eval_result_to_json(back, &again, NULL) == KEVO_OK &&
           strcmp(again, text) == 0,
       "and written back to the same text");
    kevo__eval_result_set_device(back, NULL);
    ok(kevo_eval_result_device(back) == NULL, "a label set to NULL: none");
    ok(kevo_eval_result_device(NULL) == NULL, "NULL: no device");
    json_decref(w);
    kevo_eval_result_free(back);
    free(again);
    free(text);

    /* A device that is not a string is refused where it stands. */
    json_object_set_new(v, "device", json_integer(1));
    kevo_eval_result_free(res);
    res = NULL;
    kevo_error_init(&err);
    is_int(kevo__eval_result_from_json(v, "h100_sgemm_result.json", NULL, &res,
                                       &err),
           KEVO_EINVALID, "a device that is not a string");
    like_str(err.text, "$.device", "the message names the field (%s)",
             err.text);
    kevo_eval_result_free(res);
    json_decref(v);
}

static void test_malformed(void)
{
    kevo_task *task = load_task("saxpy");
    char *text = slurp("tests/data/eval", "malformed.txt", NULL);
    int n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *tab = strchr(line, '\t');
        if (line[0] == '#' || !tab)
            continue;
        *tab = '\0';
        json_t *msg = NULL;
        kevo_error err = KEVO__ERROR_INIT;
        kevo_eval_result *res = NULL;
        if (kevo__json_parse(tab + 1, "malformed.txt", &msg, &err) != KEVO_OK)
            bail_out("malformed.txt: %s", err.text);
        kevo_status rc =
            kevo__eval_result_new(task, kevo_task_seed(task), KEVO_SHAPES_TRAIN,
                                  msg, NULL, NULL, &res, &err);
        is_int(rc, KEVO_EWORKER, "malformed: %s", line);
        like_str(err.text, line, "malformed: the message names the field");
        ok(res == NULL, "malformed: no result");
        json_decref(msg);
        n++;
    }
    ok(n >= 30, "malformed: %d cases", n);
    free(text);
    kevo_task_free(task);
}

static void test_getters(void)
{
    static const char *const names[] = {
        "ok",      "compile_error", "rejected",       "launch_error", "fault",
        "timeout", "wrong",         "input_modified", "worker_died"};
    for (int v = 0; v < 9; v++) {
        kevo_verdict back = KEVO_VERDICT_OK;
        is_str(kevo_verdict_name((kevo_verdict)v), names[v], "verdict %d", v);
        ok(kevo__verdict_parse(names[v], &back) && back == (kevo_verdict)v,
           "verdict %s parses", names[v]);
    }
    is_str(kevo_verdict_name((kevo_verdict)99), "unknown", "unknown verdict");

    kevo_task *task = load_task("saxpy");
    kevo_eval_result *res =
        build(task, "saxpy_held_out_ok.json", KEVO_SHAPES_HELD_OUT, NULL, NULL);
    kevo_shape_result r = {.size = sizeof(r) - 1};
    is_int(kevo_eval_result_shape(res, 0, &r), KEVO_EINVAL,
           "shape: a size too small");
    r.size = 0;
    is_int(kevo_eval_result_shape(res, 0, &r), KEVO_OK, "shape: size 0");
    is_uint(r.size, sizeof(r), "shape: size set");
    is_int(kevo_eval_result_shape(res, 2, &r), KEVO_ERANGE,
           "shape: past the last");
    kevo_eval_result_free(res);
    kevo_task_free(task);

    kevo_eval_result_free(NULL);
    is_int(kevo_eval_result_verdict(NULL), KEVO_VERDICT_WORKER_DIED,
           "NULL: verdict");
    is_double(kevo_eval_result_fitness(NULL), 0, 0, "NULL: fitness");
    is_uint(kevo_eval_result_shape_count(NULL), 0, "NULL: shapes");
    is_str(kevo_eval_result_compile_log(NULL), "", "NULL: log");
    is_int(kevo_eval_result_descriptor(NULL, "memory", NULL), KEVO_EINVAL,
           "NULL: descriptor");
    char *json = NULL;
    is_int(kevo_eval_result_to_json(NULL, &json, NULL), KEVO_EINVAL,
           "NULL: to_json");
}

int main(void)
{
    test_saxpy();
    test_wrong();
    test_sgemm();
    test_reduce();
    test_held_out();
    test_failures();
    test_worker_unknowns();
    test_h100();
    test_device();
    test_malformed();
    test_getters();
    return done_testing();
}

/*
 * bench-eval: evaluation throughput and the seeds' efficiency, on a GPU.
 *
 * 1. Throughput: for each small task of the suite (the memory-bound ones;
 *    sgemm and nbody have references that take seconds), up to VARIANTS
 *    parameter assignments of the seed that fit every training shape are
 *    submitted at once, first with an empty compile cache (cold), then
 *    again with the cache filled by the first round (warm). It prints
 *    evaluations per second and where the time went: NVRTC, transfers and
 *    setup, correctness runs, timing.
 * 2. Seeds: every task's seed at its default parameters, with the default
 *    timing: per-shape time, spread and efficiency, and the fitness.
 *
 * Usage: bench-eval [--variants N] [--quick] [TASKS_DIR]. Exits 77 where
 * there is no GPU.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kevo.h>

static const char *small_tasks[] = {"saxpy",    "reduce_sum", "transpose",
                                    "softmax",  "layernorm",  "stencil2d",
                                    "histogram"};
static const char *all_tasks[] = {"saxpy",   "reduce_sum", "transpose",
                                  "softmax", "layernorm",  "stencil2d",
                                  "sgemm",   "nbody",      "histogram"};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static kevo_task *load(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    kevo_error err;
    kevo_error_init(&err);
    kevo_task *task = NULL;
    if (kevo_task_load(path, &task, &err) != KEVO_OK) {
        fprintf(stderr, "bench-eval: %s\n", err.text);
        exit(1);
    }
    return task;
}

/* Does cand fit every training shape of task on the device? */
static bool fits(const kevo_task *task, const kevo_candidate *cand,
                 const kevo_vars *device)
{
    size_t n = kevo_task_shape_count(task, KEVO_SHAPES_TRAIN);
    for (size_t s = 0; s < n; s++) {
        kevo_vars *env = kevo_vars_copy(device);
        bool good =
            env &&
            kevo_task_shape_vars(task, KEVO_SHAPES_TRAIN, s, env) == KEVO_OK &&
            kevo_candidate_check(cand, env, NULL) == KEVO_OK;
        kevo_vars_free(env);
        if (!good)
            return false;
    }
    return true;
}

/* Up to max variants of the task's seed: assignments in mixed-radix order
 * over the domains, spread out by a stride, that fit the device. */
static size_t variants(const kevo_task *task, const kevo_vars *device,
                       size_t max, kevo_candidate **out)
{
    const kevo_candidate *seed = kevo_task_seed(task);
    const kevo_paramspace *space = kevo_candidate_params(seed);
    size_t np = kevo_paramspace_count(space), total = 1, n = 0;
    for (size_t p = 0; p < np; p++)
        total *= kevo_paramspace_domain_size(space, p);
    size_t stride = total > 4 * max ? total / (4 * max) : 1;
    for (size_t k = 0; k < total && n < max; k += stride) {
        kevo_candidate *c = kevo_candidate_copy(seed);
        size_t rest = k;
        for (size_t p = 0; c && p < np; p++) {
            size_t d = kevo_paramspace_domain_size(space, p);
            kevo_candidate_set_param(
                c, kevo_paramspace_name(space, p),
                kevo_paramspace_domain_value(space, p, rest % d), NULL);
            rest /= d;
        }
        if (c && fits(task, c, device))
            out[n++] = c;
        else
            kevo_candidate_free(c);
    }
    return n;
}

typedef struct totals {
    size_t evals, ok, cached;
    double phase[KEVO_PHASE_TOTAL + 1];
} totals;

static int round_of(kevo_evaluator *ev, kevo_task **tasks, size_t ntasks,
                    kevo_candidate ***cands, const size_t *ncands,
                    const char *label)
{
    totals t = {0};
    kevo_error err;
    kevo_error_init(&err);
    double t0 = now();
    for (size_t i = 0; i < ntasks; i++) {
        for (size_t k = 0; k < ncands[i]; k++) {
            if (kevo_evaluator_submit(ev, tasks[i], cands[i][k], 0, NULL,
                                      &err) != KEVO_OK) {
                fprintf(stderr, "bench-eval: submit: %s\n", err.text);
                return 1;
            }
        }
    }
    kevo_eval_result *res;
    while (kevo_evaluator_wait(ev, -1, &res, &err) == KEVO_OK) {
        t.evals++;
        t.ok += kevo_eval_result_verdict(res) == KEVO_VERDICT_OK;
        t.cached += kevo_eval_result_cached(res);
        for (int p = 0; p < KEVO_PHASE_TOTAL; p++) {
            double s = kevo_eval_result_seconds(res, (kevo_eval_phase)p);
            if (!isnan(s))
                t.phase[p] += s;
        }
        if (kevo_eval_result_verdict(res) != KEVO_VERDICT_OK)
            fprintf(stderr, "  %s: %s\n",
                    kevo_verdict_name(kevo_eval_result_verdict(res)),
                    kevo_eval_result_reason(res));
        kevo_eval_result_free(res);
    }
    double wall = now() - t0;
    printf("%-5s %4zu evaluations (%zu correct, %zu compiles cached) in "
           "%6.2f s: %6.1f evaluations/s\n",
           label, t.evals, t.ok, t.cached, wall, (double)t.evals / wall);
    printf("      per evaluation: NVRTC %.1f ms (in parallel processes), "
           "GPU worker: setup and transfers %.1f ms, correctness runs %.1f "
           "ms, timing %.1f ms\n",
           1e3 * t.phase[KEVO_PHASE_COMPILE] / (double)t.evals,
           1e3 * t.phase[KEVO_PHASE_TRANSFER] / (double)t.evals,
           1e3 * t.phase[KEVO_PHASE_RUN] / (double)t.evals,
           1e3 * t.phase[KEVO_PHASE_TIME] / (double)t.evals);
    return 0;
}

static void seeds(kevo_evaluator *ev, const char *dir)
{
    printf("\nseed kernels at default parameters (default timing)\n");
    printf("%-11s %-24s %10s %7s %7s %7s %s\n", "task", "shape", "time us",
           "+-%", "cv %", "eff", "bound");
    for (size_t i = 0; i < sizeof all_tasks / sizeof *all_tasks; i++) {
        kevo_task *task = load(dir, all_tasks[i]);
        kevo_eval_result *res = NULL;
        kevo_error err;
        kevo_error_init(&err);
        if (kevo_evaluator_evaluate(ev, task, kevo_task_seed(task), 0, &res,
                                    &err) != KEVO_OK) {
            printf("%-11s error: %s\n", all_tasks[i], err.text);
            kevo_task_free(task);
            continue;
        }
        for (size_t s = 0; s < kevo_eval_result_shape_count(res); s++) {
            kevo_shape_result r = {.size = sizeof r};
            kevo_eval_result_shape(res, s, &r);
            const int64_t *dims = kevo_task_shape(task, r.set, r.index);
            char shape[64] = "";
            size_t n = 0;
            for (size_t d = 0; d < kevo_task_dim_count(task); d++)
                n += (size_t)snprintf(shape + n, sizeof shape - n, "%s%lld",
                                      d ? "x" : "", (long long)dims[d]);
            printf("%-11s %-24s %10.2f %7.2f %7.2f %7.3f %s\n",
                   s ? "" : all_tasks[i], shape, r.time * 1e6,
                   r.time_spread * 100, r.time_cv * 100, r.efficiency,
                   r.bound == KEVO_BOUND_COMPUTE ? "compute" : "memory");
        }
        printf("%-11s fitness %.3f%s%s\n", "", kevo_eval_result_fitness(res),
               kevo_eval_result_verdict(res) == KEVO_VERDICT_OK ? "" : ": ",
               kevo_eval_result_verdict(res) == KEVO_VERDICT_OK
                   ? ""
                   : kevo_eval_result_reason(res));
        kevo_eval_result_free(res);
        kevo_task_free(task);
    }
}

int main(int argc, char **argv)
{
    size_t max = 24;
    bool quick = false;
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--variants") == 0 && i + 1 < argc)
            max = (size_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--quick") == 0)
            quick = true;
        else
            dir = argv[i];
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char deflt[1024];
    if (!dir) {
        const char *src = getenv("KEVO_SRCDIR");
        snprintf(deflt, sizeof deflt, "%s/examples/tasks", src ? src : ".");
        dir = deflt;
    }
    char cache[] = "/tmp/kevo-bench-cache-XXXXXX";
    if (!mkdtemp(cache)) {
        perror("bench-eval: mkdtemp");
        return 1;
    }
    setenv("KEVO_CACHE_DIR", cache, 1);
    kevo_error err;
    kevo_error_init(&err);
    kevo_evaluator *ev = NULL;
    kevo_evaluator_new(&ev, &err);
    kevo_status rc = kevo_evaluator_start(ev, 0, &err);
    if (rc == KEVO_ENODEV) {
        printf("bench-eval: no GPU: %s\n", err.text);
        kevo_evaluator_free(ev);
        return 77;
    }
    if (rc != KEVO_OK) {
        fprintf(stderr, "bench-eval: %s\n", err.text);
        return 1;
    }
    printf("bench-eval on %s: bandwidth %.0f GB/s, fp32 %.1f TFLOP/s\n",
           kevo_evaluator_device_name(ev), kevo_evaluator_bandwidth(ev) / 1e9,
           kevo_evaluator_peak(ev, KEVO_PEAK_FP32) / 1e12);
    size_t ntasks = sizeof small_tasks / sizeof *small_tasks;
    kevo_task *tasks[sizeof small_tasks / sizeof *small_tasks];
    kevo_candidate **cands[sizeof small_tasks / sizeof *small_tasks];
    size_t ncands[sizeof small_tasks / sizeof *small_tasks], total = 0;
    if (quick && max > 4)
        max = 4;
    for (size_t i = 0; i < ntasks; i++) {
        tasks[i] = load(dir, small_tasks[i]);
        cands[i] = calloc(max ? max : 1, sizeof *cands[i]);
        ncands[i] =
            variants(tasks[i], kevo_evaluator_device(ev), max, cands[i]);
        total += ncands[i];
    }
    printf("throughput: %zu variants of the seeds of %zu small tasks, "
           "default timing\n",
           total, ntasks);
    int status = round_of(ev, tasks, ntasks, cands, ncands, "cold");
    if (!status)
        status = round_of(ev, tasks, ntasks, cands, ncands, "warm");
    if (!status && !quick)
        seeds(ev, dir);
    for (size_t i = 0; i < ntasks; i++) {
        for (size_t k = 0; k < ncands[i]; k++)
            kevo_candidate_free(cands[i][k]);
        free(cands[i]);
        kevo_task_free(tasks[i]);
    }
    kevo_evaluator_free(ev);
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    if (system(cmd) != 0)
        fprintf(stderr, "bench-eval: could not remove %s\n", cache);
    return status;
}

/*
 * bench-timing: how repeatable kevo's timing is. One kernel (a task's seed
 * at its first training shape) is evaluated N times (30 by default); each
 * evaluation reports the median of its repetitions. It prints every
 * median, their coefficient of variation across the evaluations, and the
 * spread within each, and writes the medians to a file for
 * bench/timing-vs-ncu.sh, which compares them with Nsight Compute's
 * gpu__time_duration.sum of the same kernel.
 *
 * Usage: bench-timing [--runs N] [--out FILE] [--task-out FILE] [TASK.json]
 * (default: examples/tasks/softmax.json). --task-out writes the one-shape
 * task it times (sources inline), for the ncu comparison. Exits 77
 * without a GPU.
 */
#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kevo.h>

/* The task with only its first training shape; written to task_out as
 * well unless that is NULL. */
static kevo_task *first_shape_only(const char *path, const char *task_out)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_task *task = NULL, *one = NULL;
    char *text = NULL;
    if (kevo_task_load(path, &task, &err) != KEVO_OK ||
        kevo_task_to_json(task, &text, &err) != KEVO_OK) {
        fprintf(stderr, "bench-timing: %s\n", err.text);
        exit(1);
    }
    json_t *root = json_loads(text, 0, NULL);
    json_t *shapes = json_object_get(root, "shapes");
    while (json_array_size(shapes) > 1)
        json_array_remove(shapes, json_array_size(shapes) - 1);
    char *cut = json_dumps(root, 0);
    if (!cut || kevo_task_load_string(cut, path, NULL, &one, &err) != KEVO_OK) {
        fprintf(stderr, "bench-timing: %s\n", err.text);
        exit(1);
    }
    if (task_out && json_dump_file(root, task_out, JSON_INDENT(2)) != 0) {
        fprintf(stderr, "bench-timing: cannot write %s\n", task_out);
        exit(1);
    }
    free(cut);
    json_decref(root);
    free(text);
    kevo_task_free(task);
    return one;
}

int main(int argc, char **argv)
{
    int runs = 30;
    const char *out = "bench-timing.txt", *path = NULL, *task_out = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--task-out") == 0 && i + 1 < argc)
            task_out = argv[++i];
        else
            path = argv[i];
    }
    char deflt[1024];
    if (!path) {
        const char *src = getenv("KEVO_SRCDIR");
        snprintf(deflt, sizeof deflt, "%s/examples/tasks/softmax.json",
                 src ? src : ".");
        path = deflt;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    kevo_task *task = first_shape_only(path, task_out);
    kevo_error err;
    kevo_error_init(&err);
    kevo_evaluator *ev = NULL;
    kevo_evaluator_new(&ev, &err);
    kevo_status rc = kevo_evaluator_start(ev, 0, &err);
    if (rc == KEVO_ENODEV) {
        printf("bench-timing: no GPU: %s\n", err.text);
        kevo_evaluator_free(ev);
        kevo_task_free(task);
        return 77;
    }
    if (rc != KEVO_OK) {
        fprintf(stderr, "bench-timing: %s\n", err.text);
        return 1;
    }
    FILE *f = fopen(out, "w");
    if (!f) {
        perror(out);
        return 1;
    }
    double *t = calloc((size_t)runs, sizeof *t);
    double sum = 0, floor = 0;
    printf("bench-timing: %s seed, shape 0, %d evaluations on %s\n",
           kevo_task_name(task), runs, kevo_evaluator_device_name(ev));
    printf("%4s %12s %8s %8s %6s\n", "run", "median us", "+-%", "cv %", "reps");
    for (int i = 0; i < runs; i++) {
        kevo_eval_result *res = NULL;
        if (kevo_evaluator_evaluate(ev, task, kevo_task_seed(task), 0, &res,
                                    &err) != KEVO_OK ||
            kevo_eval_result_verdict(res) != KEVO_VERDICT_OK) {
            fprintf(stderr, "bench-timing: %s\n",
                    res ? kevo_eval_result_reason(res) : err.text);
            return 1;
        }
        kevo_shape_result s = {.size = sizeof s};
        kevo_eval_result_shape(res, 0, &s);
        t[i] = s.time;
        sum += s.time;
        floor = s.floor;
        printf("%4d %12.3f %8.3f %8.3f %6u\n", i + 1, s.time * 1e6,
               s.time_spread * 100, s.time_cv * 100, s.reps);
        fprintf(f, "%.9g\n", s.time);
        kevo_eval_result_free(res);
    }
    double mean = sum / runs, var = 0;
    for (int i = 0; i < runs; i++)
        var += (t[i] - mean) * (t[i] - mean);
    double cv = runs > 1 ? sqrt(var / (runs - 1)) / mean : 0;
    printf("mean of the medians %.3f us, coefficient of variation across "
           "the %d evaluations %.3f%%, efficiency %.3f\n",
           mean * 1e6, runs, cv * 100, floor / mean);
    fclose(f);
    free(t);
    kevo_evaluator_free(ev);
    kevo_task_free(task);
    return 0;
}

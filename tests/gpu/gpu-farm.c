/*
 * gpu-farm: a search on the GPU spread over two ranks, rank 0 and one
 * process forked from it (kevo_farm_spawn()), each with its own evaluator
 * on the GPU of its rank (modulo the GPUs there are): params on saxpy, 40
 * evaluations. Every child is judged once; the member evaluated some of
 * them and its results came back with their measurements; the seed, the
 * gate and the tuning ran on rank 0, and the champion passed the gate.
 *
 * Skipped (exit 77) where the evaluator finds no GPU.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <kevo.h>

#include "../tap.h"

static kevo_evaluator *start_evaluator(int rank, bool probe)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_evaluator *ev = NULL;
    if (kevo_evaluator_new(&ev, &err) != KEVO_OK)
        bail_out("%s", err.text);
    kevo_evaluator_set_int(ev, KEVO_EVAL_TIME_CAP_MS, 100, NULL);
    kevo_evaluator_set_int(ev, KEVO_EVAL_MAX_REPS, 100, NULL);
    kevo_evaluator_set_int(ev, KEVO_EVAL_WARMUP, 2, NULL);
    const char *n = getenv("KEVO_GPU_COUNT");
    int gpus = n && atoi(n) > 0 ? atoi(n) : 1;
    kevo_evaluator_set_int(ev, KEVO_EVAL_DEVICE, rank % gpus, NULL);
    kevo_status rc = kevo_evaluator_start(ev, 0, &err);
    if (rc == KEVO_ENODEV && probe) {
        kevo_evaluator_free(ev);
        skip_all("no GPU: %s", err.text);
    }
    if (rc != KEVO_OK) {
        fprintf(stderr, "rank %d: the evaluator does not start: %s\n", rank,
                err.text);
        kevo_evaluator_free(ev);
        return NULL;
    }
    return ev;
}

int main(void)
{
    const char *b = getenv("KEVO_BUILDDIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/operators/.libs", b && *b ? b : ".");
    setenv("KEVO_OPERATOR_PATH", path, 1);
    snprintf(path, sizeof path, "%s/examples/tasks/saxpy.json", tap_srcdir());
    kevo_error err;
    kevo_error_init(&err);
    kevo_task *task = NULL;
    if (kevo_task_load(path, &task, &err) != KEVO_OK)
        bail_out("%s", err.text);
    /* Skips here, before anything forks, where there is no GPU. */
    kevo_evaluator_free(start_evaluator(0, true));
    char dir[] = "/tmp/gpu-farm.XXXXXX";
    if (!mkdtemp(dir))
        bail_out("mkdtemp: %s", strerror(errno));
    char run[sizeof dir + 8];
    snprintf(run, sizeof run, "%s/run", dir);

    kevo_farm *farm = NULL;
    if (kevo_farm_spawn(1, &farm, &err) != KEVO_OK)
        bail_out("kevo_farm_spawn: %s", err.text);
    int rank = kevo_farm_rank(farm);
    kevo_evaluator *ev = start_evaluator(rank, false);
    kevo_search *s = NULL;
    kevo_status rc = ev ? kevo_search_new(task, &s, &err) : KEVO_ENODEV;
    if (rc == KEVO_OK)
        rc = kevo_search_set_evaluator(s, ev, &err);
    if (rc == KEVO_OK)
        rc = kevo_search_set_int(s, KEVO_SEARCH_SEED, 5, &err);
    if (rc == KEVO_OK)
        rc = kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, 40, &err);
    if (rc == KEVO_OK)
        rc = kevo_search_add_operator(s, "params", NULL, NULL, 1, &err);
    if (rc == KEVO_OK)
        rc = kevo_search_set_farm(s, farm, &err);
    if (rc == KEVO_OK && rank == 0)
        rc = kevo_search_open_run(s, run, 0, "gpu-farm", &err);
    if (rc == KEVO_OK)
        rc = kevo_search_run(s, &err);
    if (rank != 0) {
        if (rc != KEVO_OK)
            fprintf(stderr, "rank %d: %s\n", rank, err.text);
        kevo_search_free(s);
        kevo_evaluator_free(ev);
        kevo_task_free(task);
        kevo_farm_free(farm);
        _exit(rc == KEVO_OK ? 0 : 1);
    }
    is_int(rc, KEVO_OK, "the search over two ranks ran (%s)", err.text);
    kevo_search_stats st = {.size = sizeof st};
    kevo_search_get_stats(s, &st);
    is_uint(st.evaluations, 40, "40 evaluations");
    kevo_search_free(s);
    kevo_evaluator_free(ev);
    kevo_farm_free(farm);

    snprintf(path, sizeof path, "%s/summary.json", run);
    json_t *sum = json_load_file(path, 0, NULL);
    ok(sum != NULL, "summary.json");
    json_t *member = json_array_get(
        json_object_get(json_object_get(sum, "farm"), "ranks"), 0);
    long long farmed =
        json_integer_value(json_object_get(member, "evaluations"));
    ok(farmed > 0, "rank 1 evaluated children (%lld)", farmed);
    ok(json_object_get(member, "ended") == NULL ||
           json_is_null(json_object_get(member, "ended")),
       "rank 1 did not end early");
    json_t *champ = json_object_get(sum, "champion");
    ok(json_is_object(champ), "a champion");
    ok(json_is_true(json_object_get(json_object_get(champ, "gate"), "passed")),
       "... that passed the held-out gate on rank 0");

    /* Each child judged once: 40 eval lines, 40 different candidates. */
    snprintf(path, sizeof path, "%s/events.jsonl", run);
    FILE *f = fopen(path, "r");
    char line[1 << 16];
    unsigned evals = 0, dups = 0, on_member = 0;
    long long ids[64];
    while (f && fgets(line, sizeof line, f)) {
        json_t *e = json_loads(line, 0, NULL);
        const char *type = json_string_value(json_object_get(e, "type"));
        if (type && strcmp(type, "eval") == 0 && evals < 64) {
            long long id = json_integer_value(json_object_get(e, "id"));
            for (unsigned i = 0; i < evals; i++)
                dups += ids[i] == id;
            ids[evals++] = id;
            const char *dev = json_string_value(json_object_get(e, "device"));
            on_member += dev && strncmp(dev, "rank 1", 6) == 0;
        }
        json_decref(e);
    }
    if (f)
        fclose(f);
    is_uint(evals, 40, "40 eval lines in events.jsonl");
    is_uint(dups, 0, "no candidate judged twice");
    diag("%u results say rank 1 measured them", on_member);
    json_decref(sum);
    kevo_task_free(task);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        diag("could not remove %s", dir);
    return done_testing();
}

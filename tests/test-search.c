/*
 * test-search.c: the search engine without a GPU. Children come from the
 * real params plugin and are scored by a function of their parameters (a
 * scoring function is how a caller plugs in a cost model of its own), so
 * every part of the engine but the evaluator runs: selection, credit,
 * islands and migration, stop conditions, the run directory, checkpoints,
 * a run killed with SIGKILL and resumed, determinism, and the second
 * parent a request carries.
 */
#include "config.h"

#include <jansson.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/kevo_private.h"
#include "tap.h"

static kevo_task *load_task(const char *name)
{
    char *path =
        kevo__asprintf("%s/examples/tasks/%s.json", tap_srcdir(), name);
    kevo_task *t = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_task_load(path, &t, &e) != KEVO_OK)
        bail_out("cannot load %s: %s", path, e.text);
    free(path);
    return t;
}

static int64_t param(const kevo_candidate *c, const char *name)
{
    int64_t v = 0;
    kevo_vars_get(kevo_candidate_assignment(c), name, &v);
    return v;
}

typedef struct scorer {
    unsigned sleep_us;
    unsigned calls;
} scorer;

/* A smooth landscape over saxpy's parameters with its peak at BLOCK=256,
 * VEC=4, ITEMS=2; the behaviour is (vector loads, block size). */
static kevo_status score(const kevo_task *task, const kevo_candidate *c,
                         double *fitness, double *desc, void *user,
                         kevo_error *err)
{
    (void)task;
    (void)err;
    scorer *sc = user;
    sc->calls++;
    if (sc->sleep_us)
        usleep(sc->sleep_us);
    double b = log2((double)param(c, "BLOCK")),
           v = log2((double)param(c, "VEC"));
    double i = log2((double)param(c, "ITEMS"));
    *fitness =
        1.0 / (1.0 + 0.3 * fabs(b - 8) + 0.4 * fabs(v - 2) + 0.2 * fabs(i - 1));
    desc[0] = param(c, "VEC") > 1 ? 1 : 0;
    desc[1] = (double)param(c, "BLOCK");
    return KEVO_OK;
}

typedef struct trace {
    kevo_buf ids;
    unsigned evaluated, champions, checkpoints, stopped;
    unsigned interrupt_at;
} trace;

static void on_event(kevo_search *s, const kevo_search_event *ev, void *user)
{
    trace *t = user;
    switch (ev->type) {
    case KEVO_SEARCH_EVALUATED:
        t->evaluated++;
        kevo__buf_printf(&t->ids, "%llu:%lld/%lld/%lld ",
                         (unsigned long long)kevo_candidate_id(ev->candidate),
                         (long long)param(ev->candidate, "BLOCK"),
                         (long long)param(ev->candidate, "VEC"),
                         (long long)param(ev->candidate, "ITEMS"));
        if (t->interrupt_at && t->evaluated == t->interrupt_at)
            kevo_search_interrupt(s);
        break;
    case KEVO_SEARCH_CHAMPION: t->champions++; break;
    case KEVO_SEARCH_CHECKPOINT: t->checkpoints++; break;
    case KEVO_SEARCH_STOPPED: t->stopped++; break;
    default: break;
    }
}

static kevo_search *make_search(const kevo_task *task, scorer *sc, trace *tr,
                                int64_t seed, int64_t evals)
{
    kevo_search *s = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_search_new(task, &s, &e) != KEVO_OK ||
        kevo_search_set_score_fn(s, score, sc, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_SEED, seed, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, evals, &e) != KEVO_OK ||
        kevo_search_add_operator(s, "params", NULL, NULL, 1.0, &e) != KEVO_OK ||
        kevo_search_set_callback(s, on_event, tr, &e) != KEVO_OK)
        bail_out("cannot set up a search: %s", e.text);
    return s;
}

static char *temp_dir(void)
{
    char tmpl[] = "/tmp/kevo-test-search-XXXXXX";
    char *d = mkdtemp(tmpl);
    if (!d)
        bail_out("mkdtemp failed");
    return strdup(d);
}

static void remove_tree(const char *dir)
{
    char *cmd = kevo__asprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0)
        diag("could not remove %s", dir);
    free(cmd);
}

static json_t *load_json(const char *dir, const char *name)
{
    char *path = kevo__path_join(dir, name);
    json_error_t je;
    json_t *v = json_load_file(path, 0, &je);
    free(path);
    return v;
}

/* The "eval" lines of a run's events.jsonl. */
static unsigned count_events(const char *dir, const char *type)
{
    char *path = kevo__path_join(dir, "events.jsonl");
    kevo_event_reader *r = NULL;
    unsigned n = 0;
    if (kevo_event_reader_open(path, &r, NULL) == KEVO_OK) {
        const char *line;
        kevo_status rc;
        while ((rc = kevo_event_reader_next(r, &line, NULL, NULL)) !=
               KEVO_DONE) {
            if (rc == KEVO_EIO)
                break;
            const char *t = rc == KEVO_OK ? kevo_event_reader_type(r) : NULL;
            n += t && strcmp(t, type) == 0;
        }
    }
    kevo_event_reader_free(r);
    free(path);
    return n;
}

static void test_options(void)
{
    kevo_search_option o;
    is_str(kevo_search_option_name(KEVO_SEARCH_MAX_EVALS), "max_evals",
           "option name");
    is_int(kevo_search_option_from_name("checkpoint_every", &o), KEVO_OK,
           "option by name");
    is_int(o, KEVO_SEARCH_CHECKPOINT_EVERY, "... the right one");
    is_int(kevo_search_option_from_name("nosuch", &o), KEVO_ENOENT,
           "unknown name");
    ok(kevo_search_option_name((kevo_search_option)99) == NULL,
       "unknown option has no name");
    int64_t lo, hi, def;
    is_int(kevo_search_option_bounds(KEVO_SEARCH_ISLANDS, &lo, &hi, &def),
           KEVO_OK, "bounds");
    ok(lo == 1 && hi == 64 && def == 1, "islands in [1, 64], default 1");
    is_str(kevo_stop_reason_name(KEVO_STOP_STAGNATION), "stagnation",
           "stop reason name");
    is_str(kevo_stop_reason_name((kevo_stop_reason)77), "unknown",
           "unknown stop reason");

    kevo_task *task = load_task("saxpy");
    kevo_search *s = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    is_int(kevo_search_new(task, &s, &e), KEVO_OK, "new");
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_search_set_int(s, KEVO_SEARCH_ISLANDS, 0, &e), KEVO_ERANGE,
           "islands 0 is out of range");
    is_str(e.text,
           "option islands: 0 is below the lowest allowed value 1 (allowed "
           "1..64)",
           "the message names the option and gives the bounds");
    is_int(kevo_search_get_int(s, KEVO_SEARCH_MAX_EVALS), 300,
           "default budget");
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_search_step(s, 0, &e), KEVO_ESTATE,
           "a step without an evaluator fails");
    like_str(e.text, "neither an evaluator", "... and says why");
    scorer sc = {0};
    kevo_search_set_score_fn(s, score, &sc, NULL);
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_search_step(s, 0, &e), KEVO_ESTATE,
           "a step without an operator fails");
    like_str(e.text, "no operator", "... and says why");
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_search_add_operator(s, "params", NULL, NULL, 0, &e),
           KEVO_ERANGE, "weight 0 is refused");
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_search_add_operator(s, "nosuch", NULL, NULL, 1, &e),
           KEVO_ENOENT, "an unknown plugin is not found");
    ok(kevo_search_champion(s, NULL) == NULL, "no champion yet");
    ok(kevo_search_dispatch_json(s) == NULL, "no dispatch table");
    kevo_search_free(s);
    kevo_search_free(NULL);
    kevo_task_free(task);
}

static void test_budget_and_rundir(void)
{
    kevo_task *task = load_task("saxpy");
    scorer sc = {0};
    trace tr = {0};
    kevo_search *s = make_search(task, &sc, &tr, 7, 40);
    char *dir = temp_dir();
    char *run = kevo__path_join(dir, "run");
    kevo_error e = KEVO__ERROR_INIT;
    is_int(kevo_search_open_run(s, run, 0, "kevo search saxpy", &e), KEVO_OK,
           "open a run directory");
    kevo_search_set_int(s, KEVO_SEARCH_CHECKPOINT_EVERY, 15, NULL);
    is_int(kevo_search_run(s, &e), KEVO_OK, "run to the end");
    if (e.code)
        diag("%s", e.text);
    is_int(kevo_report_write(run, &e), KEVO_OK, "the caller writes the report");
    kevo_search_stats st = {.size = sizeof st};
    is_int(kevo_search_get_stats(s, &st), KEVO_OK, "stats");
    is_int(st.stop, KEVO_STOP_EVALUATIONS, "stopped by the budget");
    is_uint(st.evaluations, 40, "exactly 40 evaluations");
    is_uint(sc.calls, 40, "the scoring function ran 40 times");
    is_uint(tr.evaluated, 40, "40 evaluated events");
    is_uint(tr.stopped, 1, "one stopped event");
    ok(tr.checkpoints >= 3, "checkpoints every 15 and at the end (%u)",
       tr.checkpoints);
    ok(st.best_fitness > 0.6, "the best fitness rose (%g)", st.best_fitness);
    ok(st.filled >= 2, "several cells filled (%zu)", st.filled);
    double f;
    const kevo_candidate *champ = kevo_search_champion(s, &f);
    ok(champ != NULL, "a champion");
    is_double(f, st.best_fitness, 0, "the champion is the best elite");
    is_int(kevo_search_step(s, 0, &e), KEVO_DONE, "later steps are done");
    is_uint(kevo_search_island_count(s), 1, "one island");
    ok(kevo_search_archive(s, 1) == NULL, "no second island");

    is_uint(count_events(run, "eval"), 40, "40 eval lines in events.jsonl");
    is_uint(count_events(run, "start"), 1, "a start line");
    is_uint(count_events(run, "stop"), 1, "a stop line");
    json_t *sum = load_json(run, "summary.json");
    ok(sum != NULL, "summary.json parses");
    is_str(json_string_value(json_object_get(sum, "state")), "finished",
           "summary: finished");
    is_str(json_string_value(json_object_get(sum, "stop_reason")),
           "evaluations", "summary: stop reason");
    is_int(json_integer_value(json_object_get(sum, "evaluations")), 40,
           "summary: evaluations");
    is_str(json_string_value(json_object_get(sum, "command")),
           "kevo search saxpy", "summary: the command");
    json_t *arch = json_object_get(sum, "archive");
    is_int(json_array_size(json_object_get(arch, "dimensions")), 2,
           "summary: two dimensions");
    is_int(json_array_size(json_object_get(arch, "elites")), (int)st.filled,
           "summary: every elite");
    json_t *ops = json_object_get(sum, "operators");
    is_int(json_integer_value(
               json_object_get(json_array_get(ops, 0), "evaluated")),
           39, "summary: params evaluated 39 children (the seed is 1)");
    ok(json_array_size(json_object_get(sum, "history")) >= 2,
       "summary: a history of the best fitness");
    json_decref(sum);
    json_t *cp = load_json(run, "checkpoint.json");
    is_str(json_string_value(json_object_get(cp, "format")), "kevo-checkpoint",
           "checkpoint.json");
    json_decref(cp);
    char *best = kevo__path_join(run, "best.cu");
    char *text = NULL;
    size_t len;
    ok(kevo__read_file(best, true, &text, &len, NULL) == KEVO_OK,
       "best.cu written");
    like_str(text ? text : "", "kevo: the champion of task saxpy",
             "best.cu names the task");
    like_str(text ? text : "", "parameters: BLOCK=", "... its parameters");
    like_str(text ? text : "", "found by: kevo search saxpy",
             "... and the command");
    free(text);
    free(best);
    char *cand = kevo__path_join(run, "candidates/2.cu");
    struct stat sb;
    ok(stat(cand, &sb) == 0 && sb.st_size > 0, "children's sources kept");
    free(cand);
    char *report = kevo__path_join(run, "report.html");
    ok(stat(report, &sb) == 0 && sb.st_size > 0, "report.html written");
    free(report);
    kevo_search_free(s);

    /* The same directory cannot start a new run. */
    s = make_search(task, &sc, &tr, 7, 40);
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_search_open_run(s, run, 0, NULL, &e), KEVO_EEXIST,
           "a used run directory is refused for a new run");
    kevo_search_free(s);

    /* A resumed run with another task is refused. */
    kevo_task *other = load_task("reduce_sum");
    scorer sc2 = {0};
    trace tr2 = {0};
    kevo_search *s2 = NULL;
    kevo_search_new(other, &s2, NULL);
    kevo_search_set_score_fn(s2, score, &sc2, NULL);
    kevo_search_set_callback(s2, on_event, &tr2, NULL);
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_search_open_run(s2, run, KEVO_SEARCH_RUN_RESUME, NULL, &e),
           KEVO_EINVALID, "resuming with another task is refused");
    like_str(e.text, "another task", "... saying so");
    kevo_search_free(s2);
    kevo_task_free(other);
    kevo__buf_free(&tr2.ids);

    /* What an operator spent is kept, and a bad figure names its field. */
    json_t *good = load_json(run, "checkpoint.json");
    json_t *op0 = json_array_get(json_object_get(good, "operators"), 0);
    ok(json_is_integer(json_object_get(op0, "input_tokens")) &&
           json_is_integer(json_object_get(op0, "output_tokens")) &&
           json_is_number(json_object_get(op0, "cost")),
       "the checkpoint keeps what each operator spent");
    json_object_set_new(op0, "cost", json_real(-1));
    char *gpath = kevo__path_join(run, "checkpoint.json");
    json_dump_file(good, gpath, 0);
    json_decref(good);
    free(gpath);
    s = make_search(task, &sc, &tr, 7, 40);
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_search_open_run(s, run, KEVO_SEARCH_RUN_RESUME, NULL, &e),
           KEVO_EINVALID, "a negative cost spent is refused");
    like_str(e.text, "$.operators[0].cost: must be a non-negative number",
             "... naming the field");
    kevo_search_free(s);

    /* A damaged checkpoint names its file. */
    char *cpath = kevo__path_join(run, "checkpoint.json");
    FILE *fp = fopen(cpath, "w");
    fputs("{\"format\": \"kevo-checkpoint\", \"version\": 1, \"task_hash\": 5}",
          fp);
    fclose(fp);
    s = make_search(task, &sc, &tr, 7, 40);
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_search_open_run(s, run, KEVO_SEARCH_RUN_RESUME, NULL, &e),
           KEVO_EINVALID, "a checkpoint with a bad field is refused");
    like_str(e.text, "checkpoint.json", "... naming the file");
    like_str(e.text, "$.task_hash", "... and the field");
    kevo_search_free(s);
    free(cpath);

    remove_tree(dir);
    free(run);
    free(dir);
    kevo__buf_free(&tr.ids);
    kevo_task_free(task);
}

static char *run_trace(const kevo_task *task, int64_t seed, int64_t islands)
{
    scorer sc = {0};
    trace tr = {0};
    kevo_search *s = make_search(task, &sc, &tr, seed, 30);
    kevo_search_set_int(s, KEVO_SEARCH_ISLANDS, islands, NULL);
    kevo_search_set_int(s, KEVO_SEARCH_MIGRATE_EVERY, 5, NULL);
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_search_run(s, &e) != KEVO_OK)
        diag("run failed: %s", e.text);
    kevo_search_free(s);
    return kevo__buf_take(&tr.ids);
}

static void test_determinism(void)
{
    kevo_task *task = load_task("saxpy");
    char *a = run_trace(task, 11, 1);
    char *b = run_trace(task, 11, 1);
    char *c = run_trace(task, 12, 1);
    is_str(a, b, "the same seed makes the same decisions");
    ok(strcmp(a, c) != 0, "another seed makes others");
    char *d = run_trace(task, 11, 3);
    char *e = run_trace(task, 11, 3);
    is_str(d, e, "... with three islands too");
    free(a);
    free(b);
    free(c);
    free(d);
    free(e);
    kevo_task_free(task);
}

static void test_islands(void)
{
    kevo_task *task = load_task("saxpy");
    scorer sc = {0};
    trace tr = {0};
    kevo_search *s = make_search(task, &sc, &tr, 3, 45);
    kevo_search_set_int(s, KEVO_SEARCH_ISLANDS, 3, NULL);
    kevo_search_set_int(s, KEVO_SEARCH_MIGRATE_EVERY, 10, NULL);
    char *dir = temp_dir();
    kevo_error e = KEVO__ERROR_INIT;
    kevo_search_open_run(s, dir, 0, NULL, &e);
    is_int(kevo_search_run(s, &e), KEVO_OK, "three islands run");
    is_uint(kevo_search_island_count(s), 3, "three islands");
    size_t filled = 0;
    for (size_t i = 0; i < 3; i++)
        filled += kevo_archive_size(kevo_search_archive(s, i)) > 0;
    is_uint(filled, 3, "every island holds elites");
    ok(count_events(dir, "migration") >= 3, "migrations were logged (%u)",
       count_events(dir, "migration"));
    kevo_search_free(s);
    remove_tree(dir);
    free(dir);
    kevo__buf_free(&tr.ids);
    kevo_task_free(task);
}

static void test_stops(void)
{
    kevo_task *task = load_task("saxpy");
    scorer sc = {0};
    trace tr = {0};
    kevo_search *s = make_search(task, &sc, &tr, 5, 0);
    kevo_search_set_int(s, KEVO_SEARCH_TARGET_PPM, 900000, NULL);
    kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, 500, NULL);
    kevo_error e = KEVO__ERROR_INIT;
    kevo_search_run(s, &e);
    kevo_search_stats st = {.size = sizeof st};
    kevo_search_get_stats(s, &st);
    ok(st.stop == KEVO_STOP_TARGET || st.stop == KEVO_STOP_EXHAUSTED,
       "a target stops the search (%s)", kevo_stop_reason_name(st.stop));
    if (st.stop == KEVO_STOP_TARGET)
        ok(st.best_fitness >= 0.9, "... once reached");
    else
        ok(st.best_fitness < 0.9, "... or the space ran out first");
    kevo_search_free(s);

    s = make_search(task, &sc, &tr, 5, 500);
    kevo_search_set_int(s, KEVO_SEARCH_STAGNATION, 6, NULL);
    kevo_search_run(s, &e);
    kevo_search_get_stats(s, &st);
    is_int(st.stop, KEVO_STOP_STAGNATION, "stagnation stops the search");
    ok(st.evaluations - 0 >= 6, "... after at least 6 evaluations");
    kevo_search_free(s);

    /* saxpy's space has 60 assignments: a budget of 500 runs it dry. */
    s = make_search(task, &sc, &tr, 5, 500);
    kevo_search_run(s, &e);
    kevo_search_get_stats(s, &st);
    is_int(st.stop, KEVO_STOP_EXHAUSTED, "an exhausted space stops the search");
    ok(st.evaluations <= 60, "... after at most 60 evaluations (%llu)",
       (unsigned long long)st.evaluations);
    kevo_search_free(s);

    trace ti = {.interrupt_at = 12};
    char *dir = temp_dir();
    s = make_search(task, &sc, &ti, 5, 500);
    kevo_search_open_run(s, dir, 0, NULL, &e);
    is_int(kevo_search_run(s, &e), KEVO_OK, "an interrupted run ends cleanly");
    kevo_search_get_stats(s, &st);
    is_int(st.stop, KEVO_STOP_INTERRUPTED, "... as interrupted");
    ok(st.evaluations >= 12 && st.evaluations <= 13,
       "... right after the interrupt (%llu)",
       (unsigned long long)st.evaluations);
    json_t *sum = load_json(dir, "summary.json");
    is_str(json_string_value(json_object_get(sum, "state")), "interrupted",
           "summary says interrupted");
    json_decref(sum);
    json_t *cp = load_json(dir, "checkpoint.json");
    is_int(json_integer_value(
               json_object_get(json_object_get(cp, "counters"), "evaluations")),
           (int)st.evaluations, "the checkpoint holds every evaluation");
    json_decref(cp);
    kevo_search_free(s);
    remove_tree(dir);
    free(dir);
    kevo__buf_free(&ti.ids);
    kevo__buf_free(&tr.ids);
    kevo_task_free(task);
}

/* The elites of a checkpoint: (cell, fitness, id) triples. */
static size_t checkpoint_elites(json_t *cp, double *fit, uint64_t *ids,
                                size_t *cells, size_t max)
{
    json_t *isl = json_array_get(json_object_get(cp, "islands"), 0);
    json_t *el = json_object_get(isl, "elites");
    size_t n = 0, i;
    json_t *v;
    json_array_foreach (el, i, v) {
        if (n == max)
            break;
        cells[n] = (size_t)json_integer_value(json_object_get(v, "cell"));
        fit[n] = json_number_value(json_object_get(v, "fitness"));
        ids[n] = (uint64_t)json_integer_value(
            json_object_get(json_object_get(v, "candidate"), "id"));
        n++;
    }
    return n;
}

static void test_kill_and_resume(void)
{
    kevo_task *task = load_task("saxpy");
    char *dir = temp_dir();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        scorer sc = {.sleep_us = 30000};
        trace tr = {0};
        kevo_search *s = make_search(task, &sc, &tr, 9, 55);
        kevo_search_set_int(s, KEVO_SEARCH_CHECKPOINT_EVERY, 5, NULL);
        if (kevo_search_open_run(s, dir, 0, "child", NULL) != KEVO_OK)
            _exit(2);
        kevo_search_run(s, NULL);
        _exit(0);
    }
    /* Wait for a checkpoint of at least 20 evaluations, then kill -9. */
    json_t *cp = NULL;
    int64_t at = 0;
    for (int i = 0; i < 600 && at < 20; i++) {
        usleep(10000);
        json_decref(cp);
        cp = load_json(dir, "checkpoint.json");
        at = json_integer_value(
            json_object_get(json_object_get(cp, "counters"), "evaluations"));
    }
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
       "the run was killed with SIGKILL");
    /* What the run had checkpointed when it died (the last checkpoint may
     * be newer than the one seen above). */
    json_decref(cp);
    cp = load_json(dir, "checkpoint.json");
    at = json_integer_value(
        json_object_get(json_object_get(cp, "counters"), "evaluations"));
    ok(at >= 20 && at < 55, "killed mid-search, checkpointed at %lld",
       (long long)at);
    double fit[256];
    uint64_t ids[256];
    size_t cells[256];
    size_t n = checkpoint_elites(cp, fit, ids, cells, 256);
    ok(n >= 2, "the checkpoint holds %zu elites", n);
    json_decref(cp);

    scorer sc = {0};
    trace tr = {0};
    kevo_search *s = make_search(task, &sc, &tr, 9, 55);
    kevo_search_set_int(s, KEVO_SEARCH_CHECKPOINT_EVERY, 5, NULL);
    kevo_error e = KEVO__ERROR_INIT;
    is_int(kevo_search_open_run(s, dir, KEVO_SEARCH_RUN_RESUME, "resumed", &e),
           KEVO_OK, "resume the killed run");
    if (e.code)
        diag("%s", e.text);
    is_int(kevo_search_run(s, &e), KEVO_OK, "the resumed run finishes");
    kevo_search_stats st = {.size = sizeof st};
    kevo_search_get_stats(s, &st);
    is_uint(st.evaluations, 55, "evaluations continue to the budget");
    is_uint(sc.calls, 55 - (unsigned)at,
            "only what was not checkpointed is evaluated again");
    const kevo_archive *a = kevo_search_archive(s, 0);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        const kevo_candidate *c = kevo_archive_candidate(a, cells[i]);
        if (c && (kevo_candidate_id(c) == ids[i] ||
                  kevo_archive_fitness(a, cells[i]) > fit[i]))
            kept++;
    }
    is_uint(kept, n,
            "every checkpointed elite is in the final archive or beaten in "
            "its cell");
    ok(count_events(dir, "resume") == 1, "the log records the resume");
    /* No child of the resumed run repeats an assignment the killed run had
     * checkpointed: the set of candidates tried survived. */
    char *log = kevo__path_join(dir, "events.jsonl");
    FILE *fp = fopen(log, "r");
    char line[8192];
    unsigned repeats = 0, before = 0;
    while (fp && fgets(line, sizeof line, fp)) {
        json_t *ev = json_loads(line, 0, NULL);
        const char *type = json_string_value(json_object_get(ev, "type"));
        if (type && strcmp(type, "resume") == 0) {
            json_decref(ev);
            break;
        }
        json_t *p = json_object_get(ev, "params");
        if (type && strcmp(type, "eval") == 0 && p &&
            json_integer_value(json_object_get(ev, "n")) <= at) {
            char key[64];
            snprintf(
                key, sizeof key, ":%lld/%lld/%lld ",
                (long long)json_integer_value(json_object_get(p, "BLOCK")),
                (long long)json_integer_value(json_object_get(p, "VEC")),
                (long long)json_integer_value(json_object_get(p, "ITEMS")));
            before++;
            repeats += tr.ids.data && strstr(tr.ids.data, key) != NULL;
        }
        json_decref(ev);
    }
    if (fp)
        fclose(fp);
    free(log);
    ok(before >= 20, "the killed run logged its evaluations (%u)", before);
    is_uint(repeats, 0,
            "the resumed run repeats none of the checkpointed assignments");
    json_t *sum = load_json(dir, "summary.json");
    is_str(json_string_value(json_object_get(sum, "state")), "finished",
           "the summary says finished");
    json_decref(sum);
    kevo_search_free(s);
    kevo__buf_free(&tr.ids);
    remove_tree(dir);
    free(dir);
    kevo_task_free(task);
}

/* ---- the second parent --------------------------------------------------
 * Beside params runs an operator that writes code, as the llm operator
 * does: it takes prompts (it has revise()), records every request and
 * answers with a child whose source differs from its parent's. The search
 * must give a second parent only to some requests; never the parent
 * itself, nor an elite shown among the same request's inspirations; to
 * the code writer an elite with other code, and to params one with the
 * parent's source and another assignment (the only crossover params can
 * make: it refuses two sources). */

/* score(), and code the writer made scores a little higher, so that it
 * takes cells from the seed's code. */
static kevo_status score_code(const kevo_task *task, const kevo_candidate *c,
                              double *fitness, double *desc, void *user,
                              kevo_error *err)
{
    kevo_status rc = score(task, c, fitness, desc, user, err);
    if (strstr(kevo_candidate_source(c), "// variant"))
        *fitness *= 1.02;
    return rc;
}

typedef struct writer_record {
    unsigned requests, seconds;
    unsigned second_is_parent, second_same_source, second_in_inspirations;
    unsigned inspirations;
} writer_record;

static writer_record rec;

typedef struct writer {
    const kevo_host_api *api;
    kevo_host_ctx *ctx;
    unsigned made;
} writer;

static kevo_status writer_init(const kevo_host_api *api, kevo_host_ctx *ctx,
                               const char *config_json, void **state)
{
    (void)config_json;
    writer *w = calloc(1, sizeof *w);
    if (!w)
        return KEVO_ENOMEM;
    w->api = api;
    w->ctx = ctx;
    *state = w;
    return KEVO_OK;
}

static kevo_status writer_propose(void *state, const kevo_operator_request *req)
{
    writer *w = state;
    const kevo_host_api *api = w->api;
    const char *psrc = api->cand_source(w->ctx, req->parent);
    rec.requests++;
    rec.inspirations += (unsigned)req->n_inspirations;
    if (req->second_parent) {
        uint64_t sid = api->cand_id(w->ctx, req->second_parent);
        rec.seconds++;
        rec.second_is_parent += sid == api->cand_id(w->ctx, req->parent);
        rec.second_same_source +=
            strcmp(api->cand_source(w->ctx, req->second_parent), psrc) == 0;
        for (size_t i = 0; i < req->n_inspirations; i++)
            rec.second_in_inspirations +=
                api->cand_id(w->ctx, req->inspirations[i].candidate) == sid;
    }
    /* New code: the parent's with a line of its own, at a random point of
     * the parameter space. */
    static const int blocks[] = {64, 128, 256, 512, 1024};
    static const int vecs[] = {1, 2, 4}, items[] = {1, 2, 4, 8};
    char *src = kevo__asprintf("// variant %u\n%s", w->made++, psrc);
    char *assignment = kevo__asprintf(
        "{\"BLOCK\": %d, \"VEC\": %d, \"ITEMS\": %d}",
        blocks[api->uniform_int(w->ctx, 5)], vecs[api->uniform_int(w->ctx, 3)],
        items[api->uniform_int(w->ctx, 4)]);
    if (!src || !assignment ||
        api->emit_child(w->ctx, req->id, src, assignment, "a variant") !=
            KEVO_OK)
        api->fail(w->ctx, req->id, KEVO_FAIL_INVALID, api->last_error(w->ctx));
    free(src);
    free(assignment);
    api->done(w->ctx, req->id);
    return KEVO_OK;
}

static kevo_status writer_revise(void *state, const kevo_operator_revision *rev)
{
    writer *w = state;
    w->api->fail(w->ctx, rev->id, KEVO_FAIL_UNSUPPORTED, "no revisions here");
    w->api->done(w->ctx, rev->id);
    return KEVO_OK;
}

static void writer_fini(void *state)
{
    free(state);
}

static const kevo_operator_desc writer_desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = KEVO_OPERATOR_ABI_MINOR,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "writer",
    .version = "1.0",
    .description = "writes code, records requests",
    .init = writer_init,
    .propose = writer_propose,
    .fini = writer_fini,
    .revise = writer_revise,
};

typedef struct cross_trace {
    unsigned evaluated, failures, two_sources, params_crossovers;
} cross_trace;

static void on_cross_event(kevo_search *s, const kevo_search_event *ev,
                           void *user)
{
    (void)s;
    cross_trace *t = user;
    if (ev->type == KEVO_SEARCH_EVALUATED) {
        const char *op = kevo_candidate_operator(ev->candidate);
        t->evaluated++;
        t->params_crossovers += op && strcmp(op, "params") == 0 &&
                                kevo_candidate_parent_count(ev->candidate) == 2;
    }
    if (ev->type == KEVO_SEARCH_FAILURE) {
        t->failures++;
        t->two_sources += ev->text && strstr(ev->text, "same source") != NULL;
    }
}

static void test_second_parent(void)
{
    kevo_task *task = load_task("saxpy");
    kevo_search *s = NULL;
    scorer sc = {0, 0};
    kevo_error e = KEVO__ERROR_INIT;
    cross_trace tr = {0, 0, 0, 0};
    if (kevo_search_new(task, &s, &e) != KEVO_OK ||
        kevo_search_set_score_fn(s, score_code, &sc, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_SEED, 11, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, 240, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_INSPIRATIONS, 3, &e) != KEVO_OK ||
        kevo_operator_host_register(kevo_search_host(s), &writer_desc, "test",
                                    &e) != KEVO_OK ||
        kevo_search_add_operator(s, "params", NULL, NULL, 1.0, &e) != KEVO_OK ||
        kevo_search_add_operator(s, "writer", NULL, NULL, 1.0, &e) != KEVO_OK ||
        kevo_search_set_callback(s, on_cross_event, &tr, &e) != KEVO_OK)
        bail_out("cannot set up a search: %s", e.text);
    ok(kevo_search_run(s, &e) == KEVO_OK, "the search runs%s%s",
       *e.text ? ": " : "", e.text);
    diag("%u evaluations, %u writer requests, %u with a second parent, %u "
         "failures",
         tr.evaluated, rec.requests, rec.seconds, tr.failures);
    ok(rec.requests >= 60, "the writer got requests (%u)", rec.requests);
    ok(rec.inspirations > 0, "with inspirations");
    ok(rec.seconds > 0, "some of them with a second parent (%u)", rec.seconds);
    ok(rec.seconds * 10 < rec.requests * 6,
       "but only some (%u of %u): crossover is the exception", rec.seconds,
       rec.requests);
    is_uint(rec.second_is_parent, 0, "the second parent is never the parent");
    is_uint(rec.second_same_source, 0,
            "the code writer's second parent has other code");
    is_uint(rec.second_in_inspirations, 0,
            "the second parent is not shown again among the inspirations");
    ok(tr.params_crossovers > 0,
       "params makes crossovers of elites that share its parent's source "
       "(%u)",
       tr.params_crossovers);
    is_uint(tr.two_sources, 0,
            "params never gets a second parent with another source");
    kevo_search_free(s);
    kevo_task_free(task);
}

/* A scorer that fails every child with BLOCK=64, saying why. */
typedef struct failing {
    scorer base;
    kevo_search *search;
    unsigned failed;
} failing;

static kevo_status score_failing(const kevo_task *task, const kevo_candidate *c,
                                 double *fitness, double *desc, void *user,
                                 kevo_error *err)
{
    failing *f = user;
    kevo_status rc = score(task, c, fitness, desc, &f->base, err);
    if (rc == KEVO_OK && param(c, "BLOCK") == 64) {
        f->failed++;
        rc = kevo_search_fail_candidate(
            f->search, "wrong", "shape 0 (n=1000): z[999] = 0, want 1", err);
    }
    return rc;
}

/* An operator that cannot repair: its failed children are counted, credited
 * and never sent back. */
static void test_validity(void)
{
    kevo_task *task = load_task("saxpy");
    failing f = {0};
    trace tr = {0};
    kevo_search *s = make_search(task, &f.base, &tr, 4, 30);
    f.search = s;
    kevo_search_set_score_fn(s, score_failing, &f, NULL);
    char *dir = temp_dir();
    kevo_error e = KEVO__ERROR_INIT;
    kevo_search_open_run(s, dir, 0, NULL, &e);
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_search_fail_candidate(s, "Not A Kind", "d", &e), KEVO_EINVAL,
           "a kind that is not [a-z0-9_] is refused");
    is_int(kevo_search_run(s, &e), KEVO_OK, "a search with failing children");
    kevo_search_stats st = {.size = sizeof st};
    kevo_search_get_stats(s, &st);
    ok(f.failed > 0, "some children failed (%u)", f.failed);
    is_uint(st.proposals, st.evaluations - 1,
            "every child but the seed is a proposal");
    is_uint(st.valid, st.proposals - f.failed, "the failed ones are invalid");
    is_uint(st.repairs, 0, "params does not repair: no repair was sent");
    is_uint(count_events(dir, "repair"), 0, "and none was logged");
    json_t *sum = load_json(dir, "summary.json");
    json_t *op = json_array_get(json_object_get(sum, "operators"), 0);
    is_int(json_integer_value(json_object_get(op, "proposals")),
           (int)st.proposals, "summary: the operator's proposals");
    is_double(json_number_value(json_object_get(op, "validity")),
              (double)st.valid / (double)st.proposals, 1e-5,
              "summary: its validity");
    json_decref(sum);
    kevo_search_free(s);
    remove_tree(dir);
    free(dir);
    kevo__buf_free(&tr.ids);
    kevo_task_free(task);
}

/* ---- the champion is the fittest candidate ever judged that passes ------ */

/* Every child in one cell, so that each fitter child displaces the elite;
 * remembers the fittest child with VEC != 4, the ones the gate admits. */
typedef struct one_cell {
    scorer sc;
    double best_passing;
    uint64_t best_passing_id;
    unsigned gated, failed, failed_after_crown, crowned;
} one_cell;

static kevo_status score_one_cell(const kevo_task *task,
                                  const kevo_candidate *c, double *fitness,
                                  double *desc, void *user, kevo_error *err)
{
    one_cell *oc = user;
    kevo_status rc = score(task, c, fitness, desc, &oc->sc, err);
    desc[0] = 0;
    desc[1] = 256;
    if (param(c, "VEC") != 4 && *fitness > oc->best_passing) {
        oc->best_passing = *fitness;
        oc->best_passing_id = kevo_candidate_id(c);
    }
    return rc;
}

/* The held-out gate of this landscape: the fastest path (VEC=4) does not
 * hold at the shapes the search never saw. */
static bool gate_vec(const kevo_task *task, const kevo_candidate *c,
                     double fitness, char *why, size_t size, void *user)
{
    (void)task;
    (void)fitness;
    one_cell *oc = user;
    oc->gated++;
    bool pass = param(c, "VEC") != 4;
    if (!pass) {
        oc->failed++;
        oc->failed_after_crown += oc->crowned > 0;
    }
    snprintf(why, size, "%s", pass ? "held" : "slower than the seed at n=77");
    return pass;
}

static void on_crown(kevo_search *s, const kevo_search_event *ev, void *user)
{
    (void)s;
    if (ev->type == KEVO_SEARCH_CHAMPION)
        ((one_cell *)user)->crowned++;
}

static void test_gated_win_kept(void)
{
    kevo_task *task = load_task("saxpy");
    one_cell oc = {.best_passing = -1};
    kevo_search *s = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    char *dir = temp_dir();
    if (kevo_search_new(task, &s, &e) != KEVO_OK ||
        kevo_search_set_score_fn(s, score_one_cell, &oc, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_SEED, 5, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, 50, &e) != KEVO_OK ||
        kevo_search_add_operator(s, "params", NULL, NULL, 1.0, &e) != KEVO_OK ||
        kevo_search_set_callback(s, on_crown, &oc, &e) != KEVO_OK)
        bail_out("cannot set up a search: %s", e.text);
    is_int(kevo_search_set_gate_fn(s, NULL, NULL, &e), KEVO_EINVAL,
           "a NULL gate function is refused");
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_search_set_gate_fn(s, gate_vec, &oc, &e), KEVO_OK,
           "a gate function for the scored search");
    is_int(kevo_search_open_run(s, dir, 0, NULL, &e), KEVO_OK, "run opened");
    is_int(kevo_search_run(s, &e), KEVO_OK, "the search runs: %s", e.text);
    double f = NAN;
    const kevo_candidate *champ = kevo_search_champion(s, &f);
    ok(champ != NULL, "a champion");
    ok(oc.failed_after_crown > 0,
       "a fitter child failed the gate after a champion was crowned (%u)",
       oc.failed_after_crown);
    const kevo_archive *a = kevo_search_archive(s, 0);
    size_t cell = kevo_archive_first(a);
    ok(cell != KEVO_NO_CELL &&
           param(kevo_archive_candidate(a, cell), "VEC") == 4 &&
           kevo_archive_next(a, cell) == KEVO_NO_CELL,
       "the archive's one elite is a child that fails the gate");
    ok(champ && param(champ, "VEC") != 4, "the champion passes the gate");
    is_uint(champ ? kevo_candidate_id(champ) : 0, oc.best_passing_id,
            "the champion is the fittest child ever judged that passes");
    ok(f == oc.best_passing, "... with its fitness (%g, %g)", f,
       oc.best_passing);
    kevo_search_stats st = {.size = sizeof st};
    kevo_search_get_stats(s, &st);
    ok(st.champion_fitness == oc.best_passing && st.best_fitness > f,
       "stats: champion %g, best %g", st.champion_fitness, st.best_fitness);
    json_t *sum = load_json(dir, "summary.json");
    json_t *cj = json_object_get(sum, "champion");
    is_uint((uint64_t)json_integer_value(json_object_get(cj, "id")),
            oc.best_passing_id, "summary.json names that champion");
    size_t failed = 0, i;
    json_t *g;
    json_array_foreach (json_object_get(sum, "gate_tried"), i, g)
        failed += json_is_false(json_object_get(g, "passed"));
    ok(failed > 0 && failed == oc.failed,
       "summary.json lists the gates that failed (%zu)", failed);
    json_decref(sum);
    json_t *cp = load_json(dir, "checkpoint.json");
    ok(json_array_size(json_object_get(cp, "leaders")) > 1,
       "the checkpoint keeps the leaders");
    json_decref(cp);
    kevo_search_free(s);

    /* Resumed, the leaders come back: a longer run still ends with the
     * fittest passing child, not with the archive's failing elite. */
    s = NULL;
    e = (kevo_error)KEVO__ERROR_INIT;
    one_cell oc2 = oc;
    oc2.crowned = 0;
    if (kevo_search_new(task, &s, &e) != KEVO_OK ||
        kevo_search_set_score_fn(s, score_one_cell, &oc2, &e) != KEVO_OK ||
        kevo_search_set_gate_fn(s, gate_vec, &oc2, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_SEED, 5, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, 60, &e) != KEVO_OK ||
        kevo_search_add_operator(s, "params", NULL, NULL, 1.0, &e) != KEVO_OK)
        bail_out("cannot set up a search: %s", e.text);
    is_int(kevo_search_open_run(s, dir, KEVO_SEARCH_RUN_RESUME, NULL, &e),
           KEVO_OK, "resumed: %s", e.text);
    is_int(kevo_search_run(s, &e), KEVO_OK, "the resumed search runs");
    champ = kevo_search_champion(s, &f);
    ok(champ && param(champ, "VEC") != 4 && f == oc2.best_passing,
       "after the resume the champion is the fittest passing child (%g, %g)", f,
       oc2.best_passing);
    kevo_search_free(s);

    /* A checkpoint whose leaders were tampered with is refused, naming the
     * entry, and nothing of the run is lost. */
    json_t *bad = load_json(dir, "checkpoint.json");
    json_t *first = json_array_get(json_object_get(bad, "leaders"), 0);
    json_object_set_new(first, "fitness", json_string("fast"));
    char *cpath = kevo__path_join(dir, "checkpoint.json");
    if (!first || json_dump_file(bad, cpath, JSON_INDENT(1)) != 0)
        bail_out("cannot write %s", cpath);
    json_decref(bad);
    s = NULL;
    e = (kevo_error)KEVO__ERROR_INIT;
    if (kevo_search_new(task, &s, &e) != KEVO_OK ||
        kevo_search_set_score_fn(s, score_one_cell, &oc2, &e) != KEVO_OK ||
        kevo_search_add_operator(s, "params", NULL, NULL, 1.0, &e) != KEVO_OK)
        bail_out("cannot set up a search: %s", e.text);
    is_int(kevo_search_open_run(s, dir, KEVO_SEARCH_RUN_RESUME, NULL, &e),
           KEVO_EINVALID, "a malformed leader is refused");
    like_str(e.text, "$.leaders[0]", "  the error names the entry: %s", e.text);
    like_str(e.text, "\"fitness\"", "  and what it lacks");
    kevo_search_free(s);
    json_t *kept = json_load_file(cpath, 0, NULL);
    ok(json_is_string(json_object_get(
           json_array_get(json_object_get(kept, "leaders"), 0), "fitness")),
       "  the checkpoint is left as it was");
    json_decref(kept);
    free(cpath);
    remove_tree(dir);
    free(dir);
    kevo_task_free(task);
}

int main(void)
{
    const char *b = getenv("KEVO_BUILDDIR");
    char *path = kevo__asprintf("%s/operators/.libs", b && *b ? b : ".");
    setenv(KEVO_OPERATOR_PATH_ENV, path, 1);
    free(path);

    test_options();
    test_budget_and_rundir();
    test_determinism();
    test_islands();
    test_stops();
    test_kill_and_resume();
    test_second_parent();
    test_validity();
    test_gated_win_kept();
    return done_testing();
}

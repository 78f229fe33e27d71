/*
 * gpu-search: whole searches on the GPU, through the engine, the evaluator,
 * the operator plugins and the run directory.
 *
 *   1. params on saxpy: 40 evaluations with seed 7 stop on the budget,
 *      after exactly 40; the best fitness is at least the seed's (the
 *      first evaluation); the finalists (the seed among them) were timed
 *      again together and the champion is at least as fit as the seed in
 *      those times; the champion passed the held-out gate, which compared
 *      it with the seed in pairs at every held-out shape; the run
 *      directory holds events.jsonl with 40 evaluations, summary.json,
 *      best.cu (whose header gives the fitness and the parameters),
 *      best.dispatch.json and report.html.
 *   2. resume: a child process runs a search with a budget of 1000 and a
 *      checkpoint every 10 evaluations, and is killed with SIGKILL once its
 *      checkpoint counts 20; the run is resumed here: it knows every
 *      candidate evaluated before the checkpoint as tried and evaluates
 *      none again, its evaluations go on from the checkpoint's count, and
 *      every elite of the killed run's last checkpoint is still in the
 *      final archive, or was replaced by a fitter one in its cell.
 *   3. llm and params: the loopback server (tests/loopback-server.c)
 *      answers the llm operator with the kernels of
 *      tests/data/llm-variants, round robin; 30 evaluations fill at least
 *      three archive cells, every correct variant is judged ok and the
 *      broken one wrong, the prompts are credited with children, and the
 *      report names the llm operator.
 *
 * Skipped (exit 77) where the evaluator finds no GPU. KEVO_KEEP_RUN=DIR
 * keeps the three run directories, copied to DIR.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <kevo.h>
#include <kevo/search.h>

#include "../loopback-server.h"
#include "../tap.h"

static char tmpdir[] = "/tmp/gpu-search.XXXXXX";
static kevo_task *saxpy;

/* ---- helpers ------------------------------------------------------------ */

static char *run_path(const char *run, const char *name)
{
    size_t n = strlen(tmpdir) + strlen(run) + strlen(name) + 3;
    char *p = malloc(n);
    if (!p)
        bail_out("out of memory");
    snprintf(p, n, "%s/%s%s%s", tmpdir, run, name[0] ? "/" : "", name);
    return p;
}

/* The contents of path in a new string, or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    size_t len = 0;
    for (;;) {
        char *more = realloc(text, len + 65536 + 1);
        if (!more)
            bail_out("out of memory");
        text = more;
        size_t n = fread(text + len, 1, 65536, f);
        len += n;
        if (n < 65536)
            break;
    }
    fclose(f);
    text[len] = '\0';
    return text;
}

/* RUN/name as JSON (a new reference), or NULL with a diagnostic. */
static json_t *load_json(const char *run, const char *name)
{
    char *path = run_path(run, name);
    json_error_t jerr;
    json_t *v = json_load_file(path, 0, &jerr);
    if (!v)
        diag("%s: %d:%d: %s", path, jerr.line, jerr.column, jerr.text);
    free(path);
    return v;
}

/* Every event of RUN/events.jsonl, in a new array; *malformed counts the
 * lines that are not events. */
static json_t *read_events(const char *run, size_t *malformed)
{
    char *path = run_path(run, "events.jsonl");
    kevo_event_reader *r = NULL;
    kevo_error err;
    kevo_error_init(&err);
    json_t *all = json_array();
    if (kevo_event_reader_open(path, &r, &err) != KEVO_OK)
        bail_out("%s", err.text);
    for (;;) {
        const char *text = NULL;
        kevo_status rc = kevo_event_reader_next(r, &text, NULL, &err);
        if (rc == KEVO_DONE)
            break;
        if (rc == KEVO_EPARSE)
            continue;
        if (rc != KEVO_OK)
            bail_out("%s", err.text);
        json_t *ev = json_loads(text, 0, NULL);
        if (ev)
            json_array_append_new(all, ev);
    }
    if (malformed)
        *malformed = kevo_event_reader_malformed(r);
    kevo_event_reader_free(r);
    free(path);
    return all;
}

static const char *str_of(json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static bool is_type(json_t *ev, const char *type)
{
    return strcmp(str_of(ev, "type"), type) == 0;
}

static size_t count_type(json_t *events, const char *type)
{
    size_t i, n = 0;
    json_t *ev;
    json_array_foreach (events, i, ev)
        n += is_type(ev, type);
    return n;
}

/* An evaluator with quick timing. Skips the whole test without a GPU. */
static kevo_evaluator *start_evaluator(void)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_evaluator *ev = NULL;
    if (kevo_evaluator_new(&ev, &err) != KEVO_OK)
        bail_out("%s", err.text);
    kevo_evaluator_set_int(ev, KEVO_EVAL_TIME_CAP_MS, 100, NULL);
    kevo_evaluator_set_int(ev, KEVO_EVAL_MAX_REPS, 100, NULL);
    kevo_evaluator_set_int(ev, KEVO_EVAL_WARMUP, 2, NULL);
    kevo_status rc = kevo_evaluator_start(ev, 0, &err);
    if (rc == KEVO_ENODEV) {
        kevo_evaluator_free(ev);
        skip_all("no GPU: %s", err.text);
    }
    if (rc != KEVO_OK)
        bail_out("the evaluator does not start: %s", err.text);
    return ev;
}

/* A search of saxpy with the params operator. */
static kevo_search *params_search(kevo_evaluator *ev, int64_t seed,
                                  int64_t evals, int64_t checkpoint_every)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_search *s = NULL;
    if (kevo_search_new(saxpy, &s, &err) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_SEED, seed, &err) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, evals, &err) != KEVO_OK ||
        (checkpoint_every &&
         kevo_search_set_int(s, KEVO_SEARCH_CHECKPOINT_EVERY, checkpoint_every,
                             &err) != KEVO_OK) ||
        kevo_search_set_evaluator(s, ev, &err) != KEVO_OK ||
        kevo_search_add_operator(s, "params", NULL, NULL, 1.0, &err) != KEVO_OK)
        bail_out("cannot set up the search: %s", err.text);
    return s;
}

/* ---- 1. params on saxpy -------------------------------------------------- */

/* The "eval" event with count n, or NULL. */
static json_t *eval_event(json_t *events, json_int_t n)
{
    size_t i;
    json_t *ev;
    json_array_foreach (events, i, ev) {
        if (is_type(ev, "eval") &&
            json_integer_value(json_object_get(ev, "n")) == n)
            return ev;
    }
    return NULL;
}

static void check_best_cu(const kevo_candidate *champ)
{
    char *path = run_path("params", "best.cu");
    char *text = slurp(path);
    free(path);
    ok(text != NULL, "best.cu written");
    if (!text)
        return;
    /* The header comment: everything before the champion's source. */
    const char *src = champ ? kevo_candidate_source(champ) : NULL;
    const char *at = src ? strstr(text, src) : NULL;
    ok(at != NULL, "best.cu holds the champion's source");
    size_t hlen = at ? (size_t)(at - text) : strlen(text);
    char *header = malloc(hlen + 1);
    if (!header)
        bail_out("out of memory");
    memcpy(header, text, hlen);
    header[hlen] = '\0';
    like_str(header, "fitness", "best.cu's header gives the fitness");
    const kevo_vars *a = champ ? kevo_candidate_assignment(champ) : NULL;
    size_t n = a ? kevo_vars_count(a) : 0;
    ok(n > 0, "the champion has parameters");
    for (size_t i = 0; i < n; i++) {
        char want[128];
        snprintf(want, sizeof want, "%s=%" PRId64, kevo_vars_name(a, i),
                 kevo_vars_value(a, i));
        like_str(header, want, "best.cu's header gives %s", want);
    }
    free(header);
    free(text);
}

static void test_params(void)
{
    kevo_evaluator *ev = start_evaluator();
    kevo_search *s = params_search(ev, 7, 40, 0);
    kevo_error err;
    kevo_error_init(&err);
    char *run = run_path("params", "");
    is_int(kevo_search_open_run(s, run, 0, "gpu-search params", &err), KEVO_OK,
           "a new run directory");
    kevo_status rc = kevo_search_run(s, &err);
    if (!ok(rc == KEVO_OK, "params search of saxpy runs to its end"))
        diag("%s", err.text);
    if (!ok(kevo_report_write(run, &err) == KEVO_OK,
            "the caller writes the report"))
        diag("%s", err.text);
    kevo_search_stats st = {.size = sizeof st};
    kevo_search_get_stats(s, &st);
    is_int(st.stop, KEVO_STOP_EVALUATIONS, "it stops on the evaluation budget");
    is_uint(st.evaluations, 40, "after exactly 40 evaluations");

    json_t *events = read_events("params", NULL);
    is_uint(count_type(events, "eval"), 40, "events.jsonl: 40 eval lines");
    json_t *first = eval_event(events, 1);
    double seed_fitness = json_number_value(json_object_get(first, "fitness"));
    ok(first && strcmp(str_of(first, "verdict"), "ok") == 0,
       "the first evaluation is the seed, and it is correct");
    ok(st.best_fitness >= seed_fitness && seed_fitness > 0,
       "best fitness %.3f is at least the seed's %.3f", st.best_fitness,
       seed_fitness);

    double champ_fitness = NAN;
    const kevo_candidate *champ = kevo_search_champion(s, &champ_fitness);
    ok(champ != NULL, "a champion (fitness %.3f)", champ_fitness);
    json_t *summary = load_json("params", "summary.json");
    ok(summary != NULL, "summary.json written");
    json_t *gate =
        json_object_get(json_object_get(summary, "champion"), "gate");
    ok(json_is_true(json_object_get(gate, "passed")),
       "the champion passed the held-out gate");
    /* The gate compared it with the seed at each held-out shape, timed in
     * pairs. */
    size_t i;
    json_t *row, *e;
    json_array_foreach (json_object_get(gate, "shapes"), i, row) {
        ok(json_is_true(json_object_get(row, "paired")) &&
               json_is_true(json_object_get(row, "passed")) &&
               json_is_string(json_object_get(row, "baseline")),
           "held-out shape %zu: %s against the %s, paired", i,
           str_of(row, "call"), str_of(row, "baseline"));
    }
    ok(json_array_size(json_object_get(gate, "shapes")) ==
           kevo_task_shape_count(saxpy, KEVO_SHAPES_HELD_OUT),
       "the gate has a row for every held-out shape");
    /* The finalists, the seed among them, were timed again together; the
     * champion is at least as fit as the seed in those paired times. */
    double seed_again = NAN, champ_again = NAN;
    json_array_foreach (events, i, e) {
        if (!is_type(e, "retime"))
            continue;
        json_int_t id = json_integer_value(json_object_get(e, "id"));
        double f = json_number_value(json_object_get(e, "retimed"));
        if (id == 1)
            seed_again = f;
        if (champ && (uint64_t)id == kevo_candidate_id(champ))
            champ_again = f;
    }
    ok(count_type(events, "retime") >= 2 && seed_again > 0,
       "%zu finalists timed again, the seed among them (%.3f)",
       count_type(events, "retime"), seed_again);
    ok(champ_again >= seed_again,
       "the champion, timed beside the seed, is at least as fit (%.3f >= "
       "%.3f)",
       champ_again, seed_again);
    is_double(champ_fitness, champ_again, 1e-12,
              "the champion's fitness is the one timed again");
    /* Each shape's row carries the seed's figures whoever the champion
     * is (the seed was timed beside it among the finalists). */
    size_t with_seed = 0, rows = 0;
    json_array_foreach (json_object_get(summary, "shapes"), i, row) {
        rows++;
        with_seed += json_is_number(
            json_object_get(json_object_get(row, "seed"), "time"));
    }
    ok(rows > 0 && with_seed == rows,
       "summary: the seed's figures on every shape (%zu of %zu; champion "
       "%" PRIu64 ")",
       with_seed, rows, champ ? kevo_candidate_id(champ) : 0);
    is_str(str_of(summary, "state"), "finished", "summary: finished");
    is_int(json_integer_value(json_object_get(summary, "evaluations")), 40,
           "summary: 40 evaluations");
    check_best_cu(champ);
    json_t *dispatch = load_json("params", "best.dispatch.json");
    ok(json_array_size(json_object_get(dispatch, "shapes")) ==
           kevo_task_shape_count(saxpy, KEVO_SHAPES_TRAIN),
       "best.dispatch.json has a row for every training shape");
    char *path = run_path("params", "report.html");
    char *html = slurp(path);
    ok(html && strstr(html, "saxpy"), "report.html written");
    free(html);
    free(path);
    json_decref(dispatch);
    json_decref(summary);
    json_decref(events);
    free(run);
    kevo_search_free(s);
    kevo_evaluator_free(ev);
}

/* ---- 2. resume after SIGKILL --------------------------------------------- */

/* The checkpoint's count of evaluations ("counters"), or -1. */
static json_int_t checkpoint_count(json_t *ck)
{
    json_t *v = json_object_get(json_object_get(ck, "counters"), "evaluations");
    return json_is_integer(v) ? json_integer_value(v) : -1;
}

/* The checkpoint's elites, each {"island", "cell", "id", "fitness"}, in a
 * new array: "islands" holds one archive (kevo_archive_to_json()) per
 * island. */
static json_t *checkpoint_elites(json_t *ck)
{
    json_t *elites = json_array(), *a, *e;
    size_t i, j;
    json_array_foreach (json_object_get(ck, "islands"), i, a) {
        json_array_foreach (json_object_get(a, "elites"), j, e) {
            json_t *cand = json_object_get(e, "candidate");
            json_array_append_new(
                elites,
                json_pack("{s:I, s:O, s:O, s:O}", "island", (json_int_t)i,
                          "cell", json_object_get(e, "cell"), "id",
                          json_object_get(cand, "id"), "fitness",
                          json_object_get(e, "fitness")));
        }
    }
    return elites;
}

/* The source of the candidate an "eval" event of RUN judged, in a new
 * string: RUN/candidates/ID.cu, or the task's seed for the seed (which is
 * not a child, and has no file there); NULL when neither. */
static char *eval_source(const char *run, json_t *eval)
{
    char name[64];
    snprintf(name, sizeof name, "candidates/%" PRId64 ".cu",
             (int64_t)json_integer_value(json_object_get(eval, "id")));
    char *path = run_path(run, name);
    char *source = slurp(path);
    free(path);
    if (!source && strcmp(str_of(eval, "operator"), "seed") == 0 &&
        !(source = strdup(kevo_candidate_source(kevo_task_seed(saxpy)))))
        bail_out("out of memory");
    return source;
}

/* What makes an evaluated candidate itself: its source (RUN/candidates/)
 * and its parameters, as one new string. */
static char *candidate_key(const char *run, json_t *eval)
{
    char *source = eval_source(run, eval);
    char *params = json_dumps(json_object_get(eval, "params"),
                              JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
    size_t n =
        (source ? strlen(source) : 0) + (params ? strlen(params) : 0) + 2;
    char *key = malloc(n);
    if (!key)
        bail_out("out of memory");
    snprintf(key, n, "%s\n%s", source ? source : "", params ? params : "");
    free(params);
    free(source);
    return key;
}

/* The resumed search s knows (kevo_operator_host_seen()) every candidate
 * that the first `before` events evaluated up to the checkpoint's `done`,
 * so that none is tried again. */
static void check_known(kevo_search *s, size_t before, json_int_t done)
{
    json_t *events = read_events("resume", NULL), *e;
    size_t i, known = 0, unknown = 0;
    json_array_foreach (events, i, e) {
        json_int_t n = json_integer_value(json_object_get(e, "n"));
        if (i >= before || !is_type(e, "eval") || n > done)
            continue;
        char *source = eval_source("resume", e);
        kevo_candidate *c = NULL;
        if (!source || kevo_candidate_new_for_task(saxpy, source, NULL, &c,
                                                   NULL) != KEVO_OK)
            bail_out("cannot read the candidate of evaluation %" PRId64,
                     (int64_t)n);
        const char *param;
        json_t *v;
        json_object_foreach (json_object_get(e, "params"), param, v)
            kevo_candidate_set_param(c, param, json_integer_value(v), NULL);
        if (kevo_operator_host_seen(kevo_search_host(s), c)) {
            known++;
        } else {
            unknown++;
            diag("evaluation %" PRId64 " (candidate %" PRId64
                 ") is not known as tried",
                 (int64_t)n,
                 (int64_t)json_integer_value(json_object_get(e, "id")));
        }
        kevo_candidate_free(c);
        free(source);
    }
    ok(known > 0 && unknown == 0,
       "the resumed search knows the %zu candidates evaluated before the "
       "checkpoint as tried (%zu not)",
       known, unknown);
    json_decref(events);
}

/* In a child process: the search that gets killed. Never returns. */
static void run_to_be_killed(const char *run)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_evaluator *ev = NULL;
    if (kevo_evaluator_new(&ev, &err) != KEVO_OK ||
        kevo_evaluator_set_int(ev, KEVO_EVAL_TIME_CAP_MS, 100, &err) ||
        kevo_evaluator_start(ev, 0, &err) != KEVO_OK) {
        fprintf(stderr, "gpu-search: child: %s\n", err.text);
        _exit(3);
    }
    kevo_search *s = params_search(ev, 11, 1000, 10);
    if (kevo_search_open_run(s, run, 0, "gpu-search resume", &err) != KEVO_OK ||
        kevo_search_run(s, &err) != KEVO_OK)
        fprintf(stderr, "gpu-search: child: %s\n", err.text);
    /* Reaching here means the parent never killed it. */
    _exit(4);
}

static void test_resume(void)
{
    char *run = run_path("resume", "");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        bail_out("fork: %s", strerror(errno));
    if (pid == 0)
        run_to_be_killed(run);

    /* Wait for a checkpoint of at least 20 evaluations. */
    json_int_t seen = -1;
    int status = 0;
    bool exited = false;
    for (int waited = 0; waited < 6000 && seen < 20; waited++) {
        char *text = NULL;
        if (kevo_rundir_read_checkpoint(run, &text, NULL) == KEVO_OK) {
            json_t *ck = json_loads(text, 0, NULL);
            seen = checkpoint_count(ck);
            json_decref(ck);
        }
        free(text);
        if (waitpid(pid, &status, WNOHANG) == pid) {
            exited = true;
            break;
        }
        if (seen < 20)
            nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    if (!exited) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    ok(!exited && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
       "the first run was killed with SIGKILL after a checkpoint of %" PRId64
       " evaluations",
       (int64_t)seen);
    if (exited)
        diag("it exited by itself with status %d", status);

    /* The killed run's last checkpoint (perhaps newer than the one seen). */
    char *text = NULL;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_rundir_read_checkpoint(run, &text, &err) != KEVO_OK)
        bail_out("no checkpoint: %s", err.text);
    json_t *ck = json_loads(text, 0, NULL);
    free(text);
    json_int_t done = checkpoint_count(ck);
    json_t *elites = checkpoint_elites(ck);
    ok(done >= 20, "the checkpoint counts %" PRId64 " evaluations",
       (int64_t)done);
    ok(json_array_size(elites) > 0, "it holds %zu elites",
       json_array_size(elites));
    json_t *old = read_events("resume", NULL);
    size_t before = json_array_size(old);
    json_decref(old);
    json_decref(ck);

    kevo_evaluator *ev = start_evaluator();
    kevo_search *s = params_search(ev, 11, done + 10, 10);
    is_int(kevo_search_open_run(s, run, KEVO_SEARCH_RUN_RESUME,
                                "gpu-search resume", &err),
           KEVO_OK, "the killed run is opened to resume");
    check_known(s, before, done);
    kevo_status rc = kevo_search_run(s, &err);
    if (!ok(rc == KEVO_OK, "the resumed run runs to its end"))
        diag("%s", err.text);
    kevo_search_stats st = {.size = sizeof st};
    kevo_search_get_stats(s, &st);
    /* saxpy's space holds 60 assignments: once the neighbourhoods of
     * the elites are tried, params has nothing new to propose, and the
     * run may stop exhausted before its budget. How far it got before
     * being killed decides, so either stop is right. */
    bool exhausted = st.stop == KEVO_STOP_EXHAUSTED;
    uint64_t after = st.evaluations - (uint64_t)done;
    ok(st.evaluations > (uint64_t)done &&
           (exhausted ? after <= 10 : after == 10),
       "it counts on from the checkpoint's evaluations (%" PRIu64 " to %" PRIu64
       ")",
       (uint64_t)done, st.evaluations);
    ok(st.stop == KEVO_STOP_EVALUATIONS || exhausted,
       "and stops on its budget, or with saxpy's space exhausted (%s)",
       kevo_stop_reason_name(st.stop));

    /* The events this process wrote: a start that says it resumed, then
     * evaluations numbered on from the checkpoint. */
    json_t *events = read_events("resume", NULL), *ev_json;
    size_t i;
    json_t *start = NULL;
    json_int_t first_n = -1, last_n = -1;
    size_t evals = 0;
    json_t *tried = json_object();
    size_t repeats = 0;
    json_array_foreach (events, i, ev_json) {
        if (is_type(ev_json, "eval")) {
            /* Candidates evaluated before the checkpoint are known to the
             * resumed run: none is evaluated again. */
            json_int_t n = json_integer_value(json_object_get(ev_json, "n"));
            char *key = candidate_key("resume", ev_json);
            if (i < before && n <= done) {
                json_object_set_new(tried, key, json_integer(n));
            } else if (i >= before && json_object_get(tried, key)) {
                repeats++;
                diag("evaluation %" PRId64 " repeats evaluation %" PRId64,
                     (int64_t)n,
                     (int64_t)json_integer_value(json_object_get(tried, key)));
            }
            free(key);
        }
        if (i < before)
            continue;
        if (is_type(ev_json, "start") && !start)
            start = ev_json;
        if (is_type(ev_json, "eval")) {
            json_int_t n = json_integer_value(json_object_get(ev_json, "n"));
            if (first_n < 0)
                first_n = n;
            last_n = n;
            evals++;
        }
    }
    ok(start && json_is_true(json_object_get(start, "resumed")) &&
           json_integer_value(json_object_get(start, "evaluations")) == done,
       "a start event: resumed, with the checkpoint's evaluations");
    is_int(first_n, done + 1, "the first evaluation after resuming is n=%d",
           (int)(done + 1));
    is_int(last_n, (json_int_t)st.evaluations, "the last is n=%d",
           (int)st.evaluations);
    is_uint(evals, after, "%" PRIu64 " evaluations after resuming", after);
    is_uint(repeats, 0,
            "none of them repeats a candidate evaluated before the "
            "checkpoint");
    json_decref(tried);

    /* Every elite of the checkpoint survived or was beaten in its cell. */
    size_t kept = 0, beaten = 0, lost = 0;
    json_t *e;
    json_array_foreach (elites, i, e) {
        size_t island =
            (size_t)json_integer_value(json_object_get(e, "island"));
        size_t cell = (size_t)json_integer_value(json_object_get(e, "cell"));
        uint64_t id = (uint64_t)json_integer_value(json_object_get(e, "id"));
        double fitness = json_number_value(json_object_get(e, "fitness"));
        const kevo_archive *a = kevo_search_archive(s, island);
        const kevo_candidate *now = a ? kevo_archive_candidate(a, cell) : NULL;
        if (now && kevo_candidate_id(now) == id) {
            kept++;
        } else if (now && kevo_archive_fitness(a, cell) >= fitness) {
            beaten++;
        } else {
            lost++;
            diag("elite %" PRIu64 " (island %zu, cell %zu, fitness %.4f) is "
                 "gone",
                 id, island, cell, fitness);
        }
    }
    is_uint(lost, 0,
            "every elite of the checkpoint is still there (%zu) or was "
            "replaced by a fitter one (%zu)",
            kept, beaten);
    json_decref(events);
    json_decref(elites);
    kevo_search_free(s);
    kevo_evaluator_free(ev);
    free(run);
}

/* ---- 3. the llm operator and params ---------------------------------------
 */

#define MAX_VARIANTS 16

typedef struct variant {
    char name[64];
    char first_line[256]; /* identifies the variant in a candidate */
    bool broken;
    size_t evaluated, ok, wrong;
} variant;

/* The reply an LLM would send: the kernel in a ```cuda block, with a first
 * line that the server numbers, so that no two replies are alike. */
static char *wrap_reply(const char *name, const char *source)
{
    static const char format[] = "Here is a rewritten kernel (%s).\n\n"
                                 "```cuda\n// reply @SEQ@\n%s```\n";
    size_t size = sizeof format + strlen(name) + strlen(source) + 1;
    char *reply = malloc(size);
    if (!reply)
        bail_out("out of memory");
    snprintf(reply, size, format, name, source);
    return reply;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const variant *)a)->name, ((const variant *)b)->name);
}

/* Registers tests/data/llm-variants/saxpy-*.cu with the server and scripts
 * them round robin. */
static size_t serve_variants(loopback *lb, variant *v)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/data/llm-variants", tap_srcdir());
    DIR *d = opendir(dir);
    if (!d)
        bail_out("%s: %s", dir, strerror(errno));
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < MAX_VARIANTS) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "saxpy-", 6) != 0 || len < 4 ||
            strcmp(e->d_name + len - 3, ".cu") != 0 || len - 3 >= 64)
            continue;
        memset(&v[n], 0, sizeof v[n]);
        memcpy(v[n].name, e->d_name, len - 3);
        n++;
    }
    closedir(d);
    qsort(v, n, sizeof *v, by_name);
    char script[8192] = "";
    for (size_t i = 0; i < n; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%.63s.cu", dir, v[i].name);
        char *source = slurp(path);
        if (!source)
            bail_out("cannot read %s", path);
        size_t eol = strcspn(source, "\n");
        snprintf(v[i].first_line, sizeof v[i].first_line, "%.*s", (int)eol,
                 source);
        v[i].broken = strstr(v[i].name, "broken") != NULL;
        char *reply = wrap_reply(v[i].name, source);
        loopback_set_text(lb, v[i].name, reply);
        free(reply);
        free(source);
    }
    /* Enough rounds for any request the search can make. */
    for (int round = 0; round < 40; round++) {
        for (size_t i = 0; i < n; i++) {
            strcat(script, script[0] ? "," : "");
            strcat(script, v[i].name);
        }
        if (strlen(script) > sizeof script - 256)
            break;
    }
    loopback_script(lb, script);
    return n;
}

/* The variant whose first line source holds, or NULL. */
static variant *which_variant(variant *v, size_t n, const char *source)
{
    for (size_t i = 0; source && i < n; i++) {
        if (strstr(source, v[i].first_line))
            return &v[i];
    }
    return NULL;
}

static void test_llm(void)
{
    loopback *lb = loopback_start();
    if (!lb)
        bail_out("the loopback server does not start");
    variant v[MAX_VARIANTS];
    size_t nv = serve_variants(lb, v);
    ok(nv >= 5, "%zu kernel variants served round robin", nv);
    loopback_expect_key(lb, "gpu-search-dummy-key");
    setenv("KEVO_GPU_SEARCH_KEY", "gpu-search-dummy-key", 1);
    char config[1024];
    snprintf(config, sizeof config,
             "{\"models\": [{\"api\": \"openai\", \"model\": \"loopback\", "
             "\"base_url\": \"%s/v1\", \"key_env\": \"KEVO_GPU_SEARCH_KEY\", "
             "\"timeout_s\": 60}], \"concurrency\": 4, \"max_retries\": 2, "
             "\"reply_format\": \"whole\"}",
             loopback_url(lb));

    kevo_evaluator *ev = start_evaluator();
    kevo_search *s = params_search(ev, 3, 30, 0);
    kevo_error err;
    kevo_error_init(&err);
    const char *env = getenv("KEVO_PROMPT_DIR");
    char prompts[1024];
    snprintf(prompts, sizeof prompts, "%s/prompts", tap_srcdir());
    size_t loaded = 0;
    char *run = run_path("llm", "");
    is_int(kevo_search_add_operator(s, "llm", NULL, config, 2.0, &err), KEVO_OK,
           "the llm operator joins, against %s", loopback_url(lb));
    is_int(kevo_promptpool_load_dir(kevo_search_prompts(s),
                                    env && *env ? env : prompts, &loaded, &err),
           KEVO_OK, "the seed prompts load (%zu)", loaded);
    is_int(kevo_search_open_run(s, run, 0, "gpu-search llm", &err), KEVO_OK,
           "a new run directory");
    kevo_status rc = kevo_search_run(s, &err);
    if (!ok(rc == KEVO_OK, "llm and params search of saxpy runs to its end"))
        diag("%s", err.text);
    if (!ok(kevo_report_write(run, &err) == KEVO_OK,
            "the caller writes the report"))
        diag("%s", err.text);
    kevo_search_stats st = {.size = sizeof st};
    kevo_search_get_stats(s, &st);
    is_uint(st.evaluations, 30, "30 evaluations");
    ok(st.filled >= 3, "%zu archive cells filled", st.filled);
    ok(loopback_count(lb) > 0, "the server answered %zu requests",
       loopback_count(lb));

    /* Every evaluation of a variant's kernel (the llm child, and params
     * children of it) got the variant's verdict. */
    json_t *events = read_events("llm", NULL), *e;
    size_t i, llm_evals = 0;
    json_array_foreach (events, i, e) {
        if (!is_type(e, "eval"))
            continue;
        llm_evals += strcmp(str_of(e, "operator"), "llm") == 0;
        char *source = eval_source("llm", e);
        variant *var = which_variant(v, nv, source);
        if (var) {
            const char *verdict = str_of(e, "verdict");
            var->evaluated++;
            var->ok += strcmp(verdict, "ok") == 0;
            var->wrong += strcmp(verdict, "wrong") == 0;
        }
        free(source);
    }
    ok(llm_evals > 0, "%zu evaluations of llm children", llm_evals);
    size_t correct_seen = 0;
    for (size_t k = 0; k < nv; k++) {
        diag("%s: %zu evaluated, %zu ok, %zu wrong", v[k].name, v[k].evaluated,
             v[k].ok, v[k].wrong);
        if (v[k].broken) {
            ok(v[k].evaluated > 0 && v[k].wrong == v[k].evaluated,
               "%s: judged wrong", v[k].name);
        } else if (v[k].evaluated) {
            correct_seen++;
            is_uint(v[k].ok, v[k].evaluated, "%s: judged ok", v[k].name);
        }
    }
    ok(correct_seen >= 3, "%zu correct variants evaluated", correct_seen);

    /* The prompts were credited with the llm children. */
    kevo_promptpool *pool = kevo_search_prompts(s);
    uint64_t children = 0;
    for (size_t k = 0; k < kevo_promptpool_size(pool); k++) {
        kevo_prompt_record rec = {.size = sizeof rec};
        if (kevo_promptpool_get_record(pool, kevo_promptpool_id(pool, k),
                                       &rec) == KEVO_OK)
            children += rec.children;
    }
    ok(children > 0, "the prompts were credited with %" PRIu64 " children",
       children);
    char *path = run_path("llm", "report.html");
    char *html = slurp(path);
    like_str(html, "llm", "report.html names the llm operator");
    free(html);
    free(path);
    json_decref(events);
    kevo_search_free(s);
    kevo_evaluator_free(ev);
    loopback_stop(lb);
    free(run);
}

/* ---- main --------------------------------------------------------------- */

static int remove_entry(const char *path, const struct stat *sb, int flag,
                        struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Copies the run directories to KEVO_KEEP_RUN when it is set. */
static void keep_runs(void)
{
    const char *keep = getenv("KEVO_KEEP_RUN");
    if (!keep || !*keep)
        return;
    if (mkdir(keep, 0755) != 0 && errno != EEXIST) {
        diag("KEVO_KEEP_RUN: %s: %s", keep, strerror(errno));
        return;
    }
    static const char *const runs[] = {"params", "resume", "llm"};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        char *src = run_path(runs[i], "");
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            execlp("cp", "cp", "-R", src, keep, (char *)NULL);
            _exit(127);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            diag("KEVO_KEEP_RUN: cannot copy %s to %s", src, keep);
        else
            diag("kept %s/%s", keep, runs[i]);
        free(src);
    }
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
    if (kevo_task_load(path, &saxpy, &err) != KEVO_OK)
        bail_out("%s", err.text);
    /* Skips here, before anything else, where there is no GPU. */
    kevo_evaluator_free(start_evaluator());
    if (!mkdtemp(tmpdir))
        bail_out("mkdtemp: %s", strerror(errno));

    test_params();
    test_resume();
    test_llm();

    keep_runs();
    nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    kevo_task_free(saxpy);
    return done_testing();
}

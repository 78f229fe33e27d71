/*
 * test-search-llm.c: the whole search engine with the real llm operator
 * against the loopback server (tests/loopback-server.c), without a GPU. The
 * scoring function compiles each child with NVRTC through an evaluator in
 * compile-only mode and reports a compile error with
 * kevo_search_fail_candidate() and kevo's diagnostic
 * (kevo_eval_result_diagnostic()); where the kevo-worker program is not
 * built (no CUDA), it reports the same error for the same kernel without
 * compiling. The model's replies, in order: a kernel that does not compile,
 * its repair, a kernel whose launch block calls std::min (refused by the
 * host before anything compiles), its repair, then good kernels. The search
 * sends each failure back in the same conversation, credits the repaired
 * children, counts validity per operator and per prompt, logs the repairs,
 * lists the parent's failures in later prompts, and keeps all of it in
 * summary.json, report.html and the checkpoint. The run is opened after
 * the operator is added, as the kevo program does: RUN/llm/ still gets
 * the instance's file, its summary, and a request and a reply file for
 * every call.
 */
#include "config.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/kevo_private.h"
#include "loopback-server.h"
#include "tap.h"

static loopback *srv;

typedef struct scorer {
    kevo_search *search;
    kevo_evaluator *ev; /* compile-only, or NULL */
    unsigned calls, failed;
} scorer;

/* The seed is the fittest: every child's parent stays the seed. */
static kevo_status score(const kevo_task *task, const kevo_candidate *c,
                         double *fitness, double *desc, void *user,
                         kevo_error *err)
{
    scorer *sc = user;
    sc->calls++;
    const char *src = kevo_candidate_source(c);
    char *diag = NULL;
    const char *kind = NULL;
    kevo_eval_result *res = NULL;
    if (sc->ev) {
        uint64_t ticket;
        kevo_status rc = kevo_evaluator_submit(sc->ev, task, c,
                                               KEVO_EVAL_COMPILE, &ticket, err);
        if (rc == KEVO_OK)
            rc = kevo_evaluator_wait(sc->ev, -1, &res, err);
        if (rc != KEVO_OK)
            return rc;
        if (kevo_eval_result_verdict(res) != KEVO_VERDICT_OK) {
            kind = kevo_verdict_name(kevo_eval_result_verdict(res));
            diag = kevo_eval_result_diagnostic(res);
        }
    } else if (strstr(src, "__ldg4(")) {
        kind = "compile_error";
        diag = strdup("compile error: llm#1(17): error: identifier "
                      "\"__ldg4\" is undefined");
    }
    *fitness = strstr(src, "float4") ? 0.4 : 0.5;
    desc[0] = 0;
    desc[1] = 256;
    if (kind) {
        sc->failed++;
        kevo_status rc =
            kevo_search_fail_candidate(sc->search, kind, diag, err);
        free(diag);
        kevo_eval_result_free(res);
        return rc;
    }
    kevo_eval_result_free(res);
    return KEVO_OK;
}

static json_t *load_json(const char *dir, const char *name)
{
    char *path = kevo__path_join(dir, name);
    json_t *v = json_load_file(path, 0, NULL);
    free(path);
    return v;
}

static char *slurp(const char *dir, const char *name)
{
    char *path = kevo__asprintf("%s/%s/%s", tap_srcdir(), dir, name);
    char *text = NULL;
    size_t len;
    if (kevo__read_file(path, true, &text, &len, NULL) != KEVO_OK)
        bail_out("cannot read %s", path);
    free(path);
    return text;
}

/* The events of type in events.jsonl, parsed, in order. */
static json_t *events(const char *dir, const char *type)
{
    json_t *arr = json_array();
    char *path = kevo__path_join(dir, "events.jsonl");
    FILE *f = fopen(path, "r");
    char line[65536];
    while (f && fgets(line, sizeof line, f)) {
        json_t *ev = json_loads(line, 0, NULL);
        const char *t = json_string_value(json_object_get(ev, "type"));
        if (t && strcmp(t, type) == 0)
            json_array_append(arr, ev);
        json_decref(ev);
    }
    if (f)
        fclose(f);
    free(path);
    return arr;
}

/* The numbers NNNNNN of the files dir/NNNNNN-SUFFIX.json, in a new JSON
 * array (any order). */
static json_t *numbered(const char *dir, const char *suffix)
{
    json_t *arr = json_array();
    DIR *d = opendir(dir);
    struct dirent *e;
    char tail[64];
    snprintf(tail, sizeof tail, "-%s.json", suffix);
    while (d && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name), t = strlen(tail);
        char *end;
        unsigned long long seq = strtoull(e->d_name, &end, 10);
        if (n > t && end != e->d_name && strcmp(end, tail) == 0)
            json_array_append_new(arr, json_integer((json_int_t)seq));
    }
    if (d)
        closedir(d);
    return arr;
}

static bool has_number(const json_t *arr, json_int_t seq)
{
    size_t i;
    json_t *v;
    json_array_foreach (arr, i, v) {
        if (json_integer_value(v) == seq)
            return true;
    }
    return false;
}

/* RUN/llm/ of a search whose run was opened after its llm operator was
 * added: the instance's file and summary, and a request and a reply file
 * for every call the server received. */
static void check_llm_files(const char *run, size_t calls)
{
    char *llm = kevo__path_join(run, "llm");
    json_t *inst = numbered(llm, "instance"), *sum = numbered(llm, "summary");
    json_t *req = numbered(llm, "request"), *rep = numbered(llm, "reply");
    is_uint(json_array_size(inst), 1, "RUN/llm/ holds the instance's file");
    ok(json_array_size(sum) == 1 &&
           json_integer_value(json_array_get(sum, 0)) ==
               json_integer_value(json_array_get(inst, 0)),
       "and its summary, with the instance's number");
    is_uint(json_array_size(req), calls,
            "a request file for every call the server received");
    is_uint(json_array_size(rep), calls, "and a reply file for each");
    size_t i, paired = 0;
    json_t *v;
    json_array_foreach (req, i, v)
        paired += has_number(rep, json_integer_value(v));
    is_uint(paired, calls, "every request's reply has its number");
    char *path =
        kevo__asprintf("%s/%06lld-summary.json", llm,
                       (long long)json_integer_value(json_array_get(sum, 0)));
    json_t *s = json_load_file(path, 0, NULL);
    is_int(json_integer_value(json_object_get(s, "calls")), (long long)calls,
           "the summary counts the calls");
    json_decref(s);
    free(path);
    json_decref(inst);
    json_decref(sum);
    json_decref(req);
    json_decref(rep);
    free(llm);
}

static kevo_search *make_search(const kevo_task *task, scorer *sc,
                                const char *models, const char *dir,
                                unsigned flags)
{
    kevo_search *s = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_search_new(task, &s, &e) != KEVO_OK ||
        kevo_search_set_score_fn(s, score, sc, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, 6, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_INSPIRATIONS, 0, &e) != KEVO_OK ||
        kevo_search_add_operator(s, "llm", NULL, models, 1.0, &e) != KEVO_OK)
        bail_out("cannot set up a search: %s", e.text);
    kevo_promptpool *pool = kevo_search_prompts(s);
    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_EVERY, 0, NULL);
    if (!(flags & KEVO_SEARCH_RUN_RESUME) &&
        kevo_promptpool_add_json(
            pool, KEVO_PROMPT_NONE,
            "{\"name\": \"scripted\", \"sections\": {\"strategy\": "
            "\"Vectorise the loads. "
            "[[kevo-loopback:s:bug,fixed,include,fixed]]\"}}",
            NULL, NULL, NULL, NULL, &e) != KEVO_OK)
        bail_out("prompt: %s", e.text);
    if (kevo_search_open_run(s, dir, flags, "test-search-llm", &e) != KEVO_OK)
        bail_out("run directory: %s", e.text);
    sc->search = s;
    return s;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The STOPPED event's text, kept by the callback. */
static void on_event(kevo_search *search, const kevo_search_event *ev,
                     void *user)
{
    (void)search;
    char **text = user;
    if (ev->type == KEVO_SEARCH_STOPPED && ev->text && !*text)
        *text = strdup(ev->text);
}

/* The model answers every request with prose and no kernel
 * (tests/data/llm-prose): the search backs off, asks for no revision
 * without children, and stops by itself after operator_failures requests
 * in a row, saying why. */
static void prose_search(const kevo_task *task, const char *models,
                         const char *run)
{
    char *t1 = slurp("tests/data/llm-prose", "1-advice.md");
    char *t2 = slurp("tests/data/llm-prose", "2-plan.md");
    loopback_set_text(srv, "advice", t1);
    loopback_set_text(srv, "plan", t2);
    free(t1);
    free(t2);
    loopback_reset(srv);
    scorer sc = {0};
    char *stopped = NULL;
    kevo_search *s = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_search_new(task, &s, &e) != KEVO_OK ||
        kevo_search_set_score_fn(s, score, &sc, &e) != KEVO_OK ||
        kevo_search_set_callback(s, on_event, &stopped, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_INSPIRATIONS, 0, &e) != KEVO_OK ||
        kevo_search_add_operator(s, "llm", NULL, models, 1.0, &e) != KEVO_OK)
        bail_out("cannot set up a search: %s", e.text);
    sc.search = s;
    int64_t lo, hi, def;
    kevo_search_option_bounds(KEVO_SEARCH_OPERATOR_FAILURES, &lo, &hi, &def);
    is_int(kevo_search_get_int(s, KEVO_SEARCH_OPERATOR_FAILURES), 20,
           "operator_failures: 20 by default");
    is_int(kevo_search_get_int(s, KEVO_SEARCH_MAX_TOKENS), 20000000,
           "max_tokens: 20 million by default");
    is_int(kevo_search_get_int(s, KEVO_SEARCH_FAILURE_BACKOFF_MS), 500,
           "failure_backoff_ms: 500 by default");
    is_int(kevo_search_get_int(s, KEVO_SEARCH_FAILURE_BACKOFF_MAX_MS), 30000,
           "failure_backoff_max_ms: 30000 by default");
    /* Waits of 1, 2, 4 and then 5 ms, so that the test takes no time. */
    if (kevo_search_set_int(s, KEVO_SEARCH_FAILURE_BACKOFF_MS, 1, &e) !=
            KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_FAILURE_BACKOFF_MAX_MS, 5, &e) !=
            KEVO_OK)
        bail_out("backoff: %s", e.text);
    /* A revision would be due after every second use. */
    kevo_promptpool *pool = kevo_search_prompts(s);
    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_EVERY, 2, NULL);
    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_MIN_USES, 1, NULL);
    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_MIN_AGE, 0, NULL);
    if (kevo_promptpool_add_json(
            pool, KEVO_PROMPT_NONE,
            "{\"name\": \"chatty\", \"sections\": {\"strategy\": "
            "\"Vectorise the loads. [[kevo-loopback:p:advice,plan]]\"}}",
            NULL, NULL, NULL, NULL, &e) != KEVO_OK)
        bail_out("prompt: %s", e.text);
    if (kevo_search_open_run(s, run, 0, "test-search-llm prose", &e) != KEVO_OK)
        bail_out("run directory: %s", e.text);
    double t0 = now_seconds();
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_search_run(s, &e), KEVO_OK, "prose: the search ends");
    double took = now_seconds() - t0;
    kevo_search_stats st = {.size = sizeof st};
    kevo_search_get_stats(s, &st);
    is_int(st.stop, KEVO_STOP_OPERATOR_FAILURES,
           "prose: it stops on the operator's failures");
    is_str(kevo_stop_reason_name(st.stop), "operator_failures",
           "prose: a reason of its own");
    is_uint(st.evaluations, 1, "prose: only the seed was evaluated");
    size_t calls = loopback_count(srv);
    is_uint(calls, 20, "prose: 20 requests, then it stops");
    ok(took < 10, "prose: in %.2f s", took);
    like_str(stopped ? stopped : "",
             "operator llm: 20 requests in a row (repairs included) gave no "
             "child to evaluate (no_code 20)",
             "prose: the stop names the operator, the count and the kinds");
    like_str(stopped ? stopped : "", "Here is how I would approach it.",
             "prose: and the first line of the last reply");
    free(stopped);
    kevo_search_free(s);

    json_t *stops = events(run, "stop");
    json_t *stop = json_array_get(stops, 0);
    is_str(json_string_value(json_object_get(stop, "reason")),
           "operator_failures", "prose: the stop event's reason");
    like_str(json_string_value(json_object_get(stop, "message")),
             "(no_code 20); the last: the reply gave no child",
             "prose: and its message");
    json_decref(stops);
    char *spath = kevo__path_join(run, "summary.json");
    json_t *sum = json_load_file(spath, 0, NULL);
    free(spath);
    like_str(json_string_value(json_object_get(sum, "stop_message")),
             "operator llm: 20 requests in a row",
             "prose: summary.json carries the stop's message");
    json_decref(sum);
    json_t *waits = events(run, "backoff");
    is_uint(json_array_size(waits), 19,
            "prose: a wait after each failure from the second");
    double w[4];
    for (size_t i = 0; i < 4; i++)
        w[i] = json_number_value(
            json_object_get(json_array_get(waits, i), "wait_s"));
    ok(fabs(w[0] - 0.001) < 1e-9 && fabs(w[1] - 0.002) < 1e-9 &&
           fabs(w[2] - 0.004) < 1e-9 && fabs(w[3] - 0.005) < 1e-9,
       "prose: the waits double up to the cap (%g %g %g %g)", w[0], w[1], w[2],
       w[3]);
    json_decref(waits);
    check_llm_files(run, calls);
    /* No revision without children: every request asked for a child. */
    char *llm = kevo__path_join(run, "llm");
    json_t *reqs = numbered(llm, "request"), *v;
    size_t i, children = 0;
    json_array_foreach (reqs, i, v) {
        char *path = kevo__asprintf("%s/%06lld-request.json", llm,
                                    (long long)json_integer_value(v));
        json_t *r = json_load_file(path, 0, NULL);
        const char *kind = json_string_value(json_object_get(r, "kind"));
        children += kind && strcmp(kind, "child") == 0;
        json_decref(r);
        free(path);
    }
    is_uint(children, calls, "prose: no prompt revision without children");
    json_decref(reqs);
    free(llm);
}

int main(void)
{
    const char *b = getenv("KEVO_BUILDDIR");
    char *libs = kevo__asprintf("%s/operators/.libs", b && *b ? b : ".");
    setenv(KEVO_OPERATOR_PATH_ENV, libs, 1);
    free(libs);
    srv = loopback_start();
    if (!srv)
        bail_out("the loopback server did not start");
    const char *names[3] = {"bug", "fixed", "include"};
    const char *files[3] = {"compile-error.md", "repaired.md",
                            "launch-std-min.md"};
    for (int i = 0; i < 3; i++) {
        char *t = slurp("tests/data/llm-repair", files[i]);
        loopback_set_text(srv, names[i], t);
        free(t);
    }
    char *path = kevo__asprintf("%s/examples/tasks/saxpy.json", tap_srcdir());
    kevo_task *task = NULL;
    if (kevo_task_load(path, &task, NULL) != KEVO_OK)
        bail_out("cannot load %s", path);
    free(path);

    scorer sc = {0};
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_evaluator_new(&sc.ev, &e) != KEVO_OK ||
        kevo_evaluator_start(sc.ev, KEVO_EVAL_START_COMPILE_ONLY, &e) !=
            KEVO_OK) {
        diag("no NVRTC worker (%s): the scoring function fails the same "
             "kernel without compiling it",
             e.text);
        kevo_evaluator_free(sc.ev);
        sc.ev = NULL;
    }
    char tmpl[] = "/tmp/kevo-test-search-llm-XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir)
        bail_out("mkdtemp failed");
    char *run = kevo__path_join(dir, "run");
    char models[512];
    snprintf(models, sizeof models,
             "{\"models\": [{\"api\": \"openai\", \"model\": \"m\", "
             "\"base_url\": \"%s/v1\"}], \"max_retries\": 0}",
             loopback_url(srv));

    is_int(kevo_search_fail_candidate(NULL, "wrong", "d", NULL), KEVO_EINVAL,
           "kevo_search_fail_candidate needs a search");
    kevo_search *s = make_search(task, &sc, models, run, 0);
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_search_fail_candidate(s, "wrong", "d", &e), KEVO_ESTATE,
           "outside the scoring function it is refused");
    like_str(e.text, "no candidate is being scored", "saying so");
    is_int(kevo_search_get_int(s, KEVO_SEARCH_REPAIR_TURNS), 1,
           "one repair turn by default");
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_search_run(s, &e), KEVO_OK, "the search runs to the end");
    if (e.code)
        diag("%s", e.text);
    is_int(kevo_report_write(run, &e), KEVO_OK, "the caller writes the report");
    kevo_search_stats st = {.size = sizeof st};
    kevo_search_get_stats(s, &st);
    is_int(st.stop, KEVO_STOP_EVALUATIONS, "stopped by the budget");
    is_uint(sc.failed, 1, "one child failed to compile");
    is_uint(st.repairs, 2, "two repairs were sent");
    ok(st.proposals == st.evaluations - 1 + 1 && st.valid == st.proposals - 2,
       "proposals: every child judged and the refused one (%llu), all valid "
       "but two (%llu)",
       (unsigned long long)st.proposals, (unsigned long long)st.valid);
    kevo_search_free(s);
    /* The run was opened after the operator was added. */
    check_llm_files(run, loopback_count(srv));

    /* The server's requests: the first answered with the bad kernel, the
     * second the repair in the same conversation. */
    const loopback_request *r1 = loopback_get(srv, 1);
    json_t *body = r1 ? json_loads(r1->body, 0, NULL) : NULL;
    json_t *msgs = json_object_get(body, "messages");
    is_uint(json_array_size(msgs), 4, "the repair continues the conversation");
    json_t *asst = json_array_get(msgs, 2), *turn = json_array_get(msgs, 3);
    is_str(json_string_value(json_object_get(asst, "role")), "assistant",
           "with the model's reply");
    like_str(json_string_value(json_object_get(asst, "content")),
             "__ldg4(x + 4 * i)", "the reply that failed");
    like_str(json_string_value(json_object_get(turn, "content")),
             "identifier \"__ldg4\" is undefined",
             "and a turn with kevo's diagnostic");
    if (sc.ev)
        like_str(json_string_value(json_object_get(turn, "content")),
                 "The compiler's errors:\nllm#1(17): error:",
                 "the compiler's error lines, from NVRTC");
    json_decref(body);
    const loopback_request *r2 = loopback_get(srv, 2);
    body = r2 ? json_loads(r2->body, 0, NULL) : NULL;
    msgs = json_object_get(body, "messages");
    is_uint(json_array_size(msgs), 2, "the next request is a new one");
    like_str(
        json_string_value(json_object_get(json_array_get(msgs, 1), "content")),
        "# Recent failed attempts from this kernel\n",
        "its prompt lists the parent's failed attempt");
    like_str(
        json_string_value(json_object_get(json_array_get(msgs, 1), "content")),
        "(17): error: identifier \"__ldg4\" is undefined\n\n",
        "in one line: the diagnostic's first");
    json_decref(body);
    const loopback_request *r3 = loopback_get(srv, 3);
    body = r3 ? json_loads(r3->body, 0, NULL) : NULL;
    msgs = json_object_get(body, "messages");
    like_str(
        json_string_value(json_object_get(json_array_get(msgs, 3), "content")),
        "expected an operator or the end, found ':'",
        "the refused launch block is repaired with the parser's message");
    json_decref(body);

    /* events.jsonl */
    json_t *reps = events(run, "repair");
    is_uint(json_array_size(reps), 2, "two repair events");
    json_t *r0 = json_array_get(reps, 0), *rr = json_array_get(reps, 1);
    is_str(json_string_value(json_object_get(r0, "kind")), "compile_error",
           "the first for the compile error");
    is_int(json_integer_value(json_object_get(r0, "child")), 2, "of child 2");
    is_int(json_integer_value(json_object_get(r0, "turn")), 1, "turn 1");
    like_str(json_string_value(json_object_get(r0, "diagnostic")),
             "identifier \"__ldg4\" is undefined", "with its diagnostic");
    is_str(json_string_value(json_object_get(rr, "kind")), "invalid",
           "the second for the refused kernel");
    ok(json_is_null(json_object_get(rr, "child")), "which has no id");
    json_decref(reps);
    json_t *evals = events(run, "eval");
    int repaired = 0, failed = 0;
    size_t i;
    json_t *ev;
    json_array_foreach (evals, i, ev) {
        const char *verdict = json_string_value(json_object_get(ev, "verdict"));
        if (json_integer_value(json_object_get(ev, "repair")) == 1 && verdict &&
            strcmp(verdict, "ok") == 0)
            repaired++;
        if (verdict && strcmp(verdict, "compile_error") == 0) {
            failed++;
            like_str(json_string_value(json_object_get(ev, "reason")), "__ldg4",
                     "the failed child's event has the reason");
        }
    }
    is_int(repaired, 2, "two repaired children were evaluated, both ok");
    is_int(failed, 1, "one child failed to compile");
    json_decref(evals);

    /* summary.json */
    json_t *sum = load_json(run, "summary.json");
    json_t *op = json_array_get(json_object_get(sum, "operators"), 0);
    is_int(json_integer_value(json_object_get(op, "repairs")), 2,
           "summary: the operator's repairs");
    is_int(json_integer_value(json_object_get(op, "repaired_valid")), 2,
           "summary: both repaired children valid");
    double vf = json_number_value(json_object_get(op, "validity_first"));
    double vr = json_number_value(json_object_get(op, "validity_repaired"));
    ok(vf > 0 && vf < 1, "summary: validity of first attempts below 1 (%g)",
       vf);
    is_double(vr, 1.0, 1e-12, "summary: validity after repair 1");
    json_t *pr = json_array_get(json_object_get(sum, "prompts"), 0);
    json_t *kinds = json_object_get(pr, "failure_kinds");
    is_int(json_integer_value(json_object_get(kinds, "compile_error")), 1,
           "summary: the prompt's compile_error failures");
    is_int(json_integer_value(json_object_get(kinds, "invalid")), 1,
           "summary: and its invalid ones");
    json_t *fc = json_array_get(json_object_get(pr, "failed_children"), 0);
    is_str(json_string_value(json_object_get(fc, "kind")), "invalid",
           "summary: the most recent failed child first");
    is_double(json_number_value(json_object_get(pr, "validity_repaired")), 1.0,
              1e-12, "summary: the prompt's validity after repair");
    json_t *tot = json_object_get(sum, "validity");
    is_int(json_integer_value(json_object_get(tot, "repair_turns")), 1,
           "summary: the repair turns");
    is_int(json_integer_value(json_object_get(tot, "repairs")), 2,
           "summary: the repairs in all");
    json_decref(sum);
    char *report = kevo__path_join(run, "report.html");
    char *html = NULL;
    size_t len;
    kevo__read_file(report, true, &html, &len, NULL);
    like_str(html ? html : "", "validity", "report.html shows validity");
    like_str(html ? html : "", "compile_error 1, invalid 1",
             "and the prompt's failure kinds");
    free(html);
    free(report);

    /* A resumed run restores the counts. */
    json_t *cp = load_json(run, "checkpoint.json");
    json_t *cop = json_array_get(json_object_get(cp, "operators"), 0);
    is_int(json_integer_value(json_object_get(cop, "repairs")), 2,
           "the checkpoint keeps the repairs");
    json_decref(cp);
    scorer sc2 = {.ev = NULL};
    kevo_search *s2 =
        make_search(task, &sc2, models, run, KEVO_SEARCH_RUN_RESUME);
    kevo_search_stats st2 = {.size = sizeof st2};
    kevo_search_get_stats(s2, &st2);
    ok(st2.proposals == st.proposals && st2.valid == st.valid &&
           st2.repairs == st.repairs,
       "a resumed run restores the validity counts");
    uint64_t kc = 0;
    kevo_promptpool *pool = kevo_search_prompts(s2);
    const char *k0 =
        kevo_promptpool_failure_kind(pool, kevo_promptpool_id(pool, 0), 0, &kc);
    ok(k0 && kc == 1, "and the prompt's failure kinds (%s %llu)",
       k0 ? k0 : "none", (unsigned long long)kc);
    kevo_search_free(s2);

    char *prose = kevo__path_join(dir, "prose");
    prose_search(task, models, prose);
    free(prose);

    char *cmd = kevo__asprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0)
        diag("could not remove %s", dir);
    free(cmd);
    free(run);
    kevo_evaluator_free(sc.ev);
    kevo_task_free(task);
    loopback_stop(srv);
    return done_testing();
}

/*
 * test-search-batch.c: a search through the llm operator's batch
 * transport, without a GPU, against the batch endpoints of the loopback
 * server (tests/loopback-batch.c), for both vendors. For each, the search
 * through batches makes the same decisions (the same children in the same
 * order, the same scores, the same champion) as the same search over HTTP
 * with the same replies and seed, its tokens are the same and its cost
 * half; no request reaches the interactive endpoint, and the key goes to
 * the batch API as it goes to the model's, and into no file. Suspended
 * (every request waiting on its batch) and resumed after each stop, it
 * still decides the same, counts the same tokens at half the price over
 * all its runs, and never sends a request twice; also when a child's
 * repair turn sends a resumed search back past a batch that has ended,
 * whose saved results answer again. With three
 * requests in flight, the requests of one round go in one batch. An
 * expired batch, a cancelled one, one that failed, an error of one
 * request and a result line cut short each fail their request with the
 * existing failure kinds and a reason that names the batch (and the
 * line); the search goes on.
 */
#include "config.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/kevo_private.h"
#include "llm_search.h"
#include "loopback-server.h"
#include "tap.h"

#define KEY "sk-batch-test-4f1d9c"

static loopback *srv;
static kevo_task *task;
static char *dir;

/* The result of one search. */
typedef struct outcome {
    llm_trace tr;
    kevo_search_stats st;
    kevo_status rc;
} outcome;

/* Runs a search of models in run to its end (max_evals evaluations). */
static void run_once(const char *models, const char *run, long max_evals,
                     long depth, outcome *o)
{
    kevo_error e = KEVO__ERROR_INIT;
    kevo_search *s =
        llm_search_open(task, &o->tr, models, max_evals, depth, run, 0);
    o->rc = kevo_search_run(s, &e);
    if (o->rc != KEVO_OK)
        diag("%s: %s", run, e.text);
    o->st = (kevo_search_stats){.size = sizeof o->st};
    kevo_search_get_stats(s, &o->st);
    kevo_search_free(s);
}

/* Runs the search of models in run (resumed when resume), and again,
 * resumed, while it stops to wait, 20 runs at most. Returns the runs. */
static unsigned run_until_end(const char *models, const char *run, bool resume,
                              outcome *o)
{
    unsigned runs = 0;
    do {
        kevo_error e = KEVO__ERROR_INIT;
        kevo_search *s =
            llm_search_open(task, &o->tr, models, 6, 1, run,
                            resume || runs ? KEVO_SEARCH_RUN_RESUME : 0);
        runs++;
        o->rc = kevo_search_run(s, &e);
        o->st = (kevo_search_stats){.size = sizeof o->st};
        kevo_search_get_stats(s, &o->st);
        kevo_search_free(s);
        if (o->rc != KEVO_OK)
            diag("%s, run %u: %s", run, runs, e.text);
    } while (o->rc == KEVO_OK && o->st.stop == KEVO_STOP_WAITING && runs < 20);
    return runs;
}

/* Requests the server got from base on: *lines of them in batches, the
 * others to the interactive endpoint in *direct; the most requests one
 * batch held in *most. */
static void count_requests(size_t base, size_t *lines, size_t *direct,
                           size_t *most)
{
    *lines = *direct = *most = 0;
    size_t n = loopback_count(srv);
    for (size_t i = base; i < n; i++) {
        const loopback_request *r = loopback_get(srv, i);
        if (r->batch) {
            size_t same = 0;
            for (size_t k = base; k < n; k++) {
                const loopback_request *q = loopback_get(srv, k);
                same += q->batch && strcmp(q->batch, r->batch) == 0;
            }
            (*lines)++;
            *most = same > *most ? same : *most;
        } else if (strcmp(r->api, "") != 0 && strcmp(r->behaviour, "batch") &&
                   strcmp(r->behaviour, "files")) {
            (*direct)++;
        }
    }
}

/* Files of d whose names end in tail. */
static size_t count_files(const char *d, const char *tail)
{
    DIR *dd = opendir(d);
    size_t n = 0, t = strlen(tail);
    struct dirent *e;
    while (dd && (e = readdir(dd)) != NULL) {
        size_t l = strlen(e->d_name);
        n += l > t && strcmp(e->d_name + l - t, tail) == 0;
    }
    if (dd)
        closedir(dd);
    return n;
}

/* Whether a file under path holds s. */
static bool holds(const char *path, const char *s)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return false;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        bool found = false;
        while (d && !found && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char *sub = kevo__path_join(path, e->d_name);
            found = holds(sub, s);
            free(sub);
        }
        if (d)
            closedir(d);
        return found;
    }
    char *text = NULL;
    size_t len;
    bool found = kevo__read_file(path, false, &text, &len, NULL) == KEVO_OK &&
                 memmem(text, len, s, strlen(s)) != NULL;
    free(text);
    return found;
}

/* A configuration of one model of api at the loopback server, with
 * extra members (the transport's). */
static char *models(const char *api, const char *extra)
{
    bool an = strcmp(api, "anthropic") == 0;
    return kevo__asprintf(
        "{\"models\": [{\"api\": \"%s\", \"model\": \"m\", \"base_url\": "
        "\"%s%s\", \"stream\": false, \"key_env\": \"KEVO_TEST_BATCH_KEY\", "
        "\"input_cost_per_mtok\": 2, \"output_cost_per_mtok\": 8%s%s}], "
        "\"max_retries\": 0}",
        api, loopback_url(srv), an ? "" : "/v1", *extra ? ", " : "", extra);
}

static void set_script(const char *replies, const char *plans)
{
    loopback_reset(srv);
    loopback_script(srv, replies);
    loopback_batch_script(srv, plans);
}

/* The same search over HTTP and through batches, in one process and
 * suspended. */
static void same_decisions(const char *api)
{
    char *http = models(api, "");
    char *batch = models(api, "\"transport\": \"batch\", \"poll_interval_s\": "
                              "0.01, \"batch_wait_s\": 3600");
    char *waiting = models(api, "\"transport\": \"batch\", "
                                "\"poll_interval_s\": 0.01, "
                                "\"batch_wait_s\": 0");
    char *run_http = kevo__asprintf("%s/run-http-%s", dir, api);
    char *run_batch = kevo__asprintf("%s/run-batch-%s", dir, api);
    char *run_wait = kevo__asprintf("%s/run-wait-%s", dir, api);
    size_t lines, direct, most;

    set_script("k0,k1,k2,k3,k4", "");
    outcome h = {0};
    run_once(http, run_http, 6, 1, &h);
    is_int(h.rc, KEVO_OK, "%s: the search over HTTP runs", api);
    is_int(h.st.stop, KEVO_STOP_EVALUATIONS, "%s: it stops on the budget", api);
    count_requests(0, &lines, &direct, &most);
    ok(direct == 5 && lines == 0, "%s: five requests over HTTP (%zu, %zu)", api,
       direct, lines);
    ok(h.st.cost > 0, "%s: their cost is counted (%g)", api, h.st.cost);

    /* In one process: each batch stays in progress for two looks. */
    set_script("k0,k1,k2,k3,k4", "wait:2,wait:2,wait:2,wait:2,wait:2");
    size_t batches = loopback_batches(srv);
    outcome b = {0};
    run_once(batch, run_batch, 6, 1, &b);
    is_int(b.rc, KEVO_OK, "%s: the search through batches runs", api);
    is_int(b.st.stop, KEVO_STOP_EVALUATIONS, "%s: it stops on the budget", api);
    is_str(b.tr.text ? b.tr.text : "", h.tr.text ? h.tr.text : "",
           "%s: the same children, scored the same, in the same order", api);
    ok(b.st.best_fitness == h.st.best_fitness,
       "%s: the same best fitness (%g, %g)", api, b.st.best_fitness,
       h.st.best_fitness);
    ok(llm_search_same_best(run_http, run_batch), "%s: the same champion", api);
    ok(b.st.input_tokens == h.st.input_tokens &&
           b.st.output_tokens == h.st.output_tokens,
       "%s: the same tokens (%llu + %llu)", api,
       (unsigned long long)b.st.input_tokens,
       (unsigned long long)b.st.output_tokens);
    ok(fabs(b.st.cost - h.st.cost / 2) <= 1e-12 * h.st.cost,
       "%s: at half the price (%g for %g)", api, b.st.cost, h.st.cost);
    count_requests(0, &lines, &direct, &most);
    ok(lines == 5 && direct == 0 && most == 1,
       "%s: five requests, each in a batch of its own, none over HTTP (%zu, "
       "%zu, %zu)",
       api, lines, direct, most);
    is_uint(loopback_batches(srv) - batches, 5, "%s: five batches", api);
    char *state = kevo__asprintf("%s/llm/batches", run_batch);
    ok(count_files(state, "-batch.json") == 5 &&
           count_files(state, "-results.jsonl") == 5,
       "%s: each recorded in %s, with its results", api, state);
    free(state);
    ok(!holds(run_batch, KEY), "%s: no file of the run holds the key", api);

    /* Suspended whenever every request waits on its batch, and resumed. */
    set_script("k0,k1,k2,k3,k4", "wait:1,wait:1,wait:1,wait:1,wait:1");
    batches = loopback_batches(srv);
    outcome w = {0};
    unsigned waits = 0, runs = 0;
    for (;;) {
        kevo_error e = KEVO__ERROR_INIT;
        kevo_search *s = llm_search_open(task, &w.tr, waiting, 6, 1, run_wait,
                                         runs ? KEVO_SEARCH_RUN_RESUME : 0);
        runs++;
        w.rc = kevo_search_run(s, &e);
        w.st = (kevo_search_stats){.size = sizeof w.st};
        kevo_search_get_stats(s, &w.st);
        kevo_search_free(s);
        if (w.rc != KEVO_OK) {
            diag("run %u: %s", runs, e.text);
            break;
        }
        if (w.st.stop != KEVO_STOP_WAITING || runs > 20)
            break;
        if (waits++ == 0) {
            char *sum = kevo__path_join(run_wait, "summary.json");
            json_t *sj = json_load_file(sum, 0, NULL);
            like_str(json_string_value(json_object_get(sj, "stop_message")),
                     "1 request waits for replies in the ",
                     "%s: the stop says what waits, and on which batch", api);
            json_decref(sj);
            free(sum);
        }
    }
    ok(waits >= 3, "%s: the search stopped to wait %u times (runs: %u)", api,
       waits, runs);
    is_int(w.st.stop, KEVO_STOP_EVALUATIONS,
           "%s: and, resumed, stopped on the budget", api);
    ok(w.st.input_tokens == h.st.input_tokens &&
           w.st.output_tokens == h.st.output_tokens &&
           fabs(w.st.cost - h.st.cost / 2) <= 1e-12 * h.st.cost,
       "%s: over all its runs, the same tokens at half the price (%g for %g)",
       api, w.st.cost, h.st.cost);
    is_str(w.tr.text ? w.tr.text : "", h.tr.text ? h.tr.text : "",
           "%s: the same children, scored the same, in the same order", api);
    ok(llm_search_same_best(run_http, run_wait), "%s: the same champion", api);
    count_requests(0, &lines, &direct, &most);
    ok(lines == 5 && direct == 0,
       "%s: five requests sent, none twice (%zu, %zu)", api, lines, direct);
    is_uint(loopback_batches(srv) - batches, 5, "%s: in five batches", api);

    llm_trace_free(&h.tr);
    llm_trace_free(&b.tr);
    llm_trace_free(&w.tr);
    free(http);
    free(batch);
    free(waiting);
    free(run_http);
    free(run_batch);
    free(run_wait);
}

/* The first child fails to compile and its repair turn begins while it is
 * judged: a resumed search goes back to before the first request, whose
 * batch has ended, and takes both requests back from the results it saved,
 * without asking the vendor again. */
static void repair_across_stops(const char *api)
{
    char *http = models(api, "");
    char *waiting = models(api, "\"transport\": \"batch\", "
                                "\"poll_interval_s\": 0.01, "
                                "\"batch_wait_s\": 0");
    char *run_http = kevo__asprintf("%s/run-http-repair-%s", dir, api);
    char *run_wait = kevo__asprintf("%s/run-wait-repair-%s", dir, api);
    size_t lines, direct, most;

    set_script("kf,k1,k2,k3,k4", "");
    outcome h = {0};
    run_once(http, run_http, 6, 1, &h);
    is_int(h.st.stop, KEVO_STOP_EVALUATIONS,
           "%s, a repair: the search over HTTP stops on the budget", api);
    count_requests(0, &lines, &direct, &most);
    size_t sent = direct;

    set_script("kf,k1,k2,k3,k4", "wait:1,wait:1,wait:1,wait:1,wait:1,wait:1");
    size_t batches = loopback_batches(srv);
    outcome w = {0};
    unsigned runs = run_until_end(waiting, run_wait, false, &w);
    is_int(w.st.stop, KEVO_STOP_EVALUATIONS,
           "%s, a repair: suspended and resumed %u times, it stops on the "
           "budget",
           api, runs - 1);
    char *eh = llm_search_evals(run_http), *ew = llm_search_evals(run_wait);
    ok(strstr(eh, " compile_error ") && strcmp(eh, ew) == 0,
       "%s, a repair: the same evaluations as over HTTP, a compile error "
       "among them",
       api);
    free(eh);
    free(ew);
    count_requests(0, &lines, &direct, &most);
    ok(lines == sent && direct == 0,
       "%s, a repair: %zu requests sent through batches, none twice (%zu "
       "over HTTP)",
       api, lines, sent);
    is_uint(loopback_batches(srv) - batches, sent,
            "%s, a repair: in %zu batches", api, sent);
    ok(w.st.input_tokens == h.st.input_tokens &&
           w.st.output_tokens == h.st.output_tokens &&
           fabs(w.st.cost - h.st.cost / 2) <= 1e-12 * h.st.cost,
       "%s, a repair: the same tokens at half the price (%g for %g)", api,
       w.st.cost, h.st.cost);
    llm_trace_free(&h.tr);
    llm_trace_free(&w.tr);
    free(http);
    free(waiting);
    free(run_http);
    free(run_wait);
}

/* A resumed search whose request differs from the one in its batch (the
 * prompt quotes a figure measured again, on a GPU; here the recorded
 * digest is changed): it was sent, so it is taken back into its batch and
 * answered by its result, not sent again. */
static void remeasured(void)
{
    char *waiting = models("openai", "\"transport\": \"batch\", "
                                     "\"poll_interval_s\": 0.01, "
                                     "\"batch_wait_s\": 0");
    char *run = kevo__asprintf("%s/run-remeasured", dir);
    set_script("k0,k1,k2,k3,k4", "wait:1,wait:1,wait:1,wait:1,wait:1");
    size_t batches = loopback_batches(srv);
    outcome w = {0};
    run_once(waiting, run, 6, 1, &w);
    is_int(w.rc, KEVO_OK, "remeasured: a batch search runs");
    is_int(w.st.stop, KEVO_STOP_WAITING, "remeasured: it stops to wait");
    char *state = kevo__asprintf("%s/llm/batches/000001-batch.json", run);
    json_t *m = json_load_file(state, 0, NULL);
    json_t *r0 = json_array_get(json_object_get(m, "requests"), 0);
    ok(json_is_string(json_object_get(r0, "digest")),
       "remeasured: its batch records the request's digest");
    json_object_set_new(r0, "digest", json_string("0123456789abcdef"));
    json_dump_file(m, state, JSON_INDENT(1));
    json_decref(m);
    unsigned runs = run_until_end(waiting, run, true, &w);
    is_int(w.st.stop, KEVO_STOP_EVALUATIONS,
           "remeasured: resumed %u times, it stops on the budget", runs);
    size_t lines, direct, most;
    count_requests(0, &lines, &direct, &most);
    ok(lines == 5 && direct == 0,
       "remeasured: the request was not sent again: 5 sent in all (%zu)",
       lines);
    is_uint(loopback_batches(srv) - batches, 5, "remeasured: in 5 batches");
    llm_trace_free(&w.tr);
    free(state);
    free(waiting);
    free(run);
}

/* Three requests in flight: a round's requests go in one batch. */
static void grouping(void)
{
    char *batch = models("openai", "\"transport\": \"batch\", "
                                   "\"poll_interval_s\": 0.01, "
                                   "\"batch_wait_s\": 3600");
    char *run = kevo__asprintf("%s/run-group", dir);
    set_script("k0,k1,k2,k3,k4", "");
    size_t batches = loopback_batches(srv);
    outcome o = {0};
    run_once(batch, run, 6, 3, &o);
    is_int(o.st.stop, KEVO_STOP_EVALUATIONS,
           "three in flight: the search stops on the budget");
    size_t lines, direct, most;
    count_requests(0, &lines, &direct, &most);
    size_t made = loopback_batches(srv) - batches;
    ok(most >= 2 && made < lines,
       "three in flight: %zu requests in %zu batches, up to %zu in one", lines,
       made, most);
    llm_trace_free(&o.tr);
    free(batch);
    free(run);
}

/* Expired, cancelled and failed batches, an error of one request and a
 * result line cut short. */
static void failures(const char *api)
{
    bool an = strcmp(api, "anthropic") == 0;
    char *batch = models(api, "\"transport\": \"batch\", "
                              "\"poll_interval_s\": 0.01, "
                              "\"batch_wait_s\": 3600");
    char *run = kevo__asprintf("%s/run-fail-%s", dir, api);
    loopback_reset(srv);
    loopback_script(srv, "k0,k1,k2,k3,400,k4");
    loopback_batch_script(srv, an ? "expire:0,wait:0,cancel:0,wait:0,badline:"
                                    "1,wait:0,wait:0"
                                  : "expire:0,wait:0,cancel:0,wait:0,badline:"
                                    "1,wait:0,fail,wait:0");
    outcome o = {0};
    run_once(batch, run, 5, 1, &o);
    is_int(o.rc, KEVO_OK, "%s failures: the search runs", api);
    is_int(o.st.stop, KEVO_STOP_EVALUATIONS,
           "%s failures: and goes on to its budget", api);
    char *f = llm_search_failures(run);
    const char *id = an ? "msgbatch_loopback" : "batch_loopback";
    char *want = kevo__asprintf("timeout: timeout: batch %s", id);
    like_str(f, want, "%s: an expired batch: a timeout naming the batch", api);
    free(want);
    like_str(f, "expire", "%s: that says it expired", api);
    like_str(f,
             an ? "network: transport: batch msgbatch_loopback"
                : "network: transport: batch batch_loopback",
             "%s: a cancelled batch: a network failure naming the batch", api);
    like_str(f, an ? "was canceled" : "batch_cancelled",
             "%s: that says it was cancelled", api);
    like_str(f, "parse: malformed: batch ",
             "%s: a result line cut short: a parse failure", api);
    like_str(f, ", result line 1: it is not JSON",
             "%s: that names the batch and the line", api);
    like_str(f,
             "http: http_error: HTTP 400: invalid_request_error: the loopback "
             "server says so",
             "%s: an error of one request: its status and the API's error",
             api);
    if (!an)
        like_str(f, "http: http_error: the batch batch_loopback",
                 "openai: a failed batch: an http failure naming the batch");
    free(f);
    llm_trace_free(&o.tr);
    free(batch);
    free(run);
}

int main(void)
{
    setenv("KEVO_TEST_BATCH_KEY", KEY, 1);
    srv = loopback_start();
    if (!srv)
        bail_out("the loopback server did not start");
    loopback_expect_key(srv, KEY);
    llm_search_texts(srv);
    task = llm_search_task();
    char tmpl[] = "/tmp/kevo-test-search-batch-XXXXXX";
    dir = mkdtemp(tmpl);
    if (!dir)
        bail_out("mkdtemp failed");

    same_decisions("openai");
    same_decisions("anthropic");
    repair_across_stops("openai");
    repair_across_stops("anthropic");
    remeasured();
    grouping();
    failures("openai");
    failures("anthropic");

    kevo_task_free(task);
    loopback_stop(srv);
    return done_testing();
}

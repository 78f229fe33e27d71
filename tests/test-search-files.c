/*
 * test-search-files.c: a search through the llm operator's files
 * transport, without a GPU. The test plays the program that answers the
 * request files: between runs it sends each DIR/pending/NNNNNN.json to the
 * loopback server (tests/loopback-server.c) at the path its sidecar names
 * and writes the reply as DIR/done/NNNNNN.json. The search stops to wait
 * (KEVO_STOP_WAITING, its checkpoint written) after every request and is
 * resumed each time; it makes the same decisions (the same children in the
 * same order, the same scores, the same champion) as the same search over
 * HTTP with the same replies and seed, and writes no request twice. A done
 * file that is not JSON fails its request with an error naming the file;
 * a done file for a number never written is ignored; a failure written by
 * a relay fails its request as over HTTP; the search goes on. A request
 * that a resumed search makes with another body than the one written (a
 * figure measured again) is taken back, not written twice.
 */
#include "config.h"

#include <curl/curl.h>
#include <dirent.h>
#include <inttypes.h>
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

static loopback *srv;

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    FILE *f = ud;
    return fwrite(p, size, n, f);
}

/* Answers every request of dir/pending without a reply, as another program
 * would: POSTs it to the server at the path of its sidecar and writes the
 * reply through a temporary name. Returns how many it answered. */
static size_t relay(const char *dir)
{
    size_t answered = 0;
    char *pend = kevo__path_join(dir, "pending");
    struct dirent **list = NULL;
    int n = scandir(pend, &list, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        const char *name = list[i]->d_name;
        char *end;
        unsigned long long num = strtoull(name, &end, 10);
        if (end == name || strcmp(end, ".json") != 0)
            continue;
        char *done = kevo__asprintf("%s/done/%06llu.json", dir, num);
        char *tmp = kevo__asprintf("%s/done/%06llu.json.part", dir, num);
        char *req = kevo__asprintf("%s/%06llu.json", pend, num);
        char *meta = kevo__asprintf("%s/%06llu.meta.json", pend, num);
        json_t *m = json_load_file(meta, 0, NULL);
        const char *path = json_string_value(json_object_get(m, "path"));
        char *body = NULL;
        size_t len = 0;
        if (!llm_search_exists(done) && path &&
            kevo__read_file(req, false, &body, &len, NULL) == KEVO_OK) {
            char *url = kevo__asprintf("%s%s", loopback_url(srv), path);
            FILE *out = fopen(tmp, "wb");
            CURL *h = curl_easy_init();
            struct curl_slist *hd =
                curl_slist_append(NULL, "Content-Type: application/json");
            curl_easy_setopt(h, CURLOPT_URL, url);
            curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)len);
            curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
            curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
            CURLcode cc = curl_easy_perform(h);
            curl_slist_free_all(hd);
            curl_easy_cleanup(h);
            fclose(out);
            if (cc == CURLE_OK && rename(tmp, done) == 0)
                answered++;
            free(url);
        }
        free(body);
        json_decref(m);
        free(done);
        free(tmp);
        free(req);
        free(meta);
    }
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
    free(pend);
    return answered;
}

/* Files in dir/sub whose names end in tail. */
static size_t count_files(const char *dir, const char *sub, const char *tail)
{
    char *path = kevo__path_join(dir, sub);
    DIR *d = opendir(path);
    size_t n = 0, t = strlen(tail);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l > t && strcmp(e->d_name + l - t, tail) == 0 &&
            (strcmp(tail, ".json") != 0 || !strstr(e->d_name, ".meta.")))
            n++;
    }
    if (d)
        closedir(d);
    free(path);
    return n;
}

static void set_script(void)
{
    loopback_reset(srv);
    loopback_script(srv, "k0,k1,k2,k3,k4");
}

/* The search over HTTP with the loopback's script, then through files
 * (DIR/requests-TAG), answered between runs and resumed until it ends: it
 * makes the same decisions as over HTTP, spends the same tokens and
 * writes no request twice. budget: the operator's token_budget (0: none),
 * which then stops both searches before their evaluation budget. */
static void files_vs_http(kevo_task *task, const char *dir, const char *tag,
                          const char *script, long budget)
{
    kevo_error e = KEVO__ERROR_INIT;
    char *run_http = kevo__asprintf("%s/run-http%s", dir, tag);
    char *http = kevo__asprintf(
        "{\"models\": [{\"api\": \"openai\", \"model\": \"m\", \"base_url\": "
        "\"%s/v1\", \"stream\": false, \"input_cost_per_mtok\": 2, "
        "\"output_cost_per_mtok\": 8}], \"max_retries\": 0, "
        "\"token_budget\": %ld}",
        loopback_url(srv), budget);
    loopback_reset(srv);
    loopback_script(srv, script);
    llm_trace sh = {0};
    kevo_search *s = llm_search_open(task, &sh, http, 6, 1, run_http, 0);
    is_int(kevo_search_run(s, &e), KEVO_OK, "%s: the search over HTTP runs",
           script);
    kevo_search_stats st = {.size = sizeof st};
    kevo_search_get_stats(s, &st);
    if (budget)
        ok(st.stop != KEVO_STOP_EVALUATIONS && st.evaluations < 6,
           "%s: the token budget %ld stops it after %" PRIu64
           " evaluations (%s)",
           script, budget, st.evaluations, kevo_stop_reason_name(st.stop));
    else
        is_int(st.stop, KEVO_STOP_EVALUATIONS, "%s: it stops on the budget",
               script);
    kevo_search_stats sth = st;
    double http_best = st.best_fitness;
    kevo_search_free(s);
    size_t http_calls = loopback_count(srv);
    ok(http_calls >= (budget ? 3u : 5u), "%s: %zu requests reached the server",
       script, http_calls);

    /* Through files, answered between runs. */
    char *run_files = kevo__asprintf("%s/run-files%s", dir, tag);
    char *fdir = kevo__asprintf("%s/requests%s", dir, tag);
    char *files = kevo__asprintf(
        "{\"models\": [{\"api\": \"openai\", \"model\": \"m\", \"base_url\": "
        "\"%s/v1\", \"transport\": \"files\", \"dir\": \"%s\", "
        "\"input_cost_per_mtok\": 2, \"output_cost_per_mtok\": 8}], "
        "\"max_retries\": 0, \"token_budget\": %ld}",
        loopback_url(srv), fdir, budget);
    loopback_reset(srv);
    loopback_script(srv, script);
    llm_trace sf = {0};
    unsigned waits = 0, runs = 0;
    bool rewritten = false;
    for (;;) {
        s = llm_search_open(task, &sf, files, 6, 1, run_files,
                            runs ? KEVO_SEARCH_RUN_RESUME : 0);
        runs++;
        e = (kevo_error)KEVO__ERROR_INIT;
        kevo_status rc = kevo_search_run(s, &e);
        st = (kevo_search_stats){.size = sizeof st};
        kevo_search_get_stats(s, &st);
        kevo_search_free(s);
        if (rc != KEVO_OK) {
            diag("run %u: %s", runs, e.text);
            break;
        }
        if (st.stop != KEVO_STOP_WAITING || runs > 20)
            break;
        waits++;
        /* Each wait leaves exactly one request without its reply, and
         * never one written before. */
        size_t pending = count_files(fdir, "pending", ".json");
        size_t done = count_files(fdir, "done", ".json");
        if (pending != done + 1)
            rewritten = true;
        char *cp = kevo__path_join(run_files, "checkpoint.json");
        if (!llm_search_exists(cp))
            rewritten = true;
        free(cp);
        if (relay(fdir) != 1)
            rewritten = true;
    }
    ok(waits >= 3, "%s: the search stopped to wait %u times (runs: %u)", script,
       waits, runs);
    is_str(kevo_stop_reason_name(st.stop), kevo_stop_reason_name(sth.stop),
           "%s: and, resumed, stopped as over HTTP", script);
    ok(st.input_tokens == sth.input_tokens &&
           st.output_tokens == sth.output_tokens && st.cost == sth.cost &&
           st.input_tokens > 0,
       "%s: the same tokens and cost as over HTTP, over all its runs: %" PRIu64
       " and %" PRIu64 ", %g (%" PRIu64 " and %" PRIu64 ", %g)",
       script, st.input_tokens, st.output_tokens, st.cost, sth.input_tokens,
       sth.output_tokens, sth.cost);
    ok(!rewritten,
       "%s: each stop left one request waiting, with its "
       "checkpoint",
       script);
    is_uint(count_files(fdir, "pending", ".json"), http_calls,
            "%s: as many request files as HTTP requests: none written twice",
            script);
    is_uint(count_files(fdir, "pending", ".meta.json"), http_calls,
            "%s: each with its sidecar", script);
    is_uint(loopback_count(srv), http_calls, "%s: each was relayed once",
            script);
    char *eh = llm_search_evals(run_http), *ef = llm_search_evals(run_files);
    is_str(ef, eh,
           "%s: the same evaluations, with the same parents, verdicts and "
           "fitness, in the same order",
           script);
    free(eh);
    free(ef);
    ok(st.best_fitness == http_best, "%s: the same best fitness (%g, %g)",
       script, st.best_fitness, http_best);
    ok(llm_search_same_best(run_http, run_files), "%s: the same champion",
       script);
    if (!*tag)
        is_str(sf.text ? sf.text : "", sh.text ? sh.text : "",
               "%s: the same children judged, in the same order, none again",
               script);
    llm_trace_free(&sh);
    llm_trace_free(&sf);
    free(run_http);
    free(run_files);
    free(fdir);
    free(http);
    free(files);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    srv = loopback_start();
    if (!srv)
        bail_out("the loopback server did not start");
    llm_search_texts(srv);
    kevo_task *task = llm_search_task();
    char tmpl[] = "/tmp/kevo-test-search-files-XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir)
        bail_out("mkdtemp failed");
    kevo_error e = KEVO__ERROR_INIT;

    files_vs_http(task, dir, "", "k0,k1,k2,k3,k4", 0);
    /* The first child fails to compile: its repair turn begins while it is
     * judged, with no quiet moment before, so a resumed search goes back
     * to before the first request, takes both back and is answered by
     * both replies. */
    files_vs_http(task, dir, "-repair", "kf,k1,k2,k3,k4", 0);
    /* The operator's token budget counts what the runs before spent: it
     * stops the search through files where it stops the one over HTTP. */
    files_vs_http(task, dir, "-budget", "k0,k1,k2,k3,k4", 7000);
    kevo_search *s;
    kevo_search_stats st;

    /* A done file that is not JSON, and one for a number never written. */
    char *run_bad = kevo__path_join(dir, "run-bad");
    char *bdir = kevo__path_join(dir, "bad");
    char *bad =
        kevo__asprintf("{\"models\": [{\"api\": \"openai\", \"model\": \"m\", "
                       "\"transport\": \"files\", \"dir\": \"%s\"}]}",
                       bdir);
    set_script();
    llm_trace sb = {0};
    s = llm_search_open(task, &sb, bad, 6, 1, run_bad, 0);
    is_int(kevo_search_run(s, &e), KEVO_OK, "a search through files runs");
    st = (kevo_search_stats){.size = sizeof st};
    kevo_search_get_stats(s, &st);
    is_int(st.stop, KEVO_STOP_WAITING, "and stops to wait");
    kevo_search_free(s);
    char *sum = kevo__path_join(run_bad, "summary.json");
    json_t *sj = json_load_file(sum, 0, NULL);
    is_str(json_string_value(json_object_get(sj, "state")), "waiting",
           "its summary says it waits");
    is_str(json_string_value(json_object_get(sj, "stop_reason")), "waiting",
           "and why it stopped");
    char *msg = kevo__asprintf("1 request waits for replies in %s", bdir);
    is_str(json_string_value(json_object_get(sj, "stop_message")), msg,
           "how many requests wait, and where");
    free(msg);
    json_decref(sj);
    free(sum);
    char *d1 = kevo__asprintf("%s/done/000001.json", bdir);
    char *d9 = kevo__asprintf("%s/done/000099.json", bdir);
    FILE *f = fopen(d1, "w");
    fputs("{\"choices\": [", f);
    fclose(f);
    f = fopen(d9, "w");
    fputs("{}", f);
    fclose(f);
    s = llm_search_open(task, &sb, bad, 6, 1, run_bad, KEVO_SEARCH_RUN_RESUME);
    is_int(kevo_search_run(s, &e), KEVO_OK, "resumed, it runs");
    st = (kevo_search_stats){.size = sizeof st};
    kevo_search_get_stats(s, &st);
    is_int(st.stop, KEVO_STOP_WAITING, "and waits for its next request");
    kevo_search_free(s);
    char *fails = llm_search_failures(run_bad);
    like_str(fails, "done/000001.json is not JSON",
             "the malformed reply fails its request, naming the file");
    ok(!strstr(fails, "000099"), "the reply to no request fails nothing");
    char *p100 = kevo__asprintf("%s/pending/000100.json", bdir);
    ok(count_files(bdir, "pending", ".json") == 2 && llm_search_exists(p100),
       "the next request is 000100, after the largest number there");
    free(p100);
    free(fails);
    /* A failure, as kevo relay writes it after its retries: the request
     * fails as it would have over HTTP. */
    char *d100 = kevo__asprintf("%s/done/000100.json", bdir);
    f = fopen(d100, "w");
    fputs("{\"type\": \"error\", \"error\": {\"type\": \"kevo_relay\", "
          "\"message\": \"HTTP 429 after 3 attempts\"}, \"kevo_relay\": "
          "{\"outcome\": \"http_error\", \"status\": 429, \"attempts\": 3, "
          "\"body\": \"{\\\"error\\\": {\\\"type\\\": \\\"rate_limit\\\", "
          "\\\"message\\\": \\\"slow down\\\"}}\"}}",
          f);
    fclose(f);
    s = llm_search_open(task, &sb, bad, 6, 1, run_bad, KEVO_SEARCH_RUN_RESUME);
    is_int(kevo_search_run(s, &e), KEVO_OK, "resumed again, it runs");
    kevo_search_free(s);
    fails = llm_search_failures(run_bad);
    like_str(fails,
             "http_error: HTTP 429: rate_limit: slow down (after 3 "
             "attempts)",
             "a relayed failure fails its request as over HTTP");
    free(fails);
    free(d100);
    free(d1);
    free(d9);

    /* A resumed process whose prompt differs from the one it wrote (a
     * figure measured again, on a GPU): the request was sent, so it is
     * taken back as it is, answered by its reply, and not written again. */
    char *run_re = kevo__path_join(dir, "run-remeasured");
    char *rdir = kevo__path_join(dir, "remeasured");
    char *re = kevo__asprintf(
        "{\"models\": [{\"api\": \"openai\", \"model\": \"m\", "
        "\"base_url\": \"%s/v1\", \"transport\": \"files\", \"dir\": "
        "\"%s\"}], \"max_retries\": 0}",
        loopback_url(srv), rdir);
    set_script();
    llm_trace sr = {0};
    s = llm_search_open(task, &sr, re, 6, 1, run_re, 0);
    is_int(kevo_search_run(s, &e), KEVO_OK,
           "another search through files runs");
    kevo_search_free(s);
    char *p1 = kevo__asprintf("%s/pending/000001.json", rdir);
    char *body = NULL;
    size_t blen = 0;
    if (kevo__read_file(p1, false, &body, &blen, NULL) != KEVO_OK)
        bail_out("%s: not written", p1);
    f = fopen(p1, "w"); /* the same request, another body */
    fprintf(f, " %s", body);
    fclose(f);
    free(body);
    is_uint(relay(rdir), 1, "its request is answered");
    s = llm_search_open(task, &sr, re, 6, 1, run_re, KEVO_SEARCH_RUN_RESUME);
    is_int(kevo_search_run(s, &e), KEVO_OK, "resumed, it runs");
    st = (kevo_search_stats){.size = sizeof st};
    kevo_search_get_stats(s, &st);
    kevo_search_free(s);
    is_int(st.stop, KEVO_STOP_WAITING, "and waits for its next request");
    is_uint(count_files(rdir, "pending", ".json"), 2,
            "the request with another body was taken back, not written again");
    char *m2 = kevo__asprintf("%s/pending/000002.meta.json", rdir);
    json_t *mj = json_load_file(m2, 0, NULL);
    is_int(json_integer_value(json_object_get(mj, "request")), 2,
           "the file written next is the next request's");
    json_decref(mj);
    free(m2);
    ok(sr.judged >= 1, "its reply made a child (%u judged)", sr.judged);
    free(p1);
    llm_trace_free(&sr);
    free(run_re);
    free(rdir);
    free(re);

    llm_trace_free(&sb);
    free(run_bad);
    free(bdir);
    free(bad);
    kevo_task_free(task);
    loopback_stop(srv);
    curl_global_cleanup();
    return done_testing();
}

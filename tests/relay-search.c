/*
 * relay-search.c: the scored search of llm_search.h as a program of its
 * own, for tests/relay.sh and tests/mpi-relay.sh: a search whose llm
 * operator the configuration CONFIG sets (the files transport, or HTTP),
 * run until it stops. Like kevo search, it exits 4 when it stopped to wait
 * for replies (every rank of an MPI job alike), 0 when it stopped
 * otherwise, 1 on an error. Rank 0 prints "stop REASON judged N" (N: the
 * children this run judged) and then the run's evaluations so far, as its
 * events.jsonl gives them (llm_search_evals(): those a resumed run made
 * again counted once), a line each.
 *
 * usage: relay-search [--mpi] CONFIG EVALS RUN [resume]
 *
 * Without arguments (make check, make check-valgrind) it checks itself in
 * one process, as TAP: the search over HTTP against the loopback server
 * (tests/loopback-server.c) runs to its budget, and its trace has a line
 * for each child judged.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kevo_private.h"
#include "farm_search.h"
#include "llm_search.h"
#include "tap.h"

static int self_test(void)
{
    loopback *srv = loopback_start();
    if (!srv)
        bail_out("the loopback server did not start");
    llm_search_texts(srv);
    loopback_script(srv, "k0,k1,k2,k3,k4");
    kevo_task *task = llm_search_task();
    char tmpl[] = "/tmp/kevo-relay-search-XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir)
        bail_out("mkdtemp failed");
    char *run = kevo__path_join(dir, "run");
    char *models = kevo__asprintf(
        "{\"models\": [{\"api\": \"openai\", \"model\": \"m\", \"base_url\": "
        "\"%s/v1\", \"stream\": false}], \"max_retries\": 0}",
        loopback_url(srv));
    llm_trace tr = {0};
    kevo_error e = KEVO__ERROR_INIT;
    kevo_search *s = llm_search_open(task, &tr, models, 6, 1, run, 0);
    is_int(kevo_search_run(s, &e), KEVO_OK, "the search over HTTP runs");
    kevo_search_stats st = {.size = sizeof st};
    kevo_search_get_stats(s, &st);
    is_int(st.stop, KEVO_STOP_EVALUATIONS, "it stops on the budget");
    is_uint(loopback_count(srv), 5, "five requests reached the server");
    size_t lines = 0;
    for (const char *p = tr.text; p && *p; p++)
        lines += *p == '\n';
    ok(tr.judged > 0 && lines == tr.judged,
       "the trace has a line for each child judged (%u)", tr.judged);
    kevo_search_free(s);
    llm_trace_free(&tr);
    free(models);
    free(run);
    kevo_task_free(task);
    loopback_stop(srv);
    return done_testing();
}

int main(int argc, char **argv)
{
    if (argc == 1)
        return self_test();
    int a = 1;
    bool mpi = a < argc && strcmp(argv[a], "--mpi") == 0;
    a += mpi;
    if (argc - a < 3) {
        fprintf(stderr,
                "usage: relay-search [--mpi] CONFIG EVALS RUN [resume]\n");
        return 2;
    }
    const char *config = argv[a], *run = argv[a + 2];
    long evals = atol(argv[a + 1]);
    bool resume = a + 3 < argc && strcmp(argv[a + 3], "resume") == 0;

    kevo_error e = KEVO__ERROR_INIT;
    kevo_farm *farm = NULL;
    kevo_task *task = NULL;
    kevo_search *s = NULL;
    llm_trace tr = {0};
    char *models = NULL;
    size_t len;
    kevo_status rc = KEVO_OK;
    if (mpi && (rc = kevo_farm_mpi(&farm, &e)) != KEVO_OK) {
        fprintf(stderr, "relay-search: %s\n", e.text);
        return 77;
    }
    int rank = kevo_farm_rank(farm);
    if (rc == KEVO_OK)
        rc = kevo__read_file(config, false, &models, &len, &e);
    if (rc == KEVO_OK)
        rc = farm_search_saxpy(&task, &e);
    if (rc == KEVO_OK &&
        !(s = llm_search_new(task, &tr, models, evals, 1, farm, run,
                             resume ? KEVO_SEARCH_RUN_RESUME : 0, &e)))
        rc = e.code;
    if (rc == KEVO_OK)
        rc = kevo_search_run(s, &e);
    kevo_search_stats st = {.size = sizeof st};
    if (rc == KEVO_OK)
        rc = kevo_search_get_stats(s, &st);
    if (rc != KEVO_OK)
        fprintf(stderr, "relay-search: rank %d: %s\n", rank, e.text);
    else if (rank == 0) {
        char *log = llm_search_evals(run);
        printf("stop %s judged %u\n%s", kevo_stop_reason_name(st.stop),
               tr.judged, log ? log : "");
        free(log);
    }
    /* Before the members are told to stop: under mpirun, the job may end
     * as soon as one rank exits. */
    fflush(stdout);
    kevo_search_free(s);
    kevo_task_free(task);
    kevo_farm_free(farm);
    llm_trace_free(&tr);
    free(models);
    int status = rc != KEVO_OK ? 1 : st.stop == KEVO_STOP_WAITING ? 4 : 0;
    if (mpi)
        fprintf(stderr, "relay-search: rank %d exits %d\n", rank, status);
    return status;
}

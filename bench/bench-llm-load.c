/*
 * bench-llm-load.c: the llm operator under load. 1,000 requests go through
 * the plugin, loaded by the operator host, to a loopback HTTP server
 * (tests/loopback-server.c) that fails a third of them at first: 429s with
 * Retry-After, 500s (some recover, some do not), replies that keep silent
 * past the idle limit, malformed events and streams cut halfway (the
 * replies are streamed, as the operator asks by default). It prints that
 * nothing
 * crashed, the outcome of every request by kind against the plan (the
 * counts add up to 1,000), the most requests the server held at once
 * against the concurrency limit, and the wall time against what the retry
 * policy predicts. bench/README.md explains the figures.
 *
 * Usage: bench-llm-load [scale]   (scale multiplies the 1,000 requests)
 * It exits 1 when a request is lost or the concurrency limit is broken,
 * and 0 otherwise, whatever the timing.
 * The plugin is found through KEVO_OPERATOR_PATH (make bench sets it), else
 * in the build tree.
 */
#include "config.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <kevo.h>
#include <kevo/operator.h>

#include "loopback-server.h"

#define REQUESTS 1000
#define CONCURRENCY 32
#define TIMEOUT_S 0.2
#define MAX_RETRIES 2
#define BACKOFF_BASE_S 0.05
#define BACKOFF_MAX_S 0.2
#define SLOW_MS 1000
#define RETRY_AFTER_S 1
#define WARMUP 200

/* One kind of request in the plan: its script at the server, the outcome
 * it must end in, and what it costs under the retry policy: attempts that
 * end quickly, attempts that run into the time limit, and the waits
 * between attempts (lowest and highest, jitter included). */
typedef struct plan {
    const char *name;
    const char *script;
    const char *outcome; /* "child" or a failure kind */
    int per30;           /* requests of this kind in every 30 */
    int quick, timeouts;
    double wait_lo, wait_hi;
} plan;

/* The backoff before retry k with jitter u in [0, 1], as the operator's
 * request engine computes it. */
static double backoff(int k, double u)
{
    double d = BACKOFF_BASE_S;
    for (int i = 1; i < k; i++)
        d *= 2;
    if (d > BACKOFF_MAX_S)
        d = BACKOFF_MAX_S;
    return d * (0.5 + 0.5 * u);
}

static plan plans[] = {
    {"whole kernel", "kernel", "child", 20, 1, 0, 0, 0},
    {"429 (Retry-After), then a kernel", "429:1,kernel", "child", 2, 2, 0, 0,
     0},
    {"500, then a kernel", "500,kernel", "child", 1, 2, 0, 0, 0},
    {"500 every time", "500", "http", 2, 3, 0, 0, 0},
    {"slower than the time limit", "slow:1000", "timeout", 2, 0, 3, 0, 0},
    {"malformed JSON", "malformed", "parse", 2, 1, 0, 0, 0},
    {"truncated body", "truncated", "network", 1, 3, 0, 0, 0},
};
#define NPLANS (sizeof(plans) / sizeof(plans[0]))

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, const char *why)
{
    fprintf(stderr, "bench-llm-load: %s: %s\n", what, why ? why : "failed");
    exit(1);
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static void quiet_log(void *user, kevo_log_level level, const char *op,
                      const char *msg)
{
    (void)user;
    if (level <= KEVO_LOG_ERROR)
        fprintf(stderr, "%s: %s\n", op, msg);
}

static kevo_operator_host *host;
static const kevo_candidate *parent;

static uint64_t submit(kevo_operator *op, const char *script, size_t n)
{
    char sections[256];
    snprintf(sections, sizeof(sections),
             "{\"strategy\": \"[[kevo-loopback:r%zu:%s]]\"}", n, script);
    kevo_operator_request req = {
        .size = sizeof(req),
        .parent = parent,
        .prompt_json = sections,
        .prompt_id = -1,
        .n_children = 1,
    };
    uint64_t id;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_operator_submit(op, &req, &id, &err) != KEVO_OK)
        die("submit", err.text);
    return id;
}

/* Polls until n requests have ended; counts each outcome in kinds. */
typedef struct tally {
    char kind[32];
    size_t n;
} tally;

static size_t drain(size_t n, tally *kinds, size_t *nkinds)
{
    size_t ended = 0;
    while (ended < n) {
        size_t in_flight;
        kevo_error err;
        kevo_error_init(&err);
        if (kevo_operator_host_poll(host, 200, &in_flight, &err) != KEVO_OK)
            die("poll", err.text);
        kevo_operator_result *res;
        while (kevo_operator_host_next_result(host, &res) == KEVO_OK) {
            ended++;
            const char *k = kevo_operator_result_child_count(res) > 0 ? "child"
                            : kevo_operator_result_failure_count(res) > 0
                                ? kevo_operator_result_failure_kind(res, 0)
                                : "nothing";
            size_t i;
            for (i = 0; i < *nkinds; i++)
                if (strcmp(kinds[i].kind, k) == 0)
                    break;
            if (i == *nkinds && i < 16) {
                snprintf(kinds[i].kind, sizeof(kinds[i].kind), "%s", k);
                kinds[i].n = 0;
                (*nkinds)++;
            }
            if (i < 16)
                kinds[i].n++;
            kevo_operator_result_free(res);
        }
        if (in_flight == 0 && ended < n)
            die("poll", "requests vanished");
    }
    return ended;
}

static kevo_operator *make_op(const char *name, const char *url)
{
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"models\": [{\"name\": \"o\", \"api\": \"openai\", \"model\": "
             "\"bench-o\", \"base_url\": \"%s/v1\", \"idle_timeout_s\": "
             "%g}, {\"name\": \"a\", \"api\": \"anthropic\", \"model\": "
             "\"bench-a\", \"base_url\": \"%s\", \"idle_timeout_s\": %g}], "
             "\"concurrency\": %d, \"max_retries\": %d, \"backoff_base_s\": "
             "%g, \"backoff_max_s\": %g}",
             url, TIMEOUT_S, url, TIMEOUT_S, CONCURRENCY, MAX_RETRIES,
             BACKOFF_BASE_S, BACKOFF_MAX_S);
    kevo_operator *op;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_operator_host_add(host, "llm", name, json, &op, &err) != KEVO_OK)
        die("kevo_operator_host_add", err.text);
    return op;
}

/* The "attempts" of the instance summary saved under dir, summed. */
static long long saved_attempts(const char *dir)
{
    long long sum = 0;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, "-summary"))
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        json_t *s = json_load_file(path, 0, NULL);
        sum += json_integer_value(json_object_get(s, "attempts"));
        json_decref(s);
    }
    closedir(d);
    return sum;
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    if (scale < 1)
        scale = 1;
    size_t nreq = (size_t)REQUESTS * (size_t)scale;
    char path[4096];

    if (!getenv(KEVO_OPERATOR_PATH_ENV)) {
        const char *b = getenv("KEVO_BUILDDIR");
        snprintf(path, sizeof(path), "%s/operators/.libs", b ? b : ".");
        setenv(KEVO_OPERATOR_PATH_ENV, path, 1);
    }
    const char *srcdir = getenv("KEVO_SRCDIR");
    snprintf(path, sizeof(path), "%s/examples/tasks/saxpy.json",
             srcdir ? srcdir : KEVO_BENCH_SRCDIR);
    kevo_task *task = NULL;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_task_load(path, &task, &err) != KEVO_OK)
        die("task", err.text);
    parent = kevo_task_seed(task);

    loopback *srv = loopback_start();
    if (!srv)
        die("loopback server", "did not start");
    /* Every whole-kernel reply differs (by its number), so that no child
     * is refused as a duplicate. */
    char *kernel = malloc(strlen(kevo_candidate_source(parent)) + 64);
    if (!kernel)
        die("kernel", "out of memory");
    sprintf(kernel, "```cuda\n// variant @SEQ@\n%s```\n",
            kevo_candidate_source(parent));
    loopback_set_text(srv, "kernel", kernel);
    free(kernel);
    loopback_set_text(srv, "nocode", "Nothing to change.");

    /* The run directory (where every request and reply is saved) lives in
     * memory when the machine has /dev/shm, so that the disk does not
     * enter the figures. */
    char run[64];
    struct stat shm;
    snprintf(run, sizeof(run), "%s/kevo-bench-llm-XXXXXX",
             stat("/dev/shm", &shm) == 0 && S_ISDIR(shm.st_mode) &&
                     access("/dev/shm", W_OK) == 0
                 ? "/dev/shm"
                 : "/tmp");
    if (!mkdtemp(run))
        die("mkdtemp", "failed");
    if (kevo_operator_host_new(task, 7, &host, &err) != KEVO_OK ||
        kevo_operator_host_set_log(host, KEVO_LOG_ERROR, quiet_log, NULL,
                                   &err) != KEVO_OK ||
        kevo_operator_host_set_run_dir(host, run, &err) != KEVO_OK)
        die("host", err.text);

    printf("bench-llm-load: %zu requests through the llm operator against a "
           "loopback HTTP server\n",
           nreq);
    printf("  run directory: %s\n", run);
    printf("  policy: concurrency %d, idle limit %g s, %d retries, backoff "
           "%g..%g s with jitter, Retry-After %d s\n",
           CONCURRENCY, TIMEOUT_S, MAX_RETRIES, BACKOFF_BASE_S, BACKOFF_MAX_S,
           RETRY_AFTER_S);

    /* Warm-up: how long a quick request takes when many are in flight, in
     * this process (the plugin, libcurl, the host and the server share the
     * machine's cores): the throughput the retry policy's waits and time
     * limits are added to. */
    kevo_operator *warm = make_op("warm", loopback_url(srv));
    tally kinds[16];
    size_t nkinds = 0;
    double t0 = now();
    for (size_t i = 0; i < WARMUP; i++)
        submit(warm, "kernel", 1000000 + i);
    drain(WARMUP, kinds, &nkinds);
    double quick_s = (now() - t0) / WARMUP;
    printf("  warm-up: %d whole-kernel requests, %.2f ms each at full "
           "concurrency\n",
           WARMUP, quick_s * 1e3);

    /* The plan: each request's kind, in a fixed interleaving. */
    size_t *counts = calloc(NPLANS, sizeof(size_t));
    size_t *kind_of = malloc(nreq * sizeof(size_t));
    if (!counts || !kind_of)
        die("plan", "out of memory");
    for (size_t i = 0; i < nreq; i++) {
        size_t slot = i % 30, acc = 0, k;
        for (k = 0; k < NPLANS; k++) {
            acc += (size_t)plans[k].per30;
            if (slot < acc)
                break;
        }
        kind_of[i] = k;
        counts[k]++;
    }
    /* What the retry policy says each kind costs. */
    for (size_t k = 0; k < NPLANS; k++) {
        plan *p = &plans[k];
        int attempts = p->quick + p->timeouts;
        if (strncmp(p->script, "429", 3) == 0) {
            p->wait_lo = p->wait_hi = RETRY_AFTER_S;
        } else {
            for (int a = 1; a < attempts; a++) {
                p->wait_lo += backoff(a, 0);
                p->wait_hi += backoff(a, 1);
            }
        }
    }
    /* Attempts that end quickly are limited by throughput; attempts that
     * run into the time limit hold a slot for it; a request's own chain
     * (its attempts and the waits between them) cannot be shortened. */
    double slot_s = 0, chain_lo = 0, chain_hi = 0;
    size_t failing_first = 0, attempts_planned = 0;
    for (size_t k = 0; k < NPLANS; k++) {
        const plan *p = &plans[k];
        double busy = p->quick * quick_s + p->timeouts * TIMEOUT_S;
        slot_s += (double)counts[k] * p->timeouts * TIMEOUT_S;
        if (counts[k] && busy + p->wait_lo > chain_lo)
            chain_lo = busy + p->wait_lo;
        if (counts[k] && busy + p->wait_hi > chain_hi)
            chain_hi = busy + p->wait_hi;
        if (strcmp(p->script, "kernel") != 0)
            failing_first += counts[k];
        attempts_planned += counts[k] * (size_t)(p->quick + p->timeouts);
    }
    double through_s = (double)attempts_planned * quick_s;
    printf("  plan: %zu of %zu requests (%.1f%%) fail at first:\n",
           failing_first, nreq, 100.0 * (double)failing_first / (double)nreq);
    for (size_t k = 0; k < NPLANS; k++)
        printf("    %5zu  %-34s -> %s\n", counts[k], plans[k].name,
               plans[k].outcome);

    loopback_reset(srv);
    kevo_operator *op = make_op("llm", loopback_url(srv));
    t0 = now();
    for (size_t i = 0; i < nreq; i++)
        submit(op, plans[kind_of[i]].script, i);
    double submit_s = now() - t0;
    nkinds = 0;
    size_t ended = drain(nreq, kinds, &nkinds);
    double wall = now() - t0;
    int max_active = loopback_max_active(srv);
    size_t server_saw = loopback_count(srv);

    printf("\n  no crash: %zu of %zu requests ended, each with a result\n",
           ended, nreq);
    printf("  submitting them took %.2f s of the wall time\n", submit_s);
    printf("\n  %-10s %9s %9s\n", "outcome", "planned", "got");
    size_t total = 0, planned_total = 0;
    bool match = true;
    const char *outcomes[] = {"child", "http", "timeout", "parse", "network"};
    for (size_t o = 0; o < sizeof(outcomes) / sizeof(outcomes[0]); o++) {
        size_t want = 0, got = 0;
        for (size_t k = 0; k < NPLANS; k++)
            if (strcmp(plans[k].outcome, outcomes[o]) == 0)
                want += counts[k];
        for (size_t i = 0; i < nkinds; i++)
            if (strcmp(kinds[i].kind, outcomes[o]) == 0)
                got = kinds[i].n;
        printf("  %-10s %9zu %9zu\n", outcomes[o], want, got);
        total += got;
        planned_total += want;
        match = match && want == got;
    }
    for (size_t i = 0; i < nkinds; i++) {
        bool known = false;
        for (size_t o = 0; o < sizeof(outcomes) / sizeof(outcomes[0]); o++)
            known = known || strcmp(kinds[i].kind, outcomes[o]) == 0;
        if (!known) {
            printf("  %-10s %9d %9zu   (not planned)\n", kinds[i].kind, 0,
                   kinds[i].n);
            total += kinds[i].n;
            match = false;
        }
    }
    printf("  %-10s %9zu %9zu   %s\n", "total", planned_total, total,
           total == nreq ? "every request accounted for" : "MISSING");
    printf("  %-10s %9s %9s\n", "", "",
           match ? "as planned" : "NOT AS PLANNED");

    kevo_operator_host_free(host);
    char llmdir[sizeof(run) + 8];
    snprintf(llmdir, sizeof(llmdir), "%s/llm", run);
    long long attempts = saved_attempts(llmdir) - WARMUP;
    printf("\n  attempts: %zu planned, %lld made (the instance summary), "
           "%zu seen by the server\n",
           attempts_planned, attempts, server_saw);
    printf("  concurrency: at most %d requests held by the server at once; "
           "the limit is %d (%s)\n",
           max_active, CONCURRENCY,
           max_active <= CONCURRENCY ? "respected" : "EXCEEDED");

    /* At best the three overlap completely; at worst they add up (the
     * list-scheduling bound: every moment some slot is idle, the longest
     * chain is advancing). */
    double lo = through_s;
    if (slot_s / CONCURRENCY > lo)
        lo = slot_s / CONCURRENCY;
    if (chain_lo > lo)
        lo = chain_lo;
    double hi = through_s + slot_s / CONCURRENCY + chain_hi;
    printf("  wall time: %.2f s; the retry policy predicts %.2f to %.2f s\n",
           wall, lo, hi);
    printf("    (%zu attempts at %.2f ms = %.2f s; %.1f s of time limits over "
           "%d slots = %.2f s;\n     the longest request, waits included, "
           "%.2f to %.2f s)\n",
           attempts_planned, quick_s * 1e3, through_s, slot_s, CONCURRENCY,
           slot_s / CONCURRENCY, chain_lo, chain_hi);
    printf("  verdict: %s\n", wall <= hi * 1.1 + 0.1
                                  ? "finished within the predicted time"
                                  : "SLOWER than the retry policy predicts");

    bool sound = ended == nreq && total == nreq && max_active <= CONCURRENCY;
    remove_tree(run);
    free(counts);
    free(kind_of);
    loopback_stop(srv);
    kevo_task_free(task);
    return sound ? 0 : 1;
}

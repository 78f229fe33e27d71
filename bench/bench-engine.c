/*
 * bench-engine.c: the engine's own limit. Rank 0 of a farm of processes
 * (kevo_farm_spawn()) runs a search of saxpy's parameters whose children
 * are scored on N member processes; each member's scoring function sleeps
 * a service time S (nanosleep) before it answers, as a GPU would take S to
 * evaluate, and costs next to nothing besides. For each (N, S) it prints
 * the children rank 0 judged a second against the ideal N / S, the
 * evaluations in flight on average, and rank 0's CPU seconds per
 * evaluation (getrusage(RUSAGE_SELF) of rank 0 alone). Beside them: one
 * rank without a farm, zero-cost scoring, the same depth (the engine
 * without messaging), and the CPU time rank 0 spends reading a GPU-backed
 * member's answer, a real worker result of tests/data/eval.
 * bench/README.md explains each figure.
 *
 * Usage: bench-engine [-n MEMBERS] [-s MS] [-d RANK_DEPTH] [-t SECONDS]
 * With -n or -s it measures that one point (and its baseline); without,
 * the grid N = 1, 2, 4, 8, 16, 32 by S = 200, 16.7 and 0 ms, in about
 * two minutes. The params plugin is found through KEVO_OPERATOR_PATH
 * (make bench sets it), else in the build tree; the task and the results
 * under KEVO_SRCDIR, else the source tree it was built from.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <kevo.h>
#include <kevo/farm.h>

#include "bench_search.h"
#include "bench_util.h"
#include "core/kevo_private.h"
#include "eval/eval_private.h"

#define SEED 20240601
#define MAX_MEMBERS 1024
/* Seconds a point is measured for, by default; a baseline gets half. */
#define POINT_SECONDS 3.0

static void die(const char *what, const kevo_error *err)
{
    fprintf(stderr, "bench-engine: %s: %s\n", what,
            err && err->text[0] ? err->text : "failed");
    exit(1);
}

/* ---- the task and the scoring function ----------------------------- */

/* saxpy's seed with four more parameters, which its code never reads: its
 * own space holds 60 assignments, and the params operator never proposes
 * one twice. Each domain is small, since the operator reads the parent's
 * whole space, every value listed, with each request. */
static kevo_task *salted_saxpy(const char *srcdir)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_task *task = bench_salted_task(srcdir, "saxpy",
                                        "//   SALT_A in 0..31 = 0\n"
                                        "//   SALT_B in 0..31 = 0\n"
                                        "//   SALT_C in 0..31 = 0\n"
                                        "//   SALT_D in 0..31 = 0\n",
                                        &err);
    if (!task)
        die("the salted seed", &err);
    return task;
}

/* What each member counts, in memory shared by every rank of a point. */
typedef struct tally {
    uint64_t scored;
    uint64_t ns; /* inside the scoring function */
} tally;

typedef struct scorer {
    int rank;
    long service_ns; /* slept by members before each answer */
    tally *tallies;  /* by rank */
    uint64_t here;   /* scored on this rank */
} scorer;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double log2_param(const kevo_candidate *c, const char *name)
{
    int64_t v = 1;
    kevo_vars_get(kevo_candidate_assignment(c), name, &v);
    return v > 0 ? log2((double)v) : 0;
}

/* A landscape over saxpy's parameters with its peak at BLOCK=256, VEC=4,
 * ITEMS=2; the behaviour is (vector loads, block size). On a member it
 * first sleeps the service time. */
static kevo_status score(const kevo_task *task, const kevo_candidate *c,
                         double *fitness, double *desc, void *user,
                         kevo_error *err)
{
    (void)task;
    (void)err;
    scorer *sc = user;
    uint64_t t0 = now_ns();
    if (sc->rank > 0 && sc->service_ns > 0) {
        struct timespec left = {sc->service_ns / 1000000000L,
                                sc->service_ns % 1000000000L};
        while (nanosleep(&left, &left) != 0 && errno == EINTR)
            ;
    }
    double b = log2_param(c, "BLOCK"), v = log2_param(c, "VEC");
    double i = log2_param(c, "ITEMS");
    *fitness =
        1.0 / (1.0 + 0.3 * fabs(b - 8) + 0.4 * fabs(v - 2) + 0.2 * fabs(i - 1));
    desc[0] = v > 0 ? 1 : 0;
    desc[1] = exp2(b);
    sc->here++;
    if (sc->rank > 0) {
        sc->tallies[sc->rank].scored++;
        sc->tallies[sc->rank].ns += now_ns() - t0;
    }
    return KEVO_OK;
}

/* ---- rank 0's meter ------------------------------------------------ */

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

/*
 * Rank 0 counts the children judged from the seed's judgement on, for
 * seconds, then interrupts the search. Evaluations in flight (proposed
 * and not yet judged, the one being judged included) only fall at a
 * judgement and rise when a batch is proposed, which follows the last
 * judgement of the batch before at once: the count read at a judgement
 * stands for the time since the one before.
 */
typedef struct meter {
    double seconds;
    double t0, t1, cpu0, cpu1;
    double area; /* evaluations in flight x seconds */
    uint64_t children;
    bool started, stopped;
} meter;

static void on_event(kevo_search *s, const kevo_search_event *ev, void *user)
{
    meter *m = user;
    if (ev->type != KEVO_SEARCH_EVALUATED || m->stopped)
        return;
    double t = bench_now();
    if (!m->started) {
        /* The seed, judged once every member has said hello. */
        m->started = true;
        m->t0 = m->t1 = t;
        m->cpu0 = cpu_seconds();
        return;
    }
    kevo_search_stats st = {.size = sizeof st};
    kevo_search_get_stats(s, &st);
    m->area += (double)st.in_flight * (t - m->t1);
    m->t1 = t;
    m->children++;
    if (t - m->t0 >= m->seconds) {
        m->cpu1 = cpu_seconds();
        m->stopped = true;
        kevo_search_interrupt(s);
    }
}

/* ---- one point ------------------------------------------------------ */

typedef struct point {
    unsigned members; /* 0: one rank, no farm */
    double service_ms;
    unsigned rank_depth;
    /* measured */
    double rate, in_flight, cpu_per_eval, service_measured_ms;
    uint64_t children, member_scored, scored_here;
} point;

/* The run directory of a point under dir (NULL: none). */
static char *run_dir(const char *dir, const point *p)
{
    if (!dir)
        return NULL;
    char *path =
        p->members
            ? kevo__asprintf("%s/n%u-s%g", dir, p->members, p->service_ms)
            : kevo__asprintf("%s/alone-d%u", dir, p->rank_depth);
    if (!path)
        die("out of memory", NULL);
    return path;
}

static kevo_search *make_search(const kevo_task *task, unsigned depth,
                                unsigned rank_depth, kevo_farm *farm,
                                const char *dir, scorer *sc, meter *m,
                                kevo_error *err)
{
    kevo_search *s = NULL;
    if (kevo_search_new(task, &s, err) != KEVO_OK)
        return NULL;
    if (kevo_search_set_score_fn(s, score, sc, err) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_SEED, SEED, err) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, INT64_MAX, err) !=
            KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_DEPTH, depth, err) != KEVO_OK ||
        (farm && kevo_search_set_int(s, KEVO_SEARCH_RANK_DEPTH, rank_depth,
                                     err) != KEVO_OK) ||
        kevo_search_add_operator(s, "params", NULL, NULL, 1.0, err) !=
            KEVO_OK ||
        kevo_search_set_callback(s, on_event, m, err) != KEVO_OK ||
        (farm && kevo_search_set_farm(s, farm, err) != KEVO_OK) ||
        (dir && kevo_farm_rank(farm) == 0 &&
         kevo_search_open_run(s, dir, 0, "bench-engine", err) != KEVO_OK)) {
        kevo_search_free(s);
        return NULL;
    }
    return s;
}

/* Measures p for seconds, with a run directory under dir unless NULL.
 * Only rank 0 comes back from here. */
static void run_point(const kevo_task *task, point *p, double seconds,
                      const char *dir)
{
    char *rd = run_dir(dir, p);
    size_t bytes = (p->members + 1) * sizeof(tally);
    tally *tallies = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (tallies == MAP_FAILED)
        die("mmap", NULL);
    kevo_error err;
    kevo_error_init(&err);
    kevo_farm *farm = NULL;
    if (p->members && kevo_farm_spawn(p->members, &farm, &err) != KEVO_OK)
        die("kevo_farm_spawn", &err);
    scorer sc = {.rank = kevo_farm_rank(farm),
                 .service_ns = (long)llround(p->service_ms * 1e6),
                 .tallies = tallies};
    meter m = {.seconds = seconds};
    unsigned depth = (p->members ? p->members : 1) * p->rank_depth;
    kevo_search *s =
        make_search(task, depth, p->rank_depth, farm, rd, &sc, &m, &err);
    kevo_status rc = s ? kevo_search_run(s, &err) : err.code;
    if (kevo_farm_rank(farm) != 0) {
        /* A member: it served until rank 0 stopped. */
        kevo_search_free(s);
        kevo_farm_free(farm);
        free(rd);
        _exit(rc == KEVO_OK ? 0 : 1);
    }
    if (rc != KEVO_OK)
        die("the search", &err);
    kevo_search_free(s);
    kevo_farm_free(farm); /* waits for the members */
    free(rd);
    double span = m.t1 - m.t0;
    p->children = m.children;
    p->rate = span > 0 ? (double)m.children / span : 0;
    p->in_flight = span > 0 ? m.area / span : 0;
    p->cpu_per_eval = m.children ? (m.cpu1 - m.cpu0) / (double)m.children : NAN;
    uint64_t scored = 0, ns = 0;
    for (unsigned r = 1; r <= p->members; r++) {
        scored += tallies[r].scored;
        ns += tallies[r].ns;
    }
    p->member_scored = scored;
    p->service_measured_ms = scored ? 1e-6 * (double)ns / (double)scored : NAN;
    p->scored_here = sc.here;
    munmap(tallies, bytes);
}

/* ---- results read on rank 0 ---------------------------------------- */

typedef struct parse_row {
    char name[64];
    size_t bytes;
    double us_loads, us_total; /* json_loads alone; and the result read */
} parse_row;

/* The message a GPU-backed member sends with result r (search_serve.c):
 * its text, as the farm writes it. */
static char *result_message(const json_t *r)
{
    json_t *msg = json_pack("{s:s, s:I, s:O}", "op", "result", "ticket",
                            (json_int_t)123456, "result", r);
    char *text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
    json_decref(msg);
    return text;
}

/* CPU microseconds rank 0 spends on one message text: parsed, and with
 * read_result its result read (kevo__eval_result_from_json) and freed. */
static double time_message_once(const char *text, const char *name,
                                bool read_result, double seconds)
{
    size_t n = 0, batch = 16;
    double t0 = bench_cpu_now(), t = 0;
    while (t < seconds) {
        for (size_t i = 0; i < batch; i++) {
            json_t *msg = json_loads(text, 0, NULL);
            if (!msg)
                die(name, NULL);
            if (read_result) {
                kevo_jpath path;
                kevo__jpath_init(&path);
                kevo_eval_result *res = NULL;
                kevo_error err;
                kevo_error_init(&err);
                if (kevo__eval_result_from_json(json_object_get(msg, "result"),
                                                name, &path, &res,
                                                &err) != KEVO_OK)
                    die(name, &err);
                kevo_eval_result_free(res);
            }
            json_decref(msg);
        }
        n += batch;
        t = bench_cpu_now() - t0;
    }
    return 1e6 * t / (double)n;
}

/* The least of five timings of seconds / 5 each: other work on the machine
 * only ever adds to a timing (a shared core, its caches). */
static double time_message(const char *text, const char *name, bool read_result,
                           double seconds)
{
    double best = INFINITY;
    for (int i = 0; i < 5; i++) {
        double us = time_message_once(text, name, read_result, seconds / 5);
        best = us < best ? us : best;
    }
    return best;
}

/* The real worker results of tests/data/eval in the form a member sends:
 * each file's result (or its part key). */
static size_t bench_results(const char *srcdir, parse_row *rows, size_t max)
{
    static const struct {
        const char *file, *key;
    } files[] = {
        {"h100_sgemm_result.json", NULL},
        {"h200_saxpy_seed_eval.json", "train"},
        {"h200_saxpy_seed_eval.json", "held_out"},
        {"h200_saxpy_fastpath_eval.json", "train"},
        {"sgemm_compile_error.json", NULL},
        {"saxpy_compile_error.json", NULL},
    };
    size_t n = 0;
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(files) && n < max; i++) {
        char *path =
            kevo__asprintf("%s/tests/data/eval/%s", srcdir, files[i].file);
        json_error_t je;
        json_t *root = path ? json_load_file(path, 0, &je) : NULL;
        if (!root) {
            fprintf(stderr, "bench-engine: %s: %s\n", path ? path : "",
                    path ? je.text : "out of memory");
            exit(1);
        }
        free(path);
        const json_t *r =
            files[i].key ? json_object_get(root, files[i].key) : root;
        char *text = r ? result_message(r) : NULL;
        if (!text)
            die(files[i].file, NULL);
        parse_row *row = &rows[n++];
        snprintf(row->name, sizeof row->name, "%s%s%s", files[i].file,
                 files[i].key ? ":" : "", files[i].key ? files[i].key : "");
        row->bytes = strlen(text);
        time_message_once(text, row->name, true, 0.05); /* warm-up */
        row->us_loads = time_message(text, row->name, false, 0.5);
        row->us_total = time_message(text, row->name, true, 0.5);
        free(text);
        json_decref(root);
    }
    return n;
}

/* ---- printing ------------------------------------------------------ */

static void print_load(const char *when)
{
    double load[3];
    if (getloadavg(load, 3) == 3)
        printf("load average %s: %.2f %.2f %.2f\n", when, load[0], load[1],
               load[2]);
}

static void print_baselines(const point *base, size_t n)
{
    printf("\nbaseline: one rank, no farm, zero-cost scoring\n");
    printf("%6s %9s %9s %12s %10s\n", "depth", "children", "evals/s",
           "cpu us/eval", "in flight");
    for (size_t i = 0; i < n; i++)
        printf("%6u %9" PRIu64 " %9.1f %12.1f %10.1f\n", base[i].rank_depth,
               base[i].children, base[i].rate, 1e6 * base[i].cpu_per_eval,
               base[i].in_flight);
}

static const point *baseline_of(const point *base, size_t nbase, unsigned depth)
{
    for (size_t i = 0; i < nbase; i++)
        if (base[i].rank_depth == depth)
            return &base[i];
    return NULL;
}

static void print_points(const point *pts, size_t n, const point *base,
                         size_t nbase)
{
    printf("\nfarm: rank 0 and N members (kevo_farm_spawn), each member "
           "sleeping S a child; depth N x rank_depth\n");
    printf("%3s %6s %8s %8s %8s %6s %9s %8s %8s %7s %8s %8s %7s %7s\n", "N",
           "S ms", "children", "evals/s", "ideal/s", "eff", "in flight",
           "serv ms", "batch ms", "gap ms", "gap us/c", "cpu us/e", "rate/b",
           "cpu/b");
    for (size_t i = 0; i < n; i++) {
        const point *p = &pts[i];
        unsigned depth = p->members * p->rank_depth;
        double ideal =
            p->service_ms > 0 ? 1e3 * p->members / p->service_ms : NAN;
        /* A batch is depth children; what it takes beyond rank_depth
         * services in a row is rank 0's work on the batch, the messages,
         * and the wait for the batch's last child. */
        double batch = p->rate > 0 ? 1e3 * depth / p->rate : NAN;
        double gap = batch - p->rank_depth * p->service_ms;
        const point *b = baseline_of(base, nbase, depth);
        printf("%3u %6.1f %8" PRIu64 " %8.1f ", p->members, p->service_ms,
               p->children, p->rate);
        if (isnan(ideal))
            printf("%8s %6s ", "-", "-");
        else
            printf("%8.1f %6.3f ", ideal, p->rate / ideal);
        printf(
            "%9.1f %8.3f %8.3f %7.3f %8.1f %8.1f %7.3f %7.3f\n", p->in_flight,
            p->service_measured_ms, batch, gap, 1e3 * gap / depth,
            1e6 * p->cpu_per_eval, b && b->rate > 0 ? p->rate / b->rate : NAN,
            b && b->cpu_per_eval > 0 ? p->cpu_per_eval / b->cpu_per_eval : NAN);
        if (p->scored_here > 1)
            printf("    (rank 0 scored %" PRIu64 " children itself)\n",
                   p->scored_here - 1);
    }
}

static void print_results(const parse_row *rows, size_t n, double *mean_us,
                          double *max_us)
{
    printf("\nresults a GPU-backed member sends (tests/data/eval), read on "
           "rank 0, CPU time, the least of 5 timings: the message parsed "
           "(json_loads), and parsed, its result read "
           "(kevo__eval_result_from_json) and freed\n");
    printf("%-38s %7s %9s %14s\n", "result", "bytes", "parse us",
           "parse+read us");
    double sum = 0, most = 0;
    for (size_t i = 0; i < n; i++) {
        printf("%-38s %7zu %9.1f %14.1f\n", rows[i].name, rows[i].bytes,
               rows[i].us_loads, rows[i].us_total);
        sum += rows[i].us_total;
        most = rows[i].us_total > most ? rows[i].us_total : most;
    }
    *mean_us = n ? sum / (double)n : 0;
    *max_us = most;
}

/* On paper: how many GPUs of 5 and of 60 evaluations a second each one
 * rank 0 keeps busy, from its CPU per evaluation at point p. */
static void print_paper_line(const point *p, double mean_us, double max_us)
{
    double us = 1e6 * p->cpu_per_eval;
    double lo = 1e6 / (us + max_us), hi = 1e6 / (us + mean_us);
    printf("  N = %u, S = %.1f ms: %.1f us a child + %.1f us (mean) to %.1f "
           "us (most) a result = %.1f to %.1f us: at most %.0f to %.0f "
           "evaluations/s a core, %.0f to %.0f GPUs at 5/s, %.0f to %.0f "
           "GPUs at 60/s\n",
           p->members, p->service_ms, us, mean_us, max_us, us + mean_us,
           us + max_us, lo, hi, lo / 5, hi / 5, lo / 60, hi / 60);
}

static void print_paper(const point *pts, size_t n, double mean_us,
                        double max_us)
{
    const point *busiest = NULL, *raw = NULL;
    for (size_t i = 0; i < n; i++) {
        const point *p = &pts[i];
        if (p->service_ms > 0 && (!busiest || p->rate > busiest->rate))
            busiest = p;
        if (p->service_ms == 0 && (!raw || p->members > raw->members))
            raw = p;
    }
    printf("\narithmetic from the figures above, not measured: rank 0's "
           "CPU a child with a result read instead of a score\n");
    if (busiest)
        print_paper_line(busiest, mean_us, max_us);
    if (raw)
        print_paper_line(raw, mean_us, max_us);
}

/* ---- main ---------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr,
            "usage: bench-engine [-n MEMBERS 1..%d] [-s MS >= 0] "
            "[-d RANK_DEPTH 1..64] [-t SECONDS > 0] [-r RUN_DIR]\n",
            MAX_MEMBERS);
    exit(2);
}

int main(int argc, char **argv)
{
    static const unsigned grid_n[] = {1, 2, 4, 8, 16, 32};
    static const double grid_s[] = {200, 16.7, 0};
    long members = 0, rank_depth = 2;
    double service = -1, seconds = POINT_SECONDS;
    const char *dir = NULL;
    int c;
    while ((c = getopt(argc, argv, "n:s:d:t:r:h")) != -1) {
        char *end = NULL;
        switch (c) {
        case 'n':
            members = strtol(optarg, &end, 10);
            if (*end || members < 1 || members > MAX_MEMBERS)
                usage();
            break;
        case 's':
            service = strtod(optarg, &end);
            if (*end || !(service >= 0) || service > 1e6)
                usage();
            break;
        case 'd':
            rank_depth = strtol(optarg, &end, 10);
            if (*end || rank_depth < 1 || rank_depth > 64)
                usage();
            break;
        case 't':
            seconds = strtod(optarg, &end);
            if (*end || !(seconds > 0) || seconds > 3600)
                usage();
            break;
        case 'r': dir = optarg; break;
        default: usage();
        }
    }
    if (optind != argc)
        usage();
    bench_operator_path();
    const char *srcdir = bench_srcdir();
    bool single = members > 0 || service >= 0;

    point pts[KEVO_ARRAY_SIZE(grid_n) * KEVO_ARRAY_SIZE(grid_s)];
    size_t npts = 0;
    if (single) {
        pts[npts++] = (point){.members = members ? (unsigned)members : 4,
                              .service_ms = service >= 0 ? service : 16.7,
                              .rank_depth = (unsigned)rank_depth};
    } else {
        for (size_t j = 0; j < KEVO_ARRAY_SIZE(grid_s); j++)
            for (size_t i = 0; i < KEVO_ARRAY_SIZE(grid_n); i++)
                pts[npts++] = (point){.members = grid_n[i],
                                      .service_ms = grid_s[j],
                                      .rank_depth = (unsigned)rank_depth};
    }
    /* One baseline a depth (a baseline's rank_depth is its depth). */
    point base[KEVO_ARRAY_SIZE(pts)];
    size_t nbase = 0;
    for (size_t i = 0; i < npts; i++) {
        unsigned depth = pts[i].members * pts[i].rank_depth;
        if (!baseline_of(base, nbase, depth))
            base[nbase++] = (point){.rank_depth = depth};
    }

    printf("kevo engine benchmark: saxpy's parameters (salted), params "
           "operator, zero-cost scoring, %s; rank_depth %ld; %.1f s a "
           "point, %.1f s a baseline; %ld CPUs online\n",
           dir ? "a run directory on rank 0" : "no run directory", rank_depth,
           seconds, seconds / 2, sysconf(_SC_NPROCESSORS_ONLN));
    print_load("at the start");
    fflush(stdout);
    double wall0 = bench_now();
    kevo_task *task = salted_saxpy(srcdir);
    for (size_t i = 0; i < nbase; i++)
        run_point(task, &base[i], seconds / 2, dir);
    for (size_t i = 0; i < npts; i++)
        run_point(task, &pts[i], seconds, dir);
    kevo_task_free(task);
    parse_row rows[8];
    size_t nrows = bench_results(srcdir, rows, KEVO_ARRAY_SIZE(rows));

    print_baselines(base, nbase);
    print_points(pts, npts, base, nbase);
    double mean_us, max_us;
    print_results(rows, nrows, &mean_us, &max_us);
    print_paper(pts, npts, mean_us, max_us);
    printf("\nwall time %.1f s\n", bench_now() - wall0);
    print_load("at the end");
    return 0;
}

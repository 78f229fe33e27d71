/*
 * bench-handoff.c: what it costs to move data between kevo's parts in one
 * process, each figure against a baseline measured in the same run:
 *   1. a candidate handed on: kevo_candidate_copy() of sgemm's seed
 *      (kevo_candidate_ref() where candidate.h defines
 *      KEVO_CANDIDATE_HAS_REF), against copying its source text alone;
 *   2. the task in every submit: what kevo_evaluator_submit() and the
 *      eval message do with the task for every evaluation now (the task's
 *      version checked, its key looked up; the message by key serialised,
 *      sent down a pipe and parsed back) and what they did before (the
 *      task as JSON text and its hash; the message with the whole task),
 *      against the message by key alone; and the task message a worker
 *      now gets once;
 *   3. the engine end to end: a search of sgemm whose children come from
 *      the params plugin and are scored by a function that costs nothing,
 *      against a loop that does by hand the least such a search must do.
 * bench/README.md explains each figure.
 *
 * Usage: bench-handoff [scale]   (scale multiplies the operation counts;
 * the default 1 runs for a few seconds)
 * The params plugin is found through KEVO_OPERATOR_PATH (make bench sets
 * it), else in the build tree; the tasks under KEVO_SRCDIR, else the
 * source tree it was built from.
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <kevo.h>
#include <kevo/operator.h>

#include "bench_search.h"
#include "bench_util.h"
#include "core/kevo_private.h"
#include "model/candidate_private.h"
#include "model/task_private.h"
#include "proc/ipc.h"
#include "proc/task_keys.h"

#define SEED 20240601
/* The engine section's evaluations at scale 1, and the most in one search
 * (each search starts again from the seed). */
#define ENGINE_EVALS 8000
#define SEARCH_EVALS 2000

/* The seed kevo_evaluator_submit() starts the task key's hash from (the
 * bytes of "kevotask"). */
#define TASK_KEY_SEED UINT64_C(0x6b65766f7461736b)

typedef struct row {
    char name[64];
    double ops;
    double seconds;
    double base_rate; /* the rate of the section's baseline */
} row;

typedef struct table {
    row rows[24];
    size_t n;
} table;

static void die(const char *what, const kevo_error *err)
{
    fprintf(stderr, "bench-handoff: %s: %s\n", what,
            err && err->text[0] ? err->text : "failed");
    exit(1);
}

/* Adds a row; base is the section's baseline row (NULL: this is it). */
static const row *add_row(table *t, const row *base, double ops, double seconds,
                          const char *fmt, ...) KEVO_PRINTF(5, 6);

static const row *add_row(table *t, const row *base, double ops, double seconds,
                          const char *fmt, ...)
{
    row *r = &t->rows[t->n++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->name, sizeof r->name, fmt, ap);
    va_end(ap);
    r->ops = ops;
    r->seconds = seconds;
    r->base_rate = base ? base->ops / base->seconds : ops / seconds;
    return r;
}

static kevo_task *load_task(const char *srcdir, const char *name)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_task *task = bench_load_task(srcdir, name, &err);
    if (!task)
        die(name, &err);
    return task;
}

/* ---- 1. the candidate --------------------------------------------------- */

/* The least a copy that owns its source does: the source text copied and
 * freed, n times. */
static double run_source_copy(const char *source, size_t n, size_t *sink)
{
    size_t len = strlen(source) + 1, sum = 0;
    double t0 = bench_cpu_now();
    for (size_t i = 0; i < n; i++) {
        char *p = malloc(len);
        if (!p)
            die("out of memory", NULL);
        memcpy(p, source, len);
        sum += (unsigned char)p[i % len];
        free(p);
    }
    *sink += sum;
    return bench_cpu_now() - t0;
}

/* n handoffs of cand, each a deep copy (ref false) or a reference (ref
 * true, only where candidate.h has them), dropped at once. */
static double run_handoffs(kevo_candidate *cand, size_t n, bool ref,
                           size_t *sink)
{
    size_t sum = 0;
    double t0 = bench_cpu_now();
    for (size_t i = 0; i < n; i++) {
#ifdef KEVO_CANDIDATE_HAS_REF
        kevo_candidate *c =
            ref ? kevo_candidate_ref(cand) : kevo_candidate_copy(cand);
#else
        kevo_candidate *c = ref ? NULL : kevo_candidate_copy(cand);
#endif
        if (!c)
            die(ref ? "kevo_candidate_ref" : "kevo_candidate_copy", NULL);
        sum += kevo_candidate_launch_count(c);
        kevo_candidate_free(c);
    }
    *sink += sum;
    return bench_cpu_now() - t0;
}

static void bench_candidate(table *t, const kevo_task *task, double scale,
                            size_t *sink)
{
    const kevo_candidate *seed = kevo_task_seed(task);
    if (!seed)
        die("sgemm has no seed", NULL);
    size_t n = (size_t)(1e5 * scale) + 1;
    const char *source = kevo_candidate_source(seed);
    run_source_copy(source, n / 10, sink);
    const row *base =
        add_row(t, NULL, (double)n, run_source_copy(source, n, sink),
                "baseline: source text copied (%zu B)", strlen(source));
    /* A candidate of the bench's own, so that a kevo_candidate_ref() that
     * takes a pointer to non-const fits too. */
    kevo_candidate *own = kevo_candidate_copy(seed);
    if (!own)
        die("kevo_candidate_copy", NULL);
    run_handoffs(own, n / 10, false, sink);
    add_row(t, base, (double)n, run_handoffs(own, n, false, sink),
            "kevo_candidate_copy + free");
#ifdef KEVO_CANDIDATE_HAS_REF
    run_handoffs(own, n / 10, true, sink);
    add_row(t, base, (double)n, run_handoffs(own, n, true, sink),
            "kevo_candidate_ref + free");
#endif
    kevo_candidate_free(own);
}

/* ---- 2. the task in every submit ---------------------------------------- */

/* What kevo_evaluator_submit() did with the task on every submit before
 * tasks went to the worker once (evaluator.c, find_task): the task as JSON
 * text, hashed into the task key that found its record. It still does
 * this once per version of the task. */
static uint64_t task_key(const kevo_task *task)
{
    char *text = NULL;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_task_to_json(task, &text, &err) != KEVO_OK)
        die("kevo_task_to_json", &err);
    uint64_t key =
        kevo__hash_finish(kevo__hash_bytes(TASK_KEY_SEED, text, strlen(text)));
    free(text);
    return key;
}

/* The kernels' lowered names as the eval message carries them. */
static json_t *kernel_names(const kevo_candidate *cand)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < kevo_candidate_launch_count(cand); i++) {
        const char *k = kevo_candidate_launch_kernel(cand, i);
        json_object_set_new(o, k, json_string(k));
    }
    return o;
}

/* The eval message the evaluator sends the GPU worker for cand
 * (evaluator_pipeline.c, eval_message), naming the task by its key; with
 * the task's JSON object in it too (one reference taken) when task_json
 * is not NULL, as every eval message carried it before. */
static json_t *eval_message(const kevo_task *task, json_t *task_json,
                            uint64_t key, const kevo_candidate *cand,
                            uint64_t id)
{
    char hex[17];
    snprintf(hex, sizeof hex, "%016" PRIx64, key);
    json_t *c = kevo__candidate_to_json(cand);
    json_t *msg = json_pack(
        "{s:s, s:I, s:O*, s:s, s:o, s:s, s:[I,I], s:I, s:I, "
        "s:{s:I, s:I, s:I, s:f, s:I, s:b}, s:b, s:b, s:b, s:o, s:o}",
        "op", "eval", "id", (json_int_t)id, "task", task_json, "task_key", hex,
        "candidate", c ? c : json_null(), "set", "train", "seeds",
        (json_int_t)(key >> 1), (json_int_t)(id << 20), "reference_cubin_bytes",
        (json_int_t)30000, "candidate_cubin_bytes", (json_int_t)30000, "timing",
        "warmup", (json_int_t)3, "min_reps", (json_int_t)10, "max_reps",
        (json_int_t)100, "target_spread", 0.02, "cap_ms", (json_int_t)200,
        "enabled", 1, "profile", 0, "flush_l2", 1, "time_reference", 0,
        "reference_kernels", kernel_names(kevo_task_reference(task)),
        "candidate_kernels", kernel_names(cand));
    if (!msg)
        die("cannot build the eval message", NULL);
    return msg;
}

/* The bytes of msg's JSON text in a frame. */
static size_t message_bytes(const json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    if (!text)
        die("json_dumps", NULL);
    size_t len = strlen(text);
    free(text);
    return len;
}

/* How a submit is timed. */
typedef enum submit_kind {
    MESSAGE_ONLY,  /* the eval message alone, by key */
    SUBMIT_BEFORE, /* the task key and the message with the task */
    SUBMIT_NOW     /* the task's version checked, the worker's key looked
                    * up, the message by key */
} submit_kind;

/* n submits' worth of what each does with the task. SUBMIT_NOW: the
 * task's version compared with its record's (evaluator.c, find_task), the
 * key looked up in the worker's tasks as the evaluator counts them
 * (kevo__gpu_client_has_task, before each eval message), then the eval
 * message by key, sent as a frame down a pipe (kevo__ipc_send: serialised
 * and written) and read back as the worker reads it (kevo__ipc_recv: read
 * and parsed). SUBMIT_BEFORE: what each submit did before the task went to
 * the worker once: the task key (task_key()) and the message with the
 * task in it, through the pipe. MESSAGE_ONLY: the message by key alone. */
static double run_submits(const kevo_task *task, json_t *task_json,
                          const kevo_candidate *cand, const int fd[2],
                          submit_kind kind, size_t n, size_t *sink)
{
    kevo_error err;
    kevo_error_init(&err);
    uint64_t key = task_key(task), sum = 0;
    char hex[17];
    snprintf(hex, sizeof hex, "%016" PRIx64, key);
    kevo__task_version seen, now;
    kevo__task_version_of(task, &seen);
    kevo__task_keys held;
    kevo__task_keys_init(&held, NULL);
    if (kevo__task_keys_put(&held, hex, NULL, &err) != KEVO_OK)
        die("the task keys", &err);
    double t0 = bench_cpu_now();
    for (size_t i = 0; i < n; i++) {
        if (kind == SUBMIT_BEFORE)
            key = task_key(task);
        if (kind == SUBMIT_NOW) {
            kevo__task_version_of(task, &now);
            if (!kevo__task_version_equal(&now, &seen) ||
                !kevo__task_keys_use(&held, hex, NULL))
                die("the task changed", NULL);
        }
        json_t *msg = eval_message(
            task, kind == SUBMIT_BEFORE ? task_json : NULL, key, cand, i + 1);
        kevo__frame f = {0};
        if (kevo__ipc_send(fd[1], msg, NULL, 0, -1, &err) != KEVO_OK ||
            kevo__ipc_recv(fd[0], -1, &f, &err) != KEVO_OK)
            die("the pipe", &err);
        sum += json_object_size(f.json) + key;
        kevo__frame_clear(&f);
        json_decref(msg);
    }
    *sink += (size_t)sum;
    kevo__task_keys_clear(&held);
    return bench_cpu_now() - t0;
}

static void free_task(void *task)
{
    kevo_task_free(task);
}

/* n task messages, each sent down the pipe and read back, its task loaded
 * (kevo_task_load_string) and kept by key, as the worker does once per
 * task and worker process. */
static double run_task_messages(json_t *task_json, const int fd[2], size_t n,
                                size_t *sink)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo__task_keys kept;
    kevo__task_keys_init(&kept, free_task);
    size_t sum = 0;
    double t0 = bench_cpu_now();
    for (size_t i = 0; i < n; i++) {
        char key[32];
        snprintf(key, sizeof key, "%zu", i % KEVO__TASK_KEYS_MAX);
        json_t *msg =
            json_pack("{s:s, s:I, s:s, s:O}", "op", "task", "id",
                      (json_int_t)i + 1, "task_key", key, "task", task_json);
        kevo__frame f = {0};
        if (!msg || kevo__ipc_send(fd[1], msg, NULL, 0, -1, &err) != KEVO_OK ||
            kevo__ipc_recv(fd[0], -1, &f, &err) != KEVO_OK)
            die("the pipe", &err);
        char *text = json_dumps(json_object_get(f.json, "task"), JSON_COMPACT);
        kevo_task *t = NULL;
        if (!text ||
            kevo_task_load_string(text, "the task", NULL, &t, &err) !=
                KEVO_OK ||
            kevo__task_keys_put(&kept, key, t, &err) != KEVO_OK)
            die("the task message", &err);
        sum += kevo__task_keys_count(&kept);
        free(text);
        kevo__frame_clear(&f);
        json_decref(msg);
    }
    *sink += sum;
    kevo__task_keys_clear(&kept);
    return bench_cpu_now() - t0;
}

/* The task key alone, n times. */
static double run_keys(const kevo_task *task, size_t n, size_t *sink)
{
    uint64_t sum = 0;
    double t0 = bench_cpu_now();
    for (size_t i = 0; i < n; i++)
        sum += task_key(task);
    *sink += (size_t)sum;
    return bench_cpu_now() - t0;
}

/* What one task's submits carry, for the lines under the table. */
typedef struct task_figures {
    const char *name;
    size_t task_bytes, with_bytes, without_bytes;
    double ns_before, ns_now, ns_message, ns_task_message;
} task_figures;

/* A pipe whose buffer holds a whole message, so that one thread can write
 * it and then read it. */
static void open_pipe(int fd[2], size_t bytes)
{
    if (pipe(fd) != 0)
        die("pipe", NULL);
    size_t cap = 65536;
#ifdef F_SETPIPE_SZ
    if (bytes + KEVO__IPC_HEADER_SIZE > cap) {
        int got = fcntl(fd[1], F_SETPIPE_SZ, (int)(2 * bytes));
        if (got > 0)
            cap = (size_t)got;
    }
#endif
    if (bytes + KEVO__IPC_HEADER_SIZE > cap) {
        fprintf(stderr,
                "bench-handoff: an eval message of %zu bytes does not fit "
                "the pipe's %zu\n",
                bytes, cap);
        exit(1);
    }
}

static void bench_task(table *t, task_figures *fig, const char *srcdir,
                       const char *name, double scale, size_t *sink)
{
    kevo_task *task = load_task(srcdir, name);
    const kevo_candidate *cand = kevo_task_seed(task);
    kevo_error err;
    kevo_error_init(&err);
    char *text = NULL;
    json_error_t jerr;
    json_t *task_json = NULL;
    if (kevo_task_to_json(task, &text, &err) != KEVO_OK)
        die("kevo_task_to_json", &err);
    if (!(task_json = json_loads(text, 0, &jerr)))
        die("the task's JSON does not parse", NULL);
    uint64_t key = task_key(task);
    json_t *with = eval_message(task, task_json, key, cand, 1),
           *without = eval_message(task, NULL, key, cand, 1);
    *fig = (task_figures){.name = name,
                          .task_bytes = strlen(text),
                          .with_bytes = message_bytes(with),
                          .without_bytes = message_bytes(without)};
    free(text);
    json_decref(with);
    json_decref(without);
    int fd[2];
    open_pipe(fd, fig->with_bytes);
    size_t n = (size_t)(600 * scale) + 1;

    run_submits(task, task_json, cand, fd, MESSAGE_ONLY, n / 10, sink);
    double base = run_submits(task, task_json, cand, fd, MESSAGE_ONLY, n, sink);
    const row *b =
        add_row(t, NULL, (double)n, base, "%s: message by key alone", name);
    run_submits(task, task_json, cand, fd, SUBMIT_NOW, n / 10, sink);
    double now = run_submits(task, task_json, cand, fd, SUBMIT_NOW, n, sink);
    add_row(t, b, (double)n, now, "%s: submit now (task by key)", name);
    run_submits(task, task_json, cand, fd, SUBMIT_BEFORE, n / 10, sink);
    double before =
        run_submits(task, task_json, cand, fd, SUBMIT_BEFORE, n, sink);
    add_row(t, b, (double)n, before, "%s: submit before (task each time)",
            name);
    add_row(t, b, (double)n, run_keys(task, n, sink),
            "%s: task key alone (before)", name);
    size_t m = n / 10 + 1;
    run_task_messages(task_json, fd, m / 10 + 1, sink);
    double once = run_task_messages(task_json, fd, m, sink);
    add_row(t, b, (double)m, once, "%s: task message (once a worker)", name);
    fig->ns_now = 1e9 * now / (double)n;
    fig->ns_before = 1e9 * before / (double)n;
    fig->ns_message = 1e9 * base / (double)n;
    fig->ns_task_message = 1e9 * once / (double)m;
    close(fd[0]);
    close(fd[1]);
    json_decref(task_json);
    kevo_task_free(task);
}

/* ---- 3. the engine ------------------------------------------------------ */

/* A parameter of the candidate, 1 when unset. */
static int64_t param(const kevo_candidate *c, const char *name)
{
    int64_t v = 1;
    kevo_vars_get(kevo_candidate_assignment(c), name, &v);
    return v;
}

static double log2i(int64_t v)
{
    return v > 0 ? log2((double)v) : 0;
}

/* A cost model that costs nothing next to the engine: fitness peaks at
 * 128 x 128 tiles with 8 x 8 per thread; the behaviour is (shared-memory
 * staging, registers guessed from the thread's tile). */
static kevo_status score(const kevo_task *task, const kevo_candidate *c,
                         double *fitness, double *desc, void *user,
                         kevo_error *err)
{
    (void)task;
    (void)err;
    (*(size_t *)user)++;
    int64_t tm = param(c, "TM"), tn = param(c, "TN");
    *fitness = 1.0 / (1.0 + 0.3 * fabs(log2i(param(c, "BM")) - 7) +
                      0.3 * fabs(log2i(param(c, "BN")) - 7) +
                      0.2 * fabs(log2i(param(c, "BK")) - 3) +
                      0.2 * fabs(log2i(tm) - 3) + 0.2 * fabs(log2i(tn) - 3));
    desc[0] = 2;
    desc[1] = (double)(24 + tm * tn + tm + tn);
    return KEVO_OK;
}

static double run_search(const kevo_task *task, size_t evals, size_t *scored,
                         kevo_search_stats *stats)
{
    kevo_search *s = NULL;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_search_new(task, &s, &err) != KEVO_OK ||
        kevo_search_set_score_fn(s, score, scored, &err) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_SEED, SEED, &err) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, (int64_t)evals, &err) !=
            KEVO_OK ||
        kevo_search_add_operator(s, "params", NULL, NULL, 1.0, &err) != KEVO_OK)
        die("cannot set up the search", &err);
    double t0 = bench_cpu_now();
    if (kevo_search_run(s, &err) != KEVO_OK)
        die("the search", &err);
    double t = bench_cpu_now() - t0;
    stats->size = sizeof *stats;
    kevo_search_get_stats(s, stats);
    kevo_search_free(s);
    return t;
}

/* sgemm's seed with two more parameters, which its code never reads: the
 * seed's own space has fewer assignments than the evaluations timed, and
 * the params operator never proposes one twice. */
static kevo_task *salted_task(const char *srcdir)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_task *task = bench_salted_task(
        srcdir, "sgemm", "//   SALT_A in 0..31 = 0\n//   SALT_B in 0..31 = 0\n",
        &err);
    if (!task)
        die("the salted seed", &err);
    return task;
}

/* The least a search must do per evaluation, by hand: pick a parent
 * elite, copy it into a child with one parameter changed, score the child
 * and offer it to the archive, n times. */
static double run_by_hand(const kevo_task *task, size_t n, size_t *scored)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_archive *a = NULL;
    kevo_rng *rng = kevo_rng_new(SEED, "by hand");
    double d[2] = {0, 0}, f = 0;
    const kevo_candidate *seed = kevo_task_seed(task);
    if (!rng || kevo_archive_new_for_task(task, &a, &err) != KEVO_OK ||
        kevo_archive_dimension_count(a) != 2 ||
        score(task, seed, &f, d, scored, &err) != KEVO_OK ||
        kevo_archive_insert(a, seed, f, d, NULL, NULL, &err) != KEVO_OK)
        die("cannot set up the archive", &err);
    const kevo_paramspace *space = kevo_candidate_params(seed);
    size_t np = kevo_paramspace_count(space);
    double t0 = bench_cpu_now();
    for (size_t i = 0; i < n; i++) {
        size_t cell;
        if (kevo_archive_select(a, rng, KEVO_SELECT_UNIFORM, 0, &cell, &err))
            die("select", &err);
        kevo_candidate *c =
            kevo_candidate_copy(kevo_archive_candidate(a, cell));
        if (!c)
            die("kevo_candidate_copy", NULL);
        size_t p = (size_t)kevo_rng_uniform_int(rng, np);
        size_t k = (size_t)kevo_rng_uniform_int(
            rng, kevo_paramspace_domain_size(space, p));
        kevo_candidate_set_param(c, kevo_paramspace_name(space, p),
                                 kevo_paramspace_domain_value(space, p, k),
                                 NULL);
        d[0] = d[1] = 0;
        if (score(task, c, &f, d, scored, &err) != KEVO_OK ||
            kevo_archive_insert(a, c, f, d, NULL, NULL, &err) != KEVO_OK)
            die("insert", &err);
        kevo_candidate_free(c);
    }
    double t = bench_cpu_now() - t0;
    kevo_archive_free(a);
    kevo_rng_free(rng);
    return t;
}

/* What the engine section ran, for the line under its table. */
typedef struct engine_figures {
    size_t searches, per;
    uint64_t evaluations, proposals;
    double seconds;
} engine_figures;

static void bench_engine(table *t, engine_figures *fig, const kevo_task *task,
                         double scale)
{
    size_t total = (size_t)(ENGINE_EVALS * scale), scored = 0;
    if (total == 0)
        total = 1;
    size_t per = total < SEARCH_EVALS ? total : SEARCH_EVALS;
    *fig = (engine_figures){.searches = (total + per - 1) / per, .per = per};
    size_t evals = fig->searches * per;
    kevo_search_stats st;
    run_by_hand(task, evals / 10, &scored);
    const row *base =
        add_row(t, NULL, (double)evals, run_by_hand(task, evals, &scored),
                "baseline: select, copy, set, score, insert");
    run_search(task, per / 5 + 1, &scored, &st);
    for (size_t i = 0; i < fig->searches; i++) {
        fig->seconds += run_search(task, per, &scored, &st);
        fig->evaluations += st.evaluations;
        fig->proposals += st.proposals;
        if (st.stop != KEVO_STOP_EVALUATIONS)
            fprintf(stderr, "bench-handoff: a search stopped early (%s)\n",
                    kevo_stop_reason_name(st.stop));
    }
    add_row(t, base, (double)fig->evaluations, fig->seconds,
            "kevo_search_run: params plugin, scored");
}

/* ---- the tables --------------------------------------------------------- */

static void print_table(const char *title, const table *t)
{
    printf("\n%s\n%-44s %9s %10s %12s %8s\n", title, "operation", "ops",
           "ns/op", "ops/s", "vs base");
    for (size_t i = 0; i < t->n; i++) {
        const row *r = &t->rows[i];
        double rate = r->ops / r->seconds;
        printf("%-44s %9.0f %10.1f %12.0f %8.3f\n", r->name, r->ops,
               1e9 * r->seconds / r->ops, rate, rate / r->base_rate);
    }
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1;
    if (!(scale > 0)) {
        fprintf(stderr, "usage: bench-handoff [scale > 0]\n");
        return 2;
    }
    bench_operator_path();
    const char *srcdir = bench_srcdir();
    int cpu = bench_pin_to_one_cpu();
    double wall0 = bench_now(), cpu0 = bench_cpu_now();
    size_t sink = 0;
    kevo_task *sgemm = load_task(srcdir, "sgemm");
    kevo_task *salted = salted_task(srcdir);

    table cand = {0}, task = {0}, engine = {0};
    task_figures tf[2];
    engine_figures ef;
    bench_candidate(&cand, sgemm, scale, &sink);
    bench_task(&task, &tf[0], srcdir, "sgemm", scale, &sink);
    bench_task(&task, &tf[1], srcdir, "attention_bf16", scale, &sink);
    bench_engine(&engine, &ef, salted, scale);

    double wall = bench_now() - wall0, used = bench_cpu_now() - cpu0;
    printf("kevo handoff benchmark, one thread");
    if (cpu >= 0)
        printf(", pinned to CPU %d", cpu);
    printf("; times are the process's CPU time (%.1f s of %.1f s of wall "
           "time)\n",
           used, wall);
    print_table("1. a candidate handed on", &cand);
    const kevo_candidate *seed = kevo_task_seed(sgemm);
    printf("candidate: sgemm's seed, %zu B of source, %zu parameters, %zu "
           "launch(es): %.0f ns a handoff\n",
           strlen(kevo_candidate_source(seed)),
           kevo_paramspace_count(kevo_candidate_params(seed)),
           kevo_candidate_launch_count(seed),
           1e9 * cand.rows[cand.n - 1].seconds / cand.rows[cand.n - 1].ops);
    print_table("2. the task in every submit", &task);
    for (size_t i = 0; i < 2; i++)
        printf("task: %s: %zu B of task JSON, once a worker now (eval "
               "message %zu B, %zu B with the task before); a submit %.0f "
               "ns now, %.0f ns before (%.0f and %.0f ns for the task); the "
               "task message %.0f ns\n",
               tf[i].name, tf[i].task_bytes, tf[i].without_bytes,
               tf[i].with_bytes, tf[i].ns_now, tf[i].ns_before,
               tf[i].ns_now - tf[i].ns_message,
               tf[i].ns_before - tf[i].ns_message, tf[i].ns_task_message);
    print_table("3. the engine end to end", &engine);
    printf("engine: %.0f evaluations/s, %.1f us an evaluation (%llu "
           "evaluations: %zu search(es) of %zu; %llu children proposed)\n",
           (double)ef.evaluations / ef.seconds,
           1e6 * ef.seconds / (double)ef.evaluations,
           (unsigned long long)ef.evaluations, ef.searches, ef.per,
           (unsigned long long)ef.proposals);
    if (sink == 42)
        printf("\n");
    kevo_task_free(salted);
    kevo_task_free(sgemm);
    return 0;
}

/*
 * timing.c: timing a candidate's launches. CUPTI's activity API records
 * every kernel that runs in the process (CUPTI_ACTIVITY_KIND_CONCURRENT_
 * KERNEL), whatever its stream; a repetition's time is from the first start
 * to the last end of the kernels that ran in it, leaving out the worker's
 * own (kevo_internal_*). Every repetition is also bracketed by CUDA events,
 * which stand in where CUPTI is missing or recorded nothing.
 *
 * With the L2 flush, repetitions are enqueued in batches, each repetition
 * [flush, event, launches, event], with one host wait per batch; after it
 * the batch's records are split into repetitions by the flush kernel's
 * records (kevo__split_reps). Without the flush there is nothing to split
 * by: the worker waits for each repetition to finish before it starts the
 * next, and reads CUPTI's clock then: a kernel belongs to the repetition
 * whose end mark is the first after its start.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

#define INTERNAL_PREFIX "kevo_internal_"
#define FLUSH_NAME "kevo_internal_flush_l2"
#define CUPTI_BUFFER_BYTES (4u << 20)
#define BATCH 10 /* repetitions enqueued at once after the first min_reps */

typedef kevo__krec krec;

/* CUPTI hands buffers back on a thread of its own: what they hold goes to
 * this list under the lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static krec *recs;
static size_t nrecs, caprecs;
static bool recs_lost; /* no memory for a record */
static bool armed;     /* keeping records: only while timing */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size,
                                      size_t *max_records)
{
    *buffer = aligned_alloc(8, CUPTI_BUFFER_BYTES);
    *size = *buffer ? CUPTI_BUFFER_BYTES : 0;
    *max_records = 0;
}

static kevo__krec_kind kind_of(const char *name)
{
    if (!name || strncmp(name, INTERNAL_PREFIX, strlen(INTERNAL_PREFIX)) != 0)
        return KEVO__KREC_CANDIDATE;
    return strcmp(name, FLUSH_NAME) == 0 ? KEVO__KREC_INTERNAL_FLUSH
                                         : KEVO__KREC_INTERNAL_OTHER;
}

static void add_record(uint64_t start, uint64_t end, const char *name)
{
    if (!armed)
        return;
    if (nrecs == caprecs) {
        size_t ncap = caprecs ? 2 * caprecs : 1024;
        krec *n = realloc(recs, ncap * sizeof(*n));
        if (!n) {
            recs_lost = true;
            return;
        }
        recs = n;
        caprecs = ncap;
    }
    recs[nrecs++] = (krec){start, end, kind_of(name)};
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream,
                                      uint8_t *buffer, size_t size,
                                      size_t valid)
{
    CUpti_Activity *rec = NULL;
    (void)ctx;
    (void)stream;
    (void)size;
    pthread_mutex_lock(&lock);
    while (valid > 0 && kevo__cupti.cuptiActivityGetNextRecord(
                            buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
            rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            const CUpti_ActivityKernel10 *k =
                (const CUpti_ActivityKernel10 *)rec;
            add_record(k->start, k->end, k->name);
        }
    }
    pthread_mutex_unlock(&lock);
    free(buffer);
}

void kevo__timing_init(kevo__gpu *g)
{
    kevo_error e = KEVO__ERROR_INIT;
    const char *timer = getenv("KEVO_WORKER_TIMER");
    g->cupti = false;
    if (timer && strcmp(timer, "events") == 0) {
        snprintf(g->cupti_note, sizeof(g->cupti_note),
                 "KEVO_WORKER_TIMER=events: timed with CUDA events");
        return;
    }
    if (kevo__cupti_load(&e) != KEVO_OK ||
        kevo__cupti_check(kevo__cupti.cuptiActivityRegisterCallbacks(
                              buffer_requested, buffer_completed),
                          "cuptiActivityRegisterCallbacks", &e) != KEVO_OK ||
        kevo__cupti_check(kevo__cupti.cuptiActivityEnable(
                              CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
                          "cuptiActivityEnable(CONCURRENT_KERNEL)",
                          &e) != KEVO_OK) {
        snprintf(g->cupti_note, sizeof(g->cupti_note), "%s", e.text);
        return;
    }
    g->cupti = true;
}

kevo_status kevo__timing_activity(kevo__gpu *g, bool on, kevo_error *err)
{
    if (!g->cupti)
        return KEVO_OK;
    if (on)
        return kevo__cupti_check(kevo__cupti.cuptiActivityEnable(
                                     CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
                                 "cuptiActivityEnable", err);
    kevo_status rc = kevo__cupti_check(
        kevo__cupti.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
        "cuptiActivityDisable", err);
    if (rc == KEVO_OK)
        rc = kevo__cupti_check(
            kevo__cupti.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
            "cuptiActivityFlushAll", err);
    return rc;
}

/* Delivers every record of finished kernels (the caller synchronized). */
static kevo_status flush_records(kevo_error *err)
{
    return kevo__cupti_check(
        kevo__cupti.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
        "cuptiActivityFlushAll", err);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The p-quantile of sorted x[0..n) by linear interpolation. */
static double quantile(const double *x, size_t n, double p)
{
    double pos = p * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n)
        return x[n - 1];
    return x[i] + (pos - (double)i) * (x[i + 1] - x[i]);
}

void kevo__times_stats(double *samples, size_t n, kevo__times *out)
{
    out->reps = n;
    if (n == 0) {
        out->median = out->min = out->max = out->mean = NAN;
        out->cv = out->spread = NAN;
        return;
    }
    double sum = 0.0, sq = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += samples[i];
    double mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        sq += (samples[i] - mean) * (samples[i] - mean);
    qsort(samples, n, sizeof(*samples), cmp_double);
    out->mean = mean;
    out->min = samples[0];
    out->max = samples[n - 1];
    out->median = quantile(samples, n, 0.5);
    out->cv = n > 1 && mean > 0.0 ? sqrt(sq / (double)(n - 1)) / mean : 0.0;
    /* The precision of the median: the half-width of its ~95% confidence
     * interval, 1.57 IQR / sqrt(n) (McGill, Tukey and Larsen, 1978), over
     * the median. It shrinks as repetitions accumulate, so a target of 1%
     * is reached by kernels whose repetitions scatter by a few percent. */
    out->spread =
        out->median > 0.0
            ? 1.57 * (quantile(samples, n, 0.75) - quantile(samples, n, 0.25)) /
                  sqrt((double)n) / out->median
            : 0.0;
}

/* Per repetition r (its kernels start after mark[r - 1], mark[-1] being
 * base, and no later than mark[r]), first start to last end of the
 * candidate's kernels into t[r] (seconds) and their number into cnt[r].
 * Returns the most kernels seen in one repetition, and in *all whether
 * CUPTI saw every repetition (when it did not, t and cnt are partly
 * written). */
static size_t from_records(uint64_t base, const uint64_t *mark, size_t reps,
                           double *t, size_t *cnt, bool *all)
{
    uint64_t *first = calloc(reps + 1, sizeof(*first));
    uint64_t *last = calloc(reps + 1, sizeof(*last));
    size_t *count = calloc(reps + 1, sizeof(*count)), most = 0;
    *all = false;
    if (!first || !last || !count)
        goto done;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nrecs; i++) {
        const krec *k = &recs[i];
        if (k->kind != KEVO__KREC_CANDIDATE || k->start <= base ||
            k->start > mark[reps - 1])
            continue;
        size_t lo = 0, hi = reps - 1; /* the first r with start <= mark[r] */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (k->start <= mark[mid])
                hi = mid;
            else
                lo = mid + 1;
        }
        if (count[lo] == 0 || k->start < first[lo])
            first[lo] = k->start;
        if (count[lo] == 0 || k->end > last[lo])
            last[lo] = k->end;
        count[lo]++;
    }
    bool lost = recs_lost;
    pthread_mutex_unlock(&lock);
    *all = !lost;
    for (size_t r = 0; r < reps; r++) {
        if (count[r] == 0 || last[r] < first[r]) {
            *all = false;
            continue;
        }
        t[r] = 1e-9 * (double)(last[r] - first[r]);
        cnt[r] = count[r];
        most = count[r] > most ? count[r] : most;
    }
done:
    free(first);
    free(last);
    free(count);
    return most;
}

/* Forgets what CUPTI recorded so far and keeps what comes next (on), or
 * stops keeping records (off). */
static kevo_status arm_records(bool on, kevo_error *err)
{
    /* No flush here: a forced flush waits on CUPTI, and records
     * of earlier kernels that CUPTI delivers late are left out anyway, by
     * their start before the base timestamp (or because the list is not
     * armed). */
    (void)err;
    pthread_mutex_lock(&lock);
    nrecs = 0;
    recs_lost = false;
    armed = on;
    pthread_mutex_unlock(&lock);
    return KEVO_OK;
}

/* One run as timing does it: zero scratch, the L2 flush, the launches. */
static kevo_status one_run(kevo__gpu *g, const kevo__plan *plan, bool flush,
                           CUevent before, CUevent after, kevo_error *err)
{
    kevo_status rc = kevo__plan_prepare(g, plan, flush, err);
    if (rc == KEVO_OK && before)
        rc = kevo__cu_check(kevo__cu.cuEventRecord(before, NULL),
                            "cuEventRecord", err);
    if (rc == KEVO_OK)
        rc = kevo__plan_launch(plan, err);
    if (rc == KEVO_OK && after)
        rc = kevo__cu_check(kevo__cu.cuEventRecord(after, NULL),
                            "cuEventRecord", err);
    return rc;
}

size_t kevo__split_reps(const kevo__krec *sorted, size_t n, size_t reps,
                        uint64_t *first, uint64_t *last, size_t *count)
{
    size_t flushes = 0; /* the kernels seen now are repetition flushes - 1's */
    for (size_t r = 0; r < reps; r++) {
        first[r] = last[r] = 0;
        count[r] = 0;
    }
    for (size_t i = 0; i < n; i++) {
        const kevo__krec *k = &sorted[i];
        if (k->kind == KEVO__KREC_INTERNAL_FLUSH) {
            flushes++;
            continue;
        }
        if (k->kind != KEVO__KREC_CANDIDATE || flushes == 0 || flushes > reps)
            continue;
        size_t r = flushes - 1;
        if (count[r] == 0 || k->start < first[r])
            first[r] = k->start;
        if (count[r] == 0 || k->end > last[r])
            last[r] = k->end;
        count[r]++;
    }
    return flushes;
}

/* By start; a flush before any other record of the same start. */
static int cmp_krec(const void *a, const void *b)
{
    const krec *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (y->kind == KEVO__KREC_INTERNAL_FLUSH) -
           (x->kind == KEVO__KREC_INTERNAL_FLUSH);
}

/* A batch of b runs from the records of kernels that started at or after
 * base: first start to last end of each one's candidate kernels into
 * t[0..b) (seconds) and their number into cnt[0..b). False when a record
 * was lost, a flush record is missing or a run has no kernels (t is then
 * partly written). */
static bool batch_from_records(uint64_t base, size_t b, double *t, size_t *cnt)
{
    krec *sorted = NULL;
    uint64_t *first = calloc(b, sizeof(*first));
    uint64_t *last = calloc(b, sizeof(*last));
    size_t m = 0;
    bool all = false;
    pthread_mutex_lock(&lock);
    if (!recs_lost && nrecs > 0 &&
        (sorted = malloc(nrecs * sizeof(*sorted))) != NULL)
        for (size_t i = 0; i < nrecs; i++)
            if (recs[i].start >= base)
                sorted[m++] = recs[i];
    pthread_mutex_unlock(&lock);
    if (!sorted || !first || !last)
        goto done;
    qsort(sorted, m, sizeof(*sorted), cmp_krec);
    all = kevo__split_reps(sorted, m, b, first, last, cnt) == b;
    for (size_t r = 0; all && r < b; r++) {
        if (cnt[r] == 0 || last[r] < first[r]) {
            all = false;
            break;
        }
        t[r] = 1e-9 * (double)(last[r] - first[r]);
    }
done:
    free(sorted);
    free(first);
    free(last);
    return all;
}

/* A plan's first reps samples, src, into out: the samples and their
 * statistics (stats is room for reps values). */
static void take_samples(kevo__times *out, const double *src, size_t reps,
                         double *stats)
{
    memcpy(out->samples, src, reps * sizeof(*out->samples));
    memcpy(stats, src, reps * sizeof(*stats));
    kevo__times_stats(stats, reps, out);
}

/* True when every plan's median is known to the target, or the cap is
 * reached. */
static bool enough(const kevo__times *out, size_t n, size_t reps,
                   size_t min_reps, const kevo__timing_config *cfg, double t0)
{
    if (1e3 * (kevo__seconds_now() - t0) >= cfg->cap_ms * (double)n)
        return true;
    if (reps < min_reps)
        return false;
    for (size_t k = 0; k < n; k++) {
        if (!(out[k].spread <= cfg->target_spread))
            return false;
    }
    return true;
}

/* Timing with the L2 flush: batches of rounds, a round being one run of
 * each plan in turn, with one host wait per batch. est: seconds one round
 * took in the warm-ups (0: not known). */
static kevo_status time_batches(kevo__gpu *g, const kevo__plan *const *plans,
                                size_t n, const kevo__timing_config *cfg,
                                double t0, double est, size_t min_reps,
                                size_t max_reps, kevo__times *out,
                                kevo_error *err)
{
    size_t ring = min_reps > BATCH ? min_reps : BATCH;
    ring = ring < max_reps ? ring : max_reps;
    size_t slots = ring * n;
    CUevent *ev = calloc(2 * slots, sizeof(*ev));
    double *event_t = calloc(max_reps * n, sizeof(*event_t));
    double *cupti_t = calloc(max_reps * n, sizeof(*cupti_t));
    double *stats = calloc(max_reps, sizeof(*stats));
    double *bt = calloc(slots, sizeof(*bt));
    size_t *cnt = calloc(slots, sizeof(*cnt));
    size_t *most = calloc(n, sizeof(*most));
    bool cupti = g->cupti;
    size_t reps = 0;
    kevo_status rc = KEVO_OK;

    if (!ev || !event_t || !cupti_t || !stats || !bt || !cnt || !most) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; rc == KEVO_OK && i < 2 * slots; i++)
        rc = kevo__cu_check(kevo__cu.cuEventCreate(&ev[i], CU_EVENT_DEFAULT),
                            "cuEventCreate", err);
    while (rc == KEVO_OK && reps < max_reps) {
        size_t b = reps < min_reps ? min_reps - reps : BATCH;
        b = b < max_reps - reps ? b : max_reps - reps;
        b = b < ring ? b : ring;
        /* Near the cap, only the rounds that fit (at least one). */
        double left =
            1e-3 * cfg->cap_ms * (double)n - (kevo__seconds_now() - t0);
        if (est > 0.0 && (double)b * est > left)
            b = left > est ? (size_t)(left / est) : 1;
        uint64_t base = 0;
        if (cupti) {
            kevo_error e = KEVO__ERROR_INIT;
            cupti = arm_records(true, &e) == KEVO_OK &&
                    kevo__cupti.cuptiGetTimestamp(&base) == CUPTI_SUCCESS;
        }
        double tb = kevo__seconds_now();
        /* Run i * n + k is plan k's repetition reps + i. */
        for (size_t i = 0; rc == KEVO_OK && i < b * n; i++)
            rc = one_run(g, plans[i % n], true, ev[2 * i], ev[2 * i + 1], err);
        if (rc == KEVO_OK)
            rc = kevo__gpu_sync("timed runs", err);
        for (size_t i = 0; rc == KEVO_OK && i < b * n; i++) {
            float ms = 0.0f;
            rc = kevo__cu_check(
                kevo__cu.cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]),
                "cuEventElapsedTime", err);
            event_t[(i % n) * max_reps + reps + i / n] = 1e-3 * (double)ms;
        }
        if (rc != KEVO_OK)
            break;
        est = (kevo__seconds_now() - tb) / (double)b;
        if (cupti) {
            kevo_error e = KEVO__ERROR_INIT;
            cupti = flush_records(&e) == KEVO_OK &&
                    batch_from_records(base, b * n, bt, cnt);
            for (size_t i = 0; cupti && i < b * n; i++) {
                size_t k = i % n;
                cupti_t[k * max_reps + reps + i / n] = bt[i];
                most[k] = cnt[i] > most[k] ? cnt[i] : most[k];
            }
        }
        reps += b;
        /* CUPTI for every repetition or events for every one, never a mix */
        for (size_t k = 0; k < n; k++) {
            out[k].kernels_per_rep =
                cupti ? most[k] : kevo__plan_runs(plans[k]);
            take_samples(&out[k], (cupti ? cupti_t : event_t) + k * max_reps,
                         reps, stats);
        }
        if (enough(out, n, reps, min_reps, cfg, t0))
            break;
    }
    for (size_t k = 0; k < n; k++)
        out[k].timer = cupti ? "cupti" : "events";
done:
    for (size_t i = 0; ev && i < 2 * slots; i++)
        if (ev[i])
            kevo__cu.cuEventDestroy(ev[i]);
    free(ev);
    free(event_t);
    free(cupti_t);
    free(stats);
    free(bt);
    free(cnt);
    free(most);
    return rc;
}

/* Timing without the L2 flush: rounds of one run of each plan in turn, a
 * host wait after each run, CUPTI's clock read then to mark where it
 * ended. */
static kevo_status time_each(kevo__gpu *g, const kevo__plan *const *plans,
                             size_t n, const kevo__timing_config *cfg,
                             double t0, size_t min_reps, size_t max_reps,
                             kevo__times *out, kevo_error *err)
{
    CUevent before = NULL, after = NULL;
    size_t runs = max_reps * n;
    uint64_t base = 0, *mark = calloc(runs + 1, sizeof(*mark));
    double *event_t = calloc(runs + 1, sizeof(*event_t));
    double *rec_t = calloc(runs + 1, sizeof(*rec_t));
    double *plan_t = calloc(max_reps + 1, sizeof(*plan_t));
    double *stats = calloc(max_reps + 1, sizeof(*stats));
    bool cupti = g->cupti;
    size_t reps = 0, done_runs = 0;
    size_t *cnt = calloc(runs + 1, sizeof(*cnt));
    kevo_status rc = KEVO_OK;

    if (!mark || !event_t || !rec_t || !plan_t || !stats || !cnt) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    rc = kevo__cu_check(kevo__cu.cuEventCreate(&before, CU_EVENT_DEFAULT),
                        "cuEventCreate", err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(kevo__cu.cuEventCreate(&after, CU_EVENT_DEFAULT),
                            "cuEventCreate", err);
    if (rc == KEVO_OK && cupti) {
        kevo_error e = KEVO__ERROR_INIT;
        cupti = arm_records(true, &e) == KEVO_OK &&
                kevo__cupti.cuptiGetTimestamp(&base) == CUPTI_SUCCESS;
    }
    while (rc == KEVO_OK && reps < max_reps) {
        /* One round; run i * n + k is plan k's repetition i. */
        for (size_t k = 0; rc == KEVO_OK && k < n; k++) {
            float ms = 0.0f;
            rc = one_run(g, plans[k], cfg->flush_l2, before, after, err);
            if (rc == KEVO_OK)
                rc = kevo__gpu_sync("a timed run", err);
            if (rc == KEVO_OK)
                rc = kevo__cu_check(
                    kevo__cu.cuEventElapsedTime(&ms, before, after),
                    "cuEventElapsedTime", err);
            if (rc != KEVO_OK)
                break;
            if (cupti && kevo__cupti.cuptiGetTimestamp(&mark[done_runs]) !=
                             CUPTI_SUCCESS)
                cupti = false;
            event_t[done_runs++] = 1e-3 * (double)ms;
        }
        if (rc != KEVO_OK)
            break;
        reps++;
        bool capped =
            1e3 * (kevo__seconds_now() - t0) >= cfg->cap_ms * (double)n;
        bool look = reps >= min_reps &&
                    ((reps - min_reps) % 10 == 0 || reps == max_reps || capped);
        if (!look && !capped)
            continue;
        bool all = false;
        const double *src = event_t;
        if (cupti) {
            kevo_error e = KEVO__ERROR_INIT;
            if (flush_records(&e) == KEVO_OK)
                from_records(base, mark, done_runs, rec_t, cnt, &all);
            cupti = all; /* events for every repetition, never a mix */
            if (all)
                src = rec_t;
        }
        for (size_t k = 0; k < n; k++) {
            size_t most = 0;
            for (size_t i = 0; i < reps; i++) {
                plan_t[i] = src[i * n + k];
                most = cnt[i * n + k] > most ? cnt[i * n + k] : most;
            }
            out[k].kernels_per_rep = cupti ? most : kevo__plan_runs(plans[k]);
            take_samples(&out[k], plan_t, reps, stats);
        }
        if (enough(out, n, reps, min_reps, cfg, t0))
            break;
    }
    if (rc == KEVO_OK && reps > 0 && out[0].reps != reps) {
        for (size_t k = 0; k < n; k++) {
            for (size_t i = 0; i < reps; i++)
                plan_t[i] = event_t[i * n + k];
            out[k].kernels_per_rep = kevo__plan_runs(plans[k]);
            take_samples(&out[k], plan_t, reps, stats);
        }
        cupti = false;
    }
    for (size_t k = 0; k < n; k++)
        out[k].timer = cupti ? "cupti" : "events";
done:
    if (before)
        kevo__cu.cuEventDestroy(before);
    if (after)
        kevo__cu.cuEventDestroy(after);
    free(mark);
    free(event_t);
    free(rec_t);
    free(plan_t);
    free(stats);
    free(cnt);
    return rc;
}

kevo_status kevo__time_plans(kevo__gpu *g, const kevo__plan *const *plans,
                             size_t n, const kevo__timing_config *cfg,
                             kevo__times *out, kevo_error *err)
{
    size_t max_reps = cfg->max_reps > 0 ? (size_t)cfg->max_reps : 1;
    size_t min_reps = cfg->min_reps > 0 ? (size_t)cfg->min_reps : 1;
    double t0 = kevo__seconds_now(), est = 0.0;
    kevo_status rc = KEVO_OK;

    memset(out, 0, n * sizeof(*out));
    for (size_t k = 0; k < n && rc == KEVO_OK; k++) {
        out[k].samples = calloc(max_reps + 1, sizeof(*out[k].samples));
        if (!out[k].samples)
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    /* Warm-ups: untimed, back to back, one host wait. */
    for (int w = 0; rc == KEVO_OK && w < cfg->warmup; w++)
        for (size_t k = 0; rc == KEVO_OK && k < n; k++)
            rc = one_run(g, plans[k], cfg->flush_l2, NULL, NULL, err);
    if (rc == KEVO_OK && cfg->warmup > 0) {
        rc = kevo__gpu_sync("the warm-up runs", err);
        est = (kevo__seconds_now() - t0) / (double)cfg->warmup;
    }
    if (rc == KEVO_OK)
        rc = cfg->flush_l2 ? time_batches(g, plans, n, cfg, t0, est, min_reps,
                                          max_reps, out, err)
                           : time_each(g, plans, n, cfg, t0, min_reps, max_reps,
                                       out, err);
    if (g->cupti && !kevo__cu_sticky(kevo__cu_error_of(err))) {
        kevo_error e = KEVO__ERROR_INIT;
        arm_records(false, &e);
    }
    if (rc != KEVO_OK) {
        for (size_t k = 0; k < n; k++) {
            free(out[k].samples);
            out[k].samples = NULL;
        }
    }
    return rc;
}

kevo_status kevo__time_plan(kevo__gpu *g, const kevo__plan *plan,
                            const kevo__timing_config *cfg, kevo__times *out,
                            kevo_error *err)
{
    return kevo__time_plans(g, &plan, 1, cfg, out, err);
}

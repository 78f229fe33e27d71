/*
 * timing.c: timing a candidate's launches. CUPTI's activity API records
 * every kernel that runs in the process (CUPTI_ACTIVITY_KIND_CONCURRENT_
 * KERNEL), whatever its stream; a repetition's time is from the first start
 * to the last end of the kernels that ran in it, leaving out the worker's
 * own (kevo_internal_*). Every repetition is also bracketed by CUDA events,
 * which stand in where CUPTI is missing or recorded nothing.
 *
 * The worker waits for each repetition to finish before it starts the
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
#define CUPTI_BUFFER_BYTES (4u << 20)

/* One kernel CUPTI recorded. */
typedef struct krec {
    uint64_t start, end; /* ns, CUPTI's clock */
    bool internal;
} krec;

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
    recs[nrecs++] = (krec){
        start, end,
        name && strncmp(name, INTERNAL_PREFIX, strlen(INTERNAL_PREFIX)) == 0};
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
 * candidate's kernels into t[r] (seconds). Returns the most kernels seen
 * in one repetition, and in *all whether CUPTI saw every repetition (when
 * it did not, t is partly written). */
static size_t from_records(uint64_t base, const uint64_t *mark, size_t reps,
                           double *t, bool *all)
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
        if (k->internal || k->start <= base || k->start > mark[reps - 1])
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

kevo_status kevo__time_plan(kevo__gpu *g, const kevo__plan *plan,
                            const kevo__timing_config *cfg, kevo__times *out,
                            kevo_error *err)
{
    size_t max_reps = cfg->max_reps > 0 ? (size_t)cfg->max_reps : 1;
    size_t min_reps = cfg->min_reps > 0 ? (size_t)cfg->min_reps : 1;
    CUevent before = NULL, after = NULL;
    uint64_t base = 0, *mark = calloc(max_reps + 1, sizeof(*mark));
    double *event_t = calloc(max_reps + 1, sizeof(*event_t));
    double *stats = calloc(max_reps + 1, sizeof(*stats));
    double t0 = kevo__seconds_now();
    bool cupti = g->cupti;
    size_t reps = 0;
    kevo_status rc = KEVO_OK;

    memset(out, 0, sizeof(*out));
    out->samples = calloc(max_reps + 1, sizeof(*out->samples));
    if (!mark || !event_t || !stats || !out->samples) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    rc = kevo__cu_check(kevo__cu.cuEventCreate(&before, CU_EVENT_DEFAULT),
                        "cuEventCreate", err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(kevo__cu.cuEventCreate(&after, CU_EVENT_DEFAULT),
                            "cuEventCreate", err);
    for (int w = 0; rc == KEVO_OK && w < cfg->warmup; w++) {
        rc = one_run(g, plan, cfg->flush_l2, NULL, NULL, err);
        if (rc == KEVO_OK)
            rc = kevo__gpu_sync("a warm-up run", err);
        if (1e3 * (kevo__seconds_now() - t0) >= cfg->cap_ms)
            break;
    }
    if (rc == KEVO_OK && cupti) {
        kevo_error e = KEVO__ERROR_INIT;
        cupti = arm_records(true, &e) == KEVO_OK &&
                kevo__cupti.cuptiGetTimestamp(&base) == CUPTI_SUCCESS;
    }
    while (rc == KEVO_OK && reps < max_reps) {
        float ms = 0.0f;
        rc = one_run(g, plan, cfg->flush_l2, before, after, err);
        if (rc == KEVO_OK)
            rc = kevo__gpu_sync("a timed run", err);
        if (rc == KEVO_OK)
            rc = kevo__cu_check(kevo__cu.cuEventElapsedTime(&ms, before, after),
                                "cuEventElapsedTime", err);
        if (rc != KEVO_OK)
            break;
        if (cupti &&
            kevo__cupti.cuptiGetTimestamp(&mark[reps]) != CUPTI_SUCCESS)
            cupti = false;
        event_t[reps++] = 1e-3 * (double)ms;
        bool capped = 1e3 * (kevo__seconds_now() - t0) >= cfg->cap_ms;
        bool look = reps >= min_reps &&
                    ((reps - min_reps) % 10 == 0 || reps == max_reps || capped);
        if (!look && !capped)
            continue;
        memcpy(out->samples, event_t, reps * sizeof(*event_t));
        bool all = false;
        out->kernels_per_rep = plan->prog->nlaunches;
        if (cupti) {
            kevo_error e = KEVO__ERROR_INIT;
            size_t most = 0;
            if (flush_records(&e) == KEVO_OK)
                most = from_records(base, mark, reps, out->samples, &all);
            cupti = all;
            if (all)
                out->kernels_per_rep = most;
            else /* events for every repetition, never a mix */
                memcpy(out->samples, event_t, reps * sizeof(*event_t));
        }
        memcpy(stats, out->samples, reps * sizeof(*stats));
        kevo__times_stats(stats, reps, out);
        if (capped || (reps >= min_reps && out->spread <= cfg->target_spread))
            break;
    }
    if (rc == KEVO_OK && out->reps != reps) {
        memcpy(out->samples, event_t, reps * sizeof(*event_t));
        memcpy(stats, out->samples, reps * sizeof(*stats));
        kevo__times_stats(stats, reps, out);
        cupti = false;
    }
    out->timer = cupti ? "cupti" : "events";
done:
    if (g->cupti && !kevo__cu_sticky(kevo__cu_error_of(err))) {
        kevo_error e = KEVO__ERROR_INIT;
        arm_records(false, &e);
    }
    if (before)
        kevo__cu.cuEventDestroy(before);
    if (after)
        kevo__cu.cuEventDestroy(after);
    free(mark);
    free(event_t);
    free(stats);
    if (rc != KEVO_OK) {
        free(out->samples);
        out->samples = NULL;
    }
    return rc;
}

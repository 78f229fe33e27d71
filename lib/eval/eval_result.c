/*
 * eval_result.c: the evaluation result: its getters, the figures derived
 * from its measurements, and the failure constructor (see eval_private.h).
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eval_private.h"
#include "model/candidate_private.h"
#include "model/descriptor.h"

static const char *const verdict_names[] = {
    "ok",      "compile_error", "rejected",       "launch_error", "fault",
    "timeout", "wrong",         "input_modified", "worker_died",
};

const char *kevo_verdict_name(kevo_verdict verdict)
{
    if ((unsigned)verdict < KEVO_ARRAY_SIZE(verdict_names))
        return verdict_names[verdict];
    return "unknown";
}

bool kevo__verdict_parse(const char *name, kevo_verdict *out)
{
    for (size_t i = 0; name && i < KEVO_ARRAY_SIZE(verdict_names); i++) {
        if (strcmp(verdict_names[i], name) == 0) {
            *out = (kevo_verdict)i;
            return true;
        }
    }
    return false;
}

/* ---- making one --------------------------------------------------------- */

static double known_or_zero(double x)
{
    return isfinite(x) && x > 0 ? x : 0;
}

kevo_eval_result *kevo__eval_result_alloc(const kevo_candidate *cand,
                                          const char *task, kevo_peak peak,
                                          kevo_shape_set set,
                                          const kevo_eval_context *ctx)
{
    kevo_eval_result *res = calloc(1, sizeof(*res));
    if (!res)
        return NULL;
    res->set = set;
    res->verdict = KEVO_VERDICT_OK;
    res->failed_shape = -1;
    res->peak = peak;
    res->fitness_fn =
        ctx && ctx->fitness ? ctx->fitness : &kevo__fitness_roofline;
    res->suspicious_level =
        ctx && isfinite(ctx->suspicious) && ctx->suspicious > 0
            ? ctx->suspicious
            : KEVO__SUSPICIOUS_DEFAULT;
    if (ctx && ctx->ceilings) {
        res->bandwidth = known_or_zero(ctx->ceilings->bandwidth);
        if ((unsigned)peak < KEVO__PEAK_COUNT)
            res->peak_value = known_or_zero(ctx->ceilings->peak[peak]);
        res->launch = known_or_zero(ctx->ceilings->launch);
    }
    int64_t l2 = 0;
    if (ctx && ctx->device &&
        kevo_vars_get(ctx->device, "l2_bytes", &l2) == KEVO_OK && l2 > 0)
        res->l2_bytes = (double)l2;
    res->speedup_seed = res->speedup_reference = NAN;
    res->compile_log = kevo__strdup("");
    res->task = kevo__strdup(task ? task : "");
    res->cand = kevo__candidate_share(cand);
    if (!res->compile_log || !res->task) {
        kevo_eval_result_free(res);
        return NULL;
    }
    return res;
}

bool kevo__eval_result_add_shapes(kevo_eval_result *res, size_t n)
{
    if (n == 0)
        return true;
    kevo_eval_shape *s =
        realloc(res->shapes, (res->nshapes + n) * sizeof(*res->shapes));
    if (!s)
        return false;
    res->shapes = s;
    for (size_t i = res->nshapes; i < res->nshapes + n; i++) {
        kevo_eval_shape *e = &s[i];
        memset(e, 0, sizeof(*e));
        kevo_shape_result *r = &e->r;
        r->size = sizeof(*r);
        r->set = res->set;
        r->max_abs_err = r->max_rel_err = NAN;
        r->worst_got = r->worst_want = r->worst_tol = NAN;
        r->time = r->time_min = r->time_max = NAN;
        r->time_cv = r->time_spread = NAN;
        r->bytes = r->flops = NAN;
        r->dram_read_bytes = r->dram_write_bytes = NAN;
        r->achieved_occupancy = NAN;
        r->seed_time = r->reference_time = NAN;
        r->seed_spread = r->reference_spread = NAN;
        e->time_mean = NAN;
        e->out_bytes = NAN;
        e->score = NAN;
    }
    res->nshapes += n;
    return true;
}

bool kevo__eval_result_set_compile(kevo_eval_result *res,
                                   const kevo_compile_info *compile)
{
    if (!compile) {
        /* Unknown: it ran, so it compiled, unless the verdict says not. */
        res->compiled = res->verdict != KEVO_VERDICT_COMPILE_ERROR;
        return true;
    }
    char *log = kevo__strdup(compile->log ? compile->log : "");
    if (!log)
        return false;
    free(res->compile_log);
    res->compile_log = log;
    res->compiled = compile->ok;
    res->cached = compile->cached;
    res->seconds[KEVO_PHASE_COMPILE] =
        isfinite(compile->seconds) && compile->seconds > 0 ? compile->seconds
                                                           : 0;
    res->seconds[KEVO_PHASE_TOTAL] = res->seconds[KEVO_PHASE_COMPILE];
    return true;
}

kevo_status kevo__eval_result_shape_from_task(kevo_eval_result *res,
                                              kevo_eval_shape *s,
                                              const kevo_task *task,
                                              kevo_error *err)
{
    const int64_t *values = kevo_task_shape(task, res->set, s->r.index);
    size_t n = kevo_task_dim_count(task);
    kevo_vars *vars = NULL;
    if (!values)
        return kevo__error_set(err, KEVO_EINVAL, "the task has no %s shape %zu",
                               res->set == KEVO_SHAPES_TRAIN ? "training"
                                                             : "held-out",
                               s->r.index);
    s->dim_names = calloc(n ? n : 1, sizeof(*s->dim_names));
    s->dim_values = calloc(n ? n : 1, sizeof(*s->dim_values));
    if (!s->dim_names || !s->dim_values)
        goto nomem;
    for (size_t d = 0; d < n; d++) {
        s->dim_names[d] = kevo__strdup(kevo_task_dim_name(task, d));
        if (!s->dim_names[d])
            goto nomem;
        s->dim_values[d] = values[d];
        s->ndims = d + 1;
    }
    if (!(vars = kevo_vars_new()) ||
        kevo_task_shape_vars(task, res->set, s->r.index, vars) != KEVO_OK)
        goto nomem;
    double bytes = NAN, flops = NAN;
    if (kevo_task_cost(task, vars, &bytes, &flops, NULL) == KEVO_OK) {
        s->r.bytes = bytes;
        s->r.flops = flops;
    }
    uint64_t out = 0;
    if (kevo__task_output_bytes(task, vars, &out, NULL) == KEVO_OK)
        s->out_bytes = (double)out;
    kevo_vars_free(vars);
    return KEVO_OK;
nomem:
    kevo_vars_free(vars);
    return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
}

kevo_status kevo__eval_result_new_failure(
    const kevo_task *task, const kevo_candidate *cand, kevo_shape_set set,
    kevo_verdict verdict, const char *reason, const kevo_compile_info *compile,
    const kevo_eval_context *ctx, kevo_eval_result **out, kevo_error *err)
{
    kevo_status rc = KEVO_ENOMEM;
    if (out)
        *out = NULL;
    if (!task || !cand || !out || verdict == KEVO_VERDICT_OK)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo__eval_result_new_failure: NULL "
                               "argument or verdict ok");
    kevo_eval_result *res = kevo__eval_result_alloc(
        cand, kevo_task_name(task), kevo_task_peak(task), set, ctx);
    if (!res || !kevo__eval_result_set_compile(res, compile))
        goto fail;
    res->verdict = verdict;
    if (!compile)
        res->compiled = verdict != KEVO_VERDICT_COMPILE_ERROR;
    res->reason = kevo__strdup(reason ? reason : kevo_verdict_name(verdict));
    if (!res->reason)
        goto fail;
    if (compile && compile->ok &&
        (rc = kevo__eval_describe(res, task, compile, NULL, 0, ctx, err)) !=
            KEVO_OK)
        goto fail;
    kevo__eval_result_recompute(res);
    *out = res;
    return KEVO_OK;
fail:
    kevo_eval_result_free(res);
    return rc == KEVO_ENOMEM ? kevo__error_set(err, rc, "out of memory") : rc;
}

/* ---- derived figures ---------------------------------------------------- */

/* The geometric mean of n values, or NaN when one is not known. */
static double mean_speedup(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || x[i] <= 0)
            return NAN;
    }
    return n ? kevo__geomean(x, n) : NAN;
}

/*
 * Whether the L2 cache explains an efficiency above 1 at shape s: the
 * shape is bound by memory, its outputs fit in L2 wholly or in part, and
 * the efficiency is no more than the cost model's bytes over the bytes
 * that must reach DRAM when min(outputs, L2) bytes of written lines are
 * still in L2 as the timed run ends (the flush before each repetition
 * writes them back outside the timing).
 */
static bool l2_explained(const kevo_eval_result *res, const kevo_eval_shape *s,
                         const kevo_roofline *rl)
{
    if (!(rl->efficiency > 1) || !rl->bound_known ||
        rl->bound != KEVO_BOUND_MEMORY || !(res->l2_bytes > 0) ||
        !(s->out_bytes > 0) || !(s->r.bytes > 0))
        return false;
    double kept = s->out_bytes < res->l2_bytes ? s->out_bytes : res->l2_bytes;
    if (kept >= s->r.bytes)
        return true;
    return rl->efficiency <= s->r.bytes / (s->r.bytes - kept);
}

void kevo__eval_result_recompute(kevo_eval_result *res)
{
    kevo_ceilings ceilings = {res->bandwidth, {0}, res->launch};
    if ((unsigned)res->peak < KEVO__PEAK_COUNT)
        ceilings.peak[res->peak] = res->peak_value;
    size_t n = res->nshapes;
    double *scores = n ? malloc(3 * n * sizeof(*scores)) : NULL;
    double *seed = scores ? scores + n : NULL, *ref = seed ? seed + n : NULL;
    bool ok = res->verdict == KEVO_VERDICT_OK;

    res->suspicious = false;
    for (size_t i = 0; i < n; i++) {
        kevo_eval_shape *s = &res->shapes[i];
        kevo_shape_result *r = &s->r;
        kevo_fitness_shape fs = {r->correct,       r->time,   r->bytes,
                                 r->flops,         res->peak, r->seed_time,
                                 r->reference_time};
        kevo_roofline rl;
        kevo__roofline(&fs, &ceilings, &rl);
        r->floor = rl.floor;
        r->efficiency = rl.efficiency;
        r->bound = rl.bound;
        s->bound_known = rl.bound_known;
        r->gbytes_per_s = rl.gbytes_per_s;
        r->gflops_per_s = rl.gflops_per_s;
        r->l2_explained = l2_explained(res, s, &rl);
        s->suspicious = isfinite(rl.efficiency) &&
                        rl.efficiency > res->suspicious_level &&
                        !r->l2_explained;
        res->suspicious = res->suspicious || s->suspicious;
        s->score = ok ? res->fitness_fn->score(&fs, &ceilings) : NAN;
        if (scores) {
            scores[i] = s->score;
            seed[i] = kevo__fitness_speedup_seed.score(&fs, &ceilings);
            ref[i] = kevo__fitness_speedup_reference.score(&fs, &ceilings);
        }
    }
    /* Without room for the scores (no memory), the fitness is 0: a
     * result is never fitter than its measurements say. */
    res->fitness = ok && scores ? res->fitness_fn->combine(scores, n) : 0;
    res->speedup_seed = ok && seed ? mean_speedup(seed, n) : NAN;
    res->speedup_reference = ok && ref ? mean_speedup(ref, n) : NAN;
    free(scores);
}

/* ---- what the evaluator sets -------------------------------------------- */

void kevo__eval_result_set_ticket(kevo_eval_result *res, uint64_t ticket)
{
    if (res)
        res->ticket = ticket;
}

void kevo__eval_result_set_device(kevo_eval_result *res, const char *label)
{
    if (!res)
        return;
    /* Out of memory, the result says no device rather than a wrong one. */
    char *copy = label ? kevo__strdup(label) : NULL;
    free(res->device);
    res->device = copy;
}

void kevo__eval_result_set_seconds(kevo_eval_result *res, kevo_eval_phase phase,
                                   double seconds)
{
    if (res && (unsigned)phase <= KEVO_PHASE_TOTAL)
        res->seconds[phase] = seconds;
}

kevo_status kevo__eval_result_set_baseline(kevo_eval_result *res,
                                           kevo_baseline which,
                                           const double *times, size_t n,
                                           kevo_error *err)
{
    if (!res || (!times && n))
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo__eval_result_set_baseline: NULL "
                               "argument");
    for (size_t i = 0; i < res->nshapes; i++) {
        if (res->shapes[i].r.index >= n)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "baseline times for %zu shapes, but the "
                                   "result has shape %zu",
                                   n, res->shapes[i].r.index);
    }
    for (size_t i = 0; i < res->nshapes; i++) {
        kevo_shape_result *r = &res->shapes[i].r;
        double t = times[r->index];
        t = isfinite(t) && t > 0 ? t : NAN;
        if (which == KEVO_BASELINE_SEED)
            r->seed_time = t;
        else
            r->reference_time = t;
    }
    kevo__eval_result_recompute(res);
    return KEVO_OK;
}

kevo_status kevo__eval_result_set_paired(kevo_eval_result *res,
                                         kevo_baseline which,
                                         const double *times,
                                         const double *spreads, size_t n)
{
    kevo_status rc = kevo__eval_result_set_baseline(res, which, times, n, NULL);
    if (rc != KEVO_OK)
        return rc;
    for (size_t i = 0; i < res->nshapes; i++) {
        kevo_shape_result *r = &res->shapes[i].r;
        double sp = spreads[r->index];
        sp = isfinite(sp) && sp >= 0 ? sp : NAN;
        if (which == KEVO_BASELINE_SEED)
            r->seed_spread = sp;
        else
            r->reference_spread = sp;
        r->paired = true;
    }
    return KEVO_OK;
}

void kevo__eval_result_times(const kevo_eval_result *res, kevo_baseline which,
                             double *times, size_t n)
{
    for (size_t i = 0; i < n; i++)
        times[i] = NAN;
    for (size_t i = 0; res && i < res->nshapes; i++) {
        const kevo_shape_result *r = &res->shapes[i].r;
        if (r->index < n)
            times[r->index] =
                which == KEVO_BASELINE_SEED ? r->time : r->reference_time;
    }
}

const char *kevo__eval_result_fitness_name(const kevo_eval_result *res)
{
    return res ? res->fitness_fn->name : NULL;
}

const char *kevo__eval_result_shape_text(const kevo_eval_result *res, size_t i,
                                         char *buf, size_t size)
{
    size_t len = 0;
    if (size)
        buf[0] = '\0';
    if (!res || i >= res->nshapes)
        return buf;
    const kevo_eval_shape *s = &res->shapes[i];
    for (size_t d = 0; d < s->ndims && len < size; d++) {
        int w = snprintf(buf + len, size - len, "%s%s=%" PRId64, d ? ", " : "",
                         s->dim_names[d], s->dim_values[d]);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    return buf;
}

/* ---- the public getters ------------------------------------------------- */

void kevo_eval_result_free(kevo_eval_result *res)
{
    if (!res)
        return;
    for (size_t i = 0; i < res->nshapes; i++) {
        kevo_eval_shape *s = &res->shapes[i];
        free(s->worst_arg);
        for (size_t d = 0; d < s->ndims; d++)
            free(s->dim_names[d]);
        free(s->dim_names);
        free(s->dim_values);
        free(s->samples);
    }
    free(res->shapes);
    kevo_candidate_free(res->cand);
    free(res->task);
    free(res->reason);
    free(res->compile_log);
    free(res->describe_error);
    free(res->device);
    json_decref(res->kernels);
    free(res);
}

uint64_t kevo_eval_result_ticket(const kevo_eval_result *res)
{
    return res ? res->ticket : 0;
}

const kevo_candidate *kevo_eval_result_candidate(const kevo_eval_result *res)
{
    return res ? res->cand : NULL;
}

kevo_verdict kevo_eval_result_verdict(const kevo_eval_result *res)
{
    return res ? res->verdict : KEVO_VERDICT_WORKER_DIED;
}

const char *kevo_eval_result_reason(const kevo_eval_result *res)
{
    return res && res->verdict != KEVO_VERDICT_OK ? res->reason : NULL;
}

const char *kevo_eval_result_compile_log(const kevo_eval_result *res)
{
    return res ? res->compile_log : "";
}

/* The compiler's error lines a diagnostic keeps, and their length. */
#define DIAG_ERRORS 20
#define DIAG_LINE 300

static bool says(const char *s, size_t n, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= n; i++) {
        if (strncasecmp(s + i, word, w) == 0)
            return true;
    }
    return false;
}

/* The compiler's error lines of log (ptxas's "fatal" ones too, such as
 * its C7602, insufficient registers), each with the indented lines under
 * it that show where, as NVRTC prints them. */
static void put_errors(kevo_buf *b, const char *log)
{
    size_t kept = 0, context = 0;
    bool any = false;
    for (const char *p = log; *p && kept < DIAG_ERRORS;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        size_t m = n > 0 && p[n - 1] == '\r' ? n - 1 : n;
        bool error = says(p, m, "error") || says(p, m, "fatal");
        bool shown =
            error || (context > 0 && m > 0 && (*p == ' ' || *p == '\t') &&
                      !says(p, m, "warning"));
        context = error ? 2 : context > 0 ? context - 1 : 0;
        if (shown) {
            if (!any)
                kevo__buf_puts(b, "\nThe compiler's errors:\n");
            any = true;
            kevo__buf_append(b, p, m < DIAG_LINE ? m : DIAG_LINE);
            kevo__buf_puts(b, m > DIAG_LINE ? "...\n" : "\n");
            kept += error;
        }
        p += eol ? n + 1 : n;
    }
}

char *kevo_eval_result_diagnostic(const kevo_eval_result *res)
{
    if (!res || res->verdict == KEVO_VERDICT_OK)
        return NULL;
    kevo_buf b = {0};
    kevo__buf_puts(&b, res->reason && *res->reason
                           ? res->reason
                           : kevo_verdict_name(res->verdict));
    if (res->verdict == KEVO_VERDICT_COMPILE_ERROR && res->compile_log)
        put_errors(&b, res->compile_log);
    return kevo__buf_take(&b);
}

double kevo_eval_result_fitness(const kevo_eval_result *res)
{
    return res ? res->fitness : 0;
}

bool kevo_eval_result_suspicious(const kevo_eval_result *res)
{
    return res && res->suspicious;
}

kevo_shape_set kevo_eval_result_shape_set(const kevo_eval_result *res)
{
    return res ? res->set : KEVO_SHAPES_TRAIN;
}

size_t kevo_eval_result_shape_count(const kevo_eval_result *res)
{
    return res ? res->nshapes : 0;
}

kevo_status kevo_eval_result_shape(const kevo_eval_result *res, size_t i,
                                   kevo_shape_result *out)
{
    if (!res || !out)
        return KEVO_EINVAL;
    /* A caller built against a newer, larger struct gets what this one
     * has; an older, smaller one does not exist. */
    size_t size = out->size ? out->size : sizeof(*out);
    if (size < sizeof(*out))
        return KEVO_EINVAL;
    if (i >= res->nshapes)
        return KEVO_ERANGE;
    *out = res->shapes[i].r;
    out->worst_arg = res->shapes[i].worst_arg;
    out->size = sizeof(*out);
    return KEVO_OK;
}

/* The index of the descriptor called name in descriptor.c's table, or -1. */
static int descriptor_index(const char *name)
{
    const kevo_descriptor_def *d;
    for (size_t i = 0; (d = kevo__descriptor_at(i)) != NULL; i++) {
        if (i < KEVO__DESCRIPTORS_MAX && strcmp(d->name, name) == 0)
            return (int)i;
    }
    return -1;
}

kevo_status kevo_eval_result_descriptor(const kevo_eval_result *res,
                                        const char *name, double *value)
{
    if (!res || !name)
        return KEVO_EINVAL;
    int i = descriptor_index(name);
    if (i < 0)
        return KEVO_ENOENT;
    if (!res->has_descriptor[i])
        return KEVO_ERANGE;
    if (value)
        *value = res->descriptor[i];
    return KEVO_OK;
}

double kevo_eval_result_seconds(const kevo_eval_result *res,
                                kevo_eval_phase phase)
{
    if (!res || (unsigned)phase > KEVO_PHASE_TOTAL)
        return NAN;
    return res->seconds[phase];
}

bool kevo_eval_result_cached(const kevo_eval_result *res)
{
    return res && res->cached;
}

const char *kevo_eval_result_device(const kevo_eval_result *res)
{
    return res ? res->device : NULL;
}

double kevo_eval_result_speedup(const kevo_eval_result *res,
                                kevo_baseline baseline)
{
    if (!res)
        return NAN;
    switch (baseline) {
    case KEVO_BASELINE_SEED: return res->speedup_seed;
    case KEVO_BASELINE_REFERENCE: return res->speedup_reference;
    default: return NAN;
    }
}

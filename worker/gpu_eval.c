/*
 * gpu_eval.c: one "eval" message: the candidate checked against the
 * reference at every shape of a set, then timed and profiled.
 *
 * Per shape: buffers from the task's counts; for each of the two seeds,
 * inputs drawn on the device, the reference's result (from the cache, or
 * run with outputs poisoned and kept), outputs poisoned again (0xFF bytes
 * for the first seed, 0x7F for the second: a NaN, then a large finite
 * number; the reference runs over the other one), scratch zeroed or
 * poisoned, the candidate's launches, every output compared within the
 * tolerance and every input compared bit for bit with its pristine copy.
 * Then timing and, when asked, one profiled run. The first failure ends
 * the evaluation with its verdict.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonutil.h"
#include "gpu_eval.h"

/* A companion's evaluation under way. */
typedef struct companion {
    kevo_candidate *cand;
    kevo__program prog;
    bool loaded;
    const char *verdict; /* NULL while all is well */
    char reason[1024];
    long failed_shape;
    json_t *kernels; /* at its first shape */
    json_t *shapes;
} companion;

/* An evaluation under way. */
typedef struct eval_run {
    kevo__gpu *g;
    kevo__gpu_cache *cache;
    const kevo__eval_req *req;
    const kevo_task *task; /* the one kept under req->task_key */
    kevo_candidate *cand;
    kevo__program prog;
    const char *verdict; /* NULL while all is well */
    char reason[1024];
    long failed_shape;
    bool fatal;           /* the context is gone */
    kevo_error werr;      /* the worker's own failure: "ok": false */
    const char *lost_key; /* the task key it does not hold, or NULL */
    json_t *kernels;      /* the candidate's kernels, at the first shape */
    json_t *shapes;
    const char *timer; /* "cupti" unless some shape used events */
    double t_transfer, t_run, t_check, t_time, t_profile;
    companion *comp; /* one per req->comp */
} eval_run;

/* ---- the task and the reference ---------------------------------------- */

/* Unloads a kept kernel. */
static void kept_clear(kevo__kept_kernel *k)
{
    kevo__program_unload(&k->prog);
    kevo_candidate_free(k->cand);
    free(k->key);
    free(k->cubin);
    memset(k, 0, sizeof(*k));
}

void kevo__gpu_cache_clear(kevo__gpu *g, kevo__gpu_cache *c)
{
    (void)g;
    kept_clear(&c->ref);
    kept_clear(&c->base);
    kevo__task_keys_clear(&c->tasks);
}

/* Keeps the task's kernel cand (task_key's; what names it in messages)
 * loaded from cubin in k: the one kept already when the key and the cubin
 * are the same. The loaded kernel holds its own reference to the
 * candidate, so it outlives the task's place in the table. */
static kevo_status kept_use(kevo__gpu *g, kevo__kept_kernel *k,
                            const char *task_key, const kevo_candidate *cand,
                            const unsigned char *cubin, size_t size,
                            const json_t *lowered, const char *what,
                            kevo_error *err)
{
    if (k->key && strcmp(k->key, task_key) == 0 && k->cubin_size == size &&
        memcmp(k->cubin, cubin, size) == 0)
        return KEVO_OK;
    kept_clear(k);
    k->key = kevo__strdup(task_key);
    k->cubin = malloc(size ? size : 1);
    if (!k->key || !k->cubin) {
        kept_clear(k);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    memcpy(k->cubin, cubin, size);
    k->cubin_size = size;
    kevo_error e = KEVO__ERROR_INIT;
    kevo_candidate *c = kevo__candidate_share(cand);
    kevo_status rc = kevo__program_load(g, c, cubin, size, lowered, &k->prog,
                                        &e);
    if (rc != KEVO_OK) {
        kevo_candidate_free(c);
        kept_clear(k);
        return kevo__error_wrap(err, &e, "%s", what);
    }
    k->cand = c;
    return KEVO_OK;
}

/* The request's task, and its reference (and baseline, when the task has
 * one) loaded. KEVO_ENOENT for a key the worker does not hold; KEVO_EINVAL
 * for a task with a baseline and a message without its cubin, or the
 * other way round. */
static kevo_status use_task(kevo__gpu *g, kevo__gpu_cache *c,
                            const kevo__eval_req *r, const kevo_task **task,
                            kevo_error *err)
{
    void *t = NULL;
    if (!kevo__task_keys_use(&c->tasks, r->task_key, &t))
        return kevo__error_set(err, KEVO_ENOENT,
                               "unknown task key \"%.64s\": the worker keeps "
                               "the last %d tasks sent to it in \"task\" "
                               "messages since it started, and this is none "
                               "of them",
                               r->task_key, KEVO__TASK_KEYS_MAX);
    *task = t;
    const kevo_candidate *base = kevo_task_baseline(t);
    if (!base != !r->base_cubin)
        return kevo__error_set(err, KEVO_EINVAL,
                               "eval message: the task %s a baseline kernel "
                               "and the message %s baseline_cubin_bytes",
                               base ? "has" : "has no",
                               r->base_cubin ? "has" : "has no");
    kevo_status rc = kept_use(g, &c->ref, r->task_key, kevo_task_reference(t),
                              r->ref_cubin, r->ref_size, r->ref_kernels,
                              "the reference", err);
    if (rc == KEVO_OK && base)
        rc = kept_use(g, &c->base, r->task_key, base, r->base_cubin,
                      r->base_size, r->base_kernels, "the baseline", err);
    return rc;
}

/* ---- verdicts ---------------------------------------------------------- */

static void set_verdict(eval_run *r, const char *verdict, long shape,
                        const char *fmt, ...) KEVO_PRINTF(4, 5);

static void set_verdict(eval_run *r, const char *verdict, long shape,
                        const char *fmt, ...)
{
    va_list ap;
    if (r->verdict || r->werr.code != KEVO_OK)
        return;
    r->verdict = verdict;
    r->failed_shape = shape;
    va_start(ap, fmt);
    vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
    va_end(ap);
}

/*
 * A failure of a step at shape s: a fault when the CUDA context is gone;
 * otherwise the candidate's verdict (NULL: the worker's own failure, "ok"
 * false). where: "train shape 0 (n=...)" and the input set.
 */
static void failed(eval_run *r, const kevo__shape *s, const char *where,
                   const char *verdict, const kevo_error *e)
{
    if (kevo__gpu_fatal(e)) {
        r->fatal = true;
        set_verdict(r, "fault", (long)s->index, "%s: %s", where, e->text);
    } else if (verdict) {
        set_verdict(r, verdict, (long)s->index, "%s: %s", where, e->text);
    } else if (!r->verdict && r->werr.code == KEVO_OK) {
        kevo__error_wrap(&r->werr, e, "%s", where);
    }
}

/* ---- one shape --------------------------------------------------------- */

static bool worse(const kevo__cmp *x, const kevo__cmp *y)
{
    if (x->key != y->key)
        return x->key > y->key;
    if (x->err != y->err)
        return x->err > y->err;
    return x->index < y->index;
}

/* What the comparisons of a shape found. */
typedef struct shape_check {
    double max_abs, max_rel;
    uint64_t bad;
    kevo__cmp worst;
    long worst_arg; /* -1 before any output */
} shape_check;

static json_t *shape_json(const kevo__shape *s)
{
    json_t *dims = json_object();
    const int64_t *v = kevo_task_shape(s->task, s->set, s->index);
    for (size_t d = 0; dims && v && d < kevo_task_dim_count(s->task); d++) {
        if (json_object_set_new(dims, kevo_task_dim_name(s->task, d),
                                json_integer(v[d]))) {
            json_decref(dims);
            dims = NULL;
        }
    }
    return json_pack("{s:s, s:I, s:o, s:b}", "set",
                     s->set == KEVO_SHAPES_HELD_OUT ? "held_out" : "train",
                     "index", (json_int_t)s->index, "dims", dims, "correct", 0);
}

static kevo_status add_check(json_t *shape, const kevo__shape *s,
                             const shape_check *c)
{
    json_t *worst = json_null();
    if (c->worst_arg >= 0)
        worst = json_pack("{s:s, s:I, s:o, s:o, s:o}", "arg",
                          s->info[c->worst_arg].name, "index",
                          (json_int_t)c->worst.index, "got",
                          kevo__json_number_or_null(c->worst.got), "want",
                          kevo__json_number_or_null(c->worst.want), "tol",
                          kevo__json_number_or_null(c->worst.tol));
    if (json_object_set_new(shape, "max_abs_err",
                            kevo__json_number_or_null(c->max_abs)) ||
        json_object_set_new(shape, "max_rel_err",
                            kevo__json_number_or_null(c->max_rel)) ||
        json_object_set_new(shape, "bad_elements",
                            json_integer((json_int_t)c->bad)) ||
        json_object_set_new(shape, "worst", worst))
        return KEVO_ENOMEM;
    return KEVO_OK;
}

static json_t *times_json(const kevo__times *t)
{
    json_t *samples = json_array();
    for (size_t i = 0; samples && i < t->reps; i++) {
        if (json_array_append_new(samples, json_real(t->samples[i]))) {
            json_decref(samples);
            samples = NULL;
        }
    }
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:s, s:o}",
                     "median", kevo__json_number_or_null(t->median), "min",
                     kevo__json_number_or_null(t->min), "max",
                     kevo__json_number_or_null(t->max), "mean",
                     kevo__json_number_or_null(t->mean), "cv",
                     kevo__json_number_or_null(t->cv), "spread",
                     kevo__json_number_or_null(t->spread), "reps",
                     (json_int_t)t->reps, "kernels_per_rep",
                     (json_int_t)t->kernels_per_rep, "timer", t->timer,
                     "samples", samples);
}

/* Runs plan (the task's reference or baseline: what) on the shape's
 * current inputs, outputs poisoned first. */
static kevo_status run_task_kernel(eval_run *r, kevo__shape *s,
                                   const kevo__plan *plan,
                                   unsigned char poison, const char *what,
                                   kevo_error *e)
{
    kevo_status rc = kevo__shape_reset(r->g, s, poison, e);
    if (rc == KEVO_OK)
        rc = kevo__plan_scratch(plan, poison, e);
    if (rc == KEVO_OK)
        rc = kevo__plan_launch(plan, e);
    if (rc == KEVO_OK)
        rc = kevo__gpu_sync(what, e);
    return rc;
}

/* The baseline's errors against the reference's result (in s->want) on
 * every output judged by the baseline rule, into s->base_max and
 * s->base_mean. A baseline whose output is NaN, infinite or unwritten
 * where the reference's is not is the task's fault: KEVO_EINVALID. */
static kevo_status baseline_errors(eval_run *r, kevo__shape *s,
                                   const kevo__plan *base,
                                   unsigned char poison, kevo_error *e)
{
    kevo_status rc =
        run_task_kernel(r, s, base, poison, "running the baseline", e);
    double t = kevo__seconds_now();
    for (size_t a = 0; a < s->nargs && rc == KEVO_OK; a++) {
        const kevo_arg_info *in = &s->info[a];
        if (!kevo__is_output(in) || in->factor <= 0)
            continue;
        rc = kevo__baseline_error(r->g, s, a, &s->base_max[a],
                                  &s->base_mean[a], e);
        if (rc == KEVO_OK && !isfinite(s->base_max[a]))
            rc = kevo__error_set(e, KEVO_EINVALID,
                                 "the baseline's %s has elements that are "
                                 "NaN, infinite or unwritten where the "
                                 "reference's are not: the baseline rule "
                                 "needs a baseline that computes every "
                                 "element",
                                 in->name);
    }
    r->t_check += kevo__seconds_now() - t;
    return rc;
}

/* The reference's outputs for the shape's current inputs in s->want, and
 * with a baseline (base not NULL) its errors: from the cache, or run with
 * outputs poisoned. */
static bool reference(eval_run *r, kevo__shape *s, const kevo__plan *ref,
                      const kevo__plan *base, uint64_t seed,
                      unsigned char poison, const char *where)
{
    char key[512], who[400];
    bool hit = false;
    kevo_error e = KEVO__ERROR_INIT;
    double t = kevo__seconds_now();
    kevo__refcache_key(r->req->task_key, s, seed, key, sizeof(key));
    snprintf(who, sizeof(who), "%s: the reference", where);
    kevo_status rc = kevo__refcache_get(r->g, key, s, &hit, &e);
    if (rc == KEVO_OK && !hit) {
        rc = run_task_kernel(r, s, ref, poison, "running the reference", &e);
        if (rc == KEVO_OK)
            rc = kevo__shape_keep_reference(r->g, s, &e);
        if (rc == KEVO_OK && base) {
            snprintf(who, sizeof(who), "%s: the baseline", where);
            rc = baseline_errors(r, s, base, poison, &e);
        }
        if (rc == KEVO_OK)
            rc = kevo__refcache_put(r->g, key, s, &e);
    }
    r->t_run += kevo__seconds_now() - t;
    if (rc != KEVO_OK)
        failed(r, s, who, NULL, &e);
    return rc == KEVO_OK;
}

/* Runs the candidate on the shape's current inputs and checks it; false
 * with the verdict set when it fails. */
static bool run_and_check(eval_run *r, kevo__shape *s, const kevo__plan *cand,
                          unsigned char poison, const char *where,
                          shape_check *sc)
{
    kevo_error e = KEVO__ERROR_INIT;
    double t = kevo__seconds_now();
    kevo_status rc = kevo__shape_reset(r->g, s, poison, &e);
    if (rc == KEVO_OK)
        rc = kevo__plan_scratch(cand, poison, &e);
    if (rc == KEVO_OK)
        rc = kevo__plan_launch(cand, &e);
    if (rc == KEVO_OK)
        rc = kevo__gpu_sync("running the candidate", &e);
    r->t_run += kevo__seconds_now() - t;
    if (rc != KEVO_OK) {
        failed(r, s, where, "launch_error", &e);
        return false;
    }

    t = kevo__seconds_now();
    kevo__cmp run_worst = {0};
    long run_arg = -1, mean_arg = -1;
    kevo__mean_check mean_worst = {0};
    double mean_max = 0; /* the largest error of output mean_arg */
    for (size_t a = 0; a < s->nargs && rc == KEVO_OK; a++) {
        kevo__cmp c;
        kevo__mean_check m;
        if (!kevo__is_output(&s->info[a]))
            continue;
        rc = kevo__check_output(r->g, s, a, &c, &m, &e);
        if (rc != KEVO_OK)
            break;
        if (m.bad && mean_arg < 0) {
            mean_worst = m;
            mean_arg = (long)a;
            mean_max = c.max_abs;
        }
        sc->max_abs = fmax(sc->max_abs, c.max_abs);
        sc->max_rel = fmax(sc->max_rel, c.max_rel);
        sc->bad += c.bad;
        if (sc->worst_arg < 0 || worse(&c, &sc->worst)) {
            sc->worst = c;
            sc->worst_arg = (long)a;
        }
        if (c.bad > 0 && (run_arg < 0 || worse(&c, &run_worst))) {
            run_worst = c;
            run_arg = (long)a;
        }
    }
    bool changed = false;
    size_t arg = 0;
    uint64_t index = 0;
    if (rc == KEVO_OK)
        rc = kevo__check_inputs(r->g, s, &changed, &arg, &index, &e);
    r->t_check += kevo__seconds_now() - t;
    if (rc != KEVO_OK) {
        failed(r, s, where, NULL, &e);
        return false;
    }
    if (run_arg >= 0) {
        const kevo_arg_info *in = &s->info[run_arg];
        char got[64], want[64], err[40], tol[256];
        uint64_t n = 0;
        for (size_t a = 0; a < s->nargs; a++)
            n += kevo__is_output(&s->info[a]) ? s->count[a] : 0;
        set_verdict(
            r, "wrong", (long)s->index,
            "%s: %s[%" PRIu64 "] = %s, want %s (error %s; %s); %" PRIu64
            " of %" PRIu64 " output elements are wrong",
            where, in->name, run_worst.index,
            kevo__value_text(in->type, run_worst.got, got, sizeof(got)),
            kevo__value_text(in->type, run_worst.want, want, sizeof(want)),
            kevo__number_text(run_worst.err, err, sizeof(err)),
            kevo__tolerance_text(in, &run_worst, s->base_max[run_arg], tol,
                                 sizeof(tol)),
            sc->bad, n);
        return false;
    }
    if (mean_arg >= 0) {
        const kevo_arg_info *in = &s->info[mean_arg];
        char err[40], bound[40], base[40], worst[40];
        set_verdict(r, "wrong", (long)s->index,
                    "%s: %s: mean error %s, more than the baseline rule "
                    "allows: %g * the baseline's mean error %s + %g = %s "
                    "(every element is within %g * the baseline's largest "
                    "error + %g; the largest error is %s)",
                    where, in->name,
                    kevo__number_text(mean_worst.err, err, sizeof(err)),
                    in->factor,
                    kevo__number_text(s->base_mean[mean_arg], base,
                                      sizeof(base)),
                    in->atol,
                    kevo__number_text(mean_worst.bound, bound, sizeof(bound)),
                    in->factor, in->atol,
                    kevo__number_text(mean_max, worst, sizeof(worst)));
        return false;
    }
    if (changed) {
        set_verdict(r, "input_modified", (long)s->index,
                    "%s: input %s[%" PRIu64 "] was changed (inputs must be "
                    "left as they are)",
                    where, s->info[arg].name, index);
        return false;
    }
    return true;
}

static void companion_fail(companion *c, const char *verdict, long shape,
                           const char *fmt, ...) KEVO_PRINTF(4, 5);

/* Companion c failed (the first failure counts). */
static void companion_fail(companion *c, const char *verdict, long shape,
                           const char *fmt, ...)
{
    va_list ap;
    if (c->verdict)
        return;
    c->verdict = verdict;
    c->failed_shape = shape;
    va_start(ap, fmt);
    vsnprintf(c->reason, sizeof(c->reason), fmt, ap);
    va_end(ap);
}

/* True when companion k runs at shape i: it has not failed, and the
 * message lists i (or lists no shapes). */
static bool companion_at(const eval_run *r, size_t k, size_t i)
{
    const kevo__companion_req *q = &r->req->comp[k];
    if (!r->comp[k].loaded || r->comp[k].verdict)
        return false;
    if (!q->shapes)
        return true;
    for (size_t j = 0; j < json_array_size(q->shapes); j++) {
        const json_t *v = json_array_get(q->shapes, j);
        if (json_is_integer(v) && json_integer_value(v) == (json_int_t)i)
            return true;
    }
    return false;
}

/* Checks companion k on the shape's current inputs, as run_and_check does
 * the candidate; its failure is its own, unless the context is gone. */
static bool check_companion(eval_run *r, size_t k, kevo__shape *s,
                            const kevo__plan *plan, unsigned char poison,
                            const char *where, shape_check *sc)
{
    eval_run sub = *r;
    sub.verdict = NULL;
    sub.failed_shape = -1;
    sub.fatal = false;
    kevo_error_init(&sub.werr);
    char who[400];
    snprintf(who, sizeof(who), "%s: companion %zu", where, k);
    bool ok = run_and_check(&sub, s, plan, poison, who, sc);
    r->t_run = sub.t_run;
    r->t_check = sub.t_check;
    companion *c = &r->comp[k];
    if (sub.fatal) {
        r->fatal = true;
        set_verdict(r, "fault", (long)s->index, "%s", sub.reason);
    } else if (sub.werr.code != KEVO_OK && !sub.verdict) {
        if (r->werr.code == KEVO_OK)
            r->werr = sub.werr;
    } else if (!ok) {
        companion_fail(c, sub.verdict, sub.failed_shape, "%s", sub.reason);
    }
    return ok;
}

/* Timing and the profile of a correct shape: the candidate's, each
 * companion's that runs there (plans[k + 1], NULL for one that does not)
 * and, when asked, the reference's, interleaved run by run, into shape and
 * the companions' shape objects (cshape[k]). */
static void measure(eval_run *r, kevo__shape *s, const kevo__plan *cand,
                    const kevo__plan *const *comp, json_t **cshape,
                    const kevo__plan *ref, json_t *shape)
{
    kevo_error e = KEVO__ERROR_INIT;
    const kevo__eval_req *q = r->req;
    if (q->timing.enabled) {
        size_t n = 0, nmax = q->ncomp + 2;
        const kevo__plan **plans = calloc(nmax, sizeof(*plans));
        json_t **into = calloc(nmax, sizeof(*into));
        const char **keys = calloc(nmax, sizeof(*keys));
        kevo__times *times = calloc(nmax, sizeof(*times));
        if (!plans || !into || !keys || !times) {
            kevo__error_set(&r->werr, KEVO_ENOMEM, "out of memory");
            goto timed;
        }
        plans[n] = cand, into[n] = shape, keys[n++] = "time";
        for (size_t k = 0; k < q->ncomp; k++) {
            if (comp[k])
                plans[n] = comp[k], into[n] = cshape[k], keys[n++] = "time";
        }
        if (q->time_reference)
            plans[n] = ref, into[n] = shape, keys[n++] = "reference_time";
        double t = kevo__seconds_now();
        kevo_status rc =
            kevo__time_plans(r->g, plans, n, &q->timing, times, &e);
        r->t_time += kevo__seconds_now() - t;
        if (rc != KEVO_OK) {
            failed(r, s, s->label, "launch_error", &e);
            goto timed;
        }
        for (size_t k = 0; k < n; k++) {
            if (strcmp(times[k].timer, "cupti") != 0)
                r->timer = times[k].timer;
            json_object_set_new(into[k], keys[k], times_json(&times[k]));
            free(times[k].samples);
        }
    timed:
        free(plans);
        free(into);
        free(keys);
        free(times);
        if (r->verdict || r->werr.code != KEVO_OK)
            return;
    }
    if (q->profile) {
        double rd = 0, wr = 0, occ = 0, t = kevo__seconds_now();
        kevo_status rc = kevo__profile_plan(r->g, cand, q->timing.flush_l2, &rd,
                                            &wr, &occ, &e);
        r->t_profile += kevo__seconds_now() - t;
        if (rc != KEVO_OK && kevo__gpu_fatal(&e)) {
            failed(r, s, s->label, "launch_error", &e);
            return;
        }
        json_object_set_new(
            shape, "profile",
            rc == KEVO_OK
                ? json_pack("{s:f, s:f, s:f}", "dram_read_bytes", rd,
                            "dram_write_bytes", wr, "achieved_occupancy", occ)
                : json_pack("{s:s}", "error", e.text));
    }
}

static void eval_shape(eval_run *r, size_t i)
{
    kevo__gpu *g = r->g;
    const kevo__eval_req *q = r->req;
    kevo__shape s;
    kevo__plan ref, cand, base;
    kevo_error e = KEVO__ERROR_INIT;
    json_t *shape = NULL;
    shape_check sc = {0};
    double t = kevo__seconds_now();
    size_t nc = q->ncomp;
    kevo__plan *cplan = calloc(nc ? nc : 1, sizeof(*cplan));
    const kevo__plan **cp = calloc(nc ? nc : 1, sizeof(*cp));
    json_t **cshape = calloc(nc ? nc : 1, sizeof(*cshape));
    shape_check *csc = calloc(nc ? nc : 1, sizeof(*csc));

    memset(&ref, 0, sizeof(ref));
    memset(&cand, 0, sizeof(cand));
    memset(&base, 0, sizeof(base));
    memset(&s, 0, sizeof(s));
    sc.worst_arg = -1;
    if (!cplan || !cp || !cshape || !csc) {
        kevo__error_set(&r->werr, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    kevo_status rc = kevo__shape_setup(g, r->task, q->set, i, &s, &e);
    if (rc != KEVO_OK) {
        failed(r, &s, s.label, NULL, &e);
        goto done;
    }
    shape = shape_json(&s);
    if (!shape) {
        kevo__error_set(&r->werr, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    if (kevo_candidate_check(r->cand, s.env, &e) != KEVO_OK) {
        set_verdict(r, "rejected", (long)i, "%s: %s", s.label, e.text);
        goto done;
    }
    rc = kevo__plan_make(g, &r->prog, &s, &cand, &e);
    if (rc != KEVO_OK) {
        failed(r, &s, s.label,
               e.domain == KEVO_DOMAIN_CUDA ? "launch_error" : "rejected", &e);
        goto done;
    }
    rc = kevo__plan_make(g, &r->cache->ref.prog, &s, &ref, &e);
    if (rc != KEVO_OK) {
        char who[320];
        snprintf(who, sizeof(who), "%s: the reference", s.label);
        failed(r, &s, who, NULL, &e);
        goto done;
    }
    const bool has_base = kevo_task_baseline(r->task) != NULL;
    rc = has_base ? kevo__plan_make(g, &r->cache->base.prog, &s, &base, &e)
                  : KEVO_OK;
    if (rc != KEVO_OK) {
        char who[320];
        snprintf(who, sizeof(who), "%s: the baseline", s.label);
        failed(r, &s, who, NULL, &e);
        goto done;
    }
    for (size_t k = 0; k < nc; k++) {
        companion *c = &r->comp[k];
        csc[k].worst_arg = -1;
        if (!companion_at(r, k, i))
            continue;
        if (!(cshape[k] = shape_json(&s))) {
            kevo__error_set(&r->werr, KEVO_ENOMEM, "out of memory");
            goto done;
        }
        kevo_error ce = KEVO__ERROR_INIT;
        if (kevo_candidate_check(c->cand, s.env, &ce) != KEVO_OK ||
            kevo__plan_make(g, &c->prog, &s, &cplan[k], &ce) != KEVO_OK) {
            if (kevo__gpu_fatal(&ce)) {
                failed(r, &s, s.label, "fault", &ce);
                goto done;
            }
            companion_fail(
                c, ce.domain == KEVO_DOMAIN_CUDA ? "launch_error" : "rejected",
                (long)i, "%s: %s", s.label, ce.text);
            continue;
        }
        cp[k] = &cplan[k];
        if (!c->kernels)
            c->kernels = kevo__program_kernels(g, &cplan[k], &ce);
    }
    if (!r->kernels)
        r->kernels = kevo__program_kernels(g, &cand, &e);
    r->t_transfer += kevo__seconds_now() - t;

    for (int k = 0; k < 2; k++) {
        /* The reference runs over the other poison: an element that one
         * of them leaves unwritten never matches the other's. */
        static const unsigned char poison[2] = {0xff, 0x7f};
        char where[320];
        snprintf(where, sizeof(where), "%s%s", s.label,
                 k ? ", second input set" : "");
        t = kevo__seconds_now();
        rc = kevo__shape_draw(g, &s, q->seeds[k], &e);
        r->t_transfer += kevo__seconds_now() - t;
        if (rc != KEVO_OK) {
            failed(r, &s, where, NULL, &e);
            goto done;
        }
        if (!reference(r, &s, &ref, has_base ? &base : NULL, q->seeds[k],
                       poison[1 - k], where) ||
            !run_and_check(r, &s, &cand, poison[k], where, &sc))
            break;
        for (size_t c = 0; c < nc; c++) {
            if (!cp[c] || !q->comp[c].check)
                continue;
            if (!check_companion(r, c, &s, cp[c], poison[k], where, &csc[c]))
                cp[c] = NULL;
            if (r->verdict || r->werr.code != KEVO_OK)
                goto done;
        }
    }
    if (add_check(shape, &s, &sc) != KEVO_OK)
        kevo__error_set(&r->werr, KEVO_ENOMEM, "out of memory");
    if (r->verdict || r->werr.code != KEVO_OK)
        goto done;
    for (size_t c = 0; c < nc; c++) {
        if (!cshape[c])
            continue;
        if ((q->comp[c].check &&
             add_check(cshape[c], &s, &csc[c]) != KEVO_OK) ||
            json_object_set_new(cshape[c], "checked",
                                json_boolean(q->comp[c].check)) ||
            json_object_set_new(cshape[c], "correct", json_boolean(cp[c])))
            kevo__error_set(&r->werr, KEVO_ENOMEM, "out of memory");
    }
    json_object_set_new(shape, "correct", json_true());
    measure(r, &s, &cand, cp, cshape, &ref, shape);
done:
    if (shape && json_array_append_new(r->shapes, shape))
        kevo__error_set(&r->werr, KEVO_ENOMEM, "out of memory");
    /* A companion's shape counts only where it was judged: not where the
     * candidate failed first. */
    for (size_t c = 0; cshape && c < nc; c++) {
        if (cshape[c] && !json_object_get(cshape[c], "correct"))
            json_decref(cshape[c]);
        else if (cshape[c] &&
                 json_array_append_new(r->comp[c].shapes, cshape[c]))
            kevo__error_set(&r->werr, KEVO_ENOMEM, "out of memory");
    }
    if (!r->fatal) {
        for (size_t c = 0; cplan && c < nc; c++)
            kevo__plan_free(g, &cplan[c]);
        kevo__plan_free(g, &ref);
        kevo__plan_free(g, &base);
        kevo__plan_free(g, &cand);
        kevo__shape_free(g, &s);
    }
    free(cplan);
    free(cp);
    free(cshape);
    free(csc);
}

/* ---- the result -------------------------------------------------------- */

/* [{"verdict", "reason", "failed_shape", "kernels", "shapes"}, ...]: what
 * each companion got, its shapes as the candidate's. */
static json_t *companions_json(const eval_run *r)
{
    json_t *arr = json_array();
    for (size_t k = 0; arr && k < r->req->ncomp; k++) {
        const companion *c = &r->comp[k];
        json_t *o = json_pack("{s:s, s:O, s:O}", "verdict",
                              c->verdict ? c->verdict : "ok", "kernels",
                              c->kernels ? c->kernels : json_array(), "shapes",
                              c->shapes);
        if (o && c->verdict &&
            (json_object_set_new(o, "reason", json_string(c->reason)) ||
             (c->failed_shape >= 0 &&
              json_object_set_new(o, "failed_shape",
                                  json_integer(c->failed_shape))))) {
            json_decref(o);
            o = NULL;
        }
        if (!o || json_array_append_new(arr, o)) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

static json_t *result_json(const eval_run *r, double total)
{
    if (r->werr.code != KEVO_OK && !r->verdict)
        return json_pack("{s:s, s:O, s:b, s:s, s:s*}", "op", "result", "id",
                         r->req->id, "ok", 0, "error", r->werr.text,
                         "unknown_task_key", r->lost_key);
    json_t *kernels = r->kernels ? json_incref(r->kernels) : json_array();
    json_t *msg = json_pack(
        "{s:s, s:O, s:b, s:s, s:o, s:O, s:s, s:{s:f, s:f, s:f, s:f, s:f, "
        "s:f}}",
        "op", "result", "id", r->req->id, "ok", 1, "verdict",
        r->verdict ? r->verdict : "ok", "kernels", kernels, "shapes", r->shapes,
        "timer", r->timer, "seconds", "transfer", r->t_transfer, "run",
        r->t_run, "check", r->t_check, "time", r->t_time, "profile",
        r->t_profile, "total", total);
    if (msg && r->verdict &&
        (json_object_set_new(msg, "reason", json_string(r->reason)) ||
         (r->failed_shape >= 0 &&
          json_object_set_new(msg, "failed_shape",
                              json_integer(r->failed_shape))))) {
        json_decref(msg);
        msg = NULL;
    }
    if (msg && r->req->ncomp > 0) {
        json_t *arr = companions_json(r);
        if (!arr || json_object_set_new(msg, "companions", arr)) {
            json_decref(msg);
            msg = NULL;
        }
    }
    return msg;
}

/* Loads companion k; one that does not load gets its verdict (a fault
 * ends the evaluation). */
static void load_companion(eval_run *r, size_t k)
{
    const kevo__companion_req *q = &r->req->comp[k];
    companion *c = &r->comp[k];
    kevo_error e = KEVO__ERROR_INIT;
    kevo_jpath path;
    kevo__jpath_init(&path);
    if (kevo__candidate_from_json(q->candidate, "a companion", &path, &c->cand,
                                  &e) != KEVO_OK) {
        kevo__error_wrap(&r->werr, &e, "companion %zu", k);
        return;
    }
    if (strstr(kevo_candidate_source(c->cand), "kevo_internal_")) {
        companion_fail(c, "rejected", -1,
                       "the source uses the name prefix kevo_internal_, "
                       "which is reserved for the worker's own kernels");
        return;
    }
    if (kevo__program_load(r->g, c->cand, q->cubin, q->size, q->kernels,
                           &c->prog, &e) != KEVO_OK) {
        if (kevo__gpu_fatal(&e)) {
            r->fatal = true;
            set_verdict(r, "fault", -1, "companion %zu: %s", k, e.text);
            return;
        }
        companion_fail(c, e.code == KEVO_ENOENT ? "rejected" : "launch_error",
                       -1, "%s", e.text);
        return;
    }
    c->loaded = true;
}

int kevo__gpu_eval(kevo__gpu *g, kevo__gpu_cache *cache, const kevo__frame *f,
                   int out_fd)
{
    kevo__eval_req req;
    eval_run r;
    kevo_error e = KEVO__ERROR_INIT;
    kevo_jpath path;
    double t0 = kevo__seconds_now();

    memset(&r, 0, sizeof(r));
    r.g = g;
    r.cache = cache;
    r.req = &req;
    r.failed_shape = -1;
    r.timer = g->cupti ? "cupti" : "events";
    r.werr.size = sizeof(r.werr);
    r.shapes = json_array();
    if (!r.shapes)
        kevo__error_set(&r.werr, KEVO_ENOMEM, "out of memory");
    if (kevo__eval_req_parse(f, &req, &r.werr) != KEVO_OK ||
        !(r.comp = calloc(req.ncomp ? req.ncomp : 1, sizeof(*r.comp)))) {
        if (r.werr.code == KEVO_OK)
            kevo__error_set(&r.werr, KEVO_ENOMEM, "out of memory");
        json_t *reply = json_pack("{s:s, s:O?, s:b, s:s}", "op", "result", "id",
                                  json_object_get(f->json, "id"), "ok", 0,
                                  "error", r.werr.text);
        json_decref(r.shapes);
        free(req.comp);
        return kevo__gpu_send(out_fd, reply) == KEVO_OK ? 0 : 1;
    }
    for (size_t k = 0; k < req.ncomp; k++) {
        r.comp[k].failed_shape = -1;
        if (!(r.comp[k].shapes = json_array()))
            kevo__error_set(&r.werr, KEVO_ENOMEM, "out of memory");
    }
    t0 = kevo__seconds_now();
    if (use_task(g, cache, &req, &r.task, &e) != KEVO_OK) {
        kevo__error_wrap(&r.werr, &e, "%s", "");
        if (e.code == KEVO_ENOENT)
            r.lost_key = req.task_key;
        goto reply;
    }
    kevo__jpath_init(&path);
    if (kevo__candidate_from_json(req.candidate, "the candidate", &path,
                                  &r.cand, &e) != KEVO_OK) {
        kevo__error_wrap(&r.werr, &e, "%s", "");
        goto reply;
    }
    if (strstr(kevo_candidate_source(r.cand), "kevo_internal_")) {
        set_verdict(&r, "rejected", -1,
                    "the source uses the name prefix kevo_internal_, which "
                    "is reserved for the worker's own kernels");
        goto reply;
    }
    double t = kevo__seconds_now();
    if (kevo__program_load(g, r.cand, req.cand_cubin, req.cand_size,
                           req.cand_kernels, &r.prog, &e) != KEVO_OK) {
        if (kevo__gpu_fatal(&e)) {
            r.fatal = true;
            set_verdict(&r, "fault", -1, "the candidate: %s", e.text);
        } else {
            set_verdict(&r, e.code == KEVO_ENOENT ? "rejected" : "launch_error",
                        -1, "the candidate: %s", e.text);
        }
        goto reply;
    }
    for (size_t k = 0; k < req.ncomp && !r.verdict; k++)
        load_companion(&r, k);
    r.t_transfer += kevo__seconds_now() - t;
    for (size_t i = 0;
         r.werr.code == KEVO_OK && i < kevo_task_shape_count(r.task, req.set);
         i++) {
        eval_shape(&r, i);
        if (r.verdict || r.werr.code != KEVO_OK)
            break;
    }
reply:;
    json_t *reply = result_json(&r, kevo__seconds_now() - t0);
    json_decref(r.shapes);
    json_decref(r.kernels);
    int status = kevo__gpu_send(out_fd, reply) == KEVO_OK ? 0 : 1;
    for (size_t k = 0; k < req.ncomp; k++) {
        json_decref(r.comp[k].shapes);
        json_decref(r.comp[k].kernels);
    }
    if (r.fatal)
        return 4;
    for (size_t k = 0; k < req.ncomp; k++) {
        if (r.comp[k].loaded)
            kevo__program_unload(&r.comp[k].prog);
        kevo_candidate_free(r.comp[k].cand);
    }
    free(r.comp);
    free(req.comp);
    kevo__program_unload(&r.prog);
    kevo_candidate_free(r.cand);
    return status;
}

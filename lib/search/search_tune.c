/*
 * search_tune.c: per-shape tuning of the champion. Every correct child
 * the search timed left its times per training shape; among those that
 * share the champion's source, the fastest assignment at each training
 * shape wins that shape when it beats the champion's own assignment there
 * by more than the timing noise (2%). Other shapes take the assignment of
 * the nearest training shape (by the distance of the log2 of the dims).
 * Each assignment other than the champion's is run on the held-out shapes
 * before the table relies on it there: a held-out shape where it is wrong
 * falls back to the champion's assignment, which passed the gate.
 * Times are only compared between measurements of one device: with
 * several, the children measured on the device that measured the
 * champion's training times count, and the held-out checks are paired
 * with the seed on the device each runs on.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_private.h"
#include "fitness/fitness.h"
#include "search_private.h"

/* A margin below the champion's time that a tuned assignment must beat. */
#define TUNE_MARGIN 0.98

struct kevo__search_tune {
    size_t ntrain, nheld;
    kevo_vars **assign; /* distinct assignments; [0] is the champion's */
    size_t nassign;
    size_t *train_choice; /* per training shape: index in assign */
    double *train_time, *champ_time;
    size_t *held_near;    /* per held-out shape: nearest training shape */
    signed char *held_ok; /* per assignment x held-out shape: 1, 0, -1 */
};

static void tune_free(struct kevo__search_tune *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nassign; i++)
        kevo_vars_free(t->assign[i]);
    free(t->assign);
    free(t->train_choice);
    free(t->train_time);
    free(t->champ_time);
    free(t->held_near);
    free(t->held_ok);
    free(t);
}

void kevo__search_tuning_free(kevo__search_tuning *t)
{
    for (size_t i = 0; i < t->nobs; i++) {
        kevo_vars_free(t->obs[i].params);
        free(t->obs[i].times);
        free(t->obs[i].device);
    }
    free(t->obs);
    t->obs = NULL;
    t->nobs = t->cobs = 0;
    tune_free(t->tune);
    t->tune = NULL;
    free(t->dispatch);
    t->dispatch = NULL;
}

static uint64_t source_hash(const kevo_candidate *c)
{
    const char *src = kevo_candidate_source(c);
    return kevo__hash_finish(kevo__hash_bytes(0, src, strlen(src)));
}

kevo_status kevo__search_observe(kevo__search_tuning *t, const kevo_task *task,
                                 const kevo_candidate *cand,
                                 const kevo_eval_result *res)
{
    if (kevo_eval_result_shape_set(res) != KEVO_SHAPES_TRAIN)
        return KEVO_OK;
    const kevo_vars *params = kevo_candidate_assignment(cand);
    if (!params || kevo_vars_count(params) == 0)
        return KEVO_OK;
    size_t n = kevo_task_shape_count(task, KEVO_SHAPES_TRAIN);
    if (t->nobs == t->cobs) {
        size_t c = t->cobs ? 2 * t->cobs : 64;
        kevo__search_obs *o = realloc(t->obs, c * sizeof *o);
        if (!o)
            return KEVO_ENOMEM;
        t->obs = o;
        t->cobs = c;
    }
    kevo__search_obs *o = &t->obs[t->nobs];
    o->id = kevo_candidate_id(cand);
    o->source_hash = source_hash(cand);
    o->params = kevo_vars_copy(params);
    o->times = malloc((n ? n : 1) * sizeof *o->times);
    const char *device = kevo_eval_result_device(res);
    o->device = device ? kevo__strdup(device) : NULL;
    if (!o->params || !o->times || (device && !o->device)) {
        kevo_vars_free(o->params);
        free(o->times);
        free(o->device);
        return KEVO_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        kevo_shape_result sr = {.size = sizeof sr};
        o->times[i] = NAN;
        for (size_t j = 0; j < kevo_eval_result_shape_count(res); j++) {
            if (kevo_eval_result_shape(res, j, &sr) == KEVO_OK &&
                sr.index == i && sr.correct)
                o->times[i] = sr.time;
        }
    }
    t->nobs++;
    return KEVO_OK;
}

/* True when times measured on device a compare with times measured on
 * device b: the same device, or one not known (a champion restored from a
 * checkpoint written before results named their device). */
static bool same_device(const char *a, const char *b)
{
    return !a || !b || strcmp(a, b) == 0;
}

static bool same_vars(const kevo_vars *a, const kevo_vars *b)
{
    if (kevo_vars_count(a) != kevo_vars_count(b))
        return false;
    for (size_t i = 0; i < kevo_vars_count(a); i++) {
        int64_t v;
        if (kevo_vars_get(b, kevo_vars_name(a, i), &v) != KEVO_OK ||
            v != kevo_vars_value(a, i))
            return false;
    }
    return true;
}

/* The index of params in the table's assignments, added when new. */
static size_t assignment_index(struct kevo__search_tune *t,
                               const kevo_vars *params, bool *oom)
{
    for (size_t i = 0; i < t->nassign; i++) {
        if (same_vars(t->assign[i], params))
            return i;
    }
    kevo_vars **a = realloc(t->assign, (t->nassign + 1) * sizeof *a);
    if (!a) {
        *oom = true;
        return 0;
    }
    t->assign = a;
    a[t->nassign] = kevo_vars_copy(params);
    if (!a[t->nassign]) {
        *oom = true;
        return 0;
    }
    return t->nassign++;
}

/* The squared distance of two shapes in log2 of their dims. */
static double shape_distance(const kevo_task *task, size_t held, size_t train)
{
    const int64_t *h = kevo_task_shape(task, KEVO_SHAPES_HELD_OUT, held);
    const int64_t *t = kevo_task_shape(task, KEVO_SHAPES_TRAIN, train);
    double d = 0;
    for (size_t i = 0; h && t && i < kevo_task_dim_count(task); i++) {
        double x = log2((double)(h[i] > 0 ? h[i] : 1)) -
                   log2((double)(t[i] > 0 ? t[i] : 1));
        d += x * x;
    }
    return d;
}

kevo_status kevo__search_tune_start(kevo_search *s, int *pending,
                                    kevo_error *err)
{
    *pending = 0;
    const kevo_candidate *champ = s->pick.champion_cand;
    const kevo__search_gate *g = &s->pick.gates[s->pick.champion];
    const kevo_vars *cp = kevo_candidate_assignment(champ);
    if (!cp || kevo_vars_count(cp) == 0 || !g->train)
        return KEVO_OK;
    struct kevo__search_tune *t = calloc(1, sizeof *t);
    if (!t)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    s->tuning.tune = t;
    t->ntrain = kevo_task_shape_count(s->cfg.task, KEVO_SHAPES_TRAIN);
    t->nheld = kevo_task_shape_count(s->cfg.task, KEVO_SHAPES_HELD_OUT);
    size_t nt = t->ntrain ? t->ntrain : 1, nh = t->nheld ? t->nheld : 1;
    t->train_choice = calloc(nt, sizeof *t->train_choice);
    t->train_time = calloc(nt, sizeof *t->train_time);
    t->champ_time = calloc(nt, sizeof *t->champ_time);
    t->held_near = calloc(nh, sizeof *t->held_near);
    bool oom =
        !t->train_choice || !t->train_time || !t->champ_time || !t->held_near;
    if (!oom)
        assignment_index(t, cp, &oom);
    uint64_t h = source_hash(champ);
    const char *device = kevo_eval_result_device(g->train);
    for (size_t j = 0; !oom && j < t->ntrain; j++) {
        kevo_shape_result sr = {.size = sizeof sr};
        t->champ_time[j] = NAN;
        for (size_t k = 0; k < kevo_eval_result_shape_count(g->train); k++) {
            if (kevo_eval_result_shape(g->train, k, &sr) == KEVO_OK &&
                sr.index == j)
                t->champ_time[j] = sr.time;
        }
        const kevo__search_obs *best = NULL;
        for (size_t i = 0; i < s->tuning.nobs; i++) {
            const kevo__search_obs *o = &s->tuning.obs[i];
            if (o->source_hash == h && isfinite(o->times[j]) &&
                same_device(o->device, device) &&
                (!best || o->times[j] < best->times[j]))
                best = o;
        }
        t->train_time[j] = t->champ_time[j];
        if (best && isfinite(t->champ_time[j]) &&
            best->times[j] < TUNE_MARGIN * t->champ_time[j]) {
            t->train_choice[j] = assignment_index(t, best->params, &oom);
            t->train_time[j] = best->times[j];
        }
    }
    for (size_t k = 0; !oom && k < t->nheld; k++) {
        double dmin = INFINITY;
        for (size_t j = 0; j < t->ntrain; j++) {
            double d = shape_distance(s->cfg.task, k, j);
            if (d < dmin) {
                dmin = d;
                t->held_near[k] = j;
            }
        }
    }
    if (!oom) {
        t->held_ok = malloc(t->nassign * nh);
        oom = !t->held_ok;
        if (!oom)
            memset(t->held_ok, -1, t->nassign * nh);
    }
    if (oom)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    for (size_t k = 0; k < t->nheld; k++)
        t->held_ok[k] = 1; /* the champion passed the gate */
    for (size_t a = 1; a < t->nassign; a++) {
        kevo_candidate *c = kevo_candidate_copy(champ);
        if (!c)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        kevo_status rc = KEVO_OK;
        for (size_t i = 0; rc == KEVO_OK && i < kevo_vars_count(t->assign[a]);
             i++)
            rc =
                kevo_candidate_set_param(c, kevo_vars_name(t->assign[a], i),
                                         kevo_vars_value(t->assign[a], i), err);
        if (rc != KEVO_OK) {
            kevo_candidate_free(c);
            return rc;
        }
        kevo__search_job proto = {.tune_index = a};
        rc = kevo__search_submit(s, KEVO__JOB_TUNE_HELD, c, &proto,
                                 KEVO_EVAL_HELD_OUT | KEVO_EVAL_PAIRED, err);
        if (rc != KEVO_OK)
            return rc;
        (*pending)++;
    }
    return KEVO_OK;
}

kevo_status kevo__search_tune_judge(kevo_search *s, kevo__search_job *job,
                                    kevo_error *err)
{
    (void)err;
    struct kevo__search_tune *t = s->tuning.tune;
    if (!t || job->tune_index >= t->nassign)
        return KEVO_OK;
    signed char *row = &t->held_ok[job->tune_index * t->nheld];
    for (size_t k = 0; k < t->nheld; k++)
        row[k] = 0;
    /* The gate's rule at each held-out shape: correct, and not slower than
     * the seed there beyond the slack. */
    double slack, floor;
    kevo__search_gate_settings(s, &slack, &floor);
    for (size_t i = 0; i < kevo_eval_result_shape_count(job->result); i++) {
        kevo_shape_result sr = {.size = sizeof sr};
        kevo__gate_row gr;
        if (kevo_eval_result_shape(job->result, i, &sr) != KEVO_OK ||
            sr.index >= t->nheld)
            continue;
        kevo__gate_judge(&sr, slack, floor, &gr);
        row[sr.index] = kevo__gate_call_passes(gr.call) ? 1 : 0;
    }
    return KEVO_OK;
}

static json_t *dims_json(const kevo_task *task, kevo_shape_set set, size_t i)
{
    kevo_vars *v = kevo_vars_new();
    if (v)
        kevo_task_shape_vars(task, set, i, v);
    json_t *o = kevo__search_params_json(v);
    kevo_vars_free(v);
    return o;
}

kevo_status kevo__search_tune_finish(kevo_search *s, kevo_error *err)
{
    struct kevo__search_tune *t = s->tuning.tune;
    json_t *names = json_array(), *dims = json_array();
    const kevo_vars *cp = t->assign[0];
    for (size_t i = 0; i < kevo_vars_count(cp); i++)
        json_array_append_new(names, json_string(kevo_vars_name(cp, i)));
    for (size_t i = 0; i < kevo_task_dim_count(s->cfg.task); i++)
        json_array_append_new(dims,
                              json_string(kevo_task_dim_name(s->cfg.task, i)));
    json_t *shapes = json_array(), *held = json_array();
    for (size_t j = 0; j < t->ntrain; j++) {
        double ct = t->champ_time[j], tt = t->train_time[j];
        json_t *o = json_pack(
            "{s:o, s:o, s:o, s:o}", "dims",
            dims_json(s->cfg.task, KEVO_SHAPES_TRAIN, j), "params",
            kevo__search_params_json(t->assign[t->train_choice[j]]), "time",
            kevo__search_num(tt), "champion_time", kevo__search_num(ct));
        json_object_set_new(o, "speedup", kevo__search_num(ct / tt));
        json_array_append_new(shapes, o);
    }
    size_t distinct = t->nassign;
    for (size_t k = 0; k < t->nheld; k++) {
        size_t a = t->train_choice[t->held_near[k]];
        signed char ok = t->held_ok[a * t->nheld + k];
        bool fallback = ok != 1;
        json_t *o =
            json_pack("{s:o, s:I, s:o, s:b, s:b}", "dims",
                      dims_json(s->cfg.task, KEVO_SHAPES_HELD_OUT, k),
                      "nearest", (json_int_t)t->held_near[k], "params",
                      kevo__search_params_json(t->assign[fallback ? 0 : a]),
                      "correct", ok == 1, "fallback", fallback && a != 0);
        json_array_append_new(held, o);
    }
    json_t *root =
        json_pack("{s:s, s:I, s:o, s:o, s:s, s:o, s:o, s:o}", "task",
                  kevo_task_name(s->cfg.task), "champion",
                  (json_int_t)kevo_candidate_id(s->pick.champion_cand),
                  "params", names, "default", kevo__search_params_json(cp),
                  "rule", "nearest_training_shape", "dims", dims, "shapes",
                  shapes, "held_out", held);
    char *text =
        root ? json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(6)) : NULL;
    json_decref(root);
    if (!text)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    free(s->tuning.dispatch);
    s->tuning.dispatch = text;
    kevo_status rc = KEVO_OK;
    if (s->run.dir)
        rc = kevo_rundir_write_file(s->run.dir, "best.dispatch.json", text,
                                    strlen(text), err);
    if (rc == KEVO_OK)
        rc = kevo__search_log(s, "tune",
                              json_pack("{s:I, s:I}", "shapes",
                                        (json_int_t)t->ntrain, "distinct",
                                        (json_int_t)distinct),
                              err);
    return rc;
}

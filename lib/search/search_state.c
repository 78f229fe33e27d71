/*
 * search_state.c: what a search leaves on disk. The checkpoint (everything
 * a resumed run needs, written atomically), its restoration, summary.json
 * (what reports and scripts read) and best.cu (the champion with a header
 * saying what it is and how it was found). Also kevo_search_open_run().
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/archive_notes.h"
#include "archive/archive_private.h"
#include "core/jsonutil.h"
#include "eval/eval_private.h"
#include "model/candidate_private.h"
#include "operators/operator_private.h"
#include "search_private.h"

/* The gate rule whose verdicts a checkpoint keeps: not slower than the
 * seed at any held-out shape, in pairs. */
#define GATE_RULE "paired_baseline"

#define CHECKPOINT_FORMAT "kevo-checkpoint"
#define CHECKPOINT_VERSION 1

json_t *kevo__search_num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *kevo__search_params_json(const kevo_vars *params)
{
    json_t *o = json_object();
    for (size_t i = 0; params && i < kevo_vars_count(params); i++)
        json_object_set_new(o, kevo_vars_name(params, i),
                            json_integer(kevo_vars_value(params, i)));
    return o;
}

/* A hash of the task as saved, so that a resume can tell it is the same. */
static kevo_status task_hash(const kevo_task *task, uint64_t *out,
                             kevo_error *err)
{
    char *json = NULL;
    kevo_status rc = kevo_task_to_json(task, &json, err);
    if (rc != KEVO_OK)
        return rc;
    *out = kevo__hash_finish(kevo__hash_bytes(0, json, strlen(json)));
    free(json);
    return KEVO_OK;
}

/* ---- the checkpoint ------------------------------------------------------ */

static json_t *parse_owned(char *text)
{
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    return v;
}

static json_t *checkpoint_json(kevo_search *s, kevo_error *err)
{
    uint64_t th;
    if (task_hash(s->cfg.task, &th, err) != KEVO_OK)
        return NULL;
    json_t *root = json_object();
    char hash[17];
    snprintf(hash, sizeof hash, "%016" PRIx64, th);
    json_object_set_new(root, "format", json_string(CHECKPOINT_FORMAT));
    json_object_set_new(root, "version", json_integer(CHECKPOINT_VERSION));
    json_object_set_new(root, "task", json_string(kevo_task_name(s->cfg.task)));
    json_object_set_new(root, "task_hash", json_string(hash));
    json_object_set_new(root, "seed",
                        json_integer(s->cfg.opt[KEVO_SEARCH_SEED]));
    json_t *islands = json_array();
    for (size_t i = 0; i < s->pop.nislands; i++) {
        char *t = NULL;
        kevo_archive_to_json(s->pop.islands[i], &t, NULL);
        json_array_append_new(islands, parse_owned(t));
    }
    json_object_set_new(root, "islands", islands);
    char *pool = NULL;
    kevo_promptpool_to_json(s->ops.pool, &pool, NULL);
    json_object_set_new(root, "prompts", parse_owned(pool));
    char *state = NULL;
    kevo_rng_save(s->pop.rng, &state);
    json_object_set_new(root, "rng", state ? json_string(state) : json_null());
    free(state);
    json_t *ops = json_array();
    for (size_t i = 0; i < s->ops.n; i++) {
        kevo__search_op *o = &s->ops.list[i];
        char *st = NULL;
        kevo_rng_save(kevo_operator_rng(o->op), &st);
        json_array_append_new(
            ops, json_pack("{s:s, s:s?, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
                           "name", kevo_operator_name(o->op), "rng", st,
                           "requests", (json_int_t)o->requests, "children",
                           (json_int_t)o->children, "evaluated",
                           (json_int_t)o->evaluated, "entered",
                           (json_int_t)o->entered, "improved",
                           (json_int_t)o->improved, "failures",
                           (json_int_t)o->failures, "revisions",
                           (json_int_t)o->revisions));
        kevo__search_validity_put(json_array_get(ops, i), &o->validity);
        uint64_t in = 0, out = 0;
        double cost = 0;
        kevo_operator_usage(o->op, &in, &out, &cost);
        json_t *e = json_array_get(ops, i);
        json_object_set_new(e, "input_tokens", json_integer((json_int_t)in));
        json_object_set_new(e, "output_tokens", json_integer((json_int_t)out));
        json_object_set_new(e, "cost", json_real(cost));
        free(st);
    }
    json_object_set_new(root, "operators", ops);
    json_object_set_new(root, "prompt_validity",
                        kevo__search_pvalid_json(&s->ops));
    json_object_set_new(
        root, "counters",
        json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "evaluations",
                  (json_int_t)s->progress.evaluations, "submitted",
                  (json_int_t)s->progress.evaluations, "failures",
                  (json_int_t)s->progress.failures, "improvements",
                  (json_int_t)s->progress.improvements, "last_improvement",
                  (json_int_t)s->progress.last_improvement, "next_id",
                  (json_int_t)s->progress.next_id, "requests",
                  (json_int_t)s->progress.requests, "elapsed",
                  s->progress.elapsed_before + kevo__search_elapsed(s)));
    /* The operator host's last request id, so that a resumed search
     * numbers its requests as the run did. */
    json_object_set_new(json_object_get(root, "counters"), "request_id",
                        json_integer((json_int_t)s->ops.host->next_id));
    json_object_set_new(root, "best", kevo__search_num(s->progress.best));
    json_t *hist = json_array();
    for (size_t i = 0; i < s->progress.nhistory; i++)
        json_array_append_new(hist,
                              json_pack("[f, f]", s->progress.history[2 * i],
                                        s->progress.history[2 * i + 1]));
    json_object_set_new(root, "history", hist);
    json_t *gates = json_array();
    for (size_t i = 0; i < s->pick.ngates; i++) {
        const kevo__search_gate *g = &s->pick.gates[i];
        if (!g->done)
            continue;
        json_t *o = json_pack("{s:I, s:f, s:b}", "id", (json_int_t)g->id,
                              "fitness", g->fitness, "passed", g->passed);
        json_object_set_new(o, "held_out_fitness",
                            kevo__search_num(g->held_fitness));
        json_object_set_new(o, "retimed", kevo__search_num(g->retimed));
        json_object_set_new(o, "rule", json_string(GATE_RULE));
        json_object_set_new(o, "reason",
                            g->reason ? json_string(g->reason) : json_null());
        json_array_append_new(gates, o);
    }
    json_object_set_new(root, "gates", gates);
    json_object_set_new(root, "leaders", kevo__search_leaders_json(s));
    json_object_set_new(root, "champion",
                        s->pick.champion_cand
                            ? kevo__candidate_to_json(s->pick.champion_cand)
                            : json_null());
    json_t *seen = json_array();
    for (size_t i = 0; i < s->ops.host->cseen; i++) {
        char k[17];
        if (!s->ops.host->seen[i])
            continue; /* a free slot of the hash table */
        snprintf(k, sizeof k, "%016" PRIx64, s->ops.host->seen[i]);
        json_array_append_new(seen, json_string(k));
    }
    json_object_set_new(root, "seen", seen);
    /* The elites' evaluations, by candidate id (a migrated elite's is
     * written once). */
    json_t *notes = json_object();
    for (size_t i = 0; i < s->pop.nislands; i++) {
        const kevo_archive *a = s->pop.islands[i];
        for (size_t c = kevo_archive_first(a); c != KEVO_NO_CELL;
             c = kevo_archive_next(a, c)) {
            const char *note = kevo__archive_note(a, c, KEVO_NOTE_EVALUATION);
            if (!note)
                continue;
            char k[24];
            snprintf(k, sizeof k, "%" PRIu64,
                     kevo_candidate_id(kevo_archive_candidate(a, c)));
            json_object_set_new(notes, k, json_string(note));
        }
    }
    json_object_set_new(root, "notes", notes);
    json_t *obs = json_array();
    size_t nshapes = kevo_task_shape_count(s->cfg.task, KEVO_SHAPES_TRAIN);
    for (size_t i = 0; i < s->tuning.nobs; i++) {
        char k[17];
        snprintf(k, sizeof k, "%016" PRIx64, s->tuning.obs[i].source_hash);
        json_t *times = json_array();
        for (size_t j = 0; j < nshapes; j++)
            json_array_append_new(times,
                                  kevo__search_num(s->tuning.obs[i].times[j]));
        json_array_append_new(
            obs,
            json_pack("{s:I, s:s, s:o, s:o}", "id",
                      (json_int_t)s->tuning.obs[i].id, "source", k, "params",
                      kevo__search_params_json(s->tuning.obs[i].params),
                      "times", times));
    }
    json_object_set_new(root, "observations", obs);
    return root;
}

kevo_status kevo__search_quiet_mark(kevo_search *s, kevo_error *err)
{
    if (!s->run.dir)
        return KEVO_OK;
    json_t *root = checkpoint_json(s, err);
    if (!root)
        return err && err->code
                   ? err->code
                   : kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    json_decref(s->state.quiet);
    s->state.quiet = root;
    return KEVO_OK;
}

/* Writes root (a reference is taken) as the checkpoint. */
static kevo_status write_checkpoint(kevo_search *s, json_t *root,
                                    kevo_error *err);

kevo_status kevo__search_checkpoint_quiet(kevo_search *s, kevo_error *err)
{
    if (!s->state.quiet)
        return kevo__search_checkpoint(s, err);
    s->progress.since_checkpoint = 0;
    if (!s->run.dir)
        return KEVO_OK;
    return write_checkpoint(s, json_incref(s->state.quiet), err);
}

kevo_status kevo__search_checkpoint(kevo_search *s, kevo_error *err)
{
    s->progress.since_checkpoint = 0;
    if (!s->run.dir)
        return KEVO_OK;
    json_t *root = checkpoint_json(s, err);
    if (!root)
        return err && err->code
                   ? err->code
                   : kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    return write_checkpoint(s, root, err);
}

static kevo_status write_checkpoint(kevo_search *s, json_t *root,
                                    kevo_error *err)
{
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!text)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = kevo_rundir_checkpoint(s->run.dir, text, err);
    free(text);
    if (rc == KEVO_OK)
        rc = kevo__search_write_summary(s, "running", err);
    if (rc == KEVO_OK)
        rc = kevo__search_log(
            s, "checkpoint",
            json_pack("{s:I}", "n", (json_int_t)s->progress.evaluations), err);
    kevo_search_event ev = {
        .size = sizeof ev, .type = KEVO_SEARCH_CHECKPOINT, .fitness = NAN};
    if (rc == KEVO_OK)
        kevo__search_emit(s, &ev);
    return rc;
}

/* ---- restoring ----------------------------------------------------------- */

typedef struct reader {
    const char *origin;
    kevo_jpath path;
    kevo_error *err;
} reader;

/* The member key of obj, checked to be of JSON type type (an object, an
 * array, a string or an integer) by the loaders' shared readers, or NULL
 * with the error set naming the path. */
static json_t *member(reader *r, json_t *obj, const char *key, json_type type)
{
    size_t mark = kevo__jpath_key(&r->path, key);
    json_t *v = json_object_get(obj, key);
    kevo_status rc = KEVO_OK;
    const char *str;
    int64_t num;
    if (!v)
        rc = kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                             "missing");
    else if (type == JSON_OBJECT)
        rc = kevo__json_object(v, r->origin, &r->path, r->err);
    else if (type == JSON_ARRAY)
        rc = kevo__json_array(v, r->origin, &r->path, r->err);
    else if (type == JSON_STRING)
        rc = kevo__json_string(v, r->origin, &r->path, &str, r->err);
    else
        rc = kevo__json_int(v, r->origin, &r->path, &num, r->err);
    kevo__jpath_pop(&r->path, mark);
    return rc == KEVO_OK ? v : NULL;
}

static bool get_u64(reader *r, json_t *obj, const char *key, uint64_t *out)
{
    json_t *v = member(r, obj, key, JSON_INTEGER);
    if (!v)
        return false;
    if (json_integer_value(v) < 0) {
        size_t mark = kevo__jpath_key(&r->path, key);
        kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                        "is negative");
        kevo__jpath_pop(&r->path, mark);
        return false;
    }
    *out = (uint64_t)json_integer_value(v);
    return true;
}

static double real_or_nan(json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static kevo_status restore_islands(kevo_search *s, reader *r, json_t *root)
{
    json_t *isl = member(r, root, "islands", JSON_ARRAY);
    if (!isl)
        return r->err->code;
    if (json_array_size(isl) != s->pop.nislands)
        return kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                               "$.islands has %zu islands; the search is "
                               "set up with %zu",
                               json_array_size(isl), s->pop.nislands);
    for (size_t i = 0; i < s->pop.nislands; i++) {
        char *text = json_dumps(json_array_get(isl, i), JSON_COMPACT);
        kevo_archive *a = NULL;
        kevo_status rc =
            text ? kevo_archive_from_json(text, r->origin, &a, r->err)
                 : KEVO_ENOMEM;
        free(text);
        if (rc != KEVO_OK)
            return kevo__error_set(r->err, rc, "out of memory");
        kevo_archive_free(s->pop.islands[i]);
        s->pop.islands[i] = a;
    }
    return KEVO_OK;
}

static kevo_status restore_operators(kevo_search *s, reader *r, json_t *root)
{
    json_t *ops = member(r, root, "operators", JSON_ARRAY);
    if (!ops)
        return r->err->code;
    for (size_t i = 0; i < s->ops.n; i++) {
        kevo__search_op *o = &s->ops.list[i];
        json_t *e = NULL;
        size_t j, at = 0;
        json_t *v;
        json_array_foreach (ops, j, v) {
            json_t *n = json_object_get(v, "name");
            if (json_is_string(n) &&
                strcmp(json_string_value(n), kevo_operator_name(o->op)) == 0) {
                e = v;
                at = j;
            }
        }
        if (!e)
            return kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                                   "$.operators has no operator %s: resume "
                                   "with the operators of the run",
                                   kevo_operator_name(o->op));
        json_t *st = json_object_get(e, "rng");
        if (json_is_string(st) &&
            kevo_rng_restore(kevo_operator_rng(o->op), json_string_value(st),
                             r->err) != KEVO_OK)
            return r->err->code;
        size_t mark = kevo__jpath_key(&r->path, "operators");
        kevo__jpath_index(&r->path, at);
        get_u64(r, e, "requests", &o->requests);
        get_u64(r, e, "children", &o->children);
        get_u64(r, e, "evaluated", &o->evaluated);
        get_u64(r, e, "entered", &o->entered);
        get_u64(r, e, "improved", &o->improved);
        get_u64(r, e, "failures", &o->failures);
        get_u64(r, e, "revisions", &o->revisions);
        /* What the operator spent (absent from the checkpoints of earlier
         * versions: counted from 0 then). */
        uint64_t in = 0, out = 0;
        json_t *cost = json_object_get(e, "cost");
        if (json_object_get(e, "input_tokens"))
            get_u64(r, e, "input_tokens", &in);
        if (json_object_get(e, "output_tokens"))
            get_u64(r, e, "output_tokens", &out);
        if (cost &&
            (!json_is_number(cost) || !isfinite(json_number_value(cost)) ||
             json_number_value(cost) < 0)) {
            size_t at_cost = kevo__jpath_key(&r->path, "cost");
            kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                            "must be a non-negative number");
            kevo__jpath_pop(&r->path, at_cost);
        }
        if (!r->err->code)
            kevo__op_restore_usage(o->op, in, out,
                                   cost ? json_number_value(cost) : 0);
        kevo__jpath_pop(&r->path, mark);
        kevo__search_validity_get(e, &o->validity);
        if (r->err->code)
            return r->err->code;
    }
    return KEVO_OK;
}

static kevo_status restore_gates(kevo_search *s, reader *r, json_t *root)
{
    json_t *gates = member(r, root, "gates", JSON_ARRAY);
    if (!gates)
        return r->err->code;
    size_t i;
    json_t *g;
    json_array_foreach (gates, i, g) {
        uint64_t id;
        if (!get_u64(r, g, "id", &id))
            return r->err->code;
        if (s->pick.ngates == s->pick.cgates) {
            size_t c = s->pick.cgates ? 2 * s->pick.cgates : 16;
            kevo__search_gate *n = realloc(s->pick.gates, c * sizeof *n);
            if (!n)
                return kevo__error_set(r->err, KEVO_ENOMEM, "out of memory");
            s->pick.gates = n;
            s->pick.cgates = c;
        }
        kevo__search_gate *x = &s->pick.gates[s->pick.ngates++];
        memset(x, 0, sizeof *x);
        x->id = id;
        x->fitness = real_or_nan(json_object_get(g, "fitness"));
        x->held_fitness = real_or_nan(json_object_get(g, "held_out_fitness"));
        x->retimed = real_or_nan(json_object_get(g, "retimed")); /* optional */
        x->passed = json_is_true(json_object_get(g, "passed"));
        /* A verdict of the earlier rule (held-out fitness against the
         * candidate's own training fitness) is not kept: gated again. */
        json_t *rule = json_object_get(g, "rule");
        x->done = x->started = json_is_string(rule) &&
                               strcmp(json_string_value(rule), GATE_RULE) == 0;
        json_t *why = json_object_get(g, "reason");
        x->reason = json_is_string(why) ? strdup(json_string_value(why)) : NULL;
    }
    json_t *champ = json_object_get(root, "champion");
    if (json_is_object(champ)) {
        size_t mark = kevo__jpath_key(&r->path, "champion");
        kevo_status rc = kevo__candidate_from_json(
            champ, r->origin, &r->path, &s->pick.champion_cand, r->err);
        kevo__jpath_pop(&r->path, mark);
        if (rc != KEVO_OK)
            return rc;
        kevo__search_gate *cg = kevo__search_gate_find(
            &s->pick, kevo_candidate_id(s->pick.champion_cand));
        s->pick.champion = cg ? (long)(cg - s->pick.gates) : -1;
    }
    return KEVO_OK;
}

/* The leaders; a checkpoint written before they were kept gives its
 * correct elites instead. */
static kevo_status restore_leaders(kevo_search *s, reader *r, json_t *root)
{
    json_t *arr = json_object_get(root, "leaders");
    if (json_is_array(arr)) {
        size_t mark = kevo__jpath_key(&r->path, "leaders");
        kevo_status rc =
            kevo__search_leaders_restore(s, arr, r->origin, &r->path, r->err);
        kevo__jpath_pop(&r->path, mark);
        return rc;
    }
    for (size_t i = 0; i < s->pop.nislands; i++) {
        const kevo_archive *a = s->pop.islands[i];
        for (size_t c = kevo_archive_first(a); c != KEVO_NO_CELL;
             c = kevo_archive_next(a, c)) {
            kevo_status rc =
                kevo__search_leaders_offer(s, kevo_archive_candidate(a, c),
                                           kevo_archive_fitness(a, c), r->err);
            if (rc != KEVO_OK)
                return rc;
        }
    }
    return KEVO_OK;
}

static kevo_status restore_tables(kevo_search *s, reader *r, json_t *root)
{
    json_t *seen = member(r, root, "seen", JSON_ARRAY);
    json_t *notes = member(r, root, "notes", JSON_OBJECT);
    json_t *obs = member(r, root, "observations", JSON_ARRAY);
    json_t *hist = member(r, root, "history", JSON_ARRAY);
    if (!seen || !notes || !obs || !hist)
        return r->err->code;
    size_t i;
    json_t *v;
    json_array_foreach (seen, i, v) {
        uint64_t k;
        if (!json_is_string(v) ||
            sscanf(json_string_value(v), "%" SCNx64, &k) != 1)
            return kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                                   "$.seen[%zu] is not a hexadecimal key", i);
        if (kevo__op_seen_add(s->ops.host, k) != KEVO_OK)
            return kevo__error_set(r->err, KEVO_ENOMEM, "out of memory");
    }
    /* Each evaluation goes back beside every elite that holds its
     * candidate. */
    for (size_t isl = 0; isl < s->pop.nislands; isl++) {
        kevo_archive *a = s->pop.islands[isl];
        for (size_t c = kevo_archive_first(a); c != KEVO_NO_CELL;
             c = kevo_archive_next(a, c)) {
            char k[24];
            snprintf(k, sizeof k, "%" PRIu64,
                     kevo_candidate_id(kevo_archive_candidate(a, c)));
            v = json_object_get(notes, k);
            if (json_is_string(v) &&
                kevo__archive_set_note(a, c, KEVO_NOTE_EVALUATION,
                                       json_string_value(v)) != KEVO_OK)
                return kevo__error_set(r->err, KEVO_ENOMEM, "out of memory");
        }
    }
    json_array_foreach (hist, i, v) {
        if (kevo__search_history_add(
                &s->progress, real_or_nan(json_array_get(v, 0)),
                real_or_nan(json_array_get(v, 1))) != KEVO_OK)
            return kevo__error_set(r->err, KEVO_ENOMEM, "out of memory");
    }
    size_t nshapes = kevo_task_shape_count(s->cfg.task, KEVO_SHAPES_TRAIN);
    s->tuning.obs = calloc(json_array_size(obs) + 1, sizeof *s->tuning.obs);
    if (!s->tuning.obs)
        return kevo__error_set(r->err, KEVO_ENOMEM, "out of memory");
    s->tuning.cobs = json_array_size(obs) + 1;
    json_array_foreach (obs, i, v) {
        kevo__search_obs *o = &s->tuning.obs[s->tuning.nobs];
        json_t *times = json_object_get(v, "times");
        json_t *params = json_object_get(v, "params");
        json_t *src = json_object_get(v, "source");
        if (!json_is_array(times) || json_array_size(times) != nshapes ||
            !json_is_object(params) || !json_is_string(src))
            return kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                                   "$.observations[%zu] is malformed", i);
        o->id = (uint64_t)json_integer_value(json_object_get(v, "id"));
        sscanf(json_string_value(src), "%" SCNx64, &o->source_hash);
        o->params = kevo_vars_new();
        o->times = calloc(nshapes ? nshapes : 1, sizeof *o->times);
        if (!o->params || !o->times) {
            kevo_vars_free(o->params);
            free(o->times);
            return kevo__error_set(r->err, KEVO_ENOMEM, "out of memory");
        }
        s->tuning.nobs++;
        const char *name;
        json_t *pv;
        json_object_foreach (params, name, pv)
            kevo_vars_set(o->params, name, json_integer_value(pv));
        for (size_t j = 0; j < nshapes; j++)
            o->times[j] = real_or_nan(json_array_get(times, j));
    }
    return KEVO_OK;
}

kevo_status kevo__search_restore(kevo_search *s, const char *json,
                                 const char *origin, kevo_error *err)
{
    json_t *root = NULL;
    kevo_status rc = kevo__json_parse(json, origin, &root, err);
    if (rc != KEVO_OK)
        return rc;
    reader r = {.origin = origin, .err = err};
    kevo__jpath_init(&r.path);
    kevo_error local = KEVO__ERROR_INIT;
    if (!err)
        r.err = &local;
    json_t *fmt = member(&r, root, "format", JSON_STRING);
    json_t *ver = member(&r, root, "version", JSON_INTEGER);
    if (!fmt || !ver || strcmp(json_string_value(fmt), CHECKPOINT_FORMAT) ||
        json_integer_value(ver) != CHECKPOINT_VERSION) {
        rc = kevo__error_set(r.err, KEVO_EFORMAT,
                             "%s: not a kevo checkpoint of version %d", origin,
                             CHECKPOINT_VERSION);
        goto done;
    }
    json_t *hash = member(&r, root, "task_hash", JSON_STRING);
    uint64_t th = 0;
    if (!hash || task_hash(s->cfg.task, &th, r.err) != KEVO_OK) {
        rc = r.err->code;
        goto done;
    }
    char want[17];
    snprintf(want, sizeof want, "%016" PRIx64, th);
    if (strcmp(want, json_string_value(hash)) != 0) {
        rc = kevo__error_set(r.err, KEVO_EINVALID,
                             "%s: the checkpoint is of another task (or the "
                             "task %s has changed since)",
                             origin, kevo_task_name(s->cfg.task));
        goto done;
    }
    uint64_t seed;
    if (!get_u64(&r, root, "seed", &seed)) {
        rc = r.err->code;
        goto done;
    }
    s->cfg.opt[KEVO_SEARCH_SEED] = (int64_t)seed;
    kevo_rng_free(s->pop.rng);
    s->pop.rng = NULL;
    kevo_archive **old = s->pop.islands;
    size_t nold = s->pop.nislands;
    s->pop.islands = NULL;
    for (size_t i = 0; i < nold; i++)
        kevo_archive_free(old[i]);
    free(old);
    rc = kevo__search_prepare(s, r.err);
    if (rc == KEVO_OK)
        rc = restore_islands(s, &r, root);
    json_t *rng = rc == KEVO_OK ? member(&r, root, "rng", JSON_STRING) : NULL;
    if (rc == KEVO_OK && !rng)
        rc = r.err->code;
    if (rc == KEVO_OK)
        rc = kevo_rng_restore(s->pop.rng, json_string_value(rng), r.err);
    json_t *pool =
        rc == KEVO_OK ? member(&r, root, "prompts", JSON_OBJECT) : NULL;
    if (rc == KEVO_OK && !pool)
        rc = r.err->code;
    if (rc == KEVO_OK) {
        char *text = json_dumps(pool, JSON_COMPACT);
        kevo_promptpool *p = NULL;
        rc = text ? kevo_promptpool_from_json(text, origin, &p, r.err)
                  : KEVO_ENOMEM;
        free(text);
        if (rc == KEVO_OK) {
            kevo_promptpool_free(s->ops.pool);
            s->ops.pool = p;
        }
    }
    if (rc == KEVO_OK)
        rc = restore_operators(s, &r, root);
    json_t *c =
        rc == KEVO_OK ? member(&r, root, "counters", JSON_OBJECT) : NULL;
    if (rc == KEVO_OK && !c)
        rc = r.err->code;
    if (rc == KEVO_OK) {
        size_t mark = kevo__jpath_key(&r.path, "counters");
        bool ok =
            get_u64(&r, c, "evaluations", &s->progress.evaluations) &&
            get_u64(&r, c, "failures", &s->progress.failures) &&
            get_u64(&r, c, "improvements", &s->progress.improvements) &&
            get_u64(&r, c, "last_improvement", &s->progress.last_improvement) &&
            get_u64(&r, c, "next_id", &s->progress.next_id) &&
            get_u64(&r, c, "requests", &s->progress.requests);
        json_t *rid = json_object_get(c, "request_id");
        if (json_is_integer(rid) && json_integer_value(rid) > 0 &&
            (uint64_t)json_integer_value(rid) > s->ops.host->next_id)
            s->ops.host->next_id = (uint64_t)json_integer_value(rid);
        s->progress.elapsed_before = real_or_nan(json_object_get(c, "elapsed"));
        if (!isfinite(s->progress.elapsed_before))
            s->progress.elapsed_before = 0;
        kevo__jpath_pop(&r.path, mark);
        s->progress.submitted = s->progress.evaluations;
        rc = ok ? KEVO_OK : r.err->code;
    }
    if (rc == KEVO_OK) {
        double b = real_or_nan(json_object_get(root, "best"));
        s->progress.best = isfinite(b) ? b : -INFINITY;
        rc = restore_gates(s, &r, root);
    }
    if (rc == KEVO_OK)
        rc = restore_tables(s, &r, root);
    if (rc == KEVO_OK)
        rc = restore_leaders(s, &r, root);
    /* Absent from a checkpoint written before validity was counted. */
    if (rc == KEVO_OK &&
        json_is_array(json_object_get(root, "prompt_validity")))
        rc = kevo__search_pvalid_restore(
            &s->ops, json_object_get(root, "prompt_validity"), r.err);
done:
    json_decref(root);
    return rc;
}

/* ---- opening a run ------------------------------------------------------- */

kevo_status kevo_search_open_run(kevo_search *s, const char *path,
                                 unsigned flags, const char *command,
                                 kevo_error *err)
{
    if (!s || !path)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_search_open_run: NULL argument");
    if (s->state.started || s->run.dir)
        return kevo__error_set(err, KEVO_ESTATE,
                               "kevo_search_open_run: the search has started "
                               "or has a run directory");
    if (flags & ~KEVO_SEARCH_RUN_RESUME)
        return kevo__error_set(
            err, KEVO_EINVAL, "kevo_search_open_run: unknown flags %#x", flags);
    bool resume = flags & KEVO_SEARCH_RUN_RESUME;
    kevo_status rc = kevo_rundir_open(
        path, resume ? KEVO_RUNDIR_RESUME : KEVO_RUNDIR_NEW, &s->run.dir, err);
    if (rc != KEVO_OK)
        return rc;
    free(s->run.command);
    s->run.command = NULL;
    if (command && !(s->run.command = strdup(command))) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto fail;
    }
    rc = kevo_operator_host_set_run_dir(s->ops.host, path, err);
    if (rc != KEVO_OK)
        goto fail;
    if (resume) {
        char *json = NULL;
        rc = kevo_rundir_read_checkpoint(path, &json, err);
        if (rc == KEVO_OK) {
            char *origin = kevo__path_join(path, "checkpoint.json");
            rc = origin ? kevo__search_restore(s, json, origin, err)
                        : kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            free(origin);
        }
        free(json);
        if (rc != KEVO_OK)
            goto fail;
        s->run.resumed = true;
        return kevo__search_log(
            s, "resume",
            json_pack("{s:I}", "n", (json_int_t)s->progress.evaluations), err);
    }
    char *task = NULL;
    rc = kevo_task_to_json(s->cfg.task, &task, err);
    if (rc == KEVO_OK)
        rc = kevo_rundir_write_file(s->run.dir, "task.json", task, strlen(task),
                                    err);
    free(task);
    if (rc == KEVO_OK)
        return KEVO_OK;
fail:
    kevo_rundir_free(s->run.dir);
    s->run.dir = NULL;
    return rc;
}

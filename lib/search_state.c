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

#include "archive_private.h"
#include "candidate_private.h"
#include "eval_private.h"
#include "jsonutil.h"
#include "operator_private.h"
#include "search_private.h"

#define CHECKPOINT_FORMAT "kevo-checkpoint"
#define CHECKPOINT_VERSION 1

kevo_status kevo__search_prepare(kevo_search *s, kevo_error *err);

json_t *kevo__search_params_json(const kevo_vars *params)
{
    json_t *o = json_object();
    for (size_t i = 0; params && i < kevo_vars_count(params); i++)
        json_object_set_new(o, kevo_vars_name(params, i),
                            json_integer(kevo_vars_value(params, i)));
    return o;
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
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
    if (task_hash(s->task, &th, err) != KEVO_OK)
        return NULL;
    json_t *root = json_object();
    char hash[17];
    snprintf(hash, sizeof hash, "%016" PRIx64, th);
    json_object_set_new(root, "format", json_string(CHECKPOINT_FORMAT));
    json_object_set_new(root, "version", json_integer(CHECKPOINT_VERSION));
    json_object_set_new(root, "task", json_string(kevo_task_name(s->task)));
    json_object_set_new(root, "task_hash", json_string(hash));
    json_object_set_new(root, "seed", json_integer(s->opt[KEVO_SEARCH_SEED]));
    json_t *islands = json_array();
    for (size_t i = 0; i < s->nislands; i++) {
        char *t = NULL;
        kevo_archive_to_json(s->islands[i], &t, NULL);
        json_array_append_new(islands, parse_owned(t));
    }
    json_object_set_new(root, "islands", islands);
    char *pool = NULL;
    kevo_promptpool_to_json(s->pool, &pool, NULL);
    json_object_set_new(root, "prompts", parse_owned(pool));
    char *state = NULL;
    kevo_rng_save(s->rng, &state);
    json_object_set_new(root, "rng", state ? json_string(state) : json_null());
    free(state);
    json_t *ops = json_array();
    for (size_t i = 0; i < s->nops; i++) {
        kevo__search_op *o = &s->ops[i];
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
        free(st);
    }
    json_object_set_new(root, "operators", ops);
    json_object_set_new(
        root, "counters",
        json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "evaluations",
                  (json_int_t)s->evaluations, "submitted",
                  (json_int_t)s->evaluations, "failures",
                  (json_int_t)s->failures, "improvements",
                  (json_int_t)s->improvements, "last_improvement",
                  (json_int_t)s->last_improvement, "next_id",
                  (json_int_t)s->next_id, "requests", (json_int_t)s->requests,
                  "elapsed", s->elapsed_before + kevo__search_elapsed(s)));
    json_object_set_new(root, "best", num_or_null(s->best));
    json_t *hist = json_array();
    for (size_t i = 0; i < s->nhistory; i++)
        json_array_append_new(hist, json_pack("[f, f]", s->history[2 * i],
                                              s->history[2 * i + 1]));
    json_object_set_new(root, "history", hist);
    json_t *gates = json_array();
    for (size_t i = 0; i < s->ngates; i++) {
        const kevo__search_gate *g = &s->gates[i];
        if (!g->done)
            continue;
        json_t *o = json_pack("{s:I, s:f, s:b}", "id", (json_int_t)g->id,
                              "fitness", g->fitness, "passed", g->passed);
        json_object_set_new(o, "held_out_fitness",
                            num_or_null(g->held_fitness));
        json_object_set_new(o, "reason",
                            g->reason ? json_string(g->reason) : json_null());
        json_array_append_new(gates, o);
    }
    json_object_set_new(root, "gates", gates);
    json_object_set_new(root, "champion",
                        s->champion_cand
                            ? kevo__candidate_to_json(s->champion_cand)
                            : json_null());
    json_t *seen = json_array();
    for (size_t i = 0; i < s->host->cseen; i++) {
        char k[17];
        if (!s->host->seen[i])
            continue; /* a free slot of the hash table */
        snprintf(k, sizeof k, "%016" PRIx64, s->host->seen[i]);
        json_array_append_new(seen, json_string(k));
    }
    json_object_set_new(root, "seen", seen);
    json_t *notes = json_object();
    for (size_t i = 0; i < s->nnotes; i++) {
        size_t isl, cell;
        if (!kevo__search_find_elite(s, s->notes[i].id, &isl, &cell))
            continue;
        char k[24];
        snprintf(k, sizeof k, "%" PRIu64, s->notes[i].id);
        json_object_set_new(notes, k, json_string(s->notes[i].json));
    }
    json_object_set_new(root, "notes", notes);
    json_t *obs = json_array();
    size_t nshapes = kevo_task_shape_count(s->task, KEVO_SHAPES_TRAIN);
    for (size_t i = 0; i < s->nobs; i++) {
        char k[17];
        snprintf(k, sizeof k, "%016" PRIx64, s->obs[i].source_hash);
        json_t *times = json_array();
        for (size_t j = 0; j < nshapes; j++)
            json_array_append_new(times, num_or_null(s->obs[i].times[j]));
        json_array_append_new(
            obs, json_pack("{s:I, s:s, s:o, s:o}", "id",
                           (json_int_t)s->obs[i].id, "source", k, "params",
                           kevo__search_params_json(s->obs[i].params), "times",
                           times));
    }
    json_object_set_new(root, "observations", obs);
    return root;
}

kevo_status kevo__search_checkpoint(kevo_search *s, kevo_error *err)
{
    s->since_checkpoint = 0;
    if (!s->dir)
        return KEVO_OK;
    json_t *root = checkpoint_json(s, err);
    if (!root)
        return err && err->code
                   ? err->code
                   : kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!text)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = kevo_rundir_checkpoint(s->dir, text, err);
    free(text);
    if (rc == KEVO_OK)
        rc = kevo__search_write_summary(s, "running", err);
    if (rc == KEVO_OK)
        rc = kevo__search_log(
            s, "checkpoint",
            json_pack("{s:I}", "n", (json_int_t)s->evaluations), err);
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

/* The member key of obj, of JSON type type (JSON_NULL: any), or NULL with
 * the error set. */
static json_t *member(reader *r, json_t *obj, const char *key, json_type type)
{
    size_t mark = kevo__jpath_key(&r->path, key);
    json_t *v = json_object_get(obj, key);
    if (!v)
        kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path, "missing");
    else if (type != JSON_NULL && json_typeof(v) != type &&
             !(type == JSON_REAL && json_is_integer(v)) &&
             !(type == JSON_TRUE && json_is_boolean(v))) {
        kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                        "has the wrong type (%s)", kevo__json_type_name(v));
        v = NULL;
    }
    kevo__jpath_pop(&r->path, mark);
    return v;
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
    if (json_array_size(isl) != s->nislands)
        return kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                               "$.islands has %zu islands; the search is "
                               "set up with %zu",
                               json_array_size(isl), s->nislands);
    for (size_t i = 0; i < s->nislands; i++) {
        char *text = json_dumps(json_array_get(isl, i), JSON_COMPACT);
        kevo_archive *a = NULL;
        kevo_status rc =
            text ? kevo_archive_from_json(text, r->origin, &a, r->err)
                 : KEVO_ENOMEM;
        free(text);
        if (rc != KEVO_OK)
            return kevo__error_set(r->err, rc, "out of memory");
        kevo_archive_free(s->islands[i]);
        s->islands[i] = a;
    }
    return KEVO_OK;
}

static kevo_status restore_operators(kevo_search *s, reader *r, json_t *root)
{
    json_t *ops = member(r, root, "operators", JSON_ARRAY);
    if (!ops)
        return r->err->code;
    for (size_t i = 0; i < s->nops; i++) {
        kevo__search_op *o = &s->ops[i];
        json_t *e = NULL;
        size_t j;
        json_t *v;
        json_array_foreach (ops, j, v) {
            json_t *n = json_object_get(v, "name");
            if (json_is_string(n) &&
                strcmp(json_string_value(n), kevo_operator_name(o->op)) == 0)
                e = v;
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
        get_u64(r, e, "requests", &o->requests);
        get_u64(r, e, "children", &o->children);
        get_u64(r, e, "evaluated", &o->evaluated);
        get_u64(r, e, "entered", &o->entered);
        get_u64(r, e, "improved", &o->improved);
        get_u64(r, e, "failures", &o->failures);
        get_u64(r, e, "revisions", &o->revisions);
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
        if (s->ngates == s->cgates) {
            size_t c = s->cgates ? 2 * s->cgates : 16;
            kevo__search_gate *n = realloc(s->gates, c * sizeof *n);
            if (!n)
                return kevo__error_set(r->err, KEVO_ENOMEM, "out of memory");
            s->gates = n;
            s->cgates = c;
        }
        kevo__search_gate *x = &s->gates[s->ngates++];
        memset(x, 0, sizeof *x);
        x->id = id;
        x->fitness = real_or_nan(json_object_get(g, "fitness"));
        x->held_fitness = real_or_nan(json_object_get(g, "held_out_fitness"));
        x->passed = json_is_true(json_object_get(g, "passed"));
        x->done = true;
        json_t *why = json_object_get(g, "reason");
        x->reason = json_is_string(why) ? strdup(json_string_value(why)) : NULL;
    }
    json_t *champ = json_object_get(root, "champion");
    if (json_is_object(champ)) {
        size_t mark = kevo__jpath_key(&r->path, "champion");
        kevo_status rc = kevo__candidate_from_json(champ, r->origin, &r->path,
                                                   &s->champion_cand, r->err);
        kevo__jpath_pop(&r->path, mark);
        if (rc != KEVO_OK)
            return rc;
        kevo__search_gate *cg =
            kevo__search_gate_find(s, kevo_candidate_id(s->champion_cand));
        s->champion = cg ? (long)(cg - s->gates) : -1;
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
        if (kevo__op_seen_add(s->host, k) != KEVO_OK)
            return kevo__error_set(r->err, KEVO_ENOMEM, "out of memory");
    }
    const char *key;
    json_object_foreach (notes, key, v) {
        if (json_is_string(v) &&
            kevo__search_set_note(s, strtoull(key, NULL, 10),
                                  json_string_value(v)) != KEVO_OK)
            return kevo__error_set(r->err, KEVO_ENOMEM, "out of memory");
    }
    json_array_foreach (hist, i, v) {
        if (kevo__search_history_add(s, real_or_nan(json_array_get(v, 0)),
                                     real_or_nan(json_array_get(v, 1))) !=
            KEVO_OK)
            return kevo__error_set(r->err, KEVO_ENOMEM, "out of memory");
    }
    size_t nshapes = kevo_task_shape_count(s->task, KEVO_SHAPES_TRAIN);
    s->obs = calloc(json_array_size(obs) + 1, sizeof *s->obs);
    if (!s->obs)
        return kevo__error_set(r->err, KEVO_ENOMEM, "out of memory");
    s->cobs = json_array_size(obs) + 1;
    json_array_foreach (obs, i, v) {
        kevo__search_obs *o = &s->obs[s->nobs];
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
        s->nobs++;
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
    if (!hash || task_hash(s->task, &th, r.err) != KEVO_OK) {
        rc = r.err->code;
        goto done;
    }
    char want[17];
    snprintf(want, sizeof want, "%016" PRIx64, th);
    if (strcmp(want, json_string_value(hash)) != 0) {
        rc = kevo__error_set(r.err, KEVO_EINVALID,
                             "%s: the checkpoint is of another task (or the "
                             "task %s has changed since)",
                             origin, kevo_task_name(s->task));
        goto done;
    }
    uint64_t seed;
    if (!get_u64(&r, root, "seed", &seed)) {
        rc = r.err->code;
        goto done;
    }
    s->opt[KEVO_SEARCH_SEED] = (int64_t)seed;
    kevo_rng_free(s->rng);
    s->rng = NULL;
    kevo_archive **old = s->islands;
    size_t nold = s->nislands;
    s->islands = NULL;
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
        rc = kevo_rng_restore(s->rng, json_string_value(rng), r.err);
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
            kevo_promptpool_free(s->pool);
            s->pool = p;
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
        bool ok = get_u64(&r, c, "evaluations", &s->evaluations) &&
                  get_u64(&r, c, "failures", &s->failures) &&
                  get_u64(&r, c, "improvements", &s->improvements) &&
                  get_u64(&r, c, "last_improvement", &s->last_improvement) &&
                  get_u64(&r, c, "next_id", &s->next_id) &&
                  get_u64(&r, c, "requests", &s->requests);
        s->elapsed_before = real_or_nan(json_object_get(c, "elapsed"));
        if (!isfinite(s->elapsed_before))
            s->elapsed_before = 0;
        kevo__jpath_pop(&r.path, mark);
        s->submitted = s->evaluations;
        rc = ok ? KEVO_OK : r.err->code;
    }
    if (rc == KEVO_OK) {
        double b = real_or_nan(json_object_get(root, "best"));
        s->best = isfinite(b) ? b : -INFINITY;
        rc = restore_gates(s, &r, root);
    }
    if (rc == KEVO_OK)
        rc = restore_tables(s, &r, root);
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
    if (s->started_flag || s->dir)
        return kevo__error_set(err, KEVO_ESTATE,
                               "kevo_search_open_run: the search has started "
                               "or has a run directory");
    if (flags & ~KEVO_SEARCH_RUN_RESUME)
        return kevo__error_set(
            err, KEVO_EINVAL, "kevo_search_open_run: unknown flags %#x", flags);
    bool resume = flags & KEVO_SEARCH_RUN_RESUME;
    kevo_status rc = kevo_rundir_open(
        path, resume ? KEVO_RUNDIR_RESUME : KEVO_RUNDIR_NEW, &s->dir, err);
    if (rc != KEVO_OK)
        return rc;
    free(s->command);
    s->command = NULL;
    if (command && !(s->command = strdup(command))) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto fail;
    }
    rc = kevo_operator_host_set_run_dir(s->host, path, err);
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
        s->resumed = true;
        return kevo__search_log(
            s, "resume", json_pack("{s:I}", "n", (json_int_t)s->evaluations),
            err);
    }
    char *task = NULL;
    rc = kevo_task_to_json(s->task, &task, err);
    if (rc == KEVO_OK)
        rc = kevo_rundir_write_file(s->dir, "task.json", task, strlen(task),
                                    err);
    free(task);
    if (rc == KEVO_OK)
        return KEVO_OK;
fail:
    kevo_rundir_close(s->dir);
    s->dir = NULL;
    return rc;
}

/* ---- summary.json -------------------------------------------------------- */

/* The label of bin b of an archive dimension, from the task's bins. */
static json_t *dimension_json(const kevo_search *s, size_t d)
{
    const kevo_archive *a = s->islands[0];
    const kevo__archive_dim *dim = &a->dims[d];
    json_t *labels = json_array();
    char buf[64];
    for (size_t b = 0; b < dim->nbins; b++) {
        if (dim->nedges) {
            if (b == 0)
                snprintf(buf, sizeof buf, "<%g", dim->edges[0]);
            else if (b == dim->nedges)
                snprintf(buf, sizeof buf, ">=%g", dim->edges[b - 1]);
            else
                snprintf(buf, sizeof buf, "%g-%g", dim->edges[b - 1],
                         dim->edges[b]);
        } else {
            double w = (dim->hi - dim->lo) / (double)dim->nbins;
            snprintf(buf, sizeof buf, "%g-%g", dim->lo + w * (double)b,
                     dim->lo + w * (double)(b + 1));
        }
        json_array_append_new(labels, json_string(buf));
    }
    return json_pack("{s:s, s:I, s:o}", "name", dim->name, "bins",
                     (json_int_t)dim->nbins, "labels", labels);
}

static json_t *archive_json(const kevo_search *s)
{
    size_t cells = 0, filled = 0;
    double qd = 0;
    json_t *elites = json_array();
    for (size_t i = 0; i < s->nislands; i++) {
        const kevo_archive *a = s->islands[i];
        cells += kevo_archive_cell_count(a);
        filled += kevo_archive_size(a);
        for (size_t c = kevo_archive_first(a); c != KEVO_NO_CELL;
             c = kevo_archive_next(a, c)) {
            const kevo_candidate *e = kevo_archive_candidate(a, c);
            double f = kevo_archive_fitness(a, c);
            qd += f;
            json_t *coords = json_array();
            for (size_t d = 0; d < a->ndims; d++)
                json_array_append_new(
                    coords, json_integer((json_int_t)((c / a->dims[d].stride) %
                                                      a->dims[d].nbins)));
            const char *op = kevo_candidate_operator(e);
            json_array_append_new(
                elites, json_pack("{s:I, s:I, s:o, s:f, s:I, s:s, s:I}",
                                  "island", (json_int_t)i, "cell",
                                  (json_int_t)c, "coords", coords, "fitness", f,
                                  "id", (json_int_t)kevo_candidate_id(e),
                                  "operator", op ? op : "seed", "generation",
                                  (json_int_t)kevo_candidate_generation(e)));
        }
    }
    json_t *dims = json_array();
    for (size_t d = 0; d < kevo_archive_dimension_count(s->islands[0]); d++)
        json_array_append_new(dims, dimension_json(s, d));
    return json_pack("{s:I, s:I, s:I, s:f, s:f, s:o, s:o}", "islands",
                     (json_int_t)s->nislands, "cells", (json_int_t)cells,
                     "filled", (json_int_t)filled, "coverage",
                     cells ? (double)filled / (double)cells : 0.0, "qd_score",
                     qd, "dimensions", dims, "elites", elites);
}

static json_t *timing(double time, double floor)
{
    return json_pack(
        "{s:o, s:o}", "time", num_or_null(time), "efficiency",
        num_or_null(isfinite(time) && time > 0 ? floor / time : NAN));
}

static const char *bound_name(kevo_bound b)
{
    return b == KEVO_BOUND_COMPUTE   ? "compute"
           : b == KEVO_BOUND_LATENCY ? "latency"
                                     : "memory";
}

/* The per-shape table: the champion's results, with the seed's and the
 * reference's times they carry. */
static json_t *shapes_json(const kevo_search *s)
{
    json_t *arr = json_array();
    if (s->champion < 0)
        return arr;
    const kevo__search_gate *g = &s->gates[s->champion];
    const kevo_eval_result *sets[2] = {g->train, g->held};
    for (size_t k = 0; k < 2; k++) {
        const kevo_eval_result *res = sets[k];
        kevo_shape_set set = k ? KEVO_SHAPES_HELD_OUT : KEVO_SHAPES_TRAIN;
        for (size_t i = 0; res && i < kevo_eval_result_shape_count(res); i++) {
            kevo_shape_result sr = {.size = sizeof sr};
            if (kevo_eval_result_shape(res, i, &sr) != KEVO_OK)
                break;
            kevo_vars *dims = kevo_vars_new();
            if (dims)
                kevo_task_shape_vars(s->task, set, sr.index, dims);
            json_t *o = json_pack(
                "{s:s, s:I, s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:o}", "set",
                k ? "held_out" : "training", "index", (json_int_t)sr.index,
                "dims", kevo__search_params_json(dims), "bytes",
                num_or_null(sr.bytes), "flops", num_or_null(sr.flops), "floor",
                num_or_null(sr.floor), "bound", bound_name(sr.bound), "seed",
                timing(sr.seed_time, sr.floor), "champion",
                timing(sr.correct ? sr.time : NAN, sr.floor), "reference",
                timing(sr.reference_time, sr.floor));
            kevo_vars_free(dims);
            json_array_append_new(arr, o);
        }
    }
    return arr;
}

static json_t *gate_json(const kevo_search *s, const kevo__search_gate *g)
{
    double ratio =
        s->ev
            ? (double)kevo_evaluator_get_int(s->ev, KEVO_EVAL_GATE_RATIO_PPM) /
                  1e6
            : NAN;
    json_t *o = json_pack("{s:I, s:b, s:f}", "id", (json_int_t)g->id, "passed",
                          g->passed, "train_fitness", g->fitness);
    json_object_set_new(o, "fitness", json_real(g->fitness));
    json_object_set_new(o, "held_out_fitness", num_or_null(g->held_fitness));
    json_object_set_new(o, "ratio", num_or_null(ratio));
    json_object_set_new(o, "reason",
                        g->reason ? json_string(g->reason) : json_null());
    return o;
}

static json_t *champion_json(const kevo_search *s)
{
    double fitness;
    const kevo_candidate *c = kevo_search_champion(s, &fitness);
    if (!c)
        return json_null();
    int64_t p = kevo_candidate_prompt(c);
    const char *op = kevo_candidate_operator(c);
    json_t *o =
        json_pack("{s:I, s:f, s:s, s:s, s:I, s:o}", "id",
                  (json_int_t)kevo_candidate_id(c), "fitness", fitness, "file",
                  "best.cu", "operator", op ? op : "seed", "generation",
                  (json_int_t)kevo_candidate_generation(c), "params",
                  kevo__search_params_json(kevo_candidate_assignment(c)));
    json_object_set_new(o, "prompt", p >= 0 ? json_integer(p) : json_null());
    json_object_set_new(o, "gate",
                        s->champion >= 0 ? gate_json(s, &s->gates[s->champion])
                                         : json_null());
    return o;
}

static json_t *operators_json(const kevo_search *s)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < s->nops; i++) {
        const kevo__search_op *o = &s->ops[i];
        uint64_t in = 0, out = 0;
        double cost = 0;
        kevo_operator_usage(o->op, &in, &out, &cost);
        json_array_append_new(
            arr,
            json_pack("{s:s, s:s, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
                      "s:I, s:I, s:f}",
                      "name", kevo_operator_name(o->op), "plugin", o->plugin,
                      "weight", o->weight, "requests", (json_int_t)o->requests,
                      "children", (json_int_t)o->children, "evaluated",
                      (json_int_t)o->evaluated, "entered",
                      (json_int_t)o->entered, "improved",
                      (json_int_t)o->improved, "failures",
                      (json_int_t)o->failures, "revisions",
                      (json_int_t)o->revisions, "input_tokens", (json_int_t)in,
                      "output_tokens", (json_int_t)out, "cost", cost));
    }
    return arr;
}

static json_t *prompts_json(const kevo_search *s)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < kevo_promptpool_size(s->pool); i++) {
        uint64_t id = kevo_promptpool_id(s->pool, i);
        kevo_prompt_record r = {.size = sizeof r};
        if (kevo_promptpool_get_record(s->pool, id, &r) != KEVO_OK)
            continue;
        const char *name = kevo_promptpool_name(s->pool, id);
        json_t *o = json_pack(
            "{s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I}", "id",
            (json_int_t)id, "name", name ? name : "", "parent",
            (json_int_t)kevo_promptpool_parent(s->pool, id), "generation",
            (json_int_t)kevo_promptpool_generation(s->pool, id), "uses",
            (json_int_t)r.uses, "children", (json_int_t)r.children, "entered",
            (json_int_t)r.entered, "beat_parent", (json_int_t)r.beat_parent,
            "mean", r.mean, "revisions", (json_int_t)r.revisions);
        json_object_set_new(o, "best_fitness", num_or_null(r.best_fitness));
        json_array_append_new(arr, o);
    }
    return arr;
}

kevo_status kevo__search_write_summary(kevo_search *s, const char *state,
                                       kevo_error *err)
{
    if (!s->dir || !s->islands)
        return KEVO_OK;
    kevo_search_stats st = {.size = sizeof st};
    kevo_search_get_stats(s, &st);
    const char *fitness_name = "roofline";
    if (s->ev && s->champion >= 0 && s->gates[s->champion].train)
        fitness_name =
            kevo__eval_result_fitness_name(s->gates[s->champion].train);
    else if (s->score)
        fitness_name = "score";
    json_t *root = json_pack(
        "{s:s, s:i, s:s, s:s?, s:s?, s:s?, s:I, s:s, s:I, s:I, s:f, s:f, "
        "s:I, s:I, s:f, s:s}",
        "format", "kevo-summary", "version", 1, "task", kevo_task_name(s->task),
        "description", kevo_task_description(s->task), "device",
        s->ev ? kevo_evaluator_device_name(s->ev) : NULL, "command", s->command,
        "seed", (json_int_t)s->opt[KEVO_SEARCH_SEED], "state", state,
        "evaluations", (json_int_t)s->evaluations, "failures",
        (json_int_t)s->failures, "elapsed", s->elapsed_before + st.elapsed,
        "evals_per_second", st.evals_per_second, "input_tokens",
        (json_int_t)st.input_tokens, "output_tokens",
        (json_int_t)st.output_tokens, "cost", st.cost, "fitness_name",
        fitness_name);
    if (!root)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    json_object_set_new(root, "stop_reason",
                        s->stop ? json_string(kevo_stop_reason_name(s->stop))
                                : json_null());
    json_object_set_new(root, "archive", archive_json(s));
    json_t *hist = json_array();
    for (size_t i = 0; i < s->nhistory; i++)
        json_array_append_new(hist,
                              json_pack("[I, f]", (json_int_t)s->history[2 * i],
                                        s->history[2 * i + 1]));
    json_object_set_new(root, "history", hist);
    json_object_set_new(root, "champion", champion_json(s));
    json_t *tried = json_array();
    for (size_t i = 0; i < s->ngates; i++) {
        if (s->gates[i].done)
            json_array_append_new(tried, gate_json(s, &s->gates[i]));
    }
    json_object_set_new(root, "gate_tried", tried);
    json_object_set_new(root, "shapes", shapes_json(s));
    json_object_set_new(root, "operators", operators_json(s));
    json_object_set_new(root, "prompts", prompts_json(s));
    json_object_set_new(root, "dispatch",
                        s->dispatch ? json_string("best.dispatch.json")
                                    : json_null());
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
    json_decref(root);
    if (!text)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc =
        kevo_rundir_write_file(s->dir, "summary.json", text, strlen(text), err);
    free(text);
    return rc;
}

/* ---- best.cu ------------------------------------------------------------- */

kevo_status kevo__search_write_best(kevo_search *s, kevo_error *err)
{
    double fitness;
    const kevo_candidate *c = kevo_search_champion(s, &fitness);
    if (!s->dir || !c)
        return KEVO_OK;
    kevo_buf b = {0};
    const kevo_vars *params = kevo_candidate_assignment(c);
    kevo__buf_printf(&b, "/*\n * kevo: the champion of task %s\n",
                     kevo_task_name(s->task));
    kevo__buf_printf(
        &b, " * fitness %.4f (candidate %llu, %s, generation %u)\n", fitness,
        (unsigned long long)kevo_candidate_id(c),
        kevo_candidate_operator(c) ? kevo_candidate_operator(c) : "seed",
        (unsigned)kevo_candidate_generation(c));
    if (s->champion >= 0) {
        const kevo__search_gate *g = &s->gates[s->champion];
        kevo__buf_printf(&b, " * held-out gate: %s; held-out fitness %.4f\n",
                         g->passed ? "passed" : "failed", g->held_fitness);
    }
    kevo__buf_puts(&b, " * parameters:");
    kevo_buf p = {0};
    for (size_t i = 0; params && i < kevo_vars_count(params); i++) {
        kevo__buf_printf(&b, " %s=%lld", kevo_vars_name(params, i),
                         (long long)kevo_vars_value(params, i));
        kevo__buf_printf(&p, " -p %s=%lld", kevo_vars_name(params, i),
                         (long long)kevo_vars_value(params, i));
    }
    if (!params || kevo_vars_count(params) == 0)
        kevo__buf_puts(&b, " none");
    kevo__buf_puts(&b, "\n");
    if (s->dispatch)
        kevo__buf_puts(&b, " * per-shape parameters: best.dispatch.json\n");
    kevo__buf_printf(&b,
                     " * evaluate it again: kevo eval --held-out%s %s/task.json"
                     " %s/best.cu\n",
                     p.data ? p.data : "", kevo_rundir_path(s->dir),
                     kevo_rundir_path(s->dir));
    if (s->command)
        kevo__buf_printf(&b, " * found by: %s\n", s->command);
    kevo__buf_puts(&b, " */\n");
    kevo__buf_puts(&b, kevo_candidate_source(c));
    kevo__buf_free(&p);
    if (b.failed) {
        kevo__buf_free(&b);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    kevo_status rc =
        kevo_rundir_write_file(s->dir, "best.cu", b.data, b.len, err);
    kevo__buf_free(&b);
    return rc;
}

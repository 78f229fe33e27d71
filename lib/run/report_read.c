/*
 * report_read.c: reading a run directory's files for the report: typed
 * reads of JSON members that name the file and the path of a bad value,
 * the evaluations and gates of events.jsonl, and the summary's history.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_private.h"

/* ---- typed reads ------------------------------------------------------- */

/* obj's member key, or NULL when absent or null; when it is there and
 * is_type says no, fails naming what was expected. */
static kevo_status member(const kevo_report_in *in, const json_t *obj,
                          const char *key, kevo_jpath *path,
                          bool (*is_type)(const json_t *), const char *want,
                          json_t **out)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    *out = NULL;
    if (!v || json_is_null(v))
        return KEVO_OK;
    if (!is_type(v)) {
        size_t mark = kevo__jpath_key(path, key);
        kevo_status rc = kevo__json_fail(in->err, KEVO_EINVALID, in->origin,
                                         path, "expected %s, found %s", want,
                                         kevo__json_type_name(v));
        kevo__jpath_pop(path, mark);
        return rc;
    }
    *out = v;
    return KEVO_OK;
}

static bool is_number(const json_t *v)
{
    return json_is_number(v);
}

static bool is_integer(const json_t *v)
{
    return json_is_integer(v);
}

bool kevo__report_is_text(const json_t *v)
{
    return json_is_string(v) &&
           strlen(json_string_value(v)) == json_string_length(v);
}

static bool is_array(const json_t *v)
{
    return json_is_array(v);
}

static bool is_object(const json_t *v)
{
    return json_is_object(v);
}

kevo_status kevo__report_num(const kevo_report_in *in, const json_t *obj,
                             const char *key, kevo_jpath *path, double *out)
{
    json_t *v;
    kevo_status rc = member(in, obj, key, path, is_number, "a number", &v);
    *out = v ? json_number_value(v) : NAN;
    return rc;
}

kevo_status kevo__report_int(const kevo_report_in *in, const json_t *obj,
                             const char *key, kevo_jpath *path, int64_t *out)
{
    json_t *v;
    kevo_status rc = member(in, obj, key, path, is_integer, "an integer", &v);
    *out = v ? (int64_t)json_integer_value(v) : INT64_MIN;
    return rc;
}

kevo_status kevo__report_str(const kevo_report_in *in, const json_t *obj,
                             const char *key, kevo_jpath *path,
                             const char **out)
{
    json_t *v;
    kevo_status rc =
        member(in, obj, key, path, kevo__report_is_text, "a string", &v);
    *out = v ? json_string_value(v) : NULL;
    return rc;
}

kevo_status kevo__report_arr(const kevo_report_in *in, const json_t *obj,
                             const char *key, kevo_jpath *path, json_t **out)
{
    return member(in, obj, key, path, is_array, "an array", out);
}

kevo_status kevo__report_obj(const kevo_report_in *in, const json_t *obj,
                             const char *key, kevo_jpath *path, json_t **out)
{
    return member(in, obj, key, path, is_object, "an object", out);
}

static bool is_boolean(const json_t *v)
{
    return json_is_boolean(v);
}

/* A boolean member: 1, 0, or -1 when absent or null. */
kevo_status kevo__report_bool(const kevo_report_in *in, const json_t *obj,
                              const char *key, kevo_jpath *path, int *out)
{
    json_t *v;
    kevo_status rc = member(in, obj, key, path, is_boolean, "a boolean", &v);
    *out = v ? json_is_true(v) : -1;
    return rc;
}

/* ---- events.jsonl and the history -------------------------------------- */

/* items with room for one more than n (*cap grows), or NULL when out of
 * memory (items is then left as it was). */
static void *grow(void *items, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return items;
    size_t ncap = *cap ? *cap * 2 : 256;
    void *p = realloc(items, ncap * size);
    if (p)
        *cap = ncap;
    return p;
}

/* Adds the event o of type "eval" or "gate" to ev. Returns KEVO_OK,
 * KEVO_EINVALID for a field of the wrong type (the event is then to be
 * skipped), or KEVO_ENOMEM. */
static kevo_status add_event(kevo_report_events *ev, const kevo_report_in *in,
                             const char *type, const json_t *o, double *last_n)
{
    kevo_jpath path;
    kevo__jpath_init(&path);
    kevo_status rc = KEVO_OK;
    if (strcmp(type, "eval") == 0) {
        kevo_report_eval e = {0};
        const char *verdict;
        if ((rc = kevo__report_num(in, o, "n", &path, &e.n)) ||
            (rc = kevo__report_num(in, o, "fitness", &path, &e.fitness)) ||
            (rc = kevo__report_num(in, o, "best", &path, &e.best)) ||
            (rc = kevo__report_int(in, o, "id", &path, &e.id)) ||
            (rc = kevo__report_str(in, o, "verdict", &path, &verdict)))
            return rc;
        if (isnan(e.n))
            e.n = *last_n + 1;
        if (isnan(e.fitness))
            e.fitness = 0;
        e.ok = verdict ? strcmp(verdict, "ok") == 0 : e.fitness > 0;
        snprintf(e.verdict, sizeof e.verdict, "%s",
                 verdict ? verdict
                 : e.ok  ? "ok"
                         : "failed");
        if (!e.ok)
            e.fitness = 0;
        *last_n = e.n;
        kevo_report_eval *evals =
            grow(ev->evals, &ev->capevals, ev->nevals, sizeof e);
        if (!evals)
            return kevo__error_set(in->err, KEVO_ENOMEM, "out of memory");
        ev->evals = evals;
        ev->evals[ev->nevals++] = e;
    } else if (strcmp(type, "gate") == 0) {
        kevo_report_gate g = {.n = *last_n};
        int passed;
        if ((rc = kevo__report_int(in, o, "id", &path, &g.id)) ||
            (rc = kevo__report_num(in, o, "fitness", &path, &g.fitness)) ||
            (rc = kevo__report_num(in, o, "held_out_fitness", &path,
                                   &g.held_out)) ||
            (rc = kevo__report_bool(in, o, "passed", &path, &passed)))
            return rc;
        g.passed = passed == 1;
        if (isnan(g.fitness))
            return KEVO_OK;
        kevo_report_gate *gates =
            grow(ev->gates, &ev->capgates, ev->ngates, sizeof g);
        if (!gates)
            return kevo__error_set(in->err, KEVO_ENOMEM, "out of memory");
        ev->gates = gates;
        ev->gates[ev->ngates++] = g;
    }
    return KEVO_OK;
}

/* A resumed run goes on from its checkpoint, after evaluation n of the
 * "resume" event o: the evaluations logged after it by the run that
 * stopped (killed, or stopped to wait for replies) are made again, so
 * those are dropped, and the gates judged after them. */
static kevo_status resumed(kevo_report_events *ev, const kevo_report_in *in,
                           const json_t *o, double *last_n)
{
    kevo_jpath path;
    kevo__jpath_init(&path);
    double n;
    kevo_status rc = kevo__report_num(in, o, "n", &path, &n);
    if (rc != KEVO_OK || isnan(n))
        return rc == KEVO_OK ? KEVO_EINVALID : rc;
    while (ev->nevals > 0 && ev->evals[ev->nevals - 1].n > n)
        ev->nevals--;
    while (ev->ngates > 0 && ev->gates[ev->ngates - 1].n > n)
        ev->ngates--;
    *last_n = n;
    return KEVO_OK;
}

kevo_status kevo__report_read_events(const char *run_dir,
                                     kevo_report_events *ev, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    kevo_event_reader *r = NULL;
    char *path = kevo__path_join(run_dir, "events.jsonl");
    if (!path)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_error e = KEVO__ERROR_INIT;
    rc = kevo_event_reader_open(path, &r, &e);
    if (rc == KEVO_ENOENT) {
        rc = KEVO_OK;
        goto out;
    }
    if (rc != KEVO_OK) {
        kevo__error_wrap(err, &e, "%s", "");
        goto out;
    }
    ev->present = true;
    double last_n = 0;
    size_t bad = 0;
    for (;;) {
        const char *text;
        kevo_error le = KEVO__ERROR_INIT;
        rc = kevo_event_reader_next(r, &text, NULL, &le);
        if (rc == KEVO_EPARSE)
            continue;
        if (rc == KEVO_DONE) {
            rc = KEVO_OK;
            break;
        }
        if (rc != KEVO_OK) {
            kevo__error_wrap(err, &le, "%s", "");
            goto out;
        }
        ev->lines++;
        const char *type = kevo_event_reader_type(r);
        if (strcmp(type, "eval") != 0 && strcmp(type, "gate") != 0 &&
            strcmp(type, "resume") != 0)
            continue;
        json_error_t je;
        json_t *o = json_loads(text, 0, &je);
        if (!o && json_error_code(&je) == json_error_out_of_memory) {
            rc = kevo__error_set(err, KEVO_ENOMEM, "%s: out of memory", path);
            goto out;
        }
        if (!o) {
            bad++;
            continue;
        }
        kevo_report_in in = {path, &le};
        rc = strcmp(type, "resume") == 0 ? resumed(ev, &in, o, &last_n)
                                         : add_event(ev, &in, type, o, &last_n);
        json_decref(o);
        if (rc == KEVO_EINVALID) {
            bad++;
            rc = KEVO_OK;
        } else if (rc != KEVO_OK) {
            kevo__error_wrap(err, &le, "%s", "");
            goto out;
        }
    }
    ev->malformed = kevo_event_reader_malformed(r) + bad;
    ev->lines += kevo_event_reader_malformed(r);
out:
    kevo_event_reader_free(r);
    free(path);
    return rc;
}

kevo_status kevo__report_read_history(const kevo_report_in *in,
                                      const json_t *sum, kevo_report_history *h)
{
    kevo_jpath path;
    kevo__jpath_init(&path);
    json_t *arr, *v;
    size_t i;
    kevo_status rc = kevo__report_arr(in, sum, "history", &path, &arr);
    if (rc != KEVO_OK || !arr || json_array_size(arr) == 0)
        return rc;
    h->pt = calloc(json_array_size(arr), sizeof *h->pt);
    if (!h->pt)
        return kevo__error_set(in->err, KEVO_ENOMEM, "out of memory");
    kevo__jpath_key(&path, "history");
    json_array_foreach (arr, i, v) {
        if (!json_is_array(v) || json_array_size(v) != 2 ||
            !json_is_number(json_array_get(v, 0)) ||
            !json_is_number(json_array_get(v, 1))) {
            kevo__jpath_index(&path, i);
            return kevo__json_fail(in->err, KEVO_EINVALID, in->origin, &path,
                                   "expected [evaluation, best fitness], "
                                   "found %s",
                                   kevo__json_type_name(v));
        }
        h->pt[h->n][0] = json_number_value(json_array_get(v, 0));
        h->pt[h->n][1] = json_number_value(json_array_get(v, 1));
        h->n++;
    }
    return KEVO_OK;
}

void kevo__report_events_free(kevo_report_events *ev)
{
    free(ev->evals);
    free(ev->gates);
}

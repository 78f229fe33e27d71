/*
 * archive_json.c: the archive as JSON, and back. The text is
 *
 *   {"format": "kevo-archive", "version": 1,
 *    "dimensions": [{"name", "bins", "lo", "hi"} or {"name", "edges"}, ...],
 *    "elites": [{"cell", "fitness", "descriptor", "curiosity", "children",
 *                "improved", "candidate"}, ...],
 *    "inserts": N, "accepted": N}
 *
 * with the elites in ascending cell order, sorted keys and doubles written
 * with 17 significant digits, so that loading and saving again gives the
 * same bytes. A descriptor value may be infinite (it then falls in the first
 * or the last bin); JSON has no infinity, so it is written as the string
 * "inf" or "-inf".
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "archive_private.h"
#include "core/jsonutil.h"
#include "model/candidate_private.h"

#define FORMAT_NAME "kevo-archive"
#define FORMAT_VERSION 1

/* ---- writing ----------------------------------------------------------- */

/* Sets obj[key] to v, taking v; false when v is NULL or out of memory. */
static bool put(json_t *obj, const char *key, json_t *v)
{
    return json_object_set_new(obj, key, v) == 0;
}

static json_t *descriptor_value(double v)
{
    if (isinf(v))
        return json_string(v > 0 ? "inf" : "-inf");
    return json_real(v);
}

static json_t *dimension_to_json(const kevo__archive_dim *d)
{
    json_t *o = json_object();
    if (!o || !put(o, "name", json_string(d->name)))
        goto fail;
    if (d->nedges > 0) {
        json_t *edges = json_array();
        if (!put(o, "edges", edges))
            goto fail;
        for (size_t i = 0; i < d->nedges; i++) {
            if (json_array_append_new(edges, json_real(d->edges[i])) != 0)
                goto fail;
        }
    } else if (!put(o, "bins", json_integer((json_int_t)d->nbins)) ||
               !put(o, "lo", json_real(d->lo)) ||
               !put(o, "hi", json_real(d->hi))) {
        goto fail;
    }
    return o;
fail:
    json_decref(o);
    return NULL;
}

static json_t *elite_to_json(const kevo_archive *a, size_t cell)
{
    json_t *o = json_object();
    json_t *desc = json_array();
    if (!o || !put(o, "descriptor", desc))
        goto fail;
    for (size_t d = 0; d < a->ndims; d++) {
        double v = a->descriptor[cell * a->ndims + d];
        if (json_array_append_new(desc, descriptor_value(v)) != 0)
            goto fail;
    }
    if (!put(o, "cell", json_integer((json_int_t)cell)) ||
        !put(o, "fitness", json_real(a->fitness[cell])) ||
        !put(o, "curiosity", json_real(a->curiosity[cell])) ||
        !put(o, "children", json_integer((json_int_t)a->children[cell])) ||
        !put(o, "improved", json_integer((json_int_t)a->improved[cell])) ||
        !put(o, "candidate", kevo__candidate_to_json(a->cand[cell])))
        goto fail;
    return o;
fail:
    json_decref(o);
    return NULL;
}

static json_t *archive_to_json(const kevo_archive *a)
{
    json_t *root = json_object();
    json_t *dims = json_array();
    json_t *elites = json_array();
    if (!root || !put(root, "dimensions", dims) ||
        !put(root, "elites", elites) ||
        !put(root, "format", json_string(FORMAT_NAME)) ||
        !put(root, "version", json_integer(FORMAT_VERSION)) ||
        !put(root, "inserts", json_integer((json_int_t)a->inserts)) ||
        !put(root, "accepted", json_integer((json_int_t)a->accepted)))
        goto fail;
    for (size_t d = 0; d < a->ndims; d++) {
        if (json_array_append_new(dims, dimension_to_json(&a->dims[d])) != 0)
            goto fail;
    }
    for (size_t i = 0; i < a->nfilled; i++) {
        if (json_array_append_new(elites, elite_to_json(a, a->filled[i])) != 0)
            goto fail;
    }
    return root;
fail:
    json_decref(root);
    return NULL;
}

kevo_status kevo_archive_to_json(const kevo_archive *archive, char **json,
                                 kevo_error *err)
{
    if (json)
        *json = NULL;
    if (!archive || !json)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_archive_to_json: archive and json must "
                               "not be NULL");
    json_t *root = archive_to_json(archive);
    char *text = root ? kevo__json_dump(root) : NULL;
    json_decref(root);
    if (!text)
        return kevo__error_set(err, KEVO_ENOMEM,
                               "archive: out of memory writing JSON");
    *json = text;
    return KEVO_OK;
}

kevo_status kevo_archive_save(const kevo_archive *archive, const char *path,
                              kevo_error *err)
{
    if (!path)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_archive_save: path must not be NULL");
    char *text = NULL;
    kevo_status rc = kevo_archive_to_json(archive, &text, err);
    if (rc != KEVO_OK)
        return rc;
    size_t len = strlen(text);
    /* The file ends with a newline, as text files do. */
    char *line = realloc(text, len + 2);
    if (!line) {
        free(text);
        return kevo__error_set(err, KEVO_ENOMEM, "%s: out of memory", path);
    }
    line[len] = '\n';
    line[len + 1] = '\0';
    rc = kevo__write_file_atomic(path, line, len + 1, err);
    free(line);
    return rc;
}

/* ---- reading ----------------------------------------------------------- */

typedef struct reader {
    const char *origin;
    kevo_jpath path;
    kevo_error *err;
} reader;

/* obj[key], which must be there; the path names obj. */
static kevo_status need(reader *r, const json_t *obj, const char *key,
                        json_t **out)
{
    *out = json_object_get(obj, key);
    if (!*out)
        return kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                               "missing key \"%s\"", key);
    return KEVO_OK;
}

/* A non-negative integer at obj[key], at most max. */
static kevo_status read_count(reader *r, const json_t *obj, const char *key,
                              uint64_t max, uint64_t *out)
{
    json_t *v;
    kevo_status rc = need(r, obj, key, &v);
    if (rc != KEVO_OK)
        return rc;
    size_t mark = kevo__jpath_key(&r->path, key);
    int64_t i = 0;
    rc = kevo__json_int(v, r->origin, &r->path, &i, r->err);
    if (rc == KEVO_OK && (i < 0 || (uint64_t)i > max))
        rc = kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                             "%" PRId64 " is out of range (0 to %" PRIu64 ")",
                             i, max);
    kevo__jpath_pop(&r->path, mark);
    if (rc == KEVO_OK)
        *out = (uint64_t)i;
    return rc;
}

/* A number at obj[key]. */
static kevo_status read_number(reader *r, const json_t *obj, const char *key,
                               double *out)
{
    json_t *v;
    kevo_status rc = need(r, obj, key, &v);
    if (rc != KEVO_OK)
        return rc;
    size_t mark = kevo__jpath_key(&r->path, key);
    rc = kevo__json_number(v, r->origin, &r->path, out, r->err);
    if (rc == KEVO_OK && !isfinite(*out))
        rc = kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                             "the number is not finite");
    kevo__jpath_pop(&r->path, mark);
    return rc;
}

static kevo_status check_format(reader *r, const json_t *root)
{
    json_t *format = json_object_get(root, "format");
    json_t *version = json_object_get(root, "version");
    if (!format)
        return kevo__json_fail(r->err, KEVO_EFORMAT, r->origin, &r->path,
                               "not a kevo archive: no \"format\": \"%s\"",
                               FORMAT_NAME);
    size_t mark = kevo__jpath_key(&r->path, "format");
    kevo_status rc = KEVO_OK;
    if (!json_is_string(format) ||
        strcmp(json_string_value(format), FORMAT_NAME) != 0)
        rc = kevo__json_fail(
            r->err, KEVO_EFORMAT, r->origin, &r->path,
            "this is %s%s%s, not \"%s\"", json_is_string(format) ? "a \"" : "",
            json_is_string(format) ? json_string_value(format)
                                   : kevo__json_type_name(format),
            json_is_string(format) ? "\" file" : "", FORMAT_NAME);
    kevo__jpath_pop(&r->path, mark);
    if (rc != KEVO_OK)
        return rc;
    mark = kevo__jpath_key(&r->path, "version");
    if (!version)
        rc = kevo__json_fail(r->err, KEVO_EFORMAT, r->origin, &r->path,
                             "missing; this kevo reads version %d",
                             FORMAT_VERSION);
    else if (!json_is_integer(version))
        rc = kevo__json_fail(r->err, KEVO_EFORMAT, r->origin, &r->path,
                             "expected an integer, found %s",
                             kevo__json_type_name(version));
    else if (json_integer_value(version) != FORMAT_VERSION)
        rc = kevo__json_fail(r->err, KEVO_EFORMAT, r->origin, &r->path,
                             "version %" JSON_INTEGER_FORMAT
                             " is not supported; this kevo reads version %d",
                             json_integer_value(version), FORMAT_VERSION);
    kevo__jpath_pop(&r->path, mark);
    return rc;
}

/* Reports a failed add_dimension (inner) at the current path. */
static kevo_status dimension_failed(reader *r, const kevo_error *inner,
                                    kevo_status rc)
{
    return kevo__json_fail(r->err,
                           rc == KEVO_ENOMEM ? KEVO_ENOMEM : KEVO_EINVALID,
                           r->origin, &r->path, "%s", inner->text);
}

static kevo_status read_dimension(reader *r, kevo_archive *a, const json_t *v)
{
    static const char *const keys[] = {"name", "bins",  "lo",
                                       "hi",   "edges", NULL};
    kevo_error inner = KEVO__ERROR_INIT;
    kevo_status rc = kevo__json_object(v, r->origin, &r->path, r->err);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(v, keys, r->origin, &r->path, r->err);
    json_t *jname = NULL;
    if (rc == KEVO_OK)
        rc = need(r, v, "name", &jname);
    if (rc != KEVO_OK)
        return rc;
    const char *name;
    size_t mark = kevo__jpath_key(&r->path, "name");
    rc = kevo__json_string(jname, r->origin, &r->path, &name, r->err);
    kevo__jpath_pop(&r->path, mark);
    if (rc != KEVO_OK)
        return rc;

    json_t *jedges = json_object_get(v, "edges");
    if (jedges) {
        if (json_object_get(v, "bins") || json_object_get(v, "lo") ||
            json_object_get(v, "hi"))
            return kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                                   "give either \"edges\" or \"bins\", \"lo\" "
                                   "and \"hi\", not both");
        mark = kevo__jpath_key(&r->path, "edges");
        rc = kevo__json_array(jedges, r->origin, &r->path, r->err);
        size_t n = json_array_size(jedges);
        double *edges = NULL;
        if (rc == KEVO_OK && n > 0 && !(edges = malloc(n * sizeof *edges)))
            rc = kevo__error_set(r->err, KEVO_ENOMEM, "archive: out of memory");
        for (size_t i = 0; rc == KEVO_OK && i < n; i++) {
            size_t m = kevo__jpath_index(&r->path, i);
            rc = kevo__json_number(json_array_get(jedges, i), r->origin,
                                   &r->path, &edges[i], r->err);
            kevo__jpath_pop(&r->path, m);
        }
        kevo__jpath_pop(&r->path, mark);
        if (rc == KEVO_OK) {
            rc = kevo_archive_add_dimension_edges(a, name, edges, n, &inner);
            if (rc != KEVO_OK)
                rc = dimension_failed(r, &inner, rc);
        }
        free(edges);
        return rc;
    }

    uint64_t bins;
    double lo, hi;
    rc = read_count(r, v, "bins", KEVO_ARCHIVE_CELLS_MAX, &bins);
    if (rc == KEVO_OK)
        rc = read_number(r, v, "lo", &lo);
    if (rc == KEVO_OK)
        rc = read_number(r, v, "hi", &hi);
    if (rc == KEVO_OK) {
        rc = kevo_archive_add_dimension(a, name, (size_t)bins, lo, hi, &inner);
        if (rc != KEVO_OK)
            rc = dimension_failed(r, &inner, rc);
    }
    return rc;
}

static kevo_status read_dimensions(reader *r, kevo_archive *a,
                                   const json_t *root)
{
    json_t *dims;
    kevo_status rc = need(r, root, "dimensions", &dims);
    if (rc != KEVO_OK)
        return rc;
    size_t mark = kevo__jpath_key(&r->path, "dimensions");
    rc = kevo__json_array(dims, r->origin, &r->path, r->err);
    for (size_t i = 0; rc == KEVO_OK && i < json_array_size(dims); i++) {
        size_t m = kevo__jpath_index(&r->path, i);
        rc = read_dimension(r, a, json_array_get(dims, i));
        kevo__jpath_pop(&r->path, m);
    }
    kevo__jpath_pop(&r->path, mark);
    return rc;
}

/* The descriptor at elite[key] into out (one value per dimension). */
static kevo_status read_descriptor(reader *r, const kevo_archive *a,
                                   const json_t *elite, double *out)
{
    json_t *v;
    kevo_status rc = need(r, elite, "descriptor", &v);
    if (rc != KEVO_OK)
        return rc;
    size_t mark = kevo__jpath_key(&r->path, "descriptor");
    rc = kevo__json_array(v, r->origin, &r->path, r->err);
    if (rc == KEVO_OK && json_array_size(v) != a->ndims)
        rc = kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                             "%zu value(s) for an archive of %zu dimension(s)",
                             json_array_size(v), a->ndims);
    for (size_t d = 0; rc == KEVO_OK && d < a->ndims; d++) {
        json_t *x = json_array_get(v, d);
        size_t m = kevo__jpath_index(&r->path, d);
        if (json_is_string(x) && strcmp(json_string_value(x), "inf") == 0)
            out[d] = INFINITY;
        else if (json_is_string(x) && strcmp(json_string_value(x), "-inf") == 0)
            out[d] = -INFINITY;
        else if (!json_is_number(x))
            rc = kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                                 "expected a number, \"inf\" or \"-inf\", "
                                 "found %s",
                                 kevo__json_type_name(x));
        else
            out[d] = json_number_value(x);
        kevo__jpath_pop(&r->path, m);
    }
    kevo__jpath_pop(&r->path, mark);
    return rc;
}

/* The index in elites of the first elite whose cell is cell. */
static size_t first_with_cell(const json_t *elites, size_t cell)
{
    size_t i;
    json_t *e;
    json_array_foreach (elites, i, e) {
        json_t *c = json_object_get(e, "cell");
        if (json_is_integer(c) && (size_t)json_integer_value(c) == cell)
            return i;
    }
    return 0;
}

static kevo_status read_elite(reader *r, kevo_archive *a, const json_t *elites,
                              const json_t *v, double *desc)
{
    static const char *const keys[] = {"cell",      "fitness",  "descriptor",
                                       "curiosity", "children", "improved",
                                       "candidate", NULL};
    uint64_t cell, children, improved;
    double fitness, curiosity;
    json_t *jcand;
    kevo_candidate *cand = NULL;
    kevo_status rc = kevo__json_object(v, r->origin, &r->path, r->err);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(v, keys, r->origin, &r->path, r->err);
    if (rc == KEVO_OK)
        rc = read_count(r, v, "cell", a->ncells - 1, &cell);
    if (rc == KEVO_OK)
        rc = read_number(r, v, "fitness", &fitness);
    if (rc == KEVO_OK)
        rc = read_descriptor(r, a, v, desc);
    if (rc == KEVO_OK)
        rc = read_number(r, v, "curiosity", &curiosity);
    if (rc == KEVO_OK)
        rc = read_count(r, v, "children", INT64_MAX, &children);
    if (rc == KEVO_OK)
        rc = read_count(r, v, "improved", children, &improved);
    if (rc == KEVO_OK)
        rc = need(r, v, "candidate", &jcand);
    if (rc != KEVO_OK)
        return rc;

    size_t mark = kevo__jpath_key(&r->path, "cell");
    size_t want = kevo__archive_cell_index(a, desc);
    if (want != cell)
        rc = kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                             "%" PRIu64 " does not match the descriptor, "
                             "which falls in cell %zu",
                             cell, want);
    else if (a->cand && a->cand[cell])
        rc = kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                             "cell %" PRIu64 " already has an elite, at "
                             "$.elites[%zu]",
                             cell, first_with_cell(elites, (size_t)cell));
    kevo__jpath_pop(&r->path, mark);
    if (rc != KEVO_OK)
        return rc;

    mark = kevo__jpath_key(&r->path, "candidate");
    rc = kevo__candidate_from_json(jcand, r->origin, &r->path, &cand, r->err);
    kevo__jpath_pop(&r->path, mark);
    if (rc != KEVO_OK)
        return rc;
    return kevo__archive_place(a, (size_t)cell, cand, fitness, desc, curiosity,
                               children, improved, r->err);
}

static kevo_status read_elites(reader *r, kevo_archive *a, const json_t *root)
{
    json_t *elites;
    double *desc = NULL;
    kevo_status rc = need(r, root, "elites", &elites);
    if (rc != KEVO_OK)
        return rc;
    size_t mark = kevo__jpath_key(&r->path, "elites");
    rc = kevo__json_array(elites, r->origin, &r->path, r->err);
    if (rc == KEVO_OK && json_array_size(elites) > a->ncells)
        rc = kevo__json_fail(r->err, KEVO_EINVALID, r->origin, &r->path,
                             "%zu elites for %zu cells",
                             json_array_size(elites), a->ncells);
    if (rc == KEVO_OK && a->ndims > 0 &&
        !(desc = malloc(a->ndims * sizeof *desc)))
        rc = kevo__error_set(r->err, KEVO_ENOMEM, "archive: out of memory");
    for (size_t i = 0; rc == KEVO_OK && i < json_array_size(elites); i++) {
        size_t m = kevo__jpath_index(&r->path, i);
        rc = read_elite(r, a, elites, json_array_get(elites, i), desc);
        kevo__jpath_pop(&r->path, m);
    }
    kevo__jpath_pop(&r->path, mark);
    free(desc);
    return rc;
}

kevo_status kevo_archive_from_json(const char *json, const char *origin,
                                   kevo_archive **out, kevo_error *err)
{
    static const char *const keys[] = {"format", "version", "dimensions",
                                       "elites", "inserts", "accepted",
                                       NULL};
    kevo_status rc;
    json_t *root = NULL;
    kevo_archive *a = NULL;
    reader r = {.origin = origin, .err = err};
    kevo__jpath_init(&r.path);
    if (out)
        *out = NULL;
    if (!json || !out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_archive_from_json: json and out must not "
                               "be NULL");
    rc = kevo__json_parse(json, origin, &root, err);
    if (rc != KEVO_OK)
        goto out;
    rc = kevo__json_object(root, origin, &r.path, err);
    if (rc == KEVO_OK)
        rc = check_format(&r, root);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(root, keys, origin, &r.path, err);
    if (rc != KEVO_OK)
        goto out;
    a = kevo_archive_new();
    if (!a) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "archive: out of memory");
        goto out;
    }
    rc = read_dimensions(&r, a, root);
    if (rc == KEVO_OK)
        rc = read_count(&r, root, "inserts", INT64_MAX, &a->inserts);
    if (rc == KEVO_OK)
        rc = read_count(&r, root, "accepted", a->inserts, &a->accepted);
    if (rc == KEVO_OK)
        rc = read_elites(&r, a, root);
    if (rc != KEVO_OK)
        goto out;
    *out = a;
    a = NULL;
out:
    kevo_archive_free(a);
    json_decref(root);
    return rc;
}

kevo_status kevo_archive_load(const char *path, kevo_archive **out,
                              kevo_error *err)
{
    char *text = NULL;
    if (out)
        *out = NULL;
    if (!path || !out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_archive_load: path and out must not be "
                               "NULL");
    kevo_status rc = kevo__read_file(path, true, &text, NULL, err);
    if (rc == KEVO_OK)
        rc = kevo_archive_from_json(text, path, out, err);
    free(text);
    return rc;
}

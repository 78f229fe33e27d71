/*
 * promptpool_json.c: prompts and the prompt pool as JSON. A prompt file
 * (the seeds shipped in $(pkgdatadir)/prompts) is
 *
 *   {"name": "...", "sections": {"strategy": "...", "pitfalls": "...", ...}}
 *
 * and the pool, as the checkpoint keeps it,
 *
 *   {"format": "kevo-promptpool", "version": 1, "cap": N, "next_id": N,
 *    "uses": N, "last_revision": N, "options": {"prior_success": x, ...},
 *    "prompts": [{"id", "name", "parent", "generation", "sections",
 *                 "added_at", "revised_at", "revisions", "uses",
 *                 "children", "entered", "beat_parent",
 *                 "best": null or {"candidate", "fitness"}, "worst",
 *                 and "failures" when it has any (promptpool_failures.c)},
 *                ...]}
 *
 * with the prompts in increasing id, sorted keys and doubles written with
 * 17 significant digits, so that loading and saving again gives the same
 * bytes.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "promptpool_private.h"

#ifndef KEVO_PROMPTS_DIR
#error "KEVO_PROMPTS_DIR (the installed seed prompt directory) is not defined"
#endif

#define FORMAT_NAME "kevo-promptpool"
#define FORMAT_VERSION 1

/* ---- writing ----------------------------------------------------------- */

/* Sets obj[key] to v, taking v; false when v is NULL or out of memory. */
static bool put(json_t *obj, const char *key, json_t *v)
{
    return json_object_set_new(obj, key, v) == 0;
}

static json_t *count_json(uint64_t v)
{
    return json_integer((json_int_t)(v > (uint64_t)INT64_MAX ? INT64_MAX : v));
}

json_t *kevo__prompt_sections_json(const kevo__prompt *p)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < p->nsections; i++) {
        if (!put(o, p->keys[i], json_string(p->texts[i]))) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static json_t *child_json(double fitness, uint64_t candidate)
{
    if (isnan(fitness))
        return json_null();
    json_t *o = json_object();
    if (!o || !put(o, "candidate", count_json(candidate)) ||
        !put(o, "fitness", json_real(fitness))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The lineage and sections: what an operator request carries. */
static json_t *prompt_head_json(const kevo__prompt *p)
{
    json_t *o = json_object();
    if (!o || !put(o, "id", count_json(p->id)) ||
        !put(o, "name", p->name ? json_string(p->name) : json_null()) ||
        !put(o, "parent", count_json(p->parent)) ||
        !put(o, "generation", count_json(p->generation)) ||
        !put(o, "sections", kevo__prompt_sections_json(p))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *prompt_json(const kevo__prompt *p)
{
    json_t *o = prompt_head_json(p);
    if (!o || !put(o, "added_at", count_json(p->added_at)) ||
        !put(o, "revised_at", count_json(p->revised_at)) ||
        !put(o, "revisions", count_json(p->revisions)) ||
        !put(o, "uses", count_json(p->uses)) ||
        !put(o, "children", count_json(p->children)) ||
        !put(o, "entered", count_json(p->entered)) ||
        !put(o, "beat_parent", count_json(p->beat)) ||
        !put(o, "best", child_json(p->best_fitness, p->best_child)) ||
        !put(o, "worst", child_json(p->worst_fitness, p->worst_child))) {
        json_decref(o);
        return NULL;
    }
    bool nomem;
    json_t *failures = kevo__prompt_failures_json(p, &nomem);
    if (nomem || (failures && !put(o, "failures", failures))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *kevo__promptpool_to_json(const kevo_promptpool *pool)
{
    json_t *root = json_object();
    json_t *opts = json_object();
    json_t *prompts = json_array();
    if (!root || !put(root, "options", opts) ||
        !put(root, "prompts", prompts) ||
        !put(root, "format", json_string(FORMAT_NAME)) ||
        !put(root, "version", json_integer(FORMAT_VERSION)) ||
        !put(root, "cap", count_json(pool->cap)) ||
        !put(root, "next_id", count_json(pool->next_id)) ||
        !put(root, "uses", count_json(pool->uses)) ||
        !put(root, "last_revision", count_json(pool->last_revision)))
        goto fail;
    for (int i = 0; i < KEVO__PROMPTPOOL_OPTION_COUNT; i++) {
        if (!put(opts, kevo__option_name(&kevo__promptpool_options, i),
                 kevo__option_json_real(&kevo__promptpool_options, i,
                                        pool->opt[i])))
            goto fail;
    }
    for (size_t i = 0; i < pool->n; i++) {
        if (json_array_append_new(prompts, prompt_json(pool->prompts[i])) != 0)
            goto fail;
    }
    return root;
fail:
    json_decref(root);
    return NULL;
}

kevo_status kevo_promptpool_to_json(const kevo_promptpool *pool, char **json,
                                    kevo_error *err)
{
    if (json)
        *json = NULL;
    if (!pool || !json)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_to_json: pool and json must "
                               "not be NULL");
    json_t *root = kevo__promptpool_to_json(pool);
    char *text = root ? kevo__json_dump(root) : NULL;
    json_decref(root);
    if (!text)
        return kevo__error_set(err, KEVO_ENOMEM,
                               "prompt pool: out of memory writing JSON");
    *json = text;
    return KEVO_OK;
}

kevo_status kevo_promptpool_prompt_json(const kevo_promptpool *pool,
                                        uint64_t id, char **json,
                                        kevo_error *err)
{
    if (json)
        *json = NULL;
    if (!pool || !json)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_prompt_json: pool and json "
                               "must not be NULL");
    const kevo__prompt *p = kevo__promptpool_find(pool, id);
    if (!p)
        return kevo__error_set(
            err, KEVO_ENOENT,
            "prompt pool: prompt %" PRIu64 " is not in the pool", id);
    json_t *o = prompt_head_json(p);
    char *text = o ? kevo__json_dump(o) : NULL;
    json_decref(o);
    if (!text)
        return kevo__error_set(err, KEVO_ENOMEM,
                               "prompt pool: out of memory writing JSON");
    *json = text;
    return KEVO_OK;
}

/* ---- reading ----------------------------------------------------------- */

typedef struct reader {
    const char *origin;
    kevo_jpath *path;
    kevo_error *err;
} reader;

static kevo_status fail(reader *r, kevo_status code, const char *fmt, ...)
    KEVO_PRINTF(3, 4);

static kevo_status fail(reader *r, kevo_status code, const char *fmt, ...)
{
    char msg[KEVO_ERROR_TEXT_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return kevo__json_fail(r->err, code, r->origin, r->path, "%s", msg);
}

/* obj[key], which must be there; the path names obj. */
static kevo_status need(reader *r, const json_t *obj, const char *key,
                        json_t **out)
{
    *out = json_object_get(obj, key);
    if (!*out)
        return fail(r, KEVO_EINVALID, "missing key \"%s\"", key);
    return KEVO_OK;
}

/* An integer in [lo, hi] at obj[key]. */
static kevo_status read_count(reader *r, const json_t *obj, const char *key,
                              uint64_t lo, uint64_t hi, uint64_t *out)
{
    json_t *v;
    kevo_status rc = need(r, obj, key, &v);
    if (rc != KEVO_OK)
        return rc;
    size_t mark = kevo__jpath_key(r->path, key);
    int64_t i = 0;
    rc = kevo__json_int(v, r->origin, r->path, &i, r->err);
    if (rc == KEVO_OK && (i < 0 || (uint64_t)i < lo || (uint64_t)i > hi))
        rc = fail(r, KEVO_EINVALID,
                  "%" PRId64 " is out of range (%" PRIu64 " to %" PRIu64 ")", i,
                  lo, hi);
    kevo__jpath_pop(r->path, mark);
    if (rc == KEVO_OK)
        *out = (uint64_t)i;
    return rc;
}

/* The sections object v of a prompt into new arrays (borrowing the
 * strings from v). */
static kevo_status read_sections(reader *r, const json_t *v, const char ***keys,
                                 const char ***texts, size_t *n)
{
    kevo_status rc = kevo__json_object(v, r->origin, r->path, r->err);
    if (rc != KEVO_OK)
        return rc;
    size_t count = json_object_size(v);
    if (count == 0)
        return fail(r, KEVO_EINVALID, "a prompt needs at least one section");
    if (count > KEVO_PROMPT_SECTIONS_MAX)
        return fail(r, KEVO_EINVALID, "%zu sections, more than the %d allowed",
                    count, KEVO_PROMPT_SECTIONS_MAX);
    *keys = calloc(count, sizeof **keys);
    *texts = calloc(count, sizeof **texts);
    if (!*keys || !*texts)
        return kevo__error_set(r->err, KEVO_ENOMEM,
                               "prompt pool: out of memory");
    const char *key;
    json_t *text;
    char why[160];
    size_t i = 0;
    json_object_foreach ((json_t *)v, key, text) {
        size_t mark = kevo__jpath_key(r->path, key);
        if (kevo__prompt_check_key(key, why, sizeof why) != KEVO_OK)
            rc = fail(r, KEVO_EINVALID, "the section name %s", why);
        if (rc == KEVO_OK)
            rc = kevo__json_string(text, r->origin, r->path, &(*texts)[i],
                                   r->err);
        if (rc == KEVO_OK &&
            kevo__prompt_check_text((*texts)[i], why, sizeof why) != KEVO_OK)
            rc = fail(r, KEVO_EINVALID, "the text %s", why);
        kevo__jpath_pop(r->path, mark);
        if (rc != KEVO_OK)
            return rc;
        (*keys)[i++] = key;
    }
    *n = i;
    return KEVO_OK;
}

/* An optional name (a string or null) at obj["name"]; *name NULL when it is
 * absent or null. */
static kevo_status read_name(reader *r, const json_t *obj, const char **name)
{
    *name = NULL;
    json_t *v = json_object_get(obj, "name");
    if (!v || json_is_null(v))
        return KEVO_OK;
    char why[160];
    size_t mark = kevo__jpath_key(r->path, "name");
    kevo_status rc = KEVO_OK;
    if (!json_is_string(v))
        rc = fail(r, KEVO_EINVALID, "expected a string or null, found %s",
                  kevo__json_type_name(v));
    if (rc == KEVO_OK)
        rc = kevo__json_string(v, r->origin, r->path, name, r->err);
    if (rc == KEVO_OK &&
        kevo__prompt_check_name(*name, why, sizeof why) != KEVO_OK)
        rc = fail(r, KEVO_EINVALID, "the name %s", why);
    kevo__jpath_pop(r->path, mark);
    return rc;
}

/* name and sections of a prompt object into a new prompt. */
static kevo_status read_prompt_body(reader *r, const json_t *v,
                                    kevo__prompt **out)
{
    const char **keys = NULL, **texts = NULL;
    const char *name;
    size_t n = 0;
    json_t *sections;
    *out = NULL;
    kevo_status rc = read_name(r, v, &name);
    if (rc == KEVO_OK)
        rc = need(r, v, "sections", &sections);
    if (rc == KEVO_OK) {
        size_t mark = kevo__jpath_key(r->path, "sections");
        rc = read_sections(r, sections, &keys, &texts, &n);
        kevo__jpath_pop(r->path, mark);
    }
    if (rc == KEVO_OK && !(*out = kevo__prompt_new(name, keys, texts, n)))
        rc = kevo__error_set(r->err, KEVO_ENOMEM, "prompt pool: out of memory");
    free(keys);
    free(texts);
    return rc;
}

kevo_status kevo__prompt_from_sections(const json_t *v, const char *origin,
                                       kevo_jpath *path, kevo__prompt **out,
                                       kevo_error *err)
{
    reader r = {.origin = origin, .path = path, .err = err};
    const char **keys = NULL, **texts = NULL;
    size_t n = 0;
    *out = NULL;
    kevo_status rc = read_sections(&r, v, &keys, &texts, &n);
    if (rc == KEVO_OK && !(*out = kevo__prompt_new(NULL, keys, texts, n)))
        rc = kevo__error_set(err, KEVO_ENOMEM, "prompt pool: out of memory");
    free(keys);
    free(texts);
    return rc;
}

kevo_status kevo__prompt_from_json(const json_t *v, const char *origin,
                                   kevo_jpath *path, kevo__prompt **out,
                                   kevo_error *err)
{
    static const char *const keys[] = {"name", "sections", NULL};
    reader r = {.origin = origin, .path = path, .err = err};
    *out = NULL;
    kevo_status rc = kevo__json_object(v, origin, path, err);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(v, keys, origin, path, err);
    if (rc == KEVO_OK)
        rc = read_prompt_body(&r, v, out);
    return rc;
}

/* Parses a prompt file's text into a new prompt. */
static kevo_status parse_prompt(const char *json, const char *origin,
                                kevo__prompt **out, kevo_error *err)
{
    json_t *root = NULL;
    kevo_jpath path;
    kevo__jpath_init(&path);
    kevo_status rc = kevo__json_parse(json, origin, &root, err);
    if (rc == KEVO_OK)
        rc = kevo__prompt_from_json(root, origin, &path, out, err);
    json_decref(root);
    return rc;
}

kevo_status kevo_promptpool_add_json(kevo_promptpool *pool, uint64_t parent,
                                     const char *json, const char *origin,
                                     uint64_t *id, int *added,
                                     uint64_t *evicted, kevo_error *err)
{
    uint64_t id_ = KEVO_PROMPT_NONE, evicted_ = KEVO_PROMPT_NONE;
    int added_ = 0;
    kevo__prompt *p = NULL;
    if (id)
        *id = KEVO_PROMPT_NONE;
    if (added)
        *added = 0;
    if (evicted)
        *evicted = KEVO_PROMPT_NONE;
    if (!pool || !json)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_add_json: pool and json must "
                               "not be NULL");
    kevo_status rc = parse_prompt(json, origin, &p, err);
    if (rc == KEVO_OK)
        rc = kevo__promptpool_insert(pool, p, parent, &id_, &added_, &evicted_,
                                     err);
    if (rc != KEVO_OK)
        return rc;
    if (id)
        *id = id_;
    if (added)
        *added = added_;
    if (evicted)
        *evicted = evicted_;
    return KEVO_OK;
}

/* Reads and parses the prompt file at path. */
static kevo_status read_prompt_file(const char *path, kevo__prompt **out,
                                    kevo_error *err)
{
    char *text = NULL;
    *out = NULL;
    kevo_status rc = kevo__read_file(path, true, &text, NULL, err);
    if (rc == KEVO_OK)
        rc = parse_prompt(text, path, out, err);
    free(text);
    return rc;
}

kevo_status kevo_promptpool_load_file(kevo_promptpool *pool, const char *path,
                                      uint64_t *id, int *added, kevo_error *err)
{
    uint64_t id_ = KEVO_PROMPT_NONE, evicted = KEVO_PROMPT_NONE;
    int added_ = 0;
    kevo__prompt *p = NULL;
    if (id)
        *id = KEVO_PROMPT_NONE;
    if (added)
        *added = 0;
    if (!pool || !path)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_load_file: pool and path must "
                               "not be NULL");
    kevo_status rc = read_prompt_file(path, &p, err);
    if (rc == KEVO_OK)
        rc = kevo__promptpool_insert(pool, p, KEVO_PROMPT_NONE, &id_, &added_,
                                     &evicted, err);
    if (rc != KEVO_OK)
        return rc;
    if (id)
        *id = id_;
    if (added)
        *added = added_;
    return KEVO_OK;
}

const char *kevo_promptpool_seed_dir(void)
{
    const char *dir = getenv("KEVO_PROMPT_DIR");
    return dir && *dir ? dir : KEVO_PROMPTS_DIR;
}

static int json_file(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return d->d_name[0] != '.' && n > 5 &&
           strcmp(d->d_name + n - 5, ".json") == 0;
}

static int byte_order(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

kevo_status kevo_promptpool_load_dir(kevo_promptpool *pool, const char *dir,
                                     size_t *loaded, kevo_error *err)
{
    struct dirent **names = NULL;
    kevo__prompt **prompts = NULL;
    int n = 0;
    size_t fresh = 0;
    kevo_status rc = KEVO_OK;
    if (loaded)
        *loaded = 0;
    if (!pool)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_load_dir: pool must not be "
                               "NULL");
    if (!dir)
        dir = kevo_promptpool_seed_dir();
    n = scandir(dir, &names, json_file, byte_order);
    if (n < 0) {
        n = 0;
        rc = kevo__error_errno(err, errno, dir, "cannot read the directory");
        goto out;
    }
    if (n == 0) {
        rc = kevo__error_set_at(err, KEVO_ENOENT, dir, 0, 0,
                                "%s: no prompt files (*.json) in the "
                                "directory",
                                dir);
        goto out;
    }
    prompts = calloc((size_t)n, sizeof *prompts);
    if (!prompts) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "prompt pool: out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        char *path = kevo__path_join(dir, names[i]->d_name);
        if (!path) {
            rc =
                kevo__error_set(err, KEVO_ENOMEM, "prompt pool: out of memory");
            goto out;
        }
        rc = read_prompt_file(path, &prompts[i], err);
        free(path);
        if (rc != KEVO_OK)
            goto out;
        bool dup = kevo__promptpool_find_same(pool, prompts[i]) != NULL;
        for (int j = 0; j < i && !dup; j++)
            dup = kevo__prompt_same(prompts[j], prompts[i]);
        if (!dup)
            fresh++;
    }
    if (pool->n + fresh > pool->cap) {
        rc = kevo__error_set_at(err, KEVO_ELIMIT, dir, 0, 0,
                                "%s: %zu new seed prompt(s) do not fit a pool "
                                "of %zu with %zu prompt(s) in it",
                                dir, fresh, pool->cap, pool->n);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        uint64_t id, evicted;
        int added;
        kevo__prompt *p = prompts[i];
        prompts[i] = NULL;
        rc = kevo__promptpool_insert(pool, p, KEVO_PROMPT_NONE, &id, &added,
                                     &evicted, err);
        if (rc != KEVO_OK)
            goto out;
        if (added && loaded)
            (*loaded)++;
    }
out:
    for (int i = 0; i < n; i++) {
        if (prompts)
            kevo__prompt_free(prompts[i]);
        free(names[i]);
    }
    free(prompts);
    free(names);
    return rc;
}

/* ---- the pool ---------------------------------------------------------- */

static kevo_status check_format(reader *r, const json_t *root)
{
    json_t *format = json_object_get(root, "format");
    json_t *version = json_object_get(root, "version");
    if (!format)
        return fail(r, KEVO_EFORMAT,
                    "not a kevo prompt pool: no \"format\": \"%s\"",
                    FORMAT_NAME);
    size_t mark = kevo__jpath_key(r->path, "format");
    kevo_status rc = KEVO_OK;
    if (!json_is_string(format))
        rc = fail(r, KEVO_EFORMAT, "expected \"%s\", found %s", FORMAT_NAME,
                  kevo__json_type_name(format));
    else if (strcmp(json_string_value(format), FORMAT_NAME) != 0)
        rc = fail(r, KEVO_EFORMAT, "this is a \"%.64s\" file, not \"%s\"",
                  json_string_value(format), FORMAT_NAME);
    kevo__jpath_pop(r->path, mark);
    if (rc != KEVO_OK)
        return rc;
    mark = kevo__jpath_key(r->path, "version");
    if (!version)
        rc = fail(r, KEVO_EFORMAT, "missing; this kevo reads version %d",
                  FORMAT_VERSION);
    else if (!json_is_integer(version))
        rc = fail(r, KEVO_EFORMAT, "expected an integer, found %s",
                  kevo__json_type_name(version));
    else if (json_integer_value(version) != FORMAT_VERSION)
        rc = fail(r, KEVO_EFORMAT,
                  "version %" JSON_INTEGER_FORMAT
                  " is not supported; this kevo reads version %d",
                  json_integer_value(version), FORMAT_VERSION);
    kevo__jpath_pop(r->path, mark);
    return rc;
}

static kevo_status read_options(reader *r, kevo_promptpool *pool,
                                const json_t *root)
{
    json_t *opts;
    kevo_status rc = need(r, root, "options", &opts);
    if (rc != KEVO_OK)
        return rc;
    size_t mark = kevo__jpath_key(r->path, "options");
    rc = kevo__json_object(opts, r->origin, r->path, r->err);
    const char *key;
    json_t *v;
    json_object_foreach (opts, key, v) {
        if (rc != KEVO_OK)
            break;
        /* The path stops at $.options: the message names the option. */
        int opt;
        kevo_error inner = KEVO__ERROR_INIT;
        double x = 0;
        if (kevo__option_find(&kevo__promptpool_options, key, &opt, &inner) !=
                KEVO_OK ||
            kevo__option_read_real(&kevo__promptpool_options, opt, opts, &x,
                                   &inner) != KEVO_OK)
            rc = fail(r, KEVO_EINVALID, "%s", inner.text);
        else
            pool->opt[opt] = x;
    }
    kevo__jpath_pop(r->path, mark);
    return rc;
}

/* The best or worst child at obj[key]: null or {"candidate", "fitness"}. */
static kevo_status read_child(reader *r, const json_t *obj, const char *key,
                              double *fitness, uint64_t *candidate)
{
    static const char *const keys[] = {"candidate", "fitness", NULL};
    json_t *v, *f;
    *fitness = NAN;
    *candidate = 0;
    kevo_status rc = need(r, obj, key, &v);
    if (rc != KEVO_OK || json_is_null(v))
        return rc;
    size_t mark = kevo__jpath_key(r->path, key);
    if (!json_is_object(v))
        rc = fail(r, KEVO_EINVALID, "expected an object or null, found %s",
                  kevo__json_type_name(v));
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(v, keys, r->origin, r->path, r->err);
    if (rc == KEVO_OK)
        rc = read_count(r, v, "candidate", 1, KEVO__PROMPT_ID_MAX, candidate);
    if (rc == KEVO_OK)
        rc = need(r, v, "fitness", &f);
    if (rc == KEVO_OK) {
        size_t m = kevo__jpath_key(r->path, "fitness");
        rc = kevo__json_number(f, r->origin, r->path, fitness, r->err);
        kevo__jpath_pop(r->path, m);
    }
    kevo__jpath_pop(r->path, mark);
    return rc;
}

/* The counters and children of prompt p, checked against the pool read so
 * far. */
static kevo_status read_record(reader *r, const kevo_promptpool *pool,
                               const json_t *v, kevo__prompt *p)
{
    kevo_status rc = read_count(r, v, "added_at", 0, pool->uses, &p->added_at);
    if (rc == KEVO_OK)
        rc = read_count(r, v, "revised_at", p->added_at, pool->uses,
                        &p->revised_at);
    if (rc == KEVO_OK)
        rc = read_count(r, v, "revisions", 0, INT64_MAX, &p->revisions);
    if (rc == KEVO_OK)
        rc = read_count(r, v, "uses", 0, pool->uses, &p->uses);
    if (rc == KEVO_OK)
        rc = read_count(r, v, "children", 0, INT64_MAX, &p->children);
    if (rc == KEVO_OK)
        rc = read_count(r, v, "entered", 0, p->children, &p->entered);
    if (rc == KEVO_OK)
        rc = read_count(r, v, "beat_parent", 0, p->children, &p->beat);
    if (rc == KEVO_OK)
        rc = read_child(r, v, "best", &p->best_fitness, &p->best_child);
    if (rc == KEVO_OK)
        rc = read_child(r, v, "worst", &p->worst_fitness, &p->worst_child);
    if (rc != KEVO_OK)
        return rc;
    if (isnan(p->best_fitness) != isnan(p->worst_fitness))
        return fail(r, KEVO_EINVALID,
                    "\"best\" and \"worst\" must both be null or both be "
                    "children");
    if (!isnan(p->best_fitness) && p->children == 0)
        return fail(r, KEVO_EINVALID,
                    "best and worst children of a prompt without children");
    if (!isnan(p->best_fitness) && p->best_fitness < p->worst_fitness)
        return fail(r, KEVO_EINVALID,
                    "the best child's fitness %.17g is below the worst's "
                    "%.17g",
                    p->best_fitness, p->worst_fitness);
    return KEVO_OK;
}

/* Prompt v of the array, appended to pool. */
static kevo_status read_pool_prompt(reader *r, kevo_promptpool *pool,
                                    const json_t *v)
{
    static const char *const keys[] = {
        "id",       "name",     "parent",     "generation",
        "sections", "added_at", "revised_at", "revisions",
        "uses",     "children", "entered",    "beat_parent",
        "best",     "worst",    "failures",   NULL};
    kevo__prompt *p = NULL;
    uint64_t id, parent, generation;
    uint64_t min_id = pool->n ? pool->prompts[pool->n - 1]->id + 1 : 1;
    kevo_status rc = kevo__json_object(v, r->origin, r->path, r->err);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(v, keys, r->origin, r->path, r->err);
    if (rc == KEVO_OK && min_id >= pool->next_id)
        rc = fail(r, KEVO_EINVALID,
                  "no id is left below next_id %" PRIu64 " for this prompt",
                  pool->next_id);
    if (rc == KEVO_OK)
        rc = read_count(r, v, "id", min_id, pool->next_id - 1, &id);
    if (rc == KEVO_OK)
        rc = read_count(r, v, "parent", 0, id - 1, &parent);
    if (rc == KEVO_OK)
        rc = read_count(r, v, "generation", 0, INT64_MAX, &generation);
    if (rc != KEVO_OK)
        return rc;
    const kevo__prompt *pp = kevo__promptpool_find(pool, parent);
    size_t mark = kevo__jpath_key(r->path, "generation");
    if (parent == KEVO_PROMPT_NONE && generation != 0)
        rc = fail(r, KEVO_EINVALID,
                  "a seed prompt (parent 0) has generation 0, not %" PRIu64,
                  generation);
    else if (parent != KEVO_PROMPT_NONE && generation == 0)
        rc = fail(r, KEVO_EINVALID,
                  "a revision (parent %" PRIu64 ") has a generation above 0",
                  parent);
    else if (pp && generation != pp->generation + 1)
        rc = fail(r, KEVO_EINVALID,
                  "%" PRIu64 ", but its parent %" PRIu64
                  " has generation %" PRIu64,
                  generation, parent, pp->generation);
    kevo__jpath_pop(r->path, mark);
    if (rc == KEVO_OK)
        rc = read_prompt_body(r, v, &p);
    if (rc != KEVO_OK)
        return rc;
    p->id = id;
    p->parent = parent;
    p->generation = generation;
    rc = read_record(r, pool, v, p);
    if (rc == KEVO_OK)
        rc = kevo__prompt_failures_read(v, r->origin, r->path, p, r->err);
    const kevo__prompt *same =
        rc == KEVO_OK ? kevo__promptpool_find_same(pool, p) : NULL;
    if (same) {
        mark = kevo__jpath_key(r->path, "sections");
        rc = fail(r, KEVO_EINVALID, "the same sections as prompt %" PRIu64,
                  same->id);
        kevo__jpath_pop(r->path, mark);
    }
    if (rc != KEVO_OK) {
        kevo__prompt_free(p);
        return rc;
    }
    pool->prompts[pool->n++] = p;
    return KEVO_OK;
}

static kevo_status read_prompts(reader *r, kevo_promptpool *pool,
                                const json_t *root)
{
    json_t *prompts;
    kevo_status rc = need(r, root, "prompts", &prompts);
    if (rc != KEVO_OK)
        return rc;
    size_t mark = kevo__jpath_key(r->path, "prompts");
    rc = kevo__json_array(prompts, r->origin, r->path, r->err);
    if (rc == KEVO_OK && json_array_size(prompts) > pool->cap)
        rc = fail(r, KEVO_EINVALID, "%zu prompts for a cap of %zu",
                  json_array_size(prompts), pool->cap);
    for (size_t i = 0; rc == KEVO_OK && i < json_array_size(prompts); i++) {
        size_t m = kevo__jpath_index(r->path, i);
        rc = read_pool_prompt(r, pool, json_array_get(prompts, i));
        kevo__jpath_pop(r->path, m);
    }
    kevo__jpath_pop(r->path, mark);
    return rc;
}

kevo_status kevo__promptpool_from_json(const json_t *root, const char *origin,
                                       kevo_jpath *path, kevo_promptpool **out,
                                       kevo_error *err)
{
    static const char *const keys[] = {"format",  "version", "cap",
                                       "next_id", "uses",    "last_revision",
                                       "options", "prompts", NULL};
    reader r = {.origin = origin, .path = path, .err = err};
    kevo_promptpool *pool = NULL;
    uint64_t cap;
    *out = NULL;
    kevo_status rc = kevo__json_object(root, origin, path, err);
    if (rc == KEVO_OK)
        rc = check_format(&r, root);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(root, keys, origin, path, err);
    if (rc == KEVO_OK)
        rc = read_count(&r, root, "cap", KEVO_PROMPTPOOL_CAP_MIN,
                        KEVO_PROMPTPOOL_CAP_MAX, &cap);
    if (rc == KEVO_OK)
        rc = kevo_promptpool_new((size_t)cap, &pool, err);
    if (rc == KEVO_OK)
        rc = read_count(&r, root, "next_id", 1, KEVO__PROMPT_ID_MAX + 1,
                        &pool->next_id);
    if (rc == KEVO_OK)
        rc = read_count(&r, root, "uses", 0, INT64_MAX, &pool->uses);
    if (rc == KEVO_OK)
        rc = read_count(&r, root, "last_revision", 0, pool->uses,
                        &pool->last_revision);
    if (rc == KEVO_OK)
        rc = read_options(&r, pool, root);
    if (rc == KEVO_OK)
        rc = read_prompts(&r, pool, root);
    if (rc != KEVO_OK) {
        kevo_promptpool_free(pool);
        return rc;
    }
    *out = pool;
    return KEVO_OK;
}

kevo_status kevo_promptpool_from_json(const char *json, const char *origin,
                                      kevo_promptpool **out, kevo_error *err)
{
    json_t *root = NULL;
    kevo_jpath path;
    kevo__jpath_init(&path);
    if (out)
        *out = NULL;
    if (!json || !out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_from_json: json and out must "
                               "not be NULL");
    kevo_status rc = kevo__json_parse(json, origin, &root, err);
    if (rc == KEVO_OK)
        rc = kevo__promptpool_from_json(root, origin, &path, out, err);
    json_decref(root);
    return rc;
}

/*
 * promptpool_failures.c: what a prompt's record keeps of its children's
 * failures: a count per failure kind (compile_error, wrong, no_code, ...)
 * and the few most recent failed children with kevo's diagnostic, so that
 * the revision of a prompt can see how the children it led to failed. The
 * record is saved with the pool, as
 *
 *   "failures": {"kinds": {"compile_error": 3, "wrong": 1},
 *                "children": [{"candidate": 12, "kind": "wrong",
 *                              "diagnostic": "shape 1 (n=4096): ..."}]}
 *
 * in each prompt that has any; a pool saved before failures were kept has
 * none and loads as it was.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "promptpool_private.h"

#define KIND_MAX 32
#define OTHER "other"

typedef struct failed_child {
    uint64_t candidate;
    char *kind;
    char *diagnostic; /* one line, never NULL */
} failed_child;

typedef struct kevo__prompt_failures {
    /* The kinds, the commonest first (equal counts in byte order). */
    char *kinds[KEVO_PROMPT_FAILURE_KINDS_MAX];
    uint64_t counts[KEVO_PROMPT_FAILURE_KINDS_MAX];
    size_t nkinds;
    failed_child children[KEVO_PROMPT_FAILED_CHILDREN]; /* newest first */
    size_t nchildren;
} kevo__prompt_failures;

void kevo__prompt_failures_free(kevo__prompt *p)
{
    kevo__prompt_failures *f = p->failures;
    if (!f)
        return;
    for (size_t i = 0; i < f->nkinds; i++)
        free(f->kinds[i]);
    for (size_t i = 0; i < f->nchildren; i++) {
        free(f->children[i].kind);
        free(f->children[i].diagnostic);
    }
    free(f);
    p->failures = NULL;
}

uint64_t kevo__prompt_failure_total(const kevo__prompt *p)
{
    uint64_t n = 0;
    for (size_t i = 0; p->failures && i < p->failures->nkinds; i++)
        n += p->failures->counts[i];
    return n;
}

/* [a-z0-9_], 1 to KIND_MAX bytes. */
static bool kind_ok(const char *k)
{
    size_t n = 0;
    for (; k && k[n]; n++) {
        char c = k[n];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return n >= 1 && n <= KIND_MAX;
}

/* Whether kind i belongs before kind j. */
static bool before(const kevo__prompt_failures *f, size_t i, size_t j)
{
    if (f->counts[i] != f->counts[j])
        return f->counts[i] > f->counts[j];
    return strcmp(f->kinds[i], f->kinds[j]) < 0;
}

/* Adds n to kind's count, keeping the order; kinds past the cap count as
 * "other". */
static kevo_status count_kind(kevo__prompt_failures *f, const char *kind,
                              uint64_t n)
{
    size_t i = 0;
    while (i < f->nkinds && strcmp(f->kinds[i], kind) != 0)
        i++;
    if (i == f->nkinds) {
        if (f->nkinds == KEVO_PROMPT_FAILURE_KINDS_MAX &&
            strcmp(kind, OTHER) != 0)
            return count_kind(f, OTHER, n);
        if (f->nkinds == KEVO_PROMPT_FAILURE_KINDS_MAX) {
            /* "other" itself is new: it takes the place of the rarest. */
            i = f->nkinds - 1;
            n += f->counts[i];
            free(f->kinds[i]);
            f->nkinds--;
        }
        if (!(f->kinds[i] = kevo__strdup(kind)))
            return KEVO_ENOMEM;
        f->counts[i] = 0;
        f->nkinds++;
    }
    f->counts[i] += n;
    for (; i > 0 && before(f, i, i - 1); i--) {
        char *k = f->kinds[i];
        uint64_t c = f->counts[i];
        f->kinds[i] = f->kinds[i - 1];
        f->counts[i] = f->counts[i - 1];
        f->kinds[i - 1] = k;
        f->counts[i - 1] = c;
    }
    return KEVO_OK;
}

/* Keeps a failed child in front, dropping the oldest; appends when
 * at_end (reading a saved record, which lists the newest first). */
static kevo_status keep_child(kevo__prompt_failures *f, uint64_t candidate,
                              const char *kind, const char *diagnostic,
                              bool at_end)
{
    failed_child c = {candidate, kevo__strdup(kind),
                      kevo__one_line(diagnostic, KEVO_PROMPT_DIAGNOSTIC_MAX)};
    if (!c.kind || !c.diagnostic) {
        free(c.kind);
        free(c.diagnostic);
        return KEVO_ENOMEM;
    }
    if (at_end) {
        f->children[f->nchildren++] = c;
        return KEVO_OK;
    }
    if (f->nchildren == KEVO_PROMPT_FAILED_CHILDREN) {
        failed_child *old = &f->children[--f->nchildren];
        free(old->kind);
        free(old->diagnostic);
    }
    memmove(&f->children[1], &f->children[0],
            f->nchildren * sizeof f->children[0]);
    f->children[0] = c;
    f->nchildren++;
    return KEVO_OK;
}

static kevo__prompt_failures *failures_of(kevo__prompt *p)
{
    if (!p->failures)
        p->failures = calloc(1, sizeof *p->failures);
    return p->failures;
}

kevo_status kevo_promptpool_credit_failure(kevo_promptpool *pool, uint64_t id,
                                           const char *kind, uint64_t candidate,
                                           const char *diagnostic,
                                           kevo_error *err)
{
    if (!pool)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_credit_failure: pool must not "
                               "be NULL");
    if (!kind_ok(kind))
        return kevo__error_set(
            err, KEVO_EINVAL,
            "kevo_promptpool_credit_failure: the kind %s%s%s "
            "is not 1 to %d bytes of [a-z0-9_]",
            kind ? "'" : "", kind ? kind : "(NULL)", kind ? "'" : "", KIND_MAX);
    if (candidate > KEVO__PROMPT_ID_MAX)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_credit_failure: candidate id "
                               "%" PRIu64 " is 2^63 or more",
                               candidate);
    kevo__prompt *p = kevo__promptpool_find(pool, id);
    if (!p)
        return kevo__error_set(
            err, KEVO_ENOENT,
            "prompt pool: prompt %" PRIu64 " is not in the pool", id);
    kevo__prompt_failures *f = failures_of(p);
    if (!f || count_kind(f, kind, 1) != KEVO_OK ||
        ((candidate || (diagnostic && *diagnostic)) &&
         keep_child(f, candidate, kind, diagnostic, false) != KEVO_OK))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    return KEVO_OK;
}

const char *kevo_promptpool_failure_kind(const kevo_promptpool *pool,
                                         uint64_t id, size_t i, uint64_t *count)
{
    const kevo__prompt *p = kevo__promptpool_find(pool, id);
    const kevo__prompt_failures *f = p ? p->failures : NULL;
    bool in = f && i < f->nkinds;
    if (count)
        *count = in ? f->counts[i] : 0;
    return in ? f->kinds[i] : NULL;
}

const char *kevo_promptpool_failed_child(const kevo_promptpool *pool,
                                         uint64_t id, size_t i,
                                         uint64_t *candidate, const char **kind)
{
    const kevo__prompt *p = kevo__promptpool_find(pool, id);
    const kevo__prompt_failures *f = p ? p->failures : NULL;
    const failed_child *c = f && i < f->nchildren ? &f->children[i] : NULL;
    if (candidate)
        *candidate = c ? c->candidate : 0;
    if (kind)
        *kind = c ? c->kind : NULL;
    return c ? c->diagnostic : NULL;
}

/* ---- JSON -------------------------------------------------------------- */

json_t *kevo__prompt_failures_json(const kevo__prompt *p, bool *nomem)
{
    const kevo__prompt_failures *f = p->failures;
    *nomem = false;
    if (!f || (f->nkinds == 0 && f->nchildren == 0))
        return NULL;
    json_t *o = json_object(), *kinds = json_object(), *children = json_array();
    bool ok = o && kinds && children;
    for (size_t i = 0; ok && i < f->nkinds; i++)
        ok = json_object_set_new(kinds, f->kinds[i],
                                 json_integer((json_int_t)f->counts[i])) == 0;
    for (size_t i = 0; ok && i < f->nchildren; i++) {
        const failed_child *c = &f->children[i];
        ok = json_array_append_new(
                 children, json_pack("{s:I, s:s, s:s}", "candidate",
                                     (json_int_t)c->candidate, "kind", c->kind,
                                     "diagnostic", c->diagnostic)) == 0;
    }
    if (ok && json_object_set(o, "kinds", kinds) == 0 &&
        json_object_set(o, "children", children) == 0) {
        json_decref(kinds);
        json_decref(children);
        return o;
    }
    json_decref(o);
    json_decref(kinds);
    json_decref(children);
    *nomem = true;
    return NULL;
}

/* One failed child of the saved record. */
static kevo_status read_child(const json_t *c, const char *origin,
                              kevo_jpath *path, kevo__prompt_failures *f,
                              kevo_error *err)
{
    static const char *const keys[] = {"candidate", "kind", "diagnostic", NULL};
    kevo_status rc = kevo__json_object(c, origin, path, err);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(c, keys, origin, path, err);
    if (rc != KEVO_OK)
        return rc;
    int64_t cand = 0;
    const char *kind = NULL, *diag = NULL;
    json_t *v;
    size_t mark = kevo__jpath_key(path, "candidate");
    if (!(v = json_object_get(c, "candidate")) ||
        (rc = kevo__json_int(v, origin, path, &cand, err)) != KEVO_OK ||
        cand < 0)
        rc = kevo__json_fail(err, KEVO_EINVALID, origin, path,
                             "expected a candidate id (an integer >= 0)");
    kevo__jpath_pop(path, mark);
    mark = kevo__jpath_key(path, "kind");
    if (rc == KEVO_OK &&
        (!(v = json_object_get(c, "kind")) ||
         kevo__json_string(v, origin, path, &kind, err) != KEVO_OK ||
         !kind_ok(kind)))
        rc = kevo__json_fail(err, KEVO_EINVALID, origin, path,
                             "expected a failure kind (1 to %d bytes of "
                             "[a-z0-9_])",
                             KIND_MAX);
    kevo__jpath_pop(path, mark);
    mark = kevo__jpath_key(path, "diagnostic");
    if (rc == KEVO_OK &&
        (!(v = json_object_get(c, "diagnostic")) ||
         (rc = kevo__json_string(v, origin, path, &diag, err)) != KEVO_OK))
        rc = kevo__json_fail(err, KEVO_EINVALID, origin, path,
                             "expected a string");
    kevo__jpath_pop(path, mark);
    if (rc == KEVO_OK &&
        keep_child(f, (uint64_t)cand, kind, diag, true) != KEVO_OK)
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    return rc;
}

kevo_status kevo__prompt_failures_read(const json_t *v, const char *origin,
                                       kevo_jpath *path, kevo__prompt *p,
                                       kevo_error *err)
{
    static const char *const keys[] = {"kinds", "children", NULL};
    const json_t *fv = json_object_get(v, "failures");
    if (!fv)
        return KEVO_OK;
    size_t mark = kevo__jpath_key(path, "failures");
    kevo_status rc = kevo__json_object(fv, origin, path, err);
    if (rc == KEVO_OK)
        rc = kevo__json_check_keys(fv, keys, origin, path, err);
    kevo__prompt_failures *f = rc == KEVO_OK ? failures_of(p) : NULL;
    if (rc == KEVO_OK && !f)
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    const json_t *kinds = json_object_get(fv, "kinds");
    const json_t *children = json_object_get(fv, "children");
    size_t m = kevo__jpath_key(path, "kinds");
    if (rc == KEVO_OK && (!kinds || !json_is_object(kinds)))
        rc = kevo__json_fail(err, KEVO_EINVALID, origin, path,
                             "expected an object of counts");
    const char *kind;
    json_t *count;
    if (rc == KEVO_OK &&
        json_object_size(kinds) > KEVO_PROMPT_FAILURE_KINDS_MAX)
        rc = kevo__json_fail(err, KEVO_EINVALID, origin, path,
                             "%zu kinds, more than %d", json_object_size(kinds),
                             KEVO_PROMPT_FAILURE_KINDS_MAX);
    json_object_foreach ((json_t *)kinds, kind, count) {
        if (rc != KEVO_OK)
            break;
        size_t k = kevo__jpath_key(path, kind);
        int64_t n = 0;
        if (!kind_ok(kind))
            rc = kevo__json_fail(err, KEVO_EINVALID, origin, path,
                                 "not a failure kind (1 to %d bytes of "
                                 "[a-z0-9_])",
                                 KIND_MAX);
        else if ((rc = kevo__json_int(count, origin, path, &n, err)) ==
                     KEVO_OK &&
                 n < 1)
            rc = kevo__json_fail(err, KEVO_EINVALID, origin, path,
                                 "a count of %" PRId64 "; counts are >= 1", n);
        if (rc == KEVO_OK && count_kind(f, kind, (uint64_t)n) != KEVO_OK)
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        kevo__jpath_pop(path, k);
    }
    kevo__jpath_pop(path, m);
    m = kevo__jpath_key(path, "children");
    if (rc == KEVO_OK &&
        (!children || !json_is_array(children) ||
         json_array_size(children) > KEVO_PROMPT_FAILED_CHILDREN))
        rc = kevo__json_fail(err, KEVO_EINVALID, origin, path,
                             "expected an array of at most %d failed "
                             "children",
                             KEVO_PROMPT_FAILED_CHILDREN);
    for (size_t i = 0; rc == KEVO_OK && i < json_array_size(children); i++) {
        size_t k = kevo__jpath_index(path, i);
        rc = read_child(json_array_get(children, i), origin, path, f, err);
        kevo__jpath_pop(path, k);
    }
    kevo__jpath_pop(path, m);
    kevo__jpath_pop(path, mark);
    return rc;
}

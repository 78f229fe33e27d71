/*
 * promptpool.c: the pool of meta-prompts: adding with deduplication and
 * eviction, Thompson sampling, credit, and revision requests.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/blocks.h"
#include "promptpool_private.h"

/* ---- the pool ---------------------------------------------------------- */

kevo_status kevo_promptpool_new(size_t cap, kevo_promptpool **out,
                                kevo_error *err)
{
    if (out)
        *out = NULL;
    if (!out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_new: out must not be NULL");
    if (cap < KEVO_PROMPTPOOL_CAP_MIN || cap > KEVO_PROMPTPOOL_CAP_MAX)
        return kevo__error_set(
            err, KEVO_EINVAL, "prompt pool: a cap of %zu is outside [%d, %d]",
            cap, KEVO_PROMPTPOOL_CAP_MIN, KEVO_PROMPTPOOL_CAP_MAX);
    kevo_promptpool *pool = calloc(1, sizeof *pool);
    if (pool)
        pool->prompts = calloc(cap, sizeof *pool->prompts);
    if (!pool || !pool->prompts) {
        free(pool);
        return kevo__error_set(err, KEVO_ENOMEM, "prompt pool: out of memory");
    }
    pool->cap = cap;
    pool->next_id = 1;
    kevo__option_defaults_real(&kevo__promptpool_options, pool->opt);
    *out = pool;
    return KEVO_OK;
}

void kevo__prompt_free(kevo__prompt *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nsections; i++) {
        free(p->keys[i]);
        free(p->texts[i]);
    }
    free(p->keys);
    free(p->texts);
    free(p->name);
    kevo__prompt_failures_free(p);
    free(p);
}

void kevo_promptpool_free(kevo_promptpool *pool)
{
    if (!pool)
        return;
    for (size_t i = 0; i < pool->n; i++)
        kevo__prompt_free(pool->prompts[i]);
    free(pool->prompts);
    free(pool);
}

size_t kevo_promptpool_cap(const kevo_promptpool *pool)
{
    return pool ? pool->cap : 0;
}

size_t kevo_promptpool_size(const kevo_promptpool *pool)
{
    return pool ? pool->n : 0;
}

uint64_t kevo_promptpool_id(const kevo_promptpool *pool, size_t i)
{
    if (!pool || i >= pool->n)
        return KEVO_PROMPT_NONE;
    return pool->prompts[i]->id;
}

/* The index of id in the pool, or pool->n. Ids are increasing. */
static size_t index_of(const kevo_promptpool *pool, uint64_t id)
{
    size_t lo = 0, hi = pool->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t m = pool->prompts[mid]->id;
        if (m == id)
            return mid;
        if (m < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return pool->n;
}

kevo__prompt *kevo__promptpool_find(const kevo_promptpool *pool, uint64_t id)
{
    if (!pool || id == KEVO_PROMPT_NONE)
        return NULL;
    size_t i = index_of(pool, id);
    return i < pool->n ? pool->prompts[i] : NULL;
}

/* ---- prompts ----------------------------------------------------------- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
           c == '\v';
}

/* The trimmed text: its start in *start and its length. */
static size_t trimmed(const char *text, const char **start)
{
    while (is_space(*text))
        text++;
    size_t n = strlen(text);
    while (n > 0 && is_space(text[n - 1]))
        n--;
    *start = text;
    return n;
}

/* Whether s holds valid UTF-8 only; with no_control, also no control
 * characters. */
static bool valid_utf8(const char *s, size_t n, bool no_control)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (no_control && (c < 0x20 || c == 0x7f))
            return false;
        size_t len = kevo__utf8_length(s + i);
        if (len == 0 || len > n - i)
            return false;
        i += len;
    }
    return true;
}

kevo_status kevo__prompt_check_key(const char *key, char *why, size_t size)
{
    if (!kevo__is_identifier(key)) {
        snprintf(why, size,
                 "is not an identifier (a letter or '_', then letters, "
                 "digits or '_', at most %d characters)",
                 KEVO__IDENT_MAX);
        return KEVO_EINVAL;
    }
    return KEVO_OK;
}

kevo_status kevo__prompt_check_text(const char *text, char *why, size_t size)
{
    const char *start;
    size_t n = trimmed(text, &start);
    if (n == 0) {
        snprintf(why, size, "is empty");
        return KEVO_EINVAL;
    }
    if (n > KEVO_PROMPT_TEXT_MAX) {
        snprintf(why, size, "has %zu bytes, more than the %d allowed", n,
                 KEVO_PROMPT_TEXT_MAX);
        return KEVO_ELIMIT;
    }
    if (!valid_utf8(start, n, false)) {
        snprintf(why, size, "is not valid UTF-8");
        return KEVO_EINVAL;
    }
    return KEVO_OK;
}

kevo_status kevo__prompt_check_name(const char *name, char *why, size_t size)
{
    size_t n = strlen(name);
    if (n == 0 || n > KEVO_PROMPT_NAME_MAX) {
        snprintf(why, size, "must have 1 to %d bytes, not %zu",
                 KEVO_PROMPT_NAME_MAX, n);
        return KEVO_EINVAL;
    }
    if (!valid_utf8(name, n, true)) {
        snprintf(why, size, "must be UTF-8 text without control characters");
        return KEVO_EINVAL;
    }
    return KEVO_OK;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    uint64_t n = strlen(s);
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(n >> (8 * i));
    h = kevo__hash_bytes(h, len, sizeof len);
    return kevo__hash_bytes(h, s, n);
}

kevo__prompt *kevo__prompt_new(const char *name, const char *const *keys,
                               const char *const *texts, size_t n)
{
    kevo__prompt *p = NULL;
    size_t *order = NULL;
    if (n == 0)
        return NULL;
    p = calloc(1, sizeof *p);
    order = malloc(n * sizeof *order);
    if (!p || !order)
        goto fail;
    p->best_fitness = NAN;
    p->worst_fitness = NAN;
    p->keys = calloc(n, sizeof *p->keys);
    p->texts = calloc(n, sizeof *p->texts);
    if (!p->keys || !p->texts)
        goto fail;
    p->nsections = n;
    if (name && !(p->name = kevo__strdup(name)))
        goto fail;
    /* insertion sort of the section order by key: n is small */
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        for (; j > 0 && strcmp(keys[order[j - 1]], keys[i]) > 0; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    uint64_t h = KEVO__HASH_INIT;
    for (size_t i = 0; i < n; i++) {
        const char *start;
        size_t len = trimmed(texts[order[i]], &start);
        p->keys[i] = kevo__strdup(keys[order[i]]);
        p->texts[i] = kevo__strndup(start, len);
        if (!p->keys[i] || !p->texts[i])
            goto fail;
        h = hash_str(hash_str(h, p->keys[i]), p->texts[i]);
    }
    p->hash = kevo__hash_finish(h);
    free(order);
    return p;
fail:
    free(order);
    kevo__prompt_free(p);
    return NULL;
}

bool kevo__prompt_same(const kevo__prompt *a, const kevo__prompt *b)
{
    if (a->hash != b->hash || a->nsections != b->nsections)
        return false;
    for (size_t i = 0; i < a->nsections; i++) {
        if (strcmp(a->keys[i], b->keys[i]) != 0 ||
            strcmp(a->texts[i], b->texts[i]) != 0)
            return false;
    }
    return true;
}

kevo__prompt *kevo__promptpool_find_same(const kevo_promptpool *pool,
                                         const kevo__prompt *p)
{
    for (size_t i = 0; i < pool->n; i++) {
        if (pool->prompts[i] != p && kevo__prompt_same(pool->prompts[i], p))
            return pool->prompts[i];
    }
    return NULL;
}

/* ---- the posterior ----------------------------------------------------- */

static void posterior(const kevo_promptpool *pool, const kevo__prompt *p,
                      double *alpha, double *beta)
{
    double w = pool->opt[KEVO_PROMPTPOOL_BEAT_WEIGHT];
    double s = (1 - w) * (double)p->entered + w * (double)p->beat;
    double f = (double)p->children - s;
    if (f < 0) /* rounding, when every child succeeded */
        f = 0;
    *alpha = pool->opt[KEVO_PROMPTPOOL_PRIOR_SUCCESS] + s;
    *beta = pool->opt[KEVO_PROMPTPOOL_PRIOR_FAILURE] + f;
}

static double posterior_mean(const kevo_promptpool *pool, const kevo__prompt *p)
{
    double a, b;
    posterior(pool, p, &a, &b);
    return a / (a + b);
}

/* The index of the prompt with the highest posterior mean (the lowest id
 * among equals), among seeds only when seeds_only; pool->n when none. */
static size_t best_index(const kevo_promptpool *pool, bool seeds_only)
{
    size_t best = pool->n;
    double best_mean = 0;
    for (size_t i = 0; i < pool->n; i++) {
        const kevo__prompt *p = pool->prompts[i];
        if (seeds_only && p->parent != KEVO_PROMPT_NONE)
            continue;
        double m = posterior_mean(pool, p);
        if (best == pool->n || m > best_mean) {
            best = i;
            best_mean = m;
        }
    }
    return best;
}

/* The prompt to evict from a full pool: the lowest posterior mean (the
 * oldest among equals), never the best prompt nor the best seed. */
static size_t victim_index(const kevo_promptpool *pool)
{
    size_t best = best_index(pool, false);
    size_t best_seed = best_index(pool, true);
    size_t victim = pool->n;
    double victim_mean = 0;
    for (size_t i = 0; i < pool->n; i++) {
        if (i == best || i == best_seed)
            continue;
        double m = posterior_mean(pool, pool->prompts[i]);
        if (victim == pool->n || m < victim_mean) {
            victim = i;
            victim_mean = m;
        }
    }
    return victim;
}

/* ---- adding ------------------------------------------------------------ */

kevo_status kevo__promptpool_insert(kevo_promptpool *pool, kevo__prompt *p,
                                    uint64_t parent, uint64_t *id, int *added,
                                    uint64_t *evicted, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    uint64_t generation = 0;
    if (parent != KEVO_PROMPT_NONE) {
        const kevo__prompt *pp = kevo__promptpool_find(pool, parent);
        if (!pp) {
            rc = kevo__error_set(err, KEVO_ENOENT,
                                 "prompt pool: parent prompt %" PRIu64
                                 " is not in the pool (it may have been "
                                 "evicted)",
                                 parent);
            goto out;
        }
        generation = pp->generation + 1;
        if (!p->name && pp->name && !(p->name = kevo__strdup(pp->name))) {
            rc =
                kevo__error_set(err, KEVO_ENOMEM, "prompt pool: out of memory");
            goto out;
        }
    }
    const kevo__prompt *same = kevo__promptpool_find_same(pool, p);
    if (same) {
        *id = same->id;
        *added = 0;
        goto out;
    }
    if (pool->next_id > KEVO__PROMPT_ID_MAX) {
        rc = kevo__error_set(err, KEVO_ELIMIT,
                             "prompt pool: no prompt ids are left");
        goto out;
    }
    if (pool->n == pool->cap) {
        size_t v = victim_index(pool);
        /* a cap of at least 3 leaves one that is neither best */
        *evicted = pool->prompts[v]->id;
        kevo__prompt_free(pool->prompts[v]);
        memmove(pool->prompts + v, pool->prompts + v + 1,
                (pool->n - v - 1) * sizeof *pool->prompts);
        pool->n--;
    }
    p->id = pool->next_id++;
    p->parent = parent;
    p->generation = generation;
    p->added_at = pool->uses;
    p->revised_at = pool->uses;
    pool->prompts[pool->n++] = p;
    *id = p->id;
    *added = 1;
    return KEVO_OK;
out:
    kevo__prompt_free(p);
    return rc;
}

kevo_status kevo__prompt_from_arrays(const char *what, const char *name,
                                     const char *const *keys,
                                     const char *const *texts, size_t n,
                                     kevo__prompt **out, kevo_error *err)
{
    char why[160];
    kevo_status rc;
    *out = NULL;
    if (n == 0)
        return kevo__error_set(err, KEVO_EINVAL,
                               "%s: a prompt needs at least one section", what);
    if (n > KEVO_PROMPT_SECTIONS_MAX)
        return kevo__error_set(err, KEVO_ELIMIT,
                               "%s: %zu sections, more than the %d allowed",
                               what, n, KEVO_PROMPT_SECTIONS_MAX);
    if (name &&
        (rc = kevo__prompt_check_name(name, why, sizeof why)) != KEVO_OK)
        return kevo__error_set(err, rc, "%s: the name %s", what, why);
    for (size_t i = 0; i < n; i++) {
        if (!keys[i] || !texts[i])
            return kevo__error_set(err, KEVO_EINVAL,
                                   "%s: section %zu has a NULL key or text",
                                   what, i);
        rc = kevo__prompt_check_key(keys[i], why, sizeof why);
        if (rc != KEVO_OK)
            return kevo__error_set(err, rc, "%s: section %zu: key \"%.64s\" %s",
                                   what, i, keys[i], why);
        rc = kevo__prompt_check_text(texts[i], why, sizeof why);
        if (rc != KEVO_OK)
            return kevo__error_set(err, rc, "%s: section \"%s\": the text %s",
                                   what, keys[i], why);
        for (size_t j = 0; j < i; j++) {
            if (strcmp(keys[i], keys[j]) == 0)
                return kevo__error_set(err, KEVO_EINVAL,
                                       "%s: section \"%s\" is given twice "
                                       "(%zu and %zu)",
                                       what, keys[i], j, i);
        }
    }
    if (!(*out = kevo__prompt_new(name, keys, texts, n)))
        return kevo__error_set(err, KEVO_ENOMEM, "%s: out of memory", what);
    return KEVO_OK;
}

kevo_status kevo_promptpool_add(kevo_promptpool *pool, uint64_t parent,
                                const char *name, const char *const *keys,
                                const char *const *texts, size_t n,
                                uint64_t *id, int *added, uint64_t *evicted,
                                kevo_error *err)
{
    uint64_t id_, evicted_ = KEVO_PROMPT_NONE;
    int added_ = 0;
    kevo_status rc;
    if (id)
        *id = KEVO_PROMPT_NONE;
    if (added)
        *added = 0;
    if (evicted)
        *evicted = KEVO_PROMPT_NONE;
    if (!pool || (n > 0 && (!keys || !texts)))
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_add: NULL argument");
    kevo__prompt *p = NULL;
    if ((rc = kevo__prompt_from_arrays("prompt pool", name, keys, texts, n, &p,
                                       err)) != KEVO_OK)
        return rc;
    rc =
        kevo__promptpool_insert(pool, p, parent, &id_, &added_, &evicted_, err);
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

/* ---- choosing and crediting -------------------------------------------- */

kevo_status kevo_promptpool_choose(kevo_promptpool *pool, kevo_rng *rng,
                                   uint64_t *id, kevo_error *err)
{
    if (id)
        *id = KEVO_PROMPT_NONE;
    if (!pool || !rng || !id)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_choose: pool, rng and id must "
                               "not be NULL");
    if (pool->n == 0)
        return kevo__error_set(err, KEVO_ENOENT,
                               "prompt pool: the pool is empty: load the seed "
                               "prompts first");
    size_t best = 0;
    double best_draw = -1;
    for (size_t i = 0; i < pool->n; i++) {
        double a, b;
        posterior(pool, pool->prompts[i], &a, &b);
        double x = kevo_rng_beta(rng, a, b);
        if (x > best_draw) {
            best = i;
            best_draw = x;
        }
    }
    pool->prompts[best]->uses++;
    pool->uses++;
    *id = pool->prompts[best]->id;
    return KEVO_OK;
}

kevo_status kevo_promptpool_credit(kevo_promptpool *pool, uint64_t id,
                                   unsigned outcome, double fitness,
                                   uint64_t candidate, kevo_error *err)
{
    if (!pool)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_credit: pool must not be "
                               "NULL");
    if (outcome & ~(unsigned)(KEVO_PROMPT_ENTERED | KEVO_PROMPT_BEAT_PARENT))
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_credit: unknown outcome flags "
                               "%#x",
                               outcome);
    if (isinf(fitness))
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_credit: the fitness is "
                               "infinite");
    if (candidate > KEVO__PROMPT_ID_MAX)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_credit: candidate id %" PRIu64
                               " is 2^63 or more",
                               candidate);
    if (candidate == 0 && (!isnan(fitness) || outcome != 0))
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_credit: a fitness or an "
                               "outcome needs a candidate id");
    kevo__prompt *p = kevo__promptpool_find(pool, id);
    if (!p)
        return kevo__error_set(
            err, KEVO_ENOENT,
            "prompt pool: prompt %" PRIu64 " is not in the pool", id);
    p->children++;
    if (outcome & KEVO_PROMPT_ENTERED)
        p->entered++;
    if (outcome & KEVO_PROMPT_BEAT_PARENT)
        p->beat++;
    if (!isnan(fitness)) {
        if (isnan(p->best_fitness) || fitness > p->best_fitness) {
            p->best_fitness = fitness;
            p->best_child = candidate;
        }
        if (isnan(p->worst_fitness) || fitness < p->worst_fitness) {
            p->worst_fitness = fitness;
            p->worst_child = candidate;
        }
    }
    return KEVO_OK;
}

/* ---- records and revision ---------------------------------------------- */

static void fill_record(const kevo_promptpool *pool, const kevo__prompt *p,
                        kevo_prompt_record *r)
{
    memset(r, 0, sizeof *r);
    r->size = sizeof *r;
    r->uses = p->uses;
    r->children = p->children;
    r->entered = p->entered;
    r->beat_parent = p->beat;
    r->best_fitness = p->best_fitness;
    r->best_child = p->best_child;
    r->worst_fitness = p->worst_fitness;
    r->worst_child = p->worst_child;
    posterior(pool, p, &r->alpha, &r->beta);
    r->mean = r->alpha / (r->alpha + r->beta);
    r->revisions = p->revisions;
    r->failures = kevo__prompt_failure_total(p);
}

kevo_status kevo_promptpool_get_record(const kevo_promptpool *pool, uint64_t id,
                                       kevo_prompt_record *record)
{
    if (!pool || !record ||
        (record->size != 0 && record->size < sizeof *record))
        return KEVO_EINVAL;
    const kevo__prompt *p = kevo__promptpool_find(pool, id);
    if (!p)
        return KEVO_ENOENT;
    fill_record(pool, p, record);
    return KEVO_OK;
}

kevo_status kevo_promptpool_revision_due(kevo_promptpool *pool, uint64_t *id,
                                         kevo_prompt_record *record,
                                         kevo_error *err)
{
    if (id)
        *id = KEVO_PROMPT_NONE;
    if (!pool || !id)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_revision_due: pool and id "
                               "must not be NULL");
    if (record && record->size != 0 && record->size < sizeof *record)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_revision_due: the record's "
                               "size %zu is too small",
                               record->size);
    uint64_t every = (uint64_t)pool->opt[KEVO_PROMPTPOOL_REVISE_EVERY];
    uint64_t min_uses = (uint64_t)pool->opt[KEVO_PROMPTPOOL_REVISE_MIN_USES];
    uint64_t min_age = (uint64_t)pool->opt[KEVO_PROMPTPOOL_REVISE_MIN_AGE];
    if (every == 0 || pool->uses - pool->last_revision < every)
        return KEVO_OK;
    kevo__prompt *best = NULL;
    double best_mean = 0;
    for (size_t i = 0; i < pool->n; i++) {
        kevo__prompt *p = pool->prompts[i];
        if (p->uses < min_uses || pool->uses - p->revised_at < min_age)
            continue;
        double m = posterior_mean(pool, p);
        if (!best || m > best_mean) {
            best = p;
            best_mean = m;
        }
    }
    if (!best)
        return KEVO_OK;
    best->revisions++;
    best->revised_at = pool->uses;
    pool->last_revision = pool->uses;
    if (record)
        fill_record(pool, best, record);
    *id = best->id;
    return KEVO_OK;
}

/* ---- getters ----------------------------------------------------------- */

const char *kevo_promptpool_name(const kevo_promptpool *pool, uint64_t id)
{
    const kevo__prompt *p = kevo__promptpool_find(pool, id);
    return p ? p->name : NULL;
}

uint64_t kevo_promptpool_parent(const kevo_promptpool *pool, uint64_t id)
{
    const kevo__prompt *p = kevo__promptpool_find(pool, id);
    return p ? p->parent : KEVO_PROMPT_NONE;
}

uint64_t kevo_promptpool_generation(const kevo_promptpool *pool, uint64_t id)
{
    const kevo__prompt *p = kevo__promptpool_find(pool, id);
    return p ? p->generation : 0;
}

size_t kevo_promptpool_section_count(const kevo_promptpool *pool, uint64_t id)
{
    const kevo__prompt *p = kevo__promptpool_find(pool, id);
    return p ? p->nsections : 0;
}

const char *kevo_promptpool_section_name(const kevo_promptpool *pool,
                                         uint64_t id, size_t i)
{
    const kevo__prompt *p = kevo__promptpool_find(pool, id);
    return p && i < p->nsections ? p->keys[i] : NULL;
}

const char *kevo_promptpool_section(const kevo_promptpool *pool, uint64_t id,
                                    const char *key)
{
    const kevo__prompt *p = kevo__promptpool_find(pool, id);
    if (!p || !key)
        return NULL;
    for (size_t i = 0; i < p->nsections; i++) {
        if (strcmp(p->keys[i], key) == 0)
            return p->texts[i];
    }
    return NULL;
}

/*
 * test-promptpool.c: the prompt pool: options, adding and deduplication,
 * Thompson sampling, credit, eviction at the cap, revision requests and
 * lineage, the JSON round trip, malformed prompt files and pools (every
 * tests/data/promptpool/{prompt,pool}/NAME.json must fail with an error
 * whose text holds the line of NAME.err), and the seed prompts shipped in
 * prompts/.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/kevo_private.h"
#include "tap.h"

static char *path_of(const char *dir, const char *name)
{
    char *p = kevo__asprintf("%s/%s", dir, name);
    if (!p)
        bail_out("out of memory");
    return p;
}

static kevo_promptpool *pool_new(size_t cap)
{
    kevo_promptpool *pool = NULL;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_promptpool_new(cap, &pool, &err) != KEVO_OK)
        bail_out("kevo_promptpool_new: %s", err.text);
    return pool;
}

/* Adds a prompt with one "strategy" section; returns its id. */
static uint64_t add1(kevo_promptpool *pool, uint64_t parent, const char *text)
{
    const char *keys[] = {"strategy"};
    const char *texts[] = {text};
    uint64_t id = 0;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_promptpool_add(pool, parent, NULL, keys, texts, 1, &id, NULL, NULL,
                            &err) != KEVO_OK)
        bail_out("kevo_promptpool_add: %s", err.text);
    return id;
}

/* Credits n children to id, the first `good` of them entering the archive
 * and beating their parent; fitness is the child's index, candidate ids
 * start at first. */
static void credit_n(kevo_promptpool *pool, uint64_t id, int n, int good,
                     uint64_t first)
{
    for (int i = 0; i < n; i++) {
        unsigned outcome =
            i < good ? KEVO_PROMPT_ENTERED | KEVO_PROMPT_BEAT_PARENT : 0;
        if (kevo_promptpool_credit(pool, id, outcome, (double)i,
                                   first + (uint64_t)i, NULL) != KEVO_OK)
            bail_out("kevo_promptpool_credit");
    }
}

static double mean_of(const kevo_promptpool *pool, uint64_t id)
{
    kevo_prompt_record r = {.size = sizeof r};
    if (kevo_promptpool_get_record(pool, id, &r) != KEVO_OK)
        return NAN;
    return r.mean;
}

static void test_new_and_options(void)
{
    kevo_promptpool *pool = (kevo_promptpool *)1;
    kevo_error err;
    kevo_error_init(&err);
    is_int(kevo_promptpool_new(2, &pool, &err), KEVO_EINVAL, "cap 2 refused");
    ok(pool == NULL, "... *out is NULL");
    like_str(err.text, "a cap of 2 is outside [3, 4096]", "... says why");
    is_int(kevo_promptpool_new(KEVO_PROMPTPOOL_CAP_MAX + 1, &pool, NULL),
           KEVO_EINVAL, "a cap above the maximum refused");
    is_int(kevo_promptpool_new(3, NULL, NULL), KEVO_EINVAL, "NULL out");
    kevo_promptpool_free(NULL);
    ok(1, "kevo_promptpool_free(NULL) does nothing");

    pool = pool_new(8);
    is_uint(kevo_promptpool_cap(pool), 8, "cap");
    is_uint(kevo_promptpool_size(pool), 0, "empty");
    is_uint(kevo_promptpool_id(pool, 0), KEVO_PROMPT_NONE, "no id at 0");

    /* Every option's name, bounds and errors: test-options.c. */
    for (int i = 0; kevo_promptpool_option_name((kevo_promptpool_option)i);
         i++) {
        const char *name =
            kevo_promptpool_option_name((kevo_promptpool_option)i);
        double dflt = NAN;
        kevo_promptpool_option_bounds((kevo_promptpool_option)i, NULL, NULL,
                                      &dflt);
        is_double(kevo_promptpool_get(pool, (kevo_promptpool_option)i), dflt, 0,
                  "%s starts at its default", name);
    }
    ok(isnan(kevo_promptpool_get(pool, (kevo_promptpool_option)99)),
       "get of an unknown option is NaN");

    is_int(kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_EVERY, 10, NULL),
           KEVO_OK, "set revise_every");
    is_double(kevo_promptpool_get(pool, KEVO_PROMPTPOOL_REVISE_EVERY), 10, 0,
              "... and read it back");
    kevo_error_init(&err);
    is_int(kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_EVERY, 2.5, &err),
           KEVO_ERANGE, "an integer option takes whole numbers");
    like_str(err.text, "option revise_every: 2.5 is not a whole number",
             "... says so");
    kevo_error_init(&err);
    is_int(kevo_promptpool_set(pool, KEVO_PROMPTPOOL_PRIOR_SUCCESS, 0, &err),
           KEVO_ERANGE, "a prior of 0 refused");
    like_str(err.text,
             "option prior_success: 0 is not above 0 (allowed 0..1000000, 0 "
             "excluded)",
             "... with the open bound");
    is_int(kevo_promptpool_set(pool, KEVO_PROMPTPOOL_BEAT_WEIGHT, NAN, NULL),
           KEVO_ERANGE, "NaN refused");
    is_int(kevo_promptpool_set(pool, KEVO_PROMPTPOOL_BEAT_WEIGHT, 1.5, NULL),
           KEVO_ERANGE, "beat_weight above 1 refused");
    is_double(kevo_promptpool_get(pool, KEVO_PROMPTPOOL_BEAT_WEIGHT), 0.5, 0,
              "... and nothing changed");
    is_int(kevo_promptpool_set(pool, (kevo_promptpool_option)-1, 1, NULL),
           KEVO_EINVAL, "an unknown option refused");
    is_int(kevo_promptpool_set(NULL, KEVO_PROMPTPOOL_BEAT_WEIGHT, 1, NULL),
           KEVO_EINVAL, "a NULL pool refused");
    kevo_promptpool_free(pool);
}

static void test_add_and_dedup(void)
{
    kevo_promptpool *pool = pool_new(8);
    kevo_error err;
    const char *keys[] = {"strategy", "pitfalls", "analysis"};
    const char *texts[] = {"Coalesce loads.", "Mind the tail.",
                           "Compare with the roofline."};
    uint64_t id = 0, id2 = 0, evicted = 99;
    int added = -1;
    kevo_error_init(&err);
    is_int(kevo_promptpool_add(pool, KEVO_PROMPT_NONE, "first", keys, texts, 3,
                               &id, &added, &evicted, &err),
           KEVO_OK, "add a prompt of three sections");
    is_uint(id, 1, "... the first id is 1");
    is_int(added, 1, "... it was added");
    is_uint(evicted, KEVO_PROMPT_NONE, "... nothing evicted");
    is_uint(kevo_promptpool_size(pool), 1, "... the pool holds it");
    is_uint(kevo_promptpool_id(pool, 0), 1, "... at index 0");
    is_str(kevo_promptpool_name(pool, id), "first", "name");
    is_uint(kevo_promptpool_parent(pool, id), KEVO_PROMPT_NONE, "a seed");
    is_uint(kevo_promptpool_generation(pool, id), 0, "generation 0");
    is_uint(kevo_promptpool_section_count(pool, id), 3, "three sections");
    is_str(kevo_promptpool_section_name(pool, id, 0), "analysis",
           "sections in byte order: analysis");
    is_str(kevo_promptpool_section_name(pool, id, 2), "strategy",
           "... strategy last");
    ok(kevo_promptpool_section_name(pool, id, 3) == NULL, "no section 3");
    is_str(kevo_promptpool_section(pool, id, "pitfalls"), "Mind the tail.",
           "section text by name");
    ok(kevo_promptpool_section(pool, id, "nope") == NULL,
       "no section of another name");

    /* The same sections in another order, with other white space and
     * another name: a duplicate. */
    const char *keys2[] = {"analysis", "strategy", "pitfalls"};
    const char *texts2[] = {"  Compare with the roofline.\n",
                            "Coalesce loads.\n\n", "\tMind the tail."};
    is_int(kevo_promptpool_add(pool, KEVO_PROMPT_NONE, "again", keys2, texts2,
                               3, &id2, &added, NULL, &err),
           KEVO_OK, "a duplicate is not an error");
    is_uint(id2, id, "... its id is the existing prompt's");
    is_int(added, 0, "... and it was not added");
    is_int(err.code, KEVO_OK, "... nothing recorded in the error");
    is_uint(kevo_promptpool_size(pool), 1, "... the pool still holds one");
    is_str(kevo_promptpool_name(pool, id), "first", "... the name kept");

    const char *texts3[] = {"Coalesce loads!", "Mind the tail.",
                            "Compare with the roofline."};
    is_int(kevo_promptpool_add(pool, KEVO_PROMPT_NONE, NULL, keys, texts3, 3,
                               &id2, &added, NULL, NULL),
           KEVO_OK, "one character differs: a new prompt");
    ok(id2 == 2 && added == 1, "... id 2, added");
    ok(kevo_promptpool_name(pool, id2) == NULL, "... without a name");

    /* Revisions: lineage, generation, the parent's name. */
    uint64_t r1 = add1(pool, id, "Use float4 loads.");
    is_uint(kevo_promptpool_parent(pool, r1), id, "a revision's parent");
    is_uint(kevo_promptpool_generation(pool, r1), 1, "... generation 1");
    is_str(kevo_promptpool_name(pool, r1), "first",
           "... takes its parent's name");
    uint64_t r2 = add1(pool, r1, "Use float4 loads and a grid-stride loop.");
    is_uint(kevo_promptpool_generation(pool, r2), 2, "... generation 2");
    is_uint(kevo_promptpool_parent(pool, r2), r1, "... parent r1");

    /* Bad prompts. */
    const char *one_key[] = {"strategy"};
    const char *empty[] = {" \n\t "};
    const char *bad_key[] = {"my strategy"};
    const char *dup_keys[] = {"strategy", "strategy"};
    const char *two[] = {"a", "b"};
    const char *bad_utf8[] = {"caf\xc3"};
    kevo_error_init(&err);
    is_int(kevo_promptpool_add(pool, 0, NULL, one_key, two, 0, &id2, NULL, NULL,
                               &err),
           KEVO_EINVAL, "no section");
    like_str(err.text, "at least one section", "... says so");
    ok(id2 == KEVO_PROMPT_NONE, "... *id is KEVO_PROMPT_NONE");
    kevo_error_init(&err);
    is_int(kevo_promptpool_add(pool, 0, NULL, bad_key, two, 1, NULL, NULL, NULL,
                               &err),
           KEVO_EINVAL, "a key that is not an identifier");
    like_str(err.text, "key \"my strategy\" is not an identifier",
             "... names it");
    kevo_error_init(&err);
    is_int(kevo_promptpool_add(pool, 0, NULL, dup_keys, two, 2, NULL, NULL,
                               NULL, &err),
           KEVO_EINVAL, "a key given twice");
    like_str(err.text, "section \"strategy\" is given twice", "... names it");
    kevo_error_init(&err);
    is_int(kevo_promptpool_add(pool, 0, NULL, one_key, empty, 1, NULL, NULL,
                               NULL, &err),
           KEVO_EINVAL, "an empty text");
    like_str(err.text, "section \"strategy\": the text is empty",
             "... says so");
    kevo_error_init(&err);
    is_int(kevo_promptpool_add(pool, 0, NULL, one_key, bad_utf8, 1, NULL, NULL,
                               NULL, &err),
           KEVO_EINVAL, "text that is not UTF-8");
    like_str(err.text, "is not valid UTF-8", "... says so");
    kevo_error_init(&err);
    is_int(kevo_promptpool_add(pool, 0, "a\nb", one_key, two, 1, NULL, NULL,
                               NULL, &err),
           KEVO_EINVAL, "a name with a control character");
    like_str(err.text, "the name must be UTF-8 text without control",
             "... says so");
    is_int(kevo_promptpool_add(pool, 0, "", one_key, two, 1, NULL, NULL, NULL,
                               NULL),
           KEVO_EINVAL, "an empty name");
    kevo_error_init(&err);
    is_int(kevo_promptpool_add(pool, 77, NULL, one_key, two, 1, NULL, NULL,
                               NULL, &err),
           KEVO_ENOENT, "a parent that is not in the pool");
    like_str(err.text, "parent prompt 77 is not in the pool", "... says so");
    is_int(kevo_promptpool_add(NULL, 0, NULL, one_key, two, 1, NULL, NULL, NULL,
                               NULL),
           KEVO_EINVAL, "a NULL pool");
    is_int(kevo_promptpool_add(pool, 0, NULL, NULL, two, 1, NULL, NULL, NULL,
                               NULL),
           KEVO_EINVAL, "NULL keys");

    char *many_keys[KEVO_PROMPT_SECTIONS_MAX + 1];
    const char *many_texts[KEVO_PROMPT_SECTIONS_MAX + 1];
    for (int i = 0; i <= KEVO_PROMPT_SECTIONS_MAX; i++) {
        many_keys[i] = kevo__asprintf("s%d", i);
        many_texts[i] = "x";
    }
    kevo_error_init(&err);
    is_int(kevo_promptpool_add(pool, 0, NULL, (const char *const *)many_keys,
                               many_texts, KEVO_PROMPT_SECTIONS_MAX + 1, NULL,
                               NULL, NULL, &err),
           KEVO_ELIMIT, "17 sections");
    like_str(err.text, "17 sections, more than the 16 allowed", "... says so");
    is_int(kevo_promptpool_add(pool, 0, NULL, (const char *const *)many_keys,
                               many_texts, KEVO_PROMPT_SECTIONS_MAX, NULL, NULL,
                               NULL, NULL),
           KEVO_OK, "16 sections are fine");
    for (int i = 0; i <= KEVO_PROMPT_SECTIONS_MAX; i++)
        free(many_keys[i]);

    char *long_text = malloc(KEVO_PROMPT_TEXT_MAX + 2);
    memset(long_text, 'x', KEVO_PROMPT_TEXT_MAX + 1);
    long_text[KEVO_PROMPT_TEXT_MAX + 1] = '\0';
    const char *lt[] = {long_text};
    kevo_error_init(&err);
    is_int(kevo_promptpool_add(pool, 0, NULL, one_key, lt, 1, NULL, NULL, NULL,
                               &err),
           KEVO_ELIMIT, "a text over the limit");
    like_str(err.text, "has 32769 bytes, more than the 32768 allowed",
             "... says so");
    free(long_text);
    is_uint(kevo_promptpool_size(pool), 5, "failed adds changed nothing");
    kevo_promptpool_free(pool);
}

/* 100 children each: 30% success against 5%. */
static void test_thompson_prefers_better(void)
{
    kevo_promptpool *pool = pool_new(4);
    uint64_t good = add1(pool, 0, "good advice");
    uint64_t poor = add1(pool, 0, "poor advice");
    credit_n(pool, good, 100, 30, 1000);
    credit_n(pool, poor, 100, 5, 2000);
    kevo_rng *rng = kevo_rng_new(42, "prompts");
    int chosen_good = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t id;
        if (kevo_promptpool_choose(pool, rng, &id, NULL) != KEVO_OK)
            bail_out("choose");
        chosen_good += id == good;
    }
    diag("the 30%% prompt was chosen %d times of 1000", chosen_good);
    ok(chosen_good > 900, "Thompson sampling prefers the better prompt");
    kevo_prompt_record r = {.size = sizeof r};
    kevo_promptpool_get_record(pool, good, &r);
    is_uint(r.uses, (uint64_t)chosen_good, "each choice counts a use");
    kevo_promptpool_get_record(pool, poor, &r);
    is_uint(r.uses, (uint64_t)(1000 - chosen_good), "... of the other too");

    /* The same seed gives the same choices. */
    kevo_rng *a = kevo_rng_new(7, "prompts");
    kevo_rng *b = kevo_rng_new(7, "prompts");
    int same = 1;
    for (int i = 0; i < 200; i++) {
        uint64_t x, y;
        kevo_promptpool_choose(pool, a, &x, NULL);
        kevo_promptpool_choose(pool, b, &y, NULL);
        same &= x == y;
    }
    ok(same, "the same generator state makes the same choices");
    kevo_rng_free(a);
    kevo_rng_free(b);

    uint64_t id = 5;
    kevo_error err;
    kevo_error_init(&err);
    kevo_promptpool *empty = pool_new(3);
    is_int(kevo_promptpool_choose(empty, rng, &id, &err), KEVO_ENOENT,
           "choosing from an empty pool");
    ok(id == KEVO_PROMPT_NONE, "... *id is KEVO_PROMPT_NONE");
    like_str(err.text, "the pool is empty", "... says so");
    is_int(kevo_promptpool_choose(pool, NULL, &id, NULL), KEVO_EINVAL,
           "a NULL generator");
    kevo_promptpool_free(empty);
    kevo_rng_free(rng);
    kevo_promptpool_free(pool);
}

/* A fresh prompt beside a proven one still gets chosen. */
static void test_exploration(void)
{
    kevo_promptpool *pool = pool_new(4);
    uint64_t proven = add1(pool, 0, "proven advice");
    credit_n(pool, proven, 100, 30, 1);
    uint64_t fresh = add1(pool, 0, "fresh advice");
    kevo_rng *rng = kevo_rng_new(42, "explore");
    int chosen_fresh = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t id;
        kevo_promptpool_choose(pool, rng, &id, NULL);
        chosen_fresh += id == fresh;
    }
    diag("with the uniform prior, the fresh prompt was chosen %d times",
         chosen_fresh);
    ok(chosen_fresh > 500 && chosen_fresh < 900,
       "a uniform prior explores a fresh prompt most of the time (P = 0.70)");

    /* A pessimistic prior, Beta(1, 9): P(fresh wins) = 0.7^9 = 0.04. */
    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_PRIOR_FAILURE, 9, NULL);
    chosen_fresh = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t id;
        kevo_promptpool_choose(pool, rng, &id, NULL);
        chosen_fresh += id == fresh;
    }
    diag("with prior Beta(1, 9), the fresh prompt was chosen %d times",
         chosen_fresh);
    ok(chosen_fresh >= 10 && chosen_fresh <= 100,
       "a pessimistic prior still explores a fresh prompt sometimes");
    kevo_rng_free(rng);
    kevo_promptpool_free(pool);
}

static void test_credit(void)
{
    kevo_promptpool *pool = pool_new(4);
    uint64_t id = add1(pool, 0, "advice");
    kevo_prompt_record r = {0};
    is_int(kevo_promptpool_get_record(pool, id, &r), KEVO_OK, "a record");
    is_uint(r.size, sizeof r, "... its size set");
    ok(r.uses == 0 && r.children == 0 && r.entered == 0 && r.beat_parent == 0 &&
           r.revisions == 0,
       "... all counts 0");
    ok(isnan(r.best_fitness) && isnan(r.worst_fitness) && r.best_child == 0 &&
           r.worst_child == 0,
       "... no best or worst child");
    is_double(r.alpha, 1, 0, "... alpha is the prior");
    is_double(r.beta, 1, 0, "... beta is the prior");
    is_double(r.mean, 0.5, 0, "... mean 0.5");

    kevo_error err;
    kevo_error_init(&err);
    is_int(kevo_promptpool_credit(pool, id, KEVO_PROMPT_ENTERED, 0.4, 11, &err),
           KEVO_OK, "a child that entered");
    is_int(kevo_promptpool_credit(pool, id, KEVO_PROMPT_BEAT_PARENT, 0.7, 12,
                                  &err),
           KEVO_OK, "a child that beat its parent");
    is_int(kevo_promptpool_credit(pool, id,
                                  KEVO_PROMPT_ENTERED | KEVO_PROMPT_BEAT_PARENT,
                                  0.9, 13, &err),
           KEVO_OK, "a child that did both");
    is_int(kevo_promptpool_credit(pool, id, 0, 0, 14, &err), KEVO_OK,
           "a child that failed (fitness 0)");
    is_int(kevo_promptpool_credit(pool, id, 0, NAN, 0, &err), KEVO_OK,
           "a request without a child");
    is_int(kevo_promptpool_credit(pool, id, 0, 0.9, 15, &err), KEVO_OK,
           "a child as fit as the best");
    is_int(err.code, KEVO_OK, "no error");
    kevo_promptpool_get_record(pool, id, &r);
    is_uint(r.children, 6, "six children");
    is_uint(r.entered, 2, "two entered");
    is_uint(r.beat_parent, 2, "two beat their parent");
    is_double(r.best_fitness, 0.9, 0, "best fitness");
    is_uint(r.best_child, 13, "... the first child that reached it");
    is_double(r.worst_fitness, 0, 0, "worst fitness");
    is_uint(r.worst_child, 14, "... its candidate");
    /* s = 0.5 * 2 + 0.5 * 2 = 2; alpha = 1 + 2, beta = 1 + 6 - 2 */
    is_double(r.alpha, 3, 1e-12, "alpha = prior + successes");
    is_double(r.beta, 5, 1e-12, "beta = prior + failures");
    is_double(r.mean, 3.0 / 8, 1e-12, "mean");

    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_BEAT_WEIGHT, 0, NULL);
    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_PRIOR_SUCCESS, 2, NULL);
    kevo_promptpool_get_record(pool, id, &r);
    is_double(r.alpha, 4, 1e-12, "beat_weight 0 counts entering only");
    is_double(r.beta, 5, 1e-12, "... beta");
    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_BEAT_WEIGHT, 0.25, NULL);
    kevo_promptpool_get_record(pool, id, &r);
    is_double(r.alpha, 4, 1e-12, "beat_weight 0.25 (the same counts here)");

    kevo_error_init(&err);
    is_int(kevo_promptpool_credit(pool, id, 4, 0.5, 16, &err), KEVO_EINVAL,
           "an unknown outcome flag");
    like_str(err.text, "unknown outcome flags 0x4", "... says so");
    is_int(kevo_promptpool_credit(pool, id, 0, INFINITY, 16, NULL), KEVO_EINVAL,
           "an infinite fitness");
    is_int(kevo_promptpool_credit(pool, id, 0, 0.5, 0, NULL), KEVO_EINVAL,
           "a fitness without a candidate");
    is_int(kevo_promptpool_credit(pool, id, KEVO_PROMPT_ENTERED, NAN, 0, NULL),
           KEVO_EINVAL, "an outcome without a candidate");
    is_int(kevo_promptpool_credit(pool, id, 0, 0.5, UINT64_C(1) << 63, NULL),
           KEVO_EINVAL, "a candidate id of 2^63");
    kevo_error_init(&err);
    is_int(kevo_promptpool_credit(pool, 99, 0, 0.5, 16, &err), KEVO_ENOENT,
           "a prompt that is not in the pool");
    like_str(err.text, "prompt 99 is not in the pool", "... says so");
    is_int(kevo_promptpool_credit(NULL, id, 0, 0.5, 16, NULL), KEVO_EINVAL,
           "a NULL pool");
    kevo_promptpool_get_record(pool, id, &r);
    is_uint(r.children, 6, "refused credits changed nothing");

    is_int(kevo_promptpool_get_record(pool, 99, &r), KEVO_ENOENT,
           "no record for an unknown id");
    r.size = 8;
    is_int(kevo_promptpool_get_record(pool, id, &r), KEVO_EINVAL,
           "a record too small");
    is_int(kevo_promptpool_get_record(pool, id, NULL), KEVO_EINVAL,
           "a NULL record");
    kevo_promptpool_free(pool);
}

static void test_eviction(void)
{
    kevo_promptpool *pool = pool_new(3);
    uint64_t a = add1(pool, 0, "seed A");
    uint64_t b = add1(pool, 0, "seed B");
    uint64_t c = add1(pool, b, "revision C of B");
    credit_n(pool, a, 10, 0, 100); /* mean 1/12 */
    credit_n(pool, b, 10, 5, 200); /* mean 6/12 */
    credit_n(pool, c, 10, 9, 300); /* mean 10/12 */
    uint64_t evicted = 0, d = 0;
    int added = 0;
    const char *keys[] = {"strategy"};
    const char *texts[] = {"revision D of C"};
    is_int(kevo_promptpool_add(pool, c, NULL, keys, texts, 1, &d, &added,
                               &evicted, NULL),
           KEVO_OK, "add to a full pool");
    is_uint(evicted, a, "the lowest posterior mean is evicted");
    is_int(added, 1, "... and the new prompt added");
    is_uint(kevo_promptpool_size(pool), 3, "... the pool stays at its cap");
    ok(kevo_promptpool_section(pool, a, "strategy") == NULL,
       "... the evicted prompt is gone");
    is_uint(kevo_promptpool_id(pool, 0), b, "ids stay in order: b");
    is_uint(kevo_promptpool_id(pool, 2), d, "... d last");

    /* B, the only seed, now falls below D (fresh, 0.5): B is still kept,
     * as the best seed, and D goes. */
    credit_n(pool, b, 50, 0, 400);
    ok(mean_of(pool, b) < mean_of(pool, d), "seed B is now the worst");
    texts[0] = "revision E of C";
    uint64_t e = 0;
    is_int(kevo_promptpool_add(pool, c, NULL, keys, texts, 1, &e, &added,
                               &evicted, NULL),
           KEVO_OK, "add again");
    is_uint(evicted, d, "the best seed is kept; the worst other goes");
    ok(kevo_promptpool_section(pool, b, "strategy") != NULL, "... B stays");

    /* A duplicate evicts nothing. */
    texts[0] = "revision E of C";
    uint64_t same = 0;
    evicted = 1;
    is_int(kevo_promptpool_add(pool, c, NULL, keys, texts, 1, &same, &added,
                               &evicted, NULL),
           KEVO_OK, "a duplicate in a full pool");
    ok(same == e && added == 0 && evicted == KEVO_PROMPT_NONE,
       "... returns the existing id and evicts nothing");

    /* The best prompt is kept even when it is a revision and every seed
     * is worse; equal means evict the oldest. */
    kevo_promptpool *p2 = pool_new(3);
    uint64_t s1 = add1(p2, 0, "s1");
    uint64_t s2 = add1(p2, 0, "s2");
    uint64_t s3 = add1(p2, 0, "s3");
    add1(p2, 0, "s4");
    ok(kevo_promptpool_section(p2, s1, "strategy") != NULL &&
           kevo_promptpool_section(p2, s2, "strategy") == NULL &&
           kevo_promptpool_section(p2, s3, "strategy") != NULL,
       "equal means: the oldest that is not the best (s1) goes: s2");
    kevo_promptpool_free(p2);
    kevo_promptpool_free(pool);
}

/* Revision with one prompt: every choice picks it, so the clocks can be
 * followed exactly. */
static void test_revision_due(void)
{
    kevo_promptpool *pool = pool_new(4);
    kevo_rng *rng = kevo_rng_new(3, "revise");
    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_EVERY, 10, NULL);
    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_MIN_USES, 5, NULL);
    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_MIN_AGE, 15, NULL);
    uint64_t a = add1(pool, 0, "the only prompt");
    uint64_t due = 99;
    kevo_prompt_record r = {.size = sizeof r};
    int due_at[4] = {0}, ndue = 0;
    for (int use = 1; use <= 40; use++) {
        uint64_t id;
        kevo_promptpool_choose(pool, rng, &id, NULL);
        kevo_promptpool_credit(pool, id, use % 4 ? 0 : KEVO_PROMPT_ENTERED, use,
                               (uint64_t)use, NULL);
        if (kevo_promptpool_revision_due(pool, &due, &r, NULL) != KEVO_OK)
            bail_out("revision_due");
        if (due != KEVO_PROMPT_NONE && ndue < 4)
            due_at[ndue++] = use;
    }
    is_int(ndue, 2, "two revisions due in 40 uses");
    /* age 15 first reached at use 15; then 10 uses must pass (25) but the
     * prompt's age is only 10 until use 30 */
    is_int(due_at[0], 15, "the first at use 15 (min_age)");
    is_int(due_at[1], 30, "the second at use 30 (min_age again)");

    /* With no age required, the pool clock alone decides: 19 uses since
     * the last revision at 30. The record comes with the request. */
    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_MIN_AGE, 0, NULL);
    for (int use = 41; use <= 49; use++) {
        uint64_t id;
        kevo_promptpool_choose(pool, rng, &id, NULL);
    }
    memset(&r, 0, sizeof r);
    is_int(kevo_promptpool_revision_due(pool, &due, &r, NULL), KEVO_OK,
           "revision_due");
    is_uint(due, a, "due again at use 49 with min_age 0");
    is_uint(r.size, sizeof r, "the request carries the record");
    is_uint(r.uses, 49, "... uses");
    is_uint(r.children, 40, "... children");
    is_uint(r.entered, 10, "... entered");
    is_uint(r.revisions, 3, "... the third revision");
    is_double(r.best_fitness, 40, 0, "... best fitness");
    is_uint(r.best_child, 40, "... the best child's id");
    is_double(r.worst_fitness, 1, 0, "... worst fitness");
    is_uint(r.worst_child, 1, "... the worst child's id");
    kevo_promptpool_revision_due(pool, &due, NULL, NULL);
    is_uint(due, KEVO_PROMPT_NONE, "asking again at once: nothing due");

    /* The revision joins as a child of a. */
    uint64_t rev = add1(pool, a, "the revised prompt");
    is_uint(kevo_promptpool_parent(pool, rev), a, "the revision's parent");
    is_uint(kevo_promptpool_generation(pool, rev), 1, "... generation 1");

    /* Two prompts: the revision (fresh, mean 0.5) is better than a (mean
     * 6/42), but is it well-used yet? */
    for (int use = 50; use <= 59; use++) {
        uint64_t id;
        kevo_promptpool_choose(pool, rng, &id, NULL);
    }
    kevo_prompt_record rr = {.size = sizeof rr};
    kevo_promptpool_get_record(pool, rev, &rr);
    uint64_t want = rr.uses >= 5 ? rev : a;
    diag("the revision was chosen %llu times of 10",
         (unsigned long long)rr.uses);
    kevo_promptpool_revision_due(pool, &due, NULL, NULL);
    is_uint(due, want, "the best well-used prompt is due");

    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_EVERY, 0, NULL);
    for (int use = 60; use <= 200; use++) {
        uint64_t id;
        kevo_promptpool_choose(pool, rng, &id, NULL);
    }
    kevo_promptpool_revision_due(pool, &due, NULL, NULL);
    is_uint(due, KEVO_PROMPT_NONE, "revise_every 0: never due");
    kevo_error err;
    kevo_error_init(&err);
    is_int(kevo_promptpool_revision_due(pool, NULL, NULL, &err), KEVO_EINVAL,
           "a NULL id");
    r.size = 4;
    is_int(kevo_promptpool_revision_due(pool, &due, &r, NULL), KEVO_EINVAL,
           "a record too small");
    kevo_promptpool_free(pool);
    kevo_rng_free(rng);
}

/* A pool in a varied state: options changed, the shipped seeds, revisions,
 * credits with awkward doubles, a request without a child, choices, a
 * revision handed out and an eviction. */
static kevo_promptpool *busy_pool(void)
{
    kevo_promptpool *pool = pool_new(6);
    kevo_error err;
    kevo_error_init(&err);
    char *dir = path_of(tap_srcdir(), "prompts");
    size_t loaded = 0;
    if (kevo_promptpool_load_dir(pool, dir, &loaded, &err) != KEVO_OK)
        bail_out("load_dir: %s", err.text);
    free(dir);
    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_EVERY, 7, NULL);
    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_MIN_USES, 2, NULL);
    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_MIN_AGE, 3, NULL);
    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_BEAT_WEIGHT, 0.3, NULL);
    kevo_promptpool_set(pool, KEVO_PROMPTPOOL_PRIOR_FAILURE, 2.5, NULL);
    kevo_rng *rng = kevo_rng_new(11, "busy");
    uint64_t cand = 1;
    for (int i = 0; i < 60; i++) {
        uint64_t id, due;
        kevo_promptpool_choose(pool, rng, &id, NULL);
        double f = kevo_rng_uniform(rng) / 3;
        unsigned outcome = (unsigned)kevo_rng_uniform_int(rng, 4);
        if (i % 9 == 4)
            kevo_promptpool_credit(pool, id, 0, NAN, 0, NULL);
        else
            kevo_promptpool_credit(pool, id, outcome, f, cand++, NULL);
        if (kevo_promptpool_revision_due(pool, &due, NULL, NULL) == KEVO_OK &&
            due != KEVO_PROMPT_NONE) {
            char *text = kevo__asprintf("revision %d of prompt %llu", i,
                                        (unsigned long long)due);
            add1(pool, due, text);
            free(text);
        }
    }
    kevo_rng_free(rng);
    /* a revision not yet used: no best or worst child */
    add1(pool, kevo_promptpool_id(pool, 0), "a fresh revision");
    return pool;
}

static void test_json_round_trip(void)
{
    kevo_promptpool *pool = busy_pool();
    kevo_error err;
    kevo_error_init(&err);
    char *j1 = NULL, *j2 = NULL;
    kevo_promptpool *back = NULL;
    is_int(kevo_promptpool_to_json(pool, &j1, &err), KEVO_OK, "to_json");
    is_int(kevo_promptpool_from_json(j1, "pool.json", &back, &err), KEVO_OK,
           "from_json reads it back");
    if (err.code)
        diag("%s", err.text);
    is_int(kevo_promptpool_to_json(back, &j2, &err), KEVO_OK, "to_json again");
    is_str(j2, j1, "the round trip is byte-identical");
    ok(kevo_promptpool_size(pool) == 6 && kevo_promptpool_id(pool, 5) > 6,
       "the pool is full and has evicted (last id %llu)",
       (unsigned long long)kevo_promptpool_id(pool, 5));
    like_str(j1, "\"best\": null", "a prompt without a best child is there");
    like_str(j1, "\"parent\": 1", "... and a revision");

    int same = 1;
    for (size_t i = 0; i < kevo_promptpool_size(pool); i++) {
        uint64_t id = kevo_promptpool_id(pool, i);
        kevo_prompt_record a = {.size = sizeof a}, b = {.size = sizeof b};
        kevo_promptpool_get_record(pool, id, &a);
        kevo_promptpool_get_record(back, id, &b);
        same &= kevo_promptpool_id(back, i) == id &&
                memcmp(&a, &b, sizeof a) == 0 &&
                kevo_promptpool_parent(back, id) ==
                    kevo_promptpool_parent(pool, id) &&
                kevo_promptpool_generation(back, id) ==
                    kevo_promptpool_generation(pool, id);
    }
    ok(same, "every record and lineage is the same");

    kevo_rng *r1 = kevo_rng_new(5, "after");
    kevo_rng *r2 = kevo_rng_new(5, "after");
    for (int i = 0; i < 100; i++) {
        uint64_t x, y, dx, dy;
        kevo_promptpool_choose(pool, r1, &x, NULL);
        kevo_promptpool_choose(back, r2, &y, NULL);
        kevo_promptpool_credit(pool, x, KEVO_PROMPT_ENTERED, 0.5, 9000, NULL);
        kevo_promptpool_credit(back, y, KEVO_PROMPT_ENTERED, 0.5, 9000, NULL);
        kevo_promptpool_revision_due(pool, &dx, NULL, NULL);
        kevo_promptpool_revision_due(back, &dy, NULL, NULL);
        same &= x == y && dx == dy;
    }
    ok(same, "the reloaded pool makes the same choices and revisions");
    free(j1);
    free(j2);
    kevo_promptpool_to_json(pool, &j1, NULL);
    kevo_promptpool_to_json(back, &j2, NULL);
    is_str(j2, j1, "... and ends in the same state");
    kevo_rng_free(r1);
    kevo_rng_free(r2);
    free(j1);
    free(j2);
    kevo_promptpool_free(back);

    kevo_promptpool *empty = pool_new(3);
    kevo_promptpool_to_json(empty, &j1, NULL);
    is_int(kevo_promptpool_from_json(j1, NULL, &back, NULL), KEVO_OK,
           "an empty pool reads back");
    kevo_promptpool_to_json(back, &j2, NULL);
    is_str(j2, j1, "... byte for byte");
    free(j1);
    free(j2);
    kevo_promptpool_free(back);
    kevo_promptpool_free(empty);

    is_int(kevo_promptpool_to_json(NULL, &j1, NULL), KEVO_EINVAL,
           "to_json of NULL");
    ok(j1 == NULL, "... *json is NULL");
    is_int(kevo_promptpool_from_json(NULL, NULL, &back, NULL), KEVO_EINVAL,
           "from_json of NULL");
    kevo_error_init(&err);
    is_int(kevo_promptpool_from_json("{\"format\": ", "x.json", &back, &err),
           KEVO_EPARSE, "a syntax error");
    ok(back == NULL, "... *out is NULL");
    ok(err.line == 1 && err.column > 0, "... with line and column (%d:%d)",
       err.line, err.column);
    like_str(err.text, "x.json:1:", "... in the message");
    kevo_promptpool_free(pool);
}

/* A pool saved by an earlier build loads, and saves to the same bytes. */
static void test_fixture(void)
{
    char *path = path_of(tap_srcdir(), "tests/data/promptpool/v1.json");
    char *text = NULL, *json = NULL;
    kevo_promptpool *pool = NULL;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo__read_file(path, true, &text, NULL, &err) != KEVO_OK)
        bail_out("%s", err.text);
    is_int(kevo_promptpool_from_json(text, path, &pool, &err), KEVO_OK,
           "v1.json loads");
    if (err.code)
        diag("%s", err.text);
    kevo_promptpool_to_json(pool, &json, NULL);
    text[strcspn(text, "\0")] = '\0';
    size_t n = strlen(text);
    if (n > 0 && text[n - 1] == '\n')
        text[n - 1] = '\0';
    is_str(json, text, "... and saves to the same bytes");
    is_uint(kevo_promptpool_size(pool), 6, "... six prompts");
    free(json);
    free(text);
    free(path);
    kevo_promptpool_free(pool);
}

static void test_prompt_json(void)
{
    kevo_promptpool *pool = pool_new(3);
    const char *keys[] = {"strategy", "pitfalls"};
    const char *texts[] = {"Tile \"it\".\n", "Edges\u00e9."};
    uint64_t id = 0;
    kevo_promptpool_add(pool, 0, "tiles", keys, texts, 2, &id, NULL, NULL,
                        NULL);
    uint64_t rev = add1(pool, id, "Tile more.");
    char *json = NULL;
    kevo_error err;
    kevo_error_init(&err);
    is_int(kevo_promptpool_prompt_json(pool, rev, &json, &err), KEVO_OK,
           "prompt_json");
    json_t *v = json ? json_loads(json, 0, NULL) : NULL;
    ok(json_is_object(v), "... is a JSON object");
    is_int(json_integer_value(json_object_get(v, "id")), (long long)rev,
           "... id");
    is_int(json_integer_value(json_object_get(v, "parent")), (long long)id,
           "... parent");
    is_int(json_integer_value(json_object_get(v, "generation")), 1,
           "... generation");
    is_str(json_string_value(json_object_get(v, "name")), "tiles", "... name");
    is_str(json_string_value(
               json_object_get(json_object_get(v, "sections"), "strategy")),
           "Tile more.", "... sections");
    is_int(json_object_size(v), 5, "... and nothing else");
    json_decref(v);
    free(json);
    kevo_promptpool_prompt_json(pool, id, &json, NULL);
    v = json ? json_loads(json, 0, NULL) : NULL;
    is_str(json_string_value(
               json_object_get(json_object_get(v, "sections"), "pitfalls")),
           "Edges\u00e9.", "non-ASCII text survives");
    is_str(json_string_value(
               json_object_get(json_object_get(v, "sections"), "strategy")),
           "Tile \"it\".", "... quotes too, trimmed");
    json_decref(v);
    free(json);
    json = (char *)1;
    kevo_error_init(&err);
    is_int(kevo_promptpool_prompt_json(pool, 42, &json, &err), KEVO_ENOENT,
           "an unknown id");
    ok(json == NULL, "... *json is NULL");

    /* add_json: the prompt file format, as a revision. */
    uint64_t j = 0;
    int added = 0;
    is_int(kevo_promptpool_add_json(
               pool, rev, "{\"sections\": {\"strategy\": \"Tile even more.\"}}",
               "reply", &j, &added, NULL, &err),
           KEVO_OK, "add_json");
    ok(added && kevo_promptpool_parent(pool, j) == rev &&
           kevo_promptpool_generation(pool, j) == 2,
       "... a revision of generation 2");
    kevo_error_init(&err);
    is_int(kevo_promptpool_add_json(pool, 0, "{\"sections\": {\"a\": 1}}",
                                    "reply", &j, &added, NULL, &err),
           KEVO_EINVALID, "add_json of a bad prompt");
    like_str(err.text,
             "reply: $.sections.a: expected a string, found an "
             "integer",
             "... names the origin and the JSON path");
    is_int(kevo_promptpool_add_json(pool, 0, NULL, NULL, &j, NULL, NULL, NULL),
           KEVO_EINVAL, "add_json of NULL");
    kevo_promptpool_free(pool);
}

/* The first line of a file, without its newline; NULL if unreadable. */
static char *first_line(const char *path)
{
    char *text = NULL;
    if (kevo__read_file(path, true, &text, NULL, NULL) != KEVO_OK)
        return NULL;
    text[strcspn(text, "\r\n")] = '\0';
    return text;
}

static int json_only(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 5 && strcmp(d->d_name + n - 5, ".json") == 0;
}

/* Every NAME.json of dir fails (through load_file for prompts, from_json
 * for pools) with an error that holds NAME.err's first line. */
static void bad_cases(const char *sub, int is_pool, int at_least)
{
    char *dir = path_of(tap_srcdir(), sub);
    struct dirent **names = NULL;
    int n = scandir(dir, &names, json_only, alphasort);
    if (n < 0)
        diag("%s: %s", dir, strerror(errno));
    ok(n >= at_least, "%s holds at least %d cases (%d)", sub, at_least, n);
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        char *json = path_of(dir, name);
        char *errfile =
            kevo__asprintf("%.*s.err", (int)(strlen(json) - 5), json);
        char *want = errfile ? first_line(errfile) : NULL;
        ok(want && want[0], "%s: has a .err file with the expected message",
           name);
        kevo_error err;
        kevo_error_init(&err);
        kevo_status rc;
        kevo_promptpool *pool = pool_new(3);
        uint64_t id = 9;
        if (is_pool) {
            kevo_promptpool *back = (kevo_promptpool *)1;
            char *text = NULL;
            rc = kevo__read_file(json, true, &text, NULL, &err);
            if (rc == KEVO_OK)
                rc = kevo_promptpool_from_json(text, json, &back, &err);
            ok(back == NULL, "%s: *out is NULL", name);
            free(text);
        } else {
            rc = kevo_promptpool_load_file(pool, json, &id, NULL, &err);
            ok(id == KEVO_PROMPT_NONE && kevo_promptpool_size(pool) == 0,
               "%s: nothing added", name);
        }
        ok(rc != KEVO_OK, "%s: fails (%s)", name, kevo_strerror(rc));
        is_int(err.code, rc, "%s: the error record holds the code", name);
        ok(rc != KEVO_EINVAL, "%s: a bad file is not a bad argument", name);
        if (want)
            like_str(err.text, want, "%s: message", name);
        is_str(err.source, json, "%s: the error's source is the file", name);
        kevo_promptpool_free(pool);
        free(want);
        free(errfile);
        free(json);
        free(names[i]);
    }
    free(names);
    free(dir);
}

static void test_bad_files(void)
{
    bad_cases("tests/data/promptpool/prompt", 0, 12);
    bad_cases("tests/data/promptpool/pool", 1, 25);
}

static void test_load_dir(void)
{
    kevo_promptpool *pool = pool_new(8);
    kevo_error err;
    kevo_error_init(&err);
    size_t loaded = 99;

    /* A directory with a bad file: nothing is added, the file is named. */
    char *bad = path_of(tap_srcdir(), "tests/data/promptpool/prompt");
    add1(pool, 0, "already here");
    is_int(kevo_promptpool_load_dir(pool, bad, &loaded, &err), KEVO_EINVALID,
           "a directory with a malformed file");
    like_str(err.text, "bad_name_type.json: $.name: expected a string or null",
             "... names the first bad file and the JSON path");
    ok(loaded == 0 && kevo_promptpool_size(pool) == 1, "... and adds nothing");
    free(bad);

    kevo_error_init(&err);
    is_int(
        kevo_promptpool_load_dir(pool, "/nonexistent/prompts", &loaded, &err),
        KEVO_ENOENT, "a directory that does not exist");
    like_str(err.text, "/nonexistent/prompts: cannot read the directory",
             "... names it");

    char tmpl[] = "/tmp/kevo-promptpool-XXXXXX";
    char *tmp = mkdtemp(tmpl);
    if (!tmp)
        bail_out("mkdtemp: %s", strerror(errno));
    kevo_error_init(&err);
    is_int(kevo_promptpool_load_dir(pool, tmp, &loaded, &err), KEVO_ENOENT,
           "a directory without prompt files");
    like_str(err.text, "no prompt files (*.json)", "... says so");
    rmdir(tmp);

    char *seeds = path_of(tap_srcdir(), "prompts");
    kevo_promptpool *small = pool_new(3);
    kevo_error_init(&err);
    is_int(kevo_promptpool_load_dir(small, seeds, &loaded, &err), KEVO_ELIMIT,
           "four seeds do not fit a pool of three");
    like_str(err.text, "4 new seed prompt(s) do not fit a pool of 3",
             "... says so");
    is_uint(kevo_promptpool_size(small), 0, "... and adds nothing");
    kevo_promptpool_free(small);

    kevo_error_init(&err);
    is_int(kevo_promptpool_load_dir(pool, seeds, &loaded, &err), KEVO_OK,
           "the shipped seeds load");
    is_uint(loaded, 4, "... four of them");
    is_int(kevo_promptpool_load_dir(pool, seeds, &loaded, &err), KEVO_OK,
           "loading them again");
    is_uint(loaded, 0, "... adds none: they are duplicates");
    is_uint(kevo_promptpool_size(pool), 5, "... the pool holds five");

    ok(strstr(kevo_promptpool_seed_dir(), "prompts") != NULL,
       "the installed seed directory: %s", kevo_promptpool_seed_dir());
    setenv("KEVO_PROMPT_DIR", seeds, 1);
    is_str(kevo_promptpool_seed_dir(), seeds, "KEVO_PROMPT_DIR overrides it");
    kevo_promptpool *fresh = pool_new(4);
    is_int(kevo_promptpool_load_dir(fresh, NULL, &loaded, NULL), KEVO_OK,
           "load_dir(NULL) loads the seed directory");
    is_uint(loaded, 4, "... four");
    unsetenv("KEVO_PROMPT_DIR");

    static const char *const expect[] = {
        "correctness-first", "memory-bandwidth", "occupancy-latency",
        "shared-memory-warps"};
    is_uint(kevo_promptpool_size(fresh), KEVO_ARRAY_SIZE(expect), "four seeds");
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(expect); i++) {
        uint64_t id = kevo_promptpool_id(fresh, i);
        const char *name = expect[i];
        is_str(kevo_promptpool_name(fresh, id), name,
               "seed %zu has the name of its file (in file order)", i);
        ok(kevo_promptpool_section_count(fresh, id) == 3 &&
               kevo_promptpool_section(fresh, id, "strategy") &&
               kevo_promptpool_section(fresh, id, "pitfalls") &&
               kevo_promptpool_section(fresh, id, "analysis"),
           "... with strategy, pitfalls and analysis");
        const char *strategy = kevo_promptpool_section(fresh, id, "strategy");
        ok(strategy && strlen(strategy) > 200,
           "... and real advice in its strategy");
        is_uint(kevo_promptpool_parent(fresh, id), KEVO_PROMPT_NONE,
                "... a seed");
    }
    kevo_promptpool_free(fresh);

    uint64_t id = 0;
    int added = 0;
    char *one = path_of(seeds, "memory-bandwidth.json");
    is_int(kevo_promptpool_load_file(pool, one, &id, &added, NULL), KEVO_OK,
           "load_file of a seed already there");
    ok(added == 0 && id != KEVO_PROMPT_NONE, "... returns its id");
    kevo_error_init(&err);
    is_int(
        kevo_promptpool_load_file(pool, "/nonexistent.json", &id, &added, &err),
        KEVO_ENOENT, "load_file of a missing file");
    like_str(err.text, "/nonexistent.json", "... names it");
    free(one);
    free(seeds);
    kevo_promptpool_free(pool);
}

/* A prompt's failures: counts per kind, the last failed children, their
 * diagnostics in one line, saved and read back with the pool. */
static void test_failures(void)
{
    kevo_promptpool *pool = pool_new(4);
    uint64_t a = add1(pool, KEVO_PROMPT_NONE, "vectorise");
    uint64_t b = add1(pool, KEVO_PROMPT_NONE, "tile");
    kevo_error err;
    kevo_error_init(&err);
    is_int(
        kevo_promptpool_credit_failure(pool, a, "Compile Error", 3, NULL, &err),
        KEVO_EINVAL, "a kind that is not [a-z0-9_] is refused");
    like_str(err.text, "'Compile Error'", "naming it");
    is_int(kevo_promptpool_credit_failure(NULL, a, "wrong", 3, NULL, NULL),
           KEVO_EINVAL, "a NULL pool");
    is_int(kevo_promptpool_credit_failure(pool, 99, "wrong", 3, NULL, NULL),
           KEVO_ENOENT, "a prompt not in the pool");
    is_int(kevo_promptpool_credit_failure(pool, a, "wrong", UINT64_MAX, NULL,
                                          NULL),
           KEVO_EINVAL, "a candidate id of 2^63 or more");
    ok(kevo_promptpool_failure_kind(pool, a, 0, NULL) == NULL,
       "nothing was recorded");
    for (uint64_t c = 10; c < 13; c++)
        kevo_promptpool_credit_failure(
            pool, a, "compile_error", c,
            "compile error: x.cu(3): error: \"q\" is undefined\n  q = 1;\n"
            "  ^\n",
            NULL);
    kevo_promptpool_credit_failure(pool, a, "wrong", 13,
                                   "shape 1 (n=4096): z[7] = 2, want 3", NULL);
    kevo_promptpool_credit_failure(pool, a, "no_code", 0, NULL, NULL);
    uint64_t count = 0;
    const char *k0 = kevo_promptpool_failure_kind(pool, a, 0, &count);
    is_str(k0, "compile_error", "the commonest kind first");
    is_uint(count, 3, "with its count");
    is_str(kevo_promptpool_failure_kind(pool, a, 1, &count), "no_code",
           "equal counts in byte order");
    is_str(kevo_promptpool_failure_kind(pool, a, 2, NULL), "wrong", "...");
    ok(!kevo_promptpool_failure_kind(pool, a, 3, &count) && count == 0,
       "no fourth kind");
    kevo_prompt_record r = {.size = sizeof r};
    kevo_promptpool_get_record(pool, a, &r);
    is_uint(r.failures, 5, "the record counts 5 failures");
    is_uint(r.children, 0, "apart from the children credited for sampling");
    uint64_t cand = 0;
    const char *kind = NULL;
    const char *d = kevo_promptpool_failed_child(pool, a, 0, &cand, &kind);
    is_str(d, "shape 1 (n=4096): z[7] = 2, want 3",
           "the most recent failed child first (no_code had no child)");
    ok(cand == 13 && strcmp(kind, "wrong") == 0, "with its id and kind");
    d = kevo_promptpool_failed_child(pool, a, 1, &cand, &kind);
    is_str(d, "compile error: x.cu(3): error: \"q\" is undefined q = 1; ^",
           "a diagnostic is kept as one line");
    ok(kevo_promptpool_failed_child(pool, a, 2, NULL, NULL) != NULL &&
           kevo_promptpool_failed_child(pool, a, 3, &cand, &kind) == NULL &&
           cand == 0 && kind == NULL,
       "%d failed children are kept", KEVO_PROMPT_FAILED_CHILDREN);
    char longer[1000];
    memset(longer, 'e', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    kevo_promptpool_credit_failure(pool, b, "fault", 20, longer, NULL);
    d = kevo_promptpool_failed_child(pool, b, 0, NULL, NULL);
    ok(d && strlen(d) <= KEVO_PROMPT_DIAGNOSTIC_MAX &&
           strcmp(d + strlen(d) - 3, "...") == 0,
       "a long diagnostic is cut to %d bytes, ending in ...",
       KEVO_PROMPT_DIAGNOSTIC_MAX);
    for (int i = 0; i < KEVO_PROMPT_FAILURE_KINDS_MAX + 4; i++) {
        char k[16];
        snprintf(k, sizeof k, "kind_%02d", i);
        kevo_promptpool_credit_failure(pool, b, k, 0, NULL, NULL);
    }
    size_t nk = 0;
    bool other = false;
    const char *k;
    while ((k = kevo_promptpool_failure_kind(pool, b, nk, &count))) {
        other = other || (strcmp(k, "other") == 0 && count >= 4);
        nk++;
    }
    is_uint(nk, KEVO_PROMPT_FAILURE_KINDS_MAX, "at most %d kinds",
            KEVO_PROMPT_FAILURE_KINDS_MAX);
    ok(other, "the rest count as other");

    char *j1 = NULL, *j2 = NULL;
    kevo_promptpool *back = NULL;
    kevo_promptpool_to_json(pool, &j1, NULL);
    like_str(j1, "\"failures\": {", "the pool's JSON has the failures");
    is_int(kevo_promptpool_from_json(j1, "pool.json", &back, &err), KEVO_OK,
           "and reads back");
    kevo_promptpool_to_json(back, &j2, NULL);
    is_str(j2, j1, "byte for byte");
    kevo_prompt_record rb = {.size = sizeof rb};
    kevo_promptpool_get_record(back, a, &rb);
    kevo_promptpool_get_record(pool, a, &r);
    ok(memcmp(&r, &rb, sizeof r) == 0, "with the same record");
    is_str(kevo_promptpool_failed_child(back, a, 1, NULL, NULL),
           kevo_promptpool_failed_child(pool, a, 1, NULL, NULL),
           "and the same failed children");
    free(j1);
    free(j2);
    kevo_promptpool_free(back);
    kevo_promptpool_free(pool);
}

int main(void)
{
    test_new_and_options();
    test_add_and_dedup();
    test_thompson_prefers_better();
    test_exploration();
    test_credit();
    test_eviction();
    test_revision_due();
    test_json_round_trip();
    test_fixture();
    test_prompt_json();
    test_bad_files();
    test_load_dir();
    test_failures();
    return done_testing();
}

/*
 * kevo/promptpool.h: the pool of meta-prompts that co-evolve with the
 * kernels.
 *
 * A prompt is a few named sections of advice for the LLM (conventionally
 * "strategy", "pitfalls" and "analysis"; any identifier is allowed) with a
 * lineage (the prompt it was revised from, and its generation) and a record
 * of what its children did. The search chooses a prompt for each LLM
 * request by Thompson sampling, credits each child to the prompt that
 * produced it, and every so often asks the LLM to revise a well-used
 * prompt given its record and its best and worst children. The pool is
 * capped, holds no two prompts with the same sections, and is saved in the
 * checkpoint as JSON.
 *
 * A prompt is named by its id, a positive integer below 2^63 that the pool
 * hands out in increasing order and never reuses; 0 (KEVO_PROMPT_NONE)
 * names no prompt. A seed prompt is one added without a parent: the files
 * shipped with kevo, or a caller's own.
 *
 * Thompson sampling: a prompt's chance that a child succeeds has the
 * posterior Beta(a, b) with
 *     s = (1 - w) * entered + w * beat_parent
 *     a = prior_success + s
 *     b = prior_failure + children - s
 * where entered counts children that entered the archive, beat_parent
 * those fitter than their parent, and w is the option beat_weight. A
 * choice draws one variate from each prompt's posterior and takes the
 * largest, so a proven prompt is chosen most of the time and a fresh one,
 * whose posterior is the wide prior, still now and then.
 *
 * The functions that load seed prompts into a pool (a search's:
 * kevo_search_prompts()) are stable; the rest is experimental
 * (kevo-api(7)).
 */
#ifndef KEVO_PROMPTPOOL_H
#define KEVO_PROMPTPOOL_H

#include <kevo/error.h>
#include <kevo/prompt.h>
#include <kevo/rng.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_promptpool kevo_promptpool;

/* No prompt: a seed's parent, or "nothing is due". */
#define KEVO_PROMPT_NONE 0

/* Bounds of a pool (a prompt's own are in <kevo/prompt.h>). */
#define KEVO_PROMPTPOOL_CAP_MIN 3
#define KEVO_PROMPTPOOL_CAP_MAX 4096

/* Outcome flags of a child, for kevo_promptpool_credit(). */
enum {
    KEVO_PROMPT_ENTERED = 1u << 0,    /* the child entered the archive */
    KEVO_PROMPT_BEAT_PARENT = 1u << 1 /* the child was fitter than its parent */
};

/*
 * Options, set with kevo_promptpool_set(). Each has a name (for a JSON
 * configuration), bounds and a default (kevo_promptpool_option_name(),
 * kevo_promptpool_option_bounds()); each may change at any time. The
 * priors and the weight are real numbers, the others whole numbers.
 */
typedef enum kevo_promptpool_option {
    /* "prior_success": pseudo-successes of the Beta prior; (0, 1e6],
     * default 1 */
    KEVO_PROMPTPOOL_PRIOR_SUCCESS = 0,
    /* "prior_failure": pseudo-failures of the Beta prior; (0, 1e6],
     * default 1 */
    KEVO_PROMPTPOOL_PRIOR_FAILURE = 1,
    /* "beat_weight": the weight w of beating the parent against entering
     * the archive in a child's success; [0, 1], default 0.5 */
    KEVO_PROMPTPOOL_BEAT_WEIGHT = 2,
    /* "revise_every": pool uses between two revision requests; 0 turns
     * revision off; integer in [0, 1e9], default 50 */
    KEVO_PROMPTPOOL_REVISE_EVERY = 3,
    /* "revise_min_uses": how often a prompt must have been chosen before it
     * may be revised; integer in [1, 1e9], default 20 */
    KEVO_PROMPTPOOL_REVISE_MIN_USES = 4,
    /* "revise_min_age": pool uses since a prompt was added or last handed
     * out for revision before it may be revised (again); integer in
     * [0, 1e9], default 100 */
    KEVO_PROMPTPOOL_REVISE_MIN_AGE = 5
} kevo_promptpool_option;

/* What a prompt's record keeps of its failures
 * (kevo_promptpool_credit_failure()): counts of at most this many kinds
 * (the rest count as "other"), the most recent failed children, and their
 * diagnostics in one line of at most this many bytes. */
#define KEVO_PROMPT_FAILURE_KINDS_MAX 16
#define KEVO_PROMPT_FAILED_CHILDREN 3
#define KEVO_PROMPT_DIAGNOSTIC_MAX 300

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_promptpool_new: an empty pool of at most cap prompts, with every
 * option at its default, in *out. Returns KEVO_OK, KEVO_EINVAL for a cap
 * outside [KEVO_PROMPTPOOL_CAP_MIN, KEVO_PROMPTPOOL_CAP_MAX] or a NULL out,
 * or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_promptpool_new(size_t cap, kevo_promptpool **out,
                                         kevo_error *err);

/* kevo_promptpool_free: frees the pool and its prompts. NULL does nothing. */
KEVO_API void kevo_promptpool_free(kevo_promptpool *pool);

/* kevo_promptpool_cap: the most prompts the pool holds. */
KEVO_API size_t kevo_promptpool_cap(const kevo_promptpool *pool);

/* kevo_promptpool_size: how many prompts the pool holds. */
KEVO_API size_t kevo_promptpool_size(const kevo_promptpool *pool);

/*
 * kevo_promptpool_id: the id of the i-th prompt in increasing order of id,
 * for i in [0, kevo_promptpool_size()); KEVO_PROMPT_NONE past the end.
 */
KEVO_API uint64_t kevo_promptpool_id(const kevo_promptpool *pool, size_t i);

/*
 * kevo_promptpool_option_name: the option's name in a JSON configuration
 * ("prior_success", ...), or NULL for an unknown option (the options are
 * numbered from 0: the first NULL ends them).
 * kevo_promptpool_option_from_name: the option called name in *out (out
 * may be NULL: is there one?). Returns KEVO_OK, KEVO_ENOENT for an unknown
 * name, or KEVO_EINVAL for a NULL name.
 * kevo_promptpool_option_bounds: the smallest, largest and default value
 * of opt in *lo, *hi and *def (each may be NULL; the priors must be above
 * their lowest bound, 0). Returns KEVO_OK or KEVO_EINVAL for an unknown
 * option.
 */
KEVO_API const char *kevo_promptpool_option_name(kevo_promptpool_option opt);
KEVO_API kevo_status
kevo_promptpool_option_from_name(const char *name, kevo_promptpool_option *out);
KEVO_API kevo_status kevo_promptpool_option_bounds(kevo_promptpool_option opt,
                                                   double *lo, double *hi,
                                                   double *def);

/*
 * kevo_promptpool_set: sets option opt to value. Returns KEVO_OK, KEVO_EINVAL
 * for an unknown option or a NULL pool, or KEVO_ERANGE for a value outside
 * the option's bounds or not a whole number for an integer option (the
 * message names the option and gives the bounds: "option beat_weight: 1.5
 * is above the highest allowed value 1 (allowed 0..1)"), in which case
 * nothing changes.
 */
KEVO_API kevo_status kevo_promptpool_set(kevo_promptpool *pool,
                                         kevo_promptpool_option opt,
                                         double value, kevo_error *err);

/* kevo_promptpool_get: the value of option opt; NaN for an unknown one. */
KEVO_API double kevo_promptpool_get(const kevo_promptpool *pool,
                                    kevo_promptpool_option opt);

/*
 * kevo_promptpool_add: adds a prompt of n sections, keys[i] naming the
 * section whose text is texts[i] (both copied; the text without its leading
 * and trailing white space). name (copied; may be NULL) labels it in logs:
 * 1 to KEVO_PROMPT_NAME_MAX bytes of UTF-8 without control characters; a
 * revision without a name takes its parent's. parent is KEVO_PROMPT_NONE
 * for a seed prompt, or the id of the prompt this one revises: the new
 * prompt's generation is then the parent's plus one.
 *
 * A prompt whose sections equal, name for name and text for text, those of
 * a prompt in the pool is not added: *id is then the existing prompt's id
 * and *added is 0. Otherwise *added is 1 and *id the new id; when the pool
 * was full, one prompt is evicted first and its id is stored in *evicted
 * (KEVO_PROMPT_NONE when none was). The prompt evicted is the one with the
 * lowest posterior mean, the oldest among equals, leaving out the prompt
 * with the highest posterior mean and the seed prompt with the highest
 * posterior mean (the lowest id among equals): the best prompt, and the
 * best seed, always stay. id, added and evicted may be NULL.
 *
 * Returns KEVO_OK (also for a duplicate); KEVO_EINVAL for a NULL argument,
 * no section, a key that is not an identifier or is given twice, an empty
 * text, text or a name that is not valid UTF-8, or a bad name; KEVO_ELIMIT
 * for more than KEVO_PROMPT_SECTIONS_MAX sections or a text longer than
 * KEVO_PROMPT_TEXT_MAX; KEVO_ENOENT when parent is not in the pool (it may
 * have been evicted); KEVO_ELIMIT when ids are exhausted; KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_promptpool_add(kevo_promptpool *pool, uint64_t parent,
                                         const char *name,
                                         const char *const *keys,
                                         const char *const *texts, size_t n,
                                         uint64_t *id, int *added,
                                         uint64_t *evicted, kevo_error *err);

/*
 * kevo_promptpool_add_json: as kevo_promptpool_add(), with the prompt given
 * as JSON text: {"name": "...", "sections": {"strategy": "...", ...}},
 * where "name" may be left out (or null). origin names the text in messages
 * (may be NULL). Returns what kevo_promptpool_add() returns, KEVO_EPARSE for
 * bad JSON (with line and column) and KEVO_EINVALID naming the JSON path of
 * a bad value.
 */
KEVO_API kevo_status kevo_promptpool_add_json(kevo_promptpool *pool,
                                              uint64_t parent, const char *json,
                                              const char *origin, uint64_t *id,
                                              int *added, uint64_t *evicted,
                                              kevo_error *err);
#endif /* KEVO_EXPERIMENTAL */

/*
 * kevo_promptpool_load_file: adds the seed prompt in the JSON file at path
 * (the format of kevo_promptpool_add_json()); errors name the file and the
 * JSON path. Returns as kevo_promptpool_add_json(), or KEVO_EIO or
 * KEVO_ENOENT when the file cannot be read.
 */
KEVO_API kevo_status kevo_promptpool_load_file(kevo_promptpool *pool,
                                               const char *path, uint64_t *id,
                                               int *added, kevo_error *err);

/*
 * kevo_promptpool_load_dir: adds every *.json file of directory dir as a
 * seed prompt, in the byte order of the file names; dir NULL means the
 * directory of seed prompts installed with kevo
 * (kevo_promptpool_seed_dir()). Every file is read and checked before any
 * is added, and the prompts must fit the pool without evicting any: on
 * failure the pool is unchanged. *loaded (may be NULL) is the number of
 * prompts added, duplicates left out. Returns KEVO_OK; KEVO_ENOENT or
 * KEVO_EIO when dir cannot be read; KEVO_ENOENT when it holds no *.json
 * file; the error of the first bad file, naming it; KEVO_ELIMIT when the
 * prompts do not fit; KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_promptpool_load_dir(kevo_promptpool *pool,
                                              const char *dir, size_t *loaded,
                                              kevo_error *err);

/*
 * kevo_promptpool_seed_dir: the directory where kevo's seed prompts are
 * installed ($(pkgdatadir)/prompts), or the value of the environment
 * variable KEVO_PROMPT_DIR when it is set and not empty. The string is
 * static or the environment's; the caller must not free it.
 */
KEVO_API const char *kevo_promptpool_seed_dir(void);

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_promptpool_choose: picks a prompt by Thompson sampling (one Beta
 * variate per prompt from rng, the largest wins, the lower id among equal
 * draws), counts a use of it and of the pool, and stores its id in *id.
 * Returns KEVO_OK, KEVO_ENOENT for an empty pool, or KEVO_EINVAL.
 */
KEVO_API kevo_status kevo_promptpool_choose(kevo_promptpool *pool,
                                            kevo_rng *rng, uint64_t *id,
                                            kevo_error *err);

/*
 * kevo_promptpool_credit: records a child of prompt id: outcome is a
 * bitwise OR of KEVO_PROMPT_ENTERED and KEVO_PROMPT_BEAT_PARENT (0 for a
 * child that did neither), fitness its fitness and candidate its id. A
 * request that produced no usable child is credited with candidate 0 and
 * fitness NaN: it counts as a child that failed, and takes no part in the
 * best and worst children. Returns KEVO_OK; KEVO_ENOENT when the prompt is
 * not in the pool (evicted while its request was in flight), in which case
 * nothing changes; KEVO_EINVAL for an unknown flag, an infinite fitness, a
 * finite fitness with candidate 0, a candidate id of 2^63 or more, or a
 * NULL pool.
 */
KEVO_API kevo_status kevo_promptpool_credit(kevo_promptpool *pool, uint64_t id,
                                            unsigned outcome, double fitness,
                                            uint64_t candidate,
                                            kevo_error *err);

/*
 * kevo_promptpool_credit_failure: records how a child of prompt id failed
 * (or a request with it that gave no child): kind is a short lower-case
 * word ([a-z0-9_], 1 to 32 bytes), such as an evaluation's verdict
 * ("compile_error", "wrong") or an operator's failure kind ("no_code");
 * candidate is the failed child's id (0 when there is none) and
 * diagnostic (may be NULL) kevo's diagnostic, kept as one line of at most
 * KEVO_PROMPT_DIAGNOSTIC_MAX bytes. The record counts the kind (past
 * KEVO_PROMPT_FAILURE_KINDS_MAX kinds, as "other") and keeps the
 * KEVO_PROMPT_FAILED_CHILDREN most recent failures that name a child or
 * have a diagnostic. It is apart from kevo_promptpool_credit(), which
 * still credits the child as failed for the sampling. Returns KEVO_OK;
 * KEVO_ENOENT when the prompt is not in the pool (nothing changes);
 * KEVO_EINVAL for a NULL pool, a bad kind or a candidate id of 2^63 or
 * more; KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_promptpool_credit_failure(
    kevo_promptpool *pool, uint64_t id, const char *kind, uint64_t candidate,
    const char *diagnostic, kevo_error *err);

/*
 * kevo_promptpool_failure_kind: the i-th failure kind of prompt id, the
 * commonest first (equal counts in byte order of the kinds), borrowed
 * while the prompt is in the pool, with its count in *count (may be NULL);
 * NULL (and 0) past the last kind or for an id not in the pool.
 */
KEVO_API const char *kevo_promptpool_failure_kind(const kevo_promptpool *pool,
                                                  uint64_t id, size_t i,
                                                  uint64_t *count);

/*
 * kevo_promptpool_failed_child: the i-th of the failures kept for prompt
 * id, the most recent first: its diagnostic (one line, "" when it had
 * none) is returned, borrowed while the prompt is in the pool; *candidate
 * gets the child's id (0 for none) and *kind its kind, borrowed (each may
 * be NULL). NULL past the last, or for an id not in the pool.
 */
KEVO_API const char *kevo_promptpool_failed_child(const kevo_promptpool *pool,
                                                  uint64_t id, size_t i,
                                                  uint64_t *candidate,
                                                  const char **kind);

/*
 * kevo_promptpool_revision_due: whether a prompt should be revised now.
 * When revise_every > 0, the pool has been used at least revise_every times
 * since the last revision was handed out, and some prompt has been chosen
 * at least revise_min_uses times and has not been added or handed out for
 * the last revise_min_age uses of the pool, the one of those with the
 * highest posterior mean (the lowest id among equals) is handed out: its id
 * goes to *id and its record, with its best and worst children, to *record
 * (may be NULL), and both clocks restart. Otherwise *id is
 * KEVO_PROMPT_NONE. The revised prompt is added with
 * kevo_promptpool_add() and this id as its parent. Returns KEVO_OK or
 * KEVO_EINVAL.
 */
KEVO_API kevo_status kevo_promptpool_revision_due(kevo_promptpool *pool,
                                                  uint64_t *id,
                                                  kevo_prompt_record *record,
                                                  kevo_error *err);

/*
 * kevo_promptpool_get_record: fills *record with what prompt id's children
 * did. Returns KEVO_OK, KEVO_ENOENT for an id not in the pool, or
 * KEVO_EINVAL for a NULL argument or a record whose size is too small.
 */
KEVO_API kevo_status kevo_promptpool_get_record(const kevo_promptpool *pool,
                                                uint64_t id,
                                                kevo_prompt_record *record);

/* kevo_promptpool_name: prompt id's name, borrowed, or NULL when it has
 * none or is not in the pool. */
KEVO_API const char *kevo_promptpool_name(const kevo_promptpool *pool,
                                          uint64_t id);

/* kevo_promptpool_parent: the id of the prompt that id revises;
 * KEVO_PROMPT_NONE for a seed or an id not in the pool. */
KEVO_API uint64_t kevo_promptpool_parent(const kevo_promptpool *pool,
                                         uint64_t id);

/* kevo_promptpool_generation: 0 for a seed, the parent's plus one for a
 * revision; 0 for an id not in the pool. */
KEVO_API uint64_t kevo_promptpool_generation(const kevo_promptpool *pool,
                                             uint64_t id);

/* kevo_promptpool_section_count: how many sections prompt id has (0 for an
 * id not in the pool). */
KEVO_API size_t kevo_promptpool_section_count(const kevo_promptpool *pool,
                                              uint64_t id);

/* kevo_promptpool_section_name: the name of prompt id's i-th section, in
 * byte order of the names; borrowed; NULL when out of range. */
KEVO_API const char *kevo_promptpool_section_name(const kevo_promptpool *pool,
                                                  uint64_t id, size_t i);

/* kevo_promptpool_section: the text of prompt id's section key, borrowed
 * and valid while the prompt is in the pool; NULL when there is none. */
KEVO_API const char *kevo_promptpool_section(const kevo_promptpool *pool,
                                             uint64_t id, const char *key);

/*
 * kevo_promptpool_prompt_json: prompt id as JSON text in a new string that
 * the caller frees with free(): {"id", "name", "parent", "generation",
 * "sections": {key: text, ...}}, the form an operator request carries.
 * Returns KEVO_OK, KEVO_ENOENT for an id not in the pool, KEVO_EINVAL or
 * KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_promptpool_prompt_json(const kevo_promptpool *pool,
                                                 uint64_t id, char **json,
                                                 kevo_error *err);

/*
 * kevo_promptpool_to_json: the whole pool (cap, options, counters, and every
 * prompt with its sections, lineage and record, its failures included) as
 * JSON text in a new
 * string that the caller frees with free(). kevo_promptpool_from_json() of
 * the text gives a pool whose JSON is the same text, byte for byte, and
 * that makes the same choices with the same generator. Returns KEVO_OK,
 * KEVO_EINVAL or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_promptpool_to_json(const kevo_promptpool *pool,
                                             char **json, kevo_error *err);

/*
 * kevo_promptpool_from_json: a new pool from kevo_promptpool_to_json() text
 * in *out; origin names it in messages (may be NULL). Returns KEVO_OK,
 * KEVO_EPARSE with line and column, KEVO_EFORMAT for another format or
 * version, KEVO_EINVALID naming the JSON path of a bad value, or
 * KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_promptpool_from_json(const char *json,
                                               const char *origin,
                                               kevo_promptpool **out,
                                               kevo_error *err);
#endif /* KEVO_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif

/*
 * promptpool_private.h: the prompt pool's insides, shared by promptpool.c
 * (the pool), promptpool_options.c (its options) and promptpool_json.c
 * (its JSON forms), and the JSON-value forms that a checkpoint writer
 * embeds.
 */
#ifndef KEVO_PROMPTPOOL_PRIVATE_H
#define KEVO_PROMPTPOOL_PRIVATE_H

#include "core/jsonutil.h"
#include "core/kevo_private.h"
#include "core/options.h"

/* How many kevo_promptpool_option values there are. */
#define KEVO__PROMPTPOOL_OPTION_COUNT (KEVO_PROMPTPOOL_REVISE_MIN_AGE + 1)

/* The pool's option table (promptpool_options.c). */
extern const kevo__option_table kevo__promptpool_options;

/* Ids are below 2^63: JSON integers are signed. */
#define KEVO__PROMPT_ID_MAX ((uint64_t)INT64_MAX)

typedef struct kevo__prompt {
    uint64_t id;
    uint64_t parent; /* KEVO_PROMPT_NONE for a seed */
    uint64_t generation;
    char *name; /* may be NULL */
    size_t nsections;
    char **keys; /* sorted by strcmp, unique */
    char **texts;
    uint64_t hash;       /* of the sections, for deduplication */
    uint64_t added_at;   /* pool uses when it was added */
    uint64_t revised_at; /* pool uses when it was added or handed out */
    uint64_t revisions;  /* times handed out for revision */
    uint64_t uses, children, entered, beat;
    double best_fitness, worst_fitness;     /* NaN when none */
    uint64_t best_child, worst_child;       /* 0 when none */
    struct kevo__prompt_failures *failures; /* NULL until the first */
} kevo__prompt;

struct kevo_promptpool {
    size_t cap;
    size_t n;
    kevo__prompt **prompts; /* n of them, in increasing id; room for cap */
    uint64_t next_id;       /* the id the next prompt gets */
    uint64_t uses;          /* choices made */
    uint64_t last_revision; /* uses when a revision was last handed out */
    double opt[KEVO__PROMPTPOOL_OPTION_COUNT];
};

/* Checks of a prompt's parts. Each returns KEVO_OK, or the code the C API
 * reports (KEVO_EINVAL or KEVO_ELIMIT) with the reason in why, such as
 * "is not an identifier". A text is judged without its surrounding white
 * space. */
kevo_status kevo__prompt_check_key(const char *key, char *why, size_t size);
kevo_status kevo__prompt_check_text(const char *text, char *why, size_t size);
kevo_status kevo__prompt_check_name(const char *name, char *why, size_t size);

/* A new prompt (id 0, empty record) of n >= 1 checked, distinct sections,
 * texts trimmed; NULL when out of memory. */
kevo__prompt *kevo__prompt_new(const char *name, const char *const *keys,
                               const char *const *texts, size_t n);
void kevo__prompt_free(kevo__prompt *p);

/* The checks of kevo_promptpool_add() (1 to KEVO_PROMPT_SECTIONS_MAX
 * sections, keys that are unique identifiers, texts not empty and within
 * bounds, a valid name or NULL), then kevo__prompt_new(); what begins each
 * message ("prompt pool"). Returns KEVO_OK, KEVO_EINVAL, KEVO_ELIMIT or
 * KEVO_ENOMEM, with *out NULL on failure. */
kevo_status kevo__prompt_from_arrays(const char *what, const char *name,
                                     const char *const *keys,
                                     const char *const *texts, size_t n,
                                     kevo__prompt **out, kevo_error *err);

/* Whether a and b have the same sections, name for name and text for
 * text. */
bool kevo__prompt_same(const kevo__prompt *a, const kevo__prompt *b);

/* The prompt of id, or NULL. */
kevo__prompt *kevo__promptpool_find(const kevo_promptpool *pool, uint64_t id);

/* The prompt whose sections equal p's, or NULL. */
kevo__prompt *kevo__promptpool_find_same(const kevo_promptpool *pool,
                                         const kevo__prompt *p);

/* Adds p (taking it) as a new prompt with parent (checked to be in the
 * pool), evicting one when the pool is full; or, when a prompt with the
 * same sections is there, frees p and reports that one. */
kevo_status kevo__promptpool_insert(kevo_promptpool *pool, kevo__prompt *p,
                                    uint64_t parent, uint64_t *id, int *added,
                                    uint64_t *evicted, kevo_error *err);

/* The whole pool as a JSON object (NULL when out of memory), and back; the
 * reader's errors name origin and the JSON path below path. */
json_t *kevo__promptpool_to_json(const kevo_promptpool *pool);
kevo_status kevo__promptpool_from_json(const json_t *v, const char *origin,
                                       kevo_jpath *path, kevo_promptpool **out,
                                       kevo_error *err);

/* Reads a prompt file's JSON value ({"name"?, "sections"}) into a new
 * prompt; errors name origin and the JSON path. */
kevo_status kevo__prompt_from_json(const json_t *v, const char *origin,
                                   kevo_jpath *path, kevo__prompt **out,
                                   kevo_error *err);

/* Reads a sections object ({"strategy": "...", ...}) into a new prompt
 * without a name, with the checks of kevo__prompt_from_json. */
kevo_status kevo__prompt_from_sections(const json_t *v, const char *origin,
                                       kevo_jpath *path, kevo__prompt **out,
                                       kevo_error *err);

/* p's sections as a JSON object (NULL when out of memory). */
json_t *kevo__prompt_sections_json(const kevo__prompt *p);

/* ---- promptpool_failures.c -------------------------------------------- */

/* Frees p's failure record. */
void kevo__prompt_failures_free(kevo__prompt *p);

/* How many failures p has, every kind together. */
uint64_t kevo__prompt_failure_total(const kevo__prompt *p);

/* p's failures as the checkpoint keeps them ({"kinds": {"KIND": N, ...},
 * "children": [{"candidate", "kind", "diagnostic"}, ...]}), or NULL when it
 * has none (nothing is written) or memory ran out (*nomem). */
json_t *kevo__prompt_failures_json(const kevo__prompt *p, bool *nomem);

/* Reads that object, when v has it (a pool saved before failures were
 * kept has not), into p; errors name origin and the JSON path below
 * path. */
kevo_status kevo__prompt_failures_read(const json_t *v, const char *origin,
                                       kevo_jpath *path, kevo__prompt *p,
                                       kevo_error *err);

#endif

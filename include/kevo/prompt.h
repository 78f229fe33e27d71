/*
 * kevo/prompt.h: what the prompt pool and operator plugins share about a
 * meta-prompt: the bounds of its sections and name, and the record of
 * what its children did, which a request to revise it carries. Types and
 * constants only: a plugin sees this header through <kevo/operator.h>.
 */
#ifndef KEVO_PROMPT_H
#define KEVO_PROMPT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bounds of a prompt: its sections, its name and each section's text. */
#define KEVO_PROMPT_SECTIONS_MAX 16
#define KEVO_PROMPT_NAME_MAX 63          /* bytes of a prompt's name */
#define KEVO_PROMPT_TEXT_MAX (32 * 1024) /* bytes of one section's text */

/*
 * What a prompt's children did, filled by kevo_promptpool_get_record() and
 * kevo_promptpool_revision_due(). The caller allocates it and sets size to
 * sizeof(kevo_prompt_record) (or zero-initialises it).
 */
typedef struct kevo_prompt_record {
    size_t size;
    uint64_t uses;        /* times kevo_promptpool_choose() chose it */
    uint64_t children;    /* children credited to it */
    uint64_t entered;     /* of those, how many entered the archive */
    uint64_t beat_parent; /* of those, how many beat their parent */
    double best_fitness;  /* the fittest child's fitness; NaN when none */
    uint64_t best_child;  /* its candidate id; 0 when none */
    double worst_fitness; /* the least fit child's fitness; NaN when none */
    uint64_t worst_child; /* its candidate id; 0 when none */
    double alpha;         /* the posterior Beta(alpha, beta) */
    double beta;
    double mean;        /* alpha / (alpha + beta) */
    uint64_t revisions; /* times it was handed out for revision */
    /* Failures credited with kevo_promptpool_credit_failure(), every
     * kind together. */
    uint64_t failures;
    unsigned char reserved[56];
} kevo_prompt_record;

#ifdef __cplusplus
}
#endif

#endif

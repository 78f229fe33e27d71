/*
 * candidate_private.h: the candidate's insides, for the task, the archive
 * and the evaluator.
 */
#ifndef KEVO_CANDIDATE_PRIVATE_H
#define KEVO_CANDIDATE_PRIVATE_H

#include <stdatomic.h>

#include "blocks.h"
#include "core/jsonutil.h"
#include "core/kevo_private.h"

#define KEVO__PARENTS_MAX 8

struct kevo_candidate {
    atomic_size_t refs; /* references; the candidate may change only at 1 */
    char *source;
    char *origin;       /* may be NULL */
    kevo_blocks blocks; /* blocks.params: the candidate's own space, with
                         * the task's parameters merged in */
    kevo_paramspace *task_params; /* what a task merged in; NULL if none */
    kevo_vars *assignment;        /* a value for every parameter, in the
                                   * space's declaration order */
    uint64_t id;
    uint64_t parents[KEVO__PARENTS_MAX];
    size_t nparents;
    char *op;       /* operator name, or NULL */
    int64_t prompt; /* -1 for none */
    uint32_t generation;
};

/* A new reference to a candidate held through a const pointer (the count
 * of references is not what const protects): as kevo_candidate_ref(). */
kevo_candidate *kevo__candidate_share(const kevo_candidate *cand);

/* Merges a task's parameter space into the candidate: parameters the
 * candidate does not declare itself join its space (at their defaults in
 * the assignment), and each task constraint joins when every name it uses
 * is a parameter of the merged space, one of the n dims, or a device
 * property. Remembers what was merged in task_params, so that JSON keeps
 * it. KEVO_ESTATE when the candidate is shared, as for the setters. */
kevo_status kevo__candidate_merge_params(kevo_candidate *cand,
                                         const kevo_paramspace *task_space,
                                         const char *const *dims, size_t n,
                                         kevo_error *err);

/* The candidate as a JSON object: {"id", "source", "origin", "params"
 * (assignment as an object), "parents", "operator", "prompt",
 * "generation", and "task_params" when a task merged any}. NULL when out
 * of memory, or when the id or a parent id is 2^63 or more (JSON integers
 * are signed; ids are below 2^63). */
json_t *kevo__candidate_to_json(const kevo_candidate *cand);

/* The inverse of kevo__candidate_to_json: re-parses the source, merges
 * task_params back and sets the assignment. Errors name origin and the
 * JSON path (path is restored before returning). */
kevo_status kevo__candidate_from_json(const json_t *v, const char *origin,
                                      kevo_jpath *path, kevo_candidate **out,
                                      kevo_error *err);

/* A parameter space as JSON: {"params": [{"name", "values", "default"}],
 * "constraints": [text, ...]}, and back. (paramspace.c) */
json_t *kevo__paramspace_to_json(const kevo_paramspace *space);
kevo_status kevo__paramspace_from_json(const json_t *v, const char *origin,
                                       kevo_jpath *path, kevo_paramspace **out,
                                       kevo_error *err);

/* KEVO_OK when value is in parameter i's domain, else KEVO_ERANGE with
 * "NAME=VALUE is not in the domain of 'NAME' {...}" (KEVO_EINVAL for an i
 * out of range). (paramspace.c) */
kevo_status kevo__paramspace_check_value(const kevo_paramspace *space, size_t i,
                                         int64_t value, kevo_error *err);

#endif

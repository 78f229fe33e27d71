/*
 * kevo/candidate.h: a kernel variant. CUDA source, the assignment of its
 * tunable parameters, and its lineage.
 *
 * A candidate declares its own launches in a kevo:launch block, and may
 * declare its own parameters in a kevo:param block; kevo-blocks(5) gives the
 * syntax. Both blocks are parsed when the candidate is made, and every
 * error names the line. The assignment starts at the parameters' defaults.
 *
 * Candidates are reference-counted, as jansson's values are: whoever makes
 * one (kevo_candidate_new, _load, _copy, _new_for_task) holds one
 * reference, kevo_candidate_ref() adds one and kevo_candidate_free() drops
 * one; the last one frees it. The count is atomic, so references may be
 * taken and dropped from several threads. An evaluator, a result, an
 * archive and a search keep references rather than copies. A candidate is
 * immutable once shared: its setters (kevo_candidate_set_param,
 * kevo_candidate_set_id, kevo_candidate_set_lineage) work only while the
 * caller holds the only reference, and fail with KEVO_ESTATE otherwise;
 * to change a shared candidate, change a copy.
 */
#ifndef KEVO_CANDIDATE_H
#define KEVO_CANDIDATE_H

#include <kevo/error.h>
#include <kevo/paramspace.h>
#include <kevo/vars.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_candidate kevo_candidate;

/* Defined when candidates are reference-counted (kevo_candidate_ref). */
#define KEVO_CANDIDATE_HAS_REF 1

/*
 * The geometry of one launch, evaluated for one shape. The caller allocates
 * it and sets size to sizeof(kevo_launch_geometry) (or zero-initialises it).
 */
typedef struct kevo_launch_geometry {
    size_t size;
    uint32_t grid[3];      /* blocks in x, y, z */
    uint32_t block[3];     /* threads per block in x, y, z */
    uint64_t shared_bytes; /* dynamic shared memory per block */
    uint32_t cluster[3];   /* blocks per cluster in x, y, z; all 0 for a
                            * launch without cluster() */
    unsigned char runs;    /* 1 when the launch runs at this shape; 0 when
                            * its "if" condition is 0 (the other fields are
                            * then 0) */
    unsigned char pdl;     /* 1 for a programmatic dependent launch */
    unsigned char reserved[18];
} kevo_launch_geometry;

/*
 * kevo_candidate_new: parses source's kevo:launch and kevo:param blocks and
 * makes a new candidate in *out, with the parameters at their defaults, id
 * 0, no parents and generation 0. The source is copied. origin names the
 * source in error messages (a file name, say) and may be NULL. Returns
 * KEVO_OK; KEVO_EPARSE or KEVO_EINVALID naming the line of a bad block;
 * KEVO_EINVALID when there is no kevo:launch block; KEVO_EINVAL or
 * KEVO_ENOMEM. On failure *out is NULL.
 */
KEVO_API kevo_status kevo_candidate_new(const char *source, const char *origin,
                                        kevo_candidate **out, kevo_error *err);

/*
 * kevo_candidate_load: as kevo_candidate_new() with the contents of the file
 * at path, which also becomes the origin. Adds KEVO_EIO and KEVO_ENOENT.
 */
KEVO_API kevo_status kevo_candidate_load(const char *path, kevo_candidate **out,
                                         kevo_error *err);

/*
 * kevo_candidate_free: drops one reference to a candidate, and frees it
 * with the last one. NULL does nothing.
 */
KEVO_API void kevo_candidate_free(kevo_candidate *cand);

/*
 * kevo_candidate_ref: adds a reference to cand, to be dropped with
 * kevo_candidate_free(), and returns cand (NULL for NULL). The candidate is
 * then shared: it cannot change until only one reference is left.
 */
KEVO_API kevo_candidate *kevo_candidate_ref(kevo_candidate *cand);

/*
 * kevo_candidate_copy: a deep copy with one reference (not shared, so its
 * setters work), or NULL when out of memory.
 */
KEVO_API kevo_candidate *kevo_candidate_copy(const kevo_candidate *cand);

/* kevo_candidate_source: the CUDA source, borrowed. */
KEVO_API const char *kevo_candidate_source(const kevo_candidate *cand);

/* kevo_candidate_origin: the origin given at creation, borrowed, or NULL. */
KEVO_API const char *kevo_candidate_origin(const kevo_candidate *cand);

/*
 * kevo_candidate_hash: a 64-bit hash of the source and the assignment (its
 * names and values in declaration order). Equal candidates hash equal; it
 * is stable across runs and machines, so it can key caches and checkpoints.
 */
KEVO_API uint64_t kevo_candidate_hash(const kevo_candidate *cand);

/*
 * kevo_candidate_params: the candidate's parameter space, borrowed. Empty
 * when the source has no kevo:param block.
 */
KEVO_API const kevo_paramspace *
kevo_candidate_params(const kevo_candidate *cand);

/*
 * kevo_candidate_assignment: the parameter values, borrowed; valid until the
 * next kevo_candidate_set_param() on this candidate.
 */
KEVO_API const kevo_vars *kevo_candidate_assignment(const kevo_candidate *cand);

/*
 * kevo_candidate_set_param: gives the declared parameter name the value.
 * Constraints are not checked here (they may need a shape); see
 * kevo_candidate_check(). Returns KEVO_OK, KEVO_ENOENT for a name the
 * candidate does not declare, KEVO_ERANGE for a value outside its domain,
 * KEVO_ESTATE when the candidate is shared (kevo_candidate_ref).
 */
KEVO_API kevo_status kevo_candidate_set_param(kevo_candidate *cand,
                                              const char *name, int64_t value,
                                              kevo_error *err);

/*
 * kevo_candidate_check: checks the assignment against the domains and the
 * constraints for one environment (dims and device properties; may be NULL),
 * as kevo_paramspace_check() does, with its errors.
 */
KEVO_API kevo_status kevo_candidate_check(const kevo_candidate *cand,
                                          const kevo_vars *env,
                                          kevo_error *err);

/* kevo_candidate_launch_count: how many kernels the launch block names. */
KEVO_API size_t kevo_candidate_launch_count(const kevo_candidate *cand);

/*
 * kevo_candidate_launch_kernel: the kernel name of launch i (in launch
 * order), borrowed; NULL when i is out of range.
 */
KEVO_API const char *kevo_candidate_launch_kernel(const kevo_candidate *cand,
                                                  size_t i);

/*
 * kevo_candidate_launch_geometry: evaluates launch i's grid, block,
 * dynamic shared memory and cluster over env (dims and device properties)
 * with the candidate's assignment on top, and fills *geometry. A launch
 * whose "if" condition is 0 at env does not run there: runs is 0 and
 * nothing else is evaluated. Returns KEVO_OK; an expression error naming
 * the line and the expression; KEVO_ERANGE when a value is not positive or
 * does not fit the CUDA limits (grid x < 2^31, grid y and z <= 65535, block
 * x and y <= 1024, block z <= 64, threads per block <= 1024, at most 16
 * blocks per cluster) or a grid dimension is not a multiple of the
 * cluster's; KEVO_EINVAL when i is out of range.
 */
KEVO_API kevo_status kevo_candidate_launch_geometry(
    const kevo_candidate *cand, size_t i, const kevo_vars *env,
    kevo_launch_geometry *geometry, kevo_error *err);

/* kevo_candidate_id: the candidate's id (0 until one is set). */
KEVO_API uint64_t kevo_candidate_id(const kevo_candidate *cand);

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_candidate_set_id: sets the id; ids are assigned by the search.
 * Returns KEVO_OK, KEVO_EINVAL for a NULL cand, or KEVO_ESTATE (the id
 * unchanged) when the candidate is shared.
 */
KEVO_API kevo_status kevo_candidate_set_id(kevo_candidate *cand, uint64_t id);

/*
 * kevo_candidate_set_lineage: records where the candidate came from: the ids
 * of its n parents (n <= 8; copied), the name of the operator that made it
 * (copied; may be NULL), the id of the prompt used (-1 for none) and its
 * generation. Returns KEVO_OK, KEVO_EINVAL for n > 8, KEVO_ESTATE when
 * the candidate is shared, or KEVO_ENOMEM.
 */
KEVO_API kevo_status
kevo_candidate_set_lineage(kevo_candidate *cand, const uint64_t *parents,
                           size_t n, const char *operator_name, int64_t prompt,
                           uint32_t generation, kevo_error *err);
#endif /* KEVO_EXPERIMENTAL */

/* kevo_candidate_parent_count: how many parents were recorded. */
KEVO_API size_t kevo_candidate_parent_count(const kevo_candidate *cand);

/* kevo_candidate_parent: the i-th parent's id, or 0 when out of range. */
KEVO_API uint64_t kevo_candidate_parent(const kevo_candidate *cand, size_t i);

/* kevo_candidate_operator: the operator's name, borrowed, or NULL. */
KEVO_API const char *kevo_candidate_operator(const kevo_candidate *cand);

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/* kevo_candidate_prompt: the prompt id, or -1 for none. */
KEVO_API int64_t kevo_candidate_prompt(const kevo_candidate *cand);
#endif /* KEVO_EXPERIMENTAL */

/* kevo_candidate_generation: the generation (0 for a seed). */
KEVO_API uint32_t kevo_candidate_generation(const kevo_candidate *cand);

#ifdef __cplusplus
}
#endif

#endif

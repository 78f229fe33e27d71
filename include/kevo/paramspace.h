/*
 * kevo/paramspace.h: tunable parameters, their domains and constraints.
 *
 * A parameter is a name (it reaches the kernel as a -D macro) with a finite
 * domain of integer values and a default. Constraints are expressions (see
 * kevo/expr.h) over the parameters, the problem dims and the device
 * properties that must be non-zero for an assignment to be valid, such as
 * "BLOCK * VEC <= 4096" or "n % VEC == 0". Candidates declare their space in
 * a kevo:param block (kevo-blocks(5)); a task may declare one too.
 */
#ifndef KEVO_PARAMSPACE_H
#define KEVO_PARAMSPACE_H

#include <kevo/error.h>
#include <kevo/vars.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_paramspace kevo_paramspace;

/* The most values one parameter's domain may hold. */
#define KEVO_PARAM_DOMAIN_MAX 65536

/*
 * kevo_paramspace_new: an empty space. Returns NULL when out of memory.
 */
KEVO_API kevo_paramspace *kevo_paramspace_new(void);

/* kevo_paramspace_free: frees a space. NULL does nothing. */
KEVO_API void kevo_paramspace_free(kevo_paramspace *space);

/* kevo_paramspace_copy: a deep copy, or NULL when out of memory. */
KEVO_API kevo_paramspace *kevo_paramspace_copy(const kevo_paramspace *space);

/*
 * kevo_paramspace_add_values: declares parameter name with the n listed
 * values (kept in the given order, no duplicates) and the default def,
 * which must be one of them. Returns KEVO_OK; KEVO_EINVAL for a name that is
 * not an identifier, an empty or duplicated list or a default outside it;
 * KEVO_EEXIST when name is already declared; KEVO_ELIMIT for more than
 * KEVO_PARAM_DOMAIN_MAX values; KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_paramspace_add_values(kevo_paramspace *space,
                                                const char *name,
                                                const int64_t *values, size_t n,
                                                int64_t def, kevo_error *err);

/*
 * kevo_paramspace_add_range: declares name with the values lo, lo+step, ...
 * up to hi inclusive (step > 0, lo <= hi) and the default def, which must be
 * one of them. Errors as kevo_paramspace_add_values().
 */
KEVO_API kevo_status kevo_paramspace_add_range(kevo_paramspace *space,
                                               const char *name, int64_t lo,
                                               int64_t hi, int64_t step,
                                               int64_t def, kevo_error *err);

/*
 * kevo_paramspace_add_pow2: declares name with the powers of two from lo to
 * hi inclusive (both powers of two, 1 <= lo <= hi) and the default def.
 * Errors as kevo_paramspace_add_values().
 */
KEVO_API kevo_status kevo_paramspace_add_pow2(kevo_paramspace *space,
                                              const char *name, int64_t lo,
                                              int64_t hi, int64_t def,
                                              kevo_error *err);

/*
 * kevo_paramspace_add_constraint: adds a constraint. The text is parsed
 * (and copied) now; the names it mentions are resolved when an assignment is
 * checked. Returns KEVO_OK, KEVO_EPARSE with the column in err, or
 * KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_paramspace_add_constraint(kevo_paramspace *space,
                                                    const char *text,
                                                    kevo_error *err);

/* kevo_paramspace_count: how many parameters are declared. */
KEVO_API size_t kevo_paramspace_count(const kevo_paramspace *space);

/*
 * kevo_paramspace_name: the i-th parameter's name (declaration order),
 * borrowed; NULL when i is out of range.
 */
KEVO_API const char *kevo_paramspace_name(const kevo_paramspace *space,
                                          size_t i);

/*
 * kevo_paramspace_find: the index of the parameter called name in *index.
 * Returns KEVO_OK or KEVO_ENOENT.
 */
KEVO_API kevo_status kevo_paramspace_find(const kevo_paramspace *space,
                                          const char *name, size_t *index);

/* kevo_paramspace_domain_size: how many values parameter i may take (0 when
 * i is out of range). */
KEVO_API size_t kevo_paramspace_domain_size(const kevo_paramspace *space,
                                            size_t i);

/* kevo_paramspace_domain_value: the k-th value of parameter i's domain, in
 * declaration order (0 when out of range). */
KEVO_API int64_t kevo_paramspace_domain_value(const kevo_paramspace *space,
                                              size_t i, size_t k);

/* kevo_paramspace_default: parameter i's default (0 when out of range). */
KEVO_API int64_t kevo_paramspace_default(const kevo_paramspace *space,
                                         size_t i);

/* kevo_paramspace_constraint_count: how many constraints are declared. */
KEVO_API size_t kevo_paramspace_constraint_count(const kevo_paramspace *space);

/* kevo_paramspace_constraint: the i-th constraint's text, borrowed; NULL when
 * i is out of range. */
KEVO_API const char *kevo_paramspace_constraint(const kevo_paramspace *space,
                                                size_t i);

/*
 * kevo_paramspace_defaults: sets every parameter's default in assignment
 * (other names there are kept). Returns KEVO_OK or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_paramspace_defaults(const kevo_paramspace *space,
                                              kevo_vars *assignment);

/*
 * kevo_paramspace_check: checks that assignment gives every declared
 * parameter a value of its domain, and that every constraint holds when
 * evaluated over env (dims and device properties; may be NULL) with the
 * assignment on top. Returns KEVO_OK; KEVO_ENOENT naming a parameter without
 * a value; KEVO_ERANGE naming a value outside its domain; KEVO_ECONSTRAINT
 * naming the constraint that fails; or an expression error
 * (KEVO_EUNDEFINED, KEVO_EOVERFLOW, KEVO_EDIVZERO) from a constraint.
 */
KEVO_API kevo_status kevo_paramspace_check(const kevo_paramspace *space,
                                           const kevo_vars *assignment,
                                           const kevo_vars *env,
                                           kevo_error *err);

#ifdef __cplusplus
}
#endif

#endif

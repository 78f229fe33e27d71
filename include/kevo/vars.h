/*
 * kevo/vars.h: a set of named 64-bit integer values. Expressions are
 * evaluated over one: problem dims, parameter values and device properties
 * are all plain variables.
 */
#ifndef KEVO_VARS_H
#define KEVO_VARS_H

#include <kevo/error.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_vars kevo_vars;

/*
 * kevo_vars_new: an empty set. Returns NULL when out of memory. Free it with
 * kevo_vars_free().
 */
KEVO_API kevo_vars *kevo_vars_new(void);

/* kevo_vars_free: frees a set. NULL is allowed and does nothing. */
KEVO_API void kevo_vars_free(kevo_vars *vars);

/*
 * kevo_vars_copy: a new set with the same names and values in the same
 * order. Returns NULL when out of memory.
 */
KEVO_API kevo_vars *kevo_vars_copy(const kevo_vars *vars);

/*
 * kevo_vars_set: gives name the value. A name already present keeps its
 * position and takes the new value; a new name is appended. The name is
 * copied. Returns KEVO_OK, KEVO_EINVAL when name is not an identifier
 * ([A-Za-z_][A-Za-z0-9_]*, at most 63 characters), or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_vars_set(kevo_vars *vars, const char *name,
                                   int64_t value);

/*
 * kevo_vars_get: looks name up. Returns KEVO_OK and stores the value in
 * *value (when value is not NULL), or KEVO_ENOENT when name has no value.
 */
KEVO_API kevo_status kevo_vars_get(const kevo_vars *vars, const char *name,
                                   int64_t *value);

/*
 * kevo_vars_unset: removes name; the others keep their order. Returns
 * KEVO_OK or KEVO_ENOENT when name has no value.
 */
KEVO_API kevo_status kevo_vars_unset(kevo_vars *vars, const char *name);

/*
 * kevo_vars_update: sets every name of src in dst, as kevo_vars_set() would,
 * in src's order. Returns KEVO_OK or KEVO_ENOMEM, in which case dst may hold
 * some of src's values.
 */
KEVO_API kevo_status kevo_vars_update(kevo_vars *dst, const kevo_vars *src);

/* kevo_vars_clear: removes every name. */
KEVO_API void kevo_vars_clear(kevo_vars *vars);

/* kevo_vars_count: how many names have a value. */
KEVO_API size_t kevo_vars_count(const kevo_vars *vars);

/*
 * kevo_vars_name: the i-th name (0-based, in insertion order), borrowed from
 * the set and valid until the set changes; NULL when i is out of range.
 */
KEVO_API const char *kevo_vars_name(const kevo_vars *vars, size_t i);

/* kevo_vars_value: the i-th value; 0 when i is out of range. */
KEVO_API int64_t kevo_vars_value(const kevo_vars *vars, size_t i);

#ifdef __cplusplus
}
#endif

#endif

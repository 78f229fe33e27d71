/*
 * jsonutil.h: strict JSON reading with errors that name the file and the
 * JSON path of the bad value, for every loader in kevo (tasks, archives,
 * checkpoints).
 */
#ifndef KEVO_JSONUTIL_H
#define KEVO_JSONUTIL_H

#include <jansson.h>

#include "kevo_private.h"

/* A JSON path such as "$.args[2].count", built while descending. */
typedef struct kevo_jpath {
    char s[256];
    size_t len;
} kevo_jpath;

void kevo__jpath_init(kevo_jpath *p);
/* Append ".key" or "[i]"; each returns the length to give back to
 * kevo__jpath_pop() to undo it. */
size_t kevo__jpath_key(kevo_jpath *p, const char *key);
size_t kevo__jpath_index(kevo_jpath *p, size_t i);
void kevo__jpath_pop(kevo_jpath *p, size_t len);

/* Records "<origin>: <path>: <message>" (origin omitted when NULL) with
 * origin as the error's source. Returns code. */
kevo_status kevo__json_fail(kevo_error *err, kevo_status code,
                            const char *origin, const kevo_jpath *path,
                            const char *fmt, ...) KEVO_PRINTF(5, 6);

/* Parses text strictly (duplicate keys rejected) into *out. A syntax error
 * gives KEVO_EPARSE "<origin>:<line>:<column>: <jansson's message>" with
 * line and column set. */
kevo_status kevo__json_parse(const char *text, const char *origin, json_t **out,
                             kevo_error *err);

/* The JSON type's name for messages: "an object", "a string", ... */
const char *kevo__json_type_name(const json_t *v);

/* Fails with KEVO_EINVALID naming the first key of obj that is not in the
 * NULL-terminated list known (typos must not pass silently). */
kevo_status kevo__json_check_keys(const json_t *obj, const char *const *known,
                                  const char *origin, const kevo_jpath *path,
                                  kevo_error *err);

/* Type-checked reads of a value at path. Each fails with KEVO_EINVALID
 * naming the path and what was found. */
kevo_status kevo__json_string(const json_t *v, const char *origin,
                              const kevo_jpath *path, const char **out,
                              kevo_error *err);
kevo_status kevo__json_int(const json_t *v, const char *origin,
                           const kevo_jpath *path, int64_t *out,
                           kevo_error *err);
/* An integer or a real, as a double; non-finite values are impossible in
 * JSON. */
kevo_status kevo__json_number(const json_t *v, const char *origin,
                              const kevo_jpath *path, double *out,
                              kevo_error *err);
kevo_status kevo__json_object(const json_t *v, const char *origin,
                              const kevo_jpath *path, kevo_error *err);
kevo_status kevo__json_array(const json_t *v, const char *origin,
                             const kevo_jpath *path, kevo_error *err);

/* Serialises with sorted keys, two-space indentation and real numbers
 * with 17 significant digits (so doubles round-trip exactly). Returns a new
 * string or NULL when out of memory. */
char *kevo__json_dump(const json_t *v);

#endif

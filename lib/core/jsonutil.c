/*
 * jsonutil.c: strict JSON reading with errors that name the JSON path.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "jsonutil.h"

void kevo__jpath_init(kevo_jpath *p)
{
    p->s[0] = '$';
    p->s[1] = '\0';
    p->len = 1;
}

static size_t jpath_append(kevo_jpath *p, const char *text)
{
    size_t old = p->len;
    size_t room = sizeof p->s - p->len;
    size_t n = strlen(text);
    if (n >= room)
        n = room - 1;
    memcpy(p->s + p->len, text, n);
    p->len += n;
    p->s[p->len] = '\0';
    return old;
}

size_t kevo__jpath_key(kevo_jpath *p, const char *key)
{
    char text[200];
    snprintf(text, sizeof text, ".%s", key);
    return jpath_append(p, text);
}

size_t kevo__jpath_index(kevo_jpath *p, size_t i)
{
    char text[32];
    snprintf(text, sizeof text, "[%zu]", i);
    return jpath_append(p, text);
}

void kevo__jpath_pop(kevo_jpath *p, size_t len)
{
    if (len < sizeof p->s) {
        p->len = len;
        p->s[len] = '\0';
    }
}

kevo_status kevo__json_fail(kevo_error *err, kevo_status code,
                            const char *origin, const kevo_jpath *path,
                            const char *fmt, ...)
{
    char msg[KEVO_ERROR_TEXT_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (origin)
        return kevo__error_set_at(err, code, origin, 0, 0, "%s: %s: %s", origin,
                                  path ? path->s : "$", msg);
    return kevo__error_set(err, code, "%s: %s", path ? path->s : "$", msg);
}

kevo_status kevo__json_parse(const char *text, const char *origin, json_t **out,
                             kevo_error *err)
{
    json_error_t je;
    *out = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (*out)
        return KEVO_OK;
    if (json_error_code(&je) == json_error_out_of_memory)
        return kevo__error_set(err, KEVO_ENOMEM, "%s: out of memory",
                               origin ? origin : "JSON");
    kevo_status rc = kevo__error_set_at(
        err, KEVO_EPARSE, origin, je.line, je.column,
        "%s:%d:%d: JSON syntax error: %s", origin ? origin : "<string>",
        je.line, je.column, je.text);
    if (err && err->code == KEVO_EPARSE) {
        err->domain = KEVO_DOMAIN_JSON;
        err->foreign = json_error_code(&je);
    }
    return rc;
}

const char *kevo__json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "a value";
}

kevo_status kevo__json_check_keys(const json_t *obj, const char *const *known,
                                  const char *origin, const kevo_jpath *path,
                                  kevo_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *)obj, key, v) {
        bool found = false;
        for (size_t i = 0; known[i] && !found; i++)
            found = strcmp(known[i], key) == 0;
        if (!found) {
            char list[512] = "";
            size_t n = 0;
            for (size_t i = 0; known[i] && n < sizeof list; i++)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s",
                                      i ? ", " : "", known[i]);
            return kevo__json_fail(err, KEVO_EINVALID, origin, path,
                                   "unknown key \"%s\" (known keys: %s)", key,
                                   list);
        }
    }
    return KEVO_OK;
}

kevo_status kevo__json_string(const json_t *v, const char *origin,
                              const kevo_jpath *path, const char **out,
                              kevo_error *err)
{
    if (!json_is_string(v))
        return kevo__json_fail(err, KEVO_EINVALID, origin, path,
                               "expected a string, found %s",
                               kevo__json_type_name(v));
    if (strlen(json_string_value(v)) != json_string_length(v))
        return kevo__json_fail(err, KEVO_EINVALID, origin, path,
                               "a string with a NUL character in it");
    *out = json_string_value(v);
    return KEVO_OK;
}

kevo_status kevo__json_int(const json_t *v, const char *origin,
                           const kevo_jpath *path, int64_t *out,
                           kevo_error *err)
{
    if (!json_is_integer(v))
        return kevo__json_fail(err, KEVO_EINVALID, origin, path,
                               "expected an integer, found %s",
                               kevo__json_type_name(v));
    *out = (int64_t)json_integer_value(v);
    return KEVO_OK;
}

kevo_status kevo__json_number(const json_t *v, const char *origin,
                              const kevo_jpath *path, double *out,
                              kevo_error *err)
{
    if (!json_is_number(v))
        return kevo__json_fail(err, KEVO_EINVALID, origin, path,
                               "expected a number, found %s",
                               kevo__json_type_name(v));
    *out = json_number_value(v);
    return KEVO_OK;
}

kevo_status kevo__json_object(const json_t *v, const char *origin,
                              const kevo_jpath *path, kevo_error *err)
{
    if (!json_is_object(v))
        return kevo__json_fail(err, KEVO_EINVALID, origin, path,
                               "expected an object, found %s",
                               kevo__json_type_name(v));
    return KEVO_OK;
}

kevo_status kevo__json_array(const json_t *v, const char *origin,
                             const kevo_jpath *path, kevo_error *err)
{
    if (!json_is_array(v))
        return kevo__json_fail(err, KEVO_EINVALID, origin, path,
                               "expected an array, found %s",
                               kevo__json_type_name(v));
    return KEVO_OK;
}

char *kevo__json_dump(const json_t *v)
{
    return json_dumps(v, JSON_SORT_KEYS | JSON_INDENT(2) |
                             JSON_REAL_PRECISION(17));
}

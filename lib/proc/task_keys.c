/*
 * task_keys.c: the tasks a GPU worker holds, by key: a small table, least
 * recently used out first.
 */
#include "config.h"

#include <string.h>

#include "task_keys.h"

void kevo__task_keys_init(kevo__task_keys *t, void (*free_value)(void *))
{
    memset(t, 0, sizeof *t);
    t->free_value = free_value;
}

static void drop(kevo__task_keys *t, size_t i)
{
    if (t->free_value && t->slot[i].value)
        t->free_value(t->slot[i].value);
    t->slot[i].key[0] = '\0';
    t->slot[i].value = NULL;
    t->slot[i].used = 0;
}

void kevo__task_keys_clear(kevo__task_keys *t)
{
    for (size_t i = 0; i < KEVO__TASK_KEYS_MAX; i++)
        drop(t, i);
}

size_t kevo__task_keys_count(const kevo__task_keys *t)
{
    size_t n = 0;
    for (size_t i = 0; i < KEVO__TASK_KEYS_MAX; i++)
        n += t->slot[i].key[0] != '\0';
    return n;
}

/* The slot of key, or -1. */
static ptrdiff_t find(const kevo__task_keys *t, const char *key)
{
    if (!key || !key[0])
        return -1;
    for (size_t i = 0; i < KEVO__TASK_KEYS_MAX; i++) {
        if (strcmp(t->slot[i].key, key) == 0)
            return (ptrdiff_t)i;
    }
    return -1;
}

bool kevo__task_keys_use(kevo__task_keys *t, const char *key, void **value)
{
    ptrdiff_t i = find(t, key);
    if (i < 0)
        return false;
    t->slot[i].used = ++t->clock;
    if (value)
        *value = t->slot[i].value;
    return true;
}

kevo_status kevo__task_keys_put(kevo__task_keys *t, const char *key,
                                void *value, kevo_error *err)
{
    size_t len = key ? strlen(key) : 0;
    if (len == 0 || len > KEVO__TASK_KEY_MAX) {
        if (t->free_value && value)
            t->free_value(value);
        return kevo__error_set(err, KEVO_EINVAL,
                               "a task key must have 1 to %d bytes; this one "
                               "has %zu",
                               KEVO__TASK_KEY_MAX, len);
    }
    ptrdiff_t at = find(t, key);
    if (at < 0) {
        /* A free slot, or the least recently used one. */
        at = 0;
        for (size_t i = 0; i < KEVO__TASK_KEYS_MAX; i++) {
            if (!t->slot[i].key[0]) {
                at = (ptrdiff_t)i;
                break;
            }
            if (t->slot[i].used < t->slot[at].used)
                at = (ptrdiff_t)i;
        }
    }
    drop(t, (size_t)at);
    memcpy(t->slot[at].key, key, len + 1);
    t->slot[at].value = value;
    t->slot[at].used = ++t->clock;
    return KEVO_OK;
}

void kevo__task_keys_forget(kevo__task_keys *t, const char *key)
{
    ptrdiff_t i = find(t, key);
    if (i >= 0)
        drop(t, (size_t)i);
}

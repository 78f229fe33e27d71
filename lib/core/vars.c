/*
 * vars.c: a small ordered map from identifiers to 64-bit integers. Sets are
 * short (a task's dims, a candidate's parameters, a dozen device
 * properties), so a linear scan over inline names beats hashing.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "kevo_private.h"

typedef struct var {
    char name[KEVO__IDENT_MAX + 1];
    int64_t value;
} var;

struct kevo_vars {
    var *items;
    size_t count;
    size_t cap;
};

kevo_vars *kevo_vars_new(void)
{
    return calloc(1, sizeof(kevo_vars));
}

void kevo_vars_free(kevo_vars *vars)
{
    if (!vars)
        return;
    free(vars->items);
    free(vars);
}

kevo_vars *kevo_vars_copy(const kevo_vars *vars)
{
    kevo_vars *copy = kevo_vars_new();
    if (!copy || !vars || vars->count == 0)
        return copy;
    copy->items = malloc(vars->count * sizeof(var));
    if (!copy->items) {
        free(copy);
        return NULL;
    }
    memcpy(copy->items, vars->items, vars->count * sizeof(var));
    copy->count = copy->cap = vars->count;
    return copy;
}

static var *find(const kevo_vars *vars, const char *name)
{
    for (size_t i = 0; i < vars->count; i++) {
        if (strcmp(vars->items[i].name, name) == 0)
            return &vars->items[i];
    }
    return NULL;
}

kevo_status kevo_vars_set(kevo_vars *vars, const char *name, int64_t value)
{
    if (!vars || !kevo__is_identifier(name))
        return KEVO_EINVAL;
    var *v = find(vars, name);
    if (v) {
        v->value = value;
        return KEVO_OK;
    }
    if (vars->count == vars->cap) {
        size_t cap = vars->cap ? vars->cap * 2 : 8;
        var *items = realloc(vars->items, cap * sizeof(var));
        if (!items)
            return KEVO_ENOMEM;
        vars->items = items;
        vars->cap = cap;
    }
    v = &vars->items[vars->count++];
    strcpy(v->name, name);
    v->value = value;
    return KEVO_OK;
}

kevo_status kevo_vars_get(const kevo_vars *vars, const char *name,
                          int64_t *value)
{
    if (!vars || !name)
        return KEVO_ENOENT;
    const var *v = find(vars, name);
    if (!v)
        return KEVO_ENOENT;
    if (value)
        *value = v->value;
    return KEVO_OK;
}

kevo_status kevo_vars_unset(kevo_vars *vars, const char *name)
{
    if (!vars || !name)
        return KEVO_ENOENT;
    var *v = find(vars, name);
    if (!v)
        return KEVO_ENOENT;
    size_t i = (size_t)(v - vars->items);
    memmove(v, v + 1, (vars->count - i - 1) * sizeof(var));
    vars->count--;
    return KEVO_OK;
}

kevo_status kevo_vars_update(kevo_vars *dst, const kevo_vars *src)
{
    if (!dst)
        return KEVO_EINVAL;
    if (!src)
        return KEVO_OK;
    for (size_t i = 0; i < src->count; i++) {
        kevo_status rc =
            kevo_vars_set(dst, src->items[i].name, src->items[i].value);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}

void kevo_vars_clear(kevo_vars *vars)
{
    if (vars)
        vars->count = 0;
}

size_t kevo_vars_count(const kevo_vars *vars)
{
    return vars ? vars->count : 0;
}

const char *kevo_vars_name(const kevo_vars *vars, size_t i)
{
    return vars && i < vars->count ? vars->items[i].name : NULL;
}

int64_t kevo_vars_value(const kevo_vars *vars, size_t i)
{
    return vars && i < vars->count ? vars->items[i].value : 0;
}

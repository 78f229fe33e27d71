/*
 * ptxscan_params.c: the parameter list of a PTX entry, read from its
 * header (see ptxscan.h): the kind and size of each parameter, so that a
 * launch can be checked against the kernel it calls.
 *
 * NVRTC declares a kernel's parameters as
 *     .param .u64 NAME            a pointer or a 64-bit integer
 *     .param .u32 NAME            int, unsigned
 *     .param .f32 NAME            float
 *     .param .u8 NAME             bool, char
 *     .param .align 2 .b8 NAME[2] __half, a struct, a __grid_constant__
 * with optional attributes (.ptr, a state space, .align N) before the
 * name.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxscan.h"

typedef struct ptx_type {
    const char *name;
    kevo_ptx_param_kind kind;
    uint64_t size;
} ptx_type;

static const ptx_type types[] = {
    {".b8", KEVO_PTX_PARAM_INT, 1},     {".b16", KEVO_PTX_PARAM_INT, 2},
    {".b32", KEVO_PTX_PARAM_INT, 4},    {".b64", KEVO_PTX_PARAM_INT, 8},
    {".b128", KEVO_PTX_PARAM_INT, 16},  {".u8", KEVO_PTX_PARAM_INT, 1},
    {".u16", KEVO_PTX_PARAM_INT, 2},    {".u32", KEVO_PTX_PARAM_INT, 4},
    {".u64", KEVO_PTX_PARAM_INT, 8},    {".s8", KEVO_PTX_PARAM_INT, 1},
    {".s16", KEVO_PTX_PARAM_INT, 2},    {".s32", KEVO_PTX_PARAM_INT, 4},
    {".s64", KEVO_PTX_PARAM_INT, 8},    {".f16", KEVO_PTX_PARAM_FLOAT, 2},
    {".bf16", KEVO_PTX_PARAM_FLOAT, 2}, {".f32", KEVO_PTX_PARAM_FLOAT, 4},
    {".f64", KEVO_PTX_PARAM_FLOAT, 8},
};

/* Attributes that may stand between the type and the name. */
static bool is_attribute(const char *t, size_t n)
{
    static const char *const words[] = {".ptr",    ".global", ".const",
                                        ".shared", ".local",  ".param"};
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(words); i++) {
        if (strlen(words[i]) == n && memcmp(t, words[i], n) == 0)
            return true;
    }
    return false;
}

static const ptx_type *find_type(const char *t, size_t n)
{
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(types); i++) {
        if (strlen(types[i].name) == n && memcmp(t, types[i].name, n) == 0)
            return &types[i];
    }
    return NULL;
}

/* The product of the [N] suffixes in s..end (1 when none); 0 when one is
 * not a number. */
static uint64_t array_count(const char *s, const char *end)
{
    uint64_t count = 1;
    for (const char *p = memchr(s, '[', (size_t)(end - s)); p && p < end;
         p = memchr(p, '[', (size_t)(end - p))) {
        uint64_t c = 0;
        bool digits = false;
        for (p++; p < end && isdigit((unsigned char)*p); p++) {
            if (c > UINT64_MAX / 10 - 9)
                return 0;
            c = c * 10 + (uint64_t)(*p - '0');
            digits = true;
        }
        if (!digits || p >= end || *p != ']' ||
            __builtin_mul_overflow(count, c, &count))
            return 0;
    }
    return count;
}

/* One parameter declaration, s..end: ".param .align 2 .b8 NAME[2]". False
 * when it cannot be read. */
static bool read_param(const char *s, const char *end, kevo_ptx_param *out)
{
    const ptx_type *type = NULL;
    const char *name = NULL, *name_end = NULL, *type_text = NULL;
    size_t type_len = 0;
    bool param = false;
    memset(out, 0, sizeof *out);
    for (const char *p = s; p < end;) {
        while (p < end && isspace((unsigned char)*p))
            p++;
        const char *t = p;
        while (p < end && !isspace((unsigned char)*p))
            p++;
        size_t n = (size_t)(p - t);
        if (n == 0)
            break;
        if (n == 6 && memcmp(t, ".param", 6) == 0 && !param) {
            param = true;
        } else if (n == 6 && memcmp(t, ".align", 6) == 0) {
            while (p < end && isspace((unsigned char)*p))
                p++;
            uint64_t align = 0;
            for (; p < end && isdigit((unsigned char)*p) && align < 1u << 20;
                 p++)
                align = align * 10 + (uint64_t)(*p - '0');
            while (p < end && !isspace((unsigned char)*p))
                p++;
            out->align = align;
        } else if (t[0] == '.' && !type_text && !name && !is_attribute(t, n)) {
            type = find_type(t, n);
            type_text = t;
            type_len = n;
        } else if (t[0] == '.' && is_attribute(t, n)) {
            continue;
        } else if (!name) {
            name = t;
            name_end = p;
        } else if (t[0] == '[') {
            name_end = p; /* "NAME [2]" */
        } else {
            return false;
        }
    }
    if (!param || !type_text || !name)
        return false;
    snprintf(out->type, sizeof out->type, "%.*s", (int)type_len, type_text);
    if (!type) {
        out->kind = KEVO_PTX_PARAM_OTHER;
        return true;
    }
    uint64_t count = array_count(name, name_end);
    if (count == 0 || __builtin_mul_overflow(type->size, count, &out->size))
        return false;
    out->kind = type->kind;
    if (memchr(name, '[', (size_t)(name_end - name))) {
        out->kind = KEVO_PTX_PARAM_BYTES;
        snprintf(out->type, sizeof out->type, "%.*s[%llu]", (int)type_len,
                 type_text, (unsigned long long)count);
    }
    return true;
}

kevo_status kevo__ptx_header_params(kevo_ptx_kernel *k, const char *params)
{
    free(k->params);
    k->params = NULL;
    k->nparams = 0;
    k->has_params = false;
    const char *p = params;
    while (isspace((unsigned char)*p))
        p++;
    if (*p != '(')
        return KEVO_OK;
    const char *close = strchr(++p, ')');
    if (!close)
        return KEVO_OK;
    size_t cap = 0, n = 0;
    kevo_ptx_param *v = NULL;
    while (p < close) {
        const char *comma = memchr(p, ',', (size_t)(close - p));
        const char *end = comma ? comma : close;
        const char *s = p;
        while (s < end && isspace((unsigned char)*s))
            s++;
        p = end + 1;
        if (s == end && !comma && n == 0)
            break; /* "( )": no parameters */
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            kevo_ptx_param *more = realloc(v, cap * sizeof *v);
            if (!more) {
                free(v);
                return KEVO_ENOMEM;
            }
            v = more;
        }
        if (!read_param(s, end, &v[n])) {
            free(v);
            return KEVO_OK;
        }
        n++;
    }
    k->params = v;
    k->nparams = n;
    k->has_params = true;
    return KEVO_OK;
}

const char *kevo__ptx_param_text(const kevo_ptx_param *p, char *buf,
                                 size_t size)
{
    switch (p->kind) {
    case KEVO_PTX_PARAM_INT:
        if (p->size == 8)
            snprintf(buf, size, "a pointer or a 64-bit integer (%s)", p->type);
        else
            snprintf(buf, size, "a %llu-bit integer (%s)",
                     (unsigned long long)p->size * 8, p->type);
        break;
    case KEVO_PTX_PARAM_FLOAT:
        snprintf(buf, size, "a %llu-bit float (%s)",
                 (unsigned long long)p->size * 8, p->type);
        break;
    case KEVO_PTX_PARAM_BYTES:
        if (p->align > 1)
            snprintf(buf, size,
                     "an object of %llu byte%s aligned to %llu passed by "
                     "value (%s)",
                     (unsigned long long)p->size, p->size == 1 ? "" : "s",
                     (unsigned long long)p->align, p->type);
        else
            snprintf(buf, size, "an object of %llu byte%s passed by value (%s)",
                     (unsigned long long)p->size, p->size == 1 ? "" : "s",
                     p->type);
        break;
    default: snprintf(buf, size, "a %s parameter", p->type); break;
    }
    return buf;
}

/*
 * strbuf.c: growable strings and small string helpers.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kevo_private.h"

static bool buf_reserve(kevo_buf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    if (extra > SIZE_MAX / 2 - b->len) {
        b->failed = true;
        return false;
    }
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *data = realloc(b->data, cap);
    if (!data) {
        b->failed = true;
        return false;
    }
    b->data = data;
    b->cap = cap;
    return true;
}

bool kevo__buf_append(kevo_buf *b, const char *s, size_t n)
{
    if (!buf_reserve(b, n))
        return false;
    if (n)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return true;
}

bool kevo__buf_puts(kevo_buf *b, const char *s)
{
    return kevo__buf_append(b, s, strlen(s));
}

bool kevo__buf_vprintf(kevo_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        b->failed = true;
        return false;
    }
    if (!buf_reserve(b, (size_t)n))
        return false;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return true;
}

bool kevo__buf_printf(kevo_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool ok = kevo__buf_vprintf(b, fmt, ap);
    va_end(ap);
    return ok;
}

char *kevo__buf_take(kevo_buf *b)
{
    char *s = NULL;
    if (!b->failed)
        s = b->data ? b->data : kevo__strdup("");
    else
        free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
    return s;
}

void kevo__buf_free(kevo_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}

char *kevo__strdup(const char *s)
{
    return s ? kevo__strndup(s, strlen(s)) : NULL;
}

char *kevo__strndup(const char *s, size_t n)
{
    if (!s)
        return NULL;
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

char *kevo__asprintf(const char *fmt, ...)
{
    kevo_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    kevo__buf_vprintf(&b, fmt, ap);
    va_end(ap);
    return kevo__buf_take(&b);
}

/* The length of the valid UTF-8 sequence at s (1 for ASCII), or 0. */
static size_t utf8_seq(const unsigned char *s)
{
    size_t n = s[0] < 0x80             ? 1
               : (s[0] & 0xE0) == 0xC0 ? 2
               : (s[0] & 0xF0) == 0xE0 ? 3
               : (s[0] & 0xF8) == 0xF0 ? 4
                                       : 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    }
    uint32_t c = n == 2   ? (uint32_t)(s[0] & 0x1F) << 6 | (s[1] & 0x3F)
                 : n == 3 ? (uint32_t)(s[0] & 0x0F) << 12 |
                                (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F)
                 : n == 4 ? (uint32_t)(s[0] & 0x07) << 18 |
                                (uint32_t)(s[1] & 0x3F) << 12 |
                                (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F)
                          : s[0];
    /* No overlong forms, surrogates or code points past U+10FFFF. */
    if ((n == 2 && c < 0x80) ||
        (n == 3 && (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))) ||
        (n == 4 && (c < 0x10000 || c > 0x10FFFF)))
        return 0;
    return n;
}

char *kevo__one_line(const char *text, size_t max)
{
    kevo_buf b = {0};
    const unsigned char *s = (const unsigned char *)(text ? text : "");
    bool space = false;
    if (max < 8)
        max = 8;
    while (*s) {
        if (*s <= ' ' || *s == 0x7F) {
            space = b.len > 0;
            s++;
            continue;
        }
        size_t n = utf8_seq(s);
        size_t need = (space ? 1 : 0) + (n ? n : 1);
        if (b.len + need > max - 3) {
            kevo__buf_puts(&b, "...");
            break;
        }
        if (space)
            kevo__buf_puts(&b, " ");
        space = false;
        kevo__buf_append(&b, n ? (const char *)s : "?", n ? n : 1);
        s += n ? n : 1;
    }
    return kevo__buf_take(&b);
}

static bool ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool kevo__is_identifier(const char *s)
{
    if (!s || !ident_start(s[0]))
        return false;
    size_t n = 1;
    for (; s[n]; n++) {
        if (!ident_start(s[n]) && !(s[n] >= '0' && s[n] <= '9'))
            return false;
    }
    return n <= KEVO__IDENT_MAX;
}

uint64_t kevo__hash_bytes(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

uint64_t kevo__hash_finish(uint64_t h)
{
    /* splitmix64's finaliser: every input bit reaches every output bit. */
    h ^= h >> 30;
    h *= UINT64_C(0xbf58476d1ce4e5b9);
    h ^= h >> 27;
    h *= UINT64_C(0x94d049bb133111eb);
    h ^= h >> 31;
    return h;
}

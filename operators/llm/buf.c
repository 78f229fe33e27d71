/*
 * buf.c: secret redaction, UTF-8 cleanup and small helpers for the llm
 * operator (its growable string is lib/core/strbuf.c's kevo_buf).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"

void kevo__llm_errf(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
}

/* The first occurrence at or after p of any secret, or NULL; *which gets
 * its index. */
static const char *find_secret(const char *p, const char *end,
                               const char *const *secrets, size_t nsecrets,
                               size_t *which)
{
    const char *best = NULL;
    for (size_t i = 0; i < nsecrets; i++) {
        size_t n = secrets[i] ? strlen(secrets[i]) : 0;
        if (n == 0 || (size_t)(end - p) < n)
            continue;
        const char *hit = memmem(p, (size_t)(end - p), secrets[i], n);
        /* At one position prefer the longest secret, so that a secret that
         * contains another is replaced whole. */
        if (hit && (!best || hit < best ||
                    (hit == best && n > strlen(secrets[*which])))) {
            best = hit;
            *which = i;
        }
    }
    return best;
}

char *kevo__llm_redact(const char *text, size_t len, const char *const *secrets,
                       size_t nsecrets)
{
    kevo_buf b = {0};
    const char *p = text, *end = text + len;
    size_t which = 0;
    const char *hit;
    while ((hit = find_secret(p, end, secrets, nsecrets, &which)) != NULL) {
        kevo__buf_append(&b, p, (size_t)(hit - p));
        kevo__buf_puts(&b, LLM_REDACTED);
        p = hit + strlen(secrets[which]);
    }
    kevo__buf_append(&b, p, (size_t)(end - p));
    return kevo__buf_take(&b);
}

void kevo__llm_redact_inplace(char *text, size_t size,
                              const char *const *secrets, size_t nsecrets)
{
    size_t which = 0;
    size_t len = strlen(text);
    if (!find_secret(text, text + len, secrets, nsecrets, &which))
        return;
    char *r = kevo__llm_redact(text, len, secrets, nsecrets);
    if (r) {
        snprintf(text, size, "%s", r);
        free(r);
    } else {
        /* No memory for the copy: drop the text rather than keep a secret. */
        snprintf(text, size, "%s", LLM_REDACTED);
    }
}

/* The length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80)
        return c ? 1 : 0;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        min = 0x10000;
    } else
        return 0;
    if (n < len)
        return 0;
    unsigned cp = c & (0x3f >> (len - 1));
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

char *kevo__llm_utf8_clean(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t len = utf8_seq(u + i, n - i);
        if (len == 0) {
            d[i++] = '?';
            continue;
        }
        memcpy(d + i, s + i, len);
        i += len;
    }
    d[n] = '\0';
    return d;
}

double kevo__llm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * buf.c: the llm operator's growable string, secret redaction, UTF-8
 * cleanup and small helpers (see buf.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"

/* ---- the growable string ------------------------------------------------ */

/* Room for extra more bytes and the NUL; false, with failed set, when there
 * is none. */
static bool room(llm_buf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (extra > (size_t)-1 / 4 - b->len) {
        b->failed = true;
        return false;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap + b->cap / 2;
    if (cap < need)
        cap = need < 128 ? 128 : need;
    char *grown = realloc(b->data, cap);
    if (!grown) {
        b->failed = true;
        return false;
    }
    b->data = grown;
    b->cap = cap;
    return true;
}

bool kevo__llm_buf_append(llm_buf *b, const char *s, size_t n)
{
    if (!room(b, n))
        return false;
    if (n)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return true;
}

bool kevo__llm_buf_puts(llm_buf *b, const char *s)
{
    return kevo__llm_buf_append(b, s, strlen(s));
}

bool kevo__llm_buf_vprintf(llm_buf *b, const char *fmt, va_list ap)
{
    /* Measure first, then write into the room made. */
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, again);
    va_end(again);
    if (n < 0)
        b->failed = true;
    if (n < 0 || !room(b, (size_t)n))
        return false;
    vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    b->len += (size_t)n;
    return true;
}

bool kevo__llm_buf_printf(llm_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool ok = kevo__llm_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return ok;
}

char *kevo__llm_buf_take(llm_buf *b)
{
    char *s = b->failed ? NULL : b->data ? b->data : kevo__llm_strdup("");
    if (b->failed)
        free(b->data);
    *b = (llm_buf){0};
    return s;
}

void kevo__llm_buf_free(llm_buf *b)
{
    free(b->data);
    *b = (llm_buf){0};
}

char *kevo__llm_strndup(const char *s, size_t n)
{
    char *d = s ? malloc(n + 1) : NULL;
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

char *kevo__llm_strdup(const char *s)
{
    return s ? kevo__llm_strndup(s, strlen(s)) : NULL;
}

/* ---- small helpers ------------------------------------------------------- */

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
    llm_buf b = {0};
    const char *p = text, *end = text + len;
    size_t which = 0;
    const char *hit;
    while ((hit = find_secret(p, end, secrets, nsecrets, &which)) != NULL) {
        kevo__llm_buf_append(&b, p, (size_t)(hit - p));
        kevo__llm_buf_puts(&b, LLM_REDACTED);
        p = hit + strlen(secrets[which]);
    }
    kevo__llm_buf_append(&b, p, (size_t)(end - p));
    return kevo__llm_buf_take(&b);
}

char *kevo__llm_redact_vprintf(const char *const *secrets, size_t nsecrets,
                               const char *fmt, va_list ap)
{
    llm_buf b = {0};
    kevo__llm_buf_vprintf(&b, fmt, ap);
    char *r = b.data && !b.failed
                  ? kevo__llm_redact(b.data, b.len, secrets, nsecrets)
                  : NULL;
    kevo__llm_buf_free(&b);
    return r;
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

/*
 * buf.h: growable strings and secret redaction for the llm operator. The
 * operator is a plugin that never links libkevo, so it carries its own
 * small string helpers.
 */
#ifndef KEVO_LLM_BUF_H
#define KEVO_LLM_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#if defined(__GNUC__)
#define LLM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define LLM_PRINTF(f, a)
#endif

/* A growable NUL-terminated string. Zero-initialise it. Once an append
 * fails (no memory), the buffer is marked failed and later appends do
 * nothing, so a caller checks once at the end. */
typedef struct llm_buf {
    char *data;
    size_t len;
    size_t cap;
    bool failed;
} llm_buf;

bool kevo__llm_buf_append(llm_buf *b, const char *s, size_t n);
bool kevo__llm_buf_puts(llm_buf *b, const char *s);
bool kevo__llm_buf_printf(llm_buf *b, const char *fmt, ...) LLM_PRINTF(2, 3);
/* Hands the string to the caller (an empty buffer gives ""); NULL when an
 * append failed. The buffer is reset either way. */
bool kevo__llm_buf_vprintf(llm_buf *b, const char *fmt, va_list ap)
    LLM_PRINTF(2, 0);
char *kevo__llm_buf_take(llm_buf *b);
void kevo__llm_buf_free(llm_buf *b);

/* snprintf into a fixed buffer of size n (n > 0), always terminated. */
void kevo__llm_errf(char *err, size_t n, const char *fmt, ...) LLM_PRINTF(3, 4);

char *kevo__llm_strdup(const char *s); /* NULL for NULL or no memory */
char *kevo__llm_strndup(const char *s, size_t n);

/* The text that replaces a secret wherever it is found. */
#define LLM_REDACTED "[REDACTED]"

/* A copy of text[0..len) in which every occurrence of each of the nsecrets
 * non-empty strings in secrets is replaced by LLM_REDACTED. NULL when out
 * of memory. */
char *kevo__llm_redact(const char *text, size_t len, const char *const *secrets,
                       size_t nsecrets);

/* Redacts a NUL-terminated fixed-size buffer in place, truncating if the
 * redacted text does not fit. */
void kevo__llm_redact_inplace(char *text, size_t size,
                              const char *const *secrets, size_t nsecrets);

/* A copy of s[0..n) that is valid UTF-8: each byte of an invalid sequence,
 * and each NUL byte, becomes '?'. NULL when out of memory. */
char *kevo__llm_utf8_clean(const char *s, size_t n);

/* Seconds on the monotonic clock. */
double kevo__llm_now(void);

#endif

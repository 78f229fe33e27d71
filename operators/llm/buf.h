/*
 * buf.h: the llm operator's growable string and string helpers, and its
 * secret redaction. The operator is a plugin: it sees only
 * <kevo/operator.h> and never links libkevo, so it keeps these small
 * helpers of its own.
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

#define LLM_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * A growable string. Zero-initialise it; kevo__llm_buf_free() releases it.
 * data is NUL-terminated once anything was added. Once an append fails for
 * want of memory, failed is set and every later append does nothing, so a
 * builder checks once, at the end (kevo__llm_buf_take() then gives NULL).
 */
typedef struct llm_buf {
    char *data;
    size_t len, cap;
    bool failed;
} llm_buf;

bool kevo__llm_buf_append(llm_buf *b, const char *s, size_t n);
bool kevo__llm_buf_puts(llm_buf *b, const char *s);
bool kevo__llm_buf_printf(llm_buf *b, const char *fmt, ...) LLM_PRINTF(2, 3);
bool kevo__llm_buf_vprintf(llm_buf *b, const char *fmt, va_list ap)
    LLM_PRINTF(2, 0);

/* Hands over the string ("" when nothing was added; NULL when an append
 * failed) and empties b. */
char *kevo__llm_buf_take(llm_buf *b);
void kevo__llm_buf_free(llm_buf *b);

/* Copies: NULL for a NULL s or no memory. */
char *kevo__llm_strdup(const char *s);
char *kevo__llm_strndup(const char *s, size_t n);

/* snprintf into a fixed buffer of size n (n > 0), always terminated. */
void kevo__llm_errf(char *err, size_t n, const char *fmt, ...) LLM_PRINTF(3, 4);

/* The text that replaces a secret wherever it is found. */
#define LLM_REDACTED "[REDACTED]"

/* A copy of text[0..len) in which every occurrence of each of the nsecrets
 * non-empty strings in secrets is replaced by LLM_REDACTED. NULL when out
 * of memory. */
char *kevo__llm_redact(const char *text, size_t len, const char *const *secrets,
                       size_t nsecrets);

/* The text fmt and ap make, with every secret redacted, as a new string;
 * NULL when out of memory. */
char *kevo__llm_redact_vprintf(const char *const *secrets, size_t nsecrets,
                               const char *fmt, va_list ap) LLM_PRINTF(3, 0);

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

/*
 * buf.h: string helpers and secret redaction for the llm operator. The
 * operator is a plugin that never links libkevo; it builds lib/core/strbuf.c
 * into itself instead, so its growable string is kevo_buf, and only what
 * lib/core/strbuf.c lacks is here.
 */
#ifndef KEVO_LLM_BUF_H
#define KEVO_LLM_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/kevo_private.h"

#if defined(__GNUC__)
#define LLM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define LLM_PRINTF(f, a)
#endif

/* The operator builds lib/core/strbuf.c into itself and uses its growable
 * string, kevo_buf (kevo_private.h). */

/* snprintf into a fixed buffer of size n (n > 0), always terminated. */
void kevo__llm_errf(char *err, size_t n, const char *fmt, ...) LLM_PRINTF(3, 4);

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

/*
 * error.c: status codes, the caller-owned error record, and process-wide
 * initialisation.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kevo_private.h"

static const char *const status_text[] = {
    [KEVO_OK] = "success",
    [KEVO_ENOMEM] = "out of memory",
    [KEVO_EINVAL] = "invalid argument",
    [KEVO_EIO] = "input/output error",
    [KEVO_ENOENT] = "not found",
    [KEVO_EPARSE] = "syntax error",
    [KEVO_EINVALID] = "invalid input",
    [KEVO_EOVERFLOW] = "integer overflow",
    [KEVO_EDIVZERO] = "division by zero",
    [KEVO_EUNDEFINED] = "undefined variable",
    [KEVO_ECONSTRAINT] = "constraint violated",
    [KEVO_ERANGE] = "value out of range",
    [KEVO_EEXIST] = "already exists",
    [KEVO_ESTATE] = "not allowed in this state",
    [KEVO_EFORMAT] = "unsupported format",
    [KEVO_ELIMIT] = "over a limit",
    [KEVO_DONE] = "no more items",
    [KEVO_EEXTERNAL] = "error in an external library",
    [KEVO_ETIMEDOUT] = "timed out",
    [KEVO_ENODEV] = "no usable GPU",
    [KEVO_EWORKER] = "worker process failed",
};

const char *kevo_strerror(kevo_status code)
{
    if ((unsigned)code < KEVO_ARRAY_SIZE(status_text) && status_text[code])
        return status_text[code];
    return "unknown error";
}

static const char *const domain_names[] = {
    [KEVO_DOMAIN_KEVO] = "kevo",   [KEVO_DOMAIN_SYSTEM] = "errno",
    [KEVO_DOMAIN_JSON] = "json",   [KEVO_DOMAIN_GSL] = "gsl",
    [KEVO_DOMAIN_CURL] = "curl",   [KEVO_DOMAIN_HTTP] = "http",
    [KEVO_DOMAIN_CUDA] = "cuda",   [KEVO_DOMAIN_NVRTC] = "nvrtc",
    [KEVO_DOMAIN_CUPTI] = "cupti",
};

const char *kevo_domain_name(kevo_domain domain)
{
    if ((unsigned)domain < KEVO_ARRAY_SIZE(domain_names) &&
        domain_names[domain])
        return domain_names[domain];
    return "unknown";
}

void kevo_error_init(kevo_error *err)
{
    if (!err)
        return;
    memset(err, 0, sizeof *err);
    err->size = sizeof *err;
}

/* True when err can take an error: present, sized for this release (a
 * zero-initialised record counts), and empty. */
static bool error_open(kevo_error *err)
{
    if (!err)
        return false;
    if (err->size != 0 && err->size != sizeof *err)
        return false;
    if (err->size == 0)
        err->size = sizeof *err;
    return err->code == KEVO_OK;
}

static void error_fill(kevo_error *err, kevo_status code, kevo_domain domain,
                       long foreign, const char *source, int line, int column,
                       const char *fmt, va_list ap) KEVO_PRINTF(8, 0);

static void error_fill(kevo_error *err, kevo_status code, kevo_domain domain,
                       long foreign, const char *source, int line, int column,
                       const char *fmt, va_list ap)
{
    err->code = code;
    err->domain = domain;
    err->foreign = foreign;
    err->line = line;
    err->column = column;
    snprintf(err->source, sizeof err->source, "%s", source ? source : "");
    vsnprintf(err->text, sizeof err->text, fmt, ap);
}

kevo_status kevo__error_set(kevo_error *err, kevo_status code, const char *fmt,
                            ...)
{
    if (error_open(err)) {
        va_list ap;
        va_start(ap, fmt);
        error_fill(err, code, KEVO_DOMAIN_KEVO, 0, NULL, 0, 0, fmt, ap);
        va_end(ap);
    }
    return code;
}

kevo_status kevo__error_set_at(kevo_error *err, kevo_status code,
                               const char *source, int line, int column,
                               const char *fmt, ...)
{
    if (error_open(err)) {
        va_list ap;
        va_start(ap, fmt);
        error_fill(err, code, KEVO_DOMAIN_KEVO, 0, source, line, column, fmt,
                   ap);
        va_end(ap);
    }
    return code;
}

kevo_status kevo__error_set_foreign(kevo_error *err, kevo_status code,
                                    kevo_domain domain, long foreign,
                                    const char *fmt, ...)
{
    if (error_open(err)) {
        va_list ap;
        va_start(ap, fmt);
        error_fill(err, code, domain, foreign, NULL, 0, 0, fmt, ap);
        va_end(ap);
    }
    return code;
}

kevo_status kevo__error_wrap(kevo_error *err, const kevo_error *inner,
                             const char *fmt, ...)
{
    if (error_open(err)) {
        char prefix[KEVO_ERROR_TEXT_SIZE];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(prefix, sizeof prefix, fmt, ap);
        va_end(ap);
        err->code = inner->code;
        err->domain = inner->domain;
        err->foreign = inner->foreign;
        err->line = inner->line;
        err->column = inner->column;
        memcpy(err->source, inner->source, sizeof err->source);
        /* "<prefix>: <inner text>", cut to fit. */
        size_t room = sizeof err->text - 1, n = 0;
        const char *parts[3] = {prefix, prefix[0] ? ": " : "", inner->text};
        for (int i = 0; i < 3; i++) {
            size_t len = strnlen(parts[i], room - n);
            memmove(err->text + n, parts[i], len);
            n += len;
        }
        err->text[n] = '\0';
    }
    return inner->code;
}

kevo_status kevo__error_errno(kevo_error *err, int errnum, const char *path,
                              const char *what)
{
    kevo_status code = errnum == ENOENT   ? KEVO_ENOENT
                       : errnum == ENOMEM ? KEVO_ENOMEM
                                          : KEVO_EIO;
    if (error_open(err)) {
        err->code = code;
        err->domain = KEVO_DOMAIN_SYSTEM;
        err->foreign = errnum;
        err->line = 0;
        err->column = 0;
        snprintf(err->source, sizeof err->source, "%s", path ? path : "");
        snprintf(err->text, sizeof err->text, "%s: %s: %s", path ? path : "",
                 what, strerror(errnum));
    }
    return code;
}

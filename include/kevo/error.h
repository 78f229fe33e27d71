/*
 * kevo/error.h: the optional caller-owned error record that carries the
 * details of a failure, and what reads it. The status codes themselves are
 * in <kevo/status.h>, which this header includes.
 *
 * Every fallible kevo function returns a kevo_status and takes a last
 * argument `kevo_error *err` that may be NULL. When a call fails and err is
 * not NULL, the first failure is recorded in *err: its code, the domain of a
 * foreign library's code (errno, jansson, curl, NVRTC, ...), where it happened
 * (a file, a line, a column) and a message that names the file and, for JSON
 * input, the JSON path of the bad value. A later failure never overwrites an
 * earlier one: the first error wins, so a caller can pass one record through
 * a sequence of calls and read the root cause at the end.
 */
#ifndef KEVO_ERROR_H
#define KEVO_ERROR_H

#include <kevo/common.h>
#include <kevo/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a foreign error code in kevo_error.foreign comes from. */
typedef enum kevo_domain {
    KEVO_DOMAIN_KEVO = 0,   /* no foreign code */
    KEVO_DOMAIN_SYSTEM = 1, /* errno */
    KEVO_DOMAIN_JSON = 2,   /* jansson's enum json_error_code */
    KEVO_DOMAIN_GSL = 3,    /* GSL's error codes */
    KEVO_DOMAIN_CURL = 4,   /* CURLcode */
    KEVO_DOMAIN_HTTP = 5,   /* an HTTP status */
    KEVO_DOMAIN_CUDA = 6,   /* CUresult */
    KEVO_DOMAIN_NVRTC = 7,  /* nvrtcResult */
    KEVO_DOMAIN_CUPTI = 8   /* CUptiResult */
} kevo_domain;

#define KEVO_ERROR_SOURCE_SIZE 256
#define KEVO_ERROR_TEXT_SIZE 1024

/*
 * The error record. The caller owns it and initialises it with
 * kevo_error_init() (a zero-initialised record is also accepted). The fields
 * are filled by the first failing call that receives it.
 */
typedef struct kevo_error {
    size_t size;        /* sizeof(kevo_error), set by kevo_error_init() */
    kevo_status code;   /* KEVO_OK while nothing has failed */
    kevo_domain domain; /* domain of foreign */
    long foreign;       /* the foreign library's own code, or 0 */
    int line;           /* 1-based line in source, or 0 */
    int column;         /* 1-based column in source, or 0 */
    char source[KEVO_ERROR_SOURCE_SIZE]; /* file or origin, or "" */
    char text[KEVO_ERROR_TEXT_SIZE];     /* the whole message, or "" */
    unsigned char reserved[64];
} kevo_error;

/*
 * kevo_strerror: a short English description of a status code, such as
 * "division by zero". The string is static; never NULL, also for codes this
 * release does not know.
 */
KEVO_API const char *kevo_strerror(kevo_status code);

/*
 * kevo_error_init: makes *err an empty record (code KEVO_OK) ready to be
 * passed to kevo functions. err may be NULL, in which case nothing happens.
 */
KEVO_API void kevo_error_init(kevo_error *err);

/*
 * kevo_domain_name: the name of an error domain, such as "errno" or "nvrtc".
 * The string is static; never NULL.
 */
KEVO_API const char *kevo_domain_name(kevo_domain domain);

/* Flags for kevo_global_init. */
enum {
    /* Turn GSL's default error handler (which aborts the process) off for
     * the whole process with gsl_set_error_handler_off(). kevo checks its
     * arguments before it calls GSL, so this matters only to a program that
     * also calls GSL itself and wants error codes instead of abort(). */
    KEVO_INIT_GSL_HANDLER_OFF = 1u << 0
};

/*
 * kevo_global_init: process-wide set-up that changes global state, and so
 * is never done behind the caller's back. No other kevo function requires
 * it. flags is a bitwise OR of KEVO_INIT_* values. Returns KEVO_OK, or
 * KEVO_EINVAL for an unknown flag, in which case nothing was changed.
 */
KEVO_API kevo_status kevo_global_init(unsigned flags);

#ifdef __cplusplus
}
#endif

#endif

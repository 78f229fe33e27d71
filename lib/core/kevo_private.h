/*
 * kevo_private.h: declarations shared between the library's files. Nothing
 * here is exported: these names are hidden in libkevo.so and reachable only
 * by code linked with the internal convenience library (the tests, the
 * worker).
 */
#ifndef KEVO_PRIVATE_H
#define KEVO_PRIVATE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kevo.h>

#if defined(__GNUC__)
#define KEVO_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define KEVO_PRINTF(f, a)
#endif

#define KEVO_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- errors (error.c) ---------------------------------------------------
 * Each setter records the error only when err is not NULL and holds no
 * error yet (the first error wins), and returns code, so that a failing
 * path reads `return kevo__error_set(err, KEVO_EINVAL, "...")`. */

kevo_status kevo__error_set(kevo_error *err, kevo_status code, const char *fmt,
                            ...) KEVO_PRINTF(3, 4);

/* As kevo__error_set, and records where: source (may be NULL), 1-based line
 * and column (0 for unknown). */
kevo_status kevo__error_set_at(kevo_error *err, kevo_status code,
                               const char *source, int line, int column,
                               const char *fmt, ...) KEVO_PRINTF(6, 7);

/* As kevo__error_set, with a foreign library's code and its domain. */
kevo_status kevo__error_set_foreign(kevo_error *err, kevo_status code,
                                    kevo_domain domain, long foreign,
                                    const char *fmt, ...) KEVO_PRINTF(5, 6);

/* Records inner's error in err with a prefix: the text becomes
 * "<prefix>: <inner text>" (inner's text alone for an empty prefix); code,
 * domain, foreign, source, line and column are copied. Returns
 * inner->code. */
kevo_status kevo__error_wrap(kevo_error *err, const kevo_error *inner,
                             const char *fmt, ...) KEVO_PRINTF(3, 4);

/* Records KEVO_EIO (or KEVO_ENOENT for ENOENT) for a failed system call on
 * path, with errno as the foreign code: "<path>: <what>: <strerror>". */
kevo_status kevo__error_errno(kevo_error *err, int errnum, const char *path,
                              const char *what);

/* A fresh error record on the stack: `kevo_error e = KEVO__ERROR_INIT;` */
#define KEVO__ERROR_INIT                                                       \
    {                                                                          \
        .size = sizeof(kevo_error)                                             \
    }

/* ---- element types (dtype.c) ------------------------------------------- */

/* The gap from the finite value v to the next value of larger magnitude in
 * type (2^(e - 7) for a bf16 value in [2^e, 2^(e+1)), 2^(e - 10) for f16,
 * 2^(e - 23) for f32, 2^(e - 52) for f64; the subnormals' gap below the
 * normal range; 1 for the integer types): the unit of a tolerance's ulp
 * term (kevo_task_set_tolerance_full). The worker's compare kernels compute
 * the same (kv_ulp in worker/kernels.cu.h). */
double kevo__dtype_ulp(kevo_dtype type, double v);

/* ---- strings (strbuf.c) ------------------------------------------------ */

/* A growable string. Zero-initialise it; kevo__buf_free releases it. Once an
 * append fails, the buffer is marked failed and later appends do nothing,
 * so a caller can check once at the end. */
typedef struct kevo_buf {
    char *data; /* NUL-terminated once anything was appended */
    size_t len;
    size_t cap;
    bool failed;
} kevo_buf;

bool kevo__buf_append(kevo_buf *b, const char *s, size_t n);
bool kevo__buf_puts(kevo_buf *b, const char *s);
bool kevo__buf_printf(kevo_buf *b, const char *fmt, ...) KEVO_PRINTF(2, 3);
bool kevo__buf_vprintf(kevo_buf *b, const char *fmt, va_list ap)
    KEVO_PRINTF(2, 0);
/* Hands the string over to the caller (never NULL unless failed: an empty
 * buffer gives ""), and resets the buffer. */
char *kevo__buf_take(kevo_buf *b);
void kevo__buf_free(kevo_buf *b);

char *kevo__strdup(const char *s); /* NULL for NULL or no memory */
char *kevo__strndup(const char *s, size_t n);
char *kevo__asprintf(const char *fmt, ...) KEVO_PRINTF(1, 2);

/* text as one line in a new string: every run of white space and control
 * characters becomes one space, the ends are trimmed, bytes that are not
 * valid UTF-8 become '?', and a line longer than max bytes is cut at a
 * character and ends in "..." (max >= 8). NULL when out of memory. */
char *kevo__one_line(const char *text, size_t max);

/* [A-Za-z_][A-Za-z0-9_]*, 1 to 63 characters. */
bool kevo__is_identifier(const char *s);
#define KEVO__IDENT_MAX 63

/* A stable 64-bit hash (FNV-1a with a final avalanche) of bytes, continuing
 * from h (start with KEVO__HASH_INIT). */
#define KEVO__HASH_INIT UINT64_C(0xcbf29ce484222325)
uint64_t kevo__hash_bytes(uint64_t h, const void *data, size_t len);
uint64_t kevo__hash_finish(uint64_t h);

/* ---- expressions (expr.c) ---------------------------------------------- */

/* A deep copy of a parsed expression, without parsing again; NULL when out
 * of memory. */
kevo_expr *kevo__expr_copy(const kevo_expr *expr);

/* Appends expr to out as a C expression of type int64_t that computes what
 * kevo_expr_eval() does: each name becomes var_prefix + name; arithmetic
 * that can fail becomes calls fn_prefix + "add", "sub", "mul", "div",
 * "mod", "neg", "abs", "ceil_div", "round_up" (int64_t operands, then flag,
 * an int * the helper sets to 1 on overflow or division by zero, returning
 * 0), and fn_prefix + "min", "max" (two operands, no flag); comparisons and
 * logic are written inline, && || and ?: short-circuiting as kevo does, so
 * the flag is set exactly when kevo_expr_eval() would fail. Returns KEVO_OK
 * or KEVO_ENOMEM (out is then marked failed). */
kevo_status kevo__expr_to_c(const kevo_expr *expr, const char *var_prefix,
                            const char *fn_prefix, const char *flag,
                            kevo_buf *out);

/* ---- files (fileio.c) -------------------------------------------------- */

/* Reads a whole file into a new NUL-terminated buffer. A file with a NUL
 * byte inside is rejected (KEVO_EINVALID) when text is true. */
kevo_status kevo__read_file(const char *path, bool text, char **data,
                            size_t *len, kevo_error *err);

/* Writes data to path atomically: a temporary file in the same directory,
 * fsync, rename over path, fsync of the directory. */
kevo_status kevo__write_file_atomic(const char *path, const void *data,
                                    size_t len, kevo_error *err);

/* mkdir -p with mode 0777 & ~umask. */
kevo_status kevo__mkdir_p(const char *path, kevo_error *err);

/* The directory part of path ("." when it has none), in a new string. */
char *kevo__dirname(const char *path);

/* dir + "/" + name in a new string; name itself when it is absolute or dir
 * is NULL or empty. */
char *kevo__path_join(const char *dir, const char *name);

/* The bytes of the task's outputs (out and inout buffers) at the shape
 * whose dims are in shape. Returns KEVO_OK or an expression error.
 * (task_args.c) */
kevo_status kevo__task_output_bytes(const kevo_task *task,
                                    const kevo_vars *shape, uint64_t *bytes,
                                    kevo_error *err);

#endif

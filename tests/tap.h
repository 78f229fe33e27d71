/*
 * tap.h: a tiny TAP producer for kevo's tests. Each check prints one
 * "ok N - name" or "not ok N - name" line; a failed check also prints, as
 * TAP comments, the file, the line and both values. done_testing() prints
 * the plan and returns the exit status. skip_all() prints a skip plan and
 * exits 77.
 *
 *   int main(void) {
 *       is_int(1 + 1, 2, "addition");
 *       is_str(kevo_dtype_name(KEVO_DTYPE_F32), "f32", "dtype name");
 *       return done_testing();
 *   }
 */
#ifndef KEVO_TAP_H
#define KEVO_TAP_H

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_count_;
static int tap_failed_;

#if defined(__GNUC__)
#define TAP_UNUSED_ __attribute__((unused))
#define TAP_PRINTF_(f, a) __attribute__((format(printf, f, a)))
#else
#define TAP_UNUSED_
#define TAP_PRINTF_(f, a)
#endif

static TAP_UNUSED_ TAP_PRINTF_(4, 5) int tap_ok_(int pass, const char *file,
                                                 int line, const char *fmt, ...)
{
    va_list ap;
    tap_count_++;
    printf("%sok %d - ", pass ? "" : "not ", tap_count_);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    if (!pass) {
        tap_failed_++;
        printf("#   failed at %s:%d\n", file, line);
    }
    fflush(stdout);
    return pass;
}

/* ok(cond, name...): passes when cond is true. */
#define ok(cond, ...) tap_ok_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* is_int(got, want, name...): 64-bit signed equality. */
#define is_int(got, want, ...)                                                 \
    do {                                                                       \
        long long got_ = (long long)(got), want_ = (long long)(want);          \
        if (!tap_ok_(got_ == want_, __FILE__, __LINE__, __VA_ARGS__))          \
            printf("#          got: %lld\n#     expected: %lld\n", got_,       \
                   want_);                                                     \
    } while (0)

/* is_uint(got, want, name...): 64-bit unsigned equality. */
#define is_uint(got, want, ...)                                                \
    do {                                                                       \
        unsigned long long got_ = (unsigned long long)(got),                   \
                           want_ = (unsigned long long)(want);                 \
        if (!tap_ok_(got_ == want_, __FILE__, __LINE__, __VA_ARGS__))          \
            printf("#          got: %llu\n#     expected: %llu\n", got_,       \
                   want_);                                                     \
    } while (0)

/* is_double(got, want, tol, name...): |got - want| <= tol (NaN equals
 * NaN). */
#define is_double(got, want, tol, ...)                                         \
    do {                                                                       \
        double got_ = (double)(got), want_ = (double)(want);                   \
        int pass_ = (isnan(got_) && isnan(want_)) ||                           \
                    fabs(got_ - want_) <= (double)(tol);                       \
        if (!tap_ok_(pass_, __FILE__, __LINE__, __VA_ARGS__))                  \
            printf("#          got: %.17g\n#     expected: %.17g\n", got_,     \
                   want_);                                                     \
    } while (0)

/* is_str(got, want, name...): string equality (NULL equals only NULL). */
#define is_str(got, want, ...)                                                 \
    do {                                                                       \
        const char *got_ = (got), *want_ = (want);                             \
        int pass_ =                                                            \
            (!got_ && !want_) || (got_ && want_ && strcmp(got_, want_) == 0);  \
        if (!tap_ok_(pass_, __FILE__, __LINE__, __VA_ARGS__))                  \
            printf("#          got: '%s'\n#     expected: '%s'\n",             \
                   got_ ? got_ : "(null)", want_ ? want_ : "(null)");          \
    } while (0)

/* like_str(got, needle, name...): got contains needle. */
#define like_str(got, needle, ...)                                             \
    do {                                                                       \
        const char *got_ = (got), *needle_ = (needle);                         \
        int pass_ = got_ && needle_ && strstr(got_, needle_) != NULL;          \
        if (!tap_ok_(pass_, __FILE__, __LINE__, __VA_ARGS__))                  \
            printf("#          got: '%s'\n#  to contain: '%s'\n",              \
                   got_ ? got_ : "(null)", needle_ ? needle_ : "(null)");      \
    } while (0)

/* diag(fmt...): a comment line in the output. */
static TAP_UNUSED_ TAP_PRINTF_(1, 2) void diag(const char *fmt, ...)
{
    va_list ap;
    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* skip_all(why...): the whole program is skipped (no GPU, say). */
static TAP_UNUSED_ TAP_PRINTF_(1, 2) void skip_all(const char *fmt, ...)
{
    va_list ap;
    printf("1..0 # SKIP ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    exit(77);
}

/* bail_out(why...): stops the program; the driver reports an error. */
static TAP_UNUSED_ TAP_PRINTF_(1, 2) void bail_out(const char *fmt, ...)
{
    va_list ap;
    printf("Bail out! ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    exit(1);
}

/* done_testing(): prints the plan; returns the exit status for main. */
static TAP_UNUSED_ int done_testing(void)
{
    printf("1..%d\n", tap_count_);
    if (tap_failed_)
        printf("# %d of %d checks failed\n", tap_failed_, tap_count_);
    fflush(stdout);
    return tap_failed_ ? 1 : 0;
}

/* tap_srcdir(): the source tree's root, for test data (KEVO_SRCDIR, set by
 * make check; "." otherwise). */
static TAP_UNUSED_ const char *tap_srcdir(void)
{
    const char *d = getenv("KEVO_SRCDIR");
    return d && *d ? d : ".";
}

#endif

/*
 * test-error.c: status codes, the error record (first error wins,
 * wrapping), versions, element types and process-wide initialisation.
 */
#include "config.h"

#include <errno.h>

#include "core/kevo_private.h"
#include "tap.h"

static void test_strerror(void)
{
    is_str(kevo_strerror(KEVO_OK), "success", "KEVO_OK text");
    is_str(kevo_strerror(KEVO_EDIVZERO), "division by zero", "EDIVZERO text");
    is_str(kevo_strerror(KEVO_EEXTERNAL), "error in an external library",
           "last code has a text");
    is_str(kevo_strerror((kevo_status)999), "unknown error",
           "unknown code still gives text");
    is_str(kevo_domain_name(KEVO_DOMAIN_NVRTC), "nvrtc", "domain name");
    is_str(kevo_domain_name((kevo_domain)77), "unknown", "unknown domain");
    for (int c = KEVO_OK; c <= KEVO_EWORKER; c++)
        ok(strcmp(kevo_strerror((kevo_status)c), "unknown error") != 0,
           "code %d has its own text", c);
}

static void test_first_error_wins(void)
{
    kevo_error err;
    kevo_error_init(&err);
    is_uint(err.size, sizeof(kevo_error), "init sets size");
    is_int(err.code, KEVO_OK, "init clears code");
    is_int(kevo__error_set(&err, KEVO_EINVAL, "first %d", 1), KEVO_EINVAL,
           "setter returns its code");
    is_int(kevo__error_set(&err, KEVO_ENOMEM, "second"), KEVO_ENOMEM,
           "later setter still returns its code");
    is_int(err.code, KEVO_EINVAL, "first code kept");
    is_str(err.text, "first 1", "first text kept");
    is_int(kevo__error_set(NULL, KEVO_EIO, "nowhere"), KEVO_EIO,
           "NULL record is fine");

    kevo_error zero = {0};
    kevo__error_set_at(&zero, KEVO_EPARSE, "a.json", 3, 7, "bad");
    is_int(zero.code, KEVO_EPARSE, "zero-initialised record accepted");
    is_str(zero.source, "a.json", "source recorded");
    is_int(zero.line, 3, "line recorded");
    is_int(zero.column, 7, "column recorded");

    kevo_error other = {.size = 12345};
    kevo__error_set(&other, KEVO_EINVAL, "x");
    is_int(other.code, KEVO_OK, "record of a foreign size is not written");
}

static void test_wrap_and_foreign(void)
{
    kevo_error inner, outer;
    kevo_error_init(&inner);
    kevo_error_init(&outer);
    kevo__error_set_at(&inner, KEVO_EDIVZERO, "x.cu", 4, 9, "division by zero");
    is_int(kevo__error_wrap(&outer, &inner, "task.json: $.cost.bytes"),
           KEVO_EDIVZERO, "wrap returns inner code");
    is_str(outer.text, "task.json: $.cost.bytes: division by zero",
           "wrap prefixes the text");
    is_int(outer.line, 4, "wrap keeps the line");
    is_str(outer.source, "x.cu", "wrap keeps the source");

    kevo_error plain;
    kevo_error_init(&plain);
    kevo__error_wrap(&plain, &inner, "%s", "");
    is_str(plain.text, "division by zero", "empty prefix keeps the text");

    kevo_error f;
    kevo_error_init(&f);
    kevo__error_set_foreign(&f, KEVO_EEXTERNAL, KEVO_DOMAIN_CURL, 28,
                            "timeout");
    is_int(f.domain, KEVO_DOMAIN_CURL, "foreign domain");
    is_int(f.foreign, 28, "foreign code");

    kevo_error e;
    kevo_error_init(&e);
    is_int(kevo__error_errno(&e, ENOENT, "/no/such", "cannot open"),
           KEVO_ENOENT, "ENOENT maps to KEVO_ENOENT");
    like_str(e.text, "/no/such: cannot open: No such file",
             "errno text names path and cause");
    is_int(e.domain, KEVO_DOMAIN_SYSTEM, "errno domain");
    kevo_error_init(&e);
    is_int(kevo__error_errno(&e, EACCES, "/x", "cannot write"), KEVO_EIO,
           "other errno maps to KEVO_EIO");

    /* A long prefix and text are cut, never overflowed. */
    char big[3000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    kevo_error_init(&inner);
    kevo_error_init(&outer);
    kevo__error_set(&inner, KEVO_EINVAL, "%s", big);
    kevo__error_wrap(&outer, &inner, "%s", big);
    is_uint(strlen(outer.text), KEVO_ERROR_TEXT_SIZE - 1, "wrap truncates");
}

static void test_version_and_dtype(void)
{
    is_uint(kevo_version(), KEVO_VERSION_NUMBER, "runtime version matches");
    is_str(kevo_version_string(), KEVO_VERSION_STRING, "version string");
    is_str(kevo_version_string(), PACKAGE_VERSION, "package version");

    kevo_dtype t;
    is_int(kevo_dtype_parse("bf16", &t), KEVO_OK, "parse bf16");
    is_int(t, KEVO_DTYPE_BF16, "bf16 value");
    is_int(kevo_dtype_parse("f33", &t), KEVO_EINVAL, "unknown dtype");
    is_int(t, KEVO_DTYPE_BF16, "failed parse leaves the value");
    is_uint(kevo_dtype_size(KEVO_DTYPE_U64), 8, "u64 size");
    is_uint(kevo_dtype_size(KEVO_DTYPE_U8), 1, "u8 size");
    is_uint(kevo_dtype_size((kevo_dtype)99), 0, "bad dtype size");
    ok(kevo_dtype_is_float(KEVO_DTYPE_F16), "f16 is float");
    ok(!kevo_dtype_is_float(KEVO_DTYPE_I32), "i32 is not float");
    is_str(kevo_dtype_name((kevo_dtype)-1), "?", "bad dtype name");
    const char *names[] = {"f32", "f64", "f16", "bf16", "i8",  "u8",
                           "i16", "u16", "i32", "u32",  "i64", "u64"};
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(names); i++) {
        kevo_dtype d;
        ok(kevo_dtype_parse(names[i], &d) == KEVO_OK &&
               strcmp(kevo_dtype_name(d), names[i]) == 0,
           "dtype %s round-trips", names[i]);
    }
}

static void test_global_init(void)
{
    is_int(kevo_global_init(1u << 7), KEVO_EINVAL, "unknown flag rejected");
    is_int(kevo_global_init(0), KEVO_OK, "no flags");
    is_int(kevo_global_init(KEVO_INIT_GSL_HANDLER_OFF), KEVO_OK,
           "GSL handler off");
}

int main(void)
{
    test_strerror();
    test_first_error_wins();
    test_wrap_and_foreign();
    test_version_and_dtype();
    test_global_init();
    return done_testing();
}

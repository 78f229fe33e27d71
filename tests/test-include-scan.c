/*
 * test-include-scan.c: the #include scan on the cases of
 * tests/data/includes: NAME.cu is scanned; with NAME.err beside it the scan
 * must fail with exactly that text (and that line), without it the scan
 * must pass. Then the listing of every header name a source names
 * (kevo__include_each), which the compile worker follows through the
 * toolkit's headers.
 */
#include "config.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "proc/include_scan.h"
#include "tap.h"

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_case(const char *dir, const char *file)
{
    char *path = kevo__path_join(dir, file);
    char *src = NULL, *want = NULL, *err_path = NULL;
    size_t len = 0, want_len = 0;
    kevo_error err = KEVO__ERROR_INIT;

    if (!path || kevo__read_file(path, false, &src, &len, NULL) != KEVO_OK)
        bail_out("cannot read %s", path ? path : file);
    err_path = kevo__asprintf("%.*s.err", (int)(strlen(path) - 3), path);
    if (!err_path)
        bail_out("out of memory");
    bool expect_ok =
        kevo__read_file(err_path, true, &want, &want_len, NULL) != KEVO_OK;
    kevo_status rc = kevo__include_scan(src, len, file, &err);
    if (expect_ok) {
        is_int(rc, KEVO_OK, "%s: accepted (%s)", file, err.text);
    } else {
        if (want_len && want[want_len - 1] == '\n')
            want[want_len - 1] = '\0';
        is_int(rc, KEVO_EINVALID, "%s: rejected", file);
        is_str(err.text, want, "%s: the message", file);
        ok(strcmp(err.source, file) == 0, "%s: names the file (%s)", file,
           err.source);
        int line = 0;
        sscanf(want, "line %d:", &line);
        is_int(err.line, line, "%s: the line", file);
    }
    free(path);
    free(err_path);
    free(src);
    free(want);
}

static void test_data(void)
{
    char *dir = kevo__path_join(tap_srcdir(), "tests/data/includes");
    DIR *d = dir ? opendir(dir) : NULL;
    char **names = NULL;
    size_t n = 0, cap = 0, rejected = 0;
    struct dirent *e;

    if (!d)
        bail_out("cannot open %s", dir ? dir : "tests/data/includes");
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".cu") != 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof *names);
            if (!names)
                bail_out("out of memory");
        }
        names[n++] = kevo__strdup(e->d_name);
        if (strncmp(e->d_name, "ok-", 3) != 0)
            rejected++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    ok(n >= 40, "%zu cases in %s", n, dir);
    ok(rejected >= 30, "%zu of them rejected", rejected);
    for (size_t i = 0; i < n; i++) {
        run_case(dir, names[i]);
        free(names[i]);
    }
    free(names);
    free(dir);
}

static void test_api(void)
{
    kevo_error err = KEVO__ERROR_INIT;
    const char *src = "#include <mma.h>\n#include \"/etc/passwd\"\n";

    /* Only len bytes are scanned. */
    is_int(kevo__include_scan(src, 17, "a.cu", &err), KEVO_OK,
           "the first line alone passes");
    is_int(kevo__include_scan(src, strlen(src), NULL, &err), KEVO_EINVALID,
           "both lines fail");
    is_str(err.source, "", "no name: no source");
    is_int(err.line, 2, "on line 2");
    is_int(kevo__include_scan(src, strlen(src), "a.cu", NULL), KEVO_EINVALID,
           "without an error record");
    is_int(kevo__include_scan("", 0, "a.cu", NULL), KEVO_OK, "empty source");
    is_int(kevo__include_scan(NULL, 0, "a.cu", NULL), KEVO_OK, "NULL source");

    /* A NUL inside len does not end the scan. */
    const char nul[] = "int a;\0\n#include <stdio.h>\n";
    kevo_error_init(&err);
    is_int(kevo__include_scan(nul, sizeof nul - 1, "n.cu", &err), KEVO_EINVALID,
           "a NUL byte does not hide what follows");

    /* A very long name is cut short in the message. */
    kevo_buf b = {0};
    kevo__buf_puts(&b, "#include \"/");
    for (int i = 0; i < 500; i++)
        kevo__buf_puts(&b, "x");
    kevo__buf_puts(&b, "\"\n");
    kevo_error_init(&err);
    is_int(kevo__include_scan(b.data, b.len, "long.cu", &err), KEVO_EINVALID,
           "a long name is rejected");
    like_str(err.text, "xxx...\" is not allowed", "  and shortened");
    kevo__buf_free(&b);

    /* The suite's own kernels pass. */
    const char *files[] = {"saxpy_seed.cu", "softmax_seed.cu", "sgemm_seed.cu",
                           "histogram_seed.cu", "nbody_seed.cu"};
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(files); i++) {
        char *path =
            kevo__asprintf("%s/examples/tasks/%s", tap_srcdir(), files[i]);
        char *text = NULL;
        size_t len = 0;
        if (!path || kevo__read_file(path, true, &text, &len, NULL) != KEVO_OK)
            bail_out("cannot read %s", path ? path : files[i]);
        kevo_error_init(&err);
        is_int(kevo__include_scan(text, len, files[i], &err), KEVO_OK,
               "%s passes (%s)", files[i], err.text);
        free(text);
        free(path);
    }
}

static kevo_status collect(void *ctx, const char *what, bool angle,
                           const char *name, int line)
{
    kevo_buf *b = ctx;
    if (!kevo__buf_printf(b, "%d %s %c%s%c\n", line, what, angle ? '<' : '"',
                          name, angle ? '>' : '"'))
        bail_out("out of memory");
    return KEVO_OK;
}

static kevo_status stop_at_second(void *ctx, const char *what, bool angle,
                                  const char *name, int line)
{
    (void)what;
    (void)angle;
    (void)name;
    (void)line;
    return ++*(int *)ctx == 2 ? KEVO_ELIMIT : KEVO_OK;
}

static void test_each(void)
{
    const char *src =
        "#include <cuda_fp16.h>\n"
        "#  include \"details/info.h\" // quoted, beside the header\n"
        "#define P <computed.h>\n"
        "#include P\n"
        "/* #include <commented.h> */\n"
        "const char *s = \"#include <string.h>\";\n"
        "#if __has_include(<a/b.h>) && _CCCL_HAS_INCLUDE(<cuda/std/x>)\n"
        "#include_next <next.h>\n"
        "#endif\n"
        "#define _CCCL_HAS_INCLUDE(_X) __has_include(_X)\n"
        "%:import \"../up.h\"\n"
        "#include \"unterminated.h\n";
    const char *want = "1 #include <cuda_fp16.h>\n"
                       "2 #include \"details/info.h\"\n"
                       "7 __has_include <a/b.h>\n"
                       "7 _CCCL_HAS_INCLUDE <cuda/std/x>\n"
                       "8 #include_next <next.h>\n"
                       "11 #import \"../up.h\"\n";
    kevo_buf b = {0};
    is_int(kevo__include_each(src, strlen(src), collect, &b), KEVO_OK,
           "kevo__include_each goes through a source");
    is_str(b.data ? b.data : "", want,
           "  and lists the header names, not computed, commented, quoted "
           "or unterminated ones");
    kevo__buf_free(&b);
    int calls = 0;
    is_int(kevo__include_each(src, strlen(src), stop_at_second, &calls),
           KEVO_ELIMIT, "a callback's status stops it");
    is_int(calls, 2, "  after the second name");
    is_int(kevo__include_each(NULL, 0, collect, NULL), KEVO_OK,
           "a NULL source lists nothing");
    ok(kevo__include_allowed_name("cuda/std/cstdint") &&
           kevo__include_allowed_name("mma.h") &&
           !kevo__include_allowed_name("cuda_fp16.hpp") &&
           !kevo__include_allowed_name("cuda/std/../x"),
       "kevo__include_allowed_name");
    is_uint(kevo__include_nallowed, 6, "six headers by name");
}

int main(void)
{
    test_data();
    test_api();
    test_each();
    return done_testing();
}

/*
 * test-compile-log.c: the reason a failed compile's NVRTC log gives
 * (lib/proc/compile_log.h).
 *
 * Data-driven over tests/data/compile-log/: every NAME.log must give the
 * one line in NAME.reason (its README says where each log came from).
 * Then the reasons that may be made again from a log.
 */
#include "config.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "proc/compile_log.h"
#include "tap.h"

static char *read_case(const char *dir, const char *stem, const char *ext)
{
    char *path = kevo__asprintf("%s/%s%s", dir, stem, ext);
    char *text = NULL;
    size_t len = 0;
    if (!path || kevo__read_file(path, true, &text, &len, NULL) != KEVO_OK)
        bail_out("cannot read %s", path ? path : stem);
    free(path);
    return text;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_cases(void)
{
    char *dir = kevo__asprintf("%s/tests/data/compile-log", tap_srcdir());
    DIR *d = dir ? opendir(dir) : NULL;
    char *stems[64];
    size_t n = 0;
    struct dirent *e;

    if (!d)
        bail_out("cannot open %s", dir ? dir : "tests/data/compile-log");
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".log") == 0 &&
            n < KEVO_ARRAY_SIZE(stems) &&
            !(stems[n++] = kevo__strndup(e->d_name, len - 4)))
            bail_out("out of memory");
    }
    closedir(d);
    qsort(stems, n, sizeof *stems, by_name);
    ok(n >= 8, "%zu logs", n);
    for (size_t i = 0; i < n; i++) {
        char *log = read_case(dir, stems[i], ".log");
        char *want = read_case(dir, stems[i], ".reason");
        size_t wl = strlen(want);
        while (wl > 0 && want[wl - 1] == '\n')
            want[--wl] = '\0';
        char *got = kevo__compile_log_reason(log);
        is_str(got, want, "%s", stems[i]);
        ok(!got || !strstr(got, "aborted due to errors") ||
               strstr(log, "error   :") == NULL,
           "%s: never ptxas's closing line where the log says more", stems[i]);
        ok(kevo__compile_log_reason_is(got), "%s: a reason of the log's",
           stems[i]);
        free(got);
        free(log);
        free(want);
        free(stems[i]);
    }
    free(dir);
}

static void test_edges(void)
{
    char *r = kevo__compile_log_reason(NULL);
    is_str(r, "compile error", "no log");
    free(r);
    r = kevo__compile_log_reason("");
    is_str(r, "compile error", "an empty log");
    free(r);

    /* A line longer than a reason keeps is cut. */
    size_t n = 2 * KEVO__COMPILE_REASON_LINE_MAX;
    char *log = malloc(n + 32);
    if (!log)
        bail_out("out of memory");
    strcpy(log, "k.cu(1): error: ");
    size_t at = strlen(log);
    memset(log + at, 'x', n);
    strcpy(log + at + n, "\r\n");
    r = kevo__compile_log_reason(log);
    is_uint(r ? strlen(r) : 0,
            strlen("compile error: ") + KEVO__COMPILE_REASON_LINE_MAX,
            "a long line is cut");
    free(r);
    free(log);

    /* A front end's error is given alone; only ptxas's lines pair. */
    r = kevo__compile_log_reason("k.cu(1): error: a\nk.cu(2): error: b\n");
    is_str(r, "compile error: k.cu(1): error: a", "one front-end error");
    free(r);
    r = kevo__compile_log_reason(
        "ptxas error   : a\nk.cu(2): error: b\nptxas error   : c\n");
    is_str(r, "compile error: ptxas error   : a", "ptxas, then not ptxas");
    free(r);
    /* "errors" and "error detected" are no error lines; "terror:" is not
     * the word. */
    r = kevo__compile_log_reason("terror: x\n2 errors detected\n");
    is_str(r, "compile error: terror: x", "any mention, when nothing else");
    free(r);

    ok(kevo__compile_log_reason_is("compile error"), "\"compile error\"");
    ok(kevo__compile_log_reason_is("compile error: x"), "\"compile error: x\"");
    ok(!kevo__compile_log_reason_is("compile errors"),
       "not \"compile errors\"");
    ok(!kevo__compile_log_reason_is("kernel 'k' is not defined in k.cu"),
       "not a missing kernel");
    ok(!kevo__compile_log_reason_is(NULL), "not NULL");
}

int main(void)
{
    test_cases();
    test_edges();
    return done_testing();
}

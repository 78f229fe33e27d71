/*
 * test-eventlog.c: reading events.jsonl: good events in order with their
 * line numbers, every bad line reported and skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kevo.h>

#include "tap.h"

static char tmpdir[4096];

static char *tmp_path(const char *name)
{
    size_t n = strlen(tmpdir) + strlen(name) + 2;
    char *p = malloc(n);
    if (!p)
        bail_out("out of memory");
    snprintf(p, n, "%s/%s", tmpdir, name);
    return p;
}

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0)
        bail_out("cannot write %s: %s", path, strerror(errno));
}

/* One expected result of kevo_event_reader_next. */
struct step {
    kevo_status rc;
    size_t line;
    const char *type; /* for KEVO_OK */
    const char *text; /* KEVO_OK: the JSON text; KEVO_EPARSE: the message */
};

static void check_steps(const char *path, const struct step *steps,
                        size_t nsteps, size_t want_malformed)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_event_reader *r = NULL;
    is_int(kevo_event_reader_open(path, &r, &err), KEVO_OK, "open %s", path);
    if (!r)
        return;
    ok(kevo_event_reader_type(r) == NULL, "no type before the first event");
    for (size_t i = 0; i < nsteps; i++) {
        const char *json = NULL;
        size_t line = 0;
        kevo_error_init(&err);
        kevo_status rc = kevo_event_reader_next(r, &json, &line, &err);
        is_int(rc, steps[i].rc, "step %zu: status", i + 1);
        if (steps[i].rc == KEVO_OK) {
            is_uint(line, steps[i].line, "step %zu: line number", i + 1);
            is_str(kevo_event_reader_type(r), steps[i].type, "step %zu: type",
                   i + 1);
            is_str(json, steps[i].text, "step %zu: text", i + 1);
        } else if (steps[i].rc == KEVO_EPARSE) {
            is_int(err.line, (long long)steps[i].line, "step %zu: err.line",
                   i + 1);
            is_str(err.source, path, "step %zu: err.source", i + 1);
            char want[8192];
            snprintf(want, sizeof want, "%s:%zu: %s", path, steps[i].line,
                     steps[i].text);
            like_str(err.text, want, "step %zu: message", i + 1);
        }
    }
    kevo_error_init(&err);
    is_int(kevo_event_reader_next(r, NULL, NULL, &err), KEVO_DONE,
           "then the end");
    is_int(kevo_event_reader_next(r, NULL, NULL, &err), KEVO_DONE,
           "and the end again");
    is_uint(kevo_event_reader_malformed(r), want_malformed,
            "malformed lines counted");
    kevo_event_reader_free(r);
}

static void test_mixed(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/eventlog/mixed.jsonl",
             tap_srcdir());
    const struct step steps[] = {
        {KEVO_OK, 1, "start",
         "{\"seq\":0,\"time\":1.5,\"type\":\"start\",\"task\":\"softmax\"}"},
        {KEVO_OK, 2, "eval",
         "{\"seq\":1,\"time\":2.0,\"type\":\"eval\",\"fitness\":0.5}"},
        {KEVO_EPARSE, 4, NULL,
         "not valid JSON (column 44: unexpected token near end of file); a "
         "line cut short by a killed run?"},
        {KEVO_EPARSE, 5, NULL, "an array, not a JSON object"},
        {KEVO_EPARSE, 6, NULL, "an object without \"type\""},
        {KEVO_EPARSE, 7, NULL, "\"type\" is an integer, expected a string"},
        {KEVO_OK, 9, "stop", "{\"seq\":5,\"time\":3.5,\"type\":\"stop\"}"},
        {KEVO_OK, 10, "eval",
         "{\"seq\":6,\"time\":4.0,\"type\":\"eval\",\"fitness\":0.75}"},
    };
    check_steps(path, steps, sizeof steps / sizeof steps[0], 4);
}

static void test_cut_last_line(void)
{
    char *path = tmp_path("cut.jsonl");
    const char text[] =
        "{\"type\":\"a\"}\r\n{\"seq\":1,\"type\":\"b\",\"x\":\"ab";
    write_text(path, text, strlen(text));
    const struct step steps[] = {
        {KEVO_OK, 1, "a", "{\"type\":\"a\"}"},
        {KEVO_EPARSE, 2, NULL,
         "not valid JSON (column 27: premature end of input near '\"ab'); a "
         "line cut short by a killed run?"},
    };
    check_steps(path, steps, sizeof steps / sizeof steps[0], 1);
    unlink(path);
    free(path);
}

static void test_odd_lines(void)
{
    char *path = tmp_path("odd.jsonl");
    /* A NUL byte, a duplicate key, a string type with a bad escape. */
    const char text[] = "{\"type\":\"a\"}\n"
                        "{\"type\":\"b\",\0\"x\":1}\n"
                        "{\"type\":\"c\",\"type\":\"d\"}\n"
                        "{\"type\":\"e\"}\n";
    write_text(path, text, sizeof text - 1);
    const struct step steps[] = {
        {KEVO_OK, 1, "a", "{\"type\":\"a\"}"},
        {KEVO_EPARSE, 2, NULL, "a NUL byte at column 13"},
        {KEVO_EPARSE, 3, NULL,
         "not valid JSON (column 18: duplicate object key near '\"type\"')"},
        {KEVO_OK, 4, "e", "{\"type\":\"e\"}"},
    };
    check_steps(path, steps, sizeof steps / sizeof steps[0], 2);
    unlink(path);
    free(path);
}

static void test_long_line(void)
{
    char *path = tmp_path("long.jsonl");
    const size_t pad = 3 * 1024 * 1024;
    size_t cap = pad + 256;
    char *text = malloc(cap);
    char *want = malloc(cap);
    if (!text || !want)
        bail_out("out of memory");
    size_t n = (size_t)snprintf(text, cap, "{\"type\":\"big\",\"pad\":\"");
    memset(text + n, 'x', pad);
    n += pad;
    n += (size_t)snprintf(text + n, cap - n, "\"}\n");
    memcpy(want, text, n - 1);
    want[n - 1] = '\0';
    n += (size_t)snprintf(text + n, cap - n, "{\"type\":\"after\"}\n");
    write_text(path, text, n);
    const struct step steps[] = {
        {KEVO_OK, 1, "big", want},
        {KEVO_OK, 2, "after", "{\"type\":\"after\"}"},
    };
    check_steps(path, steps, sizeof steps / sizeof steps[0], 0);
    unlink(path);
    free(path);
    free(text);
    free(want);
}

static void test_open_errors(void)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_event_reader *r = (kevo_event_reader *)&err;
    char *path = tmp_path("missing.jsonl");
    is_int(kevo_event_reader_open(path, &r, &err), KEVO_ENOENT, "missing file");
    ok(r == NULL, "no reader for a missing file");
    like_str(err.text, "missing.jsonl: cannot open: No such file",
             "missing file message");
    free(path);

    kevo_error_init(&err);
    is_int(kevo_event_reader_open(tmpdir, &r, &err), KEVO_EIO, "a directory");
    like_str(err.text, "is a directory, not an events file",
             "directory message");

    path = tmp_path("empty.jsonl");
    write_text(path, "", 0);
    kevo_error_init(&err);
    is_int(kevo_event_reader_open(path, &r, &err), KEVO_OK, "empty file");
    is_int(kevo_event_reader_next(r, NULL, NULL, &err), KEVO_DONE,
           "an empty file has no events");
    is_uint(kevo_event_reader_malformed(r), 0, "and nothing malformed");
    kevo_event_reader_free(r);
    unlink(path);
    free(path);

    kevo_error_init(&err);
    is_int(kevo_event_reader_open(NULL, &r, &err), KEVO_EINVAL, "NULL path");
    kevo_event_reader_free(NULL);
    ok(kevo_event_reader_type(NULL) == NULL, "type of NULL");
    is_uint(kevo_event_reader_malformed(NULL), 0, "malformed of NULL");
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/kevo-eventlog-XXXXXX",
             t && *t ? t : "/tmp");
    if (!mkdtemp(tmpdir))
        bail_out("mkdtemp: %s", strerror(errno));
    test_mixed();
    test_cut_last_line();
    test_odd_lines();
    test_long_line();
    test_open_errors();
    if (rmdir(tmpdir) != 0)
        ok(0, "temporary directory %s left empty: %s", tmpdir, strerror(errno));
    return done_testing();
}

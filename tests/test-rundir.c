/*
 * test-rundir.c: the run directory: event lines, sequence numbers across
 * runs, the lock, new and resumed runs, cut lines, files, checkpoints, and
 * a writer killed in the middle of a checkpoint.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
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

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (!p)
        bail_out("out of memory");
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* The whole file in a new string (NULL when it cannot be read). */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n + 1 >= cap) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb)
                bail_out("out of memory");
            buf = nb;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

static void append_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "ab");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        bail_out("cannot write %s: %s", path, strerror(errno));
}

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0)
        bail_out("cannot write %s: %s", path, strerror(errno));
}

static int is_dir(const char *dir, const char *name)
{
    char *p = join(dir, name);
    struct stat st;
    int r = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
    free(p);
    return r;
}

static int present(const char *dir, const char *name)
{
    char *p = join(dir, name);
    struct stat st;
    int r = lstat(p, &st) == 0;
    free(p);
    return r;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rm_rf(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static kevo_rundir *open_ok(const char *path, unsigned flags)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_rundir *dir = NULL;
    if (kevo_rundir_open(path, flags, &dir, &err) != KEVO_OK)
        bail_out("cannot open %s: %s", path, err.text);
    return dir;
}

static void test_events(void)
{
    char *path = tmp_path("nested/parents/run");
    kevo_error err;
    kevo_error_init(&err);
    kevo_rundir *dir = NULL;
    is_int(kevo_rundir_open(path, KEVO_RUNDIR_NEW, &dir, &err), KEVO_OK,
           "open a new run directory with its parents");
    is_str(kevo_rundir_path(dir), path, "path");
    ok(is_dir(path, "candidates") && is_dir(path, "llm"),
       "candidates/ and llm/ made");
    ok(present(path, "events.jsonl") && present(path, ".lock"),
       "events.jsonl and .lock made");
    is_uint(kevo_rundir_event_count(dir), 0, "no events yet");

    is_int(kevo_rundir_event(dir, "start", NULL, &err), KEVO_OK,
           "event without fields");
    is_int(kevo_rundir_event(dir, "eval",
                             "{\"z\": 1, \"a\": [1, 2], \"m\": {\"k\": "
                             "\"v\\n\"}, \"f\": 0.1, \"n\": null}",
                             &err),
           KEVO_OK, "event with fields");
    is_int(kevo_rundir_event(dir, "t\"\xc3\xa9\n", "{}", &err), KEVO_OK,
           "event with an odd type and empty fields");
    is_uint(kevo_rundir_event_count(dir), 3, "three events");

    /* Refused events change nothing. */
    const struct {
        const char *type, *fields, *needle;
    } bad[] = {
        {"x", "[1, 2]",
         "event \"x\": fields must be a JSON object, found an "
         "array"},
        {"x", "42", "fields must be a JSON object, found an integer"},
        {"x", "{\"seq\": 1}",
         "event \"x\": fields use the reserved name "
         "\"seq\""},
        {"x", "{\"a\": 1, \"time\": 1}", "reserved name \"time\""},
        {"x", "{\"type\": \"y\"}", "reserved name \"type\""},
        {"x", "{\"a\": ",
         "event \"x\": fields are not valid JSON (line 1, "
         "column"},
        {"x", "{\"a\": 1, \"a\": 2}", "duplicate object key"},
        {"", "{}", "an event needs a non-empty type"},
        {NULL, NULL, "an event needs a non-empty type"},
        {"\xff", NULL, "the event type is not valid UTF-8"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kevo_error_init(&err);
        is_int(kevo_rundir_event(dir, bad[i].type, bad[i].fields, &err),
               KEVO_EINVAL, "event %zu refused", i);
        like_str(err.text, bad[i].needle, "event %zu message", i);
    }
    is_uint(kevo_rundir_event_count(dir), 3, "refused events are not counted");
    kevo_rundir_free(dir);

    char *events = join(path, "events.jsonl");
    char *text = slurp(events, NULL);
    ok(text != NULL, "events.jsonl read");
    const char *type_want[] = {"start", "eval", "t\"\xc3\xa9\n"};
    const char *keys_want[][8] = {
        {"seq", "time", "type", NULL},
        {"seq", "time", "type", "z", "a", "m", "f", "n"},
        {"seq", "time", "type", NULL},
    };
    size_t lines = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save), lines++) {
        if (lines >= 3) {
            ok(0, "unexpected line %zu: %s", lines + 1, line);
            continue;
        }
        json_error_t je;
        json_t *v = json_loads(line, 0, &je);
        ok(json_is_object(v), "line %zu is a JSON object", lines + 1);
        if (!v)
            continue;
        is_int(json_integer_value(json_object_get(v, "seq")), (long long)lines,
               "line %zu: seq", lines + 1);
        json_t *t = json_object_get(v, "time");
        ok(json_is_real(t) && json_real_value(t) > 1.5e9,
           "line %zu: time is a real number of seconds", lines + 1);
        const char *dot = strchr(strstr(line, "\"time\":"), '.');
        ok(dot && strspn(dot + 1, "0123456789") == 6,
           "line %zu: time has six decimals", lines + 1);
        is_str(json_string_value(json_object_get(v, "type")), type_want[lines],
               "line %zu: type", lines + 1);
        size_t k = 0;
        int in_order = 1;
        const char *key;
        json_t *val;
        json_object_foreach (v, key, val) {
            in_order &= k < 8 && keys_want[lines][k] &&
                        strcmp(key, keys_want[lines][k]) == 0;
            k++;
        }
        in_order &= k == 8 || !keys_want[lines][k];
        ok(in_order, "line %zu: members in order", lines + 1);
        if (lines == 1) {
            is_double(json_real_value(json_object_get(v, "f")), 0.1, 0,
                      "a real field survives exactly");
            is_str(json_string_value(
                       json_object_get(json_object_get(v, "m"), "k")),
                   "v\n", "a nested field survives");
        }
        json_decref(v);
    }
    is_uint(lines, 3, "three lines");
    free(text);

    /* A later run continues the sequence. */
    dir = open_ok(path, 0);
    is_uint(kevo_rundir_event_count(dir), 3, "reopen counts the old events");
    is_int(kevo_rundir_event(dir, "resume", "{\"k\": 2, \"r\": 0.42}", &err),
           KEVO_OK, "event after reopen");
    is_int(kevo_rundir_event(dir, "sum", "{\"s\": 0.30000000000000004}", &err),
           KEVO_OK, "event with a real that needs 17 digits");
    kevo_rundir_free(dir);
    text = slurp(events, NULL);
    like_str(text, "\n{\"seq\":3,\"time\":", "the next event has seq 3");
    like_str(text, "\"type\":\"resume\",\"k\":2,\"r\":0.42}\n",
             "and its fields, reals in their shortest form");
    const char *sum = text ? strstr(text, "\"s\":") : NULL;
    ok(sum && strtod(sum + 4, NULL) == 0.1 + 0.2,
       "a real that needs 17 digits survives exactly");
    free(text);
    free(events);
    free(path);
}

/* Opens path in a forked child while this process holds it; returns the
 * child's status and its message. */
static kevo_status open_in_child(const char *path, char *msg, size_t size)
{
    int fds[2];
    if (pipe(fds) != 0)
        bail_out("pipe: %s", strerror(errno));
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        bail_out("fork: %s", strerror(errno));
    if (pid == 0) {
        close(fds[0]);
        kevo_error err;
        kevo_error_init(&err);
        kevo_rundir *dir = NULL;
        kevo_status rc = kevo_rundir_open(path, 0, &dir, &err);
        kevo_rundir_free(dir);
        size_t n = strlen(err.text) + 1;
        if (write(fds[1], &rc, sizeof rc) != (ssize_t)sizeof rc ||
            write(fds[1], err.text, n) != (ssize_t)n)
            _exit(2);
        _exit(0);
    }
    close(fds[1]);
    kevo_status rc = KEVO_OK;
    if (read(fds[0], &rc, sizeof rc) != (ssize_t)sizeof rc)
        rc = (kevo_status)-1;
    ssize_t n = read(fds[0], msg, size - 1);
    msg[n > 0 ? n : 0] = '\0';
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child ran");
    return rc;
}

/* Held in a global so that under valgrind the leak check of a forked
 * child, which exits while the handle is open, finds it reachable. */
static kevo_rundir *held;

static void test_lock(void)
{
    char *path = tmp_path("locked");
    char msg[2048];
    held = open_ok(path, 0);
    is_int(open_in_child(path, msg, sizeof msg), KEVO_ESTATE,
           "a second process cannot open a held directory");
    like_str(msg, path, "the message names the directory");
    like_str(msg,
             "the run directory is in use: another process holds its "
             "lock",
             "the message says why");

    kevo_error err;
    kevo_error_init(&err);
    kevo_rundir *second = NULL;
    is_int(kevo_rundir_open(path, 0, &second, &err), KEVO_ESTATE,
           "nor a second open in this process");
    ok(second == NULL, "no handle on failure");
    kevo_rundir_free(held);
    held = NULL;

    is_int(open_in_child(path, msg, sizeof msg), KEVO_OK,
           "after close another process can open it");
    free(path);
}

static void test_flags(void)
{
    kevo_error err;
    kevo_rundir *dir = NULL;
    char *path = tmp_path("flags");

    kevo_error_init(&err);
    is_int(kevo_rundir_open(path, KEVO_RUNDIR_RESUME, &dir, &err), KEVO_ENOENT,
           "RESUME of a missing directory");
    like_str(err.text, "cannot resume the run in this directory",
             "its message");
    ok(!present(tmpdir, "flags"), "RESUME does not create the directory");

    dir = open_ok(path, KEVO_RUNDIR_NEW);
    kevo_rundir_free(dir);

    kevo_error_init(&err);
    is_int(kevo_rundir_open(path, KEVO_RUNDIR_NEW, &dir, &err), KEVO_EEXIST,
           "NEW where events.jsonl exists");
    like_str(err.text, "already holds a run (events.jsonl)", "its message");
    ok(dir == NULL, "no handle");

    kevo_error_init(&err);
    is_int(kevo_rundir_open(path, KEVO_RUNDIR_RESUME, &dir, &err), KEVO_ENOENT,
           "RESUME without a checkpoint");
    like_str(err.text, "no checkpoint.json to resume from", "its message");

    char *only_ckpt = tmp_path("only-checkpoint");
    dir = open_ok(only_ckpt, 0);
    is_int(kevo_rundir_checkpoint(dir, "{\"n\": 1}", &err), KEVO_OK,
           "checkpoint written");
    kevo_rundir_free(dir);
    char *events = join(only_ckpt, "events.jsonl");
    unlink(events);
    free(events);
    kevo_error_init(&err);
    is_int(kevo_rundir_open(only_ckpt, KEVO_RUNDIR_NEW, &dir, &err),
           KEVO_EEXIST, "NEW where checkpoint.json exists");
    like_str(err.text, "already holds a run (checkpoint.json)", "its message");
    kevo_error_init(&err);
    is_int(kevo_rundir_open(only_ckpt, KEVO_RUNDIR_RESUME, &dir, &err), KEVO_OK,
           "RESUME with a checkpoint");
    kevo_rundir_free(dir);
    free(only_ckpt);

    kevo_error_init(&err);
    is_int(kevo_rundir_open(path, KEVO_RUNDIR_NEW | KEVO_RUNDIR_RESUME, &dir,
                            &err),
           KEVO_EINVAL, "NEW and RESUME together");
    like_str(err.text, "contradict", "its message");
    kevo_error_init(&err);
    is_int(kevo_rundir_open(path, 1u << 7, &dir, &err), KEVO_EINVAL,
           "an unknown flag");
    like_str(err.text, "unknown flags 0x80", "its message");
    kevo_error_init(&err);
    is_int(kevo_rundir_open("", 0, &dir, &err), KEVO_EINVAL, "an empty path");

    char *file = tmp_path("a-file");
    write_text(file, "x", 1);
    kevo_error_init(&err);
    is_int(kevo_rundir_open(file, 0, &dir, &err), KEVO_EIO,
           "a path that is a file");
    like_str(err.text, "exists and is not a directory", "its message");
    unlink(file);
    free(file);
    kevo_rundir_free(NULL);
    free(path);
}

static void test_cut_line(void)
{
    char *path = tmp_path("cut");
    char *events = join(path, "events.jsonl");
    kevo_error err;
    kevo_error_init(&err);
    kevo_rundir *dir = open_ok(path, 0);
    kevo_rundir_event(dir, "a", NULL, &err);
    kevo_rundir_event(dir, "b", NULL, &err);
    kevo_rundir_free(dir);
    /* What a run killed in the middle of a write leaves. */
    append_text(events, "{\"seq\":2,\"time\":17.5,\"ty");

    dir = open_ok(path, 0);
    is_uint(kevo_rundir_event_count(dir), 3, "the cut line counts as a line");
    is_int(kevo_rundir_event(dir, "c", "{\"after\": true}", &err), KEVO_OK,
           "event after the cut line");
    kevo_rundir_free(dir);
    dir = open_ok(path, 0);
    is_uint(kevo_rundir_event_count(dir), 4, "no newline added twice");
    kevo_rundir_free(dir);

    char *text = slurp(events, NULL);
    like_str(text, "\"ty\n{\"seq\":3,", "the cut line was ended");
    free(text);

    kevo_event_reader *r = NULL;
    is_int(kevo_event_reader_open(events, &r, &err), KEVO_OK, "reader");
    const char *types[] = {"a", "b"};
    for (size_t i = 0; i < 2; i++) {
        size_t line = 0;
        is_int(kevo_event_reader_next(r, NULL, &line, &err), KEVO_OK,
               "event %zu", i + 1);
        is_uint(line, i + 1, "on line %zu", i + 1);
        is_str(kevo_event_reader_type(r), types[i], "event %zu: its type",
               i + 1);
    }
    kevo_error_init(&err);
    is_int(kevo_event_reader_next(r, NULL, NULL, &err), KEVO_EPARSE,
           "the cut line is reported");
    is_int(err.line, 3, "on line 3");
    like_str(err.text, "events.jsonl:3: not valid JSON", "its message");
    const char *json = NULL;
    size_t line = 0;
    kevo_error_init(&err);
    is_int(kevo_event_reader_next(r, &json, &line, &err), KEVO_OK,
           "reading goes on");
    is_uint(line, 4, "with line 4");
    like_str(json, "\"type\":\"c\",\"after\":true}", "the new event");
    is_int(kevo_event_reader_next(r, &json, &line, &err), KEVO_DONE, "end");
    is_uint(kevo_event_reader_malformed(r), 1, "one malformed line");
    kevo_event_reader_free(r);
    free(events);
    free(path);
}

static void test_write_file(void)
{
    char *path = tmp_path("files");
    kevo_rundir *dir = open_ok(path, 0);
    kevo_error err;
    const struct {
        const char *rel, *needle;
    } bad[] = {
        {"../x", "../x: a \"..\" component leaves the run directory"},
        {"a/../../x", "a \"..\" component"},
        {"candidates/..", "a \"..\" component"},
        {"/abs", "/abs: an absolute path; give a path relative to the run "
                 "directory"},
        {"", "a file name is needed"},
        {"sub/", "sub/: names a directory, not a file"},
        {"sub/.", "sub/.: names a directory, not a file"},
        {".", ".: names a directory, not a file"},
        {"events.jsonl", "events.jsonl: kevo writes this file of the run "
                         "directory"},
        {"./checkpoint.json", "kevo writes this file"},
        {".lock", "kevo writes this file"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kevo_error_init(&err);
        is_int(kevo_rundir_write_file(dir, bad[i].rel, "x", 1, &err),
               KEVO_EINVAL, "write_file(\"%s\") refused", bad[i].rel);
        like_str(err.text, bad[i].needle, "its message");
    }
    ok(!present(tmpdir, "x"), "nothing written outside");
    kevo_error_init(&err);
    is_int(kevo_rundir_write_file(dir, NULL, "x", 1, &err), KEVO_EINVAL,
           "NULL path refused");

    const struct {
        const char *rel, *data;
    } good[] = {
        {"candidates/42.cu", "__global__ void k() {}\n"},
        {"best.cu", "// best\n"},
        {"deep/er/still/file.txt", "nested"},
        {"..dots", "a name that starts with two dots"},
        {"empty", ""},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        kevo_error_init(&err);
        is_int(kevo_rundir_write_file(dir, good[i].rel, good[i].data,
                                      strlen(good[i].data), &err),
               KEVO_OK, "write_file(\"%s\")", good[i].rel);
        char *p = join(path, good[i].rel);
        char *text = slurp(p, NULL);
        is_str(text, good[i].data, "%s holds what was written", good[i].rel);
        free(text);
        free(p);
    }
    is_int(kevo_rundir_write_file(dir, "best.cu", "// better\n", 10, &err),
           KEVO_OK, "a file is replaced");
    char *p = join(path, "best.cu");
    char *text = slurp(p, NULL);
    is_str(text, "// better\n", "with the new text");
    free(text);
    free(p);
    kevo_rundir_free(dir);
    free(path);
}

static void test_checkpoint(void)
{
    char *path = tmp_path("ckpt");
    kevo_error err;
    kevo_error_init(&err);
    char *json = (char *)"unchanged";
    is_int(kevo_rundir_read_checkpoint(path, &json, &err), KEVO_ENOENT,
           "no checkpoint in a missing directory");
    ok(json == NULL, "*json is NULL on failure");
    kevo_rundir *dir = open_ok(path, 0);
    kevo_error_init(&err);
    is_int(kevo_rundir_read_checkpoint(path, &json, &err), KEVO_ENOENT,
           "no checkpoint yet");
    like_str(err.text, "checkpoint.json: cannot open: No such file",
             "its message");

    const char *good = "{\n  \"generation\": 7,\n  \"seed\": 42\n}\n";
    is_int(kevo_rundir_checkpoint(dir, good, &err), KEVO_OK, "checkpoint");
    is_int(kevo_rundir_read_checkpoint(path, &json, &err), KEVO_OK,
           "read it back");
    is_str(json, good, "the text is kept as given");
    free(json);

    const struct {
        const char *text, *needle;
        int line, column;
    } bad[] = {
        {"[1, 2]",
         "the new checkpoint is an array, not a JSON object (line 1, "
         "column 1); the old one is kept",
         1, 1},
        {"\n  \"text\"", "is a string, not a JSON object (line 2, column 3)", 2,
         3},
        {"{\n  \"a\": 1,\n  \"b\": }",
         "the new checkpoint is not valid JSON (line 3, column 8: ", 3, 8},
        {"{\"a\": 1, \"a\": 2}", "duplicate object key", 1, 0},
        {"", "not valid JSON", 0, 0},
        {"{} {}", "not valid JSON", 0, 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kevo_error_init(&err);
        is_int(kevo_rundir_checkpoint(dir, bad[i].text, &err), KEVO_EINVAL,
               "checkpoint %zu refused", i);
        like_str(err.text, bad[i].needle, "its message");
        like_str(err.text, "/ckpt/checkpoint.json: ", "naming the file");
        if (bad[i].line) {
            is_int(err.line, bad[i].line, "err.line");
            if (bad[i].column)
                is_int(err.column, bad[i].column, "err.column");
        }
        is_int(kevo_rundir_read_checkpoint(path, &json, NULL), KEVO_OK,
               "the old checkpoint is still there");
        is_str(json, good, "and untouched");
        free(json);
    }
    kevo_error_init(&err);
    is_int(kevo_rundir_checkpoint(dir, NULL, &err), KEVO_EINVAL, "NULL json");
    kevo_rundir_free(dir);

    /* Damaged files on disk. */
    char *file = join(path, "checkpoint.json");
    const struct {
        const char *text;
        size_t len;
        const char *needle;
        int line;
    } damaged[] = {
        {"{\n  \"a\": 1,\n  \"b\": ", 19, "/ckpt/checkpoint.json:3:", 3},
        {"  [1]", 5,
         "/ckpt/checkpoint.json:1:3: the checkpoint is an array, not a JSON "
         "object",
         1},
        {"{\"a\":\n\"b\0\"}", 11, "/ckpt/checkpoint.json:2:3: a NUL byte", 2},
        {"", 0, "/ckpt/checkpoint.json:1:0: JSON syntax error", 1},
    };
    for (size_t i = 0; i < sizeof damaged / sizeof damaged[0]; i++) {
        write_text(file, damaged[i].text, damaged[i].len);
        kevo_error_init(&err);
        json = NULL;
        is_int(kevo_rundir_read_checkpoint(path, &json, &err), KEVO_EPARSE,
               "damaged checkpoint %zu", i);
        like_str(err.text, damaged[i].needle, "its message");
        is_int(err.line, damaged[i].line, "err.line");
        ok(json == NULL, "nothing returned");
    }
    free(file);
    free(path);
}

static void test_stale_temps(void)
{
    char *path = tmp_path("stale");
    kevo_rundir *dir = open_ok(path, 0);
    kevo_rundir_free(dir);
    const char *stale[] = {"checkpoint.json.tmp.AbC123",
                           "candidates/7.cu.tmp.x1y2z3",
                           "llm/deep/r.json.tmp.000000"};
    const char *kept[] = {"notes.tmp.txt", "candidates/a.tmp.toolong1",
                          "llm/x.tmp.ab"};
    char *deep = join(path, "llm/deep");
    mkdir(deep, 0777);
    free(deep);
    for (size_t i = 0; i < 3; i++) {
        char *p = join(path, stale[i]);
        write_text(p, "partial", 7);
        free(p);
        p = join(path, kept[i]);
        write_text(p, "keep", 4);
        free(p);
    }
    dir = open_ok(path, 0);
    for (size_t i = 0; i < 3; i++) {
        ok(!present(path, stale[i]), "stale %s removed", stale[i]);
        ok(present(path, kept[i]), "%s kept", kept[i]);
    }
    kevo_rundir_free(dir);
    free(path);
}

/* ---- a writer killed in the middle of a checkpoint ---------------------- */

/* Version v of the checkpoint: its number and pad bytes of one letter. */
static size_t make_version(char *buf, size_t pad, long v)
{
    size_t n = (size_t)sprintf(buf, "{\"version\": %ld, \"pad\": \"", v);
    memset(buf + n, 'a' + (int)(v % 26), pad);
    n += pad;
    n += (size_t)sprintf(buf + n, "\"}\n");
    return n;
}

/* Writes versions first, first + 1, ... until killed, and a byte to
 * notify after each. */
static void crash_child(const char *path, size_t pad, long first, int notify)
{
    alarm(300); /* never outlive a parent that failed to kill */
    char *buf = malloc(pad + 128);
    if (!buf)
        _exit(2);
    kevo_rundir *dir = NULL;
    if (kevo_rundir_open(path, 0, &dir, NULL) != KEVO_OK)
        _exit(3);
    for (long v = first;; v++) {
        make_version(buf, pad, v);
        if (kevo_rundir_checkpoint(dir, buf, NULL) != KEVO_OK)
            _exit(4);
        if (write(notify, "v", 1) != 1)
            _exit(5);
    }
}

static size_t count_temps(const char *path)
{
    size_t n = 0;
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void sleep_for(double seconds)
{
    struct timespec d;
    d.tv_sec = (time_t)seconds;
    d.tv_nsec = (long)((seconds - (double)d.tv_sec) * 1e9);
    while (nanosleep(&d, &d) != 0 && errno == EINTR)
        ;
}

/* One round: a writer starting at version first, killed at a moment drawn
 * from rng, within a write of the file when in_write is true. Returns the
 * version found afterwards, which must be whole and not older than floor,
 * or -1 after a failed check. */
static long crash_round(const char *path, size_t pad, char *buf, long first,
                        long floor, bool in_write, kevo_rng *rng,
                        int *left_temp)
{
    int fds[2];
    if (pipe(fds) != 0)
        bail_out("pipe: %s", strerror(errno));
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        bail_out("fork: %s", strerror(errno));
    if (pid == 0) {
        close(fds[0]);
        crash_child(path, pad, first, fds[1]);
    }
    close(fds[1]);
    char c;
    int notified = 0;
    if (in_write) {
        /* Kill while the file is being written: a temporary file beside
         * checkpoint.json exists from its creation to its rename. */
        double give_up = now() + 120;
        while (count_temps(path) == 0 && now() < give_up)
            sleep_for(100e-6);
        sleep_for(0.03 * kevo_rng_uniform(rng) * (double)pad / (20 << 20));
        notified = 2;
    } else {
        /* Wait for two versions to learn how long one takes, then kill at
         * a random moment of the next cycle. */
        double t0 = 0, cycle = 0;
        for (; notified < 2; notified++) {
            if (read(fds[0], &c, 1) != 1)
                break;
            cycle = now() - t0;
            t0 = now();
        }
        if (notified == 2)
            sleep_for(cycle * kevo_rng_uniform(rng));
    }
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    close(fds[0]);
    if (notified < 2 || !WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
        ok(0, "the writer died by SIGKILL only (status %#x)", status);
        return -1;
    }
    *left_temp = count_temps(path) > 0;

    char *json = NULL;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_rundir_read_checkpoint(path, &json, &err) != KEVO_OK) {
        ok(0, "checkpoint readable after the kill: %s", err.text);
        return -1;
    }
    long v = -1;
    /* Two versions were reported complete unless the kill came early. */
    if (!in_write && first + 1 > floor)
        floor = first + 1;
    if (sscanf(json, "{\"version\": %ld,", &v) != 1 || v < floor) {
        ok(0, "version %ld after %ld was complete", v, floor);
        free(json);
        return -1;
    }
    size_t n = make_version(buf, pad, v);
    if (strlen(json) != n || memcmp(json, buf, n) != 0) {
        ok(0, "version %ld is whole", v);
        v = -1;
    }
    free(json);
    return v;
}

static void test_crash(void)
{
    /* Tens of MB; less under valgrind, where parsing is far slower. */
    const char *vg = getenv("KEVO_VALGRIND");
    size_t pad =
        vg && strcmp(vg, "1") == 0 ? (size_t)1 << 20 : (size_t)20 << 20;
    char *path = tmp_path("crash");
    char *buf = malloc(pad + 128);
    if (!buf)
        bail_out("out of memory");
    kevo_rundir *dir = open_ok(path, 0);
    kevo_error err;
    kevo_error_init(&err);
    make_version(buf, pad, 0);
    is_int(kevo_rundir_checkpoint(dir, buf, &err), KEVO_OK, "first checkpoint");
    kevo_rundir_free(dir);

    /* A fixed seed draws the same kill moments every time; whatever the
     * moment, checkpoint.json must be whole and never go back. */
    kevo_rng *rng = kevo_rng_new(20260101, "kill moments");
    const int rounds = 6;
    int good = 0, temps = 0;
    long last = 0;
    for (int round = 1; round <= rounds; round++) {
        int left_temp = 0;
        long v = crash_round(path, pad, buf, (long)round * 100000, last,
                             round % 2 == 0, rng, &left_temp);
        if (v >= 0) {
            good++;
            last = v;
        }
        temps += left_temp;
    }
    is_int(good, rounds,
           "after each of %d kills checkpoint.json is a whole version, never "
           "older than one seen before",
           rounds);
    diag("%d of %d kills left a temporary file (killed while writing)", temps,
         rounds);
    dir = open_ok(path, 0);
    is_uint(count_temps(path), 0, "open removes what the kills left");
    kevo_rundir_free(dir);
    kevo_rng_free(rng);
    free(buf);
    free(path);
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/kevo-rundir-XXXXXX",
             t && *t ? t : "/tmp");
    if (!mkdtemp(tmpdir))
        bail_out("mkdtemp: %s", strerror(errno));
    test_events();
    test_lock();
    test_flags();
    test_cut_line();
    test_write_file();
    test_checkpoint();
    test_stale_temps();
    test_crash();
    rm_rf(tmpdir);
    return done_testing();
}

/*
 * test-task-load.c: loading tasks from JSON. Every bad task in
 * tests/data/tasks/bad/NAME.json must fail with an error whose text holds
 * the line of NAME.err; the good task and the task suite must load,
 * validate and survive a round trip through kevo_task_to_json.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/kevo_private.h"
#include "tap.h"

static char *path_of(const char *dir, const char *name)
{
    char *p = kevo__asprintf("%s/%s", dir, name);
    if (!p)
        bail_out("out of memory");
    return p;
}

/* The first line of a file, without its newline; NULL if unreadable. */
static char *first_line(const char *path)
{
    char *text = NULL;
    if (kevo__read_file(path, true, &text, NULL, NULL) != KEVO_OK)
        return NULL;
    text[strcspn(text, "\r\n")] = '\0';
    return text;
}

static int json_only(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 5 && strcmp(d->d_name + n - 5, ".json") == 0;
}

/* The sorted *.json names of dir in *names; returns how many (-1 when the
 * directory cannot be read). */
static int list_json(const char *dir, struct dirent ***names)
{
    int n = scandir(dir, names, json_only, alphasort);
    if (n < 0) {
        diag("%s: %s", dir, strerror(errno));
        *names = NULL;
    }
    return n;
}

static void free_list(struct dirent **names, int n)
{
    if (!names)
        return;
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static void test_bad_cases(void)
{
    char *dir = path_of(tap_srcdir(), "tests/data/tasks/bad");
    struct dirent **names;
    int n = list_json(dir, &names);
    ok(n >= 18, "tests/data/tasks/bad holds at least 18 cases (%d)", n);
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        char *json = path_of(dir, name);
        char *errfile =
            kevo__asprintf("%.*s.err", (int)(strlen(json) - 5), json);
        char *want = errfile ? first_line(errfile) : NULL;
        ok(want && want[0], "%s: has a .err file with the expected message",
           name);
        kevo_error err;
        kevo_error_init(&err);
        kevo_task *task = (kevo_task *)1;
        kevo_status rc = kevo_task_load(json, &task, &err);
        ok(rc != KEVO_OK && task == NULL, "%s: fails (%s)", name,
           kevo_strerror(rc));
        is_int(err.code, rc, "%s: the error record holds the code", name);
        ok(rc != KEVO_EINVAL, "%s: a bad file is not a bad argument", name);
        if (want)
            like_str(err.text, want, "%s: message", name);
        kevo_task_free(task);
        free(want);
        free(errfile);
        free(json);
    }
    free_list(names, n);
    free(dir);
}

/* Specific codes and places that the messages alone do not show. */
static void test_bad_details(void)
{
    char *dir = path_of(tap_srcdir(), "tests/data/tasks/bad");
    char *path = path_of(dir, "syntax_error.json");
    kevo_error err;
    kevo_error_init(&err);
    kevo_task *task = NULL;
    is_int(kevo_task_load(path, &task, &err), KEVO_EPARSE,
           "syntax error: KEVO_EPARSE");
    is_int(err.line, 4, "syntax error: line");
    ok(err.column > 0, "syntax error: column %d", err.column);
    is_str(err.source, path, "syntax error: source is the file");
    free(path);

    path = path_of(dir, "missing_reference_file.json");
    kevo_error_init(&err);
    is_int(kevo_task_load(path, &task, &err), KEVO_ENOENT,
           "missing reference file: KEVO_ENOENT");
    like_str(err.text,
             "tests/data/tasks/bad/nope_ref.cu': No such file or "
             "directory",
             "missing reference file: names the path tried");
    free(path);

    path = path_of(dir, "memory_limit_exceeded.json");
    kevo_error_init(&err);
    is_int(kevo_task_load(path, &task, &err), KEVO_ELIMIT,
           "memory limit: KEVO_ELIMIT");
    free(path);

    path = path_of(dir, "constraint_fails.json");
    kevo_error_init(&err);
    is_int(kevo_task_load(path, &task, &err), KEVO_ECONSTRAINT,
           "failing constraint: KEVO_ECONSTRAINT");
    free(path);

    path = path_of(dir, "count_undefined.json");
    kevo_error_init(&err);
    is_int(kevo_task_load(path, &task, &err), KEVO_EUNDEFINED,
           "undefined name in a count: KEVO_EUNDEFINED");
    free(path);

    path = path_of(dir, "count_syntax.json");
    kevo_error_init(&err);
    is_int(kevo_task_load(path, &task, &err), KEVO_EPARSE,
           "bad count expression: KEVO_EPARSE");
    free(path);

    kevo_error_init(&err);
    is_int(kevo_task_load("/nonexistent/task.json", &task, &err), KEVO_ENOENT,
           "a task file that does not exist: KEVO_ENOENT");
    like_str(err.text, "/nonexistent/task.json", "... naming it");

    kevo_error_init(&err);
    is_int(kevo_task_load_string("{\"name\": ", NULL, NULL, &task, &err),
           KEVO_EPARSE, "load_string: syntax error");
    like_str(err.text, "<string>:1:", "... names <string> and the line");

    kevo_error_init(&err);
    is_int(kevo_task_load_string("[1]", "mem.json", NULL, &task, &err),
           KEVO_EINVALID, "load_string: not an object");
    like_str(err.text, "mem.json: $: expected an object", "... with origin");

    kevo_error_init(&err);
    is_int(kevo_task_load_string(NULL, NULL, NULL, &task, &err), KEVO_EINVAL,
           "load_string: NULL text");
    is_int(kevo_task_load_string("{}", NULL, NULL, NULL, NULL), KEVO_EINVAL,
           "load_string: NULL out");
    free(dir);
}

static char *to_json(const kevo_task *task)
{
    char *json = NULL;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_task_to_json(task, &json, &err) != KEVO_OK)
        diag("to_json: %s", err.text);
    return json;
}

/* Loads path, writes it, loads the text again and writes that: the two
 * texts must be equal. Returns the first text (or NULL). */
static char *round_trip(const char *path, const char *label)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_task *task = NULL, *again = NULL;
    kevo_status rc = kevo_task_load(path, &task, &err);
    is_int(rc, KEVO_OK, "%s: loads", label);
    if (rc != KEVO_OK) {
        diag("%s", err.text);
        return NULL;
    }
    char *json = to_json(task);
    ok(json != NULL, "%s: to_json", label);
    rc = kevo_task_load_string(json ? json : "", NULL, NULL, &again, &err);
    is_int(rc, KEVO_OK, "%s: its JSON loads again (sources inline)", label);
    if (rc != KEVO_OK)
        diag("%s", err.text);
    char *json2 = again ? to_json(again) : NULL;
    is_str(json2, json, "%s: to_json of the reloaded task is the same", label);
    kevo_error_init(&err);
    is_int(kevo_task_validate(task, &err), KEVO_OK, "%s: validates", label);
    free(json2);
    kevo_task_free(again);
    kevo_task_free(task);
    return json;
}

static void test_good(void)
{
    char *path = path_of(tap_srcdir(), "tests/data/tasks/good.json");
    kevo_error err;
    kevo_error_init(&err);
    kevo_task *task = NULL;
    kevo_status rc = kevo_task_load(path, &task, &err);
    is_int(rc, KEVO_OK, "good.json loads");
    if (rc != KEVO_OK) {
        diag("%s", err.text);
        free(path);
        return;
    }
    is_str(kevo_task_name(task), "scale", "name");
    is_str(kevo_task_description(task), "y = alpha * x over n floats.",
           "description");
    is_str(kevo_task_origin(task), path, "origin is the file");
    is_uint(kevo_task_dim_count(task), 1, "one dim");
    is_uint(kevo_task_arg_count(task), 4, "four arguments");
    kevo_arg_info info = {.size = sizeof info};
    is_int(kevo_task_arg_info(task, 0, &info), KEVO_OK, "arg 0 info");
    is_int(info.dist, KEVO_DIST_NORMAL, "x: normal");
    is_double(info.dist_b, 2, 0, "x: std 2");
    kevo_task_arg_info(task, 1, &info);
    is_double(info.rtol, 1e-6, 0, "y: its own rtol");
    kevo_task_arg_info(task, 2, &info);
    is_int(info.dist, KEVO_DIST_UNIFORM, "alpha: uniform");
    is_double(info.dist_a, -2, 0, "alpha: lo");
    kevo_task_arg_info(task, 3, &info);
    is_str(info.value, "n", "n: value");
    is_uint(kevo_task_shape_count(task, KEVO_SHAPES_TRAIN), 3, "3 shapes");
    is_uint(kevo_task_shape_count(task, KEVO_SHAPES_HELD_OUT), 1,
            "1 held-out shape");
    is_int(kevo_task_shape(task, KEVO_SHAPES_HELD_OUT, 0)[0], 3001,
           "held-out n");
    is_uint(kevo_task_memory_limit(task), 1ull << 30, "memory limit 1GiB");
    is_uint(kevo_task_input_seed(task), 7, "input seed");
    is_uint(kevo_task_descriptor_count(task), 3, "3 descriptors");
    is_str(kevo_task_descriptor_name(task, 2), "occupancy", "descriptor 2");
    const kevo_paramspace *ps = kevo_task_params(task);
    is_uint(kevo_paramspace_count(ps), 3, "3 task parameters");
    is_str(kevo_paramspace_name(ps, 0), "UNROLL", "declaration order kept");
    is_uint(kevo_paramspace_domain_size(ps, 1), 4, "TILE: pow2(8..64)");
    is_int(kevo_paramspace_default(ps, 2), 1, "STAGES: default is the first");
    is_str(kevo_candidate_origin(kevo_task_seed(task)), "ok_seed.cu",
           "seed origin as written");
    size_t index;
    is_int(kevo_paramspace_find(kevo_candidate_params(kevo_task_seed(task)),
                                "UNROLL", &index),
           KEVO_OK, "the seed holds the task's parameters");
    kevo_task_free(task);

    char *first = round_trip(path, "good.json");
    char *second = round_trip(path, "good.json again");
    is_str(second, first, "loading the same file twice gives the same JSON");
    like_str(first, "\"code\": \"// Reference kernel",
             "sources are written inline");
    like_str(first, "\"memory_limit\": \"1GiB\"", "memory limit as a size");
    free(first);
    free(second);
    free(path);
}

/* Sources named by file are looked up in base_dir. */
static void test_base_dir(void)
{
    const char *json =
        "{\"name\": \"t\", \"dims\": [\"n\"],"
        " \"args\": [{\"name\": \"x\", \"type\": \"f32\", \"role\": \"in\","
        "             \"count\": \"n\"},"
        "            {\"name\": \"y\", \"type\": \"f32\", \"role\": \"out\","
        "             \"count\": \"n\"},"
        "            {\"name\": \"alpha\", \"type\": \"f32\", \"value\": 0.1},"
        "            {\"name\": \"n\", \"type\": \"i32\", \"value\": 7}],"
        " \"reference\": \"ok_ref.cu\", \"seed\": \"ok_seed.cu\","
        " \"cost\": {\"bytes\": 4096}, \"shapes\": [{\"n\": 64}],"
        " \"input_seed\": \"18446744073709551615\"}";
    char *dir = path_of(tap_srcdir(), "tests/data/tasks");
    kevo_error err;
    kevo_error_init(&err);
    kevo_task *task = NULL;
    is_int(kevo_task_load_string(json, "inline", dir, &task, &err), KEVO_OK,
           "load_string finds sources in base_dir");
    if (!task) {
        diag("%s", err.text);
        free(dir);
        return;
    }
    is_str(kevo_task_origin(task), "inline", "origin of a string");
    kevo_arg_info info = {0};
    kevo_task_arg_info(task, 2, &info);
    is_str(info.value, "0.1", "a float value keeps its shortest text");
    kevo_task_arg_info(task, 3, &info);
    is_str(info.value, "7", "an integer value becomes its text");
    is_uint(kevo_task_input_seed(task), UINT64_MAX, "a seed as a string");
    char *text = to_json(task);
    kevo_task *again = NULL;
    is_int(kevo_task_load_string(text ? text : "", NULL, NULL, &again, &err),
           KEVO_OK, "round trip without a base_dir");
    char *text2 = again ? to_json(again) : NULL;
    is_str(text2, text, "... gives the same JSON");
    free(text);
    free(text2);
    kevo_task_free(again);
    kevo_task_free(task);

    kevo_error_init(&err);
    is_int(kevo_task_load_string(json, "inline", "/nonexistent", &task, &err),
           KEVO_ENOENT, "a base_dir without the sources");
    like_str(err.text,
             "inline: $.reference: cannot open '/nonexistent/ok_ref.cu': No "
             "such file or directory",
             "... names the JSON path and the path tried");
    free(dir);
}

static void test_suite(void)
{
    char *dir = path_of(tap_srcdir(), "examples/tasks");
    struct dirent **names;
    int n = list_json(dir, &names);
    ok(n >= 13, "examples/tasks holds at least 13 tasks (%d)", n);
    for (int i = 0; i < n; i++) {
        char *path = path_of(dir, names[i]->d_name);
        free(round_trip(path, names[i]->d_name));
        free(path);
    }
    free_list(names, n);
    free(dir);
}

int main(void)
{
    test_bad_cases();
    test_bad_details();
    test_good();
    test_base_dir();
    test_suite();
    return done_testing();
}

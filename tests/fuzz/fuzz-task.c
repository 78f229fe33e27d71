/*
 * fuzz-task.c: the task loader on arbitrary bytes. Whatever the input,
 * loading either fails cleanly (no task, an error that says why) or gives a
 * task whose JSON loads again and writes back the same text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kevo.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Sources named by file are looked up beside the test tasks. */
static const char *base_dir(void)
{
    static char dir[4096];
    static int done;
    if (!done) {
        const char *src = getenv("KEVO_SRCDIR");
        if (src && *src)
            snprintf(dir, sizeof dir, "%s/tests/data/tasks", src);
        done = 1;
    }
    return dir[0] ? dir : NULL;
}

/* Writes task as JSON, loads the text and writes it again: both texts must
 * be equal. */
static void round_trip(const kevo_task *task)
{
    kevo_error err;
    kevo_error_init(&err);
    char *json = NULL, *again = NULL;
    kevo_task *copy = NULL;
    if (kevo_task_to_json(task, &json, &err) != KEVO_OK)
        abort();
    if (kevo_task_load_string(json, "round-trip", NULL, &copy, &err) !=
        KEVO_OK) {
        fprintf(stderr, "%s\n%s\n", err.text, json);
        abort();
    }
    if (kevo_task_to_json(copy, &again, &err) != KEVO_OK ||
        strcmp(json, again) != 0)
        abort();
    free(json);
    free(again);
    kevo_task_free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    kevo_error err;
    kevo_error_init(&err);
    kevo_task *task = (kevo_task *)&err; /* must be overwritten */
    kevo_status rc =
        kevo_task_load_string(text, "fuzz.json", base_dir(), &task, &err);
    if (rc == KEVO_OK) {
        if (!task || kevo_task_validate(task, NULL) != KEVO_OK)
            abort();
        round_trip(task);
        kevo_task_free(task);
    } else if (task != NULL || err.code != rc || err.text[0] == '\0') {
        abort(); /* a failure must say why and leave nothing behind */
    }
    free(text);
    return 0;
}

/*
 * test-task-keys.c: the tasks a GPU worker holds by key, as both ends of
 * its pipes count them (lib/proc/task_keys.h): keys kept and used, the
 * least recently used one dropped to make room, values freed, bad keys;
 * and the two ends agreeing when they make the same moves. The real
 * worker is driven through the same moves in tests/gpu/gpu-worker.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/task_keys.h"
#include "tap.h"

static int freed;

static void free_value(void *v)
{
    freed++;
    free(v);
}

static char *value(int i)
{
    char *s = malloc(16);
    if (!s)
        bail_out("out of memory");
    snprintf(s, 16, "task %d", i);
    return s;
}

static const char *key(int i)
{
    static char buf[4][32];
    char *b = buf[i & 3];
    snprintf(b, sizeof buf[0], "%016x", (unsigned)(0x1000 + i));
    return b;
}

static void test_use_and_put(void)
{
    kevo__task_keys t;
    kevo_error err = KEVO__ERROR_INIT;
    kevo__task_keys_init(&t, free_value);
    freed = 0;
    void *v = (void *)1;
    ok(!kevo__task_keys_use(&t, key(0), &v) && v == (void *)1,
       "an empty table holds no key, and leaves *value alone");
    ok(!kevo__task_keys_use(&t, NULL, NULL), "nor NULL");
    is_int(kevo__task_keys_put(&t, key(0), value(0), &err), KEVO_OK, "put");
    ok(kevo__task_keys_use(&t, key(0), &v) && strcmp(v, "task 0") == 0,
       "the key is held, with its value");
    ok(kevo__task_keys_use(&t, key(0), NULL), "value may be NULL");
    is_uint(kevo__task_keys_count(&t), 1, "one key");
    is_int(kevo__task_keys_put(&t, key(0), value(10), &err), KEVO_OK,
           "the same key again");
    is_int(freed, 1, "its old value is freed");
    kevo__task_keys_use(&t, key(0), &v);
    is_str(v, "task 10", "the key has the new value");
    is_uint(kevo__task_keys_count(&t), 1, "still one key");

    char long_key[KEVO__TASK_KEY_MAX + 2];
    memset(long_key, 'k', sizeof long_key - 1);
    long_key[sizeof long_key - 1] = '\0';
    kevo_error_init(&err);
    is_int(kevo__task_keys_put(&t, long_key, value(1), &err), KEVO_EINVAL,
           "a key over the limit");
    is_str(err.text, "a task key must have 1 to 64 bytes; this one has 65",
           "says how long it is");
    is_int(freed, 2, "the value is freed on failure too");
    kevo_error_init(&err);
    is_int(kevo__task_keys_put(&t, "", NULL, &err), KEVO_EINVAL, "empty key");
    long_key[KEVO__TASK_KEY_MAX] = '\0';
    is_int(kevo__task_keys_put(&t, long_key, NULL, NULL), KEVO_OK,
           "a key of exactly the limit");
    ok(kevo__task_keys_use(&t, long_key, NULL), "is held");

    kevo__task_keys_forget(&t, key(0));
    ok(!kevo__task_keys_use(&t, key(0), NULL), "a forgotten key is gone");
    is_int(freed, 3, "and its value freed");
    kevo__task_keys_forget(&t, key(5));
    is_uint(kevo__task_keys_count(&t), 1, "forgetting a key not held: no-op");
    kevo__task_keys_clear(&t);
    is_uint(kevo__task_keys_count(&t), 0, "cleared: nothing held");
    kevo__task_keys_clear(&t);
}

static void test_least_recently_used(void)
{
    kevo__task_keys t;
    kevo__task_keys_init(&t, free_value);
    freed = 0;
    int n = KEVO__TASK_KEYS_MAX;
    for (int i = 0; i < n; i++)
        kevo__task_keys_put(&t, key(i), value(i), NULL);
    is_uint(kevo__task_keys_count(&t), (size_t)n, "full: %d keys", n);
    is_int(freed, 0, "nothing dropped yet");
    /* Key 0 is used again: key 1 is now the least recently used. */
    ok(kevo__task_keys_use(&t, key(0), NULL), "key 0 used");
    kevo__task_keys_put(&t, key(n), value(n), NULL);
    is_uint(kevo__task_keys_count(&t), (size_t)n, "still full");
    is_int(freed, 1, "one value freed to make room");
    ok(!kevo__task_keys_use(&t, key(1), NULL),
       "the least recently used key went");
    ok(kevo__task_keys_use(&t, key(0), NULL) &&
           kevo__task_keys_use(&t, key(n), NULL) &&
           kevo__task_keys_use(&t, key(2), NULL),
       "the others stay");
    /* Room made by forgetting is used before anything is dropped. */
    kevo__task_keys_forget(&t, key(3));
    kevo__task_keys_put(&t, key(n + 1), value(n + 1), NULL);
    ok(kevo__task_keys_use(&t, key(4), NULL),
       "a free slot is taken before a key is dropped");
    kevo__task_keys_clear(&t);
    is_int(freed, n + 2, "every value was freed once");
}

/* The evaluator's side (no values) and the worker's side (values), making
 * the same moves over more keys than fit: they agree on every key. */
static void test_both_ends(void)
{
    kevo__task_keys client, worker;
    kevo__task_keys_init(&client, NULL);
    kevo__task_keys_init(&worker, free_value);
    unsigned state = 12345;
    int disagree = 0, sent = 0;
    for (int step = 0; step < 2000; step++) {
        state = state * 1103515245u + 12345u;
        int k = (int)((state >> 16) % (2 * KEVO__TASK_KEYS_MAX));
        char name[32];
        snprintf(name, sizeof name, "task-%d", k);
        /* What the evaluator does before each eval message... */
        if (!kevo__task_keys_use(&client, name, NULL)) {
            kevo__task_keys_put(&worker, name, value(k), NULL);
            kevo__task_keys_put(&client, name, NULL, NULL);
            sent++;
        }
        /* ...and what the worker does on reading it. */
        disagree += !kevo__task_keys_use(&worker, name, NULL);
    }
    is_int(disagree, 0,
           "over 2000 evals of %d tasks, the worker always held "
           "the task the evaluator thought it held",
           2 * KEVO__TASK_KEYS_MAX);
    ok(sent > KEVO__TASK_KEYS_MAX && sent < 2000,
       "tasks were sent again after being dropped, but not for every eval "
       "(%d sent)",
       sent);
    kevo__task_keys_clear(&worker);
    kevo__task_keys_clear(&client);
}

int main(void)
{
    test_use_and_put();
    test_least_recently_used();
    test_both_ends();
    return done_testing();
}

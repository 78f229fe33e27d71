/*
 * task_keys.h: the tasks a GPU worker holds, by key, counted the same way
 * at both ends of its pipes.
 *
 * The evaluator sends a task to a GPU worker once, in a "task" message
 * with the task's key, and names it by the key alone in each "eval"
 * message after (worker/gpu_eval.h gives the messages). The worker keeps
 * at most KEVO__TASK_KEYS_MAX tasks, and to make room drops the one least
 * recently used; the evaluator's side keeps the same table without the
 * tasks, making the same moves (kevo__task_keys_use for every eval sent,
 * kevo__task_keys_put for every task the worker took), and so knows which
 * keys the worker has without asking. Should the two ever disagree, the
 * worker answers an eval of a key it does not hold with an error naming
 * the key (see gpu_eval.h), and the evaluator sends the task again.
 *
 * A table is a plain struct: kevo__task_keys_init it, kevo__task_keys_clear
 * it to drop everything (what a new worker process holds).
 */
#ifndef KEVO_TASK_KEYS_H
#define KEVO_TASK_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/kevo_private.h"

/* How many tasks a GPU worker keeps. */
#define KEVO__TASK_KEYS_MAX 16

/* The longest key, in bytes. */
#define KEVO__TASK_KEY_MAX 64

typedef struct kevo__task_keys {
    struct {
        char key[KEVO__TASK_KEY_MAX + 1]; /* "" for a free slot */
        void *value;                      /* owned; may be NULL */
        uint64_t used;                    /* the clock at the last use */
    } slot[KEVO__TASK_KEYS_MAX];
    uint64_t clock;
    void (*free_value)(void *value); /* NULL: values are not freed */
} kevo__task_keys;

/* An empty table whose values free_value frees (may be NULL). */
void kevo__task_keys_init(kevo__task_keys *t, void (*free_value)(void *));

/* Drops every key and frees its value. */
void kevo__task_keys_clear(kevo__task_keys *t);

/* How many keys the table holds. */
size_t kevo__task_keys_count(const kevo__task_keys *t);

/*
 * kevo__task_keys_use: true when the table holds key, which then counts as
 * the most recently used; its value (borrowed) in *value when value is not
 * NULL. False for a key it does not hold (or NULL).
 */
bool kevo__task_keys_use(kevo__task_keys *t, const char *key, void **value);

/*
 * kevo__task_keys_put: adds key with value (taken: freed on failure too),
 * as the most recently used. A key already there gets the new value; when
 * the table is full, the least recently used key goes, and its value is
 * freed. Returns KEVO_OK, or KEVO_EINVAL for a key that is NULL, empty or
 * longer than KEVO__TASK_KEY_MAX bytes (the message says which).
 */
kevo_status kevo__task_keys_put(kevo__task_keys *t, const char *key,
                                void *value, kevo_error *err);

/* Drops key (and frees its value) if the table holds it. */
void kevo__task_keys_forget(kevo__task_keys *t, const char *key);

#endif

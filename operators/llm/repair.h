/*
 * repair.h: the llm operator's repair turns (operator ABI 1.2). When a
 * child fails, kevo hands the failure back with its diagnostic, and the
 * operator asks the same model again in the same conversation: the system
 * text, the user text and the model's own reply that gave the child, then
 * a user turn saying what went wrong. For that the operator keeps the
 * conversations of its recent children, bounded (LLM_CONVOS_MAX of them
 * and LLM_CONVOS_BYTES of text, the oldest forgotten first); a repair of a
 * child whose conversation was forgotten (or of a resumed run) starts a
 * new conversation that shows the failed kernel and the diagnostic.
 */
#ifndef KEVO_LLM_REPAIR_H
#define KEVO_LLM_REPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/* The most conversations kept, and the most bytes of their texts. */
#define LLM_CONVOS_MAX 64
#define LLM_CONVOS_BYTES ((size_t)16 << 20)

/* A conversation: the system text and the turns, alternating user and
 * assistant, the first and the last a user's. */
typedef struct llm_convo {
    char *system;
    char **turns;
    size_t nturns;
} llm_convo;

void kevo__llm_convo_free(llm_convo *c);

/* A copy of c with reply (the assistant's) and next (the user's) appended;
 * false when out of memory (*out is then empty). */
bool kevo__llm_convo_extend(const llm_convo *c, const char *reply,
                            const char *next, llm_convo *out);

/* The conversations that gave children, by the child's request and
 * attempt number (the host's numbering of emit_child calls). */
typedef struct llm_convo_entry {
    uint64_t request;
    uint32_t attempt;
    llm_convo convo; /* up to the user turn the reply answered */
    char *reply;
    size_t bytes;
} llm_convo_entry;

typedef struct llm_convos {
    llm_convo_entry *e; /* the oldest first */
    size_t n, cap;
    size_t bytes;
} llm_convos;

/* Keeps a copy of the conversation c and the reply that gave attempt
 * attempt of request request, forgetting the oldest beyond the bounds.
 * Out of memory, nothing is kept. */
void kevo__llm_convos_put(llm_convos *cs, uint64_t request, uint32_t attempt,
                          const llm_convo *c, const char *reply);

/* The conversation of that attempt, borrowed until the next put, or
 * NULL. */
const llm_convo_entry *
kevo__llm_convos_find(const llm_convos *cs, uint64_t request, uint32_t attempt);

void kevo__llm_convos_free(llm_convos *cs);

/* The user turn that asks for a repair: what failed (kind), kevo's
 * diagnostic, and the reply format; turns_left says how many more repairs
 * may follow. A new string, or NULL when out of memory. */
char *kevo__llm_repair_text(const char *kind, const char *diagnostic,
                            uint32_t turns_left, llm_reply_format format);

/* A conversation for a repair without the original one: a system text
 * and a user turn that shows the task's arguments, the failed source and
 * the repair text. false when out of memory. */
bool kevo__llm_repair_fresh(const char *task_name, const char *task_args,
                            const char *source, const char *repair_text,
                            llm_convo *out);

#endif

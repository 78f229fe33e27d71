/*
 * prompt_failures.h: what the llm operator's prompts say of failures
 * (operator ABI 1.2): a child prompt lists the recent failed attempts from
 * its parent, briefly, so that the model does not repeat them; a revision
 * prompt says how the prompt's children failed (a count per kind) and
 * shows a few failed children with kevo's diagnostic.
 */
#ifndef KEVO_LLM_PROMPT_FAILURES_H
#define KEVO_LLM_PROMPT_FAILURES_H

#include <stdbool.h>
#include <stddef.h>

#include <kevo/operator.h>

#include "buf.h"

/* At most this many failed attempts are listed in a child prompt. */
#define LLM_PROMPT_FAILURES_MAX 3

/* Appends the section of a child prompt on the parent's recent failed
 * attempts (nothing when n is 0). */
void kevo__llm_prompt_failures(llm_buf *b, const kevo_operator_failure *f,
                               size_t n);

/* Puts the section of a revision prompt on the prompt's failures (from
 * rev's failure_kinds and failed_children) into *user, a revision prompt's
 * user text (replaced by a new string), before its "# Reply format"
 * heading, or at its end. Nothing changes when rev has no failures. false
 * when out of memory (*user is then unchanged). */
bool kevo__llm_revision_failures(char **user,
                                 const kevo_operator_revision *rev);

#endif

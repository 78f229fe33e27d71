/*
 * prompt.h: the llm operator's prompts: a system text and a user text built
 * from what the host shows the operator: the task (description, argument
 * list, dimensions and training shapes, cost model), the device's ceilings,
 * the parent's source and its evaluation, a second parent for crossover,
 * inspirations with their scores, a target behaviour cell, the sections of
 * the chosen meta-prompt, and the reply format. A request to revise a
 * meta-prompt has its own prompt: the task, the meta-prompt's sections, its
 * record, its best and worst children side by side, and the reply format
 * that revision.h parses.
 *
 * The system text states the job, how kevo judges a kernel and the rules
 * it enforces (headers, the kevo:launch and kevo:param blocks, scratch
 * buffers, parameters as -D macros, shared memory). Evaluations and the
 * device are put into plain lines (prompt_eval.h): no JSON reaches the
 * model, save in the revision prompt the one block of sections it must
 * echo. Only what the host gives appears: the host never shows held-out
 * shapes, and keys whose name starts with "held_out" are dropped as well.
 */
#ifndef KEVO_LLM_PROMPT_H
#define KEVO_LLM_PROMPT_H

#include <stdbool.h>
#include <stddef.h>

#include <kevo/operator.h>

#include "prompt_eval.h"
#include "wire.h"

/* A candidate as the prompt shows it. Every field may be NULL. An
 * inspiration's or second parent's assignment, when NULL, is read from its
 * summary. */
typedef struct llm_prompt_candidate {
    const char *source;
    const char *summary_json;    /* its evaluation (a JSON object) */
    const char *assignment_json; /* its parameter values */
    const char *params_json;     /* its parameter space */
} llm_prompt_candidate;

typedef struct llm_prompt_input {
    const char *task_name;
    const char *task_description;
    const char *task_args;   /* a line per argument */
    const char *task_dims;   /* {"dims": [...], "shapes": [{...}, ...]} */
    const char *task_cost;   /* "bytes: EXPR\nflops: EXPR\npeak: fp32\n" */
    const char *device_json; /* the host's device_json() */
    llm_prompt_candidate parent;
    const llm_prompt_candidate *second_parent; /* crossover, or NULL */
    const llm_prompt_candidate *inspirations;
    size_t n_inspirations;
    const char *target_cell_json; /* or NULL */
    /* The meta-prompt's sections, or none. */
    const kevo_operator_text *sections;
    size_t n_sections;
    /* The headers a kernel may include, as kevo lists them (the host's
     * include_rule()). */
    const char *include_rule;
    llm_reply_format format;
    size_t max_log_lines;
    size_t max_inspirations;
    /* Recent failed attempts from the parent (prompt_failures.h), or
     * NULL. */
    const struct kevo_operator_failure *failures;
    size_t n_failures;
} llm_prompt_input;

/* Builds the prompt into two new strings (valid UTF-8). Returns false with
 * a reason in err when memory runs out; JSON that does not parse is shown
 * as it is. */
bool kevo__llm_prompt_build(const llm_prompt_input *in, char **system,
                            char **user, char *err, size_t errlen);

/* What a revision prompt shows. At least one section is required; every
 * other field may be NULL. */
typedef struct llm_revision_input {
    const char *task_name;
    const char *task_description;
    const char *task_args;
    const char *prompt_name;
    const kevo_operator_text *sections; /* the prompt's */
    size_t n_sections;
    const kevo_prompt_record *record; /* what its children did */
    llm_prompt_candidate best;        /* source and summary_json */
    llm_prompt_candidate worst;
    size_t max_log_lines;
} llm_revision_input;

/* Builds the revision prompt into two new strings (valid UTF-8). The user
 * text holds the sections once as a ```json block, its only one. Returns
 * false with a reason in err when there is no section or memory runs
 * out. */
bool kevo__llm_revision_prompt_build(const llm_revision_input *in,
                                     char **system, char **user, char *err,
                                     size_t errlen);

#endif

/*
 * llm_search.h: what the tests of whole searches through the llm
 * operator's transports (test-search-files, test-search-batch) share: a
 * scoring function that scores a child by its source alone and keeps the
 * trace of what it saw, the search they run (saxpy's task, six
 * evaluations, seed 7, one request at a time unless said otherwise), the
 * five kernels the loopback server answers with, and what a run's
 * events.jsonl says of failures.
 */
#ifndef KEVO_TEST_LLM_SEARCH_H
#define KEVO_TEST_LLM_SEARCH_H

#include <stdbool.h>

#include <kevo.h>

#include "loopback-server.h"

/* What the scoring function saw, in order: "fitness source-hash" lines. */
typedef struct llm_scorer {
    char *trace;
    size_t len;
    unsigned calls;
} llm_scorer;

/* Registers the texts k0 ... k4 with srv: the kernels of
 * tests/data/llm-variants in a reply's ```cuda fence. */
void llm_search_texts(loopback *srv);

/* Loads examples/tasks/saxpy.json (bails out when it cannot). */
kevo_task *llm_search_task(void);

/* A search of task scored into sc, with the llm operator configured by
 * models, max_evals evaluations, depth requests in flight at most, seed 7,
 * no inspirations and no prompt revisions, opened in run with flags;
 * bails out when it cannot be set up. */
kevo_search *llm_search_new(const kevo_task *task, llm_scorer *sc,
                            const char *models, const char *run, unsigned flags,
                            long max_evals, long depth);

/* Whether path exists. */
bool llm_search_exists(const char *path);

/* The failure events of run's events.jsonl, a "kind: reason" line each, in
 * a new string. */
char *llm_search_failures(const char *run);

/* Removes from text, in place, the lines that name a run directory
 * ("/run-..."); returns text. */
char *llm_search_strip_runs(char *text);

/* Whether the runs a and b wrote the same best.cu (their run directories
 * aside). */
bool llm_search_same_best(const char *a, const char *b);

#endif

/*
 * llm_search.h: the scored search with the llm operator that the tests of
 * whole searches through its transports run (test-search-files,
 * test-search-batch, and relay-search for tests/relay.sh and
 * tests/mpi-relay.sh): saxpy, seed 7, no inspirations, no prompt
 * revisions, a score that is a function of the child's source alone (so
 * that a child scores the same on any rank and in any run; a child that
 * calls __ldg4 fails as a compile error), and the trace
 * of the children judged, in order; with what those tests share besides:
 * the five kernels the loopback server answers with, and what a run's
 * files say.
 */
#ifndef KEVO_TEST_LLM_SEARCH_H
#define KEVO_TEST_LLM_SEARCH_H

#include <stdbool.h>

#include <kevo.h>

#include "loopback-server.h"

/* "fitness source-hash" lines, one a judged child, in order. */
typedef struct llm_trace {
    char *text;
    size_t len;
    unsigned judged;
} llm_trace;

/*
 * A search of task with the llm operator configured by models (JSON), at
 * most evals evaluations with depth requests in flight at most, the
 * scoring above and the trace in tr; over farm's ranks when farm is not
 * NULL; with the run directory run (flags: kevo_search_open_run's,
 * KEVO_SEARCH_RUN_RESUME to go on), opened on rank 0 only. Returns the
 * search, or NULL with err set.
 */
kevo_search *llm_search_new(const kevo_task *task, llm_trace *tr,
                            const char *models, long evals, long depth,
                            kevo_farm *farm, const char *run, unsigned flags,
                            kevo_error *err);

/* llm_search_new() in one process for a TAP test: bails out when the
 * search cannot be set up. */
kevo_search *llm_search_open(const kevo_task *task, llm_trace *tr,
                             const char *models, long evals, long depth,
                             const char *run, unsigned flags);

void llm_trace_free(llm_trace *tr);

/* Registers the texts k0 ... k4 with srv: the kernels of
 * tests/data/llm-variants in a reply's ```cuda fence; and kf, a kernel that
 * calls __ldg4 (tests/data/llm-variants-styles/1-compile-error.cu), which
 * the scoring fails as a compile error, to be repaired. */
void llm_search_texts(loopback *srv);

/* saxpy, with the build tree's plugins on the operator path
 * (farm_search_saxpy()); bails out when it cannot be loaded. */
kevo_task *llm_search_task(void);

/* Whether path exists. */
bool llm_search_exists(const char *path);

/* The failure events of run's events.jsonl, a "kind: reason" line each, in
 * a new string. */
char *llm_search_failures(const char *run);

/* The evaluations of run's events.jsonl, "N id ID parents [..] VERDICT
 * FITNESS source HASH" a line each (HASH: of candidates/ID.cu, 0 without
 * it), in a new string; those a resumed run made again (logged before its
 * "resume" event, after the evaluation it names) are left out. */
char *llm_search_evals(const char *run);

/* Removes from text, in place, the lines that name a run directory
 * ("/run-..."); returns text. */
char *llm_search_strip_runs(char *text);

/* Whether the runs a and b wrote the same best.cu (their run directories
 * aside). */
bool llm_search_same_best(const char *a, const char *b);

#endif

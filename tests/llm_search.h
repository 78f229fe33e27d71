/*
 * llm_search.h: the scored search with the llm operator that
 * test-search-files and relay-search run: saxpy, seed 7, depth 1, no
 * inspirations, no prompt revisions, a score that is a function of the
 * child's source alone (so that a child scores the same on any rank and in
 * any run), and the trace of the children judged, in order.
 */
#ifndef KEVO_TEST_LLM_SEARCH_H
#define KEVO_TEST_LLM_SEARCH_H

#include <kevo.h>

/* "fitness source-hash" lines, one a judged child, in order. */
typedef struct llm_trace {
    char *text;
    size_t len;
    unsigned judged;
} llm_trace;

/*
 * A search of task with the llm operator configured by models (JSON), at
 * most evals evaluations, the scoring above and the trace in tr; over
 * farm's ranks when farm is not NULL; with the run directory run (flags:
 * kevo_search_open_run's, KEVO_SEARCH_RUN_RESUME to go on), opened on rank
 * 0 only. Returns the search, or NULL with err set.
 */
kevo_search *llm_search_new(const kevo_task *task, llm_trace *tr,
                            const char *models, long evals, kevo_farm *farm,
                            const char *run, unsigned flags, kevo_error *err);

void llm_trace_free(llm_trace *tr);

#endif

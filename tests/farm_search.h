/*
 * farm_search.h: the scored search that test-farm and mpi-search run on
 * one rank and on several: saxpy's parameters, children from the real
 * params plugin, a score that is a function of the parameters (so that
 * every rank gives the same one), and the trace of the decisions the
 * search made (each judged child's id and parameters, in order).
 */
#ifndef KEVO_TEST_FARM_SEARCH_H
#define KEVO_TEST_FARM_SEARCH_H

#include <kevo.h>

/* The rank a member scoring candidates ends itself on (exit status 3)
 * when it scores its die_at-th candidate; 0: none. */
typedef struct farm_scoring {
    int rank; /* this process's */
    int die_rank;
    unsigned die_at;
    int nan;         /* at that score, give fitness NaN instead of ending */
    unsigned scored; /* by this process */
} farm_scoring;

typedef struct farm_trace {
    char *text; /* "id:BLOCK/VEC/ITEMS=fitness " per judged child */
    size_t len, cap;
    unsigned judged;
    unsigned duplicates; /* ids judged twice */
    unsigned long long *ids;
} farm_trace;

/*
 * A search of task (examples/tasks/saxpy.json under srcdir) with seed 11,
 * depth 8, evals children and the scoring above; with farm set on it when
 * farm is not NULL; with the run directory run (NULL: none; resume: go on
 * from its checkpoint). Returns the search, or NULL with err set.
 */
kevo_search *farm_search_new(kevo_task *task, kevo_farm *farm, farm_scoring *sc,
                             farm_trace *tr, long evals, const char *run,
                             int resume, kevo_error *err);

void farm_trace_free(farm_trace *tr);

/* For a test program: the build tree's plugins ($KEVO_BUILDDIR/operators)
 * on the operator path, and saxpy ($KEVO_SRCDIR/examples/tasks/saxpy.json)
 * loaded into *task. */
kevo_status farm_search_saxpy(kevo_task **task, kevo_error *err);

#endif

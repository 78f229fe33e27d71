/*
 * mpi-search.c: the scored search of farm_search.h over MPI's ranks
 * (kevo_farm_mpi()), for tests/mpi.sh. Rank 0 prints the decisions the
 * search made, one line: "judged N duplicates D trace ...". With
 * --die RANK:K the member of that rank ends itself (exit status 3) when it
 * scores its K-th child, as a rank that dies does.
 *
 * usage: mpi-search [--die RANK:K] EVALS [RUN_DIR [resume]]
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/kevo_private.h"
#include "farm_search.h"

int main(int argc, char **argv)
{
    farm_scoring sc = {0};
    int a = 1;
    if (a + 1 < argc && strcmp(argv[a], "--die") == 0) {
        if (sscanf(argv[a + 1], "%d:%u", &sc.die_rank, &sc.die_at) != 2) {
            fprintf(stderr, "mpi-search: --die wants RANK:K\n");
            return 2;
        }
        a += 2;
    }
    if (a >= argc) {
        fprintf(stderr,
                "usage: mpi-search [--die RANK:K] EVALS [RUN_DIR [resume]]\n");
        return 2;
    }
    long evals = atol(argv[a]);
    const char *run = a + 1 < argc ? argv[a + 1] : NULL;
    int resume = a + 2 < argc && strcmp(argv[a + 2], "resume") == 0;

    kevo_error e = KEVO__ERROR_INIT;
    kevo_farm *farm = NULL;
    if (kevo_farm_mpi(&farm, &e) != KEVO_OK) {
        fprintf(stderr, "mpi-search: %s\n", e.text);
        return 77;
    }
    sc.rank = kevo_farm_rank(farm);
    kevo_task *task = NULL;
    farm_trace tr = {0};
    kevo_search *s = NULL;
    kevo_status rc = farm_search_saxpy(&task, &e);
    if (rc == KEVO_OK &&
        !(s = farm_search_new(task, farm, &sc, &tr, evals, run, resume, &e)))
        rc = e.code;
    if (rc == KEVO_OK)
        rc = kevo_search_run(s, &e);
    if (rc != KEVO_OK)
        fprintf(stderr, "mpi-search: rank %d: %s\n", sc.rank, e.text);
    else if (sc.rank == 0)
        printf("judged %u duplicates %u trace %s\n", tr.judged, tr.duplicates,
               tr.text ? tr.text : "");
    kevo_search_free(s);
    kevo_task_free(task);
    farm_trace_free(&tr);
    kevo_farm_free(farm);
    return rc == KEVO_OK ? 0 : 1;
}

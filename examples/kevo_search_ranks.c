/*
 * kevo_search_ranks.c: `kevo search` under mpirun or srun. The launchers
 * say in the environment that they started the process and how many
 * ranks the job has; with more than one, the search runs over MPI
 * (kevo_farm_mpi(3)): rank 0 searches and writes the run directory, every
 * other rank evaluates on its node's GPUs.
 */
/* Uses the experimental API (kevo-api(7)): the farm of MPI ranks. */
#define KEVO_EXPERIMENTAL
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kevo_cli.h"
#include "kevo_search_ranks.h"

/* The first of names set in the environment, as a number: *value, and
 * the name in *which; false when none is. */
static bool env_number(const char *const *names, int64_t *value,
                       const char **which)
{
    for (size_t i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        char *end;
        if (!v || !*v)
            continue;
        long long n = strtoll(v, &end, 10);
        if (*end || n < 0)
            continue;
        *value = n;
        if (which)
            *which = names[i];
        return true;
    }
    return false;
}

int ranks_open(bool force, kevo_farm **farm)
{
    static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                        "PMIX_SIZE", "SLURM_STEP_NUM_TASKS",
                                        NULL};
    *farm = NULL;
    int64_t size = 1;
    const char *which = NULL;
    bool launched = env_number(sizes, &size, &which);
    if (!force && (!launched || size <= 1))
        return EXIT_OK;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_farm_mpi(farm, &err) != KEVO_OK) {
        if (launched)
            fprintf(stderr, "%s: started as one of %lld MPI ranks (%s): %s\n",
                    program, (long long)size, which, err.text);
        else
            fprintf(stderr, "%s: --mpi: %s\n", program, err.text);
        return EXIT_INVALID;
    }
    if (kevo_farm_size(*farm) <= 1) {
        /* One rank: the search as without MPI. */
        kevo_farm_free(*farm);
        *farm = NULL;
    }
    return EXIT_OK;
}

bool ranks_local(int64_t *local)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_LOCAL_RANK",
                                        "MPI_LOCALRANKID", "SLURM_LOCALID",
                                        "PMIX_LOCAL_RANK", NULL};
    return env_number(names, local, NULL);
}

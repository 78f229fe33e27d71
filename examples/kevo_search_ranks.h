/*
 * kevo_search_ranks.h: `kevo search` started by mpirun or srun: the
 * farm of MPI ranks (rank 0 searches, the others evaluate), and the GPU
 * each rank takes by default.
 */
#ifndef KEVO_SEARCH_RANKS_H
#define KEVO_SEARCH_RANKS_H

#include <kevo.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * ranks_open: when an MPI launcher started this process with more than
 * one rank (or force, from --mpi), the farm of MPI_COMM_WORLD in *farm;
 * otherwise *farm stays NULL. Returns EXIT_OK, or the exit status after
 * printing why (kevo built without MPI under a launcher of several
 * ranks, or MPI failing).
 */
int ranks_open(bool force, kevo_farm **farm);

/* ranks_local: this rank's index among the ranks on its node, as the
 * launcher says (Open MPI, MPICH, Slurm); false when none says. */
bool ranks_local(int64_t *local);

#endif

/*
 * kevo/farm.h: a search whose evaluations are spread over processes. Rank
 * 0 runs the engine, the run directory and its own evaluator; every other
 * rank evaluates what rank 0 sends it (a candidate a message; the task
 * once) with its own evaluator or scoring function and sends the results
 * back. The ranks are MPI's (kevo_farm_mpi(), under mpirun or srun) or
 * processes forked from the caller (kevo_farm_spawn()).
 *
 * Every rank runs the same set-up code: it makes the search (and its
 * evaluator or scoring function), hands it the farm with
 * kevo_search_set_farm() and calls kevo_search_run(). On rank 0 that is
 * the search; on the others it serves evaluations until rank 0 stops, and
 * then returns KEVO_OK. See kevo_farm_mpi(3).
 */
#ifndef KEVO_FARM_H
#define KEVO_FARM_H

#include <kevo/common.h>
#include <kevo/error.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_farm kevo_farm;

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_farm_spawn: forks members processes from the caller and connects
 * each to it. It returns in every one of them: in the caller with rank 0,
 * in the forked processes with ranks 1 to members. Call it before
 * anything starts processes or threads (an evaluator's start, an
 * operator's requests); a forked process ends with _exit() once
 * kevo_search_run() returns (exit() would run the caller's atexit handlers
 * and flush its stdio buffers once more in every member). Returns KEVO_OK;
 * KEVO_EINVAL for 0 members or more than 1024; KEVO_EIO when a process or
 * socket cannot be made (the processes made so far are ended again);
 * KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_farm_spawn(unsigned members, kevo_farm **out,
                                     kevo_error *err);

/*
 * kevo_farm_mpi: the ranks of MPI_COMM_WORLD, after MPI_Init_thread() when
 * the caller has not initialised MPI (kevo_farm_free() then finalises it).
 * Returns KEVO_OK; KEVO_EEXTERNAL when MPI fails or kevo was built without
 * MPI (./configure --with-mpi); KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_farm_mpi(kevo_farm **out, kevo_error *err);

/* This process's rank (0 runs the search) and the number of ranks. */
KEVO_API int kevo_farm_rank(const kevo_farm *farm);
KEVO_API int kevo_farm_size(const kevo_farm *farm);

/* "processes" or "MPI". */
KEVO_API const char *kevo_farm_transport(const kevo_farm *farm);

/*
 * kevo_farm_free: on rank 0, tells every member to stop and waits for the
 * forked processes (killing one that does not end within 10 s); on any
 * rank, closes the connections and finalises MPI when kevo_farm_mpi()
 * initialised it. NULL does nothing.
 */
KEVO_API void kevo_farm_free(kevo_farm *farm);
#endif /* KEVO_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif

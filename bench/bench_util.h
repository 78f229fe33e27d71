/*
 * bench_util.h: what the CPU benchmarks share: a monotonic clock, the
 * process's CPU clock, and pinning the process to the CPU it runs on.
 */
#ifndef KEVO_BENCH_UTIL_H
#define KEVO_BENCH_UTIL_H

#ifdef __linux__
#include <sched.h>
#endif
#include <time.h>

/* Seconds of CLOCK_MONOTONIC. */
static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds of CPU time of the process (CLOCK_PROCESS_CPUTIME_ID): unlike
 * the wall clock, it does not count the time other work on the machine
 * holds the CPU. */
static inline double bench_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Keeps the process on the CPU it runs on, so that the scheduler does not
 * move it between measurements. Returns the CPU, or -1. */
static inline int bench_pin_to_one_cpu(void)
{
#ifdef __linux__
    int cpu = sched_getcpu();
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu >= 0) {
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) == 0)
            return cpu;
    }
#endif
    return -1;
}

#endif

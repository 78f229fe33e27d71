/*
 * compile_pool.h: NVRTC compiles in a pool of `kevo-worker compile`
 * processes, with a job queue, time limits, restarts and the compile cache.
 *
 * The core never links NVRTC: a job is sent to an idle compile process as
 * a "compile" frame (lib/proc/ipc.h) and its reply comes back as a
 * "compiled" frame. Before anything is dispatched the source is scanned for
 * #include directives (kevo__include_scan: a forbidden one fails the job
 * and NVRTC never sees it) and the compile cache is asked (a hit finishes
 * the job at once, marked cached). A process that passes the job's time
 * limit is killed and restarted and the job fails with "compile timed out
 * after M ms"; a process that dies fails its job with "compile process
 * died (killed by signal 9 (Killed))" and is restarted. Jobs queued behind
 * a failed one go on to run. Finished compiles, successful or failed by
 * the compiler, are stored in the cache; timeouts and deaths are not.
 *
 * The options are fixed here and nowhere else: -arch=ARCH, -std=c++17,
 * --ptxas-options=-v (registers, spills and shared memory per kernel go to
 * the log), -default-device, --no-source-include, -DNAME=VALUE for each
 * parameter, -DKEVO_EVAL=1. There is never a -I option: the headers a
 * kernel may include come from the compile processes' memory, loaded from
 * the toolkit when they start (kevo__compile_pool_headers). The cache key
 * is made of the source, the options, the kernel names, the NVRTC version
 * and the hash of those headers.
 *
 * The pool is not thread-safe: one thread drives it.
 */
#ifndef KEVO_COMPILE_POOL_H
#define KEVO_COMPILE_POOL_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/kevo_private.h"

/* The time limit of a job that asks for none. */
#define KEVO__COMPILE_TIMEOUT_DEFAULT_MS 60000

typedef struct kevo__compile_pool kevo__compile_pool;

typedef struct kevo__compile_pool_config {
    /* Compile processes; 0: the number of online CPUs. */
    size_t processes;
    /* The kevo-worker program; NULL: kevo__worker_path(). */
    const char *worker;
    /* The cache's base directory (entries go to DIR/compile/); NULL: the
     * default of kevo__compile_cache_base_dir(). Ignored with no_cache. */
    const char *cache_dir;
    /* Neither read nor write the cache. */
    bool no_cache;
    /* How long kevo__compile_pool_new waits for the first process to
     * report its NVRTC version; 0: 30000 ms. */
    int start_timeout_ms;
} kevo__compile_pool_config;

/*
 * kevo__compile_pool_new: starts the processes and waits for the first one
 * to say hello (it reports the NVRTC version, part of every cache key).
 * cfg may be NULL for all defaults. Returns the pool, or NULL with err set:
 * KEVO_ENOENT / KEVO_EIO when the worker cannot be started or the cache
 * directory cannot be made, KEVO_EEXTERNAL when the worker reports that
 * NVRTC does not work, KEVO_ETIMEDOUT for a worker that does not say
 * hello in time, KEVO_EWORKER for one that ends or says something else.
 */
kevo__compile_pool *kevo__compile_pool_new(const kevo__compile_pool_config *cfg,
                                           kevo_error *err);

/* Ends the processes (closing their stdin; any still running after a short
 * grace time are killed), drops unfinished jobs and unfetched results, and
 * frees the pool. NULL does nothing. */
void kevo__compile_pool_free(kevo__compile_pool *pool);

/* The NVRTC version of the workers, "13.0" (borrowed). */
const char *kevo__compile_pool_nvrtc_version(const kevo__compile_pool *pool);

/* How the compile processes are confined, as the first one said in its
 * hello: "landlock ABI 7", or "none: WHY" (borrowed). */
const char *kevo__compile_pool_sandbox(const kevo__compile_pool *pool);

/* The CUDA headers the compile processes give NVRTC from memory (lib/
 * worker/headers.h), as the first process reported them. The strings are
 * borrowed from the pool. */
typedef struct kevo__compile_headers {
    const char *dir; /* the toolkit include directory, NULL when none */
    size_t files;    /* distinct files */
    size_t names;    /* include names (a file may have several) */
    size_t bytes;    /* their total size */
    /* 16 hex digits, a hash of every name and text ("" when none); part of
     * every cache key, so that another toolkit's headers mean other
     * entries. */
    const char *hash;
    double seconds; /* how long the process took to load them */
} kevo__compile_headers;

void kevo__compile_pool_headers(const kevo__compile_pool *pool,
                                kevo__compile_headers *headers);

/* The number of compile processes. */
size_t kevo__compile_pool_processes(const kevo__compile_pool *pool);

/* A compile job. Everything is copied by kevo__compile_pool_submit. */
typedef struct kevo__compile_request {
    const char *source; /* CUDA source text (required) */
    const char *name; /* the program's name in the log; NULL: "candidate.cu" */
    const kevo_vars *params; /* -DNAME=VALUE for each; may be NULL */
    const char *arch;        /* "sm_90", "sm_90a" (required) */
    /* Kernel names (name expressions) whose lowered (mangled) names the
     * result should carry; may be NULL when nkernels is 0. A name that
     * the source does not define fails the job: "kernel 'k' is not defined
     * in candidate.cu". */
    const char *const *kernels;
    size_t nkernels;
    int timeout_ms; /* <= 0: KEVO__COMPILE_TIMEOUT_DEFAULT_MS */
} kevo__compile_request;

/* A finished job (kevo__compile_result_free frees it and all it holds). */
typedef struct kevo__compile_result {
    uint64_t id; /* as returned by kevo__compile_pool_submit */
    bool ok;     /* PTX and cubin are there */
    bool cached; /* answered from the compile cache */
    /* When !ok: one line saying why ("compile error", "line 3: #include of
     * \"/etc/passwd\" is not allowed: ...", "compile timed out after 300
     * ms", "compile process died (killed by signal 9 (Killed))"). NULL
     * when ok. */
    char *error;
    char *log;            /* NVRTC's log, ptxas -v lines included; "" if none */
    char *ptx;            /* PTX text, NUL-terminated; NULL unless ok */
    size_t ptx_len;       /* without the NUL */
    unsigned char *cubin; /* NULL unless ok */
    size_t cubin_len;
    char **lowered;  /* per request kernels[i]: its lowered name, or NULL
                      * when not known (always NULL unless ok) */
    size_t nlowered; /* the request's nkernels */
    char *nvrtc;     /* the NVRTC version that compiled it, "13.0" */
    /* NVRTC's own time for the compile, in seconds (for a cache hit, the
     * time of the compile that filled the entry; 0 when NVRTC did not run
     * or did not finish). */
    double seconds;
    /* From submit to finish: queueing, transfer, compile, cache. */
    double wall_seconds;
} kevo__compile_result;

void kevo__compile_result_free(kevo__compile_result *result);

/*
 * kevo__compile_pool_submit: queues a job and stores its id (1, 2, ... in
 * submission order) in *id. The include scan and the cache lookup happen
 * here: a forbidden #include or a cache hit finishes the job at once (its
 * result is then waiting for kevo__compile_pool_poll). Idle processes are
 * given queued jobs. Returns KEVO_OK, or KEVO_EINVAL (no source, an arch
 * that is not sm_NN with an optional letter, a bad kernel name) or
 * KEVO_ENOMEM, and then no job was queued. A failure of the job itself is
 * never an error of this call: it is in the job's result.
 */
kevo_status kevo__compile_pool_submit(kevo__compile_pool *pool,
                                      const kevo__compile_request *req,
                                      uint64_t *id, kevo_error *err);

/*
 * kevo__compile_pool_poll: hands back one finished job, oldest first,
 * waiting up to timeout_ms for one (0: do not wait, -1: until one is
 * finished). While waiting it reads replies, enforces time limits,
 * restarts failed processes and dispatches queued jobs. Stores the result
 * (the caller frees it) in *result, or NULL when none finished in time.
 * Returns KEVO_OK (also with NULL), or KEVO_DONE (and NULL) when no job is
 * queued, running or finished-but-unfetched. Trouble with the processes is
 * never an error of this call: when no process can be started again, the
 * queued jobs finish as failures that say why ("no compile process: ..."),
 * so nothing hangs.
 */
kevo_status kevo__compile_pool_poll(kevo__compile_pool *pool, int timeout_ms,
                                    kevo__compile_result **result,
                                    kevo_error *err);

/*
 * kevo__compile_pool_wait: as kevo__compile_pool_poll, for job id only;
 * other jobs that finish meanwhile stay for kevo__compile_pool_poll.
 * Returns KEVO_OK with the result or with NULL after timeout_ms, or
 * KEVO_ENOENT for an id that is neither pending nor finished.
 */
kevo_status kevo__compile_pool_wait(kevo__compile_pool *pool, uint64_t id,
                                    int timeout_ms,
                                    kevo__compile_result **result,
                                    kevo_error *err);

/* Jobs submitted and not yet handed back (queued, running or finished). */
size_t kevo__compile_pool_pending(const kevo__compile_pool *pool);

/*
 * For a caller's own poll loop: kevo__compile_pool_pollfds fills up to cap
 * entries of fds with the descriptors the pool waits on (returns how many;
 * kevo__compile_pool_processes() entries are always enough), and
 * kevo__compile_pool_timeout_ms gives the milliseconds until the pool must
 * run again (the nearest time limit; 0 when a result is ready or a job can
 * be dispatched; -1 when nothing runs). When poll() reports one of the fds
 * or the time is up, call kevo__compile_pool_poll(pool, 0, ...).
 */
size_t kevo__compile_pool_pollfds(const kevo__compile_pool *pool,
                                  struct pollfd *fds, size_t cap);
int kevo__compile_pool_timeout_ms(const kevo__compile_pool *pool);

/* Counters since the pool was made. */
typedef struct kevo__compile_pool_stats {
    uint64_t submitted;
    uint64_t finished; /* handed back or waiting to be */
    uint64_t failed;   /* finished with !ok, whatever the reason */
    uint64_t cache_hits;
    uint64_t cache_misses; /* looked up and not found (or corrupt) */
    uint64_t cache_errors; /* entries that could not be written */
    uint64_t rejected;     /* by the include scan */
    uint64_t dispatched;   /* sent to a compile process */
    uint64_t timeouts;
    uint64_t deaths; /* processes that died while compiling */
    uint64_t restarts;
    double compile_seconds; /* sum of NVRTC's times of jobs it compiled */
} kevo__compile_pool_stats;

void kevo__compile_pool_stats_get(const kevo__compile_pool *pool,
                                  kevo__compile_pool_stats *stats);

/* Slot i's process id (0 while it has none): for tests that kill one. */
long kevo__compile_pool_pid(const kevo__compile_pool *pool, size_t i);

/* Slot of job id while a process compiles it, else -1: for tests. */
long kevo__compile_pool_job_slot(const kevo__compile_pool *pool, uint64_t id);

/*
 * kevo__compile_options: the fixed options for arch and params, as a new
 * NULL-terminated array of new strings (kevo__compile_options_free frees
 * it), the
 * count in *n. Returns NULL with err set on a bad arch or no memory.
 */
char **kevo__compile_options(const char *arch, const kevo_vars *params,
                             size_t *n, kevo_error *err);
void kevo__compile_options_free(char **options);

/* The kevo-worker program: $KEVO_WORKER when set and not empty, else the
 * installed KEVO_WORKER_PATH (borrowed, static or from the environment). */
const char *kevo__worker_path(void);

#endif

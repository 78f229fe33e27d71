/*
 * compile_pool_private.h: the compile pool's insides, shared by
 * compile_pool.c (the processes: dispatch, replies, time limits, restarts,
 * waiting), compile_job.c (jobs and their results: the fixed options, the
 * queue, the finished list, the compile cache, submit) and
 * compile_message.c (the messages of the compile protocol: the "compile"
 * request, the "compiled" reply and the first hello). The contract is
 * compile_pool.h.
 */
#ifndef KEVO_COMPILE_POOL_PRIVATE_H
#define KEVO_COMPILE_POOL_PRIVATE_H

#include <jansson.h>

#include "compile_cache.h"
#include "compile_pool.h"
#include "proc/ipc.h"
#include "proc/procpool.h"

/* A compile job: what kevo__compile_pool_submit copied, and its state. */
typedef struct kevo__compile_job {
    uint64_t id;
    char *source;
    char *name;
    char **options; /* NULL-terminated */
    size_t noptions;
    char **kernels;
    size_t nkernels;
    int timeout_ms;
    char key[KEVO__CACHE_KEY_SIZE];
    double submitted; /* seconds */
    int attempts;
    struct kevo__compile_job *next;
} kevo__compile_job;

/* A compile process's slot in the pool. */
typedef struct kevo__compile_slot {
    kevo__compile_job *job; /* the job it compiles, or NULL */
    bool hello;             /* the process said hello */
    int64_t deadline;       /* of that job, kevo__now_ms() time */
    kevo__ipc_reader *reader;
    bool down;        /* no process: the last restart failed */
    int64_t retry_at; /* when to try again */
    char down_error[KEVO_ERROR_TEXT_SIZE];
} kevo__compile_slot;

/* A finished job's result, waiting to be handed back. */
typedef struct kevo__compile_node {
    kevo__compile_result *result;
    struct kevo__compile_node *next;
} kevo__compile_node;

struct kevo__compile_pool {
    kevo__procpool *procs;
    kevo__compile_slot *slots;
    size_t n;
    kevo__compile_job *queue; /* waiting for a process, oldest first */
    kevo__compile_job *queue_tail;
    size_t queued;
    size_t running;
    kevo__compile_node *done; /* finished, not yet handed back, oldest
                                 first */
    kevo__compile_node *done_tail;
    size_t ndone;
    kevo__compile_cache *cache;
    char *nvrtc;
    /* What the first process loaded: the header hash is in every cache key
     * (key_version: "13.0 headers HASH"), so that entries of another
     * toolkit's headers are never taken. */
    kevo__compile_headers headers;
    char *headers_dir;
    char headers_hash[17];
    char *key_version;
    char *sandbox; /* the first hello's "sandbox": "landlock ABI 7", "none:
                      ..." */
    uint64_t next_id;
    kevo__compile_pool_stats stats;
    struct pollfd *pfds;
};

/* ---- compile_job.c ------------------------------------------------------- */

void kevo__compile_job_free(kevo__compile_job *j);
/* A new result for j with nothing in it but the id and the lowered array;
 * NULL on no memory. */
kevo__compile_result *kevo__compile_result_new(const kevo__compile_job *j);
/* Queues r as finished and frees j. */
void kevo__compile_finish(kevo__compile_pool *pool, kevo__compile_job *j,
                          kevo__compile_result *r);
/* Finishes j as failed with a formatted reason. */
void kevo__compile_fail(kevo__compile_pool *pool, kevo__compile_job *j,
                        const char *fmt, ...) KEVO_PRINTF(3, 4);
/* Queues j for a process: at the front (a job offered again) or at the
 * back. */
void kevo__compile_queue_push(kevo__compile_pool *pool, kevo__compile_job *j,
                              bool front);
/* The oldest queued job, unlinked, or NULL. */
kevo__compile_job *kevo__compile_queue_pop(kevo__compile_pool *pool);
/* Unlinks and returns the first finished result with id (any when id is
 * 0), or NULL. */
kevo__compile_result *kevo__compile_take_done(kevo__compile_pool *pool,
                                              uint64_t id);
/* Whether job id is queued, compiling or finished and not handed back. */
bool kevo__compile_job_pending(const kevo__compile_pool *pool, uint64_t id);
/* Stores a finished compile in the cache (a failure to write is
 * counted). */
void kevo__compile_cache_put(kevo__compile_pool *pool,
                             const kevo__compile_job *j,
                             const kevo__compile_result *r);

/* ---- compile_message.c --------------------------------------------------- */

/* The "compile" request for j, or NULL on no memory. */
json_t *kevo__compile_request_message(const kevo__compile_job *j);
/* Whether a "compiled" reply is well formed: "ok" and payload lengths
 * that match; false with why otherwise. */
bool kevo__compile_reply_check(const kevo__frame *f, char *why,
                               size_t why_size);
/* The result a checked "compiled" reply gives job j (nvrtc: the version
 * to name when the reply names none); *cacheable says whether the worker
 * allows it to be cached. NULL on no memory. */
kevo__compile_result *kevo__compile_reply_result(const kevo__frame *f,
                                                 const kevo__compile_job *j,
                                                 const char *nvrtc,
                                                 bool *cacheable);
/* Takes the first process's hello f into pool: the NVRTC version, the
 * headers, the sandbox and the cache key's version. Errors as
 * kevo__compile_pool_new's, worker naming the program. */
kevo_status kevo__compile_hello_read(kevo__compile_pool *pool,
                                     const kevo__frame *f, const char *worker,
                                     kevo_error *err);

/* ---- compile_pool.c ------------------------------------------------------ */

/* Hands a queued job to each idle process. */
void kevo__compile_dispatch(kevo__compile_pool *pool);

#endif

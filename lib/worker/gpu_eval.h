/*
 * gpu_eval.h: the "eval" message of the GPU worker (gpu_eval.c) and what
 * gpu.c shares with it.
 */
#ifndef KEVO_WORKER_GPU_EVAL_H
#define KEVO_WORKER_GPU_EVAL_H

#include "gpu.h"
#include "ipc.h"

/* The task of the last evaluation, kept for the next: its key, the loaded
 * task, the reference's cubin and the loaded reference. */
typedef struct kevo__gpu_cache {
    char *task_key;
    kevo_task *task;
    unsigned char *ref_cubin;
    size_t ref_cubin_size;
    kevo__program ref;
} kevo__gpu_cache;

void kevo__gpu_cache_clear(kevo__gpu *g, kevo__gpu_cache *cache);

/*
 * kevo__gpu_eval: answers one "eval" frame with a "result" (see the result
 * object in the worker's protocol). Returns 0 to go on, 4 after a fault
 * (the verdict was sent; the context is unusable) and 1 when the reply
 * cannot be sent.
 */
int kevo__gpu_eval(kevo__gpu *g, kevo__gpu_cache *cache, const kevo__frame *f,
                   int out_fd);

/* Sends msg (taking its reference; NULL means out of memory) as a frame
 * without payload. */
kevo_status kevo__gpu_send(int fd, json_t *msg);

/* True when err holds a CUDA error after which the context is unusable. */
bool kevo__gpu_fatal(const kevo_error *err);

#endif

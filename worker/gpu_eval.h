/*
 * gpu_eval.h: the "task" and "eval" messages of the GPU worker (read in
 * gpu_eval_request.c, answered in gpu_eval.c) and what gpu.c shares with
 * them.
 *
 * Task: {"op":"task","id":N,"task_key":"...","task":{kevo_task_to_json}}
 * gives the worker a task to keep under its key (1 to 64 bytes), for the
 * eval messages that follow. The worker keeps at most KEVO__TASK_KEYS_MAX
 * tasks and drops the least recently used one to make room; a new process
 * keeps none (lib/proc/task_keys.h: the sender counts the same way, and
 * sends each task once per key and process). Reply: {"op":"task","id":N,
 * "ok":true,"task_key":"...","tasks":n} (n: how many it keeps now), or ok
 * false with "error" when the message is malformed or the task does not
 * load ("the task: ...").
 *
 * Request: {"op":"eval","id":N,"task_key":"...",
 * "candidate":{kevo__candidate_to_json},"set":"train"|"held_out",
 * "seeds":[s1,s2],"reference_cubin_bytes":R,"candidate_cubin_bytes":C,
 * "timing":{"enabled","warmup","min_reps","max_reps","target_spread_ppm",
 * "time_cap_ms"},"profile":bool,"flush_l2":bool,"time_reference":bool,
 * "reference_kernels":{kernel:lowered},"candidate_kernels":{kernel:lowered}}
 * with the two cubins as payload; the task is the one the worker was sent
 * under task_key. A task with a baseline kernel (kevo_task_baseline())
 * adds "baseline_cubin_bytes":B and "baseline_kernels":{...}, its cubin
 * between the reference's and the candidate's in the payload: the worker
 * runs it on each input set after the reference, and keeps its largest and
 * mean error on every output judged by the baseline rule with the
 * reference's result. The timing fields, profile and flush_l2 are the
 * evaluator's options of those names (kevo_eval_option), read with its
 * option table (proc/eval_options.h): its defaults where left out, its
 * bounds. "enabled" (default true), time_reference (false) and the kernel
 * maps (names as in the launch block) may be left out too. An eval of a key
 * the worker does not hold is a protocol error of the sender: it is
 * answered {"op":"result","id":N,"ok":false,"error":"unknown task key
 * \"K\": ...", "unknown_task_key":"K"}, and the sender sends the task
 * again.
 *
 * Reply: {"op":"result","id":N,"ok":true,"verdict":...,"reason":... and
 * "failed_shape":i (not when ok; failed_shape absent when the failure is
 * not at a shape),"kernels":[...],"shapes":[{"set","index","dims",
 * "correct","max_abs_err","max_rel_err","bad_elements","worst":{"arg",
 * "index","got","want"},"time":{"median","min","max","mean","cv","spread",
 * "reps","kernels_per_rep","timer","samples"},"reference_time":{same, with
 * time_reference},"profile":{"dram_read_bytes","dram_write_bytes",
 * "achieved_occupancy"} or {"error":"..."}}],"timer":"cupti"|"events",
 * "seconds":{"transfer","run","check","time","profile","total"}}. Numbers
 * that are not finite (the error at a NaN, a got of NaN) are null. A
 * request the worker cannot serve (malformed, a task that does not load, a
 * reference that does not run, device memory the shapes do not fit) gets
 * {"op":"result","id":N,"ok":false,"error":"..."}.
 *
 * Companions: the request may add "companions":[{"candidate":{...},
 * "cubin_bytes":N,"kernels":{...},"check":bool,"shapes":[i,...]}], whose
 * cubins follow the candidate's in the payload, in order. At each shape
 * where the candidate is correct, a companion that runs there ("shapes"
 * lists the indices; absent: every shape) is checked on the same inputs
 * as the candidate (unless "check" is false: its correctness is known)
 * and then timed together with the candidate and, with time_reference,
 * the reference: interleaved run by run (kevo__time_plans), so that their
 * times compare in pairs. A companion's failure is its own: it leaves the
 * shapes after it out. The reply adds "companions":[{"verdict","reason",
 * "failed_shape","kernels","shapes":[...]}] in the request's order, each
 * shape as the candidate's ("checked" false where it was not checked).
 */
#ifndef KEVO_WORKER_GPU_EVAL_H
#define KEVO_WORKER_GPU_EVAL_H

#include "gpu.h"
#include "proc/ipc.h"
#include "proc/task_keys.h"

/* A companion as the message gives it. */
typedef struct kevo__companion_req {
    const json_t *candidate;
    const unsigned char *cubin;
    size_t size;
    const json_t *kernels; /* lowered names, or NULL */
    bool check;            /* checked for correctness like the candidate */
    const json_t *shapes;  /* the shape indices to run it at, or NULL: all */
} kevo__companion_req;

/* What the message asks. */
typedef struct kevo__eval_req {
    json_t *id;
    const char *task_key;
    const json_t *candidate;
    kevo_shape_set set;
    uint64_t seeds[2];
    const unsigned char *ref_cubin, *cand_cubin;
    size_t ref_size, cand_size;
    const json_t *ref_kernels, *cand_kernels; /* lowered names, or NULL */
    const unsigned char *base_cubin; /* the task's baseline, or NULL */
    size_t base_size;
    const json_t *base_kernels;
    kevo__timing_config timing;
    bool profile;
    bool time_reference;       /* time the reference at each shape too */
    kevo__companion_req *comp; /* owned */
    size_t ncomp;
} kevo__eval_req;

/*
 * kevo__eval_req_parse: reads an "eval" frame into *r, whose pointers then
 * point into the frame (r->comp is the caller's to free, also on failure).
 * Errors: KEVO_EFORMAT naming the field ("eval message: \"seeds\" must be
 * two integers"), KEVO_ENOMEM. (gpu_eval_request.c)
 */
kevo_status kevo__eval_req_parse(const kevo__frame *f, kevo__eval_req *r,
                                 kevo_error *err);

/* A kernel of the task itself (its reference, its baseline) as the last
 * evaluation loaded it: the task's key, a reference to the candidate, its
 * cubin and the loaded program (key NULL: none). */
typedef struct kevo__kept_kernel {
    char *key;
    kevo_candidate *cand;
    unsigned char *cubin;
    size_t cubin_size;
    kevo__program prog;
} kevo__kept_kernel;

/* What the worker keeps from one message to the next: the tasks it was
 * sent, by key (kevo_task values), and the reference and the baseline of
 * the last evaluation, loaded. */
typedef struct kevo__gpu_cache {
    kevo__task_keys tasks;
    kevo__kept_kernel ref, base;
} kevo__gpu_cache;

void kevo__gpu_cache_init(kevo__gpu_cache *cache);
void kevo__gpu_cache_clear(kevo__gpu *g, kevo__gpu_cache *cache);

/*
 * kevo__gpu_task: answers one "task" frame: the task loaded and kept under
 * its key, or an error reply. Returns 0 to go on, 1 when the reply cannot
 * be sent. (gpu_eval_request.c)
 */
int kevo__gpu_task(kevo__gpu_cache *cache, const kevo__frame *f, int out_fd);

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

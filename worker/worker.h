/*
 * worker.h: what the kevo-worker program's files share.
 *
 * kevo-worker compile          a compile process (worker/compile.c)
 * kevo-worker gpu --device N   a GPU worker (worker/gpu.c)
 *
 * main.c moves the message pipes off descriptors 0 and 1 before a mode
 * starts: in_fd and out_fd are new descriptors (close-on-exec), 0 is
 * /dev/null and 1 is a copy of stderr, so a stray printf from a library
 * cannot corrupt the frame stream. Frames are those of lib/proc/ipc.h; the
 * messages are those of the evaluation protocol. A mode returns the
 * process's exit status: 0 when in_fd reached end of file, 3 when the mode
 * cannot work on this machine (no CUDA driver; it said so in its hello),
 * and another non-zero status on a broken pipe or protocol error.
 */
#ifndef KEVO_WORKER_H
#define KEVO_WORKER_H

#include "core/kevo_private.h"
#include "proc/ipc.h"

/* The exit status of a mode that cannot run here (said in its hello). */
#define KEVO__WORKER_EXIT_UNAVAILABLE 3

/*
 * The compile mode: sends {"op":"hello","ok":true,"mode":"compile",
 * "nvrtc":"13.0","headers":{...},"sandbox":"landlock ABI 7",
 * "warmup_seconds":S} (or ok false with "error" and exits 3 when NVRTC does
 * not work); "sandbox" says how the process is confined ("none: WHY" when
 * it is not; see sandbox.h). Then it answers each {"op":"compile",...}
 * with one {"op":"compiled",...} frame, one job at a time, until end of
 * file.
 */
int kevo__worker_compile_main(int in_fd, int out_fd);

/*
 * The GPU mode on device index device (worker/gpu.c): sends a hello with
 * the device's properties, then answers "peaks", "task" and "eval"
 * messages one at a time (gpu_eval.h gives the last two: a task is sent
 * once under its key and kept, and each eval names it by the key).
 */
int kevo__worker_gpu_main(int in_fd, int out_fd, int device);

/*
 * kevo__worker_reply_error: sends {"op":op,"id":id,"ok":false,"error":text}
 * (id left out when it is 0). Returns KEVO_OK or the kevo__ipc_send error.
 * For a mode that cannot make sense of a request: it answers and goes on.
 */
kevo_status kevo__worker_reply_error(int out_fd, const char *op, uint64_t id,
                                     const char *text, kevo_error *err);

#endif

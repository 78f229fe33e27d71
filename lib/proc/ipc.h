/*
 * ipc.h: the frames that the core and the kevo-worker processes exchange
 * over pipes (or sockets).
 *
 * A frame is a 12-byte header (u32 little-endian length J of the JSON text,
 * then u64 little-endian length B of the binary payload), J bytes of JSON
 * (one object, UTF-8, no NUL), then B bytes of payload. J is at most
 * KEVO__IPC_JSON_MAX and B at most KEVO__IPC_PAYLOAD_MAX; a header that
 * announces more is a protocol error, and nothing of its body is read.
 *
 * Reads and writes cope with partial transfers and EINTR, on blocking and
 * on non-blocking descriptors (EAGAIN waits in poll()). A deadline holds
 * for reads always, and for writes when the descriptor is non-blocking (a
 * blocking write() of a large chunk may outlast it; kevo__proc_spawn gives
 * the parent non-blocking ends). Writes never raise SIGPIPE: SIGPIPE is
 * blocked in the calling thread around each write(), a SIGPIPE raised by it
 * is taken back with sigtimedwait(), and the caller's mask is restored, so
 * a closed reader is an error (KEVO_EIO, "worker closed the pipe") and the
 * process's disposition of SIGPIPE is never changed.
 *
 * Error texts are short and name what happened: "worker closed the pipe",
 * "worker closed the pipe in the middle of a frame", "protocol error: frame
 * of 5 GiB (JSON text over the 64 MiB limit)", "timed out after 2000 ms",
 * "protocol error: the JSON text is not an object".
 *
 * The messages that the frames carry are described beside the code that
 * reads them: worker/worker.h (the modes and their hellos), worker/gpu_eval.h
 * (a GPU worker's "task" and "eval"), task_keys.h (which tasks a GPU worker
 * holds, as both ends count them) and lib/eval/compile_pool.h.
 */
#ifndef KEVO_IPC_H
#define KEVO_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/kevo_private.h"

#define KEVO__IPC_HEADER_SIZE 12
#define KEVO__IPC_JSON_MAX ((size_t)64 << 20)     /* 64 MiB */
#define KEVO__IPC_PAYLOAD_MAX ((uint64_t)1 << 30) /* 1 GiB */

/* A received frame. Zero-initialise it; kevo__frame_clear releases what it
 * holds and zeroes it again. */
typedef struct kevo__frame {
    json_t *json;           /* the JSON object (owned: one reference) */
    unsigned char *payload; /* payload_len bytes (owned; NULL when 0) */
    size_t payload_len;
} kevo__frame;

void kevo__frame_clear(kevo__frame *frame);

/* Milliseconds of CLOCK_MONOTONIC, for deadlines. */
int64_t kevo__now_ms(void);

/* The milliseconds left until deadline_ms (a kevo__now_ms() value), for
 * poll(): -1 for no deadline (deadline_ms < 0), 0 when it has passed. */
int kevo__ms_left(int64_t deadline_ms);

/*
 * kevo__ipc_send: writes one frame: msg (a JSON object, serialised
 * compactly) and payload_len bytes of payload (payload may be NULL when
 * payload_len is 0). timeout_ms bounds the whole write (-1: no limit; see
 * above for blocking descriptors). Returns KEVO_OK, or:
 *   KEVO_EINVAL  msg is not an object, or payload is NULL with a length;
 *   KEVO_ELIMIT  the JSON text or the payload is over its limit;
 *   KEVO_ETIMEDOUT "timed out after N ms" (part of the frame may have
 *                been written: the stream is then unusable);
 *   KEVO_EIO     "worker closed the pipe" (EPIPE) or another write error,
 *                with errno as the foreign code;
 *   KEVO_ENOMEM.
 */
kevo_status kevo__ipc_send(int fd, const json_t *msg, const void *payload,
                           size_t payload_len, int timeout_ms, kevo_error *err);

/*
 * kevo__ipc_recv: reads one whole frame into *frame (which must be empty),
 * waiting at most timeout_ms for all of it (-1: no limit). Returns KEVO_OK
 * with the frame, or, with *frame left empty:
 *   KEVO_DONE    end of file before the first byte of a frame: the writer
 *                closed the pipe ("worker closed the pipe");
 *   KEVO_EIO     end of file inside a frame, or a read error (errno as the
 *                foreign code);
 *   KEVO_ETIMEDOUT "timed out after N ms";
 *   KEVO_EFORMAT a protocol error: a length over its limit, JSON that does
 *                not parse or is not an object, a NUL in the JSON text;
 *   KEVO_ENOMEM.
 * After any error but KEVO_DONE the stream is out of step and should be
 * closed.
 */
kevo_status kevo__ipc_recv(int fd, int timeout_ms, kevo__frame *frame,
                           kevo_error *err);

/*
 * An incremental reader for poll loops over several descriptors: each call
 * reads what is there without waiting and keeps a partial frame until the
 * rest arrives. The descriptor should be non-blocking (on a blocking one,
 * call it only after poll() reported it readable: it then reads at most
 * once). One reader per descriptor; kevo__ipc_reader_reset drops a partial
 * frame (after the peer was restarted, say).
 */
typedef struct kevo__ipc_reader kevo__ipc_reader;

kevo__ipc_reader *kevo__ipc_reader_new(void);
void kevo__ipc_reader_free(kevo__ipc_reader *reader);
void kevo__ipc_reader_reset(kevo__ipc_reader *reader);

/* True while a frame has been started but not completed. */
bool kevo__ipc_reader_partial(const kevo__ipc_reader *reader);

/*
 * kevo__ipc_reader_read: reads from fd without waiting. Returns KEVO_OK
 * with *complete true and the frame in *frame when one is complete (call
 * again: more frames may be buffered in the descriptor), KEVO_OK with
 * *complete false when more bytes are needed, or the errors of
 * kevo__ipc_recv (KEVO_DONE at end of file between frames, KEVO_EIO at end
 * of file inside one, KEVO_EFORMAT, KEVO_ENOMEM); never KEVO_ETIMEDOUT:
 * the caller keeps its own deadline.
 */
kevo_status kevo__ipc_reader_read(kevo__ipc_reader *reader, int fd,
                                  kevo__frame *frame, bool *complete,
                                  kevo_error *err);

/* "5 GiB", "64 MiB", "1.5 KiB", "12 bytes" in buf; returns buf. */
const char *kevo__ipc_size_text(uint64_t bytes, char *buf, size_t size);

#endif

/*
 * procpool.h: child processes that talk over two pipes, and pools of
 * identical ones.
 *
 * A child is a program started by path (never through a shell or a
 * wrapper) with its stdin and stdout connected to two pipes whose other
 * ends the parent keeps (non-blocking, close-on-exec); stderr is inherited.
 * Every other descriptor is closed in the child, its signal mask is
 * emptied and SIGPIPE is reset to its default, and it runs in a process
 * group of its own, so a kill reaches whatever it started and a terminal's
 * Ctrl-C does not reach it directly.
 */
#ifndef KEVO_PROCPOOL_H
#define KEVO_PROCPOOL_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/kevo_private.h"

/* One child. pid is 0 and the fds are -1 while no child runs. */
typedef struct kevo__proc {
    pid_t pid;
    int to_fd;   /* the parent's end of the child's stdin (write) */
    int from_fd; /* the parent's end of the child's stdout (read) */
} kevo__proc;

#define KEVO__PROC_INIT                                                        \
    {                                                                          \
        .pid = 0, .to_fd = -1, .from_fd = -1                                   \
    }

/*
 * kevo__proc_spawn: starts path with argv (argv[0] included, NULL-ended;
 * NULL means just path) and the caller's environment. *proc must not hold
 * a running child. Returns KEVO_OK, or KEVO_ENOENT / KEVO_EIO when the
 * program cannot be executed ("/x/kevo-worker: cannot execute: No such
 * file or directory", errno as the foreign code) or a pipe cannot be made.
 */
kevo_status kevo__proc_spawn(kevo__proc *proc, const char *path,
                             char *const argv[], kevo_error *err);

/* True while proc has a child that has not been reaped. */
bool kevo__proc_running(const kevo__proc *proc);

/*
 * kevo__proc_kill: sends SIGKILL to the child's process group, reaps the
 * child (waitpid, so no zombie is left), closes both pipes and resets
 * *proc. The wait status goes to *status when status is not NULL (the
 * status of an earlier exit when the child had already ended; -1 when
 * there was no child). Safe on an empty proc.
 */
void kevo__proc_kill(kevo__proc *proc, int *status);

/*
 * kevo__proc_finish: the orderly end: closes the child's stdin (the
 * worker exits at end of file), waits up to timeout_ms for it to exit, then
 * kills it as kevo__proc_kill does. Reaps, closes and resets *proc; the
 * wait status goes to *status. Returns true when the child exited by
 * itself within the time.
 */
bool kevo__proc_finish(kevo__proc *proc, int timeout_ms, int *status);

/*
 * kevo__proc_reap: checks without waiting whether the child has ended. When
 * it has, reaps it, closes the pipes, resets *proc, stores the wait status
 * and returns true; otherwise returns false.
 */
bool kevo__proc_reap(kevo__proc *proc, int *status);

/* The wait status in words in buf ("exited with status 4", "killed by
 * signal 9 (Killed)", "killed by signal 11 (Segmentation fault), core
 * dumped", "not started" for -1); returns buf. */
const char *kevo__wait_status_text(int status, char *buf, size_t size);

/* ---- pools -------------------------------------------------------------
 * N children of one program and argv. Each slot has a child, a busy flag
 * that the owner sets while the child works for it, and a restart count.
 * The pool never reads or writes the pipes itself. */

typedef struct kevo__procpool kevo__procpool;

/*
 * kevo__procpool_new: starts n children of path with argv (both copied).
 * Returns the pool, or NULL with err set (KEVO_EINVAL for n == 0, or the
 * errors of kevo__proc_spawn; children already started are killed again).
 */
kevo__procpool *kevo__procpool_new(const char *path, char *const argv[],
                                   size_t n, kevo_error *err);

/* Ends every child with kevo__proc_finish (all stdins are closed first,
 * then each gets what is left of timeout_ms; 0 kills at once) and frees the
 * pool. NULL does nothing. */
void kevo__procpool_free(kevo__procpool *pool, int timeout_ms);

size_t kevo__procpool_size(const kevo__procpool *pool);

/* Slot i's child (borrowed; valid until the pool is freed; its fields
 * change when the slot is restarted). */
kevo__proc *kevo__procpool_proc(kevo__procpool *pool, size_t i);

bool kevo__procpool_busy(const kevo__procpool *pool, size_t i);
void kevo__procpool_set_busy(kevo__procpool *pool, size_t i, bool busy);

/* The first slot that is not busy and has a running child, or -1. */
long kevo__procpool_idle(const kevo__procpool *pool);

/* How often slot i was restarted. */
unsigned long kevo__procpool_restarts(const kevo__procpool *pool, size_t i);

/*
 * kevo__procpool_restart: kills slot i's child (if it still runs), reaps
 * it, stores its wait status in *status (may be NULL), and starts a new
 * one; the slot is idle afterwards. Returns KEVO_OK, or the errors of
 * kevo__proc_spawn, in which case the slot has no child
 * (kevo__procpool_proc(pool, i)->pid == 0) and a later restart may try
 * again.
 */
kevo_status kevo__procpool_restart(kevo__procpool *pool, size_t i, int *status,
                                   kevo_error *err);

/*
 * kevo__procpool_pollfds: fills fds[0..n-1] with slot i's from_fd (events
 * POLLIN; fd -1, which poll() ignores, for a slot without a child) and
 * returns n, the pool's size; cap must be at least n (else nothing is
 * written and 0 is returned). fds[i] belongs to slot i.
 */
size_t kevo__procpool_pollfds(const kevo__procpool *pool, struct pollfd *fds,
                              size_t cap);

#endif

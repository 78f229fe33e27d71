/*
 * sandbox.h: the compile process's confinement: once it is entered, the
 * process can open no file at all.
 *
 * The include scan (lib/proc/include_scan.h) refuses every #include outside the
 * allowed headers, and the compile process hands those to NVRTC from
 * memory, but a kernel can still make the preprocessor probe the host's
 * file system where no text scan can see it: `#define CAT(a, b) a##b`, then
 * `#if CAT(__has_,include)("/etc/passwd")` tells whether a file exists
 * (NVRTC opens the file to answer). So the compile process loads what it
 * needs (its headers, libnvrtc-builtins and the C++ runtime that NVRTC
 * would open on its first compile: worker/compile.c), then takes away
 * its own right to open files with Landlock (Linux 5.13 and later): a
 * ruleset that handles every file-system access right the kernel's
 * Landlock ABI knows (execute, read and write files, read directories,
 * make and remove every kind of entry, refer, truncate, device ioctl) and
 * allows none of them anywhere. Where the ABI has them, TCP bind and
 * connect are taken away too, and signals and abstract Unix sockets are
 * scoped to the process. A probe then fails as a missing file does.
 * PR_SET_NO_NEW_PRIVS comes first, as Landlock requires of an unprivileged
 * process; it stays set even when Landlock cannot be had.
 *
 * The restriction binds the calling thread and what it starts later; the
 * process must have a single thread when it enters (checked in
 * /proc/self/status: Landlock would leave another thread free, such as the
 * one the CUDA driver's cuInit starts).
 *
 * Where Landlock is missing (an older kernel, a kernel without it, a
 * container that refuses the system calls) the process goes on without it
 * and says why. With KEVO_NO_SANDBOX=1 in the environment (any value but
 * empty or "0") it is not entered: for comparisons and for debugging with
 * tools that open files late.
 */
#ifndef KEVO_WORKER_SANDBOX_H
#define KEVO_WORKER_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

/* Enough for every text kevo__sandbox_enter writes. */
#define KEVO__SANDBOX_TEXT_SIZE 192

/*
 * kevo__sandbox_enter: confines the calling process as above. Writes what
 * it did to what (at most size bytes, NUL-terminated): "landlock ABI N" when
 * the process can open no file from now on, else "none: WHY" ("none:
 * KEVO_NO_SANDBOX=1", "none: no Landlock system calls (ENOSYS: ...)",
 * "none: landlock_restrict_self: Operation not permitted", ...). Returns
 * true when the process is confined. Irreversible.
 */
bool kevo__sandbox_enter(char *what, size_t size);

#endif

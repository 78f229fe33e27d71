/*
 * sandbox.c: the compile process's Landlock confinement (sandbox.h), by
 * the raw system calls: no library.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox.h"

#if defined(__linux__) && defined(__has_include)
#if __has_include(<linux/landlock.h>)
#include <linux/landlock.h>
#if defined(SYS_landlock_create_ruleset) && defined(SYS_landlock_restrict_self)
#define HAVE_LANDLOCK 1
#endif
#endif
#endif

#ifdef HAVE_LANDLOCK

/* The access rights of later ABIs, for headers older than the kernel; the
 * values are the kernel's ABI and never change. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* struct landlock_ruleset_attr as of ABI 6. It has grown with the ABI (net
 * in 4, scoped in 6) and the installed header may be older, so it is
 * spelled out here; the kernel is given only the fields its ABI knows. */
typedef struct ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
} ruleset_attr;

/* Every file-system right of ABI 1: execute, write, read files, read
 * directories, remove directories and files, make every kind of entry. */
#define FS_ABI1 ((LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1)

/* The threads of this process, or -1 when /proc cannot say. */
static long thread_count(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    long n = -1;

    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "Threads:", 8) == 0) {
            n = strtol(line + 8, NULL, 10);
            break;
        }
    }
    fclose(f);
    return n;
}

static bool landlock(char *what, size_t size)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, (size_t)0,
                       (uint32_t)LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 0) {
        int e = errno;
        if (e == ENOSYS)
            snprintf(what, size,
                     "none: no Landlock system calls (ENOSYS: a kernel "
                     "before 5.13, or a tool such as valgrind that lacks "
                     "them)");
        else if (e == EOPNOTSUPP)
            snprintf(what, size,
                     "none: Landlock is disabled in this kernel "
                     "(EOPNOTSUPP; it needs lsm=...,landlock at boot)");
        else
            snprintf(what, size, "none: landlock_create_ruleset: %s",
                     strerror(e));
        return false;
    }
    long threads = thread_count();
    if (threads > 1) {
        snprintf(what, size,
                 "none: the process has %ld threads and Landlock would "
                 "confine only one",
                 threads);
        return false;
    }

    ruleset_attr attr = {.handled_access_fs = FS_ABI1};
    size_t attr_size = sizeof attr.handled_access_fs;
    if (abi >= 2)
        attr.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        attr.handled_access_fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 4) {
        attr.handled_access_net =
            LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
        attr_size = offsetof(ruleset_attr, scoped);
    }
    if (abi >= 5)
        attr.handled_access_fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    if (abi >= 6) {
        attr.scoped =
            LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
        attr_size = sizeof attr;
    }

    /* No rule is added: nothing beneath any path may be opened. */
    long fd =
        syscall(SYS_landlock_create_ruleset, &attr, attr_size, (uint32_t)0);
    if (fd < 0) {
        snprintf(what, size, "none: landlock_create_ruleset: %s",
                 strerror(errno));
        return false;
    }
    long rc = syscall(SYS_landlock_restrict_self, (int)fd, (uint32_t)0);
    int e = errno;
    close((int)fd);
    if (rc != 0) {
        snprintf(what, size, "none: landlock_restrict_self: %s", strerror(e));
        return false;
    }
    snprintf(what, size, "landlock ABI %ld", abi);
    return true;
}

#endif /* HAVE_LANDLOCK */

bool kevo__sandbox_enter(char *what, size_t size)
{
    const char *off = getenv("KEVO_NO_SANDBOX");

    if (off && *off && strcmp(off, "0") != 0) {
        snprintf(what, size, "none: KEVO_NO_SANDBOX=%.32s", off);
        return false;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0) {
        snprintf(what, size, "none: prctl(PR_SET_NO_NEW_PRIVS): %s",
                 strerror(errno));
        return false;
    }
#ifdef HAVE_LANDLOCK
    return landlock(what, size);
#else
    snprintf(what, size,
             "none: built without Landlock (no "
             "<linux/landlock.h> or its system calls)");
    return false;
#endif
}

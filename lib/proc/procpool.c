/*
 * procpool.c: child processes on two pipes, and pools of identical ones.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc.h"
#include "procpool.h"

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

static void reset_proc(kevo__proc *proc)
{
    close_fd(&proc->to_fd);
    close_fd(&proc->from_fd);
    proc->pid = 0;
}

/* In the child after fork(): only async-signal-safe calls until exec. */
static void child_exec(const char *path, char *const argv[], int in_fd,
                       int out_fd, int err_fd)
{
    sigset_t none;
    struct sigaction dfl;
    int e;

    setpgid(0, 0);
    if (err_fd <= 2) {
        int e2 = fcntl(err_fd, F_DUPFD_CLOEXEC, 3);
        if (e2 < 0)
            _exit(127);
        err_fd = e2;
    }
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGPIPE, &dfl, NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    /* The pipes may already sit on 0 or 1 in a parent that had them
     * closed: move them out of the way first. */
    if (in_fd <= 1 || out_fd <= 1) {
        int a = fcntl(in_fd, F_DUPFD_CLOEXEC, 3);
        int b = fcntl(out_fd, F_DUPFD_CLOEXEC, 3);
        if (a < 0 || b < 0)
            goto fail;
        in_fd = a;
        out_fd = b;
    }
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0)
        goto fail;
    /* Everything but 0, 1, 2 and the error pipe goes (close-on-exec as a
     * fallback where close_range is missing). */
    if ((err_fd > 3 && close_range(3, (unsigned)err_fd - 1, 0) != 0) ||
        close_range((unsigned)err_fd + 1, ~0u, 0) != 0) {
        for (int fd = 3; fd < 4096; fd++) {
            if (fd != err_fd)
                close(fd);
        }
    }
    execv(path, argv);
fail:
    e = errno;
    while (write(err_fd, &e, sizeof e) < 0 && errno == EINTR)
        ;
    _exit(127);
}

kevo_status kevo__proc_spawn(kevo__proc *proc, const char *path,
                             char *const argv[], kevo_error *err)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, ep[2] = {-1, -1};
    kevo_status rc = KEVO_OK;
    char *default_argv[2] = {(char *)path, NULL};

    if (!proc || !path)
        return kevo__error_set(err, KEVO_EINVAL, "no program to start");
    if (proc->pid > 0)
        return kevo__error_set(err, KEVO_ESTATE,
                               "%s: a child is still running in this slot",
                               path);
    if (!argv)
        argv = default_argv;
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
        pipe2(ep, O_CLOEXEC) < 0) {
        rc = kevo__error_errno(err, errno, path, "pipe");
        goto done;
    }
    pid_t pid = fork();
    if (pid < 0) {
        rc = kevo__error_errno(err, errno, path, "fork");
        goto done;
    }
    if (pid == 0)
        child_exec(path, argv, in[0], out[1], ep[1]);
    /* Also from here, so that a kill right after this call reaches the
     * group even if the child has not run yet (EACCES once it exec'd). */
    setpgid(pid, pid);
    close_fd(&ep[1]);
    close_fd(&in[0]);
    close_fd(&out[1]);

    int child_errno = 0;
    ssize_t n;
    while ((n = read(ep[0], &child_errno, sizeof child_errno)) < 0 &&
           errno == EINTR)
        ;
    if (n > 0) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        rc = kevo__error_errno(err, child_errno, path, "cannot execute");
        goto done;
    }
    if (fcntl(in[1], F_SETFL, O_NONBLOCK) < 0 ||
        fcntl(out[0], F_SETFL, O_NONBLOCK) < 0) {
        int e = errno;
        kevo__proc tmp = {.pid = pid, .to_fd = -1, .from_fd = -1};
        kevo__proc_kill(&tmp, NULL);
        rc = kevo__error_errno(err, e, path, "fcntl");
        goto done;
    }
    proc->pid = pid;
    proc->to_fd = in[1];
    proc->from_fd = out[0];
    in[1] = out[0] = -1;
done:
    close_fd(&in[0]);
    close_fd(&in[1]);
    close_fd(&out[0]);
    close_fd(&out[1]);
    close_fd(&ep[0]);
    close_fd(&ep[1]);
    return rc;
}

bool kevo__proc_running(const kevo__proc *proc)
{
    return proc && proc->pid > 0;
}

void kevo__proc_kill(kevo__proc *proc, int *status)
{
    int st = -1;
    if (proc && proc->pid > 0) {
        kill(-proc->pid, SIGKILL);
        kill(proc->pid, SIGKILL);
        while (waitpid(proc->pid, &st, 0) < 0 && errno == EINTR)
            ;
    }
    if (proc)
        reset_proc(proc);
    if (status)
        *status = st;
}

bool kevo__proc_reap(kevo__proc *proc, int *status)
{
    int st = -1, rc;
    siginfo_t info;
    if (!proc || proc->pid <= 0)
        return false;
    /* Look without reaping first: while the child is a zombie its process
     * group cannot be reused, so what it left behind can still be killed
     * without hitting a stranger. */
    memset(&info, 0, sizeof info);
    while ((rc = waitid(P_PID, (id_t)proc->pid, &info,
                        WEXITED | WNOHANG | WNOWAIT)) < 0 &&
           errno == EINTR)
        ;
    if (rc == 0 && info.si_pid == 0)
        return false;
    if (rc == 0) {
        kill(-proc->pid, SIGKILL);
        while (waitpid(proc->pid, &st, 0) < 0 && errno == EINTR)
            ;
    }
    /* rc < 0 (ECHILD: someone else reaped it) counts as ended too. */
    reset_proc(proc);
    if (status)
        *status = rc == 0 ? st : -1;
    return true;
}

bool kevo__proc_finish(kevo__proc *proc, int timeout_ms, int *status)
{
    if (!proc || proc->pid <= 0) {
        if (proc)
            reset_proc(proc);
        if (status)
            *status = -1;
        return false;
    }
    close_fd(&proc->to_fd);
    int64_t deadline = kevo__now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    long nap_us = 200;
    for (;;) {
        if (kevo__proc_reap(proc, status))
            return true;
        if (kevo__ms_left(deadline) == 0)
            break;
        struct timespec ts = {0, nap_us * 1000};
        nanosleep(&ts, NULL);
        if (nap_us < 20000)
            nap_us *= 2;
    }
    kevo__proc_kill(proc, status);
    return false;
}

const char *kevo__wait_status_text(int status, char *buf, size_t size)
{
    if (status == -1)
        snprintf(buf, size, "not started");
    else if (WIFEXITED(status))
        snprintf(buf, size, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        const char *name = strsignal(sig);
        snprintf(buf, size, "killed by signal %d (%s)%s", sig,
                 name ? name : "unknown",
                 WCOREDUMP(status) ? ", core dumped" : "");
    } else
        snprintf(buf, size, "wait status 0x%x", (unsigned)status);
    return buf;
}

/* ---- pools ------------------------------------------------------------- */

typedef struct slot {
    kevo__proc proc;
    bool busy;
    unsigned long restarts;
} slot;

struct kevo__procpool {
    char *path;
    char **argv;
    size_t n;
    slot *slots;
};

kevo__procpool *kevo__procpool_new(const char *path, char *const argv[],
                                   size_t n, kevo_error *err)
{
    kevo__procpool *pool = NULL;
    size_t argc = 0;

    if (!path || n == 0) {
        kevo__error_set(err, KEVO_EINVAL,
                        "a process pool needs a program and at least one "
                        "process");
        return NULL;
    }
    pool = calloc(1, sizeof *pool);
    if (!pool)
        goto nomem;
    pool->path = kevo__strdup(path);
    while (argv && argv[argc])
        argc++;
    pool->argv = calloc(argc + 2, sizeof *pool->argv);
    pool->slots = calloc(n, sizeof *pool->slots);
    if (!pool->path || !pool->argv || !pool->slots)
        goto nomem;
    if (argc == 0) {
        if (!(pool->argv[0] = kevo__strdup(path)))
            goto nomem;
    }
    for (size_t i = 0; i < argc; i++) {
        if (!(pool->argv[i] = kevo__strdup(argv[i])))
            goto nomem;
    }
    pool->n = n;
    for (size_t i = 0; i < n; i++) {
        kevo__proc init = KEVO__PROC_INIT;
        pool->slots[i].proc = init;
    }
    for (size_t i = 0; i < n; i++) {
        if (kevo__proc_spawn(&pool->slots[i].proc, pool->path, pool->argv,
                             err) != KEVO_OK) {
            kevo__procpool_free(pool, 0);
            return NULL;
        }
    }
    return pool;
nomem:
    kevo__error_set(err, KEVO_ENOMEM, "out of memory for a process pool");
    kevo__procpool_free(pool, 0);
    return NULL;
}

void kevo__procpool_free(kevo__procpool *pool, int timeout_ms)
{
    if (!pool)
        return;
    if (pool->slots) {
        for (size_t i = 0; i < pool->n; i++)
            close_fd(&pool->slots[i].proc.to_fd);
        int64_t deadline = kevo__now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
        for (size_t i = 0; i < pool->n; i++)
            kevo__proc_finish(&pool->slots[i].proc, kevo__ms_left(deadline),
                              NULL);
    }
    for (size_t i = 0; pool->argv && pool->argv[i]; i++)
        free(pool->argv[i]);
    free(pool->argv);
    free(pool->path);
    free(pool->slots);
    free(pool);
}

size_t kevo__procpool_size(const kevo__procpool *pool)
{
    return pool->n;
}

kevo__proc *kevo__procpool_proc(kevo__procpool *pool, size_t i)
{
    return i < pool->n ? &pool->slots[i].proc : NULL;
}

bool kevo__procpool_busy(const kevo__procpool *pool, size_t i)
{
    return i < pool->n && pool->slots[i].busy;
}

void kevo__procpool_set_busy(kevo__procpool *pool, size_t i, bool busy)
{
    if (i < pool->n)
        pool->slots[i].busy = busy;
}

long kevo__procpool_idle(const kevo__procpool *pool)
{
    for (size_t i = 0; i < pool->n; i++) {
        if (!pool->slots[i].busy && pool->slots[i].proc.pid > 0)
            return (long)i;
    }
    return -1;
}

unsigned long kevo__procpool_restarts(const kevo__procpool *pool, size_t i)
{
    return i < pool->n ? pool->slots[i].restarts : 0;
}

kevo_status kevo__procpool_restart(kevo__procpool *pool, size_t i, int *status,
                                   kevo_error *err)
{
    if (i >= pool->n)
        return kevo__error_set(err, KEVO_ERANGE, "no process slot %zu", i);
    slot *s = &pool->slots[i];
    kevo__proc_kill(&s->proc, status);
    s->busy = false;
    s->restarts++;
    return kevo__proc_spawn(&s->proc, pool->path, pool->argv, err);
}

size_t kevo__procpool_pollfds(const kevo__procpool *pool, struct pollfd *fds,
                              size_t cap)
{
    if (cap < pool->n)
        return 0;
    for (size_t i = 0; i < pool->n; i++) {
        fds[i].fd = pool->slots[i].proc.from_fd;
        fds[i].events = POLLIN;
        fds[i].revents = 0;
    }
    return pool->n;
}

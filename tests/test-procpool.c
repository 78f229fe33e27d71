/*
 * test-procpool.c: child processes on two pipes (with /bin/sh and /bin/cat
 * as the children): talking to them, what they inherit and what not, their
 * process group, kills that leave no zombie and no grandchild, wait status
 * texts, and a pool that restarts its members.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/ipc.h"
#include "proc/procpool.h"
#include "tap.h"

static kevo__proc sh(const char *script)
{
    kevo__proc p = KEVO__PROC_INIT;
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo__proc_spawn(&p, "/bin/sh", argv, &err) != KEVO_OK)
        bail_out("cannot start /bin/sh: %s", err.text);
    return p;
}

/* Reads the child's output until end of file or timeout_ms; a new string. */
static char *read_all(int fd, int timeout_ms)
{
    kevo_buf b = {0};
    int64_t deadline = kevo__now_ms() + timeout_ms;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, kevo__ms_left(deadline)) <= 0)
            break;
        char chunk[512];
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            break;
        kevo__buf_append(&b, chunk, (size_t)n);
    }
    kevo__buf_puts(&b, "");
    return kevo__buf_take(&b);
}

/* Reads one line (without its newline) from the child. */
static char *read_line(int fd)
{
    kevo_buf b = {0};
    int64_t deadline = kevo__now_ms() + 5000;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, kevo__ms_left(deadline)) <= 0)
            break;
        char c;
        ssize_t n = read(fd, &c, 1);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0 || c == '\n')
            break;
        kevo__buf_append(&b, &c, 1);
    }
    kevo__buf_puts(&b, "");
    return kevo__buf_take(&b);
}

static void test_talk(void)
{
    kevo__proc p = sh("read x; echo \"got $x\"");
    ok(kevo__proc_running(&p), "a child runs");
    int fl = fcntl(p.to_fd, F_GETFL), fd_flags = fcntl(p.from_fd, F_GETFD);
    ok(fl >= 0 && (fl & O_NONBLOCK), "the parent's ends are non-blocking");
    ok(fd_flags >= 0 && (fd_flags & FD_CLOEXEC), "  and close-on-exec");
    if (write(p.to_fd, "hello\n", 6) != 6)
        bail_out("write");
    char *line = read_line(p.from_fd);
    is_str(line, "got hello", "it reads stdin and writes stdout");
    free(line);
    int status = 0;
    ok(kevo__proc_finish(&p, 5000, &status), "it exits by itself");
    char text[128];
    is_str(kevo__wait_status_text(status, text, sizeof text),
           "exited with status 0", "  with status 0");
    ok(!kevo__proc_running(&p) && p.to_fd == -1 && p.from_fd == -1,
       "  and the slot is empty again");
}

static void test_inheritance(void)
{
    char script[256], *out;
    sigset_t block, old;
    struct sigaction ign, old_pipe;

    /* A descriptor opened without close-on-exec stays out of the child. */
    int leak = open("/dev/null", O_RDONLY);
    if (leak < 0)
        bail_out("open /dev/null");
    snprintf(script, sizeof script,
             "if [ -e /proc/$$/fd/%d ]; then echo open; else echo closed; fi",
             leak);
    kevo__proc p = sh(script);
    out = read_line(p.from_fd);
    is_str(out, "closed", "the parent's other descriptors are closed");
    free(out);
    kevo__proc_finish(&p, 5000, NULL);
    close(leak);

    /* Its own process group. */
    p = sh("read a b c d pgrp rest < /proc/$$/stat; echo $pgrp");
    out = read_line(p.from_fd);
    is_int(atol(out), p.pid, "the child leads its own process group");
    free(out);
    kevo__proc_finish(&p, 5000, NULL);

    /* An empty signal mask and SIGPIPE at its default, whatever the parent
     * has. */
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old_pipe);
    p = sh("exec grep -E '^Sig(Blk|Ign)' /proc/self/status");
    out = read_all(p.from_fd, 5000);
    like_str(out, "SigBlk:\t0000000000000000", "the child blocks nothing");
    char *ignored = strstr(out, "SigIgn:\t");
    unsigned long long mask = ignored ? strtoull(ignored + 8, NULL, 16) : 1;
    ok(ignored && !(mask & (1ull << (SIGPIPE - 1))),
       "the child does not ignore SIGPIPE (SigIgn %llx)", mask);
    free(out);
    kevo__proc_finish(&p, 5000, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
}

static bool process_gone(long pid)
{
    char path[64], *stat = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (kevo__read_file(path, false, &stat, &len, NULL) != KEVO_OK)
        return true;
    /* A zombie that no init reaps is gone as far as running goes. */
    const char *paren = strrchr(stat, ')');
    bool zombie = paren && paren[1] == ' ' && paren[2] == 'Z';
    free(stat);
    return zombie;
}

static void test_kill(void)
{
    kevo__proc p = sh("sleep 30 & echo $!; wait");
    char *line = read_line(p.from_fd);
    long grandchild = atol(line);
    free(line);
    pid_t pid = p.pid;
    ok(grandchild > 0, "a grandchild runs (%ld)", grandchild);
    int status = 0;
    kevo__proc_kill(&p, &status);
    char text[128];
    is_str(kevo__wait_status_text(status, text, sizeof text),
           "killed by signal 9 (Killed)", "kill: the status says so");
    ok(!kevo__proc_running(&p), "  the slot is empty");
    errno = 0;
    ok(waitpid(pid, NULL, WNOHANG) < 0 && errno == ECHILD,
       "  no zombie is left");
    bool gone = false;
    for (int i = 0; i < 100 && !gone; i++) {
        gone = process_gone(grandchild);
        if (!gone)
            usleep(10000);
    }
    ok(gone, "  the grandchild died with it");
    kevo__proc_kill(&p, &status);
    is_int(status, -1, "killing an empty slot does nothing");

    p = sh("exit 4");
    status = 0;
    bool reaped = false;
    for (int i = 0; i < 500 && !reaped; i++) {
        reaped = kevo__proc_reap(&p, &status);
        if (!reaped)
            usleep(2000);
    }
    ok(reaped, "reap notices an exit");
    is_str(kevo__wait_status_text(status, text, sizeof text),
           "exited with status 4", "  exited with status 4");

    p = sh("kill -SEGV $$");
    kevo__proc_finish(&p, 5000, &status);
    like_str(kevo__wait_status_text(status, text, sizeof text),
             "killed by signal 11 (Segmentation fault)", "a crash");

    p = sh("trap '' TERM; sleep 30");
    int64_t t0 = kevo__now_ms();
    ok(!kevo__proc_finish(&p, 150, &status),
       "finish kills a child that does not end");
    ok(kevo__now_ms() - t0 < 3000, "  after the grace time");
    is_str(kevo__wait_status_text(status, text, sizeof text),
           "killed by signal 9 (Killed)", "  with SIGKILL");
    is_str(kevo__wait_status_text(-1, text, sizeof text), "not started",
           "status -1");
}

static void test_spawn_errors(void)
{
    kevo__proc p = KEVO__PROC_INIT;
    kevo_error err = KEVO__ERROR_INIT;
    is_int(kevo__proc_spawn(&p, "/nonexistent/program", NULL, &err),
           KEVO_ENOENT, "a missing program");
    is_str(err.text,
           "/nonexistent/program: cannot execute: No such file or directory",
           "  says so");
    ok(!kevo__proc_running(&p) && p.to_fd == -1, "  nothing is left open");
    kevo_error_init(&err);
    is_int(kevo__proc_spawn(&p, "/etc/passwd", NULL, &err), KEVO_EIO,
           "a file that is no program");
    like_str(err.text, "/etc/passwd: cannot execute: Permission denied",
             "  says so");
    p = sh("cat");
    kevo_error_init(&err);
    is_int(kevo__proc_spawn(&p, "/bin/cat", NULL, &err), KEVO_ESTATE,
           "a slot that holds a child");
    kevo__proc_kill(&p, NULL);
}

static void test_pool(void)
{
    kevo_error err = KEVO__ERROR_INIT;
    char *argv[] = {"cat", NULL};
    kevo__procpool *pool = kevo__procpool_new("/bin/cat", argv, 3, &err);
    ok(pool != NULL, "a pool of three (%s)", err.text);
    if (!pool)
        return;
    is_uint(kevo__procpool_size(pool), 3, "  of size 3");
    pid_t pids[3];
    for (size_t i = 0; i < 3; i++)
        pids[i] = kevo__procpool_proc(pool, i)->pid;
    ok(pids[0] > 0 && pids[1] > 0 && pids[2] > 0 && pids[0] != pids[1] &&
           pids[1] != pids[2] && pids[0] != pids[2],
       "  three processes");
    is_int(kevo__procpool_idle(pool), 0, "slot 0 is idle");
    kevo__procpool_set_busy(pool, 0, true);
    kevo__procpool_set_busy(pool, 1, true);
    ok(kevo__procpool_busy(pool, 1), "slot 1 is busy");
    is_int(kevo__procpool_idle(pool), 2, "slot 2 is the idle one");
    kevo__procpool_set_busy(pool, 2, true);
    is_int(kevo__procpool_idle(pool), -1, "none idle");

    /* Each member echoes through its own pipes. */
    for (size_t i = 0; i < 3; i++) {
        kevo__proc *p = kevo__procpool_proc(pool, i);
        char msg[16];
        snprintf(msg, sizeof msg, "slot %zu\n", i);
        if (write(p->to_fd, msg, strlen(msg)) != (ssize_t)strlen(msg))
            bail_out("write");
        char *line = read_line(p->from_fd);
        msg[strlen(msg) - 1] = '\0';
        is_str(line, msg, "slot %zu answers", i);
        free(line);
    }

    struct pollfd fds[3];
    is_uint(kevo__procpool_pollfds(pool, fds, 2), 0, "pollfds needs room");
    is_uint(kevo__procpool_pollfds(pool, fds, 3), 3, "pollfds: three");
    ok(fds[1].fd == kevo__procpool_proc(pool, 1)->from_fd &&
           fds[1].events == POLLIN,
       "  slot 1's stdout");

    /* One dies; a restart replaces it. */
    kill(pids[1], SIGKILL);
    int status = 0;
    is_int(kevo__procpool_restart(pool, 1, &status, &err), KEVO_OK,
           "restart slot 1");
    char text[128];
    is_str(kevo__wait_status_text(status, text, sizeof text),
           "killed by signal 9 (Killed)", "  the old one was killed");
    ok(kevo__procpool_proc(pool, 1)->pid != pids[1], "  a new process");
    ok(!kevo__procpool_busy(pool, 1), "  idle");
    is_uint(kevo__procpool_restarts(pool, 1), 1, "  one restart");
    is_uint(kevo__procpool_restarts(pool, 0), 0, "slot 0: none");
    errno = 0;
    ok(waitpid(pids[1], NULL, WNOHANG) < 0 && errno == ECHILD,
       "  the old one was reaped");
    kevo__proc *p = kevo__procpool_proc(pool, 1);
    if (write(p->to_fd, "again\n", 6) != 6)
        bail_out("write");
    char *line = read_line(p->from_fd);
    is_str(line, "again", "  and it answers");
    free(line);

    for (size_t i = 0; i < 3; i++)
        pids[i] = kevo__procpool_proc(pool, i)->pid;
    kevo__procpool_free(pool, 2000);
    bool reaped = true;
    for (size_t i = 0; i < 3; i++) {
        errno = 0;
        reaped =
            reaped && waitpid(pids[i], NULL, WNOHANG) < 0 && errno == ECHILD;
    }
    ok(reaped, "free ends and reaps every member");

    kevo_error_init(&err);
    ok(kevo__procpool_new("/bin/cat", NULL, 0, &err) == NULL &&
           err.code == KEVO_EINVAL,
       "a pool of none is refused");
    kevo_error_init(&err);
    ok(kevo__procpool_new("/nonexistent", NULL, 2, &err) == NULL &&
           err.code == KEVO_ENOENT,
       "a pool of a missing program is refused");
}

int main(void)
{
    if (access("/bin/sh", X_OK) != 0 || access("/proc/self/stat", R_OK) != 0)
        skip_all("needs /bin/sh and /proc");
    test_talk();
    test_inheritance();
    test_kill();
    test_spawn_errors();
    test_pool();
    return done_testing();
}

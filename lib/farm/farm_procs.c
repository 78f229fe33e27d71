/*
 * farm_procs.c: a farm of processes forked from the caller, each joined to
 * rank 0 by a socket pair that carries proc/ipc frames (JSON only). Rank 0
 * polls every member's socket; a member whose socket reaches end of file
 * has ended, and rank 0 reaps it and can say how it ended.
 *
 * The sockets' buffers are set to 1 MiB each way, so that rank 0's
 * messages (a candidate each, a few KiB) never wait on a member that is
 * itself writing a result.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "farm_private.h"
#include "proc/ipc.h"
#include "proc/procpool.h"

#define MAX_MEMBERS 1024
#define SEND_TIMEOUT_MS 60000
#define STOP_GRACE_MS 10000

typedef struct procs {
    int *fd;     /* by rank; -1 once closed (a member keeps fd[0] only) */
    pid_t *pid;  /* rank 0: the members' processes; 0 once reaped */
    int *status; /* rank 0: their wait status once reaped, else -1 */
    kevo__ipc_reader **reader;
    int next; /* rank 0: where the next poll starts, for fairness */
} procs;

static void procs_free(procs *p, int size)
{
    if (!p)
        return;
    for (int r = 0; p->fd && r < size; r++) {
        if (p->fd[r] >= 0)
            close(p->fd[r]);
    }
    for (int r = 0; p->reader && r < size; r++)
        kevo__ipc_reader_free(p->reader[r]);
    free(p->fd);
    free(p->pid);
    free(p->status);
    free(p->reader);
    free(p);
}

/* Reaps member r, waiting at most wait_ms (then killing it). */
static void reap(procs *p, int r, int wait_ms)
{
    if (p->pid[r] <= 0)
        return;
    int64_t until = kevo__now_ms() + wait_ms;
    for (;;) {
        int st;
        pid_t got = waitpid(p->pid[r], &st, WNOHANG);
        if (got == p->pid[r] || (got < 0 && errno != EINTR)) {
            p->status[r] = got == p->pid[r] ? st : -1;
            p->pid[r] = 0;
            return;
        }
        if (kevo__now_ms() >= until) {
            kill(p->pid[r], SIGKILL);
            until = kevo__now_ms() + 60000;
            wait_ms = 0;
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
}

/* Rank r's connection ended: close it and, on rank 0, reap the process. */
static void ended(kevo_farm *f, int r)
{
    procs *p = f->state;
    close(p->fd[r]);
    p->fd[r] = -1;
    kevo__ipc_reader_reset(p->reader[r]);
    if (f->rank == 0)
        reap(p, r, 1000);
}

static kevo_status procs_send(kevo_farm *f, int to, const json_t *msg,
                              kevo_error *err)
{
    procs *p = f->state;
    if (p->fd[to] < 0)
        return kevo__error_set(err, KEVO_EWORKER, "rank %d has ended", to);
    kevo_error e = KEVO__ERROR_INIT;
    kevo_status rc =
        kevo__ipc_send(p->fd[to], msg, NULL, 0, SEND_TIMEOUT_MS, &e);
    if (rc == KEVO_OK)
        return KEVO_OK;
    if (rc == KEVO_ENOMEM)
        return kevo__error_set(err, rc, "out of memory");
    /* The member is gone (or stuck): close, and reap it on rank 0, so
     * that how it ended can be told. */
    ended(f, to);
    return kevo__error_set(err, KEVO_EWORKER, "sending to rank %d: %s", to,
                           e.text);
}

static kevo_status procs_recv(kevo_farm *f, int timeout_ms, int *from,
                              json_t **msg, kevo_error *err)
{
    procs *p = f->state;
    struct pollfd fds[MAX_MEMBERS + 1];
    int rank_of[MAX_MEMBERS + 1];
    int64_t until = kevo__now_ms() + (timeout_ms < 0 ? 0 : timeout_ms);
    for (;;) {
        nfds_t n = 0;
        for (int k = 0; k < f->size; k++) {
            int r = (p->next + k) % f->size;
            if (p->fd[r] < 0)
                continue;
            fds[n].fd = p->fd[r];
            fds[n].events = POLLIN;
            fds[n].revents = 0;
            rank_of[n++] = r;
        }
        int left = kevo__ms_left(until);
        int got = poll(fds, n, left);
        if (got < 0 && errno != EINTR)
            return kevo__error_errno(err, errno, NULL, "poll");
        for (nfds_t i = 0; got > 0 && i < n; i++) {
            if (!fds[i].revents)
                continue;
            int r = rank_of[i];
            kevo__frame fr = {0};
            bool complete = false;
            kevo_error e = KEVO__ERROR_INIT;
            kevo_status rc = kevo__ipc_reader_read(p->reader[r], p->fd[r], &fr,
                                                   &complete, &e);
            if (rc == KEVO_OK && !complete)
                continue;
            p->next = (r + 1) % f->size;
            *from = r;
            if (rc == KEVO_OK) {
                *msg = fr.json;
                fr.json = NULL;
                kevo__frame_clear(&fr);
                return KEVO_OK;
            }
            ended(f, r);
            if (rc == KEVO_DONE || rc == KEVO_EIO)
                return KEVO_DONE;
            return kevo__error_set(err, rc, "rank %d: %s", r, e.text);
        }
        if (kevo__ms_left(until) == 0)
            return KEVO_OK;
    }
}

static const char *procs_ended(kevo_farm *f, int r, char *buf, size_t size)
{
    procs *p = f->state;
    if (f->rank != 0 || r <= 0 || r >= f->size || p->pid[r] > 0)
        return buf;
    return kevo__wait_status_text(p->status[r], buf, size);
}

static void procs_close(kevo_farm *f)
{
    procs *p = f->state;
    if (f->rank == 0) {
        json_t *stop = kevo__farm_stop_message(f);
        for (int r = 1; stop && r < f->size; r++) {
            if (p->fd[r] >= 0)
                kevo__ipc_send(p->fd[r], stop, NULL, 0, 1000, NULL);
        }
        json_decref(stop);
        for (int r = 1; r < f->size; r++) {
            if (p->fd[r] >= 0) {
                close(p->fd[r]);
                p->fd[r] = -1;
            }
            reap(p, r, STOP_GRACE_MS);
        }
    }
    procs_free(p, f->size);
}

static const kevo__farm_transport procs_transport = {
    .name = "processes",
    .send = procs_send,
    .recv = procs_recv,
    .ended = procs_ended,
    .close = procs_close,
};

static void big_buffers(int fd)
{
    int size = 1 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
}

kevo_status kevo_farm_spawn(unsigned members, kevo_farm **out, kevo_error *err)
{
    if (!out)
        return kevo__error_set(err, KEVO_EINVAL, "kevo_farm_spawn: NULL out");
    *out = NULL;
    if (members == 0 || members > MAX_MEMBERS)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_farm_spawn: %u members (allowed 1..%d)",
                               members, MAX_MEMBERS);
    int size = (int)members + 1;
    procs *p = calloc(1, sizeof *p);
    if (!p || !(p->fd = malloc((size_t)size * sizeof *p->fd)) ||
        !(p->pid = calloc((size_t)size, sizeof *p->pid)) ||
        !(p->status = malloc((size_t)size * sizeof *p->status)) ||
        !(p->reader = calloc((size_t)size, sizeof *p->reader))) {
        if (p && p->fd)
            memset(p->fd, -1, (size_t)size * sizeof *p->fd);
        procs_free(p, p && p->fd ? size : 0);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    for (int r = 0; r < size; r++) {
        p->fd[r] = -1;
        p->status[r] = -1;
        if (!(p->reader[r] = kevo__ipc_reader_new())) {
            procs_free(p, size);
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        }
    }
    kevo_farm *f = kevo__farm_new(0, size, &procs_transport, p);
    if (!f) {
        procs_free(p, size);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    fflush(NULL); /* nothing buffered is written twice */
    for (int r = 1; r < size; r++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
            kevo_status rc = kevo__error_errno(err, errno, NULL, "socketpair");
            kevo_farm_free(f);
            return rc;
        }
        big_buffers(sv[0]);
        big_buffers(sv[1]);
        pid_t pid = fork();
        if (pid < 0) {
            kevo_status rc = kevo__error_errno(err, errno, NULL, "fork");
            close(sv[0]);
            close(sv[1]);
            kevo_farm_free(f);
            return rc;
        }
        if (pid == 0) {
            /* The member: one connection, to rank 0. */
            close(sv[0]);
            for (int k = 1; k < r; k++) {
                close(p->fd[k]);
                p->fd[k] = -1;
                p->pid[k] = 0;
            }
            p->fd[0] = sv[1];
            f->rank = r;
            *out = f;
            return KEVO_OK;
        }
        close(sv[1]);
        fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
        p->fd[r] = sv[0];
        p->pid[r] = pid;
    }
    *out = f;
    return KEVO_OK;
}

/*
 * ipc.c: length-prefixed JSON frames with a binary payload, over pipes and
 * sockets, with deadlines and without SIGPIPE.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "ipc.h"

void kevo__frame_clear(kevo__frame *frame)
{
    if (!frame)
        return;
    json_decref(frame->json);
    free(frame->payload);
    memset(frame, 0, sizeof *frame);
}

int64_t kevo__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int kevo__ms_left(int64_t deadline_ms)
{
    if (deadline_ms < 0)
        return -1;
    int64_t left = deadline_ms - kevo__now_ms();
    if (left <= 0)
        return 0;
    return left > 1000000000 ? 1000000000 : (int)left;
}

const char *kevo__ipc_size_text(uint64_t bytes, char *buf, size_t size)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) {
        snprintf(buf, size, "%llu byte%s", (unsigned long long)bytes,
                 bytes == 1 ? "" : "s");
        return buf;
    }
    double v = (double)bytes / 1024.0;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < KEVO_ARRAY_SIZE(units)) {
        v /= 1024.0;
        u++;
    }
    uint64_t whole = bytes >> (10 * (u + 1));
    if (whole << (10 * (u + 1)) == bytes)
        snprintf(buf, size, "%llu %s", (unsigned long long)whole, units[u]);
    else
        snprintf(buf, size, "%.1f %s", v, units[u]);
    return buf;
}

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* The protocol error of a header whose lengths are over the limits, or
 * KEVO_OK. */
static kevo_status check_lengths(uint64_t jlen, uint64_t blen, kevo_status code,
                                 kevo_error *err)
{
    char total[32], limit[32];
    if (jlen <= KEVO__IPC_JSON_MAX && blen <= KEVO__IPC_PAYLOAD_MAX)
        return KEVO_OK;
    kevo__ipc_size_text(jlen + blen, total, sizeof total);
    if (jlen > KEVO__IPC_JSON_MAX)
        return kevo__error_set(
            err, code,
            "protocol error: frame of %s (JSON text over the %s limit)", total,
            kevo__ipc_size_text(KEVO__IPC_JSON_MAX, limit, sizeof limit));
    return kevo__error_set(
        err, code, "protocol error: frame of %s (payload over the %s limit)",
        total, kevo__ipc_size_text(KEVO__IPC_PAYLOAD_MAX, limit, sizeof limit));
}

static kevo_status timed_out(kevo_error *err, int timeout_ms)
{
    return kevo__error_set(err, KEVO_ETIMEDOUT, "timed out after %d ms",
                           timeout_ms);
}

/* Waits for events on fd until deadline. Returns 1 when ready, 0 when the
 * deadline passed, -1 with errno on a poll error. POLLERR and POLLHUP count
 * as ready: the read or write that follows reports what happened. */
static int wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        int rc = poll(&p, 1, kevo__ms_left(deadline));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            return -1;
        if (rc == 0) {
            if (kevo__ms_left(deadline) == 0)
                return 0;
            continue;
        }
        return 1;
    }
}

/* ---- sending ----------------------------------------------------------- */

/* Writes the iovecs completely. Returns KEVO_OK or an error; *epipe tells
 * whether the failure was EPIPE. */
static kevo_status write_all(int fd, struct iovec *iov, int niov,
                             int timeout_ms, int64_t deadline, bool *epipe,
                             kevo_error *err)
{
    while (niov > 0) {
        if (iov->iov_len == 0) {
            iov++;
            niov--;
            continue;
        }
        ssize_t n = writev(fd, iov, niov);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                int w = wait_fd(fd, POLLOUT, deadline);
                if (w == 0)
                    return timed_out(err, timeout_ms);
                if (w == -1)
                    return kevo__error_errno(err, errno, "pipe", "poll");
                continue;
            }
            if (errno == EPIPE) {
                *epipe = true;
                return kevo__error_set_foreign(err, KEVO_EIO,
                                               KEVO_DOMAIN_SYSTEM, EPIPE,
                                               "worker closed the pipe");
            }
            return kevo__error_errno(err, errno, "pipe", "write");
        }
        size_t left = (size_t)n;
        while (niov > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            iov++;
            niov--;
        }
        if (niov > 0) {
            iov->iov_base = (char *)iov->iov_base + left;
            iov->iov_len -= left;
        }
        if (niov > 0 && deadline >= 0 && kevo__ms_left(deadline) == 0)
            return timed_out(err, timeout_ms);
    }
    return KEVO_OK;
}

kevo_status kevo__ipc_send(int fd, const json_t *msg, const void *payload,
                           size_t payload_len, int timeout_ms, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    char *text = NULL;
    unsigned char header[KEVO__IPC_HEADER_SIZE];
    sigset_t pipe_set, old_mask, pending;
    bool epipe = false, was_pending;

    if (!json_is_object(msg))
        return kevo__error_set(err, KEVO_EINVAL,
                               "a frame's JSON must be an object");
    if (!payload && payload_len)
        return kevo__error_set(err, KEVO_EINVAL,
                               "no payload given for %zu bytes", payload_len);
    text = json_dumps(msg, JSON_COMPACT);
    if (!text)
        return kevo__error_set(err, KEVO_ENOMEM,
                               "cannot serialise the message (out of memory)");
    size_t jlen = strlen(text);
    rc = check_lengths(jlen, payload_len, KEVO_ELIMIT, err);
    if (rc != KEVO_OK)
        goto done;
    put_le(header, jlen, 4);
    put_le(header + 4, payload_len, 8);
    struct iovec iov[3] = {
        {.iov_base = header, .iov_len = sizeof header},
        {.iov_base = text, .iov_len = jlen},
        {.iov_base = (void *)payload, .iov_len = payload_len},
    };

    int64_t deadline = timeout_ms < 0 ? -1 : kevo__now_ms() + timeout_ms;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigemptyset(&pending);
    sigpending(&pending);
    was_pending = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
    rc = write_all(fd, iov, 3, timeout_ms, deadline, &epipe, err);
    if (epipe && !was_pending) {
        /* Take back the SIGPIPE this write raised, so the caller's mask
         * comes back without a signal waiting behind it. */
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
done:
    free(text);
    return rc;
}

/* ---- receiving --------------------------------------------------------- */

enum { STAGE_HEADER, STAGE_JSON, STAGE_PAYLOAD };

struct kevo__ipc_reader {
    int stage;
    unsigned char header[KEVO__IPC_HEADER_SIZE];
    size_t got;    /* bytes of the current stage so far */
    size_t jlen;   /* from the header */
    uint64_t blen; /* from the header */
    char *json;    /* jlen + 1 bytes */
    unsigned char *payload;
    size_t payload_cap; /* grows as the payload arrives */
};

kevo__ipc_reader *kevo__ipc_reader_new(void)
{
    return calloc(1, sizeof(kevo__ipc_reader));
}

void kevo__ipc_reader_reset(kevo__ipc_reader *r)
{
    if (!r)
        return;
    free(r->json);
    free(r->payload);
    memset(r, 0, sizeof *r);
}

void kevo__ipc_reader_free(kevo__ipc_reader *r)
{
    kevo__ipc_reader_reset(r);
    free(r);
}

bool kevo__ipc_reader_partial(const kevo__ipc_reader *r)
{
    return r->stage != STAGE_HEADER || r->got > 0;
}

/* Where the next bytes of the current stage go, and how many are wanted;
 * grows the payload buffer as needed. NULL on no memory. */
static void *next_space(kevo__ipc_reader *r, size_t *want)
{
    switch (r->stage) {
    case STAGE_HEADER:
        *want = sizeof r->header - r->got;
        return r->header + r->got;
    case STAGE_JSON: *want = r->jlen - r->got; return r->json + r->got;
    default:
        if (r->got == r->payload_cap) {
            /* Grow with what arrives, so a header that announces a big
             * payload costs no memory before the bytes are there. */
            size_t cap = r->payload_cap ? r->payload_cap * 2 : 65536;
            if (cap > r->blen)
                cap = (size_t)r->blen;
            unsigned char *p = realloc(r->payload, cap);
            if (!p)
                return NULL;
            r->payload = p;
            r->payload_cap = cap;
        }
        *want = r->payload_cap - r->got;
        return r->payload + r->got;
    }
}

/* Moves to the next stage when the current one is complete; *frame_done
 * when the whole frame is there. */
static kevo_status advance(kevo__ipc_reader *r, bool *frame_done,
                           kevo_error *err)
{
    *frame_done = false;
    for (;;) {
        if (r->stage == STAGE_HEADER) {
            if (r->got < sizeof r->header)
                return KEVO_OK;
            uint64_t jlen = get_le(r->header, 4);
            uint64_t blen = get_le(r->header + 4, 8);
            kevo_status rc = check_lengths(jlen, blen, KEVO_EFORMAT, err);
            if (rc != KEVO_OK)
                return rc;
            r->jlen = (size_t)jlen;
            r->blen = blen;
            r->json = malloc(r->jlen + 1);
            if (!r->json)
                return kevo__error_set(err, KEVO_ENOMEM,
                                       "out of memory for a frame of %zu "
                                       "bytes of JSON",
                                       r->jlen);
            r->stage = STAGE_JSON;
            r->got = 0;
        } else if (r->stage == STAGE_JSON) {
            if (r->got < r->jlen)
                return KEVO_OK;
            r->json[r->jlen] = '\0';
            r->stage = STAGE_PAYLOAD;
            r->got = 0;
        } else {
            if (r->got < r->blen)
                return KEVO_OK;
            *frame_done = true;
            return KEVO_OK;
        }
    }
}

/* Turns the completed bytes into *frame and resets the reader. */
static kevo_status finish_frame(kevo__ipc_reader *r, kevo__frame *frame,
                                kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    json_error_t jerr;
    if (memchr(r->json, '\0', r->jlen)) {
        rc = kevo__error_set(err, KEVO_EFORMAT,
                             "protocol error: a NUL byte in the JSON text");
        goto done;
    }
    json_t *j = json_loadb(r->json, r->jlen, JSON_REJECT_DUPLICATES, &jerr);
    if (!j) {
        rc = kevo__error_set_foreign(
            err, KEVO_EFORMAT, KEVO_DOMAIN_JSON, json_error_code(&jerr),
            "protocol error: the JSON text does not parse: %s at line %d, "
            "column %d",
            jerr.text, jerr.line, jerr.column);
        goto done;
    }
    if (!json_is_object(j)) {
        json_decref(j);
        rc = kevo__error_set(err, KEVO_EFORMAT,
                             "protocol error: the JSON text is not an object");
        goto done;
    }
    frame->json = j;
    frame->payload_len = (size_t)r->blen;
    if (r->blen > 0 && r->payload_cap > r->blen) {
        unsigned char *p = realloc(r->payload, (size_t)r->blen);
        if (p)
            r->payload = p;
    }
    frame->payload = r->blen > 0 ? r->payload : NULL;
    if (r->blen > 0)
        r->payload = NULL;
done:
    kevo__ipc_reader_reset(r);
    return rc;
}

kevo_status kevo__ipc_reader_read(kevo__ipc_reader *r, int fd,
                                  kevo__frame *frame, bool *complete,
                                  kevo_error *err)
{
    kevo_status rc;
    bool done = false;
    int fl = fcntl(fd, F_GETFL);
    bool nonblocking = fl >= 0 && (fl & O_NONBLOCK);
    bool first = true;

    *complete = false;
    for (;;) {
        rc = advance(r, &done, err);
        if (rc != KEVO_OK) {
            kevo__ipc_reader_reset(r);
            return rc;
        }
        if (done)
            break;
        if (!first && !nonblocking)
            return KEVO_OK;
        size_t want = 0;
        void *dst = next_space(r, &want);
        if (!dst) {
            kevo__ipc_reader_reset(r);
            return kevo__error_set(err, KEVO_ENOMEM,
                                   "out of memory for a payload of %llu "
                                   "bytes",
                                   (unsigned long long)r->blen);
        }
        ssize_t n = read(fd, dst, want);
        if (n < 0 && errno == EINTR)
            continue;
        first = false;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return KEVO_OK;
        if (n < 0) {
            int e = errno;
            kevo__ipc_reader_reset(r);
            return kevo__error_errno(err, e, "pipe", "read");
        }
        if (n == 0) {
            bool partial = kevo__ipc_reader_partial(r);
            kevo__ipc_reader_reset(r);
            if (!partial)
                return kevo__error_set(err, KEVO_DONE,
                                       "worker closed the pipe");
            return kevo__error_set(
                err, KEVO_EIO,
                "worker closed the pipe in the middle of a frame");
        }
        r->got += (size_t)n;
    }
    rc = finish_frame(r, frame, err);
    if (rc == KEVO_OK)
        *complete = true;
    return rc;
}

kevo_status kevo__ipc_recv(int fd, int timeout_ms, kevo__frame *frame,
                           kevo_error *err)
{
    kevo__ipc_reader r;
    kevo_status rc = KEVO_OK;
    int64_t deadline = timeout_ms < 0 ? -1 : kevo__now_ms() + timeout_ms;

    memset(&r, 0, sizeof r);
    for (;;) {
        bool complete = false;
        int w = wait_fd(fd, POLLIN, deadline);
        if (w == 0) {
            rc = timed_out(err, timeout_ms);
            break;
        }
        if (w == -1) {
            rc = kevo__error_errno(err, errno, "pipe", "poll");
            break;
        }
        rc = kevo__ipc_reader_read(&r, fd, frame, &complete, err);
        if (rc != KEVO_OK || complete)
            break;
    }
    kevo__ipc_reader_reset(&r);
    return rc;
}

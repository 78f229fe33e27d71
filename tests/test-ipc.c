/*
 * test-ipc.c: frames over pipes and sockets: round trips, empty and large
 * payloads, partial reads and writes, signals, deadlines, a closed peer
 * (without dying of SIGPIPE), and headers that break the limits.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "proc/ipc.h"
#include "tap.h"

static void make_pipe(int fds[2], bool nonblocking_write)
{
    if (pipe2(fds, O_CLOEXEC) != 0)
        bail_out("pipe: %s", strerror(errno));
    if (nonblocking_write)
        fcntl(fds[1], F_SETFL, O_NONBLOCK);
}

static unsigned char *pattern(size_t n, unsigned seed)
{
    unsigned char *p = malloc(n ? n : 1);
    if (!p)
        bail_out("out of memory");
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 2654435761u + seed) >> 13);
    return p;
}

/* ---- a writer thread --------------------------------------------------- */

typedef struct writer_arg {
    int fd;
    size_t payload_len;
    unsigned seed;
    int delay_ms;   /* before sending */
    bool byte_wise; /* write the encoded frame a byte at a time */
    kevo_status rc;
    kevo_error err;
} writer_arg;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Encodes the frame by sending it through a pipe to ourselves. */
static unsigned char *encode(json_t *msg, const void *payload, size_t len,
                             size_t *out_len)
{
    int fds[2];
    make_pipe(fds, false);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    if (kevo__ipc_send(fds[1], msg, payload, len, -1, NULL) != KEVO_OK)
        bail_out("cannot encode a frame");
    close(fds[1]);
    kevo_buf b = {0};
    char chunk[4096];
    ssize_t n;
    while ((n = read(fds[0], chunk, sizeof chunk)) > 0)
        kevo__buf_append(&b, chunk, (size_t)n);
    close(fds[0]);
    *out_len = b.len;
    return (unsigned char *)kevo__buf_take(&b);
}

static void *writer_main(void *p)
{
    writer_arg *a = p;
    unsigned char *payload = pattern(a->payload_len, a->seed);
    json_t *msg = json_pack("{s:s, s:I, s:i}", "op", "data", "id",
                            (json_int_t)a->seed, "n", (int)a->payload_len);
    kevo_error_init(&a->err);
    if (a->delay_ms)
        sleep_ms(a->delay_ms);
    if (a->byte_wise) {
        size_t len = 0;
        unsigned char *bytes = encode(msg, payload, a->payload_len, &len);
        a->rc = KEVO_OK;
        for (size_t i = 0; i < len; i++) {
            if (write(a->fd, bytes + i, 1) != 1)
                a->rc = KEVO_EIO;
            if (i % 3 == 0)
                sleep_ms(1);
        }
        free(bytes);
    } else {
        a->rc =
            kevo__ipc_send(a->fd, msg, payload, a->payload_len, 10000, &a->err);
    }
    json_decref(msg);
    free(payload);
    return NULL;
}

/* Receives one frame from fd and checks it is the writer's. */
static void check_frame(int fd, size_t len, unsigned seed, int timeout_ms,
                        const char *what)
{
    kevo__frame f = {0};
    kevo_error err = KEVO__ERROR_INIT;
    kevo_status rc = kevo__ipc_recv(fd, timeout_ms, &f, &err);
    is_int(rc, KEVO_OK, "%s: received (%s)", what, err.text);
    if (rc != KEVO_OK)
        return;
    is_str(json_string_value(json_object_get(f.json, "op")), "data", "%s: op",
           what);
    is_int(json_integer_value(json_object_get(f.json, "id")), seed, "%s: id",
           what);
    is_uint(f.payload_len, len, "%s: payload length", what);
    unsigned char *want = pattern(len, seed);
    ok(len == 0 ? f.payload == NULL
                : f.payload && memcmp(f.payload, want, len) == 0,
       "%s: payload bytes", what);
    free(want);
    kevo__frame_clear(&f);
}

static void round_trip(int rfd, int wfd, size_t len, unsigned seed,
                       const char *what)
{
    pthread_t t;
    writer_arg a = {.fd = wfd, .payload_len = len, .seed = seed};
    pthread_create(&t, NULL, writer_main, &a);
    check_frame(rfd, len, seed, 10000, what);
    pthread_join(t, NULL);
    is_int(a.rc, KEVO_OK, "%s: sent (%s)", what, a.err.text);
}

static void test_round_trips(void)
{
    int p[2], s[2];
    make_pipe(p, false);
    round_trip(p[0], p[1], 3, 1, "pipe, 3 bytes");
    round_trip(p[0], p[1], 0, 2, "pipe, no payload");
    round_trip(p[0], p[1], 2u << 20, 3, "pipe, 2 MiB");
    close(p[0]);
    close(p[1]);

    make_pipe(p, true);
    round_trip(p[0], p[1], 1u << 20, 4, "pipe, non-blocking writer, 1 MiB");
    close(p[0]);
    close(p[1]);

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) != 0)
        bail_out("socketpair: %s", strerror(errno));
    round_trip(s[0], s[1], 0, 5, "socket, no payload");
    round_trip(s[1], s[0], 12345, 6, "socket, other way");
    round_trip(s[0], s[1], 3u << 20, 7, "socket, 3 MiB");
    close(s[0]);
    close(s[1]);

    /* Several frames back to back, then end of file. */
    make_pipe(p, false);
    json_t *m = json_pack("{s:s, s:I, s:i}", "op", "data", "id", (json_int_t)8,
                          "n", 10);
    unsigned char *pl = pattern(10, 8);
    for (int i = 0; i < 3; i++)
        kevo__ipc_send(p[1], m, pl, 10, 1000, NULL);
    close(p[1]);
    for (int i = 0; i < 3; i++)
        check_frame(p[0], 10, 8, 1000, "back to back");
    kevo__frame f = {0};
    kevo_error err = KEVO__ERROR_INIT;
    is_int(kevo__ipc_recv(p[0], 1000, &f, &err), KEVO_DONE,
           "end of file between frames");
    is_str(err.text, "worker closed the pipe", "  says so");
    close(p[0]);
    json_decref(m);
    free(pl);
}

/* ---- partial transfers ------------------------------------------------- */

typedef struct slow_reader {
    int fd;
    kevo_status rc;
    kevo__frame frame;
    int reads;
} slow_reader;

static void *slow_reader_main(void *p)
{
    slow_reader *r = p;
    kevo__ipc_reader *rd = kevo__ipc_reader_new();
    kevo_error err = KEVO__ERROR_INIT;
    bool complete = false;
    /* A blocking descriptor: each call reads at most once, and the sleeps
     * make the writer meet a full pipe again and again. */
    while (!complete) {
        sleep_ms(1);
        struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
        if (poll(&pfd, 1, 5000) <= 0) {
            r->rc = KEVO_ETIMEDOUT;
            break;
        }
        r->rc = kevo__ipc_reader_read(rd, r->fd, &r->frame, &complete, &err);
        r->reads++;
        if (r->rc != KEVO_OK)
            break;
    }
    kevo__ipc_reader_free(rd);
    return NULL;
}

static void test_partial(void)
{
    int p[2];
    pthread_t t;

    /* Partial writes: a non-blocking writer and a slow reader. */
    make_pipe(p, true);
    slow_reader r = {.fd = p[0]};
    pthread_create(&t, NULL, slow_reader_main, &r);
    size_t len = 1u << 20;
    unsigned char *payload = pattern(len, 9);
    json_t *msg = json_pack("{s:s}", "op", "slow");
    kevo_error err = KEVO__ERROR_INIT;
    is_int(kevo__ipc_send(p[1], msg, payload, len, 20000, &err), KEVO_OK,
           "a 1 MiB frame to a slow reader (%s)", err.text);
    pthread_join(t, NULL);
    is_int(r.rc, KEVO_OK, "the slow reader got it");
    ok(r.reads > 10, "in many reads (%d)", r.reads);
    ok(r.frame.payload_len == len && r.frame.payload &&
           memcmp(r.frame.payload, payload, len) == 0,
       "every byte arrived in order");
    kevo__frame_clear(&r.frame);
    json_decref(msg);
    free(payload);
    close(p[0]);
    close(p[1]);

    /* Partial reads: a frame that trickles in a byte at a time. */
    make_pipe(p, false);
    writer_arg a = {
        .fd = p[1], .payload_len = 40, .seed = 10, .byte_wise = true};
    pthread_create(&t, NULL, writer_main, &a);
    check_frame(p[0], 40, 10, 10000, "a byte at a time");
    pthread_join(t, NULL);
    close(p[0]);
    close(p[1]);
}

/* ---- signals ----------------------------------------------------------- */

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

/* Helper threads block SIGALRM, so that every signal interrupts the main
 * thread, which sits in the call under test. */
static void block_alarm(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static void *delayed_writer_main(void *p)
{
    block_alarm();
    return writer_main(p);
}

typedef struct delayed_reader {
    int fd;
    kevo_status rc;
    kevo__frame frame;
} delayed_reader;

static void *delayed_reader_main(void *p)
{
    delayed_reader *r = p;
    block_alarm();
    sleep_ms(80);
    r->rc = kevo__ipc_recv(r->fd, 10000, &r->frame, NULL);
    return NULL;
}

static void test_eintr(void)
{
    struct sigaction sa;
    struct itimerval it = {{0, 10000}, {0, 10000}}, stop = {{0, 0}, {0, 0}};
    int p[2];
    pthread_t t;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: calls fail with EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    setitimer(ITIMER_REAL, &it, NULL);

    /* recv waits in poll() while signals arrive. */
    make_pipe(p, false);
    alarms = 0;
    writer_arg a = {
        .fd = p[1], .payload_len = 1000, .seed = 11, .delay_ms = 80};
    pthread_create(&t, NULL, delayed_writer_main, &a);
    check_frame(p[0], 1000, 11, 10000, "recv with signals arriving");
    pthread_join(t, NULL);
    ok(alarms >= 3, "  signals did arrive (%d)", (int)alarms);

    /* send waits in write() on a full pipe while signals arrive. */
    alarms = 0;
    delayed_reader r = {.fd = p[0]};
    pthread_create(&t, NULL, delayed_reader_main, &r);
    size_t len = 256u << 10;
    unsigned char *payload = pattern(len, 12);
    json_t *msg = json_pack("{s:s}", "op", "x");
    kevo_error err = KEVO__ERROR_INIT;
    is_int(kevo__ipc_send(p[1], msg, payload, len, 10000, &err), KEVO_OK,
           "send with signals arriving (%s)", err.text);
    pthread_join(t, NULL);
    ok(alarms >= 3, "  signals did arrive (%d)", (int)alarms);
    is_int(r.rc, KEVO_OK, "  and the frame came through");
    ok(r.frame.payload_len == len && memcmp(r.frame.payload, payload, len) == 0,
       "  whole");
    kevo__frame_clear(&r.frame);
    json_decref(msg);
    free(payload);

    setitimer(ITIMER_REAL, &stop, NULL);
    /* The handler stays: a signal still on its way must not end us. */
    close(p[0]);
    close(p[1]);
}

/* ---- deadlines, closed pipes, bad frames ------------------------------- */

static void test_deadlines(void)
{
    int p[2];
    kevo__frame f = {0};
    kevo_error err = KEVO__ERROR_INIT;

    make_pipe(p, true);
    int64_t t0 = kevo__now_ms();
    is_int(kevo__ipc_recv(p[0], 150, &f, &err), KEVO_ETIMEDOUT,
           "recv on a silent pipe times out");
    int64_t took = kevo__now_ms() - t0;
    ok(took >= 150 && took < 2000, "after the deadline (%lld ms)",
       (long long)took);
    is_str(err.text, "timed out after 150 ms", "  and says so");
    ok(f.json == NULL && f.payload == NULL, "  with no frame");

    /* A frame cut short: the header arrives, the rest does not. */
    unsigned char header[12] = {10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    if (write(p[1], header, sizeof header) != (ssize_t)sizeof header)
        bail_out("write");
    kevo_error_init(&err);
    is_int(kevo__ipc_recv(p[0], 100, &f, &err), KEVO_ETIMEDOUT,
           "recv of a frame that stops half-way times out");

    /* A writer into a full pipe that nobody reads. */
    size_t len = 1u << 20;
    unsigned char *payload = pattern(len, 12);
    json_t *msg = json_pack("{s:s}", "op", "big");
    kevo_error_init(&err);
    t0 = kevo__now_ms();
    is_int(kevo__ipc_send(p[1], msg, payload, len, 120, &err), KEVO_ETIMEDOUT,
           "send into a full pipe times out");
    took = kevo__now_ms() - t0;
    ok(took >= 120 && took < 2000, "after the deadline (%lld ms)",
       (long long)took);
    is_str(err.text, "timed out after 120 ms", "  and says so");
    close(p[0]);
    close(p[1]);
    json_decref(msg);
    free(payload);
}

static void test_closed(void)
{
    int p[2];
    kevo__frame f = {0};
    kevo_error err = KEVO__ERROR_INIT;
    sigset_t pending, mask_before, mask_after;
    struct sigaction dfl, old;

    /* SIGPIPE at its default action: a raised one would end the test. */
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGPIPE, &dfl, &old);
    pthread_sigmask(SIG_SETMASK, NULL, &mask_before);

    make_pipe(p, false);
    close(p[0]);
    json_t *msg = json_pack("{s:s}", "op", "x");
    unsigned char payload[100] = {0};
    is_int(kevo__ipc_send(p[1], msg, payload, sizeof payload, 1000, &err),
           KEVO_EIO, "send to a closed pipe fails");
    is_str(err.text, "worker closed the pipe", "  and says so");
    is_int(err.foreign, EPIPE, "  with EPIPE");
    ok(1, "the process did not die of SIGPIPE");
    sigemptyset(&pending);
    sigpending(&pending);
    ok(!sigismember(&pending, SIGPIPE), "no SIGPIPE left pending");
    pthread_sigmask(SIG_SETMASK, NULL, &mask_after);
    ok(sigismember(&mask_after, SIGPIPE) == sigismember(&mask_before, SIGPIPE),
       "the signal mask is as it was");
    sigaction(SIGPIPE, &old, NULL);
    close(p[1]);

    /* A closed socket too. */
    int s[2];
    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s);
    close(s[1]);
    kevo_error_init(&err);
    is_int(kevo__ipc_send(s[0], msg, NULL, 0, 1000, &err), KEVO_EIO,
           "send to a closed socket fails");
    close(s[0]);
    json_decref(msg);

    /* End of file in the middle of a frame. */
    make_pipe(p, false);
    unsigned char half[7] = {2, 0, 0, 0, 0, 0, 0};
    if (write(p[1], half, sizeof half) != (ssize_t)sizeof half)
        bail_out("write");
    close(p[1]);
    kevo_error_init(&err);
    is_int(kevo__ipc_recv(p[0], 1000, &f, &err), KEVO_EIO,
           "end of file inside a header");
    is_str(err.text, "worker closed the pipe in the middle of a frame",
           "  says so");
    close(p[0]);
}

/* Writes raw bytes and expects recv to fail with code and text. */
static void bad_frame(const void *bytes, size_t len, kevo_status code,
                      const char *text, const char *what)
{
    int p[2];
    kevo__frame f = {0};
    kevo_error err = KEVO__ERROR_INIT;
    make_pipe(p, false);
    if (write(p[1], bytes, len) != (ssize_t)len)
        bail_out("write");
    int64_t t0 = kevo__now_ms();
    is_int(kevo__ipc_recv(p[0], 2000, &f, &err), code, "%s: refused", what);
    like_str(err.text, text, "%s: says why", what);
    ok(kevo__now_ms() - t0 < 1000, "%s: at once", what);
    ok(f.json == NULL && f.payload == NULL, "%s: no frame", what);
    close(p[0]);
    close(p[1]);
}

static void test_bad_frames(void)
{
    unsigned char h[64];

    memset(h, 0, sizeof h);
    h[0] = 0;
    h[1] = 0;
    h[2] = 0x10;
    h[3] = 0x04; /* 65 MiB of JSON */
    bad_frame(h, 12, KEVO_EFORMAT,
              "protocol error: frame of 65 MiB (JSON text over the 64 MiB "
              "limit)",
              "a 65 MiB JSON header");
    memset(h, 0, sizeof h);
    h[7] = 0x40; /* 5 << 30 bytes of payload: 0x140000000 */
    h[8] = 0x01;
    bad_frame(h, 12, KEVO_EFORMAT,
              "protocol error: frame of 5 GiB (payload over the 1 GiB limit)",
              "a 5 GiB payload header");

    memset(h, 0, sizeof h);
    h[0] = 5;
    memcpy(h + 12, "[1,2]", 5);
    bad_frame(h, 17, KEVO_EFORMAT, "not an object", "a JSON array");
    memset(h, 0, sizeof h);
    h[0] = 4;
    memcpy(h + 12, "{bad", 4);
    bad_frame(h, 16, KEVO_EFORMAT, "does not parse", "broken JSON");
    memset(h, 0, sizeof h);
    h[0] = 4;
    memcpy(h + 12, "{}\0 ", 4);
    bad_frame(h, 16, KEVO_EFORMAT, "NUL byte", "a NUL in the JSON");
    memset(h, 0, sizeof h);
    bad_frame(h, 12, KEVO_EFORMAT, "does not parse", "an empty frame");

    /* The sender keeps to the limits too, before writing anything. */
    int p[2];
    make_pipe(p, true);
    json_t *msg = json_pack("{s:s}", "op", "x");
    kevo_error err = KEVO__ERROR_INIT;
    unsigned char one = 0;
    is_int(kevo__ipc_send(p[1], msg, &one, ((size_t)1 << 30) + 1, 100, &err),
           KEVO_ELIMIT, "send of a payload over 1 GiB is refused");
    like_str(err.text, "payload over the 1 GiB limit", "  says why");
    json_t *arr = json_array();
    kevo_error_init(&err);
    is_int(kevo__ipc_send(p[1], arr, NULL, 0, 100, &err), KEVO_EINVAL,
           "send of a JSON array is refused");
    kevo_error_init(&err);
    is_int(kevo__ipc_send(p[1], msg, NULL, 5, 100, &err), KEVO_EINVAL,
           "send of a missing payload is refused");
    struct pollfd pfd = {.fd = p[0], .events = POLLIN};
    is_int(poll(&pfd, 1, 0), 0, "nothing was written");
    json_decref(arr);
    json_decref(msg);
    close(p[0]);
    close(p[1]);
}

static void test_sizes(void)
{
    char b[32];
    is_str(kevo__ipc_size_text(0, b, sizeof b), "0 bytes", "0 bytes");
    is_str(kevo__ipc_size_text(1, b, sizeof b), "1 byte", "1 byte");
    is_str(kevo__ipc_size_text(1536, b, sizeof b), "1.5 KiB", "1.5 KiB");
    is_str(kevo__ipc_size_text((uint64_t)64 << 20, b, sizeof b), "64 MiB",
           "64 MiB");
    is_str(kevo__ipc_size_text((uint64_t)5 << 30, b, sizeof b), "5 GiB",
           "5 GiB");
}

int main(void)
{
    test_round_trips();
    test_partial();
    test_eintr();
    test_deadlines();
    test_closed();
    test_bad_frames();
    test_sizes();
    return done_testing();
}

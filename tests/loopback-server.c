/*
 * loopback-server.c: a real HTTP/1.1 server on 127.0.0.1 for the llm
 * operator's tests (see loopback-server.h): the listening thread, its
 * connections, and the delivery of answers (loopback-answer.c decides
 * them), whole or as a chunked event stream, with the delays, silences
 * and cut connections the behaviours ask for. One thread, one poll()
 * loop, non-blocking sockets, so it holds many connections at once and
 * counts how many requests it holds.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "loopback-private.h"

#define MAX_REQUEST (16u << 20)

typedef enum conn_state { C_READ, C_WAIT, C_WRITE } conn_state;

typedef struct conn {
    int fd;
    conn_state state;
    char *in;
    size_t in_len, in_cap;
    lb_piece *out; /* what is to be sent, piece by piece */
    size_t nout, out_i, out_off;
    double send_at; /* when the piece out_i may go */
    bool close_after;
    bool held; /* counted in active */
} conn;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

char *lb_dupn(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d) {
        fprintf(stderr, "loopback: out of memory\n");
        abort();
    }
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *lb_dup(const char *s)
{
    return lb_dupn(s, strlen(s));
}

void *lb_realloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        fprintf(stderr, "loopback: out of memory\n");
        abort();
    }
    return q;
}

/* ---- the public side ---------------------------------------------------- */

static void *serve(void *arg);

loopback *loopback_start(void)
{
    loopback *lb = calloc(1, sizeof(*lb));
    if (!lb)
        return NULL;
    lb->listen_fd = -1;
    lb->wake[0] = lb->wake[1] = -1;
    pthread_mutex_init(&lb->mu, NULL);
    lb->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lb->listen_fd < 0)
        goto fail;
    int one = 1;
    if (setsockopt(lb->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one,
                   sizeof(one)) != 0)
        goto fail;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = 0,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(lb->listen_fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(lb->listen_fd, 512) != 0)
        goto fail;
    socklen_t len = sizeof(a);
    if (getsockname(lb->listen_fd, (struct sockaddr *)&a, &len) != 0)
        goto fail;
    lb->port = ntohs(a.sin_port);
    snprintf(lb->url, sizeof(lb->url), "http://127.0.0.1:%d", lb->port);
    if (fcntl(lb->listen_fd, F_SETFL, O_NONBLOCK) != 0 ||
        pipe2(lb->wake, O_CLOEXEC | O_NONBLOCK) != 0)
        goto fail;
    if (pthread_create(&lb->thread, NULL, serve, lb) != 0)
        goto fail;
    lb->started = true;
    return lb;
fail:
    fprintf(stderr, "loopback: cannot start: %s\n", strerror(errno));
    loopback_stop(lb);
    return NULL;
}

static void conn_close(loopback *lb, size_t i);

static void rec_free(loopback_request *r)
{
    free(r->method);
    free(r->path);
    free(r->headers);
    free(r->body);
    free(r->api);
    free(r->model);
    free(r->behaviour);
    free(r->batch);
    free(r);
}

void loopback_stop(loopback *lb)
{
    if (!lb)
        return;
    if (lb->started) {
        pthread_mutex_lock(&lb->mu);
        lb->stop = true;
        pthread_mutex_unlock(&lb->mu);
        ssize_t w = write(lb->wake[1], "x", 1);
        (void)w;
        pthread_join(lb->thread, NULL);
    }
    while (lb->nconns)
        conn_close(lb, lb->nconns - 1);
    if (lb->listen_fd >= 0)
        close(lb->listen_fd);
    if (lb->wake[0] >= 0)
        close(lb->wake[0]);
    if (lb->wake[1] >= 0)
        close(lb->wake[1]);
    for (size_t i = 0; i < lb->ntexts; i++) {
        free(lb->texts[i].name);
        free(lb->texts[i].text);
    }
    free(lb->texts);
    for (size_t i = 0; i < lb->nscript; i++)
        free(lb->script[i]);
    free(lb->script);
    free(lb->expect_key);
    for (size_t i = 0; i < lb->nmarkers; i++)
        free(lb->markers[i].key);
    free(lb->markers);
    lb_batches_free(lb);
    for (size_t i = 0; i < lb->nrecs; i++)
        rec_free(lb->recs[i]);
    free(lb->recs);
    pthread_mutex_destroy(&lb->mu);
    free(lb);
}

int loopback_port(const loopback *lb)
{
    return lb->port;
}

const char *loopback_url(const loopback *lb)
{
    return lb->url;
}

void loopback_set_text(loopback *lb, const char *name, const char *text)
{
    pthread_mutex_lock(&lb->mu);
    size_t i;
    for (i = 0; i < lb->ntexts; i++)
        if (strcmp(lb->texts[i].name, name) == 0)
            break;
    if (i == lb->ntexts) {
        lb->texts = lb_realloc(lb->texts, (i + 1) * sizeof(*lb->texts));
        lb->texts[i].name = lb_dup(name);
        lb->ntexts++;
    } else {
        free(lb->texts[i].text);
    }
    lb->texts[i].text = lb_dup(text);
    pthread_mutex_unlock(&lb->mu);
}

void lb_list_set(char ***items, size_t *n, size_t *pos, const char *text)
{
    for (size_t i = 0; i < *n; i++)
        free((*items)[i]);
    *n = *pos = 0;
    const char *p = text;
    while (p && *p) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        *items = lb_realloc(*items, (*n + 1) * sizeof(char *));
        (*items)[(*n)++] = lb_dupn(p, len);
        p = c ? c + 1 : NULL;
    }
}

void loopback_script(loopback *lb, const char *behaviours)
{
    pthread_mutex_lock(&lb->mu);
    lb_list_set(&lb->script, &lb->nscript, &lb->script_pos, behaviours);
    pthread_mutex_unlock(&lb->mu);
}

void loopback_expect_key(loopback *lb, const char *key)
{
    pthread_mutex_lock(&lb->mu);
    free(lb->expect_key);
    lb->expect_key = key ? lb_dup(key) : NULL;
    pthread_mutex_unlock(&lb->mu);
}

size_t loopback_count(loopback *lb)
{
    pthread_mutex_lock(&lb->mu);
    size_t n = lb->nrecs - lb->base;
    pthread_mutex_unlock(&lb->mu);
    return n;
}

const loopback_request *loopback_get(loopback *lb, size_t i)
{
    pthread_mutex_lock(&lb->mu);
    const loopback_request *r =
        lb->base + i < lb->nrecs ? lb->recs[lb->base + i] : NULL;
    pthread_mutex_unlock(&lb->mu);
    return r;
}

char *loopback_header(const loopback_request *r, const char *name)
{
    size_t n = strlen(name);
    const char *p = r->headers;
    while (p && *p) {
        const char *eol = strstr(p, "\r\n");
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (len > n && strncasecmp(p, name, n) == 0 && p[n] == ':') {
            const char *v = p + n + 1;
            while (*v == ' ')
                v++;
            return lb_dupn(v, (size_t)(p + len - v));
        }
        p = eol ? eol + 2 : NULL;
    }
    return NULL;
}

int loopback_max_active(loopback *lb)
{
    pthread_mutex_lock(&lb->mu);
    int n = lb->max_active;
    pthread_mutex_unlock(&lb->mu);
    return n;
}

int loopback_active(loopback *lb)
{
    pthread_mutex_lock(&lb->mu);
    int n = lb->active;
    pthread_mutex_unlock(&lb->mu);
    return n;
}

void loopback_reset(loopback *lb)
{
    pthread_mutex_lock(&lb->mu);
    lb->base = lb->nrecs;
    for (size_t i = 0; i < lb->nmarkers; i++)
        free(lb->markers[i].key);
    lb->nmarkers = 0;
    lb->max_active = lb->active;
    pthread_mutex_unlock(&lb->mu);
}

void lb_record(loopback *lb, loopback_request *q)
{
    if (lb->nrecs == lb->crecs) {
        lb->crecs = lb->crecs ? 2 * lb->crecs : 64;
        lb->recs = lb_realloc(lb->recs, lb->crecs * sizeof(*lb->recs));
    }
    lb->recs[lb->nrecs++] = q;
}

static const char *reason_phrase(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    default: return "Status";
    }
}

/* ---- connections -------------------------------------------------------- */

static void release(loopback *lb, conn *c)
{
    if (c->held) {
        pthread_mutex_lock(&lb->mu);
        lb->active--;
        pthread_mutex_unlock(&lb->mu);
        c->held = false;
    }
}

static void conn_close(loopback *lb, size_t i)
{
    conn *c = lb->conns[i];
    release(lb, c);
    close(c->fd);
    free(c->in);
    for (size_t k = 0; k < c->nout; k++)
        free(c->out[k].data);
    free(c->out);
    free(c);
    lb->conns[i] = lb->conns[--lb->nconns];
}

/* Adds a piece to what c is to send (taking data). */
static void queue(conn *c, char *data, size_t len, double delay_s)
{
    c->out = lb_realloc(c->out, (c->nout + 1) * sizeof(*c->out));
    c->out[c->nout++] = (lb_piece){data, len, delay_s};
}

/* Queues the status line, the headers and the body of r, piece by piece:
 * in a chunked body each piece is a chunk, and the last chunk ends it
 * unless it is cut. */
static void queue_reply(conn *c, lb_reply *r)
{
    for (size_t k = 0; k < c->nout; k++)
        free(c->out[k].data);
    c->nout = c->out_i = c->out_off = 0;
    if (r->no_answer)
        return;
    size_t body_len = 0;
    for (size_t k = 0; k < r->npieces; k++)
        body_len += r->pieces[k].len;
    char length[64];
    if (r->chunked)
        snprintf(length, sizeof(length),
                 "Transfer-Encoding: chunked\r\n"
                 "Cache-Control: no-cache\r\n");
    else
        snprintf(length, sizeof(length), "Content-Length: %ld\r\n",
                 r->declared_len >= 0 ? r->declared_len : (long)body_len);
    if (r->cut)
        c->close_after = true;
    char head[1024];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n%s%s%s\r\n",
                     r->status, reason_phrase(r->status), r->content_type,
                     length, r->extra_headers ? r->extra_headers : "",
                     c->close_after ? "Connection: close\r\n" : "");
    queue(c, lb_dupn(head, (size_t)n), (size_t)n, 0);
    for (size_t k = 0; k < r->npieces; k++) {
        lb_piece *p = &r->pieces[k];
        if (r->chunked) {
            char size[32];
            int m = snprintf(size, sizeof(size), "%zx\r\n", p->len);
            char *chunk = lb_realloc(NULL, (size_t)m + p->len + 2);
            memcpy(chunk, size, (size_t)m);
            memcpy(chunk + m, p->data, p->len);
            memcpy(chunk + m + p->len, "\r\n", 2);
            queue(c, chunk, (size_t)m + p->len + 2, p->delay_s);
        } else {
            queue(c, lb_dupn(p->data, p->len), p->len, p->delay_s);
        }
    }
    if (r->chunked && !r->cut)
        queue(c, lb_dup("0\r\n\r\n"), 5, 0);
}

/* Parses a complete request at the start of c->in, if there is one, and
 * prepares the answer. Returns 1 when a request was taken, 0 when more
 * bytes are needed, -1 for a request that cannot be served. */
static int take_request(loopback *lb, conn *c)
{
    if (c->in_len == 0)
        return 0;
    char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
    if (!end)
        return c->in_len > 65536 ? -1 : 0;
    size_t head_len = (size_t)(end - c->in) + 4;
    char *head = lb_dupn(c->in, head_len);
    long clen = 0;
    char *line_end = strstr(head, "\r\n");
    for (char *p = line_end + 2; p < head + head_len - 2;) {
        char *e = strstr(p, "\r\n");
        if (strncasecmp(p, "content-length:", 15) == 0)
            clen = atol(p + 15);
        p = e + 2;
    }
    if (clen < 0 || (size_t)clen > MAX_REQUEST) {
        free(head);
        return -1;
    }
    if (c->in_len < head_len + (size_t)clen) {
        free(head);
        return 0;
    }
    loopback_request *q = calloc(1, sizeof(*q));
    if (!q)
        abort();
    q->received = now_s();
    char method[16] = "", path[1024] = "";
    sscanf(head, "%15s %1023s", method, path);
    q->method = lb_dup(method);
    q->path = lb_dup(path);
    q->headers = lb_dup(line_end + 2);
    q->body = lb_dupn(c->in + head_len, (size_t)clen);
    q->body_len = (size_t)clen;
    size_t pl = strlen(path);
    if (pl >= 17 && strcmp(path + pl - 17, "/chat/completions") == 0)
        q->api = lb_dup("openai");
    else if (pl >= 12 && strcmp(path + pl - 12, "/v1/messages") == 0)
        q->api = lb_dup("anthropic");
    else
        q->api = lb_dup("");
    bool client_close = false;
    char *conn_hdr = loopback_header(q, "connection");
    if (conn_hdr && strcasecmp(conn_hdr, "close") == 0)
        client_close = true;
    free(conn_hdr);
    free(head);
    memmove(c->in, c->in + head_len + clen, c->in_len - head_len - clen);
    c->in_len -= head_len + (size_t)clen;

    lb_reply r;
    pthread_mutex_lock(&lb->mu);
    lb_answer(lb, q, &r);
    lb_record(lb, q);
    lb->active++;
    if (lb->active > lb->max_active)
        lb->max_active = lb->active;
    pthread_mutex_unlock(&lb->mu);
    c->held = true;

    c->close_after = r.close_after || client_close;
    queue_reply(c, &r);
    c->send_at = now_s() + r.delay_s;
    c->state = r.delay_s > 0 ? C_WAIT : C_WRITE;
    lb_reply_free(&r);
    return 1;
}

/* Reads what is there; false when the peer closed or failed. */
static bool conn_read(conn *c)
{
    for (;;) {
        if (c->in_cap - c->in_len < 65536) {
            c->in_cap = c->in_cap ? 2 * c->in_cap : 131072;
            c->in = lb_realloc(c->in, c->in_cap);
        }
        ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
        if (n > 0) {
            c->in_len += (size_t)n;
            if (c->in_len > MAX_REQUEST + 65536)
                return false;
            continue;
        }
        if (n == 0)
            return false;
        if (errno == EINTR)
            continue;
        return errno == EAGAIN || errno == EWOULDBLOCK;
    }
}

/* Writes what it can of the pieces whose time has come; returns -1 on a
 * failed peer, 0 when it must wait (for the peer, or for a piece's time),
 * 1 when all is sent. */
static int conn_write(conn *c)
{
    while (c->out_i < c->nout) {
        lb_piece *p = &c->out[c->out_i];
        if (c->out_off == 0 && p->delay_s > 0) {
            /* A silence before this piece. */
            c->send_at = now_s() + p->delay_s;
            p->delay_s = 0;
            c->state = C_WAIT;
            return 0;
        }
        if (c->out_off == p->len) {
            c->out_i++;
            c->out_off = 0;
            continue;
        }
        ssize_t n = send(c->fd, p->data + c->out_off, p->len - c->out_off,
                         MSG_NOSIGNAL);
        if (n > 0) {
            c->out_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        return -1;
    }
    return 1;
}

/* Moves a connection on; false when it is to be closed. */
static bool conn_step(loopback *lb, conn *c, short revents)
{
    if (c->state == C_READ || c->state == C_WAIT) {
        if (revents & (POLLIN | POLLHUP | POLLERR)) {
            if (!conn_read(c))
                return false;
        }
    }
    if (c->state == C_WAIT && now_s() >= c->send_at)
        c->state = C_WRITE;
    if (c->state == C_READ) {
        int t = take_request(lb, c);
        if (t < 0)
            return false;
    }
    if (c->state == C_WRITE) {
        int w = conn_write(c);
        if (w < 0)
            return false;
        if (w == 1) {
            release(lb, c);
            if (c->close_after) {
                shutdown(c->fd, SHUT_WR);
                return false;
            }
            c->state = C_READ;
            return conn_step(lb, c, 0);
        }
    }
    return true;
}

static void *serve(void *arg)
{
    loopback *lb = arg;
    struct pollfd fds[LB_MAX_CONNS + 2];
    for (;;) {
        pthread_mutex_lock(&lb->mu);
        bool stop = lb->stop;
        pthread_mutex_unlock(&lb->mu);
        if (stop)
            break;
        double now = now_s(), next = now + 0.5;
        size_t n = 0;
        fds[n++] = (struct pollfd){.fd = lb->wake[0], .events = POLLIN};
        fds[n++] =
            (struct pollfd){.fd = lb->listen_fd,
                            .events = lb->nconns < LB_MAX_CONNS ? POLLIN : 0};
        for (size_t i = 0; i < lb->nconns; i++) {
            conn *c = lb->conns[i];
            short ev = c->state == C_WRITE ? POLLOUT : POLLIN;
            if (c->state == C_WAIT && c->send_at < next)
                next = c->send_at;
            fds[n++] = (struct pollfd){.fd = c->fd, .events = ev};
        }
        int timeout = (int)((next - now) * 1000.0) + 1;
        if (timeout < 0)
            timeout = 0;
        int pr = poll(fds, n, timeout);
        if (pr < 0 && errno != EINTR)
            break;
        if (fds[1].revents & POLLIN) {
            for (;;) {
                int fd = accept4(lb->listen_fd, NULL, NULL,
                                 SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0)
                    break;
                if (lb->nconns >= LB_MAX_CONNS) {
                    close(fd);
                    break;
                }
                /* Events go out as they are written, as from the
                 * vendors' servers (no Nagle delay). */
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                conn *c = calloc(1, sizeof(*c));
                if (!c)
                    abort();
                c->fd = fd;
                c->state = C_READ;
                lb->conns[lb->nconns++] = c;
            }
        }
        if (fds[0].revents & POLLIN) {
            char buf[64];
            while (read(lb->wake[0], buf, sizeof(buf)) > 0)
                ;
        }
        /* Connections accepted in this pass have no pollfd yet: they are
         * stepped without events. Walk backwards so closing one (which
         * moves the last into its place) skips nothing. */
        for (size_t i = lb->nconns; i-- > 0;) {
            conn *c = lb->conns[i];
            short rev = 0;
            for (size_t k = 2; k < n; k++)
                if (fds[k].fd == c->fd) {
                    rev = fds[k].revents;
                    break;
                }
            if (!conn_step(lb, c, rev))
                conn_close(lb, i);
        }
    }
    return NULL;
}

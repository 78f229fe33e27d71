/*
 * http.c: the llm operator's request engine over libcurl's multi interface:
 * a queue, a concurrency limit, per-attempt total and idle time limits,
 * event streams handed to a sink as they arrive, TCP keepalive, retries
 * with backoff and jitter that honour Retry-After, a reply size cap, and a
 * count of every outcome.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <curl/curl.h>

#include "buf.h"
#include "http.h"
#include "reception.h"

/* How much of an error body a failure text quotes. */
#define SNIPPET_MAX 300
/* TCP keepalive: the first probe after this much silence, then one every
 * KEEPALIVE_INTVL_S; KEEPALIVE_CNT unanswered probes drop the connection. */
#define KEEPALIVE_IDLE_S 30L
#define KEEPALIVE_INTVL_S 15L
#define KEEPALIVE_CNT 8
/* A connection that takes longer than this to open is retried. */
#define CONNECT_MAX_S 60.0

typedef struct job job;
struct job {
    job *next; /* in the queue or the waiting list */
    job *prev; /* in the active list */
    llm_http *h;
    char *url;
    struct curl_slist *headers;
    bool get;
    char *body;
    size_t body_len;
    double timeout_s;
    double idle_timeout_s;
    llm_http_attempt_fn attempt_cb;
    llm_http_done_fn done;
    void *ud;

    int attempts;
    double submitted_at;
    double started_at;
    double due; /* when a waiting job may be sent again */
    CURL *easy;
    llm_reception rx;  /* this attempt's reply */
    bool idle_expired; /* this attempt was ended by the idle limit */
    char errbuf[CURL_ERROR_SIZE];
};

struct llm_http {
    llm_http_config cfg;
    CURLM *multi;
    job *queue_head, *queue_tail; /* to be sent, in order */
    job *waiting;                 /* waiting for a retry's due time */
    job *active;                  /* in the multi handle */
    int nactive;
    size_t pending;
    llm_http_stats stats;
};

static const char *const outcome_names[LLM_OUTCOME_COUNT] = {
    "ok",        "http_error", "timeout", "truncated", "malformed",
    "too_large", "transport",  "budget",  "cancelled", "stream_error"};

const char *kevo__llm_outcome_name(llm_outcome o)
{
    return (unsigned)o < LLM_OUTCOME_COUNT ? outcome_names[o] : "unknown";
}

bool kevo__llm_outcome_from_name(const char *name, llm_outcome *o)
{
    for (int i = 0; name && i < LLM_OUTCOME_COUNT; i++)
        if (strcmp(name, outcome_names[i]) == 0) {
            *o = (llm_outcome)i;
            return true;
        }
    return false;
}

double kevo__llm_http_backoff(const llm_http_config *cfg, int k, double u)
{
    double d = cfg->backoff_base_s;
    for (int i = 1; i < k && d < cfg->backoff_max_s; i++)
        d *= 2;
    if (d > cfg->backoff_max_s)
        d = cfg->backoff_max_s;
    if (u < 0)
        u = 0;
    if (u > 1)
        u = 1;
    return d * (0.5 + 0.5 * u);
}

llm_http *kevo__llm_http_new(const llm_http_config *cfg, char *err,
                             size_t errlen)
{
    llm_http *h = NULL;
    if (cfg->concurrency < 1 || cfg->max_retries < 0 ||
        !(cfg->backoff_base_s >= 0) ||
        !(cfg->backoff_max_s >= cfg->backoff_base_s) ||
        !(cfg->retry_after_max_s >= 0) || cfg->max_reply_bytes == 0) {
        kevo__llm_errf(err, errlen,
                       "bad request engine settings: concurrency %d, "
                       "max_retries %d, backoff %g..%g s, reply cap %zu",
                       cfg->concurrency, cfg->max_retries, cfg->backoff_base_s,
                       cfg->backoff_max_s, cfg->max_reply_bytes);
        return NULL;
    }
    CURLcode grc = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (grc != CURLE_OK) {
        kevo__llm_errf(err, errlen, "curl_global_init: %s",
                       curl_easy_strerror(grc));
        return NULL;
    }
    h = calloc(1, sizeof(*h));
    if (!h) {
        kevo__llm_errf(err, errlen, "out of memory");
        goto fail;
    }
    h->cfg = *cfg;
    h->multi = curl_multi_init();
    if (!h->multi) {
        kevo__llm_errf(err, errlen, "curl_multi_init failed");
        goto fail;
    }
    /* Keep enough idle connections for every slot to be reused. */
    CURLMcode mrc = curl_multi_setopt(h->multi, CURLMOPT_MAXCONNECTS,
                                      (long)cfg->concurrency + 4);
    if (mrc != CURLM_OK) {
        kevo__llm_errf(err, errlen, "curl_multi_setopt: %s",
                       curl_multi_strerror(mrc));
        goto fail;
    }
    return h;
fail:
    if (h) {
        if (h->multi)
            curl_multi_cleanup(h->multi);
        free(h);
    }
    curl_global_cleanup();
    return NULL;
}

static void job_free(job *j)
{
    if (!j)
        return;
    if (j->easy) {
        curl_multi_remove_handle(j->h->multi, j->easy);
        curl_easy_cleanup(j->easy);
    }
    free(j->url);
    /* The headers hold the API key: wipe them before they go back. */
    for (struct curl_slist *l = j->headers; l; l = l->next) {
        volatile char *v = l->data;
        while (*v)
            *v++ = '\0';
    }
    curl_slist_free_all(j->headers);
    free(j->body);
    kevo__llm_reception_free(&j->rx);
    free(j);
}

static void active_unlink(llm_http *h, job *j)
{
    if (j->prev)
        j->prev->next = j->next;
    else
        h->active = j->next;
    if (j->next)
        j->next->prev = j->prev;
    j->next = j->prev = NULL;
    h->nactive--;
}

/* Ends a job: counts it, calls done, frees it. */
static void job_end(llm_http *h, job *j, llm_outcome o, long status,
                    json_t *json, const char *reason)
{
    llm_http_result r = {
        .outcome = o,
        .status = status,
        .attempts = j->attempts,
        .json = json,
        .body = j->rx.body.data ? j->rx.body.data : "",
        .body_len = j->rx.body.len,
        .reason = reason ? reason : "",
        .elapsed_s = kevo__llm_now() - j->submitted_at,
    };
    h->stats.completed++;
    h->stats.outcomes[o]++;
    h->pending--;
    j->done(j->ud, &r);
    job_free(j);
}

void kevo__llm_http_free(llm_http *h)
{
    if (!h)
        return;
    while (h->active) {
        job *j = h->active;
        active_unlink(h, j);
        job_end(h, j, LLM_CANCELLED, 0, NULL, "cancelled");
    }
    while (h->queue_head) {
        job *j = h->queue_head;
        h->queue_head = j->next;
        job_end(h, j, LLM_CANCELLED, 0, NULL, "cancelled");
    }
    while (h->waiting) {
        job *j = h->waiting;
        h->waiting = j->next;
        job_end(h, j, LLM_CANCELLED, 0, NULL, "cancelled");
    }
    curl_multi_cleanup(h->multi);
    free(h);
    curl_global_cleanup();
}

bool kevo__llm_http_submit(llm_http *h, const llm_http_request *req, char *err,
                           size_t errlen)
{
    if (!req->url || !req->done || !(req->timeout_s >= 0) ||
        !(req->idle_timeout_s >= 0) ||
        !(req->timeout_s > 0 || req->idle_timeout_s > 0) ||
        (!req->body && req->body_len) ||
        (req->sink &&
         (!req->sink->begin || !req->sink->event || !req->sink->end))) {
        kevo__llm_errf(err, errlen,
                       "a request needs a URL, a done callback, a total or "
                       "idle time limit above 0, and a whole sink if any");
        return false;
    }
    job *j = calloc(1, sizeof(*j));
    if (!j)
        goto nomem;
    j->h = h;
    j->url = kevo__llm_strdup(req->url);
    j->body = kevo__llm_strndup(req->body ? req->body : "", req->body_len);
    if (!j->url || !j->body)
        goto nomem;
    j->body_len = req->body_len;
    j->get = req->get;
    for (size_t i = 0; i < req->nheaders; i++) {
        struct curl_slist *l = curl_slist_append(j->headers, req->headers[i]);
        if (!l)
            goto nomem;
        j->headers = l;
    }
    /* No "Expect: 100-continue" round trip for large bodies. */
    struct curl_slist *l = curl_slist_append(j->headers, "Expect:");
    if (!l)
        goto nomem;
    j->headers = l;
    j->timeout_s = req->timeout_s;
    j->idle_timeout_s = req->idle_timeout_s;
    j->rx.sink = req->sink;
    j->rx.validate = req->validate;
    j->rx.raw = req->raw;
    j->rx.ud = req->reply_ud ? req->reply_ud : req->ud;
    j->rx.max_reply_bytes = h->cfg.max_reply_bytes;
    j->attempt_cb = req->attempt;
    j->done = req->done;
    j->ud = req->ud;
    j->submitted_at = kevo__llm_now();
    if (h->queue_tail)
        h->queue_tail->next = j;
    else
        h->queue_head = j;
    h->queue_tail = j;
    h->pending++;
    h->stats.submitted++;
    return true;
nomem:
    kevo__llm_errf(err, errlen, "out of memory");
    job_free(j);
    return false;
}

/* Counts each connection, and whether keepalive is on for it (libcurl set
 * it before this call); adds the probe count, which older libcurl cannot
 * set. */
static int on_socket(void *ud, curl_socket_t fd, curlsocktype purpose)
{
    job *j = ud;
    if (purpose != CURLSOCKTYPE_IPCXN)
        return CURL_SOCKOPT_OK;
    j->h->stats.sockets++;
#ifdef TCP_KEEPCNT
    int cnt = KEEPALIVE_CNT;
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
#endif
    int on = 0;
    socklen_t len = sizeof(on);
    if (getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, &len) == 0 && on)
        j->h->stats.keepalive_sockets++;
    return CURL_SOCKOPT_OK;
}

static long to_ms(double s)
{
    long ms = (long)ceil(s * 1000.0);
    return ms < 1 ? 1 : ms;
}

/* Sets up an easy handle for the job's next attempt. */
static CURLcode easy_setup(job *j)
{
    CURL *e = j->easy;
    size_t cap = j->h->cfg.max_reply_bytes;
    double connect_s = CONNECT_MAX_S;
    if (j->timeout_s > 0 && j->timeout_s < connect_s)
        connect_s = j->timeout_s;
    if (j->idle_timeout_s > 0 && j->idle_timeout_s < connect_s)
        connect_s = j->idle_timeout_s;
    CURLcode rc = CURLE_OK;
#define SET(opt, val)                                                          \
    do {                                                                       \
        if (rc == CURLE_OK)                                                    \
            rc = curl_easy_setopt(e, opt, val);                                \
    } while (0)
    SET(CURLOPT_URL, j->url);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_NOPROGRESS, 1L);
    if (j->get) {
        SET(CURLOPT_HTTPGET, 1L);
    } else {
        SET(CURLOPT_POST, 1L);
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)j->body_len);
        SET(CURLOPT_POSTFIELDS, j->body);
    }
    SET(CURLOPT_HTTPHEADER, j->headers);
    /* 0: no total limit (a stream has its idle limit instead). */
    SET(CURLOPT_TIMEOUT_MS, j->timeout_s > 0 ? to_ms(j->timeout_s) : 0L);
    SET(CURLOPT_CONNECTTIMEOUT_MS, to_ms(connect_s));
    SET(CURLOPT_TCP_KEEPALIVE, 1L);
    SET(CURLOPT_TCP_KEEPIDLE, KEEPALIVE_IDLE_S);
    SET(CURLOPT_TCP_KEEPINTVL, KEEPALIVE_INTVL_S);
    SET(CURLOPT_SOCKOPTFUNCTION, on_socket);
    SET(CURLOPT_SOCKOPTDATA, j);
    SET(CURLOPT_MAXFILESIZE_LARGE,
        (curl_off_t)(j->rx.sink ? LLM_STREAM_RAW_FACTOR * cap : cap));
    SET(CURLOPT_WRITEFUNCTION, kevo__llm_reception_body);
    SET(CURLOPT_WRITEDATA, &j->rx);
    SET(CURLOPT_HEADERFUNCTION, kevo__llm_reception_header);
    SET(CURLOPT_HEADERDATA, &j->rx);
    SET(CURLOPT_ERRORBUFFER, j->errbuf);
    SET(CURLOPT_PRIVATE, j);
    SET(CURLOPT_FOLLOWLOCATION, 0L);
#undef SET
    return rc;
}

static void finish_attempt(llm_http *h, job *j, CURLcode rc, bool setup);

/* Starts the job's next attempt. */
static void start_attempt(llm_http *h, job *j)
{
    j->attempts++;
    h->stats.attempts++;
    if (j->attempts > 1)
        h->stats.retries++;
    j->started_at = kevo__llm_now();
    j->errbuf[0] = '\0';
    j->idle_expired = false;
    kevo__llm_reception_begin(&j->rx, j->started_at);
    j->prev = NULL;
    j->next = h->active;
    if (h->active)
        h->active->prev = j;
    h->active = j;
    h->nactive++;
    if (h->nactive > h->stats.max_active)
        h->stats.max_active = h->nactive;

    CURLcode rc = CURLE_FAILED_INIT;
    j->easy = curl_easy_init();
    if (j->easy)
        rc = easy_setup(j);
    if (rc == CURLE_OK) {
        CURLMcode mrc = curl_multi_add_handle(h->multi, j->easy);
        if (mrc == CURLM_OK)
            return;
        kevo__llm_errf(j->errbuf, sizeof(j->errbuf),
                       "curl_multi_add_handle: %s", curl_multi_strerror(mrc));
        rc = CURLE_FAILED_INIT;
    }
    finish_attempt(h, j, rc, true);
}

/* Sends queued jobs while there is room. */
static void dispatch(llm_http *h)
{
    while (h->queue_head && h->nactive < h->cfg.concurrency) {
        job *j = h->queue_head;
        h->queue_head = j->next;
        if (!h->queue_head)
            h->queue_tail = NULL;
        j->next = NULL;
        if (j->attempts == 0 && h->cfg.admit) {
            char why[512] = "";
            if (!h->cfg.admit(h->cfg.admit_ud, why, sizeof(why))) {
                job_end(h, j, LLM_BUDGET, 0, NULL, why);
                continue;
            }
        }
        start_attempt(h, j);
    }
}

/* Moves waiting jobs whose time has come to the front of the queue, in the
 * order they became due. Returns the earliest due time still waiting (or
 * HUGE_VAL). */
static double promote_due(llm_http *h, double now)
{
    double next = HUGE_VAL;
    job **pp = &h->waiting;
    job *due_head = NULL, *due_last = NULL;
    while (*pp) {
        job *j = *pp;
        if (j->due <= now) {
            *pp = j->next;
            j->next = NULL;
            if (due_last)
                due_last->next = j;
            else
                due_head = j;
            due_last = j;
        } else {
            if (j->due < next)
                next = j->due;
            pp = &j->next;
        }
    }
    if (due_head) {
        due_last->next = h->queue_head;
        if (!h->queue_head)
            h->queue_tail = due_last;
        h->queue_head = due_head;
    }
    return next;
}

/* When the first waiting job is due (HUGE_VAL when none waits). */
static double earliest_due(const llm_http *h)
{
    double next = HUGE_VAL;
    for (const job *j = h->waiting; j; j = j->next)
        if (j->due < next)
            next = j->due;
    return next;
}

static bool retryable_curl(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_PARTIAL_FILE:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR: return true;
    default: return false;
    }
}

/* A short, single-line quote of a body. */
static void snippet(llm_buf *b, const char *s, size_t n)
{
    size_t m = n < SNIPPET_MAX ? n : SNIPPET_MAX;
    for (size_t i = 0; i < m; i++) {
        char c = s[i];
        kevo__llm_buf_append(b, (c < 0x20 || c == 0x7f) ? " " : &c, 1);
    }
    if (m < n)
        kevo__llm_buf_puts(b, "...");
}

/* Classifies the attempt that just ended and retries or ends the job. */
static void finish_attempt(llm_http *h, job *j, CURLcode rc, bool setup)
{
    llm_outcome o = LLM_OK;
    bool retry = false;
    long status = 0;
    json_t *json = NULL;
    llm_buf why = {0};
    double now = kevo__llm_now();

    active_unlink(h, j);
    if (j->easy) {
        if (!setup) {
            CURLcode irc =
                curl_easy_getinfo(j->easy, CURLINFO_RESPONSE_CODE, &status);
            if (irc != CURLE_OK)
                status = 0;
        }
        curl_multi_remove_handle(h->multi, j->easy);
        curl_easy_cleanup(j->easy);
        j->easy = NULL;
    }

    if (j->rx.stream_outcome != LLM_OK) {
        o = j->rx.stream_outcome;
        retry = o == LLM_STREAM_ERROR;
        kevo__llm_buf_puts(&why, j->rx.stream_why);
    } else if (j->rx.too_large || rc == CURLE_FILESIZE_EXCEEDED) {
        o = LLM_TOO_LARGE;
        kevo__llm_buf_printf(&why, "the reply is over the cap of %zu bytes%s",
                             h->cfg.max_reply_bytes,
                             j->rx.is_stream ? " (of an event line, or of the "
                                               "stream's text)"
                                             : "");
    } else if (j->rx.nomem) {
        o = LLM_TRANSPORT;
        kevo__llm_buf_puts(&why, "out of memory for the reply");
    } else if (setup) {
        o = LLM_TRANSPORT;
        kevo__llm_buf_printf(&why, "cannot set up the transfer: %s",
                             j->errbuf[0] ? j->errbuf : curl_easy_strerror(rc));
    } else if (j->idle_expired) {
        o = LLM_TIMEOUT;
        retry = true;
        h->stats.idle_timeouts++;
        kevo__llm_buf_printf(&why,
                             "no byte came for %g s (the idle limit) after %zu "
                             "bytes of the reply",
                             j->idle_timeout_s,
                             kevo__llm_reception_bytes(&j->rx));
    } else if (rc == CURLE_OPERATION_TIMEDOUT) {
        o = LLM_TIMEOUT;
        retry = true;
        if (j->timeout_s > 0)
            kevo__llm_buf_printf(&why, "no complete reply within %g s",
                                 j->timeout_s);
        else
            kevo__llm_buf_printf(&why, "%s",
                                 j->errbuf[0] ? j->errbuf : "timeout");
    } else if (rc == CURLE_PARTIAL_FILE) {
        o = LLM_TRUNCATED;
        retry = true;
        kevo__llm_buf_printf(&why,
                             "the connection closed after %zu bytes of the "
                             "body: %s",
                             kevo__llm_reception_bytes(&j->rx),
                             j->errbuf[0] ? j->errbuf : curl_easy_strerror(rc));
    } else if (rc != CURLE_OK) {
        o = LLM_TRANSPORT;
        retry = retryable_curl(rc);
        kevo__llm_buf_printf(&why, "%s (curl error %d)",
                             j->errbuf[0] ? j->errbuf : curl_easy_strerror(rc),
                             (int)rc);
    } else if (status >= 200 && status < 300) {
        o = kevo__llm_reception_take(&j->rx, &json, &why);
        retry = o == LLM_TRUNCATED || o == LLM_STREAM_ERROR;
    } else {
        o = LLM_HTTP_ERROR;
        retry = status == 429 || status >= 500;
        kevo__llm_buf_printf(&why, "HTTP %ld", status);
        if (j->rx.body.len) {
            kevo__llm_buf_puts(&why, ": ");
            snippet(&why, j->rx.body.data, j->rx.body.len);
        }
    }
    if (j->rx.is_stream)
        h->stats.streamed++;
    if (status == 429)
        h->stats.status_429++;
    else if (status >= 500 && status < 600)
        h->stats.status_5xx++;
    h->stats.attempt_outcomes[o]++;

    double wait = -1;
    if (retry && j->attempts > h->cfg.max_retries) {
        kevo__llm_buf_printf(&why, " (gave up after %d attempt%s)", j->attempts,
                             j->attempts == 1 ? "" : "s");
    } else if (retry && j->rx.retry_after_s > h->cfg.retry_after_max_s) {
        kevo__llm_buf_printf(&why,
                             " (Retry-After of %g s is over the limit of %g "
                             "s)",
                             j->rx.retry_after_s, h->cfg.retry_after_max_s);
    } else if (retry) {
        if (j->rx.retry_after_s >= 0) {
            wait = j->rx.retry_after_s;
            h->stats.retry_after_honoured++;
        } else {
            double u = h->cfg.uniform01 ? h->cfg.uniform01(h->cfg.rng_ud) : 1;
            wait = kevo__llm_http_backoff(&h->cfg, j->attempts, u);
        }
        h->stats.retry_wait_s += wait;
    }

    const char *reason = why.failed ? "out of memory"
                         : why.data ? why.data
                                    : "";
    if (j->attempt_cb) {
        llm_http_attempt a = {
            .number = j->attempts,
            .outcome = o,
            .status = status,
            .body = j->rx.body.data ? j->rx.body.data : "",
            .body_len = j->rx.body.len,
            .streamed = j->rx.is_stream,
            .stream_bytes = j->rx.stream_bytes,
            .stream_events = j->rx.sse.events,
            .reason = reason,
            .elapsed_s = now - j->started_at,
            .retry_after_s = j->rx.retry_after_s,
            .retry_in_s = wait,
        };
        j->attempt_cb(j->ud, &a);
    }
    if (wait >= 0) {
        j->due = now + wait;
        j->next = h->waiting;
        h->waiting = j;
    } else {
        job_end(h, j, o, status, json, reason);
    }
    json_decref(json);
    kevo__llm_buf_free(&why);
}

/* Ends every attempt libcurl reports as finished. */
static void harvest(llm_http *h)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(h->multi, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        char *priv = NULL;
        CURLcode irc =
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
        if (irc != CURLE_OK || !priv)
            continue;
        finish_attempt(h, (job *)priv, msg->data.result, false);
    }
}

/* A failure of the multi handle itself ends every transfer in flight. */
static void fail_active(llm_http *h, CURLMcode mrc)
{
    while (h->active) {
        job *j = h->active;
        kevo__llm_errf(j->errbuf, sizeof(j->errbuf), "curl multi: %s",
                       curl_multi_strerror(mrc));
        finish_attempt(h, j, CURLE_RECV_ERROR, false);
    }
}

/* Ends the attempts that have had no byte for their idle limit. Returns
 * the earliest time one of the others reaches it (or HUGE_VAL). */
static double sweep_idle(llm_http *h, double now)
{
    double next = HUGE_VAL;
    job *j = h->active;
    while (j) {
        job *later = j->next;
        if (j->idle_timeout_s > 0) {
            double due = j->rx.last_byte_at + j->idle_timeout_s;
            if (due <= now) {
                j->idle_expired = true;
                finish_attempt(h, j, CURLE_OPERATION_TIMEDOUT, false);
                /* finish_attempt may end a request whose callback submits
                 * or cancels others: walk the list afresh. */
                later = h->active;
                next = HUGE_VAL;
            } else if (due < next) {
                next = due;
            }
        }
        j = later;
    }
    return next;
}

static void drive(llm_http *h)
{
    int running = 0;
    CURLMcode mrc = curl_multi_perform(h->multi, &running);
    if (mrc != CURLM_OK)
        fail_active(h, mrc);
    harvest(h);
}

size_t kevo__llm_http_poll(llm_http *h, int timeout_ms)
{
    double deadline = kevo__llm_now() + (timeout_ms > 0 ? timeout_ms : 0) / 1e3;
    uint64_t completed = h->stats.completed;
    for (;;) {
        promote_due(h, kevo__llm_now());
        dispatch(h);
        drive(h);
        double now = kevo__llm_now();
        double next_idle = sweep_idle(h, now);
        /* Counted after drive: an attempt that ended there may now be
         * waiting to retry. */
        double next_due = earliest_due(h);
        if (h->stats.completed != completed) {
            /* Fill the slots that just freed before handing back. */
            promote_due(h, kevo__llm_now());
            dispatch(h);
            drive(h);
            return h->pending;
        }
        if (h->pending == 0)
            return 0;
        double wait = deadline - now;
        if (wait <= 0)
            return h->pending;
        double next = next_due < next_idle ? next_due : next_idle;
        if (next - now < wait)
            wait = next - now > 0 ? next - now : 0;
        int wait_ms = (int)ceil(wait * 1000.0);
        CURLMcode mrc = curl_multi_poll(h->multi, NULL, 0, wait_ms, NULL);
        if (mrc != CURLM_OK)
            fail_active(h, mrc);
    }
}

size_t kevo__llm_http_pending(const llm_http *h)
{
    return h->pending;
}

int kevo__llm_http_active(const llm_http *h)
{
    return h->nactive;
}

void kevo__llm_http_stats_get(const llm_http *h, llm_http_stats *out)
{
    *out = h->stats;
}

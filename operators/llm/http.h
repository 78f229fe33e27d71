/*
 * http.h: the llm operator's request engine, over libcurl's multi
 * interface. Many POST requests are in flight at once, up to a concurrency
 * limit; each attempt has a total time limit, an idle limit (no byte for N
 * seconds), or both; 429s, 5xx statuses, errors inside a stream and
 * transport errors are retried with exponential backoff and jitter,
 * honouring Retry-After; a reply over a size cap is a clean failure; and
 * every request ends in exactly one outcome, which is counted.
 *
 * A reply of type text/event-stream (server-sent events) goes, event by
 * event, to the request's sink instead of being kept whole; so does a 2xx
 * body that turns out to be an event stream under another type. Every
 * connection has TCP keepalive on, so that a long wait for a reply is not
 * dropped by a middlebox that closes idle connections.
 *
 * A request may also be a GET, and its 2xx body may be taken as it is
 * rather than as JSON (the vendors' batch APIs: llm/batch.h).
 *
 * The engine is single-threaded: everything happens inside
 * kevo__llm_http_poll(), which calls the request's callbacks. It never
 * writes anything anywhere; failure texts it builds may quote a server's
 * reply, so a caller that logs them redacts them first.
 */
#ifndef KEVO_LLM_HTTP_H
#define KEVO_LLM_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* How a request (or one attempt of it) ended. */
typedef enum llm_outcome {
    LLM_OK = 0,       /* a 2xx reply whose body is JSON that validates */
    LLM_HTTP_ERROR,   /* a status other than 2xx */
    LLM_TIMEOUT,      /* the attempt ran past its time limit */
    LLM_TRUNCATED,    /* the connection closed before the whole body came */
    LLM_MALFORMED,    /* a 2xx body that is not JSON, or not the API's shape */
    LLM_TOO_LARGE,    /* the body is over the size cap */
    LLM_TRANSPORT,    /* no connection, reset, nothing received, ... */
    LLM_BUDGET,       /* never sent: the admit hook refused it (a budget) */
    LLM_CANCELLED,    /* the engine was freed before the request ended */
    LLM_STREAM_ERROR, /* a 2xx event stream that reported an error */
    LLM_OUTCOME_COUNT
} llm_outcome;

/* "ok", "http_error", "timeout", "truncated", "malformed", "too_large",
 * "transport", "budget", "cancelled", "stream_error". Static. */
const char *kevo__llm_outcome_name(llm_outcome o);

/* The outcome of a name kevo__llm_outcome_name() gives; false when name is
 * none of them. */
bool kevo__llm_outcome_from_name(const char *name, llm_outcome *o);

/* One attempt, as the attempt callback sees it. Pointers are borrowed for
 * the duration of the call. */
typedef struct llm_http_attempt {
    int number;          /* 1 for the first attempt */
    llm_outcome outcome; /* of this attempt */
    long status;         /* HTTP status, 0 when none came */
    const char *body;    /* what was received (up to the cap; of an event
                            stream, its first LLM_HTTP_STREAM_KEEP bytes),
                            never NULL */
    size_t body_len;
    bool streamed;        /* the reply was an event stream */
    size_t stream_bytes;  /* its bytes */
    size_t stream_events; /* its events */
    const char *reason;   /* why it failed, "" on success */
    double elapsed_s;     /* duration of the attempt */
    double retry_after_s; /* the server's Retry-After, or -1 */
    double retry_in_s;    /* the wait before the next attempt, or -1 */
} llm_http_attempt;

/* The end of a request, as the done callback sees it. Pointers are
 * borrowed for the duration of the call. */
typedef struct llm_http_result {
    llm_outcome outcome;
    long status;        /* the last HTTP status, 0 when none came */
    int attempts;       /* attempts made (0 when never sent) */
    json_t *json;       /* the parsed reply when outcome is LLM_OK and the
                           reply was not an event stream, else NULL */
    const char *body;   /* the last attempt's body, never NULL */
    size_t body_len;    /* its length */
    const char *reason; /* why it failed, "" on success */
    double elapsed_s;   /* from submission to the end */
} llm_http_result;

/* Checks a 2xx reply's JSON against the API's shape. Returns false, with a
 * reason in why[0..n), for a reply to count as LLM_MALFORMED. */
typedef bool (*llm_http_validate_fn)(void *ud, json_t *root, char *why,
                                     size_t n);
typedef void (*llm_http_attempt_fn)(void *ud, const llm_http_attempt *a);
typedef void (*llm_http_done_fn)(void *ud, const llm_http_result *r);

/* Where the events of a streamed reply go (ud is the request's). */
typedef struct llm_http_sink {
    /* An attempt's event stream begins: what an earlier attempt gave is to
     * be forgotten. */
    void (*begin)(void *ud);
    /* One event. LLM_OK goes on; any other outcome (with a reason in why)
     * ends the attempt: LLM_STREAM_ERROR is retried, LLM_MALFORMED and
     * LLM_TOO_LARGE are not. */
    llm_outcome (*event)(void *ud, const char *type, const char *data,
                         size_t len, char *why, size_t n);
    /* The transfer completed: LLM_OK when the reply is whole, else
     * LLM_TRUNCATED (retried) or LLM_MALFORMED, with a reason in why. */
    llm_outcome (*end)(void *ud, char *why, size_t n);
} llm_http_sink;

/* The raw bytes of an event stream an attempt keeps for the record. */
#define LLM_HTTP_STREAM_KEEP 8192

typedef struct llm_http_config {
    int concurrency;          /* transfers in flight at most, >= 1 */
    int max_retries;          /* retries after the first attempt, >= 0 */
    double backoff_base_s;    /* the first retry's wait before jitter */
    double backoff_max_s;     /* the longest backoff wait */
    double retry_after_max_s; /* a longer Retry-After is not waited for */
    size_t max_reply_bytes;   /* the body size cap */
    /* Jitter: a uniform draw in [0, 1). The backoff before retry k is
     * min(max, base * 2^(k-1)) * (0.5 + 0.5 u): between half and all of
     * the exponential step. NULL means u = 1 (no jitter). */
    double (*uniform01)(void *ud);
    void *rng_ud;
    /* Called before a request's first attempt is sent; returning false (a
     * reason in why) ends it with LLM_BUDGET unsent. NULL admits all. */
    bool (*admit)(void *ud, char *why, size_t n);
    void *admit_ud;
} llm_http_config;

/* Outcome counts. outcomes[] counts requests by their final outcome, so it
 * sums to completed; attempt_outcomes[] counts every attempt. */
typedef struct llm_http_stats {
    uint64_t submitted;
    uint64_t completed;
    uint64_t outcomes[LLM_OUTCOME_COUNT];
    uint64_t attempts;
    uint64_t retries;
    uint64_t attempt_outcomes[LLM_OUTCOME_COUNT];
    uint64_t status_429;           /* attempts answered 429 */
    uint64_t status_5xx;           /* attempts answered 5xx */
    uint64_t retry_after_honoured; /* waits taken from Retry-After */
    double retry_wait_s;           /* all waits scheduled, added up */
    int max_active;                /* the most transfers in flight at once */
    uint64_t streamed;             /* attempts answered with an event stream */
    uint64_t idle_timeouts;        /* attempts ended by the idle limit */
    uint64_t sockets;              /* TCP connections opened */
    uint64_t keepalive_sockets;    /* of them, with SO_KEEPALIVE on */
} llm_http_stats;

typedef struct llm_http llm_http;

/* A new engine with a copy of cfg. Returns NULL with a reason in err for a
 * bad configuration or a libcurl failure. */
llm_http *kevo__llm_http_new(const llm_http_config *cfg, char *err,
                             size_t errlen);

/* Cancels every request still queued, waiting or in flight (each gets its
 * done callback with LLM_CANCELLED), and frees the engine. NULL is
 * accepted. */
void kevo__llm_http_free(llm_http *h);

typedef struct llm_http_request {
    const char *url;
    const char *const *headers; /* "Name: value" lines */
    size_t nheaders;
    bool get;         /* a GET without a body; else a POST of body */
    const char *body; /* the POST body */
    size_t body_len;
    /* A 2xx body is taken as it is (the result's json is NULL): a JSONL
     * file, say; else it must be JSON that validates. */
    bool raw;
    double timeout_s;              /* the attempt's total time limit; 0: none */
    double idle_timeout_s;         /* no byte for this long ends it; 0: none */
    const llm_http_sink *sink;     /* for event streams; may be NULL */
    llm_http_validate_fn validate; /* may be NULL */
    llm_http_attempt_fn attempt;   /* may be NULL */
    llm_http_done_fn done;         /* required */
    void *ud;
    void *reply_ud; /* the user data of validate and the sink; NULL: ud */
} llm_http_request;

/* Queues a request; the engine copies url, headers and body (the sink is
 * borrowed until the request ends). At least one of timeout_s and
 * idle_timeout_s must be above 0. The done
 * callback is called exactly once, from kevo__llm_http_poll() or
 * kevo__llm_http_free(), never from this call. Returns false with a reason
 * in err (no memory, bad arguments), in which case no callback is ever
 * called. */
bool kevo__llm_http_submit(llm_http *h, const llm_http_request *req, char *err,
                           size_t errlen);

/* Drives the requests: sends queued ones up to the concurrency limit,
 * receives, retries, and calls the callbacks. It returns once a request
 * has ended, once timeout_ms has passed (0: one pass that does not wait)
 * or at once when nothing is pending. Callbacks may submit new requests.
 * Returns the number of requests not yet ended. */
size_t kevo__llm_http_poll(llm_http *h, int timeout_ms);

/* Requests not yet ended: queued, in flight or waiting to retry. */
size_t kevo__llm_http_pending(const llm_http *h);

/* Transfers in flight now. */
int kevo__llm_http_active(const llm_http *h);

void kevo__llm_http_stats_get(const llm_http *h, llm_http_stats *out);

/* The wait before retry k (1-based) without Retry-After, for a jitter
 * draw u in [0, 1]. */
double kevo__llm_http_backoff(const llm_http_config *cfg, int k, double u);

#endif

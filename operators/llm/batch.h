/*
 * batch.h: the llm operator's batch transport, over the vendors' batch
 * APIs, at their batch prices. Requests are gathered into a batch: the
 * requests submitted between two polls (one propose round of a search) go
 * together, up to a size limit, and a batch is sent at the first poll
 * once it is full or its oldest request has waited the gathering time.
 *
 *   OpenAI: the bodies become a JSONL file of {custom_id, method, url,
 *   body} lines, uploaded (POST /v1/files, purpose "batch"); a batch is
 *   created over it (POST /v1/batches, the endpoint of the model's URL,
 *   completion window 24h) and polled (GET /v1/batches/ID) until it ends;
 *   then its output and error files are read (GET /v1/files/ID/content).
 *
 *   Anthropic: the bodies go in one POST /v1/messages/batches as
 *   {custom_id, params}; the batch is polled (GET .../batches/ID) until
 *   its processing ends; then its results_url is read.
 *
 * Each result ends its request as the HTTP engine would (http.h), through
 * the same callbacks: LLM_OK with the reply's JSON (the chat completion or
 * the message) when it validates; LLM_HTTP_ERROR with the error's status
 * and body for a request the vendor answered with an error; LLM_TIMEOUT
 * for one whose batch expired before it ran; LLM_TRANSPORT for one whose
 * batch was cancelled; LLM_MALFORMED, with a reason naming the batch, the
 * file and the line, for a result line that is not the API's shape; and
 * the outcome of the batch API's own failure (a batch refused, a file
 * that cannot be uploaded) for every request of a batch that could not be
 * made. Calls to the batch API are retried as the HTTP engine retries.
 *
 * With a state directory, each batch is recorded there once created, as
 * NNNNNN-batch.json (its id, and for each request its custom_id, the run
 * and request id it was made for and a digest of its body), and once it
 * has ended its results are kept beside it as NNNNNN-results.jsonl. A new
 * engine over the same directory takes a request made again with the same
 * run, request id and body (a search that stopped to wait and resumed)
 * back into the batch it was sent in, rather than sending it twice, and
 * polls that batch, or reads the results already kept.
 *
 * The engine is single-threaded: everything happens inside
 * kevo__llm_batch_poll(). A program that answers request files (a relay)
 * uses it as the operator does.
 */
#ifndef KEVO_LLM_BATCH_H
#define KEVO_LLM_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http.h"
#include "wire.h"

typedef struct llm_batch llm_batch;

/* Called for what the engine has to say that is no request's outcome: a
 * batch created, or, as a warning, a look at a batch that failed and will
 * be tried again, a batch that cannot be recorded. */
typedef void (*llm_batch_say_fn)(void *ud, bool warning, const char *text);

typedef struct llm_batch_config {
    llm_api api;
    /* The interactive endpoint's URL, as the http transport POSTs to it
     * (".../v1/chat/completions", ".../v1/messages"): the batch API's URLs
     * and the OpenAI batch's endpoint are derived from it. */
    const char *url;
    /* The requests' "Name: value" headers (the key among them); a
     * Content-Type among them is replaced by each call's own. */
    const char *const *headers;
    size_t nheaders;
    const char *model;      /* a label, for messages and the state files */
    size_t max_requests;    /* requests in one batch at most, >= 1 */
    double gather_s;        /* a batch waits this long for more, >= 0 */
    double poll_interval_s; /* between two looks at a batch, > 0 */
    double wait_s;          /* a request is said to wait (the waiting
                               callback) once its batch is this old */
    double timeout_s;       /* the time limit of one call, > 0 */
    size_t max_reply_bytes; /* of one result; a results file may be
                               max_requests times as large */
    int max_retries;        /* of one call, as http.h */
    double backoff_base_s, backoff_max_s, retry_after_max_s;
    const char *state_dir; /* NULL: nothing is kept */
    llm_batch_say_fn say;  /* may be NULL */
    void *say_ud;
} llm_batch_config;

/* The configuration of the engine of model m of cfg, whose requests go to
 * url with headers (all borrowed): the model's batch keys and time limit,
 * cfg's reply cap and retries; no state directory and no say callback. */
llm_batch_config kevo__llm_batch_config_of(const llm_config *cfg,
                                           const llm_model *m, const char *url,
                                           const char *const *headers,
                                           size_t nheaders);

/* The request's batch was created (or taken back): its id, and the
 * request's custom_id in it. Borrowed for the call. */
typedef void (*llm_batch_sent_fn)(void *ud, const char *batch_id,
                                  const char *custom_id);
/* The request's batch has run for wait_s, and the last look found it
 * running: it waits on the vendor, where names the batch in a few words.
 * A request taken back into an earlier engine's batch is told so just
 * before it ends, if not before: it waited across the stop. */
typedef void (*llm_batch_waiting_fn)(void *ud, const char *where);

/* What one request is. Strings are copied. */
typedef struct llm_batch_request {
    const char *run;  /* the run directory, or NULL */
    uint64_t request; /* the host's request id */
    const char *body; /* the body the http transport would POST */
    size_t body_len;
    llm_http_validate_fn validate; /* may be NULL */
    llm_http_attempt_fn attempt;   /* may be NULL */
    llm_http_done_fn done;         /* required */
    llm_batch_sent_fn sent;        /* may be NULL */
    llm_batch_waiting_fn waiting;  /* may be NULL */
    void *ud;
    void *reply_ud; /* the user data of validate; NULL: ud */
} llm_batch_request;

/* A new engine with a copy of cfg, creating the state directory as
 * needed. Returns NULL with a reason in err. */
llm_batch *kevo__llm_batch_new(const llm_batch_config *cfg, char *err,
                               size_t errlen);

/* Ends every request still open with LLM_CANCELLED (batches sent go on at
 * the vendor, and stay recorded; their requests are told their batch
 * first, if not yet) and frees the engine. NULL is accepted. */
void kevo__llm_batch_free(llm_batch *b);

/* Adds a request to the batch being gathered, or takes it back into the
 * batch it was sent in by an earlier engine. The done callback is called
 * exactly once, from kevo__llm_batch_poll() or kevo__llm_batch_free(),
 * never from this call. Returns false with a reason in err (no callback
 * is ever called then). */
bool kevo__llm_batch_submit(llm_batch *b, const llm_batch_request *req,
                            char *err, size_t errlen);

/* Whether an earlier engine's batch recorded in the state directory
 * holds req (the same run, request id and body), not yet taken back: a
 * submit of req then takes it back rather than sending it. */
bool kevo__llm_batch_recorded(llm_batch *b, const llm_batch_request *req);

/* Sends the batches due, looks at those whose poll interval has passed,
 * reads the results of those that ended and ends their requests, waiting
 * at most timeout_ms for a call of the batch API (0: none). Returns how
 * many requests ended. */
size_t kevo__llm_batch_poll(llm_batch *b, int timeout_ms);

/* Requests not yet ended. */
size_t kevo__llm_batch_pending(const llm_batch *b);

/* Calls of the batch API under way. */
size_t kevo__llm_batch_busy(const llm_batch *b);

/* Batches created at the vendor by this engine. */
size_t kevo__llm_batch_created(const llm_batch *b);

#endif

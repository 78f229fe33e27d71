/*
 * relay.h: the relay of a request directory of the files transport
 * (files.h), for kevo relay: it sends each request DIR/pending/NNNNNN.json
 * that has no reply to the model its sidecar names, as the llm operator
 * would (the models, retries, back-off, budgets and keys of an llm
 * configuration, wire.h), and writes what the model returned as
 * DIR/done/NNNNNN.json, through a temporary name and a rename.
 *
 * Which model: the sidecar's "model" is the label of a model of the
 * search's configuration; the relay's configuration has a model of the
 * same name and "api", with the URL, key and prices the relay uses. The
 * sidecar's "path" must be that API's endpoint (.../chat/completions,
 * .../messages).
 *
 * The reply: the body the endpoint returned, as it came (its keys
 * redacted, should it quote one). A body that asks for a stream
 * ("stream": true) is sent as it is, and the events are assembled into
 * the whole reply the endpoint would have given (stream.h), so that the
 * search reads one form. A request that fails after its retries (an HTTP
 * error, a timeout, a budget spent) gets a failure file
 * (kevo__llm_files_failure()), and the search fails it as it would have
 * over HTTP.
 *
 * Never twice: a mark (relay_claim.h) is made before a request is sent. A
 * request with a mark is skipped: in flight at a relay that runs, or
 * done. A mark left by a relay that is gone (killed while the request was
 * in flight) gets a failure file saying so; the request is not sent
 * again. Freeing the relay while requests are in flight ends each with
 * such a failure file too, so that nothing waits for a reply that will
 * not come.
 *
 * Problems of one request (a body that is not JSON, a sidecar without
 * "model", a model the configuration lacks) are told once, naming the file
 * and the field, and the request is left for a later scan; the others go
 * on.
 *
 * How the relay reaches a model is a transport (llm_relay_transport),
 * chosen per model: the interactive HTTP engine (http.h), or, for a model
 * with "transport": "batch", its vendor's batch API (batch.h). The
 * requests of a scan are gathered into batches as the search's batch
 * transport gathers them, each batch recorded under DIR/batches, and its
 * id written into the marks of its requests. A body that asks for a
 * stream goes into a batch without "stream". Freeing the relay leaves the
 * batches sent to run at the vendor and their marks in flight: a relay
 * started again on DIR takes each such request back from the batch
 * record, without sending it again, and writes its reply once the batch
 * ends. A request still gathering when the relay is freed loses its mark,
 * and is sent by the next relay.
 */
#ifndef KEVO_LLM_RELAY_H
#define KEVO_LLM_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http.h"
#include "wire.h"

/* What a transport's engine is opened with. Borrowed: each outlives the
 * engine. */
typedef struct llm_relay_setup {
    const llm_http_config *http; /* retries, back-off, admit hook */
    const llm_config *cfg;       /* the relay's models */
    const char *state_dir;       /* DIR/batches: the batches recorded */
    void (*say)(void *ud, bool warning, const char *text);
    void *say_ud;
} llm_relay_setup;

/* One request a transport sends: the HTTP request (its URL, headers and
 * body, and the callbacks), and what a batch needs besides. */
typedef struct llm_relay_send {
    const llm_model *model;
    const char *run; /* the relay's directory, as an absolute path */
    uint64_t number; /* the request's */
    const llm_http_request *http;
    /* Only into the batch an earlier relay sent it in (recorded under the
     * state directory): refused, and never sent, when none holds it. */
    bool take_back;
    /* Its batch was created (or taken back); ud is http->ud. */
    void (*sent)(void *ud, const char *batch_id, const char *custom_id);
} llm_relay_send;

/* An engine that sends requests and calls their callbacks, with the calls
 * of http.h. */
typedef struct llm_relay_transport {
    const char *name; /* "http", "batch" */
    bool admits;      /* it calls the admit hook itself */
    void *(*open)(const llm_relay_setup *s, char *err, size_t errlen);
    bool (*submit)(void *engine, const llm_relay_send *s, char *err,
                   size_t errlen);
    size_t (*poll)(void *engine, int timeout_ms); /* requests ended */
    size_t (*pending)(const void *engine);
    size_t (*busy)(const void *engine); /* calls a stop waits for */
    /* Ends what is in flight, cancelled (a batch sent goes on at the
     * vendor). */
    void (*close)(void *engine);
} llm_relay_transport;

/* The vendors' batch APIs (batch.h), one engine per model. */
extern const llm_relay_transport kevo__llm_relay_batch_transport;

typedef struct llm_relay llm_relay;

/* One line the relay has to say, its secrets redacted; warning for a
 * problem. */
typedef void (*llm_relay_say_fn)(void *ud, bool warning, const char *text);

typedef struct llm_relay_stats {
    uint64_t sent;     /* requests sent by this relay */
    uint64_t answered; /* of them, replies written */
    uint64_t failed;   /* of them, failure files written */
    uint64_t lost;     /* failure files for the requests of relays gone */
    uint64_t input_tokens, output_tokens;
    double cost;            /* of this relay's requests */
    size_t in_flight;       /* requests sent and not yet ended */
    size_t in_batches;      /* of them, in a batch (or gathering) */
    size_t busy;            /* HTTP requests and batch API calls under
                               way: a stop waits for them */
    uint64_t taken_back;    /* requests taken back into their batch */
    size_t problems;        /* requests left for a problem of their own now */
    size_t elsewhere;       /* requests in flight at another relay now */
    uint64_t ledger_tokens; /* the directory's, this relay's included */
    double ledger_cost;
} llm_relay_stats;

/* A relay of dir (made, with pending/, done/ and sent/, where missing)
 * with the configuration cfg (borrowed: it must outlive the relay; a
 * model with "transport": "files" is refused). Returns NULL with a reason
 * in err. */
llm_relay *kevo__llm_relay_new(const char *dir, const llm_config *cfg,
                               llm_relay_say_fn say, void *say_ud, char *err,
                               size_t errlen);

/* Ends what is in flight over HTTP, each with a failure file, leaves what
 * is in a batch to the next relay (above), and frees the relay. NULL is
 * accepted. */
void kevo__llm_relay_free(llm_relay *r);

/* Looks through DIR/pending once: sends the requests without a reply and
 * without a mark, answers the marks of relays gone, tells new problems.
 * Returns how many requests it sent. */
size_t kevo__llm_relay_scan(llm_relay *r);

/* Drives what is in flight for up to timeout_ms (returning early when a
 * request ended, at once when none is in flight); replies are written
 * from here. Returns the requests still in flight. */
size_t kevo__llm_relay_poll(llm_relay *r, int timeout_ms);

void kevo__llm_relay_stats_get(const llm_relay *r, llm_relay_stats *out);

#endif

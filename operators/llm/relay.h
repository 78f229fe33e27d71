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
 * How the relay reaches a model is a transport (llm_relay_transport):
 * the interactive HTTP engine (http.h); the vendors' batch APIs can be a
 * second, chosen per model.
 */
#ifndef KEVO_LLM_RELAY_H
#define KEVO_LLM_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http.h"
#include "wire.h"

/* An engine that sends requests and calls their callbacks, with the calls
 * of http.h. */
typedef struct llm_relay_transport {
    const char *name; /* "http" */
    void *(*open)(const llm_http_config *cfg, char *err, size_t errlen);
    bool (*submit)(void *engine, const llm_http_request *req, char *err,
                   size_t errlen);
    size_t (*poll)(void *engine, int timeout_ms);
    size_t (*pending)(const void *engine);
    void (*close)(void *engine); /* ends what is in flight, cancelled */
} llm_relay_transport;

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

/* Ends what is in flight, each with a failure file, and frees the relay.
 * NULL is accepted. */
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

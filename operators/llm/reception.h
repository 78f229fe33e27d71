/*
 * reception.h: what comes back for one attempt of a request of the request
 * engine (http.c): the status line, Retry-After, the body up to its cap,
 * or, for a 2xx text/event-stream reply, its events handed to the
 * request's sink as they arrive; and, when the transfer has completed,
 * what a 2xx reply amounts to (JSON that validates, or, for a raw
 * request, the body as it came).
 *
 * Its two libcurl callbacks take the reception as their user data.
 */
#ifndef KEVO_LLM_RECEPTION_H
#define KEVO_LLM_RECEPTION_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "buf.h"
#include "http.h"
#include "sse.h"

/* An event stream may be this many times the reply cap in raw bytes (the
 * cap itself bounds its text, and each of its events). */
#define LLM_STREAM_RAW_FACTOR 16

typedef struct llm_reception {
    /* Set once by the engine. */
    const llm_http_sink *sink;     /* NULL: replies are never streamed */
    llm_http_validate_fn validate; /* may be NULL */
    void *ud;                      /* the request's */
    size_t max_reply_bytes;
    bool raw; /* a 2xx body is taken as it is, not as JSON */

    /* The attempt's. */
    long status;          /* from the status line, 0 before it */
    double retry_after_s; /* Retry-After or retry-after-ms, or -1 */
    double last_byte_at;  /* when a byte last came (or the attempt began) */
    bool is_stream;       /* a 2xx text/event-stream reply */
    bool too_large;       /* over a cap */
    bool nomem;
    llm_buf body; /* the body; of a stream, its first bytes */
    llm_sse sse;
    size_t stream_bytes;
    llm_outcome stream_outcome; /* what the sink ended it with, or LLM_OK */
    char stream_why[512];
} llm_reception;

/* A new attempt begins at time now: forgets the last one's reply, and
 * tells the sink. */
void kevo__llm_reception_begin(llm_reception *r, double now);

/* Releases what r holds (the settings stay). */
void kevo__llm_reception_free(llm_reception *r);

/* libcurl's CURLOPT_HEADERFUNCTION and CURLOPT_WRITEFUNCTION (user data:
 * the reception). */
size_t kevo__llm_reception_header(char *p, size_t size, size_t nmemb, void *ud);
size_t kevo__llm_reception_body(char *p, size_t size, size_t nmemb, void *ud);

/* A 2xx transfer has completed: the end of its event stream through the
 * sink, or its JSON body through validate (a body that is an event stream
 * under another content type goes to the sink too). Returns the outcome
 * with a reason in why, and the parsed JSON of a body that validated in
 * *json (the caller's to release). */
llm_outcome kevo__llm_reception_take(llm_reception *r, json_t **json,
                                     llm_buf *why);

/* Bytes received: of the stream, or of the body. */
size_t kevo__llm_reception_bytes(const llm_reception *r);

/* A Retry-After value: delay-seconds or an HTTP date, as seconds from now;
 * -1 when it is neither. */
double kevo__llm_parse_retry_after(const char *v);

#endif

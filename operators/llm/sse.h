/*
 * sse.h: a reader of server-sent events (the text/event-stream format of
 * the WHATWG HTML standard), which both the OpenAI and the Anthropic APIs
 * stream their replies in. Bytes go in as they arrive, in pieces of any
 * size; each complete event comes out through a callback with its type
 * (the "event:" field, "" without one) and its data (the "data:" lines
 * joined by "\n").
 *
 * Lines end in CRLF, LF or CR; a leading byte-order mark is dropped;
 * comment lines (": ping") and the "id" and "retry" fields are read and
 * ignored; an event is dispatched at the blank line that ends it, and only
 * when it has data. At the end of the stream an event whose last line was
 * complete but that lacks the blank line is dispatched all the same (some
 * servers end that way); a line cut off in the middle is not.
 */
#ifndef KEVO_LLM_SSE_H
#define KEVO_LLM_SSE_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/* Called for each event: type and data are NUL-terminated and borrowed for
 * the call (data may hold NUL bytes: len counts them). Returns 0 to go on;
 * any other value stops the reader, which returns it. */
typedef int (*llm_sse_event_fn)(void *ud, const char *type, const char *data,
                                size_t len);

/* The reader fails with LLM_SSE_TOO_LARGE when a line or an event is over
 * its limit, LLM_SSE_NOMEM when out of memory. */
#define LLM_SSE_TOO_LARGE (-1000)
#define LLM_SSE_NOMEM (-1001)

typedef struct llm_sse {
    llm_sse_event_fn on_event;
    void *ud;
    size_t max_event; /* the largest line or event data, in bytes */
    llm_buf line;     /* the line being read */
    llm_buf type;     /* the event's "event" field */
    llm_buf data;     /* its "data" lines, each followed by "\n" */
    bool has_data;    /* a "data" field came */
    bool skip_lf;     /* the last byte was a CR: an LF next is its pair */
    bool started;     /* past the byte-order mark, if any */
    size_t bytes;     /* bytes fed so far */
    size_t events;    /* events dispatched so far */
    int status;       /* the value that stopped the reader, or 0 */
} llm_sse;

/* Starts a reader (zero-initialise sse first, or reuse one that
 * kevo__llm_sse_free released). */
void kevo__llm_sse_init(llm_sse *sse, size_t max_event,
                        llm_sse_event_fn on_event, void *ud);

/* Releases what the reader holds and zeroes it. */
void kevo__llm_sse_free(llm_sse *sse);

/* Reads n more bytes. Returns 0, or the non-zero value that stopped the
 * reader (the callback's, LLM_SSE_TOO_LARGE or LLM_SSE_NOMEM); once
 * stopped, it returns that value again and reads nothing. */
int kevo__llm_sse_feed(llm_sse *sse, const char *p, size_t n);

/* The stream has ended: dispatches an event left without its blank line
 * when its last line was complete. Returns as kevo__llm_sse_feed. */
int kevo__llm_sse_finish(llm_sse *sse);

#endif

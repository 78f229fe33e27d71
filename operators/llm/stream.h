/*
 * stream.h: a streamed reply of either API, assembled event by event into
 * the form of a whole one (wire_reply.h).
 *
 * OpenAI chat completions stream "data:" events of chat.completion.chunk
 * objects: choices[0].delta holds pieces of content, of reasoning_content
 * or reasoning (vLLM, DeepSeek, OpenRouter) and of refusal;
 * choices[0].finish_reason ends the choice; with stream_options
 * {"include_usage": true} a last chunk with empty choices holds the usage;
 * "data: [DONE]" ends the stream; an object with "error" is an error.
 *
 * Anthropic messages stream typed events: message_start (the message, and
 * the input usage), content_block_start / content_block_delta (text_delta,
 * thinking_delta, signature_delta, ...) / content_block_stop for each
 * block, ping, message_delta (stop_reason, and the usage so far),
 * message_stop, and error. Event types it does not know are skipped, as
 * Anthropic asks of clients.
 *
 * A stream is complete when its last event came ([DONE] or message_stop),
 * or, from a server that leaves those out, its finish or stop reason.
 */
#ifndef KEVO_LLM_STREAM_H
#define KEVO_LLM_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "http.h"
#include "wire_reply.h"

typedef struct llm_stream {
    llm_api api;
    size_t max_bytes;    /* text and reasoning together, at most */
    llm_buf text;        /* the answer so far */
    llm_buf reasoning;   /* reasoning or thinking so far */
    llm_buf refusal;     /* OpenAI refusal pieces */
    bool has_text;       /* content or a text block came */
    bool chunks;         /* OpenAI: a chunk with choices came */
    bool started;        /* Anthropic: message_start came */
    bool done;           /* the last event came */
    llm_wire_reply meta; /* usage, finish reason and counts only */
} llm_stream;

/* Starts (or restarts) assembling a stream of api's form, with a cap on
 * the text and reasoning it holds. */
void kevo__llm_stream_init(llm_stream *s, llm_api api, size_t max_bytes);

/* Forgets what a stream gave (for the next attempt), keeping api and cap. */
void kevo__llm_stream_reset(llm_stream *s);

/* Releases what s holds. */
void kevo__llm_stream_free(llm_stream *s);

/* Takes one event. Returns LLM_OK to go on, or the outcome that ends the
 * attempt, with the reason in why: LLM_MALFORMED (not JSON, not the API's
 * shape), LLM_TOO_LARGE (over the cap), LLM_STREAM_ERROR (an error event
 * of the server). */
llm_outcome kevo__llm_stream_event(llm_stream *s, const char *type,
                                   const char *data, size_t len, char *why,
                                   size_t n);

/* The transfer ended. Returns LLM_OK with the reply in out (to be freed
 * with kevo__llm_wire_reply_free), LLM_TRUNCATED when the stream stopped
 * before its last event, LLM_MALFORMED when it held no reply of the API
 * (reason in why). */
llm_outcome kevo__llm_stream_finish(llm_stream *s, llm_wire_reply *out,
                                    char *why, size_t n);

/*
 * What comes back for one call, whole or streamed, read into one reply:
 * the request engine's validate callback and sink (http.h, with the
 * intake as their reply_ud) fill wire, and the tokens of attempts whose
 * streams began and failed, which are paid for, add up in spent_in and
 * spent_out.
 */
typedef struct llm_intake {
    llm_api api;
    size_t request_bytes; /* the request body's size, for estimates */
    llm_stream stream;    /* a streamed reply being assembled */
    llm_wire_reply wire;  /* the reply, once read */
    uint64_t spent_in, spent_out;
} llm_intake;

void kevo__llm_intake_init(llm_intake *t, llm_api api, size_t max_bytes,
                           size_t request_bytes);
void kevo__llm_intake_free(llm_intake *t);

/* The validate callback of http.h (ud: the intake): reads a whole reply
 * into wire. */
bool kevo__llm_intake_validate(void *intake, json_t *root, char *why, size_t n);

/* The sink of http.h (ud: the intake): assembles a stream into wire. */
extern const llm_http_sink kevo__llm_intake_sink;

/* Counts the tokens of the stream an attempt began, if any, as spent (a
 * stream that began and failed was generated, and is paid for), and
 * forgets it. The sink does so at each new attempt; a caller does so for
 * the last attempt of a call that failed. */
void kevo__llm_intake_spend(llm_intake *t);

/* The whole (not streamed) reply body of api's form that carries what r,
 * a reply assembled from a stream, holds: read by kevo__llm_wire_parse(),
 * it gives r back (its text, reasoning, refusal, usage, finish reason and
 * redacted thinking blocks; not Anthropic's thinking signatures, which
 * the stream's assembly does not keep). model is the reply's "model" (may
 * be NULL). A new reference; NULL when out of memory. For a program that
 * asks for a stream and hands on a whole reply (kevo relay). */
json_t *kevo__llm_stream_whole(llm_api api, const char *model,
                               const llm_wire_reply *r);

/* The tokens that what s received so far stands for: the usage the
 * stream reported, else an estimate of the input from the request's size
 * and of the output from the text and reasoning received (4 bytes a
 * token). For the usage of an attempt that did not end well. */
void kevo__llm_stream_spent(const llm_stream *s, size_t request_bytes,
                            uint64_t *input, uint64_t *output);

#endif

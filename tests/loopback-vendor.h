/*
 * loopback-vendor.h: the two APIs as the loopback server (loopback-server.c)
 * speaks them, field for field as the vendors send them: OpenAI chat
 * completions (a chat.completion object; or chat.completion.chunk events
 * ending in "data: [DONE]", with a usage chunk of empty choices when
 * stream_options.include_usage is set) and Anthropic messages (a message
 * object; or the events message_start, content_block_start, ping,
 * content_block_delta (text_delta, thinking_delta, signature_delta),
 * content_block_stop, message_delta and message_stop, each with its
 * "event:" line); their error objects, in a body and inside a stream; and
 * the checks each vendor makes of a request (a reasoning model given
 * max_tokens or a temperature, Anthropic's rules for extended thinking,
 * unknown Anthropic fields, ...), which answer 400 as the vendor would.
 */
#ifndef KEVO_LOOPBACK_VENDOR_H
#define KEVO_LOOPBACK_VENDOR_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* What a reply holds. */
typedef struct lbv_content {
    const char *api;       /* "openai" or "anthropic" */
    const char *model;     /* as the request named it */
    unsigned long id;      /* numbers the reply's id */
    const char *text;      /* the answer; NULL: none (OpenAI content null, no
                              Anthropic text block) */
    const char *reasoning; /* NULL: none */
    const char *reasoning_field; /* OpenAI: "reasoning_content" (DeepSeek,
                                    older vLLM) or "reasoning" (vLLM) */
    int redacted;                /* Anthropic redacted_thinking blocks */
    const char *refusal;         /* OpenAI message.refusal; Anthropic
                                    stop_details.explanation */
    const char *finish;          /* finish_reason or stop_reason */
    bool usage;                  /* report usage (a server may not) */
    bool include_usage;          /* OpenAI streams: the usage chunk */
    bool unfinished; /* a stream without its finish, usage and end */
    long in_tokens, out_tokens, reasoning_tokens;
    size_t piece; /* a stream's bytes of text per delta */
} lbv_content;

/* A stream: its events, each the complete text of one event ("event: ...
 * \ndata: ...\n\n"), in new strings. */
typedef struct lbv_events {
    char **ev;
    size_t n;
} lbv_events;

/* The JSON body of a whole reply, in a new string. */
char *lbv_message(const lbv_content *c);

/* The events of a streamed reply, appended to out. */
void lbv_stream(const lbv_content *c, lbv_events *out);

/* An event that breaks a stream: a server error inside it, or data that
 * is not JSON (kind "error" or "malformed"), in a new string. */
char *lbv_stream_fault(const char *api, const char *kind);

void lbv_events_free(lbv_events *e);

/* An error body of the API, in a new string: OpenAI's {"error": {message,
 * type, param, code}} (code NULL: null) or Anthropic's {"type": "error",
 * "error": {type, message}}. */
char *lbv_error(const char *api, const char *type, const char *message,
                const char *code);

/* vLLM's older error body: {"object": "error", "message", "type":
 * "BadRequestError", "param": null, "code": 400}, in a new string. */
char *lbv_vllm_error(const char *message);

/* Checks a request as the vendor would: NULL when it is good, else the
 * 400's message (in msg[0..n)), with *type and *code (may be NULL) for
 * the error object. version is the anthropic-version header (or NULL). */
const char *lbv_check(const char *api, json_t *root, const char *version,
                      char *msg, size_t n, const char **type,
                      const char **code);

/* Whether a model name is one of OpenAI's reasoning models (o1, o3,
 * o4-mini, gpt-5, ...), as OpenAI tells them apart. */
bool lbv_reasoning_model(const char *model);

#endif

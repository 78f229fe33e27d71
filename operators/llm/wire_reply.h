/*
 * wire_reply.h: what the two APIs answer, read into one form: a whole
 * (non-streamed) reply of OpenAI chat completions or Anthropic messages,
 * and the error bodies of either API and of the servers that speak them
 * (vLLM, llama.cpp's server, Ollama, gateways). Streamed replies are
 * assembled into the same form by stream.c.
 *
 * Reasoning is kept apart from the answer: OpenAI-style reasoning_content
 * (DeepSeek, older vLLM) and reasoning (vLLM, OpenRouter) fields, and
 * Anthropic thinking blocks, go to the reply's reasoning, never into its
 * text; redacted_thinking blocks are counted (they are encrypted).
 *
 * A reply that arrived whole but gives nothing to parse still has its
 * token usage, and a failure kind:
 *
 *   refused    OpenAI finish_reason "content_filter", a message.refusal,
 *              Anthropic stop_reason "refusal"
 *   context    Anthropic stop_reason "model_context_window_exceeded" (and,
 *              from an error body, a prompt over the context length)
 *   no_answer  no text: content null (vLLM's reasoning parser with an
 *              unclosed think tag), or reasoning and an empty answer
 */
#ifndef KEVO_LLM_WIRE_REPLY_H
#define KEVO_LLM_WIRE_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "wire.h"

/* Failure kinds of the llm operator beyond kevo/operator.h's (passed to
 * api->fail as they are). */
#define LLM_FAIL_REFUSED "refused"     /* a content filter or a refusal */
#define LLM_FAIL_CONTEXT "context"     /* over the model's context window */
#define LLM_FAIL_NO_ANSWER "no_answer" /* reasoning, or nothing, no text */

/* The longest error text kevo__llm_wire_error_text gives, in bytes. */
#define LLM_ERROR_TEXT_MAX 2000

/* What a reply carried. */
typedef struct llm_wire_reply {
    char *text;      /* the answer (text blocks joined by "\n"); never NULL */
    size_t text_len; /* its length (it may hold a NUL byte) */
    bool has_text;   /* an answer came (content not null, a text block) */
    char *reasoning; /* reasoning or thinking, joined by "\n"; never NULL */
    size_t reasoning_len;
    size_t redacted_thinking;  /* Anthropic redacted_thinking blocks */
    char *refusal;             /* the model's refusal text, or NULL */
    uint64_t input_tokens;     /* Anthropic: with cache creation and reads */
    uint64_t output_tokens;    /* reasoning included */
    uint64_t reasoning_tokens; /* of output_tokens, when the API says */
    bool has_usage;            /* the reply reported usage */
    char finish[48];           /* finish_reason or stop_reason as sent, or "" */
    bool cut_off;  /* it stopped at max_tokens ("length", "max_tokens") */
    bool streamed; /* it was assembled from an event stream */
    size_t events; /* the stream's events */
    /* NULL, or the LLM_FAIL_* kind of a reply that gives nothing to
     * parse, with the reason (owned). */
    const char *fail_kind;
    char *fail_reason;
} llm_wire_reply;

/* Reads a 2xx reply of the model's API. Returns false, with the reason in
 * why, when root is not such a reply (no choices, no content array, an
 * error object, wrong types); a reply of the API's shape that gives
 * nothing to parse returns true with fail_kind set. */
bool kevo__llm_wire_parse(llm_api api, json_t *root, llm_wire_reply *out,
                          char *why, size_t whylen);
void kevo__llm_wire_reply_free(llm_wire_reply *r);

/* Reads the usage object of either API into r (Anthropic's input tokens
 * add up input_tokens, cache_creation_input_tokens and
 * cache_read_input_tokens); fields absent leave r's as they are. Sets
 * has_usage when usage is an object. */
void kevo__llm_wire_usage(llm_api api, json_t *usage, llm_wire_reply *r);

/* The tokens of reply r to a request of request_bytes bytes: its usage,
 * or, from a server that reports none, an estimate at 4 bytes a token (so
 * that budgets still hold). Returns whether it is an estimate. */
bool kevo__llm_wire_tokens(const llm_wire_reply *r, size_t request_bytes,
                           uint64_t *in, uint64_t *out);

/* Sets r->cut_off from r->finish, and r->fail_kind and r->fail_reason by
 * the rules above. Returns false when out of memory. */
bool kevo__llm_wire_classify(llm_wire_reply *r);

/* The text of an error body, one line of at most LLM_ERROR_TEXT_MAX bytes
 * (then "..."), in a new string: "type: message" for an error object of
 * either API ({"error": {"type"/"code", "message"}}, {"type": "error",
 * "error": {...}}), vLLM's older {"object": "error", "message", "type"},
 * {"error": "text"} or {"detail": ...}; the text of a plain-text or HTML
 * body (tags dropped, white space folded). NULL when the body holds no
 * text. */
char *kevo__llm_wire_error_text(const char *body, size_t len);

/* The same for an error body already parsed (borrowed). */
char *kevo__llm_wire_error_json(json_t *root);

/* LLM_FAIL_CONTEXT when an error body says that the prompt is over the
 * model's context length (OpenAI's code "context_length_exceeded",
 * llama.cpp's "exceed_context_size_error", the messages of vLLM and
 * Anthropic), else NULL. */
const char *kevo__llm_wire_error_kind(const char *body, size_t len);

#endif

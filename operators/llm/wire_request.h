/*
 * wire_request.h: the request that asks a model for a reply, in its API's
 * format: OpenAI chat completions (POST .../chat/completions) or Anthropic
 * messages (POST .../v1/messages), with the model's settings (wire.h).
 *
 * The URL: an OpenAI base_url is taken as the API's root, as OpenAI's own
 * clients take it ("https://api.openai.com/v1" gives ".../v1/chat/
 * completions"), except that a base_url without a path gets "/v1" (so
 * "http://127.0.0.1:8000" reaches vLLM's ".../v1/chat/completions") and
 * one that already ends in "/chat/completions" is used as it is. An
 * Anthropic base_url gets "/v1/messages", or "/messages" when it already
 * ends in "/v1", or nothing when it ends in "/messages". A query string
 * (Azure's "?api-version=...") stays at the end.
 *
 * The body: model, messages (OpenAI: the system text as the first
 * message; Anthropic: as "system"), max_tokens under the model's
 * token_param, then temperature, top_p, reasoning effort (OpenAI:
 * "reasoning_effort"; Anthropic: "output_config": {"effort"}) and thinking
 * ("thinking": {"type": "enabled", "budget_tokens"}) only when set, then
 * for a streamed request "stream": true (OpenAI: with "stream_options":
 * {"include_usage": true}, so that the last chunk holds the usage), and
 * last the model's extra_body, merged key by key (objects merged
 * recursively, anything else replaced).
 *
 * The headers: Content-Type, the key (OpenAI: Authorization: Bearer;
 * Anthropic: x-api-key) and anthropic-version, then the model's extra
 * headers, each replacing a header of the same name.
 */
#ifndef KEVO_LLM_WIRE_REQUEST_H
#define KEVO_LLM_WIRE_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "http.h"
#include "wire.h"

#define LLM_ANTHROPIC_VERSION "2023-06-01"

/* One turn of a conversation after the system text. */
typedef struct llm_turn {
    const char *role; /* "user" or "assistant" */
    const char *text;
} llm_turn;

/* A request ready for the request engine. */
typedef struct llm_wire_request {
    char *url;
    char **headers;     /* "Name: value", the key among them */
    char **log_headers; /* the same with every secret replaced by
                           [REDACTED] */
    size_t nheaders;
    char *body; /* JSON */
    size_t body_len;
    bool stream; /* it asks for server-sent events */
} llm_wire_request;

/* Builds the request that asks model m for a reply to a system text and a
 * conversation of nturns turns (the first the user's). Returns false when
 * out of memory. */
bool kevo__llm_wire_build_turns(const llm_model *m, const char *system,
                                const llm_turn *turns, size_t nturns,
                                llm_wire_request *out);

/* The same for one user turn. */
bool kevo__llm_wire_build(const llm_model *m, const char *system,
                          const char *user, llm_wire_request *out);

/* The request that sends model m a body built elsewhere (a request file
 * of the files transport): m's URL and headers, a copy of body, and
 * stream as the body asks. Returns false when out of memory. */
bool kevo__llm_wire_forward(const llm_model *m, const char *body,
                            size_t body_len, bool stream,
                            llm_wire_request *out);

/* Frees what r holds (wiping the headers that hold secrets). */
void kevo__llm_wire_request_free(llm_wire_request *r);

/* The URL of model m's requests, in a new string (NULL when out of
 * memory). */
char *kevo__llm_wire_url(const llm_model *m);

/* The transfer of w, as model m sends it: its URL, headers and body (all
 * borrowed from w) and its time limits: a stream has no total limit, only
 * one on silence (idle_timeout_s); a whole reply has m's timeout_s. The
 * callbacks, the sink and ud are left for the caller. */
llm_http_request kevo__llm_wire_http(const llm_model *m,
                                     const llm_wire_request *w);

#endif

/*
 * wire.h: the llm operator's configuration and the two wire formats it
 * speaks: OpenAI chat completions (POST {base_url}/chat/completions) and
 * Anthropic messages (POST {base_url}/v1/messages).
 *
 * The configuration is a JSON object:
 *
 *   { "models": [
 *       { "name": "big", "api": "anthropic",
 *         "base_url": "https://api.anthropic.com",
 *         "model": "claude-sonnet-4-5", "key_env": "ANTHROPIC_API_KEY",
 *         "temperature": 0.8, "max_tokens": 8192, "timeout_s": 300,
 *         "weight": 1, "input_cost_per_mtok": 3,
 *         "output_cost_per_mtok": 15 } ],
 *     "concurrency": 8, "max_retries": 4, "backoff_base_s": 1,
 *     "backoff_max_s": 30, "retry_after_max_s": 120,
 *     "max_reply_bytes": 4194304, "token_budget": 0, "cost_budget": 0,
 *     "reply_format": "either", "max_log_lines": 40,
 *     "max_inspirations": 4 }
 *
 * Every key but "models" and each model's "api" and "model" has a default.
 * key_env names the environment variable that holds the API key; the key is
 * read once, kept only in memory, sent only in its header and redacted from
 * everything written. A model without key_env sends no key (a local
 * server). Unknown keys are errors that name the key and list the known
 * ones.
 */
#ifndef KEVO_LLM_WIRE_H
#define KEVO_LLM_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "buf.h"

typedef enum llm_api { LLM_API_OPENAI = 0, LLM_API_ANTHROPIC = 1 } llm_api;

/* What the prompt asks the reply to be. */
typedef enum llm_reply_format {
    LLM_FORMAT_EITHER = 0, /* a whole kernel or edits, as the model sees fit */
    LLM_FORMAT_WHOLE = 1,  /* a whole kernel in one ```cuda fence */
    LLM_FORMAT_EDITS = 2   /* SEARCH/REPLACE edits */
} llm_reply_format;

typedef struct llm_model {
    char *name; /* a label for logs; defaults to model */
    llm_api api;
    char *base_url; /* without a trailing slash */
    char *model;
    char *key_env; /* NULL: no key */
    char *key;     /* the key's value, or NULL; never written anywhere */
    double temperature;
    long max_tokens;
    double timeout_s;
    double weight;
    double input_cost_per_mtok;
    double output_cost_per_mtok;
} llm_model;

typedef struct llm_config {
    llm_model *models;
    size_t nmodels;
    int concurrency;
    int max_retries;
    double backoff_base_s;
    double backoff_max_s;
    double retry_after_max_s;
    size_t max_reply_bytes;
    uint64_t token_budget; /* input + output tokens; 0: no budget */
    double cost_budget;    /* in the cost table's currency; 0: no budget */
    llm_reply_format reply_format;
    size_t max_log_lines;    /* compile log lines a prompt keeps */
    size_t max_inspirations; /* inspirations a prompt shows */
} llm_config;

/* Parses a configuration (NULL or "" is not accepted: there is no default
 * model). getenv_fn looks up key_env (NULL: getenv). On failure returns
 * false with the reason in err; the reason never holds a key's value. The
 * caller frees a parsed config with kevo__llm_config_free. */
bool kevo__llm_config_parse(const char *json, llm_config *cfg,
                            const char *(*getenv_fn)(const char *name),
                            char *err, size_t errlen);

/* Frees what cfg holds (wiping the keys first) and zeroes it. */
void kevo__llm_config_free(llm_config *cfg);

/* The keys of cfg's models, for kevo__llm_redact: fills secrets (room for
 * max) and returns how many there are. */
size_t kevo__llm_config_secrets(const llm_config *cfg, const char **secrets,
                                size_t max);

/* The model for a uniform draw u in [0, 1), by weight. */
size_t kevo__llm_config_pick(const llm_config *cfg, double u);

/* "openai" or "anthropic". */
const char *kevo__llm_api_name(llm_api api);

/* A request ready for the request engine. */
typedef struct llm_wire_request {
    char *url;
    char *headers[4]; /* "Name: value", the key among them */
    size_t nheaders;
    char *log_headers[4]; /* the same with the key replaced by [REDACTED] */
    char *body;           /* JSON */
    size_t body_len;
} llm_wire_request;

/* Builds the request that asks model m for a reply to a system text and a
 * user text. Returns false when out of memory. */
bool kevo__llm_wire_build(const llm_model *m, const char *system,
                          const char *user, llm_wire_request *out);
void kevo__llm_wire_request_free(llm_wire_request *r);

/* What a successful reply carried. */
typedef struct llm_wire_reply {
    char *text;      /* the model's text (all text blocks joined) */
    size_t text_len; /* its length (it may hold a NUL byte) */
    uint64_t input_tokens;
    uint64_t output_tokens;
    bool cut_off; /* it stopped at max_tokens */
} llm_wire_reply;

/* Reads a 2xx reply of the model's API. Returns false, with the reason in
 * why, when root is not such a reply (no text, an error object, wrong
 * types). */
bool kevo__llm_wire_parse(llm_api api, json_t *root, llm_wire_reply *out,
                          char *why, size_t whylen);
void kevo__llm_wire_reply_free(llm_wire_reply *r);

/* The message of an error body of either API ({"error": {"type": ...,
 * "message": ...}}), as "type: message" in a new string, or NULL when the
 * body holds no error object. */
char *kevo__llm_wire_error_text(const char *body, size_t len);

#endif

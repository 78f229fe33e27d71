/*
 * wire.h: the llm operator's configuration: the models it may ask, how each
 * is asked (its API, and the settings of its requests), and the operator's
 * limits. Requests are built by wire_request.c, replies read by
 * wire_reply.c and stream.c.
 *
 * The configuration is a JSON object:
 *
 *   { "models": [
 *       { "name": "big", "api": "anthropic",
 *         "base_url": "https://api.anthropic.com",
 *         "model": "claude-sonnet-4-5", "key_env": "ANTHROPIC_API_KEY",
 *         "max_tokens": 16000, "thinking_budget": 8000,
 *         "headers": {"anthropic-beta": "..."}, "stream": true,
 *         "idle_timeout_s": 600, "timeout_s": 300,
 *         "weight": 1, "input_cost_per_mtok": 3,
 *         "output_cost_per_mtok": 15 },
 *       { "api": "openai", "model": "o3", "transport": "files",
 *         "dir": "/shared/kevo-requests" },
 *       { "api": "anthropic", "model": "claude-sonnet-4-5",
 *         "key_env": "ANTHROPIC_API_KEY", "transport": "batch",
 *         "batch_max_requests": 1000, "batch_gather_s": 0,
 *         "poll_interval_s": 30, "batch_wait_s": 600,
 *         "batch_cost_factor": 0.5 },
 *       { "api": "openai", "model": "o3", "key_env": "OPENAI_API_KEY",
 *         "reasoning_effort": "high", "max_tokens": 32000 },
 *       { "api": "openai", "model": "qwen3", "base_url":
 *         "http://127.0.0.1:8000/v1", "temperature": 0.6, "top_p": 0.95,
 *         "extra_body": {"chat_template_kwargs": {"enable_thinking": true}}
 *       } ],
 *     "concurrency": 8, "max_retries": 4, "backoff_base_s": 1,
 *     "backoff_max_s": 30, "retry_after_max_s": 120,
 *     "max_reply_bytes": 4194304, "token_budget": 0, "cost_budget": 0,
 *     "reply_format": "either", "max_log_lines": 40,
 *     "max_inspirations": 4 }
 *
 * Every key but "models" and each model's "api" and "model" has a default;
 * temperature, top_p, reasoning_effort and thinking_budget are sent only
 * when set. key_env names the environment variable that holds the API key;
 * the key is read once, kept only in memory, sent only in its header and
 * redacted from everything written; so are the values of extra headers
 * that are secrets (an {"env": NAME} value, or a name such as
 * Authorization, *-key, *token*). A model without key_env sends no key (a
 * local server). Unknown keys are errors that name the key and list the
 * known ones. kevo-llm(7) documents every key.
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

/* An extra header of a model's requests. */
typedef struct llm_header {
    char *name;
    char *value;
    bool secret; /* redacted wherever it would be written */
} llm_header;

typedef struct llm_model {
    char *name; /* a label for logs; defaults to model */
    llm_api api;
    char *base_url; /* without a trailing slash */
    char *model;
    char *key_env;        /* NULL: no key */
    char *key;            /* the key's value, or NULL; never written anywhere */
    bool has_temperature; /* else the request leaves temperature out */
    double temperature;
    bool has_top_p;
    double top_p;
    long max_tokens;
    /* The body key that carries max_tokens: "max_tokens", or, for OpenAI
     * reasoning models, "max_completion_tokens" (static). */
    const char *token_param;
    char *reasoning_effort; /* NULL: not sent */
    long thinking_budget;   /* Anthropic extended thinking; 0: off */
    llm_header *headers;    /* extra headers, sent last */
    size_t nheaders;
    json_t *extra_body;    /* an object merged into the body last, or NULL */
    bool stream;           /* ask for server-sent events */
    double timeout_s;      /* the total limit of a request not streamed */
    double idle_timeout_s; /* the longest silence of a streamed request */
    double weight;
    double input_cost_per_mtok;
    double output_cost_per_mtok;
    bool files; /* "transport": "files": requests go through dir (files.h) */
    bool batch; /* "transport": "batch": the vendor's batch API (batch.h) */
    char *dir;  /* the files transport's directory; the batch transport's
                   state directory (NULL: RUN/llm/batches); else NULL */
    size_t batch_max_requests; /* requests in one batch at most */
    double batch_gather_s;     /* a batch waits this long for more */
    double poll_interval_s;    /* between two looks at a batch */
    double batch_wait_s;       /* a batch this old waits on the vendor */
    double batch_cost_factor;  /* batch price / interactive price */
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

/* The secrets of cfg's models (their keys, and the values of their secret
 * headers), for kevo__llm_redact: fills secrets with at most max of them
 * (secrets may be NULL when max is 0) and returns how many there are. */
size_t kevo__llm_config_secrets(const llm_config *cfg, const char **secrets,
                                size_t max);

/* The strings never written anywhere: cfg's secrets
 * (kevo__llm_config_secrets), each also as JSON escapes it where that
 * differs (a reply file or a log that quotes JSON). list borrows the
 * secrets from the configuration and owns the escaped copies. */
typedef struct llm_secrets {
    const char **list;
    size_t n;
    char **escaped; /* the copies list holds, owned */
    size_t nescaped;
} llm_secrets;

/* Fills s from cfg (which must outlive it). Returns false when out of
 * memory (s then holds nothing). */
bool kevo__llm_secrets_collect(const llm_config *cfg, llm_secrets *s);
void kevo__llm_secrets_free(llm_secrets *s);

/* The cost of in input and out output tokens at model m's prices (its
 * batch prices for the batch transport). */
double kevo__llm_model_cost(const llm_model *m, uint64_t in, uint64_t out);

/* Whether a new request may be sent with tokens and cost spent so far
 * against cfg's token and cost budgets; when not, false with the reason
 * in why. */
bool kevo__llm_budget_left(const llm_config *cfg, uint64_t tokens, double cost,
                           char *why, size_t n);

/* The model for a uniform draw u in [0, 1), by weight. */
size_t kevo__llm_config_pick(const llm_config *cfg, double u);

/* Overwrites a secret string with zeros, then frees it. NULL is
 * accepted. */
void kevo__llm_wipe_free(char *s);

/* "openai" or "anthropic". */
const char *kevo__llm_api_name(llm_api api);

/* Whether an OpenAI model name is one of OpenAI's reasoning models (o1,
 * o3, o4-mini, gpt-5 and their variants, with or without a provider
 * prefix such as "openai/"), which take max_completion_tokens. */
bool kevo__llm_reasoning_model(const char *model);

#endif

/*
 * test-llm-wire.c: the llm operator's wire layer, piece by piece: the
 * per-model request settings of the configuration (defaults, and an error
 * that names the key for each bad one), the request bodies they give,
 * checked field by field against the vendors' formats for each example
 * kevo-llm(7) documents (an OpenAI reasoning model, Anthropic with
 * extended thinking, vLLM, llama.cpp's server, Ollama), the headers and
 * their redaction, the URL joining, the reading of whole replies (reasoning
 * kept apart, failure kinds, usage), of error bodies of every shape, and
 * the server-sent-events reader (fed whole and one byte at a time). The
 * same requests go through the loopback server in test-llm-stream.c.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "sse.h"
#include "tap.h"
#include "wire.h"
#include "wire_reply.h"
#include "wire_request.h"

#define KEY "sk-kevo-wire-5e1f0c9a7b3d"
#define TOKEN "gw-token-kevo-0d9c8b7a"

static const char *fake_env(const char *name)
{
    if (strcmp(name, "KEVO_WIRE_KEY") == 0)
        return KEY;
    if (strcmp(name, "KEVO_WIRE_TOKEN") == 0)
        return TOKEN;
    return NULL;
}

/* Parses a configuration of one model (the object's members in text). */
static bool one_model(const char *members, llm_config *cfg, char *err, size_t n)
{
    char json[4096];
    snprintf(json, sizeof(json), "{\"models\": [{%s}]}", members);
    return kevo__llm_config_parse(json, cfg, fake_env, err, n);
}

/* The body of model m's request, parsed. */
static json_t *body_of(const llm_model *m, llm_wire_request *w)
{
    if (!kevo__llm_wire_build(m, "SYSTEM", "USER", w))
        bail_out("the request does not build");
    json_t *b = json_loads(w->body, 0, NULL);
    if (!b)
        bail_out("the body is not JSON: %s", w->body);
    return b;
}

static const char *header(const llm_wire_request *w, const char *name,
                          bool logged)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < w->nheaders; i++) {
        const char *h = logged ? w->log_headers[i] : w->headers[i];
        if (strncasecmp(h, name, n) == 0 && h[n] == ':')
            return h + n + 2;
    }
    return NULL;
}

static void test_defaults(void)
{
    char err[1024];
    llm_config cfg;
    ok(one_model("\"api\": \"openai\", \"model\": \"gpt-4o\"", &cfg, err,
                 sizeof(err)),
       "a plain model parses");
    const llm_model *m = &cfg.models[0];
    ok(m->stream, "streamed by default");
    is_double(m->idle_timeout_s, 600, 0, "idle limit 600 s by default");
    is_double(m->timeout_s, 300, 0, "total limit 300 s by default");
    ok(!m->has_temperature && !m->has_top_p, "no temperature, no top_p");
    is_str(m->token_param, "max_tokens", "gpt-4o takes max_tokens");
    ok(!m->reasoning_effort && !m->thinking_budget && !m->extra_body &&
           !m->nheaders,
       "no reasoning effort, thinking, extra body or headers");
    llm_wire_request w;
    json_t *b = body_of(m, &w);
    ok(!json_object_get(b, "temperature"), "no temperature in the body");
    ok(!json_object_get(b, "top_p"), "no top_p in the body");
    is_int(json_integer_value(json_object_get(b, "max_tokens")), 8192,
           "max_tokens 8192");
    ok(json_is_true(json_object_get(b, "stream")), "\"stream\": true");
    ok(json_is_true(json_object_get(json_object_get(b, "stream_options"),
                                    "include_usage")),
       "stream_options.include_usage, for the usage chunk");
    ok(w.stream, "the request says it streams");
    json_decref(b);
    kevo__llm_wire_request_free(&w);
    kevo__llm_config_free(&cfg);

    /* A header whose name says it holds a credential is a secret even when
     * its value is written in the configuration. */
    ok(one_model("\"api\": \"openai\", \"model\": \"m\", \"headers\": "
                 "{\"api-key\": \"azure-literal-key-1\", \"X-Request-Source\": "
                 "\"kevo\"}",
                 &cfg, err, sizeof(err)),
       "literal headers parse");
    const char *secrets[4];
    is_int(kevo__llm_config_secrets(&cfg, secrets, 4), 1,
           "a literal api-key header is a secret");
    is_str(secrets[0], "azure-literal-key-1", "its value is redacted");
    ok(kevo__llm_wire_build(&cfg.models[0], "S", "U", &w),
       "literal headers build");
    is_str(header(&w, "api-key", true), "[REDACTED]",
           "api-key logged redacted");
    is_str(header(&w, "X-Request-Source", true), "kevo",
           "another header logged as it is");
    kevo__llm_wire_request_free(&w);
    kevo__llm_config_free(&cfg);

    const char *reasoning[] = {"o1",        "o3-mini", "o4-mini-2025-04-16",
                               "gpt-5",     "gpt-5.1", "openai/o3",
                               "gpt-5-mini"};
    for (size_t i = 0; i < sizeof(reasoning) / sizeof(reasoning[0]); i++)
        ok(kevo__llm_reasoning_model(reasoning[i]), "%s is a reasoning model",
           reasoning[i]);
    const char *plain[] = {"gpt-4o",       "gpt-4.1", "qwen3-32b",
                           "llama3.1:70b", "omni-x",  "deepseek-r1"};
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
        ok(!kevo__llm_reasoning_model(plain[i]), "%s is not", plain[i]);
}

/* The documented examples, field by field. */
static void test_examples(void)
{
    char err[1024];
    llm_config cfg;
    llm_wire_request w;
    json_t *b;

    /* OpenAI reasoning model. */
    ok(one_model("\"api\": \"openai\", \"model\": \"o3\", \"key_env\": "
                 "\"KEVO_WIRE_KEY\", \"reasoning_effort\": \"high\", "
                 "\"max_tokens\": 32000",
                 &cfg, err, sizeof(err)),
       "the OpenAI reasoning example parses");
    b = body_of(&cfg.models[0], &w);
    is_str(w.url, "https://api.openai.com/v1/chat/completions", "o3: URL");
    is_int(json_integer_value(json_object_get(b, "max_completion_tokens")),
           32000, "o3: max_completion_tokens");
    ok(!json_object_get(b, "max_tokens"), "o3: no max_tokens");
    ok(!json_object_get(b, "temperature"), "o3: no temperature");
    is_str(json_string_value(json_object_get(b, "reasoning_effort")), "high",
           "o3: reasoning_effort");
    is_str(json_string_value(json_object_get(
               json_array_get(json_object_get(b, "messages"), 0), "role")),
           "system", "o3: the system message first");
    is_str(header(&w, "Authorization", false), "Bearer " KEY, "o3: Bearer key");
    is_str(header(&w, "Authorization", true), "[REDACTED]",
           "o3: logged redacted");
    json_decref(b);
    kevo__llm_wire_request_free(&w);
    kevo__llm_config_free(&cfg);

    /* token_param overrides the guess. */
    ok(one_model("\"api\": \"openai\", \"model\": \"my-azure-deploy\", "
                 "\"token_param\": \"max_completion_tokens\"",
                 &cfg, err, sizeof(err)),
       "token_param parses");
    b = body_of(&cfg.models[0], &w);
    ok(json_object_get(b, "max_completion_tokens") &&
           !json_object_get(b, "max_tokens"),
       "token_param: max_completion_tokens for a deployment name");
    json_decref(b);
    kevo__llm_wire_request_free(&w);
    kevo__llm_config_free(&cfg);

    /* Anthropic with extended thinking. */
    ok(one_model("\"api\": \"anthropic\", \"model\": \"claude-opus-4-1\", "
                 "\"key_env\": \"KEVO_WIRE_KEY\", \"max_tokens\": 16000, "
                 "\"thinking_budget\": 10000, \"headers\": "
                 "{\"anthropic-beta\": \"interleaved-thinking-2025-05-14\"}",
                 &cfg, err, sizeof(err)),
       "the Anthropic thinking example parses");
    b = body_of(&cfg.models[0], &w);
    is_str(w.url, "https://api.anthropic.com/v1/messages", "thinking: URL");
    json_t *th = json_object_get(b, "thinking");
    is_str(json_string_value(json_object_get(th, "type")), "enabled",
           "thinking.type enabled");
    is_int(json_integer_value(json_object_get(th, "budget_tokens")), 10000,
           "thinking.budget_tokens");
    is_int(json_integer_value(json_object_get(b, "max_tokens")), 16000,
           "max_tokens above the budget");
    ok(!json_object_get(b, "temperature"), "thinking: no temperature");
    is_str(json_string_value(json_object_get(b, "system")), "SYSTEM",
           "thinking: system at the top level");
    is_int(json_array_size(json_object_get(b, "messages")), 1,
           "thinking: one user message");
    ok(json_is_true(json_object_get(b, "stream")) &&
           !json_object_get(b, "stream_options"),
       "thinking: streamed, without OpenAI's stream_options");
    is_str(header(&w, "x-api-key", false), KEY, "thinking: x-api-key");
    is_str(header(&w, "anthropic-version", false), "2023-06-01",
           "thinking: anthropic-version");
    is_str(header(&w, "anthropic-beta", false),
           "interleaved-thinking-2025-05-14", "thinking: the beta header");
    is_str(header(&w, "anthropic-beta", true),
           "interleaved-thinking-2025-05-14",
           "thinking: the beta header is no secret");
    json_decref(b);
    kevo__llm_wire_request_free(&w);
    kevo__llm_config_free(&cfg);

    /* vLLM serving a thinking model, through a gateway with a token. */
    ok(one_model("\"api\": \"openai\", \"model\": \"Qwen/Qwen3-32B\", "
                 "\"base_url\": \"http://10.0.0.5:8000\", \"temperature\": "
                 "0.6, \"top_p\": 0.95, \"max_tokens\": 16384, "
                 "\"idle_timeout_s\": 900, \"headers\": {\"X-Gateway-Token\": "
                 "{\"env\": \"KEVO_WIRE_TOKEN\"}, \"X-Team\": \"kernels\"}, "
                 "\"extra_body\": {\"chat_template_kwargs\": "
                 "{\"enable_thinking\": true}, \"top_k\": 20, "
                 "\"stream_options\": {\"continuous_usage_stats\": true}}",
                 &cfg, err, sizeof(err)),
       "the vLLM example parses");
    b = body_of(&cfg.models[0], &w);
    is_str(w.url, "http://10.0.0.5:8000/v1/chat/completions",
           "vLLM: /v1 added to a base URL without a path");
    is_double(json_number_value(json_object_get(b, "temperature")), 0.6, 1e-12,
              "vLLM: temperature");
    is_double(json_number_value(json_object_get(b, "top_p")), 0.95, 1e-12,
              "vLLM: top_p");
    is_int(json_integer_value(json_object_get(b, "max_tokens")), 16384,
           "vLLM: max_tokens");
    ok(json_is_true(json_object_get(json_object_get(b, "chat_template_kwargs"),
                                    "enable_thinking")),
       "vLLM: chat_template_kwargs.enable_thinking");
    is_int(json_integer_value(json_object_get(b, "top_k")), 20,
           "vLLM: top_k from extra_body");
    json_t *so = json_object_get(b, "stream_options");
    ok(json_is_true(json_object_get(so, "include_usage")) &&
           json_is_true(json_object_get(so, "continuous_usage_stats")),
       "vLLM: stream_options merged, include_usage kept");
    is_str(header(&w, "X-Gateway-Token", false), TOKEN,
           "vLLM: the token header from the environment");
    is_str(header(&w, "X-Gateway-Token", true), "[REDACTED]",
           "vLLM: the token is redacted in the log");
    is_str(header(&w, "X-Team", true), "kernels",
           "vLLM: a plain header is logged");
    ok(!header(&w, "Authorization", false), "vLLM: no key, no Authorization");
    const char *secrets[4];
    is_int(kevo__llm_config_secrets(&cfg, secrets, 4), 1,
           "vLLM: the token is a secret");
    is_str(secrets[0], TOKEN, "vLLM: the secret is the token");
    is_double(cfg.models[0].idle_timeout_s, 900, 0, "vLLM: idle limit");
    json_decref(b);
    kevo__llm_wire_request_free(&w);
    kevo__llm_config_free(&cfg);

    /* llama.cpp's server, not streamed. */
    ok(one_model("\"api\": \"openai\", \"model\": \"local\", \"base_url\": "
                 "\"http://127.0.0.1:8080/v1\", \"stream\": false, "
                 "\"timeout_s\": 1200, \"temperature\": 0.2, \"extra_body\": "
                 "{\"cache_prompt\": true, \"n_probs\": 0}",
                 &cfg, err, sizeof(err)),
       "the llama.cpp example parses");
    b = body_of(&cfg.models[0], &w);
    is_str(w.url, "http://127.0.0.1:8080/v1/chat/completions",
           "llama.cpp: URL");
    ok(!json_object_get(b, "stream") && !json_object_get(b, "stream_options"),
       "llama.cpp: not streamed");
    ok(!w.stream, "llama.cpp: the request says so");
    ok(json_is_true(json_object_get(b, "cache_prompt")),
       "llama.cpp: cache_prompt from extra_body");
    json_decref(b);
    kevo__llm_wire_request_free(&w);
    kevo__llm_config_free(&cfg);

    /* Ollama's OpenAI-compatible endpoint (its context is the model's:
     * the endpoint takes none). */
    ok(one_model("\"api\": \"openai\", \"model\": \"qwen2.5-coder-32k\", "
                 "\"base_url\": \"http://127.0.0.1:11434/v1\", \"max_tokens\": "
                 "8192",
                 &cfg, err, sizeof(err)),
       "the Ollama example parses");
    b = body_of(&cfg.models[0], &w);
    is_str(w.url, "http://127.0.0.1:11434/v1/chat/completions", "Ollama: URL");
    is_int(json_integer_value(json_object_get(b, "max_tokens")), 8192,
           "Ollama: max_tokens");
    json_decref(b);
    kevo__llm_wire_request_free(&w);
    kevo__llm_config_free(&cfg);

    /* Anthropic's effort, and a conversation of turns. */
    ok(one_model("\"api\": \"anthropic\", \"model\": \"claude-x\", "
                 "\"reasoning_effort\": \"medium\", \"temperature\": 0.3, "
                 "\"stream\": false",
                 &cfg, err, sizeof(err)),
       "Anthropic effort parses");
    llm_turn turns[] = {{"user", "U1"}, {"assistant", "A1"}, {"user", "U2"}};
    if (!kevo__llm_wire_build_turns(&cfg.models[0], "S", turns, 3, &w))
        bail_out("turns do not build");
    b = json_loads(w.body, 0, NULL);
    is_str(json_string_value(
               json_object_get(json_object_get(b, "output_config"), "effort")),
           "medium", "Anthropic: output_config.effort");
    is_double(json_number_value(json_object_get(b, "temperature")), 0.3, 1e-12,
              "Anthropic: temperature when set");
    json_t *msgs = json_object_get(b, "messages");
    is_int(json_array_size(msgs), 3, "three turns");
    is_str(
        json_string_value(json_object_get(json_array_get(msgs, 1), "content")),
        "A1", "the assistant's turn in its place");
    json_decref(b);
    kevo__llm_wire_request_free(&w);
    kevo__llm_config_free(&cfg);
}

static void test_bad_settings(void)
{
    struct {
        const char *members;
        const char *needle;
    } bad[] = {
        {"\"api\": \"openai\", \"model\": \"a\", \"reasoning\": \"high\"",
         "unknown key \"reasoning\""},
        {"\"api\": \"openai\", \"model\": \"a\", \"thinking_budget\": 4096",
         "\"thinking_budget\" is Anthropic's"},
        {"\"api\": \"anthropic\", \"model\": \"a\", \"thinking_budget\": 500",
         "\"thinking_budget\" is 500, outside [1024"},
        {"\"api\": \"anthropic\", \"model\": \"a\", \"thinking_budget\": "
         "8192",
         "must be below \"max_tokens\" (8192)"},
        {"\"api\": \"anthropic\", \"model\": \"a\", \"max_tokens\": 9000, "
         "\"thinking_budget\": 2048, \"temperature\": 0.5",
         "\"temperature\" must be left out (or 1)"},
        {"\"api\": \"anthropic\", \"model\": \"a\", \"max_tokens\": 9000, "
         "\"thinking_budget\": 2048, \"top_p\": 0.5",
         "\"top_p\" must be at least 0.95"},
        {"\"api\": \"anthropic\", \"model\": \"a\", \"token_param\": "
         "\"max_completion_tokens\"",
         "\"token_param\" must be \"max_tokens\" (the only one"},
        {"\"api\": \"openai\", \"model\": \"a\", \"token_param\": \"n\"",
         "\"token_param\" must be \"max_tokens\" or"},
        {"\"api\": \"openai\", \"model\": \"a\", \"reasoning_effort\": 3",
         "\"reasoning_effort\" must be a word"},
        {"\"api\": \"openai\", \"model\": \"a\", \"extra_body\": [1]",
         "\"extra_body\" must be a JSON object"},
        {"\"api\": \"openai\", \"model\": \"a\", \"stream\": \"yes\"",
         "\"stream\" must be true or false"},
        {"\"api\": \"openai\", \"model\": \"a\", \"idle_timeout_s\": 0",
         "\"idle_timeout_s\" is 0, outside"},
        {"\"api\": \"openai\", \"model\": \"a\", \"top_p\": 1.5",
         "\"top_p\" is 1.5, outside [0, 1]"},
        {"\"api\": \"openai\", \"model\": \"a\", \"headers\": [\"x\"]",
         "\"headers\" must be an object"},
        {"\"api\": \"openai\", \"model\": \"a\", \"headers\": {\"Bad Name\": "
         "\"v\"}",
         "\"headers\".\"Bad Name\": not a valid header name"},
        {"\"api\": \"openai\", \"model\": \"a\", \"headers\": {\"X-A\": 1}",
         "\"headers\".\"X-A\" must be a string, or {\"env\""},
        {"\"api\": \"openai\", \"model\": \"a\", \"headers\": {\"X-A\": "
         "\"a\\nb\"}",
         "\"headers\".\"X-A\" holds a control character"},
        {"\"api\": \"openai\", \"model\": \"a\", \"headers\": {\"X-A\": "
         "{\"env\": \"KEVO_WIRE_UNSET\"}}",
         "KEVO_WIRE_UNSET (its \"headers\".\"X-A\") is not set"},
        {"\"api\": \"openai\", \"model\": \"a\", \"transport\": \"files\"",
         "\"transport\": \"files\" needs \"dir\""},
        {"\"api\": \"openai\", \"model\": \"a\", \"transport\": \"mail\"",
         "\"transport\" is \"mail\"; it must be \"http\", \"batch\" or "
         "\"files\""},
        {"\"api\": \"openai\", \"model\": \"a\", \"dir\": \"d\"",
         "\"dir\" is for \"transport\": \"files\" or \"batch\" only"},
        {"\"api\": \"openai\", \"model\": \"a\", \"poll_interval_s\": 5",
         "\"poll_interval_s\" is for \"transport\": \"batch\" only"},
        {"\"api\": \"openai\", \"model\": \"a\", \"transport\": \"batch\", "
         "\"stream\": true",
         "\"stream\" must be false with \"transport\": \"batch\""},
        {"\"api\": \"openai\", \"model\": \"a\", \"transport\": \"batch\", "
         "\"batch_cost_factor\": -1",
         "\"batch_cost_factor\" is -1, outside [0, 10]"},
        {"\"api\": \"openai\", \"model\": \"a\", \"transport\": \"batch\", "
         "\"batch_max_requests\": 0",
         "\"batch_max_requests\" is 0, outside [1, 50000]"},
        {"\"api\": \"openai\", \"model\": \"a\", \"transport\": \"files\", "
         "\"dir\": \"d\", \"stream\": true",
         "\"stream\" must be false with \"transport\": \"files\""},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char err[1024] = "";
        llm_config cfg;
        ok(!one_model(bad[i].members, &cfg, err, sizeof(err)),
           "bad setting %zu is refused", i);
        like_str(err, bad[i].needle, "bad setting %zu: the message", i);
        like_str(err, "models[0]", "bad setting %zu: the model named", i);
    }
    char err[1024] = "";
    llm_config cfg;
    ok(one_model("\"api\": \"anthropic\", \"model\": \"a\", \"transport\": "
                 "\"files\", \"dir\": \"/tmp/q\"",
                 &cfg, err, sizeof(err)),
       "the files transport: %s", err);
    ok(cfg.models[0].files && strcmp(cfg.models[0].dir, "/tmp/q") == 0 &&
           !cfg.models[0].stream,
       "with its directory, not streamed by default");
    kevo__llm_config_free(&cfg);
    ok(one_model("\"api\": \"openai\", \"model\": \"a\", \"transport\": "
                 "\"batch\"",
                 &cfg, err, sizeof(err)),
       "the batch transport: %s", err);
    const llm_model *bm = &cfg.models[0];
    ok(bm->batch && !bm->files && !bm->stream && !bm->dir &&
           bm->batch_max_requests == 1000 && bm->batch_gather_s == 0 &&
           bm->poll_interval_s == 30 && bm->batch_wait_s == 600 &&
           bm->batch_cost_factor == 0.5,
       "not streamed; 1000 requests a batch, sent at once, looked at every "
       "30 s, waiting after 600 s, at half price by default");
    kevo__llm_config_free(&cfg);
    ok(one_model("\"api\": \"anthropic\", \"model\": \"a\", "
                 "\"transport\": \"batch\", \"dir\": \"/tmp/b\", "
                 "\"batch_max_requests\": 20, \"batch_gather_s\": 5, "
                 "\"poll_interval_s\": 0.5, \"batch_wait_s\": 0, "
                 "\"batch_cost_factor\": 1",
                 &cfg, err, sizeof(err)),
       "the batch transport's settings: %s", err);
    bm = &cfg.models[0];
    ok(strcmp(bm->dir, "/tmp/b") == 0 && bm->batch_max_requests == 20 &&
           bm->batch_gather_s == 5 && bm->poll_interval_s == 0.5 &&
           bm->batch_wait_s == 0 && bm->batch_cost_factor == 1,
       "are taken");
    kevo__llm_config_free(&cfg);
    char *p = kevo__llm_files_url_path("https://api.x.com/v1/messages?a=1");
    is_str(p, "/v1/messages?a=1", "a sidecar's path keeps the query");
    free(p);
    p = kevo__llm_files_url_path("http://127.0.0.1:8000");
    is_str(p, "/", "and is / without one");
    free(p);
}

static void test_urls(void)
{
    struct {
        llm_api api;
        const char *base, *url;
    } cases[] = {
        {LLM_API_OPENAI, "https://api.openai.com/v1",
         "https://api.openai.com/v1/chat/completions"},
        {LLM_API_OPENAI, "http://h:8000", "http://h:8000/v1/chat/completions"},
        {LLM_API_OPENAI, "http://h:8000/", "http://h:8000/v1/chat/completions"},
        {LLM_API_OPENAI, "https://openrouter.ai/api/v1",
         "https://openrouter.ai/api/v1/chat/completions"},
        {LLM_API_OPENAI, "http://h/v1/chat/completions",
         "http://h/v1/chat/completions"},
        {LLM_API_OPENAI,
         "https://r.openai.azure.com/openai/deployments/"
         "d?api-version=2024-10-21",
         "https://r.openai.azure.com/openai/deployments/d/chat/"
         "completions?api-version=2024-10-21"},
        {LLM_API_ANTHROPIC, "https://api.anthropic.com",
         "https://api.anthropic.com/v1/messages"},
        {LLM_API_ANTHROPIC, "https://api.anthropic.com/v1",
         "https://api.anthropic.com/v1/messages"},
        {LLM_API_ANTHROPIC, "https://api.anthropic.com/v1/",
         "https://api.anthropic.com/v1/messages"},
        {LLM_API_ANTHROPIC, "https://gw.example/anthropic",
         "https://gw.example/anthropic/v1/messages"},
        {LLM_API_ANTHROPIC, "https://gw.example/v1/messages",
         "https://gw.example/v1/messages"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        llm_model m = {.api = cases[i].api, .base_url = (char *)cases[i].base};
        char *u = kevo__llm_wire_url(&m);
        is_str(u, cases[i].url, "URL of %s (%s)", cases[i].base,
               kevo__llm_api_name(cases[i].api));
        free(u);
    }
}

static void test_replies(void)
{
    struct {
        llm_api api;
        const char *json;
        const char *text, *reasoning, *fail_kind, *reason;
        uint64_t in, out;
        bool cut;
    } cases[] = {
        {LLM_API_OPENAI,
         "{\"choices\": [{\"message\": {\"content\": \"answer\", "
         "\"reasoning_content\": \"thoughts ```cuda x```\"}, "
         "\"finish_reason\": \"stop\"}], \"usage\": {\"prompt_tokens\": 9, "
         "\"completion_tokens\": 90, \"completion_tokens_details\": "
         "{\"reasoning_tokens\": 80}}}",
         "answer", "thoughts ```cuda x```", NULL, NULL, 9, 90, false},
        {LLM_API_OPENAI,
         "{\"choices\": [{\"message\": {\"content\": \"answer\", "
         "\"reasoning\": \"vllm thoughts\"}, \"finish_reason\": \"stop\"}]}",
         "answer", "vllm thoughts", NULL, NULL, 0, 0, false},
        {LLM_API_OPENAI,
         "{\"choices\": [{\"message\": {\"content\": null, "
         "\"reasoning_content\": \"<think>unclosed\"}, \"finish_reason\": "
         "\"length\"}], \"usage\": {\"prompt_tokens\": 100, "
         "\"completion_tokens\": 8192}}",
         "", "<think>unclosed", LLM_FAIL_NO_ANSWER,
         "stopped at max_tokens (\"length\") before answering", 100, 8192,
         true},
        {LLM_API_OPENAI,
         "{\"choices\": [{\"message\": {\"content\": \"half\"}, "
         "\"finish_reason\": \"content_filter\"}], \"usage\": "
         "{\"prompt_tokens\": 3, \"completion_tokens\": 4}}",
         "half", "", LLM_FAIL_REFUSED, "a content filter stopped the reply", 3,
         4, false},
        {LLM_API_OPENAI,
         "{\"choices\": [{\"message\": {\"content\": null, \"refusal\": "
         "\"I can't\"}, \"finish_reason\": \"stop\"}]}",
         "", "", LLM_FAIL_REFUSED, "the model refused: I can't", 0, 0, false},
        {LLM_API_OPENAI,
         "{\"choices\": [{\"message\": {\"content\": \"cut\"}, "
         "\"finish_reason\": \"length\"}]}",
         "cut", "", NULL, NULL, 0, 0, true},
        {LLM_API_ANTHROPIC,
         "{\"type\": \"message\", \"content\": [{\"type\": \"thinking\", "
         "\"thinking\": \"t1\", \"signature\": \"s\"}, {\"type\": "
         "\"redacted_thinking\", \"data\": \"e\"}, {\"type\": \"text\", "
         "\"text\": \"answer\"}], \"stop_reason\": \"end_turn\", \"usage\": "
         "{\"input_tokens\": 5, \"cache_creation_input_tokens\": 7, "
         "\"cache_read_input_tokens\": 11, \"output_tokens\": 40}}",
         "answer", "t1", NULL, NULL, 23, 40, false},
        {LLM_API_ANTHROPIC,
         "{\"type\": \"message\", \"content\": [{\"type\": \"thinking\", "
         "\"thinking\": \"only\", \"signature\": \"s\"}], \"stop_reason\": "
         "\"max_tokens\", \"usage\": {\"input_tokens\": 5, "
         "\"output_tokens\": 4000}}",
         "", "only", LLM_FAIL_NO_ANSWER, "only 4 bytes of reasoning", 5, 4000,
         true},
        {LLM_API_ANTHROPIC,
         "{\"type\": \"message\", \"content\": [], \"stop_reason\": "
         "\"refusal\", \"stop_details\": {\"type\": \"refusal\", "
         "\"explanation\": \"policy\"}, \"usage\": {\"input_tokens\": 5, "
         "\"output_tokens\": 1}}",
         "", "", LLM_FAIL_REFUSED, "the model refused (\"refusal\"): policy", 5,
         1, false},
        {LLM_API_ANTHROPIC,
         "{\"type\": \"message\", \"content\": [{\"type\": \"text\", \"text\": "
         "\"part\"}], \"stop_reason\": \"model_context_window_exceeded\", "
         "\"usage\": {\"input_tokens\": 199000, \"output_tokens\": 1000}}",
         "part", "", LLM_FAIL_CONTEXT, "filled the model's context window",
         199000, 1000, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *root = json_loads(cases[i].json, 0, NULL);
        llm_wire_reply r;
        char why[256] = "";
        ok(kevo__llm_wire_parse(cases[i].api, root, &r, why, sizeof(why)),
           "reply %zu reads (%s)", i, why);
        is_str(r.text, cases[i].text, "reply %zu: the text", i);
        is_str(r.reasoning, cases[i].reasoning, "reply %zu: the reasoning", i);
        is_str(r.fail_kind, cases[i].fail_kind, "reply %zu: the failure", i);
        if (cases[i].reason)
            like_str(r.fail_reason, cases[i].reason, "reply %zu: why", i);
        is_int(r.input_tokens, cases[i].in, "reply %zu: input tokens", i);
        is_int(r.output_tokens, cases[i].out, "reply %zu: output tokens", i);
        is_int(r.cut_off, cases[i].cut, "reply %zu: cut off", i);
        kevo__llm_wire_reply_free(&r);
        json_decref(root);
    }
}

static void test_error_bodies(void)
{
    struct {
        const char *body;
        const char *text; /* NULL: no text */
        const char *kind;
    } cases[] = {
        {"{\"error\": {\"message\": \"Unsupported parameter: 'max_tokens'\", "
         "\"type\": \"invalid_request_error\", \"param\": \"max_tokens\", "
         "\"code\": \"unsupported_parameter\"}}",
         "invalid_request_error: Unsupported parameter: 'max_tokens'", NULL},
        {"{\"type\": \"error\", \"error\": {\"type\": "
         "\"invalid_request_error\","
         " \"message\": \"prompt is too long: 210000 tokens > 200000 "
         "maximum\"}}",
         "invalid_request_error: prompt is too long: 210000 tokens > 200000 "
         "maximum",
         LLM_FAIL_CONTEXT},
        {"{\"object\": \"error\", \"message\": \"This model's maximum context "
         "length is 4096 tokens.\", \"type\": \"BadRequestError\", \"param\": "
         "null, \"code\": 400}",
         "BadRequestError: This model's maximum context length is 4096 "
         "tokens.",
         LLM_FAIL_CONTEXT},
        {"{\"error\": {\"message\": \"too long\", \"type\": "
         "\"invalid_request_error\", \"code\": \"context_length_exceeded\"}}",
         "invalid_request_error: too long", LLM_FAIL_CONTEXT},
        {"{\"error\": {\"code\": 400, \"message\": \"the request exceeds the "
         "available context size, try increasing it\", \"type\": "
         "\"exceed_context_size_error\"}}",
         "exceed_context_size_error: the request exceeds the available "
         "context size, try increasing it",
         LLM_FAIL_CONTEXT},
        {"{\"error\": \"model 'x' not found\"}", "model 'x' not found", NULL},
        {"{\"detail\": \"Not Found\"}", "Not Found", NULL},
        {"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>"
         "<center><h1>502 Bad Gateway</h1></center></body></html>",
         "502 Bad Gateway 502 Bad Gateway", NULL},
        {"upstream connect error\n  or disconnect",
         "upstream connect error or "
         "disconnect",
         NULL},
        {"<html>", NULL, NULL},
        {"", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len = strlen(cases[i].body);
        char *t = kevo__llm_wire_error_text(cases[i].body, len);
        is_str(t, cases[i].text, "error body %zu: the text", i);
        is_str(kevo__llm_wire_error_kind(cases[i].body, len), cases[i].kind,
               "error body %zu: the kind", i);
        free(t);
    }
    /* A long message is kept, up to the bound. */
    llm_buf b = {0};
    kevo__llm_buf_puts(&b, "{\"error\": {\"type\": \"invalid_request_error\", "
                           "\"message\": \"");
    for (int i = 0; i < 400; i++)
        kevo__llm_buf_puts(&b, "word\\n\\u00e9 ");
    kevo__llm_buf_puts(&b, "\"}}");
    char *t = kevo__llm_wire_error_text(b.data, b.len);
    ok(t && strlen(t) <= LLM_ERROR_TEXT_MAX + 3 &&
           strlen(t) >= LLM_ERROR_TEXT_MAX - 4,
       "a long message is bounded to %d bytes (%zu)", LLM_ERROR_TEXT_MAX,
       t ? strlen(t) : 0);
    ok(t && strcmp(t + strlen(t) - 3, "...") == 0, "and marked as cut");
    ok(t && !strchr(t, '\n'), "on one line");
    free(t);
    kevo__llm_buf_free(&b);
}

/* ---- the event-stream reader ---------------------------------------- */

static int on_event(void *ud, const char *type, const char *data, size_t len)
{
    llm_buf *b = ud;
    kevo__llm_buf_printf(b, "[%s|%.*s]", type, (int)len, data);
    return strcmp(data, "STOP") == 0 ? 42 : 0;
}

/* The events of text, fed in pieces of step bytes (0: whole). */
static char *events(const char *text, size_t step, int *rc)
{
    llm_buf out = {0};
    llm_sse sse = {0};
    kevo__llm_sse_init(&sse, 64, on_event, &out);
    size_t n = strlen(text);
    *rc = 0;
    for (size_t i = 0; i < n && *rc == 0; i += step ? step : n)
        *rc = kevo__llm_sse_feed(&sse, text + i,
                                 step && n - i > step ? step : n - i);
    if (*rc == 0)
        *rc = kevo__llm_sse_finish(&sse);
    kevo__llm_sse_free(&sse);
    kevo__llm_buf_puts(&out, "");
    return kevo__llm_buf_take(&out);
}

static void test_sse(void)
{
    struct {
        const char *in, *out;
        int rc;
    } cases[] = {
        {"data: a\n\ndata: b\n\n", "[|a][|b]", 0},
        {"event: ping\ndata: {}\r\n\r\nevent: x\rdata: y\r\r", "[ping|{}][x|y]",
         0},
        {"\xef\xbb\xbf"
         "data: bom\n\n",
         "[|bom]", 0},
        {": comment\nid: 7\nretry: 10\ndata:no-space\n\n", "[|no-space]", 0},
        {"data: one\ndata: two\n\n", "[|one\ntwo]", 0},
        {"event: lonely\n\n", "", 0},
        {"data:\n\n", "[|]", 0},
        {"data: [DONE]\n", "[|[DONE]]", 0},
        {"data: a\n\ndata: cut sho", "[|a]", 0},
        {"data: a\n\ndata: STOP\n\ndata: never\n\n", "[|a][|STOP]", 42},
        {"data: 0123456789012345678901234567890123456789012345678901234567890"
         "123456789\n\n",
         "", LLM_SSE_TOO_LARGE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (size_t step = 0; step <= 3; step++) {
            int rc;
            char *got = events(cases[i].in, step, &rc);
            is_str(got, cases[i].out, "events %zu, fed %zu bytes at a time", i,
                   step);
            is_int(rc, cases[i].rc, "events %zu, fed %zu at a time: status", i,
                   step);
            free(got);
        }
    }
}

int main(void)
{
    test_defaults();
    test_examples();
    test_bad_settings();
    test_urls();
    test_replies();
    test_error_bodies();
    test_sse();
    return done_testing();
}

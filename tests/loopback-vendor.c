/*
 * loopback-vendor.c: the OpenAI and Anthropic formats of the loopback
 * server: whole replies, event streams, error objects and request checks.
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "loopback-vendor.h"

#define SIGNATURE "EqQBCkgIARABGAIiQGxvb3BiYWNrLXNpZ25hdHVyZQ=="
#define REDACTED_DATA "EmwKAhgBEgy3va3pzGwx4c0XGxQaDHJlZGFjdGVkLWJ5LWxvb3BiYWNr"

static void *must(void *p)
{
    if (!p) {
        fprintf(stderr, "loopback: out of memory\n");
        abort();
    }
    return p;
}

static char *dump(json_t *v)
{
    char *s = must(json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER));
    json_decref(v);
    return s;
}

static bool is(const char *a, const char *b)
{
    return a && strcmp(a, b) == 0;
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* ---- whole replies ------------------------------------------------------ */

static json_t *openai_usage(const lbv_content *c)
{
    return json_pack("{s:i, s:i, s:i, s:{s:i}, s:{s:i}}", "prompt_tokens",
                     (int)c->in_tokens, "completion_tokens", (int)c->out_tokens,
                     "total_tokens", (int)(c->in_tokens + c->out_tokens),
                     "prompt_tokens_details", "cached_tokens", 0,
                     "completion_tokens_details", "reasoning_tokens",
                     (int)c->reasoning_tokens);
}

static json_t *anthropic_usage(const lbv_content *c, long out)
{
    return json_pack("{s:i, s:i, s:i, s:i}", "input_tokens", (int)c->in_tokens,
                     "cache_creation_input_tokens", 0,
                     "cache_read_input_tokens", 0, "output_tokens", (int)out);
}

static json_t *refusal_details(const lbv_content *c)
{
    return json_pack("{s:s, s:n, s:o}", "type", "refusal", "category",
                     "explanation", str_or_null(c->refusal));
}

char *lbv_message(const lbv_content *c)
{
    char id[64];
    if (is(c->api, "anthropic")) {
        snprintf(id, sizeof(id), "msg_loopback%06lu", c->id);
        json_t *content = json_array();
        if (c->reasoning)
            json_array_append_new(content, json_pack("{s:s, s:s, s:s}", "type",
                                                     "thinking", "thinking",
                                                     c->reasoning, "signature",
                                                     SIGNATURE));
        for (int i = 0; i < c->redacted; i++)
            json_array_append_new(content, json_pack("{s:s, s:s}", "type",
                                                     "redacted_thinking",
                                                     "data", REDACTED_DATA));
        if (c->text)
            json_array_append_new(content, json_pack("{s:s, s:s}", "type",
                                                     "text", "text", c->text));
        json_t *m = must(json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:n}", "id",
                                   id, "type", "message", "role", "assistant",
                                   "model", c->model, "content", content,
                                   "stop_reason", c->finish, "stop_sequence"));
        if (is(c->finish, "refusal"))
            json_object_set_new(m, "stop_details", refusal_details(c));
        if (c->usage)
            json_object_set_new(m, "usage", anthropic_usage(c, c->out_tokens));
        return dump(m);
    }
    snprintf(id, sizeof(id), "chatcmpl-loopback%06lu", c->id);
    json_t *msg =
        json_pack("{s:s, s:o, s:o}", "role", "assistant", "content",
                  str_or_null(c->text), "refusal", str_or_null(c->refusal));
    if (c->reasoning)
        json_object_set_new(msg, c->reasoning_field, json_string(c->reasoning));
    json_t *m = must(json_pack(
        "{s:s, s:s, s:I, s:s, s:[{s:i, s:o, s:n, s:s}], s:n}", "id", id,
        "object", "chat.completion", "created", (json_int_t)time(NULL), "model",
        c->model, "choices", "index", 0, "message", msg, "logprobs",
        "finish_reason", c->finish, "system_fingerprint"));
    if (c->usage)
        json_object_set_new(m, "usage", openai_usage(c));
    return dump(m);
}

/* ---- streams ------------------------------------------------------------ */

static void push(lbv_events *e, char *ev)
{
    e->ev = must(realloc(e->ev, (e->n + 1) * sizeof(*e->ev)));
    e->ev[e->n++] = ev;
}

/* An event: "event: TYPE\n" (when type is set) and "data: JSON\n\n". */
static void event(lbv_events *e, const char *type, json_t *data)
{
    char *d = dump(data);
    size_t n = strlen(d) + (type ? strlen(type) : 0) + 32;
    char *ev = must(malloc(n));
    if (type)
        snprintf(ev, n, "event: %s\ndata: %s\n\n", type, d);
    else
        snprintf(ev, n, "data: %s\n\n", d);
    free(d);
    push(e, ev);
}

/* The length of the next piece of s: about want bytes, not splitting a
 * UTF-8 sequence. */
static size_t piece_len(const char *s, size_t want)
{
    size_t n = strlen(s);
    if (n <= want)
        return n;
    while (want < n && ((unsigned char)s[want] & 0xc0) == 0x80)
        want++;
    return want;
}

static json_t *chunk(const lbv_content *c, const char *id, json_t *delta,
                     const char *finish)
{
    json_t *ch = must(json_pack(
        "{s:s, s:s, s:I, s:s, s:n, s:[{s:i, s:o, s:n, s:o}]}", "id", id,
        "object", "chat.completion.chunk", "created", (json_int_t)time(NULL),
        "model", c->model, "system_fingerprint", "choices", "index", 0, "delta",
        delta, "logprobs", "finish_reason", str_or_null(finish)));
    if (c->include_usage)
        json_object_set_new(ch, "usage", json_null());
    return ch;
}

/* Chunks whose deltas carry s, piece by piece, under key. */
static void openai_pieces(lbv_events *e, const lbv_content *c, const char *id,
                          const char *key, const char *s)
{
    size_t want = c->piece ? c->piece : 16;
    while (*s) {
        size_t n = piece_len(s, want);
        json_t *d = json_object();
        json_object_set_new(d, key, must(json_stringn(s, n)));
        event(e, NULL, chunk(c, id, d, NULL));
        s += n;
    }
}

static void openai_stream(const lbv_content *c, lbv_events *e)
{
    char id[64];
    snprintf(id, sizeof(id), "chatcmpl-loopback%06lu", c->id);
    event(e, NULL,
          chunk(c, id,
                json_pack("{s:s, s:s, s:n}", "role", "assistant", "content", "",
                          "refusal"),
                NULL));
    if (c->reasoning)
        openai_pieces(e, c, id, c->reasoning_field, c->reasoning);
    if (c->refusal)
        openai_pieces(e, c, id, "refusal", c->refusal);
    if (c->text)
        openai_pieces(e, c, id, "content", c->text);
    if (c->unfinished)
        return;
    event(e, NULL, chunk(c, id, json_object(), c->finish));
    if (c->usage && c->include_usage) {
        json_t *u = must(json_pack("{s:s, s:s, s:I, s:s, s:n, s:[]}", "id", id,
                                   "object", "chat.completion.chunk", "created",
                                   (json_int_t)time(NULL), "model", c->model,
                                   "system_fingerprint", "choices"));
        json_object_set_new(u, "usage", openai_usage(c));
        event(e, NULL, u);
    }
    push(e, must(strdup("data: [DONE]\n\n")));
}

/* One content block: its start, its deltas (text or thinking, piece by
 * piece; a thinking block's signature last) and its stop. */
static void anthropic_block(lbv_events *e, const lbv_content *c, int index,
                            const char *type, const char *s)
{
    json_t *start;
    if (is(type, "thinking"))
        start = json_pack("{s:s, s:s, s:s}", "type", "thinking", "thinking", "",
                          "signature", "");
    else if (is(type, "redacted_thinking"))
        start = json_pack("{s:s, s:s}", "type", "redacted_thinking", "data",
                          REDACTED_DATA);
    else
        start = json_pack("{s:s, s:s}", "type", "text", "text", "");
    event(e, "content_block_start",
          json_pack("{s:s, s:i, s:o}", "type", "content_block_start", "index",
                    index, "content_block", start));
    if (index == 0)
        event(e, "ping", json_pack("{s:s}", "type", "ping"));
    bool thinking = is(type, "thinking");
    size_t want = c->piece ? c->piece : 16;
    while (s && *s) {
        size_t n = piece_len(s, want);
        json_t *d = json_pack(
            "{s:s, s:o}", "type", thinking ? "thinking_delta" : "text_delta",
            thinking ? "thinking" : "text", must(json_stringn(s, n)));
        event(e, "content_block_delta",
              json_pack("{s:s, s:i, s:o}", "type", "content_block_delta",
                        "index", index, "delta", d));
        s += n;
    }
    if (thinking)
        event(e, "content_block_delta",
              json_pack("{s:s, s:i, s:{s:s, s:s}}", "type",
                        "content_block_delta", "index", index, "delta", "type",
                        "signature_delta", "signature", SIGNATURE));
    event(
        e, "content_block_stop",
        json_pack("{s:s, s:i}", "type", "content_block_stop", "index", index));
}

static void anthropic_stream(const lbv_content *c, lbv_events *e)
{
    char id[64];
    snprintf(id, sizeof(id), "msg_loopback%06lu", c->id);
    json_t *msg =
        must(json_pack("{s:s, s:s, s:s, s:s, s:[], s:n, s:n}", "id", id, "type",
                       "message", "role", "assistant", "model", c->model,
                       "content", "stop_reason", "stop_sequence"));
    if (c->usage)
        json_object_set_new(msg, "usage", anthropic_usage(c, 1));
    event(e, "message_start",
          json_pack("{s:s, s:o}", "type", "message_start", "message", msg));
    int index = 0;
    if (c->reasoning)
        anthropic_block(e, c, index++, "thinking", c->reasoning);
    for (int i = 0; i < c->redacted; i++)
        anthropic_block(e, c, index++, "redacted_thinking", NULL);
    if (c->text)
        anthropic_block(e, c, index++, "text", c->text);
    if (c->unfinished)
        return;
    json_t *delta =
        json_pack("{s:s, s:n}", "stop_reason", c->finish, "stop_sequence");
    if (is(c->finish, "refusal"))
        json_object_set_new(delta, "stop_details", refusal_details(c));
    json_t *md =
        json_pack("{s:s, s:o}", "type", "message_delta", "delta", delta);
    if (c->usage)
        json_object_set_new(
            md, "usage",
            json_pack("{s:i}", "output_tokens", (int)c->out_tokens));
    event(e, "message_delta", md);
    event(e, "message_stop", json_pack("{s:s}", "type", "message_stop"));
}

void lbv_stream(const lbv_content *c, lbv_events *out)
{
    if (is(c->api, "anthropic"))
        anthropic_stream(c, out);
    else
        openai_stream(c, out);
}

char *lbv_stream_fault(const char *api, const char *kind)
{
    if (is(kind, "malformed"))
        return must(strdup(is(api, "anthropic")
                               ? "event: content_block_delta\ndata: "
                                 "{\"type\": \"content_block_delta\", "
                                 "\"index\": 0, \"delta\": {\"type\": "
                                 "\"text_delta\", \"text\": \"unfini\n\n"
                               : "data: {\"choices\": [{\"delta\": "
                                 "{\"content\": \"unfini\n\n"));
    lbv_events e = {0};
    if (is(api, "anthropic"))
        event(&e, "error",
              json_pack("{s:s, s:{s:s, s:s}}", "type", "error", "error", "type",
                        "overloaded_error", "message", "Overloaded"));
    else
        event(&e, NULL,
              json_pack("{s:{s:s, s:s, s:n, s:n}}", "error", "message",
                        "The server had an error while processing your "
                        "request. Sorry about that!",
                        "type", "server_error", "param", "code"));
    char *ev = e.ev[0];
    free(e.ev);
    return ev;
}

void lbv_events_free(lbv_events *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->ev[i]);
    free(e->ev);
    e->ev = NULL;
    e->n = 0;
}

/* ---- errors ------------------------------------------------------------- */

char *lbv_error(const char *api, const char *type, const char *message,
                const char *code)
{
    if (is(api, "anthropic"))
        return dump(json_pack("{s:s, s:{s:s, s:s}, s:s}", "type", "error",
                              "error", "type", type, "message", message,
                              "request_id", "req_loopback"));
    return dump(json_pack("{s:{s:s, s:s, s:n, s:o}}", "error", "message",
                          message, "type", type, "param", "code",
                          str_or_null(code)));
}

char *lbv_vllm_error(const char *message)
{
    return dump(json_pack("{s:s, s:s, s:s, s:n, s:i}", "object", "error",
                          "message", message, "type", "BadRequestError",
                          "param", "code", 400));
}

/* ---- request checks ----------------------------------------------------- */

bool lbv_reasoning_model(const char *model)
{
    const char *slash = strrchr(model, '/');
    const char *n = slash ? slash + 1 : model;
    return (n[0] == 'o' && isdigit((unsigned char)n[1])) ||
           strncmp(n, "gpt-5", 5) == 0;
}

/* Fails a check with a message. */
static const char *bad(char *msg, size_t n, const char **code,
                       const char *code_value, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static const char *bad(char *msg, size_t n, const char **code,
                       const char *code_value, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
    *code = code_value;
    return msg;
}

static bool in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (is(s, *list))
            return true;
    return false;
}

static const char *check_openai(json_t *root, char *msg, size_t n,
                                const char **code)
{
    static const char *const efforts[] = {"none", "minimal", "low", "medium",
                                          "high", "xhigh",   NULL};
    const char *model = json_string_value(json_object_get(root, "model"));
    json_t *mt = json_object_get(root, "max_tokens");
    json_t *mct = json_object_get(root, "max_completion_tokens");
    json_t *t = json_object_get(root, "temperature");
    json_t *tp = json_object_get(root, "top_p");
    json_t *re = json_object_get(root, "reasoning_effort");
    json_t *stream = json_object_get(root, "stream");
    if ((mt && !json_is_integer(mt)) || (mct && !json_is_integer(mct)))
        return bad(msg, n, code, NULL, "max_tokens must be an integer");
    if (t && !(json_is_number(t) && json_number_value(t) >= 0 &&
               json_number_value(t) <= 2))
        return bad(msg, n, code, NULL, "temperature must be in [0, 2]");
    if (tp && !(json_is_number(tp) && json_number_value(tp) >= 0 &&
                json_number_value(tp) <= 1))
        return bad(msg, n, code, NULL, "top_p must be in [0, 1]");
    if (stream && !json_is_boolean(stream))
        return bad(msg, n, code, NULL, "stream must be a boolean");
    if (json_object_get(root, "stream_options") && !json_is_true(stream))
        return bad(msg, n, code, NULL,
                   "The 'stream_options' parameter is only allowed when "
                   "'stream' is enabled.");
    if (re && !in_list(json_string_value(re), efforts))
        return bad(msg, n, code, "invalid_value",
                   "Invalid value for 'reasoning_effort'.");
    if (lbv_reasoning_model(model)) {
        if (mt)
            return bad(msg, n, code, "unsupported_parameter",
                       "Unsupported parameter: 'max_tokens' is not supported "
                       "with this model. Use 'max_completion_tokens' "
                       "instead.");
        if (t && json_number_value(t) != 1)
            return bad(msg, n, code, "unsupported_value",
                       "Unsupported value: 'temperature' does not support "
                       "%g with this model. Only the default (1) value is "
                       "supported.",
                       json_number_value(t));
        if (tp && json_number_value(tp) != 1)
            return bad(msg, n, code, "unsupported_parameter",
                       "Unsupported parameter: 'top_p' is not supported "
                       "with this model.");
    }
    return NULL;
}

static const char *check_anthropic(json_t *root, char *msg, size_t n,
                                   const char **code)
{
    static const char *const known[] = {"model",
                                        "messages",
                                        "max_tokens",
                                        "system",
                                        "temperature",
                                        "top_p",
                                        "top_k",
                                        "stop_sequences",
                                        "stream",
                                        "metadata",
                                        "thinking",
                                        "tools",
                                        "tool_choice",
                                        "service_tier",
                                        "output_config",
                                        "container",
                                        "context_management",
                                        "mcp_servers",
                                        "inference_geo",
                                        "speed",
                                        "cache_control",
                                        NULL};
    static const char *const efforts[] = {"low",   "medium", "high",
                                          "xhigh", "max",    NULL};
    const char *key;
    json_t *v;
    json_object_foreach (root, key, v) {
        if (!in_list(key, known))
            return bad(msg, n, code, NULL, "%s: Extra inputs are not permitted",
                       key);
    }
    json_t *mt = json_object_get(root, "max_tokens");
    json_t *t = json_object_get(root, "temperature");
    json_t *tp = json_object_get(root, "top_p");
    json_t *sys = json_object_get(root, "system");
    json_t *stream = json_object_get(root, "stream");
    json_t *msgs = json_object_get(root, "messages");
    if (!json_is_integer(mt) || json_integer_value(mt) < 1)
        return bad(msg, n, code, NULL, "max_tokens: Field required");
    if (sys && !json_is_string(sys))
        return bad(msg, n, code, NULL, "system: Input should be a string");
    if (t && !(json_is_number(t) && json_number_value(t) >= 0 &&
               json_number_value(t) <= 1))
        return bad(msg, n, code, NULL,
                   "temperature: Input should be less than or equal to 1");
    if (tp && !(json_is_number(tp) && json_number_value(tp) >= 0 &&
                json_number_value(tp) <= 1))
        return bad(msg, n, code, NULL,
                   "top_p: Input should be less than or equal to 1");
    if (stream && !json_is_boolean(stream))
        return bad(msg, n, code, NULL, "stream: Input should be a boolean");
    if (!is(json_string_value(json_object_get(json_array_get(msgs, 0), "role")),
            "user"))
        return bad(msg, n, code, NULL,
                   "messages: the first message must use "
                   "the \"user\" role");
    json_t *effort =
        json_object_get(json_object_get(root, "output_config"), "effort");
    if (effort && !in_list(json_string_value(effort), efforts))
        return bad(msg, n, code, NULL,
                   "output_config.effort: Input should be 'low', 'medium', "
                   "'high', 'xhigh' or 'max'");
    json_t *th = json_object_get(root, "thinking");
    const char *tt = json_string_value(json_object_get(th, "type"));
    if (th && !in_list(tt, (const char *const[]){"enabled", "disabled",
                                                 "adaptive", NULL}))
        return bad(msg, n, code, NULL,
                   "thinking.type: Input tag is not one "
                   "of 'enabled', 'disabled', "
                   "'adaptive'");
    if (is(tt, "enabled")) {
        json_t *b = json_object_get(th, "budget_tokens");
        if (!json_is_integer(b) || json_integer_value(b) < 1024)
            return bad(msg, n, code, NULL,
                       "thinking.enabled.budget_tokens: Input should be "
                       "greater than or equal to 1024");
        if (json_integer_value(b) >= json_integer_value(mt))
            return bad(msg, n, code, NULL,
                       "`max_tokens` must be greater than "
                       "`thinking.budget_tokens`");
    }
    if (is(tt, "enabled") || is(tt, "adaptive")) {
        if (t && json_number_value(t) != 1)
            return bad(msg, n, code, NULL,
                       "`temperature` may only be set to 1 when thinking is "
                       "enabled");
        if (tp && json_number_value(tp) < 0.95)
            return bad(msg, n, code, NULL,
                       "`top_p` must be greater than or equal to 0.95 when "
                       "thinking is enabled");
        if (json_object_get(root, "top_k"))
            return bad(msg, n, code, NULL,
                       "`top_k` must be unset when thinking is enabled");
    }
    return NULL;
}

/* An anthropic-version header: a date, 2023-06-01 or later (the API keeps
 * every version it has published). */
static bool dated_version(const char *v)
{
    if (!v || strlen(v) != 10)
        return false;
    for (int i = 0; i < 10; i++)
        if (i == 4 || i == 7 ? v[i] != '-' : !isdigit((unsigned char)v[i]))
            return false;
    return strcmp(v, "2023-06-01") >= 0;
}

const char *lbv_check(const char *api, json_t *root, const char *version,
                      char *msg, size_t n, const char **type, const char **code)
{
    *type = "invalid_request_error";
    *code = NULL;
    if (!json_is_object(root))
        return bad(msg, n, code, NULL, "the body is not a JSON object");
    if (!json_is_string(json_object_get(root, "model")))
        return bad(msg, n, code, NULL, "\"model\" must be a string");
    json_t *msgs = json_object_get(root, "messages");
    if (!json_is_array(msgs) || json_array_size(msgs) == 0)
        return bad(msg, n, code, NULL,
                   "\"messages\" must be a non-empty array");
    size_t i;
    json_t *m;
    json_array_foreach (msgs, i, m) {
        if (!json_is_string(json_object_get(m, "role")) ||
            !json_is_string(json_object_get(m, "content")))
            return bad(msg, n, code, NULL,
                       "each message needs a \"role\" and a \"content\" "
                       "string");
    }
    if (is(api, "anthropic")) {
        if (!dated_version(version))
            return bad(msg, n, code, NULL,
                       "anthropic-version: a version such as 2023-06-01 is "
                       "required");
        return check_anthropic(root, msg, n, code);
    }
    return check_openai(root, msg, n, code);
}

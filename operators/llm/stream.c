/*
 * stream.c: streamed replies of the OpenAI chat-completions and Anthropic
 * messages APIs, assembled event by event.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "stream.h"

void kevo__llm_stream_init(llm_stream *s, llm_api api, size_t max_bytes)
{
    memset(s, 0, sizeof(*s));
    s->api = api;
    s->max_bytes = max_bytes;
}

void kevo__llm_stream_free(llm_stream *s)
{
    kevo__llm_buf_free(&s->text);
    kevo__llm_buf_free(&s->reasoning);
    kevo__llm_buf_free(&s->refusal);
    memset(s, 0, sizeof(*s));
}

void kevo__llm_stream_reset(llm_stream *s)
{
    llm_api api = s->api;
    size_t max = s->max_bytes;
    kevo__llm_stream_free(s);
    kevo__llm_stream_init(s, api, max);
}

/* Appends a piece of text or reasoning, within the cap. */
static llm_outcome add(llm_stream *s, llm_buf *b, const char *sep,
                       json_t *piece, char *why, size_t n)
{
    size_t len = json_string_length(piece);
    size_t held = s->text.len + s->reasoning.len + s->refusal.len;
    if (len > s->max_bytes || held > s->max_bytes - len) {
        kevo__llm_errf(why, n,
                       "the streamed reply is over the cap of %zu bytes of "
                       "text and reasoning",
                       s->max_bytes);
        return LLM_TOO_LARGE;
    }
    if (sep && b->len && len)
        kevo__llm_buf_puts(b, sep);
    if (!kevo__llm_buf_append(b, json_string_value(piece), len)) {
        kevo__llm_errf(why, n, "out of memory for the streamed reply");
        return LLM_MALFORMED;
    }
    return LLM_OK;
}

static void set_finish(llm_stream *s, json_t *v)
{
    if (json_is_string(v))
        snprintf(s->meta.finish, sizeof(s->meta.finish), "%s",
                 json_string_value(v));
}

/* An error event's text, "type: message", into why. */
static llm_outcome stream_error(json_t *root, char *why, size_t n)
{
    char *t = kevo__llm_wire_error_json(root);
    kevo__llm_errf(why, n, "the server sent an error in the stream: %s",
                   t ? t : "(no message)");
    free(t);
    return LLM_STREAM_ERROR;
}

static llm_outcome openai_event(llm_stream *s, json_t *root, char *why,
                                size_t n)
{
    if (json_object_get(root, "error"))
        return stream_error(root, why, n);
    json_t *choices = json_object_get(root, "choices");
    json_t *usage = json_object_get(root, "usage");
    if (!json_is_array(choices) && !json_is_object(usage)) {
        kevo__llm_errf(why, n,
                       "stream event %zu has neither \"choices\" nor "
                       "\"usage\"",
                       s->meta.events);
        return LLM_MALFORMED;
    }
    kevo__llm_wire_usage(LLM_API_OPENAI, usage, &s->meta);
    json_t *choice = json_array_get(choices, 0);
    if (!choice)
        return LLM_OK;
    s->chunks = true;
    json_t *delta = json_object_get(choice, "delta");
    json_t *content = json_object_get(delta, "content");
    llm_outcome o = LLM_OK;
    if (json_is_string(content)) {
        s->has_text = true;
        o = add(s, &s->text, NULL, content, why, n);
    }
    json_t *r1 = json_object_get(delta, "reasoning_content");
    json_t *r2 = json_object_get(delta, "reasoning");
    if (o == LLM_OK && json_is_string(r1))
        o = add(s, &s->reasoning, NULL, r1, why, n);
    /* A server that sends both names sends the same piece twice. */
    if (o == LLM_OK && json_is_string(r2) && !json_is_string(r1))
        o = add(s, &s->reasoning, NULL, r2, why, n);
    json_t *refusal = json_object_get(delta, "refusal");
    if (o == LLM_OK && json_is_string(refusal))
        o = add(s, &s->refusal, NULL, refusal, why, n);
    set_finish(s, json_object_get(choice, "finish_reason"));
    return o;
}

static llm_outcome anthropic_event(llm_stream *s, json_t *root, char *why,
                                   size_t n)
{
    const char *type = json_string_value(json_object_get(root, "type"));
    if (!type) {
        kevo__llm_errf(why, n, "stream event %zu has no \"type\"",
                       s->meta.events);
        return LLM_MALFORMED;
    }
    if (strcmp(type, "error") == 0)
        return stream_error(root, why, n);
    if (strcmp(type, "message_start") == 0) {
        json_t *msg = json_object_get(root, "message");
        if (!json_is_object(msg)) {
            kevo__llm_errf(why, n, "message_start has no \"message\"");
            return LLM_MALFORMED;
        }
        s->started = true;
        kevo__llm_wire_usage(LLM_API_ANTHROPIC, json_object_get(msg, "usage"),
                             &s->meta);
        return LLM_OK;
    }
    if (strcmp(type, "content_block_start") == 0) {
        json_t *block = json_object_get(root, "content_block");
        const char *bt = json_string_value(json_object_get(block, "type"));
        if (!bt) {
            kevo__llm_errf(why, n, "content_block_start has no block type");
            return LLM_MALFORMED;
        }
        if (strcmp(bt, "redacted_thinking") == 0) {
            s->meta.redacted_thinking++;
            return LLM_OK;
        }
        bool text = strcmp(bt, "text") == 0;
        bool thinking = strcmp(bt, "thinking") == 0;
        if (!text && !thinking)
            return LLM_OK; /* tool use and the like: not for us */
        llm_buf *b = text ? &s->text : &s->reasoning;
        /* Blocks are joined by a line break, as in a whole reply. */
        if (b->len && !kevo__llm_buf_puts(b, "\n")) {
            kevo__llm_errf(why, n, "out of memory for the streamed reply");
            return LLM_MALFORMED;
        }
        if (text)
            s->has_text = true;
        json_t *init = json_object_get(block, text ? "text" : "thinking");
        return json_is_string(init) ? add(s, b, NULL, init, why, n) : LLM_OK;
    }
    if (strcmp(type, "content_block_delta") == 0) {
        json_t *delta = json_object_get(root, "delta");
        const char *dt = json_string_value(json_object_get(delta, "type"));
        if (!dt) {
            kevo__llm_errf(why, n, "content_block_delta has no delta type");
            return LLM_MALFORMED;
        }
        if (strcmp(dt, "text_delta") == 0) {
            json_t *t = json_object_get(delta, "text");
            return json_is_string(t) ? add(s, &s->text, NULL, t, why, n)
                                     : LLM_OK;
        }
        if (strcmp(dt, "thinking_delta") == 0) {
            json_t *t = json_object_get(delta, "thinking");
            return json_is_string(t) ? add(s, &s->reasoning, NULL, t, why, n)
                                     : LLM_OK;
        }
        return LLM_OK; /* signature_delta, input_json_delta, citations */
    }
    if (strcmp(type, "message_delta") == 0) {
        json_t *delta = json_object_get(root, "delta");
        set_finish(s, json_object_get(delta, "stop_reason"));
        json_t *expl = json_object_get(json_object_get(delta, "stop_details"),
                                       "explanation");
        if (json_is_string(expl)) {
            s->refusal.len = 0;
            llm_outcome o = add(s, &s->refusal, NULL, expl, why, n);
            if (o != LLM_OK)
                return o;
        }
        kevo__llm_wire_usage(LLM_API_ANTHROPIC, json_object_get(root, "usage"),
                             &s->meta);
        return LLM_OK;
    }
    if (strcmp(type, "message_stop") == 0)
        s->done = true;
    /* content_block_stop, ping, and types added later: nothing to do. */
    return LLM_OK;
}

llm_outcome kevo__llm_stream_event(llm_stream *s, const char *type,
                                   const char *data, size_t len, char *why,
                                   size_t n)
{
    (void)type; /* the type inside the data is the one that counts */
    s->meta.events++;
    if (s->api == LLM_API_OPENAI && len >= 6 &&
        memcmp(data, "[DONE]", 6) == 0) {
        s->done = true;
        return LLM_OK;
    }
    json_error_t jerr;
    json_t *root = json_loadb(data, len, 0, &jerr);
    if (!json_is_object(root)) {
        kevo__llm_errf(why, n, "stream event %zu is not a JSON object: %s",
                       s->meta.events, root ? "another JSON value" : jerr.text);
        json_decref(root);
        return LLM_MALFORMED;
    }
    llm_outcome o = s->api == LLM_API_OPENAI ? openai_event(s, root, why, n)
                                             : anthropic_event(s, root, why, n);
    json_decref(root);
    return o;
}

/* Hands a buffer over as a string that is never NULL. */
static char *take(llm_buf *b, size_t *len)
{
    *len = b->len;
    if (b->failed)
        return NULL;
    return kevo__llm_buf_take(b);
}

llm_outcome kevo__llm_stream_finish(llm_stream *s, llm_wire_reply *out,
                                    char *why, size_t n)
{
    memset(out, 0, sizeof(*out));
    bool shaped = s->api == LLM_API_OPENAI ? s->chunks : s->started;
    if (!shaped && !s->done) {
        kevo__llm_errf(
            why, n, "the stream (%zu events) held no %s", s->meta.events,
            s->api == LLM_API_OPENAI ? "chunk with choices" : "message_start");
        return s->meta.events ? LLM_MALFORMED : LLM_TRUNCATED;
    }
    if (!s->done && !s->meta.finish[0]) {
        kevo__llm_errf(why, n,
                       "the stream stopped before its end (%zu events, %zu "
                       "bytes of text, %zu of reasoning)",
                       s->meta.events, s->text.len, s->reasoning.len);
        return LLM_TRUNCATED;
    }
    *out = s->meta;
    out->streamed = true;
    out->has_text = s->has_text;
    out->text = take(&s->text, &out->text_len);
    out->reasoning = take(&s->reasoning, &out->reasoning_len);
    size_t rlen = 0;
    if (s->refusal.len)
        out->refusal = take(&s->refusal, &rlen);
    if (!out->text || !out->reasoning || (rlen && !out->refusal) ||
        !kevo__llm_wire_classify(out)) {
        kevo__llm_wire_reply_free(out);
        kevo__llm_errf(why, n, "out of memory for the streamed reply");
        return LLM_MALFORMED;
    }
    return LLM_OK;
}

void kevo__llm_stream_spent(const llm_stream *s, size_t request_bytes,
                            uint64_t *input, uint64_t *output)
{
    uint64_t in_est = request_bytes / 4 + 1;
    uint64_t out_est = (s->text.len + s->reasoning.len) / 4;
    *input = s->meta.input_tokens ? s->meta.input_tokens : in_est;
    *output = s->meta.output_tokens > out_est ? s->meta.output_tokens : out_est;
}

void kevo__llm_intake_init(llm_intake *t, llm_api api, size_t max_bytes,
                           size_t request_bytes)
{
    memset(t, 0, sizeof(*t));
    t->api = api;
    t->request_bytes = request_bytes;
    kevo__llm_stream_init(&t->stream, api, max_bytes);
}

void kevo__llm_intake_free(llm_intake *t)
{
    kevo__llm_stream_free(&t->stream);
    kevo__llm_wire_reply_free(&t->wire);
}

bool kevo__llm_intake_validate(void *intake, json_t *root, char *why, size_t n)
{
    llm_intake *t = intake;
    kevo__llm_wire_reply_free(&t->wire);
    return kevo__llm_wire_parse(t->api, root, &t->wire, why, n);
}

void kevo__llm_intake_spend(llm_intake *t)
{
    /* Estimated where the stream stopped before saying. */
    if (t->stream.meta.events > 0) {
        uint64_t in, out;
        kevo__llm_stream_spent(&t->stream, t->request_bytes, &in, &out);
        t->spent_in += in;
        t->spent_out += out;
    }
    kevo__llm_stream_reset(&t->stream);
}

static void intake_begin(void *ud)
{
    kevo__llm_intake_spend(ud);
}

static llm_outcome intake_event(void *ud, const char *type, const char *data,
                                size_t len, char *why, size_t n)
{
    llm_intake *t = ud;
    return kevo__llm_stream_event(&t->stream, type, data, len, why, n);
}

static llm_outcome intake_end(void *ud, char *why, size_t n)
{
    llm_intake *t = ud;
    kevo__llm_wire_reply_free(&t->wire);
    return kevo__llm_stream_finish(&t->stream, &t->wire, why, n);
}

const llm_http_sink kevo__llm_intake_sink = {intake_begin, intake_event,
                                             intake_end};

/* OpenAI's whole reply: one choice. */
static json_t *whole_openai(const llm_wire_reply *r)
{
    json_t *msg = json_pack("{s:s, s:o}", "role", "assistant", "content",
                            r->has_text ? json_stringn(r->text, r->text_len)
                                        : json_null());
    if (msg && r->reasoning_len)
        json_object_set_new(msg, "reasoning_content",
                            json_stringn(r->reasoning, r->reasoning_len));
    if (msg && r->refusal)
        json_object_set_new(msg, "refusal", json_string(r->refusal));
    json_t *root =
        json_pack("{s:s, s:[{s:i, s:o, s:o}]}", "object", "chat.completion",
                  "choices", "index", 0, "message", msg, "finish_reason",
                  r->finish[0] ? json_string(r->finish) : json_null());
    if (root && r->has_usage)
        json_object_set_new(
            root, "usage",
            json_pack("{s:I, s:I, s:I, s:{s:I}}", "prompt_tokens",
                      (json_int_t)r->input_tokens, "completion_tokens",
                      (json_int_t)r->output_tokens, "total_tokens",
                      (json_int_t)(r->input_tokens + r->output_tokens),
                      "completion_tokens_details", "reasoning_tokens",
                      (json_int_t)r->reasoning_tokens));
    return root;
}

/* Anthropic's whole message: thinking, redacted thinking, then text. */
static json_t *whole_anthropic(const llm_wire_reply *r)
{
    json_t *content = json_array();
    if (content && r->reasoning_len)
        json_array_append_new(content,
                              json_pack("{s:s, s:s%, s:s}", "type", "thinking",
                                        "thinking", r->reasoning,
                                        r->reasoning_len, "signature", ""));
    for (size_t i = 0; content && i < r->redacted_thinking; i++)
        json_array_append_new(
            content,
            json_pack("{s:s, s:s}", "type", "redacted_thinking", "data", ""));
    if (content && r->has_text)
        json_array_append_new(content, json_pack("{s:s, s:s%}", "type", "text",
                                                 "text", r->text, r->text_len));
    json_t *root =
        json_pack("{s:s, s:s, s:o, s:o}", "type", "message", "role",
                  "assistant", "content", content, "stop_reason",
                  r->finish[0] ? json_string(r->finish) : json_null());
    if (root && r->refusal)
        json_object_set_new(root, "stop_details",
                            json_pack("{s:s, s:s}", "type", "refusal",
                                      "explanation", r->refusal));
    if (root && r->has_usage) {
        json_t *u =
            json_pack("{s:I, s:I}", "input_tokens", (json_int_t)r->input_tokens,
                      "output_tokens", (json_int_t)r->output_tokens);
        if (u && r->reasoning_tokens)
            json_object_set_new(u, "output_tokens_details",
                                json_pack("{s:I}", "thinking_tokens",
                                          (json_int_t)r->reasoning_tokens));
        json_object_set_new(root, "usage", u);
    }
    return root;
}

json_t *kevo__llm_stream_whole(llm_api api, const char *model,
                               const llm_wire_reply *r)
{
    json_t *root = api == LLM_API_OPENAI ? whole_openai(r) : whole_anthropic(r);
    if (root && model)
        json_object_set_new(root, "model", json_string(model));
    return root;
}

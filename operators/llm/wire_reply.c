/*
 * wire_reply.c: whole replies of the OpenAI chat-completions and Anthropic
 * messages APIs, the failure kinds of replies that give nothing to parse,
 * and the error bodies of both APIs and of the servers that speak them.
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wire_reply.h"

/* How much of a refusal text a failure reason quotes. */
#define REFUSAL_QUOTE_MAX 500

void kevo__llm_wire_reply_free(llm_wire_reply *r)
{
    free(r->text);
    free(r->reasoning);
    free(r->refusal);
    free(r->fail_reason);
    memset(r, 0, sizeof(*r));
}

static uint64_t token_count(json_t *usage, const char *key, bool *found)
{
    json_t *v = json_object_get(usage, key);
    if (!json_is_integer(v))
        return 0;
    *found = true;
    return json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

void kevo__llm_wire_usage(llm_api api, json_t *usage, llm_wire_reply *r)
{
    if (!json_is_object(usage))
        return;
    r->has_usage = true;
    bool in = false, out = false, reasoning = false;
    if (api == LLM_API_OPENAI) {
        uint64_t i = token_count(usage, "prompt_tokens", &in);
        uint64_t o = token_count(usage, "completion_tokens", &out);
        uint64_t t =
            token_count(json_object_get(usage, "completion_tokens_details"),
                        "reasoning_tokens", &reasoning);
        if (in)
            r->input_tokens = i;
        if (out)
            r->output_tokens = o;
        if (reasoning)
            r->reasoning_tokens = t;
        return;
    }
    /* Anthropic: the input is input_tokens plus what went to and came from
     * the prompt cache; a message_delta's counts are running totals. */
    bool c1 = false, c2 = false;
    uint64_t i = token_count(usage, "input_tokens", &in);
    uint64_t cc = token_count(usage, "cache_creation_input_tokens", &c1);
    uint64_t cr = token_count(usage, "cache_read_input_tokens", &c2);
    if (in || c1 || c2)
        r->input_tokens = i + cc + cr;
    uint64_t o = token_count(usage, "output_tokens", &out);
    if (out)
        r->output_tokens = o;
    uint64_t t = token_count(json_object_get(usage, "output_tokens_details"),
                             "thinking_tokens", &reasoning);
    if (reasoning)
        r->reasoning_tokens = t;
}

/* Appends s to b, after sep when b is not empty. */
static void join(llm_buf *b, const char *sep, const char *s, size_t n)
{
    if (b->len)
        kevo__llm_buf_puts(b, sep);
    kevo__llm_buf_append(b, s, n);
}

/* Hands a buffer over as a string that is never NULL ("" when empty); NULL
 * only when out of memory. */
static char *take(llm_buf *b, size_t *len)
{
    *len = b->len;
    if (b->failed) {
        kevo__llm_buf_free(b);
        return NULL;
    }
    return kevo__llm_buf_take(b);
}

static void set_finish(llm_wire_reply *r, json_t *v)
{
    if (json_is_string(v))
        snprintf(r->finish, sizeof(r->finish), "%s", json_string_value(v));
}

static bool parse_openai(json_t *root, llm_wire_reply *out, char *why,
                         size_t whylen)
{
    json_t *choices = json_object_get(root, "choices");
    if (!json_is_array(choices) || json_array_size(choices) == 0) {
        kevo__llm_errf(why, whylen, "the reply has no \"choices\"");
        return false;
    }
    json_t *choice = json_array_get(choices, 0);
    json_t *msg = json_object_get(choice, "message");
    if (!json_is_object(msg)) {
        kevo__llm_errf(why, whylen,
                       "the reply has no choices[0].message object");
        return false;
    }
    json_t *content = json_object_get(msg, "content");
    if (content && !json_is_string(content) && !json_is_null(content)) {
        kevo__llm_errf(why, whylen,
                       "choices[0].message.content is neither a string nor "
                       "null");
        return false;
    }
    llm_buf text = {0}, reasoning = {0};
    out->has_text = json_is_string(content);
    if (out->has_text)
        kevo__llm_buf_append(&text, json_string_value(content),
                             json_string_length(content));
    /* DeepSeek and older vLLM say reasoning_content; vLLM now, and
     * OpenRouter, say reasoning. */
    json_t *r1 = json_object_get(msg, "reasoning_content");
    json_t *r2 = json_object_get(msg, "reasoning");
    if (json_is_string(r1))
        kevo__llm_buf_append(&reasoning, json_string_value(r1),
                             json_string_length(r1));
    if (json_is_string(r2) && !(json_is_string(r1) && json_equal(r1, r2)))
        join(&reasoning, "\n", json_string_value(r2), json_string_length(r2));
    json_t *refusal = json_object_get(msg, "refusal");
    if (json_is_string(refusal) && json_string_length(refusal) > 0 &&
        !(out->refusal = kevo__llm_strdup(json_string_value(refusal))))
        text.failed = true;
    out->text = take(&text, &out->text_len);
    out->reasoning = take(&reasoning, &out->reasoning_len);
    kevo__llm_wire_usage(LLM_API_OPENAI, json_object_get(root, "usage"), out);
    set_finish(out, json_object_get(choice, "finish_reason"));
    if (!out->text || !out->reasoning) {
        kevo__llm_errf(why, whylen, "out of memory");
        return false;
    }
    return true;
}

static bool parse_anthropic(json_t *root, llm_wire_reply *out, char *why,
                            size_t whylen)
{
    json_t *type = json_object_get(root, "type");
    if (json_is_string(type) && strcmp(json_string_value(type), "error") == 0) {
        char *t = kevo__llm_wire_error_json(root);
        kevo__llm_errf(why, whylen, "the reply is an error object: %s",
                       t ? t : "");
        free(t);
        return false;
    }
    json_t *content = json_object_get(root, "content");
    if (!json_is_array(content)) {
        kevo__llm_errf(why, whylen, "the reply has no \"content\" array");
        return false;
    }
    llm_buf text = {0}, reasoning = {0};
    json_t *block;
    size_t i;
    json_array_foreach (content, i, block) {
        const char *bt = json_string_value(json_object_get(block, "type"));
        json_t *t = json_object_get(block, "text");
        json_t *th = json_object_get(block, "thinking");
        if (!bt)
            continue;
        if (strcmp(bt, "text") == 0 && json_is_string(t)) {
            out->has_text = true;
            join(&text, "\n", json_string_value(t), json_string_length(t));
        } else if (strcmp(bt, "thinking") == 0 && json_is_string(th)) {
            join(&reasoning, "\n", json_string_value(th),
                 json_string_length(th));
        } else if (strcmp(bt, "redacted_thinking") == 0) {
            out->redacted_thinking++;
        }
    }
    out->text = take(&text, &out->text_len);
    out->reasoning = take(&reasoning, &out->reasoning_len);
    kevo__llm_wire_usage(LLM_API_ANTHROPIC, json_object_get(root, "usage"),
                         out);
    set_finish(out, json_object_get(root, "stop_reason"));
    json_t *expl =
        json_object_get(json_object_get(root, "stop_details"), "explanation");
    if (json_is_string(expl) &&
        !(out->refusal = kevo__llm_strdup(json_string_value(expl)))) {
        kevo__llm_errf(why, whylen, "out of memory");
        return false;
    }
    if (!out->text || !out->reasoning) {
        kevo__llm_errf(why, whylen, "out of memory");
        return false;
    }
    return true;
}

bool kevo__llm_wire_parse(llm_api api, json_t *root, llm_wire_reply *out,
                          char *why, size_t whylen)
{
    memset(out, 0, sizeof(*out));
    if (!json_is_object(root)) {
        kevo__llm_errf(why, whylen, "the reply is not a JSON object");
        return false;
    }
    bool ok = api == LLM_API_OPENAI ? parse_openai(root, out, why, whylen)
                                    : parse_anthropic(root, out, why, whylen);
    if (ok && !kevo__llm_wire_classify(out)) {
        kevo__llm_errf(why, whylen, "out of memory");
        ok = false;
    }
    if (!ok)
        kevo__llm_wire_reply_free(out);
    return ok;
}

bool kevo__llm_wire_tokens(const llm_wire_reply *r, size_t request_bytes,
                           uint64_t *in, uint64_t *out)
{
    if (r->has_usage) {
        *in = r->input_tokens;
        *out = r->output_tokens;
        return false;
    }
    *in = request_bytes / 4 + 1;
    *out = (r->text_len + r->reasoning_len) / 4 + 1;
    return true;
}

bool kevo__llm_wire_classify(llm_wire_reply *r)
{
    const char *f = r->finish;
    r->cut_off = strcmp(f, "length") == 0 || strcmp(f, "max_tokens") == 0;
    llm_buf b = {0};
    if (strcmp(f, "content_filter") == 0 || strcmp(f, "refusal") == 0 ||
        r->refusal) {
        r->fail_kind = LLM_FAIL_REFUSED;
        if (strcmp(f, "content_filter") == 0)
            kevo__llm_buf_puts(&b, "a content filter stopped the reply "
                                   "(\"content_filter\")");
        else if (strcmp(f, "refusal") == 0)
            kevo__llm_buf_puts(&b, "the model refused (\"refusal\")");
        else
            kevo__llm_buf_puts(&b, "the model refused");
        if (r->refusal)
            kevo__llm_buf_printf(&b, ": %.*s%s", REFUSAL_QUOTE_MAX, r->refusal,
                                 strlen(r->refusal) > REFUSAL_QUOTE_MAX ? "..."
                                                                        : "");
        kevo__llm_buf_printf(&b, " after %zu bytes of text", r->text_len);
    } else if (strcmp(f, "model_context_window_exceeded") == 0) {
        r->fail_kind = LLM_FAIL_CONTEXT;
        kevo__llm_buf_printf(&b,
                             "the reply filled the model's context window "
                             "(\"%s\") after %zu bytes of text: the prompt is "
                             "too long for this model",
                             f, r->text_len);
    } else if (!r->has_text || (r->text_len == 0 && r->reasoning_len > 0)) {
        r->fail_kind = LLM_FAIL_NO_ANSWER;
        kevo__llm_buf_puts(&b, r->has_text ? "the reply's answer is empty"
                                           : "the reply holds no answer text");
        if (r->reasoning_len)
            kevo__llm_buf_printf(&b, ", only %zu bytes of reasoning",
                                 r->reasoning_len);
        if (r->redacted_thinking)
            kevo__llm_buf_printf(&b, ", %zu redacted thinking block%s",
                                 r->redacted_thinking,
                                 r->redacted_thinking == 1 ? "" : "s");
        if (r->cut_off)
            kevo__llm_buf_printf(&b,
                                 "; it stopped at max_tokens (\"%s\") before "
                                 "answering: raise max_tokens, or lower the "
                                 "reasoning effort or thinking budget",
                                 f);
        else if (*f)
            kevo__llm_buf_printf(&b, " (it ended with \"%s\")", f);
    } else {
        return true;
    }
    free(r->fail_reason);
    r->fail_reason = b.failed ? NULL : kevo__llm_buf_take(&b);
    kevo__llm_buf_free(&b);
    return r->fail_reason != NULL;
}

/* ---- error bodies ------------------------------------------------------ */

/* Appends text folded to one line: control characters and runs of white
 * space become one space; with html, <...> tags are dropped too. */
static void fold(llm_buf *b, const char *s, size_t n, bool html)
{
    bool space = b->len == 0 || b->data[b->len - 1] == ' ';
    bool in_tag = false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (html && c == '<') {
            in_tag = true;
            continue;
        }
        if (in_tag) {
            if (c == '>') {
                in_tag = false;
                c = ' ';
            } else {
                continue;
            }
        }
        if (c < 0x20 || c == 0x7f || c == ' ') {
            if (!space)
                kevo__llm_buf_append(b, " ", 1);
            space = true;
            continue;
        }
        kevo__llm_buf_append(b, (const char *)&c, 1);
        space = false;
    }
}

/* b bounded to LLM_ERROR_TEXT_MAX bytes (on a UTF-8 boundary), trailing
 * space dropped, as a new string; NULL when empty. */
static char *bounded(llm_buf *b)
{
    if (b->failed || b->len == 0) {
        kevo__llm_buf_free(b);
        return NULL;
    }
    bool cut = b->len > LLM_ERROR_TEXT_MAX;
    if (cut) {
        size_t n = LLM_ERROR_TEXT_MAX;
        while (n > 0 && ((unsigned char)b->data[n] & 0xc0) == 0x80)
            n--;
        b->len = n;
    }
    while (b->len > 0 && b->data[b->len - 1] == ' ')
        b->len--;
    b->data[b->len] = '\0';
    if (cut)
        kevo__llm_buf_puts(b, "...");
    if (b->len == 0 || b->failed) {
        kevo__llm_buf_free(b);
        return NULL;
    }
    return kevo__llm_buf_take(b);
}

/* The "type: message" of an error object (vLLM's older body is one at the
 * top level). */
static void error_object(llm_buf *b, json_t *e)
{
    json_t *type = json_object_get(e, "type");
    json_t *code = json_object_get(e, "code");
    json_t *msg = json_object_get(e, "message");
    const char *label = json_string_value(type);
    if ((!label || strcmp(label, "error") == 0) && json_is_string(code))
        label = json_string_value(code);
    if (label && strcmp(label, "error") != 0) {
        fold(b, label, strlen(label), false);
        kevo__llm_buf_puts(b, ": ");
    }
    if (json_is_string(msg)) {
        fold(b, json_string_value(msg), json_string_length(msg), false);
    } else {
        char *d = json_dumps(e, JSON_COMPACT);
        if (d)
            fold(b, d, strlen(d), false);
        free(d);
    }
}

char *kevo__llm_wire_error_text(const char *body, size_t len)
{
    json_t *root = json_loadb(body, len, JSON_DECODE_ANY, NULL);
    if (root) {
        char *t = kevo__llm_wire_error_json(root);
        json_decref(root);
        return t;
    }
    /* Plain text, or a proxy's HTML page. */
    llm_buf b = {0};
    size_t i = 0;
    while (i < len && isspace((unsigned char)body[i]))
        i++;
    bool html = i < len && body[i] == '<';
    fold(&b, body + i, len - i, html);
    return bounded(&b);
}

char *kevo__llm_wire_error_json(json_t *root)
{
    llm_buf b = {0};
    if (json_is_object(root)) {
        json_t *e = json_object_get(root, "error");
        json_t *detail = json_object_get(root, "detail");
        if (json_is_object(e)) {
            error_object(&b, e);
        } else if (json_is_string(e)) {
            fold(&b, json_string_value(e), json_string_length(e), false);
        } else if (json_is_string(json_object_get(root, "message"))) {
            error_object(&b, root);
        } else if (json_is_string(detail)) {
            fold(&b, json_string_value(detail), json_string_length(detail),
                 false);
        } else if (detail) {
            char *d = json_dumps(detail, JSON_COMPACT | JSON_ENCODE_ANY);
            if (d)
                fold(&b, d, strlen(d), false);
            free(d);
        }
    } else if (json_is_string(root)) {
        fold(&b, json_string_value(root), json_string_length(root), false);
    }
    return bounded(&b);
}

/* Whether s holds needle, ignoring case. */
static bool has(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; s && *s; s++)
        if (strncasecmp(s, needle, n) == 0)
            return true;
    return false;
}

const char *kevo__llm_wire_error_kind(const char *body, size_t len)
{
    json_t *root = json_loadb(body, len, 0, NULL);
    json_t *e = json_object_get(root, "error");
    if (!json_is_object(e))
        e = root;
    const char *code = json_string_value(json_object_get(e, "code"));
    const char *type = json_string_value(json_object_get(e, "type"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    bool context = (code && strcmp(code, "context_length_exceeded") == 0) ||
                   (type && strcmp(type, "exceed_context_size_error") == 0) ||
                   has(msg, "maximum context length") ||
                   has(msg, "context length exceeded") ||
                   has(msg, "exceeds the available context size") ||
                   has(msg, "prompt is too long") ||
                   has(msg, "exceed context limit");
    json_decref(root);
    return context ? LLM_FAIL_CONTEXT : NULL;
}

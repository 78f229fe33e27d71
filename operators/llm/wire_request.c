/*
 * wire_request.c: requests of the OpenAI chat-completions and Anthropic
 * messages APIs: the URL, the headers and the JSON body, from a model's
 * settings.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wire_request.h"

/* Whether s[0..n) ends with suffix. */
static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

char *kevo__llm_wire_url(const llm_model *m)
{
    const char *base = m->base_url;
    const char *query = strchr(base, '?');
    size_t n = query ? (size_t)(query - base) : strlen(base);
    while (n > 0 && base[n - 1] == '/')
        n--;
    const char *scheme = strstr(base, "://");
    const char *host = scheme ? scheme + 3 : base;
    bool no_path = !memchr(host, '/', (size_t)(base + n - host));
    const char *tail;
    if (m->api == LLM_API_OPENAI) {
        if (ends_with(base, n, "/chat/completions"))
            tail = "";
        else
            tail = no_path ? "/v1/chat/completions" : "/chat/completions";
    } else {
        if (ends_with(base, n, "/messages"))
            tail = "";
        else
            tail = ends_with(base, n, "/v1") ? "/messages" : "/v1/messages";
    }
    llm_buf b = {0};
    kevo__llm_buf_append(&b, base, n);
    kevo__llm_buf_puts(&b, tail);
    if (query)
        kevo__llm_buf_puts(&b, query);
    if (b.failed) {
        kevo__llm_buf_free(&b);
        return NULL;
    }
    return kevo__llm_buf_take(&b);
}

void kevo__llm_wire_request_free(llm_wire_request *r)
{
    free(r->url);
    for (size_t i = 0; i < r->nheaders; i++) {
        kevo__llm_wipe_free(r->headers[i]);
        free(r->log_headers[i]);
    }
    free(r->headers);
    free(r->log_headers);
    free(r->body);
    memset(r, 0, sizeof(*r));
}

/* A header to send: name and value borrowed. */
typedef struct header {
    const char *name;
    const char *value;
    bool secret;
} header;

/* Sets a header, replacing one of the same name. */
static void set_header(header *hs, size_t *n, const char *name,
                       const char *value, bool secret)
{
    size_t i;
    for (i = 0; i < *n; i++)
        if (strcasecmp(hs[i].name, name) == 0)
            break;
    if (i == *n)
        (*n)++;
    hs[i] = (header){name, value, secret};
}

static bool make_headers(const llm_model *m, llm_wire_request *out)
{
    size_t max = 3 + m->nheaders, n = 0;
    header *hs = calloc(max, sizeof(*hs));
    char *bearer = NULL;
    bool ok = false;
    out->headers = calloc(max, sizeof(char *));
    out->log_headers = calloc(max, sizeof(char *));
    if (!hs || !out->headers || !out->log_headers)
        goto done;
    set_header(hs, &n, "Content-Type", "application/json", false);
    if (m->api == LLM_API_OPENAI && m->key) {
        bearer = malloc(strlen(m->key) + sizeof("Bearer "));
        if (!bearer)
            goto done;
        sprintf(bearer, "Bearer %s", m->key);
        set_header(hs, &n, "Authorization", bearer, true);
    } else if (m->api == LLM_API_ANTHROPIC) {
        if (m->key)
            set_header(hs, &n, "x-api-key", m->key, true);
        set_header(hs, &n, "anthropic-version", LLM_ANTHROPIC_VERSION, false);
    }
    for (size_t i = 0; i < m->nheaders; i++)
        set_header(hs, &n, m->headers[i].name, m->headers[i].value,
                   m->headers[i].secret);
    for (size_t i = 0; i < n; i++) {
        size_t len =
            strlen(hs[i].name) + strlen(hs[i].value) + sizeof(LLM_REDACTED) + 3;
        char *h = malloc(len), *l = malloc(len);
        if (!h || !l) {
            free(h);
            free(l);
            goto done;
        }
        snprintf(h, len, "%s: %s", hs[i].name, hs[i].value);
        snprintf(l, len, "%s: %s", hs[i].name,
                 hs[i].secret ? LLM_REDACTED : hs[i].value);
        out->headers[out->nheaders] = h;
        out->log_headers[out->nheaders] = l;
        out->nheaders++;
    }
    ok = true;
done:
    kevo__llm_wipe_free(bearer);
    free(hs);
    return ok;
}

/* Merges src into dst key by key: objects into objects recursively,
 * anything else replacing what dst holds. */
static bool merge(json_t *dst, json_t *src)
{
    const char *key;
    json_t *v;
    json_object_foreach (src, key, v) {
        json_t *d = json_object_get(dst, key);
        if (json_is_object(d) && json_is_object(v)) {
            if (!merge(d, v))
                return false;
        } else if (json_object_set_new(dst, key, json_deep_copy(v)) != 0) {
            return false;
        }
    }
    return true;
}

static json_t *make_body(const llm_model *m, const char *system,
                         const llm_turn *turns, size_t nturns)
{
    bool openai = m->api == LLM_API_OPENAI;
    json_t *msgs = json_array();
    json_t *body = json_object();
    bool ok = msgs && body;
    if (ok && openai)
        ok = json_array_append_new(msgs,
                                   json_pack("{s:s, s:s}", "role", "system",
                                             "content", system)) == 0;
    for (size_t i = 0; ok && i < nturns; i++)
        ok = json_array_append_new(msgs, json_pack("{s:s, s:s}", "role",
                                                   turns[i].role, "content",
                                                   turns[i].text)) == 0;
    ok = ok && json_object_set_new(body, "model", json_string(m->model)) == 0;
    if (ok && !openai)
        ok = json_object_set_new(body, "system", json_string(system)) == 0;
    ok = ok && json_object_set(body, "messages", msgs) == 0;
    ok = ok && json_object_set_new(body, m->token_param,
                                   json_integer(m->max_tokens)) == 0;
    if (ok && m->has_temperature)
        ok = json_object_set_new(body, "temperature",
                                 json_real(m->temperature)) == 0;
    if (ok && m->has_top_p)
        ok = json_object_set_new(body, "top_p", json_real(m->top_p)) == 0;
    if (ok && m->reasoning_effort)
        ok = json_object_set_new(body,
                                 openai ? "reasoning_effort" : "output_config",
                                 openai ? json_string(m->reasoning_effort)
                                        : json_pack("{s:s}", "effort",
                                                    m->reasoning_effort)) == 0;
    if (ok && m->thinking_budget)
        ok = json_object_set_new(
                 body, "thinking",
                 json_pack("{s:s, s:I}", "type", "enabled", "budget_tokens",
                           (json_int_t)m->thinking_budget)) == 0;
    if (ok && m->stream)
        ok = json_object_set_new(body, "stream", json_true()) == 0;
    if (ok && m->stream && openai)
        ok = json_object_set_new(body, "stream_options",
                                 json_pack("{s:b}", "include_usage", 1)) == 0;
    if (ok && m->extra_body)
        ok = merge(body, m->extra_body);
    json_decref(msgs);
    if (!ok) {
        json_decref(body);
        return NULL;
    }
    return body;
}

bool kevo__llm_wire_build_turns(const llm_model *m, const char *system,
                                const llm_turn *turns, size_t nturns,
                                llm_wire_request *out)
{
    memset(out, 0, sizeof(*out));
    json_t *body = make_body(m, system, turns, nturns);
    bool ok = body && (out->url = kevo__llm_wire_url(m)) != NULL &&
              make_headers(m, out) &&
              (out->body = json_dumps(body, JSON_COMPACT)) != NULL;
    /* extra_body may have turned streaming on or off. */
    out->stream = ok && json_is_true(json_object_get(body, "stream"));
    json_decref(body);
    if (!ok) {
        kevo__llm_wire_request_free(out);
        return false;
    }
    out->body_len = strlen(out->body);
    return true;
}

bool kevo__llm_wire_build(const llm_model *m, const char *system,
                          const char *user, llm_wire_request *out)
{
    llm_turn turn = {"user", user};
    return kevo__llm_wire_build_turns(m, system, &turn, 1, out);
}

bool kevo__llm_wire_forward(const llm_model *m, const char *body,
                            size_t body_len, bool stream, llm_wire_request *out)
{
    memset(out, 0, sizeof(*out));
    out->stream = stream;
    out->body_len = body_len;
    if (!(out->url = kevo__llm_wire_url(m)) || !make_headers(m, out) ||
        !(out->body = kevo__llm_strndup(body, body_len))) {
        kevo__llm_wire_request_free(out);
        return false;
    }
    return true;
}

llm_http_request kevo__llm_wire_http(const llm_model *m,
                                     const llm_wire_request *w)
{
    llm_http_request r = {
        .url = w->url,
        .headers = (const char *const *)w->headers,
        .nheaders = w->nheaders,
        .body = w->body,
        .body_len = w->body_len,
        .timeout_s = w->stream ? 0 : m->timeout_s,
        .idle_timeout_s = w->stream ? m->idle_timeout_s : 0,
    };
    return r;
}

/*
 * test-llm-stream.c: the llm operator's requests and replies against the
 * loopback server (tests/loopback-server.c), which checks each request as
 * its vendor would and answers in the vendor's format. First through the
 * request engine, as the operator drives it: each example configuration
 * of kevo-llm(7) accepted (and the mistakes the vendors refuse, with
 * their message in full); streamed replies of both APIs with their usage,
 * finish reasons and reasoning kept apart; the idle limit against a
 * stalled stream and a slow but steady one; TCP keepalive on every
 * connection; streams cut, unfinished, broken by an error event or by
 * malformed data, over the cap, or answered whole. Then through the
 * plugin: the failure kinds refused, context and no_answer reach
 * api->fail, token usage is counted for replies without an answer and
 * for streams that failed, and no secret reaches the run directory. A
 * streamed reply written whole, as kevo relay writes it, reads back the
 * same.
 */
#include "config.h"

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kevo.h>
#include <kevo/operator.h>

#include "http.h"
#include "loopback-server.h"
#include "stream.h"
#include "tap.h"
#include "wire.h"
#include "wire_reply.h"
#include "wire_request.h"

#define DEFAULT "Nothing to change here."
#define TOKEN "gw-token-kevo-stream-77c1"

static loopback *srv;
static int serial;

static const char *fake_env(const char *name)
{
    return strcmp(name, "KEVO_STREAM_TOKEN") == 0 ? TOKEN : NULL;
}

/* ---- one request through the engine ------------------------------------ */

typedef struct call {
    llm_api api;
    llm_intake in; /* the engine's reply: whole, or assembled */
    bool done;
    llm_outcome outcome;
    int attempts, streamed;
    long status;
    double elapsed;
    char reason[4096];
    char *body; /* the last attempt's body */
    size_t body_len;
} call;

static void c_attempt(void *ud, const llm_http_attempt *a)
{
    call *c = ud;
    c->streamed += a->streamed;
}

static void c_done(void *ud, const llm_http_result *r)
{
    call *c = ud;
    c->done = true;
    c->outcome = r->outcome;
    c->attempts = r->attempts;
    c->status = r->status;
    c->elapsed = r->elapsed_s;
    snprintf(c->reason, sizeof(c->reason), "%s", r->reason);
    c->body = kevo__llm_strndup(r->body, r->body_len);
    c->body_len = r->body_len;
}

static void call_free(call *c)
{
    kevo__llm_intake_free(&c->in);
    free(c->body);
    memset(c, 0, sizeof(*c));
}

/* Asks model m for behaviour b (a marker's list) through engine h, as the
 * operator does, and waits for the end. */
static void ask(llm_http *h, const llm_model *m, const char *b, call *c)
{
    memset(c, 0, sizeof(*c));
    c->api = m->api;
    kevo__llm_intake_init(&c->in, m->api, 1 << 20, 0);
    char user[256];
    snprintf(user, sizeof(user), "Improve it. [[kevo-loopback:s%d:%s]]",
             serial++, b);
    llm_wire_request w;
    if (!kevo__llm_wire_build(m, "You write CUDA.", user, &w))
        bail_out("out of memory");
    llm_http_request req = kevo__llm_wire_http(m, &w);
    req.sink = w.stream ? &kevo__llm_intake_sink : NULL;
    req.validate = kevo__llm_intake_validate;
    req.reply_ud = &c->in;
    req.attempt = c_attempt;
    req.done = c_done;
    req.ud = c;
    char err[256];
    if (!kevo__llm_http_submit(h, &req, err, sizeof(err)))
        bail_out("submit: %s", err);
    kevo__llm_wire_request_free(&w);
    double t0 = kevo__llm_now();
    while (!c->done && kevo__llm_now() - t0 < 60)
        kevo__llm_http_poll(h, 1000);
    if (!c->done)
        bail_out("request %s never ended", b);
}

/* The last request the server got. */
static const loopback_request *last(void)
{
    return loopback_get(srv, loopback_count(srv) - 1);
}

static llm_http *engine(int retries)
{
    llm_http_config hc = {
        .concurrency = 4,
        .max_retries = retries,
        .backoff_base_s = 0.01,
        .backoff_max_s = 0.02,
        .retry_after_max_s = 5,
        .max_reply_bytes = 1 << 20,
    };
    char err[256];
    llm_http *h = kevo__llm_http_new(&hc, err, sizeof(err));
    if (!h)
        bail_out("%s", err);
    return h;
}

/* A configuration of models, each {MEMBERS} with base_url added. */
static void config(llm_config *cfg, const char *const *members, size_t n)
{
    llm_buf b = {0};
    kevo__llm_buf_puts(&b, "{\"models\": [");
    for (size_t i = 0; i < n; i++)
        kevo__llm_buf_printf(&b, "%s{\"base_url\": \"%s%s\", %s}",
                             i ? ", " : "", loopback_url(srv),
                             strstr(members[i], "anthropic") ? "" : "/v1",
                             members[i]);
    kevo__llm_buf_puts(&b, "]}");
    char err[1024];
    if (!kevo__llm_config_parse(b.data, cfg, fake_env, err, sizeof(err)))
        bail_out("config: %s", err);
    kevo__llm_buf_free(&b);
}

/* ---- the documented examples, as the vendors check them ----------------- */

static void test_examples(void)
{
    const char *members[] = {
        /* 0 */ "\"api\": \"openai\", \"model\": \"o3\", "
                "\"reasoning_effort\": \"high\", \"max_tokens\": 32000",
        /* 1 */
        "\"api\": \"openai\", \"model\": \"o3\", \"token_param\": "
        "\"max_tokens\"",
        /* 2 */
        "\"api\": \"openai\", \"model\": \"gpt-5\", \"temperature\": "
        "0.7",
        /* 3 */
        "\"api\": \"anthropic\", \"model\": \"claude-opus-4-1\", "
        "\"max_tokens\": 16000, \"thinking_budget\": 10000, "
        "\"reasoning_effort\": \"high\", \"headers\": "
        "{\"anthropic-beta\": \"interleaved-thinking-2025-05-14\"}",
        /* 4 */
        "\"api\": \"openai\", \"model\": \"Qwen/Qwen3-32B\", "
        "\"temperature\": 0.6, \"top_p\": 0.95, \"headers\": "
        "{\"X-Gateway-Token\": {\"env\": \"KEVO_STREAM_TOKEN\"}}, "
        "\"extra_body\": {\"chat_template_kwargs\": "
        "{\"enable_thinking\": true}}",
        /* 5 */
        "\"api\": \"openai\", \"model\": \"local\", \"stream\": "
        "false, \"timeout_s\": 30, \"extra_body\": {\"cache_prompt\": "
        "true}",
        /* 6 */
        "\"api\": \"openai\", \"model\": \"qwen2.5-coder-32k\", "
        "\"max_tokens\": 8192",
        /* 7 */
        "\"api\": \"anthropic\", \"model\": \"claude-x\", "
        "\"extra_body\": {\"stream_options\": {\"include_usage\": "
        "true}}",
        /* 8 */
        "\"api\": \"anthropic\", \"model\": \"claude-x\", "
        "\"max_tokens\": 4096, \"thinking_budget\": 2048, "
        "\"extra_body\": {\"temperature\": 0.5}",
    };
    enum { N = sizeof(members) / sizeof(members[0]) };
    llm_config cfg;
    config(&cfg, members, N);
    llm_http *h = engine(2);
    call c;

    ask(h, &cfg.models[0], "ok", &c);
    is_int(c.outcome, LLM_OK, "o3 with the settings kevo-llm(7) gives: ok");
    is_str(c.in.wire.text, DEFAULT, "o3: the text");
    ok(last()->stream && strstr(last()->body, "\"max_completion_tokens\"") &&
           !strstr(last()->body, "temperature"),
       "o3: streamed, max_completion_tokens, no temperature");
    call_free(&c);

    ask(h, &cfg.models[1], "ok", &c);
    is_int(c.outcome, LLM_HTTP_ERROR, "o3 given max_tokens: refused");
    is_int(c.status, 400, "o3 given max_tokens: 400");
    is_int(c.attempts, 1, "a 400 is not retried");
    char *e = kevo__llm_wire_error_text(c.body, c.body_len);
    is_str(e,
           "invalid_request_error: Unsupported parameter: 'max_tokens' is not "
           "supported with this model. Use 'max_completion_tokens' instead.",
           "the vendor's message, whole");
    free(e);
    call_free(&c);

    ask(h, &cfg.models[2], "ok", &c);
    is_int(c.status, 400, "gpt-5 given a temperature of 0.7: 400");
    like_str(c.body, "Only the default (1) value is supported",
             "gpt-5 with a temperature: the vendor's reason");
    call_free(&c);

    ask(h, &cfg.models[3], "think", &c);
    is_int(c.outcome, LLM_OK, "Anthropic extended thinking: ok");
    is_str(c.in.wire.text, DEFAULT, "thinking: the text without the thinking");
    like_str(c.in.wire.reasoning, "draft", "thinking: the thinking kept apart");
    char *beta = loopback_header(last(), "anthropic-beta");
    is_str(beta, "interleaved-thinking-2025-05-14", "the beta header sent");
    free(beta);
    ok(strstr(last()->body, "\"budget_tokens\":10000") &&
           strstr(last()->body, "\"effort\":\"high\""),
       "thinking and effort in the body the server got");
    call_free(&c);

    ask(h, &cfg.models[4], "reasoning", &c);
    is_int(c.outcome, LLM_OK, "vLLM: ok");
    like_str(c.in.wire.reasoning, "draft", "vLLM: the reasoning field apart");
    ok(strstr(last()->body, "\"chat_template_kwargs\":{\"enable_thinking\":"
                            "true}") != NULL,
       "vLLM: chat_template_kwargs sent");
    char *tok = loopback_header(last(), "X-Gateway-Token");
    is_str(tok, TOKEN, "vLLM: the gateway token sent");
    free(tok);
    call_free(&c);

    ask(h, &cfg.models[5], "ok", &c);
    is_int(c.outcome, LLM_OK, "llama.cpp, not streamed: ok");
    ok(!last()->stream && !c.in.wire.streamed, "llama.cpp: a whole reply");
    call_free(&c);

    ask(h, &cfg.models[6], "ok", &c);
    is_int(c.outcome, LLM_OK, "Ollama: ok");
    ok(strstr(last()->body, "\"max_tokens\":8192") != NULL,
       "Ollama: max_tokens sent");
    call_free(&c);

    ask(h, &cfg.models[7], "ok", &c);
    is_int(c.status, 400, "an OpenAI field sent to Anthropic: 400");
    e = kevo__llm_wire_error_text(c.body, c.body_len);
    is_str(e,
           "invalid_request_error: stream_options: Extra inputs are not "
           "permitted",
           "Anthropic's message, whole");
    free(e);
    call_free(&c);

    ask(h, &cfg.models[8], "ok", &c);
    is_int(c.status, 400, "a temperature with thinking: 400");
    like_str(c.body, "`temperature` may only be set to 1",
             "thinking with a temperature: Anthropic's reason");
    call_free(&c);

    kevo__llm_http_free(h);
    kevo__llm_config_free(&cfg);
}

/* ---- streamed replies --------------------------------------------------- */

/* A streamed reply, written whole as kevo relay writes it
 * (kevo__llm_stream_whole) and read back as the search reads a reply
 * file, gives the same reply. */
static void round_trip(const call *c, const char *what)
{
    const llm_wire_reply *w = &c->in.wire;
    if (c->outcome != LLM_OK || !w->streamed)
        return;
    json_t *whole = kevo__llm_stream_whole(c->api, "m", w);
    llm_wire_reply r;
    char why[256] = "";
    bool parsed =
        whole && kevo__llm_wire_parse(c->api, whole, &r, why, sizeof(why));
    ok(parsed && r.text_len == w->text_len &&
           memcmp(r.text, w->text, w->text_len) == 0 &&
           r.has_text == w->has_text && r.reasoning_len == w->reasoning_len &&
           memcmp(r.reasoning, w->reasoning, w->reasoning_len) == 0 &&
           !r.refusal == !w->refusal &&
           (!r.refusal || strcmp(r.refusal, w->refusal) == 0) &&
           strcmp(r.finish, w->finish) == 0 && r.cut_off == w->cut_off &&
           r.has_usage == w->has_usage && r.input_tokens == w->input_tokens &&
           r.output_tokens == w->output_tokens &&
           r.reasoning_tokens == w->reasoning_tokens &&
           r.redacted_thinking == w->redacted_thinking &&
           !r.fail_kind == !w->fail_kind &&
           (!r.fail_kind || strcmp(r.fail_kind, w->fail_kind) == 0),
       "%s (%s): written whole and read back, the same reply%s%s", what,
       w->finish, parsed ? "" : ": ", why);
    if (parsed)
        kevo__llm_wire_reply_free(&r);
    json_decref(whole);
}

static void test_streams(void)
{
    const char *members[] = {
        "\"api\": \"openai\", \"model\": \"gpt-4o\"",
        "\"api\": \"anthropic\", \"model\": \"claude-x\"",
        "\"api\": \"openai\", \"model\": \"gpt-4o\", \"stream\": false",
        "\"api\": \"anthropic\", \"model\": \"claude-x\", \"stream\": false",
    };
    llm_config cfg;
    config(&cfg, members, 4);
    llm_http *h = engine(2);
    call c;
    for (size_t i = 0; i < 4; i++) {
        const llm_model *m = &cfg.models[i];
        char what[64];
        snprintf(what, sizeof(what), "%s %s", kevo__llm_api_name(m->api),
                 m->stream ? "streamed" : "whole");
        const char *stop = m->api == LLM_API_OPENAI ? "stop" : "end_turn";
        const char *cut = m->api == LLM_API_OPENAI ? "length" : "max_tokens";

        ask(h, m, "ok", &c);
        is_int(c.outcome, LLM_OK, "%s ok", what);
        is_str(c.in.wire.text, DEFAULT, "%s: the text", what);
        is_int(c.in.wire.streamed, m->stream, "%s: streamed or not", what);
        is_int(c.streamed, m->stream, "%s: the engine saw a stream", what);
        ok(!m->stream || c.in.wire.events > 5, "%s: events (%zu)", what,
           c.in.wire.events);
        is_str(c.in.wire.finish, stop, "%s: the finish reason", what);
        ok(c.in.wire.has_usage, "%s: usage reported", what);
        is_int(c.in.wire.input_tokens, last()->input_tokens,
               "%s: the input tokens the server counted", what);
        is_int(c.in.wire.output_tokens, last()->output_tokens,
               "%s: the output tokens the server counted", what);
        round_trip(&c, what);
        call_free(&c);

        for (int k = 0; k < 3; k++) {
            const char *b = k == 0   ? "think"
                            : k == 1 ? "reasoning"
                                     : "redacted";
            ask(h, m, b, &c);
            is_str(c.in.wire.text, DEFAULT, "%s %s: the answer alone", what, b);
            like_str(c.in.wire.reasoning, "```cuda",
                     "%s %s: the reasoning (and its draft) apart", what, b);
            ok(!c.in.wire.fail_kind, "%s %s: no failure", what, b);
            is_int(c.in.wire.output_tokens, last()->output_tokens,
                   "%s %s: output tokens with the reasoning", what, b);
            if (k == 2)
                is_int(c.in.wire.redacted_thinking,
                       m->api == LLM_API_ANTHROPIC ? 1 : 0,
                       "%s redacted: counted", what);
            round_trip(&c, what);
            call_free(&c);
        }

        ask(h, m, "nullcontent", &c);
        is_int(c.outcome, LLM_OK, "%s nullcontent: a reply", what);
        is_str(c.in.wire.fail_kind, LLM_FAIL_NO_ANSWER, "%s nullcontent: kind",
               what);
        like_str(c.in.wire.fail_reason, "stopped at max_tokens",
                 "%s nullcontent: why", what);
        ok(c.in.wire.output_tokens > 0 &&
               c.in.wire.output_tokens == (uint64_t)last()->output_tokens,
           "%s nullcontent: its usage kept (%llu)", what,
           (unsigned long long)c.in.wire.output_tokens);
        round_trip(&c, what);
        call_free(&c);

        ask(h, m, "length", &c);
        ok(c.in.wire.cut_off && !c.in.wire.fail_kind && c.in.wire.text_len > 0,
           "%s length: cut off, text kept for the parser", what);
        is_str(c.in.wire.finish, cut, "%s length: the finish reason", what);
        round_trip(&c, what);
        call_free(&c);

        ask(h, m, "refusal", &c);
        is_str(c.in.wire.fail_kind, LLM_FAIL_REFUSED, "%s refusal: refused",
               what);
        like_str(c.in.wire.fail_reason, "can't help", "%s refusal: its text",
                 what);
        round_trip(&c, what);
        call_free(&c);

        ask(h, m, "content_filter", &c);
        is_str(c.in.wire.fail_kind, LLM_FAIL_REFUSED,
               "%s content_filter: refused", what);
        round_trip(&c, what);
        call_free(&c);

        ask(h, m, "context", &c);
        if (m->api == LLM_API_ANTHROPIC) {
            is_str(c.in.wire.fail_kind, LLM_FAIL_CONTEXT,
                   "%s context: model_context_window_exceeded", what);
        } else {
            is_int(c.status, 400, "%s context: 400", what);
            is_str(kevo__llm_wire_error_kind(c.body, c.body_len),
                   LLM_FAIL_CONTEXT, "%s context: the kind from the body",
                   what);
        }
        round_trip(&c, what);
        call_free(&c);

        ask(h, m, "nousage", &c);
        is_int(c.in.wire.has_usage, m->api == LLM_API_ANTHROPIC,
               "%s nousage: usage only where the server sent it", what);
        round_trip(&c, what);
        call_free(&c);
    }
    kevo__llm_http_free(h);
    kevo__llm_config_free(&cfg);
}

/* ---- limits, keepalive, broken streams ---------------------------------- */

static void test_limits(void)
{
    /* A short idle limit for the timing cases, a long one for the rest
     * (which must hold under valgrind too). */
    const char *members[] = {
        "\"api\": \"openai\", \"model\": \"gpt-4o\", \"idle_timeout_s\": "
        "0.3, \"timeout_s\": 0.2",
        "\"api\": \"anthropic\", \"model\": \"claude-x\", "
        "\"idle_timeout_s\": 0.3",
        "\"api\": \"openai\", \"model\": \"gpt-4o\", \"idle_timeout_s\": 20",
        "\"api\": \"anthropic\", \"model\": \"claude-x\", "
        "\"idle_timeout_s\": 20",
    };
    llm_config cfg;
    config(&cfg, members, 4);
    llm_http *h = engine(2);
    call c;
    for (size_t i = 0; i < 2; i++) {
        const llm_model *m = &cfg.models[i];
        const llm_model *patient = &cfg.models[i + 2];
        const char *api = kevo__llm_api_name(m->api);

        ask(h, m, "stall:1500", &c);
        is_int(c.outcome, LLM_TIMEOUT, "%s: a stalled stream times out", api);
        is_int(c.attempts, 3, "%s: the idle limit is retried", api);
        like_str(c.reason, "no byte came for 0.3 s (the idle limit)",
                 "%s: idle: reason", api);
        ok(c.elapsed < 3 * 1.5,
           "%s: each attempt ends before the stall does "
           "(%.2f s for 3)",
           api, c.elapsed);
        call_free(&c);

        double t0 = kevo__llm_now();
        ask(h, m, "trickle:150", &c);
        double took = kevo__llm_now() - t0;
        is_int(c.outcome, LLM_OK, "%s: a slow, steady stream is whole", api);
        ok(took > 0.6,
           "%s: longer than the idle limit and the total limit "
           "(%.2f s)",
           api, took);
        is_int(c.attempts, 1, "%s: in one attempt", api);
        call_free(&c);

        /* Broken streams: how each ends, after how many attempts. */
        struct {
            const char *b;
            llm_outcome outcome;
            int attempts;
            const char *why;
        } broken[] = {
            {"cut,cut,ok", LLM_OK, 3, ""},
            {"cut", LLM_TRUNCATED, 3, "transfer closed"},
            {"nodone", LLM_TRUNCATED, 3, "the stream stopped before its end"},
            {"streamerror,ok", LLM_OK, 2, ""},
            {"streamerror", LLM_STREAM_ERROR, 3,
             m->api == LLM_API_ANTHROPIC ? "overloaded_error: Overloaded"
                                         : "server_error: The server had"},
            {"malformed", LLM_MALFORMED, 1, "not a JSON object"},
            {"badshape", LLM_MALFORMED, 1,
             m->api == LLM_API_ANTHROPIC ? "has no \"type\""
                                         : "neither \"choices\" nor"},
            {"huge:1500000", LLM_TOO_LARGE, 1, "over the cap"},
        };
        for (size_t k = 0; k < sizeof(broken) / sizeof(broken[0]); k++) {
            ask(h, patient, broken[k].b, &c);
            is_int(c.outcome, broken[k].outcome, "%s %s: the outcome", api,
                   broken[k].b);
            is_int(c.attempts, broken[k].attempts, "%s %s: the attempts", api,
                   broken[k].b);
            like_str(c.reason, broken[k].why, "%s %s: why", api, broken[k].b);
            call_free(&c);
        }

        ask(h, patient, "nostream", &c);
        is_int(c.outcome, LLM_OK, "%s: a whole reply to a stream request", api);
        ok(!c.in.wire.streamed && c.in.wire.text &&
               strcmp(c.in.wire.text, DEFAULT) == 0,
           "%s: read as whole", api);
        call_free(&c);
    }
    llm_http_stats st;
    kevo__llm_http_stats_get(h, &st);
    ok(st.sockets > 0, "connections opened (%llu)",
       (unsigned long long)st.sockets);
    is_int(st.keepalive_sockets, st.sockets,
           "every connection has TCP keepalive on");
    is_int(st.idle_timeouts, 6, "the idle limits counted");
    ok(st.streamed > 20, "streamed attempts counted (%llu)",
       (unsigned long long)st.streamed);
    kevo__llm_http_free(h);
    kevo__llm_config_free(&cfg);
}

/* ---- through the plugin ------------------------------------------------- */

static kevo_operator_host *host;
static const kevo_candidate *parent;

/* Submits a request for one child with behaviour b; waits for its end and
 * gives its first failure's kind and reason (new strings, NULL when it
 * gave a child, whose source goes to *child). */
static void propose(kevo_operator *op, const char *b, char **kind,
                    char **reason, char **child)
{
    char sections[256];
    snprintf(sections, sizeof(sections),
             "{\"strategy\": \"[[kevo-loopback:p%d:%s]]\"}", serial++, b);
    kevo_operator_request req = {
        .size = sizeof(req),
        .parent = parent,
        .parent_summary_json = "{\"fitness\": 0.3}",
        .prompt_json = sections,
        .prompt_id = -1,
        .n_children = 1,
    };
    uint64_t id;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_operator_submit(op, &req, &id, &err) != KEVO_OK)
        bail_out("submit: %s", err.text);
    *kind = *reason = *child = NULL;
    double t0 = kevo__llm_now();
    while (kevo__llm_now() - t0 < 60) {
        kevo_operator_host_poll(host, 200, NULL, NULL);
        kevo_operator_result *res;
        if (kevo_operator_host_next_result(host, &res) != KEVO_OK)
            continue;
        if (kevo_operator_result_failure_count(res)) {
            *kind = kevo__llm_strdup(kevo_operator_result_failure_kind(res, 0));
            *reason =
                kevo__llm_strdup(kevo_operator_result_failure_reason(res, 0));
        }
        if (kevo_operator_result_child_count(res))
            *child = kevo__llm_strdup(
                kevo_candidate_source(kevo_operator_result_child(res, 0)));
        kevo_operator_result_free(res);
        return;
    }
    bail_out("request %s never ended", b);
}

/* Whether a file under dir holds needle. */
static int files_holding(const char *dir, const char *needle)
{
    int hits = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        FILE *f = e->d_name[0] != '.' ? fopen(path, "rb") : NULL;
        if (!f)
            continue;
        llm_buf b = {0};
        char chunk[4096];
        size_t n;
        while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
            kevo__llm_buf_append(&b, chunk, n);
        fclose(f);
        hits += b.data && strstr(b.data, needle) != NULL;
        kevo__llm_buf_free(&b);
    }
    if (d)
        closedir(d);
    return hits;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    (void)st, (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static kevo_operator *make_op(const char *name, const char *api,
                              const char *model, int retries)
{
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"models\": [{\"api\": \"%s\", \"model\": \"%s\", "
             "\"base_url\": \"%s%s\", \"idle_timeout_s\": 5, \"headers\": "
             "{\"X-Gateway-Token\": {\"env\": \"KEVO_STREAM_TOKEN\"}}}], "
             "\"max_retries\": %d, \"backoff_base_s\": 0.01, "
             "\"backoff_max_s\": 0.02}",
             api, model, loopback_url(srv),
             strcmp(api, "openai") == 0 ? "/v1" : "", retries);
    kevo_operator *op;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_operator_host_add(host, "llm", name, json, &op, &err) != KEVO_OK)
        bail_out("kevo_operator_host_add: %s", err.text);
    return op;
}

static void test_plugin(const char *builddir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/operators/.libs", builddir);
    setenv(KEVO_OPERATOR_PATH_ENV, path, 1);
    setenv("KEVO_STREAM_TOKEN", TOKEN, 1);
    kevo_error err;
    kevo_error_init(&err);
    kevo_task *t = NULL;
    snprintf(path, sizeof(path), "%s/examples/tasks/saxpy.json", tap_srcdir());
    if (kevo_task_load(path, &t, &err) != KEVO_OK)
        bail_out("%s", err.text);
    parent = kevo_task_seed(t);
    char run[] = "/tmp/kevo-test-llm-stream-XXXXXX";
    if (!mkdtemp(run))
        bail_out("mkdtemp failed");
    if (kevo_operator_host_new(t, 7, &host, &err) != KEVO_OK ||
        kevo_operator_host_set_run_dir(host, run, &err) != KEVO_OK)
        bail_out("host: %s", err.text);
    kevo_operator *oa = make_op("llm_oa", "openai", "gpt-4o", 0);
    kevo_operator *an = make_op("llm_an", "anthropic", "claude-x", 0);

    /* A kernel answer after reasoning that holds a draft kernel. */
    llm_buf k = {0};
    kevo__llm_buf_printf(
        &k, "Faster:\n\n```cuda\n// from the answer @SEQ@\n%s```\n",
        kevo_candidate_source(parent));
    loopback_set_text(srv, "kernel", k.data);
    kevo__llm_buf_free(&k);
    kevo__llm_buf_printf(&k, "Faster:\n\n```cuda\n// no usage\n%s```\n",
                         kevo_candidate_source(parent));
    loopback_set_text(srv, "kernel2", k.data);
    kevo__llm_buf_free(&k);
    char *kind, *reason, *child;
    kevo_operator *ops[] = {oa, an};
    for (int i = 0; i < 2; i++) {
        const char *api = i ? "anthropic" : "openai";
        propose(ops[i], "think:kernel", &kind, &reason, &child);
        ok(child && strstr(child, "// from the answer") &&
               !strstr(child, "draft"),
           "%s: the child is the answer's kernel, not the reasoning's draft",
           api);
        if (!child)
            diag("%s: %s", kind ? kind : "", reason ? reason : "");
        free(kind), free(reason), free(child);

        uint64_t in0, out0, in1, out1;
        kevo_operator_usage(ops[i], &in0, &out0, NULL);
        propose(ops[i], "nullcontent", &kind, &reason, &child);
        is_str(kind, LLM_FAIL_NO_ANSWER, "%s nullcontent: no_answer", api);
        like_str(reason, "raise max_tokens", "%s nullcontent: the advice", api);
        kevo_operator_usage(ops[i], &in1, &out1, NULL);
        is_int(in1 - in0, last()->input_tokens,
               "%s nullcontent: its input tokens counted", api);
        is_int(out1 - out0, last()->output_tokens,
               "%s nullcontent: its output tokens counted", api);
        free(kind), free(reason), free(child);

        propose(ops[i], "refusal", &kind, &reason, &child);
        is_str(kind, LLM_FAIL_REFUSED, "%s refusal: refused", api);
        free(kind), free(reason), free(child);

        propose(ops[i], "context400", &kind, &reason, &child);
        is_str(kind, LLM_FAIL_CONTEXT, "%s context400: context", api);
        like_str(reason, i ? "prompt is too long" : "maximum context length",
                 "%s context400: the vendor's message", api);
        free(kind), free(reason), free(child);

        kevo_operator_usage(ops[i], &in0, &out0, NULL);
        propose(ops[i], "cut", &kind, &reason, &child);
        is_str(kind, KEVO_FAIL_NETWORK, "%s cut: network", api);
        kevo_operator_usage(ops[i], &in1, &out1, NULL);
        ok(in1 > in0 && out1 > out0,
           "%s cut: the failed stream's tokens are counted (%llu, %llu)", api,
           (unsigned long long)(in1 - in0), (unsigned long long)(out1 - out0));
        free(kind), free(reason), free(child);
    }
    propose(oa, "content_filter", &kind, &reason, &child);
    is_str(kind, LLM_FAIL_REFUSED, "content_filter: refused");
    like_str(reason, "a content filter stopped the reply",
             "content_filter: why");
    free(kind), free(reason), free(child);
    propose(an, "context", &kind, &reason, &child);
    is_str(kind, LLM_FAIL_CONTEXT, "model_context_window_exceeded: context");
    free(kind), free(reason), free(child);
    propose(oa, "vllmerror", &kind, &reason, &child);
    is_str(kind, LLM_FAIL_CONTEXT, "vLLM's older error body: context");
    like_str(reason,
             "HTTP 400: BadRequestError: This model's maximum context length "
             "is 32768 tokens. However, you requested 40960 tokens (32768 in "
             "the messages, 8192 in the completion). Please reduce the length "
             "of the messages or completion. (after 1 attempt)",
             "vLLM's older error body: type: message, whole");
    free(kind), free(reason), free(child);
    propose(oa, "plain:502", &kind, &reason, &child);
    like_str(reason, "HTTP 502: 502 Bad Gateway 502 Bad Gateway nginx",
             "a proxy's HTML page: its text");
    free(kind), free(reason), free(child);
    propose(an, "longerror", &kind, &reason, &child);
    is_str(kind, KEVO_FAIL_HTTP, "a long 400: http");
    ok(reason && strlen(reason) > LLM_ERROR_TEXT_MAX &&
           strlen(reason) < LLM_ERROR_TEXT_MAX + 200 && strstr(reason, "..."),
       "a long 400: its message in the reason, bounded (%zu bytes)",
       reason ? strlen(reason) : 0);
    free(kind), free(reason), free(child);
    uint64_t in0, out0, in1, out1;
    kevo_operator_usage(oa, &in0, &out0, NULL);
    propose(oa, "nousage:kernel2", &kind, &reason, &child);
    kevo_operator_usage(oa, &in1, &out1, NULL);
    ok(child && in1 > in0 && out1 > out0,
       "a reply without usage: estimated tokens counted (%llu, %llu)",
       (unsigned long long)(in1 - in0), (unsigned long long)(out1 - out0));
    free(kind), free(reason), free(child);

    kevo_operator_host_free(host);
    snprintf(path, sizeof(path), "%s/llm", run);
    ok(files_holding(path, "\"reasoning\": \"The loads are not coalesced") > 0,
       "the reasoning is kept in the reply files");
    ok(files_holding(path, "\"finish_reason\": \"content_filter\"") == 1,
       "the finish reason too");
    is_int(files_holding(path, "\"estimated\": true"), 3,
           "estimated usages are marked (two cut streams, one without usage)");
    is_int(files_holding(path, TOKEN), 0, "no file holds the gateway token");
    ok(files_holding(path, "X-Gateway-Token: [REDACTED]") > 10,
       "the token header is saved redacted");
    nftw(run, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    kevo_task_free(t);
}

int main(void)
{
    const char *builddir = getenv("KEVO_BUILDDIR");
    srv = loopback_start();
    if (!srv)
        bail_out("the loopback server did not start");
    diag("loopback server at %s", loopback_url(srv));
    test_examples();
    test_streams();
    test_limits();
    test_plugin(builddir && *builddir ? builddir : ".");
    loopback_stop(srv);
    return done_testing();
}

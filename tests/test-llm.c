/*
 * test-llm.c: the llm operator against a real HTTP server on 127.0.0.1
 * (tests/loopback-server.c) that speaks the OpenAI and Anthropic APIs.
 * First the pieces: the configuration, the wire formats and the
 * request engine (concurrency, retries, Retry-After, time limits, size cap,
 * every outcome counted). Then the plugin itself, loaded by the operator
 * host from the build tree: whole kernels, edits, edits that do not apply,
 * no code, malformed JSON, 429s, 500s, slow, truncated and huge replies,
 * budgets, model weights, and the API key: sent where it belongs and found
 * nowhere else (the run directory, the log, the failure reasons).
 */
#include "config.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <kevo.h>

#include "buf.h"
#include "http.h"
#include "loopback-server.h"
#include "prompt.h"
#include "revision.h"
#include "tap.h"
#include "wire.h"
#include "wire_reply.h"
#include "wire_request.h"

#define KEY_ENV "KEVO_TEST_LLM_KEY"
#define KEY "sk-kevo-test-7f3a9c1e5b2d8046"
#define KEY2_ENV "KEVO_TEST_LLM_KEY2"
#define KEY2 "ant-kevo-test-c0ffee1234abcd"

static loopback *srv;

/* ---- helpers -------------------------------------------------------------
 */

static const char *no_env(const char *name)
{
    (void)name;
    return NULL;
}

static const char *fake_env(const char *name)
{
    if (strcmp(name, KEY_ENV) == 0)
        return KEY;
    if (strcmp(name, KEY2_ENV) == 0)
        return KEY2;
    return NULL;
}

/* The index of the first request the server got whose body holds s, or
 * -1. */
static long find_request(const char *s)
{
    size_t n = loopback_count(srv);
    for (size_t i = 0; i < n; i++) {
        const loopback_request *r = loopback_get(srv, i);
        if (r && strstr(r->body, s))
            return (long)i;
    }
    return -1;
}

/* How many requests' bodies hold s. */
static int count_requests(const char *s)
{
    int k = 0;
    size_t n = loopback_count(srv);
    for (size_t i = 0; i < n; i++) {
        const loopback_request *r = loopback_get(srv, i);
        if (r && strstr(r->body, s))
            k++;
    }
    return k;
}

/* ---- the configuration -------------------------------------------------- */

static void test_config(void)
{
    char err[1024];
    llm_config cfg;
    char json[2048];

    snprintf(json, sizeof(json),
             "{\"models\": [{\"api\": \"openai\", \"model\": \"a\", "
             "\"base_url\": \"http://x/v1/\", \"key_env\": \"%s\", "
             "\"weight\": 3, \"input_cost_per_mtok\": 2, "
             "\"output_cost_per_mtok\": 8}, {\"api\": \"anthropic\", "
             "\"model\": \"b\", \"name\": \"bee\", \"key_env\": \"%s\", "
             "\"temperature\": 0.5, \"max_tokens\": 100, \"timeout_s\": 2}], "
             "\"concurrency\": 3, \"max_retries\": 2, \"token_budget\": 1000, "
             "\"cost_budget\": 0.5, \"reply_format\": \"edits\"}",
             KEY_ENV, KEY2_ENV);
    ok(kevo__llm_config_parse(json, &cfg, fake_env, err, sizeof(err)),
       "a configuration of two models parses");
    is_int(cfg.nmodels, 2, "two models");
    is_str(cfg.models[0].base_url, "http://x/v1", "trailing / dropped");
    is_str(cfg.models[0].name, "a", "the name defaults to the model");
    is_str(cfg.models[1].name, "bee", "a name given");
    is_str(cfg.models[1].base_url, "https://api.anthropic.com",
           "Anthropic's base URL by default");
    is_str(cfg.models[0].key, KEY, "the key comes from the environment");
    is_int(cfg.models[1].max_tokens, 100, "max_tokens");
    is_double(cfg.models[1].timeout_s, 2, 0, "timeout_s");
    is_int(cfg.concurrency, 3, "concurrency");
    is_int(cfg.token_budget, 1000, "token budget");
    is_int(cfg.reply_format, LLM_FORMAT_EDITS, "reply format");
    is_int(kevo__llm_config_pick(&cfg, 0.0), 0, "u = 0 draws the first");
    is_int(kevo__llm_config_pick(&cfg, 0.74), 0, "u = 0.74 draws weight 3");
    is_int(kevo__llm_config_pick(&cfg, 0.76), 1, "u = 0.76 draws weight 1");
    const char *secrets[8];
    is_int(kevo__llm_config_secrets(&cfg, secrets, 8), 2, "two secrets");
    kevo__llm_config_free(&cfg);

    struct {
        const char *json;
        const char *needle;
    } bad[] = {
        {"{\"models\": [{\"api\": \"openai\", \"model\": \"a\"}], "
         "\"concurency\": 2}",
         "unknown key \"concurency\""},
        {"{\"models\": [{\"api\": \"openai\", \"model\": \"a\", "
         "\"temprature\": 1}]}",
         "models[0]: unknown key \"temprature\""},
        {"{\"models\": [{\"api\": \"gemini\", \"model\": \"a\"}]}",
         "\"api\" is \"gemini\""},
        {"{\"models\": [{\"api\": \"openai\"}]}", "\"model\" is required"},
        {"{\"models\": []}", "non-empty array"},
        {"{\"models\": [{\"api\": \"openai\", \"model\": \"a\", "
         "\"key_env\": \"KEVO_TEST_UNSET_VARIABLE\"}]}",
         "KEVO_TEST_UNSET_VARIABLE (its \"key_env\") is not set"},
        {"{\"models\": [{\"api\": \"openai\", \"model\": \"a\", "
         "\"key_env\": \"sk-abc-123\"}]}",
         "must name an environment variable"},
        {"{\"models\": [{\"api\": \"anthropic\", \"model\": \"a\", "
         "\"temperature\": 1.5}]}",
         "\"temperature\" is 1.5, outside [0, 1]"},
        {"{\"models\": [{\"api\": \"openai\", \"model\": \"a\", "
         "\"weight\": 0}]}",
         "every weight is 0"},
        {"{\"models\": [{\"api\": \"openai\", \"model\": \"a\"}], "
         "\"backoff_base_s\": 5, \"backoff_max_s\": 1}",
         "\"backoff_max_s\" (1) is below"},
        {"{\"models\": [{\"api\": \"openai\", \"model\": \"a\", "
         "\"base_url\": \"ftp://x\"}]}",
         "must start with http://"},
        {"{\"models\": [{\"api\": \"openai\", \"model\": \"a\"}], "
         "\"reply_format\": \"poem\"}",
         "\"reply_format\" must be"},
        {"[1, 2]", "must be a JSON object"},
        {"{\"models\": ", "line 1"},
        {"", "no configuration"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        ok(!kevo__llm_config_parse(bad[i].json, &cfg, no_env, err, sizeof(err)),
           "bad config %zu is refused", i);
        like_str(err, bad[i].needle, "bad config %zu: the message", i);
    }
}

/* ---- wire formats -------------------------------------------------------- */

static void test_wire(void)
{
    char err[512];
    llm_config cfg;
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"models\": [{\"api\": \"openai\", \"model\": \"gpt-x\", "
             "\"base_url\": \"http://h/v1\", \"key_env\": \"%s\", "
             "\"temperature\": 0.25, \"max_tokens\": 77}, {\"api\": "
             "\"anthropic\", \"model\": \"claude-x\", \"base_url\": "
             "\"http://h\", \"key_env\": \"%s\", \"max_tokens\": 99}]}",
             KEY_ENV, KEY2_ENV);
    if (!kevo__llm_config_parse(json, &cfg, fake_env, err, sizeof(err)))
        bail_out("config: %s", err);

    llm_wire_request w;
    ok(kevo__llm_wire_build(&cfg.models[0], "SYS", "USER \xe2\x9c\x93", &w),
       "an OpenAI request builds");
    is_str(w.url, "http://h/v1/chat/completions", "OpenAI URL");
    is_str(w.headers[1], "Authorization: Bearer " KEY, "Bearer key header");
    is_str(w.log_headers[1], "Authorization: " LLM_REDACTED,
           "the logged header is redacted");
    json_t *b = json_loads(w.body, 0, NULL);
    is_str(json_string_value(json_object_get(b, "model")), "gpt-x", "model");
    is_int(json_integer_value(json_object_get(b, "max_tokens")), 77,
           "max_tokens");
    is_double(json_number_value(json_object_get(b, "temperature")), 0.25, 0,
              "temperature");
    json_t *m = json_object_get(b, "messages");
    is_str(json_string_value(json_object_get(json_array_get(m, 0), "role")),
           "system", "system message first");
    is_str(json_string_value(json_object_get(json_array_get(m, 1), "content")),
           "USER \xe2\x9c\x93", "user message second");
    ok(!strstr(w.body, KEY), "the key is not in the body");
    json_decref(b);
    kevo__llm_wire_request_free(&w);

    ok(kevo__llm_wire_build(&cfg.models[1], "SYS", "USER", &w),
       "an Anthropic request builds");
    is_str(w.url, "http://h/v1/messages", "Anthropic URL");
    is_str(w.headers[1], "x-api-key: " KEY2, "x-api-key header");
    is_str(w.log_headers[1], "x-api-key: " LLM_REDACTED, "redacted in logs");
    is_str(w.headers[2], "anthropic-version: 2023-06-01", "version header");
    b = json_loads(w.body, 0, NULL);
    is_str(json_string_value(json_object_get(b, "system")), "SYS",
           "system is a top-level field");
    is_int(json_array_size(json_object_get(b, "messages")), 1,
           "one user message");
    is_int(json_integer_value(json_object_get(b, "max_tokens")), 99,
           "max_tokens");
    json_decref(b);
    kevo__llm_wire_request_free(&w);

    struct {
        llm_api api;
        const char *json;
        bool good;
        const char *text_or_why;
        uint64_t in, out;
        bool cut;
        const char *fail_kind; /* of a good reply that gives no text */
    } replies[] = {
        {LLM_API_OPENAI,
         "{\"choices\": [{\"message\": {\"content\": \"hi\"}, "
         "\"finish_reason\": \"length\"}], \"usage\": {\"prompt_tokens\": 5, "
         "\"completion_tokens\": 7}}",
         true, "hi", 5, 7, true, NULL},
        {LLM_API_OPENAI, "{\"choices\": []}", false, "no \"choices\"", 0, 0,
         false, NULL},
        {LLM_API_OPENAI,
         "{\"choices\": [{\"message\": {\"content\": null, \"refusal\": "
         "\"no\"}}]}",
         true, "", 0, 0, false, LLM_FAIL_REFUSED},
        {LLM_API_ANTHROPIC,
         "{\"type\": \"message\", \"content\": [{\"type\": \"text\", "
         "\"text\": \"a\"}, {\"type\": \"tool_use\"}, {\"type\": \"text\", "
         "\"text\": \"b\"}], \"stop_reason\": \"end_turn\", \"usage\": "
         "{\"input_tokens\": 3, \"output_tokens\": 4}}",
         true, "a\nb", 3, 4, false, NULL},
        {LLM_API_ANTHROPIC,
         "{\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", "
         "\"message\": \"busy\"}}",
         false, "error object", 0, 0, false, NULL},
        {LLM_API_ANTHROPIC, "{\"type\": \"message\", \"content\": []}", true,
         "", 0, 0, false, LLM_FAIL_NO_ANSWER},
    };
    for (size_t i = 0; i < sizeof(replies) / sizeof(replies[0]); i++) {
        json_t *root = json_loads(replies[i].json, 0, NULL);
        llm_wire_reply r;
        char why[256] = "";
        bool good =
            kevo__llm_wire_parse(replies[i].api, root, &r, why, sizeof(why));
        is_int(good, replies[i].good, "reply %zu parses as expected", i);
        if (good) {
            is_str(r.text, replies[i].text_or_why, "reply %zu text", i);
            is_int(r.input_tokens, replies[i].in, "reply %zu input tokens", i);
            is_int(r.output_tokens, replies[i].out, "reply %zu output tokens",
                   i);
            is_int(r.cut_off, replies[i].cut, "reply %zu cut off", i);
            is_str(r.fail_kind ? r.fail_kind : "",
                   replies[i].fail_kind ? replies[i].fail_kind : "",
                   "reply %zu failure kind", i);
        } else {
            like_str(why, replies[i].text_or_why, "reply %zu: why", i);
        }
        kevo__llm_wire_reply_free(&r);
        json_decref(root);
    }
    const char *e = "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_"
                    "error\",\"message\":\"slow down\"}}";
    char *t = kevo__llm_wire_error_text(e, strlen(e));
    is_str(t, "rate_limit_error: slow down", "an error object's text");
    free(t);
    ok(kevo__llm_wire_error_text("<html>", 6) == NULL,
       "no error text from HTML");

    const char *secrets[] = {KEY, "abc"};
    char *red =
        kevo__llm_redact("x" KEY "y abc " KEY, strlen(KEY) * 2 + 7, secrets, 2);
    is_str(red, "x" LLM_REDACTED "y " LLM_REDACTED " " LLM_REDACTED,
           "redaction replaces every occurrence");
    free(red);
    char *clean = kevo__llm_utf8_clean("a\xff\xc3\xa9\xed\xa0\x80z", 8);
    is_str(clean, "a?\xc3\xa9???z", "invalid UTF-8 becomes ?");
    free(clean);
    kevo__llm_config_free(&cfg);
}

/* ---- the request engine --------------------------------------------------
 */

typedef struct rec {
    bool done;
    llm_outcome outcome;
    long status;
    int attempts;
    int attempt_calls;
    double elapsed;
    double last_retry_in;
    char reason[600];
    char text[256];
    llm_api api;
} rec;

static bool eng_validate(void *ud, json_t *root, char *why, size_t n)
{
    rec *r = ud;
    llm_wire_reply w;
    if (!kevo__llm_wire_parse(r->api, root, &w, why, n))
        return false;
    snprintf(r->text, sizeof(r->text), "%s", w.text);
    kevo__llm_wire_reply_free(&w);
    return true;
}

static void eng_attempt(void *ud, const llm_http_attempt *a)
{
    rec *r = ud;
    r->attempt_calls++;
    r->last_retry_in = a->retry_in_s;
}

static void eng_done(void *ud, const llm_http_result *res)
{
    rec *r = ud;
    r->done = true;
    r->outcome = res->outcome;
    r->status = res->status;
    r->attempts = res->attempts;
    r->elapsed = res->elapsed_s;
    snprintf(r->reason, sizeof(r->reason), "%s", res->reason);
}

static bool refuse_all(void *ud, char *why, size_t n)
{
    (void)ud;
    snprintf(why, n, "no budget left in this test");
    return false;
}

/* Sends one request per marker, all at once, and waits for them all. */
static void engine_run(llm_http *h, const llm_model *m, const char **markers,
                       rec *recs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        llm_wire_request w;
        memset(&recs[i], 0, sizeof(recs[i]));
        recs[i].api = m->api;
        if (!kevo__llm_wire_build(m, "system", markers[i], &w))
            bail_out("out of memory");
        llm_http_request req = {
            .url = w.url,
            .headers = (const char *const *)w.headers,
            .nheaders = w.nheaders,
            .body = w.body,
            .body_len = w.body_len,
            .timeout_s = m->timeout_s,
            .validate = eng_validate,
            .attempt = eng_attempt,
            .done = eng_done,
            .ud = &recs[i],
        };
        char err[256];
        if (!kevo__llm_http_submit(h, &req, err, sizeof(err)))
            bail_out("submit: %s", err);
        kevo__llm_wire_request_free(&w);
    }
    double t0 = kevo__llm_now();
    while (kevo__llm_http_pending(h) > 0 && kevo__llm_now() - t0 < 60)
        kevo__llm_http_poll(h, 1000);
}

static void test_engine(void)
{
    char err[512], json[1024];
    llm_config cfg;
    snprintf(json, sizeof(json),
             "{\"models\": [{\"api\": \"openai\", \"model\": \"eng\", "
             "\"base_url\": \"%s/v1\", \"key_env\": \"%s\", \"timeout_s\": "
             "10, \"stream\": false}, {\"api\": \"anthropic\", \"model\": "
             "\"eng-fast\", \"base_url\": \"%s\", \"key_env\": \"%s\", "
             "\"timeout_s\": 0.4, \"stream\": false}]}",
             loopback_url(srv), KEY_ENV, loopback_url(srv), KEY2_ENV);
    if (!kevo__llm_config_parse(json, &cfg, fake_env, err, sizeof(err)))
        bail_out("config: %s", err);
    const llm_model *slowok = &cfg.models[0], *fast = &cfg.models[1];

    llm_http_config hc = {
        .concurrency = 3,
        .max_retries = 2,
        .backoff_base_s = 0.05,
        .backoff_max_s = 0.08,
        .retry_after_max_s = 5,
        .max_reply_bytes = 1 << 20,
    };
    llm_http *h = kevo__llm_http_new(&hc, err, sizeof(err));
    ok(h != NULL, "an engine starts");
    if (!h)
        bail_out("%s", err);
    loopback_set_text(srv, "hello", "hello there");

    /* Concurrency: 9 slow requests through 3 slots. */
    {
        const char *mk[9];
        char bufs[9][64];
        for (int i = 0; i < 9; i++) {
            snprintf(bufs[i], sizeof(bufs[i]),
                     "[[kevo-loopback:conc%d:slow:250:hello]]", i);
            mk[i] = bufs[i];
        }
        rec r[9];
        loopback_reset(srv);
        double t0 = kevo__llm_now();
        engine_run(h, slowok, mk, r, 9);
        double wall = kevo__llm_now() - t0;
        int good = 0;
        for (int i = 0; i < 9; i++)
            good += r[i].done && r[i].outcome == LLM_OK &&
                    strcmp(r[i].text, "hello there") == 0;
        is_int(good, 9, "9 slow requests all succeed");
        is_int(loopback_max_active(srv), 3,
               "the server never held more than the limit of 3");
        llm_http_stats st;
        kevo__llm_http_stats_get(h, &st);
        is_int(st.max_active, 3, "the engine had 3 in flight at most");
        ok(wall >= 0.7, "three rounds of 250 ms take at least 0.75 s (%.2f)",
           wall);
    }

    /* Each misbehaviour, all in flight together. */
    const char *mk[] = {
        "[[kevo-loopback:e0:ok]]",
        "[[kevo-loopback:e1:429:1,hello]]",
        "[[kevo-loopback:e2:500,503,hello]]",
        "[[kevo-loopback:e3:500]]",
        "[[kevo-loopback:e4:malformed]]",
        "[[kevo-loopback:e5:truncated]]",
        "[[kevo-loopback:e6:huge:2000000]]",
        "[[kevo-loopback:e7:400]]",
        "[[kevo-loopback:e8:429:600]]",
        "[[kevo-loopback:e9:close]]",
        "[[kevo-loopback:e10:badshape]]",
        "[[kevo-loopback:e11:429ms:300,hello]]",
        "[[kevo-loopback:e12:429date:1,hello]]",
    };
    enum { N = sizeof(mk) / sizeof(mk[0]) };
    rec r[N];
    loopback_reset(srv);
    engine_run(h, slowok, mk, r, N);
    for (size_t i = 0; i < N; i++)
        ok(r[i].done, "request %zu ended", i);
    is_int(r[0].outcome, LLM_OK, "ok: success");
    is_int(r[0].attempts, 1, "ok: one attempt");

    is_int(r[1].outcome, LLM_OK, "429 then ok: success");
    is_int(r[1].attempts, 2, "429 then ok: two attempts");
    ok(r[1].elapsed >= 0.95, "Retry-After: 1 was waited for (%.3f s)",
       r[1].elapsed);
    is_str(r[1].text, "hello there", "429 then ok: the second reply's text");

    is_int(r[2].outcome, LLM_OK, "500, 503, ok: success on the third try");
    is_int(r[2].attempts, 3, "500, 503, ok: three attempts");
    ok(r[2].elapsed >= 0.05 + 0.08 - 0.01,
       "backoff 0.05 s then 0.08 s (capped) was waited (%.3f s)", r[2].elapsed);

    is_int(r[3].outcome, LLM_HTTP_ERROR, "500 always: an HTTP error");
    is_int(r[3].attempts, 3, "500 always: 1 + max_retries attempts");
    is_int(r[3].status, 500, "500 always: the status");
    like_str(r[3].reason, "gave up after 3 attempts", "500: reason");

    is_int(r[4].outcome, LLM_MALFORMED, "malformed JSON");
    is_int(r[4].attempts, 1, "malformed JSON is not retried");
    like_str(r[4].reason, "not JSON", "malformed: reason");

    is_int(r[5].outcome, LLM_TRUNCATED, "truncated body");
    is_int(r[5].attempts, 3, "truncated bodies are retried");
    like_str(r[5].reason, "closed after", "truncated: reason");

    is_int(r[6].outcome, LLM_TOO_LARGE, "huge body");
    is_int(r[6].attempts, 1, "a huge body is not retried");
    like_str(r[6].reason, "over the cap of 1048576 bytes", "huge: reason");

    is_int(r[7].outcome, LLM_HTTP_ERROR, "400");
    is_int(r[7].attempts, 1, "400 is not retried");

    is_int(r[8].outcome, LLM_HTTP_ERROR, "429 with Retry-After: 600");
    is_int(r[8].attempts, 1, "a Retry-After over the limit is not waited");
    like_str(r[8].reason, "Retry-After of 600 s is over the limit of 5 s",
             "Retry-After over the limit: reason");

    is_int(r[9].outcome, LLM_TRANSPORT, "a closed connection");
    is_int(r[9].attempts, 3, "closed connections are retried");

    is_int(r[10].outcome, LLM_MALFORMED, "JSON without choices");
    like_str(r[10].reason, "no \"choices\"", "bad shape: reason");

    is_int(r[11].outcome, LLM_OK, "429 with retry-after-ms then ok");
    ok(r[11].elapsed >= 0.29, "retry-after-ms: 300 was waited (%.3f s)",
       r[11].elapsed);

    is_int(r[12].outcome, LLM_OK, "429 with an HTTP-date Retry-After then ok");
    is_int(r[12].attempts, 2, "HTTP date: two attempts");

    llm_http_stats st;
    kevo__llm_http_stats_get(h, &st);
    uint64_t sum = 0;
    for (int o = 0; o < LLM_OUTCOME_COUNT; o++)
        sum += st.outcomes[o];
    is_int(sum, st.completed, "the outcome counts add up to the requests");
    is_int(st.completed, 9 + N, "every request is counted");
    is_int(st.outcomes[LLM_OK], 9 + 5, "successes counted");
    is_int(st.outcomes[LLM_HTTP_ERROR], 3, "HTTP errors counted");
    is_int(st.outcomes[LLM_MALFORMED], 2, "malformed counted");
    is_int(st.outcomes[LLM_TRUNCATED], 1, "truncated counted");
    is_int(st.outcomes[LLM_TOO_LARGE], 1, "too large counted");
    is_int(st.outcomes[LLM_TRANSPORT], 1, "transport failures counted");
    ok(st.retry_after_honoured >= 3, "Retry-After honoured (%llu)",
       (unsigned long long)st.retry_after_honoured);
    /* libcurl may resend once on its own when a reused connection closes
     * without an answer, so the closing case is counted apart. */
    int closes = count_requests("[[kevo-loopback:e9:");
    ok(closes >= 3, "the closing server saw at least 3 (%d)", closes);
    is_int((int)loopback_count(srv) - closes,
           1 + 2 + 3 + 3 + 1 + 3 + 1 + 1 + 1 + 1 + 2 + 2,
           "the server saw every other attempt");

    /* A reply slower than the time limit. */
    const char *slow[] = {"[[kevo-loopback:s0:slow:6000]]"};
    rec rs;
    double t0 = kevo__llm_now();
    engine_run(h, fast, slow, &rs, 1);
    is_int(rs.outcome, LLM_TIMEOUT, "a slow reply times out");
    is_int(rs.attempts, 3, "timeouts are retried");
    like_str(rs.reason, "no complete reply within 0.4 s", "timeout: reason");
    ok(kevo__llm_now() - t0 < 5,
       "three timeouts of 0.4 s end well before a 6 s reply");
    kevo__llm_http_free(h);

    /* The admit hook: a budget refuses before anything is sent. */
    hc.admit = refuse_all;
    h = kevo__llm_http_new(&hc, err, sizeof(err));
    size_t before = loopback_count(srv);
    const char *one[] = {"[[kevo-loopback:b0:ok]]"};
    engine_run(h, slowok, one, &rs, 1);
    is_int(rs.outcome, LLM_BUDGET, "a refused request ends as budget");
    is_int(rs.attempts, 0, "it was never sent");
    is_str(rs.reason, "no budget left in this test", "with the hook's reason");
    is_int(loopback_count(srv), before, "the server saw nothing");

    /* Freeing cancels what is in flight, and calls done for each. */
    hc.admit = NULL;
    kevo__llm_http_free(h);
    h = kevo__llm_http_new(&hc, err, sizeof(err));
    const char *two[] = {"[[kevo-loopback:c0:slow:2000]]",
                         "[[kevo-loopback:c1:slow:2000]]"};
    rec rc[2];
    memset(rc, 0, sizeof(rc));
    for (int i = 0; i < 2; i++) {
        llm_wire_request w;
        rc[i].api = slowok->api;
        kevo__llm_wire_build(slowok, "s", two[i], &w);
        llm_http_request req = {.url = w.url,
                                .headers = (const char *const *)w.headers,
                                .nheaders = w.nheaders,
                                .body = w.body,
                                .body_len = w.body_len,
                                .timeout_s = 5,
                                .done = eng_done,
                                .ud = &rc[i]};
        kevo__llm_http_submit(h, &req, err, sizeof(err));
        kevo__llm_wire_request_free(&w);
    }
    kevo__llm_http_poll(h, 100);
    kevo__llm_http_free(h);
    ok(rc[0].done && rc[0].outcome == LLM_CANCELLED && rc[1].done &&
           rc[1].outcome == LLM_CANCELLED,
       "freeing the engine cancels both requests");

    llm_http_config b = {.backoff_base_s = 1, .backoff_max_s = 5};
    is_double(kevo__llm_http_backoff(&b, 1, 1), 1, 1e-12, "backoff 1: base");
    is_double(kevo__llm_http_backoff(&b, 3, 1), 4, 1e-12, "backoff 3: 4 base");
    is_double(kevo__llm_http_backoff(&b, 4, 1), 5, 1e-12, "backoff capped");
    is_double(kevo__llm_http_backoff(&b, 2, 0), 1, 1e-12,
              "jitter 0: half the step");
    kevo__llm_config_free(&cfg);
}

/* ---- the plugin through the host ---------------------------------------- */

static llm_buf host_log;

static void on_log(void *user, kevo_log_level level, const char *op,
                   const char *msg)
{
    (void)user;
    kevo__llm_buf_printf(&host_log, "%d %s: %s\n", (int)level, op, msg);
}

/* A request's outcome, as the host gave it back. */
typedef struct outcome {
    uint64_t id;
    bool ended;
    size_t nchildren;
    char *child; /* the first child's source */
    char *note;
    size_t nfailures;
    char *kind; /* the first failure */
    char *reason;
    size_t nprompts;
    char *prompt; /* the first revised prompt */
    char *prompt_note;
} outcome;

static void outcome_free(outcome *o)
{
    free(o->child);
    free(o->note);
    free(o->kind);
    free(o->reason);
    free(o->prompt);
    free(o->prompt_note);
}

static kevo_operator_host *host;
static const kevo_task *task;
static const kevo_candidate *parent;

static uint64_t submit(kevo_operator *op, const char *sections,
                       uint32_t nchildren)
{
    kevo_operator_inspiration insp = {kevo_task_reference(task),
                                      "{\"fitness\": 0.5, \"cell\": 7}"};
    kevo_operator_request req = {
        .size = sizeof(req),
        .parent = parent,
        .parent_summary_json =
            "{\"fitness\": 0.31, \"verdict\": \"ok\", \"shapes\": [{\"dims\": "
            "{\"n\": 16777216}, \"efficiency\": 0.31, \"bound\": "
            "\"memory\"}], \"compile_log\": \"ptxas info: 10 registers\\n"
            "kernel.cu(3): warning: variable unused\\n\"}",
        .inspirations = &insp,
        .n_inspirations = 1,
        .target_cell_json = "{\"memory\": 2, \"block_size\": 1}",
        .prompt_json = sections,
        .prompt_id = -1,
        .n_children = nchildren,
    };
    uint64_t id = 0;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_operator_submit(op, &req, &id, &err) != KEVO_OK)
        bail_out("submit: %s", err.text);
    return id;
}

/* Polls until every one of n outcomes (ids set) has ended. */
static void wait_all(outcome *outs, size_t n)
{
    double t0 = kevo__llm_now();
    size_t ended = 0;
    for (size_t i = 0; i < n; i++)
        ended += outs[i].ended;
    while (ended < n && kevo__llm_now() - t0 < 60) {
        size_t in_flight;
        kevo_operator_host_poll(host, 500, &in_flight, NULL);
        kevo_operator_result *res;
        while (kevo_operator_host_next_result(host, &res) == KEVO_OK) {
            uint64_t id = kevo_operator_result_id(res);
            for (size_t i = 0; i < n; i++) {
                if (outs[i].id != id)
                    continue;
                outcome *o = &outs[i];
                o->ended = true;
                ended++;
                o->nchildren = kevo_operator_result_child_count(res);
                if (o->nchildren) {
                    o->child = kevo__llm_strdup(kevo_candidate_source(
                        kevo_operator_result_child(res, 0)));
                    o->note = kevo__llm_strdup(
                        kevo_operator_result_child_note(res, 0));
                }
                o->nprompts = kevo_operator_result_prompt_count(res);
                if (o->nprompts) {
                    o->prompt =
                        kevo__llm_strdup(kevo_operator_result_prompt(res, 0));
                    o->prompt_note = kevo__llm_strdup(
                        kevo_operator_result_prompt_note(res, 0));
                }
                o->nfailures = kevo_operator_result_failure_count(res);
                if (o->nfailures) {
                    o->kind = kevo__llm_strdup(
                        kevo_operator_result_failure_kind(res, 0));
                    o->reason = kevo__llm_strdup(
                        kevo_operator_result_failure_reason(res, 0));
                }
            }
            kevo_operator_result_free(res);
        }
    }
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    llm_buf b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        kevo__llm_buf_append(&b, chunk, n);
    fclose(f);
    return kevo__llm_buf_take(&b);
}

/* Counts files under dir (recursively) and those holding needle; also
 * those whose name holds name_part. */
static void scan_dir(const char *dir, const char *needle, int *files, int *hits,
                     const char *name_part, int *named)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = kevo__llm_strdup(dir);
        llm_buf b = {0};
        kevo__llm_buf_printf(&b, "%s/%s", p, e->d_name);
        free(p);
        struct stat st;
        if (stat(b.data, &st) == 0 && S_ISDIR(st.st_mode)) {
            scan_dir(b.data, needle, files, hits, name_part, named);
        } else {
            (*files)++;
            if (name_part && strstr(e->d_name, name_part))
                (*named)++;
            char *t = read_text(b.data);
            if (t && strstr(t, needle)) {
                (*hits)++;
                if (strcmp(needle, KEY) == 0)
                    diag("%s holds the key", b.data);
            }
            free(t);
        }
        kevo__llm_buf_free(&b);
    }
    closedir(d);
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        llm_buf b = {0};
        kevo__llm_buf_printf(&b, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(b.data, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(b.data);
        else
            unlink(b.data);
        kevo__llm_buf_free(&b);
    }
    closedir(d);
    rmdir(dir);
}

/* The parent with one line changed, as a whole kernel reply. */
static char *kernel_reply(const char *marker_line)
{
    const char *src = kevo_candidate_source(parent);
    llm_buf b = {0};
    kevo__llm_buf_puts(&b, "Here is a faster version.\n\n```cuda\n// ");
    kevo__llm_buf_puts(&b, marker_line);
    kevo__llm_buf_puts(&b, "\n");
    kevo__llm_buf_puts(&b, src);
    kevo__llm_buf_puts(&b, "```\n");
    return kevo__llm_buf_take(&b);
}

static kevo_operator *make_op(const char *name, const char *extra,
                              double idle_s, int retries)
{
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"models\": [{\"name\": \"alpha\", \"api\": \"openai\", "
             "\"model\": \"m-alpha\", \"base_url\": \"%s/v1\", \"key_env\": "
             "\"%s\", \"weight\": 3, \"idle_timeout_s\": %g, "
             "\"input_cost_per_mtok\": 1000, \"output_cost_per_mtok\": 2000}, "
             "{\"name\": \"beta\", \"api\": \"anthropic\", \"model\": "
             "\"m-beta\", \"base_url\": \"%s\", \"key_env\": \"%s\", "
             "\"weight\": 1, \"idle_timeout_s\": %g, "
             "\"input_cost_per_mtok\": 500}], "
             "\"concurrency\": 4, "
             "\"max_retries\": %d, \"backoff_base_s\": 0.02, "
             "\"backoff_max_s\": 0.05, \"max_reply_bytes\": 1048576%s}",
             loopback_url(srv), KEY_ENV, idle_s, loopback_url(srv), KEY_ENV,
             idle_s, retries, extra);
    kevo_operator *op = NULL;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_operator_host_add(host, "llm", name, json, &op, &err) != KEVO_OK)
        bail_out("kevo_operator_host_add(%s): %s", name, err.text);
    return op;
}

static void test_plugin(const char *builddir)
{
    kevo_error err;
    kevo_error_init(&err);
    char path[4096];
    snprintf(path, sizeof(path), "%s/operators/.libs", builddir);
    setenv(KEVO_OPERATOR_PATH_ENV, path, 1);
    setenv(KEY_ENV, KEY, 1);
    loopback_expect_key(srv, KEY);

    kevo_task *t = NULL;
    snprintf(path, sizeof(path), "%s/examples/tasks/saxpy.json", tap_srcdir());
    if (kevo_task_load(path, &t, &err) != KEVO_OK)
        bail_out("%s", err.text);
    task = t;
    parent = kevo_task_seed(task);
    char run[] = "/tmp/kevo-test-llm-XXXXXX";
    if (!mkdtemp(run))
        bail_out("mkdtemp failed");
    if (kevo_operator_host_new(task, 42, &host, &err) != KEVO_OK ||
        kevo_operator_host_set_log(host, KEVO_LOG_DEBUG, on_log, NULL, &err) !=
            KEVO_OK ||
        kevo_operator_host_set_run_dir(host, run, &err) != KEVO_OK ||
        kevo_operator_host_set_device(
            host, NULL, "{\"name\": \"H100\", \"dram_gbps\": 3350}", &err) !=
            KEVO_OK)
        bail_out("host: %s", err.text);

    /* Configuration errors come back through the host. */
    kevo_operator *bad = NULL;
    kevo_status rc = kevo_operator_host_add(
        host, "llm", "bad1",
        "{\"models\": [{\"api\": \"openai\", \"model\": \"a\"}], "
        "\"max_retry\": 1}",
        &bad, &err);
    is_int(rc, KEVO_EINVALID, "an unknown config key fails init");
    like_str(err.text, "unknown key \"max_retry\"", "the error names the key");
    kevo_error_init(&err);
    rc = kevo_operator_host_add(
        host, "llm", "bad2",
        "{\"models\": [{\"api\": \"openai\", \"model\": "
        "\"a\", \"key_env\": \"KEVO_TEST_NO_SUCH_KEY\"}]}",
        &bad, &err);
    is_int(rc, KEVO_EINVALID, "a missing key variable fails init");
    like_str(err.text, "KEVO_TEST_NO_SUCH_KEY", "the error names the variable");

    kevo_operator *op = make_op("llm", "", 10, 2);
    ok(strcmp(kevo_operator_plugin(op)->name, "llm") == 0,
       "the llm plugin loads from the build tree");

    char *k1 = kernel_reply("variant one");
    char *k2 = kernel_reply("variant two");
    char *k3 = kernel_reply("variant three");
    char *kkey = kernel_reply("built with @KEY@");
    loopback_set_text(srv, "kernel1", k1);
    loopback_set_text(srv, "kernel2", k2);
    loopback_set_text(srv, "kernel3", k3);
    loopback_set_text(srv, "kernelkey", kkey);
    loopback_set_text(srv, "kernel1again", k1);
    free(k1);
    free(k2);
    free(k3);
    free(kkey);
    loopback_set_text(srv, "edits",
                      "Use fmaf.\n\n<<<<<<< SEARCH\n"
                      "                za.v[k] = a * xa.v[k] + ya.v[k];\n"
                      "=======\n"
                      "                za.v[k] = fmaf(a, xa.v[k], ya.v[k]);\n"
                      ">>>>>>> REPLACE\n");
    loopback_set_text(srv, "badedits",
                      "<<<<<<< SEARCH\n    int this_line_is_not_there = 1;\n"
                      "=======\n    int x = 2;\n>>>>>>> REPLACE\n");
    loopback_set_text(srv, "nocode", "I would rather not change anything.");

    struct {
        const char *sections;
        uint32_t nchildren;
    } cases[] = {
        /* 0 */ {"{\"strategy\": \"[[kevo-loopback:p0:kernel1]]\"}", 1},
        /* 1 */ {"{\"strategy\": \"[[kevo-loopback:p1:edits]]\"}", 1},
        /* 2 */ {"{\"strategy\": \"[[kevo-loopback:p2:badedits]]\"}", 1},
        /* 3 */ {"{\"strategy\": \"[[kevo-loopback:p3:nocode]]\"}", 1},
        /* 4 */ {"{\"strategy\": \"[[kevo-loopback:p4:malformed]]\"}", 1},
        /* 5 */ {"{\"strategy\": \"[[kevo-loopback:p5:429:1,kernel2]]\"}", 1},
        /* 6 */ {"{\"strategy\": \"[[kevo-loopback:p6:500]]\"}", 1},
        /* 7 */ {"{\"strategy\": \"[[kevo-loopback:p7:truncated]]\"}", 1},
        /* 8 */ {"{\"strategy\": \"[[kevo-loopback:p8:huge:3000000]]\"}", 1},
        /* 9 */ {"{\"strategy\": \"[[kevo-loopback:p9:echo]]\"}", 1},
        /* 10 */ {"{\"strategy\": \"[[kevo-loopback:p10:kernelkey]]\"}", 1},
        /* 11 */ {"{\"strategy\": \"[[kevo-loopback:p11:kernel1again]]\"}", 1},
        /* 12 */
        {"{\"strategy\": \"[[kevo-loopback:p12:kernel3,nocode]]\"}", 2},
    };
    enum { NC = sizeof(cases) / sizeof(cases[0]) };
    outcome outs[NC];
    memset(outs, 0, sizeof(outs));
    loopback_reset(srv);
    /* Case 11 repeats case 0's child: send it once case 0 is in. */
    for (size_t i = 0; i < NC; i++)
        if (i != 11)
            outs[i].id = submit(op, cases[i].sections, cases[i].nchildren);
    outs[11].id = (uint64_t)-1;
    outs[11].ended = true;
    wait_all(outs, NC);
    outs[11].ended = false;
    outs[11].id = submit(op, cases[11].sections, 1);
    wait_all(outs, NC);
    for (size_t i = 0; i < NC; i++)
        ok(outs[i].ended, "request %zu ended", i);

    is_int(outs[0].nchildren, 1, "whole kernel: a child");
    like_str(outs[0].child, "// variant one", "whole kernel: its source");
    like_str(outs[0].child, "kevo:launch", "whole kernel: launch block kept");
    like_str(outs[0].note, "whole kernel", "whole kernel: the note says so");

    is_int(outs[1].nchildren, 1, "edits: a child");
    like_str(outs[1].child, "fmaf(a, xa.v[k], ya.v[k])", "edits: applied");
    like_str(outs[1].note, "edit", "edits: the note says so");

    is_int(outs[2].nchildren, 0, "edits that do not apply: no child");
    is_str(outs[2].kind, KEVO_FAIL_EDIT, "edits that do not apply: kind");
    like_str(outs[2].reason, "edit_not_found", "edits: reason");

    is_int(outs[3].nchildren, 0, "no code: no child");
    is_str(outs[3].kind, KEVO_FAIL_NO_CODE, "no code: kind");

    is_str(outs[4].kind, KEVO_FAIL_PARSE, "malformed JSON: kind");
    like_str(outs[4].reason, "not a JSON object", "malformed JSON: reason");

    is_int(outs[5].nchildren, 1, "429 then a kernel: a child after a retry");
    like_str(outs[5].child, "// variant two", "429 then a kernel: its source");
    is_int(count_requests("[[kevo-loopback:p5:"), 2,
           "429 then a kernel: the server saw two attempts");

    is_str(outs[6].kind, KEVO_FAIL_HTTP, "500: kind");
    like_str(outs[6].reason, "after 3 attempts", "500: retried, then failed");
    like_str(outs[6].reason, "api_error", "500: the API's error object");
    is_int(count_requests("[[kevo-loopback:p6:"), 3, "500: three attempts");

    is_str(outs[7].kind, KEVO_FAIL_NETWORK, "truncated: kind");
    like_str(outs[7].reason, "truncated", "truncated: reason");

    is_str(outs[8].kind, "too_large", "huge: kind");

    is_str(outs[9].kind, KEVO_FAIL_HTTP, "a 401 that quotes the key: kind");
    like_str(outs[9].reason, LLM_REDACTED, "the quoted key is redacted");

    is_int(outs[10].nchildren, 1, "a kernel holding the key: a child");
    ok(outs[10].child && !strstr(outs[10].child, KEY),
       "the key is redacted from the child");

    is_int(outs[11].nchildren, 0, "a child already seen: none");
    is_str(outs[11].kind, "duplicate", "a child already seen: kind");

    is_int(outs[12].nchildren, 1, "two children wanted: one came");
    is_int(outs[12].nfailures, 1, "two children wanted: one failure");
    is_int(count_requests("[[kevo-loopback:p12:"), 2,
           "two children wanted: two calls");

    /* Sections that are no object of texts: the host refuses them before
     * the plugin sees them (ABI 1.3). */
    kevo_operator_request odd = {.size = sizeof(odd),
                                 .parent = parent,
                                 .prompt_json = "[\"not sections\"]",
                                 .prompt_id = -1,
                                 .n_children = 1};
    is_int(kevo_operator_submit(op, &odd, NULL, NULL), KEVO_EINVALID,
           "bad sections: refused by the host");
    is_int(count_requests("not sections"), 0, "bad sections: nothing sent");

    /* What went over the wire. */
    long i0 = find_request("[[kevo-loopback:p0:");
    long n_openai = 0, n_anthropic = 0, good_keys = 0, total = 0;
    for (size_t i = 0; i < loopback_count(srv); i++) {
        const loopback_request *q = loopback_get(srv, i);
        total++;
        if (strcmp(q->api, "openai") == 0) {
            n_openai++;
            char *a = loopback_header(q, "authorization");
            good_keys += a && strcmp(a, "Bearer " KEY) == 0 &&
                         strcmp(q->model, "m-alpha") == 0;
            free(a);
        } else if (strcmp(q->api, "anthropic") == 0) {
            n_anthropic++;
            char *a = loopback_header(q, "x-api-key");
            char *v = loopback_header(q, "anthropic-version");
            good_keys += a && strcmp(a, KEY) == 0 && v &&
                         strcmp(v, "2023-06-01") == 0 &&
                         strcmp(q->model, "m-beta") == 0;
            free(a);
            free(v);
        }
    }
    is_int(good_keys, total,
           "every request carried the key in its API's header, for its "
           "model");
    ok(i0 >= 0, "the first request reached the server");
    if (i0 >= 0) {
        const loopback_request *q = loopback_get(srv, (size_t)i0);
        ok(strstr(q->body, "SAXPY: z[i] = a * x[i] + y[i]") != NULL,
           "the prompt holds the task description");
        ok(strstr(q->body, "n=16777216") != NULL,
           "the prompt holds a training shape");
        ok(strstr(q->body, "1000003") == NULL &&
               strstr(q->body, "n=77") == NULL,
           "no held-out shape in the prompt");
        ok(strstr(q->body, "dram_gbps: 3350") != NULL,
           "the prompt holds the device ceilings");
        ok(strstr(q->body, "warning: variable unused") != NULL &&
               strstr(q->body, "ptxas info") == NULL,
           "the compile log is distilled");
        ok(strstr(q->body, "(fitness 0.5)") != NULL,
           "the prompt holds an inspiration's score");
        ok(strstr(q->body, "block_size: 1") != NULL,
           "the prompt holds the target cell");
        ok(strstr(q->body, KEY) == NULL, "the key is not in the body");
    }

    /* Model choice by weight: 3 to 1. */
    loopback_reset(srv);
    enum { NW = 48 };
    outcome wouts[NW];
    memset(wouts, 0, sizeof(wouts));
    for (size_t i = 0; i < NW; i++)
        wouts[i].id = submit(op, "{\"s\": \"[[kevo-loopback:w:nocode]]\"}", 1);
    wait_all(wouts, NW);
    int alpha = 0, beta = 0;
    for (size_t i = 0; i < loopback_count(srv); i++) {
        const loopback_request *q = loopback_get(srv, i);
        alpha += strcmp(q->model, "m-alpha") == 0;
        beta += strcmp(q->model, "m-beta") == 0;
    }
    is_int(alpha + beta, NW, "one request per draw");
    ok(alpha >= 26 && alpha <= 44 && beta >= 4,
       "weights 3:1 draw alpha %d times and beta %d times of %d", alpha, beta,
       NW);
    for (size_t i = 0; i < NW; i++)
        outcome_free(&wouts[i]);

    /* A reply slower than the time limit. */
    kevo_operator *fast = make_op("llm_fast", "", 0.3, 0);
    (void)fast;
    outcome so = {0};
    so.id = submit(fast, "{\"s\": \"[[kevo-loopback:slow1:slow:2500]]\"}", 1);
    wait_all(&so, 1);
    is_str(so.kind, KEVO_FAIL_TIMEOUT, "a slow reply: a timeout failure");
    like_str(so.reason, "no byte came for 0.3 s (the idle limit)",
             "timeout: reason");
    outcome_free(&so);

    /* Budgets: the first reply spends the token budget, the next request
     * is refused without being sent. */
    kevo_operator *cheap =
        make_op("llm_cheap", ", \"token_budget\": 10", 10, 2);
    (void)cheap;
    outcome bo[2];
    memset(bo, 0, sizeof(bo));
    bo[0].id = submit(cheap, "{\"s\": \"[[kevo-loopback:bud0:nocode]]\"}", 1);
    wait_all(bo, 1);
    size_t before = loopback_count(srv);
    bo[1].id = submit(cheap, "{\"s\": \"[[kevo-loopback:bud1:nocode]]\"}", 1);
    wait_all(bo, 2);
    is_str(bo[0].kind, KEVO_FAIL_NO_CODE, "within the budget: sent");
    is_str(bo[1].kind, KEVO_FAIL_BUDGET, "over the budget: a budget failure");
    like_str(bo[1].reason, "the token budget is spent", "budget: reason");
    is_int(loopback_count(srv), before, "over the budget: nothing sent");
    outcome_free(&bo[0]);
    outcome_free(&bo[1]);

    kevo_operator *pricey =
        make_op("llm_pricey", ", \"cost_budget\": 0.000001", 10, 2);
    (void)pricey;
    memset(bo, 0, sizeof(bo));
    bo[0].id = submit(pricey, "{\"s\": \"[[kevo-loopback:cost0:nocode]]\"}", 1);
    wait_all(bo, 1);
    bo[1].id = submit(pricey, "{\"s\": \"[[kevo-loopback:cost1:nocode]]\"}", 1);
    wait_all(bo, 2);
    is_str(bo[0].kind, KEVO_FAIL_NO_CODE, "within the cost budget: sent");
    is_str(bo[1].kind, KEVO_FAIL_BUDGET,
           "the cost budget stops requests once spent");
    like_str(bo[1].reason, "cost budget is spent", "cost budget: reason");
    outcome_free(&bo[0]);
    outcome_free(&bo[1]);

    /* A request still in flight when the host goes away is abandoned: the
     * instance frees it and records it as cancelled. */
    kevo_operator *abandon = make_op("llm_abandon", "", 10, 0);
    submit(abandon, "{\"s\": \"[[kevo-loopback:gone:slow:5000]]\"}", 1);
    size_t in_flight = 0;
    kevo_operator_host_poll(host, 50, &in_flight, NULL);
    is_int(in_flight, 1, "a slow request is in flight when the host goes");

    /* Nothing leaks the key: the results, the log, the run directory. */
    int leaks = 0;
    for (size_t i = 0; i < NC; i++) {
        leaks += outs[i].reason && strstr(outs[i].reason, KEY) != NULL;
        leaks += outs[i].child && strstr(outs[i].child, KEY) != NULL;
        leaks += outs[i].note && strstr(outs[i].note, KEY) != NULL;
    }
    is_int(leaks, 0, "no failure reason, child or note holds the key");
    ok(host_log.data && strstr(host_log.data, "request") != NULL,
       "the operator logged");
    like_str(host_log.data,
             "failed (edit): the reply gave no child: edit_not_found",
             "a failure is logged with its kind and reason");
    like_str(host_log.data, ": a child from alpha (whole kernel",
             "a child is logged with its model");
    like_str(host_log.data, "the token budget is spent",
             "the budget stop is logged");
    ok(host_log.data && !strstr(host_log.data, KEY), "the log holds no key");

    kevo_operator_host_free(host);
    host = NULL;
    like_str(host_log.data,
             "llm_cheap: 2 requests, 1 calls (1 attempts), 0 "
             "children; ",
             "each instance logs a summary at its end");

    int files = 0, hits = 0, requests = 0;
    char dir[sizeof(run) + 8];
    snprintf(dir, sizeof(dir), "%s/llm", run);
    scan_dir(dir, KEY, &files, &hits, "-request", &requests);
    ok(requests >= NC, "every request was saved (%d files)", requests);
    int replies = 0, dummy = 0;
    scan_dir(dir, KEY, &dummy, &dummy, "-reply", &replies);
    is_int(replies, requests, "a reply file for every request file");
    int instances = 0, summaries = 0;
    scan_dir(dir, KEY, &dummy, &dummy, "-instance", &instances);
    scan_dir(dir, KEY, &dummy, &dummy, "-summary", &summaries);
    is_int(instances, 5, "each of the 5 instances saved its configuration");
    is_int(summaries, 5, "each instance saved a summary at its end");
    int cancelled = 0;
    scan_dir(dir, "\"outcome\": \"cancelled\"", &dummy, &cancelled, NULL, NULL);
    is_int(cancelled, 1, "the abandoned request's reply file says cancelled");
    files = hits = 0;
    scan_dir(run, KEY, &files, &hits, NULL, NULL);
    ok(files > 20, "the run directory has the llm files (%d)", files);
    is_int(hits, 0, "no file in the run directory holds the key");

    /* A key that was echoed into a saved reply is redacted there too. */
    int echoed = 0;
    scan_dir(dir, LLM_REDACTED, &dummy, &echoed, NULL, NULL);
    ok(echoed >= 2, "the saved files show the key as " LLM_REDACTED);

    for (size_t i = 0; i < NC; i++)
        outcome_free(&outs[i]);
    if (getenv("KEVO_TEST_KEEP"))
        diag("run directory kept: %s", run);
    else
        remove_tree(run);
    kevo_task_free(t);
    kevo__llm_buf_free(&host_log);
}

/* ---- the revision reply parser and prompt ------------------------------- */

/* The revised sections of r as compact JSON in their order, to compare: a
 * new string. */
static char *sections_text(const llm_revision_result *r)
{
    json_t *o = json_object();
    for (size_t i = 0; i < r->n_sections; i++)
        json_object_set_new(o, r->sections[i].name,
                            json_string(r->sections[i].text));
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return text;
}

static void test_revision_parse(void)
{
    const kevo_operator_text orig[] = {{"strategy", "Go wide."},
                                       {"pitfalls", "Mind the tail."}};
    char huge[KEVO_PROMPT_TEXT_MAX + 64];
    memset(huge, 'x', sizeof(huge) - 1);
    huge[sizeof(huge) - 1] = '\0';
    llm_buf big = {0};
    kevo__llm_buf_printf(&big,
                         "```json\n{\"strategy\": \"%s\", \"pitfalls\": "
                         "\"b\"}\n```\n",
                         huge);
    struct {
        const char *reply;
        llm_revision_kind kind;
        const char *needle; /* in the reason, or in the sections on success */
    } cases[] = {
        /* 0 */ {"Here it is.\n\n```json\n{\"strategy\": \"Go wider.\", "
                 "\"pitfalls\": \"Mind the tail.\"}\n```\nDone.",
                 LLM_REVISION_OK, "\"strategy\":\"Go wider.\""},
        /* 1 */
        {"```JSON\n{\"pitfalls\": \"  Mind it.  \", \"strategy\": "
         "\"Go wide.\", \"analysis\": \"Read.\"}\n```",
         LLM_REVISION_OK, "\"pitfalls\":\"Mind it.\""},
        /* 2 */
        {"Before:\n```json\n{\"strategy\": \"Go wide.\", "
         "\"pitfalls\": \"Mind the tail.\"}\n```\nAfter:\n~~~json\n"
         "{\"strategy\": \"Go far.\", \"pitfalls\": \"Mind the "
         "tail.\"}\n~~~\n",
         LLM_REVISION_OK, "Go far."},
        /* 3 */
        {"```\n{\"strategy\": \"Plain fence.\", \"pitfalls\": "
         "\"p\"}\n```",
         LLM_REVISION_OK, "Plain fence."},
        /* 4 */
        {"{\"strategy\": \"Bare.\", \"pitfalls\": \"p\"}", LLM_REVISION_OK,
         "Bare."},
        /* 5 */
        {"```json\n{\"name\": \"n\", \"sections\": {\"strategy\": "
         "\"Wrapped.\", \"pitfalls\": \"p\"}}\n```",
         LLM_REVISION_OK, "Wrapped."},
        /* 6 */
        {"```json\n{\"strategy\": \"Cut off but whole.\", "
         "\"pitfalls\": \"p\"}\n",
         LLM_REVISION_OK, "Cut off but whole."},
        /* 7 */ {"   \n\t", LLM_REVISION_EMPTY, "empty"},
        /* 8 */ {"I would keep it.", LLM_REVISION_NO_JSON, "no ```json block"},
        /* 9 */
        {"```cuda\n__global__ void k() {}\n```", LLM_REVISION_NO_JSON,
         "its fences hold no JSON object"},
        /* 10 */
        {"```json\n{\"strategy\": \"x\",\n```", LLM_REVISION_MALFORMED,
         "fence 1 of 1 (```json) is not JSON: line"},
        /* 11 */
        {"```json\n{\"strategy\": \"Go", LLM_REVISION_TRUNCATED, "cut off"},
        /* 12 */
        {"```json\n[\"strategy\"]\n```", LLM_REVISION_NOT_OBJECT, "an array"},
        /* 13 */
        {"```json\n{\"strategy\": \"Only this.\"}\n```", LLM_REVISION_MISSING,
         "leaves out the section 'pitfalls'"},
        /* 14 */
        {"```json\n{\"strategy\": \"a\", \"pitfalls\": \"b\", "
         "\"poetry\": \"c\", \"x\\ny\": \"d\"}\n```",
         LLM_REVISION_UNKNOWN, "sections 'poetry', 'x?y'"},
        /* 15 */
        {"```json\n{\"strategy\": 3, \"pitfalls\": \"b\"}\n```",
         LLM_REVISION_BAD_TEXT, "'strategy' is a number"},
        /* 16 */
        {"```json\n{\"strategy\": \" \\n \", \"pitfalls\": "
         "\"b\"}\n```",
         LLM_REVISION_BAD_TEXT, "'strategy' is empty"},
        /* 17 */ {big.data, LLM_REVISION_TOO_LARGE, "more than the 32768"},
        /* 18 */
        {"```json\n{\"pitfalls\": \"Mind the tail.\\n\", "
         "\"strategy\": \"  Go wide.\"}\n```",
         LLM_REVISION_UNCHANGED, "unchanged"},
        /* 19 */
        {"```json\n{\"strategy\": \"a\", \"strategy\": \"b\", "
         "\"pitfalls\": \"c\"}\n```",
         LLM_REVISION_MALFORMED, "duplicate"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        llm_revision_result r;
        llm_revision_kind k = kevo__llm_revision_parse(
            cases[i].reply, strlen(cases[i].reply), orig, 2, &r);
        char *got = sections_text(&r);
        is_str(kevo__llm_revision_kind_name(k),
               kevo__llm_revision_kind_name(cases[i].kind),
               "revision reply %zu: %s", i,
               kevo__llm_revision_kind_name(cases[i].kind));
        like_str(k == LLM_REVISION_OK ? got : r.reason, cases[i].needle,
                 "revision reply %zu: %s", i,
                 k == LLM_REVISION_OK ? "the sections" : "the reason");
        if (k == LLM_REVISION_OK)
            ok(r.reason && strstr(r.reason, "changed, from"),
               "revision reply %zu: what was done: %s", i,
               r.reason ? r.reason : "(null)");
        free(got);
        kevo__llm_revision_result_free(&r);
    }
    kevo__llm_buf_free(&big);

    /* The original's sections first, in its order; a conventional section
     * may be added. */
    llm_revision_result r;
    const char *two = "```json\n{\"analysis\": \"A.\", \"pitfalls\": \"P.\", "
                      "\"strategy\": \"S.\"}\n```";
    is_int(kevo__llm_revision_parse(two, strlen(two), orig, 2, &r),
           LLM_REVISION_OK, "a section added");
    char *got = sections_text(&r);
    is_str(got, "{\"strategy\":\"S.\",\"pitfalls\":\"P.\",\"analysis\":\"A.\"}",
           "in the original's order, then the new one");
    free(got);
    is_int(r.changed, 3, "three sections changed or added");
    kevo__llm_revision_result_free(&r);
    /* A prompt with a section called "sections" is read as it is. */
    const kevo_operator_text odd[] = {{"sections", "S"}};
    const char *odd_reply = "```json\n{\"sections\": \"T\"}\n```";
    is_int(kevo__llm_revision_parse(odd_reply, strlen(odd_reply), odd, 1, &r),
           LLM_REVISION_OK, "a section named sections");
    got = sections_text(&r);
    is_str(got, "{\"sections\":\"T\"}", "is kept");
    free(got);
    kevo__llm_revision_result_free(&r);
    char nul[] = "```json\n{\"strategy\": \"a\0b\"}\n```";
    is_int(kevo__llm_revision_parse(nul, sizeof(nul) - 1, orig, 2, &r),
           LLM_REVISION_MALFORMED, "a NUL byte in the JSON");
    kevo__llm_revision_result_free(&r);
    is_str(kevo__llm_revision_kind_name((llm_revision_kind)99), "unknown",
           "an unknown kind's name");
}

static void test_revision_prompt(void)
{
    const kevo_operator_text sections[] = {{"strategy", "Go wide."},
                                           {"pitfalls", "Mind the tail."}};
    kevo_prompt_record record = {.size = sizeof record,
                                 .uses = 12,
                                 .children = 10,
                                 .entered = 4,
                                 .beat_parent = 3,
                                 .best_fitness = 0.75,
                                 .best_child = 41,
                                 .worst_fitness = NAN,
                                 .mean = 0.4,
                                 .revisions = 1};
    llm_revision_input in = {
        .task_name = "saxpy",
        .task_description = "z = a x + y",
        .task_args = "x: f32 buffer, in, count n\n",
        .prompt_name = "wide",
        .sections = sections,
        .n_sections = 2,
        .record = &record,
        .best = {"__global__ void best_kernel() {}\n",
                 "{\"fitness\": 0.75, \"held_out\": {\"fitness\": 0.2}}", NULL,
                 NULL},
        .worst = {"__global__ void worst_kernel() {}\n",
                  "{\"fitness\": 0, \"verdict\": \"wrong\"}", NULL, NULL},
        .max_log_lines = 5,
    };
    char *system = NULL, *user = NULL, err[256];
    ok(kevo__llm_revision_prompt_build(&in, &system, &user, err, sizeof(err)),
       "the revision prompt builds");
    like_str(system, "guidance", "the system text explains the job");
    like_str(user, "# Task: saxpy", "task name");
    like_str(user, "x: f32 buffer", "argument list");
    like_str(user, "# The guidance to revise: \"wide\"", "the prompt's name");
    like_str(user, "## Strategy\nGo wide.", "a section");
    like_str(user, "```json\n{\n  \"strategy\": \"Go wide.\"",
             "the sections as JSON");
    like_str(user, "- chosen for 12 requests", "uses");
    like_str(user,
             "- 10 children credited to it: 4 entered the archive (40%), 3 "
             "beat their parent (30%)",
             "children, entered, beat");
    like_str(user, "- best child: fitness 0.75", "best fitness");
    like_str(user, "- worst child: fitness none", "no worst fitness");
    like_str(user, "- estimated chance that a child succeeds: 0.40", "mean");
    like_str(user, "- handed out for revision 1 times", "revisions");
    ok(!strstr(user, "held_out") && !strstr(user, "0.1\n") &&
           !strstr(user, "0.2"),
       "held-out keys never appear");
    like_str(user,
             "# Its best child (fitness 0.75)\n```cuda\n__global__ void "
             "best_kernel",
             "the best child's source");
    like_str(user, "# Its worst child (fitness 0)", "the worst child");
    like_str(user, "Its evaluation: FAILED (wrong)", "with its evaluation");
    like_str(user, "starts with ```json and ends with ```", "the reply format");
    const char *first = strstr(user, "```json\n");
    ok(first && !strstr(first + 1, "```json\n"),
       "one ```json block in the prompt");
    free(system);
    free(user);

    in.n_sections = 0;
    ok(!kevo__llm_revision_prompt_build(&in, &system, &user, err, sizeof(err)),
       "a prompt without sections is refused");
    like_str(err, "has no section", "why");
}

/* ---- meta-prompt revision through the plugin ---------------------------- */

/* Submits a request for one child with prompt_json and its prompt id. */
static uint64_t submit_prompt(kevo_operator *op, const char *prompt_json,
                              uint64_t prompt_id)
{
    kevo_operator_request req = {
        .size = sizeof(req),
        .parent = parent,
        .parent_summary_json = "{\"fitness\": 0.31}",
        .prompt_json = prompt_json,
        .prompt_id = (int64_t)prompt_id,
        .n_children = 1,
    };
    uint64_t id = 0;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_operator_submit(op, &req, &id, &err) != KEVO_OK)
        bail_out("submit: %s", err.text);
    return id;
}

static uint64_t revise(kevo_operator *op, const char *sections)
{
    kevo_operator_revision rev = {.size = sizeof(rev)};
    rev.prompt_id = 1;
    rev.sections_json = sections;
    uint64_t id = 0;
    kevo_error err;
    kevo_error_init(&err);
    if (kevo_operator_revise(op, &rev, &id, &err) != KEVO_OK)
        bail_out("revise: %s", err.text);
    return id;
}

/* The "child number N" line of a child's source, in a static buffer. */
static const char *rev_marker(const char *source)
{
    static char line[2][64];
    static int k;
    const char *m = source ? strstr(source, "child number ") : NULL;
    if (!m)
        return NULL;
    k = !k;
    snprintf(line[k], sizeof(line[k]), "%.*s", (int)strcspn(m, "\n"), m);
    return line[k];
}

/* The tokens the server reported in its replies since its last reset. */
static void server_tokens(uint64_t *in, uint64_t *out)
{
    *in = *out = 0;
    for (size_t i = 0; i < loopback_count(srv); i++) {
        const loopback_request *q = loopback_get(srv, i);
        *in += (uint64_t)q->input_tokens;
        *out += (uint64_t)q->output_tokens;
    }
}

static void test_revision_loop(void)
{
    kevo_error err;
    kevo_error_init(&err);
    char path[4096];
    kevo_task *t = NULL;
    snprintf(path, sizeof(path), "%s/examples/tasks/saxpy.json", tap_srcdir());
    if (kevo_task_load(path, &t, &err) != KEVO_OK)
        bail_out("%s", err.text);
    task = t;
    parent = kevo_task_seed(task);
    char run[] = "/tmp/kevo-test-llm-rev-XXXXXX";
    if (!mkdtemp(run))
        bail_out("mkdtemp failed");
    kevo__llm_buf_free(&host_log);
    if (kevo_operator_host_new(task, 43, &host, &err) != KEVO_OK ||
        kevo_operator_host_set_log(host, KEVO_LOG_DEBUG, on_log, NULL, &err) !=
            KEVO_OK ||
        kevo_operator_host_set_run_dir(host, run, &err) != KEVO_OK)
        bail_out("host: %s", err.text);
    kevo_operator *op = make_op("llm_rev", "", 10, 2);
    ok(kevo_operator_can_revise(op), "the llm operator revises prompts");
    is_str(kevo_operator_plugin(op)->version, "1.3", "its version");

    /* A pool of the shipped seed prompts. */
    kevo_promptpool *pool = NULL;
    size_t loaded = 0;
    snprintf(path, sizeof(path), "%s/prompts", tap_srcdir());
    if (kevo_promptpool_new(16, &pool, &err) != KEVO_OK ||
        kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_EVERY, 6, &err) ||
        kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_MIN_USES, 2, &err) ||
        kevo_promptpool_set(pool, KEVO_PROMPTPOOL_REVISE_MIN_AGE, 0, &err) ||
        kevo_promptpool_load_dir(pool, path, &loaded, &err) != KEVO_OK)
        bail_out("prompt pool: %s", err.text);
    ok(loaded >= 3, "the seed prompts load (%zu)", loaded);
    kevo_rng *rng = kevo_rng_new(11, "prompts");

    /* Children, each credited to the prompt chosen for it, until a
     * revision is due. */
    char *child_text = kernel_reply("child number @SEQ@");
    loopback_set_text(srv, "childseq", child_text);
    free(child_text);
    loopback_reset(srv);
    loopback_script(srv, "childseq,childseq,childseq,childseq,childseq,"
                         "childseq,childseq,childseq,childseq,childseq");
    enum { NCH = 10 };
    char *sources[NCH] = {0};
    uint64_t due = KEVO_PROMPT_NONE;
    kevo_prompt_record record = {.size = sizeof(record)};
    int credited = 0, children = 0;
    for (int i = 0; i < NCH && due == KEVO_PROMPT_NONE; i++) {
        uint64_t pid = 0;
        char *pj = NULL;
        if (kevo_promptpool_choose(pool, rng, &pid, &err) != KEVO_OK ||
            kevo_promptpool_prompt_json(pool, pid, &pj, &err) != KEVO_OK)
            bail_out("prompt pool: %s", err.text);
        outcome o = {0};
        o.id = submit_prompt(op, pj, pid);
        free(pj);
        wait_all(&o, 1);
        children += o.nchildren == 1;
        sources[i] = o.child;
        o.child = NULL;
        /* Fitness rises with i; every other child enters the archive. */
        double fitness = 0.1 + 0.05 * i;
        unsigned flags = (i % 2 == 0 ? KEVO_PROMPT_ENTERED : 0) |
                         (i % 3 == 0 ? KEVO_PROMPT_BEAT_PARENT : 0);
        credited += kevo_promptpool_credit(pool, pid, flags, fitness,
                                           (uint64_t)i + 1, &err) == KEVO_OK;
        outcome_free(&o);
        if (kevo_promptpool_revision_due(pool, &due, &record, &err) != KEVO_OK)
            bail_out("revision_due: %s", err.text);
    }
    is_int(children, credited, "every request gave a child, credited");
    ok(due != KEVO_PROMPT_NONE, "a revision came due after %d uses", credited);
    if (due == KEVO_PROMPT_NONE)
        bail_out("no revision due");
    ok(record.uses >= 2 && record.children == record.uses,
       "its record: %llu uses", (unsigned long long)record.uses);
    ok(record.best_child >= 1 && record.best_child <= NCH &&
           record.worst_child >= 1 && record.worst_child <= NCH &&
           record.best_child != record.worst_child,
       "a best and a worst child");

    /* The revision, through the llm operator: the server answers it by
     * adding a sentence to each section. */
    loopback_script(srv, "revise");
    char *whole = NULL;
    kevo_promptpool_prompt_json(pool, due, &whole, NULL);
    char best_summary[64], worst_summary[64];
    snprintf(best_summary, sizeof(best_summary), "{\"fitness\": %g}",
             record.best_fitness);
    snprintf(worst_summary, sizeof(worst_summary), "{\"fitness\": %g}",
             record.worst_fitness);
    kevo_operator_revision rev = {.size = sizeof(rev)};
    rev.prompt_id = (int64_t)due;
    rev.sections_json = whole;
    rev.record = &record;
    rev.best_source = sources[record.best_child - 1];
    rev.best_summary_json = best_summary;
    rev.worst_source = sources[record.worst_child - 1];
    rev.worst_summary_json = worst_summary;
    outcome ro = {0};
    is_int(kevo_operator_revise(op, &rev, &ro.id, &err), KEVO_OK,
           "the revision request is taken");
    free(whole);
    wait_all(&ro, 1);
    ok(ro.ended, "the revision ended");
    is_int(ro.nprompts, 1, "with a revised prompt");
    is_int(ro.nfailures, 0, "and no failure");
    like_str(ro.prompt, "{\"sections\":{", "in the pool's form");
    like_str(ro.prompt_note, "alpha", "noted with its model");

    long qi = find_request("# Its record");
    ok(qi >= 0, "the revision request reached the server");
    if (qi >= 0) {
        const loopback_request *q = loopback_get(srv, (size_t)qi);
        char line[128];
        snprintf(line, sizeof(line), "chosen for %llu requests",
                 (unsigned long long)record.uses);
        ok(strstr(q->body, line) != NULL, "it shows the uses: %s", line);
        snprintf(line, sizeof(line), "best child: fitness %.4g",
                 record.best_fitness);
        ok(strstr(q->body, line) != NULL, "the best fitness");
        /* The children's marker lines, as the server numbered them. */
        const char *best = rev_marker(sources[record.best_child - 1]);
        const char *worst = rev_marker(sources[record.worst_child - 1]);
        const char *b1 = strstr(q->body, "# Its best child");
        const char *w1 = strstr(q->body, "# Its worst child");
        ok(b1 && w1 && best && worst && strstr(b1, best) && strstr(w1, worst) &&
               (size_t)(w1 - b1) > strlen(best),
           "the best and the worst child side by side (%s, %s)",
           best ? best : "?", worst ? worst : "?");
        ok(strstr(q->body, KEY) == NULL, "the key is not in the body");
    }

    uint64_t revised = 0, evicted = 0;
    int added = 0;
    is_int(kevo_promptpool_add_json(pool, due, ro.prompt, "llm", &revised,
                                    &added, &evicted, &err),
           KEVO_OK, "the revised prompt joins the pool");
    is_int(added, 1, "as a new prompt");
    is_uint(kevo_promptpool_parent(pool, revised), due, "its parent");
    is_uint(kevo_promptpool_generation(pool, revised),
            kevo_promptpool_generation(pool, due) + 1, "its generation");
    is_str(kevo_promptpool_name(pool, revised), kevo_promptpool_name(pool, due),
           "its name, from its parent");
    is_uint(kevo_promptpool_section_count(pool, revised),
            kevo_promptpool_section_count(pool, due), "the same sections");
    int revised_sections = 0;
    for (size_t i = 0; i < kevo_promptpool_section_count(pool, revised); i++) {
        const char *name = kevo_promptpool_section_name(pool, revised, i);
        const char *text = kevo_promptpool_section(pool, revised, name);
        const char *was = kevo_promptpool_section(pool, due, name);
        revised_sections += text && was &&
                            strstr(text, "Revised by the "
                                         "loopback server") &&
                            strncmp(text, was, strlen(was)) == 0;
    }
    is_int(revised_sections, (int)kevo_promptpool_section_count(pool, due),
           "each section revised");
    uint64_t chosen = 0;
    kevo_promptpool_choose(pool, rng, &chosen, &err);
    ok(chosen != KEVO_PROMPT_NONE, "the pool chooses on");
    outcome_free(&ro);

    /* Usage reached the host: what the server counted. */
    uint64_t in = 0, out = 0, sin = 0, sout = 0;
    double cost = 0;
    kevo_operator_usage(op, &in, &out, &cost);
    server_tokens(&sin, &sout);
    ok(in == sin && out == sout && in > 0,
       "the host counts the tokens the server reported (%llu, %llu)",
       (unsigned long long)in, (unsigned long long)out);
    ok(cost > 0, "and their cost (%g)", cost);
    uint64_t hin = 0;
    kevo_operator_host_usage(host, &hin, NULL, NULL);
    is_uint(hin, in, "the host's total");

    /* Failures: each a logged failure with a kind and a reason. */
    llm_buf huge = {0};
    kevo__llm_buf_puts(&huge, "```json\n{\"strategy\": \"");
    while (huge.len < KEVO_PROMPT_TEXT_MAX + 100)
        kevo__llm_buf_puts(&huge, "Words and words and words and words and "
                                  "words, and more words. ");
    kevo__llm_buf_puts(&huge, "\", \"pitfalls\": \"p\"}\n```\n");
    loopback_set_text(srv, "rev_huge", huge.data);
    kevo__llm_buf_free(&huge);
    loopback_set_text(srv, "rev_nojson", "I would keep it as it is.");
    loopback_set_text(srv, "rev_malformed",
                      "```json\n{\"strategy\": \"x\",\n```\n");
    loopback_set_text(srv, "rev_cut", "Sure.\n```json\n{\"strategy\": \"Go");
    loopback_set_text(srv, "rev_missing",
                      "```json\n{\"strategy\": \"Go wider.\"}\n```\n");
    loopback_set_text(srv, "rev_unknown",
                      "```json\n{\"strategy\": \"a\", \"pitfalls\": \"b\", "
                      "\"poetry\": \"c\"}\n```\n");
    loopback_set_text(srv, "rev_same",
                      "```json\n{\"strategy\": \"[[kevo-loopback:r9:rev_same]] "
                      "Go.\", \"pitfalls\": \"Mind the tail.\"}\n```\n");
    struct {
        const char *key, *behaviour;
        const char *kind, *needle; /* kind NULL: a prompt */
    } cases[] = {
        {"r1", "rev_nojson", KEVO_FAIL_PARSE, "no_json"},
        {"r2", "rev_malformed", KEVO_FAIL_PARSE, "malformed"},
        {"r3", "rev_cut", KEVO_FAIL_PARSE, "truncated"},
        {"r4", "rev_missing", KEVO_FAIL_INVALID,
         "missing_section: the reply leaves out the section 'pitfalls'"},
        {"r5", "rev_unknown", KEVO_FAIL_INVALID,
         "unknown_section: the reply has a section 'poetry'"},
        {"r6", "rev_huge", KEVO_FAIL_INVALID, "too_large"},
        {"r7", "500", KEVO_FAIL_HTTP, "after 3 attempts"},
        {"r8", "revise:wrapped", NULL, "Revised by the loopback server"},
        {"r9", "rev_same", KEVO_FAIL_INVALID, "unchanged"},
        {"r10", "revise:twice", NULL, "Revised by the loopback server"},
        {"r11", "revise", NULL, "Revised by the loopback server"},
    };
    enum { NR = sizeof(cases) / sizeof(cases[0]) };
    outcome outs[NR];
    memset(outs, 0, sizeof(outs));
    for (size_t i = 0; i < NR; i++) {
        char sections[256];
        snprintf(sections, sizeof(sections),
                 "{\"strategy\": \"[[kevo-loopback:%s:%s]] Go.\", "
                 "\"pitfalls\": \"Mind the tail.\"}",
                 cases[i].key, cases[i].behaviour);
        outs[i].id = revise(op, sections);
    }
    wait_all(outs, NR);
    for (size_t i = 0; i < NR; i++) {
        ok(outs[i].ended, "revision %s ended", cases[i].key);
        if (!cases[i].kind) {
            is_int(outs[i].nprompts, 1, "revision %s (%s): a prompt",
                   cases[i].key, cases[i].behaviour);
            like_str(outs[i].prompt, cases[i].needle, "revision %s: revised",
                     cases[i].key);
            continue;
        }
        is_int(outs[i].nprompts, 0, "revision %s (%s): no prompt", cases[i].key,
               cases[i].behaviour);
        is_str(outs[i].kind, cases[i].kind, "revision %s: kind", cases[i].key);
        like_str(outs[i].reason, cases[i].needle, "revision %s: reason",
                 cases[i].key);
    }
    like_str(outs[8].reason, "the reply gives the prompt back unchanged",
             "an unchanged prompt is caught before the host sees it");
    like_str(host_log.data,
             "failed (invalid): the reply gave no revised prompt",
             "a failed revision is logged");
    like_str(host_log.data, "a revised prompt from", "a revision is logged");

    /* A budget stops revisions too. */
    kevo_operator *cheap =
        make_op("llm_rev_cheap", ", \"token_budget\": 10", 10, 2);
    outcome bo[2];
    memset(bo, 0, sizeof(bo));
    bo[0].id = revise(cheap, "{\"strategy\": \"[[kevo-loopback:rb0:revise]] "
                             "Go.\"}");
    wait_all(bo, 1);
    size_t before = loopback_count(srv);
    bo[1].id = revise(cheap, "{\"strategy\": \"[[kevo-loopback:rb1:revise]] "
                             "Go.\"}");
    wait_all(bo, 2);
    is_int(bo[0].nprompts, 1, "within the budget: a revision");
    is_str(bo[1].kind, KEVO_FAIL_BUDGET, "over the budget: a budget failure");
    is_int(loopback_count(srv), before, "over the budget: nothing sent");
    outcome_free(&bo[0]);
    outcome_free(&bo[1]);

    kevo_operator_host_free(host);
    host = NULL;
    like_str(host_log.data, "revisions, ", "the summary counts revisions");

    /* The run directory: revision requests and replies, keys redacted. */
    int files = 0, hits = 0, dummy = 0, kinds = 0, prompts = 0;
    char dir[sizeof(run) + 8];
    snprintf(dir, sizeof(dir), "%s/llm", run);
    scan_dir(dir, "\"kind\": \"revision\"", &dummy, &kinds, NULL, NULL);
    ok(kinds >= 2 * (NR + 2), "revision requests and replies saved (%d)",
       kinds);
    scan_dir(dir, "\"prompt\": {", &dummy, &prompts, NULL, NULL);
    is_int(prompts, 5, "each revised prompt saved with its reply");
    scan_dir(run, KEY, &files, &hits, NULL, NULL);
    ok(files > 20, "the run directory has the llm files (%d)", files);
    is_int(hits, 0, "no file in the run directory holds the key");
    int named = 0;
    scan_dir(dir, "\"instance\": \"llm_rev_cheap\"", &dummy, &named, NULL,
             NULL);
    is_int(named, 1, "an instance file names its instance");

    for (size_t i = 0; i < NR; i++)
        outcome_free(&outs[i]);
    for (int i = 0; i < NCH; i++)
        free(sources[i]);
    kevo_rng_free(rng);
    kevo_promptpool_free(pool);
    if (getenv("KEVO_TEST_KEEP"))
        diag("run directory kept: %s", run);
    else
        remove_tree(run);
    kevo_task_free(t);
    kevo__llm_buf_free(&host_log);
}

int main(void)
{
    const char *builddir = getenv("KEVO_BUILDDIR");
    srv = loopback_start();
    if (!srv)
        bail_out("the loopback server did not start");
    diag("loopback server at %s", loopback_url(srv));
    test_config();
    test_wire();
    test_revision_parse();
    test_revision_prompt();
    test_engine();
    test_plugin(builddir && *builddir ? builddir : ".");
    test_revision_loop();
    loopback_stop(srv);
    return done_testing();
}

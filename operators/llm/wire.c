/*
 * wire.c: the llm operator's configuration: its models, the settings of
 * each model's requests, and the operator's limits.
 */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wire.h"

/* Anthropic's least thinking budget. */
#define THINKING_MIN 1024

static const char *const global_keys[] = {
    "models",          "concurrency",   "max_retries",
    "backoff_base_s",  "backoff_max_s", "retry_after_max_s",
    "max_reply_bytes", "token_budget",  "cost_budget",
    "reply_format",    "max_log_lines", "max_inspirations"};

static const char *const model_keys[] = {"name",
                                         "api",
                                         "base_url",
                                         "model",
                                         "key_env",
                                         "temperature",
                                         "top_p",
                                         "max_tokens",
                                         "token_param",
                                         "reasoning_effort",
                                         "thinking_budget",
                                         "headers",
                                         "extra_body",
                                         "stream",
                                         "timeout_s",
                                         "idle_timeout_s",
                                         "weight",
                                         "input_cost_per_mtok",
                                         "output_cost_per_mtok",
                                         "transport",
                                         "dir",
                                         "batch_max_requests",
                                         "batch_gather_s",
                                         "poll_interval_s",
                                         "batch_wait_s",
                                         "batch_cost_factor"};

/* The keys of the batch transport alone. */
static const char *const batch_keys[] = {"batch_max_requests", "batch_gather_s",
                                         "poll_interval_s", "batch_wait_s",
                                         "batch_cost_factor"};

const char *kevo__llm_api_name(llm_api api)
{
    return api == LLM_API_ANTHROPIC ? "anthropic" : "openai";
}

/* A parse in progress: where errors go. */
typedef struct cfg_parse {
    char *err;
    size_t errlen;
} cfg_parse;

static bool fail(cfg_parse *p, const char *path, const char *fmt, ...)
    LLM_PRINTF(3, 4);

static bool fail(cfg_parse *p, const char *path, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    kevo__llm_errf(p->err, p->errlen, "llm config: %s: %s", path, msg);
    return false;
}

static bool check_keys(cfg_parse *p, const char *path, json_t *obj,
                       const char *const *known, size_t nknown)
{
    const char *key;
    json_t *v;
    json_object_foreach (obj, key, v) {
        bool found = false;
        for (size_t i = 0; i < nknown && !found; i++)
            found = strcmp(key, known[i]) == 0;
        if (!found) {
            llm_buf b = {0};
            for (size_t i = 0; i < nknown; i++)
                kevo__llm_buf_printf(&b, "%s%s", i ? ", " : "", known[i]);
            bool r = fail(p, path, "unknown key \"%s\" (known keys: %s)", key,
                          b.data ? b.data : "");
            kevo__llm_buf_free(&b);
            return r;
        }
    }
    return true;
}

/* A number at obj.key within [lo, hi], or def when absent. */
static bool get_num(cfg_parse *p, const char *path, json_t *obj,
                    const char *key, double lo, double hi, double def,
                    double *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v) {
        *out = def;
        return true;
    }
    if (!json_is_number(v))
        return fail(p, path, "\"%s\" must be a number", key);
    double d = json_number_value(v);
    if (!(d >= lo && d <= hi))
        return fail(p, path, "\"%s\" is %g, outside [%g, %g]", key, d, lo, hi);
    *out = d;
    return true;
}

static bool get_int(cfg_parse *p, const char *path, json_t *obj,
                    const char *key, long long lo, long long hi, long long def,
                    long long *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v) {
        *out = def;
        return true;
    }
    if (!json_is_integer(v))
        return fail(p, path, "\"%s\" must be an integer", key);
    long long i = json_integer_value(v);
    if (i < lo || i > hi)
        return fail(p, path, "\"%s\" is %lld, outside [%lld, %lld]", key, i, lo,
                    hi);
    *out = i;
    return true;
}

/* A string at obj.key (a new copy in *out), def (copied; may be NULL) when
 * absent. */
static bool get_str(cfg_parse *p, const char *path, json_t *obj,
                    const char *key, const char *def, char **out)
{
    json_t *v = json_object_get(obj, key);
    const char *s = def;
    if (v) {
        if (!json_is_string(v))
            return fail(p, path, "\"%s\" must be a string", key);
        s = json_string_value(v);
        if (!*s)
            return fail(p, path, "\"%s\" must not be empty", key);
    }
    *out = NULL;
    if (s && !(*out = kevo__llm_strdup(s)))
        return fail(p, path, "out of memory");
    return true;
}

static bool is_env_name(const char *s)
{
    if (!*s)
        return false;
    for (const char *c = s; *c; c++) {
        bool alpha =
            (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || *c == '_';
        if (!alpha && !(c > s && *c >= '0' && *c <= '9'))
            return false;
    }
    return true;
}

/* A secret's value from the environment variable env (into *out, a new
 * string); what names it is said in what. */
static bool env_secret(cfg_parse *p, const char *path, const char *what,
                       const char *env, const char *(*getenv_fn)(const char *),
                       char **out)
{
    if (!is_env_name(env))
        return fail(p, path,
                    "%s must name an environment variable (letters, "
                    "digits, _), not hold a secret",
                    what);
    const char *v = getenv_fn(env);
    if (!v || !*v)
        return fail(p, path, "the environment variable %s (its %s) is not set",
                    env, what);
    for (const char *c = v; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return fail(p, path, "the value of %s holds a control character",
                        env);
    if (!(*out = kevo__llm_strdup(v)))
        return fail(p, path, "out of memory");
    return true;
}

/* Whether a header's name says its value is a credential. */
static bool secret_header(const char *name)
{
    static const char *const parts[] = {
        "auth", "key", "token", "secret", "cookie", "password", "session"};
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        for (const char *c = name; *c; c++)
            if (strncasecmp(c, parts[i], strlen(parts[i])) == 0)
                return true;
    return false;
}

/* An HTTP header name: one or more token characters (RFC 9110). */
static bool is_token(const char *s)
{
    if (!*s)
        return false;
    for (const char *c = s; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("!#$%&'*+-.^_`|~", *c))
            return false;
    return true;
}

/* "headers": {"Name": "value" or {"env": "VARIABLE"}, ...}. */
static bool parse_headers(cfg_parse *p, const char *path, json_t *obj,
                          llm_model *m, const char *(*getenv_fn)(const char *))
{
    json_t *hs = json_object_get(obj, "headers");
    if (!hs)
        return true;
    if (!json_is_object(hs))
        return fail(p, path,
                    "\"headers\" must be an object of header names and "
                    "values");
    m->headers = calloc(json_object_size(hs) + 1, sizeof(*m->headers));
    if (!m->headers)
        return fail(p, path, "out of memory");
    const char *name;
    json_t *v;
    json_object_foreach (hs, name, v) {
        char what[128];
        snprintf(what, sizeof(what), "\"headers\".\"%.64s\"", name);
        if (!is_token(name))
            return fail(p, path, "%s: not a valid header name", what);
        llm_header *h = &m->headers[m->nheaders];
        if (!(h->name = kevo__llm_strdup(name)))
            return fail(p, path, "out of memory");
        m->nheaders++;
        json_t *env = json_object_get(v, "env");
        if (json_is_object(v) && json_object_size(v) == 1 &&
            json_is_string(env)) {
            h->secret = true;
            if (!env_secret(p, path, what, json_string_value(env), getenv_fn,
                            &h->value))
                return false;
            continue;
        }
        if (!json_is_string(v))
            return fail(p, path,
                        "%s must be a string, or {\"env\": \"VARIABLE\"}",
                        what);
        for (const char *c = json_string_value(v); *c; c++)
            if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f)
                return fail(p, path, "%s holds a control character", what);
        h->secret = secret_header(name);
        if (!(h->value = kevo__llm_strdup(json_string_value(v))))
            return fail(p, path, "out of memory");
    }
    return true;
}

bool kevo__llm_reasoning_model(const char *model)
{
    const char *slash = strrchr(model, '/');
    const char *n = slash ? slash + 1 : model;
    if ((n[0] == 'o' || n[0] == 'O') && isdigit((unsigned char)n[1]))
        return true;
    return strncasecmp(n, "gpt-5", 5) == 0;
}

/* The settings of a model's requests beyond the basic ones. */
static bool parse_request_settings(cfg_parse *p, const char *path, json_t *obj,
                                   llm_model *m)
{
    bool anthropic = m->api == LLM_API_ANTHROPIC;
    json_t *tp = json_object_get(obj, "token_param");
    m->token_param = !anthropic && kevo__llm_reasoning_model(m->model)
                         ? "max_completion_tokens"
                         : "max_tokens";
    if (tp) {
        const char *t = json_is_string(tp) ? json_string_value(tp) : "";
        if (strcmp(t, "max_tokens") == 0)
            m->token_param = "max_tokens";
        else if (strcmp(t, "max_completion_tokens") == 0 && !anthropic)
            m->token_param = "max_completion_tokens";
        else
            return fail(p, path,
                        anthropic ? "\"token_param\" must be \"max_tokens\" "
                                    "(the only one Anthropic knows)"
                                  : "\"token_param\" must be \"max_tokens\" "
                                    "or \"max_completion_tokens\"");
    }
    json_t *re = json_object_get(obj, "reasoning_effort");
    if (re) {
        const char *e = json_is_string(re) ? json_string_value(re) : "";
        bool word = *e != '\0';
        for (const char *c = e; *c; c++)
            word = word && (isalnum((unsigned char)*c) || *c == '_');
        if (!word)
            return fail(p, path,
                        "\"reasoning_effort\" must be a word such as "
                        "\"low\", \"medium\" or \"high\"");
        if (!(m->reasoning_effort = kevo__llm_strdup(e)))
            return fail(p, path, "out of memory");
    }
    json_t *eb = json_object_get(obj, "extra_body");
    if (eb) {
        if (!json_is_object(eb))
            return fail(p, path, "\"extra_body\" must be a JSON object");
        m->extra_body = json_deep_copy(eb);
        if (!m->extra_body)
            return fail(p, path, "out of memory");
    }
    json_t *st = json_object_get(obj, "stream");
    if (st && !json_is_boolean(st))
        return fail(p, path, "\"stream\" must be true or false");
    m->stream = st ? json_is_true(st) : !m->files && !m->batch;
    if ((m->files || m->batch) && m->stream)
        return fail(p, path,
                    "\"stream\" must be false with \"transport\": "
                    "\"%s\": %s",
                    m->files ? "files" : "batch",
                    m->files ? "a reply file holds the whole reply"
                             : "a batch's results are whole replies");

    long long budget;
    if (!get_int(p, path, obj, "thinking_budget", THINKING_MIN, 1000000, 0,
                 &budget))
        return false;
    m->thinking_budget = (long)budget;
    if (budget && !anthropic)
        return fail(p, path,
                    "\"thinking_budget\" is Anthropic's extended thinking; "
                    "an OpenAI-compatible model takes \"reasoning_effort\", "
                    "or its server's own fields in \"extra_body\"");
    if (budget && budget >= m->max_tokens)
        return fail(p, path,
                    "\"thinking_budget\" (%lld) must be below \"max_tokens\" "
                    "(%ld): thinking counts against max_tokens",
                    budget, m->max_tokens);
    if (budget && m->has_temperature && m->temperature != 1)
        return fail(p, path,
                    "\"temperature\" must be left out (or 1) with "
                    "\"thinking_budget\": Anthropic allows no other with "
                    "extended thinking");
    if (budget && m->has_top_p && m->top_p < 0.95)
        return fail(p, path,
                    "\"top_p\" must be at least 0.95 with "
                    "\"thinking_budget\" (Anthropic's rule)");
    return true;
}

/* "transport", "dir" and the batch transport's settings. */
static bool parse_transport(cfg_parse *p, const char *path, json_t *obj,
                            llm_model *m)
{
    json_t *tr = json_object_get(obj, "transport");
    if (tr && !json_is_string(tr))
        return fail(p, path, "\"transport\" must be a string");
    const char *t = tr ? json_string_value(tr) : "http";
    m->files = strcmp(t, "files") == 0;
    m->batch = strcmp(t, "batch") == 0;
    if (!m->files && !m->batch && strcmp(t, "http") != 0)
        return fail(p, path,
                    "\"transport\" is \"%s\"; it must be \"http\", "
                    "\"batch\" or \"files\"",
                    t);
    if (!get_str(p, path, obj, "dir", NULL, &m->dir))
        return false;
    if (m->files && (!m->dir || !m->dir[0]))
        return fail(p, path,
                    "\"transport\": \"files\" needs \"dir\", the "
                    "directory of the request and reply files");
    if (!m->files && !m->batch && m->dir)
        return fail(p, path,
                    "\"dir\" is for \"transport\": \"files\" or "
                    "\"batch\" only");
    for (size_t i = 0; !m->batch && i < LLM_ARRAY_SIZE(batch_keys); i++)
        if (json_object_get(obj, batch_keys[i]))
            return fail(p, path, "\"%s\" is for \"transport\": \"batch\" only",
                        batch_keys[i]);
    long long max_requests;
    if (!get_int(p, path, obj, "batch_max_requests", 1, 50000, 1000,
                 &max_requests) ||
        !get_num(p, path, obj, "batch_gather_s", 0, 86400, 0,
                 &m->batch_gather_s) ||
        !get_num(p, path, obj, "poll_interval_s", 0.001, 3600, 30,
                 &m->poll_interval_s) ||
        !get_num(p, path, obj, "batch_wait_s", 0, 86400, 600,
                 &m->batch_wait_s) ||
        !get_num(p, path, obj, "batch_cost_factor", 0, 10, 0.5,
                 &m->batch_cost_factor))
        return false;
    m->batch_max_requests = (size_t)max_requests;
    return true;
}

static bool parse_model(cfg_parse *p, size_t index, json_t *obj, llm_model *m,
                        const char *(*getenv_fn)(const char *))
{
    char path[64];
    snprintf(path, sizeof(path), "models[%zu]", index);
    if (!json_is_object(obj))
        return fail(p, path, "must be an object");
    if (!check_keys(p, path, obj, model_keys,
                    sizeof(model_keys) / sizeof(model_keys[0])))
        return false;

    json_t *api = json_object_get(obj, "api");
    if (!api)
        return fail(p, path,
                    "\"api\" is required (\"openai\" or "
                    "\"anthropic\")");
    if (!json_is_string(api))
        return fail(p, path, "\"api\" must be a string");
    if (strcmp(json_string_value(api), "openai") == 0)
        m->api = LLM_API_OPENAI;
    else if (strcmp(json_string_value(api), "anthropic") == 0)
        m->api = LLM_API_ANTHROPIC;
    else
        return fail(p, path,
                    "\"api\" is \"%s\"; it must be \"openai\" or "
                    "\"anthropic\"",
                    json_string_value(api));

    if (!json_object_get(obj, "model"))
        return fail(p, path, "\"model\" is required");
    const char *def_base = m->api == LLM_API_ANTHROPIC
                               ? "https://api.anthropic.com"
                               : "https://api.openai.com/v1";
    if (!get_str(p, path, obj, "model", NULL, &m->model) ||
        !get_str(p, path, obj, "name", m->model, &m->name) ||
        !get_str(p, path, obj, "base_url", def_base, &m->base_url) ||
        !get_str(p, path, obj, "key_env", NULL, &m->key_env))
        return false;
    size_t n = strlen(m->base_url);
    while (n > 0 && m->base_url[n - 1] == '/')
        m->base_url[--n] = '\0';
    if (strncmp(m->base_url, "http://", 7) != 0 &&
        strncmp(m->base_url, "https://", 8) != 0)
        return fail(p, path,
                    "\"base_url\" must start with http:// or "
                    "https://");

    if (!parse_transport(p, path, obj, m))
        return false;

    long long max_tokens;
    double tmax = m->api == LLM_API_ANTHROPIC ? 1.0 : 2.0;
    m->has_temperature = json_object_get(obj, "temperature") != NULL;
    m->has_top_p = json_object_get(obj, "top_p") != NULL;
    if (!get_num(p, path, obj, "temperature", 0, tmax, 1, &m->temperature) ||
        !get_num(p, path, obj, "top_p", 0, 1, 1, &m->top_p) ||
        !get_int(p, path, obj, "max_tokens", 1, 1000000, 8192, &max_tokens) ||
        !get_num(p, path, obj, "timeout_s", 0.001, 3600, 300, &m->timeout_s) ||
        !get_num(p, path, obj, "idle_timeout_s", 0.001, 3600, 600,
                 &m->idle_timeout_s) ||
        !get_num(p, path, obj, "weight", 0, 1e9, 1, &m->weight) ||
        !get_num(p, path, obj, "input_cost_per_mtok", 0, 1e9, 0,
                 &m->input_cost_per_mtok) ||
        !get_num(p, path, obj, "output_cost_per_mtok", 0, 1e9, 0,
                 &m->output_cost_per_mtok))
        return false;
    m->max_tokens = (long)max_tokens;
    if (!parse_request_settings(p, path, obj, m) ||
        !parse_headers(p, path, obj, m, getenv_fn))
        return false;
    if (m->key_env &&
        !env_secret(p, path, "\"key_env\"", m->key_env, getenv_fn, &m->key))
        return false;
    return true;
}

static const char *plain_getenv(const char *name)
{
    return getenv(name);
}

bool kevo__llm_config_parse(const char *json, llm_config *cfg,
                            const char *(*getenv_fn)(const char *name),
                            char *err, size_t errlen)
{
    cfg_parse p = {err, errlen};
    json_t *root = NULL;
    bool ok = false;
    memset(cfg, 0, sizeof(*cfg));
    if (!getenv_fn)
        getenv_fn = plain_getenv;
    if (!json || !*json) {
        fail(&p, "(root)", "no configuration: at least \"models\" is needed");
        goto done;
    }
    json_error_t jerr;
    root = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        kevo__llm_errf(err, errlen, "llm config: line %d column %d: %s",
                       jerr.line, jerr.column, jerr.text);
        goto done;
    }
    if (!json_is_object(root)) {
        fail(&p, "(root)", "must be a JSON object");
        goto done;
    }
    if (!check_keys(&p, "(root)", root, global_keys,
                    sizeof(global_keys) / sizeof(global_keys[0])))
        goto done;

    json_t *models = json_object_get(root, "models");
    if (!models || !json_is_array(models) || json_array_size(models) == 0) {
        fail(&p, "models", "must be a non-empty array of models");
        goto done;
    }
    cfg->models = calloc(json_array_size(models), sizeof(*cfg->models));
    if (!cfg->models) {
        fail(&p, "models", "out of memory");
        goto done;
    }
    double total_weight = 0;
    for (size_t i = 0; i < json_array_size(models); i++) {
        cfg->nmodels = i + 1;
        if (!parse_model(&p, i, json_array_get(models, i), &cfg->models[i],
                         getenv_fn))
            goto done;
        total_weight += cfg->models[i].weight;
    }
    if (!(total_weight > 0)) {
        fail(&p, "models", "every weight is 0: no model can be drawn");
        goto done;
    }

    long long concurrency, max_retries, max_reply, token_budget, log_lines,
        inspirations;
    if (!get_int(&p, "(root)", root, "concurrency", 1, 4096, 8, &concurrency) ||
        !get_int(&p, "(root)", root, "max_retries", 0, 100, 4, &max_retries) ||
        !get_num(&p, "(root)", root, "backoff_base_s", 0, 3600, 1,
                 &cfg->backoff_base_s) ||
        !get_num(&p, "(root)", root, "backoff_max_s", 0, 86400, 30,
                 &cfg->backoff_max_s) ||
        !get_num(&p, "(root)", root, "retry_after_max_s", 0, 86400, 120,
                 &cfg->retry_after_max_s) ||
        !get_int(&p, "(root)", root, "max_reply_bytes", 1024,
                 (long long)1 << 30, 4 << 20, &max_reply) ||
        !get_int(&p, "(root)", root, "token_budget", 0, INT64_MAX, 0,
                 &token_budget) ||
        !get_num(&p, "(root)", root, "cost_budget", 0, 1e12, 0,
                 &cfg->cost_budget) ||
        !get_int(&p, "(root)", root, "max_log_lines", 0, 10000, 40,
                 &log_lines) ||
        !get_int(&p, "(root)", root, "max_inspirations", 0, 64, 4,
                 &inspirations))
        goto done;
    if (cfg->backoff_max_s < cfg->backoff_base_s) {
        fail(&p, "(root)",
             "\"backoff_max_s\" (%g) is below \"backoff_base_s\" (%g)",
             cfg->backoff_max_s, cfg->backoff_base_s);
        goto done;
    }
    cfg->concurrency = (int)concurrency;
    cfg->max_retries = (int)max_retries;
    cfg->max_reply_bytes = (size_t)max_reply;
    cfg->token_budget = (uint64_t)token_budget;
    cfg->max_log_lines = (size_t)log_lines;
    cfg->max_inspirations = (size_t)inspirations;

    json_t *fmt = json_object_get(root, "reply_format");
    cfg->reply_format = LLM_FORMAT_EITHER;
    if (fmt) {
        const char *f = json_is_string(fmt) ? json_string_value(fmt) : "";
        if (strcmp(f, "either") == 0)
            cfg->reply_format = LLM_FORMAT_EITHER;
        else if (strcmp(f, "whole") == 0)
            cfg->reply_format = LLM_FORMAT_WHOLE;
        else if (strcmp(f, "edits") == 0)
            cfg->reply_format = LLM_FORMAT_EDITS;
        else {
            fail(&p, "(root)",
                 "\"reply_format\" must be \"either\", \"whole\" or "
                 "\"edits\"");
            goto done;
        }
    }
    ok = true;
done:
    json_decref(root);
    if (!ok)
        kevo__llm_config_free(cfg);
    return ok;
}

void kevo__llm_wipe_free(char *s)
{
    if (s) {
        volatile char *v = s;
        while (*v)
            *v++ = '\0';
        free(s);
    }
}

void kevo__llm_config_free(llm_config *cfg)
{
    for (size_t i = 0; i < cfg->nmodels; i++) {
        llm_model *m = &cfg->models[i];
        free(m->name);
        free(m->base_url);
        free(m->model);
        free(m->key_env);
        free(m->dir);
        kevo__llm_wipe_free(m->key);
        free(m->reasoning_effort);
        for (size_t k = 0; k < m->nheaders; k++) {
            free(m->headers[k].name);
            kevo__llm_wipe_free(m->headers[k].value);
        }
        free(m->headers);
        json_decref(m->extra_body);
    }
    free(cfg->models);
    memset(cfg, 0, sizeof(*cfg));
}

size_t kevo__llm_config_secrets(const llm_config *cfg, const char **secrets,
                                size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < cfg->nmodels; i++) {
        const llm_model *m = &cfg->models[i];
        if (m->key && n++ < max)
            secrets[n - 1] = m->key;
        for (size_t k = 0; k < m->nheaders; k++)
            if (m->headers[k].secret && *m->headers[k].value && n++ < max)
                secrets[n - 1] = m->headers[k].value;
    }
    return n;
}

size_t kevo__llm_config_pick(const llm_config *cfg, double u)
{
    double total = 0;
    for (size_t i = 0; i < cfg->nmodels; i++)
        total += cfg->models[i].weight;
    double x = u * total, acc = 0;
    size_t last = 0;
    for (size_t i = 0; i < cfg->nmodels; i++) {
        if (cfg->models[i].weight <= 0)
            continue;
        last = i;
        acc += cfg->models[i].weight;
        if (x < acc)
            return i;
    }
    return last;
}

bool kevo__llm_secrets_collect(const llm_config *cfg, llm_secrets *s)
{
    memset(s, 0, sizeof(*s));
    size_t max = kevo__llm_config_secrets(cfg, NULL, 0);
    s->list = calloc(2 * max + 1, sizeof(*s->list));
    s->escaped = calloc(max + 1, sizeof(*s->escaped));
    if (!s->list || !s->escaped)
        goto nomem;
    s->n = kevo__llm_config_secrets(cfg, s->list, max);
    for (size_t i = 0, n = s->n; i < n; i++) {
        /* A key that is not UTF-8 never reaches JSON text escaped. */
        json_t *j = json_string(s->list[i]);
        if (!j)
            continue;
        char *d = json_dumps(j, JSON_ENCODE_ANY);
        json_decref(j);
        if (!d)
            goto nomem;
        size_t len = strlen(d);
        if (len >= 2 && (len - 2 != strlen(s->list[i]) ||
                         memcmp(d + 1, s->list[i], len - 2) != 0)) {
            memmove(d, d + 1, len - 2);
            d[len - 2] = '\0';
            s->escaped[s->nescaped++] = d;
            s->list[s->n++] = d;
        } else {
            free(d);
        }
    }
    return true;
nomem:
    kevo__llm_secrets_free(s);
    return false;
}

void kevo__llm_secrets_free(llm_secrets *s)
{
    for (size_t i = 0; i < s->nescaped; i++)
        kevo__llm_wipe_free(s->escaped[i]);
    free(s->escaped);
    free((void *)s->list);
    memset(s, 0, sizeof(*s));
}

double kevo__llm_model_cost(const llm_model *m, uint64_t in, uint64_t out)
{
    /* A batch is billed at its own price (half, unless set). */
    double price = m->batch ? m->batch_cost_factor : 1.0;
    return ((double)in * m->input_cost_per_mtok / 1e6 +
            (double)out * m->output_cost_per_mtok / 1e6) *
           price;
}

bool kevo__llm_budget_left(const llm_config *cfg, uint64_t tokens, double cost,
                           char *why, size_t n)
{
    if (cfg->token_budget && tokens >= cfg->token_budget) {
        kevo__llm_errf(why, n,
                       "the token budget is spent: %" PRIu64 " of %" PRIu64
                       " tokens used; no new requests are sent",
                       tokens, cfg->token_budget);
        return false;
    }
    if (cfg->cost_budget > 0 && cost >= cfg->cost_budget) {
        kevo__llm_errf(why, n,
                       "the cost budget is spent: %.6g of %.6g used; no new "
                       "requests are sent",
                       cost, cfg->cost_budget);
        return false;
    }
    return true;
}

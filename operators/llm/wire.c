/*
 * wire.c: the llm operator's configuration, and the OpenAI chat-completions
 * and Anthropic messages formats: building requests, reading replies and
 * error objects.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

#define ANTHROPIC_VERSION "2023-06-01"

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
                                         "max_tokens",
                                         "timeout_s",
                                         "weight",
                                         "input_cost_per_mtok",
                                         "output_cost_per_mtok"};

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
            kevo_buf b = {0};
            for (size_t i = 0; i < nknown; i++)
                kevo__buf_printf(&b, "%s%s", i ? ", " : "", known[i]);
            bool r = fail(p, path, "unknown key \"%s\" (known keys: %s)", key,
                          b.data ? b.data : "");
            kevo__buf_free(&b);
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
    if (s && !(*out = kevo__strdup(s)))
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

    long long max_tokens;
    double tmax = m->api == LLM_API_ANTHROPIC ? 1.0 : 2.0;
    if (!get_num(p, path, obj, "temperature", 0, tmax, 0.7, &m->temperature) ||
        !get_int(p, path, obj, "max_tokens", 1, 1000000, 8192, &max_tokens) ||
        !get_num(p, path, obj, "timeout_s", 0.001, 3600, 300, &m->timeout_s) ||
        !get_num(p, path, obj, "weight", 0, 1e9, 1, &m->weight) ||
        !get_num(p, path, obj, "input_cost_per_mtok", 0, 1e9, 0,
                 &m->input_cost_per_mtok) ||
        !get_num(p, path, obj, "output_cost_per_mtok", 0, 1e9, 0,
                 &m->output_cost_per_mtok))
        return false;
    m->max_tokens = (long)max_tokens;

    if (m->key_env) {
        if (!is_env_name(m->key_env))
            return fail(p, path,
                        "\"key_env\" must name an environment variable "
                        "(letters, digits, _), not hold a key");
        const char *key = getenv_fn(m->key_env);
        if (!key || !*key)
            return fail(p, path,
                        "the environment variable %s (its \"key_env\") is "
                        "not set",
                        m->key_env);
        for (const char *c = key; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                return fail(p, path, "the key in %s holds a control character",
                            m->key_env);
        if (!(m->key = kevo__strdup(key)))
            return fail(p, path, "out of memory");
    }
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

static void wipe_free(char *s)
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
        wipe_free(m->key);
    }
    free(cfg->models);
    memset(cfg, 0, sizeof(*cfg));
}

size_t kevo__llm_config_secrets(const llm_config *cfg, const char **secrets,
                                size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < cfg->nmodels && n < max; i++)
        if (cfg->models[i].key)
            secrets[n++] = cfg->models[i].key;
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

/* ---- requests ---------------------------------------------------------- */

void kevo__llm_wire_request_free(llm_wire_request *r)
{
    free(r->url);
    for (size_t i = 0; i < r->nheaders; i++) {
        wipe_free(r->headers[i]);
        free(r->log_headers[i]);
    }
    free(r->body);
    memset(r, 0, sizeof(*r));
}

static bool add_header(llm_wire_request *r, const char *name, const char *value,
                       bool secret)
{
    char *h = NULL, *l = NULL;
    size_t n = strlen(name) + strlen(value) + 3;
    h = malloc(n);
    l = secret ? malloc(strlen(name) + strlen(LLM_REDACTED) + 3)
               : kevo__strdup("");
    if (!h || !l) {
        free(h);
        free(l);
        return false;
    }
    snprintf(h, n, "%s: %s", name, value);
    if (secret)
        sprintf(l, "%s: %s", name, LLM_REDACTED);
    else {
        free(l);
        l = kevo__strdup(h);
        if (!l) {
            wipe_free(h);
            return false;
        }
    }
    r->headers[r->nheaders] = h;
    r->log_headers[r->nheaders] = l;
    r->nheaders++;
    return true;
}

static json_t *message(const char *role, const char *content)
{
    return json_pack("{s:s, s:s}", "role", role, "content", content);
}

bool kevo__llm_wire_build(const llm_model *m, const char *system,
                          const char *user, llm_wire_request *out)
{
    json_t *body = NULL;
    bool ok = false;
    memset(out, 0, sizeof(*out));
    if (m->api == LLM_API_OPENAI) {
        out->url = malloc(strlen(m->base_url) + sizeof("/chat/completions"));
        if (out->url)
            sprintf(out->url, "%s/chat/completions", m->base_url);
        body = json_pack("{s:s, s:[o, o], s:f, s:I}", "model", m->model,
                         "messages", message("system", system),
                         message("user", user), "temperature", m->temperature,
                         "max_tokens", (json_int_t)m->max_tokens);
    } else {
        out->url = malloc(strlen(m->base_url) + sizeof("/v1/messages"));
        if (out->url)
            sprintf(out->url, "%s/v1/messages", m->base_url);
        body = json_pack("{s:s, s:s, s:[o], s:I, s:f}", "model", m->model,
                         "system", system, "messages", message("user", user),
                         "max_tokens", (json_int_t)m->max_tokens, "temperature",
                         m->temperature);
    }
    if (!out->url || !body)
        goto done;
    if (!add_header(out, "Content-Type", "application/json", false))
        goto done;
    if (m->api == LLM_API_OPENAI) {
        if (m->key) {
            size_t n = strlen(m->key) + sizeof("Bearer ");
            char *v = malloc(n);
            if (!v)
                goto done;
            snprintf(v, n, "Bearer %s", m->key);
            bool added = add_header(out, "Authorization", v, true);
            wipe_free(v);
            if (!added)
                goto done;
        }
    } else {
        if (m->key && !add_header(out, "x-api-key", m->key, true))
            goto done;
        if (!add_header(out, "anthropic-version", ANTHROPIC_VERSION, false))
            goto done;
    }
    out->body = json_dumps(body, JSON_COMPACT);
    if (!out->body)
        goto done;
    out->body_len = strlen(out->body);
    ok = true;
done:
    json_decref(body);
    if (!ok)
        kevo__llm_wire_request_free(out);
    return ok;
}

/* ---- replies ----------------------------------------------------------- */

void kevo__llm_wire_reply_free(llm_wire_reply *r)
{
    free(r->text);
    memset(r, 0, sizeof(*r));
}

static uint64_t token_count(json_t *usage, const char *key)
{
    json_t *v = json_object_get(usage, key);
    if (json_is_integer(v) && json_integer_value(v) > 0)
        return (uint64_t)json_integer_value(v);
    return 0;
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
    json_t *content = json_object_get(msg, "content");
    if (!json_is_string(content)) {
        json_t *refusal = json_object_get(msg, "refusal");
        if (json_is_string(refusal))
            kevo__llm_errf(why, whylen, "the model refused: %.200s",
                           json_string_value(refusal));
        else
            kevo__llm_errf(why, whylen,
                           "the reply has no choices[0].message.content "
                           "string");
        return false;
    }
    out->text_len = json_string_length(content);
    out->text = kevo__strndup(json_string_value(content), out->text_len);
    if (!out->text) {
        kevo__llm_errf(why, whylen, "out of memory");
        return false;
    }
    json_t *usage = json_object_get(root, "usage");
    out->input_tokens = token_count(usage, "prompt_tokens");
    out->output_tokens = token_count(usage, "completion_tokens");
    json_t *finish = json_object_get(choice, "finish_reason");
    out->cut_off = json_is_string(finish) &&
                   strcmp(json_string_value(finish), "length") == 0;
    return true;
}

static bool parse_anthropic(json_t *root, llm_wire_reply *out, char *why,
                            size_t whylen)
{
    json_t *type = json_object_get(root, "type");
    if (json_is_string(type) && strcmp(json_string_value(type), "error") == 0) {
        char *e = json_dumps(json_object_get(root, "error"), JSON_COMPACT);
        kevo__llm_errf(why, whylen, "the reply is an error object: %.300s",
                       e ? e : "");
        free(e);
        return false;
    }
    json_t *content = json_object_get(root, "content");
    if (!json_is_array(content)) {
        kevo__llm_errf(why, whylen, "the reply has no \"content\" array");
        return false;
    }
    kevo_buf text = {0};
    size_t nblocks = 0;
    json_t *block;
    size_t i;
    json_array_foreach (content, i, block) {
        json_t *bt = json_object_get(block, "type");
        json_t *t = json_object_get(block, "text");
        if (!json_is_string(bt) || strcmp(json_string_value(bt), "text") != 0 ||
            !json_is_string(t))
            continue;
        if (nblocks++)
            kevo__buf_puts(&text, "\n");
        kevo__buf_append(&text, json_string_value(t), json_string_length(t));
    }
    if (nblocks == 0) {
        kevo__buf_free(&text);
        kevo__llm_errf(why, whylen, "the reply has no text content block");
        return false;
    }
    out->text_len = text.len;
    out->text = kevo__buf_take(&text);
    if (!out->text) {
        kevo__llm_errf(why, whylen, "out of memory");
        return false;
    }
    json_t *usage = json_object_get(root, "usage");
    out->input_tokens = token_count(usage, "input_tokens");
    out->output_tokens = token_count(usage, "output_tokens");
    json_t *stop = json_object_get(root, "stop_reason");
    out->cut_off = json_is_string(stop) &&
                   strcmp(json_string_value(stop), "max_tokens") == 0;
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
    if (!ok)
        kevo__llm_wire_reply_free(out);
    return ok;
}

char *kevo__llm_wire_error_text(const char *body, size_t len)
{
    json_t *root = json_loadb(body, len, 0, NULL);
    json_t *e = json_object_get(root, "error");
    char *r = NULL;
    if (json_is_object(e)) {
        json_t *type = json_object_get(e, "type");
        json_t *msg = json_object_get(e, "message");
        kevo_buf b = {0};
        if (json_is_string(type))
            kevo__buf_printf(&b, "%s: ", json_string_value(type));
        if (json_is_string(msg))
            kevo__buf_puts(&b, json_string_value(msg));
        r = kevo__buf_take(&b);
    } else if (json_is_string(e)) {
        r = kevo__strdup(json_string_value(e));
    }
    json_decref(root);
    return r;
}

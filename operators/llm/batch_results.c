/*
 * batch_results.c: reading a batch's results (batch.h): OpenAI's output
 * and error lines, Anthropic's results, what each means for its request,
 * and what becomes of the requests no line answers.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "batch_private.h"

/* ---- results ----------------------------------------------------------------
 */

/* The request of j whose custom_id is id[0..n), or SIZE_MAX. */
static size_t req_index(const job *j, const char *id, size_t n)
{
    for (size_t i = 0; i < j->nreqs; i++)
        if (strlen(j->reqs[i]->custom_id) == n &&
            memcmp(j->reqs[i]->custom_id, id, n) == 0)
            return i;
    return SIZE_MAX;
}

/* The custom_id a line names, even one that is not JSON: its position in
 * *id and length in *n; false when there is none. */
static bool line_custom_id(const char *line, size_t len, const char **id,
                           size_t *n)
{
    const char *k = memmem(line, len, "\"custom_id\"", 11);
    if (!k)
        return false;
    const char *p = k + 11, *end = line + len;
    while (p < end && (*p == ' ' || *p == ':' || *p == '\t'))
        p++;
    if (p >= end || *p != '"')
        return false;
    const char *q = memchr(p + 1, '"', (size_t)(end - p - 1));
    if (!q)
        return false;
    *id = p + 1;
    *n = (size_t)(q - p - 1);
    return true;
}

/* The HTTP status of an Anthropic error type. */
static long anthropic_status(const char *type)
{
    static const struct {
        const char *type;
        long status;
    } map[] = {{"invalid_request_error", 400}, {"authentication_error", 401},
               {"billing_error", 402},         {"permission_error", 403},
               {"not_found_error", 404},       {"request_too_large", 413},
               {"rate_limit_error", 429},      {"api_error", 500},
               {"overloaded_error", 529}};
    for (size_t i = 0; type && i < LLM_ARRAY_SIZE(map); i++)
        if (strcmp(map[i].type, type) == 0)
            return map[i].status;
    return 0;
}

/* A result's outcome. */
typedef struct outcome {
    llm_outcome o;
    long status;
    json_t *reply; /* borrowed from the line: the reply to validate */
    json_t *body;  /* borrowed: the body an error came with */
    llm_buf why;
} outcome;

static void read_openai(const job *j, json_t *root, outcome *out)
{
    json_t *resp = json_object_get(root, "response");
    json_t *err = json_object_get(root, "error");
    if (json_is_object(err)) {
        const char *code = json_string_value(json_object_get(err, "code"));
        const char *msg = json_string_value(json_object_get(err, "message"));
        code = code ? code : "error";
        if (strcmp(code, "batch_expired") == 0)
            out->o = LLM_TIMEOUT;
        else if (strcmp(code, "batch_cancelled") == 0)
            out->o = LLM_TRANSPORT;
        else if (strcmp(code, "request_timeout") == 0)
            out->o = LLM_TIMEOUT;
        else
            out->o = LLM_HTTP_ERROR;
        kevo__llm_buf_printf(&out->why, "batch %s: %s: %s", j->id, code,
                             msg ? msg : "(no message)");
        return;
    }
    json_t *sc = json_object_get(resp, "status_code");
    if (!json_is_object(resp) || !json_is_integer(sc)) {
        out->o = LLM_MALFORMED;
        kevo__llm_buf_puts(&out->why, "it has neither a response with a "
                                      "status_code nor an error");
        return;
    }
    out->status = (long)json_integer_value(sc);
    out->body = json_object_get(resp, "body");
    if (out->status >= 200 && out->status < 300) {
        out->reply = out->body;
        return;
    }
    out->o = LLM_HTTP_ERROR;
    kevo__llm_buf_printf(&out->why, "batch %s: HTTP %ld", j->id, out->status);
}

static void read_anthropic(const job *j, json_t *root, outcome *out)
{
    json_t *res = json_object_get(root, "result");
    const char *type = json_string_value(json_object_get(res, "type"));
    if (!type) {
        out->o = LLM_MALFORMED;
        kevo__llm_buf_puts(&out->why, "it has no result.type");
    } else if (strcmp(type, "succeeded") == 0) {
        out->status = 200;
        out->reply = json_object_get(res, "message");
    } else if (strcmp(type, "errored") == 0) {
        out->o = LLM_HTTP_ERROR;
        out->body = json_object_get(res, "error");
        const char *et = json_string_value(
            json_object_get(json_object_get(out->body, "error"), "type"));
        out->status = anthropic_status(et);
        kevo__llm_buf_printf(&out->why, "batch %s: errored: %s", j->id,
                             et ? et : "(no type)");
    } else if (strcmp(type, "expired") == 0) {
        out->o = LLM_TIMEOUT;
        kevo__llm_buf_printf(&out->why,
                             "batch %s expired before the request ran", j->id);
    } else if (strcmp(type, "canceled") == 0) {
        out->o = LLM_TRANSPORT;
        kevo__llm_buf_printf(
            &out->why, "batch %s was canceled before the request ran", j->id);
    } else {
        out->o = LLM_MALFORMED;
        kevo__llm_buf_printf(&out->why, "its result type \"%s\" is unknown",
                             type);
    }
}

/* Ends the request line lineno of j's results answers, if it is one of
 * j's. Returns false for a line that is not the API's shape, with its
 * description in bad. */
static bool take_line(llm_batch *b, job *j, size_t lineno, const char *line,
                      size_t len, llm_buf *bad)
{
    json_error_t je;
    json_t *root = json_loadb(line, len, 0, &je);
    const char *cid = json_string_value(json_object_get(root, "custom_id"));
    const char *idp = NULL;
    size_t idn = 0;
    if (cid) {
        idp = cid;
        idn = strlen(cid);
    } else if (!line_custom_id(line, len, &idp, &idn)) {
        idp = NULL;
    }
    outcome out = {.o = LLM_OK};
    if (!root)
        kevo__llm_buf_printf(&out.why, "it is not JSON: %s (column %d)",
                             je.text, je.column);
    else if (!cid)
        kevo__llm_buf_puts(&out.why, "it has no custom_id");
    else if (kevo__llm_batch_openai(b))
        read_openai(j, root, &out);
    else
        read_anthropic(j, root, &out);
    if (!root || !cid)
        out.o = LLM_MALFORMED;
    bool shaped = out.o != LLM_MALFORMED;
    char vwhy[400] = "";
    size_t i = idp ? req_index(j, idp, idn) : SIZE_MAX;
    breq *q = i != SIZE_MAX ? j->reqs[i] : NULL;
    if (q && out.o == LLM_OK &&
        (!json_is_object(out.reply) ||
         (q->cb.validate &&
          !q->cb.validate(q->cb.reply_ud ? q->cb.reply_ud : q->cb.ud, out.reply,
                          vwhy, sizeof(vwhy))))) {
        out.o = LLM_MALFORMED;
        kevo__llm_buf_printf(&out.why, "%s",
                             json_is_object(out.reply)
                                 ? vwhy
                                 : "its reply is not a JSON object");
    }
    if (out.o == LLM_MALFORMED) {
        llm_buf t = {0};
        kevo__llm_buf_printf(&t, "batch %s, result line %zu: %s", j->id, lineno,
                             out.why.data ? out.why.data : "");
        kevo__llm_buf_free(&out.why);
        out.why = t;
        if (!shaped && bad->len == 0)
            kevo__llm_buf_puts(bad, t.data ? t.data : "");
    }
    if (q) {
        json_t *shown = out.o == LLM_OK ? out.reply : out.body;
        char *body =
            shown ? json_dumps(shown, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        kevo__llm_batch_take_req(j, i);
        kevo__llm_batch_end_req(
            b, q, out.o, out.status, out.o == LLM_OK ? out.reply : NULL,
            body ? body : "", out.why.data ? out.why.data : "");
        free(body);
    }
    kevo__llm_buf_free(&out.why);
    json_decref(root);
    return shaped;
}

void kevo__llm_batch_take_results(llm_batch *b, job *j)
{
    llm_buf bad = {0};
    const char *p = j->results.data ? j->results.data : "";
    const char *end = p + j->results.len;
    size_t lineno = 0;
    while (p < end && j->nreqs > 0) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        lineno++;
        size_t blank = 0;
        while (blank < len && (p[blank] == ' ' || p[blank] == '\r'))
            blank++;
        if (blank < len)
            take_line(b, j, lineno, p, len, &bad);
        p += len + (nl ? 1 : 0);
    }
    /* The requests the results do not answer. */
    const char *st = j->status ? j->status : "";
    while (j->nreqs > 0) {
        breq *q = kevo__llm_batch_take_req(j, 0);
        llm_buf why = {0};
        llm_outcome o = LLM_MALFORMED;
        if (bad.len) {
            kevo__llm_buf_printf(&why, "batch %s has no result for %s; %s",
                                 j->id, q->custom_id, bad.data);
        } else if (j->failure) {
            o = LLM_HTTP_ERROR;
            kevo__llm_buf_puts(&why, j->failure);
        } else if (strcmp(st, "expired") == 0) {
            o = LLM_TIMEOUT;
            kevo__llm_buf_printf(&why, "batch %s expired before %s ran", j->id,
                                 q->custom_id);
        } else if (strcmp(st, "cancelled") == 0) {
            o = LLM_TRANSPORT;
            kevo__llm_buf_printf(&why, "batch %s was cancelled before %s ran",
                                 j->id, q->custom_id);
        } else {
            kevo__llm_buf_printf(&why,
                                 "batch %s ended (%s) without a result "
                                 "for %s",
                                 j->id, st, q->custom_id);
        }
        kevo__llm_batch_end_req(b, q, o, 0, NULL, "",
                                why.data ? why.data : "out of memory");
        kevo__llm_buf_free(&why);
    }
    kevo__llm_buf_free(&bad);
}

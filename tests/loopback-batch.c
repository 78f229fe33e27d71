/*
 * loopback-batch.c: the vendors' batch APIs in the loopback server
 * (loopback-server.h says what they answer). OpenAI: files (POST /v1/files
 * as multipart/form-data, GET /v1/files/ID and /v1/files/ID/content) and
 * batches (POST /v1/batches, GET /v1/batches/ID, POST .../cancel).
 * Anthropic: POST /v1/messages/batches, GET .../batches/ID, GET
 * .../batches/ID/results and POST .../cancel. Each request of a batch is
 * answered, once the batch ends, as the interactive endpoint would answer
 * it (lb_answer, with the script and the markers), and recorded among the
 * server's requests with the batch's id.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "loopback-private.h"
#include "loopback-vendor.h"

#define BATCH_MARKER "[[kevo-batch:"

struct lb_file {
    char *id;
    char *purpose;
    char *filename;
    char *data;
    size_t len;
    long created;
};

/* One request of a batch. */
typedef struct lb_line {
    char *custom_id;
    char *url;    /* OpenAI: the line's url */
    json_t *body; /* the request body (OpenAI "body", Anthropic "params") */
} lb_line;

typedef enum lb_phase { B_RUNNING, B_CANCELLING, B_ENDED } lb_phase;

/* A results file being written. */
typedef struct lb_text {
    char *text;
    size_t len;
    long count; /* its lines */
} lb_text;

struct lb_batch {
    char *id;
    bool anthropic;
    char *endpoint;      /* OpenAI */
    char *input_file_id; /* OpenAI */
    char *headers;       /* of the request that made it */
    lb_line *lines;
    size_t n;
    char *invalid; /* why its input is refused (OpenAI: status failed) */
    long invalid_line;
    /* Its plan. */
    int polls_left;
    int looks;     /* GETs of it so far */
    long answered; /* requests that run before it expires or is cancelled;
                      -1: all */
    bool expire;
    bool cancel;
    bool fail;
    long badline; /* the result line (1-based) sent broken, 0: none */
    lb_phase phase;
    const char *status; /* once ended */
    long created, ended_at, cancelled_at;
    long ok, failed;                            /* OpenAI counts */
    long succeeded, errored, canceled, expired; /* Anthropic counts */
    char *output_file_id, *error_file_id;       /* OpenAI */
    char *results;                              /* Anthropic */
};

static char *dumps(json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(v);
    if (!s)
        abort();
    return s;
}

static void set_json(lb_reply *r, int status, json_t *v)
{
    char *s = dumps(v);
    r->status = status;
    lb_piece_add(r, s, strlen(s), 0);
    free(s);
}

static void fail_reply(lb_reply *r, bool anthropic, int status,
                       const char *type, const char *message)
{
    char *s =
        lbv_error(anthropic ? "anthropic" : "openai", type, message, NULL);
    r->status = status;
    lb_piece_add(r, s, strlen(s), 0);
    free(s);
}

static void rfc3339(long t, char *out, size_t n)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static json_t *time_or_null(long t, bool rfc)
{
    if (!t)
        return json_null();
    if (!rfc)
        return json_integer(t);
    char s[64];
    rfc3339(t, s, sizeof(s));
    return json_string(s);
}

/* ---- the plan ------------------------------------------------------------ */

void loopback_batch_script(loopback *lb, const char *plans)
{
    pthread_mutex_lock(&lb->mu);
    lb_list_set(&lb->bplans, &lb->nbplans, &lb->bplan_pos, plans);
    pthread_mutex_unlock(&lb->mu);
}

size_t loopback_batches(loopback *lb)
{
    pthread_mutex_lock(&lb->mu);
    size_t n = lb->nbatches;
    pthread_mutex_unlock(&lb->mu);
    return n;
}

/* Sets bt's plan from text: "+"-joined words wait:N, expire:K, cancel:K,
 * fail and badline:L. */
static void apply_plan(lb_batch *bt, const char *text)
{
    bt->answered = -1;
    const char *p = text;
    while (p && *p) {
        const char *e = strchr(p, '+');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char w[64];
        snprintf(w, sizeof(w), "%.*s", (int)n, p);
        char *colon = strchr(w, ':');
        long v = colon ? atol(colon + 1) : 0;
        if (strncmp(w, "wait", 4) == 0)
            bt->polls_left = (int)v;
        else if (strncmp(w, "expire", 6) == 0)
            bt->expire = true, bt->answered = v;
        else if (strncmp(w, "cancel", 6) == 0)
            bt->cancel = true, bt->answered = v;
        else if (strcmp(w, "fail") == 0)
            bt->fail = true;
        else if (strncmp(w, "badline", 7) == 0)
            bt->badline = v;
        p = e ? e + 1 : NULL;
    }
}

/* The plan of a new batch: a marker in its first request, else the
 * script's next, else "wait:0". */
static void choose_plan(loopback *lb, lb_batch *bt)
{
    char *first = bt->n ? dumps(json_incref(bt->lines[0].body)) : NULL;
    const char *m = first ? strstr(first, BATCH_MARKER) : NULL;
    const char *end = m ? strstr(m, "]]") : NULL;
    if (m && end) {
        char *plan = lb_dupn(m + strlen(BATCH_MARKER),
                             (size_t)(end - m - strlen(BATCH_MARKER)));
        apply_plan(bt, plan);
        free(plan);
    } else if (lb->bplan_pos < lb->nbplans) {
        apply_plan(bt, lb->bplans[lb->bplan_pos++]);
    } else {
        apply_plan(bt, "wait:0");
    }
    free(first);
}

/* ---- files -----------------------------------------------------------------
 */

static lb_file *file_add(loopback *lb, const char *purpose,
                         const char *filename, const char *data, size_t len)
{
    lb_file *f = calloc(1, sizeof(*f));
    if (!f)
        abort();
    char id[64];
    snprintf(id, sizeof(id), "file-loopback%06zu", lb->nfiles + 1);
    f->id = lb_dup(id);
    f->purpose = lb_dup(purpose);
    f->filename = lb_dup(filename);
    f->data = lb_dupn(data, len);
    f->len = len;
    f->created = (long)time(NULL);
    lb->files = lb_realloc(lb->files, (lb->nfiles + 1) * sizeof(*lb->files));
    lb->files[lb->nfiles++] = f;
    return f;
}

static lb_file *file_find(loopback *lb, const char *id, size_t n)
{
    for (size_t i = 0; i < lb->nfiles; i++)
        if (strlen(lb->files[i]->id) == n &&
            strncmp(lb->files[i]->id, id, n) == 0)
            return lb->files[i];
    return NULL;
}

static json_t *file_object(const lb_file *f)
{
    return json_pack("{s:s, s:s, s:I, s:I, s:s, s:s, s:s, s:n, s:n}", "id",
                     f->id, "object", "file", "bytes", (json_int_t)f->len,
                     "created_at", (json_int_t)f->created, "filename",
                     f->filename, "purpose", f->purpose, "status", "processed",
                     "expires_at", "status_details");
}

/* A parameter of a header value ("boundary=..."), in a new string. */
static char *header_param(const char *value, const char *name)
{
    const char *p = value ? strcasestr(value, name) : NULL;
    if (!p)
        return NULL;
    p += strlen(name);
    if (*p == '"') {
        const char *e = strchr(p + 1, '"');
        return e ? lb_dupn(p + 1, (size_t)(e - p - 1)) : NULL;
    }
    return lb_dupn(p, strcspn(p, "; \r\n"));
}

/* POST /v1/files: the multipart form's "purpose" and "file". */
static void upload(loopback *lb, loopback_request *q, lb_reply *r)
{
    char *ct = loopback_header(q, "content-type");
    char *boundary = header_param(ct, "boundary=");
    char *purpose = NULL, *filename = NULL, *data = NULL;
    size_t dlen = 0;
    if (!ct || strncasecmp(ct, "multipart/form-data", 19) != 0 || !boundary) {
        fail_reply(r, false, 400, "invalid_request_error",
                   "the upload must be multipart/form-data");
        goto done;
    }
    size_t bl = strlen(boundary) + 2;
    char *delim = lb_realloc(NULL, bl + 1);
    snprintf(delim, bl + 1, "--%s", boundary);
    const char *end = q->body + q->body_len;
    const char *p = memmem(q->body, q->body_len, delim, bl);
    while (p && p + bl < end && strncmp(p + bl, "--", 2) != 0) {
        const char *head = p + bl;
        const char *hend = memmem(head, (size_t)(end - head), "\r\n\r\n", 4);
        if (!hend)
            break;
        char *h = lb_dupn(head, (size_t)(hend - head));
        const char *content = hend + 4;
        const char *next = memmem(content, (size_t)(end - content), delim, bl);
        if (!next)
            next = end;
        size_t clen = (size_t)(next - content);
        if (clen >= 2 && content[clen - 2] == '\r' && content[clen - 1] == '\n')
            clen -= 2;
        char *name = NULL;
        const char *np = strstr(h, " name=\"");
        if (np)
            name = lb_dupn(np + 7, strcspn(np + 7, "\""));
        if (name && strcmp(name, "purpose") == 0) {
            free(purpose);
            purpose = lb_dupn(content, clen);
        } else if (name && strcmp(name, "file") == 0) {
            const char *fp = strstr(h, "filename=\"");
            free(filename);
            filename = lb_dupn(fp ? fp + 10 : "upload",
                               fp ? strcspn(fp + 10, "\"") : 6);
            free(data);
            data = lb_dupn(content, clen);
            dlen = clen;
        }
        free(name);
        free(h);
        p = next;
    }
    free(delim);
    if (!purpose || !data) {
        fail_reply(r, false, 400, "invalid_request_error",
                   "the form needs a \"purpose\" and a \"file\"");
        goto done;
    }
    lb_file *f = file_add(lb, purpose, filename, data, dlen);
    set_json(r, 200, file_object(f));
done:
    free(ct);
    free(boundary);
    free(purpose);
    free(filename);
    free(data);
}

/* GET /v1/files/ID and /v1/files/ID/content. */
static void file_get(loopback *lb, const char *rest, lb_reply *r)
{
    size_t n = strcspn(rest, "/");
    lb_file *f = file_find(lb, rest, n);
    if (!f) {
        fail_reply(r, false, 404, "invalid_request_error", "No such File");
        return;
    }
    if (strcmp(rest + n, "/content") == 0) {
        r->status = 200;
        r->content_type = "application/octet-stream";
        lb_piece_add(r, f->data, f->len, 0);
    } else if (rest[n] == '\0') {
        set_json(r, 200, file_object(f));
    } else {
        fail_reply(r, false, 404, "invalid_request_error", "no such endpoint");
    }
}

/* ---- batches ----------------------------------------------------------------
 */

static void batch_free(lb_batch *bt)
{
    for (size_t i = 0; i < bt->n; i++) {
        free(bt->lines[i].custom_id);
        free(bt->lines[i].url);
        json_decref(bt->lines[i].body);
    }
    free(bt->lines);
    free(bt->id);
    free(bt->endpoint);
    free(bt->input_file_id);
    free(bt->headers);
    free(bt->invalid);
    free(bt->output_file_id);
    free(bt->error_file_id);
    free(bt->results);
    free(bt);
}

void lb_batches_free(loopback *lb)
{
    for (size_t i = 0; i < lb->nbatches; i++)
        batch_free(lb->batches[i]);
    free(lb->batches);
    for (size_t i = 0; i < lb->nfiles; i++) {
        free(lb->files[i]->id);
        free(lb->files[i]->purpose);
        free(lb->files[i]->filename);
        free(lb->files[i]->data);
        free(lb->files[i]);
    }
    free(lb->files);
    for (size_t i = 0; i < lb->nbplans; i++)
        free(lb->bplans[i]);
    free(lb->bplans);
}

static lb_batch *batch_find(loopback *lb, const char *id, size_t n,
                            bool anthropic)
{
    for (size_t i = 0; i < lb->nbatches; i++) {
        lb_batch *bt = lb->batches[i];
        if (bt->anthropic == anthropic && strlen(bt->id) == n &&
            strncmp(bt->id, id, n) == 0)
            return bt;
    }
    return NULL;
}

static lb_batch *batch_new(loopback *lb, const loopback_request *q,
                           bool anthropic)
{
    lb_batch *bt = calloc(1, sizeof(*bt));
    if (!bt)
        abort();
    char id[64];
    snprintf(id, sizeof(id), "%s%06zu",
             anthropic ? "msgbatch_loopback" : "batch_loopback",
             lb->nbatches + 1);
    bt->id = lb_dup(id);
    bt->anthropic = anthropic;
    bt->headers = lb_dup(q->headers ? q->headers : "");
    bt->created = (long)time(NULL);
    return bt;
}

static void batch_add(loopback *lb, lb_batch *bt)
{
    choose_plan(lb, bt);
    lb->batches =
        lb_realloc(lb->batches, (lb->nbatches + 1) * sizeof(*lb->batches));
    lb->batches[lb->nbatches++] = bt;
}

static void add_line(lb_batch *bt, const char *custom_id, const char *url,
                     json_t *body)
{
    bt->lines = lb_realloc(bt->lines, (bt->n + 1) * sizeof(*bt->lines));
    bt->lines[bt->n++] = (lb_line){lb_dup(custom_id), url ? lb_dup(url) : NULL,
                                   json_incref(body)};
}

static bool custom_id_taken(const lb_batch *bt, const char *id)
{
    for (size_t i = 0; i < bt->n; i++)
        if (strcmp(bt->lines[i].custom_id, id) == 0)
            return true;
    return false;
}

/* Records why bt's input is refused (the first reason stays). */
static void refuse(lb_batch *bt, long line, const char *why)
{
    if (bt->invalid)
        return;
    bt->invalid = lb_dup(why);
    bt->invalid_line = line;
}

/* POST /v1/batches. */
static void openai_create(loopback *lb, loopback_request *q, lb_reply *r)
{
    json_t *root = json_loadb(q->body, q->body_len, 0, NULL);
    const char *fid = json_string_value(json_object_get(root, "input_file_id"));
    const char *ep = json_string_value(json_object_get(root, "endpoint"));
    const char *win =
        json_string_value(json_object_get(root, "completion_window"));
    lb_file *f = fid ? file_find(lb, fid, strlen(fid)) : NULL;
    if (!root || !fid || !ep || !win) {
        fail_reply(r, false, 400, "invalid_request_error",
                   "input_file_id, endpoint and completion_window are "
                   "required");
    } else if (strcmp(win, "24h") != 0) {
        fail_reply(r, false, 400, "invalid_request_error",
                   "Invalid value for 'completion_window': only '24h' is "
                   "supported.");
    } else if (strcmp(ep, "/v1/chat/completions") != 0 &&
               strcmp(ep, "/v1/responses") != 0) {
        fail_reply(r, false, 400, "invalid_request_error",
                   "Invalid value for 'endpoint'.");
    } else if (!f) {
        fail_reply(r, false, 404, "invalid_request_error", "No such File");
    } else if (strcmp(f->purpose, "batch") != 0) {
        fail_reply(r, false, 400, "invalid_request_error",
                   "The input file must be uploaded with purpose 'batch'.");
    } else {
        lb_batch *bt = batch_new(lb, q, false);
        bt->endpoint = lb_dup(ep);
        bt->input_file_id = lb_dup(fid);
        const char *p = f->data, *end = f->data + f->len;
        for (long line = 1; p < end; line++) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
            json_t *l = json_loadb(p, n, 0, NULL);
            const char *cid =
                json_string_value(json_object_get(l, "custom_id"));
            const char *m = json_string_value(json_object_get(l, "method"));
            const char *u = json_string_value(json_object_get(l, "url"));
            json_t *body = json_object_get(l, "body");
            if (n == 0) {
                /* a blank line */
            } else if (!l) {
                refuse(bt, line, "The line is not valid JSON.");
            } else if (!cid || !m || !u || !json_is_object(body)) {
                refuse(bt, line,
                       "Each line needs custom_id, method, url and body.");
            } else if (strcmp(m, "POST") != 0 || strcmp(u, ep) != 0) {
                refuse(bt, line,
                       "The url of each line must be the batch's endpoint, "
                       "with method POST.");
            } else if (custom_id_taken(bt, cid)) {
                refuse(bt, line, "The custom_id of each line must be unique.");
            } else {
                add_line(bt, cid, u, body);
            }
            json_decref(l);
            p += n + (nl ? 1 : 0);
        }
        if (bt->n == 0)
            refuse(bt, 0, "The input file holds no requests.");
        batch_add(lb, bt);
        r->status = 200;
    }
    json_decref(root);
}

/* Whether an Anthropic custom_id is 1 to 64 of [A-Za-z0-9_-]. */
static bool good_custom_id(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > 64)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
            return false;
    return true;
}

/* POST /v1/messages/batches. */
static void anthropic_create(loopback *lb, loopback_request *q, lb_reply *r)
{
    json_t *root = json_loadb(q->body, q->body_len, 0, NULL);
    json_t *reqs = json_object_get(root, "requests");
    if (!json_is_array(reqs) || json_array_size(reqs) == 0) {
        fail_reply(r, true, 400, "invalid_request_error",
                   "requests: Field required");
        json_decref(root);
        return;
    }
    lb_batch *bt = batch_new(lb, q, true);
    size_t i;
    json_t *e;
    json_array_foreach (reqs, i, e) {
        const char *cid = json_string_value(json_object_get(e, "custom_id"));
        json_t *params = json_object_get(e, "params");
        char msg[256] = "";
        if (!cid || !good_custom_id(cid))
            snprintf(msg, sizeof(msg),
                     "requests.%zu.custom_id: String should match pattern "
                     "'^[a-zA-Z0-9_-]{1,64}$'",
                     i);
        else if (!json_is_object(params))
            snprintf(msg, sizeof(msg), "requests.%zu.params: Field required",
                     i);
        else if (custom_id_taken(bt, cid))
            snprintf(msg, sizeof(msg),
                     "requests.%zu: custom_id %s is not unique", i, cid);
        if (msg[0]) {
            fail_reply(r, true, 400, "invalid_request_error", msg);
            batch_free(bt);
            json_decref(root);
            return;
        }
        add_line(bt, cid, NULL, params);
    }
    batch_add(lb, bt);
    r->status = 200;
    json_decref(root);
}

/* The answer to line i of bt, as the interactive endpoint gives it: its
 * status (0: none came) and body, in a new string. The request is
 * recorded with the batch's id. */
static char *answer_line(loopback *lb, lb_batch *bt, size_t i, int *status)
{
    loopback_request *s = calloc(1, sizeof(*s));
    if (!s)
        abort();
    s->received = 0;
    s->method = lb_dup("POST");
    s->path = lb_dup(bt->anthropic ? "/v1/messages" : bt->lines[i].url);
    s->headers = lb_dup(bt->headers);
    s->body = dumps(json_incref(bt->lines[i].body));
    s->body_len = strlen(s->body);
    size_t pl = strlen(s->path);
    s->api =
        lb_dup(bt->anthropic ? "anthropic"
               : pl >= 17 && strcmp(s->path + pl - 17, "/chat/completions") == 0
                   ? "openai"
                   : "");
    s->batch = lb_dup(bt->id);
    lb_reply rr;
    lb_answer(lb, s, &rr);
    size_t len = 0;
    for (size_t k = 0; k < rr.npieces; k++)
        len += rr.pieces[k].len;
    char *body = lb_realloc(NULL, len + 1);
    len = 0;
    for (size_t k = 0; k < rr.npieces; k++) {
        memcpy(body + len, rr.pieces[k].data, rr.pieces[k].len);
        len += rr.pieces[k].len;
    }
    body[len] = '\0';
    *status = rr.no_answer ? 0 : rr.status;
    lb_reply_free(&rr);
    lb_record(lb, s);
    return body;
}

/* A JSON value of an answer's body: the parsed JSON, else its text. */
static json_t *body_value(const char *body)
{
    json_t *v = json_loads(body, 0, NULL);
    return v ? v : json_string(body);
}

/* Appends a result line to out; the line numbered badline (counting in
 * *count) is cut in half. */
static void put_line(lb_text *out, json_t *line, long badline)
{
    char *s = dumps(line);
    size_t n = strlen(s);
    out->count++;
    if (badline && out->count == badline)
        n /= 2;
    out->text = lb_realloc(out->text, out->len + n + 2);
    memcpy(out->text + out->len, s, n);
    out->len += n;
    out->text[out->len++] = '\n';
    out->text[out->len] = '\0';
    free(s);
}

/* One OpenAI result line: a response, or an error without one. */
static json_t *openai_line(const lb_batch *bt, size_t i, int status,
                           const char *body, const char *code,
                           const char *message)
{
    char id[96], rid[96];
    snprintf(id, sizeof(id), "batch_req_%s_%zu", bt->id, i);
    snprintf(rid, sizeof(rid), "req_%s_%zu", bt->id, i);
    if (code)
        return json_pack("{s:s, s:s, s:n, s:{s:s, s:s}}", "id", id, "custom_id",
                         bt->lines[i].custom_id, "response", "error", "code",
                         code, "message", message);
    return json_pack("{s:s, s:s, s:{s:i, s:s, s:o}, s:n}", "id", id,
                     "custom_id", bt->lines[i].custom_id, "response",
                     "status_code", status, "request_id", rid, "body",
                     body_value(body), "error");
}

/* Ends bt: answers the requests that run, and writes the results. */
static void finish(loopback *lb, lb_batch *bt)
{
    bt->phase = B_ENDED;
    bt->ended_at = (long)time(NULL);
    bool cancelled = bt->cancel || bt->cancelled_at;
    if (bt->anthropic)
        bt->status = "ended";
    else
        bt->status = bt->invalid || bt->fail ? "failed"
                     : cancelled             ? "cancelled"
                     : bt->expire            ? "expired"
                                             : "completed";
    if (!bt->anthropic && (bt->invalid || bt->fail)) {
        if (!bt->invalid)
            refuse(bt, 0, "The batch failed (the loopback server's plan).");
        return;
    }
    lb_text out = {0}, errs = {0};
    for (size_t i = 0; i < bt->n; i++) {
        bool runs = bt->answered < 0 || (long)i < bt->answered;
        if (!runs) {
            if (bt->anthropic) {
                put_line(&out,
                         json_pack("{s:s, s:{s:s}}", "custom_id",
                                   bt->lines[i].custom_id, "result", "type",
                                   cancelled ? "canceled" : "expired"),
                         bt->badline);
                cancelled ? bt->canceled++ : bt->expired++;
            } else {
                put_line(
                    &errs,
                    openai_line(bt, i, 0, NULL,
                                cancelled ? "batch_cancelled" : "batch_expired",
                                cancelled ? "This request was not executed "
                                            "because the batch was "
                                            "cancelled."
                                          : "This request could not be "
                                            "executed before the completion "
                                            "window expired."),
                    0);
                bt->failed++;
            }
            continue;
        }
        int status;
        char *body = answer_line(lb, bt, i, &status);
        json_t *parsed = json_loads(body, 0, NULL);
        bool good = status >= 200 && status < 300 && json_is_object(parsed);
        if (bt->anthropic) {
            json_t *res;
            if (good) {
                res = json_pack("{s:s, s:O}", "type", "succeeded", "message",
                                parsed);
                bt->succeeded++;
            } else {
                json_t *err = json_is_object(parsed) && status >= 400
                                  ? json_incref(parsed)
                                  : NULL;
                if (!err) {
                    char *e = lbv_error("anthropic", "api_error",
                                        "the reply was not a message", NULL);
                    err = json_loads(e, 0, NULL);
                    free(e);
                }
                res = json_pack("{s:s, s:o}", "type", "errored", "error", err);
                bt->errored++;
            }
            put_line(&out,
                     json_pack("{s:s, s:o}", "custom_id",
                               bt->lines[i].custom_id, "result", res),
                     bt->badline);
        } else if (good) {
            put_line(&out, openai_line(bt, i, status, body, NULL, NULL),
                     bt->badline);
            bt->ok++;
        } else {
            put_line(
                &errs,
                openai_line(bt, i, status ? status : 500, body, NULL, NULL), 0);
            bt->failed++;
        }
        json_decref(parsed);
        free(body);
    }
    if (bt->anthropic) {
        bt->results = out.text ? out.text : lb_dup("");
    } else {
        if (out.text)
            bt->output_file_id =
                lb_dup(file_add(lb, "batch_output", "batch_output.jsonl",
                                out.text, out.len)
                           ->id);
        if (errs.text)
            bt->error_file_id =
                lb_dup(file_add(lb, "batch_output", "batch_errors.jsonl",
                                errs.text, errs.len)
                           ->id);
        free(out.text);
        free(errs.text);
    }
}

/* The batch object of bt. */
static json_t *batch_object(loopback *lb, const lb_batch *bt)
{
    if (bt->anthropic) {
        char url[512];
        snprintf(url, sizeof(url), "%s/v1/messages/batches/%s/results", lb->url,
                 bt->id);
        long processing = bt->phase == B_ENDED ? 0 : (long)bt->n;
        return json_pack(
            "{s:s, s:s, s:s, s:{s:I, s:I, s:I, s:I, s:I}, s:o, s:o, s:o, "
            "s:n, s:o, s:o}",
            "id", bt->id, "type", "message_batch", "processing_status",
            bt->phase == B_ENDED        ? "ended"
            : bt->phase == B_CANCELLING ? "canceling"
                                        : "in_progress",
            "request_counts", "processing", (json_int_t)processing, "succeeded",
            (json_int_t)bt->succeeded, "errored", (json_int_t)bt->errored,
            "canceled", (json_int_t)bt->canceled, "expired",
            (json_int_t)bt->expired, "ended_at",
            time_or_null(bt->ended_at, true), "created_at",
            time_or_null(bt->created, true), "expires_at",
            time_or_null(bt->created + 86400, true), "archived_at",
            "cancel_initiated_at", time_or_null(bt->cancelled_at, true),
            "results_url",
            bt->phase == B_ENDED ? json_string(url) : json_null());
    }
    const char *status = bt->phase == B_ENDED        ? bt->status
                         : bt->phase == B_CANCELLING ? "cancelling"
                         : bt->looks > 0             ? "in_progress"
                                                     : "validating";
    json_t *errors = json_null();
    if (bt->phase == B_ENDED && bt->invalid) {
        json_t *e = json_pack("{s:s, s:s, s:n}", "code", "invalid_request",
                              "message", bt->invalid, "param");
        json_object_set_new(e, "line",
                            bt->invalid_line ? json_integer(bt->invalid_line)
                                             : json_null());
        errors = json_pack("{s:s, s:[o]}", "object", "list", "data", e);
    }
    bool ended = bt->phase == B_ENDED;
    return json_pack(
        "{s:s, s:s, s:s, s:o, s:s, s:s, s:s, s:o, s:o, s:I, s:o, s:I, s:o, "
        "s:o, s:o, s:o, s:o, s:o, s:{s:I, s:I, s:I}, s:n}",
        "id", bt->id, "object", "batch", "endpoint", bt->endpoint, "errors",
        errors, "input_file_id", bt->input_file_id, "completion_window", "24h",
        "status", status, "output_file_id",
        bt->output_file_id ? json_string(bt->output_file_id) : json_null(),
        "error_file_id",
        bt->error_file_id ? json_string(bt->error_file_id) : json_null(),
        "created_at", (json_int_t)bt->created, "in_progress_at",
        time_or_null(bt->looks > 0 ? bt->created : 0, false), "expires_at",
        (json_int_t)(bt->created + 86400), "finalizing_at",
        time_or_null(ended ? bt->ended_at : 0, false), "completed_at",
        time_or_null(
            ended && strcmp(bt->status, "completed") == 0 ? bt->ended_at : 0,
            false),
        "failed_at",
        time_or_null(ended && strcmp(bt->status, "failed") == 0 ? bt->ended_at
                                                                : 0,
                     false),
        "expired_at",
        time_or_null(ended && strcmp(bt->status, "expired") == 0 ? bt->ended_at
                                                                 : 0,
                     false),
        "cancelling_at", time_or_null(bt->cancelled_at, false), "cancelled_at",
        time_or_null(
            ended && strcmp(bt->status, "cancelled") == 0 ? bt->ended_at : 0,
            false),
        "request_counts", "total", (json_int_t)bt->n, "completed",
        (json_int_t)bt->ok, "failed", (json_int_t)bt->failed, "metadata");
}

/* A look at bt moves it on: validating, in progress for the polls its
 * plan gives, then ended. */
static void advance(loopback *lb, lb_batch *bt)
{
    if (bt->phase == B_ENDED)
        return;
    bt->looks++;
    if (bt->phase != B_CANCELLING && !bt->invalid && !bt->fail &&
        bt->polls_left > 0) {
        bt->polls_left--;
        return;
    }
    finish(lb, bt);
}

/* GET .../batches/ID[/results] and POST .../batches/ID/cancel. */
static void batch_op(loopback *lb, loopback_request *q, const char *rest,
                     bool anthropic, lb_reply *r)
{
    size_t n = strcspn(rest, "/");
    lb_batch *bt = batch_find(lb, rest, n, anthropic);
    const char *op = rest + n;
    bool get = strcmp(q->method, "GET") == 0;
    if (!bt) {
        fail_reply(r, anthropic, 404,
                   anthropic ? "not_found_error" : "invalid_request_error",
                   "No such batch");
    } else if (get && *op == '\0') {
        advance(lb, bt);
        set_json(r, 200, batch_object(lb, bt));
    } else if (!get && strcmp(op, "/cancel") == 0) {
        if (bt->phase == B_ENDED) {
            fail_reply(r, anthropic, anthropic ? 400 : 409,
                       "invalid_request_error",
                       "Cannot cancel a batch that has ended.");
            return;
        }
        bt->phase = B_CANCELLING;
        bt->cancelled_at = (long)time(NULL);
        if (bt->answered < 0)
            bt->answered = 0;
        set_json(r, 200, batch_object(lb, bt));
    } else if (get && anthropic && strcmp(op, "/results") == 0) {
        if (bt->phase != B_ENDED) {
            fail_reply(r, true, 400, "invalid_request_error",
                       "The batch is still processing: no results yet.");
            return;
        }
        r->status = 200;
        r->content_type = "application/binary";
        lb_piece_add(r, bt->results, strlen(bt->results), 0);
    } else {
        fail_reply(r, anthropic, 404,
                   anthropic ? "not_found_error" : "invalid_request_error",
                   "no such endpoint");
    }
}

bool lb_batch_answer(loopback *lb, loopback_request *q, lb_reply *r)
{
    char path[1024];
    snprintf(path, sizeof(path), "%.*s", (int)strcspn(q->path, "?"), q->path);
    const char *mb = strstr(path, "/messages/batches");
    const char *b = mb ? NULL : strstr(path, "/batches");
    const char *f = strstr(path, "/files");
    bool anthropic = mb != NULL;
    if (!mb && !b && !f)
        return false;
    free(q->api);
    q->api = lb_dup(anthropic ? "anthropic" : "openai");
    char *key = lb_sent_key(q);
    bool post = strcmp(q->method, "POST") == 0;
    if (lb->expect_key && (!key || strcmp(key, lb->expect_key) != 0)) {
        q->behaviour = lb_dup("bad_key");
        fail_reply(r, anthropic, 401, "authentication_error", "invalid key");
    } else if (mb || b) {
        q->behaviour = lb_dup("batch");
        const char *rest =
            mb ? mb + strlen("/messages/batches") : b + strlen("/batches");
        if (*rest == '\0' && post && anthropic)
            anthropic_create(lb, q, r);
        else if (*rest == '\0' && post)
            openai_create(lb, q, r);
        else if (*rest == '/')
            batch_op(lb, q, rest + 1, anthropic, r);
        else
            fail_reply(r, anthropic, 405, "invalid_request_error",
                       "method not allowed");
        if (r->status == 200 && *rest == '\0' && r->npieces == 0)
            set_json(r, 200, batch_object(lb, lb->batches[lb->nbatches - 1]));
    } else {
        q->behaviour = lb_dup("files");
        const char *rest = f + strlen("/files");
        if (*rest == '\0' && post)
            upload(lb, q, r);
        else if (*rest == '/' && !post)
            file_get(lb, rest + 1, r);
        else
            fail_reply(r, false, 405, "invalid_request_error",
                       "method not allowed");
    }
    free(key);
    lb->batch_calls++;
    return true;
}

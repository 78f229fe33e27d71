/*
 * batch.c: the llm operator's batch transport (batch.h): the engine,
 * gathering, the calls of each vendor's batch API and polling; the record
 * of the batches sent is batch_state.c's, reading their results
 * batch_results.c's.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "batch_private.h"
#include "files.h"

/* The multipart boundary of an uploaded input file. */
#define BOUNDARY "kevo-batch-7a3f19c2d5e84b60"

/* One call of the batch API. */
typedef enum call_kind {
    CALL_UPLOAD,
    CALL_CREATE,
    CALL_RETRIEVE,
    CALL_OUTPUT,
    CALL_ERRORS
} call_kind;

typedef struct call {
    llm_batch *b;
    job *j;
    call_kind kind;
} call;

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t digest(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

bool kevo__llm_batch_openai(const llm_batch *b)
{
    return b->cfg.api == LLM_API_OPENAI;
}

void kevo__llm_batch_say(llm_batch *b, bool warning, const char *fmt, ...)
{
    if (!b->cfg.say)
        return;
    llm_buf t = {0};
    va_list ap;
    va_start(ap, fmt);
    kevo__llm_buf_vprintf(&t, fmt, ap);
    va_end(ap);
    if (t.data && !t.failed)
        b->cfg.say(b->cfg.say_ud, warning, t.data);
    kevo__llm_buf_free(&t);
}

/* ---- the engine -----------------------------------------------------------
 */

static void job_free(job *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->nreqs; i++) {
        free(j->reqs[i]->custom_id);
        free(j->reqs[i]->body);
        free(j->reqs[i]->adopted);
        free(j->reqs[i]);
    }
    free(j->reqs);
    for (size_t i = 0; i < j->nentries; i++) {
        free(j->entries[i].custom_id);
        free(j->entries[i].run);
    }
    free(j->entries);
    free(j->id);
    free(j->input_file_id);
    free(j->output_file_id);
    free(j->error_file_id);
    free(j->results_url);
    free(j->status);
    free(j->failure);
    kevo__llm_buf_free(&j->results);
    free(j);
}

/* The URLs of the batch API, from the interactive endpoint's URL. */
static bool derive_urls(llm_batch *b, char *err, size_t n)
{
    const char *url = b->cfg.url;
    size_t len = strcspn(url, "?");
    llm_buf u = {0};
    if (kevo__llm_batch_openai(b)) {
        const char *tail = "/chat/completions";
        size_t tl = strlen(tail);
        if (len < tl || strncmp(url + len - tl, tail, tl) != 0) {
            kevo__llm_errf(err, n,
                           "the batch transport needs an OpenAI URL that ends "
                           "in %s, not %.*s",
                           tail, (int)len, url);
            return false;
        }
        char *path = kevo__llm_files_url_path(url);
        if (path)
            path[strcspn(path, "?")] = '\0';
        b->endpoint = path;
        kevo__llm_buf_printf(&u, "%.*s/files", (int)(len - tl), url);
        b->files_url = kevo__llm_buf_take(&u);
        kevo__llm_buf_printf(&u, "%.*s/batches", (int)(len - tl), url);
    } else {
        kevo__llm_buf_printf(&u, "%.*s/batches", (int)len, url);
    }
    b->batches_url = kevo__llm_buf_take(&u);
    kevo__llm_buf_free(&u);
    if (!b->batches_url ||
        (kevo__llm_batch_openai(b) && (!b->files_url || !b->endpoint))) {
        kevo__llm_errf(err, n, "out of memory");
        return false;
    }
    return true;
}

static bool copy_config(llm_batch *b, const llm_batch_config *cfg)
{
    b->cfg = *cfg;
    b->cfg.url = kevo__llm_strdup(cfg->url);
    b->cfg.model = kevo__llm_strdup(cfg->model ? cfg->model : "");
    b->cfg.state_dir = cfg->state_dir ? kevo__llm_strdup(cfg->state_dir) : NULL;
    b->cfg.headers = NULL;
    b->headers = calloc(cfg->nheaders + 1, sizeof(*b->headers));
    if (!b->cfg.url || !b->cfg.model || (cfg->state_dir && !b->cfg.state_dir) ||
        !b->headers)
        return false;
    for (size_t i = 0; i < cfg->nheaders; i++) {
        if (strncasecmp(cfg->headers[i], "Content-Type:", 13) == 0)
            continue;
        if (!(b->headers[b->nheaders++] = kevo__llm_strdup(cfg->headers[i])))
            return false;
    }
    return true;
}

llm_batch_config kevo__llm_batch_config_of(const llm_config *cfg,
                                           const llm_model *m, const char *url,
                                           const char *const *headers,
                                           size_t nheaders)
{
    llm_batch_config bc = {
        .api = m->api,
        .url = url,
        .headers = headers,
        .nheaders = nheaders,
        .model = m->name,
        .max_requests = m->batch_max_requests,
        .gather_s = m->batch_gather_s,
        .poll_interval_s = m->poll_interval_s,
        .wait_s = m->batch_wait_s,
        .timeout_s = m->timeout_s,
        .max_reply_bytes = cfg->max_reply_bytes,
        .max_retries = cfg->max_retries,
        .backoff_base_s = cfg->backoff_base_s,
        .backoff_max_s = cfg->backoff_max_s,
        .retry_after_max_s = cfg->retry_after_max_s,
    };
    return bc;
}

llm_batch *kevo__llm_batch_new(const llm_batch_config *cfg, char *err,
                               size_t errlen)
{
    if (!cfg->url || cfg->max_requests < 1 || !(cfg->gather_s >= 0) ||
        !(cfg->poll_interval_s > 0) || !(cfg->wait_s >= 0) ||
        !(cfg->timeout_s > 0) || cfg->max_reply_bytes == 0) {
        kevo__llm_errf(err, errlen,
                       "bad batch settings: a URL, at least 1 request a "
                       "batch, a poll interval and a time limit above 0 are "
                       "needed");
        return NULL;
    }
    llm_batch *b = calloc(1, sizeof(*b));
    if (!b || !copy_config(b, cfg)) {
        kevo__llm_errf(err, errlen, "out of memory");
        goto fail;
    }
    if (!derive_urls(b, err, errlen))
        goto fail;
    if (b->cfg.state_dir &&
        !kevo__llm_files_mkdir(b->cfg.state_dir, err, errlen))
        goto fail;
    size_t cap = cfg->max_reply_bytes;
    cap = cap > (SIZE_MAX / 2) / cfg->max_requests ? SIZE_MAX / 2
                                                   : cap * cfg->max_requests;
    llm_http_config hc = {
        .concurrency = 4,
        .max_retries = cfg->max_retries,
        .backoff_base_s = cfg->backoff_base_s,
        .backoff_max_s = cfg->backoff_max_s,
        .retry_after_max_s = cfg->retry_after_max_s,
        .max_reply_bytes = cap,
    };
    b->http = kevo__llm_http_new(&hc, err, errlen);
    if (!b->http)
        goto fail;
    return b;
fail:
    kevo__llm_batch_free(b);
    return NULL;
}

/* Ends request q of job j (q leaves j first): the attempt and done
 * callbacks, as the HTTP engine calls them. */
void kevo__llm_batch_end_req(llm_batch *b, breq *q, llm_outcome o, long status,
                             json_t *json, const char *body, const char *reason)
{
    double elapsed = kevo__llm_now() - q->submitted;
    const char *bd = body ? body : "";
    /* A request taken back has waited on its batch across a stop: so it
     * says, just before it ends (the search then keeps its state at the
     * next quiet moment). */
    if (q->adopted && !q->told_waiting && q->cb.waiting && o != LLM_CANCELLED) {
        q->told_waiting = true;
        q->cb.waiting(q->cb.ud, q->adopted);
    }
    if (q->cb.attempt) {
        llm_http_attempt a = {.number = 1,
                              .outcome = o,
                              .status = status,
                              .body = bd,
                              .body_len = strlen(bd),
                              .reason = reason,
                              .elapsed_s = elapsed,
                              .retry_after_s = -1,
                              .retry_in_s = -1};
        q->cb.attempt(q->cb.ud, &a);
    }
    llm_http_result r = {.outcome = o,
                         .status = status,
                         .attempts = 1,
                         .json = o == LLM_OK ? json : NULL,
                         .body = bd,
                         .body_len = strlen(bd),
                         .reason = reason,
                         .elapsed_s = elapsed};
    b->pending--;
    q->cb.done(q->cb.ud, &r);
    free(q->custom_id);
    free(q->body);
    free(q->adopted);
    free(q);
}

/* Takes request i out of job j. */
breq *kevo__llm_batch_take_req(job *j, size_t i)
{
    breq *q = j->reqs[i];
    memmove(&j->reqs[i], &j->reqs[i + 1],
            (j->nreqs - i - 1) * sizeof(*j->reqs));
    j->nreqs--;
    q->job = NULL;
    return q;
}

/* Ends every request of j with the same outcome. */
static void end_all(llm_batch *b, job *j, llm_outcome o, long status,
                    const char *body, const char *reason)
{
    while (j->nreqs > 0)
        kevo__llm_batch_end_req(b, kevo__llm_batch_take_req(j, 0), o, status,
                                NULL, body, reason);
}

/* Tells the requests of j, once it has an id, their batch (the sent
 * callback), once. */
static void tell_sent(job *j)
{
    for (size_t i = 0; j->id && i < j->nreqs; i++) {
        breq *q = j->reqs[i];
        if (!q->told_sent && q->cb.sent) {
            q->told_sent = true;
            q->cb.sent(q->cb.ud, j->id, q->custom_id);
        }
    }
}

void kevo__llm_batch_free(llm_batch *b)
{
    if (!b)
        return;
    b->closing = true;
    kevo__llm_http_free(b->http);
    for (size_t i = 0; i < b->njobs; i++) {
        /* A batch created since the last poll: its requests know it
         * before they end. */
        tell_sent(b->jobs[i]);
        end_all(b, b->jobs[i], LLM_CANCELLED, 0, NULL, "cancelled");
        job_free(b->jobs[i]);
    }
    free(b->jobs);
    for (size_t i = 0; i < b->nheaders; i++)
        kevo__llm_wipe_free(b->headers[i]);
    free(b->headers);
    free((char *)b->cfg.url);
    free((char *)b->cfg.model);
    free((char *)b->cfg.state_dir);
    free(b->endpoint);
    free(b->files_url);
    free(b->batches_url);
    free(b);
}

job *kevo__llm_batch_job_add(llm_batch *b)
{
    job **js = realloc(b->jobs, (b->njobs + 1) * sizeof(*js));
    if (!js)
        return NULL;
    b->jobs = js;
    job *j = calloc(1, sizeof(*j));
    if (!j)
        return NULL;
    b->jobs[b->njobs++] = j;
    return j;
}

static bool job_push(job *j, breq *q)
{
    if (j->nreqs == j->capreqs) {
        size_t cap = j->capreqs ? 2 * j->capreqs : 8;
        breq **r = realloc(j->reqs, cap * sizeof(*r));
        if (!r)
            return false;
        j->reqs = r;
        j->capreqs = cap;
    }
    j->reqs[j->nreqs++] = q;
    q->job = j;
    return true;
}

/* ---- submission -------------------------------------------------------------
 */

/* Where a request of j waits, in a few words, in a new string. */
static char *where(const llm_batch *b, const job *j)
{
    llm_buf w = {0};
    kevo__llm_buf_printf(&w, "the %s batch %s", kevo__llm_api_name(b->cfg.api),
                         j->id ? j->id : "(not yet created)");
    char *s = kevo__llm_buf_take(&w);
    kevo__llm_buf_free(&w);
    return s;
}

static job *gathering(llm_batch *b)
{
    for (size_t k = 0; k < b->njobs; k++)
        if (b->jobs[k]->state == J_GATHER &&
            b->jobs[k]->nreqs < b->cfg.max_requests)
            return b->jobs[k];
    job *j = kevo__llm_batch_job_add(b);
    if (j)
        j->opened = kevo__llm_now();
    return j;
}

bool kevo__llm_batch_submit(llm_batch *b, const llm_batch_request *req,
                            char *err, size_t errlen)
{
    if (!req->done || (!req->body && req->body_len)) {
        kevo__llm_errf(err, errlen,
                       "a batch request needs a body and a done "
                       "callback");
        return false;
    }
    if (!b->state_read)
        kevo__llm_batch_read_state(b);
    breq *q = calloc(1, sizeof(*q));
    if (!q)
        goto nomem;
    q->cb = *req;
    q->submitted = kevo__llm_now();
    uint64_t dg = digest(req->body ? req->body : "", req->body_len);
    job *j = NULL;
    bool changed = false;
    entry *en = kevo__llm_batch_find_entry(b, req, dg, &j, &changed);
    if (en) {
        if (!(q->custom_id = kevo__llm_strdup(en->custom_id)) ||
            !(q->adopted = where(b, j)) || !job_push(j, q))
            goto nomem;
        en->adopted = true;
        /* It was sent: its result answers it, and sending it again would
         * pay twice and, where every resumed process measures anew, never
         * end. */
        if (changed)
            kevo__llm_batch_say(b, true,
                                "request %" PRIu64
                                " of this run was sent as %s in %s with "
                                "another body: it is taken back as it was "
                                "sent and its result answers the request",
                                req->request, en->custom_id, q->adopted);
        if (j->state == J_POLL && !j->busy)
            j->next_poll = 0;
        b->pending++;
        return true;
    }
    j = gathering(b);
    entry *es = j ? realloc(j->entries, (j->nentries + 1) * sizeof(*es)) : NULL;
    if (!es)
        goto nomem;
    j->entries = es;
    en = &es[j->nentries];
    memset(en, 0, sizeof(*en));
    llm_buf id = {0};
    kevo__llm_buf_printf(&id, "kevo-%" PRIu64 "-%zu", req->request,
                         j->nentries);
    en->custom_id = kevo__llm_buf_take(&id);
    kevo__llm_buf_free(&id);
    en->run = req->run ? kevo__llm_strdup(req->run) : NULL;
    q->custom_id = en->custom_id ? kevo__llm_strdup(en->custom_id) : NULL;
    q->body = kevo__llm_strndup(req->body ? req->body : "", req->body_len);
    q->body_len = req->body_len;
    if (!en->custom_id || (req->run && !en->run) || !q->custom_id || !q->body ||
        !job_push(j, q)) {
        free(en->custom_id);
        free(en->run);
        goto nomem;
    }
    en->request = req->request;
    en->digest = dg;
    en->bytes = req->body_len;
    en->adopted = true;
    j->nentries++;
    b->pending++;
    return true;
nomem:
    if (q) {
        free(q->custom_id);
        free(q->body);
        free(q->adopted);
        free(q);
    }
    kevo__llm_errf(err, errlen, "out of memory");
    return false;
}

bool kevo__llm_batch_recorded(llm_batch *b, const llm_batch_request *req)
{
    if (!b->state_read)
        kevo__llm_batch_read_state(b);
    job *j = NULL;
    uint64_t dg = digest(req->body ? req->body : "", req->body_len);
    return kevo__llm_batch_find_entry(b, req, dg, &j, NULL) != NULL;
}

/* ---- calls ------------------------------------------------------------------
 */

static void on_call(void *ud, const llm_http_result *r);

/* Starts a call of the batch API for job j. */
static void start_call(llm_batch *b, job *j, call_kind kind, const char *url,
                       bool get, const char *body, size_t body_len,
                       const char *content_type)
{
    char err[256];
    char **hs = calloc(b->nheaders + 2, sizeof(*hs));
    call *c = calloc(1, sizeof(*c));
    llm_buf ct = {0};
    bool ok = hs && c;
    if (ok) {
        memcpy(hs, b->headers, b->nheaders * sizeof(*hs));
        size_t n = b->nheaders;
        if (content_type) {
            kevo__llm_buf_printf(&ct, "Content-Type: %s", content_type);
            hs[n++] = ct.data;
        }
        *c = (call){b, j, kind};
        llm_http_request hr = {
            .url = url,
            .headers = (const char *const *)hs,
            .nheaders = n,
            .get = get,
            .body = body,
            .body_len = body_len,
            .raw = kind == CALL_OUTPUT || kind == CALL_ERRORS,
            .timeout_s = b->cfg.timeout_s,
            .done = on_call,
            .ud = c,
        };
        ok =
            !ct.failed && kevo__llm_http_submit(b->http, &hr, err, sizeof(err));
    } else {
        kevo__llm_errf(err, sizeof(err), "out of memory");
    }
    free(hs);
    kevo__llm_buf_free(&ct);
    if (ok) {
        j->busy = true;
        b->busy++;
        return;
    }
    free(c);
    llm_buf why = {0};
    kevo__llm_buf_printf(&why, "cannot call the batch API: %s", err);
    end_all(b, j, LLM_TRANSPORT, 0, NULL, why.data ? why.data : err);
    kevo__llm_buf_free(&why);
}

/* The JSONL input file of job j (OpenAI), in a multipart body. */
static char *upload_body(llm_batch *b, job *j, size_t *len)
{
    llm_buf m = {0};
    kevo__llm_buf_puts(&m, "--" BOUNDARY "\r\nContent-Disposition: form-data; "
                           "name=\"purpose\"\r\n\r\nbatch\r\n--" BOUNDARY
                           "\r\nContent-Disposition: form-data; name=\"file\"; "
                           "filename=\"kevo-batch.jsonl\"\r\nContent-Type: "
                           "application/jsonl\r\n\r\n");
    for (size_t i = 0; i < j->nreqs; i++) {
        breq *q = j->reqs[i];
        json_t *body = json_loadb(q->body, q->body_len, 0, NULL);
        json_t *line =
            json_pack("{s:s, s:s, s:s, s:o?}", "custom_id", q->custom_id,
                      "method", "POST", "url", b->endpoint, "body", body);
        char *text = line ? json_dumps(line, JSON_COMPACT) : NULL;
        if (!text) {
            m.failed = true;
        } else {
            kevo__llm_buf_puts(&m, text);
            kevo__llm_buf_puts(&m, "\n");
        }
        free(text);
        json_decref(line);
    }
    kevo__llm_buf_puts(&m, "\r\n--" BOUNDARY "--\r\n");
    *len = m.len;
    char *s = kevo__llm_buf_take(&m);
    kevo__llm_buf_free(&m);
    return s;
}

/* Anthropic's POST body: {"requests": [{custom_id, params}]}. */
static char *create_body_anthropic(job *j)
{
    json_t *reqs = json_array();
    for (size_t i = 0; reqs && i < j->nreqs; i++) {
        breq *q = j->reqs[i];
        json_t *params = json_loadb(q->body, q->body_len, 0, NULL);
        json_array_append_new(reqs, json_pack("{s:s, s:o?}", "custom_id",
                                              q->custom_id, "params", params));
    }
    json_t *root = reqs ? json_pack("{s:o}", "requests", reqs) : NULL;
    char *s = root ? json_dumps(root, JSON_COMPACT) : NULL;
    json_decref(root);
    return s;
}

/* Sends job j: uploads its input file (OpenAI) or creates the batch. */
static void send_job(llm_batch *b, job *j)
{
    size_t len = 0;
    char *body;
    if (kevo__llm_batch_openai(b)) {
        j->state = J_UPLOAD;
        body = upload_body(b, j, &len);
    } else {
        j->state = J_CREATE;
        body = create_body_anthropic(j);
        len = body ? strlen(body) : 0;
    }
    if (!body) {
        end_all(b, j, LLM_TRANSPORT, 0, NULL,
                "out of memory for the batch's requests");
        return;
    }
    for (size_t i = 0; i < j->nreqs; i++) {
        free(j->reqs[i]->body);
        j->reqs[i]->body = NULL;
    }
    if (kevo__llm_batch_openai(b))
        start_call(b, j, CALL_UPLOAD, b->files_url, false, body, len,
                   "multipart/form-data; boundary=" BOUNDARY);
    else
        start_call(b, j, CALL_CREATE, b->batches_url, false, body, len,
                   "application/json");
    free(body);
}

static void create_openai(llm_batch *b, job *j)
{
    json_t *root =
        json_pack("{s:s, s:s, s:s}", "input_file_id", j->input_file_id,
                  "endpoint", b->endpoint, "completion_window", "24h");
    char *body = root ? json_dumps(root, JSON_COMPACT) : NULL;
    json_decref(root);
    j->state = J_CREATE;
    if (!body) {
        end_all(b, j, LLM_TRANSPORT, 0, NULL, "out of memory");
        return;
    }
    start_call(b, j, CALL_CREATE, b->batches_url, false, body, strlen(body),
               "application/json");
    free(body);
}

static void retrieve(llm_batch *b, job *j)
{
    llm_buf u = {0};
    kevo__llm_buf_printf(&u, "%s/%s", b->batches_url, j->id);
    if (u.data && !u.failed)
        start_call(b, j, CALL_RETRIEVE, u.data, true, NULL, 0, NULL);
    else
        end_all(b, j, LLM_TRANSPORT, 0, NULL, "out of memory");
    kevo__llm_buf_free(&u);
}

/* Reads the next results file of j, or, when none is left, ends it. */

static void fetch(llm_batch *b, job *j)
{
    j->state = J_FETCH;
    llm_buf u = {0};
    call_kind kind = CALL_OUTPUT;
    if (kevo__llm_batch_openai(b) && j->output_file_id) {
        kevo__llm_buf_printf(&u, "%s/%s/content", b->files_url,
                             j->output_file_id);
    } else if (kevo__llm_batch_openai(b) && j->fetch_errors &&
               j->error_file_id) {
        kevo__llm_buf_printf(&u, "%s/%s/content", b->files_url,
                             j->error_file_id);
        kind = CALL_ERRORS;
    } else if (!kevo__llm_batch_openai(b) && j->results_url &&
               j->results.len == 0) {
        kevo__llm_buf_puts(&u, j->results_url);
    } else {
        j->state = J_DONE;
        kevo__llm_batch_save_state(b, j);
        kevo__llm_batch_take_results(b, j);
        return;
    }
    if (u.data && !u.failed)
        start_call(b, j, kind, u.data, true, NULL, 0, NULL);
    else
        end_all(b, j, LLM_TRANSPORT, 0, NULL, "out of memory");
    kevo__llm_buf_free(&u);
}

/* What a batch object says: its id, its status, and, once it has ended,
 * where its results are. Returns false with a reason when it is not a
 * batch object. */
static bool read_batch(llm_batch *b, job *j, json_t *root, char *why, size_t n)
{
    const char *id = json_string_value(json_object_get(root, "id"));
    const char *st = json_string_value(json_object_get(
        root, kevo__llm_batch_openai(b) ? "status" : "processing_status"));
    if (!id || !st) {
        kevo__llm_errf(
            why, n, "the batch API's reply has no %s",
            id ? (kevo__llm_batch_openai(b) ? "status" : "processing_status")
               : "id");
        return false;
    }
    if (!j->id && !(j->id = kevo__llm_strdup(id)))
        return false;
    free(j->status);
    j->status = kevo__llm_strdup(st);
    if (kevo__llm_batch_openai(b)) {
        free(j->output_file_id);
        free(j->error_file_id);
        j->output_file_id = kevo__llm_batch_jstr(root, "output_file_id");
        j->error_file_id = kevo__llm_batch_jstr(root, "error_file_id");
        j->fetch_errors = j->error_file_id != NULL;
        if (strcmp(st, "failed") == 0) {
            llm_buf f = {0};
            kevo__llm_buf_printf(&f, "the batch %s failed", j->id);
            size_t i;
            json_t *e;
            json_array_foreach (
                json_object_get(json_object_get(root, "errors"), "data"), i,
                e) {
                json_t *line = json_object_get(e, "line");
                kevo__llm_buf_printf(
                    &f, "%s %s", i ? ";" : ":",
                    json_string_value(json_object_get(e, "message"))
                        ? json_string_value(json_object_get(e, "message"))
                        : "(no message)");
                if (json_is_integer(line))
                    kevo__llm_buf_printf(
                        &f, " (input line %" JSON_INTEGER_FORMAT ")",
                        json_integer_value(line));
            }
            free(j->failure);
            j->failure = kevo__llm_buf_take(&f);
            kevo__llm_buf_free(&f);
        }
    } else {
        free(j->results_url);
        j->results_url = kevo__llm_batch_jstr(root, "results_url");
    }
    return true;
}

/* Whether status st is one a batch ends in. */
static bool ended(const llm_batch *b, const char *st)
{
    if (!kevo__llm_batch_openai(b))
        return strcmp(st, "ended") == 0;
    return strcmp(st, "completed") == 0 || strcmp(st, "expired") == 0 ||
           strcmp(st, "cancelled") == 0 || strcmp(st, "failed") == 0;
}

/* What a call's failure means for its job: a refusal of the batch API (a
 * 4xx other than 408 and 429) ends its requests; anything else is tried
 * again at the next poll. */
static void call_failed(llm_batch *b, job *j, call_kind kind,
                        const llm_http_result *r)
{
    static const char *const what[] = {"upload the batch's input file",
                                       "create the batch", "look at the batch",
                                       "read the batch's output file",
                                       "read the batch's error file"};
    bool refused = r->outcome == LLM_HTTP_ERROR && r->status >= 400 &&
                   r->status < 500 && r->status != 408 && r->status != 429;
    llm_buf why = {0};
    kevo__llm_buf_printf(&why, "cannot %s%s%s: %s", what[kind],
                         j->id ? " " : "", j->id ? j->id : "", r->reason);
    const char *text = why.data ? why.data : r->reason;
    if (kind == CALL_UPLOAD || kind == CALL_CREATE || refused) {
        end_all(b, j, r->outcome, r->status, r->body, text);
    } else {
        kevo__llm_batch_say(b, true, "%s; looking again in %g s", text,
                            b->cfg.poll_interval_s);
        kevo__llm_buf_free(&j->results);
        j->results = (llm_buf){0};
        j->state = J_POLL;
        j->next_poll = kevo__llm_now() + b->cfg.poll_interval_s;
    }
    kevo__llm_buf_free(&why);
}

static void on_call(void *ud, const llm_http_result *r)
{
    call *c = ud;
    llm_batch *b = c->b;
    job *j = c->j;
    call_kind kind = c->kind;
    free(c);
    if (b->closing)
        return;
    j->busy = false;
    b->busy--;
    char why[512] = "";
    if (r->outcome != LLM_OK) {
        call_failed(b, j, kind, r);
        return;
    }
    switch (kind) {
    case CALL_UPLOAD:
        j->input_file_id = kevo__llm_batch_jstr(r->json, "id");
        if (!j->input_file_id) {
            end_all(b, j, LLM_MALFORMED, r->status, r->body,
                    "the upload of the batch's input file gave no file id");
            return;
        }
        create_openai(b, j);
        return;
    case CALL_CREATE:
        if (!read_batch(b, j, r->json, why, sizeof(why))) {
            end_all(b, j, LLM_MALFORMED, r->status, r->body, why);
            return;
        }
        j->created = wall_now();
        b->created++;
        kevo__llm_batch_say(b, false, "batch %s of %s: %zu request%s", j->id,
                            b->cfg.model, j->nreqs, j->nreqs == 1 ? "" : "s");
        kevo__llm_batch_save_state(b, j);
        j->state = J_POLL;
        j->next_poll = kevo__llm_now() + b->cfg.poll_interval_s;
        j->running = !ended(b, j->status);
        if (!j->running)
            fetch(b, j);
        return;
    case CALL_RETRIEVE:
        if (!read_batch(b, j, r->json, why, sizeof(why))) {
            llm_http_result bad = *r;
            bad.outcome = LLM_MALFORMED;
            bad.reason = why;
            call_failed(b, j, kind, &bad);
            return;
        }
        j->next_poll = kevo__llm_now() + b->cfg.poll_interval_s;
        j->running = !ended(b, j->status);
        if (!j->running)
            fetch(b, j);
        return;
    case CALL_OUTPUT:
    case CALL_ERRORS:
        kevo__llm_buf_append(&j->results, r->body, r->body_len);
        if (r->body_len && r->body[r->body_len - 1] != '\n')
            kevo__llm_buf_puts(&j->results, "\n");
        if (kind == CALL_OUTPUT && kevo__llm_batch_openai(b)) {
            free(j->output_file_id);
            j->output_file_id = NULL;
        } else {
            j->fetch_errors = false;
        }
        if (!kevo__llm_batch_openai(b)) {
            j->state = J_DONE;
            kevo__llm_batch_save_state(b, j);
            kevo__llm_batch_take_results(b, j);
            return;
        }
        fetch(b, j);
        return;
    }
}

/* ---- polling ----------------------------------------------------------------
 */

/* Whether every entry of j is taken back, so that nothing can come for
 * it any more. */
static bool all_adopted(const job *j)
{
    for (size_t i = 0; i < j->nentries; i++)
        if (!j->entries[i].adopted)
            return false;
    return true;
}

/* Tells the requests of a batch that it was sent, and, once it has run
 * for wait_s and the last look at it found it running, that they wait.
 * A batch taken back is looked at first: if it has ended meanwhile, its
 * results are read before anyone is told to wait. */
static void tell(llm_batch *b, job *j)
{
    if (!j->id)
        return;
    tell_sent(j);
    double age = wall_now() - j->created;
    bool waits = j->running && j->state == J_POLL && age >= b->cfg.wait_s;
    for (size_t i = 0; i < j->nreqs; i++) {
        breq *q = j->reqs[i];
        if (!q->told_waiting && waits && q->cb.waiting) {
            q->told_waiting = true;
            char *w = where(b, j);
            q->cb.waiting(q->cb.ud, w ? w : "a batch");
            free(w);
        }
    }
}

/* The earliest time (monotonic) something is due, or HUGE. */
static double next_due(const llm_batch *b)
{
    double next = 1e300;
    for (size_t k = 0; k < b->njobs; k++) {
        const job *j = b->jobs[k];
        double t = 1e300;
        if (j->state == J_GATHER && j->nreqs)
            t = j->opened + b->cfg.gather_s;
        else if (j->state == J_POLL && j->nreqs && !j->busy)
            t = j->next_poll;
        if (t < next)
            next = t;
    }
    return next;
}

size_t kevo__llm_batch_poll(llm_batch *b, int timeout_ms)
{
    size_t before = b->pending;
    double now = kevo__llm_now();
    for (size_t k = 0; k < b->njobs; k++) {
        job *j = b->jobs[k];
        if (j->state == J_GATHER && j->nreqs &&
            (j->nreqs >= b->cfg.max_requests ||
             now - j->opened >= b->cfg.gather_s))
            send_job(b, j);
        else if (j->state == J_POLL && j->nreqs && !j->busy &&
                 now >= j->next_poll)
            retrieve(b, j);
        else if (j->state == J_DONE && j->nreqs)
            kevo__llm_batch_take_results(b, j);
        /* Callbacks may have added jobs: b->jobs may have moved. */
    }
    for (size_t k = 0; k < b->njobs; k++)
        tell(b, b->jobs[k]);
    if (kevo__llm_http_pending(b->http) > 0) {
        kevo__llm_http_poll(b->http, timeout_ms);
    } else if (timeout_ms > 0 && b->pending == before && b->pending > 0) {
        double wait = next_due(b) - kevo__llm_now();
        if (wait > timeout_ms / 1e3)
            wait = timeout_ms / 1e3;
        if (wait > 0)
            usleep((useconds_t)(wait * 1e6));
    }
    /* Jobs that nothing can come for any more: no request is open in them,
     * and no earlier engine's request is left to take back. */
    size_t w = 0;
    for (size_t k = 0; k < b->njobs; k++) {
        job *j = b->jobs[k];
        if (j->nreqs == 0 && !j->busy && all_adopted(j))
            job_free(j);
        else
            b->jobs[w++] = j;
    }
    b->njobs = w;
    return before - b->pending;
}

size_t kevo__llm_batch_pending(const llm_batch *b)
{
    return b ? b->pending : 0;
}

size_t kevo__llm_batch_busy(const llm_batch *b)
{
    return b ? b->busy : 0;
}

size_t kevo__llm_batch_created(const llm_batch *b)
{
    return b ? b->created : 0;
}

/*
 * batch.c: the llm operator's batch transport (batch.h): gathering, the
 * calls of each vendor's batch API, polling, the results and the state
 * kept for a search that resumes.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "batch.h"
#include "buf.h"
#include "files.h"

/* The multipart boundary of an uploaded input file. */
#define BOUNDARY "kevo-batch-7a3f19c2d5e84b60"

/* Where a batch is. */
typedef enum job_state {
    J_GATHER, /* taking requests */
    J_UPLOAD, /* OpenAI: its input file is being uploaded */
    J_CREATE, /* the batch is being created */
    J_POLL,   /* created: looked at every poll interval */
    J_FETCH,  /* ended: its results are being read */
    J_DONE    /* its results are in hand */
} job_state;

typedef struct job job;

/* A request not yet ended. */
typedef struct breq {
    llm_batch_request cb; /* the callbacks and ud; strings not kept */
    char *custom_id;
    char *body; /* until the batch is sent */
    size_t body_len;
    double submitted;
    bool told_sent, told_waiting;
    char *adopted; /* sent by an earlier engine: where it waits, else
                      NULL */
    job *job;
} breq;

/* A request recorded in a batch, ended or not. */
typedef struct entry {
    char *custom_id;
    char *run;
    uint64_t request;
    uint64_t digest;
    size_t bytes;
    bool adopted; /* by a request of this engine */
} entry;

struct job {
    uint64_t number; /* of its state files, 0: none */
    job_state state;
    char *id;
    char *input_file_id;
    char *output_file_id, *error_file_id; /* OpenAI */
    char *results_url;                    /* Anthropic */
    char *status;                         /* the vendor's last word */
    char *failure;     /* why the batch itself failed, or NULL */
    double opened;     /* the first request came (monotonic) */
    double created;    /* created at the vendor (wall clock) */
    double next_poll;  /* monotonic */
    bool busy;         /* a call is under way */
    bool running;      /* a look at it in this engine found it running */
    bool fetch_errors; /* OpenAI: the error file is still to be read */
    breq **reqs;       /* not yet ended */
    size_t nreqs, capreqs;
    entry *entries;
    size_t nentries;
    llm_buf results; /* the result lines, once read */
};

struct llm_batch {
    llm_batch_config cfg;
    char **headers; /* the configuration's, without Content-Type */
    size_t nheaders;
    char *endpoint;    /* OpenAI: the batch's endpoint (the URL's path) */
    char *files_url;   /* OpenAI */
    char *batches_url; /* both */
    llm_http *http;
    job **jobs;
    size_t njobs;
    size_t pending;
    size_t busy;
    size_t created;
    bool state_read;
    bool closing;
};

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

static bool openai(const llm_batch *b)
{
    return b->cfg.api == LLM_API_OPENAI;
}

static void say(llm_batch *b, bool warning, const char *fmt, ...)
    LLM_PRINTF(3, 4);

static void say(llm_batch *b, bool warning, const char *fmt, ...)
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
    if (openai(b)) {
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
    if (!b->batches_url || (openai(b) && (!b->files_url || !b->endpoint))) {
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
    if (b->cfg.state_dir && mkdir(b->cfg.state_dir, 0777) != 0 &&
        errno != EEXIST) {
        kevo__llm_errf(err, errlen, "cannot create %s: %s", b->cfg.state_dir,
                       strerror(errno));
        goto fail;
    }
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
static void end_req(llm_batch *b, breq *q, llm_outcome o, long status,
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
static breq *take_req(job *j, size_t i)
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
        end_req(b, take_req(j, 0), o, status, NULL, body, reason);
}

void kevo__llm_batch_free(llm_batch *b)
{
    if (!b)
        return;
    b->closing = true;
    kevo__llm_http_free(b->http);
    for (size_t i = 0; i < b->njobs; i++) {
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

static job *job_add(llm_batch *b)
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

/* ---- state ------------------------------------------------------------------
 */

static char *state_path(const llm_batch *b, uint64_t number, const char *tail)
{
    llm_buf p = {0};
    kevo__llm_buf_printf(&p, "%s/%06" PRIu64 "-%s", b->cfg.state_dir, number,
                         tail);
    char *s = kevo__llm_buf_take(&p);
    kevo__llm_buf_free(&p);
    return s;
}

/* Claims the next free number of the state directory (O_EXCL). */
static uint64_t claim_number(llm_batch *b)
{
    uint64_t max = 0;
    DIR *d = opendir(b->cfg.state_dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char *end;
        unsigned long long v = strtoull(e->d_name, &end, 10);
        if (end != e->d_name && strcmp(end, "-batch.json") == 0 && v > max)
            max = v;
    }
    if (d)
        closedir(d);
    for (uint64_t n = max + 1; n < max + 1000; n++) {
        char *p = state_path(b, n, "batch.json");
        int fd = p ? open(p, O_WRONLY | O_CREAT | O_EXCL, 0666) : -1;
        int e2 = errno;
        free(p);
        if (fd >= 0) {
            close(fd);
            return n;
        }
        if (e2 != EEXIST)
            return 0;
    }
    return 0;
}

/* Writes j's NNNNNN-batch.json (and, once it has ended, its results
 * first). A failure is said, not fatal: the batch goes on, only a resumed
 * search would not find it. */
static void save_state(llm_batch *b, job *j)
{
    if (!b->cfg.state_dir || !j->id)
        return;
    char err[600];
    if (!j->number && !(j->number = claim_number(b))) {
        say(b, true, "cannot record batch %s in %s: %s", j->id,
            b->cfg.state_dir, strerror(errno));
        return;
    }
    bool ended = j->state == J_DONE;
    char *rpath = ended ? state_path(b, j->number, "results.jsonl") : NULL;
    if (ended && rpath &&
        !kevo__llm_files_write_atomic(rpath,
                                      j->results.data ? j->results.data : "",
                                      j->results.len, err, sizeof(err)))
        say(b, true, "cannot keep the results of batch %s: %s", j->id, err);
    free(rpath);
    json_t *reqs = json_array();
    for (size_t i = 0; reqs && i < j->nentries; i++) {
        const entry *en = &j->entries[i];
        char dg[17];
        snprintf(dg, sizeof(dg), "%016" PRIx64, en->digest);
        json_array_append_new(
            reqs,
            json_pack("{s:s, s:s?, s:I, s:s, s:I}", "custom_id", en->custom_id,
                      "run", en->run, "request", (json_int_t)en->request,
                      "digest", dg, "bytes", (json_int_t)en->bytes));
    }
    json_t *m = json_pack(
        "{s:I, s:s, s:s, s:s, s:s, s:s?, s:f, s:s?, s:b, s:s?, s:o}", "number",
        (json_int_t)j->number, "api", kevo__llm_api_name(b->cfg.api), "url",
        b->cfg.url, "model", b->cfg.model, "id", j->id, "input_file_id",
        j->input_file_id, "created", j->created, "status", j->status, "ended",
        ended, "failure", j->failure, "requests", reqs ? reqs : json_array());
    char *text = m ? json_dumps(m, JSON_INDENT(1)) : NULL;
    char *path = state_path(b, j->number, "batch.json");
    if (!text || !path ||
        !kevo__llm_files_write_atomic(path, text, strlen(text), err,
                                      sizeof(err)))
        say(b, true, "cannot record batch %s: %s", j->id,
            text && path ? err : "out of memory");
    free(path);
    free(text);
    json_decref(m);
}

static char *jstr(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? kevo__llm_strdup(s) : NULL;
}

/* A job of an earlier engine from its state file, or NULL when the file is
 * not one of this engine's batches (or cannot be read). */
static void load_job(llm_batch *b, const char *name, uint64_t number)
{
    llm_buf p = {0};
    kevo__llm_buf_printf(&p, "%s/%s", b->cfg.state_dir, name);
    json_t *m = p.data ? json_load_file(p.data, 0, NULL) : NULL;
    kevo__llm_buf_free(&p);
    const char *api = json_string_value(json_object_get(m, "api"));
    const char *url = json_string_value(json_object_get(m, "url"));
    const char *model = json_string_value(json_object_get(m, "model"));
    json_t *reqs = json_object_get(m, "requests");
    job *j = NULL;
    if (!api || strcmp(api, kevo__llm_api_name(b->cfg.api)) != 0 || !url ||
        strcmp(url, b->cfg.url) != 0 || !model ||
        strcmp(model, b->cfg.model) != 0 || !json_is_array(reqs) ||
        !json_is_string(json_object_get(m, "id")) || !(j = job_add(b)))
        goto done;
    j->number = number;
    j->id = jstr(m, "id");
    j->input_file_id = jstr(m, "input_file_id");
    j->status = jstr(m, "status");
    j->failure = jstr(m, "failure");
    j->created = json_number_value(json_object_get(m, "created"));
    j->state = J_POLL;
    j->entries = calloc(json_array_size(reqs) + 1, sizeof(*j->entries));
    if (!j->entries)
        goto done;
    size_t i;
    json_t *r;
    json_array_foreach (reqs, i, r) {
        entry *en = &j->entries[j->nentries];
        const char *dg = json_string_value(json_object_get(r, "digest"));
        en->custom_id = jstr(r, "custom_id");
        en->run = jstr(r, "run");
        en->request =
            (uint64_t)json_integer_value(json_object_get(r, "request"));
        en->bytes = (size_t)json_integer_value(json_object_get(r, "bytes"));
        en->digest = dg ? strtoull(dg, NULL, 16) : 0;
        if (en->custom_id)
            j->nentries++;
        else
            free(en->run);
    }
    if (json_is_true(json_object_get(m, "ended"))) {
        char *rp = state_path(b, number, "results.jsonl");
        char why[600];
        size_t len = 0;
        char *text = rp ? kevo__llm_files_read_whole(rp, SIZE_MAX / 2, &len,
                                                     why, sizeof(why))
                        : NULL;
        if (text) {
            kevo__llm_buf_append(&j->results, text, len);
            j->state = J_DONE;
        } else {
            /* The results are lost: read them from the vendor again. */
            say(b, true, "batch %s: %s; its results are read again", j->id,
                why);
        }
        free(text);
        free(rp);
    }
done:
    json_decref(m);
}

/* Reads the batches that earlier engines recorded in the state directory,
 * once. */
static void read_state(llm_batch *b)
{
    b->state_read = true;
    if (!b->cfg.state_dir)
        return;
    struct dirent **list = NULL;
    int n = scandir(b->cfg.state_dir, &list, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        char *end;
        unsigned long long v = strtoull(list[i]->d_name, &end, 10);
        if (end != list[i]->d_name && strcmp(end, "-batch.json") == 0)
            load_job(b, list[i]->d_name, (uint64_t)v);
        free(list[i]);
    }
    free(list);
}

/* The entry of an earlier batch recorded for the same run, request id and
 * body as req, not yet taken back; its job in *jp. */
static entry *find_entry(llm_batch *b, const llm_batch_request *req,
                         uint64_t dg, job **jp)
{
    for (size_t k = 0; req->run && k < b->njobs; k++) {
        job *j = b->jobs[k];
        for (size_t i = 0; i < j->nentries; i++) {
            entry *en = &j->entries[i];
            if (!en->adopted && en->run && en->request == req->request &&
                en->digest == dg && en->bytes == req->body_len &&
                strcmp(en->run, req->run) == 0) {
                *jp = j;
                return en;
            }
        }
    }
    return NULL;
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
    job *j = job_add(b);
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
        read_state(b);
    breq *q = calloc(1, sizeof(*q));
    if (!q)
        goto nomem;
    q->cb = *req;
    q->submitted = kevo__llm_now();
    uint64_t dg = digest(req->body ? req->body : "", req->body_len);
    job *j = NULL;
    entry *en = find_entry(b, req, dg, &j);
    if (en) {
        if (!(q->custom_id = kevo__llm_strdup(en->custom_id)) ||
            !(q->adopted = where(b, j)) || !job_push(j, q))
            goto nomem;
        en->adopted = true;
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
    if (openai(b)) {
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
    if (openai(b))
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
static void take_results(llm_batch *b, job *j);

static void fetch(llm_batch *b, job *j)
{
    j->state = J_FETCH;
    llm_buf u = {0};
    call_kind kind = CALL_OUTPUT;
    if (openai(b) && j->output_file_id) {
        kevo__llm_buf_printf(&u, "%s/%s/content", b->files_url,
                             j->output_file_id);
    } else if (openai(b) && j->fetch_errors && j->error_file_id) {
        kevo__llm_buf_printf(&u, "%s/%s/content", b->files_url,
                             j->error_file_id);
        kind = CALL_ERRORS;
    } else if (!openai(b) && j->results_url && j->results.len == 0) {
        kevo__llm_buf_puts(&u, j->results_url);
    } else {
        j->state = J_DONE;
        save_state(b, j);
        take_results(b, j);
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
    const char *st = json_string_value(
        json_object_get(root, openai(b) ? "status" : "processing_status"));
    if (!id || !st) {
        kevo__llm_errf(why, n, "the batch API's reply has no %s",
                       id ? (openai(b) ? "status" : "processing_status")
                          : "id");
        return false;
    }
    if (!j->id && !(j->id = kevo__llm_strdup(id)))
        return false;
    free(j->status);
    j->status = kevo__llm_strdup(st);
    if (openai(b)) {
        free(j->output_file_id);
        free(j->error_file_id);
        j->output_file_id = jstr(root, "output_file_id");
        j->error_file_id = jstr(root, "error_file_id");
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
        j->results_url = jstr(root, "results_url");
    }
    return true;
}

/* Whether status st is one a batch ends in. */
static bool ended(const llm_batch *b, const char *st)
{
    if (!openai(b))
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
        say(b, true, "%s; looking again in %g s", text, b->cfg.poll_interval_s);
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
        j->input_file_id = jstr(r->json, "id");
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
        say(b, false, "batch %s of %s: %zu request%s", j->id, b->cfg.model,
            j->nreqs, j->nreqs == 1 ? "" : "s");
        save_state(b, j);
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
        if (kind == CALL_OUTPUT && openai(b)) {
            free(j->output_file_id);
            j->output_file_id = NULL;
        } else {
            j->fetch_errors = false;
        }
        if (!openai(b)) {
            j->state = J_DONE;
            save_state(b, j);
            take_results(b, j);
            return;
        }
        fetch(b, j);
        return;
    }
}

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
    else if (openai(b))
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
          !q->cb.validate(q->cb.ud, out.reply, vwhy, sizeof(vwhy))))) {
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
        take_req(j, i);
        end_req(b, q, out.o, out.status, out.o == LLM_OK ? out.reply : NULL,
                body ? body : "", out.why.data ? out.why.data : "");
        free(body);
    }
    kevo__llm_buf_free(&out.why);
    json_decref(root);
    return shaped;
}

static void take_results(llm_batch *b, job *j)
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
        breq *q = take_req(j, 0);
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
        end_req(b, q, o, 0, NULL, "", why.data ? why.data : "out of memory");
        kevo__llm_buf_free(&why);
    }
    kevo__llm_buf_free(&bad);
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
    double age = wall_now() - j->created;
    bool waits = j->running && j->state == J_POLL && age >= b->cfg.wait_s;
    for (size_t i = 0; i < j->nreqs; i++) {
        breq *q = j->reqs[i];
        if (!q->told_sent && q->cb.sent) {
            q->told_sent = true;
            q->cb.sent(q->cb.ud, j->id, q->custom_id);
        }
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
            take_results(b, j);
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

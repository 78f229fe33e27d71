/*
 * relay.c: the relay of a request directory (relay.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "buf.h"
#include "files.h"
#include "relay.h"
#include "relay_claim.h"
#include "stream.h"
#include "wire_reply.h"
#include "wire_request.h"

/* The largest request body the relay reads. */
#define MAX_REQUEST_BYTES ((size_t)64 << 20)

/* ---- transports -------------------------------------------------------- */

static void *http_open(const llm_relay_setup *s, char *err, size_t n)
{
    return kevo__llm_http_new(s->http, err, n);
}

static bool http_submit(void *e, const llm_relay_send *s, char *err, size_t n)
{
    return kevo__llm_http_submit(e, s->http, err, n);
}

static size_t http_poll(void *e, int timeout_ms)
{
    return kevo__llm_http_poll(e, timeout_ms);
}

static size_t http_pending(const void *e)
{
    return kevo__llm_http_pending(e);
}

static void http_close(void *e)
{
    kevo__llm_http_free(e);
}

static const llm_relay_transport http_transport = {
    .name = "http",
    .admits = true,
    .open = http_open,
    .submit = http_submit,
    .poll = http_poll,
    .pending = http_pending,
    .busy = http_pending,
    .close = http_close,
};

/* Every transport, and the one a model takes. */
static const llm_relay_transport *const transports[] = {
    &http_transport, &kevo__llm_relay_batch_transport};
#define NTRANSPORTS LLM_ARRAY_SIZE(transports)

static size_t transport_of(const llm_model *m)
{
    return m->batch ? 1 : 0;
}

/* ---- the relay --------------------------------------------------------- */

typedef struct relay_job relay_job;

/* A request left alone, and what was told of it: a problem of its own
 * (trouble), or in flight at another relay. */
typedef struct problem {
    uint64_t number;
    char *text;
    bool trouble;
} problem;

struct llm_relay {
    char *dir;
    char *run;       /* dir as an absolute path: the batches' run */
    char *state_dir; /* DIR/batches */
    bool closing;    /* freed: what ends now is cancelled */
    const llm_config *cfg;
    llm_secrets secrets;
    llm_relay_say_fn say;
    void *say_ud;
    llm_relay_owner me;
    void *engines[NTRANSPORTS];
    relay_job *jobs;
    problem *problems;
    size_t nproblems;
    uint64_t rng;
    bool budget_told;
    uint64_t ledger_tokens; /* what the directory's marks recorded at start */
    double ledger_cost;
    llm_relay_stats stats;
};

/* One request in flight. */
struct relay_job {
    llm_relay *relay;
    uint64_t number;
    const llm_model *model;
    size_t transport;
    char *batch_id;    /* its batch's, once it has one */
    char *reply_model; /* the body's "model", for an assembled reply */
    llm_intake in;     /* the reply, whole or streamed */
    relay_job *next;
};

static void say(llm_relay *r, bool warning, const char *fmt, ...)
    LLM_PRINTF(3, 4);

static void say(llm_relay *r, bool warning, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *red =
        kevo__llm_redact_vprintf(r->secrets.list, r->secrets.n, fmt, ap);
    va_end(ap);
    if (r->say)
        r->say(r->say_ud, warning,
               red ? red : "(a line was lost: out of memory)");
    free(red);
}

/* Tells why request number is left alone, unless that was told already. */
static void problem_note(llm_relay *r, uint64_t number, const char *text,
                         bool trouble)
{
    size_t i = 0;
    while (i < r->nproblems && r->problems[i].number != number)
        i++;
    if (i < r->nproblems && strcmp(r->problems[i].text, text) == 0)
        return;
    char *copy = kevo__llm_strdup(text);
    if (i == r->nproblems) {
        problem *p = realloc(r->problems, (i + 1) * sizeof(*p));
        if (!p || !copy) {
            free(copy);
            return;
        }
        r->problems = p;
        r->nproblems++;
        p[i].number = number;
        p[i].text = NULL;
    }
    free(r->problems[i].text);
    r->problems[i].text = copy;
    r->problems[i].trouble = trouble;
    say(r, trouble, "%s", text);
}

static void problem_clear(llm_relay *r, uint64_t number)
{
    for (size_t i = 0; i < r->nproblems; i++)
        if (r->problems[i].number == number) {
            free(r->problems[i].text);
            r->problems[i] = r->problems[--r->nproblems];
            return;
        }
}

static double jitter(void *ud)
{
    llm_relay *r = ud;
    r->rng ^= r->rng << 13;
    r->rng ^= r->rng >> 7;
    r->rng ^= r->rng << 17;
    return (double)(r->rng >> 11) / 9007199254740992.0;
}

static bool admit(void *ud, char *why, size_t n)
{
    llm_relay *r = ud;
    if (kevo__llm_budget_left(r->cfg,
                              r->ledger_tokens + r->stats.input_tokens +
                                  r->stats.output_tokens,
                              r->ledger_cost + r->stats.cost, why, n))
        return true;
    if (!r->budget_told) {
        r->budget_told = true;
        say(r, true, "%s", why);
    }
    return false;
}

llm_relay *kevo__llm_relay_new(const char *dir, const llm_config *cfg,
                               llm_relay_say_fn say_fn, void *say_ud, char *err,
                               size_t errlen)
{
    char path[4096];
    llm_relay *r = calloc(1, sizeof(*r));
    if (!r || !(r->dir = kevo__llm_strdup(dir)) ||
        !kevo__llm_secrets_collect(cfg, &r->secrets)) {
        kevo__llm_errf(err, errlen, "out of memory");
        goto fail;
    }
    r->cfg = cfg;
    r->say = say_fn;
    r->say_ud = say_ud;
    for (size_t i = 0; i < cfg->nmodels; i++)
        if (cfg->models[i].files) {
            kevo__llm_errf(err, errlen,
                           "llm config: models[%zu]: \"transport\": \"files\" "
                           "is a search's: the relay sends the requests",
                           i);
            goto fail;
        }
    static const char *const subs[] = {"", "/pending", "/done", "/sent",
                                       "/batches"};
    for (size_t i = 0; i < LLM_ARRAY_SIZE(subs); i++) {
        snprintf(path, sizeof(path), "%s%s", dir, subs[i]);
        if (!kevo__llm_files_mkdir(path, err, errlen))
            goto fail;
    }
    if (!(r->run = realpath(dir, NULL))) {
        kevo__llm_errf(err, errlen, "%s: %s", dir, strerror(errno));
        goto fail;
    }
    snprintf(path, sizeof(path), "%s/batches", dir);
    if (!(r->state_dir = kevo__llm_strdup(path))) {
        kevo__llm_errf(err, errlen, "out of memory");
        goto fail;
    }
    kevo__llm_claim_self(&r->me);
    r->rng = ((uint64_t)time(NULL) << 20) ^ (uint64_t)r->me.pid ^
             0x9e3779b97f4a7c15ull;
    llm_http_config hc = {
        .concurrency = cfg->concurrency,
        .max_retries = cfg->max_retries,
        .backoff_base_s = cfg->backoff_base_s,
        .backoff_max_s = cfg->backoff_max_s,
        .retry_after_max_s = cfg->retry_after_max_s,
        .max_reply_bytes = cfg->max_reply_bytes,
        .uniform01 = jitter,
        .rng_ud = r,
        .admit = admit,
        .admit_ud = r,
    };
    llm_relay_setup setup = {
        .http = &hc,
        .cfg = cfg,
        .state_dir = r->state_dir,
        .say = r->say,
        .say_ud = r->say_ud,
    };
    for (size_t i = 0; i < NTRANSPORTS; i++)
        if (!(r->engines[i] = transports[i]->open(&setup, err, errlen)))
            goto fail;
    kevo__llm_claim_ledger(dir, &r->ledger_tokens, &r->ledger_cost);
    return r;
fail:
    kevo__llm_relay_free(r);
    return NULL;
}

static void job_free(relay_job *j)
{
    llm_relay *r = j->relay;
    for (relay_job **p = &r->jobs; *p; p = &(*p)->next)
        if (*p == j) {
            *p = j->next;
            break;
        }
    r->stats.in_flight--;
    kevo__llm_intake_free(&j->in);
    free(j->batch_id);
    free(j->reply_model);
    free(j);
}

void kevo__llm_relay_free(llm_relay *r)
{
    if (!r)
        return;
    /* Closing an engine ends its requests as cancelled: each gets its
     * failure file, but for those of batches (on_done). */
    r->closing = true;
    for (size_t i = 0; i < NTRANSPORTS; i++)
        if (r->engines[i])
            transports[i]->close(r->engines[i]);
    while (r->jobs)
        job_free(r->jobs);
    for (size_t i = 0; i < r->nproblems; i++)
        free(r->problems[i].text);
    free(r->problems);
    kevo__llm_secrets_free(&r->secrets);
    free(r->state_dir);
    free(r->run);
    free(r->dir);
    free(r);
}

/* ---- replies ----------------------------------------------------------- */

/* The path of request number's file in sub/ ("pending", "done"), with an
 * optional tail before ".json". */
static void file_path(char *path, size_t n, const llm_relay *r, const char *sub,
                      uint64_t number, const char *tail)
{
    snprintf(path, n, "%s/%s/%06" PRIu64 "%s.json", r->dir, sub, number, tail);
}

/* Writes text as the reply file of number, then ends its mark. */
static bool write_reply(llm_relay *r, uint64_t number, const char *text,
                        size_t len, const char *outcome, uint64_t in,
                        uint64_t out, double cost)
{
    char path[4096], err[600];
    file_path(path, sizeof(path), r, "done", number, "");
    if (!kevo__llm_files_write(path, text, len, err, sizeof(err))) {
        say(r, true, "%06" PRIu64 ": %s", number, err);
        return false;
    }
    if (!kevo__llm_claim_end(r->dir, number, outcome, in, out, cost, err,
                             sizeof(err)))
        say(r, true, "%06" PRIu64 ": %s", number, err);
    return true;
}

/* The reply file's text for request j that ended as res: the body as it
 * came, or the whole reply its stream gave, or a failure. */
static char *reply_text(relay_job *j, const llm_http_result *res, size_t *len)
{
    llm_relay *r = j->relay;
    char *text = NULL;
    if (res->outcome != LLM_OK) {
        text = kevo__llm_files_failure(res, r->secrets.list, r->secrets.n);
    } else if (j->in.wire.streamed) {
        json_t *whole =
            kevo__llm_stream_whole(j->model->api, j->reply_model, &j->in.wire);
        text = whole ? json_dumps(whole, JSON_INDENT(1)) : NULL;
        json_decref(whole);
    } else {
        text = kevo__llm_redact(res->body, res->body_len, r->secrets.list,
                                r->secrets.n);
        /* The body as it came, NUL bytes and all, when it quotes no key. */
        if (text && strlen(text) == res->body_len &&
            memcmp(text, res->body, res->body_len) == 0) {
            *len = res->body_len;
            return text;
        }
    }
    *len = text ? strlen(text) : 0;
    return text;
}

/* Request j of a batch, cancelled as the relay is freed: its batch goes
 * on at the vendor, and its mark stays for the next relay to take it
 * back; one still gathering was never sent, and loses its mark. */
static void leave_batch(relay_job *j)
{
    llm_relay *r = j->relay;
    char err[600];
    if (j->batch_id)
        say(r, false,
            "%06" PRIu64 ": left in batch %s at the vendor: a relay started "
            "again takes it back",
            j->number, j->batch_id);
    else if (kevo__llm_claim_drop(r->dir, j->number, err, sizeof(err)))
        say(r, false, "%06" PRIu64 ": not sent yet: left for the next relay",
            j->number);
    else
        say(r, true, "%06" PRIu64 ": %s", j->number, err);
    job_free(j);
}

static void on_sent(void *ud, const char *batch_id, const char *custom_id)
{
    relay_job *j = ud;
    llm_relay *r = j->relay;
    char err[600];
    free(j->batch_id);
    j->batch_id = kevo__llm_strdup(batch_id);
    if (!kevo__llm_claim_batch(r->dir, j->number, batch_id, custom_id, err,
                               sizeof(err)))
        say(r, true, "%06" PRIu64 ": %s", j->number, err);
    say(r, false, "%06" PRIu64 ": in batch %s as %s", j->number, batch_id,
        custom_id);
}

static void on_done(void *ud, const llm_http_result *res)
{
    relay_job *j = ud;
    llm_relay *r = j->relay;
    llm_http_result cancelled;
    if (res->outcome == LLM_CANCELLED && r->closing &&
        transports[j->transport] != &http_transport) {
        leave_batch(j);
        return;
    }
    if (res->outcome == LLM_CANCELLED) {
        cancelled = *res;
        cancelled.reason = "the relay stopped while the request was in "
                           "flight; it is not sent again";
        res = &cancelled;
    }
    if (res->outcome != LLM_OK)
        kevo__llm_intake_spend(&j->in); /* the last stream is paid for too */
    uint64_t in = j->in.spent_in, out = j->in.spent_out;
    if (res->outcome == LLM_OK) {
        uint64_t win, wout;
        kevo__llm_wire_tokens(&j->in.wire, j->in.request_bytes, &win, &wout);
        in += win;
        out += wout;
    }
    double cost = kevo__llm_model_cost(j->model, in, out);
    r->stats.input_tokens += in;
    r->stats.output_tokens += out;
    r->stats.cost += cost;
    size_t len = 0;
    char *text = reply_text(j, res, &len);
    const char *outcome = kevo__llm_outcome_name(
        res->outcome == LLM_CANCELLED ? LLM_TRANSPORT : res->outcome);
    if (!text) {
        say(r, true, "%06" PRIu64 ": out of memory for its reply", j->number);
    } else if (write_reply(r, j->number, text, len, outcome, in, out, cost)) {
        if (res->outcome == LLM_OK) {
            r->stats.answered++;
            say(r, false,
                "%06" PRIu64 ": replied (%d attempt%s, %" PRIu64
                " input and %" PRIu64 " output tokens%s, cost %.6g)",
                j->number, res->attempts, res->attempts == 1 ? "" : "s", in,
                out, j->in.wire.has_usage ? "" : " estimated", cost);
        } else {
            r->stats.failed++;
            say(r, true,
                "%06" PRIu64 ": failed: %s: %s: the failure is its reply",
                j->number, outcome, res->reason);
        }
    }
    free(text);
    job_free(j);
}

/* ---- requests ---------------------------------------------------------- */

/* A request file and its sidecar, read and checked. */
typedef struct request_files {
    json_t *meta;
    json_t *body_json;
    char *body;
    size_t body_len;
    const llm_model *model;
    bool stream;
} request_files;

static void request_files_free(request_files *q)
{
    json_decref(q->meta);
    json_decref(q->body_json);
    free(q->body);
}

/* The endpoint every URL of api ends with. */
static const char *endpoint(llm_api api)
{
    return api == LLM_API_OPENAI ? "/chat/completions" : "/messages";
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && strcmp(s + n - k, tail) == 0;
}

/* The model of the relay's configuration for a sidecar's api and model;
 * NULL, with the problem in why, when there is none. */
static const llm_model *find_model(llm_relay *r, const char *meta_path,
                                   const char *api, const char *name, char *why,
                                   size_t n)
{
    for (size_t i = 0; i < r->cfg->nmodels; i++) {
        const llm_model *m = &r->cfg->models[i];
        if (strcmp(m->name, name) == 0 &&
            strcmp(kevo__llm_api_name(m->api), api) == 0)
            return m;
    }
    llm_buf b = {0};
    for (size_t i = 0; i < r->cfg->nmodels; i++)
        kevo__llm_buf_printf(&b, "%s%s (%s)", i ? ", " : "",
                             r->cfg->models[i].name,
                             kevo__llm_api_name(r->cfg->models[i].api));
    kevo__llm_errf(why, n,
                   "%s: $.model: the relay's configuration has no model "
                   "\"%s\" of api %s (its models: %s): left waiting",
                   meta_path, name, api, b.data ? b.data : "");
    kevo__llm_buf_free(&b);
    return NULL;
}

/* Reads and checks request number's files; false with the problem, which
 * names the file and the field, in why. */
static bool read_request(llm_relay *r, uint64_t number, request_files *q,
                         char *why, size_t n)
{
    char mpath[4096], bpath[4096], err[600];
    json_error_t je;
    file_path(mpath, sizeof(mpath), r, "pending", number, ".meta");
    file_path(bpath, sizeof(bpath), r, "pending", number, "");
    memset(q, 0, sizeof(*q));
    if (!(q->meta = json_load_file(mpath, 0, &je))) {
        kevo__llm_errf(why, n, "%s: %s (line %d, column %d): left waiting",
                       mpath, je.text, je.line, je.column);
        return false;
    }
    const char *api = json_string_value(json_object_get(q->meta, "api"));
    const char *name = json_string_value(json_object_get(q->meta, "model"));
    const char *path = json_string_value(json_object_get(q->meta, "path"));
    json_t *num = json_object_get(q->meta, "number");
    const char *bad =
        !json_is_object(q->meta) ? "$: not a JSON object"
        : !api || (strcmp(api, "openai") != 0 && strcmp(api, "anthropic") != 0)
            ? "$.api: must be \"openai\" or \"anthropic\""
        : !name ? "$.model: must be a string, the model's name"
        : !path ? "$.path: must be a string, the endpoint's path"
        : num && (!json_is_integer(num) ||
                  json_integer_value(num) != (json_int_t)number)
            ? "$.number: must be the file's number"
            : NULL;
    if (bad) {
        kevo__llm_errf(why, n, "%s: %s: left waiting", mpath, bad);
        return false;
    }
    if (!(q->model = find_model(r, mpath, api, name, why, n)))
        return false;
    if (!ends_with(path, endpoint(q->model->api))) {
        kevo__llm_errf(why, n,
                       "%s: $.path: \"%s\" is not the %s endpoint (...%s): "
                       "left waiting",
                       mpath, path, api, endpoint(q->model->api));
        return false;
    }
    if (!(q->body = kevo__llm_files_read(bpath, MAX_REQUEST_BYTES, &q->body_len,
                                         err, sizeof(err)))) {
        kevo__llm_errf(why, n, "%s: left waiting", err);
        return false;
    }
    q->body_json = json_loadb(q->body, q->body_len, 0, &je);
    json_t *stream = json_object_get(q->body_json, "stream");
    bad = !q->body_json                   ? je.text
          : !json_is_object(q->body_json) ? "$: not a JSON object"
          : stream && !json_is_boolean(stream)
              ? "$.stream: must be true or false"
              : NULL;
    if (bad) {
        if (q->body_json)
            kevo__llm_errf(why, n, "%s: %s: left waiting", bpath, bad);
        else
            kevo__llm_errf(why, n,
                           "%s is not JSON: %s (line %d, column %d): left "
                           "waiting",
                           bpath, je.text, je.line, je.column);
        return false;
    }
    q->stream = json_is_true(stream);
    return true;
}

static void answer_lost(llm_relay *r, uint64_t number, const llm_claim *c,
                        const char *more);

/* A batch takes no stream: the body of q without "stream" (and its
 * options), in *body, a new string; false when out of memory. */
static bool unstreamed(const request_files *q, char **body, size_t *len)
{
    json_t *copy = json_deep_copy(q->body_json);
    json_object_del(copy, "stream");
    json_object_del(copy, "stream_options");
    *body = copy ? json_dumps(copy, JSON_COMPACT) : NULL;
    json_decref(copy);
    *len = *body ? strlen(*body) : 0;
    return *body != NULL;
}

/* Sends request number, whose mark is made: lost is NULL, or the mark of
 * the relay gone that sent it in a batch, to take it back from. */
static void send_request(llm_relay *r, uint64_t number, request_files *q,
                         const llm_claim *lost)
{
    char err[600];
    llm_wire_request w = {0};
    llm_outcome outcome = LLM_TRANSPORT;
    size_t t = transport_of(q->model);
    bool batch = transports[t] != &http_transport;
    bool stream = q->stream && !batch;
    char *body = q->body;
    size_t body_len = q->body_len;
    relay_job *j = calloc(1, sizeof(*j));
    const char *rm = json_string_value(json_object_get(q->body_json, "model"));
    if (!j || (rm && !(j->reply_model = kevo__llm_strdup(rm))) ||
        (lost && !(j->batch_id = kevo__llm_strdup(lost->batch))) ||
        (q->stream && batch && !unstreamed(q, &body, &body_len)) ||
        !kevo__llm_wire_forward(q->model, body, body_len, stream, &w)) {
        kevo__llm_errf(err, sizeof(err), "out of memory");
        goto fail;
    }
    j->relay = r;
    j->number = number;
    j->model = q->model;
    j->transport = t;
    kevo__llm_intake_init(&j->in, q->model->api, r->cfg->max_reply_bytes,
                          body_len);
    llm_http_request hr = kevo__llm_wire_http(q->model, &w);
    hr.sink = stream ? &kevo__llm_intake_sink : NULL;
    hr.validate = kevo__llm_intake_validate;
    hr.done = on_done;
    hr.ud = j;
    hr.reply_ud = &j->in;
    llm_relay_send rs = {.model = q->model,
                         .run = r->run,
                         .number = number,
                         .http = &hr,
                         .take_back = lost != NULL,
                         .sent = on_sent};
    /* The budgets, before a request joins a batch. */
    if (!lost && !transports[t]->admits && !admit(r, err, sizeof(err))) {
        outcome = LLM_BUDGET;
        goto fail;
    }
    if (!transports[t]->submit(r->engines[t], &rs, err, sizeof(err)))
        goto fail;
    j->next = r->jobs;
    r->jobs = j;
    r->stats.in_flight++;
    if (lost) {
        r->stats.taken_back++;
        say(r, false,
            "%06" PRIu64 ": taken back into batch %s, sent by relay "
            "%ld on %s",
            number, lost->batch, lost->owner.pid, lost->owner.host);
    } else {
        r->stats.sent++;
        say(r, false, "%06" PRIu64 ": sent to %s (%s%s) at %s", number,
            q->model->name, transports[t]->name,
            q->stream ? (batch ? ", without its stream" : ", streamed") : "",
            w.url);
    }
    goto done;
fail:
    if (j) {
        kevo__llm_intake_free(&j->in);
        free(j->batch_id);
        free(j->reply_model);
        free(j);
    }
    if (lost) {
        answer_lost(r, number, lost, err);
        goto done;
    }
    /* Marked, and never sent: the search gets a failure, not a wait. */
    llm_http_result res = {.outcome = outcome, .body = "", .reason = err};
    char *text = kevo__llm_files_failure(&res, r->secrets.list, r->secrets.n);
    if (text)
        write_reply(r, number, text, strlen(text),
                    kevo__llm_outcome_name(outcome), 0, 0, 0);
    free(text);
    say(r, true, "%06" PRIu64 ": not sent: %s", number, err);
done:
    if (body != q->body)
        free(body);
    kevo__llm_wire_request_free(&w);
}

/* Answers a request that a relay now gone sent, with a failure; more, if
 * not NULL, says why it was not taken back into its batch. */
static void answer_lost(llm_relay *r, uint64_t number, const llm_claim *c,
                        const char *more)
{
    char why[1500];
    kevo__llm_errf(why, sizeof(why),
                   "relay %ld on %s sent the request at %s and stopped "
                   "before its reply came; it is not sent again%s%s%s%s%s",
                   c->owner.pid, c->owner.host, c->claimed,
                   more ? " (its batch " : "", more ? c->batch : "",
                   more ? ": " : "", more ? more : "", more ? ")" : "");
    llm_http_result res = {
        .outcome = LLM_TRANSPORT, .attempts = 1, .body = "", .reason = why};
    char *text = kevo__llm_files_failure(&res, r->secrets.list, r->secrets.n);
    if (text && write_reply(r, number, text, strlen(text), "lost", 0, 0, 0)) {
        r->stats.lost++;
        say(r, true, "%06" PRIu64 ": %s: its reply is that failure", number,
            why);
    }
    free(text);
}

static bool in_flight(const llm_relay *r, uint64_t number)
{
    for (const relay_job *j = r->jobs; j; j = j->next)
        if (j->number == number)
            return true;
    return false;
}

static int by_number(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The numbers of DIR/pending/NNNNNN.json, in order, in a new array of *n;
 * NULL when there are none. */
static uint64_t *pending_numbers(const llm_relay *r, size_t *n)
{
    char path[4096];
    uint64_t *v = NULL;
    size_t cap = 0;
    *n = 0;
    snprintf(path, sizeof(path), "%s/pending", r->dir);
    DIR *d = opendir(path);
    if (!d)
        return NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t x = kevo__llm_files_number(e->d_name, false);
        if (!x)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            uint64_t *nv = realloc(v, cap * sizeof(*v));
            if (!nv)
                break;
            v = nv;
        }
        v[(*n)++] = x;
    }
    closedir(d);
    if (v)
        qsort(v, *n, sizeof(*v), by_number);
    return v;
}

/* Takes request number, which a relay now gone sent in batch c->batch,
 * back into that batch, to write its reply when the batch ends. Returns
 * whether it was taken back. */
static bool take_back(llm_relay *r, uint64_t number, const llm_claim *c)
{
    char why[1500];
    request_files q;
    bool taken = false;
    if (!read_request(r, number, &q, why, sizeof(why))) {
        problem_note(r, number, why, true);
    } else if (!q.model->batch) {
        answer_lost(r, number, c,
                    "the relay's model of its name does not use \"transport\": "
                    "\"batch\"");
    } else if (!kevo__llm_claim_retake(r->dir, number, &r->me, why,
                                       sizeof(why))) {
        problem_note(r, number, why, true);
    } else {
        problem_clear(r, number);
        send_request(r, number, &q, c);
        taken = true;
    }
    request_files_free(&q);
    return taken;
}

/* Looks at request number: sends it, or says why not. Returns whether it
 * was sent. */
static bool consider(llm_relay *r, uint64_t number)
{
    char path[4096], why[1500];
    struct stat sb;
    file_path(path, sizeof(path), r, "done", number, "");
    if (in_flight(r, number) || stat(path, &sb) == 0) {
        problem_clear(r, number);
        return false;
    }
    llm_claim c;
    kevo__llm_claim_read(r->dir, number, &r->me, &c);
    switch (c.state) {
    case LLM_CLAIM_LIVE:
        kevo__llm_errf(why, sizeof(why),
                       "%06" PRIu64 ": in flight at relay %ld on %s since %s: "
                       "left to it",
                       number, c.owner.pid, c.owner.host, c.claimed);
        problem_note(r, number, why, false);
        return false;
    case LLM_CLAIM_STALE:
        if (c.batch[0])
            return take_back(r, number, &c);
        answer_lost(r, number, &c, NULL);
        return false;
    case LLM_CLAIM_ENDED:
        kevo__llm_errf(why, sizeof(why),
                       "%06" PRIu64 ": its mark says it ended (%s) but %s is "
                       "not there: not sent again",
                       number, c.outcome, path);
        problem_note(r, number, why, true);
        return false;
    case LLM_CLAIM_BAD:
        kevo__llm_errf(why, sizeof(why), "%s: not sent", c.why);
        problem_note(r, number, why, true);
        return false;
    case LLM_CLAIM_NONE: break;
    }
    request_files q;
    bool sent = false, taken = false;
    char *url = NULL;
    if (!read_request(r, number, &q, why, sizeof(why))) {
        problem_note(r, number, why, true);
    } else if (!(url = kevo__llm_wire_url(q.model)) ||
               !kevo__llm_claim_take(r->dir, number, &r->me, q.model->name, url,
                                     &taken, why, sizeof(why))) {
        problem_note(r, number, why, true);
    } else if (taken) {
        problem_clear(r, number);
        send_request(r, number, &q, NULL);
        sent = true;
    }
    request_files_free(&q);
    free(url);
    return sent;
}

size_t kevo__llm_relay_scan(llm_relay *r)
{
    size_t n = 0, sent = 0;
    uint64_t *v = pending_numbers(r, &n);
    for (size_t i = 0; i < n; i++)
        sent += consider(r, v[i]);
    free(v);
    return sent;
}

size_t kevo__llm_relay_poll(llm_relay *r, int timeout_ms)
{
    for (size_t i = 0; i < NTRANSPORTS; i++) {
        if (transports[i]->pending(r->engines[i]) == 0)
            continue;
        transports[i]->poll(r->engines[i], timeout_ms);
        timeout_ms = 0;
    }
    return r->stats.in_flight;
}

void kevo__llm_relay_stats_get(const llm_relay *r, llm_relay_stats *out)
{
    *out = r->stats;
    out->in_batches = 0;
    for (const relay_job *j = r->jobs; j; j = j->next)
        out->in_batches += transports[j->transport] != &http_transport;
    out->busy = 0;
    for (size_t i = 0; i < NTRANSPORTS; i++)
        out->busy += transports[i]->busy(r->engines[i]);
    out->problems = 0;
    out->elsewhere = 0;
    for (size_t i = 0; i < r->nproblems; i++) {
        out->problems += r->problems[i].trouble;
        out->elsewhere += !r->problems[i].trouble;
    }
    out->ledger_tokens =
        r->ledger_tokens + r->stats.input_tokens + r->stats.output_tokens;
    out->ledger_cost = r->ledger_cost + r->stats.cost;
}

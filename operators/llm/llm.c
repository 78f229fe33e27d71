/*
 * llm.c: the llm mutation operator, a plugin. For each child a request
 * wants it builds a prompt from what the host shows, draws a model by
 * weight, sends the request through the request engine, and turns the reply
 * into a child through the reply parser. A request to revise a meta-prompt
 * (ABI 1.1) goes the same way with its own prompt and reply parser, and
 * ends in a revised prompt. A request to repair a failed child (ABI 1.2)
 * continues the conversation that gave the child with kevo's diagnostic
 * (repair.h). Every request and reply is saved under RUN/llm/
 * with the API keys redacted; tokens and cost are counted against the
 * budgets and reported to the host.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kevo/operator.h>

#include "batch.h"
#include "buf.h"
#include "files.h"
#include "http.h"
#include "prompt.h"
#include "prompt_failures.h"
#include "repair.h"
#include "reply.h"
#include "revision.h"
#include "runlog.h"
#include "stream.h"
#include "wire.h"
#include "wire_reply.h"
#include "wire_request.h"

/* Failure kinds counted apart in the summary. */
#define KINDS_MAX 16

typedef struct llm_state llm_state;

/* One request of the host: it ends when its last call has ended. */
typedef struct llm_req {
    llm_state *st;
    uint64_t id;
    bool revision;       /* a request to revise a meta-prompt */
    bool repair;         /* a request to repair a failed child (ABI 1.2) */
    char *parent_source; /* a request for children: the parent's source; a
                            repair: the failed child's */
    llm_convo convo;     /* a request for children or a repair: what each
                            call sends (repair.h) */
    uint32_t attempts;   /* its calls of emit_child so far */
    /* A revision: the prompt's sections, borrowed from the host's request,
     * which stays valid until the request is done. */
    const kevo_operator_text *sections;
    size_t n_sections;
    uint32_t calls_left;
    struct llm_req *prev, *next;
} llm_req;

/* One call to a model, for one child. */
typedef struct llm_call {
    llm_req *req;
    size_t model;
    uint64_t seq;  /* the number in its log file names */
    json_t *log;   /* what goes to the reply file */
    llm_intake in; /* the reply, whole or streamed */
} llm_call;

struct llm_state {
    const kevo_host_api *api;
    kevo_host_ctx *ctx;
    kevo_reply_host reply_host; /* what the reply parser asks kevo */
    llm_config cfg;
    llm_http *http;
    /* The files transport's engines, one per directory of the models that
     * use it (files[i] serves the models whose dir is its). */
    llm_files **files;
    size_t nfiles;
    /* The batch transport's engines, one per model that uses it (NULL
     * until its first request). */
    llm_batch **batches;
    llm_secrets secrets; /* every model's key, also as JSON escapes it */
    llm_runlog log;      /* the files in RUN/llm */
    /* The run directory the files follow (the host's, as last seen), or
     * NULL before the host knows one; and the instance's configuration,
     * for its file there. */
    char *log_run_dir;
    char *log_failed_for; /* a run directory whose files failed */
    char *config_text;
    llm_req *reqs;
    size_t nreqs;
    uint64_t instance_seq; /* the number of its instance file */

    uint64_t input_tokens, output_tokens;
    double cost;
    bool budget_reported;
    uint64_t calls, children, replies;
    uint64_t requests, revisions, prompts;
    const char *kinds[KINDS_MAX]; /* failure kinds seen (static strings) */
    uint64_t kind_counts[KINDS_MAX];
    size_t nkinds;
    uint64_t reply_failures, refused_children;
    llm_convos convos; /* the conversations of recent children */
    uint64_t repairs, repair_children;
};

/* ---- redaction and files ----------------------------------------------- */

static char *redact(const llm_state *st, const char *text)
{
    return kevo__llm_redact(text, strlen(text), st->secrets.list,
                            st->secrets.n);
}

/* Logs a line through the host after redacting it. */
static void say(llm_state *st, kevo_log_level level, const char *fmt, ...)
    LLM_PRINTF(3, 4);

static void say(llm_state *st, kevo_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *r =
        kevo__llm_redact_vprintf(st->secrets.list, st->secrets.n, fmt, ap);
    va_end(ap);
    st->api->log(st->ctx, level, "%s",
                 r ? r : "(a log line was lost: out of memory)");
    free(r);
}

/* Writes value to the run directory's file NNNNNN-SUFFIX.json of a number
 * already claimed, logging a failure. */
static void save_json(llm_state *st, const char *suffix, uint64_t seq,
                      json_t *value)
{
    int rc = kevo__llm_runlog_save(&st->log, suffix, seq, value);
    if (rc != 0)
        say(st, KEVO_LOG_WARN, "cannot write %06" PRIu64 "-%s in %s: %s", seq,
            suffix, st->log.dir, strerror(rc));
}

/* Claims the next number with a new file NNNNNN-SUFFIX.json holding value,
 * logging a failure; returns the number. */
static uint64_t claim_json(llm_state *st, const char *suffix, json_t *value)
{
    int rc;
    uint64_t seq = kevo__llm_runlog_claim(&st->log, suffix, value, &rc);
    if (rc != 0)
        say(st, KEVO_LOG_WARN, "cannot write %06" PRIu64 "-%s in %s: %s", seq,
            suffix, st->log.dir, strerror(rc));
    return seq;
}

static const kevo_operator_desc llm_desc;
static void write_summary(llm_state *st);

/* Opens the files of RUN/llm/ for the host's run directory, with the
 * instance's file first: at init when the host knows the directory then,
 * else at the first call that finds one (a caller may open its run after
 * adding its operators), and again in another directory when the host's
 * changes (the summary so far goes to the one left). Returns 0, or an
 * errno value with the reason in err; the files then wait for the next
 * call. */
static int follow_run_dir(llm_state *st, char *err, size_t n)
{
    const char *rd = st->api->run_dir(st->ctx);
    if (!rd || (st->log_run_dir && strcmp(rd, st->log_run_dir) == 0))
        return 0;
    char *copy = kevo__llm_strdup(rd);
    if (!copy) {
        kevo__llm_errf(err, n, "out of memory");
        return ENOMEM;
    }
    if (st->log.dir)
        write_summary(st);
    kevo__llm_runlog_close(&st->log);
    free(st->log_run_dir);
    st->log_run_dir = NULL;
    int rc = kevo__llm_runlog_open(&st->log, rd, err, n);
    st->log.secrets = st->secrets.list;
    st->log.nsecrets = st->secrets.n;
    if (rc != 0) {
        free(copy);
        return rc;
    }
    st->log_run_dir = copy;
    json_t *inst = json_pack(
        "{s:I, s:s, s:s, s:o, s:s}", "seq", (json_int_t)0, "plugin",
        llm_desc.name, "version", llm_desc.version, "config",
        st->config_text ? json_loads(st->config_text, 0, NULL) : json_null(),
        "instance", st->api->instance_name(st->ctx));
    if (!inst) {
        kevo__llm_errf(err, n, "out of memory");
        return ENOMEM;
    }
    st->instance_seq = claim_json(st, "instance", inst);
    json_decref(inst);
    return 0;
}

/* follow_run_dir() from a call of the host's (propose, revise, repair,
 * poll, fini): a directory that cannot be made is logged, once for each
 * directory, and the instance goes on without its files. */
static void follow_run_dir_or_warn(llm_state *st)
{
    char err[1024];
    const char *rd = st->api->run_dir(st->ctx);
    if (!rd || (st->log_run_dir && strcmp(rd, st->log_run_dir) == 0) ||
        (st->log_failed_for && strcmp(rd, st->log_failed_for) == 0))
        return;
    if (follow_run_dir(st, err, sizeof err) != 0) {
        say(st, KEVO_LOG_WARN, "no files in the run directory: %s", err);
        free(st->log_failed_for);
        st->log_failed_for = kevo__llm_strdup(rd);
    }
}

/* Records a failure with the host (reason already redacted) and counts its
 * kind. */
static void host_fail(llm_state *st, uint64_t id, const char *kind,
                      const char *reason)
{
    size_t i;
    for (i = 0; i < st->nkinds; i++)
        if (strcmp(st->kinds[i], kind) == 0)
            break;
    if (i == st->nkinds && i < KINDS_MAX)
        st->kinds[st->nkinds++] = kind;
    if (i < KINDS_MAX)
        st->kind_counts[i]++;
    st->api->fail(st->ctx, id, kind, reason);
}

/* ---- budgets ----------------------------------------------------------- */

/* Whether a new request may be sent; the reason in why when not. The
 * budget counts what the host says the instance spent (ABI 1.5), which in
 * a resumed search includes the runs before it: a search answered through
 * files stops and resumes at every request. */
static bool budget_left(llm_state *st, char *why, size_t n)
{
    uint64_t in = st->input_tokens, out = st->output_tokens;
    double cost = st->cost;
    if (KEVO_HOST_API_HAS(st->api, usage))
        st->api->usage(st->ctx, &in, &out, &cost);
    return kevo__llm_budget_left(&st->cfg, in + out, cost, why, n);
}

static bool admit(void *ud, char *why, size_t n)
{
    llm_state *st = ud;
    if (budget_left(st, why, n))
        return true;
    if (!st->budget_reported) {
        st->budget_reported = true;
        say(st, KEVO_LOG_WARN, "%s", why);
    }
    return false;
}

static double jitter(void *ud)
{
    llm_state *st = ud;
    return st->api->uniform01(st->ctx);
}

/* ---- requests ---------------------------------------------------------- */

static void req_unlink_free(llm_req *r)
{
    llm_state *st = r->st;
    if (r->prev)
        r->prev->next = r->next;
    else
        st->reqs = r->next;
    if (r->next)
        r->next->prev = r->prev;
    st->nreqs--;
    free(r->parent_source);
    kevo__llm_convo_free(&r->convo);
    free(r);
}

/* A new request of the host, in the instance's list; NULL (with the
 * reason given to the host) when out of memory. */
static llm_req *req_new(llm_state *st, uint64_t id, uint32_t calls)
{
    llm_req *r = calloc(1, sizeof(*r));
    if (!r) {
        st->api->error(st->ctx, "out of memory");
        return NULL;
    }
    r->st = st;
    r->id = id;
    r->calls_left = calls;
    r->next = st->reqs;
    if (st->reqs)
        st->reqs->prev = r;
    st->reqs = r;
    st->nreqs++;
    return r;
}

/* One call has ended: the request ends with its last call. */
static void call_finished(llm_call *c)
{
    llm_req *r = c->req;
    llm_state *st = r->st;
    save_json(st, "reply", c->seq, c->log);
    json_decref(c->log);
    kevo__llm_intake_free(&c->in);
    free(c);
    if (--r->calls_left == 0) {
        st->api->done(st->ctx, r->id);
        req_unlink_free(r);
    }
}

/* Records a failure of a call with the host, redacted. */
static void call_fail(llm_call *c, const char *kind, const char *reason)
{
    llm_state *st = c->req->st;
    const llm_model *m = &st->cfg.models[c->model];
    llm_buf b = {0};
    kevo__llm_buf_printf(&b, "%s (model %s, log %06" PRIu64 ")", reason,
                         m->name, c->seq);
    char *red = b.data && !b.failed ? redact(st, b.data) : NULL;
    char *clean = red ? kevo__llm_utf8_clean(red, strlen(red)) : NULL;
    const char *text = clean ? clean : "out of memory for the reason";
    json_object_set_new(c->log, "failure",
                        json_pack("{s:s, s:s}", "kind", kind, "reason", text));
    host_fail(st, c->req->id, kind, text);
    free(clean);
    free(red);
    kevo__llm_buf_free(&b);
}

static const char *reply_fail_kind(kevo_reply_kind k)
{
    switch (k) {
    case KEVO_REPLY_EMPTY:
    case KEVO_REPLY_NO_CODE: return KEVO_FAIL_NO_CODE;
    case KEVO_REPLY_MALFORMED_EDIT:
    case KEVO_REPLY_EDIT_NOT_FOUND:
    case KEVO_REPLY_EDIT_AMBIGUOUS:
    case KEVO_REPLY_NO_PARENT: return KEVO_FAIL_EDIT;
    case KEVO_REPLY_NOMEM: return KEVO_FAIL_INTERNAL;
    case KEVO_REPLY_TRUNCATED: return "truncated";
    case KEVO_REPLY_HOST_CODE: return "host_code";
    default: return KEVO_FAIL_PARSE;
    }
}

static const char *outcome_fail_kind(llm_outcome o)
{
    switch (o) {
    case LLM_HTTP_ERROR: return KEVO_FAIL_HTTP;
    case LLM_TIMEOUT: return KEVO_FAIL_TIMEOUT;
    case LLM_MALFORMED: return KEVO_FAIL_PARSE;
    case LLM_TOO_LARGE: return "too_large";
    case LLM_BUDGET: return KEVO_FAIL_BUDGET;
    case LLM_TRUNCATED:
    case LLM_TRANSPORT: return KEVO_FAIL_NETWORK;
    default: return KEVO_FAIL_INTERNAL;
    }
}

static void on_attempt(void *ud, const llm_http_attempt *a)
{
    llm_call *c = ud;
    json_t *attempts = json_object_get(c->log, "attempts");
    char *reason = kevo__llm_utf8_clean(a->reason, strlen(a->reason));
    json_t *rec = json_pack("{s:i, s:s, s:I, s:f, s:s}", "number", a->number,
                            "outcome", kevo__llm_outcome_name(a->outcome),
                            "status", (json_int_t)a->status, "elapsed_s",
                            a->elapsed_s, "reason", reason ? reason : "");
    free(reason);
    if (!rec)
        return;
    if (a->retry_after_s >= 0)
        json_object_set_new(rec, "retry_after_s", json_real(a->retry_after_s));
    if (a->retry_in_s >= 0)
        json_object_set_new(rec, "retry_in_s", json_real(a->retry_in_s));
    if (a->streamed)
        json_object_set_new(rec, "stream",
                            json_pack("{s:I, s:I}", "bytes",
                                      (json_int_t)a->stream_bytes, "events",
                                      (json_int_t)a->stream_events));
    json_object_set_new(rec, "body", kevo__llm_json_body(a->body, a->body_len));
    json_array_append_new(attempts, rec);
}

/* The longest first line of a reply a failure quotes, in bytes. */
#define FIRST_LINE_MAX 120

/* Appends "; it began: "LINE"" to b: the first line of text that is not
 * blank, trimmed, cut at FIRST_LINE_MAX bytes (on a character's start),
 * so that a failure says what the model wrote instead of a kernel.
 * Nothing for a reply without text. */
static void first_line(llm_buf *b, const char *text, size_t len)
{
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' ||
                       text[i] == '\r'))
        i++;
    size_t end = i;
    while (end < len && text[end] != '\n' && text[end] != '\r')
        end++;
    while (end > i && (text[end - 1] == ' ' || text[end - 1] == '\t'))
        end--;
    if (end == i)
        return;
    bool cut = end - i > FIRST_LINE_MAX;
    if (cut) {
        end = i + FIRST_LINE_MAX;
        while (end > i && ((unsigned char)text[end] & 0xC0) == 0x80)
            end--;
    }
    kevo__llm_buf_printf(b, "; it began: \"%.*s%s\"", (int)(end - i), text + i,
                         cut ? "..." : "");
}

/* Logs how a reply parsed (kind and reason). When it gave nothing (ok is
 * false), counts the failure and fails the request with fail_kind,
 * saying that the reply gave no `what`, and why. */
static void parse_outcome(llm_call *c, bool ok, const char *kind,
                          const char *reason, const char *what,
                          const char *fail_kind)
{
    llm_state *st = c->req->st;
    json_object_set_new(c->log, "parse",
                        json_pack("{s:s, s:o}", "kind", kind, "reason",
                                  kevo__llm_json_text(reason ? reason : "")));
    if (ok)
        return;
    st->reply_failures++;
    llm_buf b = {0};
    kevo__llm_buf_printf(&b, "the reply gave no %s: %s: %s%s", what, kind,
                         reason ? reason : "out of memory",
                         c->in.wire.cut_off && strcmp(kind, "truncated") != 0
                             ? " (the reply stopped at max_tokens)"
                             : "");
    first_line(&b, c->in.wire.text, c->in.wire.text_len);
    call_fail(c, fail_kind, b.data ? b.data : "out of memory");
    kevo__llm_buf_free(&b);
}

/* The reply text became a child, or a failure. */
static void take_reply(llm_call *c)
{
    llm_state *st = c->req->st;
    const llm_model *m = &st->cfg.models[c->model];
    kevo_reply_result res = {0};
    kevo_reply_kind k = kevo__reply_parse(
        c->in.wire.text, c->in.wire.text_len, c->req->parent_source, 0,
        c->in.wire.cut_off ? KEVO_REPLY_CUT_OFF : 0, &st->reply_host, &res);
    parse_outcome(c, k == KEVO_REPLY_OK, kevo__reply_kind_name(k), res.reason,
                  "child", reply_fail_kind(k));
    if (k != KEVO_REPLY_OK)
        goto done;
    llm_buf note = {0};
    kevo__llm_buf_printf(&note, "%s: %s", m->name, res.reason);
    char *clean_note = note.data ? redact(st, note.data) : NULL;
    char *clean_child = redact(st, res.child);
    if (!clean_child) {
        call_fail(c, KEVO_FAIL_INTERNAL, "out of memory for the child");
    } else {
        /* The host numbers the calls of emit_child per request: a repair
         * of this child names that number. */
        uint32_t attempt = c->req->attempts++;
        kevo_status rc = st->api->emit_child(st->ctx, c->req->id, clean_child,
                                             NULL, clean_note);
        kevo__llm_convos_put(&st->convos, c->req->id, attempt, &c->req->convo,
                             c->in.wire.text);
        if (rc == KEVO_OK) {
            st->children++;
            st->repair_children += c->req->repair;
            json_object_set_new(c->log, "child",
                                kevo__llm_json_text(clean_child));
            say(st, KEVO_LOG_INFO, "request %" PRIu64 ": a child from %s (%s)",
                c->req->id, m->name, res.reason);
        } else {
            st->refused_children++;
            llm_buf b = {0};
            kevo__llm_buf_printf(&b, "the host refused the child: %s",
                                 st->api->last_error(st->ctx));
            json_object_set_new(c->log, "refused_child",
                                kevo__llm_json_text(clean_child));
            call_fail(c,
                      rc == KEVO_EEXIST   ? "duplicate"
                      : rc == KEVO_ENOMEM ? KEVO_FAIL_INTERNAL
                                          : KEVO_FAIL_INVALID,
                      b.data ? b.data : "the host refused the child");
            kevo__llm_buf_free(&b);
        }
    }
    free(clean_child);
    free(clean_note);
    kevo__llm_buf_free(&note);
done:
    kevo__reply_result_free(&res);
}

static const char *revision_fail_kind(llm_revision_kind k)
{
    switch (k) {
    case LLM_REVISION_EMPTY:
    case LLM_REVISION_NO_JSON:
    case LLM_REVISION_TRUNCATED:
    case LLM_REVISION_MALFORMED:
    case LLM_REVISION_NOT_OBJECT: return KEVO_FAIL_PARSE;
    case LLM_REVISION_NOMEM: return KEVO_FAIL_INTERNAL;
    default: return KEVO_FAIL_INVALID;
    }
}

/* The reply text of a revision request became a revised prompt, or a
 * failure. */
static void take_revision(llm_call *c)
{
    llm_state *st = c->req->st;
    const llm_model *m = &st->cfg.models[c->model];
    llm_revision_result res = {0};
    llm_revision_kind k =
        kevo__llm_revision_parse(c->in.wire.text, c->in.wire.text_len,
                                 c->req->sections, c->req->n_sections, &res);
    parse_outcome(c, k == LLM_REVISION_OK, kevo__llm_revision_kind_name(k),
                  res.reason, "revised prompt", revision_fail_kind(k));
    if (k != LLM_REVISION_OK)
        goto done;
    llm_buf note = {0};
    kevo__llm_buf_printf(&note, "%s: %s", m->name, res.reason);
    char *clean_note = note.data ? redact(st, note.data) : NULL;
    /* The sections redacted, and as the reply file shows them. */
    kevo_operator_text *clean = calloc(res.n_sections + 1, sizeof(*clean));
    json_t *shown = json_object();
    bool nomem = !clean || !shown;
    for (size_t i = 0; !nomem && i < res.n_sections; i++) {
        clean[i].name = res.sections[i].name;
        clean[i].text = redact(st, res.sections[i].text);
        nomem = !clean[i].text ||
                json_object_set_new(shown, clean[i].name,
                                    json_string(clean[i].text)) != 0;
    }
    if (nomem) {
        call_fail(c, KEVO_FAIL_INTERNAL, "out of memory for the prompt");
    } else {
        kevo_status rc = st->api->emit_prompt_sections(
            st->ctx, c->req->id, clean, res.n_sections, clean_note);
        if (rc == KEVO_OK) {
            st->prompts++;
            json_object_set(c->log, "prompt", shown);
            say(st, KEVO_LOG_INFO,
                "request %" PRIu64 ": a revised prompt from %s (%s)",
                c->req->id, m->name, res.reason);
        } else {
            json_object_set(c->log, "refused_prompt", shown);
            llm_buf b = {0};
            kevo__llm_buf_printf(&b, "the host refused the revised prompt: %s",
                                 st->api->last_error(st->ctx));
            call_fail(c,
                      rc == KEVO_EEXIST   ? "duplicate"
                      : rc == KEVO_ENOMEM ? KEVO_FAIL_INTERNAL
                                          : KEVO_FAIL_INVALID,
                      b.data ? b.data : "the host refused the prompt");
            kevo__llm_buf_free(&b);
        }
    }
    for (size_t i = 0; clean && i < res.n_sections; i++)
        free((char *)clean[i].text);
    free(clean);
    json_decref(shown);
    free(clean_note);
    kevo__llm_buf_free(&note);
done:
    kevo__llm_revision_result_free(&res);
}

/* Counts a call's tokens and their cost against the budgets, tells the
 * host, and logs them; estimated when the server reported no usage. */
static void count_usage(llm_call *c, uint64_t in, uint64_t out, bool estimated)
{
    llm_state *st = c->req->st;
    const llm_model *m = &st->cfg.models[c->model];
    st->input_tokens += in;
    st->output_tokens += out;
    double cost = kevo__llm_model_cost(m, in, out);
    st->cost += cost;
    st->api->report_usage(st->ctx, in, out, cost);
    json_t *u = json_pack("{s:I, s:I, s:f}", "input_tokens", (json_int_t)in,
                          "output_tokens", (json_int_t)out, "cost", cost);
    if (u && estimated)
        json_object_set_new(u, "estimated", json_true());
    if (u && (c->in.spent_in || c->in.spent_out))
        json_object_set_new(
            u, "failed_attempts",
            json_pack("{s:I, s:I}", "input_tokens", (json_int_t)c->in.spent_in,
                      "output_tokens", (json_int_t)c->in.spent_out));
    json_object_set_new(c->log, "usage", u);
}

static void on_done(void *ud, const llm_http_result *r)
{
    llm_call *c = ud;
    llm_state *st = c->req->st;
    if (r->outcome == LLM_CANCELLED) {
        /* The instance is going away: the host fails what is left. */
        json_object_set_new(c->log, "outcome", json_string("cancelled"));
        save_json(st, "reply", c->seq, c->log);
        json_decref(c->log);
        kevo__llm_intake_free(&c->in);
        free(c);
        return;
    }
    json_object_set_new(c->log, "outcome",
                        json_string(kevo__llm_outcome_name(r->outcome)));
    json_object_set_new(c->log, "elapsed_s", json_real(r->elapsed_s));
    if (r->outcome != LLM_OK) {
        /* The last attempt's stream, if it began, is paid for too. */
        kevo__llm_intake_spend(&c->in);
        if (c->in.spent_in || c->in.spent_out)
            count_usage(c, c->in.spent_in, c->in.spent_out, true);
        llm_buf b = {0};
        const char *kind = outcome_fail_kind(r->outcome);
        if (r->outcome == LLM_BUDGET) {
            kevo__llm_buf_puts(&b, r->reason);
        } else {
            char *e = r->outcome == LLM_HTTP_ERROR
                          ? kevo__llm_wire_error_text(r->body, r->body_len)
                          : NULL;
            if (r->outcome == LLM_HTTP_ERROR &&
                kevo__llm_wire_error_kind(r->body, r->body_len))
                kind = LLM_FAIL_CONTEXT;
            kevo__llm_buf_printf(&b,
                                 "%s: ", kevo__llm_outcome_name(r->outcome));
            /* The API's error object says more than the body's first
             * bytes. */
            if (e)
                kevo__llm_buf_printf(&b, "HTTP %ld: %s (after %d attempt%s)",
                                     r->status, e, r->attempts,
                                     r->attempts == 1 ? "" : "s");
            else
                kevo__llm_buf_puts(&b, r->reason);
            free(e);
        }
        call_fail(c, kind, b.data ? b.data : "out of memory");
        kevo__llm_buf_free(&b);
        call_finished(c);
        return;
    }
    st->replies++;
    llm_wire_reply *w = &c->in.wire;
    uint64_t in, out;
    kevo__llm_wire_tokens(w, c->in.request_bytes, &in, &out);
    count_usage(c, in + c->in.spent_in, out + c->in.spent_out, !w->has_usage);
    json_object_set_new(c->log, "text", json_stringn(w->text, w->text_len));
    if (w->reasoning_len)
        json_object_set_new(c->log, "reasoning",
                            json_stringn(w->reasoning, w->reasoning_len));
    if (w->redacted_thinking)
        json_object_set_new(c->log, "redacted_thinking",
                            json_integer((json_int_t)w->redacted_thinking));
    if (w->finish[0])
        json_object_set_new(c->log, "finish_reason", json_string(w->finish));
    json_object_set_new(c->log, "streamed", json_boolean(w->streamed));
    if (w->cut_off)
        json_object_set_new(c->log, "cut_off", json_true());
    if (w->fail_kind) {
        st->reply_failures++;
        call_fail(c, w->fail_kind,
                  w->fail_reason ? w->fail_reason : "the reply is unusable");
    } else if (c->req->revision) {
        take_revision(c);
    } else {
        take_reply(c);
    }
    call_finished(c);
}

/* The request for a system text and a user text, followed by the later
 * turns of the conversation cv (a repair's: the model's reply, then what
 * failed), when it has any. */
static bool build_request(const llm_model *m, const char *system,
                          const char *user, const llm_convo *cv,
                          llm_wire_request *w)
{
    if (!cv || cv->nturns <= 1)
        return kevo__llm_wire_build(m, system, user, w);
    llm_turn *t = calloc(cv->nturns, sizeof *t);
    if (!t)
        return false;
    t[0] = (llm_turn){"user", user};
    for (size_t i = 1; i < cv->nturns; i++)
        t[i] = (llm_turn){i % 2 ? "assistant" : "user", cv->turns[i]};
    bool ok = kevo__llm_wire_build_turns(m, system, t, cv->nturns, w);
    free(t);
    return ok;
}

/* The files engine of model m's directory. */
static llm_files *files_for(llm_state *st, const llm_model *m)
{
    for (size_t i = 0; i < st->nfiles; i++)
        if (strcmp(kevo__llm_files_dir(st->files[i]), m->dir) == 0)
            return st->files[i];
    return NULL;
}

/* The run directory by its real path, in a new string (NULL without
 * one): what a resumed search finds its own requests by. */
static char *run_path(llm_state *st)
{
    const char *rd = st->api->run_dir(st->ctx);
    char *run = rd ? realpath(rd, NULL) : NULL;
    return run ? run : kevo__llm_strdup(rd);
}

/* Writes call c's request as files; false with a failure recorded. */
static bool submit_files(llm_state *st, llm_call *c, const llm_model *m,
                         const llm_wire_request *w)
{
    char err[512];
    uint64_t number = 0;
    char *run = run_path(st);
    llm_files_request fr = {
        .api = kevo__llm_api_name(m->api),
        .url = w->url,
        .model = m->name,
        .run = run,
        .request = c->req->id,
        .body = w->body,
        .body_len = w->body_len,
        .validate = kevo__llm_intake_validate,
        .attempt = on_attempt,
        .done = on_done,
        .ud = c,
        .reply_ud = &c->in,
    };
    bool ok = kevo__llm_files_submit(files_for(st, m), &fr, &number, err,
                                     sizeof(err));
    free(run);
    if (!ok) {
        call_fail(c, KEVO_FAIL_INTERNAL, err);
        return false;
    }
    json_object_set_new(c->log, "file", json_integer((json_int_t)number));
    st->api->waiting(st->ctx, c->req->id, m->dir);
    say(st, KEVO_LOG_INFO,
        "request %" PRIu64 " waits for %s/done/%06" PRIu64 ".json", c->req->id,
        m->dir, number);
    return true;
}

static void batch_sent(void *ud, const char *batch_id, const char *custom_id)
{
    llm_call *c = ud;
    json_object_set_new(
        c->log, "batch",
        json_pack("{s:s, s:s}", "id", batch_id, "custom_id", custom_id));
    say(c->req->st, KEVO_LOG_DEBUG, "request %" PRIu64 " is %s in batch %s",
        c->req->id, custom_id, batch_id);
}

static void batch_waiting(void *ud, const char *where)
{
    llm_call *c = ud;
    llm_state *st = c->req->st;
    st->api->waiting(st->ctx, c->req->id, where);
    say(st, KEVO_LOG_INFO, "request %" PRIu64 " waits for %s", c->req->id,
        where);
}

static void batch_say(void *ud, bool warning, const char *text)
{
    say((llm_state *)ud, warning ? KEVO_LOG_WARN : KEVO_LOG_INFO, "%s", text);
}

/* The batch engine of model mi, made at its first request (its state
 * directory is the model's dir, else RUN/llm/batches). NULL with a
 * reason in err. */
static llm_batch *batch_for(llm_state *st, size_t mi, const llm_wire_request *w,
                            char *err, size_t n)
{
    if (st->batches[mi])
        return st->batches[mi];
    const llm_model *m = &st->cfg.models[mi];
    llm_buf dir = {0};
    if (m->dir)
        kevo__llm_buf_puts(&dir, m->dir);
    else if (st->log.dir)
        kevo__llm_buf_printf(&dir, "%s/batches", st->log.dir);
    if (dir.failed) {
        kevo__llm_errf(err, n, "out of memory");
        return NULL;
    }
    llm_batch_config bc = kevo__llm_batch_config_of(
        &st->cfg, m, w->url, (const char *const *)w->headers, w->nheaders);
    bc.state_dir = dir.data;
    bc.say = batch_say;
    bc.say_ud = st;
    st->batches[mi] = kevo__llm_batch_new(&bc, err, n);
    kevo__llm_buf_free(&dir);
    return st->batches[mi];
}

/* Adds call c's request to its model's batch; false with a failure
 * recorded. */
static bool submit_batch(llm_state *st, llm_call *c, const llm_wire_request *w)
{
    char err[512];
    if (!admit(st, err, sizeof(err))) {
        call_fail(c, KEVO_FAIL_BUDGET, err);
        return false;
    }
    llm_batch *b = batch_for(st, c->model, w, err, sizeof(err));
    if (!b) {
        call_fail(c, KEVO_FAIL_INTERNAL, err);
        return false;
    }
    char *run = run_path(st);
    llm_batch_request br = {
        .run = run,
        .request = c->req->id,
        .body = w->body,
        .body_len = w->body_len,
        .validate = kevo__llm_intake_validate,
        .attempt = on_attempt,
        .done = on_done,
        .sent = batch_sent,
        .waiting = batch_waiting,
        .ud = c,
        .reply_ud = &c->in,
    };
    bool ok = kevo__llm_batch_submit(b, &br, err, sizeof(err));
    free(run);
    if (!ok)
        call_fail(c, KEVO_FAIL_INTERNAL, err);
    return ok;
}

/* Starts one call of request r with the prompt given. Returns false (with
 * a failure recorded) when it could not be sent. */
static bool start_call(llm_state *st, llm_req *r, const char *system,
                       const char *user)
{
    llm_call *c = calloc(1, sizeof(*c));
    llm_wire_request w = {0};
    bool ok = false;
    if (!c) {
        host_fail(st, r->id, KEVO_FAIL_INTERNAL, "out of memory");
        return false;
    }
    c->req = r;
    c->model = kevo__llm_config_pick(&st->cfg, st->api->uniform01(st->ctx));
    const llm_model *m = &st->cfg.models[c->model];
    const char *kind = r->revision ? "revision"
                       : r->repair ? "repair"
                                   : "child";
    if (!build_request(m, system, user, &r->convo, &w)) {
        c->seq = ++st->log.seq;
        c->log = json_pack("{s:I, s:I, s:s, s:s, s:s, s:[]}", "seq",
                           (json_int_t)c->seq, "request", (json_int_t)r->id,
                           "kind", kind, "model", m->name, "api",
                           kevo__llm_api_name(m->api), "attempts");
        call_fail(c, KEVO_FAIL_INTERNAL, "out of memory for the request");
        goto done;
    }
    json_t *headers = json_array();
    for (size_t i = 0; i < w.nheaders; i++)
        json_array_append_new(headers, json_string(w.log_headers[i]));
    json_t *saved = json_pack(
        "{s:I, s:I, s:s, s:s, s:s, s:s, s:o, s:o}", "seq", (json_int_t)0,
        "request", (json_int_t)r->id, "kind", kind, "model", m->name, "api",
        kevo__llm_api_name(m->api), "url", w.url, "headers", headers, "body",
        kevo__llm_json_body(w.body, w.body_len));
    c->seq = saved ? claim_json(st, "request", saved) : ++st->log.seq;
    json_decref(saved);
    c->log =
        json_pack("{s:I, s:I, s:s, s:s, s:s, s:[]}", "seq", (json_int_t)c->seq,
                  "request", (json_int_t)r->id, "kind", kind, "model", m->name,
                  "api", kevo__llm_api_name(m->api), "attempts");
    if (!c->log) {
        call_fail(c, KEVO_FAIL_INTERNAL, "out of memory for the request");
        goto done;
    }

    kevo__llm_intake_init(&c->in, m->api, st->cfg.max_reply_bytes, w.body_len);
    if (m->files || m->batch) {
        if (m->files ? !submit_files(st, c, m, &w) : !submit_batch(st, c, &w))
            goto done;
        st->calls++;
        ok = true;
        goto done;
    }
    llm_http_request hr = kevo__llm_wire_http(m, &w);
    hr.sink = w.stream ? &kevo__llm_intake_sink : NULL;
    hr.validate = kevo__llm_intake_validate;
    hr.reply_ud = &c->in;
    hr.attempt = on_attempt;
    hr.done = on_done;
    hr.ud = c;
    char err[256];
    if (!kevo__llm_http_submit(st->http, &hr, err, sizeof(err))) {
        call_fail(c, KEVO_FAIL_INTERNAL, err);
        goto done;
    }
    st->calls++;
    ok = true;
done:
    kevo__llm_wire_request_free(&w);
    if (!ok) {
        save_json(st, "reply", c->seq, c->log);
        json_decref(c->log);
        free(c);
    }
    return ok;
}

/* ---- the plugin functions ---------------------------------------------- */

static void state_free(llm_state *st)
{
    if (!st)
        return;
    kevo__llm_http_free(st->http);
    for (size_t i = 0; i < st->nfiles; i++)
        kevo__llm_files_free(st->files[i]);
    free(st->files);
    for (size_t i = 0; st->batches && i < st->cfg.nmodels; i++)
        kevo__llm_batch_free(st->batches[i]);
    free(st->batches);
    while (st->reqs)
        req_unlink_free(st->reqs);
    kevo__llm_secrets_free(&st->secrets);
    kevo__llm_config_free(&st->cfg);
    kevo__llm_runlog_close(&st->log);
    free(st->log_run_dir);
    free(st->log_failed_for);
    free(st->config_text);
    kevo__llm_convos_free(&st->convos);
    free(st);
}

static const char *host_getenv(const char *name)
{
    return getenv(name);
}

static void files_say(void *ud, const char *text)
{
    say((llm_state *)ud, KEVO_LOG_WARN, "%s", text);
}

/* An engine for each directory of the models with the files transport. */
static bool open_files(llm_state *st, char *err, size_t n)
{
    for (size_t i = 0; i < st->cfg.nmodels; i++) {
        const llm_model *m = &st->cfg.models[i];
        if (!m->files || files_for(st, m))
            continue;
        llm_files **fs = realloc(st->files, (st->nfiles + 1) * sizeof(*fs));
        if (!fs) {
            kevo__llm_errf(err, n, "out of memory");
            return false;
        }
        st->files = fs;
        fs[st->nfiles] = kevo__llm_files_new(m->dir, st->cfg.max_reply_bytes,
                                             files_say, st, err, n);
        if (!fs[st->nfiles])
            return false;
        st->nfiles++;
    }
    return true;
}

static kevo_status llm_init(const kevo_host_api *api, kevo_host_ctx *ctx,
                            const char *config_json, void **state)
{
    char err[1024] = "";
    kevo_status rc = KEVO_EINVALID;
    llm_state *st = calloc(1, sizeof(*st));
    *state = NULL;
    if (!st) {
        api->error(ctx, "out of memory");
        return KEVO_ENOMEM;
    }
    st->api = api;
    st->ctx = ctx;
    st->reply_host = (kevo_reply_host){api, ctx};
    if (!kevo__llm_config_parse(config_json, &st->cfg, host_getenv, err,
                                sizeof(err))) {
        api->error(ctx, "%s", err);
        goto fail;
    }
    if (!kevo__llm_secrets_collect(&st->cfg, &st->secrets)) {
        rc = KEVO_ENOMEM;
        api->error(ctx, "out of memory");
        goto fail;
    }
    llm_http_config hc = {
        .concurrency = st->cfg.concurrency,
        .max_retries = st->cfg.max_retries,
        .backoff_base_s = st->cfg.backoff_base_s,
        .backoff_max_s = st->cfg.backoff_max_s,
        .retry_after_max_s = st->cfg.retry_after_max_s,
        .max_reply_bytes = st->cfg.max_reply_bytes,
        .uniform01 = jitter,
        .rng_ud = st,
        .admit = admit,
        .admit_ud = st,
    };
    st->http = kevo__llm_http_new(&hc, err, sizeof(err));
    if (!st->http) {
        rc = KEVO_EEXTERNAL;
        api->error(ctx, "%s", err);
        goto fail;
    }
    st->batches = calloc(st->cfg.nmodels + 1, sizeof(*st->batches));
    if (!st->batches) {
        rc = KEVO_ENOMEM;
        api->error(ctx, "out of memory");
        goto fail;
    }
    if (!open_files(st, err, sizeof(err))) {
        rc = KEVO_EIO;
        api->error(ctx, "%s", err);
        goto fail;
    }
    if (config_json && !(st->config_text = kevo__llm_strdup(config_json))) {
        rc = KEVO_ENOMEM;
        api->error(ctx, "out of memory");
        goto fail;
    }
    int erc = follow_run_dir(st, err, sizeof(err));
    if (erc != 0) {
        rc = erc == ENOMEM ? KEVO_ENOMEM : KEVO_EIO;
        api->error(ctx, "%s", err);
        goto fail;
    }
    for (size_t i = 0; i < st->cfg.nmodels; i++) {
        const llm_model *m = &st->cfg.models[i];
        say(st, KEVO_LOG_DEBUG,
            "model %s: %s %s at %s, %s, weight %g, key %s%s", m->name,
            kevo__llm_api_name(m->api), m->model,
            m->files ? m->dir : m->base_url,
            m->stream ? "streamed" : "not streamed", m->weight,
            m->key ? "from $" : "none", m->key ? m->key_env : "");
    }
    *state = st;
    return KEVO_OK;
fail:
    state_free(st);
    return rc;
}

/* The evaluation kevo keeps beside candidate i of a request's notes (the
 * note KEVO_NOTE_EVALUATION), or NULL. */
static const char *evaluation_note(const kevo_operator_notes *notes, size_t n,
                                   size_t i)
{
    for (size_t k = 0; notes && i < n && k < notes[i].n_items; k++) {
        if (strcmp(notes[i].items[k].name, KEVO_NOTE_EVALUATION) == 0)
            return notes[i].items[k].text;
    }
    return NULL;
}

static kevo_status llm_propose(void *state, const kevo_operator_request *req)
{
    llm_state *st = state;
    const kevo_host_api *api = st->api;
    char *params = NULL, *assignment = NULL, *second_params = NULL,
         *second_assignment = NULL, *system = NULL, *user = NULL;
    llm_prompt_candidate *insp = NULL;
    char why[1024];

    follow_run_dir_or_warn(st);
    llm_req *r = req_new(st, req->id, req->n_children ? req->n_children : 1);
    if (!r)
        return KEVO_ENOMEM;
    st->requests++;

    if (!budget_left(st, why, sizeof(why))) {
        host_fail(st, req->id, KEVO_FAIL_BUDGET, why);
        goto done;
    }
    r->parent_source = kevo__llm_strdup(api->cand_source(st->ctx, req->parent));
    params = api->cand_params(st->ctx, req->parent);
    assignment = api->cand_assignment(st->ctx, req->parent);
    size_t ninsp = req->inspirations ? req->n_inspirations : 0;
    insp = ninsp ? calloc(ninsp, sizeof(*insp)) : NULL;
    if (!r->parent_source || (ninsp && !insp)) {
        host_fail(st, req->id, KEVO_FAIL_INTERNAL, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < ninsp; i++) {
        insp[i].source =
            api->cand_source(st->ctx, req->inspirations[i].candidate);
        insp[i].summary_json = evaluation_note(req->notes, req->n_notes, 2 + i);
    }
    llm_prompt_candidate second = {0};
    if (req->second_parent) {
        second.source = api->cand_source(st->ctx, req->second_parent);
        second.summary_json = evaluation_note(req->notes, req->n_notes, 1);
        second_params = api->cand_params(st->ctx, req->second_parent);
        second_assignment = api->cand_assignment(st->ctx, req->second_parent);
        second.params_json = second_params;
        second.assignment_json = second_assignment;
    }
    llm_prompt_input in = {
        .task_name = api->task_name(st->ctx),
        .task_description = api->task_description(st->ctx),
        .task_args = api->task_args(st->ctx),
        .task_dims = api->task_dims(st->ctx),
        .task_cost = api->task_cost(st->ctx),
        .device_json = api->device_json(st->ctx),
        .parent = {r->parent_source,
                   evaluation_note(req->notes, req->n_notes, 0), assignment,
                   params},
        .second_parent = req->second_parent ? &second : NULL,
        .inspirations = insp,
        .n_inspirations = ninsp,
        .target_cell_json = req->target_cell_json,
        .sections = req->prompt_sections,
        .n_sections = req->n_prompt_sections,
        .include_rule = api->include_rule(st->ctx),
        .format = st->cfg.reply_format,
        .max_log_lines = st->cfg.max_log_lines,
        .max_inspirations = st->cfg.max_inspirations,
        .failures = req->failures,
        .n_failures = req->n_failures,
    };
    if (!kevo__llm_prompt_build(&in, &system, &user, why, sizeof(why))) {
        host_fail(st, req->id,
                  strncmp(why, "out of memory", 13) == 0
                      ? KEVO_FAIL_INTERNAL
                      : KEVO_FAIL_UNSUPPORTED,
                  why);
        goto done;
    }
    /* The conversation so far, kept for repairs of its children. */
    r->convo.system = system;
    r->convo.turns = malloc(sizeof(*r->convo.turns));
    if (!r->convo.turns) {
        host_fail(st, req->id, KEVO_FAIL_INTERNAL, "out of memory");
        r->convo.system = NULL;
        goto done;
    }
    r->convo.turns[0] = user;
    r->convo.nturns = 1;
    system = user = NULL;
    uint32_t n = r->calls_left;
    for (uint32_t i = 0; i < n; i++) {
        /* A call that could not start has its failure recorded and is
         * over; the request stays open while another is in flight. */
        if (!start_call(st, r, r->convo.system, r->convo.turns[0]))
            r->calls_left--;
    }
done:
    /* Nothing in flight for it: the request ends now. */
    if (r->calls_left == 0 || r->convo.nturns == 0) {
        api->done(st->ctx, req->id);
        req_unlink_free(r);
    }
    api->free(st->ctx, params);
    api->free(st->ctx, assignment);
    api->free(st->ctx, second_params);
    api->free(st->ctx, second_assignment);
    free(insp);
    free(system);
    free(user);
    return KEVO_OK;
}

static kevo_status llm_revise(void *state, const kevo_operator_revision *rev)
{
    llm_state *st = state;
    const kevo_host_api *api = st->api;
    char *system = NULL, *user = NULL;
    char why[1024];
    follow_run_dir_or_warn(st);
    llm_req *r = req_new(st, rev->id, 1);
    if (!r)
        return KEVO_ENOMEM;
    st->revisions++;
    r->revision = true;
    if (!budget_left(st, why, sizeof(why))) {
        host_fail(st, rev->id, KEVO_FAIL_BUDGET, why);
        goto done;
    }
    r->sections = rev->sections;
    r->n_sections = rev->n_sections;
    llm_revision_input in = {
        .task_name = api->task_name(st->ctx),
        .task_description = api->task_description(st->ctx),
        .task_args = api->task_args(st->ctx),
        .prompt_name = rev->prompt_name,
        .sections = rev->sections,
        .n_sections = rev->n_sections,
        .record = rev->record,
        .best = {rev->best_source, evaluation_note(rev->notes, rev->n_notes, 0),
                 NULL, NULL},
        .worst = {rev->worst_source,
                  evaluation_note(rev->notes, rev->n_notes, 1), NULL, NULL},
        .max_log_lines = st->cfg.max_log_lines,
    };
    if (!kevo__llm_revision_prompt_build(&in, &system, &user, why,
                                         sizeof(why))) {
        host_fail(st, rev->id,
                  strncmp(why, "out of memory", 13) == 0
                      ? KEVO_FAIL_INTERNAL
                      : KEVO_FAIL_UNSUPPORTED,
                  why);
        goto done;
    }
    /* How the prompt's children failed. */
    if (!kevo__llm_revision_failures(&user, rev)) {
        host_fail(st, rev->id, KEVO_FAIL_INTERNAL, "out of memory");
        free(system);
        system = NULL;
        goto done;
    }
    if (!start_call(st, r, system, user))
        r->calls_left--;
done:
    if (r->calls_left == 0 || !system) {
        api->done(st->ctx, rev->id);
        req_unlink_free(r);
    }
    free(system);
    free(user);
    return KEVO_OK;
}

/* A repair (ABI 1.2): the failed child's conversation goes on with a turn
 * that gives kevo's diagnostic; without that conversation (forgotten, or a
 * resumed run) a new one shows the failed kernel. */
static kevo_status llm_repair(void *state,
                              const kevo_operator_repair_request *rep)
{
    llm_state *st = state;
    const kevo_host_api *api = st->api;
    char why[1024];
    char *text = NULL, *clean = NULL;
    follow_run_dir_or_warn(st);
    llm_req *r = req_new(st, rep->id, 1);
    if (!r)
        return KEVO_ENOMEM;
    r->repair = true;
    st->repairs++;
    if (!budget_left(st, why, sizeof(why))) {
        host_fail(st, rep->id, KEVO_FAIL_BUDGET, why);
        goto done;
    }
    text = kevo__llm_repair_text(rep->kind, rep->diagnostic, rep->turns_left,
                                 st->cfg.reply_format);
    clean = text ? kevo__llm_utf8_clean(text, strlen(text)) : NULL;
    const llm_convo_entry *e =
        kevo__llm_convos_find(&st->convos, rep->request_id, rep->attempt);
    bool ok = clean && (r->parent_source = kevo__llm_strdup(rep->source)) &&
              (e ? kevo__llm_convo_extend(&e->convo, e->reply, clean, &r->convo)
                 : kevo__llm_repair_fresh(api->task_name(st->ctx),
                                          api->task_args(st->ctx), rep->source,
                                          clean, &r->convo));
    if (!ok) {
        host_fail(st, rep->id, KEVO_FAIL_INTERNAL, "out of memory");
        goto done;
    }
    say(st, KEVO_LOG_DEBUG,
        "request %" PRIu64 ": repair turn %u of request %" PRIu64
        " attempt %u (%s)%s",
        rep->id, rep->turn, rep->request_id, rep->attempt, rep->kind,
        e ? "" : ", in a new conversation");
    if (!start_call(st, r, r->convo.system, r->convo.turns[0]))
        r->calls_left--;
done:
    if (r->calls_left == 0 || r->convo.nturns == 0) {
        api->done(st->ctx, rep->id);
        req_unlink_free(r);
    }
    free(text);
    free(clean);
    return KEVO_OK;
}

static size_t llm_poll(void *state, int timeout_ms)
{
    llm_state *st = state;
    follow_run_dir_or_warn(st);
    if (st->nreqs == 0)
        return 0;
    size_t ended = 0, waiting = 0;
    llm_batch *batching = NULL;
    for (size_t i = 0; i < st->nfiles; i++) {
        ended += kevo__llm_files_poll(st->files[i]);
        waiting += kevo__llm_files_pending(st->files[i]);
    }
    for (size_t i = 0; i < st->cfg.nmodels; i++) {
        ended += st->batches[i] ? kevo__llm_batch_poll(st->batches[i], 0) : 0;
        if (!batching && kevo__llm_batch_pending(st->batches[i]))
            batching = st->batches[i];
    }
    if (ended || st->nreqs == 0)
        return st->nreqs;
    if (kevo__llm_http_pending(st->http) > 0)
        kevo__llm_http_poll(st->http, timeout_ms);
    else if (batching)
        kevo__llm_batch_poll(batching, timeout_ms);
    else if (waiting && timeout_ms > 0)
        /* Only files to wait for: look again a little later. */
        usleep((useconds_t)(timeout_ms < 100 ? timeout_ms : 100) * 1000);
    return st->nreqs;
}

/* The counts of the instance's life so far in
 * RUN/llm/NNNNNN-summary.json, beside the instance's
 * NNNNNN-instance.json. */
static void write_summary(llm_state *st)
{
    llm_http_stats hs;
    kevo__llm_http_stats_get(st->http, &hs);
    if (!st->log.dir)
        return;
    json_t *outcomes = json_object(), *attempts = json_object();
    for (int o = 0; o < LLM_OUTCOME_COUNT; o++) {
        json_object_set_new(outcomes, kevo__llm_outcome_name(o),
                            json_integer((json_int_t)hs.outcomes[o]));
        json_object_set_new(attempts, kevo__llm_outcome_name(o),
                            json_integer((json_int_t)hs.attempt_outcomes[o]));
    }
    json_t *failures = json_object();
    for (size_t i = 0; i < st->nkinds; i++)
        json_object_set_new(failures, st->kinds[i],
                            json_integer((json_int_t)st->kind_counts[i]));
    json_t *s = json_pack(
        "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:i, "
        "s:o, s:o, s:o}",
        "requests", (json_int_t)st->requests, "calls", (json_int_t)st->calls,
        "replies", (json_int_t)st->replies, "children",
        (json_int_t)st->children, "reply_failures",
        (json_int_t)st->reply_failures, "refused_children",
        (json_int_t)st->refused_children, "attempts", (json_int_t)hs.attempts,
        "retries", (json_int_t)hs.retries, "status_429",
        (json_int_t)hs.status_429, "input_tokens", (json_int_t)st->input_tokens,
        "output_tokens", (json_int_t)st->output_tokens, "cost", st->cost,
        "max_active", hs.max_active, "failures", failures, "outcomes", outcomes,
        "attempt_outcomes", attempts);
    if (s) {
        json_object_set_new(s, "revisions",
                            json_integer((json_int_t)st->revisions));
        json_object_set_new(s, "revised_prompts",
                            json_integer((json_int_t)st->prompts));
        json_object_set_new(s, "repairs",
                            json_integer((json_int_t)st->repairs));
        json_object_set_new(s, "repaired_children",
                            json_integer((json_int_t)st->repair_children));
        size_t batches = 0;
        for (size_t i = 0; st->batches && i < st->cfg.nmodels; i++)
            batches += kevo__llm_batch_created(st->batches[i]);
        json_object_set_new(s, "batches", json_integer((json_int_t)batches));
    }
    if (s)
        save_json(st, "summary", st->instance_seq, s);
    json_decref(s);
}

/* The counts of the instance's life: a line in the log, and the summary
 * file. */
static void save_summary(llm_state *st)
{
    llm_http_stats hs;
    kevo__llm_http_stats_get(st->http, &hs);
    say(st, KEVO_LOG_INFO,
        "%" PRIu64 " requests, %" PRIu64 " calls (%" PRIu64
        " attempts), %" PRIu64 " children; %" PRIu64 " input and %" PRIu64
        " output tokens, cost %.6g; %" PRIu64 " revisions, %" PRIu64
        " revised prompts",
        st->requests, st->calls, hs.attempts, st->children, st->input_tokens,
        st->output_tokens, st->cost, st->revisions, st->prompts);
    write_summary(st);
}

static void llm_fini(void *state)
{
    llm_state *st = state;
    if (!st)
        return;
    /* A run directory set since the last call still gets the instance's
     * files (fini may ask for it: kevo-operator(7)). */
    follow_run_dir_or_warn(st);
    save_summary(st);
    state_free(st);
}

static const kevo_operator_desc llm_desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = KEVO_OPERATOR_ABI_MINOR,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "llm",
    .version = "1.3",
    .description = "rewrites and repairs kernels, and revises "
                   "meta-prompts, with a language model (OpenAI or "
                   "Anthropic API)",
    .init = llm_init,
    .propose = llm_propose,
    .poll = llm_poll,
    .fini = llm_fini,
    .revise = llm_revise,
    .repair = llm_repair,
};

KEVO_OPERATOR_ENTRY(llm_desc)

/*
 * relay_batch.c: the relay's batch transport (relay.h): the requests of
 * each model with "transport": "batch" go to its vendor's batch API
 * through an engine of batch.h, made at the model's first request, with
 * the relay's state directory.
 */
#include "config.h"

#include <stdlib.h>

#include "batch.h"
#include "relay.h"

typedef struct relay_batches {
    llm_relay_setup s;
    llm_batch **engines; /* one per model of s.cfg, NULL until used */
} relay_batches;

static void batch_say(void *ud, bool warning, const char *text)
{
    const relay_batches *rb = ud;
    if (rb->s.say)
        rb->s.say(rb->s.say_ud, warning, text);
}

static void *batches_open(const llm_relay_setup *s, char *err, size_t n)
{
    relay_batches *rb = calloc(1, sizeof(*rb));
    if (rb)
        rb->engines = calloc(s->cfg->nmodels + 1, sizeof(*rb->engines));
    if (!rb || !rb->engines) {
        free(rb);
        kevo__llm_errf(err, n, "out of memory");
        return NULL;
    }
    rb->s = *s;
    return rb;
}

/* The engine of model m, made at its first request (the URL and headers of
 * req). NULL with a reason in err. */
static llm_batch *engine_for(relay_batches *rb, const llm_model *m,
                             const llm_http_request *req, char *err, size_t n)
{
    size_t mi = (size_t)(m - rb->s.cfg->models);
    if (rb->engines[mi])
        return rb->engines[mi];
    llm_batch_config bc = kevo__llm_batch_config_of(
        rb->s.cfg, m, req->url, req->headers, req->nheaders);
    bc.state_dir = m->dir ? m->dir : rb->s.state_dir;
    bc.say = batch_say;
    bc.say_ud = rb;
    rb->engines[mi] = kevo__llm_batch_new(&bc, err, n);
    return rb->engines[mi];
}

static bool batches_submit(void *e, const llm_relay_send *s, char *err,
                           size_t n)
{
    relay_batches *rb = e;
    const llm_http_request *h = s->http;
    llm_batch *b = engine_for(rb, s->model, h, err, n);
    if (!b)
        return false;
    llm_batch_request br = {
        .run = s->run,
        .request = s->number,
        .body = h->body,
        .body_len = h->body_len,
        .validate = h->validate,
        .attempt = h->attempt,
        .done = h->done,
        .sent = s->sent,
        .ud = h->ud,
        .reply_ud = h->reply_ud,
    };
    if (s->take_back && !kevo__llm_batch_recorded(b, &br)) {
        kevo__llm_errf(err, n,
                       "no batch recorded under %s holds it (the same "
                       "body, for the same directory)",
                       s->model->dir ? s->model->dir : rb->s.state_dir);
        return false;
    }
    return kevo__llm_batch_submit(b, &br, err, n);
}

static size_t batches_poll(void *e, int timeout_ms)
{
    relay_batches *rb = e;
    size_t ended = 0;
    llm_batch *waiting = NULL;
    for (size_t i = 0; i < rb->s.cfg->nmodels; i++) {
        if (!rb->engines[i])
            continue;
        ended += kevo__llm_batch_poll(rb->engines[i], 0);
        if (!waiting && kevo__llm_batch_pending(rb->engines[i]))
            waiting = rb->engines[i];
    }
    if (!ended && waiting && timeout_ms > 0)
        ended += kevo__llm_batch_poll(waiting, timeout_ms);
    return ended;
}

/* count over the engines, added up. */
static size_t total(const relay_batches *rb,
                    size_t (*count)(const llm_batch *b))
{
    size_t n = 0;
    for (size_t i = 0; i < rb->s.cfg->nmodels; i++)
        n += rb->engines[i] ? count(rb->engines[i]) : 0;
    return n;
}

static size_t batches_pending(const void *e)
{
    return total(e, kevo__llm_batch_pending);
}

static size_t batches_busy(const void *e)
{
    return total(e, kevo__llm_batch_busy);
}

static void batches_close(void *e)
{
    relay_batches *rb = e;
    if (!rb)
        return;
    for (size_t i = 0; i < rb->s.cfg->nmodels; i++)
        kevo__llm_batch_free(rb->engines[i]);
    free(rb->engines);
    free(rb);
}

const llm_relay_transport kevo__llm_relay_batch_transport = {
    .name = "batch",
    .admits = false,
    .open = batches_open,
    .submit = batches_submit,
    .poll = batches_poll,
    .pending = batches_pending,
    .busy = batches_busy,
    .close = batches_close,
};

/*
 * loopback-answer.c: how the loopback server answers a request: it checks
 * the request as its vendor would, chooses the behaviour (a marker in the
 * body, or the script), and builds the answer, whole or streamed, in the
 * vendor's format (loopback-vendor.c). See loopback-server.h for the
 * behaviours.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "loopback-private.h"
#include "loopback-vendor.h"

#define MARKER "[[kevo-loopback:"

/* What the "think" behaviours reason, unless a text "thinking" is set: a
 * draft kernel among the thoughts, as reasoning models write them. */
#define THINKING                                                               \
    "The loads are not coalesced. A first draft:\n```cuda\n"                   \
    "__global__ void draft(float *y) { y[threadIdx.x] = 0.0f; }\n```\n"        \
    "That draft drops the launch block; the answer must keep it."
/* The reasoning of "nullcontent": a think section never closed. */
#define UNCLOSED                                                               \
    "<think>\nTry float4 loads.\n```cuda\n__global__ void half_done("
#define REFUSAL "I'm sorry, but I can't help with that."
#define NGINX_502                                                              \
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"      \
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>"  \
    "\r\n</body>\r\n</html>\r\n"
#define VLLM_CONTEXT                                                           \
    "This model's maximum context length is 32768 tokens. However, you "       \
    "requested 40960 tokens (32768 in the messages, 8192 in the completion). " \
    "Please reduce the length of the messages or completion."

static const char *find_text(loopback *lb, const char *name)
{
    for (size_t i = 0; i < lb->ntexts; i++)
        if (strcmp(lb->texts[i].name, name) == 0)
            return lb->texts[i].text;
    return NULL;
}

/* Which behaviour a request gets (a new string). */
static char *choose(loopback *lb, const char *body)
{
    const char *m = strstr(body, MARKER);
    if (m) {
        const char *k = m + strlen(MARKER);
        const char *colon = strchr(k, ':');
        const char *end = strstr(k, "]]");
        if (colon && end && colon < end) {
            char *key = lb_dupn(k, (size_t)(colon - k));
            size_t i;
            for (i = 0; i < lb->nmarkers; i++)
                if (strcmp(lb->markers[i].key, key) == 0)
                    break;
            if (i == lb->nmarkers) {
                lb->markers =
                    lb_realloc(lb->markers, (i + 1) * sizeof(*lb->markers));
                lb->markers[i].key = key;
                lb->markers[i].n = 0;
                lb->nmarkers++;
            } else {
                free(key);
            }
            int want = lb->markers[i].n++;
            const char *p = colon + 1;
            for (int j = 0; j < want; j++) {
                const char *c = memchr(p, ',', (size_t)(end - p));
                if (!c)
                    break;
                p = c + 1;
            }
            const char *c = memchr(p, ',', (size_t)(end - p));
            return lb_dupn(p, (size_t)((c ? c : end) - p));
        }
    }
    if (lb->script_pos < lb->nscript)
        return lb_dup(lb->script[lb->script_pos++]);
    return lb_dup("ok");
}

/* s with each pat replaced by with, in a new string. */
static char *replace_all(const char *s, const char *pat, const char *with)
{
    size_t n = 0, pl = strlen(pat), wl = strlen(with);
    for (const char *p = s; (p = strstr(p, pat)); p += pl)
        n++;
    char *out = lb_realloc(NULL, strlen(s) + n * wl + 1), *o = out;
    const char *p = s, *q;
    while ((q = strstr(p, pat))) {
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        memcpy(o, with, wl);
        o += wl;
        p = q + pl;
    }
    strcpy(o, p);
    return out;
}

/* A registered text with "@KEY@" and "@SEQ@" filled in, in a new string.
 * @SEQ@ counts the requests that came before but the calls of the batch
 * APIs: a reply is numbered the same over HTTP and in a batch. */
static char *fill(loopback *lb, const char *text, const char *key)
{
    char seq[32];
    snprintf(seq, sizeof(seq), "%zu", lb->nrecs - lb->batch_calls);
    char *a = replace_all(text, "@KEY@", key);
    char *b = replace_all(a, "@SEQ@", seq);
    free(a);
    return b;
}

/* The text of the request's last user message (borrowed from root), or
 * "". */
static const char *user_text(json_t *root)
{
    json_t *msgs = json_object_get(root, "messages");
    const char *text = "";
    size_t i;
    json_t *m;
    json_array_foreach (msgs, i, m) {
        const char *role = json_string_value(json_object_get(m, "role"));
        const char *content = json_string_value(json_object_get(m, "content"));
        if (role && content && strcmp(role, "user") == 0)
            text = content;
    }
    return text;
}

/* The answer of behaviour revise[:MODE] (see loopback-server.h), in a new
 * string. */
static char *revise_text(const char *user, const char *mode, size_t seq)
{
    const char *open = strstr(user, "```json\n");
    const char *close = open ? strstr(open + 8, "\n```") : NULL;
    json_t *orig =
        close ? json_loadb(open + 8, (size_t)(close - open - 8), 0, NULL)
              : NULL;
    if (!json_is_object(orig)) {
        json_decref(orig);
        return lb_dup("I found no guidance to revise.");
    }
    json_t *revised = json_object();
    const char *key;
    json_t *v;
    json_object_foreach (orig, key, v) {
        const char *was = json_is_string(v) ? json_string_value(v) : "";
        char *t = lb_realloc(NULL, strlen(was) + 80);
        sprintf(t, "%s Revised by the loopback server (request %zu).", was,
                seq);
        json_object_set_new(revised, key, json_string(t));
        free(t);
    }
    json_t *shown = revised;
    if (strcmp(mode, "wrapped") == 0)
        shown =
            json_pack("{s:s, s:O}", "name", "loopback", "sections", revised);
    char *a = json_dumps(shown, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    char *o = json_dumps(orig, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (!a || !o)
        abort();
    size_t n = strlen(a) + strlen(o) + 256;
    char *out = lb_realloc(NULL, n);
    if (strcmp(mode, "twice") == 0)
        snprintf(out, n,
                 "The guidance now:\n\n```json\n%s\n```\n\nRevised:\n\n"
                 "```json\n%s\n```\n",
                 o, a);
    else
        snprintf(out, n,
                 "I added a sentence to each section.\n\n```json\n%s\n```"
                 "\n",
                 a);
    free(a);
    free(o);
    if (shown != revised)
        json_decref(shown);
    json_decref(revised);
    json_decref(orig);
    return out;
}

char *lb_sent_key(const loopback_request *q)
{
    if (strcmp(q->api, "anthropic") == 0)
        return loopback_header(q, "x-api-key");
    char *auth = loopback_header(q, "authorization");
    if (auth && strncmp(auth, "Bearer ", 7) == 0) {
        char *k = lb_dup(auth + 7);
        free(auth);
        return k;
    }
    free(auth);
    return NULL;
}

/* ---- building answers --------------------------------------------------- */

void lb_piece_add(lb_reply *r, const char *data, size_t len, double delay_s)
{
    r->pieces = lb_realloc(r->pieces, (r->npieces + 1) * sizeof(*r->pieces));
    r->pieces[r->npieces++] = (lb_piece){lb_dupn(data, len), len, delay_s};
}

void lb_reply_free(lb_reply *r)
{
    for (size_t i = 0; i < r->npieces; i++)
        free(r->pieces[i].data);
    free(r->pieces);
    free(r->extra_headers);
}

/* A whole body of one piece (taking s). */
static void set_body(lb_reply *r, int status, char *s)
{
    r->status = status;
    lb_piece_add(r, s, strlen(s), 0);
    free(s);
}

static void error_reply(lb_reply *r, const char *api, int status,
                        const char *type, const char *message, const char *code)
{
    set_body(r, status, lbv_error(api, type, message, code));
}

/* How a reply's delivery departs from a plain one. */
typedef struct shape {
    double stall_s;    /* a silence halfway through */
    double trickle_s;  /* a silence before every piece */
    bool cut;          /* the connection closes halfway through */
    const char *fault; /* a stream: an "error" or "malformed" event halfway */
    bool whole;        /* answer a streamed request whole */
} shape;

/* Builds a message reply of content c, whole or streamed as the request
 * asked, delivered as sh says. */
static void message_reply(lb_reply *r, const lbv_content *c, bool stream,
                          const shape *sh)
{
    r->status = 200;
    r->in_tokens = c->in_tokens;
    r->out_tokens = c->out_tokens;
    if (!stream || sh->whole) {
        char *body = lbv_message(c);
        size_t n = strlen(body), half = n / 2;
        if (sh->cut) {
            /* Content-Length promises more than comes. */
            lb_piece_add(r, body, half, 0);
            r->declared_len = (long)n + 1000;
            r->close_after = true;
        } else if (sh->stall_s > 0) {
            lb_piece_add(r, body, half, 0);
            lb_piece_add(r, body + half, n - half, sh->stall_s);
        } else {
            lb_piece_add(r, body, n, 0);
        }
        free(body);
        return;
    }
    lbv_events ev = {0};
    lbv_stream(c, &ev);
    r->chunked = true;
    r->content_type = "text/event-stream; charset=utf-8";
    size_t half = ev.n / 2 ? ev.n / 2 : 1;
    for (size_t i = 0; i < ev.n; i++) {
        if (i == half && sh->fault) {
            char *f = lbv_stream_fault(c->api, sh->fault);
            lb_piece_add(r, f, strlen(f), sh->trickle_s);
            free(f);
            break;
        }
        if (i == half && sh->cut) {
            r->cut = true;
            break;
        }
        double delay = sh->trickle_s + (i == half ? sh->stall_s : 0);
        lb_piece_add(r, ev.ev[i], strlen(ev.ev[i]), delay);
    }
    lbv_events_free(&ev);
}

/* A stream of events without the API's fields. */
static void badshape_stream(lb_reply *r, const char *api)
{
    r->status = 200;
    r->chunked = true;
    r->content_type = "text/event-stream; charset=utf-8";
    const char *ev = strcmp(api, "anthropic") == 0
                         ? "event: message_start\ndata: {\"nothing\": 1}\n\n"
                         : "data: {\"object\": \"nothing\"}\n\n";
    lb_piece_add(r, ev, strlen(ev), 0);
}

/* The first half of s, on a character boundary, in a new string. */
static char *first_half(const char *s)
{
    size_t n = strlen(s) / 2;
    while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
        n--;
    return lb_dupn(s, n);
}

void lb_answer(loopback *lb, loopback_request *q, lb_reply *r)
{
    json_t *root = NULL;
    char *key = NULL, *text = NULL, *half = NULL, *big = NULL;
    memset(r, 0, sizeof(*r));
    r->declared_len = -1;
    r->content_type = "application/json";
    if (lb_batch_answer(lb, q, r))
        goto done;
    if (strcmp(q->api, "") == 0) {
        q->behaviour = lb_dup("not_found");
        error_reply(r, "openai", 404, "not_found_error", "no such endpoint",
                    NULL);
        goto done;
    }
    if (strcmp(q->method, "POST") != 0) {
        q->behaviour = lb_dup("bad_method");
        error_reply(r, q->api, 405, "invalid_request_error", "POST only", NULL);
        goto done;
    }
    root = json_loadb(q->body, q->body_len, 0, NULL);
    char msg[512];
    const char *type, *code;
    char *version = loopback_header(q, "anthropic-version");
    const char *bad =
        lbv_check(q->api, root, version, msg, sizeof(msg), &type, &code);
    free(version);
    if (bad) {
        q->behaviour = lb_dup("invalid_request");
        error_reply(r, q->api, 400, type, bad, code);
        goto done;
    }
    q->model = lb_dup(json_string_value(json_object_get(root, "model")));
    q->stream = json_is_true(json_object_get(root, "stream"));
    key = lb_sent_key(q);
    if (lb->expect_key && (!key || strcmp(key, lb->expect_key) != 0)) {
        q->behaviour = lb_dup("bad_key");
        error_reply(r, q->api, 401, "authentication_error", "invalid key",
                    NULL);
        goto done;
    }

    bool anthropic = strcmp(q->api, "anthropic") == 0;
    char *b = choose(lb, q->body);
    q->behaviour = b;
    const char *def = find_text(lb, "default");
    const char *ok_text = def ? def : "Nothing to change here.";
    char *arg = strchr(b, ':');
    const char *arg1 = arg ? arg + 1 : "";
    const char *arg2 = strchr(arg1, ':') ? strchr(arg1, ':') + 1 : NULL;
    char word[32];
    snprintf(word, sizeof(word), "%.*s",
             (int)(arg ? (size_t)(arg - b) : strlen(b)), b);
    /* The text NAME of "word:NAME" or "word:MS:NAME", else ok's. */
    bool timed = strcmp(word, "slow") == 0 || strcmp(word, "stall") == 0 ||
                 strcmp(word, "trickle") == 0;
    /* A behaviour that names a text answers it; so does "think:NAME", and
     * "slow:MS:NAME". */
    const char *plain = find_text(lb, b);
    const char *name = timed ? arg2 : (*arg1 ? arg1 : NULL);
    const char *named = plain ? plain : name ? find_text(lb, name) : NULL;
    text = fill(lb, named ? named : ok_text, key ? key : "");
    const char *thinking = find_text(lb, "thinking");

    json_t *so = json_object_get(root, "stream_options");
    lbv_content c = {
        .api = q->api,
        .model = q->model,
        .id = (unsigned long)lb->nrecs,
        .text = text,
        .reasoning_field = "reasoning_content",
        .finish = anthropic ? "end_turn" : "stop",
        .usage = true,
        .include_usage = json_is_true(json_object_get(so, "include_usage")),
        .piece = 16,
    };
    shape sh = {0};
    const char *length_finish = anthropic ? "max_tokens" : "length";

    if (strcmp(word, "ok") == 0 || plain) {
        /* the text as it is */
    } else if (timed) {
        double s = atof(arg1) / 1000.0;
        if (strcmp(word, "slow") == 0)
            r->delay_s = s;
        else if (strcmp(word, "stall") == 0)
            sh.stall_s = s;
        else
            sh.trickle_s = s;
    } else if (strcmp(word, "truncated") == 0 || strcmp(word, "cut") == 0) {
        sh.cut = true;
    } else if (strcmp(word, "nodone") == 0) {
        c.unfinished = true;
        if (!q->stream)
            sh.cut = true;
    } else if (strcmp(word, "streamerror") == 0) {
        if (!q->stream) {
            error_reply(r, q->api, anthropic ? 529 : 500,
                        anthropic ? "overloaded_error" : "server_error",
                        "Overloaded", NULL);
            goto done;
        }
        sh.fault = "error";
    } else if (strcmp(word, "malformed") == 0 && q->stream) {
        sh.fault = "malformed";
    } else if (strcmp(word, "malformed") == 0) {
        const char *s = anthropic ? "{\"type\": \"message\", \"content\": "
                                    "[{\"type\": \"text\", \"text\": "
                                    "\"unfinished"
                                  : "{\"choices\": [{\"message\": "
                                    "{\"content\": \"unfinished";
        r->status = 200;
        lb_piece_add(r, s, strlen(s), 0);
        goto done;
    } else if (strcmp(word, "badshape") == 0) {
        if (q->stream)
            badshape_stream(r, q->api);
        else
            set_body(r, 200,
                     lb_dup("{\"object\": \"nothing\", \"choices\": "
                            "[]}"));
        goto done;
    } else if (strcmp(word, "think") == 0 || strcmp(word, "reasoning") == 0 ||
               strcmp(word, "redacted") == 0) {
        c.reasoning = thinking ? thinking : THINKING;
        if (strcmp(word, "reasoning") == 0)
            c.reasoning_field = "reasoning";
        if (strcmp(word, "redacted") == 0 && anthropic)
            c.redacted = 1;
    } else if (strcmp(word, "nullcontent") == 0) {
        c.text = NULL;
        c.reasoning = UNCLOSED;
        c.finish = length_finish;
    } else if (strcmp(word, "length") == 0) {
        c.text = half = first_half(text);
        c.finish = length_finish;
    } else if (strcmp(word, "refusal") == 0 ||
               (strcmp(word, "content_filter") == 0 && anthropic)) {
        c.text = NULL;
        c.refusal = REFUSAL;
        c.finish = anthropic ? "refusal" : "stop";
    } else if (strcmp(word, "content_filter") == 0) {
        c.text = half = first_half(text);
        c.finish = "content_filter";
    } else if (strcmp(word, "context") == 0 && anthropic) {
        c.text = half = first_half(text);
        c.finish = "model_context_window_exceeded";
    } else if (strcmp(word, "context") == 0 ||
               strcmp(word, "context400") == 0) {
        error_reply(r, q->api, 400, "invalid_request_error",
                    anthropic ? "prompt is too long: 210000 tokens > 200000 "
                                "maximum"
                              : "This model's maximum context length is "
                                "128000 tokens. However, your messages "
                                "resulted in 130000 tokens. Please reduce the "
                                "length of the messages.",
                    anthropic ? NULL : "context_length_exceeded");
        goto done;
    } else if (strcmp(word, "vllmerror") == 0) {
        set_body(r, 400, lbv_vllm_error(VLLM_CONTEXT));
        goto done;
    } else if (strcmp(word, "plain") == 0) {
        r->content_type = "text/html";
        set_body(r, *arg1 ? atoi(arg1) : 502, lb_dup(NGINX_502));
        goto done;
    } else if (strcmp(word, "longerror") == 0) {
        size_t n = 5000;
        big = lb_realloc(NULL, n + 1);
        for (size_t i = 0; i < n; i++)
            big[i] = "the request is wrong "[i % 21];
        big[n] = '\0';
        error_reply(r, q->api, 400, "invalid_request_error", big, NULL);
        goto done;
    } else if (strcmp(word, "nousage") == 0) {
        c.usage = anthropic; /* Anthropic always reports usage */
    } else if (strcmp(word, "nostream") == 0) {
        sh.whole = true;
    } else if (strcmp(word, "huge") == 0) {
        size_t n = (size_t)atol(arg1);
        big = lb_realloc(NULL, n + 1);
        memset(big, 'x', n);
        big[n] = '\0';
        c.text = big;
        c.piece = 65536;
    } else if (strcmp(word, "revise") == 0) {
        free(text);
        c.text = text = revise_text(user_text(root), arg1, lb->nrecs);
    } else if (strcmp(word, "close") == 0) {
        r->no_answer = true;
        r->close_after = true;
        goto done;
    } else if (strncmp(word, "429", 3) == 0) {
        error_reply(r, q->api, 429, "rate_limit_error", "slow down", NULL);
        char h[128] = "";
        if (strcmp(word, "429") == 0)
            snprintf(h, sizeof(h), "Retry-After: %s\r\n", *arg1 ? arg1 : "1");
        else if (strcmp(word, "429ms") == 0)
            snprintf(h, sizeof(h), "retry-after-ms: %s\r\n", arg1);
        else if (strcmp(word, "429date") == 0) {
            time_t t = time(NULL) + atol(arg1);
            struct tm tm;
            gmtime_r(&t, &tm);
            strftime(h, sizeof(h), "Retry-After: %a, %d %b %Y %H:%M:%S GMT\r\n",
                     &tm);
        }
        r->extra_headers = lb_dup(h);
        goto done;
    } else if (strcmp(word, "echo") == 0) {
        char m[512];
        snprintf(m, sizeof(m), "the key %s is not valid", key ? key : "");
        error_reply(r, q->api, 401, "authentication_error", m, NULL);
        goto done;
    } else if (atoi(word) >= 400 && atoi(word) <= 599) {
        int st = atoi(word);
        const char *t = st == 529   ? "overloaded_error"
                        : st >= 500 ? "api_error"
                        : st == 401 ? "authentication_error"
                                    : "invalid_request_error";
        error_reply(r, q->api, st, t, "the loopback server says so", NULL);
        goto done;
    } else {
        error_reply(r, q->api, 400, "invalid_request_error",
                    "the loopback server knows no such behaviour", NULL);
        goto done;
    }
    size_t out_bytes = (c.text ? strlen(c.text) : 0) +
                       (c.reasoning ? strlen(c.reasoning) : 0) +
                       (c.refusal ? strlen(c.refusal) : 0);
    c.in_tokens = (long)(q->body_len / 4 + 1);
    c.out_tokens = (long)(out_bytes / 4 + 1);
    c.reasoning_tokens = c.reasoning ? (long)(strlen(c.reasoning) / 4) : 0;
    message_reply(r, &c, q->stream, &sh);
    if (!c.usage)
        r->in_tokens = r->out_tokens = 0;
done:
    if (!q->model)
        q->model = lb_dup("");
    q->status = r->no_answer ? 0 : r->status;
    if (r->status == 200) {
        q->input_tokens = r->in_tokens;
        q->output_tokens = r->out_tokens;
    }
    free(key);
    free(text);
    free(half);
    free(big);
    json_decref(root);
}

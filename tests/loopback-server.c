/*
 * loopback-server.c: a real HTTP/1.1 server on 127.0.0.1 that speaks the
 * OpenAI and Anthropic APIs and misbehaves on request, for the llm
 * operator's tests (see loopback-server.h). One thread, one poll() loop,
 * non-blocking sockets, so it holds many connections at once and counts
 * how many requests it holds.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "loopback-server.h"

#define MAX_CONNS 1024
#define MAX_REQUEST (16u << 20)
#define MARKER "[[kevo-loopback:"

typedef struct text_entry {
    char *name;
    char *text;
} text_entry;

typedef struct marker_count {
    char *key;
    int n;
} marker_count;

typedef enum conn_state { C_READ, C_WAIT, C_WRITE } conn_state;

typedef struct conn {
    int fd;
    conn_state state;
    char *in;
    size_t in_len, in_cap;
    char *out;
    size_t out_len, out_off;
    double send_at;
    bool close_after;
    bool held; /* counted in active */
    size_t rec;
} conn;

struct loopback {
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    int listen_fd;
    int wake[2];
    int port;
    char url[64];
    bool stop;

    text_entry *texts;
    size_t ntexts;
    char **script;
    size_t nscript, script_pos;
    char *expect_key;
    marker_count *markers;
    size_t nmarkers;

    loopback_request **recs;
    size_t nrecs, crecs, base;
    int active, max_active;

    conn *conns[MAX_CONNS];
    size_t nconns;
    unsigned long msg_id;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *dupn(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d) {
        fprintf(stderr, "loopback: out of memory\n");
        abort();
    }
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static char *dup0(const char *s)
{
    return dupn(s, strlen(s));
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        fprintf(stderr, "loopback: out of memory\n");
        abort();
    }
    return q;
}

/* ---- the public side ---------------------------------------------------- */

static void *serve(void *arg);

loopback *loopback_start(void)
{
    loopback *lb = calloc(1, sizeof(*lb));
    if (!lb)
        return NULL;
    lb->listen_fd = -1;
    lb->wake[0] = lb->wake[1] = -1;
    pthread_mutex_init(&lb->mu, NULL);
    lb->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lb->listen_fd < 0)
        goto fail;
    int one = 1;
    if (setsockopt(lb->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one,
                   sizeof(one)) != 0)
        goto fail;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = 0,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(lb->listen_fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(lb->listen_fd, 512) != 0)
        goto fail;
    socklen_t len = sizeof(a);
    if (getsockname(lb->listen_fd, (struct sockaddr *)&a, &len) != 0)
        goto fail;
    lb->port = ntohs(a.sin_port);
    snprintf(lb->url, sizeof(lb->url), "http://127.0.0.1:%d", lb->port);
    if (fcntl(lb->listen_fd, F_SETFL, O_NONBLOCK) != 0 ||
        pipe2(lb->wake, O_CLOEXEC | O_NONBLOCK) != 0)
        goto fail;
    if (pthread_create(&lb->thread, NULL, serve, lb) != 0)
        goto fail;
    lb->started = true;
    return lb;
fail:
    fprintf(stderr, "loopback: cannot start: %s\n", strerror(errno));
    loopback_stop(lb);
    return NULL;
}

static void conn_close(loopback *lb, size_t i);

static void rec_free(loopback_request *r)
{
    free(r->method);
    free(r->path);
    free(r->headers);
    free(r->body);
    free(r->api);
    free(r->model);
    free(r->behaviour);
    free(r);
}

void loopback_stop(loopback *lb)
{
    if (!lb)
        return;
    if (lb->started) {
        pthread_mutex_lock(&lb->mu);
        lb->stop = true;
        pthread_mutex_unlock(&lb->mu);
        ssize_t w = write(lb->wake[1], "x", 1);
        (void)w;
        pthread_join(lb->thread, NULL);
    }
    while (lb->nconns)
        conn_close(lb, lb->nconns - 1);
    if (lb->listen_fd >= 0)
        close(lb->listen_fd);
    if (lb->wake[0] >= 0)
        close(lb->wake[0]);
    if (lb->wake[1] >= 0)
        close(lb->wake[1]);
    for (size_t i = 0; i < lb->ntexts; i++) {
        free(lb->texts[i].name);
        free(lb->texts[i].text);
    }
    free(lb->texts);
    for (size_t i = 0; i < lb->nscript; i++)
        free(lb->script[i]);
    free(lb->script);
    free(lb->expect_key);
    for (size_t i = 0; i < lb->nmarkers; i++)
        free(lb->markers[i].key);
    free(lb->markers);
    for (size_t i = 0; i < lb->nrecs; i++)
        rec_free(lb->recs[i]);
    free(lb->recs);
    pthread_mutex_destroy(&lb->mu);
    free(lb);
}

int loopback_port(const loopback *lb)
{
    return lb->port;
}

const char *loopback_url(const loopback *lb)
{
    return lb->url;
}

void loopback_set_text(loopback *lb, const char *name, const char *text)
{
    pthread_mutex_lock(&lb->mu);
    size_t i;
    for (i = 0; i < lb->ntexts; i++)
        if (strcmp(lb->texts[i].name, name) == 0)
            break;
    if (i == lb->ntexts) {
        lb->texts = xrealloc(lb->texts, (i + 1) * sizeof(*lb->texts));
        lb->texts[i].name = dup0(name);
        lb->ntexts++;
    } else {
        free(lb->texts[i].text);
    }
    lb->texts[i].text = dup0(text);
    pthread_mutex_unlock(&lb->mu);
}

void loopback_script(loopback *lb, const char *behaviours)
{
    pthread_mutex_lock(&lb->mu);
    for (size_t i = 0; i < lb->nscript; i++)
        free(lb->script[i]);
    lb->nscript = lb->script_pos = 0;
    const char *p = behaviours;
    while (p && *p) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        lb->script = xrealloc(lb->script, (lb->nscript + 1) * sizeof(char *));
        lb->script[lb->nscript++] = dupn(p, n);
        p = c ? c + 1 : NULL;
    }
    pthread_mutex_unlock(&lb->mu);
}

void loopback_expect_key(loopback *lb, const char *key)
{
    pthread_mutex_lock(&lb->mu);
    free(lb->expect_key);
    lb->expect_key = key ? dup0(key) : NULL;
    pthread_mutex_unlock(&lb->mu);
}

size_t loopback_count(loopback *lb)
{
    pthread_mutex_lock(&lb->mu);
    size_t n = lb->nrecs - lb->base;
    pthread_mutex_unlock(&lb->mu);
    return n;
}

const loopback_request *loopback_get(loopback *lb, size_t i)
{
    pthread_mutex_lock(&lb->mu);
    const loopback_request *r =
        lb->base + i < lb->nrecs ? lb->recs[lb->base + i] : NULL;
    pthread_mutex_unlock(&lb->mu);
    return r;
}

char *loopback_header(const loopback_request *r, const char *name)
{
    size_t n = strlen(name);
    const char *p = r->headers;
    while (p && *p) {
        const char *eol = strstr(p, "\r\n");
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (len > n && strncasecmp(p, name, n) == 0 && p[n] == ':') {
            const char *v = p + n + 1;
            while (*v == ' ')
                v++;
            return dupn(v, (size_t)(p + len - v));
        }
        p = eol ? eol + 2 : NULL;
    }
    return NULL;
}

int loopback_max_active(loopback *lb)
{
    pthread_mutex_lock(&lb->mu);
    int n = lb->max_active;
    pthread_mutex_unlock(&lb->mu);
    return n;
}

int loopback_active(loopback *lb)
{
    pthread_mutex_lock(&lb->mu);
    int n = lb->active;
    pthread_mutex_unlock(&lb->mu);
    return n;
}

void loopback_reset(loopback *lb)
{
    pthread_mutex_lock(&lb->mu);
    lb->base = lb->nrecs;
    for (size_t i = 0; i < lb->nmarkers; i++)
        free(lb->markers[i].key);
    lb->nmarkers = 0;
    lb->max_active = lb->active;
    pthread_mutex_unlock(&lb->mu);
}

/* ---- answering ---------------------------------------------------------- */

static const char *find_text(loopback *lb, const char *name)
{
    for (size_t i = 0; i < lb->ntexts; i++)
        if (strcmp(lb->texts[i].name, name) == 0)
            return lb->texts[i].text;
    return NULL;
}

/* Which behaviour a request gets (a new string); called with mu held. */
static char *choose(loopback *lb, const char *body)
{
    const char *m = strstr(body, MARKER);
    if (m) {
        const char *k = m + strlen(MARKER);
        const char *colon = strchr(k, ':');
        const char *end = strstr(k, "]]");
        if (colon && end && colon < end) {
            char *key = dupn(k, (size_t)(colon - k));
            size_t i;
            for (i = 0; i < lb->nmarkers; i++)
                if (strcmp(lb->markers[i].key, key) == 0)
                    break;
            if (i == lb->nmarkers) {
                lb->markers =
                    xrealloc(lb->markers, (i + 1) * sizeof(*lb->markers));
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
            return dupn(p, (size_t)((c ? c : end) - p));
        }
    }
    if (lb->script_pos < lb->nscript)
        return dup0(lb->script[lb->script_pos++]);
    return dup0("ok");
}

typedef struct reply {
    int status;
    char *extra_headers; /* "Name: value\r\n" lines */
    char *body;
    size_t body_len;
    long declared_len; /* Content-Length when it lies, else -1 */
    bool close_after;
    bool no_answer;
    double delay_s;
    long in_tokens, out_tokens;
} reply;

static void set_body(reply *r, json_t *v)
{
    r->body = json_dumps(v, JSON_COMPACT);
    if (!r->body)
        abort();
    r->body_len = strlen(r->body);
    json_decref(v);
}

static void error_reply(reply *r, const char *api, int status, const char *type,
                        const char *message)
{
    r->status = status;
    if (strcmp(api, "anthropic") == 0)
        set_body(r, json_pack("{s:s, s:{s:s, s:s}}", "type", "error", "error",
                              "type", type, "message", message));
    else
        set_body(r, json_pack("{s:{s:s, s:s, s:n}}", "error", "message",
                              message, "type", type, "code"));
}

/* s with each pat replaced by with, in a new string. */
static char *replace_all(const char *s, const char *pat, const char *with)
{
    size_t n = 0, pl = strlen(pat), wl = strlen(with);
    for (const char *p = s; (p = strstr(p, pat)); p += pl)
        n++;
    char *out = malloc(strlen(s) + n * wl + 1), *o = out;
    if (!out)
        abort();
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

/* A registered text with "@KEY@" and "@SEQ@" filled in, in a new string. */
static char *fill(loopback *lb, const char *text, const char *key)
{
    char seq[32];
    snprintf(seq, sizeof(seq), "%zu", lb->nrecs);
    char *a = replace_all(text, "@KEY@", key);
    char *b = replace_all(a, "@SEQ@", seq);
    free(a);
    return b;
}

static void text_reply(reply *r, const char *api, const char *model,
                       const char *text, size_t body_len)
{
    r->status = 200;
    r->in_tokens = (long)(body_len / 4 + 1);
    r->out_tokens = (long)(strlen(text) / 4 + 1);
    if (strcmp(api, "anthropic") == 0)
        set_body(r, json_pack("{s:s, s:s, s:s, s:s, s:[{s:s, s:s}], s:s, "
                              "s:{s:i, s:i}}",
                              "id", "msg_loopback", "type", "message", "role",
                              "assistant", "model", model, "content", "type",
                              "text", "text", text, "stop_reason", "end_turn",
                              "usage", "input_tokens", (int)r->in_tokens,
                              "output_tokens", (int)r->out_tokens));
    else
        set_body(
            r, json_pack("{s:s, s:s, s:s, s:[{s:i, s:{s:s, s:s}, s:s}], "
                         "s:{s:i, s:i, s:i}}",
                         "id", "chatcmpl-loopback", "object", "chat.completion",
                         "model", model, "choices", "index", 0, "message",
                         "role", "assistant", "content", text, "finish_reason",
                         "stop", "usage", "prompt_tokens", (int)r->in_tokens,
                         "completion_tokens", (int)r->out_tokens,
                         "total_tokens", (int)(r->in_tokens + r->out_tokens)));
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

/* The answer of behaviour revise[:MODE]: the sections of the request's
 * first ```json block, each with a sentence added, in a ```json block (a
 * new string). MODE "wrapped" answers in the prompt file's form ({"name",
 * "sections"}), "twice" shows the sections unchanged in a first block and
 * the revision in a second. Without a block in the request, a reply with
 * no JSON. */
static char *revise_text(const char *user, const char *mode, size_t seq)
{
    const char *open = strstr(user, "```json\n");
    const char *close = open ? strstr(open + 8, "\n```") : NULL;
    json_t *orig =
        close ? json_loadb(open + 8, (size_t)(close - open - 8), 0, NULL)
              : NULL;
    if (!json_is_object(orig)) {
        json_decref(orig);
        return dup0("I found no guidance to revise.");
    }
    json_t *revised = json_object();
    const char *key;
    json_t *v;
    json_object_foreach (orig, key, v) {
        const char *was = json_is_string(v) ? json_string_value(v) : "";
        char *t = malloc(strlen(was) + 80);
        if (!t)
            abort();
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
    char *out = malloc(n);
    if (!out)
        abort();
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

/* Checks a request against its API; a message for a 400, or NULL. */
static const char *check_request(const char *api, json_t *root)
{
    if (!json_is_object(root))
        return "the body is not a JSON object";
    if (!json_is_string(json_object_get(root, "model")))
        return "\"model\" must be a string";
    json_t *msgs = json_object_get(root, "messages");
    if (!json_is_array(msgs) || json_array_size(msgs) == 0)
        return "\"messages\" must be a non-empty array";
    size_t i;
    json_t *m;
    json_array_foreach (msgs, i, m) {
        if (!json_is_string(json_object_get(m, "role")) ||
            !json_is_string(json_object_get(m, "content")))
            return "each message needs a \"role\" and a \"content\" string";
    }
    json_t *mt = json_object_get(root, "max_tokens");
    json_t *t = json_object_get(root, "temperature");
    if (t && !json_is_number(t))
        return "\"temperature\" must be a number";
    if (strcmp(api, "anthropic") == 0) {
        if (!json_is_integer(mt))
            return "\"max_tokens\" is required and must be an integer";
        json_t *sys = json_object_get(root, "system");
        if (sys && !json_is_string(sys))
            return "\"system\" must be a string";
        if (strcmp(json_string_value(
                       json_object_get(json_array_get(msgs, 0), "role")),
                   "user") != 0)
            return "the first message must be the user's";
    } else if (mt && !json_is_integer(mt)) {
        return "\"max_tokens\" must be an integer";
    }
    return NULL;
}

/* The key a request sent, in a new string, or NULL. */
static char *sent_key(const loopback_request *q)
{
    if (strcmp(q->api, "anthropic") == 0)
        return loopback_header(q, "x-api-key");
    char *auth = loopback_header(q, "authorization");
    if (auth && strncmp(auth, "Bearer ", 7) == 0) {
        char *k = dup0(auth + 7);
        free(auth);
        return k;
    }
    free(auth);
    return NULL;
}

/* Decides the answer to request q; called with mu held. */
static void answer(loopback *lb, loopback_request *q, reply *r)
{
    json_t *root = NULL;
    char *key = NULL;
    memset(r, 0, sizeof(*r));
    r->declared_len = -1;
    if (strcmp(q->api, "") == 0) {
        q->behaviour = dup0("not_found");
        error_reply(r, "openai", 404, "not_found_error", "no such endpoint");
        goto done;
    }
    if (strcmp(q->method, "POST") != 0) {
        q->behaviour = dup0("bad_method");
        error_reply(r, q->api, 405, "invalid_request_error", "POST only");
        goto done;
    }
    root = json_loadb(q->body, q->body_len, 0, NULL);
    const char *bad = check_request(q->api, root);
    if (!bad && strcmp(q->api, "anthropic") == 0) {
        char *v = loopback_header(q, "anthropic-version");
        if (!v || strcmp(v, "2023-06-01") != 0)
            bad = "anthropic-version must be 2023-06-01";
        free(v);
    }
    if (bad) {
        q->behaviour = dup0("invalid_request");
        error_reply(r, q->api, 400, "invalid_request_error", bad);
        goto done;
    }
    q->model = dup0(json_string_value(json_object_get(root, "model")));
    key = sent_key(q);
    if (lb->expect_key && (!key || strcmp(key, lb->expect_key) != 0)) {
        q->behaviour = dup0("bad_key");
        error_reply(r, q->api, 401, "authentication_error", "invalid key");
        goto done;
    }

    char *b = choose(lb, q->body);
    q->behaviour = b;
    const char *def = find_text(lb, "default");
    const char *ok_text = def ? def : "Nothing to change here.";
    char *arg = strchr(b, ':');
    const char *arg1 = arg ? arg + 1 : "";
    char word[32];
    snprintf(word, sizeof(word), "%.*s",
             (int)(arg ? (size_t)(arg - b) : strlen(b)), b);

    if (strcmp(word, "ok") == 0) {
        char *t = fill(lb, ok_text, key ? key : "");
        text_reply(r, q->api, q->model, t, q->body_len);
        free(t);
    } else if (strcmp(word, "malformed") == 0) {
        r->status = 200;
        const char *s =
            strcmp(q->api, "anthropic") == 0
                ? "{\"type\": \"message\", \"content\": [{\"type\": "
                  "\"text\", \"text\": \"unfinished"
                : "{\"choices\": [{\"message\": {\"content\": "
                  "\"unfinished";
        r->body = dup0(s);
        r->body_len = strlen(s);
    } else if (strcmp(word, "badshape") == 0) {
        r->status = 200;
        set_body(r, json_pack("{s:s, s:[]}", "object", "nothing", "choices"));
    } else if (strcmp(word, "429") == 0 || strcmp(word, "429date") == 0 ||
               strcmp(word, "429ms") == 0 || strcmp(word, "429none") == 0) {
        error_reply(r, q->api, 429, "rate_limit_error", "slow down");
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
        r->extra_headers = dup0(h);
    } else if (strcmp(word, "echo") == 0) {
        char msg[512];
        snprintf(msg, sizeof(msg), "the key %s is not valid", key ? key : "");
        error_reply(r, q->api, 401, "authentication_error", msg);
    } else if (strcmp(word, "slow") == 0) {
        char *name = strchr(arg1, ':');
        const char *t = name ? find_text(lb, name + 1) : ok_text;
        r->delay_s = atof(arg1) / 1000.0;
        char *filled = fill(lb, t ? t : ok_text, key ? key : "");
        text_reply(r, q->api, q->model, filled, q->body_len);
        free(filled);
    } else if (strcmp(word, "truncated") == 0) {
        char *t = fill(lb, ok_text, key ? key : "");
        text_reply(r, q->api, q->model, t, q->body_len);
        free(t);
        r->declared_len = (long)r->body_len + 1000;
        r->body_len /= 2;
        r->close_after = true;
    } else if (strcmp(word, "huge") == 0) {
        size_t n = (size_t)atol(arg1);
        char *t = malloc(n + 1);
        if (!t)
            abort();
        memset(t, 'x', n);
        t[n] = '\0';
        text_reply(r, q->api, q->model, t, q->body_len);
        free(t);
    } else if (strcmp(word, "revise") == 0) {
        char *t = revise_text(user_text(root), arg1, lb->nrecs);
        text_reply(r, q->api, q->model, t, q->body_len);
        free(t);
    } else if (strcmp(word, "close") == 0) {
        r->no_answer = true;
        r->close_after = true;
    } else if (atoi(word) >= 400 && atoi(word) <= 599) {
        int st = atoi(word);
        const char *type = st == 529   ? "overloaded_error"
                           : st >= 500 ? "api_error"
                           : st == 401 ? "authentication_error"
                                       : "invalid_request_error";
        error_reply(r, q->api, st, type, "the loopback server says so");
    } else {
        const char *t = find_text(lb, b);
        if (t) {
            char *filled = fill(lb, t, key ? key : "");
            text_reply(r, q->api, q->model, filled, q->body_len);
            free(filled);
        } else {
            error_reply(r, q->api, 400, "invalid_request_error",
                        "the loopback server knows no such behaviour");
        }
    }
done:
    if (!q->model)
        q->model = dup0("");
    q->status = r->no_answer ? 0 : r->status;
    if (r->status == 200) {
        q->input_tokens = r->in_tokens;
        q->output_tokens = r->out_tokens;
    }
    free(key);
    json_decref(root);
}

static const char *reason_phrase(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    default: return "Status";
    }
}

/* ---- connections -------------------------------------------------------- */

static void release(loopback *lb, conn *c)
{
    if (c->held) {
        pthread_mutex_lock(&lb->mu);
        lb->active--;
        pthread_mutex_unlock(&lb->mu);
        c->held = false;
    }
}

static void conn_close(loopback *lb, size_t i)
{
    conn *c = lb->conns[i];
    release(lb, c);
    close(c->fd);
    free(c->in);
    free(c->out);
    free(c);
    lb->conns[i] = lb->conns[--lb->nconns];
}

/* Parses a complete request at the start of c->in, if there is one, and
 * prepares the answer. Returns 1 when a request was taken, 0 when more
 * bytes are needed, -1 for a request that cannot be served. */
static int take_request(loopback *lb, conn *c)
{
    if (c->in_len == 0)
        return 0;
    char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
    if (!end)
        return c->in_len > 65536 ? -1 : 0;
    size_t head_len = (size_t)(end - c->in) + 4;
    char *head = dupn(c->in, head_len);
    long clen = 0;
    char *line_end = strstr(head, "\r\n");
    for (char *p = line_end + 2; p < head + head_len - 2;) {
        char *e = strstr(p, "\r\n");
        if (strncasecmp(p, "content-length:", 15) == 0)
            clen = atol(p + 15);
        p = e + 2;
    }
    if (clen < 0 || (size_t)clen > MAX_REQUEST) {
        free(head);
        return -1;
    }
    if (c->in_len < head_len + (size_t)clen) {
        free(head);
        return 0;
    }
    loopback_request *q = calloc(1, sizeof(*q));
    if (!q)
        abort();
    q->received = now_s();
    char method[16] = "", path[1024] = "";
    sscanf(head, "%15s %1023s", method, path);
    q->method = dup0(method);
    q->path = dup0(path);
    q->headers = dup0(line_end + 2);
    q->body = dupn(c->in + head_len, (size_t)clen);
    q->body_len = (size_t)clen;
    size_t pl = strlen(path);
    if (pl >= 17 && strcmp(path + pl - 17, "/chat/completions") == 0)
        q->api = dup0("openai");
    else if (pl >= 12 && strcmp(path + pl - 12, "/v1/messages") == 0)
        q->api = dup0("anthropic");
    else
        q->api = dup0("");
    bool client_close = false;
    char *conn_hdr = loopback_header(q, "connection");
    if (conn_hdr && strcasecmp(conn_hdr, "close") == 0)
        client_close = true;
    free(conn_hdr);
    free(head);
    memmove(c->in, c->in + head_len + clen, c->in_len - head_len - clen);
    c->in_len -= head_len + (size_t)clen;

    reply r;
    pthread_mutex_lock(&lb->mu);
    answer(lb, q, &r);
    if (lb->nrecs == lb->crecs) {
        lb->crecs = lb->crecs ? 2 * lb->crecs : 64;
        lb->recs = xrealloc(lb->recs, lb->crecs * sizeof(*lb->recs));
    }
    lb->recs[lb->nrecs++] = q;
    lb->active++;
    if (lb->active > lb->max_active)
        lb->max_active = lb->active;
    pthread_mutex_unlock(&lb->mu);
    c->held = true;

    c->close_after = r.close_after || client_close;
    free(c->out);
    c->out = NULL;
    c->out_len = c->out_off = 0;
    if (!r.no_answer) {
        char head_out[1024];
        int n =
            snprintf(head_out, sizeof(head_out),
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                     "Content-Length: %ld\r\n%s%s\r\n",
                     r.status, reason_phrase(r.status),
                     r.declared_len >= 0 ? r.declared_len : (long)r.body_len,
                     r.extra_headers ? r.extra_headers : "",
                     c->close_after ? "Connection: close\r\n" : "");
        c->out = malloc((size_t)n + r.body_len);
        if (!c->out)
            abort();
        memcpy(c->out, head_out, (size_t)n);
        if (r.body_len)
            memcpy(c->out + n, r.body, r.body_len);
        c->out_len = (size_t)n + r.body_len;
    }
    c->send_at = now_s() + r.delay_s;
    c->state = r.delay_s > 0 ? C_WAIT : C_WRITE;
    free(r.extra_headers);
    free(r.body);
    return 1;
}

/* Reads what is there; false when the peer closed or failed. */
static bool conn_read(conn *c)
{
    for (;;) {
        if (c->in_cap - c->in_len < 65536) {
            c->in_cap = c->in_cap ? 2 * c->in_cap : 131072;
            c->in = xrealloc(c->in, c->in_cap);
        }
        ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
        if (n > 0) {
            c->in_len += (size_t)n;
            if (c->in_len > MAX_REQUEST + 65536)
                return false;
            continue;
        }
        if (n == 0)
            return false;
        if (errno == EINTR)
            continue;
        return errno == EAGAIN || errno == EWOULDBLOCK;
    }
}

/* Writes what it can; returns -1 on a failed peer, 1 when all is sent. */
static int conn_write(conn *c)
{
    while (c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                         MSG_NOSIGNAL);
        if (n > 0) {
            c->out_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        return -1;
    }
    return 1;
}

/* Moves a connection on; false when it is to be closed. */
static bool conn_step(loopback *lb, conn *c, short revents)
{
    if (c->state == C_READ || c->state == C_WAIT) {
        if (revents & (POLLIN | POLLHUP | POLLERR)) {
            if (!conn_read(c))
                return false;
        }
    }
    if (c->state == C_WAIT && now_s() >= c->send_at)
        c->state = C_WRITE;
    if (c->state == C_READ) {
        int t = take_request(lb, c);
        if (t < 0)
            return false;
    }
    if (c->state == C_WRITE) {
        int w = conn_write(c);
        if (w < 0)
            return false;
        if (w == 1) {
            release(lb, c);
            if (c->close_after) {
                shutdown(c->fd, SHUT_WR);
                return false;
            }
            c->state = C_READ;
            return conn_step(lb, c, 0);
        }
    }
    return true;
}

static void *serve(void *arg)
{
    loopback *lb = arg;
    struct pollfd fds[MAX_CONNS + 2];
    for (;;) {
        pthread_mutex_lock(&lb->mu);
        bool stop = lb->stop;
        pthread_mutex_unlock(&lb->mu);
        if (stop)
            break;
        double now = now_s(), next = now + 0.5;
        size_t n = 0;
        fds[n++] = (struct pollfd){.fd = lb->wake[0], .events = POLLIN};
        fds[n++] = (struct pollfd){
            .fd = lb->listen_fd, .events = lb->nconns < MAX_CONNS ? POLLIN : 0};
        for (size_t i = 0; i < lb->nconns; i++) {
            conn *c = lb->conns[i];
            short ev = c->state == C_WRITE ? POLLOUT : POLLIN;
            if (c->state == C_WAIT && c->send_at < next)
                next = c->send_at;
            fds[n++] = (struct pollfd){.fd = c->fd, .events = ev};
        }
        int timeout = (int)((next - now) * 1000.0) + 1;
        if (timeout < 0)
            timeout = 0;
        int pr = poll(fds, n, timeout);
        if (pr < 0 && errno != EINTR)
            break;
        if (fds[1].revents & POLLIN) {
            for (;;) {
                int fd = accept4(lb->listen_fd, NULL, NULL,
                                 SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0)
                    break;
                if (lb->nconns >= MAX_CONNS) {
                    close(fd);
                    break;
                }
                conn *c = calloc(1, sizeof(*c));
                if (!c)
                    abort();
                c->fd = fd;
                c->state = C_READ;
                lb->conns[lb->nconns++] = c;
            }
        }
        if (fds[0].revents & POLLIN) {
            char buf[64];
            while (read(lb->wake[0], buf, sizeof(buf)) > 0)
                ;
        }
        /* Connections accepted in this pass have no pollfd yet: they are
         * stepped without events. Walk backwards so closing one (which
         * moves the last into its place) skips nothing. */
        for (size_t i = lb->nconns; i-- > 0;) {
            conn *c = lb->conns[i];
            short rev = 0;
            for (size_t k = 2; k < n; k++)
                if (fds[k].fd == c->fd) {
                    rev = fds[k].revents;
                    break;
                }
            if (!conn_step(lb, c, rev))
                conn_close(lb, i);
        }
    }
    return NULL;
}

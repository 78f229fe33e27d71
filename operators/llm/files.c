/*
 * files.c: the llm operator's files transport (files.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "buf.h"
#include "files.h"

/* One request waiting for its done file. */
typedef struct files_req {
    uint64_t number;
    llm_http_validate_fn validate;
    llm_http_attempt_fn attempt;
    llm_http_done_fn done;
    void *ud;
    void *reply_ud; /* validate's */
    double submitted;
} files_req;

/* A request an earlier process wrote here (a sidecar's run and request). */
typedef struct files_old {
    uint64_t number;
    char *run;
    uint64_t request;
    bool adopted;
} files_old;

struct llm_files {
    char *dir;
    size_t max_reply_bytes;
    llm_files_say_fn say;
    void *say_ud;
    uint64_t first; /* the first number this engine writes */
    uint64_t next;  /* the next number it writes */
    files_req *reqs;
    size_t nreqs, cap;
    uint64_t *unknown; /* done files of numbers it never wrote, told once */
    size_t nunknown;
    files_old *old; /* the sidecars of earlier processes, once read */
    size_t nold;
    bool old_read;
};

uint64_t kevo__llm_files_number(const char *name, bool meta)
{
    char *end;
    if (name[0] < '0' || name[0] > '9')
        return 0;
    errno = 0;
    unsigned long long v = strtoull(name, &end, 10);
    if (errno || end == name)
        return 0;
    if (strcmp(end, ".json") == 0 || (meta && strcmp(end, ".meta.json") == 0))
        return (uint64_t)v;
    return 0;
}

/* The largest number of dir's files. */
static uint64_t largest(const char *dir)
{
    uint64_t max = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t v = kevo__llm_files_number(e->d_name, true);
        if (v > max)
            max = v;
    }
    closedir(d);
    return max;
}

bool kevo__llm_files_mkdir(const char *path, char *err, size_t n)
{
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        kevo__llm_errf(err, n, "cannot create %s: %s", path, strerror(errno));
        return false;
    }
    return true;
}

llm_files *kevo__llm_files_new(const char *dir, size_t max_reply_bytes,
                               llm_files_say_fn say, void *say_ud, char *err,
                               size_t errlen)
{
    char path[4096];
    llm_files *f = calloc(1, sizeof(*f));
    if (!f || !(f->dir = kevo__llm_strdup(dir))) {
        kevo__llm_errf(err, errlen, "out of memory");
        goto fail;
    }
    f->max_reply_bytes = max_reply_bytes;
    f->say = say;
    f->say_ud = say_ud;
    if (!kevo__llm_files_mkdir(dir, err, errlen))
        goto fail;
    uint64_t max = 0;
    static const char *const subs[] = {"pending", "done"};
    for (size_t i = 0; i < LLM_ARRAY_SIZE(subs); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, subs[i]);
        if (!kevo__llm_files_mkdir(path, err, errlen))
            goto fail;
        uint64_t v = largest(path);
        if (v > max)
            max = v;
    }
    f->first = f->next = max + 1;
    return f;
fail:
    if (f)
        free(f->dir);
    free(f);
    return NULL;
}

void kevo__llm_files_free(llm_files *f)
{
    if (!f)
        return;
    while (f->nreqs > 0) {
        files_req r = f->reqs[--f->nreqs];
        llm_http_result res = {
            .outcome = LLM_CANCELLED, .body = "", .reason = "cancelled"};
        r.done(r.ud, &res);
    }
    free(f->reqs);
    free(f->unknown);
    for (size_t i = 0; i < f->nold; i++)
        free(f->old[i].run);
    free(f->old);
    free(f->dir);
    free(f);
}

bool kevo__llm_files_write(const char *path, const char *data, size_t len,
                           char *err, size_t n)
{
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *fp = fopen(tmp, "wb");
    if (!fp) {
        kevo__llm_errf(err, n, "cannot write %s: %s", tmp, strerror(errno));
        return false;
    }
    bool ok = fwrite(data, 1, len, fp) == len;
    ok = fflush(fp) == 0 && ok;
    ok = fsync(fileno(fp)) == 0 && ok;
    ok = fclose(fp) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        kevo__llm_errf(err, n, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return false;
    }
    return true;
}

/* Reads the sidecars of the numbers below the first this engine writes,
 * once. A sidecar that does not parse is skipped. */
static void read_old(llm_files *f)
{
    char path[4096];
    f->old_read = true;
    snprintf(path, sizeof(path), "%s/pending", f->dir);
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t v = kevo__llm_files_number(e->d_name, true);
        if (!v || !strstr(e->d_name, ".meta.json") || v >= f->first)
            continue;
        snprintf(path, sizeof(path), "%s/pending/%s", f->dir, e->d_name);
        json_t *m = json_load_file(path, 0, NULL);
        json_t *run = json_object_get(m, "run");
        json_t *req = json_object_get(m, "request");
        files_old *o = realloc(f->old, (f->nold + 1) * sizeof(*o));
        if (o)
            f->old = o;
        if (o && json_is_string(run) && json_is_integer(req) &&
            (o[f->nold].run = kevo__llm_strdup(json_string_value(run)))) {
            o[f->nold].number = v;
            o[f->nold].request = (uint64_t)json_integer_value(req);
            o[f->nold].adopted = false;
            f->nold++;
        }
        json_decref(m);
    }
    closedir(d);
}

/* The number an earlier process of the same run wrote for the same request,
 * or 0. A search that stopped to wait resumes from before the requests it
 * waited for and sends them again with the same ids: they are taken back
 * rather than written twice. A request is taken back even when its body
 * differs (a prompt that quotes a figure the resumed process measured
 * again): it was sent, so its reply answers it, and writing it again would
 * send it twice and, where every resumed process measures anew, wait for
 * ever. The difference is said. */
static uint64_t adopt(llm_files *f, const llm_files_request *req)
{
    if (!req->run)
        return 0;
    if (!f->old_read)
        read_old(f);
    for (size_t i = 0; i < f->nold; i++) {
        files_old *o = &f->old[i];
        if (o->adopted || o->request != req->request ||
            strcmp(o->run, req->run) != 0)
            continue;
        char path[4096], why[256];
        size_t len = 0;
        snprintf(path, sizeof(path), "%s/pending/%06" PRIu64 ".json", f->dir,
                 o->number);
        char *body = kevo__llm_files_read(path, req->body_len + 1, &len, why,
                                          sizeof(why));
        bool same =
            body && len == req->body_len && memcmp(body, req->body, len) == 0;
        free(body);
        if (!same && f->say) {
            char text[4400];
            snprintf(text, sizeof(text),
                     "%s was written for request %" PRIu64
                     " of this run with another body: it was sent, so it is "
                     "taken back as it is and its reply answers the request",
                     path, o->request);
            f->say(f->say_ud, text);
        }
        o->adopted = true;
        return o->number;
    }
    return 0;
}

char *kevo__llm_files_url_path(const char *url)
{
    const char *p = strstr(url, "://");
    p = p ? strchr(p + 3, '/') : strchr(url, '/');
    return kevo__llm_strdup(p ? p : "/");
}

/* Waits for request number num's reply from now on (room made already). */
static void track(llm_files *f, uint64_t num, const llm_files_request *req)
{
    f->reqs[f->nreqs++] = (files_req){num,
                                      req->validate,
                                      req->attempt,
                                      req->done,
                                      req->ud,
                                      req->reply_ud ? req->reply_ud : req->ud,
                                      kevo__llm_now()};
}

bool kevo__llm_files_submit(llm_files *f, const llm_files_request *req,
                            uint64_t *number, char *err, size_t errlen)
{
    char path[4096];
    bool ok = false;
    char *meta = NULL;
    char *upath = kevo__llm_files_url_path(req->url);
    if (f->nreqs == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 8;
        files_req *r = realloc(f->reqs, cap * sizeof(*r));
        if (!r)
            goto nomem;
        f->reqs = r;
        f->cap = cap;
    }
    uint64_t num = adopt(f, req);
    if (num) {
        track(f, num, req);
        *number = num;
        ok = true;
        goto done;
    }
    num = f->next;
    json_t *m = json_pack("{s:I, s:s, s:s?, s:s, s:s, s:s?, s:I}", "number",
                          (json_int_t)num, "api", req->api, "path", upath,
                          "url", req->url, "model", req->model, "run", req->run,
                          "request", (json_int_t)req->request);
    meta = m ? json_dumps(m, JSON_INDENT(1)) : NULL;
    json_decref(m);
    if (!upath || !meta)
        goto nomem;
    snprintf(path, sizeof(path), "%s/pending/%06" PRIu64 ".meta.json", f->dir,
             num);
    if (!kevo__llm_files_write(path, meta, strlen(meta), err, errlen))
        goto done;
    snprintf(path, sizeof(path), "%s/pending/%06" PRIu64 ".json", f->dir, num);
    if (!kevo__llm_files_write(path, req->body, req->body_len, err, errlen))
        goto done;
    f->next = num + 1;
    track(f, num, req);
    *number = num;
    ok = true;
    goto done;
nomem:
    kevo__llm_errf(err, errlen, "out of memory");
done:
    free(meta);
    free(upath);
    return ok;
}

char *kevo__llm_files_read(const char *path, size_t max, size_t *len, char *err,
                           size_t n)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        kevo__llm_errf(err, n, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    llm_buf b = {0};
    char chunk[8192];
    size_t got;
    while ((got = fread(chunk, 1, sizeof(chunk), fp)) > 0) {
        if (b.len + got > max) {
            kevo__llm_errf(err, n, "%s is over %zu bytes", path, max);
            fclose(fp);
            kevo__llm_buf_free(&b);
            return NULL;
        }
        kevo__llm_buf_append(&b, chunk, got);
    }
    bool bad = ferror(fp);
    fclose(fp);
    if (bad) {
        kevo__llm_errf(err, n, "cannot read %s", path);
        kevo__llm_buf_free(&b);
        return NULL;
    }
    *len = b.len;
    char *s = b.len ? kevo__llm_buf_take(&b) : kevo__llm_strdup("");
    kevo__llm_buf_free(&b);
    if (!s)
        kevo__llm_errf(err, n, "out of memory");
    return s;
}

char *kevo__llm_files_failure(const llm_http_result *r,
                              const char *const *secrets, size_t nsecrets)
{
    llm_outcome o = r->outcome == LLM_CANCELLED ? LLM_TRANSPORT : r->outcome;
    char *reason =
        kevo__llm_redact(r->reason, strlen(r->reason), secrets, nsecrets);
    char *body = kevo__llm_redact(r->body, r->body_len, secrets, nsecrets);
    char *clean_reason =
        reason ? kevo__llm_utf8_clean(reason, strlen(reason)) : NULL;
    char *clean_body = body ? kevo__llm_utf8_clean(body, strlen(body)) : NULL;
    json_t *j = clean_reason && clean_body
                    ? json_pack("{s:s, s:{s:s, s:s}, s:{s:s, s:I, s:i, s:s}}",
                                "type", "error", "error", "type", "kevo_relay",
                                "message", clean_reason, "kevo_relay",
                                "outcome", kevo__llm_outcome_name(o), "status",
                                (json_int_t)r->status, "attempts", r->attempts,
                                "body", clean_body)
                    : NULL;
    char *text = j ? json_dumps(j, JSON_INDENT(1)) : NULL;
    json_decref(j);
    free(reason);
    free(body);
    free(clean_reason);
    free(clean_body);
    return text;
}

/* A failure file's outcome (kevo__llm_files_failure): *res gets its
 * outcome, status, attempts and body (borrowed from root), and why the
 * reason. Returns false when root is no failure file. */
static bool relayed_failure(json_t *root, const char *path,
                            llm_http_result *res, char *why, size_t n)
{
    json_t *k = json_object_get(root, "kevo_relay");
    if (!json_is_object(k))
        return false;
    const char *name = json_string_value(json_object_get(k, "outcome"));
    const char *msg = json_string_value(
        json_object_get(json_object_get(root, "error"), "message"));
    json_t *body = json_object_get(k, "body");
    llm_outcome o;
    if (!kevo__llm_outcome_from_name(name, &o) || o == LLM_OK ||
        o == LLM_CANCELLED) {
        res->outcome = LLM_MALFORMED;
        kevo__llm_errf(why, n,
                       "%s: $.kevo_relay.outcome: \"%s\" is no failure "
                       "outcome",
                       path, name ? name : "(none)");
        return true;
    }
    res->outcome = o;
    res->status = (long)json_integer_value(json_object_get(k, "status"));
    json_int_t a = json_integer_value(json_object_get(k, "attempts"));
    res->attempts = a > 0 && a < 1000000 ? (int)a : 1;
    res->body = json_is_string(body) ? json_string_value(body) : "";
    res->body_len = json_is_string(body) ? json_string_length(body) : 0;
    kevo__llm_errf(why, n, "%s (relayed in %s)", msg ? msg : "no reason given",
                   path);
    return true;
}

/* Ends request r with what path holds. */
static void finish(llm_files *f, const files_req *r, const char *path)
{
    char why[1200] = "";
    size_t len = 0;
    json_t *root = NULL;
    char *body =
        kevo__llm_files_read(path, f->max_reply_bytes, &len, why, sizeof(why));
    llm_http_result res = {.outcome = LLM_OK,
                           .attempts = 1,
                           .body = body ? body : "",
                           .body_len = body ? len : 0,
                           .reason = why};
    if (!body) {
        res.outcome = strstr(why, " bytes") ? LLM_TOO_LARGE : LLM_TRANSPORT;
    } else {
        json_error_t je;
        root = json_loadb(body, len, 0, &je);
        if (!root) {
            res.outcome = LLM_MALFORMED;
            kevo__llm_errf(why, sizeof(why),
                           "%s is not JSON: %s (line %d, column %d)", path,
                           je.text, je.line, je.column);
        } else if (relayed_failure(root, path, &res, why, sizeof(why))) {
            /* as the relay saw it */
        } else if (r->validate) {
            char vwhy[400] = "";
            if (!r->validate(r->reply_ud, root, vwhy, sizeof(vwhy))) {
                res.outcome = LLM_MALFORMED;
                kevo__llm_errf(why, sizeof(why), "%s: %s", path, vwhy);
            }
        }
    }
    res.elapsed_s = kevo__llm_now() - r->submitted;
    if (res.outcome == LLM_OK) {
        res.status = 200;
        res.json = root;
    }
    if (r->attempt) {
        llm_http_attempt a = {.number = 1,
                              .outcome = res.outcome,
                              .status = res.status,
                              .body = res.body,
                              .body_len = res.body_len,
                              .reason = why,
                              .elapsed_s = res.elapsed_s,
                              .retry_after_s = -1,
                              .retry_in_s = -1};
        r->attempt(r->ud, &a);
    }
    r->done(r->ud, &res);
    json_decref(root);
    free(body);
}

/* Tells once of a done file for number v that this engine never wrote. */
static void tell_unknown(llm_files *f, uint64_t v)
{
    for (size_t i = 0; i < f->nunknown; i++)
        if (f->unknown[i] == v)
            return;
    uint64_t *u = realloc(f->unknown, (f->nunknown + 1) * sizeof(*u));
    if (!u)
        return;
    f->unknown = u;
    f->unknown[f->nunknown++] = v;
    if (f->say) {
        char text[4300];
        snprintf(text, sizeof(text),
                 "%s/done/%06" PRIu64 ".json answers no request written "
                 "here: ignored",
                 f->dir, v);
        f->say(f->say_ud, text);
    }
}

size_t kevo__llm_files_poll(llm_files *f)
{
    char path[4096];
    size_t ended = 0;
    snprintf(path, sizeof(path), "%s/done", f->dir);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t v = kevo__llm_files_number(e->d_name, false);
        if (v >= f->next)
            tell_unknown(f, v);
    }
    closedir(d);
    /* In the order written, so that replies are taken in a fixed order
     * whatever order they arrived in. */
    for (size_t i = 0; i < f->nreqs;) {
        struct stat sb;
        snprintf(path, sizeof(path), "%s/done/%06" PRIu64 ".json", f->dir,
                 f->reqs[i].number);
        if (stat(path, &sb) != 0) {
            i++;
            continue;
        }
        files_req r = f->reqs[i];
        memmove(&f->reqs[i], &f->reqs[i + 1],
                (f->nreqs - i - 1) * sizeof(*f->reqs));
        f->nreqs--;
        finish(f, &r, path);
        ended++;
    }
    return ended;
}

size_t kevo__llm_files_pending(const llm_files *f)
{
    return f ? f->nreqs : 0;
}

const char *kevo__llm_files_dir(const llm_files *f)
{
    return f->dir;
}

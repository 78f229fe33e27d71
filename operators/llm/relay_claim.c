/*
 * relay_claim.c: the marks of the requests a relay sends (relay_claim.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "buf.h"
#include "files.h"
#include "relay_claim.h"

void kevo__llm_claim_self(llm_relay_owner *me)
{
    memset(me, 0, sizeof(*me));
    if (gethostname(me->host, sizeof(me->host) - 1) != 0)
        snprintf(me->host, sizeof(me->host), "unknown");
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(me->boot, sizeof(me->boot), f))
            me->boot[0] = '\0';
        me->boot[strcspn(me->boot, "\n")] = '\0';
        fclose(f);
    }
    me->pid = (long)getpid();
}

static void mark_path(char *path, size_t n, const char *dir, uint64_t number)
{
    snprintf(path, n, "%s/sent/%06" PRIu64 ".json", dir, number);
}

/* Now, in UTC, as 2025-06-01T10:00:00Z. */
static void utc_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Whether owner o, as me sees it, may still run. A relay of another host
 * cannot be asked: it counts as running. */
static bool owner_alive(const llm_relay_owner *o, const llm_relay_owner *me)
{
    if (strcmp(o->host, me->host) != 0)
        return true;
    if (o->boot[0] && me->boot[0] && strcmp(o->boot, me->boot) != 0)
        return false; /* the host rebooted since */
    if (o->pid == me->pid)
        return false; /* this process, which holds no such request */
    return o->pid > 0 && (kill((pid_t)o->pid, 0) == 0 || errno == EPERM);
}

static void copy_str(char *dst, size_t n, json_t *v)
{
    snprintf(dst, n, "%s", json_is_string(v) ? json_string_value(v) : "");
}

void kevo__llm_claim_read(const char *dir, uint64_t number,
                          const llm_relay_owner *me, llm_claim *c)
{
    char path[4096];
    memset(c, 0, sizeof(*c));
    mark_path(path, sizeof(path), dir, number);
    if (access(path, F_OK) != 0 && errno == ENOENT) {
        c->state = LLM_CLAIM_NONE;
        return;
    }
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    json_t *pid = json_object_get(m, "pid");
    if (!json_is_object(m) || !json_is_string(json_object_get(m, "host")) ||
        !json_is_integer(pid)) {
        c->state = LLM_CLAIM_BAD;
        kevo__llm_errf(c->why, sizeof(c->why), "%s: %s", path,
                       !m ? je.text
                          : "not an object with \"host\" and \"pid\"");
        json_decref(m);
        return;
    }
    copy_str(c->owner.host, sizeof(c->owner.host), json_object_get(m, "host"));
    copy_str(c->owner.boot, sizeof(c->owner.boot), json_object_get(m, "boot"));
    c->owner.pid = (long)json_integer_value(pid);
    copy_str(c->claimed, sizeof(c->claimed), json_object_get(m, "claimed"));
    copy_str(c->outcome, sizeof(c->outcome), json_object_get(m, "outcome"));
    copy_str(c->batch, sizeof(c->batch),
             json_object_get(json_object_get(m, "batch"), "id"));
    json_t *u = json_object_get(m, "usage");
    json_int_t in = json_integer_value(json_object_get(u, "input_tokens"));
    json_int_t out = json_integer_value(json_object_get(u, "output_tokens"));
    c->input_tokens = in > 0 ? (uint64_t)in : 0;
    c->output_tokens = out > 0 ? (uint64_t)out : 0;
    c->cost = json_number_value(json_object_get(u, "cost"));
    c->state = c->outcome[0]                ? LLM_CLAIM_ENDED
               : owner_alive(&c->owner, me) ? LLM_CLAIM_LIVE
                                            : LLM_CLAIM_STALE;
    json_decref(m);
}

bool kevo__llm_claim_take(const char *dir, uint64_t number,
                          const llm_relay_owner *me, const char *model,
                          const char *url, bool *taken, char *err,
                          size_t errlen)
{
    char path[4096], tmp[4200], now[32];
    mark_path(path, sizeof(path), dir, number);
    snprintf(tmp, sizeof(tmp), "%s.%ld.claim", path, me->pid);
    utc_now(now, sizeof(now));
    json_t *m = json_pack("{s:I, s:s, s:s, s:I, s:s, s:s, s:s}", "number",
                          (json_int_t)number, "host", me->host, "boot",
                          me->boot, "pid", (json_int_t)me->pid, "model", model,
                          "url", url, "claimed", now);
    char *text = m ? json_dumps(m, JSON_INDENT(1)) : NULL;
    json_decref(m);
    if (!text) {
        kevo__llm_errf(err, errlen, "out of memory");
        return false;
    }
    bool ok = kevo__llm_files_write(tmp, text, strlen(text), err, errlen);
    free(text);
    if (!ok)
        return false;
    /* link() makes the mark only where there is none: of two relays on
     * one directory, one sends. */
    *taken = link(tmp, path) == 0;
    int e = errno;
    unlink(tmp);
    if (!*taken && e != EEXIST) {
        kevo__llm_errf(err, errlen, "cannot make %s: %s", path, strerror(e));
        return false;
    }
    return true;
}

/* Rewrites the mark of request number with the keys of fields (taken),
 * and, with me, as made by me (the mark's claimed time kept as
 * "first_claimed"). Returns false with a reason in err. */
static bool rewrite(const char *dir, uint64_t number, json_t *fields,
                    const llm_relay_owner *me, char *err, size_t errlen)
{
    char path[4096];
    bool ok = false;
    char *text = NULL;
    mark_path(path, sizeof(path), dir, number);
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    if (!json_is_object(m) || !fields) {
        kevo__llm_errf(err, errlen, "%s: %s", path,
                       !fields ? "out of memory"
                       : m     ? "not a JSON object"
                               : je.text);
        goto done;
    }
    if (me) {
        if (!json_object_get(m, "first_claimed"))
            json_object_set(m, "first_claimed", json_object_get(m, "claimed"));
        json_object_set_new(m, "host", json_string(me->host));
        json_object_set_new(m, "boot", json_string(me->boot));
        json_object_set_new(m, "pid", json_integer((json_int_t)me->pid));
    }
    json_object_update(m, fields);
    if (!(text = json_dumps(m, JSON_INDENT(1)))) {
        kevo__llm_errf(err, errlen, "out of memory");
        goto done;
    }
    ok = kevo__llm_files_write(path, text, strlen(text), err, errlen);
done:
    free(text);
    json_decref(m);
    json_decref(fields);
    return ok;
}

bool kevo__llm_claim_end(const char *dir, uint64_t number, const char *outcome,
                         uint64_t input_tokens, uint64_t output_tokens,
                         double cost, char *err, size_t errlen)
{
    char now[32];
    utc_now(now, sizeof(now));
    json_t *f =
        json_pack("{s:s, s:s, s:{s:I, s:I, s:f}}", "outcome", outcome, "ended",
                  now, "usage", "input_tokens", (json_int_t)input_tokens,
                  "output_tokens", (json_int_t)output_tokens, "cost", cost);
    return rewrite(dir, number, f, NULL, err, errlen);
}

bool kevo__llm_claim_batch(const char *dir, uint64_t number,
                           const char *batch_id, const char *custom_id,
                           char *err, size_t errlen)
{
    json_t *f = json_pack("{s:{s:s, s:s}}", "batch", "id", batch_id,
                          "custom_id", custom_id);
    return rewrite(dir, number, f, NULL, err, errlen);
}

bool kevo__llm_claim_retake(const char *dir, uint64_t number,
                            const llm_relay_owner *me, char *err, size_t errlen)
{
    char now[32];
    utc_now(now, sizeof(now));
    return rewrite(dir, number, json_pack("{s:s}", "claimed", now), me, err,
                   errlen);
}

bool kevo__llm_claim_drop(const char *dir, uint64_t number, char *err,
                          size_t errlen)
{
    char path[4096];
    mark_path(path, sizeof(path), dir, number);
    if (unlink(path) == 0 || errno == ENOENT)
        return true;
    kevo__llm_errf(err, errlen, "cannot remove %s: %s", path, strerror(errno));
    return false;
}

void kevo__llm_claim_ledger(const char *dir, uint64_t *tokens, double *cost)
{
    char path[4096];
    *tokens = 0;
    *cost = 0;
    snprintf(path, sizeof(path), "%s/sent", dir);
    DIR *d = opendir(path);
    if (!d)
        return;
    llm_relay_owner nobody;
    memset(&nobody, 0, sizeof(nobody));
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t v = kevo__llm_files_number(e->d_name, false);
        llm_claim c;
        if (!v)
            continue;
        kevo__llm_claim_read(dir, v, &nobody, &c);
        if (c.state == LLM_CLAIM_ENDED) {
            *tokens += c.input_tokens + c.output_tokens;
            *cost += c.cost;
        }
    }
    closedir(d);
}

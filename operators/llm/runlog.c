/*
 * runlog.c: the llm operator's numbered, redacted JSON files in RUN/llm/.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "runlog.h"

#define LLM_DIR "llm"

/* The largest number that starts a file name in dir. */
static uint64_t last_seq(const char *dir)
{
    uint64_t max = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        unsigned long long n = strtoull(e->d_name, &end, 10);
        if (end != e->d_name && *end == '-' && n > max)
            max = n;
    }
    closedir(d);
    return max;
}

int kevo__llm_runlog_open(llm_runlog *log, const char *run_dir, char *err,
                          size_t errlen)
{
    memset(log, 0, sizeof(*log));
    if (!run_dir)
        return 0;
    log->dir = malloc(strlen(run_dir) + sizeof("/" LLM_DIR));
    if (!log->dir) {
        kevo__llm_errf(err, errlen, "out of memory");
        return ENOMEM;
    }
    sprintf(log->dir, "%s/%s", run_dir, LLM_DIR);
    if (mkdir(log->dir, 0777) != 0 && errno != EEXIST) {
        int e = errno;
        kevo__llm_errf(err, errlen, "%s: cannot create directory: %s", log->dir,
                       strerror(e));
        kevo__llm_runlog_close(log);
        return e;
    }
    log->seq = last_seq(log->dir);
    return 0;
}

void kevo__llm_runlog_close(llm_runlog *log)
{
    free(log->dir);
    log->dir = NULL;
}

/* Writes text to a file that open() creates with flags; returns 0 or an
 * errno value (EEXIST when O_EXCL finds the name taken). */
static int write_file(const char *path, int flags, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
    if (fd < 0)
        return errno;
    int rc = 0;
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = w < 0 ? errno : EIO;
            break;
        }
        off += (size_t)w;
    }
    if (close(fd) != 0 && rc == 0)
        rc = errno;
    return rc;
}

/* The JSON text of value, redacted; NULL when out of memory. */
static char *json_text(const llm_runlog *log, json_t *value)
{
    char *text = json_dumps(value, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    char *clean =
        text ? kevo__llm_redact(text, strlen(text), log->secrets, log->nsecrets)
             : NULL;
    free(text);
    return clean;
}

static char *file_path(const llm_runlog *log, uint64_t seq, const char *suffix,
                       int tries)
{
    char *path = malloc(strlen(log->dir) + strlen(suffix) + 48);
    if (path && tries)
        sprintf(path, "%s/%06" PRIu64 "-%s-%d.json", log->dir, seq, suffix,
                tries);
    else if (path)
        sprintf(path, "%s/%06" PRIu64 "-%s.json", log->dir, seq, suffix);
    return path;
}

uint64_t kevo__llm_runlog_claim(llm_runlog *log, const char *suffix,
                                json_t *value, int *rc)
{
    *rc = 0;
    if (!log->dir)
        return ++log->seq;
    char *path = NULL, *text = NULL;
    uint64_t seq = 0;
    *rc = EEXIST;
    for (int tries = 0; tries < 10000 && *rc == EEXIST; tries++) {
        seq = ++log->seq;
        free(path);
        free(text);
        json_object_set_new(value, "seq", json_integer((json_int_t)seq));
        path = file_path(log, seq, suffix, 0);
        text = json_text(log, value);
        *rc = path && text ? write_file(path, O_EXCL, text) : ENOMEM;
    }
    free(path);
    free(text);
    return seq;
}

int kevo__llm_runlog_save(llm_runlog *log, const char *suffix, uint64_t seq,
                          json_t *value)
{
    if (!log->dir)
        return 0;
    char *clean = json_text(log, value);
    char *path = NULL;
    int rc = clean ? EEXIST : ENOMEM;
    for (int tries = 0; tries < 1000 && rc == EEXIST; tries++) {
        free(path);
        path = file_path(log, seq, suffix, tries);
        rc = path ? write_file(path, O_EXCL, clean) : ENOMEM;
    }
    free(path);
    free(clean);
    return rc;
}

json_t *kevo__llm_json_body(const char *body, size_t len)
{
    json_t *v = json_loadb(body, len, JSON_DECODE_ANY, NULL);
    if (v)
        return v;
    char *clean = kevo__llm_utf8_clean(body, len);
    v = clean ? json_stringn(clean, len) : NULL;
    free(clean);
    return v;
}

json_t *kevo__llm_json_text(const char *s)
{
    char *clean = kevo__llm_utf8_clean(s, strlen(s));
    json_t *v = clean ? json_string(clean) : NULL;
    free(clean);
    return v;
}

/*
 * eventlog.c: reading events.jsonl line by line, reporting and skipping
 * lines that are not events.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/jsonutil.h"

struct kevo_event_reader {
    char *path;
    FILE *f;
    char *buf;
    size_t cap;
    size_t line;
    size_t malformed;
    json_t *event; /* the last event returned, for its type */
};

kevo_status kevo_event_reader_open(const char *path, kevo_event_reader **out,
                                   kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    if (out)
        *out = NULL;
    if (!path || !out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_event_reader_open: path and out must not "
                               "be NULL");
    kevo_event_reader *r = calloc(1, sizeof *r);
    if (!r)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    r->path = kevo__strdup(path);
    if (!r->path) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto fail;
    }
    r->f = fopen(path, "re");
    if (!r->f) {
        rc = kevo__error_errno(err, errno, path, "cannot open");
        goto fail;
    }
    struct stat st;
    if (fstat(fileno(r->f), &st) != 0) {
        rc = kevo__error_errno(err, errno, path, "cannot inspect");
        goto fail;
    }
    if (S_ISDIR(st.st_mode)) {
        rc = kevo__error_set_at(err, KEVO_EIO, path, 0, 0,
                                "%s: is a directory, not an events file", path);
        goto fail;
    }
    *out = r;
    return KEVO_OK;
fail:
    kevo_event_reader_free(r);
    return rc;
}

void kevo_event_reader_free(kevo_event_reader *reader)
{
    if (!reader)
        return;
    if (reader->f)
        fclose(reader->f);
    json_decref(reader->event);
    free(reader->buf);
    free(reader->path);
    free(reader);
}

static bool is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

/* Reports the current line as malformed. */
static kevo_status malformed(kevo_event_reader *r, int column, kevo_error *err,
                             const char *fmt, ...) KEVO_PRINTF(4, 5);

static kevo_status malformed(kevo_event_reader *r, int column, kevo_error *err,
                             const char *fmt, ...)
{
    char fault[KEVO_ERROR_TEXT_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fault, sizeof fault, fmt, ap);
    va_end(ap);
    r->malformed++;
    return kevo__error_set_at(err, KEVO_EPARSE, r->path, (int)r->line, column,
                              "%s:%zu: %s", r->path, r->line, fault);
}

kevo_status kevo_event_reader_next(kevo_event_reader *reader, const char **json,
                                   size_t *line, kevo_error *err)
{
    if (!reader)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_event_reader_next: reader is NULL");
    if (json)
        *json = NULL;
    if (line)
        *line = 0;
    ssize_t n;
    for (;;) {
        errno = 0;
        n = getline(&reader->buf, &reader->cap, reader->f);
        if (n < 0) {
            if (ferror(reader->f))
                return kevo__error_errno(err, errno ? errno : EIO, reader->path,
                                         "cannot read");
            return KEVO_DONE;
        }
        reader->line++;
        if (n > 0 && reader->buf[n - 1] == '\n')
            reader->buf[--n] = '\0';
        if (n > 0 && reader->buf[n - 1] == '\r')
            reader->buf[--n] = '\0';
        if (!is_blank(reader->buf, (size_t)n))
            break;
    }
    char *text = reader->buf;
    if (strlen(text) != (size_t)n)
        return malformed(reader, (int)strlen(text) + 1, err,
                         "a NUL byte at column %zu", strlen(text) + 1);
    json_error_t je;
    json_t *v = json_loadb(text, (size_t)n, JSON_REJECT_DUPLICATES, &je);
    if (!v) {
        if (json_error_code(&je) == json_error_out_of_memory)
            return kevo__error_set(err, KEVO_ENOMEM, "%s:%zu: out of memory",
                                   reader->path, reader->line);
        return malformed(reader, je.column, err,
                         "not valid JSON (column %d: %s)%s", je.column, je.text,
                         json_error_code(&je) ==
                                 json_error_premature_end_of_input
                             ? "; a line cut short by a killed run?"
                             : "");
    }
    kevo_status rc;
    if (!json_is_object(v)) {
        rc = malformed(reader, 0, err, "%s, not a JSON object",
                       kevo__json_type_name(v));
        json_decref(v);
        return rc;
    }
    json_t *type = json_object_get(v, "type");
    if (!type || !json_is_string(type)) {
        if (!type)
            rc = malformed(reader, 0, err,
                           "an object without \"type\" (every event has a "
                           "string \"type\")");
        else
            rc = malformed(reader, 0, err, "\"type\" is %s, expected a string",
                           kevo__json_type_name(type));
        json_decref(v);
        return rc;
    }
    json_decref(reader->event);
    reader->event = v;
    if (json)
        *json = text;
    if (line)
        *line = reader->line;
    return KEVO_OK;
}

const char *kevo_event_reader_type(const kevo_event_reader *reader)
{
    if (!reader || !reader->event)
        return NULL;
    return json_string_value(json_object_get(reader->event, "type"));
}

size_t kevo_event_reader_malformed(const kevo_event_reader *reader)
{
    return reader ? reader->malformed : 0;
}

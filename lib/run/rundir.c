/*
 * rundir.c: the run directory: a locked directory with an append-only
 * events.jsonl, an atomically replaced checkpoint.json and whatever files a
 * run writes beside them.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "core/jsonutil.h"

#define EVENTS_NAME "events.jsonl"
#define CHECKPOINT_NAME "checkpoint.json"
#define LOCK_NAME ".lock"

/* How deep the search for stale temporary files goes below the run
 * directory. */
#define CLEAN_DEPTH_MAX 16

struct kevo_rundir {
    char *path;
    char *events_path;
    int lock_fd;
    int events_fd;
    uint64_t events;
    /* A write of an event failed after part of its line was written: the
     * next event first ends that line. */
    bool cut;
};

static const char *const reserved_names[] = {"seq", "time", "type"};

/* True for a name kevo__write_file_atomic() gives its temporary files:
 * "<name>.tmp." and the six letters or digits of mkostemp(). */
static bool is_stale_temp(const char *name)
{
    size_t n = strlen(name);
    if (n < 11 || memcmp(name + n - 11, ".tmp.", 5) != 0)
        return false;
    for (size_t i = n - 6; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9')))
            return false;
    }
    return true;
}

static kevo_status remove_stale_temps(const char *dir, int depth,
                                      kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    char *child = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return kevo__error_errno(err, errno, dir, "cannot read directory");
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (!e) {
            if (errno != 0)
                rc =
                    kevo__error_errno(err, errno, dir, "cannot read directory");
            break;
        }
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT)
                continue;
            rc = kevo__error_errno(err, errno, dir, "cannot inspect entry");
            break;
        }
        if (S_ISDIR(st.st_mode) && depth < CLEAN_DEPTH_MAX) {
            child = kevo__path_join(dir, e->d_name);
            if (!child) {
                rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
                break;
            }
            rc = remove_stale_temps(child, depth + 1, err);
            free(child);
            child = NULL;
            if (rc != KEVO_OK)
                break;
        } else if (S_ISREG(st.st_mode) && is_stale_temp(e->d_name)) {
            if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT) {
                child = kevo__path_join(dir, e->d_name);
                rc = kevo__error_errno(err, errno, child ? child : dir,
                                       "cannot remove a stale temporary file");
                break;
            }
        }
    }
    free(child);
    closedir(d);
    return rc;
}

/* Counts the lines of the events file and ends a last line that was cut
 * short. */
static kevo_status scan_events(kevo_rundir *dir, kevo_error *err)
{
    char buf[65536];
    uint64_t lines = 0;
    off_t off = 0;
    char last = '\n';
    for (;;) {
        ssize_t r = pread(dir->events_fd, buf, sizeof buf, off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return kevo__error_errno(err, errno, dir->events_path,
                                     "cannot read");
        }
        if (r == 0)
            break;
        for (char *p = buf, *end = buf + r;
             (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
            lines++;
        last = buf[r - 1];
        off += r;
    }
    if (last != '\n') {
        for (;;) {
            ssize_t w = write(dir->events_fd, "\n", 1);
            if (w == 1)
                break;
            if (w < 0 && errno != EINTR)
                return kevo__error_errno(err, errno, dir->events_path,
                                         "cannot end the last line, cut "
                                         "short by a killed run");
        }
        lines++;
    }
    dir->events = lines;
    return KEVO_OK;
}

static bool exists(const char *dir, const char *name, kevo_error *err,
                   kevo_status *rc)
{
    struct stat st;
    char *p = kevo__path_join(dir, name);
    if (!p) {
        *rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        return false;
    }
    bool found = lstat(p, &st) == 0;
    if (!found && errno != ENOENT)
        *rc = kevo__error_errno(err, errno, p, "cannot inspect");
    free(p);
    return found;
}

kevo_status kevo_rundir_open(const char *path, unsigned flags,
                             kevo_rundir **out, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    kevo_rundir *dir = NULL;
    char *p = NULL;
    if (out)
        *out = NULL;
    if (!path || !path[0] || !out)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_rundir_open: path must be a non-empty "
                               "string and out not NULL");
    if (flags & ~(unsigned)(KEVO_RUNDIR_NEW | KEVO_RUNDIR_RESUME))
        return kevo__error_set(
            err, KEVO_EINVAL, "kevo_rundir_open: unknown flags %#x",
            flags & ~(unsigned)(KEVO_RUNDIR_NEW | KEVO_RUNDIR_RESUME));
    if ((flags & KEVO_RUNDIR_NEW) && (flags & KEVO_RUNDIR_RESUME))
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_rundir_open: KEVO_RUNDIR_NEW and "
                               "KEVO_RUNDIR_RESUME contradict each other");

    dir = calloc(1, sizeof *dir);
    if (!dir)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    dir->lock_fd = -1;
    dir->events_fd = -1;
    dir->path = kevo__strdup(path);
    dir->events_path = kevo__path_join(path, EVENTS_NAME);
    if (!dir->path || !dir->events_path) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto fail;
    }

    /* Resuming never creates the directory: a mistyped path must not look
     * like a run that lost its checkpoint. */
    if (flags & KEVO_RUNDIR_RESUME) {
        struct stat st;
        if (stat(path, &st) != 0) {
            rc = kevo__error_errno(err, errno, path,
                                   "cannot resume the run in this directory");
            goto fail;
        }
    }
    rc = kevo__mkdir_p(path, err);
    if (rc != KEVO_OK)
        goto fail;

    p = kevo__path_join(path, LOCK_NAME);
    if (!p) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto fail;
    }
    dir->lock_fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (dir->lock_fd < 0) {
        rc = kevo__error_errno(err, errno, p, "cannot open the lock file");
        goto fail;
    }
    while (flock(dir->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR)
            continue;
        if (errno == EWOULDBLOCK)
            rc = kevo__error_set_at(
                err, KEVO_ESTATE, path, 0, 0,
                "%s: the run directory is in use: another process holds its "
                "lock %s",
                path, p);
        else
            rc = kevo__error_errno(err, errno, p, "cannot lock");
        goto fail;
    }

    if (flags & KEVO_RUNDIR_NEW) {
        const char *names[] = {EVENTS_NAME, CHECKPOINT_NAME};
        for (size_t i = 0; i < KEVO_ARRAY_SIZE(names); i++) {
            if (exists(path, names[i], err, &rc)) {
                rc = kevo__error_set_at(
                    err, KEVO_EEXIST, path, 0, 0,
                    "%s: already holds a run (%s); choose a new directory "
                    "or resume that run",
                    path, names[i]);
                goto fail;
            }
            if (rc != KEVO_OK)
                goto fail;
        }
    }
    if (flags & KEVO_RUNDIR_RESUME) {
        if (!exists(path, CHECKPOINT_NAME, err, &rc)) {
            if (rc == KEVO_OK)
                rc = kevo__error_set_at(err, KEVO_ENOENT, path, 0, 0,
                                        "%s: no %s to resume from", path,
                                        CHECKPOINT_NAME);
            goto fail;
        }
    }

    const char *subdirs[] = {"candidates", "llm"};
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(subdirs); i++) {
        free(p);
        p = kevo__path_join(path, subdirs[i]);
        if (!p) {
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            goto fail;
        }
        rc = kevo__mkdir_p(p, err);
        if (rc != KEVO_OK)
            goto fail;
    }

    /* Only now, holding the lock: no live writer owns these files. */
    rc = remove_stale_temps(path, 0, err);
    if (rc != KEVO_OK)
        goto fail;

    dir->events_fd =
        open(dir->events_path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (dir->events_fd < 0) {
        rc = kevo__error_errno(err, errno, dir->events_path, "cannot open");
        goto fail;
    }
    rc = scan_events(dir, err);
    if (rc != KEVO_OK)
        goto fail;

    free(p);
    *out = dir;
    return KEVO_OK;
fail:
    free(p);
    kevo_rundir_free(dir);
    return rc;
}

void kevo_rundir_free(kevo_rundir *dir)
{
    if (!dir)
        return;
    if (dir->events_fd >= 0)
        close(dir->events_fd);
    if (dir->lock_fd >= 0)
        close(dir->lock_fd);
    free(dir->events_path);
    free(dir->path);
    free(dir);
}

const char *kevo_rundir_path(const kevo_rundir *dir)
{
    return dir ? dir->path : NULL;
}

uint64_t kevo_rundir_event_count(const kevo_rundir *dir)
{
    return dir ? dir->events : 0;
}

/* Writes a whole line; returns how many bytes reached the file in *done
 * when it fails. */
static int write_line(int fd, const char *s, size_t len, size_t *done)
{
    *done = 0;
    while (*done < len) {
        ssize_t w = write(fd, s + *done, len - *done);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        *done += (size_t)w;
    }
    return 0;
}

/* Parses fields and checks that it is an object without reserved names. */
static kevo_status parse_fields(const char *type, const char *fields,
                                json_t **out, kevo_error *err)
{
    json_error_t je;
    json_t *obj =
        json_loads(fields, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
    if (!obj) {
        if (json_error_code(&je) == json_error_out_of_memory)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        return kevo__error_set_at(err, KEVO_EINVAL, NULL, je.line, je.column,
                                  "event \"%s\": fields are not valid JSON "
                                  "(line %d, column %d): %s",
                                  type, je.line, je.column, je.text);
    }
    if (!json_is_object(obj)) {
        kevo_status rc = kevo__error_set(
            err, KEVO_EINVAL,
            "event \"%s\": fields must be a JSON object, found %s", type,
            kevo__json_type_name(obj));
        json_decref(obj);
        return rc;
    }
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(reserved_names); i++) {
        if (json_object_get(obj, reserved_names[i])) {
            json_decref(obj);
            return kevo__error_set(err, KEVO_EINVAL,
                                   "event \"%s\": fields use the reserved "
                                   "name \"%s\" (seq, time and type are set "
                                   "by kevo)",
                                   type, reserved_names[i]);
        }
    }
    *out = obj;
    return KEVO_OK;
}

/* The object on one line, with each real number in the fewest digits (15,
 * 16 or 17) that still read back as the same doubles: 0.42 rather than
 * 0.41999999999999998. */
static char *dump_compact(const json_t *obj)
{
    for (int digits = 15; digits < 17; digits++) {
        char *text =
            json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(digits));
        if (!text)
            return NULL;
        json_t *back = json_loads(text, 0, NULL);
        bool same = back && json_equal(back, obj);
        json_decref(back);
        if (same)
            return text;
        free(text);
    }
    return json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(17));
}

kevo_status kevo_rundir_event(kevo_rundir *dir, const char *type,
                              const char *fields, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    json_t *body = NULL, *extra = NULL, *t = NULL;
    char *text = NULL, *line = NULL;
    if (!dir)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_rundir_event: dir is NULL");
    if (!type || !type[0])
        return kevo__error_set(err, KEVO_EINVAL,
                               "%s: an event needs a non-empty type",
                               dir->events_path);
    if (fields) {
        rc = parse_fields(type, fields, &extra, err);
        if (rc != KEVO_OK)
            goto out;
    }
    body = json_object();
    if (!body) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    t = json_string(type);
    if (!t) {
        rc = kevo__error_set(err, KEVO_EINVAL,
                             "%s: the event type is not valid UTF-8",
                             dir->events_path);
        goto out;
    }
    if (json_object_set_new(body, "type", t) != 0) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    if (extra) {
        const char *key;
        json_t *v;
        /* jansson keeps an object's members in insertion order, so the
         * caller's order survives. */
        json_object_foreach (extra, key, v) {
            if (json_object_set(body, key, v) != 0) {
                rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
                goto out;
            }
        }
    }
    text = dump_compact(body);
    if (!text) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    /* seq and time lead the line; time is formatted here so that it keeps
     * exactly six decimals (jansson prints reals with 17 digits). */
    struct timeval tv;
    gettimeofday(&tv, NULL);
    line = kevo__asprintf("{\"seq\":%" PRIu64 ",\"time\":%lld.%06ld,%s\n",
                          dir->events, (long long)tv.tv_sec, (long)tv.tv_usec,
                          text + 1);
    if (!line) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    size_t done;
    int e;
    if (dir->cut) {
        e = write_line(dir->events_fd, "\n", 1, &done);
        if (e != 0) {
            rc = kevo__error_errno(err, e, dir->events_path, "cannot write");
            goto out;
        }
        dir->cut = false;
    }
    e = write_line(dir->events_fd, line, strlen(line), &done);
    if (e != 0) {
        if (done > 0) {
            dir->cut = true;
            dir->events++;
        }
        rc = kevo__error_errno(err, e, dir->events_path, "cannot write");
        goto out;
    }
    dir->events++;
out:
    free(line);
    free(text);
    json_decref(body);
    json_decref(extra);
    return rc;
}

/* Rejects relpath unless it names a file strictly inside the directory,
 * other than those the open directory owns. */
static kevo_status check_relpath(const kevo_rundir *dir, const char *relpath,
                                 kevo_error *err)
{
    if (!relpath || !relpath[0])
        return kevo__error_set(err, KEVO_EINVAL, "%s: a file name is needed",
                               dir->path);
    if (relpath[0] == '/')
        return kevo__error_set(err, KEVO_EINVAL,
                               "%s: an absolute path; give a path relative to "
                               "the run directory %s",
                               relpath, dir->path);
    size_t len = strlen(relpath);
    if (relpath[len - 1] == '/' ||
        (relpath[len - 1] == '.' && (len == 1 || relpath[len - 2] == '/')))
        return kevo__error_set(err, KEVO_EINVAL,
                               "%s: names a directory, not a file", relpath);
    for (const char *c = relpath; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 2 && c[0] == '.' && c[1] == '.')
            return kevo__error_set(err, KEVO_EINVAL,
                                   "%s: a \"..\" component leaves the run "
                                   "directory %s",
                                   relpath, dir->path);
        c += n;
        while (*c == '/')
            c++;
    }
    const char *own[] = {EVENTS_NAME, CHECKPOINT_NAME, LOCK_NAME};
    const char *base = relpath;
    while (base[0] == '.' && base[1] == '/')
        base += 2;
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(own); i++)
        if (strcmp(base, own[i]) == 0)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "%s: kevo writes this file of the run "
                                   "directory %s itself",
                                   relpath, dir->path);
    return KEVO_OK;
}

kevo_status kevo_rundir_write_file(kevo_rundir *dir, const char *relpath,
                                   const void *data, size_t len,
                                   kevo_error *err)
{
    if (!dir || (!data && len > 0))
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_rundir_write_file: dir is NULL or data "
                               "is NULL");
    kevo_status rc = check_relpath(dir, relpath, err);
    if (rc != KEVO_OK)
        return rc;
    char *full = kevo__path_join(dir->path, relpath);
    char *parent = full ? kevo__dirname(full) : NULL;
    if (!parent) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    rc = kevo__mkdir_p(parent, err);
    if (rc != KEVO_OK)
        goto out;
    rc = kevo__write_file_atomic(full, data ? data : "", len, err);
out:
    free(parent);
    free(full);
    return rc;
}

/* Line and column (1-based) of the first character of text that is not
 * JSON whitespace. */
static void first_token(const char *text, int *line, int *column)
{
    *line = 1;
    *column = 1;
    for (; *text == ' ' || *text == '\t' || *text == '\n' || *text == '\r';
         text++) {
        if (*text == '\n') {
            ++*line;
            *column = 1;
        } else {
            ++*column;
        }
    }
}

kevo_status kevo_rundir_checkpoint(kevo_rundir *dir, const char *json,
                                   kevo_error *err)
{
    if (!dir || !json)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_rundir_checkpoint: dir and json must not "
                               "be NULL");
    kevo_status rc = KEVO_OK;
    char *path = kevo__path_join(dir->path, CHECKPOINT_NAME);
    if (!path)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    json_error_t je;
    json_t *v = json_loads(json, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
    if (!v) {
        if (json_error_code(&je) == json_error_out_of_memory)
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        else
            rc = kevo__error_set_at(err, KEVO_EINVAL, path, je.line, je.column,
                                    "%s: the new checkpoint is not valid JSON "
                                    "(line %d, column %d: %s); the old one is "
                                    "kept",
                                    path, je.line, je.column, je.text);
        goto out;
    }
    if (!json_is_object(v)) {
        int line, column;
        first_token(json, &line, &column);
        rc = kevo__error_set_at(err, KEVO_EINVAL, path, line, column,
                                "%s: the new checkpoint is %s, not a JSON "
                                "object (line %d, column %d); the old one is "
                                "kept",
                                path, kevo__json_type_name(v), line, column);
        goto out;
    }
    rc = kevo__write_file_atomic(path, json, strlen(json), err);
out:
    json_decref(v);
    free(path);
    return rc;
}

kevo_status kevo_rundir_read_checkpoint(const char *path, char **json,
                                        kevo_error *err)
{
    if (!path || !json)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_rundir_read_checkpoint: path and json "
                               "must not be NULL");
    *json = NULL;
    kevo_status rc = KEVO_OK;
    char *text = NULL;
    json_t *v = NULL;
    size_t len;
    char *file = kevo__path_join(path, CHECKPOINT_NAME);
    if (!file)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    rc = kevo__read_file(file, false, &text, &len, err);
    if (rc != KEVO_OK)
        goto out;
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        int line = 1, column = 1;
        for (const char *c = text; c < nul; c++) {
            if (*c == '\n') {
                line++;
                column = 1;
            } else {
                column++;
            }
        }
        rc = kevo__error_set_at(err, KEVO_EPARSE, file, line, column,
                                "%s:%d:%d: a NUL byte: the checkpoint is "
                                "damaged",
                                file, line, column);
        goto out;
    }
    rc = kevo__json_parse(text, file, &v, err);
    if (rc != KEVO_OK)
        goto out;
    if (!json_is_object(v)) {
        int line, column;
        first_token(text, &line, &column);
        rc = kevo__error_set_at(err, KEVO_EPARSE, file, line, column,
                                "%s:%d:%d: the checkpoint is %s, not a JSON "
                                "object",
                                file, line, column, kevo__json_type_name(v));
        goto out;
    }
    *json = text;
    text = NULL;
out:
    json_decref(v);
    free(text);
    free(file);
    return rc;
}

/*
 * fileio.c: reading whole files, writing them atomically, making
 * directories.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kevo_private.h"

kevo_status kevo__read_file(const char *path, bool text, char **data,
                            size_t *len, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return kevo__error_errno(err, errno, path, "cannot open");
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        rc = kevo__error_set_at(err, KEVO_EIO, path, 0, 0,
                                "%s: is a directory, not a file", path);
        goto out;
    }
    for (;;) {
        if (n + 1 >= cap) {
            size_t ncap = cap ? cap * 2 : 4096;
            char *nbuf = realloc(buf, ncap);
            if (!nbuf) {
                rc = kevo__error_set(err, KEVO_ENOMEM, "%s: out of memory",
                                     path);
                goto out;
            }
            buf = nbuf;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            rc = kevo__error_errno(err, errno, path, "cannot read");
            goto out;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    if (text && memchr(buf, '\0', n)) {
        rc = kevo__error_set_at(err, KEVO_EINVALID, path, 0, 0,
                                "%s: a text file with a NUL byte in it", path);
        goto out;
    }
    *data = buf;
    buf = NULL;
    if (len)
        *len = n;
out:
    free(buf);
    close(fd);
    return rc;
}

static kevo_status write_all(int fd, const char *path, const void *data,
                             size_t len, kevo_error *err)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return kevo__error_errno(err, errno, path, "cannot write");
        }
        p += w;
        len -= (size_t)w;
    }
    return KEVO_OK;
}

static kevo_status fsync_dir(const char *path, kevo_error *err)
{
    char *dir = kevo__dirname(path);
    if (!dir)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = KEVO_OK;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        rc = kevo__error_errno(err, errno, dir, "cannot open directory");
    else if (fsync(fd) != 0 && errno != EINVAL)
        rc = kevo__error_errno(err, errno, dir, "cannot sync directory");
    if (fd >= 0)
        close(fd);
    free(dir);
    return rc;
}

kevo_status kevo__write_file_atomic(const char *path, const void *data,
                                    size_t len, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    char *tmp = kevo__asprintf("%s.tmp.XXXXXX", path);
    if (!tmp)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        rc = kevo__error_errno(err, errno, path,
                               "cannot create a temporary file beside it");
        free(tmp);
        return rc;
    }
    if (fchmod(fd, 0644) != 0) {
        rc = kevo__error_errno(err, errno, tmp, "cannot set mode");
        goto fail;
    }
    rc = write_all(fd, tmp, data, len, err);
    if (rc != KEVO_OK)
        goto fail;
    if (fsync(fd) != 0) {
        rc = kevo__error_errno(err, errno, tmp, "cannot sync");
        goto fail;
    }
    if (close(fd) != 0) {
        fd = -1;
        rc = kevo__error_errno(err, errno, tmp, "cannot close");
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        rc = kevo__error_errno(err, errno, path, "cannot rename into place");
        goto fail;
    }
    free(tmp);
    return fsync_dir(path, err);
fail:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    free(tmp);
    return rc;
}

kevo_status kevo__mkdir_p(const char *path, kevo_error *err)
{
    char *p = kevo__strdup(path);
    if (!p)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = KEVO_OK;
    size_t n = strlen(p);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            rc = kevo__error_errno(err, errno, p, "cannot make directory");
            break;
        }
        p[i] = c;
    }
    if (rc == KEVO_OK) {
        struct stat st;
        if (stat(path, &st) != 0)
            rc = kevo__error_errno(err, errno, path, "cannot make directory");
        else if (!S_ISDIR(st.st_mode))
            rc = kevo__error_set_at(err, KEVO_EIO, path, 0, 0,
                                    "%s: exists and is not a directory", path);
    }
    free(p);
    return rc;
}

char *kevo__dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return kevo__strdup(".");
    if (slash == path)
        return kevo__strdup("/");
    return kevo__strndup(path, (size_t)(slash - path));
}

char *kevo__path_join(const char *dir, const char *name)
{
    if (!dir || !dir[0] || name[0] == '/')
        return kevo__strdup(name);
    size_t n = strlen(dir);
    return kevo__asprintf("%s%s%s", dir, dir[n - 1] == '/' ? "" : "/", name);
}

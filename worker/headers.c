/*
 * headers.c: the allowed CUDA headers and their closure, read once from the
 * toolkit and kept in memory for NVRTC (see headers.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "headers.h"
#include "proc/include_scan.h"

#define MAX_FILES 20000
#define MAX_BYTES ((size_t)256 << 20)
/* How deep the walk of cuda/std goes. */
#define MAX_DEPTH 16

/* A string-keyed map to indices; keys are borrowed. */
typedef struct strmap {
    const char **keys;
    size_t *values;
    size_t cap; /* a power of two, or 0 */
    size_t n;
} strmap;

typedef struct hfile {
    char *path; /* normalised */
    char *name; /* relative to the include directory that holds it */
    char *text;
    size_t len;
} hfile;

typedef struct hname {
    char *name;
    size_t file;
} hname;

typedef struct loader {
    char *dirs[2]; /* include directories, normalised */
    size_t ndirs;
    hfile *files;
    size_t nfiles, files_cap;
    hname *names;
    size_t nnames, names_cap;
    strmap by_path, by_name;
    size_t bytes;
    size_t conflicts;
    size_t current; /* the file being scanned */
    kevo_error *err;
} loader;

/* ---- the map ----------------------------------------------------------- */

static size_t strmap_slot(const strmap *m, const char *key)
{
    uint64_t h =
        kevo__hash_finish(kevo__hash_bytes(KEVO__HASH_INIT, key, strlen(key)));
    size_t i = (size_t)h & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], key) != 0)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static bool strmap_get(const strmap *m, const char *key, size_t *value)
{
    if (m->cap == 0)
        return false;
    size_t i = strmap_slot(m, key);
    if (!m->keys[i])
        return false;
    *value = m->values[i];
    return true;
}

/* Adds a key that is not there yet; false when out of memory. */
static bool strmap_put(strmap *m, const char *key, size_t value)
{
    if (2 * (m->n + 1) > m->cap) {
        strmap bigger = {0};
        bigger.cap = m->cap ? 2 * m->cap : 1024;
        bigger.keys = calloc(bigger.cap, sizeof *bigger.keys);
        bigger.values = calloc(bigger.cap, sizeof *bigger.values);
        if (!bigger.keys || !bigger.values) {
            free(bigger.keys);
            free(bigger.values);
            return false;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (m->keys[i]) {
                size_t k = strmap_slot(&bigger, m->keys[i]);
                bigger.keys[k] = m->keys[i];
                bigger.values[k] = m->values[i];
            }
        }
        bigger.n = m->n;
        free(m->keys);
        free(m->values);
        *m = bigger;
    }
    size_t i = strmap_slot(m, key);
    m->keys[i] = key;
    m->values[i] = value;
    m->n++;
    return true;
}

static void strmap_free(strmap *m)
{
    free(m->keys);
    free(m->values);
    memset(m, 0, sizeof *m);
}

/* ---- paths ------------------------------------------------------------- */

/* path with "." and ".." components and repeated slashes taken out, in a
 * new string; ".." at the top of an absolute path stays at the root.
 * Lexical: the toolkit's headers do not lead through symbolic links with
 * "..". */
static char *normalise(const char *path)
{
    size_t len = strlen(path);
    char *out = malloc(len + 2);
    size_t n = 0;
    bool absolute = path[0] == '/';

    if (!out)
        return NULL;
    if (absolute)
        out[n++] = '/';
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        const char *end = strchr(p, '/');
        size_t k = end ? (size_t)(end - p) : strlen(p);
        if (k == 0)
            break;
        if (k == 1 && p[0] == '.') {
            /* nothing */
        } else if (k == 2 && p[0] == '.' && p[1] == '.') {
            size_t base = absolute ? 1 : 0;
            size_t last = n;
            while (last > base && out[last - 1] != '/')
                last--;
            bool up = n > base && !(n - last == 2 && out[last] == '.' &&
                                    out[last + 1] == '.');
            if (up) {
                n = last > base ? last - 1 : base;
            } else if (!absolute) {
                if (n > base)
                    out[n++] = '/';
                out[n++] = '.';
                out[n++] = '.';
            }
        } else {
            if (n > (absolute ? 1u : 0u))
                out[n++] = '/';
            memcpy(out + n, p, k);
            n += k;
        }
        p += k;
    }
    if (n == 0)
        out[n++] = '.';
    out[n] = '\0';
    return out;
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The index of the longest include directory that holds path, or -1. */
static int holder(const loader *ld, const char *path)
{
    int best = -1;
    size_t best_len = 0;
    for (size_t i = 0; i < ld->ndirs; i++) {
        size_t k = strlen(ld->dirs[i]);
        if (strncmp(path, ld->dirs[i], k) == 0 && path[k] == '/' &&
            k >= best_len) {
            best = (int)i;
            best_len = k;
        }
    }
    return best;
}

char *kevo__headers_dir(void)
{
    const char *home = getenv("CUDA_HOME");
    char *candidates[3] = {NULL, NULL, NULL};
    char *found = NULL;

    if (home && *home)
        candidates[0] = kevo__path_join(home, "include");
#ifdef KEVO_CUDA_HOME
    if (*KEVO_CUDA_HOME)
        candidates[1] = kevo__path_join(KEVO_CUDA_HOME, "include");
#endif
    candidates[2] = kevo__strdup("/usr/local/cuda/include");
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(candidates); i++) {
        if (!found && is_dir(candidates[i])) {
            found = candidates[i];
            candidates[i] = NULL;
        }
        free(candidates[i]);
    }
    return found;
}

/* ---- the closure ------------------------------------------------------- */

/* Gives name (a new string, taken) to file; a name that another file has
 * already is a conflict. */
static kevo_status add_name(loader *ld, char *name, size_t file)
{
    size_t at;
    if (strmap_get(&ld->by_name, name, &at)) {
        size_t old = ld->names[at].file;
        if (old != file) {
            ld->conflicts++;
            fprintf(stderr,
                    "kevo-worker: header name \"%s\" means both %s and %s; "
                    "%s keeps it\n",
                    name, ld->files[old].path, ld->files[file].path,
                    ld->files[old].path);
        }
        free(name);
        return KEVO_OK;
    }
    if (ld->nnames == ld->names_cap) {
        size_t cap = ld->names_cap ? 2 * ld->names_cap : 256;
        hname *grown = realloc(ld->names, cap * sizeof *grown);
        if (!grown)
            goto nomem;
        ld->names = grown;
        ld->names_cap = cap;
    }
    ld->names[ld->nnames] = (hname){name, file};
    if (!strmap_put(&ld->by_name, name, ld->nnames))
        goto nomem;
    ld->nnames++;
    return KEVO_OK;
nomem:
    free(name);
    return kevo__error_set(ld->err, KEVO_ENOMEM, "out of memory");
}

/* The file at path (normalised, inside include directory d), loaded if it
 * is new; *index is SIZE_MAX when it cannot be read. */
static kevo_status add_file(loader *ld, const char *path, int d, size_t *index)
{
    kevo_error rerr = KEVO__ERROR_INIT;
    hfile f = {0};
    kevo_status rc;

    *index = SIZE_MAX;
    if (strmap_get(&ld->by_path, path, index))
        return KEVO_OK;
    if (ld->nfiles >= MAX_FILES)
        return kevo__error_set(ld->err, KEVO_ELIMIT,
                               "more than %d headers under %s", MAX_FILES,
                               ld->dirs[0]);
    rc = kevo__read_file(path, true, &f.text, &f.len, &rerr);
    if (rc == KEVO_ENOMEM)
        return kevo__error_set(ld->err, KEVO_ENOMEM, "out of memory");
    if (rc != KEVO_OK) {
        fprintf(stderr, "kevo-worker: header left out: %s\n", rerr.text);
        return KEVO_OK;
    }
    if (ld->bytes + f.len > MAX_BYTES) {
        free(f.text);
        return kevo__error_set(ld->err, KEVO_ELIMIT,
                               "the headers under %s pass %zu MiB", ld->dirs[0],
                               MAX_BYTES >> 20);
    }
    f.path = kevo__strdup(path);
    f.name = kevo__strdup(path + strlen(ld->dirs[d]) + 1);
    if (!f.path || !f.name)
        goto nomem;
    if (ld->nfiles == ld->files_cap) {
        size_t cap = ld->files_cap ? 2 * ld->files_cap : 256;
        hfile *grown = realloc(ld->files, cap * sizeof *grown);
        if (!grown)
            goto nomem;
        ld->files = grown;
        ld->files_cap = cap;
    }
    ld->files[ld->nfiles] = f;
    if (!strmap_put(&ld->by_path, ld->files[ld->nfiles].path, ld->nfiles)) {
        ld->files[ld->nfiles] = (hfile){0};
        goto nomem;
    }
    *index = ld->nfiles++;
    ld->bytes += f.len;
    char *name = kevo__strdup(f.name);
    if (!name)
        return kevo__error_set(ld->err, KEVO_ENOMEM, "out of memory");
    return add_name(ld, name, *index);
nomem:
    free(f.path);
    free(f.name);
    free(f.text);
    return kevo__error_set(ld->err, KEVO_ENOMEM, "out of memory");
}

/* Where an include of name leads, as a new normalised path inside an
 * include directory (its index in *d), or NULL (*nomem tells why). */
static char *resolve(const loader *ld, const char *name, bool angle,
                     const char *from, int *d, bool *nomem)
{
    *nomem = false;
    if (name[0] == '/' || name[0] == '\0')
        return NULL;
    /* A quoted name is looked for beside the header that has it first. */
    for (size_t i = angle || !from ? 1 : 0; i <= ld->ndirs; i++) {
        char *base = i == 0 ? kevo__dirname(from) : NULL;
        const char *dir = i == 0 ? base : ld->dirs[i - 1];
        char *joined = dir ? kevo__path_join(dir, name) : NULL;
        char *path = joined ? normalise(joined) : NULL;
        free(base);
        free(joined);
        if (!path) {
            *nomem = true;
            return NULL;
        }
        /* A name with ".." may lead out of the include directories. */
        *d = holder(ld, path);
        if (*d >= 0 && is_file(path))
            return path;
        free(path);
    }
    return NULL;
}

static kevo_status on_include(void *ctx, const char *what, bool angle,
                              const char *name, int line)
{
    loader *ld = ctx;
    int d = -1;
    bool nomem;
    size_t index;
    (void)line;

    if (strcmp(what, "#include") != 0 && strcmp(what, "#include_next") != 0 &&
        strcmp(what, "#import") != 0)
        return KEVO_OK;
    char *path =
        resolve(ld, name, angle, ld->files[ld->current].path, &d, &nomem);
    if (!path)
        return nomem ? kevo__error_set(ld->err, KEVO_ENOMEM, "out of memory")
                     : KEVO_OK;
    kevo_status rc = add_file(ld, path, d, &index);
    free(path);
    if (rc != KEVO_OK || index == SIZE_MAX)
        return rc;
    char *spelled = kevo__strdup(name);
    if (!spelled)
        return kevo__error_set(ld->err, KEVO_ENOMEM, "out of memory");
    return add_name(ld, spelled, index);
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collects the relative names of the regular files under dir/rel. */
static kevo_status walk(loader *ld, const char *dir, const char *rel, int depth,
                        char ***names, size_t *n, size_t *cap)
{
    char *path = kevo__path_join(dir, rel);
    DIR *dp = path ? opendir(path) : NULL;
    struct dirent *e;
    kevo_status rc = KEVO_OK;

    if (!path)
        return kevo__error_set(ld->err, KEVO_ENOMEM, "out of memory");
    if (!dp) {
        free(path);
        return KEVO_OK;
    }
    while (rc == KEVO_OK && (e = readdir(dp))) {
        if (e->d_name[0] == '.')
            continue;
        char *sub = kevo__asprintf("%s/%s", rel, e->d_name);
        char *full = sub ? kevo__path_join(dir, sub) : NULL;
        if (!full) {
            free(sub);
            rc = kevo__error_set(ld->err, KEVO_ENOMEM, "out of memory");
            break;
        }
        if (is_file(full)) {
            if (*n == *cap) {
                size_t c = *cap ? 2 * *cap : 256;
                char **grown = realloc(*names, c * sizeof *grown);
                if (!grown) {
                    free(sub);
                    free(full);
                    rc = kevo__error_set(ld->err, KEVO_ENOMEM, "out of memory");
                    break;
                }
                *names = grown;
                *cap = c;
            }
            (*names)[(*n)++] = sub;
            sub = NULL;
        } else if (depth < MAX_DEPTH && is_dir(full)) {
            rc = walk(ld, dir, sub, depth + 1, names, n, cap);
        }
        free(sub);
        free(full);
    }
    closedir(dp);
    free(path);
    return rc;
}

/* The roots: the allowed headers, then every file under cuda/std/. */
static kevo_status add_roots(loader *ld)
{
    kevo_status rc = KEVO_OK;
    char prefix[64];
    size_t index;
    int d;
    bool nomem;

    for (size_t i = 0; rc == KEVO_OK && i < kevo__include_nallowed; i++) {
        char *path =
            resolve(ld, kevo__include_allowed[i], true, NULL, &d, &nomem);
        if (!path && nomem)
            return kevo__error_set(ld->err, KEVO_ENOMEM, "out of memory");
        if (path)
            rc = add_file(ld, path, d, &index);
        free(path);
    }
    snprintf(prefix, sizeof prefix, "%s", KEVO__INCLUDE_ALLOWED_PREFIX);
    prefix[strlen(prefix) - 1] = '\0'; /* no trailing slash */
    for (size_t i = 0; rc == KEVO_OK && i < ld->ndirs; i++) {
        char **names = NULL;
        size_t n = 0, cap = 0;
        rc = walk(ld, ld->dirs[i], prefix, 0, &names, &n, &cap);
        if (rc == KEVO_OK && n)
            qsort(names, n, sizeof *names, by_string);
        for (size_t k = 0; k < n; k++) {
            char *joined =
                rc == KEVO_OK ? kevo__path_join(ld->dirs[i], names[k]) : NULL;
            char *path = joined ? normalise(joined) : NULL;
            if (rc == KEVO_OK && !path)
                rc = kevo__error_set(ld->err, KEVO_ENOMEM, "out of memory");
            if (rc == KEVO_OK && kevo__include_allowed_name(names[k]) &&
                holder(ld, path) == (int)i)
                rc = add_file(ld, path, (int)i, &index);
            free(joined);
            free(path);
            free(names[k]);
        }
        free(names);
    }
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const hname *)a)->name, ((const hname *)b)->name);
}

static uint64_t hash_u64(uint64_t h, uint64_t v)
{
    unsigned char bytes[8];
    for (int i = 0; i < 8; i++)
        bytes[i] = (unsigned char)(v >> (8 * i));
    return kevo__hash_bytes(h, bytes, sizeof bytes);
}

static void loader_free(loader *ld)
{
    for (size_t i = 0; i < ld->nfiles; i++) {
        free(ld->files[i].path);
        free(ld->files[i].name);
        free(ld->files[i].text);
    }
    for (size_t i = 0; i < ld->nnames; i++)
        free(ld->names[i].name);
    free(ld->files);
    free(ld->names);
    strmap_free(&ld->by_path);
    strmap_free(&ld->by_name);
    for (size_t i = 0; i < ld->ndirs; i++)
        free(ld->dirs[i]);
    free(ld);
}

void kevo__headers_free(kevo__headers *headers)
{
    if (!headers)
        return;
    free(headers->dir);
    free(headers->names);
    free(headers->texts);
    if (headers->priv)
        loader_free(headers->priv);
    free(headers);
}

kevo__headers *kevo__headers_load(const char *include_dir, kevo_error *err)
{
    kevo__headers *h = calloc(1, sizeof *h);
    loader *ld = calloc(1, sizeof *ld);
    kevo_status rc = KEVO_OK;

    if (!h || !ld) {
        free(h);
        free(ld);
        kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        return NULL;
    }
    h->priv = ld;
    ld->err = err;
    if (is_dir(include_dir)) {
        char *cccl = kevo__path_join(include_dir, "cccl");
        if (!(h->dir = kevo__strdup(include_dir)) || !cccl ||
            !(ld->dirs[ld->ndirs++] = normalise(include_dir))) {
            free(cccl);
            goto nomem;
        }
        if (is_dir(cccl) && !(ld->dirs[ld->ndirs++] = normalise(cccl))) {
            free(cccl);
            goto nomem;
        }
        free(cccl);
        rc = add_roots(ld);
        /* Breadth first: files found while scanning are scanned in turn. */
        for (ld->current = 0; rc == KEVO_OK && ld->current < ld->nfiles;
             ld->current++)
            rc = kevo__include_each(ld->files[ld->current].text,
                                    ld->files[ld->current].len, on_include, ld);
        if (rc != KEVO_OK)
            goto fail;
    }
    qsort(ld->names, ld->nnames, sizeof *ld->names, by_name);
    h->names = calloc(ld->nnames + 1, sizeof *h->names);
    h->texts = calloc(ld->nnames + 1, sizeof *h->texts);
    if (!h->names || !h->texts)
        goto nomem;
    uint64_t hash = KEVO__HASH_INIT;
    for (size_t i = 0; i < ld->nnames; i++) {
        const hfile *f = &ld->files[ld->names[i].file];
        size_t nlen = strlen(ld->names[i].name);
        h->names[i] = ld->names[i].name;
        h->texts[i] = f->text;
        hash = hash_u64(hash, nlen);
        hash = kevo__hash_bytes(hash, ld->names[i].name, nlen);
        hash = hash_u64(hash, f->len);
        hash = kevo__hash_bytes(hash, f->text, f->len);
    }
    h->count = ld->nnames;
    h->files = ld->nfiles;
    h->bytes = ld->bytes;
    h->conflicts = ld->conflicts;
    if (h->count)
        snprintf(h->hash, sizeof h->hash, "%016llx",
                 (unsigned long long)kevo__hash_finish(hash));
    ld->err = NULL;
    return h;
nomem:
    kevo__error_set(err, KEVO_ENOMEM, "out of memory");
fail:
    kevo__headers_free(h);
    return NULL;
}

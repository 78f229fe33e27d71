/*
 * compile_cache.c: finished compiles on disk, one file per key, written
 * atomically and checked on every read.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "compile_cache.h"

#define ENTRY_MAGIC "kevo-compile-cache 1\n"

struct kevo__compile_cache {
    char *dir; /* BASE/compile */
    uint64_t hits;
    uint64_t misses;
};

/* ---- SHA-256 (FIPS 180-4) ---------------------------------------------- */

typedef struct sha256 {
    uint32_t h[8];
    uint64_t total;
    unsigned char block[64];
    size_t used;
} sha256;

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

static void sha256_block(sha256 *c, const unsigned char *p)
{
    uint32_t w[64], v[8];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(v, c->h, sizeof v);
    for (int i = 0; i < 64; i++) {
        uint32_t s1 = ror(v[4], 6) ^ ror(v[4], 11) ^ ror(v[4], 25);
        uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
        uint32_t t1 = v[7] + s1 + ch + sha256_k[i] + w[i];
        uint32_t s0 = ror(v[0], 2) ^ ror(v[0], 13) ^ ror(v[0], 22);
        uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
        uint32_t t2 = s0 + maj;
        memmove(v + 1, v, 7 * sizeof v[0]);
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++)
        c->h[i] += v[i];
}

static void sha256_init(sha256 *c)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                   0xa54ff53a, 0x510e527f, 0x9b05688c,
                                   0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, h0, sizeof h0);
    c->total = 0;
    c->used = 0;
}

static void sha256_update(sha256 *c, const void *data, size_t len)
{
    const unsigned char *p = data;
    c->total += len;
    while (len > 0) {
        size_t n = 64 - c->used;
        if (n > len)
            n = len;
        memcpy(c->block + c->used, p, n);
        c->used += n;
        p += n;
        len -= n;
        if (c->used == 64) {
            sha256_block(c, c->block);
            c->used = 0;
        }
    }
}

static void sha256_hex(sha256 *c, char out[KEVO__CACHE_KEY_SIZE])
{
    static const char hex[] = "0123456789abcdef";
    uint64_t bits = c->total * 8;
    unsigned char pad = 0x80, zero = 0, len[8];
    sha256_update(c, &pad, 1);
    while (c->used != 56)
        sha256_update(c, &zero, 1);
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(bits >> (56 - 8 * i));
    sha256_update(c, len, 8);
    for (int i = 0; i < 8; i++) {
        for (int b = 0; b < 4; b++) {
            unsigned char byte = (unsigned char)(c->h[i] >> (24 - 8 * b));
            out[8 * i + 2 * b] = hex[byte >> 4];
            out[8 * i + 2 * b + 1] = hex[byte & 15];
        }
    }
    out[64] = '\0';
}

/* A field: its length (8 bytes, little-endian) and its bytes, so that no
 * two different inputs hash the same stream. */
static void sha256_field(sha256 *c, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)((uint64_t)n >> (8 * i));
    sha256_update(c, len, 8);
    if (n)
        sha256_update(c, s, n);
}

void kevo__compile_cache_key(const char *source, const char *const *options,
                             size_t noptions, const char *const *kernels,
                             size_t nkernels, const char *nvrtc_version,
                             char key[KEVO__CACHE_KEY_SIZE])
{
    sha256 c;
    char count[32];
    sha256_init(&c);
    sha256_field(&c, "kevo compile key 1");
    sha256_field(&c, nvrtc_version);
    snprintf(count, sizeof count, "%zu options", noptions);
    sha256_field(&c, count);
    for (size_t i = 0; i < noptions; i++)
        sha256_field(&c, options[i]);
    snprintf(count, sizeof count, "%zu kernels", nkernels);
    sha256_field(&c, count);
    for (size_t i = 0; i < nkernels; i++)
        sha256_field(&c, kernels[i]);
    sha256_field(&c, source);
    sha256_hex(&c, key);
}

/* ---- the directory ----------------------------------------------------- */

char *kevo__compile_cache_base_dir(kevo_error *err)
{
    const char *d = getenv("KEVO_CACHE_DIR");
    char *r;
    if (d && *d)
        r = kevo__strdup(d);
    else if ((d = getenv("XDG_CACHE_HOME")) && d[0] == '/')
        r = kevo__path_join(d, "kevo");
    else if ((d = getenv("HOME")) && *d)
        r = kevo__asprintf("%s/.cache/kevo", d);
    else {
        kevo__error_set(err, KEVO_ENOENT,
                        "no directory for the compile cache: set "
                        "KEVO_CACHE_DIR, XDG_CACHE_HOME or HOME");
        return NULL;
    }
    if (!r)
        kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    return r;
}

kevo__compile_cache *kevo__compile_cache_open(const char *base, kevo_error *err)
{
    kevo__compile_cache *cache = NULL;
    char *owned = NULL;

    if (!base) {
        owned = kevo__compile_cache_base_dir(err);
        if (!owned)
            return NULL;
        base = owned;
    }
    cache = calloc(1, sizeof *cache);
    if (!cache || !(cache->dir = kevo__path_join(base, "compile"))) {
        kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto fail;
    }
    if (kevo__mkdir_p(cache->dir, err) != KEVO_OK)
        goto fail;
    if (access(cache->dir, W_OK | X_OK) != 0) {
        kevo__error_errno(err, errno, cache->dir,
                          "the compile cache is not writable");
        goto fail;
    }
    free(owned);
    return cache;
fail:
    free(owned);
    kevo__compile_cache_close(cache);
    return NULL;
}

void kevo__compile_cache_close(kevo__compile_cache *cache)
{
    if (!cache)
        return;
    free(cache->dir);
    free(cache);
}

const char *kevo__compile_cache_dir(const kevo__compile_cache *cache)
{
    return cache->dir;
}

void kevo__compile_cache_stats(const kevo__compile_cache *cache, uint64_t *hits,
                               uint64_t *misses)
{
    if (hits)
        *hits = cache->hits;
    if (misses)
        *misses = cache->misses;
}

void kevo__cache_entry_clear(kevo__cache_entry *e)
{
    if (!e)
        return;
    free(e->error);
    free(e->log);
    free(e->ptx);
    free(e->cubin);
    for (size_t i = 0; i < e->nlowered; i++)
        free(e->lowered[i]);
    free(e->lowered);
    free(e->nvrtc);
    memset(e, 0, sizeof *e);
}

static bool valid_key(const char *key)
{
    if (!key || strlen(key) != 64)
        return false;
    for (int i = 0; i < 64; i++) {
        if (!strchr("0123456789abcdef", key[i]))
            return false;
    }
    return true;
}

static char *entry_path(const kevo__compile_cache *cache, const char *key)
{
    return kevo__asprintf("%s/%s.entry", cache->dir, key);
}

static uint64_t body_sum(const char *body, size_t len)
{
    return kevo__hash_finish(kevo__hash_bytes(KEVO__HASH_INIT, body, len));
}

/* A JSON string or null, copied; false when it is neither or no memory. */
static bool take_string(json_t *j, char **out)
{
    *out = NULL;
    if (json_is_null(j) || !j)
        return true;
    if (!json_is_string(j))
        return false;
    *out = kevo__strndup(json_string_value(j), json_string_length(j));
    return *out != NULL;
}

static unsigned char *copy_bytes(const char *p, size_t n, bool nul)
{
    unsigned char *r = malloc(n + (nul ? 1 : 0) + (n == 0));
    if (!r)
        return NULL;
    memcpy(r, p, n);
    if (nul)
        r[n] = '\0';
    return r;
}

/* Parses a whole entry file; false when anything is off. */
static bool parse_entry(const char *data, size_t len, const char *key,
                        kevo__cache_entry *e)
{
    size_t magic = strlen(ENTRY_MAGIC);
    json_t *meta = NULL;
    json_error_t jerr;
    bool good = false;

    if (len < magic || memcmp(data, ENTRY_MAGIC, magic) != 0)
        return false;
    const char *line = data + magic;
    const char *nl = memchr(line, '\n', len - magic);
    if (!nl)
        return false;
    meta = json_loadb(line, (size_t)(nl - line), 0, &jerr);
    if (!json_is_object(meta))
        goto done;
    const char *body = nl + 1;
    size_t body_len = len - (size_t)(body - data);
    json_t *jkey = json_object_get(meta, "key");
    json_t *jok = json_object_get(meta, "ok");
    json_t *jsum = json_object_get(meta, "sum");
    json_int_t log_n = json_integer_value(json_object_get(meta, "log_bytes"));
    json_int_t ptx_n = json_integer_value(json_object_get(meta, "ptx_bytes"));
    json_int_t cubin_n =
        json_integer_value(json_object_get(meta, "cubin_bytes"));
    json_t *jlowered = json_object_get(meta, "lowered");
    if (!json_is_string(jkey) || strcmp(json_string_value(jkey), key) != 0 ||
        !json_is_boolean(jok) || !json_is_string(jsum) || log_n < 0 ||
        ptx_n < 0 || cubin_n < 0 || !json_is_array(jlowered) ||
        (uint64_t)log_n + (uint64_t)ptx_n + (uint64_t)cubin_n != body_len)
        goto done;
    char sum[24];
    snprintf(sum, sizeof sum, "%016llx",
             (unsigned long long)body_sum(body, body_len));
    if (strcmp(json_string_value(jsum), sum) != 0)
        goto done;
    e->ok = json_is_true(jok);
    if (!take_string(json_object_get(meta, "error"), &e->error) ||
        !take_string(json_object_get(meta, "nvrtc"), &e->nvrtc))
        goto done;
    e->seconds = json_number_value(json_object_get(meta, "seconds"));
    e->log = (char *)copy_bytes(body, (size_t)log_n, true);
    if (!e->log)
        goto done;
    if (e->ok) {
        e->ptx = (char *)copy_bytes(body + log_n, (size_t)ptx_n, true);
        e->cubin = copy_bytes(body + log_n + ptx_n, (size_t)cubin_n, false);
        if (!e->ptx || !e->cubin)
            goto done;
        e->ptx_len = (size_t)ptx_n;
        e->cubin_len = (size_t)cubin_n;
    }
    size_t nl_count = json_array_size(jlowered);
    if (nl_count) {
        e->lowered = calloc(nl_count, sizeof *e->lowered);
        if (!e->lowered)
            goto done;
        e->nlowered = nl_count;
        for (size_t i = 0; i < nl_count; i++) {
            if (!take_string(json_array_get(jlowered, i), &e->lowered[i]))
                goto done;
        }
    }
    good = true;
done:
    json_decref(meta);
    if (!good)
        kevo__cache_entry_clear(e);
    return good;
}

bool kevo__compile_cache_lookup(kevo__compile_cache *cache, const char *key,
                                kevo__cache_entry *entry)
{
    char *path = NULL, *data = NULL;
    size_t len = 0;
    bool hit = false;

    memset(entry, 0, sizeof *entry);
    if (!valid_key(key) || !(path = entry_path(cache, key)))
        goto done;
    if (kevo__read_file(path, false, &data, &len, NULL) != KEVO_OK)
        goto done;
    hit = parse_entry(data, len, key, entry);
done:
    if (hit)
        cache->hits++;
    else
        cache->misses++;
    free(data);
    free(path);
    return hit;
}

kevo_status kevo__compile_cache_store(kevo__compile_cache *cache,
                                      const char *key,
                                      const kevo__cache_entry *e,
                                      kevo_error *err)
{
    kevo_status rc = KEVO_ENOMEM;
    json_t *meta = NULL, *lowered = NULL;
    char *line = NULL, *path = NULL, *tmp = NULL;
    kevo_buf body = {0};
    int fd = -1;

    if (!valid_key(key))
        return kevo__error_set(err, KEVO_EINVAL, "bad cache key");
    const char *log = e->log ? e->log : "";
    size_t log_n = strlen(log);
    size_t ptx_n = e->ok ? e->ptx_len : 0;
    size_t cubin_n = e->ok ? e->cubin_len : 0;
    if (!kevo__buf_append(&body, log, log_n) ||
        (ptx_n && !kevo__buf_append(&body, e->ptx, ptx_n)) ||
        (cubin_n && !kevo__buf_append(&body, (const char *)e->cubin, cubin_n)))
        goto nomem;
    char sum[24];
    snprintf(
        sum, sizeof sum, "%016llx",
        (unsigned long long)body_sum(body.data ? body.data : "", body.len));
    lowered = json_array();
    if (!lowered)
        goto nomem;
    for (size_t i = 0; i < e->nlowered; i++) {
        json_t *v = e->lowered[i] ? json_string(e->lowered[i]) : json_null();
        if (json_array_append_new(lowered, v) != 0)
            goto nomem;
    }
    meta =
        json_pack("{s:s, s:b, s:s?, s:I, s:I, s:I, s:s?, s:f, s:O, s:s}", "key",
                  key, "ok", (int)e->ok, "error", e->error, "log_bytes",
                  (json_int_t)log_n, "ptx_bytes", (json_int_t)ptx_n,
                  "cubin_bytes", (json_int_t)cubin_n, "nvrtc", e->nvrtc,
                  "seconds", e->seconds, "lowered", lowered, "sum", sum);
    if (!meta || !(line = json_dumps(meta, JSON_COMPACT)))
        goto nomem;
    if (!(path = entry_path(cache, key)) ||
        !(tmp = kevo__asprintf("%s.tmp.XXXXXX", path)))
        goto nomem;
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        rc = kevo__error_errno(err, errno, tmp, "cannot create");
        free(tmp);
        tmp = NULL;
        goto done;
    }
    /* Readers check every byte, so no fsync: a torn entry after a crash
     * is a miss, not a wrong answer. */
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        rc = kevo__error_errno(err, errno, tmp, "cannot open");
        goto done;
    }
    fd = -1;
    fputs(ENTRY_MAGIC, f);
    fputs(line, f);
    fputc('\n', f);
    if (body.len)
        fwrite(body.data, 1, body.len, f);
    bool bad = ferror(f) != 0;
    int e_write = errno;
    if (fclose(f) != 0 || bad) {
        rc = kevo__error_errno(err, bad ? e_write : errno, tmp, "cannot write");
        goto done;
    }
    if (rename(tmp, path) != 0) {
        rc = kevo__error_errno(err, errno, path, "cannot rename into place");
        goto done;
    }
    free(tmp);
    tmp = NULL;
    rc = KEVO_OK;
    goto done;
nomem:
    rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
done:
    if (fd >= 0)
        close(fd);
    if (tmp) {
        unlink(tmp);
        free(tmp);
    }
    free(path);
    free(line);
    json_decref(meta);
    json_decref(lowered);
    kevo__buf_free(&body);
    return rc;
}

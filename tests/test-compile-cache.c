/*
 * test-compile-cache.c: the compile cache on disk without NVRTC: where it
 * lives (KEVO_CACHE_DIR, XDG_CACHE_HOME, HOME), what its key depends on,
 * entries that round-trip (successful and failed compiles), entries that
 * are damaged in every way and count as misses, and writes that leave no
 * temporary file behind.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/compile_cache.h"
#include "tap.h"

static char base[64];

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void test_dirs(void)
{
    kevo_error err = KEVO__ERROR_INIT;
    char *d;

    setenv("KEVO_CACHE_DIR", "/somewhere/kevo-cache", 1);
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    setenv("HOME", "/home/someone", 1);
    d = kevo__compile_cache_base_dir(&err);
    is_str(d, "/somewhere/kevo-cache", "KEVO_CACHE_DIR first");
    free(d);
    setenv("KEVO_CACHE_DIR", "", 1);
    d = kevo__compile_cache_base_dir(&err);
    is_str(d, "/xdg/kevo", "an empty KEVO_CACHE_DIR does not count");
    free(d);
    unsetenv("KEVO_CACHE_DIR");
    d = kevo__compile_cache_base_dir(&err);
    is_str(d, "/xdg/kevo", "then XDG_CACHE_HOME/kevo");
    free(d);
    setenv("XDG_CACHE_HOME", "relative/dir", 1);
    d = kevo__compile_cache_base_dir(&err);
    is_str(d, "/home/someone/.cache/kevo",
           "a relative XDG_CACHE_HOME is ignored");
    free(d);
    unsetenv("XDG_CACHE_HOME");
    d = kevo__compile_cache_base_dir(&err);
    is_str(d, "/home/someone/.cache/kevo", "then HOME/.cache/kevo");
    free(d);
    unsetenv("HOME");
    d = kevo__compile_cache_base_dir(&err);
    ok(d == NULL && err.code == KEVO_ENOENT, "none of them: an error");
    like_str(err.text, "set KEVO_CACHE_DIR, XDG_CACHE_HOME or HOME",
             "  that says what to set");
    free(d);

    /* open() with no directory uses the variables. */
    setenv("KEVO_CACHE_DIR", base, 1);
    kevo_error_init(&err);
    kevo__compile_cache *c = kevo__compile_cache_open(NULL, &err);
    ok(c != NULL, "open with KEVO_CACHE_DIR (%s)", err.text);
    char *want = kevo__asprintf("%s/compile", base);
    is_str(c ? kevo__compile_cache_dir(c) : NULL, want,
           "entries go to BASE/compile");
    struct stat st;
    ok(stat(want, &st) == 0 && S_ISDIR(st.st_mode), "  which was made");
    free(want);
    kevo__compile_cache_close(c);

    kevo_error_init(&err);
    c = kevo__compile_cache_open("/proc/kevo-cannot-be-here", &err);
    ok(c == NULL && err.code != KEVO_OK, "a directory that cannot be made");
    like_str(err.text, "/proc/kevo-cannot-be-here", "  is named");
    kevo__compile_cache_close(c);
}

static void test_keys(void)
{
    const char *opts[] = {"-arch=sm_90", "-DX=1"};
    const char *opts_swapped[] = {"-DX=1", "-arch=sm_90"};
    const char *kernels[] = {"k"};
    const char *src = "__global__ void k(){}";
    char k[KEVO__CACHE_KEY_SIZE], other[KEVO__CACHE_KEY_SIZE];

    kevo__compile_cache_key(src, opts, 2, kernels, 1, "13.0", k);
    /* SHA-256 over length-prefixed fields, as computed independently. */
    is_str(k,
           "65c4207301407319ee30cabdef597a3cbc233071eabaf7447d84e9b3bda15101",
           "the key is the SHA-256 of the fields");
    kevo__compile_cache_key(src, opts, 2, kernels, 1, "13.0", other);
    is_str(other, k, "the same inputs, the same key");
    kevo__compile_cache_key(src, opts, 2, kernels, 1, "13.1", other);
    ok(strcmp(other, k) != 0, "another NVRTC version, another key");
    kevo__compile_cache_key(src, opts_swapped, 2, kernels, 1, "13.0", other);
    ok(strcmp(other, k) != 0, "options in another order, another key");
    kevo__compile_cache_key(src, opts, 1, kernels, 1, "13.0", other);
    ok(strcmp(other, k) != 0, "one option less, another key");
    const char *opts_a[] = {"-arch=sm_90a", "-DX=1"};
    kevo__compile_cache_key(src, opts_a, 2, kernels, 1, "13.0", other);
    ok(strcmp(other, k) != 0,
       "the architecture-specific target (sm_90a), another key");
    kevo__compile_cache_key(src, opts, 2, NULL, 0, "13.0", other);
    ok(strcmp(other, k) != 0, "no kernel names, another key");
    kevo__compile_cache_key("__global__ void k(){ }", opts, 2, kernels, 1,
                            "13.0", other);
    ok(strcmp(other, k) != 0, "another source, another key");
    /* Moving bytes between fields changes the key. */
    const char *ab[] = {"-DA", "B"}, *a_b[] = {"-DAB"};
    kevo__compile_cache_key(src, ab, 2, NULL, 0, "13.0", k);
    kevo__compile_cache_key(src, a_b, 1, NULL, 0, "13.0", other);
    ok(strcmp(other, k) != 0, "field boundaries count");

    char *big = malloc(1001);
    memset(big, 'a', 1000);
    big[1000] = '\0';
    kevo__compile_cache_key(big, NULL, 0, NULL, 0, NULL, k);
    is_str(k,
           "5934d6b27075e39edec03556058ec11149b5f7ad96c8b86a18f835ee10f16b2d",
           "a source over many blocks");
    free(big);
}

static void fill_ok(kevo__cache_entry *e)
{
    static char ptx[] = ".version 9.0\n.target sm_90\n.entry k()\n{\n}\n";
    static unsigned char cubin[] = {0x7f, 'E', 'L', 'F', 0, 1, 2, 0, 255};
    static char *lowered[] = {"k", NULL};
    memset(e, 0, sizeof *e);
    e->ok = true;
    e->log = "ptxas info    : Used 8 registers\n";
    e->ptx = ptx;
    e->ptx_len = strlen(ptx);
    e->cubin = cubin;
    e->cubin_len = sizeof cubin;
    e->lowered = lowered;
    e->nlowered = 2;
    e->nvrtc = "13.0";
    e->seconds = 0.125;
}

/* The number of files in the entry directory whose name contains part. */
static int count_files(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d))) {
        if (strstr(e->d_name, part))
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

/* Rewrites entry key's file with f applied to its bytes. */
static void damage(kevo__compile_cache *c, const char *key,
                   void (*f)(char *data, size_t *len))
{
    char *path = kevo__asprintf("%s/%s.entry", kevo__compile_cache_dir(c), key);
    char *data = NULL;
    size_t len = 0;
    if (!path || kevo__read_file(path, false, &data, &len, NULL) != KEVO_OK)
        bail_out("cannot read the entry");
    f(data, &len);
    FILE *out = fopen(path, "wb");
    if (!out || fwrite(data, 1, len, out) != len)
        bail_out("cannot write the entry");
    fclose(out);
    free(data);
    free(path);
}

static void flip_last(char *d, size_t *n)
{
    d[*n - 1] ^= 1;
}
static void cut_short(char *d, size_t *n)
{
    (void)d;
    *n -= 3;
}
static void bad_magic(char *d, size_t *n)
{
    (void)n;
    d[0] = 'K';
}
static void bad_json(char *d, size_t *n)
{
    (void)n;
    char *p = strchr(d, '{');
    *p = '[';
}
static void empty(char *d, size_t *n)
{
    (void)d;
    *n = 0;
}

static void test_entries(void)
{
    kevo_error err = KEVO__ERROR_INIT;
    kevo__compile_cache *c = kevo__compile_cache_open(base, &err);
    kevo__cache_entry e, got;
    char key[KEVO__CACHE_KEY_SIZE], key2[KEVO__CACHE_KEY_SIZE];
    uint64_t hits, misses;

    if (!c)
        bail_out("open: %s", err.text);
    kevo__compile_cache_key("a", NULL, 0, NULL, 0, "13.0", key);
    kevo__compile_cache_key("b", NULL, 0, NULL, 0, "13.0", key2);

    ok(!kevo__compile_cache_lookup(c, key, &got), "an empty cache misses");
    ok(got.log == NULL && got.ptx == NULL, "  and leaves the entry empty");

    fill_ok(&e);
    is_int(kevo__compile_cache_store(c, key, &e, &err), KEVO_OK,
           "store a compile (%s)", err.text);
    ok(kevo__compile_cache_lookup(c, key, &got), "then it hits");
    ok(got.ok, "  ok");
    is_str(got.log, e.log, "  the log");
    ok(got.ptx_len == e.ptx_len && strcmp(got.ptx, e.ptx) == 0, "  the PTX");
    ok(got.cubin_len == e.cubin_len &&
           memcmp(got.cubin, e.cubin, e.cubin_len) == 0,
       "  the cubin, byte for byte");
    ok(got.nlowered == 2 && got.lowered && strcmp(got.lowered[0], "k") == 0 &&
           got.lowered[1] == NULL,
       "  the lowered names, with a missing one");
    is_str(got.nvrtc, "13.0", "  the NVRTC version");
    is_double(got.seconds, 0.125, 1e-9, "  the compile time");
    ok(got.error == NULL, "  no error");
    kevo__cache_entry_clear(&got);
    ok(!kevo__compile_cache_lookup(c, key2, &got), "another key misses");

    kevo__cache_entry fail = {.ok = false,
                              .error = "compile error: k.cu(1): error: x",
                              .log = "k.cu(1): error: x\n",
                              .nvrtc = "13.0",
                              .seconds = 0.01};
    is_int(kevo__compile_cache_store(c, key2, &fail, &err), KEVO_OK,
           "store a failed compile");
    ok(kevo__compile_cache_lookup(c, key2, &got), "  it hits");
    ok(!got.ok, "  as a failure");
    is_str(got.error, fail.error, "  with its error");
    is_str(got.log, fail.log, "  and log");
    ok(got.ptx == NULL && got.cubin == NULL && got.nlowered == 0,
       "  and no code");
    kevo__cache_entry_clear(&got);

    int n = count_files(kevo__compile_cache_dir(c), ".entry");
    is_int(n, 2, "two entry files");
    is_int(count_files(kevo__compile_cache_dir(c), ".tmp."), 0,
           "no temporary file left");

    struct {
        void (*f)(char *, size_t *);
        const char *what;
    } damages[] = {{flip_last, "a changed byte"},
                   {cut_short, "a short file"},
                   {bad_magic, "a wrong first line"},
                   {bad_json, "a header that is no object"},
                   {empty, "an empty file"}};
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(damages); i++) {
        fill_ok(&e);
        kevo__compile_cache_store(c, key, &e, NULL);
        damage(c, key, damages[i].f);
        ok(!kevo__compile_cache_lookup(c, key, &got), "%s is a miss",
           damages[i].what);
        ok(got.log == NULL && got.ptx == NULL && got.cubin == NULL,
           "  nothing is returned");
        is_int(kevo__compile_cache_store(c, key, &e, NULL), KEVO_OK,
               "  and it is replaced");
        ok(kevo__compile_cache_lookup(c, key, &got), "  then hits again");
        kevo__cache_entry_clear(&got);
    }

    /* An entry filed under another key's name. */
    char *from = kevo__asprintf("%s/%s.entry", kevo__compile_cache_dir(c), key);
    char *to = kevo__asprintf("%s/%s.entry", kevo__compile_cache_dir(c), key2);
    if (!from || !to || rename(from, to) != 0)
        bail_out("rename");
    ok(!kevo__compile_cache_lookup(c, key2, &got),
       "an entry under another key's name is a miss");
    free(from);
    free(to);

    ok(!kevo__compile_cache_lookup(c, "../../etc/passwd", &got),
       "a key that is no key misses");
    kevo_error_init(&err);
    is_int(kevo__compile_cache_store(c, "not-a-key", &e, &err), KEVO_EINVAL,
           "and cannot be stored");

    kevo__compile_cache_stats(c, &hits, &misses);
    is_uint(hits, 2 + KEVO_ARRAY_SIZE(damages), "hits counted");
    is_uint(misses, 4 + KEVO_ARRAY_SIZE(damages), "misses counted");

    /* A directory that turned read-only: the store fails cleanly. */
    if (geteuid() != 0) {
        chmod(kevo__compile_cache_dir(c), 0500);
        kevo_error_init(&err);
        is_int(kevo__compile_cache_store(c, key, &e, &err), KEVO_EIO,
               "a read-only directory: the store fails");
        like_str(err.text, "cannot create", "  and says why");
        chmod(kevo__compile_cache_dir(c), 0700);
    }
    kevo__compile_cache_close(c);
}

int main(void)
{
    snprintf(base, sizeof base, "/tmp/kevo-test-cache-XXXXXX");
    if (!mkdtemp(base))
        bail_out("mkdtemp: %s", strerror(errno));
    test_dirs();
    test_keys();
    test_entries();
    nftw(base, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return done_testing();
}

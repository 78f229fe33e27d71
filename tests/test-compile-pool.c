/*
 * test-compile-pool.c: the compile pool with real kevo-worker processes and
 * real NVRTC: PTX, cubin and the ptxas log of a task-suite seed; the
 * compile cache (hits, corrupt entries, cached failures); compile errors;
 * a forbidden #include that never reaches NVRTC; a compile past its time
 * limit; a compile process killed from outside; jobs queued behind failed
 * ones; many jobs over two processes.
 */
#include "config.h"

#define _XOPEN_SOURCE_EXTENDED 1
#include <errno.h>
#include <ftw.h>
#include <glob.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compile_pool.h"
#include "include_scan.h"
#include "tap.h"

/* A source that keeps NVRTC busy for seconds: each constant expression
 * runs until the front end gives up on it. */
static const char slow_source[] =
    "constexpr unsigned long long spin(unsigned long long n, int k)\n"
    "{\n"
    "    unsigned long long s = k;\n"
    "    for (unsigned long long i = 0; i < n; i++)\n"
    "        s = s * 6364136223846793005ULL + i;\n"
    "    return s;\n"
    "}\n"
    "__global__ void slow(unsigned long long *o)\n"
    "{\n"
    "    constexpr unsigned long long a = spin(1ULL << 40, 1);\n"
    "    constexpr unsigned long long b = spin(1ULL << 40, 2);\n"
    "    constexpr unsigned long long c = spin(1ULL << 40, 3);\n"
    "    o[0] = a + b + c;\n"
    "}\n";

static char *saxpy_source;
static char cache_base[64];

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static kevo_vars *saxpy_params(int64_t block, int64_t vec, int64_t items)
{
    kevo_vars *v = kevo_vars_new();
    if (!v || kevo_vars_set(v, "BLOCK", block) != KEVO_OK ||
        kevo_vars_set(v, "VEC", vec) != KEVO_OK ||
        kevo_vars_set(v, "ITEMS", items) != KEVO_OK)
        bail_out("cannot make parameters");
    return v;
}

static const char *const saxpy_kernel[] = {"saxpy"};

/* Submits a job and waits for its result. */
static kevo__compile_result *compile(kevo__compile_pool *pool,
                                     const char *source, const kevo_vars *p,
                                     const char *const *kernels, size_t nk,
                                     int timeout_ms)
{
    kevo__compile_request req = {.source = source,
                                 .params = p,
                                 .arch = "sm_90",
                                 .kernels = kernels,
                                 .nkernels = nk,
                                 .timeout_ms = timeout_ms};
    kevo_error err = KEVO__ERROR_INIT;
    uint64_t id = 0;
    kevo__compile_result *r = NULL;
    if (kevo__compile_pool_submit(pool, &req, &id, &err) != KEVO_OK)
        bail_out("submit: %s", err.text);
    if (kevo__compile_pool_wait(pool, id, 60000, &r, &err) != KEVO_OK || !r)
        bail_out("wait for job %llu: %s", (unsigned long long)id, err.text);
    is_uint(r->id, id, "the result is job %llu's", (unsigned long long)id);
    return r;
}

static const char *worker_path(void)
{
    static char path[4096];
    const char *w = getenv("KEVO_WORKER");
    const char *b = getenv("KEVO_BUILDDIR");
    if (w && *w)
        return w;
    snprintf(path, sizeof path, "%s/lib/worker/kevo-worker", b && *b ? b : ".");
    return path;
}

static void test_options(void)
{
    kevo_error err = KEVO__ERROR_INIT;
    kevo_vars *p = saxpy_params(256, 2, 4);
    size_t n = 0;
    char **o = kevo__compile_options("sm_90", p, &n, &err);
    const char *want[] = {
        "-arch=sm_90",     "-std=c++17",          "--ptxas-options=-v",
        "-default-device", "--no-source-include", "-DBLOCK=256",
        "-DVEC=2",         "-DITEMS=4",           "-DKEVO_EVAL=1"};
    is_uint(n, KEVO_ARRAY_SIZE(want), "the fixed options and three -D");
    for (size_t i = 0; o && i < n && i < KEVO_ARRAY_SIZE(want); i++)
        is_str(o[i], want[i], "option %zu", i);
    ok(o && o[n] == NULL, "NULL-terminated");
    for (size_t i = 0; o && i < n; i++)
        ok(strncmp(o[i], "-I", 2) != 0 && strncmp(o[i], "--include", 9) != 0,
           "%s is no include path", o[i]);
    kevo__compile_options_free(o);
    o = kevo__compile_options("sm_90a", NULL, &n, &err);
    ok(o && n == 6 && strcmp(o[0], "-arch=sm_90a") == 0, "sm_90a, no params");
    kevo__compile_options_free(o);
    const char *bad[] = {"compute_90", "sm_9",      "sm_90ab",
                         "90",         "sm_90;-I/", ""};
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(bad); i++) {
        kevo_error_init(&err);
        o = kevo__compile_options(bad[i], NULL, &n, &err);
        ok(!o && err.code == KEVO_EINVAL, "arch \"%s\" refused", bad[i]);
        kevo__compile_options_free(o);
    }
    kevo_vars_free(p);
}

static void test_bad_workers(void)
{
    kevo_error err = KEVO__ERROR_INIT;
    kevo__compile_pool_config cfg = {
        .processes = 1, .worker = "/nonexistent/kevo-worker", .no_cache = true};
    kevo__compile_pool *pool = kevo__compile_pool_new(&cfg, &err);
    ok(pool == NULL, "a worker that does not exist");
    like_str(err.text, "/nonexistent/kevo-worker: cannot execute", "  says so");
    cfg.worker = "/bin/true";
    kevo_error_init(&err);
    pool = kevo__compile_pool_new(&cfg, &err);
    ok(pool == NULL, "a program that is no worker");
    like_str(err.text, "no hello: worker closed the pipe (exited with status",
             "  says so");
    is_int(err.code, KEVO_EWORKER, "  as a worker failure");
}

static void test_saxpy_and_cache(kevo__compile_pool *pool)
{
    kevo__compile_pool_stats st;
    kevo_vars *p = saxpy_params(256, 1, 1);
    const char *nvrtc = kevo__compile_pool_nvrtc_version(pool);
    int major = 0, minor = 0;

    ok(nvrtc && sscanf(nvrtc, "%d.%d", &major, &minor) == 2 && major >= 11,
       "NVRTC version %s", nvrtc ? nvrtc : "(none)");

    kevo__compile_result *r =
        compile(pool, saxpy_source, p, saxpy_kernel, 1, 0);
    ok(r->ok, "saxpy seed compiles for sm_90 (%s)", r->error ? r->error : "ok");
    ok(!r->cached, "not from the cache");
    ok(r->error == NULL, "no error");
    like_str(r->ptx, ".entry saxpy(", "the PTX has the .entry");
    like_str(r->ptx, ".target sm_90", "for sm_90");
    is_uint(strlen(r->ptx ? r->ptx : ""), r->ptx_len, "PTX length");
    ok(r->cubin_len > 1000 && r->cubin && memcmp(r->cubin, "\177ELF", 4) == 0,
       "an ELF cubin (%zu bytes)", r->cubin_len);
    like_str(r->log, "ptxas info    : Used", "the log has ptxas's line");
    like_str(r->log, "registers", "  with the registers");
    is_uint(r->nlowered, 1, "one lowered name");
    is_str(r->nlowered ? r->lowered[0] : NULL, "saxpy", "extern \"C\" name");
    is_str(r->nvrtc, nvrtc, "the NVRTC version");
    ok(r->seconds > 0 && r->seconds < 30, "NVRTC took %.3f s", r->seconds);
    ok(r->wall_seconds >= r->seconds * 0.5, "wall %.3f s", r->wall_seconds);
    diag("saxpy: %.3f s in NVRTC, %.3f s wall", r->seconds, r->wall_seconds);

    kevo__compile_pool_stats_get(pool, &st);
    uint64_t dispatched = st.dispatched;
    kevo__compile_result *again =
        compile(pool, saxpy_source, p, saxpy_kernel, 1, 0);
    ok(again->ok && again->cached, "the second compile is a cache hit");
    ok(again->ptx_len == r->ptx_len &&
           memcmp(again->ptx, r->ptx, r->ptx_len) == 0,
       "  with the same PTX");
    ok(again->cubin_len == r->cubin_len &&
           memcmp(again->cubin, r->cubin, r->cubin_len) == 0,
       "  the same cubin");
    is_str(again->log, r->log, "  the same log");
    is_str(again->nlowered ? again->lowered[0] : NULL, "saxpy",
           "  the same lowered name");
    is_double(again->seconds, r->seconds, 1e-6, "  the original NVRTC time");
    ok(again->wall_seconds < 1, "  fast (%.4f s)", again->wall_seconds);
    kevo__compile_pool_stats_get(pool, &st);
    is_uint(st.dispatched, dispatched, "  NVRTC did not run");
    is_uint(st.cache_hits, 1, "one hit");
    is_uint(st.cache_misses, 1, "one miss");
    kevo__compile_result_free(again);

    /* Other parameters are another key. */
    kevo_vars *p2 = saxpy_params(128, 4, 2);
    again = compile(pool, saxpy_source, p2, saxpy_kernel, 1, 0);
    ok(again->ok && !again->cached, "other parameters: compiled anew");
    ok(again->ptx_len != r->ptx_len ||
           memcmp(again->ptx, r->ptx, r->ptx_len) != 0,
       "  to other PTX");
    kevo__compile_result_free(again);
    kevo_vars_free(p2);

    /* The entries are files under KEVO_CACHE_DIR/compile. */
    char pattern[128];
    glob_t g;
    snprintf(pattern, sizeof pattern, "%s/compile/*.entry", cache_base);
    ok(glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc == 2,
       "two entries in %s/compile", cache_base);

    /* A corrupt entry is a miss, and is written again. */
    for (size_t i = 0; i < g.gl_pathc; i++) {
        FILE *f = fopen(g.gl_pathv[i], "r+b");
        if (!f)
            bail_out("cannot open %s", g.gl_pathv[i]);
        fseek(f, -10, SEEK_END);
        fputs("corrupted!", f);
        fclose(f);
    }
    globfree(&g);
    again = compile(pool, saxpy_source, p, saxpy_kernel, 1, 0);
    ok(again->ok && !again->cached, "a corrupt entry is ignored");
    ok(again->cubin_len == r->cubin_len &&
           memcmp(again->cubin, r->cubin, r->cubin_len) == 0,
       "  and the compile gives the same cubin");
    kevo__compile_result_free(again);
    again = compile(pool, saxpy_source, p, saxpy_kernel, 1, 0);
    ok(again->ok && again->cached, "  and the entry was written again");
    kevo__compile_result_free(again);

    /* Truncated to nothing: also a miss. */
    snprintf(pattern, sizeof pattern, "%s/compile/*.entry", cache_base);
    if (glob(pattern, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++)
            truncate(g.gl_pathv[i], 0);
        globfree(&g);
    }
    again = compile(pool, saxpy_source, p, saxpy_kernel, 1, 0);
    ok(again->ok && !again->cached, "an empty entry is ignored");
    kevo__compile_result_free(again);

    kevo__compile_result_free(r);
    kevo_vars_free(p);
}

static void test_failures(kevo__compile_pool *pool)
{
    kevo__compile_pool_stats st0, st;
    const char *bad = "__global__ void broken(float *x)\n"
                      "{\n"
                      "    x[0] = undefined_name + 1\n"
                      "}\n";
    kevo__compile_result *r = compile(pool, bad, NULL, NULL, 0, 0);
    ok(!r->ok, "a syntax error fails");
    like_str(r->error, "compile error: candidate.cu(3): error:",
             "  the error names the line");
    like_str(r->log, "identifier \"undefined_name\" is undefined",
             "  the log has NVRTC's message");
    ok(r->ptx == NULL && r->cubin == NULL, "  no code");
    ok(!r->cached, "  compiled");
    kevo__compile_result *again = compile(pool, bad, NULL, NULL, 0, 0);
    ok(!again->ok && again->cached, "the failure is cached");
    is_str(again->error, r->error, "  with the same error");
    is_str(again->log, r->log, "  and log");
    kevo__compile_result_free(again);
    kevo__compile_result_free(r);

    const char *const missing[] = {"nosuch"};
    kevo_vars *p = saxpy_params(256, 1, 1);
    r = compile(pool, saxpy_source, p, missing, 1, 0);
    ok(!r->ok, "a kernel name that is not defined fails");
    is_str(r->error, "kernel 'nosuch' is not defined in candidate.cu",
           "  and says which");
    kevo__compile_result_free(r);
    kevo_vars_free(p);

    kevo__compile_pool_stats_get(pool, &st0);
    const char *evil = "#include \"/etc/passwd\"\n"
                       "__global__ void k(float *x) { x[0] = 1; }\n";
    r = compile(pool, evil, NULL, NULL, 0, 0);
    ok(!r->ok, "#include \"/etc/passwd\" fails");
    is_str(r->error,
           "line 1: #include of \"/etc/passwd\" is not allowed: kernels may "
           "include only " KEVO__INCLUDE_ALLOWED_TEXT,
           "  with the clear message");
    is_str(r->log, "", "  no log");
    is_double(r->seconds, 0, 0, "  no NVRTC time");
    kevo__compile_pool_stats_get(pool, &st);
    is_uint(st.dispatched, st0.dispatched, "  NVRTC never saw it");
    is_uint(st.rejected, st0.rejected + 1, "  counted as rejected");
    kevo__compile_result_free(r);
}

static void test_timeout_and_kill(kevo__compile_pool *pool)
{
    kevo__compile_pool_stats st0, st;
    kevo_error err = KEVO__ERROR_INIT;
    kevo_vars *p = saxpy_params(512, 1, 1);

    kevo__compile_pool_stats_get(pool, &st0);
    kevo__compile_result *r = compile(pool, slow_source, NULL, NULL, 0, 300);
    ok(!r->ok, "a compile past its time limit fails");
    is_str(r->error, "compile timed out after 300 ms", "  and says so");
    ok(r->wall_seconds >= 0.29 && r->wall_seconds < 5, "  after %.3f s",
       r->wall_seconds);
    kevo__compile_pool_stats_get(pool, &st);
    is_uint(st.timeouts, st0.timeouts + 1, "  one timeout");
    ok(st.restarts > st0.restarts, "  the process was restarted");
    kevo__compile_result_free(r);
    r = compile(pool, saxpy_source, p, saxpy_kernel, 1, 0);
    ok(r->ok && !r->cached, "the next job succeeds");
    kevo__compile_result_free(r);
    kevo__compile_result_free(compile(pool, slow_source, NULL, NULL, 0, 300));
    r = compile(pool, slow_source, NULL, NULL, 0, 300);
    ok(!r->ok && !r->cached, "a time-out is not cached");
    kevo__compile_result_free(r);

    /* A compile process killed from outside. */
    kevo__compile_request req = {
        .source = slow_source, .arch = "sm_90", .timeout_ms = 60000};
    uint64_t id = 0;
    kevo__compile_pool_submit(pool, &req, &id, &err);
    long slot = kevo__compile_pool_job_slot(pool, id);
    ok(slot >= 0, "the slow job runs in slot %ld", slot);
    long pid = slot >= 0 ? kevo__compile_pool_pid(pool, (size_t)slot) : 0;
    ok(pid > 0, "  in process %ld", pid);
    sleep_ms(150);
    if (pid > 0)
        kill((pid_t)pid, SIGKILL);
    r = NULL;
    is_int(kevo__compile_pool_wait(pool, id, 10000, &r, &err), KEVO_OK,
           "the killed job finishes");
    ok(r && !r->ok, "  as a failure");
    is_str(r ? r->error : NULL,
           "compile process died (killed by signal 9 (Killed))",
           "  that says how the process ended");
    ok(r && r->wall_seconds < 5, "  at once");
    kevo__compile_result_free(r);
    ok(kevo__compile_pool_pid(pool, (size_t)(slot >= 0 ? slot : 0)) != pid,
       "a new process took its slot");
    kevo__compile_pool_stats_get(pool, &st);
    ok(st.deaths >= 1, "a death counted");
    kevo_vars_free(p);
    p = saxpy_params(512, 2, 1);
    r = compile(pool, saxpy_source, p, saxpy_kernel, 1, 0);
    ok(r->ok, "the next job succeeds");
    kevo__compile_result_free(r);
    kevo_vars_free(p);

    /* Both processes stuck, a job queued behind them: it still runs. */
    uint64_t a = 0, b = 0, c = 0;
    req.timeout_ms = 400;
    kevo__compile_pool_submit(pool, &req, &a, &err);
    kevo__compile_pool_submit(pool, &req, &b, &err);
    p = saxpy_params(1024, 1, 2);
    kevo__compile_request good = {.source = saxpy_source,
                                  .params = p,
                                  .arch = "sm_90",
                                  .kernels = saxpy_kernel,
                                  .nkernels = 1};
    kevo__compile_pool_submit(pool, &good, &c, &err);
    is_int(kevo__compile_pool_job_slot(pool, c), -1, "the third job waits");
    is_uint(kevo__compile_pool_pending(pool), 3, "three jobs pending");
    int seen = 0;
    while (kevo__compile_pool_poll(pool, 20000, &r, &err) == KEVO_OK && r) {
        if (r->id == c)
            ok(r->ok, "the job queued behind two time-outs compiles (%s)",
               r->error ? r->error : "ok");
        else
            is_str(r->error, "compile timed out after 400 ms",
                   "job %llu timed out", (unsigned long long)r->id);
        seen++;
        kevo__compile_result_free(r);
    }
    is_int(seen, 3, "all three finished");
    r = (kevo__compile_result *)1;
    is_int(kevo__compile_pool_poll(pool, 100, &r, &err), KEVO_DONE,
           "then nothing is pending");
    ok(r == NULL, "  and no result");
    kevo_vars_free(p);
}

static void test_many(void)
{
    kevo_error err = KEVO__ERROR_INIT;
    kevo__compile_pool_config cfg = {
        .processes = 2, .worker = worker_path(), .no_cache = true};
    kevo__compile_pool *pool = kevo__compile_pool_new(&cfg, &err);
    ok(pool != NULL, "a pool without cache (%s)", err.text);
    if (!pool)
        return;
    is_uint(kevo__compile_pool_processes(pool), 2, "of two processes");
    enum { N = 8 };
    uint64_t ids[N];
    bool done[N] = {false};
    for (int i = 0; i < N; i++) {
        kevo_vars *p = saxpy_params(64 << (i % 4), 1 << (i / 4), 1);
        kevo__compile_request req = {.source = saxpy_source,
                                     .params = p,
                                     .arch = "sm_90",
                                     .kernels = saxpy_kernel,
                                     .nkernels = 1};
        kevo__compile_pool_submit(pool, &req, &ids[i], &err);
        kevo_vars_free(p);
    }
    struct pollfd fds[4];
    is_uint(kevo__compile_pool_pollfds(pool, fds, 4), 2, "two fds to poll");
    ok(kevo__compile_pool_timeout_ms(pool) > 0, "a time limit to wake for");
    int finished = 0, good = 0;
    kevo__compile_result *r;
    double seconds = 0;
    while (kevo__compile_pool_poll(pool, -1, &r, &err) == KEVO_OK && r) {
        for (int i = 0; i < N; i++) {
            if (ids[i] == r->id && !done[i]) {
                done[i] = true;
                finished++;
            }
        }
        good += r->ok && !r->cached;
        seconds += r->seconds;
        kevo__compile_result_free(r);
    }
    is_int(finished, N, "all %d jobs came back once", N);
    is_int(good, N, "  compiled");
    kevo__compile_pool_stats st;
    kevo__compile_pool_stats_get(pool, &st);
    is_uint(st.dispatched, N, "  each by a process");
    is_uint(st.cache_hits + st.cache_misses, 0, "  without the cache");
    diag("%d compiles, %.2f s of NVRTC time", N, seconds);
    is_int(kevo__compile_pool_timeout_ms(pool), -1, "nothing left to wait for");
    kevo__compile_pool_free(pool);
}

int main(void)
{
    char *path =
        kevo__asprintf("%s/examples/tasks/saxpy_seed.cu", tap_srcdir());
    size_t len = 0;
    kevo_error err = KEVO__ERROR_INIT;

    if (access(worker_path(), X_OK) != 0)
        skip_all("no kevo-worker at %s", worker_path());
    if (!path || kevo__read_file(path, true, &saxpy_source, &len, NULL))
        bail_out("cannot read %s", path ? path : "saxpy_seed.cu");
    free(path);
    snprintf(cache_base, sizeof cache_base, "/tmp/kevo-test-cache-XXXXXX");
    if (!mkdtemp(cache_base))
        bail_out("mkdtemp: %s", strerror(errno));
    setenv("KEVO_CACHE_DIR", cache_base, 1);
    setenv("KEVO_WORKER", worker_path(), 1);

    test_options();
    test_bad_workers();

    kevo__compile_pool_config cfg = {.processes = 2};
    kevo__compile_pool *pool = kevo__compile_pool_new(&cfg, &err);
    ok(pool != NULL, "a pool of two compile processes (%s)", err.text);
    if (pool) {
        kevo__compile_result *r = NULL;
        is_int(kevo__compile_pool_poll(pool, 0, &r, &err), KEVO_DONE,
               "an empty pool has nothing to poll");
        kevo_error_init(&err);
        is_int(kevo__compile_pool_wait(pool, 42, 0, &r, &err), KEVO_ENOENT,
               "no job 42");
        test_saxpy_and_cache(pool);
        test_failures(pool);
        test_timeout_and_kill(pool);
        kevo__compile_pool_free(pool);
    }
    test_many();

    nftw(cache_base, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(saxpy_source);
    return done_testing();
}

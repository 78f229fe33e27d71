/*
 * test-compile-pool.c: the compile pool with real kevo-worker processes and
 * real NVRTC: PTX, cubin and the ptxas log of a task-suite seed; the
 * compile cache (hits, corrupt entries, cached failures); compile errors;
 * a forbidden #include that never reaches NVRTC; kernels that include and
 * use each allowed header (from the compile processes' memory, never
 * through an include path), and headers that stay forbidden although the
 * processes hold them; a toolkit of test headers in $CUDA_HOME, whose other
 * header hash means other cache entries; the sandbox: a kernel that probes
 * host files with a token-pasted __has_include finds nothing where the
 * compile processes are confined (and finds the file with
 * KEVO_NO_SANDBOX=1); a compile past its time limit; a compile process
 * killed from outside; jobs queued behind failed ones; many jobs over two
 * processes.
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

#include "eval/compile_pool.h"
#include "proc/include_scan.h"
#include "proc/ipc.h"
#include "proc/procpool.h"
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

/* Submits a job for arch and waits for its result. */
static kevo__compile_result *compile_for(kevo__compile_pool *pool,
                                         const char *arch, const char *source,
                                         const kevo_vars *p,
                                         const char *const *kernels, size_t nk,
                                         int timeout_ms)
{
    kevo__compile_request req = {.source = source,
                                 .params = p,
                                 .arch = arch,
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

/* The same for sm_90. */
static kevo__compile_result *compile(kevo__compile_pool *pool,
                                     const char *source, const kevo_vars *p,
                                     const char *const *kernels, size_t nk,
                                     int timeout_ms)
{
    return compile_for(pool, "sm_90", source, p, kernels, nk, timeout_ms);
}

static const char *worker_path(void)
{
    static char path[4096];
    const char *w = getenv("KEVO_WORKER");
    const char *b = getenv("KEVO_BUILDDIR");
    if (w && *w)
        return w;
    snprintf(path, sizeof path, "%s/worker/kevo-worker", b && *b ? b : ".");
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

/* A kernel with one warpgroup MMA (m64n128k16, 64 f32 accumulators a
 * thread) and a limit of REGS registers a thread; the operands' shared
 * memory descriptors are the kernel's arguments. */
static char *wgmma_source(int regs)
{
    char outs[64 * 16] = "", regs_list[64 * 8] = "";
    for (int i = 0; i < 64; i++) {
        size_t o = strlen(outs), q = strlen(regs_list);
        snprintf(outs + o, sizeof outs - o, "%s\"+f\"(d[%d])", i ? ", " : "",
                 i);
        snprintf(regs_list + q, sizeof regs_list - q, "%s%%%d", i ? "," : "",
                 i);
    }
    char *src = kevo__asprintf(
        "extern \"C\" __global__ void __maxnreg__(%d)\n"
        "gemm_bf16(float *out, unsigned long long da, unsigned long long db)\n"
        "{\n"
        "    float d[64];\n"
        "    for (int i = 0; i < 64; i++)\n"
        "        d[i] = out[i * 128 + threadIdx.x];\n"
        "    asm volatile(\"wgmma.fence.sync.aligned;\");\n"
        "    asm volatile(\"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16."
        "bf16 {%s}, %%64, %%65, 1, 1, 1, 0, 0;\"\n"
        "                 : %s\n"
        "                 : \"l\"(da), \"l\"(db));\n"
        "    asm volatile(\"wgmma.commit_group.sync.aligned;\");\n"
        "    asm volatile(\"wgmma.wait_group.sync.aligned 0;\");\n"
        "    for (int i = 0; i < 64; i++)\n"
        "        out[i * 128 + threadIdx.x] = d[i];\n"
        "}\n",
        regs, regs_list, outs);
    if (!src)
        bail_out("out of memory");
    return src;
}

/* Replaces the reason of the one cached failure whose reason holds
 * needle with why, as an older kevo may have stored it. */
static bool stale_reason(const char *needle, const char *why)
{
    char pattern[128];
    glob_t g;
    bool done = false;
    snprintf(pattern, sizeof pattern, "%s/compile/*.entry", cache_base);
    if (glob(pattern, 0, NULL, &g) != 0)
        return false;
    for (size_t i = 0; i < g.gl_pathc && !done; i++) {
        char *text = NULL;
        size_t len = 0;
        if (kevo__read_file(g.gl_pathv[i], false, &text, &len, NULL) != KEVO_OK)
            continue;
        char *nl = strchr(text, '\n');
        char *meta = nl ? strchr(nl + 1, '\n') : NULL;
        char *at = strstr(text, "\"compile error: ");
        char *hit = at ? strstr(at, needle) : NULL;
        char *end = hit && meta && hit < meta ? strchr(hit, '"') : NULL;
        if (end) {
            at++;
            FILE *f = fopen(g.gl_pathv[i], "wb");
            done = f &&
                   fwrite(text, 1, (size_t)(at - text), f) ==
                       (size_t)(at - text) &&
                   fputs(why, f) >= 0 &&
                   fwrite(end, 1, len - (size_t)(end - text), f) ==
                       len - (size_t)(end - text);
            if (f && fclose(f) != 0)
                done = false;
        }
        free(text);
    }
    globfree(&g);
    return done;
}

/* ptxas's errors: the reason is the line that says what is wrong, never
 * ptxas's closing "Ptx assembly aborted due to errors"; a cached failure
 * stored with that closing line for a reason gets the real one again. */
static void test_ptxas_errors(kevo__compile_pool *pool)
{
    const char *const gemm[] = {"gemm_bf16"};
    char *src = wgmma_source(40);
    kevo__compile_result *r = compile_for(pool, "sm_90", src, NULL, gemm, 1, 0);
    ok(!r->ok, "wgmma for sm_90 fails");
    like_str(r->error, "compile error: ptxas application ptx input, line ",
             "  in ptxas");
    like_str(r->error,
             "error   : Instruction 'wgmma.fence' not supported on .target "
             "'sm_90'",
             "  which says wgmma is not there");
    ok(!strstr(r->error, "aborted"), "  not ptxas's closing line (%s)",
       r->error);
    like_str(r->log, "Ptx assembly aborted due to errors",
             "  which the log has");
    kevo__compile_result_free(r);

    r = compile_for(pool, "sm_90a", src, NULL, gemm, 1, 0);
    ok(!r->ok, "wgmma for sm_90a, in 40 registers, fails");
    like_str(r->error,
             "compile error: ptxas fatal   : (C7602) Insufficient registers "
             "(40) to compile instruction at line ",
             "  with ptxas's C7602");
    like_str(r->error,
             "in function gemm_bf16. Try to compile with register "
             "target of ",
             "  which names the kernel and the registers it needs");
    ok(!strstr(r->error, "aborted"), "  not ptxas's closing line (%s)",
       r->error);
    char *real = kevo__strdup(r->error);
    kevo__compile_result_free(r);

    ok(stale_reason("(C7602)", "compile error: ptxas fatal   : Ptx assembly "
                               "aborted due to errors"),
       "the cached failure made stale");
    r = compile_for(pool, "sm_90a", src, NULL, gemm, 1, 0);
    ok(!r->ok && r->cached, "  comes from the cache");
    is_str(r->error, real, "  with the reason made again from its log");
    kevo__compile_result_free(r);
    free(real);
    free(src);

    src = wgmma_source(168);
    r = compile_for(pool, "sm_90a", src, NULL, gemm, 1, 0);
    ok(r->ok, "wgmma for sm_90a, in 168 registers, compiles (%s)",
       r->error ? r->error : "ok");
    like_str(r->ptx, "wgmma.mma_async", "  to wgmma");
    kevo__compile_result_free(r);
    free(src);
}

/* What each target has, as the llm operator's prompt tells models
 * (operators/llm/prompt_device.c): each instruction compiled for each
 * target, 1 where it compiles. A target NVRTC does not know is skipped. */
static void test_targets(kevo__compile_pool *pool)
{
    static const struct {
        const char *what, *code;
    } probes[] = {
        {"wgmma", "asm volatile(\"wgmma.fence.sync.aligned;\");"},
        {"setmaxnreg", "asm volatile(\"setmaxnreg.inc.sync.aligned.u32 "
                       "240;\");"},
        {"clusters", "unsigned r;\n"
                     "asm volatile(\"mov.u32 %0, %%cluster_ctarank;\" "
                     ": \"=r\"(r));\n"
                     "x[0] = r;"},
        {"cp.async.bulk",
         "__shared__ __align__(128) int s[32];\n"
         "__shared__ unsigned long long bar;\n"
         "asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::"
         "complete_tx::bytes [%0], [%1], 128, [%2];\" :: "
         "\"r\"((unsigned)__cvta_generic_to_shared(s)), \"l\"(x), "
         "\"r\"((unsigned)__cvta_generic_to_shared(&bar)) : \"memory\");\n"
         "x[1] = s[0];"},
        {"tcgen05", "asm volatile(\"tcgen05.fence::before_thread_sync;\");"},
        {"mma.sync", "unsigned a[4] = {0}, b[2] = {0};\n"
                     "float c[4] = {0};\n"
                     "asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32."
                     "bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\" : \"+f\"(c[0]), \"+f\"(c[1]), "
                     "\"+f\"(c[2]), \"+f\"(c[3]) : \"r\"(a[0]), \"r\"(a[1]), "
                     "\"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
                     "x[0] = (int)c[0];"},
    };
    /* wgmma, setmaxnreg, clusters, cp.async.bulk, tcgen05, mma.sync */
    static const struct {
        const char *arch;
        int has[6];
    } targets[] = {
        {"sm_80", {0, 0, 0, 0, 0, 1}},   {"sm_90", {0, 0, 1, 1, 0, 1}},
        {"sm_90a", {1, 1, 1, 1, 0, 1}},  {"sm_100a", {0, 1, 1, 1, 1, 1}},
        {"sm_120a", {0, 1, 1, 1, 0, 1}},
    };
    for (size_t a = 0; a < KEVO_ARRAY_SIZE(targets); a++) {
        for (size_t p = 0; p < KEVO_ARRAY_SIZE(probes); p++) {
            char *src = kevo__asprintf("extern \"C\" __global__ void "
                                       "probe(int *x)\n{\n%s\n}\n",
                                       probes[p].code);
            if (!src)
                bail_out("out of memory");
            kevo__compile_result *r =
                compile_for(pool, targets[a].arch, src, NULL, NULL, 0, 0);
            free(src);
            if (!r->ok && r->error && strstr(r->error, "INVALID_OPTION")) {
                diag("NVRTC does not know %s: %s", targets[a].arch, r->error);
                kevo__compile_result_free(r);
                break;
            }
            is_int(r->ok, targets[a].has[p], "%s %s %s", targets[a].arch,
                   targets[a].has[p] ? "has" : "lacks", probes[p].what);
            kevo__compile_result_free(r);
        }
    }
}

static char *read_case(const char *file)
{
    char *path =
        kevo__asprintf("%s/tests/data/includes/%s", tap_srcdir(), file);
    char *text = NULL;
    size_t len = 0;
    if (!path || kevo__read_file(path, true, &text, &len, NULL) != KEVO_OK)
        bail_out("cannot read %s", path ? path : file);
    free(path);
    return text;
}

/* The PTX of entry name: from ".entry name(" to the next entry. */
static char *entry_ptx(const char *ptx, const char *name)
{
    char *needle = kevo__asprintf(".entry %s(", name);
    const char *start = needle && ptx ? strstr(ptx, needle) : NULL;
    free(needle);
    if (!start)
        return kevo__strdup("");
    const char *end = strstr(start + 1, ".entry ");
    return kevo__strndup(start, end ? (size_t)(end - start) : strlen(start));
}

static void like_entry(const kevo__compile_result *r, const char *entry,
                       const char *needle, const char *what)
{
    char *body = entry_ptx(r->ptx, entry);
    like_str(body, needle, "  %s: %s in its PTX", entry, what);
    free(body);
}

/* Kernels that include the allowed headers and use them; the two jobs run
 * side by side (cooperative groups bring in most of <cuda/std/...> and
 * take seconds). */
static void test_headers(kevo__compile_pool *pool)
{
    kevo__compile_headers h;
    kevo__compile_pool_stats st0, st;
    kevo_error err = KEVO__ERROR_INIT;
    char *most = read_case("ok-nvrtc-headers.cu");
    char *cg = read_case("ok-nvrtc-cooperative-groups.cu");
    const char *const most_kernels[] = {
        "half_axpy", "bf16_scale", "staged_copy", "wmma_tile", "std_limits"};
    const char *const cg_kernels[] = {"warp_sum"};

    kevo__compile_pool_headers(pool, &h);
    diag("headers from %s: %zu files under %zu names, %zu bytes, hash %s, "
         "loaded in %.3f s",
         h.dir ? h.dir : "(none)", h.files, h.names, h.bytes, h.hash,
         h.seconds);
    ok(h.dir != NULL, "the compile processes found the toolkit headers");
    ok(h.files >= 7 && h.names >= h.files && h.bytes > h.files,
       "  %zu files, %zu names, %zu bytes", h.files, h.names, h.bytes);
    ok(strlen(h.hash) == 16 && strspn(h.hash, "0123456789abcdef") == 16,
       "  their hash %s", h.hash);

    kevo__compile_request a = {.source = most,
                               .arch = "sm_90",
                               .kernels = most_kernels,
                               .nkernels = KEVO_ARRAY_SIZE(most_kernels)};
    kevo__compile_request b = {.source = cg,
                               .arch = "sm_90",
                               .kernels = cg_kernels,
                               .nkernels = KEVO_ARRAY_SIZE(cg_kernels)};
    uint64_t ia = 0, ib = 0;
    kevo__compile_result *ra = NULL, *rb = NULL;
    if (kevo__compile_pool_submit(pool, &a, &ia, &err) != KEVO_OK ||
        kevo__compile_pool_submit(pool, &b, &ib, &err) != KEVO_OK)
        bail_out("submit: %s", err.text);
    if (kevo__compile_pool_wait(pool, ia, 60000, &ra, &err) != KEVO_OK || !ra ||
        kevo__compile_pool_wait(pool, ib, 60000, &rb, &err) != KEVO_OK || !rb)
        bail_out("wait: %s", err.text);
    ok(ra->ok,
       "<cuda_fp16.h>, <cuda_bf16.h>, <cuda_pipeline.h>, <mma.h>, "
       "<cuda/std/cstdint> and <cuda/std/limits> compile (%s)",
       ra->error ? ra->error : "ok");
    if (!ra->ok)
        diag("%s", ra->log ? ra->log : "");
    diag("their compile took %.3f s", ra->seconds);
    like_entry(ra, "half_axpy", "fma.rn.f16", "__half arithmetic");
    like_entry(ra, "half_axpy", "cvt.rn.f16.f32", "__float2half");
    like_entry(ra, "bf16_scale", "mul.bf16", "__nv_bfloat16 arithmetic");
    like_entry(ra, "staged_copy", "cp.async.ca.shared.global",
               "__pipeline_memcpy_async");
    like_entry(ra, "wmma_tile", "wmma.mma.sync.aligned", "wmma::mma_sync");
    like_entry(ra, "std_limits", "2147483647",
               "cuda::std::numeric_limits<int32_t>::max()");
    is_uint(ra->nlowered, 5, "  five lowered names");
    ok(rb->ok,
       "<cooperative_groups.h> and <cooperative_groups/reduce.h> "
       "compile (%s)",
       rb->error ? rb->error : "ok");
    if (!rb->ok)
        diag("%s", rb->log ? rb->log : "");
    diag("their compile took %.3f s", rb->seconds);
    like_entry(rb, "warp_sum", "shfl.sync.bfly",
               "cg::reduce over a tiled_partition<32>");
    kevo__compile_result_free(ra);
    kevo__compile_result_free(rb);

    /* What the processes hold is not therefore allowed. */
    static const struct {
        const char *source, *quoted;
    } refused[] = {
        {"#include \"cuda_fp16.h\"\n", "\"cuda_fp16.h\""},
        {"#include <cuda_runtime.h>\n", "<cuda_runtime.h>"},
        {"#include <stdio.h>\n", "<stdio.h>"},
        {"#include <cuda_fp16.hpp>\n", "<cuda_fp16.hpp>"},
        {"#include <cooperative_groups/details/info.h>\n",
         "<cooperative_groups/details/info.h>"},
        {"#include <nv/target>\n", "<nv/target>"},
        {"#include <cuda/std/../../cuda_runtime_api.h>\n",
         "<cuda/std/../../cuda_runtime_api.h>"},
    };
    kevo__compile_pool_stats_get(pool, &st0);
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(refused); i++) {
        char *src = kevo__asprintf("%s__global__ void k(float *x) { x[0] = 1; "
                                   "}\n",
                                   refused[i].source);
        char *want = kevo__asprintf("line 1: #include of %s is not allowed: "
                                    "kernels may include only "
                                    "" KEVO__INCLUDE_ALLOWED_TEXT,
                                    refused[i].quoted);
        if (!src || !want)
            bail_out("out of memory");
        kevo__compile_result *r = compile(pool, src, NULL, NULL, 0, 0);
        ok(!r->ok, "#include %s fails", refused[i].quoted);
        is_str(r->error, want, "  with the scan's message");
        kevo__compile_result_free(r);
        free(src);
        free(want);
    }
    kevo__compile_pool_stats_get(pool, &st);
    is_uint(st.dispatched, st0.dispatched, "  none reached NVRTC");
    free(most);
    free(cg);
}

/* Writes text to base/rel, making the directories. */
static void put_file(const char *base, const char *rel, const char *text)
{
    char *path = kevo__path_join(base, rel);
    char *dir = path ? kevo__dirname(path) : NULL;
    FILE *f = NULL;
    if (!dir || kevo__mkdir_p(dir, NULL) != KEVO_OK ||
        !(f = fopen(path, "w")) || fputs(text, f) < 0 || fclose(f) != 0)
        bail_out("cannot write %s", path ? path : rel);
    free(dir);
    free(path);
}

/* A toolkit of test headers in $CUDA_HOME: the processes load those
 * instead (following quoted includes beside the header that has them, not
 * out of the include directory), and their other hash keeps the cache
 * entries of the real toolkit's apart. */
static void test_other_toolkit(kevo__compile_pool *pool)
{
    char home[64];
    kevo_error err = KEVO__ERROR_INIT;
    kevo__compile_headers h, real;
    const char *plain = "__global__ void plain(float *x) { x[0] = 2; }\n";

    snprintf(home, sizeof home, "/tmp/kevo-test-cuda-XXXXXX");
    if (!mkdtemp(home))
        bail_out("mkdtemp: %s", strerror(errno));
    put_file(home, "include/cuda_fp16.h",
             "#pragma once\n#include \"detail/half.h\"\n");
    put_file(home, "include/detail/half.h",
             "#include \"more.h\"\n#define TEST_HALF 16\n");
    put_file(home, "include/detail/more.h", "#define TEST_MORE 1\n");
    put_file(home, "include/mma.h", "#include \"../outside.h\"\n");
    put_file(home, "outside.h", "#error read from outside\n");
    put_file(home, "include/cuda/std/tiny", "#define TEST_TINY 3\n");

    kevo__compile_result *r = compile(pool, plain, NULL, NULL, 0, 0);
    ok(r->ok && !r->cached, "a plain kernel compiles");
    kevo__compile_result_free(r);
    r = compile(pool, plain, NULL, NULL, 0, 0);
    ok(r->ok && r->cached, "  and is cached");
    kevo__compile_result_free(r);

    setenv("CUDA_HOME", home, 1);
    kevo__compile_pool_config cfg = {.processes = 1};
    kevo__compile_pool *other = kevo__compile_pool_new(&cfg, &err);
    unsetenv("CUDA_HOME");
    ok(other != NULL, "a pool with CUDA_HOME=%s (%s)", home, err.text);
    if (other) {
        kevo__compile_pool_headers(other, &h);
        kevo__compile_pool_headers(pool, &real);
        char *want_dir = kevo__path_join(home, "include");
        is_str(h.dir, want_dir, "its headers come from $CUDA_HOME/include");
        free(want_dir);
        is_uint(h.files, 5, "  five files: not outside.h");
        is_uint(h.names, 6, "  under six names (more.h also as \"more.h\")");
        ok(strcmp(h.hash, real.hash) != 0, "  another hash (%s, %s)", h.hash,
           real.hash);
        r = compile(other, plain, NULL, NULL, 0, 0);
        ok(r->ok && !r->cached, "the plain kernel is no cache hit there");
        kevo__compile_result_free(r);
        r = compile(other,
                    "#include <cuda_fp16.h>\n#include <cuda/std/tiny>\n"
                    "static_assert(TEST_HALF + TEST_MORE + TEST_TINY == 20, "
                    "\"\");\n__global__ void k(float *x) { x[0] = 1; }\n",
                    NULL, NULL, 0, 0);
        ok(r->ok,
           "the test headers are included, quoted includes found "
           "beside them (%s)",
           r->error ? r->error : "ok");
        kevo__compile_result_free(r);
        r = compile(other, "#include <mma.h>\n", NULL, NULL, 0, 0);
        ok(!r->ok, "a header that includes one outside the include "
                   "directory fails");
        like_str(r->log, "could not open source file \"../outside.h\"",
                 "  NVRTC never had it");
        kevo__compile_result_free(r);
        kevo__compile_pool_free(other);
    }
    r = compile(pool, plain, NULL, NULL, 0, 0);
    ok(r->ok && r->cached, "the real toolkit's entry is still there");
    kevo__compile_result_free(r);
    nftw(home, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The "sandbox" of the hello of a compile process started here, in this
 * process's environment (as a pool's processes are), as a new string. */
static char *hello_sandbox(void)
{
    kevo__proc p = KEVO__PROC_INIT;
    kevo__frame f = {0};
    kevo_error err = KEVO__ERROR_INIT;
    char *argv[] = {(char *)worker_path(), "compile", NULL};

    if (kevo__proc_spawn(&p, worker_path(), argv, &err) != KEVO_OK ||
        kevo__ipc_recv(p.from_fd, 30000, &f, &err) != KEVO_OK)
        bail_out("no hello from %s compile: %s", worker_path(), err.text);
    const char *s = json_string_value(json_object_get(f.json, "sandbox"));
    char *sandbox = kevo__strdup(s ? s : "(no \"sandbox\" in the hello)");
    kevo__frame_clear(&f);
    kevo__proc_finish(&p, 5000, NULL);
    if (!sandbox)
        bail_out("out of memory");
    return sandbox;
}

/* Ways to ask the preprocessor whether a host file exists that the include
 * scan cannot see: the name is put together by token pasting. */
static const struct {
    const char *what, *prelude, *left, *right;
} probes[] = {
    {"__has_include", "", "__has_", "include"},
    {"__has_include_next", "", "__has_", "include_next"},
    {"_CCCL_HAS_INCLUDE", "#include <cuda/std/cstdint>\n", "_CCCL_HAS_",
     "INCLUDE"},
};

/* A kernel that stops with "#error found PATH" when the probe finds path. */
static char *probe_source(size_t probe, const char *path)
{
    char *src = kevo__asprintf(
        "%s#define CAT(a, b) a##b\n"
        "#if CAT(%s, %s)(\"%s\")\n"
        "#error found %s\n"
        "#endif\n"
        "extern \"C\" __global__ void probe(int *x) { x[0] = 1; }\n",
        probes[probe].prelude, probes[probe].left, probes[probe].right, path,
        path);
    if (!src)
        bail_out("out of memory");
    return src;
}

/* Compiles the probe kernels of every probe and path in pool, side by
 * side; results[probe * npaths + path]. */
static void compile_probes(kevo__compile_pool *pool, const char *const *paths,
                           size_t npaths, kevo__compile_result **results)
{
    kevo_error err = KEVO__ERROR_INIT;
    size_t n = KEVO_ARRAY_SIZE(probes) * npaths;
    uint64_t ids[KEVO_ARRAY_SIZE(probes) * 2];

    if (n > KEVO_ARRAY_SIZE(ids))
        bail_out("too many probes");
    for (size_t i = 0; i < n; i++) {
        char *src = probe_source(i / npaths, paths[i % npaths]);
        kevo__compile_request req = {.source = src, .arch = "sm_90"};
        if (kevo__compile_pool_submit(pool, &req, &ids[i], &err) != KEVO_OK)
            bail_out("submit: %s", err.text);
        free(src);
    }
    for (size_t i = 0; i < n; i++) {
        results[i] = NULL;
        if (kevo__compile_pool_wait(pool, ids[i], 60000, &results[i], &err) !=
                KEVO_OK ||
            !results[i])
            bail_out("wait for probe %zu: %s", i, err.text);
    }
}

/* A kernel can make NVRTC look for a host file by a __has_include that it
 * builds by token pasting (no text scan sees it); in a confined compile
 * process the file is never found. The same kernels in processes started
 * with KEVO_NO_SANDBOX=1 show that the probe works. */
static void test_sandbox(kevo__compile_pool *pool)
{
    kevo_error err = KEVO__ERROR_INIT;
    kevo__compile_pool_stats st0, st;
    char *self_rel = kevo__path_join(tap_srcdir(), "tests/test-compile-pool.c");
    char *self = self_rel ? realpath(self_rel, NULL) : NULL;
    char *missing = self ? kevo__asprintf("%s.missing", self) : NULL;
    enum { NPATHS = 2, N = KEVO_ARRAY_SIZE(probes) * NPATHS };
    const char *paths[NPATHS] = {self, missing};
    kevo__compile_result *results[N];

    if (!self || !missing)
        bail_out("cannot name the test's own source %s",
                 self_rel ? self_rel : "");

    char *sandbox = hello_sandbox();
    diag("the compile processes' sandbox: %s", sandbox);
    ok(strncmp(sandbox, "landlock ABI ", 13) == 0 ||
           strncmp(sandbox, "none: ", 6) == 0,
       "the hello says what sandbox there is (%s)", sandbox);
    bool confined = strncmp(sandbox, "landlock ABI ", 13) == 0;

    kevo__compile_pool_stats_get(pool, &st0);
    compile_probes(pool, paths, NPATHS, results);
    kevo__compile_pool_stats_get(pool, &st);
    is_uint(st.rejected, st0.rejected, "the include scan lets every probe by");
    for (size_t i = 0; i < N; i++) {
        const char *what = probes[i / NPATHS].what;
        const char *path = paths[i % NPATHS];
        if (confined)
            ok(results[i]->ok,
               "%s(\"%s\") finds nothing in a confined "
               "compile process (%s)",
               what, path, results[i]->error ? results[i]->error : "ok");
        else
            ok(1, "%s(\"%s\") # SKIP no sandbox here: %s", what, path, sandbox);
        kevo__compile_result_free(results[i]);
    }

    const char *was = getenv("KEVO_NO_SANDBOX");
    char *saved = was ? kevo__strdup(was) : NULL;
    setenv("KEVO_NO_SANDBOX", "1", 1);
    char *off = hello_sandbox();
    kevo__compile_pool_config cfg = {.processes = 2, .no_cache = true};
    kevo__compile_pool *open = kevo__compile_pool_new(&cfg, &err);
    if (saved)
        setenv("KEVO_NO_SANDBOX", saved, 1);
    else
        unsetenv("KEVO_NO_SANDBOX");
    free(saved);
    is_str(off, "none: KEVO_NO_SANDBOX=1",
           "with KEVO_NO_SANDBOX=1 the hello says there is none");
    ok(open != NULL, "a pool with KEVO_NO_SANDBOX=1 (%s)", err.text);
    if (open) {
        compile_probes(open, paths, NPATHS, results);
        for (size_t i = 0; i < N; i++) {
            const char *what = probes[i / NPATHS].what;
            const char *path = paths[i % NPATHS];
            if (path == missing) {
                ok(results[i]->ok, "%s(\"%s\") finds nothing unconfined", what,
                   path);
            } else {
                ok(!results[i]->ok, "%s(\"%s\") finds it unconfined", what,
                   path);
                like_str(results[i]->error, "#error directive: found",
                         "  by the #error");
            }
            kevo__compile_result_free(results[i]);
        }
        kevo__compile_pool_free(open);
    }
    free(off);
    free(sandbox);
    free(missing);
    free(self);
    free(self_rel);
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
        test_ptxas_errors(pool);
        test_targets(pool);
        test_headers(pool);
        test_other_toolkit(pool);
        test_sandbox(pool);
        test_timeout_and_kill(pool);
        kevo__compile_pool_free(pool);
    }
    test_many();

    nftw(cache_base, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(saxpy_source);
    return done_testing();
}

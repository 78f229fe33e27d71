/*
 * nvrtc-worker: what the GPU worker does without a GPU. NVRTC compiles the
 * worker's own CUDA source (worker/kernels.cu.h) for every architecture
 * it supports from sm_75 on, and the PTX has every kernel the worker looks
 * up, with the compare kernels' shared reduction sized for the host's
 * struct kevo__cmp (the ceiling probes are nvrtc-peaks'); the timing
 * statistics (median, percentiles, spread, coefficient of variation); the
 * split of a batch's kernel records into repetitions by the L2 flush
 * kernel's records; the timing options of an eval message, read with the
 * evaluator's option table; the "task" message and an eval of a key the
 * worker does not hold, answered by the worker's own handlers over a pipe
 * (no CUDA call comes before those answers); and a real `kevo-worker gpu`
 * process says hello: with the device's properties where there is a GPU,
 * or "no CUDA driver" and exit status 3 where there is none.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nvrtc.h>

#include "gpu.h"
#include "gpu_eval.h"
#include "kernels.cu.h"
#include "proc/ipc.h"
#include "proc/procpool.h"
#include "suite_util.h"
#include "tap.h"

/* Compiles the worker's source for arch; PTX (compute_) or a cubin (sm_)
 * in a new buffer, NULL with the log printed on failure. */
static char *compile(const char *arch, size_t *size)
{
    nvrtcProgram prog = NULL;
    char opt[64];
    const char *opts[] = {opt, "-std=c++17"};
    bool cubin = strncmp(arch, "sm_", 3) == 0;
    char *out = NULL;
    snprintf(opt, sizeof(opt), "--gpu-architecture=%s", arch);
    if (nvrtcCreateProgram(&prog, kevo__kernels_source, "kevo_internal.cu", 0,
                           NULL, NULL) != NVRTC_SUCCESS)
        return NULL;
    nvrtcResult r = nvrtcCompileProgram(prog, 2, opts);
    if (r != NVRTC_SUCCESS) {
        size_t n = 0;
        char *log = NULL;
        if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS &&
            (log = calloc(1, n + 1)) &&
            nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS)
            diag("%s: %s", arch, log);
        free(log);
    } else if ((cubin ? nvrtcGetCUBINSize(prog, size)
                      : nvrtcGetPTXSize(prog, size)) == NVRTC_SUCCESS &&
               (out = calloc(1, *size + 1)) != NULL &&
               (cubin ? nvrtcGetCUBIN(prog, out) : nvrtcGetPTX(prog, out)) !=
                   NVRTC_SUCCESS) {
        free(out);
        out = NULL;
    }
    nvrtcDestroyProgram(&prog);
    return out;
}

static void check_entries(const char *ptx, const char *arch)
{
    static const char *const fixed[] = {
        "kevo_internal_compare_reduce",
        "kevo_internal_equal",
        "kevo_internal_flush_l2",
    };
    kevo_buf missing = {0};
    size_t found = 0;
    for (int t = 0; t < KEVO__NDTYPES; t++) {
        char name[64];
        for (int k = 0; k < 2; k++) {
            snprintf(name, sizeof(name), "kevo_internal_%s_%s",
                     k ? "compare" : "fill", kevo_dtype_name((kevo_dtype)t));
            char *e = suite_ptx_entry_text(ptx, name);
            if (e)
                found++;
            else
                kevo__buf_printf(&missing, " %s", name);
            free(e);
        }
    }
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(fixed); i++) {
        char *e = suite_ptx_entry_text(ptx, fixed[i]);
        if (e)
            found++;
        else
            kevo__buf_printf(&missing, " %s", fixed[i]);
        free(e);
    }
    size_t entries = 0;
    for (const char *p = ptx; (p = strstr(p, ".entry ")) != NULL; p++)
        entries++;
    ok(found == 2 * KEVO__NDTYPES + KEVO_ARRAY_SIZE(fixed) && entries == found,
       "%s: the PTX has the %zu kernels the worker looks up, and no other",
       arch, found);
    if (missing.data)
        diag("missing:%s", missing.data);
    kevo__buf_free(&missing);

    /* The block reduction keeps KEVO__CMP_BLOCK kv_cmp in shared memory:
     * the sizes agree when the host's struct matches kv_cmp. */
    char size[32];
    bool found_size = false;
    snprintf(size, sizeof(size), "[%zu];", KEVO__CMP_BLOCK * sizeof(kevo__cmp));
    for (const char *p = ptx; (p = strstr(p, ".shared .align 8")) != NULL;
         p++) {
        const char *eol = strchr(p, '\n');
        const char *at = strstr(p, size);
        found_size = found_size || (at && (!eol || at < eol));
    }
    ok(sizeof(kevo__cmp) == 88 && found_size,
       "%s: kv_cmp has the 88 bytes of kevo__cmp", arch);
}

static void test_compile(void)
{
    int n = 0;
    int *archs = suite_nvrtc_archs(75, &n);
    for (int i = 0; i < n; i++) {
        char arch[32];
        size_t size = 0;
        snprintf(arch, sizeof(arch), "sm_%d", archs[i]);
        char *cubin = compile(arch, &size);
        ok(cubin && size > 0, "the worker's kernels compile for %s", arch);
        free(cubin);
    }
    free(archs);

    size_t size = 0;
    char *ptx = compile("compute_90", &size);
    if (!ok(ptx != NULL, "the worker's kernels compile to compute_90 PTX"))
        return;
    check_entries(ptx, "compute_90");
    free(ptx);
}

static void test_stats(void)
{
    double x[] = {5e-3, 1e-3, 4e-3, 2e-3, 3e-3};
    kevo__times t;
    memset(&t, 0, sizeof(t));
    kevo__times_stats(x, 5, &t);
    is_double(t.median, 3e-3, 1e-15, "median of 1..5 ms");
    is_double(t.min, 1e-3, 0, "min");
    is_double(t.max, 5e-3, 0, "max");
    is_double(t.mean, 3e-3, 1e-15, "mean");
    is_double(t.spread, 1.57 * (4e-3 - 2e-3) / sqrt(5.0) / 3e-3, 1e-12,
              "spread = 1.57 (p75 - p25) / sqrt(n) / median");
    is_double(t.cv, sqrt(2.5e-6) / 3e-3, 1e-12, "cv = sample stddev / mean");
    is_uint(t.reps, 5, "reps");

    double y[] = {1.0, 2.0, 3.0, 4.0};
    kevo__times_stats(y, 4, &t);
    is_double(t.median, 2.5, 1e-15, "median of an even count interpolates");
    is_double(t.spread, 1.57 * (3.25 - 1.75) / 2.0 / 2.5, 1e-12,
              "quartiles interpolate linearly");

    double one[] = {7e-6};
    kevo__times_stats(one, 1, &t);
    ok(t.median == 7e-6 && t.cv == 0.0 && t.spread == 0.0,
       "one sample: its value, no spread");
    kevo__times_stats(one, 0, &t);
    ok(isnan(t.median) && t.reps == 0, "no samples: NaN");
}

#define F KEVO__KREC_INTERNAL_FLUSH
#define C KEVO__KREC_CANDIDATE
#define I KEVO__KREC_INTERNAL_OTHER

static void test_split(void)
{
    uint64_t first[4], last[4];
    size_t count[4];

    /* Three repetitions on one stream; a candidate left over from before
     * the batch's first flush and an internal kernel are left out. */
    const kevo__krec normal[] = {{1, 5, C},   {10, 20, F},  {22, 30, C},
                                 {31, 38, C}, {39, 45, I},  {50, 60, F},
                                 {61, 70, C}, {80, 90, F},  {91, 95, C},
                                 {96, 99, C}, {100, 120, C}};
    is_uint(kevo__split_reps(normal, 11, 3, first, last, count), 3,
            "a normal batch: three flush records");
    ok(first[0] == 22 && last[0] == 38 && count[0] == 2,
       "repetition 0: first start to last end of its two kernels");
    ok(first[1] == 61 && last[1] == 70 && count[1] == 1,
       "repetition 1: its one kernel, the internal one left out");
    ok(first[2] == 91 && last[2] == 120 && count[2] == 3,
       "repetition 2: everything after the last flush");

    /* A kernel on another stream runs on past the next flush's start, and
     * another starts while that flush runs. */
    const kevo__krec overlap[] = {{10, 20, F}, {22, 30, C}, {25, 58, C},
                                  {50, 60, F}, {55, 65, C}, {61, 70, C}};
    is_uint(kevo__split_reps(overlap, 6, 2, first, last, count), 2,
            "overlap: two flush records");
    ok(first[0] == 22 && last[0] == 58 && count[0] == 2,
       "a kernel running past the next flush counts where it started");
    ok(first[1] == 55 && last[1] == 70 && count[1] == 2,
       "a kernel starting during a flush counts in that flush's repetition");

    /* The second of three flush records is missing. */
    const kevo__krec missing[] = {
        {10, 20, F}, {22, 30, C}, {61, 70, C}, {80, 90, F}, {91, 95, C}};
    is_uint(kevo__split_reps(missing, 5, 3, first, last, count), 2,
            "a missing flush record: fewer flushes than repetitions");
    ok(count[0] == 2 && count[1] == 1 && count[2] == 0,
       "the later repetitions shift (so the caller uses events)");

    /* A repetition without candidate kernels. */
    const kevo__krec empty[] = {{10, 20, F}, {22, 30, C}, {50, 60, F},
                                {62, 64, I}, {80, 90, F}, {91, 95, C}};
    is_uint(kevo__split_reps(empty, 6, 3, first, last, count), 3,
            "an empty repetition: every flush record is there");
    ok(count[1] == 0 && first[1] == 0 && last[1] == 0 && count[0] == 1 &&
           count[2] == 1,
       "its count is 0, its neighbours keep theirs");

    /* More flushes than repetitions: nothing written past reps. */
    const kevo__krec extra[] = {{10, 20, F}, {22, 30, C}, {50, 60, F},
                                {61, 70, C}, {80, 90, F}, {91, 95, C}};
    count[2] = 7;
    is_uint(kevo__split_reps(extra, 6, 2, first, last, count), 3,
            "extra flush records are counted");
    ok(count[0] == 1 && count[1] == 1 && count[2] == 7,
       "kernels after them are left out");
    is_uint(kevo__split_reps(NULL, 0, 2, first, last, count), 0,
            "no records: no flushes");
    ok(count[0] == 0 && count[1] == 0, "and no kernels");
}

#undef F
#undef C
#undef I

/* Hands msg (taken) to handler as the worker's main loop would, and reads
 * the reply it writes to the pipe. */
static json_t *answer(kevo__gpu *g, kevo__gpu_cache *cache, json_t *msg,
                      const void *payload, size_t len)
{
    int fds[2];
    kevo__frame f = {0}, reply = {0};
    kevo_error err = KEVO__ERROR_INIT;
    if (!msg || pipe(fds) != 0)
        bail_out("out of memory or pipes");
    f.json = msg;
    f.payload = len ? malloc(len) : NULL;
    f.payload_len = len;
    if (len)
        memcpy(f.payload, payload, len);
    const char *op = json_string_value(json_object_get(msg, "op"));
    int status = strcmp(op, "task") == 0 ? kevo__gpu_task(cache, &f, fds[1])
                                         : kevo__gpu_eval(g, cache, &f, fds[1]);
    if (status != 0 || kevo__ipc_recv(fds[0], 1000, &reply, &err) != KEVO_OK)
        bail_out("the %s handler answered nothing (%d): %s", op, status,
                 err.text);
    kevo__frame_clear(&f);
    close(fds[0]);
    close(fds[1]);
    return reply.json;
}

static json_t *task_message(const char *key, json_t *task)
{
    static json_int_t id = 1;
    return json_pack("{s:s, s:I, s:s, s:o}", "op", "task", "id", id++,
                     "task_key", key, "task", task);
}

static void test_tasks(void)
{
    kevo__gpu g;
    kevo__gpu_cache cache;
    kevo_task *task = NULL;
    char *text = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    char *path = kevo__path_join(tap_srcdir(), "examples/tasks/saxpy.json");
    if (!path || kevo_task_load(path, &task, &err) != KEVO_OK ||
        kevo_task_to_json(task, &text, &err) != KEVO_OK)
        bail_out("saxpy.json: %s", err.text);
    memset(&g, 0, sizeof(g));
    kevo__gpu_cache_init(&cache);

    json_t *r =
        answer(&g, &cache, task_message("saxpy-key", json_loads(text, 0, NULL)),
               NULL, 0);
    ok(json_is_true(json_object_get(r, "ok")) &&
           json_integer_value(json_object_get(r, "tasks")) == 1,
       "a task message: the worker keeps the task (1 held)");
    is_str(json_string_value(json_object_get(r, "task_key")), "saxpy-key",
           "the reply names the key");
    json_decref(r);
    r = answer(&g, &cache,
               task_message("broken", json_pack("{s:s}", "name", "broken")),
               NULL, 0);
    ok(json_is_false(json_object_get(r, "ok")) &&
           strstr(json_string_value(json_object_get(r, "error")), "the task"),
       "a task that does not load: ok false, saying why (%s)",
       json_string_value(json_object_get(r, "error")));
    json_decref(r);
    for (int i = 0; i < KEVO__TASK_KEYS_MAX; i++) {
        char key[32];
        snprintf(key, sizeof(key), "more-%d", i);
        json_decref(answer(
            &g, &cache, task_message(key, json_loads(text, 0, NULL)), NULL, 0));
    }
    is_uint(kevo__task_keys_count(&cache.tasks), KEVO__TASK_KEYS_MAX,
            "the worker keeps at most %d tasks", KEVO__TASK_KEYS_MAX);
    ok(!kevo__task_keys_use(&cache.tasks, "saxpy-key", NULL),
       "the least recently used one went");

    /* An eval of a key the worker does not hold never reaches the GPU. */
    static const unsigned char cubins[2] = {1, 2};
    json_t *eval = json_pack(
        "{s:s, s:I, s:s, s:{}, s:s, s:[I,I], s:I, s:I}", "op", "eval", "id",
        (json_int_t)77, "task_key", "saxpy-key", "candidate", "set", "train",
        "seeds", (json_int_t)1, (json_int_t)2, "reference_cubin_bytes",
        (json_int_t)1, "candidate_cubin_bytes", (json_int_t)1);
    r = answer(&g, &cache, eval, cubins, sizeof(cubins));
    ok(json_is_false(json_object_get(r, "ok")) &&
           json_integer_value(json_object_get(r, "id")) == 77 &&
           strstr(json_string_value(json_object_get(r, "error")),
                  "unknown task key \"saxpy-key\""),
       "an eval of a key the worker does not hold: a protocol error naming "
       "it (%s)",
       json_string_value(json_object_get(r, "error")));
    is_str(json_string_value(json_object_get(r, "unknown_task_key")),
           "saxpy-key", "the reply names the key to send again");
    json_decref(r);

    kevo__gpu_cache_clear(&g, &cache);
    is_uint(kevo__task_keys_count(&cache.tasks), 0,
            "cleared: the worker holds no task");
    kevo_task_free(task);
    free(text);
    free(path);
}

static char *worker_path(void)
{
    const char *w = getenv("KEVO_WORKER");
    const char *b = getenv("KEVO_BUILDDIR");
    if (w && *w)
        return kevo__strdup(w);
    return kevo__path_join(b && *b ? b : ".", "worker/kevo-worker");
}

static void test_hello(void)
{
    char *path = worker_path();
    char *argv[] = {path, "gpu", "--device", "0", NULL};
    kevo__proc proc = KEVO__PROC_INIT;
    kevo__frame f = {0};
    kevo_error err = KEVO__ERROR_INIT;
    int status = -1;

    if (!ok(kevo__proc_spawn(&proc, path, argv, &err) == KEVO_OK,
            "kevo-worker gpu starts")) {
        diag("%s", err.text);
        free(path);
        return;
    }
    if (!ok(kevo__ipc_recv(proc.from_fd, 120000, &f, &err) == KEVO_OK,
            "it sends a frame")) {
        diag("%s", err.text);
        kevo__proc_kill(&proc, NULL);
        free(path);
        return;
    }
    is_str(json_string_value(json_object_get(f.json, "op")), "hello",
           "the frame is a hello");
    if (json_is_true(json_object_get(f.json, "ok"))) {
        const json_t *d = json_object_get(f.json, "device");
        int64_t cc = json_integer_value(json_object_get(d, "cc"));
        const char *uuid = json_string_value(json_object_get(d, "uuid"));
        ok(cc >= 50 && json_integer_value(json_object_get(d, "sm_count")) > 0 &&
               json_integer_value(json_object_get(d, "l2_bytes")) > 0 &&
               json_integer_value(json_object_get(d, "max_smem_per_block")) > 0,
           "a GPU: its properties, named as expressions name them (cc %d)",
           (int)cc);
        ok(uuid && strncmp(uuid, "GPU-", 4) == 0 &&
               json_integer_value(json_object_get(f.json, "driver")) > 0 &&
               json_is_boolean(json_object_get(f.json, "cupti")),
           "its uuid, the driver version and whether CUPTI times kernels");
        ok(json_integer_value(json_object_get(f.json, "device_count")) >= 1,
           "how many devices the driver has (%d)",
           (int)json_integer_value(json_object_get(f.json, "device_count")));
        kevo__proc_finish(&proc, 10000, &status);
        ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "it exits with status 0 at the end of its input");
    } else {
        const char *why = json_string_value(json_object_get(f.json, "error"));
        ok(why && (strstr(why, "no CUDA driver") ||
                   strstr(why, "no usable CUDA device") ||
                   strstr(why, "no CUDA device")),
           "no GPU: the hello says why (%s)", why ? why : "?");
        kevo__proc_finish(&proc, 10000, &status);
        ok(WIFEXITED(status) && WEXITSTATUS(status) == 3,
           "it exits with status 3");
    }
    kevo__frame_clear(&f);
    free(path);
}

/* Parses an eval message whose "timing" object is timing (NULL: none)
 * and whose profile field is profile (NULL: none); the error text in why. */
static kevo_status parse_timing(json_t *timing, json_t *profile,
                                kevo__eval_req *r, char *why, size_t size)
{
    static unsigned char payload[2];
    kevo__frame f = {0};
    f.json = json_pack("{s:s, s:i, s:{}, s:{}, s:s, s:[i,i], s:i, s:i}", "op",
                       "eval", "id", 1, "task", "candidate", "task_key", "k",
                       "seeds", 1, 2, "reference_cubin_bytes", 1,
                       "candidate_cubin_bytes", 1);
    if (timing)
        json_object_set_new(f.json, "timing", timing);
    if (profile)
        json_object_set_new(f.json, "profile", profile);
    f.payload = payload;
    f.payload_len = sizeof payload;
    kevo_error e = KEVO__ERROR_INIT;
    kevo_status rc = kevo__eval_req_parse(&f, r, &e);
    snprintf(why, size, "%s", e.text);
    free(r->comp);
    json_decref(f.json);
    return rc;
}

/* The worker reads the timing options with the evaluator's option table:
 * its names, its defaults where a field is missing, its bounds. */
static void test_eval_request(void)
{
    kevo__eval_req r;
    char why[KEVO_ERROR_TEXT_SIZE];
    ok(parse_timing(NULL, NULL, &r, why, sizeof why) == KEVO_OK &&
           r.timing.warmup == 3 && r.timing.min_reps == 10 &&
           r.timing.max_reps == 300 && r.timing.target_spread == 0.01 &&
           r.timing.cap_ms == 1000 && r.timing.enabled && r.timing.flush_l2 &&
           !r.profile,
       "no timing fields: the evaluator's defaults");
    ok(parse_timing(json_pack("{s:i, s:i, s:i, s:i, s:i, s:b}", "warmup", 1,
                              "min_reps", 5, "max_reps", 40,
                              "target_spread_ppm", 20000, "time_cap_ms", 300,
                              "enabled", 0),
                    json_true(), &r, why, sizeof why) == KEVO_OK &&
           r.timing.warmup == 1 && r.timing.min_reps == 5 &&
           r.timing.max_reps == 40 && r.timing.target_spread == 0.02 &&
           r.timing.cap_ms == 300 && !r.timing.enabled && r.profile,
       "every timing field, under the option's name and in its unit");
    is_int(parse_timing(json_pack("{s:i}", "warmup", 1001), NULL, &r, why,
                        sizeof why),
           KEVO_EFORMAT, "a value above the bounds refused");
    is_str(why,
           "eval message: \"timing\": option warmup: 1001 is above the "
           "highest allowed value 1000 (allowed 0..1000)",
           "... in the options' words");
    is_int(parse_timing(json_pack("{s:f}", "target_spread", 0.02), NULL, &r,
                        why, sizeof why),
           KEVO_EFORMAT, "a field that is not a timing option refused");
    is_str(why, "eval message: \"timing\": unknown field \"target_spread\"",
           "... and named");
    is_int(parse_timing(NULL, json_integer(1), &r, why, sizeof why),
           KEVO_EFORMAT, "profile as a number refused");
    is_str(why,
           "eval message: option profile: expected true or false, found an "
           "integer",
           "... and named");
}

int main(void)
{
    test_compile();
    test_stats();
    test_split();
    test_eval_request();
    test_tasks();
    test_hello();
    return done_testing();
}

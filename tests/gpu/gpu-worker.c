/*
 * gpu-worker: a real `kevo-worker gpu` process over pipes, on a GPU. Its
 * hello and ceilings; the saxpy and reduce_sum seeds of examples/tasks
 * (compiled here with NVRTC for the device) evaluated at every training
 * shape: verdict ok, positive times with their spread and coefficient of
 * variation, the kernels per repetition, the profile or the reason there is
 * none; then kernels that must fail: unwritten elements
 * (tests/adversarial), a result cached from the first input set, a wrong
 * element (verdict "wrong" with the worst index), a changed input, a launch the
 * driver refuses (after which the worker still evaluates), requests it must
 * reject, a malformed message, and an out-of-bounds write (verdict "fault",
 * after which the worker exits with status 4).
 *
 * Skipped (exit 77) when the worker's hello says there is no driver or no
 * device.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../suite_util.h"
#include "../tap.h"
#include "worker_client.h"

static char *worker;

/* ---- the checks -------------------------------------------------------- */

static void check_hello(const json_t *hello)
{
    const json_t *d = json_object_get(hello, "device");
    int64_t cc = json_integer_value(json_object_get(d, "cc"));
    snprintf(wk_arch, sizeof(wk_arch), "sm_%" PRId64, cc);
    ok(cc >= 50 && json_integer_value(json_object_get(d, "sm_count")) > 0 &&
           json_integer_value(json_object_get(d, "l2_bytes")) > 0,
       "hello: %s, %s, %" PRId64 " SMs",
       json_string_value(json_object_get(d, "name")), wk_arch,
       (int64_t)json_integer_value(json_object_get(d, "sm_count")));
    diag("CUPTI: %s (timer %s)%s%s",
         json_is_true(json_object_get(hello, "cupti")) ? "yes" : "no",
         json_string_value(json_object_get(hello, "timer")),
         json_object_get(hello, "cupti_note") ? "; " : "",
         json_object_get(hello, "cupti_note")
             ? json_string_value(json_object_get(hello, "cupti_note"))
             : "");
}

/* The ceilings. Each memory stream stays under the DRAM's theoretical rate
 * (twice the memory clock times the bus width), which a measurement that
 * stayed in the L2 cache would pass; the bandwidth is the best stream; a
 * tensor-core peak is the best of mma.sync and wgmma, and at compute
 * capability 9.0 wgmma is there and beats mma.sync. */
static void check_peaks(const json_t *hello)
{
    const json_t *d = json_object_get(hello, "device");
    int64_t cc = json_integer_value(json_object_get(d, "cc"));
    double dram =
        2.0 * 1e3 *
        (double)json_integer_value(json_object_get(d, "mem_clock_khz")) *
        (double)json_integer_value(json_object_get(d, "bus_width")) / 8;
    json_t *reply = wk_call(json_pack("{s:s, s:I, s:[s,s,s,s,s,s,s,s]}", "op",
                                      "peaks", "id", (json_int_t)wk_next_id++,
                                      "which", "bandwidth", "launch", "fp32",
                                      "fp64", "tf32", "fp16", "bf16", "fp8"),
                            NULL, 0);
    const json_t *p = json_object_get(reply, "peaks");
    const json_t *errors = json_object_get(reply, "errors");
    double bw = json_number_value(json_object_get(p, "bandwidth"));
    double fp32 = json_number_value(json_object_get(p, "fp32"));
    double fp64 = json_number_value(json_object_get(p, "fp64"));
    double launch = json_number_value(json_object_get(p, "launch"));
    ok(json_is_true(json_object_get(reply, "ok")) && bw > 1e11 && fp32 > 1e12 &&
           fp64 > 1e11 && launch > 0 && launch < 1e-4,
       "peaks: bandwidth %.0f GB/s, FP32 %.1f, FP64 %.1f TFLOP/s, launch "
       "%.2f us",
       bw / 1e9, fp32 / 1e12, fp64 / 1e12, launch * 1e6);
    static const char *const streams[] = {"read", "write", "copy", "triad"};
    double best = 0.0;
    for (size_t i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof(name), "bandwidth_%s", streams[i]);
        double v = json_number_value(json_object_get(p, name));
        ok(v > 1e11 && (dram <= 0 || v <= 1.02 * dram),
           "peaks: %s %.0f GB/s (DRAM %.0f GB/s)", name, v / 1e9, dram / 1e9);
        best = v > best ? v : best;
    }
    ok(bw == best, "peaks: the bandwidth is the best stream's");

    static const char *const tensor[] = {"tf32", "fp16", "bf16", "fp8"};
    for (size_t i = 0; i < 4; i++) {
        char km[32], kw[32];
        snprintf(km, sizeof(km), "%s_mma_sync", tensor[i]);
        snprintf(kw, sizeof(kw), "%s_wgmma", tensor[i]);
        const json_t *v = json_object_get(p, tensor[i]);
        double m = json_number_value(json_object_get(p, km));
        double w = json_number_value(json_object_get(p, kw));
        ok(v ? json_number_value(v) == (m > w ? m : w) &&
                   json_number_value(v) > fp32
             : json_object_get(errors, tensor[i]) != NULL,
           "peaks: %s %.1f TFLOP/s = best of mma.sync %.1f and wgmma %.1f "
           "(or why not)",
           tensor[i], json_number_value(v) / 1e12, m / 1e12, w / 1e12);
        ok((m > 0) != (json_object_get(errors, km) != NULL) &&
               (w > 0) != (json_object_get(errors, kw) != NULL),
           "peaks: %s: a figure or a reason for each family", tensor[i]);
        if (cc == 90)
            ok(w > m, "peaks: %s: wgmma beats mma.sync on sm_90", tensor[i]);
        else
            ok(json_object_get(errors, kw) != NULL,
               "peaks: %s: no wgmma below or above sm_90", tensor[i]);
    }
    json_decref(reply);
}

/* The checks of a correct evaluation at every training shape. */
static void check_ok(const wk_task *t, const json_t *reply, const char *what,
                     size_t kernels)
{
    const json_t *shapes = json_object_get(reply, "shapes");
    size_t n = kevo_task_shape_count(t->task, KEVO_SHAPES_TRAIN), i;
    const json_t *s;
    if (!ok(strcmp(wk_verdict(reply), "ok") == 0 &&
                json_array_size(shapes) == n,
            "%s: verdict ok at the %zu training shapes", what, n))
        diag("verdict %s: %s", wk_verdict(reply), wk_reason(reply));
    json_array_foreach (shapes, i, s) {
        const json_t *tm = json_object_get(s, "time");
        const json_t *samples = json_object_get(tm, "samples");
        double median = json_number_value(json_object_get(tm, "median"));
        json_int_t reps = json_integer_value(json_object_get(tm, "reps"));
        ok(json_is_true(json_object_get(s, "correct")) &&
               json_object_get(json_object_get(s, "worst"), "index"),
           "%s shape %zu: correct, worst error %g at %s[%" PRId64 "]", what, i,
           json_number_value(json_object_get(s, "max_abs_err")),
           json_string_value(
               json_object_get(json_object_get(s, "worst"), "arg")),
           (int64_t)json_integer_value(
               json_object_get(json_object_get(s, "worst"), "index")));
        ok(median > 0 && reps >= 1 &&
               json_array_size(samples) == (size_t)reps &&
               json_is_number(json_object_get(tm, "cv")) &&
               json_is_number(json_object_get(tm, "spread")),
           "%s shape %zu: %.2f us median of %d reps, cv %.4f, spread %.4f "
           "(%s)",
           what, i, median * 1e6, (int)reps,
           json_number_value(json_object_get(tm, "cv")),
           json_number_value(json_object_get(tm, "spread")),
           json_string_value(json_object_get(tm, "timer")));
        is_int(json_integer_value(json_object_get(tm, "kernels_per_rep")),
               kernels, "%s shape %zu: kernels per repetition", what, i);
        const json_t *prof = json_object_get(s, "profile");
        if (json_object_get(prof, "error"))
            diag("%s shape %zu: no profile: %s", what, i,
                 json_string_value(json_object_get(prof, "error")));
        else if (prof)
            ok(json_number_value(json_object_get(prof, "dram_read_bytes")) > 0,
               "%s shape %zu: profile: %.3g bytes read, %.3g written, "
               "occupancy %.2f",
               what, i,
               json_number_value(json_object_get(prof, "dram_read_bytes")),
               json_number_value(json_object_get(prof, "dram_write_bytes")),
               json_number_value(json_object_get(prof, "achieved_occupancy")));
    }
}

/* Sends msg (taken) and checks that the worker refuses it (ok false) with
 * a reason that has needle in it. */
static void expect_refusal(json_t *msg, const char *needle, const char *what)
{
    json_t *r = wk_call(msg, NULL, 0);
    ok(r && json_is_false(json_object_get(r, "ok")) &&
           strstr(wk_reason(r), needle),
       "%s (%s)", what, wk_reason(r));
    json_decref(r);
}

/* Tasks by key: the worker keeps what it was sent, answers an eval of a
 * key it does not hold as a protocol error naming the key, keeps at most
 * KEVO__TASK_KEYS_MAX, and drops the least recently used as wk_tasks
 * (the evaluator's bookkeeping) predicts. */
static void check_tasks(const wk_task *saxpy, const wk_compiled *seed_code)
{
    const kevo_candidate *seed = kevo_task_seed(saxpy->task);
    wk_task other = *saxpy;
    snprintf(other.key, sizeof(other.key), "gpu-worker-never-sent");
    json_t *r = wk_eval_by_key(&other, seed, seed_code, false);
    ok(r && json_is_false(json_object_get(r, "ok")) &&
           strstr(wk_reason(r), "unknown task key \"gpu-worker-never-sent\""),
       "an eval of a key never sent: a protocol error naming it (%s)",
       wk_reason(r));
    is_str(json_string_value(json_object_get(r, "unknown_task_key")),
           "gpu-worker-never-sent", "the reply names the key to send again");
    json_decref(r);

    expect_refusal(json_pack("{s:s, s:I, s:s, s:{s:s}}", "op", "task", "id",
                             (json_int_t)wk_next_id++, "task_key", "broken",
                             "task", "name", "broken"),
                   "the task",
                   "a task that does not load: ok false, saying why");
    expect_refusal(json_pack("{s:s, s:I, s:s}", "op", "task", "id",
                             (json_int_t)wk_next_id++, "task_key", "no-task"),
                   "\"task\"", "a task message without a task: ok false");
    char long_key[KEVO__TASK_KEY_MAX + 2];
    memset(long_key, 'k', sizeof(long_key) - 1);
    long_key[sizeof(long_key) - 1] = '\0';
    expect_refusal(json_pack("{s:s, s:I, s:s, s:O}", "op", "task", "id",
                             (json_int_t)wk_next_id++, "task_key", long_key,
                             "task", saxpy->json),
                   "task key", "a key over 64 bytes: ok false");

    /* As many tasks again as the worker keeps: the first one sent goes. */
    size_t before = kevo__task_keys_count(&wk_tasks);
    wk_task first = *saxpy;
    snprintf(first.key, sizeof(first.key), "gpu-worker-lru-0");
    r = wk_task_send(&first);
    ok(json_is_true(json_object_get(r, "ok")) &&
           json_integer_value(json_object_get(r, "tasks")) ==
               (json_int_t)before + 1,
       "a task is kept: %zu held now",
       (size_t)json_integer_value(json_object_get(r, "tasks")));
    json_decref(r);
    for (int i = 1; i <= KEVO__TASK_KEYS_MAX; i++) {
        wk_task more = *saxpy;
        snprintf(more.key, sizeof(more.key), "gpu-worker-lru-%d", i);
        json_decref(wk_task_send(&more));
    }
    ok(!kevo__task_keys_use(&wk_tasks, first.key, NULL),
       "the bookkeeping says the first task went");
    r = wk_eval_by_key(&first, seed, seed_code, false);
    is_str(json_string_value(json_object_get(r, "unknown_task_key")), first.key,
           "and the worker no longer holds it");
    json_decref(r);
    r = wk_eval(&first, seed, seed_code, false);
    is_str(wk_verdict(r), "ok", "sent again, it evaluates");
    json_decref(r);
    r = wk_eval(saxpy, seed, seed_code, false);
    is_str(wk_verdict(r), "ok",
           "the task of the first evaluations, dropped too, is sent again");
    json_decref(r);
}

/* Keeps its first result in device memory and replays it once a second
 * launch has marked it complete: right on the first input set only. */
static const char cached_source[] =
    "/* kevo:launch\n"
    " *   saxpy_keep<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)\n"
    " *   saxpy_mark<<<1, 1>>>(n)\n"
    " */\n"
    "__device__ float kept[1 << 24];\n"
    "__device__ int kept_n;\n"
    "extern \"C\" __global__ void saxpy_keep(float a, const float *x,\n"
    "    const float *y, float *z, int n)\n"
    "{\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        z[i] = kept_n == n ? kept[i] : (kept[i] = a * x[i] + y[i]);\n"
    "}\n"
    "extern \"C\" __global__ void saxpy_mark(int n)\n"
    "{\n"
    "    kept_n = n;\n"
    "}\n";

static const char wrong_source[] =
    "/* kevo:launch\n"
    " *   saxpy_wrong<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)\n"
    " */\n"
    "extern \"C\" __global__ void saxpy_wrong(float a, const float *x,\n"
    "    const float *y, float *z, int n)\n"
    "{\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        z[i] = a * x[i] + y[i] + (i == 4242 ? 0.5f : 0.0f);\n"
    "}\n";

static const char modify_source[] =
    "/* kevo:launch\n"
    " *   saxpy_modify<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)\n"
    " */\n"
    "extern \"C\" __global__ void saxpy_modify(float a, const float *x,\n"
    "    const float *y, float *z, int n)\n"
    "{\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        z[i] = a * x[i] + y[i];\n"
    "    if (i == 7)\n"
    "        ((float *)x)[7] = 0.25f;\n"
    "}\n";

/* 512 threads per block for a kernel built for at most 128: the driver
 * refuses the launch and the context stays usable. */
static const char bounds_source[] =
    "/* kevo:launch\n"
    " *   saxpy_bounds<<<ceil_div(n, 512), 512>>>(a, x, y, z, n)\n"
    " */\n"
    "extern \"C\" __global__ void __launch_bounds__(128)\n"
    "    saxpy_bounds(float a, const float *x, const float *y, float *z,\n"
    "                 int n)\n"
    "{\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        z[i] = a * x[i] + y[i];\n"
    "}\n";

static const char smem_source[] =
    "/* kevo:launch\n"
    " *   saxpy_smem<<<ceil_div(n, 256), 256, 1048576>>>(a, x, y, z, n)\n"
    " */\n"
    "extern \"C\" __global__ void saxpy_smem(float a, const float *x,\n"
    "    const float *y, float *z, int n)\n"
    "{\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        z[i] = a * x[i] + y[i];\n"
    "}\n";

static const char reserved_source[] =
    "/* kevo:launch\n"
    " *   kevo_internal_saxpy<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)\n"
    " */\n"
    "extern \"C\" __global__ void kevo_internal_saxpy(float a,\n"
    "    const float *x, const float *y, float *z, int n)\n"
    "{\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        z[i] = a * x[i] + y[i];\n"
    "}\n";

static const char oob_source[] =
    "/* kevo:launch\n"
    " *   saxpy_oob<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)\n"
    " */\n"
    "extern \"C\" __global__ void saxpy_oob(float a, const float *x,\n"
    "    const float *y, float *z, int n)\n"
    "{\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        z[i + (1LL << 40)] = a * x[i] + y[i];\n"
    "}\n";

/* A kernel of the adversarial corpus (tests/adversarial). */
static kevo_candidate *corpus_kernel(const wk_task *t, const char *file)
{
    char name[128], *text = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    snprintf(name, sizeof(name), "tests/adversarial/%s", file);
    char *path = kevo__path_join(tap_srcdir(), name);
    if (!path || kevo__read_file(path, true, &text, NULL, &err) != KEVO_OK)
        bail_out("%s: %s", name, err.text);
    kevo_candidate *c = wk_candidate(t, text);
    free(text);
    free(path);
    return c;
}

/* Evaluates a kernel (source text, or a corpus file when file is set)
 * that must get verdict with needle in its reason; the reply (the
 * caller's). */
static json_t *expect(const wk_task *t, const char *source, const char *file,
                      const char *want, const char *needle, const char *what)
{
    kevo_candidate *c = file ? corpus_kernel(t, file) : wk_candidate(t, source);
    json_t *r = wk_eval(t, c, NULL, false);
    is_str(wk_verdict(r), want, "%s: %s", what, want);
    like_str(wk_reason(r), needle, "%s: the reason says '%s'", what, needle);
    kevo_candidate_free(c);
    return r;
}

static void check_failures(const wk_task *saxpy, const wk_compiled *seed_code)
{
    json_decref(expect(saxpy, NULL, "unwritten.cu", "wrong", "NaN",
                       "every 4096th element unwritten"));
    json_decref(expect(saxpy, cached_source, NULL, "wrong", "second input set",
                       "a result kept from the first input set"));

    json_t *r = expect(saxpy, wrong_source, NULL, "wrong", "z[4242]",
                       "one element off");
    const json_t *s0 = json_array_get(json_object_get(r, "shapes"), 0);
    const json_t *worst = json_object_get(s0, "worst");
    ok(json_integer_value(json_object_get(worst, "index")) == 4242 &&
           strcmp(json_string_value(json_object_get(worst, "arg")), "z") == 0 &&
           json_integer_value(json_object_get(s0, "bad_elements")) == 1 &&
           json_integer_value(json_object_get(r, "failed_shape")) == 0,
       "the worst element is z[4242], the only bad one, at shape 0");
    json_decref(r);

    json_decref(expect(saxpy, modify_source, NULL, "input_modified", "x[7]",
                       "a changed input"));
    json_decref(expect(saxpy, bounds_source, NULL, "launch_error",
                       "saxpy_bounds",
                       "more threads than the kernel's bounds"));
    r = wk_eval(saxpy, kevo_task_seed(saxpy->task), seed_code, false);
    is_str(wk_verdict(r), "ok",
           "after the launch error the worker still works");
    json_decref(r);
    json_decref(expect(saxpy, smem_source, NULL, "rejected", "shared memory",
                       "1 MiB of shared memory"));
    json_decref(expect(saxpy, reserved_source, NULL, "rejected",
                       "kevo_internal_", "a kevo_internal_ kernel"));

    expect_refusal(
        json_pack("{s:s, s:I}", "op", "eval", "id", (json_int_t)wk_next_id++),
        "task", "a malformed eval: ok false, saying what is missing");
    r = wk_call(json_pack("{s:s, s:I}", "op", "nonsense", "id",
                          (json_int_t)wk_next_id++),
                NULL, 0);
    like_str(wk_reason(r), "unknown op", "an unknown op gets an error reply");
    json_decref(r);

    r = expect(saxpy, oob_source, NULL, "fault", "CUDA_ERROR_ILLEGAL_ADDRESS",
               "an out-of-bounds write");
    like_str(wk_reason(r), "train shape 0",
             "the fault's reason names the shape");
    json_decref(r);
    int status = -1;
    kevo__proc_finish(&wk_proc, 30000, &status);
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 4,
       "after the fault the worker exits with status 4");
}

int main(void)
{
    worker = wk_worker_path();
    json_t *hello = wk_start(worker);
    check_hello(hello);
    check_peaks(hello);
    json_decref(hello);

    wk_task saxpy, reduce;
    wk_task_open(&saxpy, "saxpy");
    wk_task_open(&reduce, "reduce_sum");
    wk_compiled saxpy_seed, reduce_seed;
    wk_compile(kevo_task_seed(saxpy.task), &saxpy_seed);
    wk_compile(kevo_task_seed(reduce.task), &reduce_seed);

    json_t *r = wk_eval(&saxpy, kevo_task_seed(saxpy.task), &saxpy_seed, true);
    check_ok(&saxpy, r, "saxpy seed", 1);
    json_decref(r);
    r = wk_eval(&reduce, kevo_task_seed(reduce.task), &reduce_seed, true);
    check_ok(&reduce, r, "reduce_sum seed", 2);
    json_decref(r);
    /* The same seeds again: the reference comes from the cache. */
    r = wk_eval(&saxpy, kevo_task_seed(saxpy.task), &saxpy_seed, false);
    check_ok(&saxpy, r, "saxpy seed, cached reference", 1);
    json_decref(r);

    check_tasks(&saxpy, &saxpy_seed);
    check_failures(&saxpy, &saxpy_seed);

    /* A new worker holds no task: the first eval sends it again. */
    json_decref(wk_start(worker));
    ok(kevo__task_keys_count(&wk_tasks) == 0,
       "after the restart the bookkeeping is empty");
    r = wk_eval(&saxpy, kevo_task_seed(saxpy.task), &saxpy_seed, false);
    is_str(wk_verdict(r), "ok",
           "after the restart the task goes again and the seed evaluates");
    json_decref(r);

    wk_compiled_free(&saxpy_seed);
    wk_compiled_free(&reduce_seed);
    wk_task_close(&saxpy);
    wk_task_close(&reduce);
    kevo__proc_kill(&wk_proc, NULL);
    free(worker);
    return done_testing();
}

/*
 * gpu-tensormap: tensor maps and clusters on a GPU of compute capability
 * 9.0 or more. First the encoding: maps encoded by the driver from
 * hand-written cuTensorMapEncodeTiled arguments and from the arguments
 * kevo computes for tensormap lines (kevo__tensormap_args, encoded by the
 * worker's kevo__tmap_encode) must be the same 128 bytes. Then the worked
 * example of kevo-blocks(5) (tests/data/tasks/compile/tilecopy-ok-tma.cu, a
 * bf16 tile copy through TMA in clusters of 2 with a fallback where the
 * TMA rules do not hold) evaluated by the real worker: correct at every
 * training and held-out shape, and its kernel records giving the cluster
 * size and the cluster occupancy where the TMA launch runs.
 *
 * Skipped (exit 77) without a driver, a device, or a device below 9.0.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <kevo/eval.h>

#include "../tap.h"
#include "model/tensormap.h"
#include "worker/gpu.h"

static kevo_error err;

static char *data_path(const char *file)
{
    return kevo__asprintf("%s/tests/data/tasks/compile/%s", tap_srcdir(), file);
}

static kevo_candidate *load_kernel(const kevo_task *task, const char *file)
{
    char *path = data_path(file), *text = NULL;
    kevo_candidate *c = NULL;
    if (kevo__read_file(path, true, &text, NULL, &err) != KEVO_OK ||
        kevo_candidate_new_for_task(task, text, file, &c, &err) != KEVO_OK)
        bail_out("%s: %s", file, err.text);
    free(text);
    free(path);
    return c;
}

/* A candidate of task with block (// lines) and a kernel g. */
static kevo_candidate *block_kernel(const kevo_task *task, const char *block)
{
    char *src =
        kevo__asprintf("// kevo:launch\n%s\n__global__ void g() {}\n", block);
    kevo_candidate *c = NULL;
    if (kevo_candidate_new_for_task(task, src, "map.cu", &c, &err) != KEVO_OK)
        bail_out("map.cu: %s", err.text);
    free(src);
    return c;
}

/* Map 0 of block at (rows, cols) encoded from kevo's arguments at buf,
 * against the driver's map of the hand-written arguments. */
static void compare(const kevo_task *task, const char *block, int64_t rows,
                    int64_t cols, CUdeviceptr buf, const CUtensorMap *want,
                    const char *what)
{
    kevo_candidate *c = block_kernel(task, block);
    kevo_vars *env = kevo_vars_new();
    kevo__tmap_args a;
    CUtensorMap got;
    memset(&got, 0xa5, sizeof got);
    if (!env || kevo_vars_set(env, "rows", rows) != KEVO_OK ||
        kevo_vars_set(env, "cols", cols) != KEVO_OK)
        bail_out("out of memory");
    bool computed = kevo__tensormap_args(task, c, 0, env, &a, &err) == KEVO_OK;
    ok(computed, "%s: kevo computes the arguments", what);
    if (!computed)
        diag("%s", err.text);
    ok(computed &&
           kevo__tmap_encode(&got, &a, buf + a.offset_bytes) == CUDA_SUCCESS,
       "%s: the driver encodes them", what);
    ok(memcmp(&got, want, sizeof got) == 0,
       "%s: the same 128 bytes as the hand-written map", what);
    kevo_vars_free(env);
    kevo_candidate_free(c);
}

static void check_encoding(const kevo_task *task, CUdeviceptr buf)
{
    CUtensorMap want;
    const cuuint64_t dims2[2] = {1024, 256}, strides2[1] = {2048};
    const cuuint32_t box2[2] = {64, 32}, ones[5] = {1, 1, 1, 1, 1};
    ok(kevo__cu.cuTensorMapEncodeTiled(
           &want, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (void *)buf, dims2,
           strides2, box2, ones, CU_TENSOR_MAP_INTERLEAVE_NONE,
           CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS,
       "hand-written: a 2-D bf16 map");
    compare(task,
            "// tensormap tmX x bf16 dims(cols, rows) box(64, 32)\n"
            "// g<<<1, 32>>>(tmX, y)",
            256, 1024, buf, &want, "the example's map");

    const cuuint64_t dims3[3] = {32, 100, 2}, strides3[2] = {2048, 1024};
    const cuuint32_t box3[3] = {32, 16, 1}, es3[3] = {1, 2, 1};
    ok(kevo__cu.cuTensorMapEncodeTiled(
           &want, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, (void *)(buf + 64 * 2),
           dims3, strides3, box3, es3, CU_TENSOR_MAP_INTERLEAVE_NONE,
           CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
           CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA) == CUDA_SUCCESS,
       "hand-written: a 3-D map with every option");
    compare(task,
            "// tensormap tmX x bf16 dims(32, 100, 2) box(32, 16, 1) "
            "strides(cols * 2, cols) offset(64) elementstrides(1, 2, 1) "
            "swizzle(64) l2(256) oob(nan)\n"
            "// g<<<1, 32>>>(tmX, y)",
            256, 1024, buf, &want, "a 3-D map with every option");
}

static void check_eval(const kevo_task *task)
{
    kevo_evaluator *ev = NULL;
    if (kevo_evaluator_new(&ev, &err) != KEVO_OK)
        bail_out("%s", err.text);
    kevo_status rc = kevo_evaluator_start(ev, 0, &err);
    if (rc != KEVO_OK)
        bail_out("the evaluator does not start: %s", err.text);
    kevo_candidate *c = load_kernel(task, "tilecopy-ok-tma.cu");
    for (int set = 0; set < 2; set++) {
        kevo_eval_result *res = NULL;
        unsigned flags = set ? KEVO_EVAL_HELD_OUT : 0;
        if (kevo_evaluator_evaluate(ev, task, c, flags, &res, &err) != KEVO_OK)
            bail_out("evaluate: %s", err.text);
        const char *why = kevo_eval_result_reason(res);
        if (!ok(kevo_eval_result_verdict(res) == KEVO_VERDICT_OK,
                "tile copy, %s shapes: ok", set ? "held-out" : "training"))
            diag("%s: %s", kevo_verdict_name(kevo_eval_result_verdict(res)),
                 why ? why : "");
        char *text = NULL;
        if (kevo_eval_result_to_json(res, &text, &err) == KEVO_OK) {
            size_t n = 0; /* without white space, whatever the layout */
            for (size_t i = 0; text[i]; i++) {
                if (text[i] != ' ' && text[i] != '\n')
                    text[n++] = text[i];
            }
            text[n] = '\0';
            if (!set) {
                like_str(text ? text : "", "\"cluster\":2",
                         "the kernel record gives clusters of 2");
                like_str(text ? text : "", "\"cluster_occupancy\":",
                         "... and the cluster occupancy");
                like_str(text ? text : "", "\"tma\":1",
                         "... and the PTX scan a TMA copy");
                like_str(text ? text : "",
                         "\"mbarrier\":", "... and mbarriers");
            }
            free(text);
        } else {
            ok(0, "the result as JSON: %s", err.text);
        }
        kevo_eval_result_free(res);
    }
    kevo_candidate_free(c);
    kevo_evaluator_free(ev);
}

int main(void)
{
    if (kevo__cu_load(&err) != KEVO_OK)
        skip_all("%s", err.text);
    int ndev = 0, major = 0;
    CUdevice dev;
    CUcontext ctx;
    if (kevo__cu.cuInit(0) != CUDA_SUCCESS ||
        kevo__cu.cuDeviceGetCount(&ndev) != CUDA_SUCCESS || ndev == 0)
        skip_all("no GPU");
    if (kevo__cu.cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        kevo__cu.cuDeviceGetAttribute(
            &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) !=
            CUDA_SUCCESS)
        skip_all("no usable GPU");
    if (major < 9)
        skip_all("tensor maps and clusters need compute capability 9.0");
    if (!kevo__cu.cuTensorMapEncodeTiled)
        skip_all("the driver has no cuTensorMapEncodeTiled");
    if (kevo__cu.cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
        kevo__cu.cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        bail_out("no context");

    char *path = data_path("tilecopy.json");
    kevo_task *task = NULL;
    if (kevo_task_load(path, &task, &err) != KEVO_OK)
        bail_out("%s", err.text);
    free(path);

    CUdeviceptr buf = 0;
    if (kevo__cu.cuMemAlloc(&buf, 256 * 1024 * 2) != CUDA_SUCCESS)
        bail_out("cuMemAlloc");
    check_encoding(task, buf);
    kevo__cu.cuMemFree(buf);
    kevo__cu.cuDevicePrimaryCtxRelease(dev);

    check_eval(task);
    kevo_task_free(task);
    return done_testing();
}

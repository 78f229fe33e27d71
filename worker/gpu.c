/*
 * gpu.c: `kevo-worker gpu --device N`: opens the device, compiles the
 * worker's own kernels (kernels.cu.h) with NVRTC for it, says hello, and
 * answers "peaks", "task" and "eval" messages (gpu_eval.h) until its input
 * ends. The tasks it is sent stay with it, by key, from one message to the
 * next; an eval names its task by key alone.
 *
 * Exit status: 0 at the end of the input; 3 when there is no driver or no
 * such device (after a hello with ok false); 4 after a fault that spoiled
 * the CUDA context (after its verdict was sent); 1 when the message stream
 * breaks.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nvrtc.h>

#include "gpu_eval.h"
#include "kernels.cu.h"
#include "worker.h"

double kevo__seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the worker's own kernels ------------------------------------------ */

kevo_status kevo__gpu_compile(const char *source, const char *name,
                              const char *arch, char **image, kevo_error *err)
{
    nvrtcProgram prog = NULL;
    char option[64], *log = NULL;
    const char *opts[] = {option, "-std=c++17"};
    bool cubin = strncmp(arch, "sm_", 3) == 0;
    size_t size = 0, log_size = 0;
    kevo_status rc = KEVO_OK;
    snprintf(option, sizeof(option), "--gpu-architecture=%s", arch);
    nvrtcResult r = nvrtcCreateProgram(&prog, source, name, 0, NULL, NULL);
    if (r == NVRTC_SUCCESS)
        r = nvrtcCompileProgram(prog, 2, opts);
    if (r == NVRTC_ERROR_COMPILATION &&
        nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS &&
        (log = calloc(1, log_size + 1)) != NULL)
        nvrtcGetProgramLog(prog, log);
    if (r == NVRTC_SUCCESS)
        r = cubin ? nvrtcGetCUBINSize(prog, &size)
                  : nvrtcGetPTXSize(prog, &size);
    if (r == NVRTC_SUCCESS && !(*image = calloc(1, size + 1)))
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    if (r == NVRTC_SUCCESS && rc == KEVO_OK)
        r = cubin ? nvrtcGetCUBIN(prog, *image) : nvrtcGetPTX(prog, *image);
    if (r != NVRTC_SUCCESS && rc == KEVO_OK)
        rc = kevo__error_set_foreign(
            err, KEVO_EEXTERNAL, KEVO_DOMAIN_NVRTC, (long)r,
            "compiling the worker's %s for %s: %s%s%s", name, arch,
            nvrtcGetErrorString(r), log ? "\n" : "", log ? log : "");
    if (rc != KEVO_OK) {
        free(*image);
        *image = NULL;
    }
    free(log);
    nvrtcDestroyProgram(&prog);
    return rc;
}

kevo_status kevo__gpu_build(const kevo__gpu *g, const char *source,
                            const char *name, char **image, kevo_error *err)
{
    char arch[32];
    int n = 0, best = 0, *archs = NULL;
    snprintf(arch, sizeof(arch), "sm_%" PRId64, g->cc);
    kevo_error first = KEVO__ERROR_INIT;
    if (kevo__gpu_compile(source, name, arch, image, &first) == KEVO_OK)
        return KEVO_OK;
    if (nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0 &&
        (archs = calloc((size_t)n, sizeof(*archs))) != NULL &&
        nvrtcGetSupportedArchs(archs) == NVRTC_SUCCESS) {
        for (int i = 0; i < n; i++) {
            if (archs[i] <= g->cc && archs[i] > best)
                best = archs[i];
        }
    }
    free(archs);
    if (best == 0 || best == g->cc)
        return kevo__error_wrap(err, &first, "%s", "");
    snprintf(arch, sizeof(arch), "compute_%d", best);
    return kevo__gpu_compile(source, name, arch, image, err);
}

static kevo_status get_kernel(CUmodule m, const char *name, CUfunction *f,
                              kevo_error *err)
{
    char what[96];
    snprintf(what, sizeof(what), "the worker's kernel %s", name);
    return kevo__cu_check(kevo__cu.cuModuleGetFunction(f, m, name), what, err);
}

static kevo_status load_kernels(kevo__gpu *g, kevo_error *err)
{
    char *image = NULL;
    kevo_status rc = kevo__gpu_build(g, kevo__kernels_source,
                                     "kevo_internal.cu", &image, err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(kevo__cu.cuModuleLoadData(&g->module, image),
                            "loading the worker's kernels", err);
    free(image);
    if (rc != KEVO_OK) {
        g->module = NULL;
        return rc;
    }
    for (int t = 0; t < KEVO__NDTYPES && rc == KEVO_OK; t++) {
        char name[64];
        snprintf(name, sizeof(name), "kevo_internal_fill_%s",
                 kevo_dtype_name((kevo_dtype)t));
        rc = get_kernel(g->module, name, &g->fill[t], err);
        snprintf(name, sizeof(name), "kevo_internal_compare_%s",
                 kevo_dtype_name((kevo_dtype)t));
        if (rc == KEVO_OK)
            rc = get_kernel(g->module, name, &g->compare[t], err);
    }
    static const struct {
        const char *name;
        size_t offset;
    } fixed[] = {
        {"kevo_internal_compare_reduce", offsetof(kevo__gpu, compare_reduce)},
        {"kevo_internal_equal", offsetof(kevo__gpu, equal)},
        {"kevo_internal_flush_l2", offsetof(kevo__gpu, flush_l2)},
    };
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(fixed) && rc == KEVO_OK; i++)
        rc = get_kernel(g->module, fixed[i].name,
                        (CUfunction *)((char *)g + fixed[i].offset), err);
    return rc;
}

/* ---- the device -------------------------------------------------------- */

static int64_t prop(const kevo__gpu *g, const char *name)
{
    int64_t v = 0;
    kevo_vars_get(g->props, name, &v);
    return v;
}

/* The device's name, uuid, properties, context and buffers. KEVO_ENODEV
 * for no driver or no such device. */
static kevo_status gpu_open(kevo__gpu *g, int device, kevo_error *err)
{
    int count = 0;
    CUuuid uuid;
    kevo_status rc = kevo__cu_load(err);
    memset(g, 0, sizeof(*g));
    g->index = device;
    g->device_count = -1;
    if (rc != KEVO_OK)
        return rc;
    CUresult r = kevo__cu.cuInit(0);
    if (r != CUDA_SUCCESS) {
        kevo_error e = KEVO__ERROR_INIT;
        kevo__cu_check(r, "cuInit", &e);
        return kevo__error_set(err, KEVO_ENODEV, "no usable CUDA device: %s",
                               e.text);
    }
    rc = kevo__cu_check(kevo__cu.cuDeviceGetCount(&count), "cuDeviceGetCount",
                        err);
    if (rc != KEVO_OK)
        return rc;
    g->device_count = count;
    if (device < 0 || device >= count)
        return kevo__error_set(err, KEVO_ENODEV,
                               "no CUDA device %d: the driver sees %d", device,
                               count);
    rc = kevo__cu_check(kevo__cu.cuDeviceGet(&g->dev, device), "cuDeviceGet",
                        err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(
            kevo__cu.cuDeviceGetName(g->name, sizeof(g->name), g->dev),
            "cuDeviceGetName", err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(kevo__cu.cuDeviceGetUuid(&uuid, g->dev),
                            "cuDeviceGetUuid", err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(kevo__cu.cuDeviceTotalMem(&g->total_mem, g->dev),
                            "cuDeviceTotalMem", err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(kevo__cu.cuDriverGetVersion(&g->driver),
                            "cuDriverGetVersion", err);
    if (rc != KEVO_OK)
        return rc;
    const unsigned char *u = (const unsigned char *)uuid.bytes;
    snprintf(g->uuid, sizeof(g->uuid),
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
             "%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
             u[11], u[12], u[13], u[14], u[15]);
    if (!(g->props = kevo_vars_new()))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    rc = kevo__cu_device_props(g->dev, g->props, err);
    if (rc != KEVO_OK)
        return rc;
    g->cc = prop(g, "cc");
    g->sm_count = prop(g, "sm_count");
    g->max_threads_per_sm = prop(g, "max_threads_per_sm");
    g->max_threads_per_block = prop(g, "max_threads_per_block");
    g->max_smem_per_block = prop(g, "max_smem_per_block");
    g->l2_bytes = prop(g, "l2_bytes");

    rc = kevo__cu_check(kevo__cu.cuDevicePrimaryCtxRetain(&g->ctx, g->dev),
                        "cuDevicePrimaryCtxRetain", err);
    if (rc != KEVO_OK) {
        g->ctx = NULL;
        return rc;
    }
    rc = kevo__cu_check(kevo__cu.cuCtxSetCurrent(g->ctx), "cuCtxSetCurrent",
                        err);
    if (rc == KEVO_OK)
        rc = load_kernels(g, err);
    if (rc != KEVO_OK)
        return rc;

    g->npartial = (unsigned)(g->sm_count * 4);
    g->flush_words = ((uint64_t)g->l2_bytes * 2 + 15) / 16;
    rc = kevo__cu_check(
        kevo__cu.cuMemAlloc(&g->partial, (g->npartial + 1) * sizeof(kevo__cmp)),
        "cuMemAlloc", err);
    if (rc == KEVO_OK)
        rc =
            kevo__cu_check(kevo__cu.cuMemAlloc(&g->word, 8), "cuMemAlloc", err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(kevo__cu.cuMemAlloc(&g->flush, g->flush_words * 16),
                            "cuMemAlloc", err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(
            kevo__cu.cuMemsetD8(g->flush, 0, g->flush_words * 16), "cuMemsetD8",
            err);
    if (rc != KEVO_OK)
        return rc;

    /* A quarter of what is free for reference results, as much again for
     * kept buffers; host memory for references that do not fit. */
    size_t free_mem = 0, total = 0;
    rc = kevo__cu_check(kevo__cu.cuMemGetInfo(&free_mem, &total),
                        "cuMemGetInfo", err);
    if (rc != KEVO_OK)
        return rc;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t host = pages > 0 && page > 0 ? (size_t)pages * (size_t)page / 4
                                        : (size_t)1 << 30;
    if (host > ((size_t)16 << 30))
        host = (size_t)16 << 30;
    g->refs = kevo__refcache_new(free_mem / 4, host);
    g->pool = kevo__pool_new(free_mem / 4);
    if (!g->refs || !g->pool)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo__timing_init(g);
    return KEVO_OK;
}

static void gpu_close(kevo__gpu *g)
{
    kevo__profiler_free(g->prof);
    kevo__probes_free(g->probes);
    kevo__refcache_free(g->refs);
    kevo__pool_free(g->pool);
    if (g->flush)
        kevo__cu.cuMemFree(g->flush);
    if (g->word)
        kevo__cu.cuMemFree(g->word);
    if (g->partial)
        kevo__cu.cuMemFree(g->partial);
    if (g->module)
        kevo__cu.cuModuleUnload(g->module);
    if (g->ctx)
        kevo__cu.cuDevicePrimaryCtxRelease(g->dev);
    kevo_vars_free(g->props);
    memset(g, 0, sizeof(*g));
}

/* ---- messages ---------------------------------------------------------- */

kevo_status kevo__gpu_send(int fd, json_t *msg)
{
    kevo_error e = KEVO__ERROR_INIT;
    kevo_status rc = msg ? kevo__ipc_send(fd, msg, NULL, 0, -1, &e)
                         : kevo__error_set(&e, KEVO_ENOMEM, "out of memory");
    if (rc != KEVO_OK)
        fprintf(stderr, "kevo-worker gpu: sending a reply: %s\n", e.text);
    json_decref(msg);
    return rc;
}

static json_t *device_json(const kevo__gpu *g)
{
    static const CUdevice_attribute attrs[] = {
        CU_DEVICE_ATTRIBUTE_CLOCK_RATE, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
        CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH};
    int v[3]; /* 0 where the driver does not say */
    for (size_t i = 0; i < 3; i++) {
        if (kevo__cu.cuDeviceGetAttribute(&v[i], attrs[i], g->dev) !=
            CUDA_SUCCESS)
            v[i] = 0;
    }
    int clock = v[0], mem_clock = v[1], bus = v[2];
    json_t *d = json_pack("{s:i, s:s, s:s, s:I, s:i, s:i, s:i}", "index",
                          g->index, "name", g->name, "uuid", g->uuid,
                          "total_mem", (json_int_t)g->total_mem, "clock_khz",
                          clock, "mem_clock_khz", mem_clock, "bus_width", bus);
    for (size_t i = 0; d && i < kevo_vars_count(g->props); i++) {
        if (json_object_set_new(d, kevo_vars_name(g->props, i),
                                json_integer(kevo_vars_value(g->props, i)))) {
            json_decref(d);
            return NULL;
        }
    }
    return d;
}

static json_t *hello_json(const kevo__gpu *g)
{
    int major = 0, minor = 0;
    char nvrtc[32] = "";
    if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS)
        snprintf(nvrtc, sizeof(nvrtc), "%d.%d", major, minor);
    json_t *msg =
        json_pack("{s:s, s:b, s:o, s:i, s:i, s:b, s:s, s:s}", "op", "hello",
                  "ok", 1, "device", device_json(g), "device_count",
                  g->device_count, "driver", g->driver, "cupti", g->cupti,
                  "timer", g->cupti ? "cupti" : "events", "nvrtc", nvrtc);
    if (msg && !g->cupti &&
        json_object_set_new(msg, "cupti_note", json_string(g->cupti_note))) {
        json_decref(msg);
        return NULL;
    }
    return msg;
}

/* {"op":"peaks","id":N,"which":[...]} */
static int on_peaks(kevo__gpu *g, const json_t *req, int out_fd)
{
    json_t *id = json_object_get(req, "id");
    const json_t *which = json_object_get(req, "which");
    json_t *peaks = NULL, *errors = NULL, *spreads = NULL, *reply;
    kevo_error e = KEVO__ERROR_INIT;
    double t0 = kevo__seconds_now();
    bool fatal = false;
    if (!json_is_array(which))
        kevo__error_set(&e, KEVO_EFORMAT, "\"which\" must be an array");
    else if (kevo__peaks_measure(g, which, &peaks, &errors, &spreads, &e) !=
             KEVO_OK)
        fatal = kevo__gpu_fatal(&e);
    if (e.code != KEVO_OK) {
        reply = json_pack("{s:s, s:O?, s:b, s:s}", "op", "peaks", "id", id,
                          "ok", 0, "error", e.text);
    } else {
        reply = json_pack("{s:s, s:O?, s:b, s:o, s:f}", "op", "peaks", "id", id,
                          "ok", 1, "peaks", peaks, "seconds",
                          kevo__seconds_now() - t0);
        if (reply && ((json_object_size(errors) > 0 &&
                       json_object_set(reply, "errors", errors)) ||
                      json_object_set(reply, "spreads", spreads))) {
            json_decref(reply);
            reply = NULL;
        }
    }
    json_decref(errors);
    json_decref(spreads);
    int status = kevo__gpu_send(out_fd, reply) == KEVO_OK ? 0 : 1;
    return fatal ? 4 : status;
}

bool kevo__gpu_fatal(const kevo_error *err)
{
    CUresult r = kevo__cu_error_of(err);
    if (r == CUDA_SUCCESS)
        return false;
    if (kevo__cu_sticky(r))
        return true;
    /* An error the table does not know: the context decides. */
    CUresult probe = kevo__cu.cuCtxSynchronize();
    return probe != CUDA_SUCCESS && kevo__cu_sticky(probe);
}

int kevo__worker_gpu_main(int in_fd, int out_fd, int device)
{
    kevo__gpu g;
    kevo__gpu_cache cache;
    kevo_error err = KEVO__ERROR_INIT;
    int status = 0;

    kevo__gpu_cache_init(&cache);
    if (gpu_open(&g, device, &err) != KEVO_OK) {
        /* The count, where the driver gave it, lets the client say which
         * devices there are. */
        json_t *hello = json_pack("{s:s, s:b, s:s}", "op", "hello", "ok", 0,
                                  "error", err.text);
        if (hello && g.device_count >= 0 &&
            json_object_set_new(hello, "device_count",
                                json_integer(g.device_count))) {
            json_decref(hello);
            hello = NULL;
        }
        kevo__gpu_send(out_fd, hello);
        status = err.code == KEVO_ENODEV ? 3 : 1;
        if (status != 3)
            fprintf(stderr, "kevo-worker gpu: %s\n", err.text);
        gpu_close(&g);
        return status;
    }
    if (kevo__gpu_send(out_fd, hello_json(&g)) != KEVO_OK) {
        gpu_close(&g);
        return 1;
    }
    for (;;) {
        kevo__frame f = {0};
        kevo_error e = KEVO__ERROR_INIT;
        kevo_status rc = kevo__ipc_recv(in_fd, -1, &f, &e);
        if (rc == KEVO_DONE)
            break;
        if (rc != KEVO_OK) {
            fprintf(stderr, "kevo-worker gpu: reading a message: %s\n", e.text);
            status = 1;
            break;
        }
        const char *op = json_string_value(json_object_get(f.json, "op"));
        if (op && strcmp(op, "eval") == 0) {
            status = kevo__gpu_eval(&g, &cache, &f, out_fd);
        } else if (op && strcmp(op, "task") == 0) {
            status = kevo__gpu_task(&cache, &f, out_fd);
        } else if (op && strcmp(op, "peaks") == 0) {
            status = on_peaks(&g, f.json, out_fd);
        } else {
            json_t *reply =
                json_pack("{s:s, s:O?, s:b, s:s+}", "op", "error", "id",
                          json_object_get(f.json, "id"), "ok", 0, "error",
                          "unknown op: ", op ? op : "(none)");
            status = kevo__gpu_send(out_fd, reply) == KEVO_OK ? 0 : 1;
        }
        kevo__frame_clear(&f);
        if (status != 0)
            break;
    }
    if (status == 4)
        return status; /* the context is gone: nothing to release */
    kevo__gpu_cache_clear(&g, &cache);
    gpu_close(&g);
    return status;
}

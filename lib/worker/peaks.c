/*
 * peaks.c: the device's ceilings, measured with the worker's own kernels
 * and CUDA events, the best of several runs each: memory bandwidth (the
 * best of a device-to-device copy, by the worker's copy kernel or the
 * driver's, and a kernel reading two streams and writing one, over
 * buffers many times the L2 size, bytes read plus bytes written), the
 * FP32 and FP64 FMA rates (an FMA is two flops), the tensor-core rates of
 * mma.sync for FP16, BF16 and TF32 inputs, and the launch latency (an empty
 * kernel, timed as candidates are).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

#define RUNS 8
#define TARGET_SECONDS 0.02 /* a calibrated run's length */

/* One timed piece of work. */
typedef struct work {
    CUfunction f; /* a kernel of grid x block threads, or NULL for a copy */
    unsigned grid, block;
    void **params;
    CUdeviceptr src, dst; /* the copy (cuMemcpyDtoD) */
    size_t bytes;
} work;

static kevo_status run_work(const work *w, kevo_error *err)
{
    if (w->f)
        return kevo__gpu_launch(w->f, w->grid, w->block, w->params,
                                "a ceiling kernel", err);
    return kevo__cu_check(kevo__cu.cuMemcpyDtoD(w->dst, w->src, w->bytes),
                          "cuMemcpyDtoD", err);
}

/* The best time of RUNS runs of w (after one warm-up), in seconds. */
static kevo_status best_time(const work *w, double *best, kevo_error *err)
{
    CUevent a = NULL, b = NULL;
    kevo_status rc = kevo__cu_check(
        kevo__cu.cuEventCreate(&a, CU_EVENT_DEFAULT), "cuEventCreate", err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(kevo__cu.cuEventCreate(&b, CU_EVENT_DEFAULT),
                            "cuEventCreate", err);
    *best = 0.0;
    for (int i = 0; rc == KEVO_OK && i <= RUNS; i++) {
        float ms = 0.0f;
        rc = kevo__cu_check(kevo__cu.cuEventRecord(a, NULL), "cuEventRecord",
                            err);
        if (rc == KEVO_OK)
            rc = run_work(w, err);
        if (rc == KEVO_OK)
            rc = kevo__cu_check(kevo__cu.cuEventRecord(b, NULL),
                                "cuEventRecord", err);
        if (rc == KEVO_OK)
            rc = kevo__cu_check(kevo__cu.cuEventSynchronize(b),
                                "cuEventSynchronize", err);
        if (rc == KEVO_OK)
            rc = kevo__cu_check(kevo__cu.cuEventElapsedTime(&ms, a, b),
                                "cuEventElapsedTime", err);
        double t = 1e-3 * (double)ms;
        if (rc == KEVO_OK && i > 0 && (*best == 0.0 || t < *best))
            *best = t;
    }
    if (a)
        kevo__cu.cuEventDestroy(a);
    if (b)
        kevo__cu.cuEventDestroy(b);
    return rc;
}

/* The memory bandwidth: the best of the worker's copy kernel, the driver's
 * cuMemcpyDtoD (one stream in, one out) and a kernel that reads two
 * streams and writes one, the mix most memory-bound kernels have, which
 * HBM serves faster than a copy. Bytes read plus bytes written, over
 * buffers many times the L2 size. */
static kevo_status bandwidth(kevo__gpu *g, double *out, kevo_error *err)
{
    size_t free_mem = 0, total = 0;
    CUdeviceptr src = 0, dst = 0, src2 = 0;
    kevo_status rc = kevo__cu_check(kevo__cu.cuMemGetInfo(&free_mem, &total),
                                    "cuMemGetInfo", err);
    if (rc != KEVO_OK)
        return rc;
    size_t bytes = (size_t)g->l2_bytes * 16;
    if (bytes < ((size_t)256 << 20))
        bytes = (size_t)256 << 20;
    if (bytes > free_mem / 4)
        bytes = free_mem / 4;
    bytes &= ~(size_t)15;
    rc = kevo__cu_check(kevo__cu.cuMemAlloc(&src, bytes), "cuMemAlloc", err);
    if (rc == KEVO_OK)
        rc =
            kevo__cu_check(kevo__cu.cuMemAlloc(&dst, bytes), "cuMemAlloc", err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(kevo__cu.cuMemAlloc(&src2, bytes), "cuMemAlloc",
                            err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(kevo__cu.cuMemsetD8(src, 0x3c, bytes), "cuMemsetD8",
                            err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(kevo__cu.cuMemsetD8(src2, 0x21, bytes),
                            "cuMemsetD8", err);
    uint64_t words = bytes / 16;
    void *params[] = {&src, &dst, &words};
    void *params3[] = {&src, &src2, &dst, &words};
    work kernel = {g->copy, kevo__gpu_blocks(g, words, 256), 256, params, 0, 0,
                   0};
    work driver = {NULL, 0, 0, NULL, src, dst, bytes};
    work triad = {
        g->triad, kevo__gpu_blocks(g, words / 2, 256), 256, params3, 0, 0, 0};
    double tk = 0.0, td = 0.0, tt = 0.0;
    if (rc == KEVO_OK)
        rc = best_time(&kernel, &tk, err);
    if (rc == KEVO_OK)
        rc = best_time(&driver, &td, err);
    if (rc == KEVO_OK)
        rc = best_time(&triad, &tt, err);
    double bk = tk > 0.0 ? 2.0 * (double)bytes / tk : 0.0;
    double bd = td > 0.0 ? 2.0 * (double)bytes / td : 0.0;
    double bt = tt > 0.0 ? 3.0 * (double)bytes / tt : 0.0;
    if (rc == KEVO_OK)
        fprintf(stderr,
                "kevo-worker gpu: bandwidth %.0f GB/s by the copy kernel, "
                "%.0f GB/s by cuMemcpyDtoD, %.0f GB/s reading two streams "
                "and writing one\n",
                bk / 1e9, bd / 1e9, bt / 1e9);
    double best = bk > bd ? bk : bd;
    if (bt > best)
        best = bt;
    if (rc == KEVO_OK)
        *out = best;
    if (src)
        kevo__cu.cuMemFree(src);
    if (dst)
        kevo__cu.cuMemFree(dst);
    if (src2)
        kevo__cu.cuMemFree(src2);
    return rc;
}

/*
 * A compute ceiling: kernel f(out, iters, x) with flops_per_iter flops per
 * iteration over the whole grid. The iteration count is scaled until a run
 * takes about TARGET_SECONDS.
 */
static kevo_status compute(kevo__gpu *g, CUfunction f, unsigned grid,
                           unsigned block, void *x, double flops_per_iter,
                           double *out, kevo_error *err)
{
    CUdeviceptr sink = 0;
    int iters = 256;
    double t = 0.0;
    kevo_status rc =
        kevo__gpu_alloc(g, &sink, (size_t)grid * block * sizeof(double), err);
    void *params[] = {&sink, &iters, x};
    work w = {f, grid, block, params, 0, 0, 0};
    while (rc == KEVO_OK) {
        rc = best_time(&w, &t, err);
        if (rc != KEVO_OK || t >= TARGET_SECONDS / 2 || iters >= (1 << 24))
            break;
        double scale = t > 0.0 ? TARGET_SECONDS / t : 64.0;
        iters = (int)((double)iters * (scale > 64.0 ? 64.0 : scale + 1.0));
        if (iters > (1 << 24))
            iters = 1 << 24;
    }
    if (rc == KEVO_OK)
        *out = t > 0.0 ? flops_per_iter * iters / t : 0.0;
    kevo__gpu_release(g, sink, (size_t)grid * block * sizeof(double));
    return rc;
}

/*
 * The launch latency: the median time, start to end as the candidates'
 * timer sees it (CUPTI, else events), of an empty kernel of one warp: no
 * shape of any task can take less, which makes it the roofline floor of
 * shapes too small to fill the device.
 */
static kevo_status launch_latency(kevo__gpu *g, double *out, kevo_error *err)
{
    static const char source[] = "/* kevo:launch\n"
                                 " *   kevo_probe_empty<<<1, 32>>>()\n"
                                 " */\n";
    kevo_candidate *cand = NULL;
    kevo_status rc =
        kevo_candidate_new(source, "the latency probe", &cand, err);
    if (rc != KEVO_OK)
        return rc;
    CUfunction fn = g->probe_empty;
    kevo__program prog = {cand, NULL, 1, &fn, NULL};
    kevo_launch_geometry geom = {sizeof geom, {1, 1, 1}, {32, 1, 1}, 0, {0}};
    void **params[1] = {NULL};
    kevo__plan plan = {&prog, &geom, NULL, params, 0, NULL, NULL};
    kevo__timing_config cfg = {true, false, 20, 100, 400, 0.02, 300.0};
    kevo__times t;
    rc = kevo__time_plan(g, &plan, &cfg, &t, err);
    if (rc == KEVO_OK)
        *out = t.median > 0 ? t.median : 0.0;
    free(t.samples);
    kevo_candidate_free(cand);
    return rc;
}

kevo_status kevo__peaks_measure(kevo__gpu *g, const json_t *which,
                                json_t **peaks, json_t **errors,
                                kevo_error *err)
{
    size_t i;
    const json_t *v;
    kevo_status rc = KEVO_OK;
    *peaks = json_object();
    *errors = json_object();
    if (!*peaks || !*errors)
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    unsigned block = 256;
    unsigned full = (unsigned)(g->sm_count * (g->max_threads_per_sm / block));
    unsigned mma_grid = (unsigned)g->sm_count * 4;
    double threads = (double)full * block, warps = mma_grid * block / 32.0;
    json_array_foreach (which, i, v) {
        const char *name = json_string_value(v);
        const char *why = NULL;
        double x = 0.0;
        if (rc != KEVO_OK)
            break;
        if (!name) {
            why = "not a string";
            name = "?";
        } else if (strcmp(name, "bandwidth") == 0) {
            rc = bandwidth(g, &x, err);
        } else if (strcmp(name, "launch") == 0) {
            rc = launch_latency(g, &x, err);
        } else if (strcmp(name, "fp32") == 0) {
            float one = 1.0f;
            rc = compute(g, g->fma_f32, full, block, &one, 128.0 * threads, &x,
                         err);
        } else if (strcmp(name, "fp64") == 0) {
            double one = 1.0;
            rc = compute(g, g->fma_f64, full, block, &one, 128.0 * threads, &x,
                         err);
        } else if (strcmp(name, "fp16") == 0 || strcmp(name, "bf16") == 0 ||
                   strcmp(name, "tf32") == 0) {
            bool tf32 = name[0] == 't';
            uint32_t one = tf32             ? 0x3f800000u
                           : name[0] == 'f' ? 0x3c003c00u
                                            : 0x3f803f80u;
            CUfunction f = tf32             ? g->mma_tf32
                           : name[0] == 'f' ? g->mma_f16
                                            : g->mma_bf16;
            /* four mma of m16n8k16 (k8 for tf32) per warp and iteration */
            double per_mma = 2.0 * 16 * 8 * (tf32 ? 8 : 16);
            if (g->cc < 80)
                why = "mma.sync with these types needs compute capability 8.0";
            else
                rc = compute(g, f, mma_grid, block, &one, 4.0 * per_mma * warps,
                             &x, err);
        } else {
            why = "unknown ceiling (bandwidth, launch, fp32, fp64, tf32, "
                  "fp16, bf16)";
        }
        if (rc != KEVO_OK)
            break;
        if (why ? json_object_set_new(*errors, name, json_string(why))
                : json_object_set_new(*peaks, name, json_real(x)))
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    if (rc != KEVO_OK) {
        json_decref(*peaks);
        json_decref(*errors);
        *peaks = *errors = NULL;
    }
    return rc;
}

/*
 * peaks.c: the device's ceilings, measured with the probe kernels of
 * peaks.cu.h (compiled at the first ceiling asked for) and timed as
 * candidates are (kevo__time_plan: the median of repetitions, each after
 * an L2 flush, by CUPTI or else CUDA events):
 *
 * - the memory bandwidth, counting the bytes read plus the bytes written:
 *   the best of four streams of 16-byte words, read-only (a reduction that
 *   writes nothing), write-only, copy and triad (two streams in, one out),
 *   each over buffers of at least 32 times the L2 size and 1 GiB (so that
 *   the writes the L2 still holds when a kernel ends are a few percent at
 *   most) and launched with a grid that fills the device and with one
 *   block a tile;
 * - the FP32 and FP64 FMA rates (an FMA is two flops);
 * - the tensor-core rates for TF32, FP16, BF16 and FP8 (e4m3) inputs with
 *   FP32 accumulation, by mma.sync and, on compute capability 9.0, by wgmma
 *   (a second module compiled for sm_90a): each figure on its own, and
 *   their best as the peak;
 * - the launch latency (an empty kernel).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "peaks.cu.h"

#define PROBES_NAME "kevo_probes.cu"
#define TARGET_SECONDS 0.02   /* a compute probe's run, about */
#define PEAK_RUNS 3           /* probe runs a ceiling is the best of */
#define PEAK_SPREAD_FLAG 0.05 /* a spread over them that is said */
#define STREAM_BLOCK 256
#define STREAM_UNROLL 4 /* KV_UNROLL in peaks.cu.h */
#define STREAM_TILE ((uint64_t)STREAM_UNROLL * STREAM_BLOCK) /* words */
#define MMA_BLOCK 256
#define WGMMA_BLOCK 128 /* one warpgroup */

struct kevo__probes {
    CUmodule module; /* peaks.cu.h for the device */
    CUmodule wgmma;  /* peaks.cu.h for sm_90a, or NULL */
    bool wgmma_tried;
    char why[KEVO_ERROR_TEXT_SIZE]; /* why wgmma is NULL after a try */
};

void kevo__probes_free(kevo__probes *p)
{
    if (!p)
        return;
    if (p->module)
        kevo__cu.cuModuleUnload(p->module);
    if (p->wgmma)
        kevo__cu.cuModuleUnload(p->wgmma);
    free(p);
}

/* The probes compiled for arch (NULL: the device) and loaded in *m. */
static kevo_status load_module(const kevo__gpu *g, const char *arch,
                               CUmodule *m, kevo_error *err)
{
    char *image = NULL;
    kevo_status rc = arch ? kevo__gpu_compile(kevo__probes_source, PROBES_NAME,
                                              arch, &image, err)
                          : kevo__gpu_build(g, kevo__probes_source, PROBES_NAME,
                                            &image, err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(kevo__cu.cuModuleLoadData(m, image),
                            "loading the ceiling probes", err);
    if (rc != KEVO_OK)
        *m = NULL;
    free(image);
    return rc;
}

static kevo_status get_function(CUmodule m, const char *name, CUfunction *f,
                                kevo_error *err)
{
    char what[96];
    snprintf(what, sizeof(what), "the probe kernel %s", name);
    return kevo__cu_check(kevo__cu.cuModuleGetFunction(f, m, name), what, err);
}

/* The probe kernel called name, from the module for the device. */
static kevo_status probe(kevo__gpu *g, const char *name, CUfunction *f,
                         kevo_error *err)
{
    if (!g->probes && !(g->probes = calloc(1, sizeof(*g->probes))))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = KEVO_OK;
    if (!g->probes->module)
        rc = load_module(g, NULL, &g->probes->module, err);
    return rc == KEVO_OK ? get_function(g->probes->module, name, f, err) : rc;
}

/* The wgmma probe kernel called name in *f, or NULL there and the reason
 * in *why (borrowed) where the device or NVRTC has no wgmma. */
static kevo_status wgmma_probe(kevo__gpu *g, const char *name, CUfunction *f,
                               const char **why, kevo_error *err)
{
    *f = NULL;
    *why = NULL;
    if (g->cc != 90) {
        *why = "wgmma needs sm_90a: a device of compute capability 9.0";
        return KEVO_OK;
    }
    if (!g->probes && !(g->probes = calloc(1, sizeof(*g->probes))))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo__probes *p = g->probes;
    if (!p->wgmma_tried) {
        kevo_error e = KEVO__ERROR_INIT;
        p->wgmma_tried = true;
        if (load_module(g, "sm_90a", &p->wgmma, &e) != KEVO_OK) {
            if (kevo__cu_sticky(kevo__cu_error_of(&e)))
                return kevo__error_wrap(err, &e, "%s", "");
            /* the first line: NVRTC's log follows it */
            snprintf(p->why, sizeof(p->why), "%.*s", (int)strcspn(e.text, "\n"),
                     e.text);
            fprintf(stderr, "kevo-worker gpu: no wgmma probes: %s\n", p->why);
        }
    }
    if (!p->wgmma) {
        *why = p->why;
        return KEVO_OK;
    }
    return get_function(p->wgmma, name, f, err);
}

/* Blocks of block threads an SM can hold of f (1 when the driver does not
 * say). */
static unsigned per_sm(const kevo__gpu *g, CUfunction f, unsigned block)
{
    int n = 0;
    if (kevo__cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            &n, f, (int)block, 0) != CUDA_SUCCESS ||
        n < 1)
        n = (int)(g->max_threads_per_sm / block);
    return n > 0 ? (unsigned)n : 1;
}

/* The median time in seconds of kernel (called name) <<<grid, block>>>
 * (params), timed as candidates are with cfg. */
static kevo_status time_launch(kevo__gpu *g, const char *name, CUfunction f,
                               unsigned grid, unsigned block, void **params,
                               const kevo__timing_config *cfg, double *median,
                               kevo_error *err)
{
    char source[160];
    kevo_candidate *cand = NULL;
    snprintf(source, sizeof(source),
             "/* kevo:launch\n *   %s<<<%u, %u>>>()\n */\n", name, grid, block);
    *median = 0.0;
    kevo_status rc = kevo_candidate_new(source, "a ceiling probe", &cand, err);
    if (rc != KEVO_OK)
        return rc;
    kevo__program prog = {cand, NULL, 1, &f, NULL};
    kevo_launch_geometry geom = {.size = sizeof geom,
                                 .grid = {grid, 1, 1},
                                 .block = {block, 1, 1},
                                 .runs = 1};
    void **launch_params[1] = {params};
    bool cluster_attr[1] = {false};
    kevo__plan plan = {.prog = &prog,
                       .geom = &geom,
                       .params = launch_params,
                       .cluster_attr = cluster_attr};
    kevo__times t;
    rc = kevo__time_plan(g, &plan, cfg, &t, err);
    if (rc == KEVO_OK && t.median > 0)
        *median = t.median;
    free(t.samples);
    kevo_candidate_free(cand);
    return rc;
}

static kevo_status put(json_t *o, const char *key, json_t *v, kevo_error *err)
{
    if (!v || json_object_set_new(o, key, v) != 0)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    return KEVO_OK;
}

/* ---- memory bandwidth --------------------------------------------------- */

typedef enum stream_kind { READ, WRITE, COPY, TRIAD } stream_kind;

typedef struct stream {
    stream_kind kind;
    const char *name; /* "read": the peak "bandwidth_read" */
    const char *kernel;
    int streams; /* of n words, read plus written */
} stream;

static const stream streams[] = {
    {READ, "read", "kevo_probe_read", 1},
    {WRITE, "write", "kevo_probe_write", 1},
    {COPY, "copy", "kevo_probe_copy", 2},
    {TRIAD, "triad", "kevo_probe_triad", 3},
};
#define NSTREAMS (sizeof(streams) / sizeof(streams[0]))

/* The buffers (src and src2 are read, dst written) and arguments. */
typedef struct stream_args {
    CUdeviceptr src, src2, dst, sink;
    uint64_t words; /* in each buffer */
    uint32_t key;
    float scale;
} stream_args;

/* Stream s at the better of two grids: one that fills the device, looping
 * over tiles, and one block a tile. Bytes per second into *rate. */
static kevo_status time_stream(kevo__gpu *g, const stream *s, stream_args *a,
                               double *rate, kevo_error *err)
{
    void *p_read[] = {&a->src, &a->words, &a->key, &a->sink};
    void *p_write[] = {&a->dst, &a->words, &a->key};
    void *p_copy[] = {&a->src, &a->dst, &a->words};
    void *p_triad[] = {&a->src, &a->src2, &a->dst, &a->words, &a->scale};
    void **params[] = {
        [READ] = p_read, [WRITE] = p_write, [COPY] = p_copy, [TRIAD] = p_triad};
    const kevo__timing_config cfg = {true, true, 2, 10, 40, 0.005, 2000.0};
    CUfunction f = NULL;
    *rate = 0.0;
    kevo_status rc = probe(g, s->kernel, &f, err);
    if (rc != KEVO_OK)
        return rc;
    uint64_t tiles = a->words / STREAM_TILE;
    unsigned grids[2] = {(unsigned)g->sm_count * per_sm(g, f, STREAM_BLOCK),
                         tiles < 0x7fffffffu ? (unsigned)tiles : 0x7fffffffu};
    for (int i = 0; i < 2 && rc == KEVO_OK; i++) {
        double t = 0.0;
        rc = time_launch(g, s->kernel, f, grids[i], STREAM_BLOCK,
                         params[s->kind], &cfg, &t, err);
        double r = t > 0.0 ? 16.0 * (double)a->words * s->streams / t : 0.0;
        *rate = r > *rate ? r : *rate;
    }
    return rc;
}

/* The bandwidth, and the figure of each stream, into peaks. */
static kevo_status bandwidth(kevo__gpu *g, json_t *peaks, kevo_error *err)
{
    size_t free_mem = 0, total = 0;
    stream_args b = {0, 0, 0, g->word, 0, 1, 0.5f};
    double rate[NSTREAMS] = {0}, best = 0.0;
    kevo_status rc = kevo__cu_check(kevo__cu.cuMemGetInfo(&free_mem, &total),
                                    "cuMemGetInfo", err);
    if (rc != KEVO_OK)
        return rc;
    size_t bytes = (size_t)g->l2_bytes * 32;
    if (bytes < ((size_t)1 << 30))
        bytes = (size_t)1 << 30;
    if (bytes > free_mem / 4)
        bytes = free_mem / 4;
    bytes -= bytes % (STREAM_TILE * 16);
    if (bytes == 0)
        return kevo__error_set(err, KEVO_EEXTERNAL,
                               "measuring the bandwidth: %zu bytes of device "
                               "memory free are too few",
                               free_mem);
    b.words = bytes / 16;
    CUdeviceptr *bufs[] = {&b.src, &b.src2, &b.dst};
    for (size_t i = 0; i < 3 && rc == KEVO_OK; i++)
        rc = kevo__cu_check(kevo__cu.cuMemAlloc(bufs[i], bytes), "cuMemAlloc",
                            err);
    /* Bytes 0x3c: floats of 0.0115 for the triad; words whose xor is 0 or
     * 0x3c3c3c3c, never the read probe's key 1. */
    if (rc == KEVO_OK)
        rc = kevo__cu_check(kevo__cu.cuMemsetD8(b.src, 0x3c, bytes),
                            "cuMemsetD8", err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(kevo__cu.cuMemsetD8(b.src2, 0x3c, bytes),
                            "cuMemsetD8", err);
    for (size_t i = 0; i < NSTREAMS && rc == KEVO_OK; i++) {
        char key[32];
        rc = time_stream(g, &streams[i], &b, &rate[i], err);
        snprintf(key, sizeof(key), "bandwidth_%s", streams[i].name);
        if (rc == KEVO_OK && rate[i] > 0.0)
            rc = put(peaks, key, json_real(rate[i]), err);
        best = rate[i] > best ? rate[i] : best;
    }
    if (rc == KEVO_OK && best > 0.0)
        rc = put(peaks, "bandwidth", json_real(best), err);
    if (rc == KEVO_OK)
        fprintf(stderr,
                "kevo-worker gpu: bandwidth over %zu MiB buffers: read %.0f, "
                "write %.0f, copy %.0f, triad %.0f GB/s\n",
                bytes >> 20, rate[0] / 1e9, rate[1] / 1e9, rate[2] / 1e9,
                rate[3] / 1e9);
    for (size_t i = 0; i < 3; i++)
        if (*bufs[i])
            kevo__cu.cuMemFree(*bufs[i]);
    return rc;
}

/* ---- arithmetic --------------------------------------------------------- */

/*
 * A compute ceiling: the kernel f(out, iters, x) (called name) does
 * flops_per_iter flops an iteration over its grid of grid x block threads.
 * The iteration count is scaled until a run takes about TARGET_SECONDS,
 * then the run is timed.
 */
static kevo_status compute(kevo__gpu *g, const char *name, CUfunction f,
                           unsigned grid, unsigned block, void *x,
                           double flops_per_iter, double *out, kevo_error *err)
{
    const kevo__timing_config calibrate = {true, false, 1, 1, 1, 1.0, 1000.0};
    const kevo__timing_config timed = {true, true, 1, 5, 15, 0.005, 3000.0};
    CUdeviceptr sink = 0;
    size_t sink_bytes = (size_t)grid * block * sizeof(double);
    int iters = 64;
    double t = 0.0;
    void *params[] = {&sink, &iters, x};
    kevo_status rc = kevo__gpu_alloc(g, &sink, sink_bytes, err);
    while (rc == KEVO_OK) {
        rc = time_launch(g, name, f, grid, block, params, &calibrate, &t, err);
        if (rc != KEVO_OK || t >= TARGET_SECONDS / 2 || iters >= (1 << 24))
            break;
        double scale = t > 0.0 ? TARGET_SECONDS / t : 64.0;
        iters = (int)((double)iters * (scale > 64.0 ? 64.0 : scale + 1.0));
        if (iters > (1 << 24))
            iters = 1 << 24;
    }
    if (rc == KEVO_OK)
        rc = time_launch(g, name, f, grid, block, params, &timed, &t, err);
    *out = rc == KEVO_OK && t > 0.0 ? flops_per_iter * iters / t : 0.0;
    kevo__gpu_release(g, sink, sink_bytes);
    return rc;
}

/* FMA on the CUDA cores: 128 flops a thread and iteration, the device full
 * of blocks of 256 threads. */
static kevo_status fma_peak(kevo__gpu *g, bool f64, double *out,
                            kevo_error *err)
{
    const char *name = f64 ? "kevo_probe_fma_f64" : "kevo_probe_fma_f32";
    unsigned block = 256;
    unsigned grid = (unsigned)(g->sm_count * (g->max_threads_per_sm / block));
    float one32 = 1.0f;
    double one64 = 1.0;
    CUfunction f = NULL;
    kevo_status rc = probe(g, name, &f, err);
    if (rc == KEVO_OK)
        rc = compute(g, name, f, grid ? grid : 1, block,
                     f64 ? (void *)&one64 : (void *)&one32,
                     128.0 * grid * block, out, err);
    return rc;
}

/* ---- tensor cores ------------------------------------------------------- */

typedef struct tensor_kind {
    const char *peak; /* "bf16" */
    const char *type; /* in kernel names: kevo_probe_mma_bf16 */
    int k;            /* K of m16n8kK (mma.sync) and of m64n256kK (wgmma) */
} tensor_kind;

static const tensor_kind tensor_kinds[] = {
    {"tf32", "tf32", 8},
    {"fp16", "f16", 16},
    {"bf16", "bf16", 16},
    {"fp8", "e4m3", 32},
};

/* Why mma.sync of kind t does not run on the tensor cores of the device,
 * or NULL when it does. (ptxas lowers e4m3 mma.sync to f16 mma on compute
 * capability 9.0 and 10.x.) */
static const char *mma_sync_missing(const kevo__gpu *g, const tensor_kind *t)
{
    if (g->cc < 80)
        return "mma.sync with these types needs compute capability 8.0";
    if (t->k == 32 && g->cc != 89 && g->cc < 120)
        return "mma.sync with e4m3 runs on the tensor cores at compute "
               "capability 8.9 and 12.x only";
    return NULL;
}

/* mma.sync: four m16n8kK a warp and iteration, 4 blocks of 256 threads an
 * SM. */
static kevo_status mma_sync_peak(kevo__gpu *g, const tensor_kind *t,
                                 double *out, kevo_error *err)
{
    char name[64];
    unsigned grid = (unsigned)g->sm_count * 4;
    uint32_t key = 0x2545f491u;
    double warps = (double)grid * MMA_BLOCK / 32.0;
    CUfunction f = NULL;
    snprintf(name, sizeof(name), "kevo_probe_mma_%s", t->type);
    kevo_status rc = probe(g, name, &f, err);
    if (rc == KEVO_OK)
        rc = compute(g, name, f, grid, MMA_BLOCK, &key,
                     4.0 * 2.0 * 16 * 8 * t->k * warps, out, err);
    return rc;
}

/* wgmma: four m64n256kK a warpgroup and iteration, as many warpgroups an
 * SM as fit. *why (borrowed) says why not where there is none. */
static kevo_status wgmma_peak(kevo__gpu *g, const tensor_kind *t, double *out,
                              const char **why, kevo_error *err)
{
    char name[64];
    uint32_t key = 0x2545f491u;
    CUfunction f = NULL;
    snprintf(name, sizeof(name), "kevo_probe_wgmma_%s", t->type);
    kevo_status rc = wgmma_probe(g, name, &f, why, err);
    if (rc != KEVO_OK || !f)
        return rc;
    /* A hint: the most shared memory the SM can give, for the most
     * warpgroups (a driver that does not take it leaves its default). */
    if (kevo__cu.cuFuncSetAttribute(
            f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100) !=
        CUDA_SUCCESS)
        fprintf(stderr, "kevo-worker gpu: the wgmma probe's shared-memory "
                        "carveout is the driver's default\n");
    unsigned n = per_sm(g, f, WGMMA_BLOCK);
    unsigned grid = (unsigned)g->sm_count * n;
    rc = compute(g, name, f, grid, WGMMA_BLOCK, &key,
                 4.0 * 2.0 * 64 * 256 * t->k * grid, out, err);
    if (rc == KEVO_OK)
        fprintf(stderr,
                "kevo-worker gpu: %s wgmma: %.1f TFLOP/s, %u warpgroups an "
                "SM\n",
                t->peak, *out / 1e12, n);
    return rc;
}

/* The peaks of kind t into peaks (and why not into errors): with mma, its
 * mma.sync figure as PEAK_mma_sync; with wgmma, its wgmma figure as
 * PEAK_wgmma; with both, their best as PEAK. */
static kevo_status tensor(kevo__gpu *g, const tensor_kind *t, bool mma,
                          bool wgmma, json_t *peaks, json_t *errors,
                          kevo_error *err)
{
    char key_mma[32], key_wg[32];
    double m = 0.0, w = 0.0;
    const char *why_m = NULL, *why_w = NULL;
    kevo_status rc = KEVO_OK;
    snprintf(key_mma, sizeof(key_mma), "%s_mma_sync", t->peak);
    snprintf(key_wg, sizeof(key_wg), "%s_wgmma", t->peak);
    if (mma && !(why_m = mma_sync_missing(g, t)))
        rc = mma_sync_peak(g, t, &m, err);
    if (wgmma && rc == KEVO_OK)
        rc = wgmma_peak(g, t, &w, &why_w, err);
    if (rc == KEVO_OK && mma)
        rc = m > 0.0 ? put(peaks, key_mma, json_real(m), err)
                     : put(errors, key_mma,
                           json_string(why_m ? why_m : "not measured"), err);
    if (rc == KEVO_OK && wgmma)
        rc = w > 0.0 ? put(peaks, key_wg, json_real(w), err)
                     : put(errors, key_wg,
                           json_string(why_w ? why_w : "not measured"), err);
    if (rc == KEVO_OK && mma && wgmma)
        rc = m > 0.0 || w > 0.0
                 ? put(peaks, t->peak, json_real(m > w ? m : w), err)
                 : put(errors, t->peak,
                       json_pack("s++", why_m ? why_m : "", "; ",
                                 why_w ? why_w : ""),
                       err);
    return rc;
}

/* ---- the launch latency ------------------------------------------------- */

/*
 * The median time, start to end as the candidates' timer sees it, of an
 * empty kernel of one warp: no shape of any task can take less, which
 * makes it the roofline floor of shapes too small to fill the device.
 */
static kevo_status launch_latency(kevo__gpu *g, double *out, kevo_error *err)
{
    const kevo__timing_config cfg = {true, false, 20, 100, 400, 0.02, 300.0};
    CUfunction f = NULL;
    kevo_status rc = probe(g, "kevo_probe_empty", &f, err);
    if (rc == KEVO_OK)
        rc = time_launch(g, "kevo_probe_empty", f, 1, 32, NULL, &cfg, out, err);
    return rc;
}

/* ---- requests ----------------------------------------------------------- */

/* Measures the ceiling called name into peaks or errors. */
static kevo_status measure_one(kevo__gpu *g, const char *name, json_t *peaks,
                               json_t *errors, kevo_error *err)
{
    double x = 0.0;
    kevo_status rc;
    if (strcmp(name, "bandwidth") == 0)
        return bandwidth(g, peaks, err);
    for (size_t i = 0; i < NSTREAMS; i++) {
        if (strncmp(name, "bandwidth_", 10) == 0 &&
            strcmp(name + 10, streams[i].name) == 0)
            return bandwidth(g, peaks, err);
    }
    for (size_t i = 0; i < sizeof tensor_kinds / sizeof *tensor_kinds; i++) {
        const tensor_kind *t = &tensor_kinds[i];
        size_t n = strlen(t->peak);
        if (strncmp(name, t->peak, n) != 0)
            continue;
        if (name[n] == '\0')
            return tensor(g, t, true, true, peaks, errors, err);
        if (strcmp(name + n, "_mma_sync") == 0)
            return tensor(g, t, true, false, peaks, errors, err);
        if (strcmp(name + n, "_wgmma") == 0)
            return tensor(g, t, false, true, peaks, errors, err);
    }
    if (strcmp(name, "launch") == 0)
        rc = launch_latency(g, &x, err);
    else if (strcmp(name, "fp32") == 0 || strcmp(name, "fp64") == 0)
        rc = fma_peak(g, name[3] == '4', &x, err);
    else
        return put(errors, name,
                   json_string("unknown ceiling (bandwidth, bandwidth_read, "
                               "_write, _copy, _triad, launch, fp32, fp64, "
                               "and tf32, fp16, bf16, fp8 with or without "
                               "_mma_sync or _wgmma)"),
                   err);
    if (rc == KEVO_OK)
        rc = x > 0.0 ? put(peaks, name, json_real(x), err)
                     : put(errors, name, json_string("not measured"), err);
    return rc;
}

/* Merges one probe run's figures (run) into the best so far (best): the
 * highest of each throughput, the lowest launch latency; lo and hi keep
 * each figure's range over the runs. */
static kevo_status merge_run(json_t *best, json_t *lo, json_t *hi,
                             const json_t *run, kevo_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *)run, key, v) {
        double x = json_number_value(v);
        json_t *b = json_object_get(best, key);
        bool lower_wins = strcmp(key, "launch") == 0;
        kevo_status rc = KEVO_OK;
        if (!b ||
            (lower_wins ? x < json_number_value(b) : x > json_number_value(b)))
            rc = put(best, key, json_real(x), err);
        json_t *l = json_object_get(lo, key), *h = json_object_get(hi, key);
        if (rc == KEVO_OK && (!l || x < json_number_value(l)))
            rc = put(lo, key, json_real(x), err);
        if (rc == KEVO_OK && (!h || x > json_number_value(h)))
            rc = put(hi, key, json_real(x), err);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}

/* Each figure's spread over the runs, (highest - lowest) / highest, into
 * spreads; one beyond PEAK_SPREAD_FLAG is said on stderr, since one run
 * fell well short of the best: a GPU shared with other work, clocks
 * still rising. */
static kevo_status put_spreads(json_t *spreads, const json_t *lo,
                               const json_t *hi, kevo_error *err)
{
    const char *key;
    json_t *h;
    json_object_foreach ((json_t *)hi, key, h) {
        double top = json_number_value(h);
        double low = json_number_value(json_object_get(lo, key));
        double spread = top > 0 ? (top - low) / top : 0;
        kevo_status rc = put(spreads, key, json_real(spread), err);
        if (rc != KEVO_OK)
            return rc;
        if (spread > PEAK_SPREAD_FLAG)
            fprintf(stderr,
                    "kevo-worker gpu: the %s ceiling varied by %.0f%% over %d "
                    "runs (%.4g to %.4g): the best is kept; was the GPU "
                    "busy with other work?\n",
                    key, 100 * spread, PEAK_RUNS, low, top);
    }
    return KEVO_OK;
}

kevo_status kevo__peaks_measure(kevo__gpu *g, const json_t *which,
                                json_t **peaks, json_t **errors,
                                json_t **spreads, kevo_error *err)
{
    size_t i;
    const json_t *v;
    kevo_status rc = KEVO_OK;
    json_t *lo = json_object(), *hi = json_object();
    *peaks = json_object();
    *errors = json_object();
    *spreads = json_object();
    if (!*peaks || !*errors || !*spreads || !lo || !hi)
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    json_array_foreach (which, i, v) {
        const char *name = json_string_value(v);
        if (rc != KEVO_OK)
            break;
        if (!name) {
            rc = put(*errors, "?", json_string("not a string"), err);
            continue;
        }
        if (json_object_get(*peaks, name) || json_object_get(*errors, name))
            continue;
        /* A ceiling is a maximum: the best of several runs. */
        for (int r = 0; r < PEAK_RUNS && rc == KEVO_OK; r++) {
            json_t *run = json_object();
            rc = run ? measure_one(g, name, run, *errors, err)
                     : kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            if (rc == KEVO_OK)
                rc = merge_run(*peaks, lo, hi, run, err);
            json_decref(run);
            if (json_object_get(*errors, name))
                break; /* not on this device */
        }
    }
    if (rc == KEVO_OK)
        rc = put_spreads(*spreads, lo, hi, err);
    json_decref(lo);
    json_decref(hi);
    if (rc != KEVO_OK) {
        json_decref(*peaks);
        json_decref(*errors);
        json_decref(*spreads);
        *peaks = *errors = *spreads = NULL;
    }
    return rc;
}

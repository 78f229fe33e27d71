/*
 * test-ptxscan.c: behaviour features from the compiled artefact. The PTX
 * and ptxas logs in tests/data/ptx came from NVRTC (-arch=sm_90
 * --ptxas-options=-v) for the task suite's seeds and for features.cu and
 * warnings.cu, the parameter lists of params.cu's kernels, plus hand-written
 * PTX checked by ptxas (hopper.ptx with TMA and wgmma, edge.ptx with the forms
 * the reader must get right) and a log in the form older ptxas wrote
 * (legacy.log). The occupancy calculator is checked against values of NVIDIA's
 * cuda_occupancy.h (occupancy.txt).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/occupancy.h"
#include "eval/ptxscan.h"
#include "tap.h"

static char *slurp(const char *name, size_t *len)
{
    char *path = kevo__asprintf("%s/tests/data/ptx/%s", tap_srcdir(), name);
    char *data = NULL;
    size_t n = 0;
    if (!path || kevo__read_file(path, true, &data, &n, NULL) != KEVO_OK)
        bail_out("cannot read %s", path ? path : name);
    free(path);
    if (len)
        *len = n;
    return data;
}

/* Scans NAME.ptx (when ptx) and NAME.log (when log) into scan. The PTX
 * is handed over without its NUL, as it comes from a compile reply. */
static void scan_files(kevo_ptxscan *scan, const char *name, bool ptx, bool log)
{
    char file[128];
    kevo_error err = KEVO__ERROR_INIT;
    kevo__ptxscan_init(scan);
    if (ptx) {
        size_t n = 0;
        snprintf(file, sizeof file, "%s.ptx", name);
        char *text = slurp(file, &n);
        char *exact = malloc(n ? n : 1);
        if (!exact)
            bail_out("out of memory");
        memcpy(exact, text, n);
        if (kevo__ptxscan_ptx(scan, exact, n, &err) != KEVO_OK)
            bail_out("%s: %s", file, err.text);
        free(exact);
        free(text);
    }
    if (log) {
        snprintf(file, sizeof file, "%s.log", name);
        char *text = slurp(file, NULL);
        if (kevo__ptxscan_log(scan, text, &err) != KEVO_OK)
            bail_out("%s: %s", file, err.text);
        free(text);
    }
}

static const kevo_ptx_kernel *get(const kevo_ptxscan *scan, const char *name)
{
    for (size_t i = 0; i < scan->n; i++) {
        if (strcmp(scan->kernels[i].name, name) == 0)
            return &scan->kernels[i];
    }
    bail_out("no function %s", name);
    return NULL;
}

/* ---- the suite's seeds -------------------------------------------------- */

static const struct {
    const char *file, *kernel;
    int64_t registers, barriers, smem;
    int memory, warp_ops;
    uint32_t vector_loads, shared_loads, shared_stores, shared_atomics,
        shuffles;
} seeds[] = {
    {"saxpy_seed", "saxpy", 12, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"stencil2d_seed", "stencil2d", 16, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"reduce_sum_seed", "reduce_partial", 26, 1, 32, 0, 1, 0, 1, 1, 0, 10},
    {"reduce_sum_seed", "reduce_final", 31, 1, 128, 0, 1, 0, 1, 1, 0, 10},
    {"softmax_seed", "softmax", 31, 1, 32, 0, 1, 0, 16, 2, 0, 10},
    {"layernorm_seed", "layernorm", 32, 1, 32, 0, 1, 0, 16, 2, 0, 10},
    {"transpose_seed", "transpose", 32, 1, 4224, 2, 0, 0, 5, 5, 0, 0},
    {"sgemm_seed", "sgemm", 58, 1, 4096, 2, 0, 0, 64, 14, 0, 0},
    {"nbody_seed", "nbody", 30, 1, 2048, 2, 0, 2, 4, 1, 0, 0},
    {"histogram_seed", "hist_zero", 8, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"histogram_seed", "hist_shared", 22, 1, 1024, 2, 0, 0, 5, 5, 5, 0},
};

static void test_seeds(void)
{
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(seeds); i++) {
        kevo_ptxscan scan;
        scan_files(&scan, seeds[i].file, true, true);
        const kevo_ptx_kernel *k = kevo__ptxscan_find(&scan, seeds[i].kernel);
        const char *n = seeds[i].kernel;
        ok(k && k->entry && k->in_ptx && k->in_log, "%s: a kernel in both", n);
        if (!k) {
            kevo__ptxscan_free(&scan);
            continue;
        }
        is_int(k->registers, seeds[i].registers, "%s: registers", n);
        is_int(k->barriers, seeds[i].barriers, "%s: barriers", n);
        is_int(k->smem_bytes, seeds[i].smem, "%s: ptxas smem", n);
        is_uint(k->shared_static, (uint64_t)seeds[i].smem,
                "%s: .shared bytes in the PTX agree with ptxas", n);
        ok(!k->shared_dynamic, "%s: no dynamic shared memory", n);
        is_int(k->spill_stores, 0, "%s: no spill stores", n);
        is_int(k->stack_frame, 0, "%s: no stack", n);
        is_uint(k->count[KEVO_PTX_VECTOR_LOADS], seeds[i].vector_loads,
                "%s: vector loads", n);
        is_uint(k->count[KEVO_PTX_SHARED_LOADS], seeds[i].shared_loads,
                "%s: shared loads", n);
        is_uint(k->count[KEVO_PTX_SHARED_STORES], seeds[i].shared_stores,
                "%s: shared stores", n);
        is_uint(k->count[KEVO_PTX_SHARED_ATOMICS], seeds[i].shared_atomics,
                "%s: shared atomics", n);
        is_uint(k->count[KEVO_PTX_SHUFFLES], seeds[i].shuffles, "%s: shuffles",
                n);
        is_int(kevo__ptx_memory_level(k, k->shared_static), seeds[i].memory,
               "%s: memory level", n);
        is_int(kevo__ptx_warp_ops(k), seeds[i].warp_ops, "%s: warp ops", n);
        is_uint(k->count[KEVO_PTX_VECTOR_STORES] + k->count[KEVO_PTX_MMA] +
                    k->count[KEVO_PTX_ASYNC_COPIES] + k->count[KEVO_PTX_TMA],
                0, "%s: no vector stores, tensor cores or async copies", n);
        kevo__ptxscan_free(&scan);
    }
}

/* ---- NVRTC output of features.cu ---------------------------------------- */

static void test_features(void)
{
    kevo_ptxscan scan;
    scan_files(&scan, "features", true, true);
    const kevo_ptx_kernel *k = get(&scan, "vec_copy");
    ok(k->count[KEVO_PTX_VECTOR_LOADS] == 1 &&
           k->count[KEVO_PTX_VECTOR_STORES] == 1,
       "vec_copy: ld.global.nc.v4 and st.global.v4");
    is_int(kevo__ptx_memory_level(k, 0), 1, "vec_copy: vector level");

    k = get(&scan, "tile_dyn");
    ok(k->shared_dynamic && k->shared_static == 0,
       "tile_dyn: extern shared array");
    ok(k->count[KEVO_PTX_SHARED_LOADS] == 1 &&
           k->count[KEVO_PTX_SHARED_STORES] == 1,
       "tile_dyn: shared loads and stores");
    is_int(kevo__ptx_memory_level(k, 1024), 2,
           "tile_dyn: staging with 1 KiB of dynamic shared memory");
    is_int(kevo__ptx_memory_level(k, 1023), 0, "tile_dyn: less is not staging");

    k = get(&scan, "wmma_gemm");
    ok(k->count[KEVO_PTX_MMA] == 1 && k->count[KEVO_PTX_LDMATRIX] == 3,
       "wmma_gemm: wmma.mma and three wmma.load/store");
    is_int(kevo__ptx_memory_level(k, 0), 3, "wmma_gemm: tensor cores");

    k = get(&scan, "async_copy");
    is_uint(k->count[KEVO_PTX_ASYNC_COPIES], 1,
            "async_copy: one cp.async, commit and wait not counted");
    is_uint(k->shared_static, 2048, "async_copy: 2 KiB of shared");
    is_int(kevo__ptx_memory_level(k, 2048), 3, "async_copy: level 3");

    k = get(&scan, "warp_ops");
    ok(k->count[KEVO_PTX_SHUFFLES] == 5 && k->count[KEVO_PTX_VOTES] == 2 &&
           k->count[KEVO_PTX_REDUX] == 1 && k->count[KEVO_PTX_MATCHES] == 1,
       "warp_ops: shfl, vote, redux, match");
    ok(kevo__ptx_warp_ops(k), "warp_ops: warp ops");

    k = get(&scan, "_Z8warp_sumf");
    ok(!k->entry && k->in_ptx && k->in_log && k->registers == -1,
       "warp_sum: a function, not a kernel");
    k = kevo__ptxscan_find(&scan, "scale");
    ok(k && strcmp(k->name, "_Z5scaleILi256EEvPKfPfi") == 0,
       "scale: the template kernel by its unqualified name");
    if (k) {
        is_uint(k->count[KEVO_PTX_SHUFFLES], 5,
                "scale: the shuffles of the function it calls");
        ok(kevo__ptx_warp_ops(k), "scale: warp ops through a call");
        is_int(k->registers, 14, "scale: registers");
    }
    ok(kevo__ptxscan_find(&scan, "warp_sum") == NULL,
       "a device function is not a launchable kernel");
    ok(kevo__ptxscan_find(&scan, "vec") == NULL &&
           kevo__ptxscan_find(&scan, "sca") == NULL,
       "no prefix matches");

    k = get(&scan, "spill_heavy");
    is_int(k->registers, 32, "spill_heavy: 32 registers");
    is_int(k->spill_stores, 128, "spill_heavy: spill stores");
    is_int(k->spill_loads, 140, "spill_heavy: spill loads");
    is_int(k->stack_frame, 96, "spill_heavy: stack frame");
    is_int(kevo__ptxscan_spill_stores(&scan, k), 128,
           "spill_heavy: spills with callees");

    k = get(&scan, "mma_inline");
    ok(k->count[KEVO_PTX_MMA] == 1 && k->count[KEVO_PTX_LDMATRIX] == 1,
       "mma_inline: mma.sync and ldmatrix from inline PTX");
    is_int(k->smem_bytes, 512, "mma_inline: ptxas smem");
    is_uint(k->shared_static, 512, "mma_inline: demoted shared variable");
    kevo__ptxscan_free(&scan);

    scan_files(&scan, "warnings", true, true);
    k = kevo__ptxscan_find(&scan, "axpy");
    ok(k && strcmp(k->name, "_ZN2kv4axpyEfPKfPfi") == 0,
       "a kernel in a namespace by its unqualified name");
    ok(k && k->registers == 10 && k->in_log,
       "the front end's warnings before ptxas are skipped");
    is_uint(scan.n, 1, "one function");
    kevo__ptxscan_free(&scan);
}

/* ---- hand-written PTX --------------------------------------------------- */

static void test_hopper(void)
{
    kevo_ptxscan scan;
    scan_files(&scan, "hopper", true, true);
    const kevo_ptx_kernel *k = get(&scan, "hopper_tile");
    is_uint(k->count[KEVO_PTX_TMA], 1, "hopper: cp.async.bulk.tensor");
    is_uint(k->count[KEVO_PTX_BULK_COPIES], 1, "hopper: cp.async.bulk");
    is_uint(k->count[KEVO_PTX_WGMMA], 1,
            "hopper: wgmma.mma_async, fence and commit not counted");
    ok(k->shared_dynamic, "hopper: dynamic shared memory");
    is_uint(k->shared_static, 8, "hopper: the mbarrier");
    is_int(kevo__ptx_memory_level(k, 8), 3, "hopper: level 3");
    is_int(k->registers, 30, "hopper: registers (ptxas's own log)");
    is_int(k->barriers, 1, "hopper: barriers");
    is_int(k->smem_bytes, 128, "hopper: smem");
    is_int(k->spill_stores, 0, "hopper: the stack line without prefix");
    kevo__ptxscan_free(&scan);
}

/* The cluster features, from PTX as NVRTC writes these instructions. */
static void test_cluster_features(void)
{
    static const char ptx[] =
        ".version 8.5\n.target sm_90a\n.address_size 64\n"
        ".visible .entry k(\n.param .align 64 .b8 k_param_0[128]\n)\n"
        ".reqnctapercluster 2, 1, 1\n{\n"
        ".reg .b32 %r<9>;\n.reg .b64 %rd<4>;\n"
        "mbarrier.init.shared::cta.b64 [%r1], 1;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;\n"
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_"
        "tx::bytes.multicast::cluster [%r2], [%rd1, {%r3, %r4}], [%r1], "
        "%rs1;\n"
        "mapa.shared::cluster.u32 %r5, %r2, %r6;\n"
        "ld.shared::cluster.u32 %r7, [%r5];\n"
        "st.shared::cluster.u32 [%r5], %r7;\n"
        "setmaxnreg.inc.sync.aligned.u32 240;\n"
        "ret;\n}\n";
    kevo_ptxscan scan;
    kevo__ptxscan_init(&scan);
    ok(kevo__ptxscan_ptx(&scan, ptx, strlen(ptx), NULL) == KEVO_OK,
       "cluster features: scanned");
    const kevo_ptx_kernel *k = kevo__ptxscan_find(&scan, "k");
    ok(k != NULL, "cluster features: the kernel");
    if (k) {
        is_uint(k->count[KEVO_PTX_MULTICAST], 1, "... multicast");
        is_uint(k->count[KEVO_PTX_DSMEM], 3,
                "... distributed shared memory: mapa, ld and st");
        is_uint(k->count[KEVO_PTX_MBARRIER], 2, "... mbarrier");
        is_uint(k->count[KEVO_PTX_SETMAXNREG], 1, "... setmaxnreg");
        is_uint(k->count[KEVO_PTX_TMA], 1, "... a TMA copy");
        ok(k->has_params && k->nparams == 1 && k->params[0].size == 128 &&
               k->params[0].align == 64 &&
               k->params[0].kind == KEVO_PTX_PARAM_BYTES,
           "... a 128-byte parameter aligned to 64");
    }
    is_str(kevo__ptx_feature_name(KEVO_PTX_DSMEM), "dsmem", "feature name");
    kevo__ptxscan_free(&scan);
}

static void test_edge(void)
{
    kevo_ptxscan scan;
    scan_files(&scan, "edge", true, true);
    is_uint(scan.n, 3, "edge: three functions, the prototype aside");
    const kevo_ptx_kernel *lane = get(&scan, "lane_sum");
    ok(!lane->entry && lane->in_ptx, "edge: lane_sum is a function");
    ok(lane->count[KEVO_PTX_SHUFFLES] == 1 && lane->count[KEVO_PTX_VOTES] == 1,
       "edge: lane_sum's own instructions, once though it calls itself");
    ok(lane->ncallees == 1 && strcmp(lane->callees[0], "lane_sum") == 0,
       "edge: a call spread over lines");
    is_int(lane->spill_stores, 12, "edge: lane_sum spills");

    const kevo_ptx_kernel *first = get(&scan, "first");
    is_uint(first->count[KEVO_PTX_VECTOR_LOADS], 3,
            "first: predicated, cache-qualified and generic vector loads");
    is_uint(first->count[KEVO_PTX_VECTOR_STORES], 1,
            "first: st.global.v4 (st.param and st.shared aside)");
    ok(first->count[KEVO_PTX_SHARED_LOADS] == 1 &&
           first->count[KEVO_PTX_SHARED_STORES] == 1 &&
           first->count[KEVO_PTX_SHARED_ATOMICS] == 1,
       "first: shared ld, st and atom");
    is_uint(first->shared_static, 4352,
            "first: module-scope staging and counters, as ptxas says");
    is_int(first->smem_bytes, 4352, "first: ptxas smem");
    ok(!first->shared_dynamic, "first: no dynamic shared memory");
    ok(first->count[KEVO_PTX_SHUFFLES] == 1 && kevo__ptx_warp_ops(first),
       "first: the callee's shuffle, not the commented ones");
    is_int(kevo__ptx_memory_level(first, first->shared_static), 2,
           "first: shared staging");
    is_int(kevo__ptxscan_spill_stores(&scan, first), 12,
           "first: the callee's spills count");

    const kevo_ptx_kernel *second = get(&scan, "second");
    is_uint(second->count[KEVO_PTX_ASYNC_COPIES], 2,
            "second: cp.async.ca and .cg, not commit or wait");
    is_uint(second->count[KEVO_PTX_VECTOR_LOADS], 0,
            "second: ld.local.v4 is not a global vector load");
    is_uint(second->count[KEVO_PTX_SHARED_ATOMICS], 1, "second: red.shared");
    ok(second->count[KEVO_PTX_REDUX] == 1 &&
           second->count[KEVO_PTX_MATCHES] == 1,
       "second: redux and match");
    is_uint(second->shared_static, 128, "second: flags only");
    ok(second->shared_dynamic, "second: the extern array");
    is_int(kevo__ptx_memory_level(second, 128), 3, "second: async copies");
    kevo__ptxscan_free(&scan);
}

static void test_logs(void)
{
    kevo_ptxscan scan;
    scan_files(&scan, "legacy", false, true);
    const kevo_ptx_kernel *k = kevo__ptxscan_find(&scan, "gemm");
    ok(k && k->in_log && !k->in_ptx, "legacy: a kernel from the log only");
    if (k) {
        is_int(k->registers, 255, "legacy: 255 registers");
        is_int(k->smem_bytes, 8192, "legacy: 8192+0 bytes smem");
        is_int(k->barriers, 0, "legacy: no barriers field is 0");
        is_int(k->spill_stores, 20, "legacy: spill stores");
        is_int(k->spill_loads, 16, "legacy: spill loads");
        is_int(k->stack_frame, 24, "legacy: stack frame");
    }
    k = kevo__ptxscan_find(&scan, "copy");
    ok(k && k->registers == 8 && k->smem_bytes == 0,
       "legacy: cmem only, no smem");
    k = get(&scan, "_Z6helperPf");
    ok(!k->entry && k->spill_stores == 8 && k->registers == -1,
       "legacy: a function's properties before any kernel");

    kevo__ptxscan_free(&scan);
    kevo__ptxscan_init(&scan);
    ok(kevo__ptxscan_log(&scan, NULL, NULL) == KEVO_OK && scan.n == 0,
       "no log");
    ok(kevo__ptxscan_log(&scan,
                         "candidate.cu(3): warning: Used 5 registers\n"
                         "Function properties for\n",
                         NULL) == KEVO_OK,
       "odd lines");
    ok(kevo__ptxscan_find(&scan, "x") == NULL, "nothing found");
    kevo__ptxscan_free(&scan);
}

static void test_errors(void)
{
    static const struct {
        const char *ptx, *want;
    } bad[] = {
        {".version 8.0\n/* never ends",
         "PTX line 2: a /* comment does not end"},
        {".visible .entry k()\n{\n\tret;\n",
         "PTX line 1: the body of k does not end"},
        {".visible .entry k()\n{\n\t.pragma \"nounroll;\n}\n",
         "PTX line 3: a string does not end"},
        {".version 8.0\n\n.global .b32 x", "PTX line 3: a statement does not "
                                           "end with ';'"},
    };
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(bad); i++) {
        kevo_ptxscan scan;
        kevo_error err = KEVO__ERROR_INIT;
        kevo__ptxscan_init(&scan);
        is_int(kevo__ptxscan_ptx(&scan, bad[i].ptx, strlen(bad[i].ptx), &err),
               KEVO_EPARSE, "bad PTX %zu", i);
        like_str(err.text, bad[i].want, "bad PTX %zu: the message", i);
        kevo__ptxscan_free(&scan);
    }
    kevo_ptxscan scan;
    kevo__ptxscan_init(&scan);
    ok(kevo__ptxscan_ptx(&scan, "", 0, NULL) == KEVO_OK && scan.n == 0,
       "empty PTX");
    const char *two = ".visible .entry a()\n{\n\tshfl.sync.up.b32 %r1, %r2, "
                      "1, 0, -1;\n}\n.visible .entry b()\n{\n\tret;\n}\n";
    size_t cut = strstr(two, ".visible .entry b") - two;
    ok(kevo__ptxscan_ptx(&scan, two, cut, NULL) == KEVO_OK && scan.n == 1,
       "only len bytes are read");
    kevo__ptxscan_free(&scan);
    for (int f = 0; f < KEVO_PTX_FEATURE_COUNT; f++)
        ok(kevo__ptx_feature_name((kevo_ptx_feature)f) != NULL,
           "feature %d has a name", f);
    is_str(kevo__ptx_feature_name(KEVO_PTX_TMA), "tma", "feature name");
    is_str(kevo__ptx_feature_name(KEVO_PTX_FEATURE_COUNT), NULL,
           "no feature past the last");
}

/* ---- occupancy ---------------------------------------------------------- */

static double occ(const kevo_vars *dev, uint32_t threads, uint32_t regs,
                  uint64_t smem, uint32_t bars, const char **by)
{
    kevo_occupancy o;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo__occupancy(dev, threads, regs, smem, bars, &o, &err) != KEVO_OK)
        bail_out("occupancy: %s", err.text);
    if (by)
        *by = o.limited_by;
    return o.occupancy;
}

static void test_occupancy(void)
{
    const char *by = NULL;
    /* sm_90 (the nominal device): 64 warps, 65536 registers, 228 KiB. */
    is_double(occ(NULL, 256, 32, 0, 0, &by), 1.0, 0,
              "256 threads, 32 registers: 8 blocks of 8 warps");
    is_str(by, "warps", "limited by warps");
    is_double(occ(NULL, 1024, 64, 0, 0, &by), 0.5, 0,
              "1024 threads, 64 registers: 1 block of 32 warps");
    is_str(by, "registers", "limited by registers");
    is_double(occ(NULL, 128, 255, 0, 0, NULL), 0.125, 0,
              "128 threads, 255 registers: 8160 rounds to 8192 a warp, "
              "2 blocks");
    is_double(occ(NULL, 1024, 65, 0, 0, &by), 0, 0,
              "1024 threads, 65 registers: does not fit");
    is_double(occ(NULL, 32, 16, 0, 0, &by), 0.5, 0,
              "32 threads: at most 32 blocks");
    is_str(by, "blocks", "limited by blocks");
    is_double(occ(NULL, 256, 32, 49152, 1, &by), 0.5, 0,
              "48 KiB + 1 KiB reserved: 4 blocks");
    is_str(by, "shared memory", "limited by shared memory");
    is_double(occ(NULL, 128, 32, 232449, 1, NULL), 0, 0,
              "one byte over the opt-in limit");
    is_double(occ(NULL, 256, 32, 0, 16, &by), 0.5, 0,
              "16 barriers: 64 / 16 = 4 blocks");
    is_str(by, "barriers", "limited by barriers");
    is_double(occ(NULL, 1056, 8, 0, 0, &by), 0, 0, "1056 threads");
    is_str(by, "block size", "limited by the block size");
    is_double(occ(NULL, 96, 40, 0, 1, NULL), 0.75, 0,
              "96 threads: 3 warps, 16 blocks, 48 warps");

    kevo_occupancy o;
    kevo_error err = KEVO__ERROR_INIT;
    is_int(kevo__occupancy(NULL, 0, 32, 0, 0, &o, &err), KEVO_EINVAL,
           "0 threads");
    kevo_vars *partial = kevo_vars_new();
    kevo_vars_set(partial, "cc", 90);
    kevo_vars_set(partial, "warp_size", 32);
    kevo_error_init(&err);
    is_int(kevo__occupancy(partial, 128, 32, 0, 0, &o, &err), KEVO_ENOENT,
           "a missing device property");
    like_str(err.text, "max_threads_per_block", "the property is named");
    kevo_vars_set(partial, "max_threads_per_block", 0);
    kevo_error_init(&err);
    is_int(kevo__occupancy(partial, 128, 32, 0, 0, &o, &err), KEVO_EINVAL,
           "a property that is not positive");
    kevo_vars_free(partial);

    /* NVIDIA's calculator. */
    char *table = slurp("occupancy.txt", NULL);
    kevo_vars *dev = kevo_vars_new();
    int cases = 0, cc = 0, tpsm = 2048;
    for (char *line = strtok(table, "\n"); line; line = strtok(NULL, "\n")) {
        long long a[8];
        if (line[0] == '#')
            continue;
        if (sscanf(line, "device %lld %lld %lld %lld %lld %lld %lld", &a[0],
                   &a[1], &a[2], &a[3], &a[4], &a[5], &a[6]) == 7) {
            static const char *const names[] = {"cc",
                                                "warp_size",
                                                "max_threads_per_block",
                                                "max_threads_per_sm",
                                                "regs_per_sm",
                                                "smem_per_sm",
                                                "max_smem_per_block"};
            for (int i = 0; i < 7; i++)
                kevo_vars_set(dev, names[i], a[i]);
            cc = (int)a[0];
            tpsm = (int)a[3];
            continue;
        }
        if (sscanf(line, "%lld %lld %lld %lld %lld", &a[0], &a[1], &a[2], &a[3],
                   &a[4]) != 5)
            continue;
        kevo_occupancy got;
        kevo__occupancy(dev, (uint32_t)a[0], (uint32_t)a[1], (uint64_t)a[2],
                        (uint32_t)a[3], &got, NULL);
        double want = (double)(a[4] * ((a[0] + 31) / 32)) / (tpsm / 32);
        ok(got.blocks_per_sm == a[4] && got.occupancy == want,
           "sm_%d: %lld threads, %lld registers, %lld bytes, %lld barriers: "
           "%lld blocks (got %lld)",
           cc, a[0], a[1], a[2], a[3], a[4], (long long)got.blocks_per_sm);
        cases++;
    }
    ok(cases >= 60, "%d cases of the calculator", cases);
    kevo_vars_free(dev);
    free(table);
}

/* ---- parameter lists ------------------------------------------------------
 */

typedef struct want_param {
    kevo_ptx_param_kind kind;
    uint64_t size;
    const char *type;
} want_param;

static void check_params(const kevo_ptx_kernel *k, const want_param *want,
                         size_t n, const char *what)
{
    ok(k && k->has_params, "%s: the parameter list is read", what);
    if (!k || !k->has_params)
        return;
    is_uint(k->nparams, n, "%s: %zu parameters", what, n);
    for (size_t i = 0; i < n && i < k->nparams; i++) {
        const kevo_ptx_param *p = &k->params[i];
        ok(p->kind == want[i].kind && p->size == want[i].size &&
               strcmp(p->type, want[i].type) == 0,
           "%s: parameter %zu is %s, %llu bytes (%s, %llu bytes)", what, i + 1,
           want[i].type, (unsigned long long)want[i].size, p->type,
           (unsigned long long)p->size);
    }
}

/* NVRTC's parameter lists of params.cu: one parameter of each type. */
static void test_params(void)
{
    static const want_param every[] = {
        {KEVO_PTX_PARAM_INT, 8, ".u64"},     /* const float * */
        {KEVO_PTX_PARAM_INT, 8, ".u64"},     /* double * */
        {KEVO_PTX_PARAM_INT, 4, ".u32"},     /* int */
        {KEVO_PTX_PARAM_INT, 4, ".u32"},     /* unsigned */
        {KEVO_PTX_PARAM_INT, 8, ".u64"},     /* long long */
        {KEVO_PTX_PARAM_INT, 8, ".u64"},     /* unsigned long long */
        {KEVO_PTX_PARAM_FLOAT, 4, ".f32"},   /* float */
        {KEVO_PTX_PARAM_FLOAT, 8, ".f64"},   /* double */
        {KEVO_PTX_PARAM_BYTES, 2, ".b8[2]"}, /* __half */
        {KEVO_PTX_PARAM_BYTES, 2, ".b8[2]"}, /* __nv_bfloat16 */
        {KEVO_PTX_PARAM_INT, 1, ".u8"},      /* signed char */
        {KEVO_PTX_PARAM_INT, 1, ".u8"},      /* unsigned char */
        {KEVO_PTX_PARAM_INT, 2, ".u16"},     /* short */
        {KEVO_PTX_PARAM_INT, 2, ".u16"},     /* unsigned short */
        {KEVO_PTX_PARAM_INT, 1, ".u8"},      /* bool */
    };
    static const want_param by_value[] = {
        {KEVO_PTX_PARAM_BYTES, 16, ".b8[16]"}, /* a struct */
        {KEVO_PTX_PARAM_BYTES, 4, ".b8[4]"},   /* __grid_constant__ int */
    };
    static const want_param saxpy[] = {
        {KEVO_PTX_PARAM_FLOAT, 4, ".f32"}, {KEVO_PTX_PARAM_INT, 8, ".u64"},
        {KEVO_PTX_PARAM_INT, 8, ".u64"},   {KEVO_PTX_PARAM_INT, 8, ".u64"},
        {KEVO_PTX_PARAM_INT, 4, ".u32"},
    };
    kevo_ptxscan scan;
    scan_files(&scan, "params", true, false);
    const kevo_ptx_kernel *k = kevo__ptxscan_find(&scan, "every_type");
    ok(k && strncmp(k->name, "_Z10every_type", 14) == 0,
       "every_type: a C++ kernel, found by its plain name (%s)",
       k ? k->name : "none");
    check_params(k, every, KEVO_ARRAY_SIZE(every), "every_type");
    check_params(kevo__ptxscan_find(&scan, "by_value"), by_value,
                 KEVO_ARRAY_SIZE(by_value), "by_value");
    check_params(kevo__ptxscan_find(&scan, "none"), NULL, 0, "none");
    kevo__ptxscan_free(&scan);
    scan_files(&scan, "saxpy_seed", true, false);
    check_params(kevo__ptxscan_find(&scan, "saxpy"), saxpy,
                 KEVO_ARRAY_SIZE(saxpy), "saxpy seed");
    kevo__ptxscan_free(&scan);

    /* The forms a header may take, and what is not read. */
    kevo_ptx_kernel h = {0};
    static const want_param attrs[] = {
        {KEVO_PTX_PARAM_INT, 8, ".u64"},
        {KEVO_PTX_PARAM_INT, 4, ".s32"},
        {KEVO_PTX_PARAM_BYTES, 24, ".b32[6]"},
        {KEVO_PTX_PARAM_OTHER, 0, ".texref"},
    };
    ok(kevo__ptx_header_params(&h, " ( .param .u64 .ptr .global .align 16 p, "
                                   ".param .s32 n, .param .align 4 .b32 "
                                   "m[2][3], .param .texref t ) .maxntid "
                                   "256, 1, 1") == KEVO_OK,
       "a header with attributes, a two-dimensional array and a texture");
    check_params(&h, attrs, KEVO_ARRAY_SIZE(attrs), "attributes");
    static const char *const unreadable[] = {
        "",
        "no list",
        "( .param .u32 )",
        "( .param .u32 a b )",
        "( .param .b8 a[x] )",
        "( .u32 a )",
        "( .param .u32 a",
    };
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(unreadable); i++) {
        ok(kevo__ptx_header_params(&h, unreadable[i]) == KEVO_OK &&
               !h.has_params && h.nparams == 0 && !h.params,
           "'%s': no parameter list", unreadable[i]);
    }
    free(h.params);

    char buf[128];
    static const struct {
        kevo_ptx_param p;
        const char *text;
    } texts[] = {
        {{KEVO_PTX_PARAM_INT, 8, ".u64", 0},
         "a pointer or a 64-bit integer (.u64)"},
        {{KEVO_PTX_PARAM_INT, 4, ".u32", 0}, "a 32-bit integer (.u32)"},
        {{KEVO_PTX_PARAM_FLOAT, 4, ".f32", 0}, "a 32-bit float (.f32)"},
        {{KEVO_PTX_PARAM_BYTES, 2, ".b8[2]", 0},
         "an object of 2 bytes passed by value (.b8[2])"},
        {{KEVO_PTX_PARAM_OTHER, 0, ".texref", 0}, "a .texref parameter"},
        {{KEVO_PTX_PARAM_BYTES, 128, ".b8[128]", 64},
         "an object of 128 bytes aligned to 64 passed by value (.b8[128])"},
    };
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(texts); i++)
        is_str(kevo__ptx_param_text(&texts[i].p, buf, sizeof buf),
               texts[i].text, "parameter text %zu", i);
}

int main(void)
{
    test_seeds();
    test_params();
    test_features();
    test_hopper();
    test_cluster_features();
    test_edge();
    test_logs();
    test_errors();
    test_occupancy();
    return done_testing();
}

/*
 * nvrtc-peaks: the worker's ceiling probes (worker/peaks.cu.h) without
 * a GPU. NVRTC compiles them, through the worker's own compile function,
 * for every architecture it supports from sm_75 on and for sm_90a; the
 * sm_90a PTX has every probe the worker looks up, the wgmma kernels issue
 * wgmma m64n256 with FP32 accumulators between wgmma.fence, commit_group
 * and wait_group, with shared-memory descriptors in the 128-byte swizzle
 * layout (decoded here field by field) after a proxy fence, and ptxas
 * compiles them without spilling or serialising them; the streams move
 * 16-byte words; mma.sync runs from sm_80 on (e4m3 from sm_89 on), and no
 * wgmma is left where the target is not sm_90a.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <nvrtc.h>

#include "gpu.h"
#include "peaks.cu.h"
#include "suite_util.h"
#include "tap.h"

#define NAME "kevo_probes.cu"

/* Every kernel peaks.c looks up, and the mma and wgmma type suffixes. */
static const char *const probes[] = {
    "kevo_probe_empty",      "kevo_probe_read",       "kevo_probe_write",
    "kevo_probe_copy",       "kevo_probe_triad",      "kevo_probe_fma_f32",
    "kevo_probe_fma_f64",    "kevo_probe_mma_f16",    "kevo_probe_mma_bf16",
    "kevo_probe_mma_tf32",   "kevo_probe_mma_e4m3",   "kevo_probe_wgmma_f16",
    "kevo_probe_wgmma_bf16", "kevo_probe_wgmma_tf32", "kevo_probe_wgmma_e4m3",
};

static const struct {
    const char *type;  /* kernel name suffix */
    const char *wgmma; /* the instruction's shape and types */
    const char *mma;
} tensor[] = {
    {"f16", "m64n256k16.f32.f16.f16", "m16n8k16.row.col.f32.f16.f16.f32"},
    {"bf16", "m64n256k16.f32.bf16.bf16", "m16n8k16.row.col.f32.bf16.bf16.f32"},
    {"tf32", "m64n256k8.f32.tf32.tf32", "m16n8k8.row.col.f32.tf32.tf32.f32"},
    {"e4m3", "m64n256k32.f32.e4m3.e4m3", "m16n8k32.row.col.f32.e4m3.e4m3.f32"},
};

/* The probes compiled for arch by the worker's compile function (a cubin,
 * or PTX for compute_); NULL with the error printed on failure. */
static char *compile(const char *arch)
{
    char *image = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo__gpu_compile(kevo__probes_source, NAME, arch, &image, &err) !=
        KEVO_OK)
        diag("%s: %s", arch, err.text);
    return image;
}

static size_t count(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; p && (p = strstr(p, what)) != NULL; p++)
        n++;
    return n;
}

static void test_every_arch(void)
{
    int n = 0, *archs = suite_nvrtc_archs(75, &n);
    for (int i = 0; i < n; i++) {
        char arch[32];
        snprintf(arch, sizeof(arch), "sm_%d", archs[i]);
        char *cubin = compile(arch);
        ok(cubin != NULL, "the probes compile for %s", arch);
        free(cubin);
    }
    free(archs);
    char *cubin = compile("sm_90a");
    ok(cubin != NULL, "the probes compile for sm_90a");
    free(cubin);
}

/* The descriptor constant of a wgmma entry: the 64-bit immediate or-ed
 * into the start address (PTX "or.b64 %rd, %rd, N;"); 0 when none. */
static uint64_t descriptor_bits(const char *entry)
{
    for (const char *p = strstr(entry, "or.b64"); p;
         p = strstr(p + 1, "or.b64")) {
        const char *last = NULL;
        for (const char *c = p; *c && *c != ';'; c++)
            last = *c == ',' ? c : last;
        uint64_t v = last ? strtoull(last + 1, NULL, 10) : 0;
        if (v >> 32)
            return v;
    }
    return 0;
}

static void test_wgmma_ptx(void)
{
    char *ptx = compile("compute_90a");
    if (!ok(ptx != NULL, "the probes compile to compute_90a PTX"))
        return;
    size_t found = 0;
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(probes); i++) {
        char *e = suite_ptx_entry_text(ptx, probes[i]);
        if (e)
            found++;
        else
            diag("missing: %s", probes[i]);
        free(e);
    }
    ok(found == KEVO_ARRAY_SIZE(probes) &&
           count(ptx, ".entry ") == KEVO_ARRAY_SIZE(probes),
       "compute_90a: the PTX has the %zu probes the worker looks up, and no "
       "other",
       found);

    for (size_t t = 0; t < KEVO_ARRAY_SIZE(tensor); t++) {
        char name[64], insn[96];
        snprintf(name, sizeof(name), "kevo_probe_wgmma_%s", tensor[t].type);
        snprintf(insn, sizeof(insn), "wgmma.mma_async.sync.aligned.%s {",
                 tensor[t].wgmma);
        char *e = suite_ptx_entry_text(ptx, name);
        const char *w = e ? strstr(e, insn) : NULL;
        /* the 128 accumulators: 127 commas inside the braces */
        const char *close = w ? strchr(w, '}') : NULL;
        size_t commas = 0;
        for (const char *c = w; c && c < close; c++)
            commas += *c == ',';
        ok(w && count(e, insn) >= 4 && commas == 127,
           "%s: wgmma.mma_async %s with 128 fp32 accumulators, four an "
           "iteration",
           name, tensor[t].wgmma);
        ok(e && count(e, "wgmma.fence.sync.aligned;") >= 1 &&
               count(e, "wgmma.commit_group.sync.aligned;") >= 1 &&
               count(e, "wgmma.wait_group.sync.aligned 1;") >= 1 &&
               count(e, "wgmma.wait_group.sync.aligned 0;") == 1,
           "%s: fence before the group, commit after it, wait for all but one "
           "in the loop and for all after it",
           name);
        const char *fence =
            e ? strstr(e, "fence.proxy.async.shared::cta;") : NULL;
        const char *bar = e ? strstr(e, "bar.sync") : NULL;
        const char *first = e ? strstr(e, "wgmma.") : NULL;
        ok(fence && bar && first && fence < bar && bar < first,
           "%s: the shared-memory stores pass a proxy fence and a barrier "
           "before the first wgmma",
           name);
        /* PTX ISA, matrix descriptor: start address bits 0-13, leading
         * byte offset 16-29, stride byte offset 32-45 (16-byte units),
         * base offset 49-51, swizzle mode 62-63 (1: 128-byte). */
        uint64_t d = e ? descriptor_bits(e) : 0;
        ok((d & 0x3fff) == 0 && ((d >> 16) & 0x3fff) == 1 &&
               ((d >> 32) & 0x3fff) == 1024 / 16 && ((d >> 49) & 7) == 0 &&
               (d >> 62) == 1 && (d & 0x3ff1c000c000c000ull) == 0,
           "%s: descriptor 0x%016" PRIx64 ": 128-byte swizzle, 1024 bytes "
           "between 8-row groups, leading offset 16 bytes, base offset 0",
           name, d);
        char mma[64];
        snprintf(mma, sizeof(mma), "kevo_probe_mma_%s", tensor[t].type);
        char *m = suite_ptx_entry_text(ptx, mma);
        snprintf(insn, sizeof(insn), "mma.sync.aligned.%s", tensor[t].mma);
        ok(m && count(m, insn) >= 4,
           "%s: mma.sync.aligned.%s, four accumulators", mma, tensor[t].mma);
        free(m);
        free(e);
    }

    /* 16-byte accesses, four in flight a thread */
    static const struct {
        const char *name, *load, *store;
    } streams[] = {
        {"kevo_probe_read", ".v4.u32", NULL},
        {"kevo_probe_write", NULL, "st.global.v4.u32"},
        {"kevo_probe_copy", ".v4.u32", "st.global.v4.u32"},
        {"kevo_probe_triad", ".v4.f32", "st.global.v4.f32"},
    };
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(streams); i++) {
        char *e = suite_ptx_entry_text(ptx, streams[i].name);
        char load[32];
        snprintf(load, sizeof(load), "ld.global.nc%s",
                 streams[i].load ? streams[i].load : "");
        ok(e && (!streams[i].load || count(e, load) >= 5) &&
               (!streams[i].store || count(e, streams[i].store) >= 5) &&
               (streams[i].store || !strstr(e, "st.global.v4")),
           "%s: 16-byte accesses, four a thread in the loop and one in the "
           "tail",
           streams[i].name);
        free(e);
    }
    free(ptx);
}

/* ptxas's report of the sm_90a cubin: no spill, no warning (such as the
 * one that says wgmma is serialised), and the wgmma kernels' registers. */
static void test_ptxas_report(void)
{
    nvrtcProgram prog = NULL;
    const char *opts[] = {"--gpu-architecture=sm_90a", "-std=c++17",
                          "--ptxas-options=-v"};
    size_t n = 0;
    char *log = NULL;
    if (nvrtcCreateProgram(&prog, kevo__probes_source, NAME, 0, NULL, NULL) !=
            NVRTC_SUCCESS ||
        nvrtcCompileProgram(prog, 3, opts) != NVRTC_SUCCESS ||
        nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS ||
        !(log = calloc(1, n + 1)) ||
        nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) {
        ok(0, "sm_90a with ptxas -v: compiles");
        nvrtcDestroyProgram(&prog);
        free(log);
        return;
    }
    ok(!strstr(log, "arning") && !strstr(log, "erializ") &&
           !strstr(log, "Performance Loss"),
       "sm_90a: ptxas warns of nothing (no serialised wgmma)");
    ok(count(log, "Used ") == KEVO_ARRAY_SIZE(probes) &&
           count(log, " 0 bytes spill stores, 0 bytes spill loads") ==
               KEVO_ARRAY_SIZE(probes),
       "sm_90a: none of the %zu probes spills", KEVO_ARRAY_SIZE(probes));
    static const char head[] = "Compiling entry function '";
    for (const char *p = strstr(log, head); p; p = strstr(p + 1, head)) {
        const char *name = p + strlen(head);
        const char *used = strstr(name, "Used ");
        if (strncmp(name, "kevo_probe_wgmma_", 17) != 0)
            continue;
        int regs = used ? atoi(used + 5) : 0;
        ok(regs > 128 && regs <= 255,
           "%.*s: %d registers (128 accumulators; at most 168 lets three "
           "warpgroups share an SM)",
           (int)strcspn(name, "'"), name, regs);
    }
    nvrtcDestroyProgram(&prog);
    free(log);
}

static void test_older_targets(void)
{
    char *ptx = compile("compute_90");
    ok(ptx && !strstr(ptx, "wgmma.") && strstr(ptx, "mma.sync"),
       "compute_90 (no a): no wgmma, mma.sync kept");
    free(ptx);

    ptx = compile("compute_80");
    char *e4m3 = ptx ? suite_ptx_entry_text(ptx, "kevo_probe_mma_e4m3") : NULL;
    char *bf16 = ptx ? suite_ptx_entry_text(ptx, "kevo_probe_mma_bf16") : NULL;
    ok(ptx && !strstr(ptx, "wgmma.") && e4m3 && !strstr(e4m3, "mma.sync") &&
           bf16 && strstr(bf16, "mma.sync"),
       "compute_80: mma.sync, but not with e4m3 (8.9 on), and no wgmma");
    free(e4m3);
    free(bf16);
    free(ptx);

    ptx = compile("compute_89");
    e4m3 = ptx ? suite_ptx_entry_text(ptx, "kevo_probe_mma_e4m3") : NULL;
    ok(e4m3 && strstr(e4m3, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3"),
       "compute_89: mma.sync with e4m3");
    free(e4m3);
    free(ptx);

    ptx = compile("compute_75");
    bf16 = ptx ? suite_ptx_entry_text(ptx, "kevo_probe_mma_bf16") : NULL;
    ok(bf16 && !strstr(bf16, "mma.sync"),
       "compute_75: the mma.sync probes are empty (they need sm_80)");
    free(bf16);
    free(ptx);
}

int main(void)
{
    test_every_arch();
    test_wgmma_ptx();
    test_ptxas_report();
    test_older_targets();
    return done_testing();
}

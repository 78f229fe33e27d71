/*
 * prompt_device.c: the device in the words of a prompt: its name, its SMs,
 * threads, registers and shared memory per SM and per block (with the
 * default and opt-in shared-memory limits), its L2, and its measured
 * ceilings with their units and the ridge point, from the JSON object the
 * host's device_json() gives (kevo-operator(7)); and the target NVRTC
 * compiles for, with what it has. What each target has was found by
 * compiling each instruction with NVRTC 13.0 for each target
 * (tests/test-compile-pool.c compiles them again).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <jansson.h>

#include "prompt_eval.h"

/* The largest number of registers a block may use on every device since
 * compute capability 3.0, and a thread's. */
#define REGS_PER_BLOCK 65536
#define REGS_PER_THREAD 255
/* The shared memory a block gets without opting in. */
#define SMEM_DEFAULT 49152

/* Keys of the device object shown by put_device itself. */
static const char *const device_keys[] = {"name",
                                          "arch",
                                          "cc",
                                          "sm_count",
                                          "warp_size",
                                          "max_threads_per_block",
                                          "max_threads_per_sm",
                                          "max_smem_per_block",
                                          "smem_per_sm",
                                          "regs_per_sm",
                                          "l2_bytes",
                                          "bandwidth",
                                          "launch_latency",
                                          "peaks",
                                          "peak"};

static bool device_key(const char *key)
{
    for (size_t i = 0; i < sizeof device_keys / sizeof *device_keys; i++) {
        if (strcmp(key, device_keys[i]) == 0)
            return true;
    }
    return false;
}

void kevo__llm_put_device(llm_buf *b, const char *device_json)
{
    json_t *d = json_loads(device_json, 0, NULL);
    if (!json_is_object(d)) {
        json_decref(d);
        kevo__llm_buf_printf(b, "%s\n", device_json);
        return;
    }
    const char *name = json_string_value(json_object_get(d, "name"));
    if (name)
        kevo__llm_buf_printf(b, "%s\n", name);
    double cc = kevo__llm_num_at(d, "cc"),
           sms = kevo__llm_num_at(d, "sm_count"),
           warp = kevo__llm_num_at(d, "warp_size");
    if (kevo__llm_positive(cc) || kevo__llm_positive(sms)) {
        kevo__llm_buf_puts(b, "- ");
        if (kevo__llm_positive(cc))
            kevo__llm_buf_printf(b, "compute capability %d.%d%s", (int)cc / 10,
                                 (int)cc % 10,
                                 kevo__llm_positive(sms) ? ", " : "");
        if (kevo__llm_positive(sms))
            kevo__llm_buf_printf(b, "%.0f SMs", sms);
        if (kevo__llm_positive(warp))
            kevo__llm_buf_printf(b, ", warp of %.0f threads", warp);
        kevo__llm_buf_puts(b, "\n");
    }
    double tsm = kevo__llm_num_at(d, "max_threads_per_sm"),
           rsm = kevo__llm_num_at(d, "regs_per_sm"),
           ssm = kevo__llm_num_at(d, "smem_per_sm");
    if (kevo__llm_positive(tsm) || kevo__llm_positive(rsm) ||
        kevo__llm_positive(ssm)) {
        const char *sep = "";
        kevo__llm_buf_puts(b, "- per SM: ");
        if (kevo__llm_positive(tsm)) {
            kevo__llm_buf_printf(b, "%.0f threads", tsm);
            sep = ", ";
        }
        if (kevo__llm_positive(rsm)) {
            kevo__llm_buf_printf(b, "%s%.0f registers", sep, rsm);
            sep = ", ";
        }
        if (kevo__llm_positive(ssm)) {
            kevo__llm_buf_printf(b, "%s", sep);
            kevo__llm_put_kib(b, ssm);
            kevo__llm_buf_puts(b, " of shared memory");
        }
        kevo__llm_buf_puts(b, "\n");
    }
    double tb = kevo__llm_num_at(d, "max_threads_per_block"),
           sb = kevo__llm_num_at(d, "max_smem_per_block");
    if (kevo__llm_positive(tb) || kevo__llm_positive(sb)) {
        kevo__llm_buf_puts(b, "- per block: ");
        if (kevo__llm_positive(tb))
            kevo__llm_buf_printf(b, "%.0f threads, ", tb);
        double regs = kevo__llm_positive(rsm) && rsm < REGS_PER_BLOCK
                          ? rsm
                          : REGS_PER_BLOCK;
        kevo__llm_buf_printf(b, "%.0f registers (at most %d a thread)", regs,
                             REGS_PER_THREAD);
        if (kevo__llm_positive(sb) && sb > SMEM_DEFAULT) {
            kevo__llm_buf_puts(b,
                               ", shared memory 48 KiB by default and up to ");
            kevo__llm_put_kib(b, sb);
            kevo__llm_buf_puts(b, " with the opt-in, which kevo makes for you "
                                  "when a launch asks for more than 48 KiB");
        } else if (kevo__llm_positive(sb)) {
            kevo__llm_buf_puts(b, ", shared memory up to ");
            kevo__llm_put_kib(b, sb);
        }
        kevo__llm_buf_puts(b, "\n");
    }
    double l2 = kevo__llm_num_at(d, "l2_bytes");
    if (kevo__llm_positive(l2)) {
        kevo__llm_buf_puts(b, "- L2 cache: ");
        kevo__llm_put_kib(b, l2);
        kevo__llm_buf_puts(b, "\n");
    }

    double bw = kevo__llm_num_at(d, "bandwidth"),
           lat = kevo__llm_num_at(d, "launch_latency");
    json_t *peaks = json_object_get(d, "peaks");
    if (kevo__llm_positive(bw) || kevo__llm_positive(lat) ||
        json_object_size(peaks) > 0) {
        const char *sep = "";
        kevo__llm_buf_puts(b, "- measured: ");
        if (kevo__llm_positive(bw)) {
            kevo__llm_buf_printf(b,
                                 "memory bandwidth %.0f GB/s (bytes read plus "
                                 "written)",
                                 bw / 1e9);
            sep = ", ";
        }
        const char *kind;
        json_t *v;
        json_object_foreach (peaks, kind, v) {
            if (!kevo__llm_positive(kevo__llm_num(v)))
                continue;
            kevo__llm_buf_printf(b, "%s%s peak %.1f TFLOP/s", sep, kind,
                                 kevo__llm_num(v) / 1e12);
            sep = ", ";
        }
        if (kevo__llm_positive(lat))
            kevo__llm_buf_printf(b,
                                 "%slaunch latency %.1f us (the least time of "
                                 "any shape)",
                                 sep, lat * 1e6);
        kevo__llm_buf_puts(b, "\n");
    }
    const char *kind = json_string_value(json_object_get(d, "peak"));
    double peak = kind ? kevo__llm_num(json_object_get(peaks, kind)) : NAN;
    if (kevo__llm_positive(bw) && kevo__llm_positive(peak))
        kevo__llm_buf_printf(
            b,
            "- ridge point: %.1f flop/byte (the %s peak over "
            "the bandwidth): a shape whose cost model has more "
            "flops per byte is compute-bound, fewer "
            "memory-bound\n",
            peak / bw, kind);
    const char *key;
    json_t *v;
    json_object_foreach (d, key, v) {
        if (device_key(key) || kevo__llm_hidden_key(key))
            continue;
        kevo__llm_buf_printf(b, "- %s: ", key);
        kevo__llm_put_value(b, v);
        kevo__llm_buf_puts(b, "\n");
    }
    json_decref(d);
}

/* ---- the target ---------------------------------------------------------- */

/* What an architecture-specific target alone has, by the compute
 * capabilities it serves (major * 10 + minor, [from, to)), and what this
 * device lacks that another one has. */
static const struct {
    int from, to;
    const char *only;
    const char *lacks;
} targets[] = {
    {90, 100,
     "warpgroup MMA (wgmma.mma_async, with wgmma.fence, "
     "wgmma.commit_group and wgmma.wait_group) and setmaxnreg",
     NULL},
    {100, 120,
     "the tcgen05 instructions (tcgen05.mma on tensor memory, with "
     "tcgen05.alloc, tcgen05.ld, tcgen05.st and tcgen05.commit) and "
     "setmaxnreg",
     "wgmma, which only sm_90a has"},
    {120, 130, "setmaxnreg",
     "wgmma (sm_90a's) or tcgen05 (sm_100a's): its tensor cores are "
     "reached through mma.sync"},
};

/* What every target from compute capability 9.0 on has. */
static const char since_hopper[] =
    "thread-block clusters (a launch line ends with cluster(X[, Y[, Z]]), "
    "or the kernel has __cluster_dims__(X, Y, Z); the grid must be a "
    "multiple of the cluster, up to 16 blocks; distributed shared memory "
    "across the cluster's blocks and multicast), bulk copies between "
    "global and shared memory (cp.async.bulk, completing on an mbarrier "
    "with a transaction count), tensor copies (cp.async.bulk.tensor) "
    "through a tensor map that kevo encodes from a tensormap line of the "
    "kevo:launch block, and programmatic dependent launch (pdl after a "
    "launch line; the kernel calls cudaGridDependencySynchronize())";

/* "sm_90a", "sm_100", ... as the compute capability it names (90, 100),
 * and whether it is architecture-specific; 0 when arch is no such name. */
static int arch_cc(const char *arch, bool *specific)
{
    int cc = 0;
    size_t i = 3;
    *specific = false;
    if (strncmp(arch, "sm_", 3) != 0)
        return 0;
    for (; arch[i] >= '0' && arch[i] <= '9' && i < 7; i++)
        cc = cc * 10 + (arch[i] - '0');
    if (i == 3)
        return 0;
    *specific = arch[i] == 'a';
    return arch[i] == '\0' || (*specific && arch[i + 1] == '\0') ? cc : 0;
}

void kevo__llm_put_target(llm_buf *b, const char *device_json,
                          const char *options)
{
    json_t *d = device_json ? json_loads(device_json, 0, NULL) : NULL;
    const char *arch = json_string_value(json_object_get(d, "arch"));
    bool specific = false;
    int cc = arch ? arch_cc(arch, &specific) : 0;
    if (!cc) {
        kevo__llm_buf_printf(b,
                             "NVRTC compiles the source for the device's "
                             "architecture with these options: -arch (the "
                             "device's) %s, -DNAME=VALUE for each parameter, "
                             "and -DKEVO_EVAL=1. ",
                             options);
        json_decref(d);
        return;
    }
    kevo__llm_buf_printf(b, "NVRTC compiles the source for %s, ", arch);
    if (specific)
        kevo__llm_buf_printf(b,
                             "the architecture-specific target of this "
                             "device (compute capability %d.%d)",
                             cc / 10, cc % 10);
    else
        kevo__llm_buf_printf(b,
                             "the target of this device (compute capability "
                             "%d.%d%s)",
                             cc / 10, cc % 10,
                             cc < 90 ? ", which has no architecture-specific "
                                       "target"
                                     : "");
    kevo__llm_buf_printf(b,
                         ", with exactly these options: -arch=%s %s, "
                         "-DNAME=VALUE for each parameter, and "
                         "-DKEVO_EVAL=1. The code only ever runs on this "
                         "device: write for it alone, with no #if on "
                         "__CUDA_ARCH__ and no fallback for another "
                         "architecture. ",
                         arch, options);
    if (cc < 90) {
        kevo__llm_buf_printf(b,
                             "wgmma, setmaxnreg, thread-block clusters and "
                             "bulk or tensor copies (cp.async.bulk) are not "
                             "available on %s: they need compute capability "
                             "9.0 or later%s. ",
                             arch,
                             cc >= 80 ? "; its tensor cores are reached "
                                        "through mma.sync (with ldmatrix), "
                                        "and cp.async copies global memory "
                                        "to shared memory asynchronously"
                                      : "");
        json_decref(d);
        return;
    }
    size_t t = 0;
    while (t < sizeof targets / sizeof *targets &&
           !(cc >= targets[t].from && cc < targets[t].to))
        t++;
    bool known = t < sizeof targets / sizeof *targets;
    if (specific)
        kevo__llm_buf_printf(b,
                             "%s has what only the architecture-specific "
                             "target has: %s; ",
                             arch,
                             known ? targets[t].only
                                   : "the instructions of this architecture "
                                     "alone");
    else
        kevo__llm_buf_printf(b,
                             "%s is not the architecture-specific target, "
                             "so what only that has is not available (%s); "
                             "%s has ",
                             arch,
                             known ? targets[t].only
                                   : "the instructions of this architecture "
                                     "alone",
                             arch);
    kevo__llm_buf_printf(b,
                         "%swhat every target from compute capability 9.0 "
                         "on has: %s. ",
                         specific ? "and " : "", since_hopper);
    if (known && targets[t].lacks)
        kevo__llm_buf_printf(b, "This device has no %s. ", targets[t].lacks);
    json_decref(d);
}

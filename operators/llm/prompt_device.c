/*
 * prompt_device.c: the device in the words of a prompt: its name, its SMs,
 * threads, registers and shared memory per SM and per block (with the
 * default and opt-in shared-memory limits), its L2, and its measured
 * ceilings with their units and the ridge point, from the JSON object the
 * host's device_json() gives (kevo-operator(7)).
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

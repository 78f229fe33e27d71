/*
 * test-ceilings.c: the ceilings cache (lib/eval/ceilings.c) without a GPU: the
 * names it knows (the ceilings and the figures of the probes behind them),
 * a worker's "peaks" reply taken in and read back, a cache file written and
 * loaded again, and a file the previous release wrote (format 2, whose
 * bandwidth was the best of copies and a two-in, one-out kernel,
 * tests/data/ceilings) left for measuring again; a file of another device,
 * and replies with values that are not positive numbers.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/ceilings.h"
#include "tap.h"

#define UUID "GPU-7f3a2c41-9d0e-4b6a-8c15-2e94d1b3a077"
#define DRIVER 13000

static char base[64];

static json_t *device(const char *uuid)
{
    json_t *d =
        json_pack("{s:s, s:s}", "name", "NVIDIA H100 80GB HBM3", "uuid", uuid);
    if (!d)
        bail_out("out of memory");
    return d;
}

/* A reply's "peaks" object as the worker sends it for "bandwidth",
 * "launch", "fp32" and "bf16" on a device of compute capability 9.0. */
static json_t *reply_peaks(void)
{
    json_t *p = json_pack(
        "{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "bandwidth",
        3.1e12, "bandwidth_read", 3.1e12, "bandwidth_write", 2.9e12,
        "bandwidth_copy", 2.95e12, "bandwidth_triad", 3.05e12, "launch", 2.1e-6,
        "fp32", 6.4e13, "bf16", 8.1e14, "bf16_mma_sync", 6.6e14, "bf16_wgmma",
        8.1e14, "int4_dp4a", 1.0e15);
    if (!p)
        bail_out("out of memory");
    return p;
}

static void test_names(void)
{
    static const char *const known[] = {
        "bandwidth",      "launch",
        "fp32",           "fp64",
        "tf32",           "fp16",
        "bf16",           "fp8",
        "bandwidth_read", "bandwidth_write",
        "bandwidth_copy", "bandwidth_triad",
        "tf32_mma_sync",  "tf32_wgmma",
        "fp16_mma_sync",  "fp16_wgmma",
        "bf16_mma_sync",  "bf16_wgmma",
        "fp8_mma_sync",   "fp8_wgmma",
    };
    size_t n = 0;
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(known); i++)
        n += kevo__ceilings_known(known[i]);
    is_uint(n, KEVO_ARRAY_SIZE(known),
            "every ceiling and probe figure is known by name");
    ok(!kevo__ceilings_known("bandwidth_memcpy") &&
           !kevo__ceilings_known("fp8_hmma") && !kevo__ceilings_known("") &&
           !kevo__ceilings_known(NULL),
       "other names are not");
    int i = 0;
    while (kevo__ceilings_detail_name(i))
        i++;
    is_int(i, KEVO__NDETAILS, "%d probe figures", KEVO__NDETAILS);
    is_str(kevo__ceilings_detail_name(0), "bandwidth_read", "the first");
    ok(!kevo__ceilings_detail_name(-1), "none before it");
}

static void test_reply_and_file(void)
{
    kevo__ceilings c, again;
    kevo_error err = KEVO__ERROR_INIT;
    json_t *dev = device(UUID), *peaks = reply_peaks();
    char *path = kevo__asprintf("%s/ceilings/%s-%d.json", base, UUID, DRIVER);

    is_int(kevo__ceilings_load(&c, base, dev, DRIVER, &err), KEVO_OK,
           "no cache file yet: loads empty");
    is_str(c.path, path, "the cache file is BASE/ceilings/UUID-DRIVER.json");
    ok(!kevo__ceilings_has(&c, "bandwidth") &&
           !kevo__ceilings_has(&c, "bandwidth_read") &&
           kevo__ceilings_get(&c, "bf16_wgmma") == 0,
       "nothing is known");

    is_int(kevo__ceilings_update(&c, peaks, &err), KEVO_OK,
           "a worker's reply is taken");
    is_double(c.bandwidth, 3.1e12, 0, "the bandwidth");
    is_double(kevo__ceilings_get(&c, "bandwidth_write"), 2.9e12, 0,
              "the write stream's figure");
    is_double(kevo__ceilings_get(&c, "bandwidth_triad"), 3.05e12, 0,
              "the triad's");
    is_double(kevo__ceilings_peak(&c, KEVO_PEAK_BF16), 8.1e14, 0,
              "the bf16 peak, the best of both families");
    is_double(kevo__ceilings_get(&c, "bf16_mma_sync"), 6.6e14, 0,
              "mma.sync's figure");
    is_double(kevo__ceilings_get(&c, "bf16_wgmma"), 8.1e14, 0,
              "wgmma's figure");
    is_double(kevo__ceilings_get(&c, "launch"), 2.1e-6, 0, "the latency");
    ok(!kevo__ceilings_has(&c, "fp8_wgmma") &&
           kevo__ceilings_peak(&c, KEVO_PEAK_FP8) == 0 &&
           kevo__ceilings_get(&c, "int4_dp4a") == 0,
       "what the reply lacks stays unknown; a name this release does not "
       "know is left out");

    is_int(kevo__ceilings_save(&c, &err), KEVO_OK, "saved");
    is_int(kevo__ceilings_load(&again, base, dev, DRIVER, &err), KEVO_OK,
           "loaded again");
    bool same = again.has_bandwidth && again.bandwidth == c.bandwidth &&
                again.has_launch && again.launch == c.launch;
    for (int p = 0; p < KEVO__NPEAKS; p++)
        same = same && again.has_peak[p] == c.has_peak[p] &&
               again.peak[p] == c.peak[p];
    for (int i = 0; i < KEVO__NDETAILS; i++)
        same = same && again.has_detail[i] == c.has_detail[i] &&
               again.detail[i] == c.detail[i];
    ok(same, "every ceiling and probe figure comes back bit for bit");
    kevo__ceilings_clear(&again);

    json_t *text = json_load_file(path, 0, NULL);
    is_str(json_string_value(json_object_get(text, "format")),
           "kevo-ceilings-4", "the file's format is 4");
    json_decref(text);

    /* Another device, or another driver, does not read it. */
    json_t *other = device("GPU-00000000-0000-0000-0000-000000000000");
    kevo__ceilings_load(&again, base, dev, DRIVER + 10, &err);
    ok(!again.has_bandwidth, "another driver version: not this file");
    kevo__ceilings_clear(&again);
    kevo__ceilings_load(&again, base, other, DRIVER, &err);
    ok(!again.has_bandwidth, "another device: not this file");
    kevo__ceilings_clear(&again);
    json_decref(other);

    kevo__ceilings_clear(&c);
    json_decref(peaks);
    json_decref(dev);
    free(path);
}

/* The file the previous release wrote for the same device and driver:
 * its ceilings were measured another way, so none of them is taken. */
static void test_old_format(void)
{
    kevo__ceilings c;
    kevo_error err = KEVO__ERROR_INIT;
    json_t *dev = device(UUID);
    char *from = kevo__asprintf("%s/tests/data/ceilings/h100-format-2.json",
                                tap_srcdir());
    char *to = kevo__asprintf("%s/ceilings/%s-%d.json", base, UUID, DRIVER);
    json_t *old = json_load_file(from, 0, NULL);
    if (!old || json_dump_file(old, to, JSON_INDENT(2)) != 0)
        bail_out("cannot copy %s to %s", from, to);
    json_decref(old);

    is_int(kevo__ceilings_load(&c, base, dev, DRIVER, &err), KEVO_OK,
           "a format-2 file loads");
    ok(!kevo__ceilings_has(&c, "bandwidth") &&
           !kevo__ceilings_has(&c, "fp32") && !kevo__ceilings_has(&c, "bf16"),
       "but its bandwidth (3022.5 GB/s) and peaks are measured again");
    kevo__ceilings_clear(&c);
    json_decref(dev);
    free(from);
    free(to);
}

static void test_bad_values(void)
{
    kevo__ceilings c;
    kevo_error err = KEVO__ERROR_INIT;
    memset(&c, 0, sizeof c);
    json_t *text = json_pack("{s:s}", "bandwidth_copy", "fast");
    is_int(kevo__ceilings_update(&c, text, &err), KEVO_EFORMAT,
           "a figure that is a string");
    like_str(err.text, "\"bandwidth_copy\" is not a positive number",
             "  is named");
    json_t *neg = json_pack("{s:f}", "fp8_wgmma", -1.0);
    kevo_error_init(&err);
    is_int(kevo__ceilings_update(&c, neg, &err), KEVO_EFORMAT,
           "a negative figure");
    like_str(err.text, "fp8_wgmma", "  is named");
    ok(!kevo__ceilings_has(&c, "fp8_wgmma"), "and not kept");
    json_decref(text);
    json_decref(neg);
    kevo__ceilings_clear(&c);
}

/* A ceiling is a maximum: a fresh measurement of the same device and
 * driver replaces a cached figure only when it beats it, so a low first
 * measurement (an FP32 peak of 29.4 TFLOP/s where 64.4 is right) is not
 * kept for good, and a low later one does not lower the cache. */
static void test_merge(void)
{
    kevo__ceilings c;
    kevo_error err = KEVO__ERROR_INIT;
    memset(&c, 0, sizeof c);
    json_t *low = json_pack("{s:f, s:f}", "fp32", 29.4e12, "launch", 0.60e-6);
    json_t *fresh = json_pack("{s:f, s:f}", "fp32", 64.4e12, "launch", 0.54e-6);
    json_t *busy = json_pack("{s:f, s:f, s:f}", "fp32", 40.0e12, "launch",
                             0.90e-6, "bandwidth", 4.69e12);
    is_int(kevo__ceilings_merge(&c, low, &err), KEVO_OK,
           "a first measurement is taken");
    is_double(kevo__ceilings_peak(&c, KEVO_PEAK_FP32), 29.4e12, 0,
              "  as it is");
    is_int(kevo__ceilings_merge(&c, fresh, &err), KEVO_OK,
           "a fresh, better one is merged");
    is_double(kevo__ceilings_peak(&c, KEVO_PEAK_FP32), 64.4e12, 0,
              "  the higher peak replaces the lower");
    is_double(kevo__ceilings_get(&c, "launch"), 0.54e-6, 0,
              "  the lower launch latency replaces the higher");
    is_int(kevo__ceilings_merge(&c, busy, &err), KEVO_OK,
           "a worse one (a busy GPU) is merged");
    is_double(kevo__ceilings_peak(&c, KEVO_PEAK_FP32), 64.4e12, 0,
              "  the peak is not lowered");
    is_double(kevo__ceilings_get(&c, "launch"), 0.54e-6, 0,
              "  nor the latency raised");
    is_double(c.bandwidth, 4.69e12, 0, "  a figure not known yet is taken");
    json_t *neg = json_pack("{s:f}", "fp32", -1.0);
    is_int(kevo__ceilings_merge(&c, neg, &err), KEVO_EFORMAT,
           "a negative figure is refused");
    json_decref(low);
    json_decref(fresh);
    json_decref(busy);
    json_decref(neg);
    kevo__ceilings_clear(&c);
}

int main(void)
{
    snprintf(base, sizeof base, "/tmp/kevo-test-ceilings-XXXXXX");
    if (!mkdtemp(base))
        bail_out("mkdtemp: %s", strerror(errno));
    test_names();
    test_reply_and_file();
    test_old_format();
    test_bad_values();
    test_merge();
    char *dir = kevo__asprintf("%s/ceilings", base);
    char *file = kevo__asprintf("%s/%s-%d.json", dir, UUID, DRIVER);
    ok(file && remove(file) == 0 && rmdir(dir) == 0 && rmdir(base) == 0,
       "the cache held one file, the one of the device and driver");
    free(file);
    free(dir);
    return done_testing();
}

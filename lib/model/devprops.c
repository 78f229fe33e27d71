/*
 * devprops.c: device properties that expressions may name, and the
 * device as operators see it.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "devprops.h"

/* Property, nominal value (an H100 SXM5, compute capability 9.0). */
static const struct {
    const char *name;
    int64_t nominal;
} props_list[] = {
    {"sm_count", 132}, /* streaming multiprocessors */
    {"warp_size", 32}, /* threads per warp */
    {"max_threads_per_block", 1024},
    {"max_threads_per_sm", 2048},
    {"max_smem_per_block", 232448}, /* opt-in dynamic shared memory, bytes */
    {"smem_per_sm", 233472},        /* shared memory per SM, bytes */
    {"regs_per_sm", 65536},         /* 32-bit registers per SM */
    {"l2_bytes", 52428800},         /* L2 cache size */
    {"cc", 90},                     /* compute capability, major*10+minor */
};

const char *kevo__devprop_name(size_t i)
{
    return i < KEVO_ARRAY_SIZE(props_list) ? props_list[i].name : NULL;
}

bool kevo__devprop_is_name(const char *name)
{
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(props_list); i++) {
        if (strcmp(props_list[i].name, name) == 0)
            return true;
    }
    return false;
}

kevo_status kevo__devprops_nominal(kevo_vars *vars)
{
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(props_list); i++) {
        kevo_status rc =
            kevo_vars_set(vars, props_list[i].name, props_list[i].nominal);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}

char *kevo__devprops_arch(int64_t cc, char *buf, size_t size)
{
    if (size == 0)
        return buf;
    buf[0] = '\0';
    if (cc >= 10 && cc < 10000)
        snprintf(buf, size, "sm_%" PRId64 "%s", cc, cc >= 90 ? "a" : "");
    return buf;
}

static bool known(double x)
{
    return isfinite(x) && x > 0;
}

char *kevo__devprops_json(const char *name, const kevo_vars *props,
                          const kevo_ceilings *ceilings, kevo_peak task_peak)
{
    json_t *o = json_object(), *peaks = json_object();
    bool good = o && peaks;
    if (good && name)
        good = json_object_set_new(o, "name", json_string(name)) == 0;
    for (size_t i = 0; good && props && i < KEVO_ARRAY_SIZE(props_list); i++) {
        int64_t v;
        if (kevo_vars_get(props, props_list[i].name, &v) == KEVO_OK)
            good = json_object_set_new(o, props_list[i].name,
                                       json_integer(v)) == 0;
    }
    int64_t cc;
    char arch[KEVO__ARCH_SIZE];
    if (good && props && kevo_vars_get(props, "cc", &cc) == KEVO_OK &&
        *kevo__devprops_arch(cc, arch, sizeof arch))
        good = json_object_set_new(o, "arch", json_string(arch)) == 0;
    if (good && ceilings && known(ceilings->bandwidth))
        good = json_object_set_new(o, "bandwidth",
                                   json_real(ceilings->bandwidth)) == 0;
    if (good && ceilings && known(ceilings->launch))
        good = json_object_set_new(o, "launch_latency",
                                   json_real(ceilings->launch)) == 0;
    for (int p = 0; good && ceilings && p < KEVO__PEAK_COUNT; p++) {
        if (known(ceilings->peak[p]))
            good = json_object_set_new(peaks, kevo_peak_name((kevo_peak)p),
                                       json_real(ceilings->peak[p])) == 0;
    }
    if (good && json_object_size(peaks) > 0) {
        good = json_object_set(o, "peaks", peaks) == 0 &&
               json_object_set_new(o, "peak",
                                   json_string(kevo_peak_name(task_peak))) == 0;
    }
    char *text =
        good ? json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT) : NULL;
    json_decref(peaks);
    json_decref(o);
    return text;
}

/*
 * devprops.c: device properties that expressions may name.
 */
#include "config.h"

#include <string.h>

#include "devprops.h"

/* Property, nominal value (an H100 SXM5, compute capability 9.0). */
static const struct {
    const char *name;
    int64_t nominal;
} props[] = {
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
    return i < KEVO_ARRAY_SIZE(props) ? props[i].name : NULL;
}

bool kevo__devprop_is_name(const char *name)
{
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(props); i++) {
        if (strcmp(props[i].name, name) == 0)
            return true;
    }
    return false;
}

kevo_status kevo__devprops_nominal(kevo_vars *vars)
{
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(props); i++) {
        kevo_status rc = kevo_vars_set(vars, props[i].name, props[i].nominal);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}

/*
 * occupancy.c: theoretical occupancy by the CUDA occupancy rules (see
 * occupancy.h).
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "model/devprops.h"
#include "occupancy.h"

/* The resident-block limit per SM of an architecture (cc = major * 10 +
 * minor), as the CUDA occupancy calculator has it. */
static int64_t max_blocks_per_sm(int64_t cc)
{
    switch (cc) {
    case 75:
    case 86:
    case 87: return 16;
    case 89:
    case 101:
    case 110: return 24;
    default: break;
    }
    if (cc < 50)
        return 16;
    if (cc >= 120)
        return 24;
    return 32;
}

/* Named barriers available per SM for each resident-block slot, from
 * sm_90. */
static int64_t barriers_per_block_slot(int64_t cc)
{
    return cc == 101 || cc == 110 || cc >= 120 ? 1 : 2;
}

static int64_t round_up(int64_t x, int64_t unit)
{
    return (x + unit - 1) / unit * unit;
}

static kevo_status device_prop(const kevo_vars *dev, const char *name,
                               int64_t *out, kevo_error *err)
{
    if (kevo_vars_get(dev, name, out) != KEVO_OK)
        return kevo__error_set(err, KEVO_ENOENT,
                               "occupancy: the device property %s is "
                               "missing",
                               name);
    if (*out <= 0)
        return kevo__error_set(err, KEVO_EINVAL,
                               "occupancy: the device property %s is %" PRId64
                               ", not positive",
                               name, *out);
    return KEVO_OK;
}

kevo_status kevo__occupancy(const kevo_vars *device, uint32_t threads,
                            uint32_t registers, uint64_t shared_bytes,
                            uint32_t barriers, kevo_occupancy *out,
                            kevo_error *err)
{
    kevo_vars *nominal = NULL;
    kevo_status rc;
    int64_t cc, warp, max_tpb, max_tpsm, regs_sm, smem_sm, smem_block;
    memset(out, 0, sizeof(*out));
    if (threads == 0)
        return kevo__error_set(err, KEVO_EINVAL,
                               "occupancy: a block of 0 threads");
    if (!device) {
        if (!(nominal = kevo_vars_new()) ||
            kevo__devprops_nominal(nominal) != KEVO_OK) {
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
            goto done;
        }
        device = nominal;
    }
    if ((rc = device_prop(device, "cc", &cc, err)) != KEVO_OK ||
        (rc = device_prop(device, "warp_size", &warp, err)) != KEVO_OK ||
        (rc = device_prop(device, "max_threads_per_block", &max_tpb, err)) !=
            KEVO_OK ||
        (rc = device_prop(device, "max_threads_per_sm", &max_tpsm, err)) !=
            KEVO_OK ||
        (rc = device_prop(device, "regs_per_sm", &regs_sm, err)) != KEVO_OK ||
        (rc = device_prop(device, "smem_per_sm", &smem_sm, err)) != KEVO_OK ||
        (rc = device_prop(device, "max_smem_per_block", &smem_block, err)) !=
            KEVO_OK)
        goto done;

    const int64_t reg_unit = 256, sub_partitions = cc == 60 ? 2 : 4;
    const int64_t regs_block = regs_sm < 65536 ? regs_sm : 65536;
    const int64_t smem_unit = cc >= 80 ? 128 : 256;
    const int64_t reserved = cc >= 80 ? 1024 : 0;
    const int64_t max_warps = max_tpsm / warp;
    const int64_t warps = ((int64_t)threads + warp - 1) / warp;

    /* Warps. */
    int64_t lim_warps = (int64_t)threads > max_tpb ? 0 : max_warps / warps;

    /* Registers: per warp in allocation units; the per-block check rounds
     * the warps up to the sub-partitions; warps fit per sub-partition. */
    int64_t lim_regs = INT64_MAX;
    int64_t per_warp = round_up((int64_t)registers * warp, reg_unit);
    if (per_warp > 0) {
        int64_t assumed = per_warp * round_up(warps, sub_partitions);
        if (assumed > regs_block || per_warp * warps > regs_block)
            lim_regs = 0;
        else
            lim_regs =
                regs_sm / sub_partitions / per_warp * sub_partitions / warps;
    }

    /* Shared memory, with the driver's reserve, against the opt-in
     * per-block limit and the default carveout (the most the SM has). */
    int64_t lim_smem = INT64_MAX;
    int64_t smem = shared_bytes > (uint64_t)INT64_MAX / 2
                       ? INT64_MAX / 2
                       : round_up((int64_t)shared_bytes + reserved, smem_unit);
    if (smem > smem_block + reserved)
        lim_smem = 0;
    else if (smem > 0)
        lim_smem = smem_sm / smem;

    int64_t lim_blocks = max_blocks_per_sm(cc);
    int64_t lim_bars = INT64_MAX;
    if (cc >= 90 && barriers > 0)
        lim_bars = lim_blocks * barriers_per_block_slot(cc) / barriers;

    int64_t blocks = lim_warps;
    const char *by = (int64_t)threads > max_tpb ? "block size" : "warps";
    const struct {
        int64_t limit;
        const char *name;
    } limits[] = {{lim_regs, "registers"},
                  {lim_smem, "shared memory"},
                  {lim_blocks, "blocks"},
                  {lim_bars, "barriers"}};
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(limits); i++) {
        if (limits[i].limit < blocks) {
            blocks = limits[i].limit;
            by = limits[i].name;
        }
    }
    out->blocks_per_sm = blocks;
    out->limit_warps = lim_warps;
    out->limit_registers = lim_regs;
    out->limit_shared = lim_smem;
    out->limit_blocks = lim_blocks;
    out->limit_barriers = lim_bars;
    out->limited_by = by;
    out->occupancy = (double)(blocks * warps) / (double)max_warps;
    rc = KEVO_OK;
done:
    kevo_vars_free(nominal);
    return rc;
}

/*
 * occupancy.h: theoretical occupancy of a kernel's blocks on a device.
 */
#ifndef KEVO_OCCUPANCY_H
#define KEVO_OCCUPANCY_H

#include "core/kevo_private.h"

/*
 * The CUDA occupancy rules (those of cuda_occupancy.h, with the default
 * shared-memory carveout and opt-in dynamic shared memory): blocks per SM
 * are limited by warps, registers (allocated per warp in units of 256,
 * warps rounded up to the 4 sub-partitions for the per-block check), shared
 * memory (the block's static + dynamic bytes plus the 1 KiB the driver
 * reserves per block from compute capability 8.0, in units of 128 bytes;
 * 256 before 8.0), the per-SM block limit of the architecture (32 on
 * sm_90) and, from sm_90, named barriers. */

typedef struct kevo_occupancy {
    double occupancy;      /* active warps / max warps per SM, 0 to 1 */
    int64_t blocks_per_sm; /* active blocks per SM */
    int64_t limit_warps, limit_registers, limit_shared, limit_blocks,
        limit_barriers;     /* blocks per SM each resource allows */
    const char *limited_by; /* "warps", "registers", "shared memory",
                               "blocks", "barriers" or "block size" (the
                               first of those that gives the minimum) */
} kevo_occupancy;

/*
 * The occupancy of blocks of threads threads, each thread using registers
 * registers, each block shared_bytes of shared memory (static + dynamic)
 * and barriers named barriers (0 when unknown), on the device whose
 * properties are in device (cc, warp_size, max_threads_per_block,
 * max_threads_per_sm, regs_per_sm, smem_per_sm, max_smem_per_block; NULL
 * for the nominal device). A block that cannot run at all (too many
 * threads, registers or bytes) gives occupancy 0. Returns KEVO_OK,
 * KEVO_EINVAL for threads 0, or KEVO_ENOENT naming a missing device
 * property (KEVO_EINVAL for one that is not positive).
 */
kevo_status kevo__occupancy(const kevo_vars *device, uint32_t threads,
                            uint32_t registers, uint64_t shared_bytes,
                            uint32_t barriers, kevo_occupancy *out,
                            kevo_error *err);

#endif

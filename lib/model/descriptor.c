/*
 * descriptor.c: the behaviour descriptors kevo knows.
 */
#include "config.h"

#include <string.h>

#include "descriptor.h"

static const kevo_descriptor_def defs[] = {
    {"memory",
     "memory strategy: 0 scalar global loads, 1 vector loads, 2 shared-memory "
     "staging, 3 asynchronous copies or tensor cores",
     4,
     0,
     4,
     0,
     {0}},
    {"block_size", "threads per block", 0, 0, 0, 4, {64, 128, 256, 512}},
    {"warp_ops",
     "warp-level primitives (shuffles, votes, reductions): 0 or 1",
     2,
     0,
     2,
     0,
     {0}},
    {"occupancy", "theoretical occupancy, 0 to 1", 4, 0, 1, 0, {0}},
    {"registers", "registers per thread", 0, 0, 0, 4, {32, 64, 96, 128}},
    {"shared_bytes",
     "shared memory per block in bytes",
     0,
     0,
     0,
     4,
     {1, 4096, 16384, 49152}},
    {"spills",
     "bytes spilled to local memory per thread: 0 or more",
     0,
     0,
     0,
     1,
     {1}},
    {"dram_fraction",
     "achieved DRAM throughput as a fraction of the measured bandwidth",
     4,
     0,
     1,
     0,
     {0}},
};

const kevo_descriptor_def *kevo__descriptor_find(const char *name)
{
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(defs); i++) {
        if (strcmp(defs[i].name, name) == 0)
            return &defs[i];
    }
    return NULL;
}

const kevo_descriptor_def *kevo__descriptor_at(size_t i)
{
    return i < KEVO_ARRAY_SIZE(defs) ? &defs[i] : NULL;
}

const char *kevo__descriptor_names(void)
{
    return "memory, block_size, warp_ops, occupancy, registers, shared_bytes, "
           "spills, dram_fraction";
}

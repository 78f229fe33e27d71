/*
 * fuzz-ptxscan.c: the PTX reader and the ptxas log reader on arbitrary
 * bytes. The input is read as PTX (exactly its bytes, no NUL) and as a
 * log. Whatever it is, the PTX reader either succeeds or fails with
 * KEVO_EPARSE and a message naming the line; after a success and the
 * log, every kernel found can be
 * found by its name, has at least its own counts, a memory level from 0 to
 * 3 and spills that are unknown or not negative; and the occupancy of a
 * geometry drawn from the input is between 0 and 1.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/occupancy.h"
#include "eval/ptxscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const kevo_ptxscan *scan)
{
    for (size_t i = 0; i < scan->n; i++) {
        const kevo_ptx_kernel *k = &scan->kernels[i];
        for (int f = 0; f < KEVO_PTX_FEATURE_COUNT; f++) {
            if (k->count[f] < k->own[f])
                abort();
        }
        if (k->shared_static < k->own_shared)
            abort();
        int level = kevo__ptx_memory_level(k, k->shared_static);
        if (level < 0 || level > 3)
            abort();
        if (k->entry && kevo__ptxscan_find(scan, k->name) == NULL)
            abort();
        int64_t spills = kevo__ptxscan_spill_stores(scan, k);
        if (spills < -1 || (k->spill_stores >= 0 && spills < k->spill_stores))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kevo_ptxscan scan;
    kevo_error err;
    kevo_error_init(&err);
    kevo__ptxscan_init(&scan);
    char *copy = malloc(size ? size : 1);
    char *log = malloc(size + 1);
    if (!copy || !log)
        abort();
    memcpy(copy, data, size);
    kevo_status rc = kevo__ptxscan_ptx(&scan, copy, size, &err);
    if (rc != KEVO_OK &&
        (rc != KEVO_EPARSE || strncmp(err.text, "PTX line ", 9) != 0))
        abort();
    if (rc != KEVO_OK) { /* what a failed scan read is only to be freed */
        kevo__ptxscan_free(&scan);
        kevo__ptxscan_init(&scan);
    }
    for (size_t i = 0; i < size; i++)
        log[i] = data[i] ? (char)data[i] : ' ';
    log[size] = '\0';
    if (kevo__ptxscan_log(&scan, log, NULL) != KEVO_OK)
        abort();
    check(&scan);

    uint32_t threads =
        1 + (size ? data[0] * 4u + (size > 1 ? data[1] % 4 : 0) : 255);
    uint32_t regs = size > 2 ? data[2] : 32;
    uint64_t smem = size > 4 ? (uint64_t)data[3] << 10 | data[4] : 0;
    uint32_t bars = size > 5 ? data[5] % 17 : 0;
    kevo_occupancy occ;
    if (kevo__occupancy(NULL, threads, regs, smem, bars, &occ, NULL) !=
            KEVO_OK ||
        !(occ.occupancy >= 0 && occ.occupancy <= 1) || !occ.limited_by)
        abort();
    kevo__ptxscan_free(&scan);
    free(copy);
    free(log);
    return 0;
}

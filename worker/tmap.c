/*
 * tmap.c: the tensor maps of a plan, encoded with cuTensorMapEncodeTiled
 * from the arguments the core computes (lib/model/tensormap.c) and the
 * device address of their buffer. A map is encoded when its plan is made
 * and again whenever its buffer's address changes.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gpu.h"

/* The core's plain ints are cuda.h's enum values. */
_Static_assert(KEVO__TMAP_UINT8 == CU_TENSOR_MAP_DATA_TYPE_UINT8, "dtype");
_Static_assert(KEVO__TMAP_UINT16 == CU_TENSOR_MAP_DATA_TYPE_UINT16, "dtype");
_Static_assert(KEVO__TMAP_UINT32 == CU_TENSOR_MAP_DATA_TYPE_UINT32, "dtype");
_Static_assert(KEVO__TMAP_INT32 == CU_TENSOR_MAP_DATA_TYPE_INT32, "dtype");
_Static_assert(KEVO__TMAP_UINT64 == CU_TENSOR_MAP_DATA_TYPE_UINT64, "dtype");
_Static_assert(KEVO__TMAP_INT64 == CU_TENSOR_MAP_DATA_TYPE_INT64, "dtype");
_Static_assert(KEVO__TMAP_FLOAT16 == CU_TENSOR_MAP_DATA_TYPE_FLOAT16, "dtype");
_Static_assert(KEVO__TMAP_FLOAT32 == CU_TENSOR_MAP_DATA_TYPE_FLOAT32, "dtype");
_Static_assert(KEVO__TMAP_FLOAT64 == CU_TENSOR_MAP_DATA_TYPE_FLOAT64, "dtype");
_Static_assert(KEVO__TMAP_BFLOAT16 == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
               "dtype");
_Static_assert(KEVO__TMAP_INTERLEAVE_NONE == CU_TENSOR_MAP_INTERLEAVE_NONE,
               "interleave");
_Static_assert(KEVO__TMAP_INTERLEAVE_16B == CU_TENSOR_MAP_INTERLEAVE_16B,
               "interleave");
_Static_assert(KEVO__TMAP_INTERLEAVE_32B == CU_TENSOR_MAP_INTERLEAVE_32B,
               "interleave");
_Static_assert(KEVO__TMAP_SWIZZLE_NONE == CU_TENSOR_MAP_SWIZZLE_NONE,
               "swizzle");
_Static_assert(KEVO__TMAP_SWIZZLE_32B == CU_TENSOR_MAP_SWIZZLE_32B, "swizzle");
_Static_assert(KEVO__TMAP_SWIZZLE_64B == CU_TENSOR_MAP_SWIZZLE_64B, "swizzle");
_Static_assert(KEVO__TMAP_SWIZZLE_128B == CU_TENSOR_MAP_SWIZZLE_128B,
               "swizzle");
_Static_assert(KEVO__TMAP_L2_NONE == CU_TENSOR_MAP_L2_PROMOTION_NONE, "l2");
_Static_assert(KEVO__TMAP_L2_64B == CU_TENSOR_MAP_L2_PROMOTION_L2_64B, "l2");
_Static_assert(KEVO__TMAP_L2_128B == CU_TENSOR_MAP_L2_PROMOTION_L2_128B, "l2");
_Static_assert(KEVO__TMAP_L2_256B == CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "l2");
_Static_assert(KEVO__TMAP_OOB_NONE == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, "oob");
_Static_assert(KEVO__TMAP_OOB_NAN_REQUEST_ZERO_FMA ==
                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
               "oob");
_Static_assert(sizeof(CUtensorMap) == KEVO__TMAP_BYTES, "CUtensorMap size");

kevo_status kevo__plan_maps_alloc(kevo__plan *plan, size_t nmaps,
                                  kevo_error *err)
{
    plan->nmaps = nmaps;
    plan->maps =
        aligned_alloc(_Alignof(CUtensorMap), (nmaps + 1) * sizeof(*plan->maps));
    plan->margs = calloc(nmaps + 1, sizeof(*plan->margs));
    plan->map_used = calloc(nmaps + 1, sizeof(*plan->map_used));
    plan->map_addr = calloc(nmaps + 1, sizeof(*plan->map_addr));
    if (!plan->maps || !plan->margs || !plan->map_used || !plan->map_addr)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    memset(plan->maps, 0, (nmaps + 1) * sizeof(*plan->maps));
    return KEVO_OK;
}

void kevo__plan_maps_free(kevo__plan *plan)
{
    free(plan->maps);
    free(plan->margs);
    free(plan->map_used);
    free(plan->map_addr);
    plan->maps = NULL;
    plan->margs = NULL;
    plan->map_used = NULL;
    plan->map_addr = NULL;
    plan->nmaps = 0;
}

CUresult kevo__tmap_encode(CUtensorMap *map, const kevo__tmap_args *a,
                           CUdeviceptr address)
{
    if (!kevo__cu.cuTensorMapEncodeTiled)
        return CUDA_ERROR_NOT_SUPPORTED;
    return kevo__cu.cuTensorMapEncodeTiled(
        map, (CUtensorMapDataType)a->data_type, a->rank,
        (void *)(uintptr_t)address, a->dims, a->strides, a->box, a->elemstrides,
        (CUtensorMapInterleave)a->interleave, (CUtensorMapSwizzle)a->swizzle,
        (CUtensorMapL2promotion)a->l2, (CUtensorMapFloatOOBfill)a->oob);
}

kevo_status kevo__plan_maps_encode(const kevo__plan *plan, kevo_error *err)
{
    const kevo_blocks *b = &plan->prog->cand->blocks;
    for (size_t m = 0; m < plan->nmaps; m++) {
        const kevo__tmap_args *a = &plan->margs[m];
        if (!plan->map_used[m])
            continue;
        CUdeviceptr base =
            a->scratch ? plan->scratch[a->buffer] : plan->shape->buf[a->buffer];
        CUdeviceptr address = base + a->offset_bytes;
        if (address == plan->map_addr[m])
            continue;
        const kevo_tensormap *t = &b->tensormaps[m];
        if (!kevo__cu.cuTensorMapEncodeTiled)
            return kevo__error_set(err, KEVO_EINVALID,
                                   "tensormap '%s' (line %d): the CUDA driver "
                                   "has no cuTensorMapEncodeTiled (tensor "
                                   "maps need a CUDA 12 driver)",
                                   t->name, t->line);
        char what[256];
        snprintf(what, sizeof(what),
                 "encoding tensormap '%s' (line %d) with "
                 "cuTensorMapEncodeTiled",
                 t->name, t->line);
        kevo_status rc = kevo__cu_check(
            kevo__tmap_encode(&plan->maps[m], a, address), what, err);
        if (rc != KEVO_OK)
            return rc;
        plan->map_addr[m] = address;
    }
    return KEVO_OK;
}

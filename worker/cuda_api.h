/*
 * cuda_api.h: the CUDA driver API and CUPTI, reached through dlopen() so
 * that kevo-worker runs (and reports cleanly) on a machine without them.
 *
 * kevo__cu_load() fills kevo__cu with every driver function kevo uses.
 * Call sites read `kevo__cu.cuMemAlloc(&p, n)`. The cuda.h macros that map
 * a name to its versioned symbol (cuMemAlloc to cuMemAlloc_v2) apply to the
 * field names too, and each field is looked up by that versioned name, so
 * every entry point has exactly the prototype the header declares. (Not
 * cuGetProcAddress at CUDA_VERSION: it hands out the newest ABI of a name,
 * such as the cuCtxSynchronize that takes a context in CUDA 13.)
 *
 * kevo__cupti_load() does the same for the CUPTI functions of the activity
 * API and the range profiler; where CUPTI is missing the worker times with
 * CUDA events instead and reports no profile.
 */
#ifndef KEVO_WORKER_CUDA_API_H
#define KEVO_WORKER_CUDA_API_H

#include <stdbool.h>

#include <cuda.h>
#include <cupti_activity.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include "core/kevo_private.h"

/* The X-macro list of the driver functions: one X(name) each. */
#define KEVO__CU_FUNCTIONS(X)                                                  \
    X(cuInit)                                                                  \
    X(cuDriverGetVersion)                                                      \
    X(cuDeviceGetCount)                                                        \
    X(cuDeviceGet)                                                             \
    X(cuDeviceGetName)                                                         \
    X(cuDeviceGetUuid)                                                         \
    X(cuDeviceGetAttribute)                                                    \
    X(cuDeviceTotalMem)                                                        \
    X(cuDevicePrimaryCtxRetain)                                                \
    X(cuDevicePrimaryCtxRelease)                                               \
    X(cuCtxSetCurrent)                                                         \
    X(cuCtxSynchronize)                                                        \
    X(cuMemGetInfo)                                                            \
    X(cuModuleLoadData)                                                        \
    X(cuModuleUnload)                                                          \
    X(cuModuleGetFunction)                                                     \
    X(cuFuncGetAttribute)                                                      \
    X(cuFuncSetAttribute)                                                      \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                             \
    X(cuMemAlloc)                                                              \
    X(cuMemFree)                                                               \
    X(cuMemcpyHtoD)                                                            \
    X(cuMemcpyDtoH)                                                            \
    X(cuMemcpyDtoD)                                                            \
    X(cuMemsetD8)                                                              \
    X(cuLaunchKernel)                                                          \
    X(cuEventCreate)                                                           \
    X(cuEventDestroy)                                                          \
    X(cuEventRecord)                                                           \
    X(cuEventSynchronize)                                                      \
    X(cuEventElapsedTime)                                                      \
    X(cuGetErrorName)                                                          \
    X(cuGetErrorString)

/* Functions of newer drivers (12.0 for tensor maps, 11.8 for clusters and
 * cuLaunchKernelEx, 12.4 for the rest): NULL where the driver lacks them. */
#define KEVO__CU_OPTIONAL_FUNCTIONS(X)                                         \
    X(cuModuleGetFunctionCount)                                                \
    X(cuModuleEnumerateFunctions)                                              \
    X(cuFuncGetName)                                                           \
    X(cuTensorMapEncodeTiled)                                                  \
    X(cuLaunchKernelEx)                                                        \
    X(cuOccupancyMaxActiveClusters)                                            \
    X(cuOccupancyMaxPotentialClusterSize)

#define KEVO__CU_FIELD(name) __typeof__(name) *name;

typedef struct kevo__cu_api {
    KEVO__CU_FUNCTIONS(KEVO__CU_FIELD)
    KEVO__CU_OPTIONAL_FUNCTIONS(KEVO__CU_FIELD)
} kevo__cu_api;

/* The CUPTI functions: the activity API (timing) and the range profiler
 * with its host side (profile.c declares the host side's parameter
 * structures itself: their header is C++). */
#define KEVO__CUPTI_FUNCTIONS(X)                                               \
    X(cuptiGetResultString)                                                    \
    X(cuptiGetTimestamp)                                                       \
    X(cuptiActivityRegisterCallbacks)                                          \
    X(cuptiActivityEnable)                                                     \
    X(cuptiActivityDisable)                                                    \
    X(cuptiActivityFlushAll)                                                   \
    X(cuptiActivityGetNextRecord)                                              \
    X(cuptiActivityGetNumDroppedRecords)

#define KEVO__CUPTI_PROFILER_FUNCTIONS(X)                                      \
    X(cuptiProfilerInitialize)                                                 \
    X(cuptiDeviceGetChipName)                                                  \
    X(cuptiProfilerGetCounterAvailability)                                     \
    X(cuptiRangeProfilerEnable)                                                \
    X(cuptiRangeProfilerDisable)                                               \
    X(cuptiRangeProfilerGetCounterDataSize)                                    \
    X(cuptiRangeProfilerCounterDataImageInitialize)                            \
    X(cuptiRangeProfilerSetConfig)                                             \
    X(cuptiRangeProfilerStart)                                                 \
    X(cuptiRangeProfilerStop)                                                  \
    X(cuptiRangeProfilerPushRange)                                             \
    X(cuptiRangeProfilerPopRange)                                              \
    X(cuptiRangeProfilerDecodeData)                                            \
    X(cuptiRangeProfilerGetCounterDataInfo)

/* The host side of the range profiler, looked up by name (untyped here). */
#define KEVO__CUPTI_HOST_FUNCTIONS(X)                                          \
    X(cuptiProfilerHostInitialize)                                             \
    X(cuptiProfilerHostDeinitialize)                                           \
    X(cuptiProfilerHostConfigAddMetrics)                                       \
    X(cuptiProfilerHostGetConfigImageSize)                                     \
    X(cuptiProfilerHostGetConfigImage)                                         \
    X(cuptiProfilerHostGetNumOfPasses)                                         \
    X(cuptiProfilerHostEvaluateToGpuValues)

#define KEVO__CUPTI_HOST_FIELD(name) CUptiResult (*name)(void *);

typedef struct kevo__cupti_api {
    KEVO__CUPTI_FUNCTIONS(KEVO__CU_FIELD)
    KEVO__CUPTI_PROFILER_FUNCTIONS(KEVO__CU_FIELD)
    KEVO__CUPTI_HOST_FUNCTIONS(KEVO__CUPTI_HOST_FIELD)
    bool profiler; /* every profiler function was found */
} kevo__cupti_api;

/* The tables; valid after a successful load. */
extern kevo__cu_api kevo__cu;
extern kevo__cupti_api kevo__cupti;

/*
 * kevo__cu_load: opens libcuda.so.1 and resolves every driver function.
 * Returns KEVO_OK, or KEVO_ENODEV with "no CUDA driver: <dlerror>" or
 * "the CUDA driver lacks cuX" (a driver older than the headers). Calling
 * it again after success does nothing.
 */
kevo_status kevo__cu_load(kevo_error *err);

/*
 * kevo__cupti_load: opens CUPTI (libcupti.so.13, then libcupti.so, first
 * from $KEVO_CUPTI_DIR, the CUDA toolkit's lib64 and extras/CUPTI/lib64,
 * then the loader's normal search path) and resolves the activity API
 * (required) and the range profiler (kevo__cupti.profiler says whether it
 * is there). Returns KEVO_OK, or KEVO_ENOENT naming what was tried.
 */
kevo_status kevo__cupti_load(kevo_error *err);

/* The error's name, "CUDA_ERROR_ILLEGAL_ADDRESS", or "CUDA error N". */
const char *kevo__cu_error_name(CUresult r);

/*
 * True for an error after which the context cannot be used any more (an
 * illegal address, a trap or assert, a launch failure, an illegal
 * instruction, a misaligned address...): the worker must report a fault
 * and exit.
 */
bool kevo__cu_sticky(CUresult r);

/*
 * kevo__cu_check: KEVO_OK for CUDA_SUCCESS; otherwise records
 * "<what>: CUDA_ERROR_X: <description>" in err (KEVO_EEXTERNAL, domain
 * KEVO_DOMAIN_CUDA, foreign r) and returns KEVO_EEXTERNAL.
 */
kevo_status kevo__cu_check(CUresult r, const char *what, kevo_error *err);

/* As kevo__cu_check for a CUPTI result ("<what>: CUPTI_ERROR_X"). */
kevo_status kevo__cupti_check(CUptiResult r, const char *what, kevo_error *err);

/* The CUresult behind an error that kevo__cu_check recorded, or
 * CUDA_SUCCESS when err holds no CUDA error. */
CUresult kevo__cu_error_of(const kevo_error *err);

/*
 * kevo__cu_device_props: the properties of dev that expressions may name
 * (lib/model/devprops.c's names: sm_count, warp_size, max_threads_per_block,
 * max_threads_per_sm, max_smem_per_block, smem_per_sm, regs_per_sm,
 * l2_bytes, cc), set in vars. Returns KEVO_OK or a CUDA error.
 */
kevo_status kevo__cu_device_props(CUdevice dev, kevo_vars *vars,
                                  kevo_error *err);

#endif

/*
 * profile.c: DRAM traffic and achieved occupancy of one run of a candidate,
 * from CUPTI's range profiler (CUDA 13: cupti_range_profiler.h and the
 * profiler host API). One user range covers all the candidate's launches;
 * CUPTI asks for the run again until every pass it needs is collected (user
 * replay), each pass after an L2 flush. Kernel activity records stop while
 * the profiler works and start again after it.
 *
 * The host API's header is C++ (it includes <string>), so its parameter
 * structures are declared here, field for field as CUDA 13.0 has them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

#define STRUCT_SIZE(type, last)                                                \
    (offsetof(type, last) + sizeof(((type *)0)->last))

typedef struct host_object host_object; /* CUpti_Profiler_Host_Object */

typedef struct {
    size_t structSize;
    void *pPriv;
    int profilerType; /* CUpti_ProfilerType: 0 is the range profiler */
    const char *pChipName;
    const uint8_t *pCounterAvailabilityImage;
    host_object *pHostObject;
} host_initialize_params;

typedef struct {
    size_t structSize;
    void *pPriv;
    host_object *pHostObject;
} host_deinitialize_params;

typedef struct {
    size_t structSize;
    void *pPriv;
    host_object *pHostObject;
    const char **ppMetricNames;
    size_t numMetrics;
} host_add_metrics_params;

typedef struct {
    size_t structSize;
    void *pPriv;
    host_object *pHostObject;
    size_t configImageSize;
} host_config_size_params;

typedef struct {
    size_t structSize;
    void *pPriv;
    host_object *pHostObject;
    size_t configImageSize;
    uint8_t *pConfigImage;
} host_config_params;

typedef struct {
    size_t structSize;
    void *pPriv;
    size_t configImageSize;
    uint8_t *pConfigImage;
    size_t numOfPasses;
} host_passes_params;

typedef struct {
    size_t structSize;
    void *pPriv;
    host_object *pHostObject;
    const uint8_t *pCounterDataImage;
    size_t counterDataImageSize;
    size_t rangeIndex;
    const char **ppMetricNames;
    size_t numMetrics;
    double *pMetricValues;
} host_evaluate_params;

static const char *metrics[] = {
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
};
#define NMETRICS KEVO_ARRAY_SIZE(metrics)

/* The passes of one run, at most: more means something is wrong. */
#define MAX_PASSES 64

struct kevo__profiler {
    kevo_error failure; /* set when the profiler cannot be used at all */
    host_object *host;
    uint8_t *config;
    size_t config_size;
};

/* As kevo__cupti_check, with a hint for the permission error. */
static kevo_status check(CUptiResult r, const char *what, kevo_error *err)
{
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
        kevo_error e = KEVO__ERROR_INIT;
        kevo__cupti_check(r, what, &e);
        return kevo__error_wrap(err, &e,
                                "ERR_NVGPUCTRPERM: reading the GPU's "
                                "performance counters needs permission "
                                "(NVreg_RestrictProfilingToAdminUsers=0, or "
                                "root)");
    }
    return kevo__cupti_check(r, what, err);
}

void kevo__profiler_free(kevo__profiler *p)
{
    if (!p)
        return;
    if (p->host) {
        host_deinitialize_params d = {
            STRUCT_SIZE(host_deinitialize_params, pHostObject), NULL, p->host};
        kevo__cupti.cuptiProfilerHostDeinitialize(&d);
    }
    free(p->config);
    free(p);
}

/* The profiler's one-time setup: the chip, its counters, the metrics'
 * configuration image. */
static kevo_status setup(kevo__gpu *g, kevo__profiler *p, kevo_error *err)
{
    uint8_t *avail = NULL;
    kevo_status rc;
    CUpti_Profiler_Initialize_Params init = {
        CUpti_Profiler_Initialize_Params_STRUCT_SIZE, NULL};
    CUpti_Device_GetChipName_Params chip = {
        CUpti_Device_GetChipName_Params_STRUCT_SIZE, NULL, (size_t)g->index,
        NULL};
    CUpti_Profiler_GetCounterAvailability_Params ca = {
        CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE, NULL, g->ctx,
        0, NULL};

    rc = check(kevo__cupti.cuptiProfilerInitialize(&init),
               "cuptiProfilerInitialize", err);
    if (rc == KEVO_OK)
        rc = check(kevo__cupti.cuptiDeviceGetChipName(&chip),
                   "cuptiDeviceGetChipName", err);
    if (rc == KEVO_OK)
        rc = check(kevo__cupti.cuptiProfilerGetCounterAvailability(&ca),
                   "cuptiProfilerGetCounterAvailability", err);
    if (rc != KEVO_OK)
        return rc;
    avail = malloc(ca.counterAvailabilityImageSize + 1);
    if (!avail)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    ca.pCounterAvailabilityImage = avail;
    rc = check(kevo__cupti.cuptiProfilerGetCounterAvailability(&ca),
               "cuptiProfilerGetCounterAvailability", err);

    host_initialize_params hi = {
        STRUCT_SIZE(host_initialize_params, pHostObject),
        NULL,
        0,
        chip.pChipName,
        avail,
        NULL};
    if (rc == KEVO_OK)
        rc = check(kevo__cupti.cuptiProfilerHostInitialize(&hi),
                   "cuptiProfilerHostInitialize", err);
    if (rc == KEVO_OK)
        p->host = hi.pHostObject;
    host_add_metrics_params am = {
        STRUCT_SIZE(host_add_metrics_params, numMetrics), NULL, p->host,
        metrics, NMETRICS};
    if (rc == KEVO_OK)
        rc = check(kevo__cupti.cuptiProfilerHostConfigAddMetrics(&am),
                   "cuptiProfilerHostConfigAddMetrics", err);
    host_config_size_params cs = {
        STRUCT_SIZE(host_config_size_params, configImageSize), NULL, p->host,
        0};
    if (rc == KEVO_OK)
        rc = check(kevo__cupti.cuptiProfilerHostGetConfigImageSize(&cs),
                   "cuptiProfilerHostGetConfigImageSize", err);
    if (rc == KEVO_OK && !(p->config = malloc(cs.configImageSize + 1)))
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    host_config_params ci = {STRUCT_SIZE(host_config_params, pConfigImage),
                             NULL, p->host, cs.configImageSize, p->config};
    if (rc == KEVO_OK)
        rc = check(kevo__cupti.cuptiProfilerHostGetConfigImage(&ci),
                   "cuptiProfilerHostGetConfigImage", err);
    if (rc == KEVO_OK)
        p->config_size = cs.configImageSize;
    free(avail);
    return rc;
}

/* One pass: an L2 flush outside the range, then the launches inside it. */
static kevo_status one_pass(kevo__gpu *g, const kevo__plan *plan, bool flush,
                            CUpti_RangeProfiler_Object *obj, bool *all,
                            kevo_error *err)
{
    kevo_status rc = kevo__plan_prepare(g, plan, flush, err);
    if (rc == KEVO_OK)
        rc = kevo__gpu_sync("the L2 flush", err);
    if (rc != KEVO_OK)
        return rc;
    CUpti_RangeProfiler_Start_Params start = {
        CUpti_RangeProfiler_Start_Params_STRUCT_SIZE, NULL, obj};
    CUpti_RangeProfiler_PushRange_Params push = {
        CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE, NULL, obj,
        "candidate"};
    CUpti_RangeProfiler_PopRange_Params pop = {
        CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE, NULL, obj};
    CUpti_RangeProfiler_Stop_Params stop = {
        CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE, NULL, obj, 0, 0, 0};
    rc = check(kevo__cupti.cuptiRangeProfilerStart(&start),
               "cuptiRangeProfilerStart", err);
    if (rc != KEVO_OK)
        return rc;
    rc = check(kevo__cupti.cuptiRangeProfilerPushRange(&push),
               "cuptiRangeProfilerPushRange", err);
    if (rc == KEVO_OK) {
        rc = kevo__plan_launch(plan, err);
        if (rc == KEVO_OK)
            rc = kevo__gpu_sync("a profiled run", err);
        kevo_status rc2 = check(kevo__cupti.cuptiRangeProfilerPopRange(&pop),
                                "cuptiRangeProfilerPopRange", err);
        rc = rc != KEVO_OK ? rc : rc2;
    }
    kevo_status rc3 = check(kevo__cupti.cuptiRangeProfilerStop(&stop),
                            "cuptiRangeProfilerStop", err);
    *all = stop.isAllPassSubmitted != 0;
    return rc != KEVO_OK ? rc : rc3;
}

/* The profiled runs and their metrics, with the range profiler enabled. */
static kevo_status collect(kevo__gpu *g, kevo__profiler *p,
                           const kevo__plan *plan, bool flush,
                           CUpti_RangeProfiler_Object *obj, double *values,
                           kevo_error *err)
{
    CUpti_RangeProfiler_GetCounterDataSize_Params ds = {
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE,
        NULL,
        obj,
        metrics,
        NMETRICS,
        1,
        1,
        0};
    uint8_t *data = NULL;
    kevo_status rc =
        check(kevo__cupti.cuptiRangeProfilerGetCounterDataSize(&ds),
              "cuptiRangeProfilerGetCounterDataSize", err);
    if (rc != KEVO_OK)
        return rc;
    if (!(data = calloc(1, ds.counterDataSize + 1)))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params di = {
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE,
        NULL, obj, ds.counterDataSize, data};
    rc = check(kevo__cupti.cuptiRangeProfilerCounterDataImageInitialize(&di),
               "cuptiRangeProfilerCounterDataImageInitialize", err);
    CUpti_RangeProfiler_SetConfig_Params sc = {
        CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE,
        NULL,
        obj,
        p->config_size,
        p->config,
        ds.counterDataSize,
        data,
        CUPTI_UserRange,
        CUPTI_UserReplay,
        1,
        1,
        1,
        0,
        1};
    if (rc == KEVO_OK)
        rc = check(kevo__cupti.cuptiRangeProfilerSetConfig(&sc),
                   "cuptiRangeProfilerSetConfig", err);
    bool all = false;
    for (int pass = 0; rc == KEVO_OK && !all; pass++) {
        if (pass == MAX_PASSES) {
            rc = kevo__error_set_foreign(err, KEVO_EEXTERNAL, KEVO_DOMAIN_CUPTI,
                                         0,
                                         "the range profiler wants more than "
                                         "%d passes",
                                         MAX_PASSES);
            break;
        }
        rc = one_pass(g, plan, flush, obj, &all, err);
    }
    CUpti_RangeProfiler_DecodeData_Params dd = {
        CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE, NULL, obj, 0};
    if (rc == KEVO_OK)
        rc = check(kevo__cupti.cuptiRangeProfilerDecodeData(&dd),
                   "cuptiRangeProfilerDecodeData", err);
    CUpti_RangeProfiler_GetCounterDataInfo_Params info = {
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE, NULL, data,
        ds.counterDataSize, 0};
    if (rc == KEVO_OK)
        rc = check(kevo__cupti.cuptiRangeProfilerGetCounterDataInfo(&info),
                   "cuptiRangeProfilerGetCounterDataInfo", err);
    if (rc == KEVO_OK && info.numTotalRanges < 1)
        rc = kevo__error_set_foreign(err, KEVO_EEXTERNAL, KEVO_DOMAIN_CUPTI, 0,
                                     "the range profiler recorded no range");
    host_evaluate_params ev = {STRUCT_SIZE(host_evaluate_params, pMetricValues),
                               NULL,
                               p->host,
                               data,
                               ds.counterDataSize,
                               0,
                               metrics,
                               NMETRICS,
                               values};
    if (rc == KEVO_OK)
        rc = check(kevo__cupti.cuptiProfilerHostEvaluateToGpuValues(&ev),
                   "cuptiProfilerHostEvaluateToGpuValues", err);
    free(data);
    return rc;
}

kevo_status kevo__profile_plan(kevo__gpu *g, const kevo__plan *plan,
                               bool flush_l2, double *dram_read,
                               double *dram_write, double *occupancy,
                               kevo_error *err)
{
    double values[NMETRICS] = {0};
    kevo_status rc;
    if (!g->cupti && kevo__cupti_load(err) != KEVO_OK)
        return kevo__error_set_foreign(err, KEVO_EEXTERNAL, KEVO_DOMAIN_CUPTI,
                                       0, "no CUPTI");
    if (!kevo__cupti.profiler)
        return kevo__error_set_foreign(err, KEVO_EEXTERNAL, KEVO_DOMAIN_CUPTI,
                                       0,
                                       "the CUPTI library has no range "
                                       "profiler");
    if (!g->prof) {
        if (!(g->prof = calloc(1, sizeof(*g->prof))))
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        g->prof->failure.size = sizeof(g->prof->failure);
        if (setup(g, g->prof, &g->prof->failure) != KEVO_OK &&
            g->prof->failure.code == KEVO_OK)
            kevo__error_set(&g->prof->failure, KEVO_EEXTERNAL, "setup failed");
    }
    if (g->prof->failure.code != KEVO_OK)
        return kevo__error_wrap(err, &g->prof->failure, "%s", "");

    rc = kevo__timing_activity(g, false, err);
    if (rc != KEVO_OK)
        return rc;
    CUpti_RangeProfiler_Enable_Params en = {
        CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE, NULL, g->ctx, NULL};
    rc = check(kevo__cupti.cuptiRangeProfilerEnable(&en),
               "cuptiRangeProfilerEnable", err);
    if (rc == KEVO_OK) {
        rc = collect(g, g->prof, plan, flush_l2, en.pRangeProfilerObject,
                     values, err);
        CUpti_RangeProfiler_Disable_Params dis = {
            CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE, NULL,
            en.pRangeProfilerObject};
        kevo_status rc2 = check(kevo__cupti.cuptiRangeProfilerDisable(&dis),
                                "cuptiRangeProfilerDisable", err);
        rc = rc != KEVO_OK ? rc : rc2;
    }
    kevo_error e = KEVO__ERROR_INIT;
    kevo__timing_activity(g, true, &e);
    if (rc == KEVO_OK) {
        *dram_read = values[0];
        *dram_write = values[1];
        *occupancy = values[2] / 100.0;
    }
    return rc;
}

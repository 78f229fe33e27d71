/*
 * gpu_launch.c: a candidate's (or the reference's) cubin loaded, and its
 * kevo:launch block evaluated at a shape into kernel launches.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

/* The dynamic shared memory a kernel gets without opting in. */
#define SMEM_DEFAULT (48 * 1024)

kevo_status kevo__gpu_launch(CUfunction f, unsigned grid, unsigned block,
                             void **params, const char *what, kevo_error *err)
{
    return kevo__cu_check(kevo__cu.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0,
                                                  NULL, params, NULL),
                          what, err);
}

unsigned kevo__gpu_blocks(const kevo__gpu *g, uint64_t n, unsigned block)
{
    uint64_t need = (n + block - 1) / block;
    uint64_t full =
        (uint64_t)g->sm_count * (uint64_t)(g->max_threads_per_sm / block);
    uint64_t b = need < full ? need : full;
    return b ? (unsigned)b : 1;
}

kevo_status kevo__gpu_sync(const char *what, kevo_error *err)
{
    return kevo__cu_check(kevo__cu.cuCtxSynchronize(), what, err);
}

/* The one function of the module whose mangled name is that of a C++
 * function called name ("_Z5saxpy..."); NULL when none or several are. */
static CUfunction find_mangled(CUmodule module, const char *name)
{
    unsigned n = 0;
    CUfunction found = NULL, *all = NULL;
    char prefix[128];
    if (!kevo__cu.cuModuleGetFunctionCount ||
        !kevo__cu.cuModuleEnumerateFunctions || !kevo__cu.cuFuncGetName)
        return NULL;
    snprintf(prefix, sizeof(prefix), "_Z%zu%s", strlen(name), name);
    if (kevo__cu.cuModuleGetFunctionCount(&n, module) != CUDA_SUCCESS ||
        n == 0 || !(all = calloc(n, sizeof(*all))))
        return NULL;
    if (kevo__cu.cuModuleEnumerateFunctions(all, n, module) == CUDA_SUCCESS) {
        int matches = 0;
        for (unsigned i = 0; i < n; i++) {
            const char *fname = NULL;
            if (kevo__cu.cuFuncGetName(&fname, all[i]) == CUDA_SUCCESS &&
                fname && strncmp(fname, prefix, strlen(prefix)) == 0) {
                found = all[i];
                matches++;
            }
        }
        if (matches != 1)
            found = NULL;
    }
    free(all);
    return found;
}

kevo_status kevo__program_load(kevo__gpu *g, const kevo_candidate *cand,
                               const void *image, size_t size,
                               const json_t *lowered, kevo__program *p,
                               kevo_error *err)
{
    (void)g;
    kevo_status rc = KEVO_OK;
    void *copy = NULL;
    memset(p, 0, sizeof(*p));
    p->cand = cand;
    p->nlaunches = kevo_candidate_launch_count(cand);
    p->fn = calloc(p->nlaunches + 1, sizeof(*p->fn));
    p->smem_set = calloc(p->nlaunches + 1, sizeof(*p->smem_set));
    /* The cubin gets a buffer of its own: the payload gives no alignment. */
    copy = malloc(size ? size : 1);
    if (!p->fn || !p->smem_set || !copy) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    if (size == 0) {
        rc = kevo__error_set(err, KEVO_EINVAL, "the cubin is empty");
        goto done;
    }
    memcpy(copy, image, size);
    rc = kevo__cu_check(kevo__cu.cuModuleLoadData(&p->module, copy),
                        "loading the cubin (cuModuleLoadData)", err);
    if (rc != KEVO_OK) {
        p->module = NULL;
        goto done;
    }
    for (size_t i = 0; i < p->nlaunches; i++) {
        const char *kernel = kevo_candidate_launch_kernel(cand, i);
        const json_t *low = json_is_object(lowered)
                                ? json_object_get(lowered, kernel)
                                : json_array_get(lowered, i);
        const char *name =
            json_is_string(low) ? json_string_value(low) : kernel;
        CUresult r = kevo__cu.cuModuleGetFunction(&p->fn[i], p->module, name);
        if (r == CUDA_ERROR_NOT_FOUND) {
            p->fn[i] = find_mangled(p->module, kernel);
            r = p->fn[i] ? CUDA_SUCCESS : r;
        }
        if (r == CUDA_ERROR_NOT_FOUND) {
            rc = kevo__error_set(err, KEVO_ENOENT,
                                 "kernel '%s' (launch %zu) is not in the "
                                 "cubin",
                                 kernel, i + 1);
            goto done;
        }
        rc = kevo__cu_check(r, "cuModuleGetFunction", err);
        if (rc != KEVO_OK)
            goto done;
    }
done:
    free(copy);
    if (rc != KEVO_OK)
        kevo__program_unload(p);
    return rc;
}

void kevo__program_unload(kevo__program *p)
{
    if (p->module)
        kevo__cu.cuModuleUnload(p->module);
    free(p->fn);
    free(p->smem_set);
    memset(p, 0, sizeof(*p));
}

/* Checks launch l's geometry against the device and raises the kernel's
 * dynamic shared memory limit when it needs more than the default. */
static kevo_status fit_device(kevo__gpu *g, const kevo__program *p, size_t l,
                              const kevo_launch_geometry *geo,
                              const kevo__shape *s, kevo_error *err)
{
    const char *kernel = kevo_candidate_launch_kernel(p->cand, l);
    uint64_t threads =
        (uint64_t)geo->block[0] * geo->block[1] * (uint64_t)geo->block[2];
    if (threads > (uint64_t)g->max_threads_per_block)
        return kevo__error_set(err, KEVO_EINVALID,
                               "kernel '%s' asks for %" PRIu64
                               " threads per block at %s; the device allows "
                               "%" PRId64,
                               kernel, threads, s->label,
                               g->max_threads_per_block);
    if (geo->shared_bytes > (uint64_t)g->max_smem_per_block)
        return kevo__error_set(err, KEVO_EINVALID,
                               "kernel '%s' asks for %" PRIu64
                               " bytes of dynamic shared memory per block at "
                               "%s; the device allows %" PRId64,
                               kernel, geo->shared_bytes, s->label,
                               g->max_smem_per_block);
    if (geo->shared_bytes > SMEM_DEFAULT &&
        (uint64_t)p->smem_set[l] < geo->shared_bytes) {
        char what[160];
        snprintf(what, sizeof(what),
                 "allowing kernel '%s' %" PRIu64
                 " bytes of dynamic shared memory (cuFuncSetAttribute)",
                 kernel, geo->shared_bytes);
        kevo_status rc = kevo__cu_check(
            kevo__cu.cuFuncSetAttribute(
                p->fn[l], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                (int)geo->shared_bytes),
            what, err);
        if (rc != KEVO_OK)
            return rc;
        p->smem_set[l] = (int)geo->shared_bytes;
    }
    return KEVO_OK;
}

/* The launch configuration of geo, with the cluster attribute (cluster)
 * and the programmatic serialisation one (pdl), in cfg and attrs (2). */
static void launch_config(const kevo_launch_geometry *geo, bool cluster,
                          bool pdl, CUlaunchConfig *cfg,
                          CUlaunchAttribute *attrs)
{
    memset(cfg, 0, sizeof(*cfg));
    memset(attrs, 0, 2 * sizeof(*attrs));
    cfg->gridDimX = geo->grid[0];
    cfg->gridDimY = geo->grid[1];
    cfg->gridDimZ = geo->grid[2];
    cfg->blockDimX = geo->block[0];
    cfg->blockDimY = geo->block[1];
    cfg->blockDimZ = geo->block[2];
    cfg->sharedMemBytes = (unsigned)geo->shared_bytes;
    cfg->hStream = NULL;
    cfg->attrs = attrs;
    if (cluster) {
        CUlaunchAttribute *a = &attrs[cfg->numAttrs++];
        a->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        a->value.clusterDim.x = geo->cluster[0];
        a->value.clusterDim.y = geo->cluster[1];
        a->value.clusterDim.z = geo->cluster[2];
    }
    if (pdl) {
        CUlaunchAttribute *a = &attrs[cfg->numAttrs++];
        a->id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        a->value.programmaticStreamSerializationAllowed = 1;
    }
}

/* One attribute of f, or -1 when the driver does not say. */
static int func_attr(CUfunction f, CUfunction_attribute a)
{
    int v = -1;
    if (kevo__cu.cuFuncGetAttribute(&v, a, f) != CUDA_SUCCESS)
        v = -1;
    return v;
}

/* Launch l's cluster: against dims compiled into the kernel
 * (__cluster_dims__), the non-portable opt-in above 8 blocks, and
 * cuOccupancyMaxActiveClusters, which must find room for one. */
static kevo_status fit_cluster(kevo__gpu *g, kevo__plan *plan, size_t l,
                               kevo_error *err)
{
    const kevo__program *p = plan->prog;
    const kevo_launch_geometry *geo = &plan->geom[l];
    const char *kernel = kevo_candidate_launch_kernel(p->cand, l);
    const char *label = plan->shape->label;
    CUfunction f = p->fn[l];
    unsigned size = geo->cluster[0] * geo->cluster[1] * geo->cluster[2];
    int cw = func_attr(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH),
        ch = func_attr(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT),
        cd = func_attr(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH);
    if (cw > 0) {
        if ((unsigned)cw != geo->cluster[0] ||
            (unsigned)(ch > 0 ? ch : 1) != geo->cluster[1] ||
            (unsigned)(cd > 0 ? cd : 1) != geo->cluster[2])
            return kevo__error_set(
                err, KEVO_EINVALID,
                "kernel '%s' is compiled with cluster dims (%d, %d, %d) "
                "(__cluster_dims__) and its launch asks for cluster(%u, %u, "
                "%u) at %s: they must agree, or leave cluster() out",
                kernel, cw, ch, cd, geo->cluster[0], geo->cluster[1],
                geo->cluster[2], label);
    } else {
        plan->cluster_attr[l] = true;
    }
    if (!kevo__cu.cuLaunchKernelEx || !kevo__cu.cuOccupancyMaxActiveClusters)
        return kevo__error_set(err, KEVO_EINVALID,
                               "kernel '%s' is launched in clusters and the "
                               "CUDA driver has no cuLaunchKernelEx",
                               kernel);
    if (size > 8 && cw <= 0) {
        char what[160];
        snprintf(what, sizeof(what),
                 "allowing kernel '%s' clusters of %u blocks "
                 "(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED)",
                 kernel, size);
        kevo_status rc = kevo__cu_check(
            kevo__cu.cuFuncSetAttribute(
                f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
            what, err);
        if (rc != KEVO_OK)
            return rc;
    }
    CUlaunchAttribute attrs[2];
    CUlaunchConfig cfg;
    launch_config(geo, true, false, &cfg, attrs);
    int clusters = 0, most = 0;
    CUresult r = kevo__cu.cuOccupancyMaxActiveClusters(&clusters, f, &cfg);
    if (r != CUDA_SUCCESS || clusters <= 0) {
        if (kevo__cu.cuOccupancyMaxPotentialClusterSize &&
            kevo__cu.cuOccupancyMaxPotentialClusterSize(&most, f, &cfg) !=
                CUDA_SUCCESS)
            most = 0;
        const char *name = NULL;
        if (r != CUDA_SUCCESS)
            kevo__cu.cuGetErrorName(r, &name);
        return kevo__error_set(
            err, KEVO_EINVALID,
            "kernel '%s' cannot run in clusters of %u blocks (%u x %u x %u) "
            "at %s with %u threads and %" PRIu64
            " bytes of dynamic shared memory per block: "
            "cuOccupancyMaxActiveClusters %s%s%s; the largest cluster that "
            "fits is %d blocks (device %s, 8 portable, 16 with the "
            "non-portable opt-in)",
            kernel, size, geo->cluster[0], geo->cluster[1], geo->cluster[2],
            label, geo->block[0] * geo->block[1] * geo->block[2],
            geo->shared_bytes, r != CUDA_SUCCESS ? "fails with " : "gives 0",
            name ? name : "", "", most, g->name);
    }
    plan->cluster_occ[l] = clusters;
    return KEVO_OK;
}

/* The argument values of launch l at shape s. */
static kevo_status bind_args(kevo__plan *plan, size_t l, const kevo__shape *s,
                             kevo_error *err)
{
    const kevo__program *p = plan->prog;
    kevo__resolved_arg *args = NULL;
    size_t nargs = 0;
    kevo_status rc =
        kevo__launch_args(s->task, p->cand, l, s->env, &args, &nargs, err);
    if (rc != KEVO_OK)
        return rc;
    plan->store[l] = calloc(nargs + 1, sizeof(**plan->store));
    plan->params[l] = calloc(nargs + 1, sizeof(**plan->params));
    if (!plan->store[l] || !plan->params[l]) {
        free(args);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    for (size_t a = 0; a < nargs; a++) {
        kevo__value *v = &plan->store[l][a];
        plan->params[l][a] = v->bytes;
        switch (args[a].kind) {
        case KEVO__ARG_BUFFER: v->ptr = s->buf[args[a].index]; break;
        case KEVO__ARG_SCALAR:
            /* the shape's own value: each input set draws it anew */
            plan->params[l][a] = (void *)s->value[args[a].index].bytes;
            break;
        case KEVO__ARG_SCRATCH: v->ptr = plan->scratch[args[a].index]; break;
        case KEVO__ARG_VALUE:
            /* little-endian: the low bytes are the value at the cast */
            memcpy(v->bytes, &args[a].value, args[a].size);
            break;
        case KEVO__ARG_TENSORMAP:
            plan->params[l][a] = &plan->maps[args[a].index];
            break;
        }
    }
    free(args);
    return KEVO_OK;
}

kevo_status kevo__plan_make(kevo__gpu *g, const kevo__program *p,
                            const kevo__shape *s, kevo__plan *plan,
                            kevo_error *err)
{
    const kevo_blocks *b = &p->cand->blocks;
    size_t n = p->nlaunches;
    kevo_status rc = KEVO_OK;
    memset(plan, 0, sizeof(*plan));
    plan->prog = p;
    plan->nscratch = b->nscratch;
    plan->geom = calloc(n + 1, sizeof(*plan->geom));
    plan->store = calloc(n + 1, sizeof(*plan->store));
    plan->params = calloc(n + 1, sizeof(*plan->params));
    plan->scratch = calloc(b->nscratch + 1, sizeof(*plan->scratch));
    plan->scratch_bytes = calloc(b->nscratch + 1, sizeof(*plan->scratch_bytes));
    plan->cluster_attr = calloc(n + 1, sizeof(*plan->cluster_attr));
    plan->cluster_occ = calloc(n + 1, sizeof(*plan->cluster_occ));
    plan->shape = s;
    if (!plan->geom || !plan->store || !plan->params || !plan->scratch ||
        !plan->scratch_bytes || !plan->cluster_attr || !plan->cluster_occ)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    rc = kevo__plan_maps_alloc(plan, b->ntensormaps, err);
    if (rc != KEVO_OK)
        return rc;
    for (size_t k = 0; k < b->nscratch && rc == KEVO_OK; k++) {
        uint64_t count = 0;
        kevo_error e = KEVO__ERROR_INIT;
        size_t es = kevo_dtype_size(b->scratch[k].type);
        rc = kevo__scratch_count(p->cand, k, s->env, &count, &e);
        if (rc != KEVO_OK)
            return kevo__error_wrap(err, &e, "%s", s->label);
        if (count > SIZE_MAX / es)
            return kevo__error_set(err, KEVO_ERANGE,
                                   "scratch buffer '%s' has %" PRIu64
                                   " elements at %s",
                                   b->scratch[k].name, count, s->label);
        plan->scratch_bytes[k] = (size_t)count * es;
        rc = kevo__gpu_alloc(g, &plan->scratch[k], plan->scratch_bytes[k], err);
    }
    if (rc != KEVO_OK)
        return rc;
    /* the geometry, the arguments and the tensor maps, checked as the core
     * checked them before anything ran */
    kevo_error e = KEVO__ERROR_INIT;
    rc = kevo__launches_at(s->task, p->cand, s->env, plan->geom, plan->margs,
                           plan->map_used, &e);
    if (rc != KEVO_OK)
        return kevo__error_wrap(err, &e, "%s", s->label);
    for (size_t l = 0; l < n && rc == KEVO_OK; l++) {
        plan->cluster_occ[l] = -1;
        if (!plan->geom[l].runs)
            continue;
        rc = fit_device(g, p, l, &plan->geom[l], s, err);
        if (rc == KEVO_OK && plan->geom[l].cluster[0])
            rc = fit_cluster(g, plan, l, err);
        if (rc == KEVO_OK)
            rc = bind_args(plan, l, s, err);
    }
    if (rc == KEVO_OK)
        rc = kevo__plan_maps_encode(plan, err);
    return rc;
}

void kevo__plan_free(kevo__gpu *g, kevo__plan *plan)
{
    size_t n = plan->prog ? plan->prog->nlaunches : 0;
    for (size_t k = 0; plan->scratch && k < plan->nscratch; k++)
        kevo__gpu_release(g, plan->scratch[k], plan->scratch_bytes[k]);
    for (size_t l = 0; l < n; l++) {
        if (plan->store)
            free(plan->store[l]);
        if (plan->params)
            free(plan->params[l]);
    }
    free(plan->geom);
    free(plan->store);
    free(plan->params);
    free(plan->scratch);
    free(plan->scratch_bytes);
    free(plan->cluster_attr);
    free(plan->cluster_occ);
    kevo__plan_maps_free(plan);
    memset(plan, 0, sizeof(*plan));
}

kevo_status kevo__plan_scratch(const kevo__plan *plan, unsigned char poison,
                               kevo_error *err)
{
    const kevo_blocks *b = &plan->prog->cand->blocks;
    kevo_status rc = KEVO_OK;
    for (size_t k = 0; k < plan->nscratch && rc == KEVO_OK; k++)
        rc = kevo__cu_check(kevo__cu.cuMemsetD8(plan->scratch[k],
                                                b->scratch[k].zero ? 0 : poison,
                                                plan->scratch_bytes[k]),
                            "cuMemsetD8", err);
    return rc;
}

kevo_status kevo__plan_zero_scratch(const kevo__plan *plan, kevo_error *err)
{
    const kevo_blocks *b = &plan->prog->cand->blocks;
    kevo_status rc = KEVO_OK;
    for (size_t k = 0; k < plan->nscratch && rc == KEVO_OK; k++) {
        if (b->scratch[k].zero)
            rc = kevo__cu_check(kevo__cu.cuMemsetD8(plan->scratch[k], 0,
                                                    plan->scratch_bytes[k]),
                                "cuMemsetD8", err);
    }
    return rc;
}

kevo_status kevo__plan_prepare(kevo__gpu *g, const kevo__plan *plan, bool flush,
                               kevo_error *err)
{
    kevo_status rc = kevo__plan_zero_scratch(plan, err);
    if (rc == KEVO_OK && flush) {
        uint64_t words = g->flush_words;
        CUdeviceptr buf = g->flush, sink = g->word;
        void *params[] = {&buf, &words, &sink};
        rc = kevo__gpu_launch(g->flush_l2, kevo__gpu_blocks(g, words, 256), 256,
                              params, "kevo_internal_flush_l2", err);
    }
    return rc;
}

size_t kevo__plan_runs(const kevo__plan *plan)
{
    size_t n = 0;
    for (size_t l = 0; l < plan->prog->nlaunches; l++)
        n += plan->geom[l].runs ? 1 : 0;
    return n;
}

kevo_status kevo__plan_launch(const kevo__plan *plan, kevo_error *err)
{
    const kevo__program *p = plan->prog;
    kevo_status rc = kevo__plan_maps_encode(plan, err);
    bool first = true;
    for (size_t l = 0; l < p->nlaunches && rc == KEVO_OK; l++) {
        const kevo_launch_geometry *geo = &plan->geom[l];
        char what[160];
        if (!geo->runs)
            continue;
        /* the first launch that runs waits for what came before it (the
         * inputs, the L2 flush): never programmatic */
        bool pdl = geo->pdl && !first;
        first = false;
        CUresult r;
        if (pdl || plan->cluster_attr[l]) {
            CUlaunchAttribute attrs[2];
            CUlaunchConfig cfg;
            launch_config(geo, plan->cluster_attr[l], pdl, &cfg, attrs);
            r = kevo__cu.cuLaunchKernelEx
                    ? kevo__cu.cuLaunchKernelEx(&cfg, p->fn[l], plan->params[l],
                                                NULL)
                    : CUDA_ERROR_NOT_SUPPORTED;
        } else {
            r = kevo__cu.cuLaunchKernel(
                p->fn[l], geo->grid[0], geo->grid[1], geo->grid[2],
                geo->block[0], geo->block[1], geo->block[2],
                (unsigned)geo->shared_bytes, NULL, plan->params[l], NULL);
        }
        if (r != CUDA_SUCCESS) {
            snprintf(what, sizeof(what), "launching kernel '%s'",
                     kevo_candidate_launch_kernel(p->cand, l));
            return kevo__cu_check(r, what, err);
        }
    }
    return rc;
}

json_t *kevo__program_kernels(kevo__gpu *g, const kevo__plan *plan,
                              kevo_error *err)
{
    const kevo__program *p = plan->prog;
    json_t *all = json_array();
    for (size_t l = 0; all && l < p->nlaunches; l++) {
        const kevo_launch_geometry *geo = &plan->geom[l];
        CUfunction f = p->fn[l];
        if (!geo->runs) {
            /* its "if" is 0 at this shape: named, in its place */
            json_t *k =
                json_pack("{s:s, s:b}", "name",
                          kevo_candidate_launch_kernel(p->cand, l), "runs", 0);
            if (!k || json_array_append_new(all, k) != 0) {
                json_decref(all);
                all = NULL;
            }
            continue;
        }
        int threads = (int)(geo->block[0] * geo->block[1] * geo->block[2]);
        int blocks = 0;
        double occupancy = 0.0;
        if (kevo__cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                &blocks, f, threads, (size_t)geo->shared_bytes) ==
                CUDA_SUCCESS &&
            g->max_threads_per_sm > 0)
            occupancy =
                (double)blocks * threads / (double)g->max_threads_per_sm;
        json_t *k = json_pack(
            "{s:s, s:i, s:i, s:i, s:i, s:[I,I,I], s:I, s:f}", "name",
            kevo_candidate_launch_kernel(p->cand, l), "registers",
            func_attr(f, CU_FUNC_ATTRIBUTE_NUM_REGS), "local_bytes",
            func_attr(f, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES), "static_smem",
            func_attr(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES), "max_threads",
            func_attr(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), "block",
            (json_int_t)geo->block[0], (json_int_t)geo->block[1],
            (json_int_t)geo->block[2], "dyn_smem",
            (json_int_t)geo->shared_bytes, "occupancy",
            occupancy > 1.0 ? 1.0 : occupancy);
        if (k && geo->cluster[0] &&
            (json_object_set_new(
                 k, "cluster",
                 json_integer((json_int_t)geo->cluster[0] * geo->cluster[1] *
                              geo->cluster[2])) != 0 ||
             json_object_set_new(k, "cluster_occupancy",
                                 json_integer(plan->cluster_occ[l])) != 0)) {
            json_decref(k);
            k = NULL;
        }
        if (!k || json_array_append_new(all, k) != 0) {
            json_decref(all);
            all = NULL;
        }
    }
    if (!all)
        kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    return all;
}

/*
 * eval_describe.c: the behaviour descriptors of a result, measured from
 * the compiled artefact (PTX, ptxas's log, the worker's function
 * attributes) and the profiler, and a record per launch of what its
 * kernel is made of.
 *
 * Per launch: its kernel in the PTX (by name, or by the unqualified name
 * of a C++ kernel), its geometry at the largest shape of the set (the
 * worker's block when it reported one), registers and static shared
 * memory (the worker's, else ptxas's), dynamic shared memory, spills
 * (ptxas's, with the functions the kernel calls) and occupancy (the
 * worker's cuOccupancy figure, else the CUDA occupancy rules). The main
 * launch is the one with the most threads at that shape (the first of
 * equals); block_size, occupancy, registers and shared_bytes are its;
 * memory and spills are the largest over the launches, warp_ops is 1 when
 * any launch uses warp-level primitives.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_private.h"
#include "model/candidate_private.h"
#include "model/descriptor.h"
#include "model/devprops.h"
#include "occupancy.h"
#include "ptxscan.h"

/* What one launch is made of; -1 or NaN where unknown. */
typedef struct launch_facts {
    const char *kernel;
    const kevo_ptx_kernel *ptx;
    const kevo_worker_kernel *wk;
    bool has_geometry;
    kevo_launch_geometry geo;
    int64_t threads;      /* per block */
    double total_threads; /* over the grid */
    int64_t registers;
    int64_t static_smem, dyn_smem, shared;
    int64_t spills;
    double occupancy;
    const char *occupancy_from; /* "worker", "calculated" or NULL */
    const char *occupancy_limit;
    int memory;   /* -1 unknown */
    int warp_ops; /* -1 unknown */
} launch_facts;

static void set_descriptor(kevo_eval_result *res, const char *name, double v)
{
    const kevo_descriptor_def *d;
    for (size_t i = 0;
         i < KEVO__DESCRIPTORS_MAX && (d = kevo__descriptor_at(i)) != NULL;
         i++) {
        if (strcmp(d->name, name) == 0) {
            res->descriptor[i] = v;
            res->has_descriptor[i] = true;
        }
    }
}

/* The index of the largest shape of res's set in task: the most bytes in
 * the cost model, then the most flops, then the first. */
static size_t largest_shape(const kevo_task *task, kevo_shape_set set)
{
    size_t best = 0, n = kevo_task_shape_count(task, set);
    double best_bytes = -1, best_flops = -1;
    kevo_vars *vars = kevo_vars_new();
    for (size_t i = 0; vars && i < n; i++) {
        double bytes = -1, flops = -1;
        kevo_vars_clear(vars);
        if (kevo_task_shape_vars(task, set, i, vars) != KEVO_OK ||
            kevo_task_cost(task, vars, &bytes, &flops, NULL) != KEVO_OK)
            continue;
        if (bytes > best_bytes || (bytes == best_bytes && flops > best_flops)) {
            best = i;
            best_bytes = bytes;
            best_flops = flops;
        }
    }
    kevo_vars_free(vars);
    return best;
}

/* The worker's record of launch i: by position when the worker reported
 * one per launch in launch order, else the first of the same name. */
static const kevo_worker_kernel *worker_kernel(const kevo_candidate *cand,
                                               size_t i,
                                               const kevo_worker_kernel *wk,
                                               size_t nwk)
{
    size_t nl = kevo_candidate_launch_count(cand);
    bool in_order = nwk == nl;
    for (size_t j = 0; in_order && j < nl; j++)
        in_order =
            strcmp(wk[j].name, kevo_candidate_launch_kernel(cand, j)) == 0;
    if (in_order)
        return &wk[i];
    for (size_t j = 0; j < nwk; j++) {
        if (strcmp(wk[j].name, kevo_candidate_launch_kernel(cand, i)) == 0)
            return &wk[j];
    }
    return NULL;
}

static void launch_facts_fill(launch_facts *f, const kevo_ptxscan *scan,
                              const kevo_vars *device)
{
    const kevo_worker_kernel *w = f->wk;
    const kevo_ptx_kernel *k = f->ptx;
    f->threads = -1;
    if (w && w->has_block)
        f->threads = w->block[0] * w->block[1] * w->block[2];
    else if (f->has_geometry)
        f->threads =
            (int64_t)f->geo.block[0] * f->geo.block[1] * f->geo.block[2];
    f->total_threads = 0;
    if (f->has_geometry && f->threads > 0)
        f->total_threads = (double)f->geo.grid[0] * f->geo.grid[1] *
                           f->geo.grid[2] * (double)f->threads;
    f->registers = w && w->registers >= 0 ? w->registers
                   : k                    ? k->registers
                                          : -1;
    f->static_smem = -1;
    if (w && w->static_smem >= 0)
        f->static_smem = w->static_smem;
    else if (k && k->smem_bytes >= 0)
        f->static_smem = k->smem_bytes;
    else if (k && k->in_ptx)
        f->static_smem = (int64_t)k->shared_static;
    f->dyn_smem = w && w->dyn_smem >= 0 ? w->dyn_smem
                  : f->has_geometry     ? (int64_t)f->geo.shared_bytes
                                        : -1;
    f->shared = f->static_smem >= 0 && f->dyn_smem >= 0
                    ? f->static_smem + f->dyn_smem
                    : -1;
    f->spills = k ? kevo__ptxscan_spill_stores(scan, k) : -1;
    f->occupancy = NAN;
    f->occupancy_from = NULL;
    f->occupancy_limit = NULL;
    /* The worker says 0 when the driver's calculator failed: a launch that
     * cannot run at all is a launch error, not a result. */
    if (w && isfinite(w->occupancy) && w->occupancy > 0) {
        f->occupancy = w->occupancy;
        f->occupancy_from = "worker";
    } else if (f->threads > 0 && f->registers >= 0 && f->shared >= 0) {
        kevo_occupancy occ;
        uint32_t bars = k && k->barriers > 0 ? (uint32_t)k->barriers : 0;
        if (kevo__occupancy(device, (uint32_t)f->threads,
                            (uint32_t)f->registers, (uint64_t)f->shared, bars,
                            &occ, NULL) == KEVO_OK) {
            f->occupancy = occ.occupancy;
            f->occupancy_from = "calculated";
            f->occupancy_limit = occ.limited_by;
        }
    }
    f->memory = -1;
    f->warp_ops = -1;
    if (k && k->in_ptx) {
        uint64_t shared =
            f->shared >= 0 ? (uint64_t)f->shared : k->shared_static;
        f->memory = kevo__ptx_memory_level(k, shared);
        f->warp_ops = kevo__ptx_warp_ops(k);
    }
}

/* Sets key to v (stolen) in obj; false when out of memory. */
static bool put(json_t *obj, const char *key, json_t *v)
{
    return v && json_object_set_new(obj, key, v) == 0;
}

static json_t *int_or_null(int64_t x)
{
    return x >= 0 ? json_integer(x) : json_null();
}

static json_t *triple(const uint32_t *x)
{
    return json_pack("[III]", (json_int_t)x[0], (json_int_t)x[1],
                     (json_int_t)x[2]);
}

/* The JSON record of one launch; NULL when out of memory. */
static json_t *launch_json(const launch_facts *f, bool main_launch)
{
    json_t *o = json_object();
    const kevo_ptx_kernel *k = f->ptx;
    const kevo_worker_kernel *w = f->wk;
    json_t *features = k && k->in_ptx ? json_object() : json_null();
    if (!o || !features)
        goto fail;
    for (int i = 0; k && k->in_ptx && i < KEVO_PTX_FEATURE_COUNT; i++) {
        if (!put(features, kevo__ptx_feature_name((kevo_ptx_feature)i),
                 json_integer(k->count[i])))
            goto fail;
    }
    uint32_t wblock[3] = {0, 0, 0};
    if (w && w->has_block)
        for (int i = 0; i < 3; i++)
            wblock[i] = (uint32_t)w->block[i];
    if (!put(o, "features", features)) {
        features = NULL;
        goto fail;
    }
    if (!put(o, "kernel", json_string(f->kernel)) ||
        !put(o, "entry", k ? json_string(k->name) : json_null()) ||
        !put(o, "main", json_boolean(main_launch)) ||
        !put(o, "grid", f->has_geometry ? triple(f->geo.grid) : json_null()) ||
        !put(o, "block",
             w && w->has_block ? triple(wblock)
             : f->has_geometry ? triple(f->geo.block)
                               : json_null()) ||
        !put(o, "threads", int_or_null(f->threads)) ||
        !put(o, "registers", int_or_null(f->registers)) ||
        !put(o, "static_smem", int_or_null(f->static_smem)) ||
        !put(o, "dyn_smem", int_or_null(f->dyn_smem)) ||
        !put(o, "shared_bytes", int_or_null(f->shared)) ||
        !put(o, "spill_stores", int_or_null(f->spills)) ||
        !put(o, "spill_loads", int_or_null(k ? k->spill_loads : -1)) ||
        !put(o, "stack_frame", int_or_null(k ? k->stack_frame : -1)) ||
        !put(o, "barriers", int_or_null(k ? k->barriers : -1)) ||
        !put(o, "local_bytes", int_or_null(w ? w->local_bytes : -1)) ||
        !put(o, "max_threads", int_or_null(w ? w->max_threads : -1)) ||
        !put(o, "occupancy", kevo__json_real_nf(f->occupancy)) ||
        !put(o, "occupancy_from",
             f->occupancy_from ? json_string(f->occupancy_from)
                               : json_null()) ||
        !put(o, "occupancy_limit",
             f->occupancy_limit ? json_string(f->occupancy_limit)
                                : json_null()) ||
        !put(o, "memory",
             f->memory >= 0 ? json_integer(f->memory) : json_null()) ||
        !put(o, "warp_ops",
             f->warp_ops >= 0 ? json_boolean(f->warp_ops) : json_null()) ||
        !put(o, "runs", json_boolean(!w || w->runs)) ||
        !put(o, "cluster", int_or_null(w ? w->cluster : -1)) ||
        !put(o, "cluster_occupancy",
             int_or_null(w ? w->cluster_occupancy : -1)))
        goto fail;
    return o;
fail:
    json_decref(features);
    json_decref(o);
    return NULL;
}

kevo_status kevo__eval_describe(kevo_eval_result *res, const kevo_task *task,
                                const kevo_compile_info *compile,
                                const kevo_worker_kernel *wk, size_t nwk,
                                const kevo_eval_context *ctx, kevo_error *err)
{
    kevo_ptxscan scan;
    kevo_error local = KEVO__ERROR_INIT;
    kevo_vars *env = NULL, *nominal = NULL;
    launch_facts *facts = NULL;
    kevo_status rc = KEVO_ENOMEM;
    bool have_ptx = false;
    const kevo_vars *device = ctx ? ctx->device : NULL;
    kevo__ptxscan_init(&scan);
    if (!compile || !compile->ok || !res->cand)
        return KEVO_OK;

    if (compile->ptx) {
        rc = kevo__ptxscan_ptx(&scan, compile->ptx, compile->ptx_len, &local);
        if (rc == KEVO_ENOMEM)
            goto nomem;
        if (rc != KEVO_OK) {
            free(res->describe_error);
            res->describe_error = kevo__strdup(local.text);
            if (!res->describe_error)
                goto nomem;
            kevo__ptxscan_free(&scan);
            kevo__ptxscan_init(&scan);
        } else {
            have_ptx = true;
        }
    }
    if (kevo__ptxscan_log(&scan, compile->log, NULL) != KEVO_OK)
        goto nomem;

    if (!device) {
        if (!(nominal = kevo_vars_new()) ||
            kevo__devprops_nominal(nominal) != KEVO_OK)
            goto nomem;
        device = nominal;
    }
    size_t nl = kevo_candidate_launch_count(res->cand);
    if (!(env = kevo_vars_new()) ||
        !(facts = calloc(nl ? nl : 1, sizeof(*facts))))
        goto nomem;
    if (kevo_task_shape_count(task, res->set) > 0 &&
        kevo_task_shape_vars(task, res->set, largest_shape(task, res->set),
                             env) != KEVO_OK)
        goto nomem;
    if (kevo_vars_update(env, device) != KEVO_OK)
        goto nomem;

    size_t main_launch = 0;
    for (size_t i = 0; i < nl; i++) {
        launch_facts *f = &facts[i];
        f->kernel = kevo_candidate_launch_kernel(res->cand, i);
        f->ptx = kevo__ptxscan_find(&scan, f->kernel);
        f->wk = worker_kernel(res->cand, i, wk, nwk);
        f->geo.size = sizeof(f->geo);
        f->has_geometry = kevo_candidate_launch_geometry(
                              res->cand, i, env, &f->geo, NULL) == KEVO_OK &&
                          f->geo.runs;
        launch_facts_fill(f, &scan, device);
        if (f->total_threads > facts[main_launch].total_threads)
            main_launch = i;
    }

    /* The descriptors. */
    int memory = -1, warp = -1;
    int64_t spills = -1;
    for (size_t i = 0; i < nl; i++) {
        memory = facts[i].memory > memory ? facts[i].memory : memory;
        warp = facts[i].warp_ops > warp ? facts[i].warp_ops : warp;
        spills = facts[i].spills > spills ? facts[i].spills : spills;
    }
    if (memory < 0 && have_ptx) {
        /* No launch found its kernel: every kernel of the PTX counts. */
        for (size_t i = 0; i < scan.n; i++) {
            const kevo_ptx_kernel *k = &scan.kernels[i];
            if (!k->entry || !k->in_ptx)
                continue;
            int m = kevo__ptx_memory_level(k, k->shared_static);
            memory = m > memory ? m : memory;
            warp = kevo__ptx_warp_ops(k) > warp ? kevo__ptx_warp_ops(k) : warp;
        }
    }
    if (memory >= 0)
        set_descriptor(res, "memory", memory);
    if (warp >= 0)
        set_descriptor(res, "warp_ops", warp);
    if (spills >= 0)
        set_descriptor(res, "spills", (double)spills);
    if (nl) {
        const launch_facts *m = &facts[main_launch];
        if (m->threads > 0)
            set_descriptor(res, "block_size", (double)m->threads);
        if (isfinite(m->occupancy))
            set_descriptor(res, "occupancy", m->occupancy);
        if (m->registers >= 0)
            set_descriptor(res, "registers", (double)m->registers);
        if (m->shared >= 0)
            set_descriptor(res, "shared_bytes", (double)m->shared);
    }

    json_decref(res->kernels);
    if (!(res->kernels = json_array()))
        goto nomem;
    for (size_t i = 0; i < nl; i++) {
        json_t *o = launch_json(&facts[i], i == main_launch);
        if (!o || json_array_append_new(res->kernels, o) != 0)
            goto nomem;
    }
    rc = KEVO_OK;
    goto done;
nomem:
    rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
done:
    free(facts);
    kevo_vars_free(env);
    kevo_vars_free(nominal);
    kevo__ptxscan_free(&scan);
    return rc;
}

void kevo__eval_describe_dram(kevo_eval_result *res)
{
    const kevo_eval_shape *best = NULL;
    for (size_t i = 0; i < res->nshapes; i++) {
        const kevo_eval_shape *s = &res->shapes[i];
        const kevo_shape_result *r = &s->r;
        if (!s->has_profile || !isfinite(r->dram_read_bytes) ||
            !isfinite(r->dram_write_bytes) || !isfinite(r->time) ||
            r->time <= 0)
            continue;
        if (!best || (isfinite(r->bytes) && !(r->bytes <= best->r.bytes)))
            best = s;
    }
    if (!best || !(res->bandwidth > 0))
        return;
    const kevo_shape_result *r = &best->r;
    set_descriptor(res, "dram_fraction",
                   (r->dram_read_bytes + r->dram_write_bytes) / r->time /
                       res->bandwidth);
}

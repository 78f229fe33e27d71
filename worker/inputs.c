/*
 * inputs.c: device memory for the GPU worker, one shape's buffers and its
 * inputs drawn on the device, and the cache of reference results.
 *
 * Inputs are drawn by the fill kernels of kernels.cu.h: element i of
 * argument a for seed s is a function of (s, a, i) alone, so the same seed
 * gives the same inputs on any run, and a new seed gives new ones. Random
 * scalars are drawn the same way (one element) and read back.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "proc/ipc.h"

/* ---- kept buffers ---------------------------------------------------------
 * Evaluations of one task allocate the same sizes again and again: freed
 * buffers are kept by size for the next allocation, up to a cap. */

typedef struct kept {
    CUdeviceptr ptr;
    size_t bytes;
} kept;

struct kevo__pool {
    kept *v;
    size_t n, cap_entries;
    size_t bytes, cap;
};

kevo__pool *kevo__pool_new(size_t cap)
{
    kevo__pool *p = calloc(1, sizeof(*p));
    if (p)
        p->cap = cap;
    return p;
}

/* Frees every kept buffer. */
static void pool_trim(kevo__pool *p)
{
    for (size_t i = 0; p && i < p->n; i++)
        kevo__cu.cuMemFree(p->v[i].ptr);
    if (p) {
        p->n = 0;
        p->bytes = 0;
    }
}

void kevo__pool_free(kevo__pool *p)
{
    if (!p)
        return;
    pool_trim(p);
    free(p->v);
    free(p);
}

static bool pool_take(kevo__pool *p, size_t bytes, CUdeviceptr *ptr)
{
    for (size_t i = 0; p && i < p->n; i++) {
        if (p->v[i].bytes == bytes) {
            *ptr = p->v[i].ptr;
            p->bytes -= bytes;
            p->v[i] = p->v[--p->n];
            return true;
        }
    }
    return false;
}

kevo_status kevo__gpu_alloc(kevo__gpu *g, CUdeviceptr *ptr, size_t bytes,
                            kevo_error *err)
{
    *ptr = 0;
    if (pool_take(g->pool, bytes, ptr))
        return KEVO_OK;
    CUresult r = kevo__cu.cuMemAlloc(ptr, bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        pool_trim(g->pool);
        r = kevo__cu.cuMemAlloc(ptr, bytes);
    }
    while (r == CUDA_ERROR_OUT_OF_MEMORY && g->refs &&
           kevo__refcache_evict_device(g->refs, bytes) > 0)
        r = kevo__cu.cuMemAlloc(ptr, bytes);
    if (r != CUDA_SUCCESS) {
        char what[64], size[32];
        *ptr = 0;
        snprintf(what, sizeof(what), "cuMemAlloc of %s",
                 kevo__ipc_size_text(bytes, size, sizeof(size)));
        return kevo__cu_check(r, what, err);
    }
    return KEVO_OK;
}

void kevo__gpu_release(kevo__gpu *g, CUdeviceptr ptr, size_t bytes)
{
    kevo__pool *p = g->pool;
    if (!ptr)
        return;
    if (p && p->bytes + bytes <= p->cap) {
        if (p->n == p->cap_entries) {
            size_t ncap = p->cap_entries ? 2 * p->cap_entries : 32;
            kept *nv = realloc(p->v, ncap * sizeof(*nv));
            if (nv) {
                p->v = nv;
                p->cap_entries = ncap;
            }
        }
        if (p->n < p->cap_entries) {
            p->v[p->n++] = (kept){ptr, bytes};
            p->bytes += bytes;
            return;
        }
    }
    kevo__cu.cuMemFree(ptr);
}

/* ---- a shape --------------------------------------------------------- */

bool kevo__is_input(const kevo_arg_info *a)
{
    return a->role == KEVO_ROLE_IN || a->role == KEVO_ROLE_INOUT;
}

bool kevo__is_output(const kevo_arg_info *a)
{
    return a->role == KEVO_ROLE_OUT || a->role == KEVO_ROLE_INOUT;
}

/* "train shape 0 (n=16777216)" in s->label. */
static void shape_label(kevo__shape *s)
{
    const int64_t *dims = kevo_task_shape(s->task, s->set, s->index);
    size_t len = (size_t)snprintf(
        s->label, sizeof(s->label), "%s shape %zu (",
        s->set == KEVO_SHAPES_HELD_OUT ? "held-out" : "train", s->index);
    for (size_t d = 0; dims && d < kevo_task_dim_count(s->task); d++) {
        if (len >= sizeof(s->label))
            break;
        len += (size_t)snprintf(s->label + len, sizeof(s->label) - len,
                                "%s%s=%" PRId64, d ? ", " : "",
                                kevo_task_dim_name(s->task, d), dims[d]);
    }
    if (len + 2 <= sizeof(s->label))
        strcat(s->label, ")");
}

kevo_status kevo__shape_setup(kevo__gpu *g, const kevo_task *task,
                              kevo_shape_set set, size_t i, kevo__shape *s,
                              kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    memset(s, 0, sizeof(*s));
    s->task = task;
    s->set = set;
    s->index = i;
    s->nargs = kevo_task_arg_count(task);
    shape_label(s);
    s->env = kevo_vars_new();
    s->info = calloc(s->nargs + 1, sizeof(*s->info));
    s->count = calloc(s->nargs + 1, sizeof(*s->count));
    s->bytes = calloc(s->nargs + 1, sizeof(*s->bytes));
    s->buf = calloc(s->nargs + 1, sizeof(*s->buf));
    s->pristine = calloc(s->nargs + 1, sizeof(*s->pristine));
    s->want = calloc(s->nargs + 1, sizeof(*s->want));
    s->value = calloc(s->nargs + 1, sizeof(*s->value));
    s->base_max = calloc(s->nargs + 1, sizeof(*s->base_max));
    s->base_mean = calloc(s->nargs + 1, sizeof(*s->base_mean));
    if (!s->env || !s->info || !s->count || !s->bytes || !s->buf ||
        !s->pristine || !s->want || !s->value || !s->base_max ||
        !s->base_mean)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    rc = kevo_task_shape_vars(task, set, i, s->env);
    if (rc == KEVO_OK)
        rc = kevo_vars_update(s->env, g->props);
    if (rc != KEVO_OK)
        return kevo__error_set(err, rc, "%s: no such shape", s->label);
    for (size_t a = 0; a < s->nargs && rc == KEVO_OK; a++) {
        kevo_arg_info *in = &s->info[a];
        in->size = sizeof(*in);
        if (kevo_task_arg_info(task, a, in) != KEVO_OK)
            return kevo__error_set(err, KEVO_EINVAL, "argument %zu", a);
        if (in->role == KEVO_ROLE_SCALAR)
            continue;
        int64_t count = 0;
        kevo_error e = KEVO__ERROR_INIT;
        rc = kevo_expr_eval_string(in->count, s->env, &count, &e);
        if (rc != KEVO_OK)
            return kevo__error_wrap(err, &e, "%s: count of '%s'", s->label,
                                    in->name);
        size_t es = kevo_dtype_size(in->type);
        if (count <= 0 || (uint64_t)count > SIZE_MAX / es)
            return kevo__error_set(err, KEVO_ERANGE,
                                   "%s: '%s' has %" PRId64 " elements",
                                   s->label, in->name, count);
        s->count[a] = (uint64_t)count;
        s->bytes[a] = (size_t)count * es;
        rc = kevo__gpu_alloc(g, &s->buf[a], s->bytes[a], err);
        if (rc == KEVO_OK && kevo__is_input(in))
            rc = kevo__gpu_alloc(g, &s->pristine[a], s->bytes[a], err);
        if (rc == KEVO_OK && kevo__is_output(in))
            rc = kevo__gpu_alloc(g, &s->want[a], s->bytes[a], err);
    }
    return rc;
}

void kevo__shape_free(kevo__gpu *g, kevo__shape *s)
{
    for (size_t a = 0; s->bytes && a < s->nargs; a++) {
        if (s->buf)
            kevo__gpu_release(g, s->buf[a], s->bytes[a]);
        if (s->pristine)
            kevo__gpu_release(g, s->pristine[a], s->bytes[a]);
        if (s->want)
            kevo__gpu_release(g, s->want[a], s->bytes[a]);
    }
    kevo_vars_free(s->env);
    free(s->info);
    free(s->count);
    free(s->bytes);
    free(s->buf);
    free(s->pristine);
    free(s->want);
    free(s->value);
    free(s->base_max);
    free(s->base_mean);
    memset(s, 0, sizeof(*s));
}

/* Fills n elements of type at dst from the stream of argument a. */
static kevo_status fill(kevo__gpu *g, CUdeviceptr dst, kevo_dtype type,
                        uint64_t n, uint64_t seed, uint64_t a, int dist,
                        double lo, double hi, kevo_error *err)
{
    void *params[] = {&dst, &n, &seed, &a, &dist, &lo, &hi};
    return kevo__gpu_launch(g->fill[type], kevo__gpu_blocks(g, n, 256), 256,
                            params, "kevo_internal_fill", err);
}

/* A scalar's value: fixed integers exactly, fixed floats and random
 * scalars through the fill kernel (one element, read back). */
static kevo_status draw_scalar(kevo__gpu *g, kevo__shape *s, size_t a,
                               uint64_t seed, kevo_error *err)
{
    const kevo_arg_info *in = &s->info[a];
    size_t es = kevo_dtype_size(in->type);
    int dist = in->dist;
    double lo = in->dist_a, hi = in->dist_b;
    memset(&s->value[a], 0, sizeof(s->value[a]));
    if (in->value && !kevo_dtype_is_float(in->type)) {
        int64_t x = 0;
        kevo_error e = KEVO__ERROR_INIT;
        if (kevo_expr_eval_string(in->value, s->env, &x, &e) != KEVO_OK)
            return kevo__error_wrap(err, &e, "%s: scalar '%s'", s->label,
                                    in->name);
        memcpy(s->value[a].bytes, &x, es); /* little-endian */
        return KEVO_OK;
    }
    if (in->value) {
        dist = KEVO_DIST_CONSTANT;
        lo = strtod(in->value, NULL);
    }
    kevo_status rc =
        fill(g, g->word, in->type, 1, seed, (uint64_t)a, dist, lo, hi, err);
    if (rc == KEVO_OK)
        rc = kevo__cu_check(
            kevo__cu.cuMemcpyDtoH(s->value[a].bytes, g->word, es),
            "cuMemcpyDtoH", err);
    return rc;
}

kevo_status kevo__shape_draw(kevo__gpu *g, kevo__shape *s, uint64_t seed,
                             kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    for (size_t a = 0; a < s->nargs && rc == KEVO_OK; a++) {
        const kevo_arg_info *in = &s->info[a];
        if (in->role == KEVO_ROLE_SCALAR) {
            rc = draw_scalar(g, s, a, seed, err);
        } else if (kevo__is_input(in)) {
            rc = fill(g, s->pristine[a], in->type, s->count[a], seed,
                      (uint64_t)a, (int)in->dist, in->dist_a, in->dist_b, err);
            if (rc == KEVO_OK)
                rc = kevo__cu_check(kevo__cu.cuMemcpyDtoD(
                                        s->buf[a], s->pristine[a], s->bytes[a]),
                                    "cuMemcpyDtoD", err);
        }
    }
    return rc;
}

/* Fills an out buffer with the poison pattern of its type (gpu.h). */
static kevo_status poison_buffer(kevo__gpu *g, const kevo__shape *s, size_t a,
                                 unsigned char poison, kevo_error *err)
{
    /* 0x7f7f is a NaN in f16: its large finite poison is the largest
     * finite f16, 65504 (0x7bff), written by the fill kernel. */
    if (s->info[a].type == KEVO_DTYPE_F16 && poison == 0x7f)
        return fill(g, s->buf[a], KEVO_DTYPE_F16, s->count[a], 0, 0,
                    KEVO_DIST_CONSTANT, 65504.0, 0, err);
    return kevo__cu_check(kevo__cu.cuMemsetD8(s->buf[a], poison, s->bytes[a]),
                          "cuMemsetD8", err);
}

kevo_status kevo__shape_reset(kevo__gpu *g, kevo__shape *s,
                              unsigned char poison, kevo_error *err)
{
    kevo_status rc = KEVO_OK;
    for (size_t a = 0; a < s->nargs && rc == KEVO_OK; a++) {
        if (s->info[a].role == KEVO_ROLE_OUT)
            rc = poison_buffer(g, s, a, poison, err);
        else if (s->info[a].role == KEVO_ROLE_INOUT)
            rc = kevo__cu_check(
                kevo__cu.cuMemcpyDtoD(s->buf[a], s->pristine[a], s->bytes[a]),
                "cuMemcpyDtoD", err);
    }
    return rc;
}

kevo_status kevo__shape_keep_reference(kevo__gpu *g, kevo__shape *s,
                                       kevo_error *err)
{
    (void)g;
    kevo_status rc = KEVO_OK;
    for (size_t a = 0; a < s->nargs && rc == KEVO_OK; a++) {
        if (kevo__is_output(&s->info[a]))
            rc = kevo__cu_check(
                kevo__cu.cuMemcpyDtoD(s->want[a], s->buf[a], s->bytes[a]),
                "cuMemcpyDtoD", err);
    }
    return rc;
}

/* ---- reference results ------------------------------------------------- */

typedef struct ref_entry {
    char *key;
    uint64_t used; /* the cache's clock at the last use */
    bool on_device;
    size_t nout;
    size_t *arg;   /* the output's task argument index */
    size_t *bytes; /* its size */
    CUdeviceptr *dev;
    unsigned char **host;
    double *base_max, *base_mean; /* the baseline's errors, per output */
    size_t total;
} ref_entry;

struct kevo__refcache {
    ref_entry *e;
    size_t n, cap;
    size_t dev_cap, host_cap, dev_used, host_used;
    uint64_t clock;
};

kevo__refcache *kevo__refcache_new(size_t device_cap, size_t host_cap)
{
    kevo__refcache *c = calloc(1, sizeof(*c));
    if (c) {
        c->dev_cap = device_cap;
        c->host_cap = host_cap;
    }
    return c;
}

static void entry_clear(ref_entry *e)
{
    for (size_t i = 0; i < e->nout; i++) {
        if (e->dev && e->dev[i])
            kevo__cu.cuMemFree(e->dev[i]);
        if (e->host)
            free(e->host[i]);
    }
    free(e->key);
    free(e->arg);
    free(e->bytes);
    free(e->dev);
    free(e->host);
    free(e->base_max);
    free(e->base_mean);
    memset(e, 0, sizeof(*e));
}

/* Drops entry i. */
static void drop(kevo__refcache *c, size_t i)
{
    if (c->e[i].on_device)
        c->dev_used -= c->e[i].total;
    else
        c->host_used -= c->e[i].total;
    entry_clear(&c->e[i]);
    c->e[i] = c->e[--c->n];
}

void kevo__refcache_free(kevo__refcache *c)
{
    if (!c)
        return;
    while (c->n > 0)
        drop(c, c->n - 1);
    free(c->e);
    free(c);
}

/* The least recently used entry on (or off) the device, or -1. */
static long oldest(const kevo__refcache *c, bool on_device)
{
    long best = -1;
    for (size_t i = 0; i < c->n; i++) {
        if (c->e[i].on_device == on_device &&
            (best < 0 || c->e[i].used < c->e[best].used))
            best = (long)i;
    }
    return best;
}

size_t kevo__refcache_evict_device(kevo__refcache *c, size_t need)
{
    size_t freed = 0;
    long i;
    while (freed < need && (i = oldest(c, true)) >= 0) {
        freed += c->e[i].total;
        drop(c, (size_t)i);
    }
    return freed;
}

const char *kevo__refcache_key(const char *task_key, const kevo__shape *s,
                               uint64_t seed, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%d/%zu/%" PRIu64, task_key, (int)s->set, s->index,
             seed);
    return buf;
}

kevo_status kevo__refcache_get(kevo__gpu *g, const char *key, kevo__shape *s,
                               bool *hit, kevo_error *err)
{
    kevo__refcache *c = g->refs;
    *hit = false;
    for (size_t i = 0; c && i < c->n; i++) {
        ref_entry *e = &c->e[i];
        if (strcmp(e->key, key) != 0)
            continue;
        for (size_t k = 0; k < e->nout; k++) {
            if (e->arg[k] >= s->nargs || e->bytes[k] != s->bytes[e->arg[k]])
                return KEVO_OK; /* another task under the same key */
        }
        kevo_status rc = KEVO_OK;
        for (size_t k = 0; k < e->nout && rc == KEVO_OK; k++) {
            CUdeviceptr dst = s->want[e->arg[k]];
            s->base_max[e->arg[k]] = e->base_max[k];
            s->base_mean[e->arg[k]] = e->base_mean[k];
            rc = e->on_device
                     ? kevo__cu_check(
                           kevo__cu.cuMemcpyDtoD(dst, e->dev[k], e->bytes[k]),
                           "cuMemcpyDtoD", err)
                     : kevo__cu_check(
                           kevo__cu.cuMemcpyHtoD(dst, e->host[k], e->bytes[k]),
                           "cuMemcpyHtoD", err);
        }
        e->used = ++c->clock;
        *hit = rc == KEVO_OK;
        return rc;
    }
    return KEVO_OK;
}

/* Fills e's copies of s's outputs on the device; false when device memory
 * runs out (e keeps what it has for entry_clear). */
static kevo_status put_device(const kevo__shape *s, ref_entry *e, bool *fits,
                              kevo_error *err)
{
    *fits = true;
    for (size_t k = 0; k < e->nout; k++) {
        CUresult r = kevo__cu.cuMemAlloc(&e->dev[k], e->bytes[k]);
        if (r == CUDA_ERROR_OUT_OF_MEMORY) {
            e->dev[k] = 0;
            *fits = false;
            return KEVO_OK;
        }
        kevo_status rc = kevo__cu_check(r, "cuMemAlloc", err);
        if (rc == KEVO_OK)
            rc = kevo__cu_check(kevo__cu.cuMemcpyDtoD(
                                    e->dev[k], s->want[e->arg[k]], e->bytes[k]),
                                "cuMemcpyDtoD", err);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}

static kevo_status put_host(const kevo__shape *s, ref_entry *e, kevo_error *err)
{
    for (size_t k = 0; k < e->nout; k++) {
        e->host[k] = malloc(e->bytes[k]);
        if (!e->host[k])
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        kevo_status rc = kevo__cu_check(
            kevo__cu.cuMemcpyDtoH(e->host[k], s->want[e->arg[k]], e->bytes[k]),
            "cuMemcpyDtoH", err);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}

kevo_status kevo__refcache_put(kevo__gpu *g, const char *key,
                               const kevo__shape *s, kevo_error *err)
{
    kevo__refcache *c = g->refs;
    ref_entry e = {0};
    kevo_status rc = KEVO_OK;
    if (!c)
        return KEVO_OK;
    for (size_t i = 0; i < c->n; i++) {
        if (strcmp(c->e[i].key, key) == 0) {
            drop(c, i);
            break;
        }
    }
    for (size_t a = 0; a < s->nargs; a++) {
        if (kevo__is_output(&s->info[a])) {
            e.total += s->bytes[a];
            e.nout++;
        }
    }
    if (e.total > c->dev_cap && e.total > c->host_cap)
        return KEVO_OK;
    if (c->n == c->cap) {
        size_t ncap = c->cap ? 2 * c->cap : 16;
        ref_entry *ne = realloc(c->e, ncap * sizeof(*ne));
        if (!ne)
            return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        c->e = ne;
        c->cap = ncap;
    }
    e.key = kevo__strdup(key);
    e.arg = calloc(e.nout + 1, sizeof(*e.arg));
    e.bytes = calloc(e.nout + 1, sizeof(*e.bytes));
    e.dev = calloc(e.nout + 1, sizeof(*e.dev));
    e.host = calloc(e.nout + 1, sizeof(*e.host));
    e.base_max = calloc(e.nout + 1, sizeof(*e.base_max));
    e.base_mean = calloc(e.nout + 1, sizeof(*e.base_mean));
    if (!e.key || !e.arg || !e.bytes || !e.dev || !e.host || !e.base_max ||
        !e.base_mean) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t a = 0, k = 0; a < s->nargs; a++) {
        if (kevo__is_output(&s->info[a])) {
            e.arg[k] = a;
            e.base_max[k] = s->base_max[a];
            e.base_mean[k] = s->base_mean[a];
            e.bytes[k++] = s->bytes[a];
        }
    }
    bool stored = false;
    if (e.total <= c->dev_cap) {
        long i;
        while (c->dev_used + e.total > c->dev_cap && (i = oldest(c, true)) >= 0)
            drop(c, (size_t)i);
        rc = put_device(s, &e, &stored, err);
        if (rc != KEVO_OK)
            goto fail;
        e.on_device = stored;
        if (stored)
            c->dev_used += e.total;
    }
    if (!stored && e.total <= c->host_cap) {
        for (size_t k = 0; k < e.nout; k++) {
            if (e.dev[k])
                kevo__cu.cuMemFree(e.dev[k]);
            e.dev[k] = 0;
        }
        long i;
        while (c->host_used + e.total > c->host_cap &&
               (i = oldest(c, false)) >= 0)
            drop(c, (size_t)i);
        rc = put_host(s, &e, err);
        if (rc != KEVO_OK)
            goto fail;
        stored = true;
        c->host_used += e.total;
    }
    if (!stored)
        goto fail;
    e.used = ++c->clock;
    c->e[c->n++] = e;
    return KEVO_OK;
fail:
    entry_clear(&e);
    return rc;
}

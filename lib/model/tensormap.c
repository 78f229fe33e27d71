/*
 * tensormap.c: a tensormap line's cuTensorMapEncodeTiled arguments at a
 * shape, and their rules (see tensormap.h). The rules are those of the
 * driver's documentation of cuTensorMapEncodeTiled, checked here so that a
 * map that breaks one is an error naming its line and the rule, before any
 * GPU work, rather than CUDA_ERROR_INVALID_VALUE from the worker; and one
 * of kevo's own: the map lies within its buffer.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "launch_args.h"
#include "task_private.h"
#include "tensormap.h"

int kevo__tmap_data_type(kevo_dtype type)
{
    switch (type) {
    case KEVO_DTYPE_F32: return KEVO__TMAP_FLOAT32;
    case KEVO_DTYPE_F64: return KEVO__TMAP_FLOAT64;
    case KEVO_DTYPE_F16: return KEVO__TMAP_FLOAT16;
    case KEVO_DTYPE_BF16: return KEVO__TMAP_BFLOAT16;
    /* TMA copies bits: a signed type of a width without its own enum
     * value travels as the unsigned one */
    case KEVO_DTYPE_I8:
    case KEVO_DTYPE_U8: return KEVO__TMAP_UINT8;
    case KEVO_DTYPE_I16:
    case KEVO_DTYPE_U16: return KEVO__TMAP_UINT16;
    case KEVO_DTYPE_I32: return KEVO__TMAP_INT32;
    case KEVO_DTYPE_U32: return KEVO__TMAP_UINT32;
    case KEVO_DTYPE_I64: return KEVO__TMAP_INT64;
    case KEVO_DTYPE_U64: return KEVO__TMAP_UINT64;
    }
    return KEVO__TMAP_UINT8;
}

long kevo__tensormap_find(const kevo_candidate *cand, const char *name)
{
    for (size_t k = 0; k < cand->blocks.ntensormaps; k++) {
        if (strcmp(cand->blocks.tensormaps[k].name, name) == 0)
            return (long)k;
    }
    return -1;
}

static kevo_status fail(const kevo_candidate *cand, const kevo_tensormap *m,
                        kevo_status code, kevo_error *err, const char *fmt, ...)
    KEVO_PRINTF(5, 6);

/* "<place>tensormap 'NAME': <message>" at the map's line. */
static kevo_status fail(const kevo_candidate *cand, const kevo_tensormap *m,
                        kevo_status code, kevo_error *err, const char *fmt, ...)
{
    char msg[KEVO_ERROR_TEXT_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return kevo__launch_error(cand, m->line, code, err, "tensormap '%s': %s",
                              m->name, msg);
}

kevo_status kevo__tensormap_buffer(const kevo_task *task,
                                   const kevo_candidate *cand, size_t m,
                                   bool *scratch, size_t *index,
                                   kevo_error *err)
{
    const kevo_tensormap *t = &cand->blocks.tensormaps[m];
    const kevo_blocks *b = &cand->blocks;
    kevo_dtype type;
    ptrdiff_t a = kevo__task_find_arg(task, t->buffer);
    if (a >= 0) {
        const kevo_task_arg *arg = &task->args[a];
        if (arg->role == KEVO_ROLE_SCALAR)
            return fail(cand, t, KEVO_EINVALID, err,
                        "'%s' is a scalar of the task: a tensor map describes "
                        "a buffer (a task buffer or a scratch buffer)",
                        t->buffer);
        *scratch = false;
        *index = (size_t)a;
        type = arg->type;
    } else {
        size_t s = 0;
        while (s < b->nscratch && strcmp(b->scratch[s].name, t->buffer) != 0)
            s++;
        if (s == b->nscratch)
            return fail(cand, t, KEVO_EINVALID, err,
                        "'%s' names no task buffer or scratch buffer",
                        t->buffer);
        *scratch = true;
        *index = s;
        type = b->scratch[s].type;
    }
    if (type != t->type)
        return fail(cand, t, KEVO_EINVALID, err,
                    "its element type is %s and buffer '%s' holds %s: they "
                    "must be the same",
                    kevo_dtype_name(t->type), t->buffer, kevo_dtype_name(type));
    return KEVO_OK;
}

/* Evaluates e (absent: dflt) into *v, an error naming what. */
static kevo_status eval(const kevo_candidate *cand, const kevo_tensormap *m,
                        const kevo_expr *e, int64_t dflt, const kevo_vars *vars,
                        const char *what, int64_t *v, kevo_error *err)
{
    if (!e) {
        *v = dflt;
        return KEVO_OK;
    }
    kevo_error inner = KEVO__ERROR_INIT;
    kevo_status rc = kevo_expr_eval(e, vars, v, &inner);
    if (rc != KEVO_OK)
        return fail(cand, m, rc, err, "%s '%s': %s", what, kevo_expr_text(e),
                    inner.text);
    return KEVO_OK;
}

/* Item k of a list clause in [lo, hi], into *v. */
static kevo_status eval_item(const kevo_candidate *cand,
                             const kevo_tensormap *m, kevo_expr *const *list,
                             size_t k, int64_t dflt, int64_t lo, int64_t hi,
                             const char *clause, const char *rule,
                             const kevo_vars *vars, int64_t *v, kevo_error *err)
{
    char what[64];
    snprintf(what, sizeof what, "%s[%zu]", clause, k);
    kevo_status rc = eval(cand, m, list[k], dflt, vars, what, v, err);
    if (rc == KEVO_OK && (*v < lo || *v > hi))
        return fail(cand, m, KEVO_EINVALID, err, "%s is %" PRId64 " (%s): %s",
                    what, *v, list[k] ? kevo_expr_text(list[k]) : "default",
                    rule);
    return rc;
}

static int enum_of(int v, const int *values, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (values[k] == v)
            return (int)k;
    }
    return 0;
}

/* The enum values of the keyword clauses. */
static void set_modes(const kevo_tensormap *m, kevo__tmap_args *a)
{
    static const int swizzles[] = {0, 32, 64, 128}, interleaves[] = {0, 16, 32},
                     l2s[] = {0, 64, 128, 256};
    a->swizzle = enum_of(m->swizzle, swizzles, KEVO_ARRAY_SIZE(swizzles));
    a->interleave =
        enum_of(m->interleave, interleaves, KEVO_ARRAY_SIZE(interleaves));
    a->l2 = enum_of(m->l2, l2s, KEVO_ARRAY_SIZE(l2s));
    a->oob =
        m->oob_nan ? KEVO__TMAP_OOB_NAN_REQUEST_ZERO_FMA : KEVO__TMAP_OOB_NONE;
    a->data_type = kevo__tmap_data_type(m->type);
    a->rank = (uint32_t)m->rank;
}

/* The buffer's element count at vars. */
static kevo_status buffer_count(const kevo_task *task,
                                const kevo_candidate *cand,
                                const kevo_tensormap *m, kevo__tmap_args *a,
                                const kevo_vars *vars, kevo_error *err)
{
    int64_t count = 0;
    const kevo_expr *e = a->scratch ? cand->blocks.scratch[a->buffer].count
                                    : task->args[a->buffer].count_expr;
    kevo_status rc =
        eval(cand, m, e, 0, vars, "the count of its buffer", &count, err);
    if (rc == KEVO_OK && count <= 0)
        return fail(cand, m, KEVO_EINVALID, err,
                    "buffer '%s' has %" PRId64 " elements", m->buffer, count);
    a->buffer_count = (uint64_t)count;
    return rc;
}

/* The dims, strides, box and element strides, each within its limits. */
static kevo_status eval_shape(const kevo_candidate *cand,
                              const kevo_tensormap *m, kevo__tmap_args *a,
                              const kevo_vars *vars, kevo_error *err)
{
    uint64_t es = kevo_dtype_size(m->type);
    uint64_t stride_align = m->interleave == 32 ? 32 : 16;
    kevo_status rc = KEVO_OK;
    for (size_t k = 0; k < m->rank && rc == KEVO_OK; k++) {
        int64_t v = 0;
        rc = eval_item(cand, m, m->dims, k, 1, 1, INT64_C(1) << 32, "dims",
                       "each dimension is 1 to 2^32 elements "
                       "(cuTensorMapEncodeTiled)",
                       vars, &v, err);
        a->dims[k] = (uint64_t)v;
        if (rc == KEVO_OK)
            rc = eval_item(cand, m, m->box, k, 1, 1, 256, "box",
                           "each box size is 1 to 256 elements "
                           "(cuTensorMapEncodeTiled)",
                           vars, &v, err);
        a->box[k] = (uint32_t)v;
        if (rc == KEVO_OK)
            rc =
                eval_item(cand, m, m->elemstrides, k, 1, 1, 8, "elementstrides",
                          "each element stride is 1 to 8 "
                          "(cuTensorMapEncodeTiled)",
                          vars, &v, err);
        a->elemstrides[k] = (uint32_t)v;
    }
    /* densely packed unless strides() says otherwise */
    uint64_t dense = es;
    for (size_t k = 1; k < m->rank && rc == KEVO_OK; k++) {
        if (__builtin_mul_overflow(dense, a->dims[k - 1], &dense))
            dense = UINT64_MAX;
        int64_t v = 0;
        char rule[160];
        snprintf(rule, sizeof rule,
                 "a stride is a multiple of %" PRIu64 " bytes below 2^40 "
                 "(cuTensorMapEncodeTiled)",
                 stride_align);
        rc = eval_item(cand, m, m->strides, k - 1,
                       dense > INT64_MAX ? INT64_MAX : (int64_t)dense, 0,
                       (INT64_C(1) << 40) - 1,
                       m->strides[0] ? "strides" : "the dense stride", rule,
                       vars, &v, err);
        if (rc == KEVO_OK && (uint64_t)v % stride_align != 0)
            rc = fail(cand, m, KEVO_EINVALID, err,
                      "%s[%zu] is %" PRId64 " bytes (%s): %s",
                      m->strides[0] ? "strides" : "the dense stride", k - 1, v,
                      m->strides[0] ? kevo_expr_text(m->strides[k - 1])
                                    : "dims times the element size",
                      rule);
        if (rc == KEVO_OK && v == 0)
            rc = fail(cand, m, KEVO_EINVALID, err,
                      "strides[%zu] is 0 bytes: %s", k - 1, rule);
        a->strides[k - 1] = (uint64_t)v;
    }
    return rc;
}

/* The rules between the items: the box's inner extent, the address, the
 * map within its buffer. */
static kevo_status check_fit(const kevo_candidate *cand,
                             const kevo_tensormap *m, const kevo__tmap_args *a,
                             kevo_error *err)
{
    uint64_t es = kevo_dtype_size(m->type);
    uint64_t inner = (uint64_t)a->box[0] * es;
    if (m->interleave == 0 && inner % 16 != 0)
        return fail(cand, m, KEVO_EINVALID, err,
                    "box[0] is %" PRIu32 " elements of %" PRIu64
                    " bytes, %" PRIu64
                    " bytes: without interleave the box's inner extent is a "
                    "multiple of 16 bytes (cuTensorMapEncodeTiled)",
                    a->box[0], es, inner);
    if (m->interleave == 0 && m->swizzle != 0 && inner > (uint64_t)m->swizzle)
        return fail(cand, m, KEVO_EINVALID, err,
                    "box[0] is %" PRIu32 " elements, %" PRIu64
                    " bytes: with swizzle(%d) the box's inner extent is at "
                    "most %d bytes (cuTensorMapEncodeTiled)",
                    a->box[0], inner, m->swizzle, m->swizzle);
    uint64_t align = m->interleave == 32 ? 32 : 16;
    if (a->offset_bytes % align != 0)
        return fail(cand, m, KEVO_EINVALID, err,
                    "offset is %" PRIu64 " elements, %" PRIu64
                    " bytes: the map's global address must be %" PRIu64
                    "-byte aligned, so offset * %" PRIu64
                    " must be a multiple of %" PRIu64
                    " (cuTensorMapEncodeTiled)",
                    a->offset_bytes / es, a->offset_bytes, align, es, align);
    /* the last byte the map reaches, past its start */
    uint64_t end = (a->dims[0] - 1) * es + es, step;
    bool over = false;
    for (size_t k = 1; k < m->rank; k++) {
        over |=
            __builtin_mul_overflow(a->dims[k] - 1, a->strides[k - 1], &step) ||
            __builtin_add_overflow(end, step, &end);
    }
    uint64_t size;
    over |= __builtin_add_overflow(end, a->offset_bytes, &end) ||
            __builtin_mul_overflow(a->buffer_count, es, &size);
    if (over || end > size)
        return fail(cand, m, KEVO_EINVALID, err,
                    "the map reaches element %s%" PRIu64
                    " of buffer '%s', which has %" PRIu64
                    ": offset plus the extent of dims and strides must lie "
                    "within the buffer",
                    over ? "beyond " : "", over ? UINT64_MAX : end / es,
                    m->buffer, a->buffer_count);
    return KEVO_OK;
}

kevo_status kevo__tensormap_args(const kevo_task *task,
                                 const kevo_candidate *cand, size_t m,
                                 const kevo_vars *env, kevo__tmap_args *out,
                                 kevo_error *err)
{
    if (m >= cand->blocks.ntensormaps)
        return kevo__error_set(err, KEVO_EINVAL, "no tensormap %zu", m);
    const kevo_tensormap *t = &cand->blocks.tensormaps[m];
    kevo__tmap_args a;
    memset(&a, 0, sizeof a);
    set_modes(t, &a);
    kevo_status rc =
        kevo__tensormap_buffer(task, cand, m, &a.scratch, &a.buffer, err);
    if (rc != KEVO_OK)
        return rc;
    kevo_vars *vars = kevo__env_with_params(env, cand);
    if (!vars)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    int64_t offset = 0;
    rc = buffer_count(task, cand, t, &a, vars, err);
    if (rc == KEVO_OK)
        rc = eval(cand, t, t->offset, 0, vars, "offset", &offset, err);
    if (rc == KEVO_OK && offset < 0)
        rc = fail(cand, t, KEVO_EINVALID, err,
                  "offset is %" PRId64 " elements: it must not be negative",
                  offset);
    if (rc == KEVO_OK &&
        __builtin_mul_overflow((uint64_t)offset, kevo_dtype_size(t->type),
                               &a.offset_bytes))
        rc = fail(cand, t, KEVO_EINVALID, err,
                  "offset %" PRId64 " is beyond any buffer", offset);
    if (rc == KEVO_OK)
        rc = eval_shape(cand, t, &a, vars, err);
    if (rc == KEVO_OK)
        rc = check_fit(cand, t, &a, err);
    kevo_vars_free(vars);
    if (rc == KEVO_OK)
        *out = a;
    return rc;
}

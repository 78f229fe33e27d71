/*
 * task.c: the task model: building a task and reading it back (its dims,
 * kernels, cost model, shapes, descriptors and limits). A task's arguments
 * are in task_args.c, fitting candidates to a task in task_candidate.c.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidate_private.h"
#include "descriptor.h"
#include "devprops.h"
#include "task_private.h"

/* ---- small shared helpers ------------------------------------------------ */

ptrdiff_t kevo__task_find_arg(const kevo_task *task, const char *name)
{
    for (size_t i = 0; i < task->nargs; i++) {
        if (strcmp(task->args[i].name, name) == 0)
            return (ptrdiff_t)i;
    }
    return -1;
}

ptrdiff_t kevo__task_find_dim(const kevo_task *task, const char *name)
{
    for (size_t i = 0; i < task->ndims; i++) {
        if (strcmp(task->dims[i], name) == 0)
            return (ptrdiff_t)i;
    }
    return -1;
}

bool kevo__task_role_is_output(kevo_role role)
{
    return role == KEVO_ROLE_OUT || role == KEVO_ROLE_INOUT;
}

const char *kevo__role_name(kevo_role role)
{
    switch (role) {
    case KEVO_ROLE_IN: return "in";
    case KEVO_ROLE_OUT: return "out";
    case KEVO_ROLE_INOUT: return "inout";
    case KEVO_ROLE_SCALAR: return "scalar";
    }
    return "?";
}

const char *kevo__dist_name(kevo_dist dist)
{
    switch (dist) {
    case KEVO_DIST_DEFAULT: break;
    case KEVO_DIST_NORMAL: return "normal";
    case KEVO_DIST_UNIFORM: return "uniform";
    case KEVO_DIST_RANDINT: return "randint";
    case KEVO_DIST_CONSTANT: return "constant";
    case KEVO_DIST_NIBBLES: return "nibbles";
    }
    return NULL;
}

bool kevo__dtype_int_range(kevo_dtype type, double *lo, double *hi)
{
    switch (type) {
    case KEVO_DTYPE_I8: *lo = -128.0, *hi = 127.0; return true;
    case KEVO_DTYPE_U8: *lo = 0.0, *hi = 255.0; return true;
    case KEVO_DTYPE_I16: *lo = -32768.0, *hi = 32767.0; return true;
    case KEVO_DTYPE_U16: *lo = 0.0, *hi = 65535.0; return true;
    case KEVO_DTYPE_I32: *lo = -2147483648.0, *hi = 2147483647.0; return true;
    case KEVO_DTYPE_U32: *lo = 0.0, *hi = 4294967295.0; return true;
    case KEVO_DTYPE_I64:
        *lo = -9223372036854775808.0, *hi = 9223372036854775807.0;
        return true;
    case KEVO_DTYPE_U64: *lo = 0.0, *hi = 18446744073709551615.0; return true;
    default: return false;
    }
}

double kevo__dtype_float_max(kevo_dtype type)
{
    switch (type) {
    case KEVO_DTYPE_F32: return FLT_MAX;
    case KEVO_DTYPE_F64: return DBL_MAX;
    case KEVO_DTYPE_F16: return 65504.0;
    case KEVO_DTYPE_BF16: return 3.3895313892515355e38;
    default: return 0.0;
    }
}

/* True when s is valid UTF-8 (JSON holds nothing else). */
static bool utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char c = *p;
        size_t n;
        uint32_t cp;
        if (c < 0x80) {
            p++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf)
            n = 2, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef)
            n = 3, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4)
            n = 4, cp = c & 0x07;
        else
            return false;
        for (size_t k = 1; k < n; k++) {
            if ((p[k] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (p[k] & 0x3f);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        p += n;
    }
    return true;
}

void kevo__task_shape_text(const kevo_task *task, kevo_shape_set set, size_t i,
                           char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    const int64_t *v = kevo_task_shape(task, set, i);
    if (!v)
        return;
    for (size_t d = 0; d < task->ndims && n < size; d++) {
        int w = snprintf(buf + n, size - n, "%s%s=%lld", d ? ", " : "",
                         task->dims[d], (long long)v[d]);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

/* ---- versions --------------------------------------------------------------
 */

void kevo__task_touch(kevo_task *task)
{
    static atomic_uint_least64_t stamps = 0;
    task->stamp =
        atomic_fetch_add_explicit(&stamps, 1, memory_order_relaxed) + 1;
}

void kevo__task_version_of(const kevo_task *task, kevo__task_version *v)
{
    v->stamp = task->stamp;
    v->nparams = kevo_paramspace_count(task->params);
    v->nconstraints = kevo_paramspace_constraint_count(task->params);
}

bool kevo__task_version_equal(const kevo__task_version *a,
                              const kevo__task_version *b)
{
    return a->stamp == b->stamp && a->nparams == b->nparams &&
           a->nconstraints == b->nconstraints;
}

kevo_status kevo__task_set_origin(kevo_task *task, const char *origin)
{
    char *copy = NULL;
    if (origin && !(copy = kevo__strdup(origin)))
        return KEVO_ENOMEM;
    free(task->origin);
    task->origin = copy;
    task->from_json = true;
    kevo__task_touch(task);
    return KEVO_OK;
}

kevo_status kevo__task_parse_expr(const char *text, const char *what,
                                  kevo_expr **out, kevo_error *err)
{
    kevo_error e = KEVO__ERROR_INIT;
    kevo_status rc = kevo_expr_parse(text, out, &e);
    if (rc != KEVO_OK)
        return kevo__error_wrap(err, &e, "%s", what);
    return KEVO_OK;
}

/* ---- descriptors --------------------------------------------------------- */

static void desc_clear(kevo_task_desc *d)
{
    free(d->d.name);
    free(d->d.edges);
    memset(d, 0, sizeof *d);
}

/* Fills *d from name with nbins equal bins over [lo, hi), or with the n
 * edges, or (nbins 0 and no edges) with the descriptor's default bins. */
static kevo_status desc_fill(kevo_task_desc *d, const kevo_descriptor_def *def,
                             size_t nbins, double lo, double hi,
                             const double *edges, size_t n)
{
    memset(d, 0, sizeof *d);
    if (!edges && nbins == 0) {
        d->by_name = true;
        nbins = def->nbins;
        lo = def->lo;
        hi = def->hi;
        edges = def->nedges ? def->edges : NULL;
        n = def->nedges;
    }
    if (!(d->d.name = kevo__strdup(def->name)))
        return KEVO_ENOMEM;
    if (edges) {
        if (!(d->d.edges = malloc(n * sizeof *edges))) {
            desc_clear(d);
            return KEVO_ENOMEM;
        }
        memcpy(d->d.edges, edges, n * sizeof *edges);
        d->d.nedges = n;
    } else {
        d->d.nbins = nbins;
        d->d.lo = lo;
        d->d.hi = hi;
    }
    return KEVO_OK;
}

const kevo_task_descriptor *kevo__task_descriptor(const kevo_task *task,
                                                  size_t i)
{
    if (!task)
        return NULL;
    if (task->ndescriptors == 0)
        return i < KEVO_ARRAY_SIZE(task->defaults) ? &task->defaults[i].d
                                                   : NULL;
    return i < task->ndescriptors ? &task->descriptors[i].d : NULL;
}

/* ---- life cycle ---------------------------------------------------------- */

static bool task_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > KEVO__TASK_NAME_MAX || name[0] == '.' || name[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
            return false;
    }
    return true;
}

kevo_status kevo_task_new(const char *name, kevo_task **out, kevo_error *err)
{
    if (!out)
        return kevo__error_set(err, KEVO_EINVAL, "kevo_task_new: out is NULL");
    *out = NULL;
    if (!name || !task_name_ok(name))
        return kevo__error_set(
            err, KEVO_EINVAL,
            "task name '%s' is not valid: use 1 to %d letters, digits, '_', "
            "'-' and '.', starting with a letter, a digit or '_'",
            name ? name : "(null)", KEVO__TASK_NAME_MAX);
    kevo_task *t = calloc(1, sizeof *t);
    if (!t)
        goto nomem;
    kevo__task_touch(t);
    t->memory_limit = KEVO_TASK_MEMORY_LIMIT_DEFAULT;
    t->input_seed = 1;
    t->peak = KEVO_PEAK_FP32;
    if (!(t->name = kevo__strdup(name)) || !(t->params = kevo_paramspace_new()))
        goto nomem;
    static const char *const defaults[] = {"memory", "block_size"};
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(defaults); i++) {
        const kevo_descriptor_def *def = kevo__descriptor_find(defaults[i]);
        if (!def ||
            desc_fill(&t->defaults[i], def, 0, 0, 0, NULL, 0) != KEVO_OK)
            goto nomem;
    }
    *out = t;
    return KEVO_OK;
nomem:
    kevo_task_free(t);
    return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
}

void kevo_task_free(kevo_task *task)
{
    if (!task)
        return;
    free(task->name);
    free(task->description);
    free(task->origin);
    for (size_t i = 0; i < task->ndims; i++)
        free(task->dims[i]);
    free(task->dims);
    for (size_t i = 0; i < task->nargs; i++)
        kevo__task_arg_clear(&task->args[i]);
    free(task->args);
    kevo_candidate_free(task->reference);
    kevo_candidate_free(task->seed);
    kevo_candidate_free(task->baseline);
    kevo_expr_free(task->bytes);
    kevo_expr_free(task->flops);
    free(task->shapes[0].values);
    free(task->shapes[1].values);
    kevo_paramspace_free(task->params);
    for (size_t i = 0; i < task->ndescriptors; i++)
        desc_clear(&task->descriptors[i]);
    free(task->descriptors);
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(task->defaults); i++)
        desc_clear(&task->defaults[i]);
    free(task);
}

/* ---- setters ------------------------------------------------------------- */

kevo_status kevo_task_set_description(kevo_task *task, const char *text,
                                      kevo_error *err)
{
    KEVO__CHECK_TASK(task, err, "kevo_task_set_description");
    if (!text)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_task_set_description: text is NULL");
    if (!utf8_valid(text))
        return kevo__error_set(err, KEVO_EINVAL,
                               "description: the text is not valid UTF-8");
    char *copy = kevo__strdup(text);
    if (!copy)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    free(task->description);
    task->description = copy;
    return KEVO_OK;
}

kevo_status kevo_task_add_dim(kevo_task *task, const char *name,
                              kevo_error *err)
{
    KEVO__CHECK_TASK(task, err, "kevo_task_add_dim");
    if (!name || !kevo__is_identifier(name))
        return kevo__error_set(
            err, KEVO_EINVAL,
            "dim name '%s' is not an identifier "
            "([A-Za-z_][A-Za-z0-9_]*, at most %d characters)",
            name ? name : "(null)", KEVO__IDENT_MAX);
    if (kevo__devprop_is_name(name))
        return kevo__error_set(
            err, KEVO_EINVAL,
            "dim name '%s' is the name of a device property; "
            "choose another name",
            name);
    if (kevo__task_find_dim(task, name) >= 0)
        return kevo__error_set(err, KEVO_EEXIST, "dim '%s' is declared twice",
                               name);
    if (task->shapes[0].count || task->shapes[1].count)
        return kevo__error_set(err, KEVO_ESTATE,
                               "dim '%s' added after shapes: add every dim "
                               "before the first shape",
                               name);
    if (task->ndims >= KEVO__TASK_DIMS_MAX)
        return kevo__error_set(err, KEVO_ELIMIT, "too many dims: at most %d",
                               KEVO__TASK_DIMS_MAX);
    char *copy = kevo__strdup(name);
    char **dims =
        copy ? realloc(task->dims, (task->ndims + 1) * sizeof *dims) : NULL;
    if (!dims) {
        free(copy);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    dims[task->ndims++] = copy;
    task->dims = dims;
    return KEVO_OK;
}

kevo_status kevo_task_set_cost(kevo_task *task, const char *bytes,
                               const char *flops, kevo_peak peak,
                               kevo_error *err)
{
    KEVO__CHECK_TASK(task, err, "kevo_task_set_cost");
    if (!bytes)
        return kevo__error_set(err, KEVO_EINVAL,
                               "cost: the bytes expression is required");
    if ((unsigned)peak > (unsigned)KEVO_PEAK_FP8)
        return kevo__error_set(err, KEVO_EINVAL,
                               "cost: unknown peak %d (known: fp32, fp64, "
                               "tf32, fp16, bf16, fp8)",
                               (int)peak);
    kevo_expr *b = NULL, *f = NULL;
    kevo_status rc = kevo__task_parse_expr(bytes, "cost bytes", &b, err);
    if (rc == KEVO_OK)
        rc = kevo__task_parse_expr(flops ? flops : "0", "cost flops", &f, err);
    if (rc != KEVO_OK) {
        kevo_expr_free(b);
        return rc;
    }
    kevo_expr_free(task->bytes);
    kevo_expr_free(task->flops);
    task->bytes = b;
    task->flops = f;
    task->peak = peak;
    task->has_cost = true;
    return KEVO_OK;
}

/* Parses a reference or seed and gives it the task's parameters known so
 * far; the checks against the arguments wait for validation. */
static kevo_status set_kernel(kevo_task *task, kevo_candidate **slot,
                              const char *source, const char *origin,
                              const char *fn, kevo_error *err)
{
    if (!source)
        return kevo__error_set(err, KEVO_EINVAL, "%s: source is NULL", fn);
    kevo_candidate *c = NULL;
    kevo_status rc = kevo_candidate_new(source, origin, &c, err);
    if (rc != KEVO_OK)
        return rc;
    rc = kevo__candidate_merge_params(
        c, task->params, (const char *const *)task->dims, task->ndims, err);
    if (rc != KEVO_OK) {
        kevo_candidate_free(c);
        return rc;
    }
    kevo_candidate_free(*slot);
    *slot = c;
    return KEVO_OK;
}

kevo_status kevo_task_set_reference(kevo_task *task, const char *source,
                                    const char *origin, kevo_error *err)
{
    KEVO__CHECK_TASK(task, err, "kevo_task_set_reference");
    return set_kernel(task, &task->reference, source, origin,
                      "kevo_task_set_reference", err);
}

kevo_status kevo_task_set_seed(kevo_task *task, const char *source,
                               const char *origin, kevo_error *err)
{
    KEVO__CHECK_TASK(task, err, "kevo_task_set_seed");
    return set_kernel(task, &task->seed, source, origin, "kevo_task_set_seed",
                      err);
}

kevo_status kevo_task_set_baseline(kevo_task *task, const char *source,
                                   const char *origin, kevo_error *err)
{
    KEVO__CHECK_TASK(task, err, "kevo_task_set_baseline");
    return set_kernel(task, &task->baseline, source, origin,
                      "kevo_task_set_baseline", err);
}

kevo_status kevo_task_add_shape(kevo_task *task, kevo_shape_set set,
                                const int64_t *values, size_t n,
                                kevo_error *err)
{
    KEVO__CHECK_TASK(task, err, "kevo_task_add_shape");
    if (set != KEVO_SHAPES_TRAIN && set != KEVO_SHAPES_HELD_OUT)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_task_add_shape: unknown shape set %d",
                               (int)set);
    if (task->ndims == 0)
        return kevo__error_set(err, KEVO_ESTATE,
                               "a shape needs dims: add them first with "
                               "kevo_task_add_dim");
    if (n != task->ndims || !values) {
        char dims[512] = "";
        size_t len = 0;
        for (size_t d = 0; d < task->ndims && len < sizeof dims; d++)
            len += (size_t)snprintf(dims + len, sizeof dims - len, "%s%s",
                                    d ? ", " : "", task->dims[d]);
        return kevo__error_set(err, KEVO_EINVAL,
                               "a shape needs %zu values, one per dim (%s), "
                               "got %zu",
                               task->ndims, dims, values ? n : 0);
    }
    for (size_t d = 0; d < n; d++) {
        if (values[d] <= 0)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "shape value %lld of dim '%s' is not "
                                   "positive: dims must be at least 1",
                                   (long long)values[d], task->dims[d]);
    }
    kevo_task_shapes *s = &task->shapes[set];
    if (s->count >= KEVO__TASK_SHAPES_MAX)
        return kevo__error_set(err, KEVO_ELIMIT,
                               "too many shapes: at most %d in a set",
                               KEVO__TASK_SHAPES_MAX);
    int64_t *v = realloc(s->values, (s->count + 1) * n * sizeof *v);
    if (!v)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    memcpy(v + s->count * n, values, n * sizeof *v);
    s->values = v;
    s->count++;
    return KEVO_OK;
}

static kevo_status desc_add(kevo_task *task, const char *name, size_t nbins,
                            double lo, double hi, const double *edges, size_t n,
                            kevo_error *err)
{
    const kevo_descriptor_def *def = name ? kevo__descriptor_find(name) : NULL;
    if (!def)
        return kevo__error_set(
            err, KEVO_EINVAL, "unknown descriptor '%s' (known: %s)",
            name ? name : "(null)", kevo__descriptor_names());
    for (size_t i = 0; i < task->ndescriptors; i++) {
        if (strcmp(task->descriptors[i].d.name, name) == 0)
            return kevo__error_set(err, KEVO_EEXIST,
                                   "descriptor '%s' is named twice", name);
    }
    if (task->ndescriptors >= KEVO__TASK_DESCRIPTORS_MAX)
        return kevo__error_set(err, KEVO_ELIMIT,
                               "too many descriptors: at most %d",
                               KEVO__TASK_DESCRIPTORS_MAX);
    kevo_task_desc *d =
        realloc(task->descriptors, (task->ndescriptors + 1) * sizeof *d);
    if (!d)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    task->descriptors = d;
    if (desc_fill(&d[task->ndescriptors], def, nbins, lo, hi, edges, n) !=
        KEVO_OK)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    task->ndescriptors++;
    return KEVO_OK;
}

kevo_status kevo_task_add_descriptor(kevo_task *task, const char *name,
                                     size_t nbins, double lo, double hi,
                                     kevo_error *err)
{
    KEVO__CHECK_TASK(task, err, "kevo_task_add_descriptor");
    if (nbins > KEVO__TASK_BINS_MAX ||
        (nbins > 0 && (!isfinite(lo) || !isfinite(hi) || !(lo < hi))))
        return kevo__error_set(err, KEVO_EINVAL,
                               "descriptor '%s': bins must be 1 to %d over a "
                               "range lo < hi, both finite (got %zu bins over "
                               "[%g, %g))",
                               name ? name : "(null)", KEVO__TASK_BINS_MAX,
                               nbins, lo, hi);
    return desc_add(task, name, nbins, lo, hi, NULL, 0, err);
}

kevo_status kevo_task_add_descriptor_edges(kevo_task *task, const char *name,
                                           const double *edges, size_t n,
                                           kevo_error *err)
{
    KEVO__CHECK_TASK(task, err, "kevo_task_add_descriptor_edges");
    if (!edges || n == 0 || n >= KEVO__TASK_BINS_MAX)
        return kevo__error_set(
            err, KEVO_EINVAL, "descriptor '%s': give 1 to %d edges (got %zu)",
            name ? name : "(null)", KEVO__TASK_BINS_MAX - 1, edges ? n : 0);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(edges[i]) || (i > 0 && !(edges[i - 1] < edges[i])))
            return kevo__error_set(err, KEVO_EINVAL,
                                   "descriptor '%s': edges must be finite and "
                                   "increasing (edge %zu is %g)",
                                   name ? name : "(null)", i, edges[i]);
    }
    return desc_add(task, name, 0, 0, 0, edges, n, err);
}

kevo_status kevo_task_set_memory_limit(kevo_task *task, uint64_t bytes,
                                       kevo_error *err)
{
    KEVO__CHECK_TASK(task, err, "kevo_task_set_memory_limit");
    if (bytes == 0)
        return kevo__error_set(err, KEVO_EINVAL,
                               "memory limit: must be at least 1 byte");
    task->memory_limit = bytes;
    return KEVO_OK;
}

void kevo_task_set_input_seed(kevo_task *task, uint64_t seed)
{
    if (!task)
        return;
    task->input_seed = seed;
    kevo__task_touch(task);
}

kevo_paramspace *kevo_task_params(const kevo_task *task)
{
    return task ? task->params : NULL;
}

/* ---- getters ------------------------------------------------------------- */

const char *kevo_task_name(const kevo_task *task)
{
    return task ? task->name : NULL;
}

const char *kevo_task_description(const kevo_task *task)
{
    return task && task->description ? task->description : "";
}

const char *kevo_task_origin(const kevo_task *task)
{
    return task ? task->origin : NULL;
}

size_t kevo_task_dim_count(const kevo_task *task)
{
    return task ? task->ndims : 0;
}

const char *kevo_task_dim_name(const kevo_task *task, size_t i)
{
    return task && i < task->ndims ? task->dims[i] : NULL;
}

const kevo_candidate *kevo_task_reference(const kevo_task *task)
{
    return task ? task->reference : NULL;
}

const kevo_candidate *kevo_task_seed(const kevo_task *task)
{
    return task ? task->seed : NULL;
}

const kevo_candidate *kevo_task_baseline(const kevo_task *task)
{
    return task ? task->baseline : NULL;
}

size_t kevo_task_shape_count(const kevo_task *task, kevo_shape_set set)
{
    if (!task || (set != KEVO_SHAPES_TRAIN && set != KEVO_SHAPES_HELD_OUT))
        return 0;
    return task->shapes[set].count;
}

const int64_t *kevo_task_shape(const kevo_task *task, kevo_shape_set set,
                               size_t i)
{
    if (i >= kevo_task_shape_count(task, set))
        return NULL;
    return task->shapes[set].values + i * task->ndims;
}

kevo_status kevo_task_shape_vars(const kevo_task *task, kevo_shape_set set,
                                 size_t i, kevo_vars *vars)
{
    const int64_t *v = kevo_task_shape(task, set, i);
    if (!v || !vars)
        return KEVO_EINVAL;
    for (size_t d = 0; d < task->ndims; d++) {
        kevo_status rc = kevo_vars_set(vars, task->dims[d], v[d]);
        if (rc != KEVO_OK)
            return rc;
    }
    return KEVO_OK;
}

kevo_status kevo_task_cost(const kevo_task *task, const kevo_vars *shape,
                           double *bytes, double *flops, kevo_error *err)
{
    if (!task)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_task_cost: task is NULL");
    if (!task->has_cost)
        return kevo__error_set(err, KEVO_ESTATE, "task '%s' has no cost model",
                               task->name);
    int64_t b, f;
    kevo_status rc = kevo_expr_eval(task->bytes, shape, &b, err);
    if (rc == KEVO_OK)
        rc = kevo_expr_eval(task->flops, shape, &f, err);
    if (rc != KEVO_OK)
        return rc;
    if (bytes)
        *bytes = (double)b;
    if (flops)
        *flops = (double)f;
    return KEVO_OK;
}

kevo_peak kevo_task_peak(const kevo_task *task)
{
    return task ? task->peak : KEVO_PEAK_FP32;
}

const char *kevo_peak_name(kevo_peak peak)
{
    switch (peak) {
    case KEVO_PEAK_FP32: return "fp32";
    case KEVO_PEAK_FP64: return "fp64";
    case KEVO_PEAK_TF32: return "tf32";
    case KEVO_PEAK_FP16: return "fp16";
    case KEVO_PEAK_BF16: return "bf16";
    case KEVO_PEAK_FP8: return "fp8";
    }
    return "?";
}

uint64_t kevo_task_memory_limit(const kevo_task *task)
{
    return task ? task->memory_limit : 0;
}

uint64_t kevo_task_input_seed(const kevo_task *task)
{
    return task ? task->input_seed : 0;
}

size_t kevo_task_descriptor_count(const kevo_task *task)
{
    if (!task)
        return 0;
    return task->ndescriptors ? task->ndescriptors
                              : KEVO_ARRAY_SIZE(task->defaults);
}

const char *kevo_task_descriptor_name(const kevo_task *task, size_t i)
{
    const kevo_task_descriptor *d = kevo__task_descriptor(task, i);
    return d ? d->name : NULL;
}

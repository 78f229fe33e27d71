/*
 * gpu-suite: runs every seed of the task suite against its reference on
 * the GPU. For each task of examples/tasks and each training and held-out
 * shape: fresh random inputs drawn on the host per the task, outputs and
 * scratch poisoned with 0xFF bytes (NaN for floats) unless a scratch is
 * declared zero, the reference run and read back, everything poisoned
 * again, the seed run at its default parameters, every element compared
 * with the task's tolerance (for an output under the baseline rule, the
 * largest and the mean error against those of the task's baseline kernel
 * run on the same inputs), the inputs checked unchanged, and the worst
 * error reported. Then the seed at the smallest and the largest value of
 * each parameter on the smallest training shape that allows it.
 *
 * The driver API is reached through worker/cuda_api.c, which opens
 * libcuda.so.1 with dlopen(); where there is no driver or no device the
 * test is skipped (exit 77).
 *
 * Usage: gpu-suite [DIR] (default: the source tree's examples/tasks). The
 * environment variable KEVO_SUITE_SEED fixes the input seed (by default a
 * new one each run, printed); KEVO_SUITE_FULL=1 runs the seed at each
 * extreme value on every shape its constraints allow, not only the
 * smallest training shape (slower: for calibrating tolerances).
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../suite_util.h"
#include "../tap.h"
#include "cuda_api.h"
#include "model/devprops.h"
#include "model/launch_args.h"

/* ---- the driver API ---------------------------------------------------- */

/* The last driver failure, for messages. */
static kevo_error cu_failure = KEVO__ERROR_INIT;

/* Checks a driver call: records a failure in cu_failure and returns false;
 * a failure that spoils the context stops the test. */
static bool cu_ok(CUresult r, const char *what)
{
    if (r == CUDA_SUCCESS)
        return true;
    cu_failure = (kevo_error)KEVO__ERROR_INIT;
    kevo__cu_check(r, what, &cu_failure);
    if (kevo__cu_sticky(r))
        bail_out("%s; the context cannot be used any more", cu_failure.text);
    return false;
}

/* The device properties of dev as expression variables (the nominal ones
 * first, so that any property this test does not read keeps a value). */
static kevo_vars *device_props(CUdevice dev)
{
    kevo_vars *v = kevo_vars_new();
    cu_failure = (kevo_error)KEVO__ERROR_INIT;
    if (!v || kevo__devprops_nominal(v) != KEVO_OK ||
        kevo__cu_device_props(dev, v, &cu_failure) != KEVO_OK) {
        kevo_vars_free(v);
        return NULL;
    }
    return v;
}

/* ---- compiled programs ------------------------------------------------- */

static char arch[32];            /* "sm_90" */
static kevo_vars *devprops;      /* the device's properties */
static uint64_t input_seed_base; /* this run's input seed */
static bool full_sweep;          /* KEVO_SUITE_FULL: extremes everywhere */

typedef struct program {
    const kevo_candidate *cand;
    CUmodule mod;
    CUfunction *fn; /* one per launch */
    size_t nlaunches;
} program;

static void program_free(program *p)
{
    if (p->mod)
        cu_ok(kevo__cu.cuModuleUnload(p->mod), "cuModuleUnload");
    free(p->fn);
    memset(p, 0, sizeof(*p));
}

/* Compiles cand for the device and loads it: one TAP line. */
static bool program_build(program *p, const kevo_candidate *cand,
                          const char *label)
{
    suite_build b;
    bool good = false;
    memset(p, 0, sizeof(*p));
    p->cand = cand;
    if (!suite_compile(cand, arch, true, &b))
        bail_out("out of memory compiling %s", label);
    if (b.status != SUITE_COMPILED) {
        ok(0, "%s compiles for %s", label, arch);
        suite_diag_text(NULL, b.log);
        goto done;
    }
    p->nlaunches = b.nlaunches;
    p->fn = calloc(b.nlaunches + 1, sizeof(*p->fn));
    if (!p->fn)
        bail_out("out of memory");
    if (!cu_ok(kevo__cu.cuModuleLoadData(&p->mod, b.image), "cuModuleLoadData"))
        goto failed;
    for (size_t i = 0; i < b.nlaunches; i++) {
        if (!cu_ok(
                kevo__cu.cuModuleGetFunction(&p->fn[i], p->mod, b.lowered[i]),
                "cuModuleGetFunction"))
            goto failed;
    }
    good = true;
    ok(1, "%s compiles for %s and loads (%.2f s)", label, arch, b.seconds);
    goto done;
failed:
    ok(0, "%s compiles for %s and loads", label, arch);
    diag("%s", cu_failure.text);
done:
    suite_build_free(&b);
    if (!good)
        program_free(p);
    return good;
}

/* ---- one shape's data --------------------------------------------------- */

/* The bytes of one kernel argument (a scalar of any element type, as
 * elem_set() stores it, or a device pointer), aligned for any of them. */
typedef union scalar {
    unsigned char bytes[8];
    CUdeviceptr ptr;
} scalar;

typedef struct shape_data {
    const kevo_task *task;
    kevo_shape_set set;
    size_t shape;
    char text[256]; /* "TASK rows=8192, cols=4096" */
    kevo_vars *env; /* dims and device properties */
    size_t nargs;
    kevo_arg_info *info;
    size_t *bytes;    /* buffers: size in bytes */
    void **host_in;   /* in/inout: the drawn values */
    void **host_ref;  /* out/inout: the reference's result */
    void **host_out;  /* out/inout: the candidate's result */
    void **host_base; /* out/inout: the task's baseline kernel's result */
    CUdeviceptr *dev; /* buffers on the device */
    scalar *value;    /* scalars */
} shape_data;

static bool is_buffer(const kevo_arg_info *a)
{
    return a->role != KEVO_ROLE_SCALAR;
}

static bool is_input(const kevo_arg_info *a)
{
    return a->role == KEVO_ROLE_IN || a->role == KEVO_ROLE_INOUT;
}

static bool is_output(const kevo_arg_info *a)
{
    return a->role == KEVO_ROLE_OUT || a->role == KEVO_ROLE_INOUT;
}

/* IEEE half and bfloat16 from a float (round to nearest even). */
static uint16_t f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static uint16_t f32_to_f16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u, absu = u & 0x7fffffffu;
    if (absu > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u);
    if (absu >= 0x477ff000u) /* rounds to infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (absu < 0x38800000u) { /* subnormal or zero */
        float a;
        memcpy(&a, &absu, 4);
        return (uint16_t)(sign | (uint32_t)lrintf(a * 16777216.0f));
    }
    uint32_t mant = absu & 0x7fffffu, exp = (absu >> 23) - 112;
    uint32_t h = (exp << 10) | (mant >> 13), rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++;
    return (uint16_t)(sign | h);
}

static double bf16_to_double(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static double f16_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double s = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 0)
        return s * ldexp(m, -24);
    if (e == 31)
        return m ? NAN : s * INFINITY;
    return s * ldexp(m + 1024, e - 25);
}

/* Stores x as element i of a buffer of type t. */
static void elem_set(kevo_dtype t, void *p, size_t i, double x)
{
    switch (t) {
    case KEVO_DTYPE_F32: ((float *)p)[i] = (float)x; break;
    case KEVO_DTYPE_F64: ((double *)p)[i] = x; break;
    case KEVO_DTYPE_F16: ((uint16_t *)p)[i] = f32_to_f16((float)x); break;
    case KEVO_DTYPE_BF16: ((uint16_t *)p)[i] = f32_to_bf16((float)x); break;
    case KEVO_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)x; break;
    case KEVO_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)x; break;
    case KEVO_DTYPE_I16: ((int16_t *)p)[i] = (int16_t)x; break;
    case KEVO_DTYPE_U16: ((uint16_t *)p)[i] = (uint16_t)x; break;
    case KEVO_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)x; break;
    case KEVO_DTYPE_U32: ((uint32_t *)p)[i] = (uint32_t)x; break;
    case KEVO_DTYPE_I64: ((int64_t *)p)[i] = (int64_t)x; break;
    case KEVO_DTYPE_U64: ((uint64_t *)p)[i] = (uint64_t)x; break;
    }
}

/* Element i of a buffer of type t, as a double. */
static double elem_get(kevo_dtype t, const void *p, size_t i)
{
    switch (t) {
    case KEVO_DTYPE_F32: return ((const float *)p)[i];
    case KEVO_DTYPE_F64: return ((const double *)p)[i];
    case KEVO_DTYPE_F16: return f16_to_double(((const uint16_t *)p)[i]);
    case KEVO_DTYPE_BF16: return bf16_to_double(((const uint16_t *)p)[i]);
    case KEVO_DTYPE_I8: return ((const int8_t *)p)[i];
    case KEVO_DTYPE_U8: return ((const uint8_t *)p)[i];
    case KEVO_DTYPE_I16: return ((const int16_t *)p)[i];
    case KEVO_DTYPE_U16: return ((const uint16_t *)p)[i];
    case KEVO_DTYPE_I32: return ((const int32_t *)p)[i];
    case KEVO_DTYPE_U32: return ((const uint32_t *)p)[i];
    case KEVO_DTYPE_I64: return (double)((const int64_t *)p)[i];
    case KEVO_DTYPE_U64: return (double)((const uint64_t *)p)[i];
    }
    return NAN;
}

/* One draw from the argument's distribution. */
static double draw(kevo_rng *rng, const kevo_arg_info *a)
{
    bool fl = kevo_dtype_is_float(a->type);
    switch (a->dist) {
    case KEVO_DIST_DEFAULT:
        return fl ? kevo_rng_gaussian(rng, 1.0)
                  : (double)kevo_rng_uniform_int(rng, 128);
    case KEVO_DIST_NORMAL: return a->dist_a + kevo_rng_gaussian(rng, a->dist_b);
    case KEVO_DIST_UNIFORM: {
        double x = a->dist_a + (a->dist_b - a->dist_a) * kevo_rng_uniform(rng);
        return fl ? x : floor(x);
    }
    case KEVO_DIST_RANDINT:
        return a->dist_a + (double)kevo_rng_uniform_int(
                               rng, (uint64_t)(a->dist_b - a->dist_a) + 1);
    case KEVO_DIST_CONSTANT: return a->dist_a;
    case KEVO_DIST_NIBBLES: break; /* draw_elem() */
    }
    return 0.0;
}

/* Draws element i of the argument's buffer p: packed nibbles (each 4-bit
 * field, low nibble of each byte first) byte by byte, the rest through
 * draw(). */
static void draw_elem(kevo_rng *rng, const kevo_arg_info *a, void *p, size_t i)
{
    if (a->dist != KEVO_DIST_NIBBLES) {
        elem_set(a->type, p, i, draw(rng, a));
        return;
    }
    size_t es = kevo_dtype_size(a->type);
    uint64_t range = (uint64_t)(a->dist_b - a->dist_a) + 1;
    for (size_t b = 0; b < es; b++) {
        unsigned lo = (unsigned)((int64_t)a->dist_a +
                                 (int64_t)kevo_rng_uniform_int(rng, range)),
                 hi = (unsigned)((int64_t)a->dist_a +
                                 (int64_t)kevo_rng_uniform_int(rng, range));
        ((unsigned char *)p)[i * es + b] =
            (unsigned char)((lo & 0xfu) | (hi & 0xfu) << 4);
    }
}

static void shape_free(shape_data *d)
{
    for (size_t i = 0; i < d->nargs; i++) {
        if (d->dev && d->dev[i])
            cu_ok(kevo__cu.cuMemFree(d->dev[i]), "cuMemFree");
        if (d->host_in)
            free(d->host_in[i]);
        if (d->host_ref)
            free(d->host_ref[i]);
        if (d->host_out)
            free(d->host_out[i]);
        if (d->host_base)
            free(d->host_base[i]);
    }
    free(d->info);
    free(d->bytes);
    free(d->host_in);
    free(d->host_ref);
    free(d->host_out);
    free(d->host_base);
    free(d->dev);
    free(d->value);
    kevo_vars_free(d->env);
    memset(d, 0, sizeof(*d));
}

/* Sets up shape i of set: evaluates every count, draws the inputs and the
 * random scalars (a fresh stream per shape), allocates the buffers and
 * copies the inputs in. On failure, a not-ok line says why. */
static bool shape_setup(shape_data *d, const kevo_task *task,
                        kevo_shape_set set, size_t i, uint64_t run)
{
    kevo_error err = KEVO__ERROR_INIT;
    char st[200];
    memset(d, 0, sizeof(*d));
    d->task = task;
    d->set = set;
    d->shape = i;
    snprintf(d->text, sizeof(d->text), "%s %s%s", kevo_task_name(task),
             set == KEVO_SHAPES_HELD_OUT ? "held-out " : "",
             suite_shape_text(task, set, i, st, sizeof(st)));
    d->nargs = kevo_task_arg_count(task);
    d->env = suite_shape_env(task, set, i, devprops);
    d->info = calloc(d->nargs, sizeof(*d->info));
    d->bytes = calloc(d->nargs, sizeof(*d->bytes));
    d->host_in = calloc(d->nargs, sizeof(*d->host_in));
    d->host_ref = calloc(d->nargs, sizeof(*d->host_ref));
    d->host_out = calloc(d->nargs, sizeof(*d->host_out));
    d->host_base = calloc(d->nargs, sizeof(*d->host_base));
    d->dev = calloc(d->nargs, sizeof(*d->dev));
    d->value = calloc(d->nargs, sizeof(*d->value));
    if (!d->env || !d->info || !d->bytes || !d->host_in || !d->host_ref ||
        !d->host_out || !d->host_base || !d->dev || !d->value)
        bail_out("out of memory");

    char stream[320];
    snprintf(stream, sizeof(stream), "%s/%d/%zu/%" PRIu64, kevo_task_name(task),
             (int)set, i, run);
    kevo_rng *rng = kevo_rng_new(input_seed_base, stream);
    if (!rng)
        bail_out("out of memory");
    bool good = false;
    for (size_t a = 0; a < d->nargs; a++) {
        kevo_arg_info *in = &d->info[a];
        in->size = sizeof(*in);
        if (kevo_task_arg_info(task, a, in) != KEVO_OK) {
            ok(0, "%s: argument %zu", d->text, a);
            goto done;
        }
        size_t es = kevo_dtype_size(in->type);
        if (!is_buffer(in)) {
            if (in->value && kevo_dtype_is_float(in->type)) {
                elem_set(in->type, d->value[a].bytes, 0,
                         strtod(in->value, NULL));
            } else if (in->value) {
                int64_t x = 0;
                if (kevo_expr_eval_string(in->value, d->env, &x, &err) !=
                    KEVO_OK) {
                    ok(0, "%s: scalar %s", d->text, in->name);
                    diag("%s", err.text);
                    goto done;
                }
                memcpy(d->value[a].bytes, &x, es); /* little-endian */
            } else {
                draw_elem(rng, in, d->value[a].bytes, 0);
            }
            continue;
        }
        int64_t count = 0;
        if (kevo_expr_eval_string(in->count, d->env, &count, &err) != KEVO_OK ||
            count <= 0) {
            ok(0, "%s: count of %s", d->text, in->name);
            diag("%s", err.text);
            goto done;
        }
        d->bytes[a] = (size_t)count * es;
        if (!cu_ok(kevo__cu.cuMemAlloc(&d->dev[a], d->bytes[a]),
                   "cuMemAlloc")) {
            d->dev[a] = 0;
            ok(0, "%s: %zu bytes for %s", d->text, d->bytes[a], in->name);
            diag("%s", cu_failure.text);
            goto done;
        }
        if (is_input(in)) {
            if (!(d->host_in[a] = malloc(d->bytes[a])))
                bail_out("out of memory");
            for (size_t k = 0; k < (size_t)count; k++)
                draw_elem(rng, in, d->host_in[a], k);
            if (!cu_ok(kevo__cu.cuMemcpyHtoD(d->dev[a], d->host_in[a],
                                             d->bytes[a]),
                       "cuMemcpyHtoD")) {
                ok(0, "%s: copying %s in", d->text, in->name);
                diag("%s", cu_failure.text);
                goto done;
            }
        }
        if (is_output(in)) {
            if (!(d->host_ref[a] = malloc(d->bytes[a])) ||
                !(d->host_out[a] = malloc(d->bytes[a])) ||
                !(d->host_base[a] = malloc(d->bytes[a])))
                bail_out("out of memory");
        }
    }
    good = true;
done:
    kevo_rng_free(rng);
    return good;
}

/* Runs p on d's buffers: outputs poisoned (inout buffers restored), fresh
 * scratch, every launch in order, then the outputs read back into dst
 * (host_ref or host_out). On failure *why says what went wrong. */
static bool run_program(shape_data *d, const program *p, void **dst, char *why,
                        size_t whysize)
{
    const kevo_candidate *cand = p->cand;
    const kevo_blocks *b = &cand->blocks;
    CUdeviceptr *scratch = calloc(b->nscratch + 1, sizeof(*scratch));
    void **params = NULL;
    scalar *store = NULL;
    kevo__resolved_arg *args = NULL;
    bool good = false;
    kevo_error err = KEVO__ERROR_INIT;

    if (!scratch)
        bail_out("out of memory");
    for (size_t a = 0; a < d->nargs; a++) {
        if (d->info[a].role == KEVO_ROLE_OUT &&
            !cu_ok(kevo__cu.cuMemsetD8(d->dev[a], 0xff, d->bytes[a]),
                   "cuMemsetD8"))
            goto fail_cu;
        if (d->info[a].role == KEVO_ROLE_INOUT &&
            !cu_ok(kevo__cu.cuMemcpyHtoD(d->dev[a], d->host_in[a], d->bytes[a]),
                   "cuMemcpyHtoD"))
            goto fail_cu;
    }
    for (size_t s = 0; s < b->nscratch; s++) {
        uint64_t count = 0;
        if (kevo__scratch_count(cand, s, d->env, &count, &err) != KEVO_OK) {
            snprintf(why, whysize, "%s", err.text);
            goto done;
        }
        size_t bytes = (size_t)count * kevo_dtype_size(b->scratch[s].type);
        if (!cu_ok(kevo__cu.cuMemAlloc(&scratch[s], bytes), "cuMemAlloc")) {
            scratch[s] = 0;
            goto fail_cu;
        }
        if (!cu_ok(kevo__cu.cuMemsetD8(scratch[s],
                                       b->scratch[s].zero ? 0 : 0xff, bytes),
                   "cuMemsetD8"))
            goto fail_cu;
    }
    for (size_t l = 0; l < p->nlaunches; l++) {
        kevo_launch_geometry g;
        size_t nargs = 0;
        memset(&g, 0, sizeof(g));
        g.size = sizeof(g);
        free(args);
        args = NULL;
        if (kevo_candidate_launch_geometry(cand, l, d->env, &g, &err) !=
                KEVO_OK ||
            kevo__launch_args(d->task, cand, l, d->env, &args, &nargs, &err) !=
                KEVO_OK) {
            snprintf(why, whysize, "%s", err.text);
            goto done;
        }
        if (!g.runs)
            continue;
        free(params);
        free(store);
        params = calloc(nargs + 1, sizeof(*params));
        store = calloc(nargs + 1, sizeof(*store));
        if (!params || !store)
            bail_out("out of memory");
        for (size_t a = 0; a < nargs; a++) {
            switch (args[a].kind) {
            case KEVO__ARG_BUFFER: store[a].ptr = d->dev[args[a].index]; break;
            case KEVO__ARG_SCRATCH:
                store[a].ptr = scratch[args[a].index];
                break;
            case KEVO__ARG_SCALAR: store[a] = d->value[args[a].index]; break;
            case KEVO__ARG_TENSORMAP:
                /* the suite's kernels take no tensor map; the worker's
                 * tests (gpu-tensormap) cover them */
                snprintf(why, whysize,
                         "launch %zu passes a tensor map, "
                         "which this test does not encode",
                         l + 1);
                goto done;
            case KEVO__ARG_VALUE:
                memcpy(store[a].bytes, &args[a].value, args[a].size);
                break;
            }
            params[a] = store[a].bytes;
        }
        if (g.shared_bytes > 48 * 1024 &&
            !cu_ok(kevo__cu.cuFuncSetAttribute(
                       p->fn[l],
                       CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                       (int)g.shared_bytes),
                   "cuFuncSetAttribute"))
            goto fail_cu;
        if (!cu_ok(kevo__cu.cuLaunchKernel(p->fn[l], g.grid[0], g.grid[1],
                                           g.grid[2], g.block[0], g.block[1],
                                           g.block[2], (unsigned)g.shared_bytes,
                                           NULL, params, NULL),
                   kevo_candidate_launch_kernel(cand, l)))
            goto fail_cu;
    }
    if (!cu_ok(kevo__cu.cuCtxSynchronize(), "cuCtxSynchronize"))
        goto fail_cu;
    for (size_t a = 0; a < d->nargs; a++) {
        if (is_output(&d->info[a]) &&
            !cu_ok(kevo__cu.cuMemcpyDtoH(dst[a], d->dev[a], d->bytes[a]),
                   "cuMemcpyDtoH"))
            goto fail_cu;
    }
    good = true;
    goto done;
fail_cu:
    snprintf(why, whysize, "%s", cu_failure.text);
done:
    for (size_t s = 0; s < b->nscratch; s++) {
        if (scratch[s])
            cu_ok(kevo__cu.cuMemFree(scratch[s]), "cuMemFree");
    }
    free(scratch);
    free(params);
    free(store);
    free(args);
    return good;
}

/* Whether the in buffers on the device still hold what was copied in;
 * names the first that does not in why. */
static bool inputs_unchanged(shape_data *d, char *why, size_t whysize)
{
    for (size_t a = 0; a < d->nargs; a++) {
        if (d->info[a].role != KEVO_ROLE_IN)
            continue;
        void *tmp = malloc(d->bytes[a]);
        if (!tmp)
            bail_out("out of memory");
        bool same = cu_ok(kevo__cu.cuMemcpyDtoH(tmp, d->dev[a], d->bytes[a]),
                          "cuMemcpyDtoH") &&
                    memcmp(tmp, d->host_in[a], d->bytes[a]) == 0;
        free(tmp);
        if (!same) {
            snprintf(why, whysize, "input '%s' changed", d->info[a].name);
            return false;
        }
    }
    return true;
}

/* How one output compares with the reference. */
typedef struct compare {
    size_t n, bad, first_bad;
    double max_abs, max_rel, max_frac; /* frac: error over its tolerance */
    size_t i_abs, i_rel, i_frac;
    double need_atol; /* the least atol that passes at the task's rtol */
    double need_rtol; /* the least rtol that passes at the task's atol */
    bool ref_nan;     /* the reference itself produced a NaN */
} compare;

static void compare_output(const kevo_arg_info *a, const void *ref,
                           const void *got, size_t n, compare *c)
{
    memset(c, 0, sizeof(*c));
    c->n = n;
    bool fl = kevo_dtype_is_float(a->type);
    /* The amax term: the largest finite |reference| of the output. */
    double atol = a->atol, amax = 0;
    for (size_t i = 0; a->rtol_amax > 0 && i < n; i++) {
        double r = fabs(elem_get(a->type, ref, i));
        if (isfinite(r) && r > amax)
            amax = r;
    }
    atol += a->rtol_amax * amax;
    for (size_t i = 0; i < n; i++) {
        double r = elem_get(a->type, ref, i), g = elem_get(a->type, got, i);
        double d, tol = atol + a->rtol * fabs(r), frac;
        if (a->ulp > 0 && isfinite(r))
            tol += a->ulp * kevo__dtype_ulp(a->type, r);
        if (fl && isnan(r)) {
            c->ref_nan = true;
            d = INFINITY;
        } else if (fl && (isnan(g) || isinf(g) || isinf(r))) {
            d = g == r ? 0.0 : INFINITY;
        } else {
            d = fabs(g - r);
        }
        frac = d == 0.0 ? 0.0 : tol > 0.0 ? d / tol : INFINITY;
        if (!(d <= tol)) {
            if (c->bad++ == 0)
                c->first_bad = i;
        }
        if (!(d <= c->max_abs)) {
            c->max_abs = d;
            c->i_abs = i;
        }
        double rel = d == 0.0 ? 0.0 : r != 0.0 ? d / fabs(r) : INFINITY;
        if (!(rel <= c->max_rel)) {
            c->max_rel = rel;
            c->i_rel = i;
        }
        if (!(frac <= c->max_frac)) {
            c->max_frac = frac;
            c->i_frac = i;
        }
        double na = d - (tol - a->atol);
        if (!(na <= c->need_atol))
            c->need_atol = na;
        double rest = tol - a->rtol * fabs(r);
        double nr = d <= rest  ? 0.0
                    : r != 0.0 ? (d - rest) / fabs(r)
                               : INFINITY;
        if (!(nr <= c->need_rtol))
            c->need_rtol = nr;
    }
}

/* The baseline rule (kevo_task_set_tolerance_baseline()): got passes when
 * its largest and its mean error against ref are at most factor times the
 * baseline's plus atol; a NaN or an infinity the reference lacks fails.
 * Writes what it found to text. */
static bool compare_baseline(const kevo_arg_info *a, const void *ref,
                             const void *got, const void *base, size_t n,
                             char *text, size_t size)
{
    double gmax = 0, gsum = 0, bmax = 0, bsum = 0;
    size_t nonfinite = 0;
    for (size_t i = 0; i < n; i++) {
        double r = elem_get(a->type, ref, i), g = elem_get(a->type, got, i);
        double b = elem_get(a->type, base, i);
        double dg = fabs(g - r), db = fabs(b - r);
        if (!isfinite(dg)) {
            nonfinite++;
            continue;
        }
        gmax = dg > gmax ? dg : gmax;
        gsum += dg;
        if (isfinite(db)) {
            bmax = db > bmax ? db : bmax;
            bsum += db;
        }
    }
    double gmean = n ? gsum / (double)n : 0, bmean = n ? bsum / (double)n : 0;
    double maxtol = a->factor * bmax + a->atol;
    double meantol = a->factor * bmean + a->atol;
    snprintf(text, size,
             "%s: largest error %.3g against %.3g allowed (%g x the "
             "baseline's %.3g + %g), mean %.3g against %.3g%s",
             a->name, gmax, maxtol, a->factor, bmax, a->atol, gmean, meantol,
             nonfinite ? "; NaN or infinity where the reference has none" : "");
    return nonfinite == 0 && gmax <= maxtol && gmean <= meantol;
}

/* Runs the reference and p on fresh inputs for one shape and compares:
 * three TAP lines (reference ran, candidate matches, inputs unchanged). */
static void check_shape(const kevo_task *task, kevo_shape_set set, size_t i,
                        const program *ref, const program *base,
                        const program *p, const char *label, uint64_t run)
{
    shape_data d;
    char why[1024] = "";
    if (!shape_setup(&d, task, set, i, run)) {
        shape_free(&d);
        return;
    }
    if (!ok(run_program(&d, ref, d.host_ref, why, sizeof(why)),
            "%s: the reference runs", d.text)) {
        diag("%s", why);
        shape_free(&d);
        return;
    }
    bool in_ok = inputs_unchanged(&d, why, sizeof(why));
    if (!in_ok)
        diag("the reference: %s", why);

    bool ran = run_program(&d, p, d.host_out, why, sizeof(why));
    bool match = ran;
    if (ran && base && !run_program(&d, base, d.host_base, why, sizeof(why))) {
        ok(0, "%s: the baseline runs", d.text);
        diag("%s", why);
        shape_free(&d);
        return;
    }
    char result[2048] = "";
    size_t rlen = 0;
    for (size_t a = 0; ran && a < d.nargs; a++) {
        const kevo_arg_info *in = &d.info[a];
        if (!is_output(in))
            continue;
        compare c;
        size_t n = d.bytes[a] / kevo_dtype_size(in->type);
        if (in->factor > 0 && base) {
            char line[512];
            match = match &&
                    compare_baseline(in, d.host_ref[a], d.host_out[a],
                                     d.host_base[a], n, line, sizeof(line));
            int w = snprintf(result + rlen, sizeof(result) - rlen, "%s%s",
                             rlen ? "\n" : "", line);
            if (w > 0 && (size_t)w < sizeof(result) - rlen)
                rlen += (size_t)w;
            continue;
        }
        compare_output(in, d.host_ref[a], d.host_out[a], n, &c);
        match = match && c.bad == 0 && !c.ref_nan;
        int w = snprintf(
            result + rlen, sizeof(result) - rlen,
            "%s%s: worst abs %.3g at [%zu] (got %.9g, want %.9g); worst rel "
            "%.3g at [%zu]; %.3g of the tolerance (rtol %g, atol %g, "
            "rtol_amax %g, ulp %g) at [%zu]; would pass with atol %.3g or "
            "rtol %.3g",
            rlen ? "\n" : "", in->name, c.max_abs, c.i_abs,
            elem_get(in->type, d.host_out[a], c.i_abs),
            elem_get(in->type, d.host_ref[a], c.i_abs), c.max_rel, c.i_rel,
            c.max_frac, in->rtol, in->atol, in->rtol_amax, in->ulp, c.i_frac,
            c.need_atol, c.need_rtol);
        if (w > 0 && (size_t)w < sizeof(result) - rlen)
            rlen += (size_t)w;
        if (c.ref_nan && rlen + 64 < sizeof(result))
            rlen += (size_t)snprintf(result + rlen, sizeof(result) - rlen,
                                     "\n%s: the reference wrote NaN", in->name);
        if (c.bad && rlen + 160 < sizeof(result))
            rlen += (size_t)snprintf(
                result + rlen, sizeof(result) - rlen,
                "\n%s: %zu of %zu elements out of tolerance, the first at "
                "[%zu] (got %.9g, want %.9g)",
                in->name, c.bad, n, c.first_bad,
                elem_get(in->type, d.host_out[a], c.first_bad),
                elem_get(in->type, d.host_ref[a], c.first_bad));
    }
    ok(match, "%s: %s matches the reference", d.text, label);
    if (!ran)
        diag("%s", why);
    suite_diag_text(NULL, result);
    if (ran && !inputs_unchanged(&d, why, sizeof(why))) {
        in_ok = false;
        diag("%s: %s", label, why);
    }
    ok(in_ok, "%s: inputs unchanged", d.text);
    shape_free(&d);
}

/* ---- the suite --------------------------------------------------------- */

/* The seed at each parameter's extreme values, on the smallest training
 * shape that its constraints allow. */
static void check_variants(const kevo_task *task, const program *ref,
                           const program *base, uint64_t *run)
{
    const kevo_candidate *seed = kevo_task_seed(task);
    size_t nv = 0, ns = kevo_task_shape_count(task, KEVO_SHAPES_TRAIN);
    suite_variant *vars = suite_variants(seed, &nv);
    size_t smallest = suite_smallest_shape(task);
    if (!vars)
        bail_out("out of memory");
    for (size_t v = 1; v < nv; v++) {
        char vt[128], label[192];
        kevo_error err = KEVO__ERROR_INIT;
        suite_variant_text(&vars[v], vt, sizeof(vt));
        snprintf(label, sizeof(label), "%s: the seed at %s",
                 kevo_task_name(task), vt);
        kevo_candidate *c = suite_variant_apply(seed, &vars[v], &err);
        if (!c) {
            ok(0, "%s", label);
            diag("%s", err.text);
            continue;
        }
        /* The smallest shape, else the first other that is allowed. */
        size_t shape = ns;
        kevo_error why = KEVO__ERROR_INIT;
        if (suite_allowed(c, task, KEVO_SHAPES_TRAIN, smallest, devprops, &why))
            shape = smallest;
        for (size_t s = 0; s < ns && shape == ns; s++) {
            if (s != smallest &&
                suite_allowed(c, task, KEVO_SHAPES_TRAIN, s, devprops, NULL))
                shape = s;
        }
        program p;
        if (shape == ns) {
            diag("%s: skipped: the constraints forbid it at every training "
                 "shape (%s)",
                 label, why.text);
        } else if (program_build(&p, c, label)) {
            if (!full_sweep)
                check_shape(task, KEVO_SHAPES_TRAIN, shape, ref, base, &p, vt,
                            (*run)++);
            for (int set = 0; full_sweep && set < 2; set++) {
                for (size_t s = 0; s < kevo_task_shape_count(task, set); s++) {
                    if (suite_allowed(c, task, set, s, devprops, NULL))
                        check_shape(task, set, s, ref, base, &p, vt, (*run)++);
                }
            }
            program_free(&p);
        }
        kevo_candidate_free(c);
    }
    free(vars);
}

static void check_task(const char *path, uint64_t *run)
{
    kevo_task *task = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    double t0 = suite_now_seconds();
    if (!ok(kevo_task_load(path, &task, &err) == KEVO_OK, "%s loads", base)) {
        diag("%s", err.text);
        return;
    }
    const char *name = kevo_task_name(task);
    char label[192];
    program ref, seed, baseline;
    bool has_base = false;
    snprintf(label, sizeof(label), "%s: the reference", name);
    if (!program_build(&ref, kevo_task_reference(task), label))
        goto done;
    if (kevo_task_baseline(task)) {
        snprintf(label, sizeof(label), "%s: the baseline", name);
        if (!program_build(&baseline, kevo_task_baseline(task), label)) {
            program_free(&ref);
            goto done;
        }
        has_base = true;
    }
    snprintf(label, sizeof(label), "%s: the seed", name);
    if (!program_build(&seed, kevo_task_seed(task), label)) {
        program_free(&ref);
        if (has_base)
            program_free(&baseline);
        goto done;
    }
    for (int set = 0; set < 2; set++) {
        for (size_t i = 0; i < kevo_task_shape_count(task, set); i++)
            check_shape(task, set, i, &ref, has_base ? &baseline : NULL, &seed,
                        "the seed", (*run)++);
    }
    program_free(&seed);
    check_variants(task, &ref, has_base ? &baseline : NULL, run);
    program_free(&ref);
    if (has_base)
        program_free(&baseline);
    diag("%s: %.1f s", name, suite_now_seconds() - t0);
done:
    kevo_task_free(task);
}

int main(int argc, char **argv)
{
    if (kevo__cu_load(&cu_failure) != KEVO_OK)
        skip_all("%s", cu_failure.text);
    int ndev = 0;
    if (kevo__cu_check(kevo__cu.cuInit(0), "cuInit", &cu_failure) != KEVO_OK ||
        kevo__cu_check(kevo__cu.cuDeviceGetCount(&ndev), "cuDeviceGetCount",
                       &cu_failure) != KEVO_OK)
        skip_all("no usable GPU: %s", cu_failure.text);
    if (ndev == 0)
        skip_all("no GPU: the CUDA driver reports 0 devices");

    CUdevice dev;
    CUcontext ctx;
    char devname[256] = "";
    if (!cu_ok(kevo__cu.cuDeviceGet(&dev, 0), "cuDeviceGet") ||
        !cu_ok(kevo__cu.cuDeviceGetName(devname, sizeof(devname), dev),
               "cuDeviceGetName") ||
        !cu_ok(kevo__cu.cuDevicePrimaryCtxRetain(&ctx, dev),
               "cuDevicePrimaryCtxRetain") ||
        !cu_ok(kevo__cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent"))
        bail_out("%s", cu_failure.text);
    devprops = device_props(dev);
    if (!devprops)
        bail_out("device properties: %s", cu_failure.text);
    int64_t cc = 0, sms = 0;
    kevo_vars_get(devprops, "cc", &cc);
    kevo_vars_get(devprops, "sm_count", &sms);
    snprintf(arch, sizeof(arch), "sm_%" PRId64, cc);

    const char *env_full = getenv("KEVO_SUITE_FULL");
    full_sweep = env_full && strcmp(env_full, "1") == 0;
    const char *env_seed = getenv("KEVO_SUITE_SEED");
    input_seed_base = env_seed && *env_seed
                          ? strtoull(env_seed, NULL, 0)
                          : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
    diag("device 0: %s, %s, %" PRId64 " SMs; input seed %" PRIu64
         " (KEVO_SUITE_SEED=%" PRIu64 " repeats this run)",
         devname, arch, sms, input_seed_base, input_seed_base);

    char *dir = argc > 1 ? kevo__strdup(argv[1])
                         : kevo__path_join(tap_srcdir(), "examples/tasks");
    size_t n = 0;
    char **files = dir ? suite_task_files(dir, &n) : NULL;
    ok(files && n > 0, "%zu task files in %s", n, dir ? dir : "?");
    uint64_t run = 0;
    double t0 = suite_now_seconds();
    for (size_t f = 0; files && f < n; f++)
        check_task(files[f], &run);
    diag("all tasks: %.1f s", suite_now_seconds() - t0);
    suite_strv_free(files);
    free(dir);
    kevo_vars_free(devprops);
    cu_ok(kevo__cu.cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");
    return done_testing();
}

/*
 * launch_check.c: a compiled candidate's launches checked against the
 * parameter lists of the kernels they call (see launch_check.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch_check.h"
#include "model/launch_args.h"
#include "ptxscan.h"

/* The C type that holds one value of type, for messages. */
static const char *c_type(kevo_dtype type)
{
    switch (type) {
    case KEVO_DTYPE_F32: return "float";
    case KEVO_DTYPE_F64: return "double";
    case KEVO_DTYPE_F16: return "__half";
    case KEVO_DTYPE_BF16: return "__nv_bfloat16";
    case KEVO_DTYPE_I8: return "signed char";
    case KEVO_DTYPE_U8: return "unsigned char";
    case KEVO_DTYPE_I16: return "short";
    case KEVO_DTYPE_U16: return "unsigned short";
    case KEVO_DTYPE_I32: return "int";
    case KEVO_DTYPE_U32: return "unsigned int";
    case KEVO_DTYPE_I64: return "long long";
    case KEVO_DTYPE_U64: return "unsigned long long";
    }
    return "?";
}

/* Whether parameter p can receive what arg passes. */
static bool fits(const kevo__resolved_arg *arg, const kevo_ptx_param *p)
{
    if (p->kind == KEVO_PTX_PARAM_OTHER || p->size != arg->size)
        return false;
    if (arg->kind == KEVO__ARG_TENSORMAP)
        return p->kind == KEVO_PTX_PARAM_BYTES && p->align >= KEVO__TMAP_ALIGN;
    if (p->kind == KEVO_PTX_PARAM_BYTES)
        return true;
    if (arg->kind == KEVO__ARG_BUFFER || arg->kind == KEVO__ARG_SCRATCH)
        return p->kind == KEVO_PTX_PARAM_INT;
    switch (arg->type) {
    case KEVO_DTYPE_F32:
    case KEVO_DTYPE_F64: return p->kind == KEVO_PTX_PARAM_FLOAT;
    case KEVO_DTYPE_F16:
    case KEVO_DTYPE_BF16: return true; /* .f16, or the bits as .b16 */
    default: return p->kind == KEVO_PTX_PARAM_INT;
    }
}

/* What the launch passes as argument a, for messages: "buffer 'x' (f32,
 * received as float *)", "scalar 'a' (f32, received as float)", "'n * 4'
 * (i32, received as int)". */
static const char *passed_text(const kevo_launch *l,
                               const kevo__resolved_arg *arg, size_t a,
                               char *buf, size_t size)
{
    const char *text = l->args[a].text, *c = c_type(arg->type);
    switch (arg->kind) {
    case KEVO__ARG_BUFFER:
    case KEVO__ARG_SCRATCH:
        snprintf(buf, size, "%sbuffer '%s' (%s, received as %s *)",
                 arg->kind == KEVO__ARG_SCRATCH ? "scratch " : "", text,
                 kevo_dtype_name(arg->type), c);
        break;
    case KEVO__ARG_SCALAR:
        snprintf(buf, size, "scalar '%s' (%s, received as %s)", text,
                 kevo_dtype_name(arg->type), c);
        break;
    case KEVO__ARG_VALUE:
        snprintf(buf, size, "'%s' (%s, received as %s)", text,
                 kevo_dtype_name(arg->type), c);
        break;
    case KEVO__ARG_TENSORMAP:
        snprintf(buf, size,
                 "tensor map '%s' (received as a 128-byte object aligned to "
                 "64, such as 'const __grid_constant__ CUtensorMap' or a "
                 "struct alignas(64) of 16 unsigned long long)",
                 text);
        break;
    }
    return buf;
}

/* The names the launch passes, "a, x, y, n", in buf. */
static const char *arg_list(const kevo_launch *l, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t a = 0; a < l->nargs && n < size; a++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", a ? ", " : "",
                              l->args[a].text);
    return buf;
}

/* The kernel that launch i calls in scan: the entry named lowered, else
 * the one kevo__ptxscan_find() finds for its plain name. */
static const kevo_ptx_kernel *kernel_of(const kevo_ptxscan *scan,
                                        const char *kernel, const char *lowered)
{
    for (size_t i = 0; lowered && i < scan->n; i++) {
        if (scan->kernels[i].in_ptx &&
            strcmp(scan->kernels[i].name, lowered) == 0)
            return &scan->kernels[i];
    }
    return kevo__ptxscan_find(scan, kernel);
}

static kevo_status check_launch(const kevo_task *task,
                                const kevo_candidate *cand, size_t i,
                                const kevo_ptx_kernel *k, kevo_error *err)
{
    const kevo_launch *l = &cand->blocks.launches[i];
    char what[256], param[160], list[256];
    if (!k)
        return kevo__launch_error(
            cand, l->line, KEVO_EINVALID, err,
            "kernel '%s' (launch %zu) is not in the compiled code: "
            "no __global__ function of that name",
            l->kernel, i + 1);
    if (!k->entry)
        return kevo__launch_error(
            cand, l->line, KEVO_EINVALID, err,
            "'%s' (launch %zu) is a __device__ function, not a "
            "kernel: declare it __global__",
            l->kernel, i + 1);
    if (!k->has_params)
        return KEVO_OK;
    kevo__resolved_arg *args = NULL;
    size_t nargs = 0;
    kevo_status rc = kevo__launch_args(task, cand, i, NULL, &args, &nargs, err);
    if (rc != KEVO_OK)
        return rc;
    if (nargs != k->nparams) {
        rc = kevo__launch_error(
            cand, l->line, KEVO_EINVALID, err,
            "kernel '%s' takes %zu parameter%s and the launch passes "
            "%zu (%s)",
            l->kernel, k->nparams, k->nparams == 1 ? "" : "s", nargs,
            nargs ? arg_list(l, list, sizeof list) : "none");
        goto done;
    }
    for (size_t a = 0; a < nargs; a++) {
        const kevo_ptx_param *p = &k->params[a];
        if (fits(&args[a], p))
            continue;
        const char *hint = "";
        if (args[a].kind == KEVO__ARG_VALUE && p->kind == KEVO_PTX_PARAM_INT)
            hint = p->size == 8   ? "; cast it, (i64) or (u64), for a 64-bit "
                                    "parameter"
                   : p->size == 4 ? "; cast it, (i32) or (u32), for a 32-bit "
                                    "parameter"
                                  : "";
        rc = kevo__launch_error(
            cand, l->line, KEVO_EINVALID, err,
            "parameter %zu of kernel '%s' is %s and the launch passes "
            "%s%s",
            a + 1, l->kernel, kevo__ptx_param_text(p, param, sizeof param),
            passed_text(l, &args[a], a, what, sizeof what), hint);
        goto done;
    }
done:
    free(args);
    return rc;
}

kevo_status kevo__launch_check_ptx(const kevo_task *task,
                                   const kevo_candidate *cand, const char *ptx,
                                   size_t len, char *const *lowered,
                                   size_t nlowered, kevo_error *err)
{
    kevo_ptxscan scan;
    kevo_error local = KEVO__ERROR_INIT;
    kevo__ptxscan_init(&scan);
    if (!ptx)
        return KEVO_OK;
    kevo_status rc = kevo__ptxscan_ptx(&scan, ptx, len, &local);
    if (rc == KEVO_ENOMEM) {
        kevo__ptxscan_free(&scan);
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    }
    rc = KEVO_OK;
    if (local.code == KEVO_OK) {
        for (size_t i = 0; i < cand->blocks.nlaunches && rc == KEVO_OK; i++) {
            const char *low = i < nlowered ? lowered[i] : NULL;
            const char *kernel = cand->blocks.launches[i].kernel;
            rc =
                check_launch(task, cand, i, kernel_of(&scan, kernel, low), err);
        }
    }
    kevo__ptxscan_free(&scan);
    return rc;
}

/* Whether NVRTC's log says text about name: the text, then the name
 * quoted as the log quotes it. */
static bool log_says(const char *log, const char *text, const char *quote,
                     const char *name)
{
    char *needle = kevo__asprintf("%s%s%s\"", text, quote, name);
    bool found = needle && log && strstr(log, needle);
    free(needle);
    return found;
}

char *kevo__launch_missing_kernel(const kevo_candidate *cand, const char *error,
                                  const char *log)
{
    static const char pre[] = "kernel '", post[] = "' is not defined in ";
    if (!error || strncmp(error, pre, sizeof pre - 1) != 0)
        return NULL;
    const char *name = error + sizeof pre - 1;
    for (size_t i = 0; i < cand->blocks.nlaunches; i++) {
        const kevo_launch *l = &cand->blocks.launches[i];
        size_t n = strlen(l->kernel);
        if (strncmp(name, l->kernel, n) != 0 ||
            strncmp(name + n, post, sizeof post - 1) != 0)
            continue;
        const char *file = name + n + sizeof post - 1;
        char where[512];
        kevo__launch_place(cand, l->line, where, sizeof where);
        if (log_says(log,
                     "non-__global__ function. Input name expression was: ",
                     "\" ", l->kernel))
            return kevo__asprintf("%s'%s' (launch %zu) is not a __global__ "
                                  "function in %s: only kernels can be "
                                  "launched",
                                  where, l->kernel, i + 1, file);
        if (log_says(log, "instance of overloaded function ", "\"", l->kernel))
            return kevo__asprintf("%skernel '%s' (launch %zu) is overloaded "
                                  "in %s: kernels are launched by name, so "
                                  "give each a name of its own",
                                  where, l->kernel, i + 1, file);
        return kevo__asprintf("%skernel '%s' (launch %zu) is not defined in "
                              "%s: the source has no __global__ function of "
                              "that name",
                              where, l->kernel, i + 1, file);
    }
    return NULL;
}

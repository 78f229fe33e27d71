/*
 * export_cuda.c: the CUDA side of a package. The champion's source once,
 * as NAME_kernel.cuh, with its #include lines moved out (they are hoisted
 * above the namespaces) and its extern "C" linkage dropped (a kernel of
 * each variant is a C++ function in the variant's namespace); one
 * translation unit per variant, NAME_vK.cu, that defines the variant's
 * parameters as macros (as kevo's -D options did) and includes the source
 * inside namespace NAME_vK; NAME.cu, the launch function, which queries
 * the device once, plans the call (NAME_plan.c), fills the scratch
 * buffers that ask for zeros, opts kernels in to large dynamic shared
 * memory and launches each kernel in order on the caller's stream; NAME.h;
 * and a Makefile for nvcc.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export_private.h"
#include "model/devprops.h"

/* ---- the source, made includable in a namespace ------------------------- */

static bool at_word(const char *s, size_t i, const char *w)
{
    size_t n = strlen(w);
    if (strncmp(s + i, w, n) != 0)
        return false;
    char before = i ? s[i - 1] : ' ', after = s[i + n];
    bool id_b = (before >= 'a' && before <= 'z') ||
                (before >= 'A' && before <= 'Z') ||
                (before >= '0' && before <= '9') || before == '_';
    bool id_a = (after >= 'a' && after <= 'z') ||
                (after >= 'A' && after <= 'Z') ||
                (after >= '0' && after <= '9') || after == '_';
    return !id_b && !id_a;
}

/* Past the comment, string, character or raw string literal at s[i], or i
 * when there is none there. */
static size_t skip_lexeme(const char *s, size_t i)
{
    if (s[i] == '/' && s[i + 1] == '/') {
        while (s[i] && s[i] != '\n')
            i++;
        return i;
    }
    if (s[i] == '/' && s[i + 1] == '*') {
        const char *end = strstr(s + i + 2, "*/");
        return end ? (size_t)(end - s) + 2 : strlen(s);
    }
    if (s[i] == 'R' && s[i + 1] == '"' &&
        !(i && ((s[i - 1] >= 'a' && s[i - 1] <= 'z') ||
                (s[i - 1] >= 'A' && s[i - 1] <= 'Z') || s[i - 1] == '_'))) {
        const char *open = strchr(s + i + 2, '(');
        if (!open || open - (s + i + 2) > 16)
            return i;
        char close[24];
        snprintf(close, sizeof close, ")%.*s\"", (int)(open - (s + i + 2)),
                 s + i + 2);
        const char *end = strstr(open, close);
        return end ? (size_t)(end - s) + strlen(close) : strlen(s);
    }
    if (s[i] == '"' || s[i] == '\'') {
        char q = s[i++];
        while (s[i] && s[i] != q && s[i] != '\n') {
            if (s[i] == '\\' && s[i + 1])
                i++;
            i++;
        }
        return s[i] == q ? i + 1 : i;
    }
    return i;
}

/* The matching '}' of the '{' at s[open], or 0 when there is none. */
static size_t matching_brace(const char *s, size_t open)
{
    int depth = 0;
    for (size_t i = open; s[i];) {
        size_t j = skip_lexeme(s, i);
        if (j != i) {
            i = j;
            continue;
        }
        if (s[i] == '{')
            depth++;
        else if (s[i] == '}' && --depth == 0)
            return i;
        i++;
    }
    return 0;
}

/* The source with its #include lines blanked (each kept, once, in
 * *includes) and every extern "C" (and the braces of an extern "C" { }
 * block) overwritten with spaces, so that lines stay where they were. */
static kevo_status transform(const char *src, char **out, kevo_buf *includes)
{
    char *s = kevo__strdup(src);
    if (!s)
        return KEVO_ENOMEM;
    bool line_start = true;
    for (size_t i = 0; s[i];) {
        if (line_start) {
            size_t j = i;
            while (s[j] == ' ' || s[j] == '\t')
                j++;
            if (s[j] == '#') {
                size_t k = j + 1;
                while (s[k] == ' ' || s[k] == '\t')
                    k++;
                size_t end = k;
                while (s[end] && s[end] != '\n')
                    end++;
                if (strncmp(s + k, "include", 7) == 0) {
                    char *line = kevo__strndup(s + j, end - j);
                    if (!line) {
                        free(s);
                        return KEVO_ENOMEM;
                    }
                    if (!includes->data || !strstr(includes->data, line)) {
                        kevo__buf_puts(includes, line);
                        kevo__buf_puts(includes, "\n");
                    }
                    free(line);
                    memset(s + i, ' ', end - i);
                }
                i = end;
                continue;
            }
        }
        size_t j = skip_lexeme(s, i);
        if (j != i) {
            line_start = false;
            i = j;
            continue;
        }
        if (at_word(s, i, "extern")) {
            size_t k = i + 6;
            while (s[k] == ' ' || s[k] == '\t' || s[k] == '\n')
                k++;
            if (strncmp(s + k, "\"C\"", 3) == 0) {
                size_t after = k + 3;
                for (size_t m = i; m < after; m++) {
                    if (s[m] != '\n')
                        s[m] = ' ';
                }
                size_t b = after;
                while (s[b] == ' ' || s[b] == '\t' || s[b] == '\n')
                    b++;
                if (s[b] == '{') {
                    size_t close = matching_brace(s, b);
                    if (close) {
                        s[b] = ' ';
                        s[close] = ' ';
                    }
                }
                i = after;
                continue;
            }
        }
        line_start = s[i] == '\n';
        i++;
    }
    *out = s;
    return KEVO_OK;
}

/* ---- the files ------------------------------------------------------------
 */

static const kevo_candidate *champ(const kevo__export_pkg *p)
{
    return p->variants[0];
}

/* The parameter list of the launch function: the task's arguments but
 * the scalars with a fixed value, then the dims. */
kevo_status kevo__export_params(const kevo__export_pkg *p, kevo_buf *b,
                                kevo_error *err)
{
    const char *sep = "";
    for (size_t i = 0; i < kevo_task_arg_count(p->task); i++) {
        kevo_arg_info info = {.size = sizeof info};
        kevo_status rc = kevo_task_arg_info(p->task, i, &info);
        if (rc != KEVO_OK)
            return rc;
        char id[80];
        const char *name = kevo__export_ident(info.name, id, sizeof id);
        const char *ct = kevo__export_ctype(info.type);
        if (info.role == KEVO_ROLE_SCALAR) {
            if (info.value)
                continue;
            kevo__buf_printf(b, "%s%s %s", sep, ct, name);
        } else if (info.type == KEVO_DTYPE_F16 ||
                   info.type == KEVO_DTYPE_BF16) {
            kevo__buf_printf(b, "%s%svoid *%s", sep,
                             info.role == KEVO_ROLE_IN ? "const " : "", name);
        } else {
            kevo__buf_printf(b, "%s%s%s *%s", sep,
                             info.role == KEVO_ROLE_IN ? "const " : "", ct,
                             name);
        }
        sep = ",\n    ";
    }
    for (size_t i = 0; i < kevo__export_ndims(p); i++) {
        char id[80];
        kevo__buf_printf(
            b, "%sint64_t %s", sep,
            kevo__export_ident(kevo_task_dim_name(p->task, i), id, sizeof id));
        sep = ", ";
    }
    return KEVO_OK;
}

static void put_dims_args(const kevo__export_pkg *p, kevo_buf *b)
{
    for (size_t i = 0; i < kevo__export_ndims(p); i++) {
        char id[80];
        kevo__buf_printf(
            b, "%sint64_t %s", i ? ", " : "",
            kevo__export_ident(kevo_task_dim_name(p->task, i), id, sizeof id));
    }
}

static void put_dims_array(const kevo__export_pkg *p, kevo_buf *b)
{
    size_t nd = kevo__export_ndims(p);
    kevo__buf_printf(b, "    const int64_t kx_dims[%zu] = {", nd ? nd : 1);
    for (size_t i = 0; i < nd; i++) {
        char id[80];
        kevo__buf_printf(
            b, "%s%s", i ? ", " : "",
            kevo__export_ident(kevo_task_dim_name(p->task, i), id, sizeof id));
    }
    kevo__buf_puts(b, nd ? "};\n" : "0};\n");
}

static kevo_status header(const kevo__export_pkg *p, kevo_buf *b,
                          kevo_error *err)
{
    const char *n = p->name;
    kevo__buf_printf(b,
                     "/*\n * %s.h: the kevo champion of task %s as a function "
                     "call, written by\n * kevo export (see README.md). C and "
                     "C++.\n */\n#ifndef %s_H_\n#define %s_H_\n\n"
                     "#include <stddef.h>\n#include <stdint.h>\n\n"
                     "#include <cuda_runtime_api.h>\n\n#include "
                     "\"%s_plan.h\"\n\n"
                     "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
                     n, kevo_task_name(p->task), n, n, n);
    kevo__buf_printf(
        b,
        "/*\n * %s: runs the champion on stream: the task's arguments in "
        "order (buffers\n * as device pointers, 16-byte aligned; scalars "
        "with a fixed value are\n * left out: they follow from the dims), "
        "then the dims, then a workspace\n * of at least "
        "%s_workspace_size() bytes (NULL when that is 0). The\n * "
        "parameters are those the dispatch table gives the shape. Returns\n"
        " * cudaSuccess, the error of the CUDA call that failed, or\n"
        " * cudaErrorInvalidValue for a shape the launch block refuses or a "
        "workspace\n * that is too small, %s_error() saying why.\n */\n"
        "cudaError_t %s(",
        n, n, n, n);
    kevo_status rc = kevo__export_params(p, b, err);
    if (rc != KEVO_OK)
        return rc;
    kevo__buf_puts(b, ",\n    void *workspace, size_t workspace_bytes, "
                      "cudaStream_t stream);\n\n");
    kevo__buf_printf(b,
                     "/* %s_workspace_size: the workspace a call at the shape "
                     "needs on the\n * current device, in *bytes. */\n"
                     "cudaError_t %s_workspace_size(",
                     n, n);
    put_dims_args(p, b);
    kevo__buf_printf(
        b,
        "%ssize_t *bytes);\n\n"
        "/* %s_device_props: the current device's properties, queried once "
        "per\n * device and kept. */\n"
        "cudaError_t %s_device_props(%s_props *props);\n\n"
        "/* %s_error: why the last call of this thread returned\n"
        " * cudaErrorInvalidValue (\"\" when it did not). */\n"
        "const char *%s_error(void);\n\n"
        "#ifdef __cplusplus\n}\n#endif\n\n#endif\n",
        kevo__export_ndims(p) ? ", " : "", n, n, n, n, n);
    return KEVO_OK;
}

static void put_define_params(const kevo_candidate *v, kevo_buf *b)
{
    const kevo_vars *a = kevo_candidate_assignment(v);
    for (size_t i = 0; i < kevo_vars_count(a); i++)
        kevo__buf_printf(b, "#define %s %" PRId64 "\n", kevo_vars_name(a, i),
                         kevo_vars_value(a, i));
}

static void variant_tu(const kevo__export_pkg *p, size_t v,
                       const char *includes, kevo_buf *b)
{
    const char *n = p->name;
    const kevo_candidate *c = p->variants[v];
    const kevo_vars *a = kevo_candidate_assignment(c);
    kevo__buf_printf(b, "/*\n * %s_v%zu.cu: the kernels of variant %zu (", n, v,
                     v);
    for (size_t i = 0; i < kevo_vars_count(a); i++)
        kevo__buf_printf(b, "%s%s=%" PRId64, i ? " " : "", kevo_vars_name(a, i),
                         kevo_vars_value(a, i));
    if (!kevo_vars_count(a))
        kevo__buf_puts(b, "no parameters");
    kevo__buf_printf(b,
                     "), written by kevo export:\n"
                     " * the source with these macros, as kevo compiled it "
                     "with -D options.\n */\n"
                     "#include <cuda_runtime.h>\n%s\n"
                     "#define KEVO_EVAL 1\n",
                     includes);
    put_define_params(c, b);
    kevo__buf_printf(
        b, "\nnamespace %s_v%zu {\n#include \"%s_kernel.cuh\"\n}\n\n", n, v, n);
    kevo__buf_printf(b,
                     "/* Launch i's kernel, for cudaLaunchKernel. */\n"
                     "extern \"C\" const void *%s_v%zu_kernel(int i)\n{\n"
                     "    switch (i) {\n",
                     n, v);
    for (size_t i = 0; i < c->blocks.nlaunches; i++)
        kevo__buf_printf(
            b,
            "    case %zu:\n"
            "        return reinterpret_cast<const void *>(&%s_v%zu::%s);\n",
            i, n, v, c->blocks.launches[i].kernel);
    kevo__buf_puts(b, "    default: return nullptr;\n    }\n}\n");
}

/* The C expression that gives a fixed float scalar of type t. */
static void put_float_value(kevo_buf *b, kevo_dtype t, const char *value,
                            const char *var)
{
    switch (t) {
    case KEVO_DTYPE_F64:
        kevo__buf_printf(b, "    double %s = %s;\n", var, value);
        break;
    case KEVO_DTYPE_F16:
        kevo__buf_printf(b,
                         "    __half %s_h = __float2half_rn((float)%s);\n"
                         "    uint16_t %s;\n"
                         "    std::memcpy(&%s, &%s_h, 2);\n",
                         var, value, var, var, var);
        break;
    case KEVO_DTYPE_BF16:
        kevo__buf_printf(b,
                         "    __nv_bfloat16 %s_h = "
                         "__float2bfloat16_rn((float)%s);\n"
                         "    uint16_t %s;\n"
                         "    std::memcpy(&%s, &%s_h, 2);\n",
                         var, value, var, var, var);
        break;
    default:
        kevo__buf_printf(b, "    float %s = (float)%s;\n", var, value);
        break;
    }
}

static kevo_status launcher(const kevo__export_pkg *p, kevo_buf *b,
                            kevo_error *err)
{
    const char *n = p->name;
    const kevo_candidate *c = champ(p);
    const kevo_blocks *bl = &c->blocks;
    kevo__buf_printf(
        b,
        "/*\n * %s.cu: the launch function of the %s package, written by kevo "
        "export:\n"
        " * the device's properties once, the plan of the call (%s_plan.c), "
        "the\n"
        " * zero-filled scratch buffers, the opt-in to large dynamic shared "
        "memory,\n"
        " * and each kernel of the launch block in order on the caller's "
        "stream.\n */\n"
        "#include <atomic>\n#include <cstdio>\n#include <cstring>\n"
        "#include <mutex>\n\n#include <cuda_runtime.h>\n"
        "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n\n"
        "#include \"%s.h\"\n\n",
        n, n, n, n);
    for (size_t v = 0; v < p->nvariants; v++)
        kevo__buf_printf(b, "extern \"C\" const void *%s_v%zu_kernel(int i);\n",
                         n, v);
    kevo__buf_printf(b, "\nstatic const void *(*const variants[])(int) = {");
    for (size_t v = 0; v < p->nvariants; v++)
        kevo__buf_printf(b, "%s%s_v%zu_kernel", v ? ", " : "", n, v);
    kevo__buf_printf(
        b,
        "};\n\n"
        "static thread_local char last_error[320];\n\n"
        "const char *%s_error(void)\n{\n    return last_error;\n}\n\n"
        "#define MAX_DEVICES 64\n"
        "static std::mutex props_lock;\n"
        "static %s_props props_cache[MAX_DEVICES];\n"
        "static std::atomic<bool> props_ready[MAX_DEVICES];\n\n"
        "cudaError_t %s_device_props(%s_props *props)\n"
        "{\n"
        "    int dev = 0, x = 0, minor = 0;\n"
        "    cudaError_t e = cudaGetDevice(&dev);\n"
        "    if (e != cudaSuccess)\n"
        "        return e;\n"
        "    bool cached = dev >= 0 && dev < MAX_DEVICES;\n"
        "    if (cached && props_ready[dev].load(std::memory_order_acquire)) "
        "{\n"
        "        *props = props_cache[dev];\n"
        "        return cudaSuccess;\n"
        "    }\n"
        "    %s_props q;\n"
        "    std::memset(&q, 0, sizeof q);\n",
        n, n, n, n, n);
    static const struct {
        const char *prop, *attr;
    } attrs[] = {
        {"sm_count", "cudaDevAttrMultiProcessorCount"},
        {"warp_size", "cudaDevAttrWarpSize"},
        {"max_threads_per_block", "cudaDevAttrMaxThreadsPerBlock"},
        {"max_threads_per_sm", "cudaDevAttrMaxThreadsPerMultiProcessor"},
        {"max_smem_per_block", "cudaDevAttrMaxSharedMemoryPerBlockOptin"},
        {"smem_per_sm", "cudaDevAttrMaxSharedMemoryPerMultiprocessor"},
        {"regs_per_sm", "cudaDevAttrMaxRegistersPerMultiprocessor"},
        {"l2_bytes", "cudaDevAttrL2CacheSize"},
        {"cc", "cudaDevAttrComputeCapabilityMajor"},
    };
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(attrs); i++)
        kevo__buf_printf(b,
                         "    if ((e = cudaDeviceGetAttribute(&x, %s, dev)) != "
                         "cudaSuccess)\n"
                         "        return e;\n"
                         "    q.%s = x;\n",
                         attrs[i].attr, attrs[i].prop);
    kevo__buf_printf(
        b,
        "    if ((e = cudaDeviceGetAttribute(&minor, "
        "cudaDevAttrComputeCapabilityMinor,\n"
        "                                    dev)) != cudaSuccess)\n"
        "        return e;\n"
        "    q.cc = q.cc * 10 + minor;\n"
        "    if (cached) {\n"
        "        std::lock_guard<std::mutex> hold(props_lock);\n"
        "        props_cache[dev] = q;\n"
        "        props_ready[dev].store(true, std::memory_order_release);\n"
        "    }\n"
        "    *props = q;\n"
        "    return cudaSuccess;\n"
        "}\n\n"
        "static cudaError_t plan_call(const int64_t *dims, %s_plan_t *plan)\n"
        "{\n"
        "    %s_props props;\n"
        "    last_error[0] = '\\0';\n"
        "    cudaError_t e = %s_device_props(&props);\n"
        "    if (e != cudaSuccess)\n"
        "        return e;\n"
        "    if (%s_plan_dims(dims, &props, plan) != 0) {\n"
        "        std::snprintf(last_error, sizeof last_error, \"%s: %%s\", "
        "plan->error);\n"
        "        return cudaErrorInvalidValue;\n"
        "    }\n"
        "    return cudaSuccess;\n"
        "}\n\n"
        "static cudaError_t launch(const void *f, const %s_launch_plan *l, "
        "void **args,\n"
        "                          cudaStream_t stream)\n"
        "{\n"
        "    if (l->smem > 48 * 1024) {\n"
        "        cudaError_t e = cudaFuncSetAttribute(\n"
        "            f, cudaFuncAttributeMaxDynamicSharedMemorySize, "
        "(int)l->smem);\n"
        "        if (e != cudaSuccess)\n"
        "            return e;\n"
        "    }\n"
        "    return cudaLaunchKernel(f, dim3(l->grid[0], l->grid[1], "
        "l->grid[2]),\n"
        "                            dim3(l->block[0], l->block[1], "
        "l->block[2]), args,\n"
        "                            (size_t)l->smem, stream);\n"
        "}\n\n",
        n, n, n, n, n, n);
    kevo__buf_printf(b, "cudaError_t %s_workspace_size(", n);
    put_dims_args(p, b);
    kevo__buf_printf(b, "%ssize_t *bytes)\n{\n",
                     kevo__export_ndims(p) ? ", " : "");
    put_dims_array(p, b);
    kevo__buf_printf(b,
                     "    %s_plan_t kx_plan;\n"
                     "    cudaError_t kx_e = plan_call(kx_dims, &kx_plan);\n"
                     "    if (kx_e == cudaSuccess)\n"
                     "        *bytes = (size_t)kx_plan.workspace_bytes;\n"
                     "    return kx_e;\n}\n\n"
                     "cudaError_t %s(",
                     n, n);
    kevo_status rc = kevo__export_params(p, b, err);
    if (rc != KEVO_OK)
        return rc;
    kevo__buf_puts(b, ",\n    void *workspace, size_t workspace_bytes, "
                      "cudaStream_t stream)\n{\n");
    put_dims_array(p, b);
    kevo__buf_printf(
        b,
        "    %s_plan_t kx_plan;\n"
        "    cudaError_t kx_e = plan_call(kx_dims, &kx_plan);\n"
        "    if (kx_e != cudaSuccess)\n"
        "        return kx_e;\n"
        "    if (kx_plan.workspace_bytes > 0 &&\n"
        "        (!workspace || workspace_bytes < kx_plan.workspace_bytes)) {\n"
        "        std::snprintf(last_error, sizeof last_error,\n"
        "                      \"%s: the shape needs a workspace of %%llu "
        "bytes "
        "(%s_workspace_size), \"\n"
        "                      \"and %%zu were given\",\n"
        "                      (unsigned long long)kx_plan.workspace_bytes, "
        "workspace ? workspace_bytes : 0);\n"
        "        return cudaErrorInvalidValue;\n"
        "    }\n"
        "%s",
        n, n, n, bl->nscratch ? "" : "    (void)workspace;\n");
    if (bl->nscratch)
        kevo__buf_printf(b, "    void *kx_scratch[%zu];\n", bl->nscratch);
    for (size_t s = 0; s < bl->nscratch; s++) {
        kevo__buf_printf(
            b,
            "    kx_scratch[%zu] = static_cast<char *>(workspace) + "
            "kx_plan.scratch_offset[%zu]; /* %s */\n",
            s, s, bl->scratch[s].name);
        if (bl->scratch[s].zero)
            kevo__buf_printf(
                b,
                "    if ((kx_e = cudaMemsetAsync(kx_scratch[%zu], 0, "
                "kx_plan.scratch_bytes[%zu], stream)) !=\n"
                "        cudaSuccess)\n"
                "        return kx_e;\n",
                s, s);
    }
    /* Every task argument a launch passes, as the storage its kernel
     * parameter points to. */
    size_t ntask = kevo_task_arg_count(p->task);
    bool *used = calloc(ntask + 1, sizeof *used);
    if (!used)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    for (size_t l = 0; l < bl->nlaunches; l++) {
        kevo__resolved_arg *args = NULL;
        size_t nargs = 0;
        rc = kevo__launch_args(p->task, c, l, NULL, &args, &nargs, err);
        for (size_t k = 0; rc == KEVO_OK && k < nargs; k++) {
            if (args[k].kind == KEVO__ARG_BUFFER ||
                args[k].kind == KEVO__ARG_SCALAR)
                used[args[k].index] = true;
        }
        free(args);
        if (rc != KEVO_OK) {
            free(used);
            return rc;
        }
    }
    for (size_t i = 0; i < ntask; i++) {
        kevo_arg_info info = {.size = sizeof info};
        if ((rc = kevo_task_arg_info(p->task, i, &info)) != KEVO_OK) {
            free(used);
            return rc;
        }
        char id[80], var[96];
        const char *name = kevo__export_ident(info.name, id, sizeof id);
        snprintf(var, sizeof var, "kx_arg%zu", i);
        if (!used[i]) {
            if (info.role != KEVO_ROLE_SCALAR || !info.value)
                kevo__buf_printf(b, "    (void)%s; /* no launch passes it */\n",
                                 name);
        } else if (info.role != KEVO_ROLE_SCALAR)
            kevo__buf_printf(b,
                             "    void *%s = const_cast<void *>("
                             "static_cast<const void *>(%s));\n",
                             var, name);
        else if (!info.value)
            kevo__buf_printf(b, "    %s %s = %s;\n",
                             kevo__export_ctype(info.type), var, name);
        else if (kevo_dtype_is_float(info.type))
            put_float_value(b, info.type, info.value, var);
        else
            kevo__buf_printf(b, "    %s %s = (%s)kx_plan.scalar[%zu];\n",
                             kevo__export_ctype(info.type), var,
                             kevo__export_ctype(info.type), i);
    }
    free(used);
    kevo__buf_printf(b, "    const void *(*kx_kernel)(int) = "
                        "variants[kx_plan.variant];\n");
    for (size_t l = 0; l < bl->nlaunches; l++) {
        kevo__resolved_arg *args = NULL;
        size_t nargs = 0;
        rc = kevo__launch_args(p->task, c, l, NULL, &args, &nargs, err);
        if (rc != KEVO_OK)
            return rc;
        kevo__buf_printf(b, "    { /* %s:%d: %s */\n", p->origin,
                         bl->launches[l].line, bl->launches[l].kernel);
        for (size_t k = 0; k < nargs; k++) {
            if (args[k].kind != KEVO__ARG_VALUE)
                continue;
            kevo__buf_printf(
                b, "        %s kx_v%zu = (%s)kx_plan.launch[%zu].value[%zu];\n",
                kevo__export_ctype(args[k].type), k,
                kevo__export_ctype(args[k].type), l, k);
        }
        kevo__buf_printf(b, "        void *kx_args[%zu] = {",
                         nargs ? nargs : 1);
        for (size_t k = 0; k < nargs; k++) {
            const char *sep = k ? ", " : "";
            switch (args[k].kind) {
            case KEVO__ARG_BUFFER:
            case KEVO__ARG_SCALAR:
                kevo__buf_printf(b, "%s&kx_arg%zu", sep, args[k].index);
                break;
            case KEVO__ARG_SCRATCH:
                kevo__buf_printf(b, "%s&kx_scratch[%zu]", sep, args[k].index);
                break;
            default: kevo__buf_printf(b, "%s&kx_v%zu", sep, k); break;
            }
        }
        if (!nargs)
            kevo__buf_puts(b, "nullptr");
        kevo__buf_printf(
            b,
            "};\n"
            "        if ((kx_e = launch(kx_kernel(%zu), &kx_plan.launch[%zu], "
            "kx_args, stream)) !=\n"
            "            cudaSuccess)\n"
            "            return kx_e;\n"
            "    }\n",
            l, l);
        free(args);
    }
    kevo__buf_puts(b, "    return cudaSuccess;\n}\n");
    return KEVO_OK;
}

static void makefile(const kevo__export_pkg *p, kevo_buf *b)
{
    const char *n = p->name;
    kevo__buf_printf(
        b,
        "# Makefile: builds the %s package with nvcc (written by kevo "
        "export).\n"
        "# ARCH is the target kevo compiled the kernel for; NVCCFLAGS adds "
        "options.\n"
        "#   make                 lib%s.a and lib%s.so\n"
        "#   make ARCH=sm_90a     another target\n"
        "# Link lib%s.a with -lcudart -lm (or nvcc), or load lib%s.so.\n"
        "NVCC ?= nvcc\n"
        "ARCH ?= %s\n"
        "NVCCFLAGS ?= -O3\n"
        "FLAGS = -std=c++17 -arch=$(ARCH) --expt-relaxed-constexpr "
        "-Xcompiler -fPIC\n\n"
        "OBJS = %s.o %s_plan.o",
        n, n, n, n, n, p->arch, n, n);
    for (size_t v = 0; v < p->nvariants; v++)
        kevo__buf_printf(b, " %s_v%zu.o", n, v);
    kevo__buf_printf(
        b,
        "\n\nall: lib%s.a lib%s.so\n\n"
        "lib%s.a: $(OBJS)\n\tar rcs $@ $(OBJS)\n\n"
        "lib%s.so: $(OBJS)\n\t$(NVCC) -shared -arch=$(ARCH) -o $@ $(OBJS)\n\n"
        "%%.o: %%.cu %s.h %s_plan.h %s_kernel.cuh\n"
        "\t$(NVCC) $(FLAGS) $(NVCCFLAGS) -c $< -o $@\n\n"
        "%s_plan.o: %s_plan.c %s_plan.h\n"
        "\t$(NVCC) -Xcompiler -fPIC $(NVCCFLAGS) -c $< -o $@\n\n"
        "clean:\n\trm -f $(OBJS) lib%s.a lib%s.so\n\n"
        ".PHONY: all clean\n",
        n, n, n, n, n, n, n, n, n, n, n, n);
}

kevo_status kevo__export_cuda(const kevo__export_pkg *p, const char *dir,
                              bool with_makefile, kevo_error *err)
{
    kevo_buf includes = {0}, b = {0};
    char *kernel = NULL, *file = NULL;
    kevo_status rc =
        transform(kevo_candidate_source(champ(p)), &kernel, &includes);
    if (rc != KEVO_OK)
        return kevo__error_set(err, rc, "out of memory");
#define WRITE(fmt, ...)                                                        \
    do {                                                                       \
        free(file);                                                            \
        file = kevo__asprintf(fmt, __VA_ARGS__);                               \
        if (rc == KEVO_OK && (b.failed || !file))                              \
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");           \
        if (rc == KEVO_OK)                                                     \
            rc = kevo__export_write(dir, file, b.data ? b.data : "", err);     \
        kevo__buf_free(&b);                                                    \
    } while (0)
    kevo__buf_puts(&b, kernel);
    WRITE("%s_kernel.cuh", p->name);
    for (size_t v = 0; rc == KEVO_OK && v < p->nvariants; v++) {
        variant_tu(p, v, includes.data ? includes.data : "", &b);
        WRITE("%s_v%zu.cu", p->name, v);
    }
    if (rc == KEVO_OK && (rc = header(p, &b, err)) == KEVO_OK)
        WRITE("%s.h", p->name);
    if (rc == KEVO_OK && (rc = launcher(p, &b, err)) == KEVO_OK)
        WRITE("%s.cu", p->name);
    if (rc == KEVO_OK && with_makefile) {
        makefile(p, &b);
        WRITE("%s", "Makefile");
    }
#undef WRITE
    kevo__buf_free(&b);
    kevo__buf_free(&includes);
    free(kernel);
    free(file);
    return rc;
}

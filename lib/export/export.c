/*
 * export.c: kevo_export_run() and kevo_export_candidate(). A run
 * directory (task.json, best.cu, summary.json, best.dispatch.json) or a
 * candidate in memory becomes a package: the variants the dispatch table
 * names, the table itself, and what the README reports; export_plan.c,
 * export_cuda.c and export_torch.c write the files.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "export_private.h"
#include <kevo/export.h>

/* ---- small helpers shared by the writers ----------------------------------
 */

const char *kevo__export_ctype(kevo_dtype t)
{
    switch (t) {
    case KEVO_DTYPE_F32: return "float";
    case KEVO_DTYPE_F64: return "double";
    case KEVO_DTYPE_F16:
    case KEVO_DTYPE_BF16:
    case KEVO_DTYPE_U16: return "uint16_t";
    case KEVO_DTYPE_I8: return "int8_t";
    case KEVO_DTYPE_U8: return "uint8_t";
    case KEVO_DTYPE_I16: return "int16_t";
    case KEVO_DTYPE_I32: return "int32_t";
    case KEVO_DTYPE_U32: return "uint32_t";
    case KEVO_DTYPE_I64: return "int64_t";
    case KEVO_DTYPE_U64: return "uint64_t";
    default: return "int";
    }
}

void kevo__export_c_string(kevo_buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            kevo__buf_printf(b, "\\%c", c);
        else if (c == '%')
            kevo__buf_puts(b, "%%"); /* the plan's messages are formats */
        else if (c < 0x20 || c == 0x7f)
            kevo__buf_printf(b, "\\%03o", c);
        else
            kevo__buf_append(b, (const char *)&c, 1);
    }
}

/* C and C++ keywords, and the names the generated code uses beside the
 * task's. */
static const char *const reserved[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
    "bool", "break", "case", "catch", "char", "char16_t", "char32_t", "char8_t",
    "class", "co_await", "co_return", "co_yield", "compl", "concept", "const",
    "const_cast", "consteval", "constexpr", "constinit", "continue", "decltype",
    "default", "delete", "do", "double", "dynamic_cast", "else", "enum",
    "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
    "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept",
    "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private",
    "protected", "public", "register", "reinterpret_cast", "requires",
    "restrict", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this",
    "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
    "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t",
    "while", "xor", "xor_eq",
    /* the generated code's own */
    "bytes", "plan", "props", "stream", "workspace", "workspace_bytes"};

const char *kevo__export_ident(const char *name, char *buf, size_t size)
{
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(reserved); i++) {
        if (strcmp(name, reserved[i]) == 0) {
            snprintf(buf, size, "%s_", name);
            return buf;
        }
    }
    if (strncmp(name, "kx_", 3) == 0) {
        snprintf(buf, size, "%s_", name);
        return buf;
    }
    return name;
}

kevo_status kevo__export_write(const char *dir, const char *file,
                               const char *text, kevo_error *err)
{
    char *path = kevo__path_join(dir, file);
    if (!path)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_status rc = kevo__write_file_atomic(path, text, strlen(text), err);
    free(path);
    return rc;
}

/* ---- the package ----------------------------------------------------------
 */

static void pkg_free(kevo__export_pkg *p)
{
    for (size_t i = 0; i < p->nvariants; i++)
        kevo_candidate_free(p->variants[i]);
    free(p->variants);
    free(p->name);
    free(p->arch);
    free(p->origin);
    free(p->train_dims);
    free(p->held_dims);
    free(p->train_variant);
    free(p->held_variant);
    free(p->unsafe);
    free(p->readme);
    memset(p, 0, sizeof *p);
}

/* The package's name: name when it is an identifier that needs no
 * change, else (name NULL) the task's name made one. */
static kevo_status pkg_name(kevo__export_pkg *p, const char *name,
                            kevo_error *err)
{
    if (name) {
        char id[80];
        if (!kevo__is_identifier(name) ||
            kevo__export_ident(name, id, sizeof id) != name)
            return kevo__error_set(err, KEVO_EINVAL,
                                   "package name '%s': a C identifier of at "
                                   "most 63 characters that is no keyword",
                                   name);
        p->name = kevo__strdup(name);
    } else {
        const char *t = kevo_task_name(p->task);
        kevo_buf b = {0};
        if (!(t[0] >= 'a' && t[0] <= 'z') && !(t[0] >= 'A' && t[0] <= 'Z') &&
            t[0] != '_')
            kevo__buf_puts(&b, "k_");
        for (size_t i = 0; t[i] && b.len < KEVO__IDENT_MAX; i++) {
            char c = t[i];
            bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      (c >= '0' && c <= '9') || c == '_';
            kevo__buf_append(&b, ok ? &c : "_", 1);
        }
        char id[80];
        if (b.data && kevo__export_ident(b.data, id, sizeof id) != b.data)
            kevo__buf_puts(&b, "_");
        p->name = kevo__buf_take(&b);
    }
    return p->name ? KEVO_OK
                   : kevo__error_set(err, KEVO_ENOMEM, "out of memory");
}

/* The index of the variant with the parameters in obj (a JSON object of
 * the dispatch table), added when new. */
static kevo_status variant_of(kevo__export_pkg *p, const json_t *obj,
                              const char *where, size_t *index, kevo_error *err)
{
    if (!json_is_object(obj))
        return kevo__error_set(err, KEVO_EINVALID,
                               "dispatch table: %s: params is not an object",
                               where);
    const kevo_vars *ca = kevo_candidate_assignment(p->variants[0]);
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *)obj, key, v) {
        int64_t x;
        if (!json_is_integer(v) || kevo_vars_get(ca, key, &x) != KEVO_OK)
            return kevo__error_set(err, KEVO_EINVALID,
                                   "dispatch table: %s: parameter '%s' is "
                                   "not an integer parameter of the champion",
                                   where, key);
    }
    for (size_t i = 0; i < p->nvariants; i++) {
        const kevo_vars *a = kevo_candidate_assignment(p->variants[i]);
        bool same = true;
        for (size_t k = 0; same && k < kevo_vars_count(a); k++) {
            json_t *x = json_object_get(obj, kevo_vars_name(a, k));
            int64_t want =
                x ? (int64_t)json_integer_value(x) : kevo_vars_value(ca, k);
            same = want == kevo_vars_value(a, k);
        }
        if (same) {
            *index = i;
            return KEVO_OK;
        }
    }
    kevo_candidate **grown =
        realloc(p->variants, (p->nvariants + 1) * sizeof *grown);
    if (!grown)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    p->variants = grown;
    kevo_candidate *c = kevo_candidate_copy(p->variants[0]);
    if (!c)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    json_object_foreach ((json_t *)obj, key, v) {
        kevo_error inner = KEVO__ERROR_INIT;
        if (kevo_candidate_set_param(c, key, (int64_t)json_integer_value(v),
                                     &inner) != KEVO_OK) {
            kevo_candidate_free(c);
            return kevo__error_set(err, KEVO_EINVALID, "dispatch table: %s: %s",
                                   where, inner.text);
        }
    }
    *index = p->nvariants;
    p->variants[p->nvariants++] = c;
    return KEVO_OK;
}

/* The dims of a shape of the table, in the task's order. */
static kevo_status shape_dims(const kevo__export_pkg *p, const json_t *obj,
                              const char *where, int64_t *dims, kevo_error *err)
{
    for (size_t d = 0; d < kevo__export_ndims(p); d++) {
        const char *name = kevo_task_dim_name(p->task, d);
        json_t *x = json_object_get(obj, "dims");
        x = json_is_object(x) ? json_object_get(x, name) : NULL;
        if (!json_is_integer(x))
            return kevo__error_set(err, KEVO_EINVALID,
                                   "dispatch table: %s: no integer dim '%s'",
                                   where, name);
        dims[d] = (int64_t)json_integer_value(x);
    }
    return KEVO_OK;
}

static kevo_status read_dispatch(kevo__export_pkg *p, const char *text,
                                 kevo_error *err)
{
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    if (!json_is_object(root)) {
        json_decref(root);
        return kevo__error_set(
            err, KEVO_EPARSE, "dispatch table: line %d, column %d: %s", je.line,
            je.column, root ? "not a JSON object" : je.text);
    }
    kevo_status rc = KEVO_OK;
    const char *rule = json_string_value(json_object_get(root, "rule"));
    json_t *shapes = json_object_get(root, "shapes");
    json_t *held = json_object_get(root, "held_out");
    if (!rule || strcmp(rule, "nearest_training_shape") != 0 ||
        !json_is_array(shapes) || (held && !json_is_array(held))) {
        rc = kevo__error_set(err, KEVO_EINVALID,
                             "dispatch table: expected the rule "
                             "\"nearest_training_shape\" with \"shapes\" and "
                             "\"held_out\" arrays");
        goto done;
    }
    size_t nd = kevo__export_ndims(p), nt = json_array_size(shapes),
           nh = json_array_size(held);
    p->dispatch = true;
    p->ntrain = nt;
    p->nheld = nh;
    p->train_dims = calloc(nt * nd + 1, sizeof(int64_t));
    p->held_dims = calloc(nh * nd + 1, sizeof(int64_t));
    p->train_variant = calloc(nt + 1, sizeof(size_t));
    p->held_variant = calloc(nh + 1, sizeof(size_t));
    if (!p->train_dims || !p->held_dims || !p->train_variant ||
        !p->held_variant) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    char where[64];
    for (size_t i = 0; rc == KEVO_OK && i < nt; i++) {
        json_t *s = json_array_get(shapes, i);
        snprintf(where, sizeof where, "shapes[%zu]", i);
        rc = shape_dims(p, s, where, &p->train_dims[i * nd], err);
        if (rc == KEVO_OK)
            rc = variant_of(p, json_object_get(s, "params"), where,
                            &p->train_variant[i], err);
    }
    for (size_t i = 0; rc == KEVO_OK && i < nh; i++) {
        json_t *s = json_array_get(held, i);
        snprintf(where, sizeof where, "held_out[%zu]", i);
        rc = shape_dims(p, s, where, &p->held_dims[i * nd], err);
        if (rc == KEVO_OK)
            rc = variant_of(p, json_object_get(s, "params"), where,
                            &p->held_variant[i], err);
    }
    if (rc != KEVO_OK)
        goto done;
    if (!(p->unsafe = calloc(p->nvariants, sizeof(bool)))) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    /* A held-out shape the table found wrong for its nearest training
     * shape's variant marks that variant. */
    for (size_t i = 0; i < nh; i++) {
        json_t *s = json_array_get(held, i);
        json_t *near = json_object_get(s, "nearest");
        if (json_is_false(json_object_get(s, "correct")) &&
            json_is_integer(near) && json_integer_value(near) >= 0 &&
            (size_t)json_integer_value(near) < nt) {
            size_t v = p->train_variant[json_integer_value(near)];
            if (v != 0)
                p->unsafe[v] = true;
        }
    }
done:
    json_decref(root);
    return rc;
}

/* Everything but the run's own lines: the name, the variants, the
 * table. */
kevo_status kevo__export_supported(const kevo_candidate *cand, kevo_error *err)
{
    const kevo_blocks *b = &cand->blocks;
    char where[512];
    if (b->ntensormaps > 0)
        return kevo__error_set_at(
            err, KEVO_EINVALID, cand->origin, b->tensormaps[0].line, 0,
            "%stensormap '%s': kevo export does not yet encode tensor maps in "
            "the launchers it writes, so it cannot export this kernel",
            kevo__launch_place(cand, b->tensormaps[0].line, where,
                               sizeof where),
            b->tensormaps[0].name);
    for (size_t i = 0; i < b->nlaunches; i++) {
        const kevo_launch *l = &b->launches[i];
        const char *what = l->cluster[0] ? "cluster()"
                           : l->pdl      ? "pdl"
                           : l->cond     ? "if"
                                         : NULL;
        if (what)
            return kevo__error_set_at(
                err, KEVO_EINVALID, cand->origin, l->line, 0,
                "%slaunch of '%s' has %s: kevo export does not yet write "
                "launchers for cluster, pdl or conditional launches, so it "
                "cannot export this kernel",
                kevo__launch_place(cand, l->line, where, sizeof where),
                l->kernel, what);
    }
    return KEVO_OK;
}

static kevo_status pkg_init(kevo__export_pkg *p, const kevo_task *task,
                            const kevo_candidate *champion,
                            const char *dispatch, const char *name,
                            const char *arch, const char *origin,
                            kevo_error *err)
{
    p->task = task;
    kevo_status rc = pkg_name(p, name, err);
    if (rc != KEVO_OK)
        return rc;
    p->arch = kevo__strdup(arch ? arch : "native");
    if (!origin)
        origin = kevo_candidate_origin(champion);
    p->origin = kevo__strdup(origin ? origin : "best.cu");
    p->variants = calloc(1, sizeof *p->variants);
    if (!p->arch || !p->origin || !p->variants ||
        !(p->variants[0] = kevo_candidate_copy(champion)))
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    p->nvariants = 1;
    rc = kevo__export_supported(champion, err);
    if (rc != KEVO_OK)
        return rc;
    /* The launch block must still resolve against the task. */
    for (size_t i = 0; i < kevo_candidate_launch_count(champion); i++) {
        kevo__resolved_arg *args = NULL;
        size_t n = 0;
        rc = kevo__launch_args(task, champion, i, NULL, &args, &n, err);
        free(args);
        if (rc != KEVO_OK)
            return rc;
    }
    if (dispatch)
        return read_dispatch(p, dispatch, err);
    p->unsafe = calloc(1, sizeof(bool));
    return p->unsafe ? KEVO_OK
                     : kevo__error_set(err, KEVO_ENOMEM, "out of memory");
}

/* ---- the README -----------------------------------------------------------
 */

static void readme(const kevo__export_pkg *p, unsigned targets, kevo_buf *b)
{
    const char *n = p->name;
    kevo__buf_printf(b, "# %s: the kevo champion of task %s\n\n", n,
                     kevo_task_name(p->task));
    if (p->readme)
        kevo__buf_puts(b, p->readme);
    kevo__buf_printf(b, "\n## The function\n\n```c\ncudaError_t %s(", n);
    kevo__export_params(p, b, NULL);
    kevo__buf_puts(b, ",\n    void *workspace, size_t workspace_bytes, "
                      "cudaStream_t stream);\n```\n\n");
    kevo__buf_printf(
        b,
        "The task's arguments in order (buffers as device pointers, 16-byte "
        "aligned;\nf16 and bf16 as `void *`, their scalars as the bits in a "
        "`uint16_t`), without\nthe scalars that have a fixed value (they "
        "follow from the dims), then the\ndims, a workspace of "
        "`%s_workspace_size(dims..., &bytes)` bytes (NULL when\nthat is 0) and "
        "the stream. It evaluates the kernel's `kevo:launch` block for the\n"
        "shape (`%s_plan.c`, plain C: 64-bit arithmetic that refuses "
        "overflow and\ndivision by zero as kevo does), picks the parameters by "
        "the dispatch table,\nzero-fills the scratch buffers that ask for it, "
        "opts kernels in to dynamic\nshared memory above 48 KiB and launches "
        "every kernel in order on the stream.\nA shape the launch block "
        "refuses returns `cudaErrorInvalidValue`, and\n`%s_error()` says "
        "why.\n\n",
        n, n, n);
    kevo__buf_printf(b, "Parameter variants (%zu):\n\n", p->nvariants);
    for (size_t v = 0; v < p->nvariants; v++) {
        const kevo_vars *a = kevo_candidate_assignment(p->variants[v]);
        kevo__buf_printf(b, "- %zu:", v);
        for (size_t i = 0; i < kevo_vars_count(a); i++)
            kevo__buf_printf(b, " %s=%" PRId64, kevo_vars_name(a, i),
                             kevo_vars_value(a, i));
        if (!kevo_vars_count(a))
            kevo__buf_puts(b, " (no parameters)");
        kevo__buf_puts(b, v == 0 ? " (the champion's)" : "");
        if (p->unsafe && p->unsafe[v])
            kevo__buf_puts(b, " (wrong at a held-out shape: used only at the "
                              "training shapes it won)");
        kevo__buf_puts(b, "\n");
    }
    kevo__buf_puts(
        b,
        "\nWhich variant runs: "
        "a training or held-out shape of the dispatch table gets the variant "
        "the\ntable gives it; any other shape the variant of the nearest "
        "training shape\n(least sum of squared differences of the log2 of the "
        "dims), unless that\nvariant was wrong at a held-out shape; a variant "
        "whose `require` constraints\nfail at the shape gives way to variant "
        "0. Without a table, variant 0 runs.\n\n"
        "## How it is compiled\n\n"
        "The kernel source is kept once, in `");
    kevo__buf_printf(
        b,
        "%s_kernel.cuh` (its `#include` lines moved to\nthe top of each "
        "translation unit, `extern \"C\"` dropped); each variant is its\nown "
        "translation unit, `%s_vK.cu`, that `#define`s the variant's "
        "parameters and\n`KEVO_EVAL` (as kevo's `-D` options did) and "
        "includes the source inside\n`namespace %s_vK`. nvcc compiles with "
        "`-std=c++17` and no fast-math option,\nas kevo's NVRTC did; unlike "
        "NVRTC's `-default-device`, nvcc takes a function\nwithout "
        "`__device__` for a host function, so a kernel that relies on that "
        "needs\nthe annotation added.\n\n",
        n, n, n);
    if (targets & KEVO_EXPORT_C)
        kevo__buf_printf(b,
                         "## C and C++\n\n```sh\nmake            # lib%s.a and "
                         "lib%s.so, for %s (make ARCH=... for another)\n"
                         "cc -c app.c -I. -I/usr/local/cuda/include\n"
                         "nvcc app.o lib%s.a -o app\n```\n\n",
                         n, n, p->arch, n);
    if (targets & KEVO_EXPORT_TORCH)
        kevo__buf_printf(
            b,
            "## PyTorch\n\n```python\nimport sys; sys.path.insert(0, "
            "\"THIS_DIR\")\nimport %s\nout = %s.%s(tensors..., dims...)  # "
            "the arguments as above; dims by keyword\n```\n\n"
            "The first call builds the extension with "
            "torch.utils.cpp_extension.load (from\n`%s/csrc`). It checks "
            "dtypes, devices, contiguity, 16-byte alignment and\nelement "
            "counts, runs on the current CUDA stream, allocates the workspace\n"
            "with torch.empty, and returns the outputs.\n",
            n, n, n, n);
}

/* ---- writing --------------------------------------------------------------
 */

static kevo_status pkg_write(const kevo__export_pkg *p, const char *out_dir,
                             unsigned targets, kevo_error *err)
{
    kevo_status rc = kevo__mkdir_p(out_dir, err);
    if (rc == KEVO_OK && (targets & KEVO_EXPORT_C)) {
        rc = kevo__export_plan(p, out_dir, err);
        if (rc == KEVO_OK)
            rc = kevo__export_cuda(p, out_dir, true, err);
    }
    if (rc == KEVO_OK && (targets & KEVO_EXPORT_TORCH)) {
        char *pkg = kevo__path_join(out_dir, p->name);
        char *csrc = pkg ? kevo__path_join(pkg, "csrc") : NULL;
        if (!csrc)
            rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        if (rc == KEVO_OK)
            rc = kevo__mkdir_p(csrc, err);
        if (rc == KEVO_OK)
            rc = kevo__export_plan(p, csrc, err);
        if (rc == KEVO_OK)
            rc = kevo__export_cuda(p, csrc, false, err);
        if (rc == KEVO_OK)
            rc = kevo__export_torch(p, pkg, err);
        free(pkg);
        free(csrc);
    }
    if (rc != KEVO_OK)
        return rc;
    kevo_buf b = {0};
    readme(p, targets, &b);
    if (b.failed)
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    else
        rc = kevo__export_write(out_dir, "README.md", b.data, err);
    kevo__buf_free(&b);
    return rc;
}

static kevo_status check_args(const char *out_dir, const char *name,
                              unsigned targets, kevo_error *err)
{
    char id[80];
    if (name && (!kevo__is_identifier(name) ||
                 kevo__export_ident(name, id, sizeof id) != name))
        return kevo__error_set(err, KEVO_EINVAL,
                               "package name '%s': a C identifier of at "
                               "most 63 characters that is no keyword",
                               name);
    if (!out_dir || !*out_dir)
        return kevo__error_set(err, KEVO_EINVAL, "no output directory");
    if (!targets || (targets & ~(unsigned)(KEVO_EXPORT_C | KEVO_EXPORT_TORCH)))
        return kevo__error_set(err, KEVO_EINVAL,
                               "targets 0x%x: KEVO_EXPORT_C, "
                               "KEVO_EXPORT_TORCH or both",
                               targets);
    return KEVO_OK;
}

kevo_status kevo_export_candidate(const kevo_task *task,
                                  const kevo_candidate *champion,
                                  const char *dispatch_json,
                                  const char *out_dir, const char *name,
                                  const char *arch, unsigned targets,
                                  kevo_error *err)
{
    if (!task || !champion)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_export_candidate: NULL task or champion");
    kevo_status rc = check_args(out_dir, name, targets, err);
    if (rc != KEVO_OK)
        return rc;
    kevo__export_pkg p = {0};
    rc = pkg_init(&p, task, champion, dispatch_json, name, arch, NULL, err);
    if (rc == KEVO_OK)
        rc = pkg_write(&p, out_dir, targets, err);
    pkg_free(&p);
    return rc;
}

/* ---- a run directory ------------------------------------------------------
 */

/* The target kevo compiled for on a device of this name (as NVRTC's
 * -arch, the arch-specific one from compute capability 9.0 on). */
static const char *arch_of(const char *device)
{
    static const struct {
        const char *part, *arch;
    } table[] = {
        {"GB200", "sm_100a"},   {"B200", "sm_100a"}, {"B100", "sm_100a"},
        {"GH200", "sm_90a"},    {"H200", "sm_90a"},  {"H100", "sm_90a"},
        {"H800", "sm_90a"},     {"H20", "sm_90a"},   {"L40", "sm_89"},
        {"L4", "sm_89"},        {"RTX 40", "sm_89"}, {"RTX 6000 Ada", "sm_89"},
        {"A100", "sm_80"},      {"A800", "sm_80"},   {"A30", "sm_80"},
        {"A40", "sm_86"},       {"A10", "sm_86"},    {"RTX 30", "sm_86"},
        {"RTX A6000", "sm_86"}, {"V100", "sm_70"},   {"T4", "sm_75"},
    };
    for (size_t i = 0; device && i < KEVO_ARRAY_SIZE(table); i++) {
        if (strstr(device, table[i].part))
            return table[i].arch;
    }
    return "native";
}

static char *read_optional(const char *dir, const char *file, kevo_status *rc,
                           kevo_error *err)
{
    char *path = kevo__path_join(dir, file), *text = NULL;
    if (!path) {
        *rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        return NULL;
    }
    kevo_error inner = KEVO__ERROR_INIT;
    kevo_status r = kevo__read_file(path, true, &text, NULL, &inner);
    if (r != KEVO_OK && r != KEVO_ENOENT)
        *rc = kevo__error_wrap(err, &inner, "%s", "");
    free(path);
    return r == KEVO_OK ? text : NULL;
}

/* What README.md says about the run. */
static char *run_lines(const json_t *summary, const json_t *plan,
                       const char *arch)
{
    kevo_buf b = {0};
    const json_t *ch = json_object_get(summary, "champion");
    const json_t *gate = json_object_get(ch, "gate");
    const char *fname =
        json_string_value(json_object_get(summary, "fitness_name"));
    kevo__buf_printf(&b,
                     "- fitness: %.4f (%s), candidate %" JSON_INTEGER_FORMAT
                     ", found by %s\n",
                     json_number_value(json_object_get(ch, "fitness")),
                     fname ? fname : "roofline",
                     json_integer_value(json_object_get(ch, "id")),
                     json_string_value(json_object_get(ch, "operator"))
                         ? json_string_value(json_object_get(ch, "operator"))
                         : "seed");
    if (json_is_object(gate)) {
        kevo__buf_printf(&b, "- held-out gate: %s",
                         json_is_true(json_object_get(gate, "passed"))
                             ? "passed"
                             : "failed");
        if (json_is_number(json_object_get(gate, "held_out_fitness")))
            kevo__buf_printf(
                &b, ", held-out fitness %.4f",
                json_number_value(json_object_get(gate, "held_out_fitness")));
        kevo__buf_puts(&b, "\n");
    } else {
        kevo__buf_puts(&b, "- held-out gate: not run\n");
    }
    const char *dev = json_string_value(json_object_get(summary, "device"));
    kevo__buf_printf(&b, "- device: %s (built for %s)\n", dev ? dev : "unknown",
                     arch);
    const char *cmd = json_string_value(json_object_get(plan, "command"));
    if (!cmd)
        cmd = json_string_value(json_object_get(summary, "command"));
    if (cmd)
        kevo__buf_printf(&b, "- reproduce the run: `%s`\n", cmd);
    json_t *ev = json_object_get(summary, "evaluations");
    if (json_is_integer(ev))
        kevo__buf_printf(
            &b, "- evaluations: %" JSON_INTEGER_FORMAT ", state: %s\n",
            json_integer_value(ev),
            json_string_value(json_object_get(summary, "state"))
                ? json_string_value(json_object_get(summary, "state"))
                : "unknown");
    return kevo__buf_take(&b);
}

kevo_status kevo_export_run(const char *run_dir, const char *out_dir,
                            const char *name, const char *arch,
                            unsigned targets, kevo_error *err)
{
    if (!run_dir)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_export_run: NULL run directory");
    kevo_status rc = check_args(out_dir, name, targets, err);
    if (rc != KEVO_OK)
        return rc;
    kevo_task *task = NULL;
    kevo_candidate *champ = NULL;
    json_t *summary = NULL, *plan = NULL;
    char *src = NULL, *dispatch = NULL, *path = NULL, *plan_text = NULL;
    kevo__export_pkg p = {0};
    if (!(path = kevo__path_join(run_dir, "task.json"))) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = kevo_task_load(path, &task, err)) != KEVO_OK)
        goto done;
    free(path);
    if (!(path = kevo__path_join(run_dir, "summary.json"))) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    json_error_t je;
    summary = json_load_file(path, 0, &je);
    if (!json_is_object(summary)) {
        rc = kevo__error_set(err, je.line > 0 ? KEVO_EPARSE : KEVO_ENOENT,
                             "%s: %s", path, je.text);
        goto done;
    }
    const json_t *ch = json_object_get(summary, "champion");
    if (!json_is_object(ch)) {
        rc = kevo__error_set(err, KEVO_EINVALID,
                             "%s: the run has no champion to export", path);
        goto done;
    }
    free(path);
    if (!(path = kevo__path_join(run_dir, "best.cu"))) {
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = kevo__read_file(path, true, &src, NULL, err)) != KEVO_OK)
        goto done;
    if ((rc = kevo_candidate_new_for_task(task, src, "best.cu", &champ, err)) !=
        KEVO_OK)
        goto done;
    const char *key;
    json_t *v;
    json_object_foreach (json_object_get(ch, "params"), key, v) {
        if ((rc = kevo_candidate_set_param(
                 champ, key, (int64_t)json_integer_value(v), err)) != KEVO_OK)
            goto done;
    }
    dispatch = read_optional(run_dir, "best.dispatch.json", &rc, err);
    if (rc == KEVO_OK)
        plan_text = read_optional(run_dir, "search.json", &rc, err);
    if (rc != KEVO_OK)
        goto done;
    plan = plan_text ? json_loads(plan_text, 0, NULL) : NULL;
    if (!arch)
        arch = arch_of(json_string_value(json_object_get(summary, "device")));
    rc = pkg_init(&p, task, champ, dispatch, name, arch, "best.cu", err);
    if (rc == KEVO_OK && !(p.readme = run_lines(summary, plan, p.arch)))
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    if (rc == KEVO_OK)
        rc = pkg_write(&p, out_dir, targets, err);
done:
    pkg_free(&p);
    json_decref(summary);
    json_decref(plan);
    kevo_candidate_free(champ);
    kevo_task_free(task);
    free(src);
    free(dispatch);
    free(plan_text);
    free(path);
    return rc;
}

/*
 * export_plan.c: the launch plan of a package, NAME_plan.h and
 * NAME_plan.c, in plain C (C99, and valid C++) without CUDA: which
 * variant the dispatch table gives a shape, whether its constraints hold
 * there, and what every expression of the kevo:launch block is at that
 * shape: grids, blocks, dynamic shared memory, integer arguments, scratch
 * sizes, and the element counts and fixed scalars of the task. Each
 * expression becomes C through kevo__expr_to_c(), with helpers that
 * check 64-bit overflow and division by zero as kevo_expr_eval() does, so
 * a shape the plan refuses is one kevo would have refused.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export_private.h"
#include "model/devprops.h"

/* The helpers every plan file starts with: 64-bit arithmetic that sets
 * *bad instead of overflowing (CERT's checks, no compiler builtins). */
static const char helpers[] =
    "#if defined(__GNUC__) || defined(__clang__)\n"
    "#define KX_UNUSED __attribute__((unused))\n"
    "#else\n"
    "#define KX_UNUSED\n"
    "#endif\n\n"
    "static KX_UNUSED int64_t kx_add(int64_t a, int64_t b, int *bad)\n"
    "{\n"
    "    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) {\n"
    "        *bad = 1;\n"
    "        return 0;\n"
    "    }\n"
    "    return a + b;\n"
    "}\n\n"
    "static KX_UNUSED int64_t kx_sub(int64_t a, int64_t b, int *bad)\n"
    "{\n"
    "    if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b)) {\n"
    "        *bad = 1;\n"
    "        return 0;\n"
    "    }\n"
    "    return a - b;\n"
    "}\n\n"
    "static KX_UNUSED int64_t kx_mul(int64_t a, int64_t b, int *bad)\n"
    "{\n"
    "    int over;\n"
    "    if (a > 0)\n"
    "        over = b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a;\n"
    "    else\n"
    "        over = b > 0 ? a < INT64_MIN / b : (a != 0 && b < INT64_MAX / "
    "a);\n"
    "    if (over) {\n"
    "        *bad = 1;\n"
    "        return 0;\n"
    "    }\n"
    "    return a * b;\n"
    "}\n\n"
    "static KX_UNUSED int64_t kx_div(int64_t a, int64_t b, int *bad)\n"
    "{\n"
    "    if (b == 0 || (a == INT64_MIN && b == -1)) {\n"
    "        *bad = 1;\n"
    "        return 0;\n"
    "    }\n"
    "    return a / b;\n"
    "}\n\n"
    "static KX_UNUSED int64_t kx_mod(int64_t a, int64_t b, int *bad)\n"
    "{\n"
    "    if (b == 0) {\n"
    "        *bad = 1;\n"
    "        return 0;\n"
    "    }\n"
    "    return b == -1 ? 0 : a % b;\n"
    "}\n\n"
    "static KX_UNUSED int64_t kx_neg(int64_t a, int *bad)\n"
    "{\n"
    "    if (a == INT64_MIN) {\n"
    "        *bad = 1;\n"
    "        return 0;\n"
    "    }\n"
    "    return -a;\n"
    "}\n\n"
    "static KX_UNUSED int64_t kx_abs(int64_t a, int *bad)\n"
    "{\n"
    "    return a < 0 ? kx_neg(a, bad) : a;\n"
    "}\n\n"
    "static KX_UNUSED int64_t kx_min(int64_t a, int64_t b)\n"
    "{\n"
    "    return a < b ? a : b;\n"
    "}\n\n"
    "static KX_UNUSED int64_t kx_max(int64_t a, int64_t b)\n"
    "{\n"
    "    return a > b ? a : b;\n"
    "}\n\n"
    "/* a / b rounded up (toward +infinity when the quotient is positive). "
    "*/\n"
    "static KX_UNUSED int64_t kx_ceil_div(int64_t a, int64_t b, int *bad)\n"
    "{\n"
    "    int64_t q = kx_div(a, b, bad), r = kx_mod(a, b, bad);\n"
    "    if (r != 0 && ((a < 0) == (b < 0)))\n"
    "        q++;\n"
    "    return q;\n"
    "}\n\n"
    "static KX_UNUSED int64_t kx_round_up(int64_t a, int64_t b, int *bad)\n"
    "{\n"
    "    return kx_mul(kx_ceil_div(a, b, bad), b, bad);\n"
    "}\n\n";

size_t kevo__export_ndims(const kevo__export_pkg *p)
{
    return kevo_task_dim_count(p->task);
}

static const kevo_candidate *champ(const kevo__export_pkg *p)
{
    return p->variants[0];
}

static size_t nparams(const kevo__export_pkg *p)
{
    return kevo_vars_count(kevo_candidate_assignment(champ(p)));
}

/* The widest launch's argument count. */
static size_t max_launch_args(const kevo__export_pkg *p)
{
    const kevo_blocks *bl = &champ(p)->blocks;
    size_t m = 1;
    for (size_t i = 0; i < bl->nlaunches; i++)
        m = bl->launches[i].nargs > m ? bl->launches[i].nargs : m;
    return m;
}

static size_t at_least_1(size_t n)
{
    return n ? n : 1;
}

/* The upper-case form of the name, for macros. */
static void put_upper(kevo_buf *b, const char *s)
{
    for (; *s; s++) {
        char c = *s;
        if (c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        kevo__buf_append(b, &c, 1);
    }
}

static void header(const kevo__export_pkg *p, kevo_buf *b)
{
    char id[80];
    const char *n = p->name;
    size_t nd = kevo__export_ndims(p), ns = champ(p)->blocks.nscratch;
    kevo__buf_printf(b,
                     "/*\n * %s_plan.h: the launch plan of the %s package, "
                     "written by kevo export:\n"
                     " * the parameters a shape gets and what the kernel's "
                     "kevo:launch block asks\n"
                     " * for at that shape, in plain C without CUDA (see "
                     "README.md).\n */\n",
                     n, n);
    kevo__buf_puts(b, "#ifndef ");
    put_upper(b, n);
    kevo__buf_puts(b, "_PLAN_H\n#define ");
    put_upper(b, n);
    kevo__buf_puts(b, "_PLAN_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n"
                      "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    struct {
        const char *what;
        size_t n;
    } macros[] = {
        {"NDIMS", nd},
        {"NPARAMS", nparams(p)},
        {"NVARIANTS", p->nvariants},
        {"NLAUNCHES", champ(p)->blocks.nlaunches},
        {"NSCRATCH", ns},
        {"NARGS", kevo_task_arg_count(p->task)},
        {"MAX_LAUNCH_ARGS", max_launch_args(p)},
    };
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(macros); i++) {
        kevo__buf_puts(b, "#define ");
        put_upper(b, n);
        kevo__buf_printf(b, "_%s %zu\n", macros[i].what, macros[i].n);
    }
    kevo__buf_printf(b,
                     "\n/* The device properties a kevo:launch block may name "
                     "(kevo-blocks(5)). */\ntypedef struct %s_props {\n",
                     n);
    for (size_t i = 0; kevo__devprop_name(i); i++)
        kevo__buf_printf(b, "    int64_t %s;\n", kevo__devprop_name(i));
    kevo__buf_printf(b, "} %s_props;\n\n", n);
    kevo__buf_printf(
        b,
        "/* One kernel launch at one shape. */\n"
        "typedef struct %s_launch_plan {\n"
        "    uint32_t grid[3];\n"
        "    uint32_t block[3];\n"
        "    uint64_t smem; /* dynamic shared memory, bytes */\n"
        "    /* Argument k's value where it is an integer expression. */\n"
        "    int64_t value[%zu];\n"
        "} %s_launch_plan;\n\n",
        n, max_launch_args(p), n);
    kevo__buf_printf(
        b,
        "/* Everything a call at one shape needs. */\n"
        "typedef struct %s_plan_t {\n"
        "    int variant;         /* the parameter assignment, "
        "%s_variant_params */\n"
        "    int64_t params[%zu]; /* its values, in %s_param_names order */\n"
        "    %s_launch_plan launch[%zu];\n"
        "    uint64_t scratch_offset[%zu]; /* in the workspace, 256-byte "
        "aligned */\n"
        "    uint64_t scratch_bytes[%zu];\n"
        "    uint64_t workspace_bytes;\n"
        "    /* Per task argument: a buffer's element count, an integer "
        "scalar's\n     * fixed value (0 otherwise). */\n"
        "    int64_t count[%zu];\n"
        "    int64_t scalar[%zu];\n"
        "    char error[256]; /* why the plan failed */\n"
        "} %s_plan_t;\n\n",
        n, n, at_least_1(nparams(p)), n, n, champ(p)->blocks.nlaunches,
        at_least_1(ns), at_least_1(ns),
        at_least_1(kevo_task_arg_count(p->task)),
        at_least_1(kevo_task_arg_count(p->task)), n);
    kevo__buf_printf(b,
                     "extern const char *const %s_dim_names[];\n"
                     "extern const char *const %s_param_names[];\n"
                     "extern const int64_t %s_variant_params[][%zu];\n\n",
                     n, n, n, at_least_1(nparams(p)));
    kevo__buf_printf(b,
                     "/*\n * %s_plan: the plan of a call at the shape given "
                     "by the dims, on a\n * device with props. Returns 0, or "
                     "-1 with plan->error saying why: an\n * expression that "
                     "overflows or divides by zero, a value outside the "
                     "CUDA\n * limits or its type, a constraint that fails "
                     "for every variant.\n */\nint %s_plan(",
                     n, n);
    for (size_t i = 0; i < nd; i++)
        kevo__buf_printf(
            b, "int64_t %s, ",
            kevo__export_ident(kevo_task_dim_name(p->task, i), id, sizeof id));
    kevo__buf_printf(
        b,
        "const %s_props *props,\n    %s_plan_t *plan);\n\n"
        "/* %s_plan_dims: as %s_plan with the dims in an array, in "
        "%s_dim_names order. */\n"
        "int %s_plan_dims(const int64_t *dims, const %s_props *props,\n"
        "    %s_plan_t *plan);\n\n"
        "#ifdef __cplusplus\n}\n#endif\n\n#endif\n",
        n, n, n, n, n, n, n, n);
}

/* Appends expr as C. */
static void put_expr(kevo_buf *b, const kevo_expr *e)
{
    kevo__expr_to_c(e, "v_", "kx_", "bad", b);
}

/* Appends the local variables an evaluation sees: the dims, the device
 * properties, and (when with_params) variant v's parameters. */
static void put_locals(const kevo__export_pkg *p, kevo_buf *b, bool with_params)
{
    kevo__buf_puts(b, "    int bad_ = 0;\n    int *bad = &bad_;\n");
    for (size_t i = 0; i < kevo__export_ndims(p); i++)
        kevo__buf_printf(b, "    const int64_t v_%s = dims[%zu];\n",
                         kevo_task_dim_name(p->task, i), i);
    for (size_t i = 0; kevo__devprop_name(i); i++)
        kevo__buf_printf(b, "    const int64_t v_%s = props->%s;\n",
                         kevo__devprop_name(i), kevo__devprop_name(i));
    const kevo_vars *a = kevo_candidate_assignment(champ(p));
    for (size_t i = 0; with_params && i < nparams(p); i++)
        kevo__buf_printf(
            b, "    const int64_t v_%s = %s_variant_params[v][%zu];\n",
            kevo_vars_name(a, i), p->name, i);
    kevo__buf_puts(b, "    int64_t x;\n    (void)bad;\n    (void)x;\n");
    for (size_t i = 0; i < kevo__export_ndims(p); i++)
        kevo__buf_printf(b, "    (void)v_%s;\n",
                         kevo_task_dim_name(p->task, i));
    for (size_t i = 0; kevo__devprop_name(i); i++)
        kevo__buf_printf(b, "    (void)v_%s;\n", kevo__devprop_name(i));
    for (size_t i = 0; with_params && i < nparams(p); i++)
        kevo__buf_printf(b, "    (void)v_%s;\n", kevo_vars_name(a, i));
}

/* "x = EXPR;" and the check of the flag, failing with what. */
static void put_eval(kevo_buf *b, const kevo_expr *e, const char *what)
{
    kevo__buf_puts(b, "    bad_ = 0;\n    x = ");
    put_expr(b, e);
    kevo__buf_puts(b, ";\n    if (bad_)\n        return fail(plan, \"");
    kevo__export_c_string(b, what);
    kevo__buf_puts(b, ": '");
    kevo__export_c_string(b, kevo_expr_text(e));
    kevo__buf_puts(b, "' overflows or divides by zero\", 0);\n");
}

/* A check that x lies in [lo, hi], failing with what. */
static void put_range(kevo_buf *b, const char *lo, const char *hi,
                      const char *what)
{
    kevo__buf_printf(
        b, "    if (x < %s || x > %s)\n        return fail(plan, \"", lo, hi);
    kevo__export_c_string(b, what);
    kevo__buf_printf(b,
                     " is %%lld: it must lie in [%%lld, %%lld]\", 3, "
                     "(long long)x, (long long)(%s), (long long)(%s));\n",
                     lo, hi);
}

/* The C limits of an integer type, as text. */
static void type_limits(kevo_dtype t, const char **lo, const char **hi)
{
    switch (t) {
    case KEVO_DTYPE_I8: *lo = "INT8_MIN", *hi = "INT8_MAX"; break;
    case KEVO_DTYPE_U8: *lo = "0", *hi = "UINT8_MAX"; break;
    case KEVO_DTYPE_I16: *lo = "INT16_MIN", *hi = "INT16_MAX"; break;
    case KEVO_DTYPE_U16: *lo = "0", *hi = "UINT16_MAX"; break;
    case KEVO_DTYPE_I32: *lo = "INT32_MIN", *hi = "INT32_MAX"; break;
    case KEVO_DTYPE_U32: *lo = "0", *hi = "UINT32_MAX"; break;
    case KEVO_DTYPE_U64: *lo = "0", *hi = "INT64_MAX"; break;
    default: *lo = "INT64_MIN", *hi = "INT64_MAX"; break;
    }
}

static void put_pick(const kevo__export_pkg *p, kevo_buf *b)
{
    size_t nd = kevo__export_ndims(p);
    kevo__buf_puts(b, "/* The dispatch table (best.dispatch.json): ");
    if (!p->dispatch) {
        kevo__buf_printf(b, "none, so every shape gets variant 0. */\n"
                            "static int pick(const int64_t *dims)\n{\n"
                            "    (void)dims;\n    return 0;\n}\n\n");
        return;
    }
    kevo__buf_puts(
        b, "a held-out or training shape\n"
           " * gets the variant the table gives it; any other shape that of "
           "the nearest\n"
           " * training shape (the least sum of squared differences of the "
           "log2 of the\n"
           " * dims, the first on a tie), unless that variant was wrong at a "
           "held-out\n"
           " * shape, where variant 0 (the champion, which passed the gate) "
           "runs. */\n");
    struct {
        const char *what;
        size_t count;
        const int64_t *dims;
        const size_t *variant;
    } sets[] = {{"train", p->ntrain, p->train_dims, p->train_variant},
                {"held", p->nheld, p->held_dims, p->held_variant}};
    for (size_t s = 0; s < 2; s++) {
        if (!sets[s].count)
            continue;
        kevo__buf_printf(b, "static const int64_t %s_dims[%zu][%zu] = {\n",
                         sets[s].what, sets[s].count, nd);
        for (size_t i = 0; i < sets[s].count; i++) {
            kevo__buf_puts(b, "    {");
            for (size_t d = 0; d < nd; d++)
                kevo__buf_printf(b, "%sINT64_C(%" PRId64 ")", d ? ", " : "",
                                 sets[s].dims[i * nd + d]);
            kevo__buf_puts(b, "},\n");
        }
        kevo__buf_printf(b, "};\nstatic const int %s_variant[%zu] = {",
                         sets[s].what, sets[s].count);
        for (size_t i = 0; i < sets[s].count; i++)
            kevo__buf_printf(b, "%s%zu", i ? ", " : "", sets[s].variant[i]);
        kevo__buf_puts(b, "};\n");
    }
    kevo__buf_printf(b, "static const int unsafe[%zu] = {", p->nvariants);
    for (size_t i = 0; i < p->nvariants; i++)
        kevo__buf_printf(b, "%s%d", i ? ", " : "", p->unsafe[i] ? 1 : 0);
    kevo__buf_puts(b, "};\n\n");
    kevo__buf_printf(b,
                     "static int same(const int64_t *a, const int64_t *b)\n"
                     "{\n"
                     "    for (int i = 0; i < %zu; i++) {\n"
                     "        if (a[i] != b[i])\n"
                     "            return 0;\n"
                     "    }\n"
                     "    return 1;\n"
                     "}\n\n",
                     nd);
    kevo__buf_puts(b, "static double lg(int64_t x)\n{\n"
                      "    return log2((double)(x > 0 ? x : 1));\n}\n\n");
    kevo__buf_puts(b, "static int pick(const int64_t *dims)\n{\n");
    if (p->nheld)
        kevo__buf_printf(b,
                         "    for (int i = 0; i < %zu; i++) {\n"
                         "        if (same(dims, held_dims[i]))\n"
                         "            return held_variant[i];\n"
                         "    }\n",
                         p->nheld);
    if (p->ntrain) {
        kevo__buf_printf(b,
                         "    int best = 0;\n"
                         "    double dmin = HUGE_VAL;\n"
                         "    for (int i = 0; i < %zu; i++) {\n"
                         "        if (same(dims, train_dims[i]))\n"
                         "            return train_variant[i];\n"
                         "        double d = 0;\n"
                         "        for (int k = 0; k < %zu; k++) {\n"
                         "            double e = lg(dims[k]) - "
                         "lg(train_dims[i][k]);\n"
                         "            d += e * e;\n"
                         "        }\n"
                         "        if (d < dmin) {\n"
                         "            dmin = d;\n"
                         "            best = i;\n"
                         "        }\n"
                         "    }\n"
                         "    return unsafe[train_variant[best]] ? 0 : "
                         "train_variant[best];\n}\n\n",
                         p->ntrain, nd);
    } else {
        kevo__buf_puts(b, "    (void)unsafe;\n    return 0;\n}\n\n");
    }
}

static kevo_status put_valid(const kevo__export_pkg *p, kevo_buf *b,
                             kevo_error *err)
{
    const kevo_paramspace *sp = kevo_candidate_params(champ(p));
    kevo__buf_printf(b,
                     "/* Whether variant v's constraints (require lines) hold "
                     "at the shape;\n * if not, why, in plan->error. */\n"
                     "static int valid(int v, const int64_t *dims, const "
                     "%s_props *props,\n    %s_plan_t *plan)\n{\n",
                     p->name, p->name);
    put_locals(p, b, true);
    kevo__buf_puts(b, "    (void)plan;\n");
    for (size_t i = 0; i < kevo_paramspace_constraint_count(sp); i++) {
        const char *text = kevo_paramspace_constraint(sp, i);
        kevo_expr *e = NULL;
        kevo_status rc = kevo_expr_parse(text, &e, err);
        if (rc != KEVO_OK)
            return rc;
        kevo__buf_puts(b, "    bad_ = 0;\n    x = ");
        put_expr(b, e);
        kevo__buf_puts(b,
                       ";\n    if (bad_ || x == 0)\n        return fail(plan, "
                       "\"constraint '");
        kevo__export_c_string(b, text);
        kevo__buf_puts(b, "' fails\", 0) + 1;\n");
        kevo_expr_free(e);
    }
    kevo__buf_puts(b, "    return 1;\n}\n\n");
    return KEVO_OK;
}

/* The task's element counts and fixed integer scalars. */
static kevo_status put_task_values(const kevo__export_pkg *p, kevo_buf *b,
                                   kevo_error *err)
{
    for (size_t i = 0; i < kevo_task_arg_count(p->task); i++) {
        kevo_arg_info info = {.size = sizeof info};
        kevo_status rc = kevo_task_arg_info(p->task, i, &info);
        if (rc != KEVO_OK)
            return rc;
        const char *text =
            info.role == KEVO_ROLE_SCALAR ? info.value : info.count;
        if (!text ||
            (info.role == KEVO_ROLE_SCALAR && kevo_dtype_is_float(info.type)))
            continue;
        kevo_expr *e = NULL;
        if ((rc = kevo_expr_parse(text, &e, err)) != KEVO_OK)
            return rc;
        char what[160];
        snprintf(what, sizeof what, "%s of argument '%s'",
                 info.role == KEVO_ROLE_SCALAR ? "value" : "element count",
                 info.name);
        put_eval(b, e, what);
        kevo_expr_free(e);
        const char *lo = "1", *hi = "INT64_MAX";
        if (info.role == KEVO_ROLE_SCALAR)
            type_limits(info.type, &lo, &hi);
        put_range(b, lo, hi, what);
        kevo__buf_printf(b, "    plan->%s[%zu] = x;\n",
                         info.role == KEVO_ROLE_SCALAR ? "scalar" : "count", i);
    }
    return KEVO_OK;
}

static kevo_status put_eval_fn(const kevo__export_pkg *p, kevo_buf *b,
                               kevo_error *err)
{
    const kevo_candidate *c = champ(p);
    const kevo_blocks *bl = &c->blocks;
    kevo__buf_printf(b,
                     "/* The launch block of variant v at the shape. */\n"
                     "static int eval(int v, const int64_t *dims, const "
                     "%s_props *props,\n    %s_plan_t *plan)\n{\n",
                     p->name, p->name);
    put_locals(p, b, true);
    kevo__buf_puts(b, "    uint64_t offset = 0;\n    (void)offset;\n");
    kevo_status rc = put_task_values(p, b, err);
    if (rc != KEVO_OK)
        return rc;
    for (size_t s = 0; s < bl->nscratch; s++) {
        const kevo_scratch *sc = &bl->scratch[s];
        char what[160];
        snprintf(what, sizeof what, "%s:%d: element count of scratch '%s'",
                 p->origin, sc->line, sc->name);
        put_eval(b, sc->count, what);
        char hi[64];
        snprintf(hi, sizeof hi, "INT64_MAX / %zu", kevo_dtype_size(sc->type));
        put_range(b, "1", hi, what);
        kevo__buf_printf(b,
                         "    plan->scratch_bytes[%zu] = (uint64_t)x * %zu;\n"
                         "    plan->scratch_offset[%zu] = offset;\n"
                         "    if (plan->scratch_bytes[%zu] > UINT64_MAX / 2 - "
                         "offset)\n"
                         "        return fail(plan, \"the workspace is too "
                         "large\", 0);\n"
                         "    offset += (plan->scratch_bytes[%zu] + 255) / 256 "
                         "* 256;\n",
                         s, kevo_dtype_size(sc->type), s, s, s);
    }
    kevo__buf_puts(b, "    plan->workspace_bytes = offset;\n");
    static const char *const axis[] = {"x", "y", "z"};
    static const char *const grid_hi[] = {"INT32_MAX", "65535", "65535"};
    static const char *const block_hi[] = {"1024", "1024", "64"};
    for (size_t l = 0; l < bl->nlaunches; l++) {
        const kevo_launch *la = &bl->launches[l];
        kevo__buf_printf(b, "    /* %s:%d: %s */\n", p->origin, la->line,
                         la->kernel);
        for (int g = 0; g < 2; g++) {
            kevo_expr *const *xs = g ? la->block : la->grid;
            for (int d = 0; d < 3; d++) {
                char what[160];
                snprintf(what, sizeof what, "%s:%d: %s %s of '%s'", p->origin,
                         la->line, g ? "block" : "grid", axis[d], la->kernel);
                if (xs[d]) {
                    put_eval(b, xs[d], what);
                    put_range(b, "1", g ? block_hi[d] : grid_hi[d], what);
                } else {
                    kevo__buf_puts(b, "    x = 1;\n");
                }
                kevo__buf_printf(
                    b, "    plan->launch[%zu].%s[%d] = (uint32_t)x;\n", l,
                    g ? "block" : "grid", d);
            }
        }
        kevo__buf_printf(
            b,
            "    if ((uint64_t)plan->launch[%zu].block[0] * "
            "plan->launch[%zu].block[1] *\n"
            "            plan->launch[%zu].block[2] > 1024)\n"
            "        return fail(plan, \"%s:%d: the block of '%s' has more "
            "than 1024 threads\", 0);\n",
            l, l, l, p->origin, la->line, la->kernel);
        if (la->smem) {
            char what[160];
            snprintf(what, sizeof what, "%s:%d: shared memory size of '%s'",
                     p->origin, la->line, la->kernel);
            put_eval(b, la->smem, what);
            put_range(b, "0", "v_max_smem_per_block", what);
            kevo__buf_printf(b, "    plan->launch[%zu].smem = (uint64_t)x;\n",
                             l);
        }
        kevo__resolved_arg *args = NULL;
        size_t nargs = 0;
        rc = kevo__launch_args(p->task, c, l, NULL, &args, &nargs, err);
        if (rc != KEVO_OK)
            return rc;
        for (size_t k = 0; k < nargs; k++) {
            if (args[k].kind != KEVO__ARG_VALUE)
                continue;
            char what[160];
            snprintf(what, sizeof what, "%s:%d: argument %zu of '%s'",
                     p->origin, la->line, k + 1, la->kernel);
            put_eval(b, la->args[k].expr, what);
            const char *lo, *hi;
            type_limits(args[k].type, &lo, &hi);
            put_range(b, lo, hi, what);
            kevo__buf_printf(b, "    plan->launch[%zu].value[%zu] = x;\n", l,
                             k);
        }
        free(args);
    }
    kevo__buf_puts(b, "    return 0;\n}\n\n");
    return KEVO_OK;
}

static kevo_status source(const kevo__export_pkg *p, kevo_buf *b,
                          kevo_error *err)
{
    const char *n = p->name;
    size_t nd = kevo__export_ndims(p), np = nparams(p);
    const kevo_vars *a = kevo_candidate_assignment(champ(p));
    char id[80];
    kevo__buf_printf(b,
                     "/*\n * %s_plan.c: the launch plan of the %s package, "
                     "written by kevo export\n"
                     " * from %s. Plain C99 (and C++): compile it with any C "
                     "compiler, link -lm.\n */\n"
                     "#include <math.h>\n#include <stdarg.h>\n"
                     "#include <stdio.h>\n#include <string.h>\n\n"
                     "#include \"%s_plan.h\"\n\n",
                     n, n, p->origin, n);
    kevo__buf_printf(b, "const char *const %s_dim_names[] = {", n);
    for (size_t i = 0; i < nd; i++)
        kevo__buf_printf(b, "\"%s\", ", kevo_task_dim_name(p->task, i));
    kevo__buf_printf(b, "NULL};\nconst char *const %s_param_names[] = {", n);
    for (size_t i = 0; i < np; i++)
        kevo__buf_printf(b, "\"%s\", ", kevo_vars_name(a, i));
    kevo__buf_printf(b,
                     "NULL};\n\n/* The parameters of each variant. */\n"
                     "const int64_t %s_variant_params[][%zu] = {\n",
                     n, at_least_1(np));
    for (size_t v = 0; v < p->nvariants; v++) {
        const kevo_vars *va = kevo_candidate_assignment(p->variants[v]);
        kevo__buf_puts(b, "    {");
        for (size_t i = 0; i < np; i++) {
            int64_t x = 0;
            kevo_vars_get(va, kevo_vars_name(a, i), &x);
            kevo__buf_printf(b, "%sINT64_C(%" PRId64 ")", i ? ", " : "", x);
        }
        if (!np)
            kevo__buf_puts(b, "0");
        kevo__buf_printf(b, "}, /* variant %zu */\n", v);
    }
    kevo__buf_puts(b, "};\n\n");
    kevo__buf_puts(b, helpers);
    kevo__buf_printf(b,
                     "/* Sets plan->error from fmt and nargs long long "
                     "values; returns -1. */\n"
                     "static int fail(%s_plan_t *plan, const char *fmt, int "
                     "nargs, ...)\n"
                     "{\n"
                     "    long long x[3] = {0, 0, 0};\n"
                     "    va_list ap;\n"
                     "    va_start(ap, nargs);\n"
                     "    for (int i = 0; i < nargs && i < 3; i++)\n"
                     "        x[i] = va_arg(ap, long long);\n"
                     "    va_end(ap);\n"
                     "    snprintf(plan->error, sizeof plan->error, fmt, x[0], "
                     "x[1], x[2]);\n"
                     "    return -1;\n"
                     "}\n\n",
                     n);
    put_pick(p, b);
    kevo_status rc = put_valid(p, b, err);
    if (rc == KEVO_OK)
        rc = put_eval_fn(p, b, err);
    if (rc != KEVO_OK)
        return rc;
    kevo__buf_printf(
        b,
        "int %s_plan_dims(const int64_t *dims, const %s_props *props,\n"
        "    %s_plan_t *plan)\n"
        "{\n"
        "    memset(plan, 0, sizeof *plan);\n"
        "    int v = pick(dims);\n"
        "    if (!valid(v, dims, props, plan)) {\n"
        "        if (v == 0 || !valid(0, dims, props, plan))\n"
        "            return -1;\n"
        "        v = 0;\n"
        "    }\n"
        "    plan->variant = v;\n"
        "    for (int i = 0; i < %zu; i++)\n"
        "        plan->params[i] = %s_variant_params[v][i];\n"
        "    return eval(v, dims, props, plan);\n"
        "}\n\n",
        n, n, n, np, n);
    kevo__buf_printf(b, "int %s_plan(", n);
    for (size_t i = 0; i < nd; i++)
        kevo__buf_printf(
            b, "int64_t %s, ",
            kevo__export_ident(kevo_task_dim_name(p->task, i), id, sizeof id));
    kevo__buf_printf(b,
                     "const %s_props *props,\n    %s_plan_t *plan)\n{\n"
                     "    const int64_t kx_dims[%zu] = {",
                     n, n, at_least_1(nd));
    for (size_t i = 0; i < nd; i++)
        kevo__buf_printf(
            b, "%s%s", i ? ", " : "",
            kevo__export_ident(kevo_task_dim_name(p->task, i), id, sizeof id));
    if (!nd)
        kevo__buf_puts(b, "0");
    kevo__buf_printf(
        b, "};\n    return %s_plan_dims(kx_dims, props, plan);\n}\n", n);
    return KEVO_OK;
}

kevo_status kevo__export_plan(const kevo__export_pkg *p, const char *dir,
                              kevo_error *err)
{
    kevo_buf h = {0}, c = {0};
    header(p, &h);
    kevo_status rc = source(p, &c, err);
    if (rc == KEVO_OK && (h.failed || c.failed))
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    char *hn = kevo__asprintf("%s_plan.h", p->name);
    char *cn = kevo__asprintf("%s_plan.c", p->name);
    if (rc == KEVO_OK && (!hn || !cn))
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    if (rc == KEVO_OK)
        rc = kevo__export_write(dir, hn, h.data, err);
    if (rc == KEVO_OK)
        rc = kevo__export_write(dir, cn, c.data, err);
    free(hn);
    free(cn);
    kevo__buf_free(&h);
    kevo__buf_free(&c);
    return rc;
}

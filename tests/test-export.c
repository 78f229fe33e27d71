/*
 * test-export.c: kevo export as a user meets it, without a GPU. A real run
 * (the search engine with the params plugin and a scoring function) is
 * exported with kevo_export_run(), other champions with
 * kevo_export_candidate(); the package's launch plan (NAME_plan.c, plain
 * C) is compiled with the C compiler into a small program that prints the
 * plan of many shapes, and every line is compared with kevo's own
 * evaluation of the launch block (kevo_candidate_launch_geometry, the
 * launch arguments, the scratch counts, the constraints) for the variant
 * the dispatch table gives the shape. The CUDA sources are compiled with
 * nvcc -c where there is one (no GPU needed), the header with the C
 * compiler, and the PyTorch package's Python is byte-compiled.
 */
#include "config.h"

#include <jansson.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/kevo_private.h"
#include "model/candidate_private.h"
#include "model/devprops.h"
#include "model/launch_args.h"
#include "tap.h"

static char *tmp;

static kevo_task *load_task(const char *name)
{
    char *path =
        kevo__asprintf("%s/examples/tasks/%s.json", tap_srcdir(), name);
    kevo_task *t = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_task_load(path, &t, &e) != KEVO_OK)
        bail_out("cannot load %s: %s", path, e.text);
    free(path);
    return t;
}

static char *slurp(const char *path)
{
    char *text = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo__read_file(path, true, &text, NULL, &e) != KEVO_OK)
        bail_out("%s", e.text);
    return text;
}

static int run(const char *cmd)
{
    int rc = system(cmd);
    if (rc != 0)
        diag("'%s' exited with %d", cmd, rc);
    return rc;
}

/* ---- a real run -----------------------------------------------------------
 */

static int64_t param(const kevo_candidate *c, const char *name)
{
    int64_t v = 0;
    kevo_vars_get(kevo_candidate_assignment(c), name, &v);
    return v;
}

/* A landscape over saxpy's parameters with its peak at BLOCK=256, VEC=4,
 * ITEMS=2. */
static kevo_status score(const kevo_task *task, const kevo_candidate *c,
                         double *fitness, double *desc, void *user,
                         kevo_error *err)
{
    (void)task, (void)err, (void)user;
    double b = log2((double)param(c, "BLOCK")),
           v = log2((double)param(c, "VEC")),
           i = log2((double)param(c, "ITEMS"));
    *fitness =
        1.0 / (1.0 + 0.3 * fabs(b - 8) + 0.4 * fabs(v - 2) + 0.2 * fabs(i - 1));
    desc[0] = param(c, "VEC") > 1 ? 1 : 0;
    desc[1] = (double)param(c, "BLOCK");
    return KEVO_OK;
}

static char *make_run(const kevo_task *task)
{
    char *dir = kevo__path_join(tmp, "run");
    kevo_search *s = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_search_new(task, &s, &e) != KEVO_OK ||
        kevo_search_set_score_fn(s, score, NULL, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_SEED, 3, &e) != KEVO_OK ||
        kevo_search_set_int(s, KEVO_SEARCH_MAX_EVALS, 40, &e) != KEVO_OK ||
        kevo_search_add_operator(s, "params", NULL, NULL, 1.0, &e) != KEVO_OK ||
        kevo_search_open_run(s, dir, 0,
                             "kevo search examples/tasks/saxpy.json --evals 40",
                             &e) != KEVO_OK ||
        kevo_search_run(s, &e) != KEVO_OK)
        bail_out("the search failed: %s", e.text);
    kevo_search_free(s);
    return dir;
}

/* A dispatch table in best.dispatch.json's format for a saxpy champion:
 * three other assignments win the training shapes; the one nearest to
 * the held-out shape 1000003 was wrong there (the table falls back). */
static char *saxpy_dispatch(const kevo_vars *champ)
{
    json_t *def = json_object();
    for (size_t i = 0; i < kevo_vars_count(champ); i++)
        json_object_set_new(def, kevo_vars_name(champ, i),
                            json_integer(kevo_vars_value(champ, i)));
    json_t *root = json_pack(
        "{s:s, s:I, s:[s,s,s], s:O, s:s, s:[s], "
        "s:[{s:{s:I}, s:{s:i, s:i, s:i}, s:f, s:f},"
        "   {s:{s:I}, s:{s:i, s:i, s:i}, s:f, s:f},"
        "   {s:{s:I}, s:{s:i, s:i, s:i}, s:f, s:f}], "
        "s:[{s:{s:I}, s:i, s:O, s:b, s:b}, {s:{s:I}, s:i, s:{s:i, s:i, s:i}, "
        "s:b, s:b}]}",
        "task", "saxpy", "champion", (json_int_t)1, "params", "BLOCK", "VEC",
        "ITEMS", "default", def, "rule", "nearest_training_shape", "dims", "n",
        "shapes", "dims", "n", (json_int_t)16777216, "params", "BLOCK", 512,
        "VEC", 4, "ITEMS", 2, "time", 1e-4, "champion_time", 1.1e-4, "dims",
        "n", (json_int_t)4194304, "params", "BLOCK", 1024, "VEC", 4, "ITEMS", 1,
        "time", 3e-5, "champion_time", 3.3e-5, "dims", "n", (json_int_t)1000000,
        "params", "BLOCK", 128, "VEC", 2, "ITEMS", 8, "time", 9e-6,
        "champion_time", 1e-5, "held_out", "dims", "n", (json_int_t)1000003,
        "nearest", 2, "params", def, "correct", 0, "fallback", 1, "dims", "n",
        (json_int_t)77, "nearest", 2, "params", "BLOCK", 128, "VEC", 2, "ITEMS",
        8, "correct", 1, "fallback", 0);
    char *text = json_dumps(root, JSON_INDENT(1));
    json_decref(root);
    json_decref(def);
    return text;
}

/* ---- kevo's own answer for a shape ----------------------------------------
 */

typedef struct oracle {
    const kevo_task *task;
    kevo_candidate **variants; /* by the table's first mention; 0 champion */
    size_t nvariants;
    json_t *dispatch; /* or NULL */
    bool *unsafe;
} oracle;

static bool same_params(const kevo_candidate *c, json_t *obj)
{
    const kevo_vars *a = kevo_candidate_assignment(c);
    for (size_t i = 0; i < kevo_vars_count(a); i++) {
        json_t *x = json_object_get(obj, kevo_vars_name(a, i));
        if (x && json_integer_value(x) != kevo_vars_value(a, i))
            return false;
    }
    return true;
}

static size_t variant_index(oracle *o, json_t *obj)
{
    for (size_t i = 0; i < o->nvariants; i++) {
        if (same_params(o->variants[i], obj))
            return i;
    }
    kevo_candidate *c = kevo_candidate_copy(o->variants[0]);
    const char *key;
    json_t *v;
    json_object_foreach (obj, key, v)
        kevo_candidate_set_param(c, key, json_integer_value(v), NULL);
    o->variants = realloc(o->variants, (o->nvariants + 1) * sizeof(void *));
    o->variants[o->nvariants] = c;
    return o->nvariants++;
}

static void oracle_init(oracle *o, const kevo_task *task,
                        const kevo_candidate *champ, const char *dispatch)
{
    memset(o, 0, sizeof *o);
    o->task = task;
    o->variants = malloc(sizeof(void *));
    o->variants[0] = kevo_candidate_copy(champ);
    o->nvariants = 1;
    o->dispatch = dispatch ? json_loads(dispatch, 0, NULL) : NULL;
    json_t *s;
    size_t i;
    json_array_foreach (json_object_get(o->dispatch, "shapes"), i, s)
        variant_index(o, json_object_get(s, "params"));
    json_array_foreach (json_object_get(o->dispatch, "held_out"), i, s)
        variant_index(o, json_object_get(s, "params"));
    o->unsafe = calloc(o->nvariants, sizeof(bool));
    json_array_foreach (json_object_get(o->dispatch, "held_out"), i, s) {
        if (json_is_false(json_object_get(s, "correct"))) {
            json_t *near = json_array_get(
                json_object_get(o->dispatch, "shapes"),
                (size_t)json_integer_value(json_object_get(s, "nearest")));
            o->unsafe[variant_index(o, json_object_get(near, "params"))] = true;
        }
    }
    o->unsafe[0] = false;
}

static void oracle_free(oracle *o)
{
    for (size_t i = 0; i < o->nvariants; i++)
        kevo_candidate_free(o->variants[i]);
    free(o->variants);
    free(o->unsafe);
    json_decref(o->dispatch);
}

static bool dims_equal(const kevo_task *t, json_t *shape, const int64_t *dims)
{
    for (size_t d = 0; d < kevo_task_dim_count(t); d++) {
        json_t *x = json_object_get(json_object_get(shape, "dims"),
                                    kevo_task_dim_name(t, d));
        if (json_integer_value(x) != dims[d])
            return false;
    }
    return true;
}

/* The table's rule, as best.dispatch.json states it. */
static size_t oracle_pick(oracle *o, const int64_t *dims)
{
    json_t *s;
    size_t i, best = 0;
    json_array_foreach (json_object_get(o->dispatch, "held_out"), i, s) {
        if (dims_equal(o->task, s, dims))
            return variant_index(o, json_object_get(s, "params"));
    }
    double dmin = INFINITY;
    json_t *shapes = json_object_get(o->dispatch, "shapes");
    json_array_foreach (shapes, i, s) {
        if (dims_equal(o->task, s, dims))
            return variant_index(o, json_object_get(s, "params"));
        double d = 0;
        for (size_t k = 0; k < kevo_task_dim_count(o->task); k++) {
            int64_t t = json_integer_value(json_object_get(
                json_object_get(s, "dims"), kevo_task_dim_name(o->task, k)));
            double e = log2((double)(dims[k] > 0 ? dims[k] : 1)) -
                       log2((double)(t > 0 ? t : 1));
            d += e * e;
        }
        if (d < dmin)
            dmin = d, best = i;
    }
    if (!json_array_size(shapes))
        return 0;
    size_t v = variant_index(
        o, json_object_get(json_array_get(shapes, best), "params"));
    return o->unsafe[v] ? 0 : v;
}

static bool fits(kevo_dtype t, int64_t x)
{
    switch (t) {
    case KEVO_DTYPE_I8: return x >= INT8_MIN && x <= INT8_MAX;
    case KEVO_DTYPE_U8: return x >= 0 && x <= UINT8_MAX;
    case KEVO_DTYPE_I16: return x >= INT16_MIN && x <= INT16_MAX;
    case KEVO_DTYPE_U16: return x >= 0 && x <= UINT16_MAX;
    case KEVO_DTYPE_I32: return x >= INT32_MIN && x <= INT32_MAX;
    case KEVO_DTYPE_U32: return x >= 0 && x <= (int64_t)UINT32_MAX;
    case KEVO_DTYPE_U64: return x >= 0;
    default: return true;
    }
}

/* The line the plan program should print for dims: "ok ..." as it prints
 * it, or "error". */
static void oracle_line(oracle *o, const int64_t *dims, const kevo_vars *props,
                        size_t max_args, kevo_buf *out)
{
    const kevo_task *t = o->task;
    kevo_vars *env = kevo_vars_copy(props);
    for (size_t d = 0; d < kevo_task_dim_count(t); d++)
        kevo_vars_set(env, kevo_task_dim_name(t, d), dims[d]);
    size_t v = o->dispatch ? oracle_pick(o, dims) : 0;
    if (kevo_candidate_check(o->variants[v], env, NULL) != KEVO_OK) {
        if (v == 0 ||
            kevo_candidate_check(o->variants[0], env, NULL) != KEVO_OK)
            goto error;
        v = 0;
    }
    const kevo_candidate *c = o->variants[v];
    kevo_buf b = {0};
    kevo__buf_printf(&b, "ok %zu |", v);
    size_t nargs = kevo_task_arg_count(t);
    int64_t counts[16] = {0}, scalars[16] = {0};
    for (size_t i = 0; i < nargs && i < 16; i++) {
        kevo_arg_info info = {.size = sizeof info};
        kevo_task_arg_info(t, i, &info);
        const char *text =
            info.role == KEVO_ROLE_SCALAR ? info.value : info.count;
        if (!text ||
            (info.role == KEVO_ROLE_SCALAR && kevo_dtype_is_float(info.type)))
            continue;
        int64_t x;
        if (kevo_expr_eval_string(text, env, &x, NULL) != KEVO_OK)
            goto error_b;
        if (info.role == KEVO_ROLE_SCALAR) {
            if (!fits(info.type, x))
                goto error_b;
            scalars[i] = x;
        } else {
            if (x < 1)
                goto error_b;
            counts[i] = x;
        }
    }
    uint64_t offset = 0;
    for (size_t s = 0; s < c->blocks.nscratch; s++) {
        uint64_t n;
        if (kevo__scratch_count(c, s, env, &n, NULL) != KEVO_OK)
            goto error_b;
        size_t size = kevo_dtype_size(c->blocks.scratch[s].type);
        if (n > (uint64_t)INT64_MAX / size)
            goto error_b;
        kevo__buf_printf(&b, " %llu@%llu", (unsigned long long)(n * size),
                         (unsigned long long)offset);
        offset += (n * size + 255) / 256 * 256;
    }
    kevo__buf_printf(&b, " ws %llu |", (unsigned long long)offset);
    int64_t max_smem = 0;
    kevo_vars_get(props, "max_smem_per_block", &max_smem);
    for (size_t l = 0; l < kevo_candidate_launch_count(c); l++) {
        kevo_launch_geometry g = {.size = sizeof g};
        if (kevo_candidate_launch_geometry(c, l, env, &g, NULL) != KEVO_OK ||
            g.shared_bytes > (uint64_t)max_smem)
            goto error_b;
        kevo__buf_printf(&b, " %u %u %u %u %u %u %llu :", g.grid[0], g.grid[1],
                         g.grid[2], g.block[0], g.block[1], g.block[2],
                         (unsigned long long)g.shared_bytes);
        kevo__resolved_arg *args = NULL;
        size_t n = 0;
        if (kevo__launch_args(t, c, l, env, &args, &n, NULL) != KEVO_OK)
            goto error_b;
        for (size_t k = 0; k < max_args; k++)
            kevo__buf_printf(&b, " %lld",
                             k < n && args[k].kind == KEVO__ARG_VALUE
                                 ? (long long)args[k].value
                                 : 0LL);
        free(args);
        kevo__buf_puts(&b, " |");
    }
    for (size_t i = 0; i < nargs; i++)
        kevo__buf_printf(&b, " %lld/%lld", (long long)counts[i],
                         (long long)scalars[i]);
    kevo__buf_puts(out, b.data);
    kevo__buf_free(&b);
    kevo_vars_free(env);
    return;
error_b:
    kevo__buf_free(&b);
error:
    kevo__buf_puts(out, "error");
    kevo_vars_free(env);
}

/* ---- the plan program -----------------------------------------------------
 */

/* Prints, per line of dims on stdin (after a line of the device
 * properties), what the plan says, in oracle_line()'s format. */
static const char driver_body[] =
    "#include <inttypes.h>\n#include <stdio.h>\n\n"
    "int main(void)\n{\n"
    "    P(props) props;\n"
    "    int64_t *f = (int64_t *)&props;\n"
    "    for (size_t i = 0; i < sizeof props / sizeof(int64_t); i++)\n"
    "        if (scanf(\"%\" SCNd64, &f[i]) != 1)\n"
    "            return 2;\n"
    "    int64_t dims[U(NDIMS) + 1];\n"
    "    for (;;) {\n"
    "        for (int d = 0; d < U(NDIMS); d++)\n"
    "            if (scanf(\"%\" SCNd64, &dims[d]) != 1)\n"
    "                return 0;\n"
    "        P(plan_t) p;\n"
    "        if (P(plan_dims)(dims, &props, &p) != 0) {\n"
    "            printf(\"error %s\\n\", p.error);\n"
    "            continue;\n"
    "        }\n"
    "        printf(\"ok %d |\", p.variant);\n"
    "        for (int s = 0; s < U(NSCRATCH); s++)\n"
    "            printf(\" %llu@%llu\", (unsigned long "
    "long)p.scratch_bytes[s],\n"
    "                   (unsigned long long)p.scratch_offset[s]);\n"
    "        printf(\" ws %llu |\", (unsigned long long)p.workspace_bytes);\n"
    "        for (int l = 0; l < U(NLAUNCHES); l++) {\n"
    "            P(launch_plan) *q = &p.launch[l];\n"
    "            printf(\" %u %u %u %u %u %u %llu :\", q->grid[0], "
    "q->grid[1],\n"
    "                   q->grid[2], q->block[0], q->block[1], q->block[2],\n"
    "                   (unsigned long long)q->smem);\n"
    "            for (int k = 0; k < U(MAX_LAUNCH_ARGS); k++)\n"
    "                printf(\" %lld\", (long long)q->value[k]);\n"
    "            printf(\" |\");\n"
    "        }\n"
    "        for (int i = 0; i < U(NARGS); i++)\n"
    "            printf(\" %lld/%lld\", (long long)p.count[i],\n"
    "                   (long long)p.scalar[i]);\n"
    "        printf(\"\\n\");\n"
    "    }\n"
    "}\n";

static const char *cc(void)
{
    const char *c = getenv("CC");
    return c && *c ? c : "cc";
}

/* Builds the plan program of the package in dir; false when it fails. */
static bool build_driver(const char *dir, const char *name)
{
    char upper[80];
    size_t i = 0;
    for (; name[i] && i < sizeof upper - 1; i++)
        upper[i] =
            (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    upper[i] = '\0';
    char *src = kevo__asprintf(
        "#include \"%s_plan.h\"\n#define P(x) %s_##x\n#define U(x) %s_##x\n%s",
        name, name, upper, driver_body);
    char *path = kevo__path_join(dir, "driver.c");
    kevo__write_file_atomic(path, src, strlen(src), NULL);
    /* The plan is C99 without warnings, and C++ too. */
    char *cmd = kevo__asprintf(
        "cd '%s' && %s -std=c99 -Wall -Wextra -Werror -pedantic -o driver "
        "driver.c %s_plan.c -lm && "
        "(! command -v c++ >/dev/null || c++ -x c++ -std=c++17 -Wall -Wextra "
        "-Werror -fsyntax-only %s_plan.c)",
        dir, cc(), name, name);
    bool ok = run(cmd) == 0;
    free(cmd);
    free(path);
    free(src);
    return ok;
}

/* A random dim: small, near a power of two, large, or hostile. */
static int64_t draw(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t r = *state >> 33;
    switch (r % 8) {
    case 0: return (int64_t)(r >> 3) % 100 + 1;
    case 1:
    case 2:
        return ((int64_t)1 << ((r >> 3) % 25)) + (int64_t)((r >> 8) % 7) - 3;
    case 3: return (int64_t)((r >> 3) % 5000000) + 1;
    case 4: return (int64_t)((r >> 3) % 3000) + 1;
    case 5: return ((int64_t)1 << ((r >> 3) % 63)) + (int64_t)((r >> 9) % 3);
    case 6: return -(int64_t)((r >> 3) % 3);
    default: return (int64_t)((r >> 3) % 70000) + 1;
    }
}

static void put_props(kevo_buf *in, const kevo_vars *props)
{
    for (size_t i = 0; kevo__devprop_name(i); i++) {
        int64_t x = 0;
        kevo_vars_get(props, kevo__devprop_name(i), &x);
        kevo__buf_printf(in, "%lld ", (long long)x);
    }
    kevo__buf_puts(in, "\n");
}

/* Compares the plan program's lines with kevo's for the task's shapes and
 * many drawn ones, on the nominal H100 and a smaller device. */
static void compare_plans(const char *what, const char *dir, const char *name,
                          const kevo_task *task, const kevo_candidate *champ,
                          const char *dispatch, size_t nshapes)
{
    if (!build_driver(dir, name)) {
        ok(0, "%s: the plan compiles with %s", what, cc());
        return;
    }
    ok(1, "%s: the plan compiles with %s as C99 and C++ without warnings", what,
       cc());
    oracle o;
    oracle_init(&o, task, champ, dispatch);
    size_t max_args = 1;
    for (size_t l = 0; l < champ->blocks.nlaunches; l++)
        if (champ->blocks.launches[l].nargs > max_args)
            max_args = champ->blocks.launches[l].nargs;
    size_t nd = kevo_task_dim_count(task);
    for (int dev = 0; dev < 2; dev++) {
        kevo_vars *props = kevo_vars_new();
        kevo__devprops_nominal(props);
        if (dev == 1) {
            kevo_vars_set(props, "sm_count", 78);
            kevo_vars_set(props, "max_smem_per_block", 101376);
            kevo_vars_set(props, "cc", 86);
        }
        kevo_buf in = {0}, want = {0};
        put_props(&in, props);
        int64_t *dims = calloc(nd + 1, sizeof *dims);
        uint64_t state = 12345 + (uint64_t)dev;
        size_t fixed = kevo_task_shape_count(task, KEVO_SHAPES_TRAIN) +
                       kevo_task_shape_count(task, KEVO_SHAPES_HELD_OUT);
        for (size_t i = 0; i < fixed + nshapes; i++) {
            size_t nt = kevo_task_shape_count(task, KEVO_SHAPES_TRAIN);
            const int64_t *s =
                i < nt ? kevo_task_shape(task, KEVO_SHAPES_TRAIN, i)
                : i < fixed
                    ? kevo_task_shape(task, KEVO_SHAPES_HELD_OUT, i - nt)
                    : NULL;
            for (size_t d = 0; d < nd; d++) {
                dims[d] = s ? s[d] : draw(&state);
                /* Half the drawn shapes keep the task's other dims, so
                 * that most of them are shapes a kernel can run. */
                if (!s && nd > 1 && (i & 1) && d > 0)
                    dims[d] = kevo_task_shape(task, KEVO_SHAPES_TRAIN, 0)[d];
                kevo__buf_printf(&in, "%lld ", (long long)dims[d]);
            }
            kevo__buf_puts(&in, "\n");
            oracle_line(&o, dims, props, max_args, &want);
            kevo__buf_puts(&want, "\n");
        }
        char *inpath = kevo__path_join(dir, "shapes.txt");
        kevo__write_file_atomic(inpath, in.data, in.len, NULL);
        char *cmd = kevo__asprintf("cd '%s' && ./driver < shapes.txt", dir);
        FILE *f = popen(cmd, "r");
        size_t lines = 0, same = 0, oks = 0, errors = 0;
        unsigned seen = 0; /* the variants that ran, as bits */
        char got[4096];
        const char *w = want.data;
        while (f && fgets(got, sizeof got, f)) {
            const char *nl = strchr(w, '\n');
            size_t wl = (size_t)(nl - w);
            got[strcspn(got, "\n")] = '\0';
            bool agree;
            if (wl == 5 && strncmp(w, "error", 5) == 0)
                agree = strncmp(got, "error", 5) == 0, errors += agree;
            else
                agree = strlen(got) == wl && strncmp(got, w, wl) == 0,
                oks += agree;
            if (!agree && lines - same < 3)
                diag("%s: shape %zu: plan '%s', kevo '%.*s'", what, lines, got,
                     (int)wl, w);
            same += agree;
            int variant;
            if (sscanf(got, "ok %d", &variant) == 1 && variant < 32)
                seen |= 1u << variant;
            lines++;
            w = nl + 1;
        }
        int status = f ? pclose(f) : -1;
        ok(status == 0 && lines == fixed + nshapes && same == lines,
           "%s (device %d): the plan agrees with kevo at %zu of %zu shapes "
           "(%zu planned, %zu refused by both)",
           what, dev, same, fixed + nshapes, oks, errors);
        ok(oks > lines / 4 && (nshapes == 0 || errors > 0),
           "%s (device %d): both outcomes are covered", what, dev);
        if (dispatch)
            ok(__builtin_popcount(seen) >= 2,
               "%s (device %d): %d of the table's %zu variants run at the "
               "shapes (a variant whose constraints fail gives way to 0)",
               what, dev, __builtin_popcount(seen), o.nvariants);
        free(cmd);
        free(inpath);
        free(dims);
        kevo__buf_free(&in);
        kevo__buf_free(&want);
        kevo_vars_free(props);
    }
    /* Every variant the table names shows up. */
    oracle_free(&o);
}

/* ---- the CUDA side --------------------------------------------------------
 */

static const char *nvcc(void)
{
    static char path[256];
    if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
        return "/usr/local/cuda/bin/nvcc";
    if (run("command -v nvcc >/dev/null") == 0) {
        snprintf(path, sizeof path, "nvcc");
        return path;
    }
    return NULL;
}

static void compile_cuda(const char *what, const char *dir, const char *name,
                         bool all, const char *arch)
{
    const char *nv = nvcc();
    if (!nv) {
        printf("ok %d - # SKIP %s: no nvcc\n", ++tap_count_, what);
        return;
    }
    char *cmd;
    if (all)
        cmd = kevo__asprintf("cd '%s' && make -s -j2 NVCC=%s ARCH=%s "
                             "NVCCFLAGS='-O1 -Werror all-warnings' >&2",
                             dir, nv, arch);
    else
        cmd = kevo__asprintf(
            "cd '%s' && %s -std=c++17 -arch=%s --expt-relaxed-constexpr -O1 "
            "-Werror all-warnings -c %s.cu -o /dev/null && %s -std=c++17 "
            "-arch=%s --expt-relaxed-constexpr -O1 -Werror all-warnings -c "
            "%s_v0.cu -o /dev/null",
            dir, nv, arch, name, nv, arch, name);
    ok(run(cmd) == 0, "%s: nvcc compiles the %s", what,
       all ? "package (make)" : "launch function and a variant");
    free(cmd);
    /* The header is C. */
    cmd = kevo__asprintf("cd '%s' && printf '#include \"%s.h\"\\n' > hdr.c && "
                         "%s -std=c99 -Wall -Werror -fsyntax-only "
                         "-I/usr/local/cuda/include hdr.c",
                         dir, name, cc());
    ok(run(cmd) == 0, "%s: %s.h compiles as C", what, name);
    free(cmd);
}

static void check_python(const char *what, const char *dir, const char *name)
{
    if (run("command -v python3 >/dev/null") != 0) {
        printf("ok %d - # SKIP %s: no python3\n", ++tap_count_, what);
        return;
    }
    char *cmd = kevo__asprintf(
        "cd '%s' && python3 -c 'import ast,sys; "
        "ast.parse(open(sys.argv[1]).read())' %s/__init__.py && test -f "
        "%s/binding.cpp && test -f %s/csrc/%s.cu && test -f "
        "%s/csrc/%s_plan.cpp",
        dir, name, name, name, name, name, name);
    ok(run(cmd) == 0, "%s: the PyTorch package parses and has its sources",
       what);
    free(cmd);
}

/* ---- the cases ------------------------------------------------------------
 */

static void test_run(void)
{
    kevo_task *task = load_task("saxpy");
    char *dir = make_run(task);
    char *out = kevo__path_join(tmp, "saxpy-pkg");
    kevo_error e = KEVO__ERROR_INIT;
    is_int(kevo_export_run(dir, out, NULL, NULL, KEVO_EXPORT_C, &e), KEVO_OK,
           "a run without a dispatch table exports");
    if (e.code)
        diag("%s", e.text);
    /* The champion as the run left it. */
    char *summary_path = kevo__path_join(dir, "summary.json");
    json_t *summary = json_load_file(summary_path, 0, NULL);
    char *best = kevo__path_join(dir, "best.cu");
    char *src = slurp(best);
    kevo_candidate *champ = NULL;
    kevo_candidate_new_for_task(task, src, "best.cu", &champ, NULL);
    const char *key;
    json_t *v;
    json_object_foreach (
        json_object_get(json_object_get(summary, "champion"), "params"), key, v)
        kevo_candidate_set_param(champ, key, json_integer_value(v), NULL);
    compare_plans("saxpy run", out, "saxpy", task, champ, NULL, 300);

    /* With a dispatch table. */
    char *table = saxpy_dispatch(kevo_candidate_assignment(champ));
    char *tpath = kevo__path_join(dir, "best.dispatch.json");
    kevo__write_file_atomic(tpath, table, strlen(table), NULL);
    char *out2 = kevo__path_join(tmp, "saxpy-dispatch");
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_export_run(dir, out2, "saxpy_tuned", "sm_90a",
                           KEVO_EXPORT_C | KEVO_EXPORT_TORCH, &e),
           KEVO_OK, "a run with a dispatch table exports");
    if (e.code)
        diag("%s", e.text);
    char *readme_path = kevo__path_join(out2, "README.md");
    char *readme = slurp(readme_path);
    like_str(readme, "- fitness: ", "the README gives the fitness");
    like_str(readme, "- held-out gate: ", "... the gate's verdict");
    like_str(readme, "kevo search examples/tasks/saxpy.json --evals 40",
             "... the command of the run");
    like_str(readme, "(wrong at a held-out shape",
             "... and the variant the table found wrong");
    compare_plans("saxpy dispatch", out2, "saxpy_tuned", task, champ, table,
                  400);
    compile_cuda("saxpy dispatch", out2, "saxpy_tuned", true, "sm_90a");
    check_python("saxpy dispatch", out2, "saxpy_tuned");
    char *mk = kevo__path_join(out2, "Makefile");
    char *mtext = slurp(mk);
    like_str(mtext, "ARCH ?= sm_90a", "the Makefile builds for the target");
    free(mtext);
    free(mk);

    /* Errors. */
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_export_run(dir, out2, "int", NULL, KEVO_EXPORT_C, &e),
           KEVO_EINVAL, "a keyword is no package name");
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_export_run(dir, out2, NULL, NULL, 0, &e), KEVO_EINVAL,
           "no target is an error");
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_export_run(tmp, out2, NULL, NULL, KEVO_EXPORT_C, &e),
           KEVO_ENOENT, "a directory that is no run");
    kevo__write_file_atomic(tpath,
                            "{\"rule\": \"nearest_training_shape\", "
                            "\"shapes\": [{\"dims\": {\"n\": 5}, "
                            "\"params\": {\"BLOCK\": 100}}]}",
                            92, NULL);
    e = (kevo_error)KEVO__ERROR_INIT;
    is_int(kevo_export_run(dir, out2, NULL, NULL, KEVO_EXPORT_C, &e),
           KEVO_EINVALID, "a table whose parameters are out of the domain");
    like_str(e.text, "BLOCK=100", "... says which");

    free(readme);
    free(readme_path);
    free(out2);
    free(tpath);
    free(table);
    kevo_candidate_free(champ);
    free(src);
    free(best);
    json_decref(summary);
    free(summary_path);
    free(out);
    free(dir);
    kevo_task_free(task);
}

/* A champion in memory: the task's seed, or a source of tests/data/export,
 * with a table over its parameters given as JSON text. */
static void test_candidate(const char *task_name, const char *file,
                           const char *table, size_t nshapes, bool cuda)
{
    kevo_task *task = load_task(task_name);
    kevo_candidate *c = NULL;
    if (file) {
        char *path =
            kevo__asprintf("%s/tests/data/export/%s", tap_srcdir(), file);
        char *src = slurp(path);
        kevo_error e = KEVO__ERROR_INIT;
        if (kevo_candidate_new_for_task(task, src, file, &c, &e) != KEVO_OK)
            bail_out("%s: %s", path, e.text);
        free(src);
        free(path);
    } else {
        c = kevo_candidate_ref((kevo_candidate *)kevo_task_seed(task));
    }
    char *what = kevo__asprintf("%s%s%s", task_name, file ? " " : "",
                                file ? file : " seed");
    char *out = kevo__path_join(tmp, file ? file : task_name);
    kevo_error e = KEVO__ERROR_INIT;
    is_int(kevo_export_candidate(task, c, table, out, NULL, "sm_90a",
                                 KEVO_EXPORT_C | KEVO_EXPORT_TORCH, &e),
           KEVO_OK, "%s: exports", what);
    if (e.code)
        diag("%s", e.text);
    char name[80];
    snprintf(name, sizeof name, "%s", task_name);
    compare_plans(what, out, name, task, c, table, nshapes);
    if (cuda)
        compile_cuda(what, out, name, false, "sm_90a");
    free(out);
    free(what);
    kevo_candidate_free(c);
    kevo_task_free(task);
}

/* What the packages cannot carry yet is refused, naming the line: tensor
 * maps, cluster launches and conditional launches. */
static void test_refused(void)
{
    kevo_task *task = load_task("gemm_bf16");
    char *path =
        kevo__asprintf("%s/tests/data/hopper/gemm_bf16_tma.cu", tap_srcdir());
    char *src = slurp(path);
    kevo_candidate *c = NULL;
    kevo_error e = KEVO__ERROR_INIT;
    if (kevo_candidate_new_for_task(task, src, "gemm_bf16_tma.cu", &c, &e) !=
        KEVO_OK)
        bail_out("%s: %s", path, e.text);
    char *out = kevo__path_join(tmp, "refused");
    is_int(kevo_export_candidate(task, c, NULL, out, NULL, "sm_90a",
                                 KEVO_EXPORT_C, &e),
           KEVO_EINVALID, "a kernel with tensor maps is refused");
    ok(strstr(e.text, "gemm_bf16_tma.cu:24:") &&
           strstr(e.text, "tensormap 'tmA'"),
       "... naming its first map and the map's line");
    diag("%s", e.text);
    kevo_candidate_free(c);
    free(out);
    free(src);
    free(path);
    kevo_task_free(task);
}

int main(void)
{
    const char *b = getenv("KEVO_BUILDDIR");
    char *path = kevo__asprintf("%s/operators/.libs", b && *b ? b : ".");
    setenv(KEVO_OPERATOR_PATH_ENV, path, 1);
    free(path);
    char tmpl[] = "/tmp/kevo-test-export-XXXXXX";
    if (!(tmp = mkdtemp(tmpl)))
        bail_out("mkdtemp failed");
    test_run();
    test_refused();
    test_candidate(
        "reduce_sum", NULL,
        "{\"rule\": \"nearest_training_shape\", \"dims\": [\"n\"], "
        "\"shapes\": [{\"dims\": {\"n\": 16777216}, \"params\": {\"BLOCK\": "
        "512, \"VEC\": 4, \"BLOCKS_PER_SM\": 8}}, {\"dims\": {\"n\": 1000000}, "
        "\"params\": {\"BLOCK\": 256, \"VEC\": 2, \"BLOCKS_PER_SM\": 4}}, "
        "{\"dims\": {\"n\": 4099}, \"params\": {\"BLOCK\": 64, \"VEC\": 1, "
        "\"BLOCKS_PER_SM\": 1}}], \"held_out\": []}",
        300, true);
    test_candidate(
        "reduce_sum", "reduce_atomic.cu",
        "{\"rule\": \"nearest_training_shape\", \"dims\": [\"n\"], "
        "\"shapes\": [{\"dims\": {\"n\": 16777216}, \"params\": {\"BLOCK\": "
        "1024, \"ROWS\": 2, \"STAGE\": 64}}, {\"dims\": {\"n\": 1000000}, "
        "\"params\": {\"BLOCK\": 512, \"ROWS\": 4, \"STAGE\": 128}}, "
        "{\"dims\": {\"n\": 4099}, \"params\": {\"BLOCK\": 1024, \"ROWS\": 4, "
        "\"STAGE\": 16}}], \"held_out\": [{\"dims\": {\"n\": 333}, "
        "\"nearest\": "
        "2, \"params\": {\"BLOCK\": 1024, \"ROWS\": 4, \"STAGE\": 16}, "
        "\"correct\": true}]}",
        400, true);
    test_candidate("softmax", NULL, NULL, 200, true);
    test_candidate("histogram", NULL, NULL, 200, false);
    test_candidate("attention_bf16", NULL, NULL, 200, true);
    char *cmd = kevo__asprintf("rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        diag("could not remove %s", tmp);
    free(cmd);
    return done_testing();
}

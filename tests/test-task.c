/*
 * test-task.c: a task built in C through the public API: every setter and
 * getter, the errors of bad calls, validation, the JSON round trip, and
 * fitting candidates to the task.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/candidate_private.h"
#include "model/task_private.h"
#include "tap.h"

static const char reference_src[] =
    "// softmax reference\n"
    "/* kevo:launch\n"
    " *   softmax<<<rows, 256>>>(x, y, acc, rows, cols)\n"
    " */\n"
    "extern \"C\" __global__ void softmax(const float *x, float *y,\n"
    "                                    double *acc, int rows, int cols) {}\n";

static const char seed_src[] =
    "// kevo:param\n"
    "//   BLOCK in {128, 256, 512} = 256\n"
    "/* kevo:launch\n"
    " *   scratch partial f32[rows]\n"
    " *   softmax<<<rows, BLOCK, BLOCK * 4>>>(x, y, acc, partial, rows,\n"
    " *       cols, (u64)rows * cols, UNROLL, sm_count)\n"
    " */\n"
    "extern \"C\" __global__ void softmax() {}\n";

#define CHECK(call)                                                            \
    do {                                                                       \
        kevo_error e_;                                                         \
        kevo_error_init(&e_);                                                  \
        kevo_status rc_ = (call);                                              \
        if (rc_ != KEVO_OK)                                                    \
            bail_out("%s: %s", #call, e_.text);                                \
    } while (0)

/* A fresh error record for each expected failure. */
static kevo_error err;
static kevo_error *fresh(void)
{
    kevo_error_init(&err);
    return &err;
}

/* The task of these tests, built through every setter. */
static kevo_task *build(void)
{
    kevo_task *t = NULL;
    kevo_error e;
    kevo_error_init(&e);
    if (kevo_task_new("softmax", &t, &e) != KEVO_OK)
        bail_out("kevo_task_new: %s", e.text);
    kevo_error *ep = &e;
#define B(call)                                                                \
    if ((call) != KEVO_OK)                                                     \
    bail_out("%s: %s", #call, ep->text)
    B(kevo_task_set_description(t, "Row-wise softmax.", ep));
    B(kevo_task_add_dim(t, "rows", ep));
    B(kevo_task_add_dim(t, "cols", ep));
    B(kevo_task_add_buffer(t, "x", KEVO_DTYPE_F32, KEVO_ROLE_IN, "rows*cols",
                           ep));
    B(kevo_task_add_buffer(t, "y", KEVO_DTYPE_F32, KEVO_ROLE_OUT, "rows*cols",
                           ep));
    B(kevo_task_add_buffer(t, "acc", KEVO_DTYPE_F64, KEVO_ROLE_INOUT, "rows",
                           ep));
    B(kevo_task_add_buffer(t, "idx", KEVO_DTYPE_I32, KEVO_ROLE_IN, "rows", ep));
    B(kevo_task_add_buffer(t, "mask", KEVO_DTYPE_U8, KEVO_ROLE_IN, "cols", ep));
    B(kevo_task_add_scalar(t, "rows", KEVO_DTYPE_I32, "rows", ep));
    B(kevo_task_add_scalar(t, "alpha", KEVO_DTYPE_F32, NULL, ep));
    B(kevo_task_add_scalar(t, "beta", KEVO_DTYPE_F64, "0.5", ep));
    B(kevo_task_set_init(t, "x", KEVO_DIST_NORMAL, 0, 4, ep));
    B(kevo_task_set_init(t, "alpha", KEVO_DIST_UNIFORM, -1, 1, ep));
    B(kevo_task_set_init(t, "idx", KEVO_DIST_RANDINT, 0, 9, ep));
    B(kevo_task_set_init(t, "mask", KEVO_DIST_CONSTANT, 1, 0, ep));
    B(kevo_task_set_init(t, "acc", KEVO_DIST_NORMAL, 1, 0.5, ep));
    B(kevo_task_set_tolerance(t, NULL, 1e-5, 1e-6, ep));
    B(kevo_task_set_tolerance(t, "acc", 1e-4, 0, ep));
    B(kevo_task_set_cost(t, "8*rows*cols", "5*rows*cols", KEVO_PEAK_TF32, ep));
    B(kevo_paramspace_add_values(kevo_task_params(t), "UNROLL",
                                 (const int64_t[]){1, 2, 4}, 3, 2, ep));
    B(kevo_paramspace_add_constraint(kevo_task_params(t), "UNROLL <= 4", ep));
    B(kevo_task_set_reference(t, reference_src, "ref.cu", ep));
    B(kevo_task_set_seed(t, seed_src, "seed.cu", ep));
    B(kevo_task_add_shape(t, KEVO_SHAPES_TRAIN, (const int64_t[]){1024, 512}, 2,
                          ep));
    B(kevo_task_add_shape(t, KEVO_SHAPES_TRAIN, (const int64_t[]){64, 100}, 2,
                          ep));
    B(kevo_task_add_shape(t, KEVO_SHAPES_HELD_OUT, (const int64_t[]){33, 77}, 2,
                          ep));
    B(kevo_task_add_descriptor(t, "memory", 0, 0, 0, ep));
    B(kevo_task_add_descriptor_edges(t, "block_size",
                                     (const double[]){64, 128, 256}, 3, ep));
    B(kevo_task_add_descriptor(t, "occupancy", 4, 0, 1, ep));
    B(kevo_task_set_memory_limit(t, 1ull << 30, ep));
#undef B
    kevo_task_set_input_seed(t, 42);
    return t;
}

static void test_new(void)
{
    kevo_task *t = (kevo_task *)1;
    is_int(kevo_task_new("my task", &t, fresh()), KEVO_EINVAL, "bad name");
    ok(t == NULL, "... *out is NULL");
    like_str(err.text, "task name 'my task' is not valid", "... message");
    is_int(kevo_task_new("", &t, fresh()), KEVO_EINVAL, "empty name");
    is_int(kevo_task_new(".hidden", &t, fresh()), KEVO_EINVAL,
           "a name starting with '.'");
    is_int(kevo_task_new(NULL, &t, fresh()), KEVO_EINVAL, "NULL name");
    is_int(kevo_task_new("x", NULL, fresh()), KEVO_EINVAL, "NULL out");
    is_int(kevo_task_new("layer-norm.v2_f16", &t, fresh()), KEVO_OK,
           "letters, digits, '_', '-' and '.'");
    is_str(kevo_task_name(t), "layer-norm.v2_f16", "name");
    is_str(kevo_task_description(t), "", "no description: \"\"");
    ok(kevo_task_origin(t) == NULL, "built in C: no origin");
    is_uint(kevo_task_memory_limit(t), KEVO_TASK_MEMORY_LIMIT_DEFAULT,
            "default memory limit");
    is_uint(kevo_task_input_seed(t), 1, "default input seed");
    is_int(kevo_task_peak(t), KEVO_PEAK_FP32, "default peak");
    is_uint(kevo_task_descriptor_count(t), 2, "default descriptors: 2");
    is_str(kevo_task_descriptor_name(t, 0), "memory", "... memory");
    is_str(kevo_task_descriptor_name(t, 1), "block_size", "... block_size");
    ok(kevo_task_descriptor_name(t, 2) == NULL, "... and no third");
    const kevo_task_descriptor *d = kevo__task_descriptor(t, 0);
    ok(d && d->nbins == 4 && d->lo == 0 && d->hi == 4 && d->nedges == 0,
       "memory: 4 bins over [0, 4)");
    d = kevo__task_descriptor(t, 1);
    ok(d && d->nedges == 4 && d->edges[0] == 64 && d->edges[3] == 512,
       "block_size: edges 64 128 256 512");
    ok(kevo__task_descriptor(t, 2) == NULL, "no third default");
    ok(kevo_task_reference(t) == NULL && kevo_task_seed(t) == NULL,
       "no kernels yet");
    is_int(kevo_task_validate(t, fresh()), KEVO_EINVALID,
           "an empty task does not validate");
    like_str(err.text, "task 'layer-norm.v2_f16': the task has no dim",
             "... message");
    double bytes;
    kevo_vars *v = kevo_vars_new();
    is_int(kevo_task_cost(t, v, &bytes, NULL, fresh()), KEVO_ESTATE,
           "cost without a cost model");
    kevo_vars_free(v);
    kevo_task_free(t);
    kevo_task_free(NULL);
}

static void test_setter_errors(void)
{
    kevo_task *t = NULL;
    CHECK(kevo_task_new("t", &t, &e_));
    is_int(kevo_task_add_shape(t, KEVO_SHAPES_TRAIN, (const int64_t[]){1}, 1,
                               fresh()),
           KEVO_ESTATE, "a shape before any dim");
    is_int(kevo_task_add_dim(t, "2x", fresh()), KEVO_EINVAL,
           "dim: not an identifier");
    like_str(err.text, "dim name '2x' is not an identifier", "... message");
    is_int(kevo_task_add_dim(t, "warp_size", fresh()), KEVO_EINVAL,
           "dim: a device property's name");
    like_str(err.text, "is the name of a device property", "... message");
    CHECK(kevo_task_add_dim(t, "n", &e_));
    is_int(kevo_task_add_dim(t, "n", fresh()), KEVO_EEXIST, "dim twice");
    like_str(err.text, "dim 'n' is declared twice", "... message");
    CHECK(kevo_task_add_dim(t, "m", &e_));
    is_uint(kevo_task_dim_count(t), 2, "two dims");
    is_str(kevo_task_dim_name(t, 1), "m", "dim 1");
    ok(kevo_task_dim_name(t, 2) == NULL, "dim 2: NULL");

    is_int(kevo_task_add_buffer(t, "a b", KEVO_DTYPE_F32, KEVO_ROLE_IN, "n",
                                fresh()),
           KEVO_EINVAL, "buffer: bad name");
    like_str(err.text, "buffer name 'a b' is not an identifier", "... message");
    is_int(kevo_task_add_buffer(t, "x", (kevo_dtype)99, KEVO_ROLE_IN, "n",
                                fresh()),
           KEVO_EINVAL, "buffer: bad type");
    like_str(err.text, "buffer 'x' has an unknown element type 99",
             "... message");
    is_int(kevo_task_add_buffer(t, "x", KEVO_DTYPE_F32, KEVO_ROLE_SCALAR, "n",
                                fresh()),
           KEVO_EINVAL, "buffer: the scalar role");
    like_str(err.text, "buffer 'x' needs the role in, out or inout",
             "... message");
    is_int(kevo_task_add_buffer(t, "x", KEVO_DTYPE_F32, KEVO_ROLE_IN, "n *",
                                fresh()),
           KEVO_EPARSE, "buffer: bad count");
    like_str(err.text, "count of buffer 'x': expression 'n *', column 4:",
             "... message with the column");
    is_int(kevo_task_add_buffer(t, "x", KEVO_DTYPE_F32, KEVO_ROLE_IN, NULL,
                                fresh()),
           KEVO_EINVAL, "buffer: no count");
    CHECK(
        kevo_task_add_buffer(t, "x", KEVO_DTYPE_F32, KEVO_ROLE_IN, "n*m", &e_));
    is_int(kevo_task_add_buffer(t, "x", KEVO_DTYPE_F32, KEVO_ROLE_OUT, "n",
                                fresh()),
           KEVO_EEXIST, "buffer: name taken");
    like_str(err.text, "argument 'x' is declared twice", "... message");
    CHECK(kevo_task_add_buffer(t, "y", KEVO_DTYPE_F16, KEVO_ROLE_OUT, "n*m",
                               &e_));
    CHECK(kevo_task_add_buffer(t, "k", KEVO_DTYPE_U8, KEVO_ROLE_IN, "n", &e_));

    is_int(kevo_task_add_scalar(t, "x", KEVO_DTYPE_I32, "n", fresh()),
           KEVO_EEXIST, "scalar: name taken");
    is_int(kevo_task_add_scalar(t, "s", KEVO_DTYPE_F32, "abc", fresh()),
           KEVO_EINVAL, "scalar: a float value that is no number");
    like_str(err.text,
             "value 'abc' of scalar 's' is not a finite decimal number that "
             "f32 holds",
             "... message");
    is_int(kevo_task_add_scalar(t, "s", KEVO_DTYPE_F16, "1e6", fresh()),
           KEVO_EINVAL, "scalar: a value f16 does not hold");
    is_int(kevo_task_add_scalar(t, "s", KEVO_DTYPE_I32, "n +", fresh()),
           KEVO_EPARSE, "scalar: a bad integer expression");
    like_str(err.text, "value of scalar 's': expression 'n +'", "... message");
    CHECK(kevo_task_add_scalar(t, "s", KEVO_DTYPE_I64, "n * m", &e_));
    CHECK(kevo_task_add_scalar(t, "r", KEVO_DTYPE_F32, NULL, &e_));

    is_int(kevo_task_set_init(t, "nope", KEVO_DIST_NORMAL, 0, 1, fresh()),
           KEVO_ENOENT, "init: unknown argument");
    like_str(err.text, "the task has no argument called 'nope'", "... message");
    is_int(kevo_task_set_init(t, "y", KEVO_DIST_CONSTANT, 0, 0, fresh()),
           KEVO_EINVAL, "init on an output");
    like_str(err.text,
             "init on output 'y': an out buffer is written by the "
             "kernel",
             "... message");
    is_int(kevo_task_set_init(t, "s", KEVO_DIST_RANDINT, 0, 1, fresh()),
           KEVO_EINVAL, "init on a scalar with a value");
    like_str(err.text, "init on scalar 's', which has the fixed value 'n * m'",
             "... message");
    is_int(kevo_task_set_init(t, "x", KEVO_DIST_RANDINT, -3, 3, fresh()),
           KEVO_OK, "randint on a float: whole numbers, which tie");
    is_int(kevo_task_set_init(t, "x", KEVO_DIST_RANDINT, 0, 16777217, fresh()),
           KEVO_EINVAL, "randint on f32 past 2^24");
    like_str(err.text,
             "randint on f32 needs whole numbers lo <= hi from -1.67772e+07 "
             "to 1.67772e+07, where f32 holds every whole number",
             "... message");
    is_int(kevo_task_set_init(t, "x", KEVO_DIST_RANDINT, 0.5, 2, fresh()),
           KEVO_EINVAL, "randint on a float from 0.5");
    is_int(kevo_task_set_init(t, "k", KEVO_DIST_NORMAL, 0, 1, fresh()),
           KEVO_EINVAL, "normal on an integer");
    like_str(err.text, "'normal' draws real numbers and 'k' is u8",
             "... message");
    is_int(kevo_task_set_init(t, "k", KEVO_DIST_RANDINT, -1, 9, fresh()),
           KEVO_EINVAL, "randint outside the type");
    like_str(err.text, "randint needs integers lo <= hi that u8 holds",
             "... message");
    is_int(kevo_task_set_init(t, "k", KEVO_DIST_RANDINT, 0, 2.5, fresh()),
           KEVO_EINVAL, "randint with a fraction");
    is_int(kevo_task_set_init(t, "k", KEVO_DIST_CONSTANT, 256, 0, fresh()),
           KEVO_EINVAL, "a constant outside the type");
    is_int(kevo_task_set_init(t, "x", KEVO_DIST_NORMAL, 0, 0, fresh()),
           KEVO_EINVAL, "normal with std 0");
    is_int(kevo_task_set_init(t, "x", KEVO_DIST_UNIFORM, 1, 1, fresh()),
           KEVO_EINVAL, "uniform with lo == hi");
    is_int(kevo_task_set_init(t, "x", (kevo_dist)9, 0, 1, fresh()), KEVO_EINVAL,
           "unknown distribution");
    is_int(kevo_task_set_init(t, "r", KEVO_DIST_CONSTANT, 3.5, 0, fresh()),
           KEVO_OK, "a constant random scalar");
    is_int(kevo_task_set_init(t, "x", KEVO_DIST_DEFAULT, 5, 5, fresh()),
           KEVO_OK, "back to the default");
    kevo_arg_info info = {.size = sizeof info};
    CHECK(kevo_task_arg_info(t, 0, &info));
    ok(info.dist == KEVO_DIST_DEFAULT && info.dist_a == 0 && info.dist_b == 1,
       "the default of a float: normal(0, 1)");
    CHECK(kevo_task_arg_info(t, 2, &info));
    ok(info.dist == KEVO_DIST_DEFAULT && info.dist_a == 0 && info.dist_b == 127,
       "the default of an integer: randint(0, 127)");

    is_int(kevo_task_set_tolerance(t, "x", 1e-3, 0, fresh()), KEVO_EINVAL,
           "tolerance on an input");
    like_str(err.text,
             "tolerance on input 'x': a tolerance applies to out "
             "and inout buffers only",
             "... message");
    is_int(kevo_task_set_tolerance(t, "s", 1e-3, 0, fresh()), KEVO_EINVAL,
           "tolerance on a scalar");
    like_str(err.text, "tolerance on scalar 's'", "... message");
    is_int(kevo_task_set_tolerance(t, "zz", 1e-3, 0, fresh()), KEVO_ENOENT,
           "tolerance on an unknown output");
    is_int(kevo_task_set_tolerance(t, NULL, -1, 0, fresh()), KEVO_EINVAL,
           "a negative tolerance");
    like_str(err.text, "rtol and atol must be finite and >= 0", "... message");
    CHECK(kevo_task_set_tolerance(t, "y", 1e-2, 1e-3, &e_));
    CHECK(kevo_task_set_tolerance(t, NULL, 1e-5, 0, &e_));
    CHECK(kevo_task_arg_info(t, 1, &info));
    ok(info.rtol == 1e-2 && info.atol == 1e-3,
       "a later default does not override an output's own tolerance");

    is_int(kevo_task_set_cost(t, NULL, "n", KEVO_PEAK_FP32, fresh()),
           KEVO_EINVAL, "cost without bytes");
    is_int(kevo_task_set_cost(t, "n", "n", (kevo_peak)9, fresh()), KEVO_EINVAL,
           "cost: bad peak");
    like_str(err.text,
             "unknown peak 9 (known: fp32, fp64, tf32, fp16, bf16, fp8)",
             "... message");
    is_int(kevo_task_set_cost(t, "4*", "n", KEVO_PEAK_FP32, fresh()),
           KEVO_EPARSE, "cost: bad bytes expression");
    like_str(err.text, "cost bytes: expression '4*'", "... message");
    is_int(kevo_task_set_cost(t, "n", "(n", KEVO_PEAK_FP32, fresh()),
           KEVO_EPARSE, "cost: bad flops expression");
    like_str(err.text, "cost flops: expression '(n'", "... message");

    is_int(kevo_task_set_seed(t, "int x;\n", "s.cu", fresh()), KEVO_EINVALID,
           "a seed without a kevo:launch block");
    like_str(err.text, "s.cu: no kevo:launch block", "... message");
    ok(kevo_task_seed(t) == NULL, "... leaves no seed");
    is_int(kevo_task_set_reference(t, NULL, NULL, fresh()), KEVO_EINVAL,
           "a NULL reference");

    is_int(kevo_task_add_shape(t, KEVO_SHAPES_TRAIN, (const int64_t[]){1, 2, 3},
                               3, fresh()),
           KEVO_EINVAL, "a shape of the wrong length");
    like_str(err.text, "a shape needs 2 values, one per dim (n, m), got 3",
             "... message");
    is_int(kevo_task_add_shape(t, KEVO_SHAPES_TRAIN, (const int64_t[]){4, 0}, 2,
                               fresh()),
           KEVO_EINVAL, "a zero dim");
    like_str(err.text, "shape value 0 of dim 'm' is not positive",
             "... message");
    is_int(kevo_task_add_shape(t, KEVO_SHAPES_HELD_OUT,
                               (const int64_t[]){-5, 3}, 2, fresh()),
           KEVO_EINVAL, "a negative dim");
    like_str(err.text, "shape value -5 of dim 'n' is not positive",
             "... message");
    is_int(kevo_task_add_shape(t, (kevo_shape_set)7, (const int64_t[]){4, 4}, 2,
                               fresh()),
           KEVO_EINVAL, "an unknown shape set");
    CHECK(kevo_task_add_shape(t, KEVO_SHAPES_TRAIN, (const int64_t[]){4, 4}, 2,
                              &e_));
    is_int(kevo_task_add_dim(t, "late", fresh()), KEVO_ESTATE,
           "a dim after a shape");
    like_str(err.text, "add every dim before the first shape", "... message");

    is_int(kevo_task_add_descriptor(t, "memroy", 0, 0, 0, fresh()), KEVO_EINVAL,
           "unknown descriptor");
    like_str(err.text,
             "unknown descriptor 'memroy' (known: memory, "
             "block_size, warp_ops",
             "... message lists the known");
    is_int(kevo_task_add_descriptor(t, "occupancy", 4, 1, 1, fresh()),
           KEVO_EINVAL, "descriptor: empty range");
    is_int(kevo_task_add_descriptor_edges(t, "registers",
                                          (const double[]){32, 16}, 2, fresh()),
           KEVO_EINVAL, "descriptor: edges not increasing");
    like_str(err.text, "edges must be finite and increasing", "... message");
    CHECK(kevo_task_add_descriptor(t, "warp_ops", 0, 0, 0, &e_));
    is_int(kevo_task_add_descriptor(t, "warp_ops", 2, 0, 2, fresh()),
           KEVO_EEXIST, "descriptor twice");
    is_uint(kevo_task_descriptor_count(t), 1,
            "a named descriptor replaces the defaults");

    is_int(kevo_task_set_memory_limit(t, 0, fresh()), KEVO_EINVAL,
           "a memory limit of 0");
    is_int(kevo_task_set_description(t, "\xff\xfe", fresh()), KEVO_EINVAL,
           "a description that is not UTF-8");
    is_int(kevo_task_arg_info(t, 99, &info), KEVO_EINVAL,
           "arg_info out of range");
    is_int(kevo_task_arg_info(t, 0, NULL), KEVO_EINVAL, "arg_info NULL");
    kevo_task_free(t);
}

static void test_getters(kevo_task *t)
{
    is_str(kevo_task_name(t), "softmax", "name");
    is_str(kevo_task_description(t), "Row-wise softmax.", "description");
    is_uint(kevo_task_dim_count(t), 2, "dims");
    is_uint(kevo_task_arg_count(t), 8, "arguments");

    kevo_arg_info info = {0};
    CHECK(kevo_task_arg_info(t, 0, &info));
    is_uint(info.size, sizeof info, "size 0 is taken as the whole struct");
    ok(strcmp(info.name, "x") == 0 && info.type == KEVO_DTYPE_F32 &&
           info.role == KEVO_ROLE_IN && strcmp(info.count, "rows*cols") == 0 &&
           info.value == NULL,
       "x: f32 in rows*cols");
    ok(info.dist == KEVO_DIST_NORMAL && info.dist_a == 0 && info.dist_b == 4,
       "x: normal(0, 4)");
    CHECK(kevo_task_arg_info(t, 1, &info));
    ok(info.role == KEVO_ROLE_OUT && info.rtol == 1e-5 && info.atol == 1e-6,
       "y: the task's tolerance");
    CHECK(kevo_task_arg_info(t, 2, &info));
    ok(info.role == KEVO_ROLE_INOUT && info.type == KEVO_DTYPE_F64 &&
           info.rtol == 1e-4 && info.atol == 0,
       "acc: f64 inout with its own tolerance");
    ok(info.dist == KEVO_DIST_NORMAL && info.dist_a == 1 && info.dist_b == 0.5,
       "acc: drawn like an input");
    CHECK(kevo_task_arg_info(t, 3, &info));
    ok(info.dist == KEVO_DIST_RANDINT && info.dist_a == 0 && info.dist_b == 9,
       "idx: randint(0, 9)");
    CHECK(kevo_task_arg_info(t, 4, &info));
    ok(info.dist == KEVO_DIST_CONSTANT && info.dist_a == 1, "mask: constant 1");
    CHECK(kevo_task_arg_info(t, 5, &info));
    ok(info.role == KEVO_ROLE_SCALAR && strcmp(info.value, "rows") == 0 &&
           info.count == NULL,
       "rows: scalar with the value rows");
    CHECK(kevo_task_arg_info(t, 6, &info));
    ok(info.value == NULL && info.dist == KEVO_DIST_UNIFORM &&
           info.dist_a == -1 && info.dist_b == 1,
       "alpha: a random scalar, uniform(-1, 1)");
    CHECK(kevo_task_arg_info(t, 7, &info));
    is_str(info.value, "0.5", "beta: value");
    /* A caller built against a smaller struct gets what fits. */
    struct {
        size_t size;
        const char *name;
    } small = {sizeof small, NULL};
    CHECK(kevo_task_arg_info(t, 7, (kevo_arg_info *)&small));
    ok(small.size == sizeof small && strcmp(small.name, "beta") == 0,
       "a smaller struct is filled up to its size");

    ok(kevo_task_reference(t) != NULL, "reference");
    is_str(kevo_candidate_origin(kevo_task_seed(t)), "seed.cu", "seed origin");
    size_t index;
    is_int(kevo_paramspace_find(kevo_candidate_params(kevo_task_seed(t)),
                                "UNROLL", &index),
           KEVO_OK, "the seed holds the task's parameter");

    is_uint(kevo_task_shape_count(t, KEVO_SHAPES_TRAIN), 2, "training shapes");
    is_uint(kevo_task_shape_count(t, KEVO_SHAPES_HELD_OUT), 1,
            "held-out shapes");
    is_uint(kevo_task_shape_count(t, (kevo_shape_set)5), 0, "unknown set");
    const int64_t *s = kevo_task_shape(t, KEVO_SHAPES_TRAIN, 1);
    ok(s && s[0] == 64 && s[1] == 100, "shape 1: 64 x 100");
    ok(kevo_task_shape(t, KEVO_SHAPES_TRAIN, 2) == NULL, "shape 2: NULL");
    kevo_vars *v = kevo_vars_new();
    kevo_vars_set(v, "other", 5);
    is_int(kevo_task_shape_vars(t, KEVO_SHAPES_HELD_OUT, 0, v), KEVO_OK,
           "shape_vars");
    int64_t rows = 0, other = 0;
    kevo_vars_get(v, "rows", &rows);
    kevo_vars_get(v, "other", &other);
    ok(rows == 33 && other == 5, "shape_vars sets the dims, keeps the rest");
    is_int(kevo_task_shape_vars(t, KEVO_SHAPES_HELD_OUT, 1, v), KEVO_EINVAL,
           "shape_vars out of range");

    CHECK(kevo_task_shape_vars(t, KEVO_SHAPES_TRAIN, 0, v));
    double bytes = 0, flops = 0;
    CHECK(kevo_task_cost(t, v, &bytes, &flops, &e_));
    is_double(bytes, 8.0 * 1024 * 512, 0, "cost bytes");
    is_double(flops, 5.0 * 1024 * 512, 0, "cost flops");
    is_int(kevo_task_cost(t, v, NULL, NULL, fresh()), KEVO_OK,
           "cost with NULL outputs");
    is_int(kevo_task_peak(t), KEVO_PEAK_TF32, "peak");
    is_str(kevo_peak_name(KEVO_PEAK_FP32), "fp32", "peak name fp32");
    is_str(kevo_peak_name(KEVO_PEAK_FP64), "fp64", "peak name fp64");
    is_str(kevo_peak_name(KEVO_PEAK_TF32), "tf32", "peak name tf32");
    is_str(kevo_peak_name(KEVO_PEAK_FP16), "fp16", "peak name fp16");
    is_str(kevo_peak_name(KEVO_PEAK_BF16), "bf16", "peak name bf16");
    is_str(kevo_peak_name(KEVO_PEAK_FP8), "fp8", "peak name fp8");
    is_str(kevo_peak_name((kevo_peak)42), "?", "peak name of nonsense");

    /* x and y twice, acc three times (input copy and reference), idx
     * and mask twice. */
    uint64_t fp = 0;
    CHECK(kevo_task_footprint(t, v, &fp, &e_));
    is_uint(fp, 2 * 4 * 1024 * 512 * 2 + 3 * 8 * 1024 + 2 * 4 * 1024 + 2 * 512,
            "footprint");
    kevo_vars_clear(v);
    is_int(kevo_task_footprint(t, v, &fp, fresh()), KEVO_EUNDEFINED,
           "footprint without the dims");
    kevo_vars_free(v);

    is_uint(kevo_task_memory_limit(t), 1ull << 30, "memory limit");
    is_uint(kevo_task_input_seed(t), 42, "input seed");
    is_uint(kevo_task_descriptor_count(t), 3, "descriptors");
    is_str(kevo_task_descriptor_name(t, 1), "block_size", "descriptor 1");
    const kevo_task_descriptor *d = kevo__task_descriptor(t, 1);
    ok(d->nedges == 3 && d->edges[2] == 256, "block_size: its own edges");
    d = kevo__task_descriptor(t, 2);
    ok(d->nbins == 4 && d->lo == 0 && d->hi == 1, "occupancy: 4 bins");
    is_uint(kevo_paramspace_count(kevo_task_params(t)), 1, "task parameters");
}

static void test_round_trip(kevo_task *t)
{
    char *json = NULL, *json2 = NULL;
    CHECK(kevo_task_to_json(t, &json, &e_));
    kevo_task *again = NULL;
    is_int(kevo_task_load_string(json, NULL, NULL, &again, fresh()), KEVO_OK,
           "the C task's JSON loads");
    if (!again) {
        diag("%s", err.text);
        free(json);
        return;
    }
    CHECK(kevo_task_to_json(again, &json2, &e_));
    is_str(json2, json, "to_json of the reloaded task is the same");
    kevo_arg_info info = {.size = sizeof info};
    CHECK(kevo_task_arg_info(again, 2, &info));
    ok(info.rtol == 1e-4 && info.dist == KEVO_DIST_NORMAL,
       "per-output tolerance and init survive");
    is_uint(kevo_task_input_seed(again), 42, "input seed survives");
    is_uint(kevo_task_memory_limit(again), 1ull << 30, "memory limit survives");
    is_str(kevo_task_description(again), "Row-wise softmax.",
           "description survives");
    is_str(kevo_candidate_source(kevo_task_seed(again)), seed_src,
           "seed source survives");
    kevo_task_free(again);
    free(json);
    free(json2);
}

/* The version the evaluator keys a task's JSON on: it changes with every
 * change, and two tasks never share one, even with the same contents at
 * the same address. */
static void test_versions(void)
{
    char *json = NULL;
    kevo_task *t = build();
    CHECK(kevo_task_to_json(t, &json, &e_));
    kevo__task_version v0, v1;
    kevo__task_version_of(t, &v0);
    kevo__task_version_of(t, &v1);
    ok(kevo__task_version_equal(&v0, &v1), "unchanged: the same version");
    is_str(kevo_task_name(t), "softmax", "a getter changes nothing");
    kevo__task_version_of(t, &v1);
    ok(kevo__task_version_equal(&v0, &v1), "... nor its version");

    kevo_task_set_input_seed(t, 43);
    kevo__task_version_of(t, &v1);
    ok(!kevo__task_version_equal(&v0, &v1), "set_input_seed: a new version");
    v0 = v1;
    int64_t shape[] = {64, 32};
    CHECK(kevo_task_add_shape(t, KEVO_SHAPES_HELD_OUT, shape, 2, &e_));
    kevo__task_version_of(t, &v1);
    ok(!kevo__task_version_equal(&v0, &v1), "add_shape: a new version");
    v0 = v1;
    CHECK(kevo_task_set_description(t, "changed", &e_));
    kevo__task_version_of(t, &v1);
    ok(!kevo__task_version_equal(&v0, &v1), "set_description: a new version");
    v0 = v1;
    CHECK(kevo_paramspace_add_range(kevo_task_params(t), "SPLIT", 1, 4, 1, 1,
                                    &e_));
    kevo__task_version_of(t, &v1);
    ok(!kevo__task_version_equal(&v0, &v1),
       "a parameter added through kevo_task_params: a new version");
    v0 = v1;
    CHECK(
        kevo_paramspace_add_constraint(kevo_task_params(t), "SPLIT <= 4", &e_));
    kevo__task_version_of(t, &v1);
    ok(!kevo__task_version_equal(&v0, &v1), "... and a constraint");

    /* The same JSON loaded twice, the first copy freed before the second
     * is made (malloc tends to give the same address back). */
    kevo_task *a = NULL, *b = NULL;
    CHECK(kevo_task_load_string(json, NULL, NULL, &a, &e_));
    kevo__task_version_of(a, &v0);
    uintptr_t where = (uintptr_t)a;
    kevo_task_free(a);
    CHECK(kevo_task_load_string(json, NULL, NULL, &b, &e_));
    kevo__task_version_of(b, &v1);
    ok(!kevo__task_version_equal(&v0, &v1),
       "two tasks of the same JSON have different versions%s",
       (uintptr_t)b == where ? " (at the same address)" : "");
    kevo_task_free(b);
    kevo_task_free(t);
    free(json);
}

/* Each failure of validation names the task, the shape and the value. */
static void test_validate_errors(void)
{
    kevo_task *t = build();
    CHECK(kevo_task_add_shape(t, KEVO_SHAPES_HELD_OUT,
                              (const int64_t[]){64, 100}, 2, &e_));
    is_int(kevo_task_validate(t, fresh()), KEVO_EINVALID,
           "a held-out shape equal to a training shape");
    like_str(err.text,
             "task 'softmax': held-out shape 1: held-out shape (rows=64, "
             "cols=100) equals training shape 1; held-out shapes must differ",
             "... message");
    kevo_task_free(t);

    t = build();
    CHECK(kevo_task_add_shape(t, KEVO_SHAPES_HELD_OUT,
                              (const int64_t[]){3, 1 << 20}, 2, &e_));
    CHECK(kevo_task_set_memory_limit(t, 16 << 20, &e_));
    is_int(kevo_task_validate(t, fresh()), KEVO_ELIMIT,
           "over the memory limit");
    like_str(err.text,
             "task 'softmax': held-out shape 1: one evaluation needs 52428896 "
             "bytes of device memory",
             "... message");
    kevo_task_free(t);

    t = build();
    CHECK(kevo_task_set_seed(t,
                             "/* kevo:launch\n"
                             " *   softmax<<<rows / 64, 256>>>(x, y, acc)\n"
                             " */\n",
                             "grid.cu", &e_));
    is_int(kevo_task_validate(t, fresh()), KEVO_EINVALID,
           "a seed grid of 0 at a held-out shape");
    like_str(err.text,
             "task 'softmax': held-out shape 0: seed grid.cu:2: kevo:launch: "
             "grid of 'softmax' is 0: it must be positive at rows=33, cols=77",
             "... message");
    kevo_task_free(t);

    t = build();
    CHECK(kevo_task_set_seed(t,
                             "/* kevo:launch softmax<<<rows, 256, 300000>>>(x, "
                             "y, acc) */\n",
                             "smem.cu", &e_));
    is_int(kevo_task_validate(t, fresh()), KEVO_ELIMIT,
           "too much shared memory");
    like_str(err.text,
             "training shape 0: seed smem.cu:1: kevo:launch: kernel 'softmax' "
             "asks for 300000 bytes of dynamic shared memory, more than "
             "max_smem_per_block (232448) at rows=1024, cols=512",
             "... message");
    kevo_task_free(t);

    t = build();
    CHECK(kevo_task_set_seed(t,
                             "/* kevo:launch\n"
                             " *   scratch tmp f32[rows - 64]\n"
                             " *   softmax<<<rows, 256>>>(x, y, acc, tmp)\n"
                             " */\n",
                             "scratch.cu", &e_));
    is_int(kevo_task_validate(t, fresh()), KEVO_EINVALID,
           "a scratch buffer of 0 elements");
    like_str(err.text,
             "training shape 1: seed scratch.cu:2: kevo:launch: scratch buffer "
             "'tmp' has 0 elements ('rows - 64')",
             "... message");
    kevo_task_free(t);

    t = build();
    CHECK(kevo_task_set_reference(t,
                                  "/* kevo:launch softmax<<<rows, 256>>>(x, y, "
                                  "acc, flag) */\n",
                                  "ref.cu", &e_));
    is_int(kevo_task_validate(t, fresh()), KEVO_EINVALID,
           "a reference launch argument that names nothing");
    like_str(err.text,
             "task 'softmax': reference: ref.cu:1: kevo:launch: argument "
             "'flag' of kernel 'softmax' names no task argument",
             "... message");
    kevo_task_free(t);

    t = build();
    CHECK(kevo_paramspace_add_constraint(kevo_task_params(t),
                                         "rows % (UNROLL * 8) == 0", &e_));
    is_int(kevo_task_validate(t, fresh()), KEVO_ECONSTRAINT,
           "a task constraint that fails at the defaults");
    like_str(err.text,
             "task 'softmax': held-out shape 0: constraint 'rows % (UNROLL * "
             "8) == 0' fails with the default parameters (UNROLL=2) at "
             "rows=33, cols=77",
             "... message");
    kevo_task_free(t);

    t = build();
    CHECK(kevo_paramspace_add_values(kevo_task_params(t), "cols",
                                     (const int64_t[]){1}, 1, 1, &e_));
    is_int(kevo_task_validate(t, fresh()), KEVO_EINVALID,
           "a task parameter named like a dim");
    like_str(err.text,
             "task 'softmax': parameter 'cols': parameter 'cols' has the name "
             "of a dim",
             "... message");
    kevo_task_free(t);

    t = build();
    CHECK(kevo_task_add_scalar(t, "small", KEVO_DTYPE_I16, "rows * cols", &e_));
    is_int(kevo_task_validate(t, fresh()), KEVO_EINVALID,
           "a scalar value its type does not hold");
    like_str(err.text,
             "training shape 0: value 'rows * cols' of scalar 'small' is "
             "524288 at rows=1024, cols=512, which i16 does not hold",
             "... message");
    kevo_task_free(t);

    t = build();
    CHECK(kevo_task_set_cost(t, "rows - 100", NULL, KEVO_PEAK_FP32, &e_));
    is_int(kevo_task_validate(t, fresh()), KEVO_EINVALID, "a negative cost");
    like_str(err.text,
             "training shape 1: cost bytes 'rows - 100' is -36 at rows=64, "
             "cols=100; a cost must not be negative",
             "... message");
    kevo_task_free(t);

    t = build();
    CHECK(kevo_task_add_buffer(t, "z", KEVO_DTYPE_F32, KEVO_ROLE_IN,
                               "cols - 77", &e_));
    is_int(kevo_task_validate(t, fresh()), KEVO_EINVALID,
           "a count of 0 at a held-out shape");
    like_str(err.text,
             "task 'softmax': held-out shape 0: count 'cols - 77' of buffer "
             "'z' is 0 at rows=33, cols=77; element counts must be positive",
             "... message");
    kevo_task_free(t);

    is_int(kevo_task_validate(NULL, fresh()), KEVO_EINVAL, "validate NULL");
}

/* Fits a source to the task; returns the status, with the message in
 * err. */
static kevo_status fit(const kevo_task *t, const char *launch,
                       const char *origin)
{
    kevo_candidate *c = (kevo_candidate *)1;
    kevo_status rc =
        kevo_candidate_new_for_task(t, launch, origin, &c, fresh());
    if (rc == KEVO_OK)
        kevo_candidate_free(c);
    else if (c != NULL)
        diag("a failed kevo_candidate_new_for_task left *out set");
    return rc;
}

static void test_new_for_task(const kevo_task *t)
{
    kevo_candidate *c = NULL;
    is_int(kevo_candidate_new_for_task(t, seed_src, "seed.cu", &c, fresh()),
           KEVO_OK, "the seed fits");
    const kevo_paramspace *ps = kevo_candidate_params(c);
    size_t index;
    ok(kevo_paramspace_find(ps, "UNROLL", &index) == KEVO_OK &&
           kevo_paramspace_find(ps, "BLOCK", &index) == KEVO_OK,
       "its space holds its own and the task's parameters");
    int64_t unroll = 0;
    kevo_vars_get(kevo_candidate_assignment(c), "UNROLL", &unroll);
    is_int(unroll, 2, "the task parameter starts at its default");
    kevo_candidate_free(c);

    is_int(fit(t,
               "/* kevo:launch\n"
               " *   scratch tmp u32[ceil_div(rows, warp_size)] zero\n"
               " *   k1<<<dim3(rows, 2), 128>>>(x, tmp, acc, rows, cols,\n"
               " *       (i64)rows * cols, sm_count, UNROLL)\n"
               " *   k2<<<1, 32>>>(tmp, y)\n"
               " */\n",
               "ok.cu"),
           KEVO_OK, "task arguments, scratch, dims, parameters, properties");

    is_int(fit(t,
               "/* kevo:launch\n"
               " *   softmax<<<rows, 256>>>(x, y, acc,\n"
               " *                          foo)\n"
               " */\n",
               "cand.cu"),
           KEVO_EINVALID, "a bare name that is nothing");
    is_str(err.text,
           "cand.cu:2: kevo:launch: argument 'foo' of kernel 'softmax' names "
           "no task argument, scratch buffer, tensor map, dim, parameter or "
           "device property",
           "... message");
    is_int(err.line, 2, "... line");
    is_str(err.source, "cand.cu", "... source");

    is_int(fit(t, "/* kevo:launch softmax<<<rows, 256>>>(x, y, acc, foo) */",
               NULL),
           KEVO_EINVALID, "the same without an origin");
    like_str(err.text, "line 1: kevo:launch: argument 'foo'", "... message");

    is_int(fit(t,
               "/* kevo:launch softmax<<<rows, 256>>>(x, y, acc, "
               "(i64)(rows * colz)) */",
               "c.cu"),
           KEVO_EINVALID, "an expression naming nothing");
    like_str(err.text,
             "c.cu:1: kevo:launch: argument '(i64)(rows * colz)' of kernel "
             "'softmax' names 'colz', which is no dim, parameter or device "
             "property",
             "... message");

    is_int(fit(t, "/* kevo:launch softmax<<<rows, 256>>>(x, y, acc, x + 1) */",
               "c.cu"),
           KEVO_EINVALID, "a buffer inside an expression");
    like_str(err.text,
             "names 'x', which is no dim, parameter or device property (task "
             "arguments, scratch buffers and tensor maps are passed by their "
             "bare name",
             "... message");

    is_int(fit(t, "/* kevo:launch softmax<<<rows, 256>>>((i64)x, y, acc) */",
               "c.cu"),
           KEVO_EINVALID, "a cast on a buffer");
    like_str(err.text,
             "argument '(i64)x' of kernel 'softmax' casts 'x' to i64, but a "
             "task argument, scratch buffer or tensor map is passed as it is",
             "... message");

    is_int(fit(t,
               "/* kevo:launch\n"
               " *   scratch x f32[rows]\n"
               " *   softmax<<<rows, 256>>>(x, y, acc)\n"
               " */",
               "c.cu"),
           KEVO_EINVALID, "scratch named like an argument");
    like_str(err.text,
             "c.cu:2: kevo:launch: scratch buffer 'x' has the name of a task "
             "argument",
             "... message");

    is_int(fit(t,
               "/* kevo:launch\n"
               " *   scratch cols f32[rows]\n"
               " *   softmax<<<rows, 256>>>(x, y, acc, cols)\n"
               " */",
               "c.cu"),
           KEVO_EINVALID, "scratch named like a dim");
    like_str(err.text, "scratch buffer 'cols' has the name of a dim",
             "... message");

    is_int(fit(t,
               "/* kevo:launch\n"
               " *   scratch UNROLL f32[rows]\n"
               " *   softmax<<<rows, 256>>>(x, y, acc, UNROLL)\n"
               " */",
               "c.cu"),
           KEVO_EINVALID, "scratch named like a parameter");
    like_str(err.text, "scratch buffer 'UNROLL' has the name of a parameter",
             "... message");

    is_int(fit(t,
               "// kevo:param\n"
               "//   rows in {1, 2}\n"
               "/* kevo:launch softmax<<<rows, 256>>>(x, y, acc) */",
               "c.cu"),
           KEVO_EINVALID, "a parameter named like a dim");
    like_str(err.text,
             "c.cu:1: kevo:param: parameter 'rows' has the name of a dim; "
             "parameters become -D macros",
             "... message");

    is_int(fit(t, "/* kevo:launch softmax<<<rows, 256>>>(x, acc) */", "c.cu"),
           KEVO_EINVALID, "an output passed to no launch");
    like_str(err.text,
             "c.cu:1: kevo:launch: out buffer 'y' of the task is passed to no "
             "launch",
             "... message");

    is_int(fit(t, "/* kevo:launch softmax<<<rows, 256>>>(x, y) */", "c.cu"),
           KEVO_EINVALID, "an inout buffer passed to no launch");
    like_str(err.text, "inout buffer 'acc' of the task is passed to no launch",
             "... message");

    is_int(fit(t,
               "/* kevo:launch softmax<<<ceil_div(ROWS, 4), 256>>>(x, y, acc) "
               "*/",
               "c.cu"),
           KEVO_EINVALID, "a grid naming nothing");
    like_str(err.text,
             "grid x of kernel 'softmax' names 'ROWS', which is no dim, "
             "parameter or device property",
             "... message");

    is_int(fit(t, "/* kevo:launch softmax<<<rows, 256, smem>>>(x, y, acc) */",
               "c.cu"),
           KEVO_EINVALID, "shared memory naming nothing");
    like_str(err.text, "shared memory size of kernel 'softmax' names 'smem'",
             "... message");

    is_int(fit(t,
               "/* kevo:launch\n"
               " *   scratch tmp f32[N]\n"
               " *   softmax<<<rows, 256>>>(x, y, acc, tmp)\n"
               " */",
               "c.cu"),
           KEVO_EINVALID, "a scratch count naming nothing");
    like_str(err.text,
             "c.cu:2: kevo:launch: count of scratch buffer 'tmp' names 'N'",
             "... message");

    is_int(fit(t, "no launch block", "c.cu"), KEVO_EINVALID,
           "a source without a launch block");
    is_int(kevo_candidate_new_for_task(NULL, seed_src, NULL, &c, fresh()),
           KEVO_EINVAL, "NULL task");
    is_int(kevo_candidate_new_for_task(t, NULL, NULL, &c, fresh()), KEVO_EINVAL,
           "NULL source");
    is_int(kevo_candidate_new_for_task(t, seed_src, NULL, NULL, fresh()),
           KEVO_EINVAL, "NULL out");
}

/* Half-precision outputs with amax and ulp tolerances, packed 4-bit
 * inputs: the setters, what arg_info reads back, and the JSON round trip. */
static void test_dtypes(void)
{
    kevo_task *t = NULL;
    CHECK(kevo_task_new("w4", &t, &e_));
    CHECK(kevo_task_add_dim(t, "n", &e_));
    CHECK(kevo_task_add_buffer(t, "q", KEVO_DTYPE_U8, KEVO_ROLE_IN, "n", &e_));
    CHECK(kevo_task_add_buffer(t, "p", KEVO_DTYPE_I32, KEVO_ROLE_IN, "n", &e_));
    CHECK(
        kevo_task_add_buffer(t, "x", KEVO_DTYPE_BF16, KEVO_ROLE_IN, "n", &e_));
    CHECK(kevo_task_add_buffer(t, "y", KEVO_DTYPE_BF16, KEVO_ROLE_OUT, "2*n",
                               &e_));
    CHECK(kevo_task_add_buffer(t, "z", KEVO_DTYPE_F16, KEVO_ROLE_OUT, "2*n",
                               &e_));
    CHECK(
        kevo_task_add_buffer(t, "w", KEVO_DTYPE_F32, KEVO_ROLE_OUT, "n", &e_));

    is_int(kevo_task_set_init(t, "x", KEVO_DIST_NIBBLES, 0, 15, fresh()),
           KEVO_EINVAL, "nibbles on bf16");
    like_str(err.text,
             "init of 'x': 'nibbles' packs 4-bit integers into an integer "
             "type and 'x' is bf16",
             "... message");
    is_int(kevo_task_set_init(t, "q", KEVO_DIST_NIBBLES, -8, 8, fresh()),
           KEVO_EINVAL, "signed nibbles up to 8");
    like_str(err.text, "nibbles needs integers lo <= hi within [-8, 7]",
             "... message");
    is_int(kevo_task_set_init(t, "q", KEVO_DIST_NIBBLES, 0, 16, fresh()),
           KEVO_EINVAL, "unsigned nibbles up to 16");
    is_int(kevo_task_set_init(t, "q", KEVO_DIST_NIBBLES, -9, 0, fresh()),
           KEVO_EINVAL, "nibbles from -9");
    is_int(kevo_task_set_init(t, "q", KEVO_DIST_NIBBLES, 3, 2, fresh()),
           KEVO_EINVAL, "nibbles with lo > hi");
    is_int(kevo_task_set_init(t, "q", KEVO_DIST_NIBBLES, 0, 7.5, fresh()),
           KEVO_EINVAL, "nibbles with a fraction");
    is_int(kevo_task_set_init(t, "q", KEVO_DIST_NIBBLES, 0, 15, fresh()),
           KEVO_OK, "unsigned nibbles in a u8");
    is_int(kevo_task_set_init(t, "p", KEVO_DIST_NIBBLES, -8, 7, fresh()),
           KEVO_OK, "signed nibbles in an i32");
    CHECK(kevo_task_set_init(t, "x", KEVO_DIST_UNIFORM, -1, 1, &e_));

    is_int(kevo_task_set_tolerance_full(t, "y", 0, 0, -1e-3, 0, fresh()),
           KEVO_EINVAL, "a negative rtol_amax");
    like_str(err.text, "tolerance: rtol_amax must be finite and >= 0",
             "... message");
    is_int(kevo_task_set_tolerance_full(t, "y", 0, 0, 0, INFINITY, fresh()),
           KEVO_EINVAL, "an infinite ulp");
    like_str(err.text, "tolerance: ulp must be finite and >= 0", "... message");
    is_int(kevo_task_set_tolerance_full(t, "x", 0, 0, 0, 1, fresh()),
           KEVO_EINVAL, "an ulp tolerance on an input");
    is_int(kevo_task_set_tolerance_full(NULL, "y", 0, 0, 0, 1, fresh()),
           KEVO_EINVAL, "NULL task");
    CHECK(kevo_task_set_tolerance_full(t, NULL, 0, 0, 0, 1, &e_));
    CHECK(kevo_task_set_tolerance_full(t, "y", 0, 0, 1e-3, 2, &e_));
    CHECK(kevo_task_set_tolerance(t, "w", 1e-5, 1e-6, &e_));

    kevo_arg_info info = {.size = sizeof info};
    CHECK(kevo_task_arg_info(t, 0, &info));
    ok(info.dist == KEVO_DIST_NIBBLES && info.dist_a == 0 && info.dist_b == 15,
       "q: nibbles(0, 15)");
    CHECK(kevo_task_arg_info(t, 1, &info));
    ok(info.dist == KEVO_DIST_NIBBLES && info.dist_a == -8 && info.dist_b == 7,
       "p: nibbles(-8, 7)");
    CHECK(kevo_task_arg_info(t, 3, &info));
    ok(info.rtol == 0 && info.atol == 0 && info.rtol_amax == 1e-3 &&
           info.ulp == 2,
       "y: its own tolerance, rtol_amax 1e-3 and 2 ulp");
    CHECK(kevo_task_arg_info(t, 4, &info));
    ok(info.ulp == 1 && info.rtol_amax == 0, "z: the task's 1 ulp");
    CHECK(kevo_task_arg_info(t, 5, &info));
    ok(info.rtol == 1e-5 && info.atol == 1e-6 && info.ulp == 0 &&
           info.rtol_amax == 0,
       "w: its own rtol and atol, and none of the task's ulp");
    CHECK(kevo_task_arg_info(t, 2, &info));
    ok(info.ulp == 0 && info.rtol_amax == 0, "x: an input has no tolerance");

    CHECK(kevo_task_set_reference(t,
                                  "/* kevo:launch\n"
                                  " *   k<<<1, 32>>>(q, p, x, y, z, w, n)\n"
                                  " */\n",
                                  "ref.cu", &e_));
    CHECK(kevo_task_set_seed(t,
                             "/* kevo:launch\n"
                             " *   k<<<1, 32>>>(q, p, x, y, z, w, n)\n"
                             " */\n",
                             "seed.cu", &e_));
    CHECK(kevo_task_add_scalar(t, "n", KEVO_DTYPE_I32, "n", &e_));
    CHECK(kevo_task_set_cost(t, "16*n", "0", KEVO_PEAK_BF16, &e_));
    CHECK(kevo_task_add_shape(t, KEVO_SHAPES_TRAIN, (const int64_t[]){4096}, 1,
                              &e_));
    is_int(kevo_task_validate(t, fresh()), KEVO_OK, "the task validates");

    char *json = NULL, *json2 = NULL;
    kevo_task *again = NULL;
    CHECK(kevo_task_to_json(t, &json, &e_));
    like_str(json,
             "\"dist\": \"nibbles\",\n        \"lo\": -8,\n        \"hi\": 7\n",
             "nibbles are written with whole bounds");
    like_str(json, "\"rtol_amax\": 0.001,\n        \"ulp\": 2.0\n",
             "y's rtol_amax and ulp are written");
    like_str(json,
             "\"tolerance\": {\n        \"rtol\": 1e-5,\n        \"atol\": "
             "1e-6\n      }",
             "w's tolerance has no zero terms beyond rtol and atol");
    is_int(kevo_task_load_string(json, NULL, NULL, &again, fresh()), KEVO_OK,
           "the JSON loads");
    if (again) {
        CHECK(kevo_task_to_json(again, &json2, &e_));
        is_str(json2, json, "to_json of the reloaded task is the same");
        CHECK(kevo_task_arg_info(again, 4, &info));
        ok(info.ulp == 1, "the task's ulp survives");
        CHECK(kevo_task_arg_info(again, 1, &info));
        ok(info.dist == KEVO_DIST_NIBBLES && info.dist_a == -8,
           "nibbles survive");
    }
    kevo_task_free(again);
    free(json);
    free(json2);
    kevo_task_free(t);
}

/* The unit of the ulp term in each type. */
static void test_dtype_ulp(void)
{
    is_double(kevo__dtype_ulp(KEVO_DTYPE_BF16, 1.0), ldexp(1, -7), 0,
              "bf16: ulp(1) = 2^-7");
    is_double(kevo__dtype_ulp(KEVO_DTYPE_BF16, -3.0), ldexp(1, -6), 0,
              "bf16: ulp(-3) = 2^-6");
    is_double(kevo__dtype_ulp(KEVO_DTYPE_BF16, 1.9921875), ldexp(1, -7), 0,
              "bf16: ulp of the last value below 2 = 2^-7");
    is_double(kevo__dtype_ulp(KEVO_DTYPE_BF16, 0.0), ldexp(1, -133), 0,
              "bf16: ulp(0), the subnormal gap 2^-133");
    is_double(kevo__dtype_ulp(KEVO_DTYPE_BF16, 3.3895313892515355e38),
              ldexp(1, 120), 0, "bf16: ulp of the largest value = 2^120");
    is_double(kevo__dtype_ulp(KEVO_DTYPE_F16, 65504.0), 32.0, 0,
              "f16: ulp(65504) = 32");
    is_double(kevo__dtype_ulp(KEVO_DTYPE_F16, ldexp(1, -20)), ldexp(1, -24), 0,
              "f16: a subnormal's ulp = 2^-24");
    is_double(kevo__dtype_ulp(KEVO_DTYPE_F16, ldexp(1, -14)), ldexp(1, -24), 0,
              "f16: ulp of the least normal = 2^-24");
    is_double(kevo__dtype_ulp(KEVO_DTYPE_F32, 1.0), ldexp(1, -23), 0,
              "f32: ulp(1) = 2^-23");
    is_double(kevo__dtype_ulp(KEVO_DTYPE_F64, 1.0), ldexp(1, -52), 0,
              "f64: ulp(1) = 2^-52");
    is_double(kevo__dtype_ulp(KEVO_DTYPE_I32, 12345.0), 1.0, 0, "i32: ulp = 1");
}

/* The baseline rule: a baseline kernel, outputs judged relative to it,
 * the errors of bad calls and of a task that misuses it, and the JSON
 * round trip. */
static void test_baseline(void)
{
    static const char launch[] = "/* kevo:launch\n"
                                 " *   k<<<n, 32>>>(x, y, z, n)\n"
                                 " */\n";
    kevo_task *t = NULL;
    CHECK(kevo_task_new("att", &t, &e_));
    CHECK(kevo_task_add_dim(t, "n", &e_));
    CHECK(
        kevo_task_add_buffer(t, "x", KEVO_DTYPE_BF16, KEVO_ROLE_IN, "n", &e_));
    CHECK(
        kevo_task_add_buffer(t, "y", KEVO_DTYPE_BF16, KEVO_ROLE_OUT, "n", &e_));
    CHECK(
        kevo_task_add_buffer(t, "z", KEVO_DTYPE_F32, KEVO_ROLE_OUT, "n", &e_));
    CHECK(kevo_task_add_scalar(t, "n", KEVO_DTYPE_I32, "n", &e_));
    CHECK(kevo_task_set_reference(t, launch, "ref.cu", &e_));
    CHECK(kevo_task_set_seed(t, launch, "seed.cu", &e_));
    CHECK(kevo_task_set_cost(t, "10*n", "0", KEVO_PEAK_BF16, &e_));
    CHECK(kevo_task_add_shape(t, KEVO_SHAPES_TRAIN, (const int64_t[]){64}, 1,
                              &e_));

    is_int(kevo_task_set_tolerance_baseline(t, "y", 0, 0, fresh()), KEVO_EINVAL,
           "a factor of 0");
    like_str(err.text, "tolerance: factor must be finite and > 0 (got 0)",
             "... message");
    is_int(kevo_task_set_tolerance_baseline(t, "y", NAN, 0, fresh()),
           KEVO_EINVAL, "a NaN factor");
    is_int(kevo_task_set_tolerance_baseline(t, "y", 2, -1e-5, fresh()),
           KEVO_EINVAL, "a negative atol");
    is_int(kevo_task_set_tolerance_baseline(t, "x", 2, 0, fresh()), KEVO_EINVAL,
           "the baseline rule on an input");
    is_int(kevo_task_set_tolerance_baseline(NULL, "y", 2, 0, fresh()),
           KEVO_EINVAL, "NULL task");
    is_int(kevo_task_set_baseline(t, NULL, "base.cu", fresh()), KEVO_EINVAL,
           "a NULL baseline source");
    ok(kevo_task_baseline(t) == NULL, "no baseline yet");

    CHECK(kevo_task_set_tolerance_baseline(t, "y", 2, 1e-5, &e_));
    is_int(kevo_task_validate(t, fresh()), KEVO_EINVALID,
           "the rule without a baseline kernel does not validate");
    like_str(err.text,
             "output 'y' is judged relative to the baseline (factor 2), but "
             "the task has no baseline kernel",
             "... message");
    CHECK(kevo_task_set_baseline(t, launch, "base.cu", &e_));
    ok(kevo_task_baseline(t) != NULL, "the baseline is set");
    is_str(kevo_candidate_origin(kevo_task_baseline(t)), "base.cu",
           "... with its origin");
    is_int(kevo_task_validate(t, fresh()), KEVO_OK, "the task validates");

    kevo_arg_info info = {.size = sizeof info};
    CHECK(kevo_task_arg_info(t, 1, &info));
    ok(info.factor == 2 && info.atol == 1e-5 && info.rtol == 0 &&
           info.ulp == 0 && info.rtol_amax == 0,
       "y: factor 2 and atol 1e-5, no element-wise term");
    CHECK(kevo_task_arg_info(t, 2, &info));
    ok(info.factor == 0, "z: the element-wise rule (exact)");

    char *json = NULL, *json2 = NULL;
    kevo_task *again = NULL;
    CHECK(kevo_task_to_json(t, &json, &e_));
    like_str(json,
             "\"tolerance\": {\n        \"factor\": 2.0,\n        \"atol\": "
             "1e-5\n      }",
             "y's tolerance is written as factor and atol");
    like_str(json, "\"tolerance\": {\n    \"baseline\": {\n      \"code\": ",
             "the baseline is written in the task's tolerance");
    is_int(kevo_task_load_string(json, NULL, NULL, &again, fresh()), KEVO_OK,
           "the JSON loads");
    if (again) {
        CHECK(kevo_task_to_json(again, &json2, &e_));
        is_str(json2, json, "to_json of the reloaded task is the same");
        ok(kevo_task_baseline(again) != NULL, "the baseline survives");
        CHECK(kevo_task_arg_info(again, 1, &info));
        ok(info.factor == 2 && info.atol == 1e-5, "y's rule survives");
    }
    kevo_task_free(again);
    free(json);
    free(json2);

    /* The task's default rule, and an element-wise tolerance that replaces
     * it for one output. */
    CHECK(kevo_task_set_tolerance_baseline(t, NULL, 3, 0, &e_));
    CHECK(kevo_task_set_tolerance_full(t, "y", 0, 0, 0, 1, &e_));
    CHECK(kevo_task_arg_info(t, 1, &info));
    ok(info.factor == 0 && info.ulp == 1, "y: 1 ulp replaces its rule");
    CHECK(kevo_task_arg_info(t, 2, &info));
    ok(info.factor == 3, "z: the task's rule, factor 3");
    is_int(kevo_task_validate(t, fresh()), KEVO_OK, "the task validates");
    CHECK(kevo_task_set_tolerance(t, "z", 0, 1e-6, &e_));
    CHECK(kevo_task_set_tolerance(t, NULL, 0, 1e-6, &e_));
    is_int(kevo_task_validate(t, fresh()), KEVO_EINVALID,
           "a baseline that no output uses does not validate");
    like_str(err.text,
             "task 'att': baseline: the task has a baseline kernel but no "
             "output is judged relative to it",
             "... message");
    kevo_task_free(t);
}

int main(void)
{
    test_new();
    test_setter_errors();
    kevo_task *t = build();
    is_int(kevo_task_validate(t, fresh()), KEVO_OK, "the C task validates");
    if (err.code)
        diag("%s", err.text);
    test_getters(t);
    test_round_trip(t);
    test_new_for_task(t);
    kevo_task_free(t);
    test_versions();
    test_validate_errors();
    test_dtypes();
    test_dtype_ulp();
    test_baseline();
    return done_testing();
}

/*
 * test-tensormap.c: what a kevo:launch block's tensormap lines and launch
 * suffixes mean at a shape: the exact cuTensorMapEncodeTiled arguments
 * (kevo__tensormap_args), every rule on them with its message, the buffer
 * and its type, "if" skipping launches and the rule that one must run,
 * clusters against the grid, and pdl.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/launch_args.h"
#include "model/tensormap.h"
#include "tap.h"

static kevo_error err;

/* A GEMM-like task: a (bf16, m*k), b (bf16, k*n), c (f32, m*n), a scalar
 * alpha, dims m, n, k. */
static kevo_task *task_new(void)
{
    kevo_task *t = NULL;
    kevo_error *ep = &err;
    if (kevo_task_new("gemm", &t, ep) != KEVO_OK ||
        kevo_task_add_dim(t, "m", ep) != KEVO_OK ||
        kevo_task_add_dim(t, "n", ep) != KEVO_OK ||
        kevo_task_add_dim(t, "k", ep) != KEVO_OK ||
        kevo_task_add_buffer(t, "a", KEVO_DTYPE_BF16, KEVO_ROLE_IN, "m*k",
                             ep) != KEVO_OK ||
        kevo_task_add_buffer(t, "b", KEVO_DTYPE_BF16, KEVO_ROLE_IN, "k*n",
                             ep) != KEVO_OK ||
        kevo_task_add_buffer(t, "c", KEVO_DTYPE_F32, KEVO_ROLE_OUT, "m*n",
                             ep) != KEVO_OK ||
        kevo_task_add_scalar(t, "alpha", KEVO_DTYPE_F32, NULL, ep) != KEVO_OK)
        bail_out("building the task: %s", err.text);
    return t;
}

static kevo_vars *shape(int64_t m, int64_t n, int64_t k)
{
    kevo_vars *v = kevo_vars_new();
    if (!v || kevo_vars_set(v, "m", m) != KEVO_OK ||
        kevo_vars_set(v, "n", n) != KEVO_OK ||
        kevo_vars_set(v, "k", k) != KEVO_OK ||
        kevo_vars_set(v, "sm_count", 132) != KEVO_OK)
        bail_out("out of memory");
    return v;
}

/* A candidate whose launch block is block (the lines of a // comment). */
static kevo_candidate *cand_new(const kevo_task *t, const char *block)
{
    char *src =
        kevo__asprintf("// kevo:launch\n%s\n__global__ void g() {}\n", block);
    kevo_candidate *c = NULL;
    kevo_error_init(&err);
    kevo_status rc = kevo_candidate_new_for_task(t, src, "k.cu", &c, &err);
    free(src);
    if (rc != KEVO_OK)
        diag("%s", err.text);
    return c;
}

/* The arguments of map 0 of block at (m, n, k); the status, err set. */
static kevo_status args_at(const kevo_task *t, const char *block, int64_t m,
                           int64_t n, int64_t k, kevo__tmap_args *a)
{
    kevo_candidate *c = cand_new(t, block);
    if (!c)
        return KEVO_EINVALID;
    kevo_vars *v = shape(m, n, k);
    kevo_error_init(&err);
    memset(a, 0, sizeof *a);
    kevo_status rc = kevo__tensormap_args(t, c, 0, v, a, &err);
    kevo_vars_free(v);
    kevo_candidate_free(c);
    return rc;
}

static void test_encoding(const kevo_task *t)
{
    kevo__tmap_args a;
    is_int(args_at(t,
                   "// tensormap tmA a bf16 dims(k, m) box(64, 128) "
                   "swizzle(128)\n"
                   "// g<<<1, 128>>>(tmA, c)",
                   256, 512, 1024, &a),
           KEVO_OK, "a 2-D map of A");
    is_int(a.data_type, KEVO__TMAP_BFLOAT16, "... bf16");
    is_int(a.rank, 2, "... rank 2");
    ok(a.dims[0] == 1024 && a.dims[1] == 256, "... dims {k, m} = {1024, 256}");
    ok(a.strides[0] == 2048, "... stride k * 2 = 2048 bytes (dense)");
    ok(a.box[0] == 64 && a.box[1] == 128, "... box {64, 128}");
    ok(a.elemstrides[0] == 1 && a.elemstrides[1] == 1,
       "... element strides {1, 1}");
    is_int(a.swizzle, KEVO__TMAP_SWIZZLE_128B, "... swizzle 128B");
    is_int(a.interleave, KEVO__TMAP_INTERLEAVE_NONE, "... no interleave");
    is_int(a.l2, KEVO__TMAP_L2_NONE, "... no L2 promotion");
    is_int(a.oob, KEVO__TMAP_OOB_NONE, "... zero fill");
    ok(a.offset_bytes == 0 && !a.scratch && a.buffer == 0 &&
           a.buffer_count == 256 * 1024,
       "... task argument 0, offset 0, m * k elements");

    is_int(
        args_at(t,
                "// tensormap tmB b bf16 dims(n / 2, k - 1, 2) box(32, 16, 1) "
                "strides(n * 2, n) offset(n / 2) elementstrides(1, 2, 1) "
                "swizzle(64) l2(256) oob(nan)\n"
                "// g<<<1, 128>>>(tmB, c)",
                64, 128, 64, &a),
        KEVO_OK, "a 3-D map of two halves of B");
    ok(a.rank == 3 && a.dims[0] == 64 && a.dims[1] == 63 && a.dims[2] == 2,
       "... dims {64, 63, 2}");
    ok(a.strides[0] == 256 && a.strides[1] == 128,
       "... strides {256, 128} bytes as written");
    ok(a.box[0] == 32 && a.box[1] == 16 && a.box[2] == 1, "... box");
    ok(a.elemstrides[0] == 1 && a.elemstrides[1] == 2 && a.elemstrides[2] == 1,
       "... element strides");
    ok(a.offset_bytes == 128, "... offset 64 elements, 128 bytes");
    ok(a.swizzle == KEVO__TMAP_SWIZZLE_64B && a.l2 == KEVO__TMAP_L2_256B &&
           a.oob == KEVO__TMAP_OOB_NAN_REQUEST_ZERO_FMA,
       "... swizzle 64B, L2 256B, NaN fill");

    is_int(args_at(t,
                   "// scratch ws f32[m * n * 4]\n"
                   "// tensormap tw ws f32 dims(n, m, 2, 2) box(4, 8, 1, 1) "
                   "interleave(16)\n"
                   "// g<<<1, 128>>>(tw, c)",
                   8, 8, 8, &a),
           KEVO_OK, "a 4-D interleaved map of a scratch buffer");
    ok(a.scratch && a.buffer == 0 && a.buffer_count == 256,
       "... scratch 0, 256 elements");
    ok(a.data_type == KEVO__TMAP_FLOAT32 &&
           a.interleave == KEVO__TMAP_INTERLEAVE_16B,
       "... f32, interleave 16B");
    ok(a.strides[0] == 32 && a.strides[1] == 256 && a.strides[2] == 512,
       "... dense strides {32, 256, 512}");

    is_int(kevo__tmap_data_type(KEVO_DTYPE_I8), KEVO__TMAP_UINT8,
           "i8 travels as UINT8");
    is_int(kevo__tmap_data_type(KEVO_DTYPE_I16), KEVO__TMAP_UINT16,
           "i16 travels as UINT16");
    is_int(kevo__tmap_data_type(KEVO_DTYPE_I64), KEVO__TMAP_INT64, "i64");
}

/* Each rule: the block, the shape, what the message says. */
static void test_rules(const kevo_task *t)
{
    static const struct {
        const char *block;
        int64_t m, n, k;
        const char *says;
    } cases[] = {
        {"// tensormap tmA a bf16 dims(k, m) box(64, 128) offset(4)", 256, 256,
         256,
         "k.cu:2: kevo:launch: tensormap 'tmA': offset is 4 elements, 8 bytes: "
         "the map's global address must be 16-byte aligned, so offset * 2 "
         "must be a multiple of 16 (cuTensorMapEncodeTiled)"},
        {"// tensormap tmA a bf16 dims(k, m) box(64, 128)", 256, 256, 100,
         "k.cu:2: kevo:launch: tensormap 'tmA': the dense stride[0] is 200 "
         "bytes (dims times the element size): a stride is a multiple of 16 "
         "bytes below 2^40 (cuTensorMapEncodeTiled)"},
        {"// tensormap tmA a bf16 dims(k, m) box(64, 128) strides(k * 2 + 8)",
         256, 256, 256,
         "tensormap 'tmA': strides[0] is 520 bytes (k * 2 + 8): a stride is a "
         "multiple of 16 bytes"},
        {"// tensormap tmA a bf16 dims(k, m) box(64, 128) "
         "strides(1099511627776)",
         256, 256, 256,
         "strides[0] is 1099511627776 (1099511627776): a stride "
         "is a multiple of 16 bytes below 2^40"},
        {"// tensormap tmA a bf16 dims(k, m) box(300, 1)", 256, 256, 512,
         "box[0] is 300 (300): each box size is 1 to 256 elements"},
        {"// tensormap tmA a bf16 dims(k, m) box(4, 1)", 256, 256, 512,
         "box[0] is 4 elements of 2 bytes, 8 bytes: without interleave the "
         "box's inner extent is a multiple of 16 bytes"},
        {"// tensormap tmA a bf16 dims(k, m) box(128, 1) swizzle(128)", 256,
         256, 512,
         "box[0] is 128 elements, 256 bytes: with swizzle(128) the box's inner "
         "extent is at most 128 bytes"},
        {"// tensormap tmA a bf16 dims(k, m) box(64, 1) elementstrides(1, 9)",
         256, 256, 512,
         "elementstrides[1] is 9 (9): each element stride is 1 to 8"},
        {"// tensormap tmA a bf16 dims(k, 0) box(64, 1)", 256, 256, 512,
         "dims[1] is 0 (0): each dimension is 1 to 2^32 elements"},
        {"// tensormap tmA a bf16 dims(k, m + 1) box(64, 1)", 256, 256, 512,
         "tensormap 'tmA': the map reaches element 131584 of buffer 'a', "
         "which has 131072: offset plus the extent of dims and strides must "
         "lie within the buffer"},
        {"// tensormap tmA a bf16 dims(k, m) box(64, 1) offset(8)", 256, 256,
         512, "the map reaches element 131080 of buffer 'a', which has 131072"},
        {"// tensormap tmA a bf16 dims(k, m) box(64, 1) offset(-8)", 256, 256,
         512, "offset is -8 elements: it must not be negative"},
        {"// tensormap tmA a bf16 dims(k, m, 2, 2) box(8, 8, 1, 1) "
         "interleave(32) swizzle(32) strides(k * 2, 16, 32)",
         256, 256, 512,
         "tensormap 'tmA': strides[1] is 16 bytes (16): a stride is a "
         "multiple of 32 bytes below 2^40 (cuTensorMapEncodeTiled)"},
        {"// tensormap tmA a bf16 dims(k, m) box(64, 1) offset(zz)", 256, 256,
         512,
         "k.cu:2: kevo:launch: offset of tensormap 'tmA' names 'zz', "
         "which is no dim, parameter or device property"},
    };
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(cases); i++) {
        char *block =
            kevo__asprintf("%s\n// g<<<1, 128>>>(tmA, c)", cases[i].block);
        kevo__tmap_args a;
        kevo_status rc =
            args_at(t, block, cases[i].m, cases[i].n, cases[i].k, &a);
        ok(rc != KEVO_OK, "rule %zu: %s fails", i + 1, cases[i].block + 3);
        like_str(err.text, cases[i].says, "... message");
        if (rc == KEVO_EINVALID)
            is_int(err.line, 2, "... line 2");
        free(block);
    }
}

/* Fitting a candidate: the buffer, its type, the names. */
static void test_fit(const kevo_task *t)
{
    static const struct {
        const char *block;
        const char *says;
    } cases[] = {
        {"// tensormap tmA a f32 dims(k, m) box(64, 1)\n// g<<<1, 32>>>(tmA, "
         "c)",
         "k.cu:2: kevo:launch: tensormap 'tmA': its element type is f32 and "
         "buffer 'a' holds bf16: they must be the same"},
        {"// tensormap tmA alpha f32 dims(k) box(64)\n// g<<<1, 32>>>(tmA, c)",
         "tensormap 'tmA': 'alpha' is a scalar of the task: a tensor map "
         "describes a buffer"},
        {"// tensormap tmA q bf16 dims(k) box(64)\n// g<<<1, 32>>>(tmA, c)",
         "tensormap 'tmA': 'q' names no task buffer or scratch buffer"},
        {"// tensormap m a bf16 dims(k) box(64)\n// g<<<1, 32>>>(m, c)",
         "tensormap 'm' has the name of a dim; rename it"},
        {"// tensormap tmA a bf16 dims(k, mm) box(64, 1)\n// g<<<1, "
         "32>>>(tmA, c)",
         "dims[1] of tensormap 'tmA' names 'mm', which is no dim, parameter "
         "or device property"},
        {"// g<<<1, 32>>>(a, c) cluster(zz)",
         "cluster x of kernel 'g' names 'zz'"},
        {"// g<<<1, 32>>>(a, c) if zz > 0", "condition of kernel 'g' names "
                                            "'zz'"},
        {"// tensormap tmA a bf16 dims(k) box(64)\n// g<<<1, 32>>>((i64)tmA, "
         "c)",
         "casts 'tmA' to i64, but a task argument, scratch buffer or tensor "
         "map is passed as it is"},
    };
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(cases); i++) {
        kevo_candidate *c = cand_new(t, cases[i].block);
        ok(!c, "fit %zu fails", i + 1);
        like_str(err.text, cases[i].says, "... message");
        kevo_candidate_free(c);
    }
    kevo_candidate *c =
        cand_new(t, "// tensormap tmC c f32 dims(n, m) box(4, 4)\n"
                    "// g<<<1, 32>>>(a, b, tmC)");
    ok(c != NULL, "an output written through a tensor map counts as passed");
    kevo__resolved_arg *args = NULL;
    size_t nargs = 0;
    ok(c && kevo__launch_args(t, c, 0, NULL, &args, &nargs, &err) == KEVO_OK &&
           nargs == 3 && args[2].kind == KEVO__ARG_TENSORMAP &&
           args[2].index == 0 && args[2].size == 128,
       "... and resolves to a 128-byte tensor map argument");
    free(args);
    kevo_candidate_free(c);
}

/* "if", the rule that one launch runs, clusters and pdl at a shape. */
static void test_launches(const kevo_task *t)
{
    kevo_candidate *c = cand_new(
        t, "// tensormap tmA a bf16 dims(k, m) box(64, 128)\n"
           "// fast<<<dim3(n / 64, m / 128), 384>>>(tmA, b, c) cluster(2, 1) "
           "if k % 8 == 0\n"
           "// slow<<<ceil_div(m * n, 256), 256>>>(a, b, c) if k % 8 != 0\n"
           "// tail<<<4, 32>>>(c) pdl");
    ok(c != NULL, "a TMA path with a fallback");
    kevo_launch_geometry g[3];
    kevo__tmap_args maps[1];
    bool used[1];
    kevo_vars *v = shape(256, 256, 512);
    ok(c && kevo__launches_at(t, c, v, g, maps, used, &err) == KEVO_OK,
       "k = 512: fine");
    ok(g[0].runs && !g[1].runs && g[2].runs, "... fast and tail run");
    ok(g[0].cluster[0] == 2 && g[0].cluster[1] == 1 && g[0].cluster[2] == 1,
       "... fast in clusters of 2 x 1 x 1");
    ok(g[2].pdl && !g[0].pdl, "... tail is pdl");
    ok(used[0] && maps[0].dims[0] == 512, "... tmA is used and encoded");
    kevo_vars_free(v);

    v = shape(256, 256, 100);
    ok(c && kevo__launches_at(t, c, v, g, maps, used, &err) == KEVO_OK,
       "k = 100: its dense stride breaks the TMA rule, but no launch that "
       "runs names tmA");
    ok(!g[0].runs && g[1].runs && !used[0],
       "... fast skipped, slow runs, tmA unused");
    kevo_launch_geometry one = {.size = sizeof one};
    ok(kevo_candidate_launch_geometry(c, 0, v, &one, &err) == KEVO_OK &&
           !one.runs && one.grid[0] == 0,
       "kevo_candidate_launch_geometry: runs 0 and nothing else");
    kevo_vars_free(v);

    v = shape(256, 192, 512);
    ok(c && kevo__launches_at(t, c, v, g, maps, used, &err) == KEVO_ERANGE,
       "n = 192: grid x 3 is no multiple of the cluster");
    like_str(err.text,
             "k.cu:3: kevo:launch: grid.x of 'fast' is 3, not a multiple of "
             "cluster.x (2): a grid is made of whole clusters",
             "... message");
    kevo_vars_free(v);
    kevo_candidate_free(c);

    c = cand_new(t, "// one<<<1, 32>>>(a, b, c) if m > 100\n"
                    "// two<<<1, 32>>>(a, b, c) if n > 100");
    v = shape(8, 8, 8);
    ok(c && kevo__launches_at(t, c, v, g, NULL, NULL, &err) == KEVO_EINVALID,
       "no launch runs: an error");
    is_str(err.text,
           "k.cu:1: kevo:launch: no launch runs at this shape: the 'if' "
           "condition of every launch is 0, and at least one launch must run",
           "... message");
    kevo_vars_free(v);
    kevo_candidate_free(c);

    c = cand_new(t, "// one<<<dim3(4, 4), 32>>>(a, b, c) cluster(4, 4, 2)");
    v = shape(8, 8, 8);
    kevo_launch_geometry big = {.size = sizeof big};
    ok(c && kevo_candidate_launch_geometry(c, 0, v, &big, &err) == KEVO_ERANGE,
       "a cluster of 32 blocks");
    like_str(err.text,
             "cluster of 'one' has 32 blocks (4 x 4 x 2): at most 8 are "
             "portable and 16 the most with the non-portable opt-in",
             "... message");
    kevo_vars_free(v);
    kevo_candidate_free(c);
}

int main(void)
{
    kevo_task *t = task_new();
    test_encoding(t);
    test_rules(t);
    test_fit(t);
    test_launches(t);
    kevo_task_free(t);
    return done_testing();
}

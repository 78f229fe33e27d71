/*
 * gpu-dtypes: half-precision and packed 4-bit data through a real
 * `kevo-worker gpu` process, on a GPU. Small tasks with their sources
 * inline, and kernels that are right or wrong by exactly what a type
 * allows:
 *   - bf16: a result one ulp off at one element fails a task of exact
 *     outputs, naming the element in its bf16 value and bits, and passes
 *     with "ulp": 1; two ulps off fails "ulp": 1;
 *   - f16 outputs that overflow to infinity pass where the kernel's
 *     infinities are the reference's, and fail where it saturates to
 *     65504 (the positive ones) or writes NaN;
 *   - a kernel that reads its output before writing it (max with the old
 *     value) passes over the NaN poison and fails over the large finite
 *     one: 65504 (0x7bff) for f16, whose 0x7f7f would be a NaN, and 0x7f7f
 *     for bf16;
 *   - "rtol_amax": one element off by 0.4% of the output's largest value
 *     fails 1e-3 and passes 1e-2;
 *   - "nibbles": signed 4-bit values in a u8 buffer and unsigned ones in an
 *     i32 buffer are drawn uniform over their range and nowhere else (a
 *     kernel that checks the histogram passes).
 *
 * Skipped (exit 77) when the worker's hello says there is no driver or no
 * device.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "worker_client.h"

/* ---- tasks --------------------------------------------------------------- */

/* A one-dim task over n elements: in x of xtype drawn by init, out y of
 * ytype with tolerance (a JSON object, or NULL for exact), the reference
 * ref (also the seed), shapes n = 2^20 and 4099. */
static void elementwise_task(wk_task *t, const char *key, const char *xtype,
                             const char *init, const char *ytype,
                             const char *tolerance, const char *ref)
{
    json_t *y = json_pack("{s:s, s:s, s:s, s:s}", "name", "y", "type", ytype,
                          "role", "out", "count", "n");
    if (tolerance)
        json_object_set_new(y, "tolerance", json_loads(tolerance, 0, NULL));
    json_t *task = json_pack(
        "{s:s, s:[s], s:[{s:s, s:s, s:s, s:s, s:o}, o, {s:s, s:s, s:s}], "
        "s:{s:s}, s:{s:s}, s:{s:s}, s:[{s:i}, {s:i}]}",
        "name", key, "dims", "n", "args", "name", "x", "type", xtype, "role",
        "in", "count", "n", "init", json_loads(init, 0, NULL), y, "name", "n",
        "type", "i32", "value", "n", "reference", "code", ref, "seed", "code",
        ref, "cost", "bytes", "4*n", "shapes", "n", 1 << 20, "n", 4099);
    char *text = task ? json_dumps(task, 0) : NULL;
    if (!text)
        bail_out("out of memory");
    wk_task_text(t, text, key);
    free(text);
    json_decref(task);
}

/* Evaluates source as a candidate of t: the reply (the caller's), with
 * verdict want and needle in its reason. */
static json_t *expect(const wk_task *t, const char *source, const char *want,
                      const char *needle, const char *what)
{
    kevo_candidate *c = wk_candidate(t, source);
    json_t *r = wk_eval(t, c, NULL, false);
    is_str(wk_verdict(r), want, "%s: %s", what, want);
    if (needle)
        like_str(wk_reason(r), needle, "%s: the reason says '%s'", what,
                 needle);
    kevo_candidate_free(c);
    return r;
}

/* The worst element of the first shape of a reply. */
static const json_t *worst(const json_t *reply)
{
    return json_object_get(json_array_get(json_object_get(reply, "shapes"), 0),
                           "worst");
}

/* ---- bf16: one ulp ------------------------------------------------------- */

#define BF16_SCALE(NAME, BODY)                                                 \
    "#include <cuda_bf16.h>\n"                                                 \
    "/* kevo:launch\n"                                                         \
    " *   " NAME "<<<ceil_div(n, 256), 256>>>(x, y, n)\n"                      \
    " */\n"                                                                    \
    "extern \"C\" __global__ void " NAME "(const __nv_bfloat16 *x,\n"          \
    "    __nv_bfloat16 *y, int n)\n"                                           \
    "{\n"                                                                      \
    "    int i = blockIdx.x * 256 + threadIdx.x;\n"                            \
    "    if (i >= n)\n"                                                        \
    "        return;\n"                                                        \
    "    __nv_bfloat16 v = __float2bfloat16_rn(__bfloat162float(x[i]) * 3);\n" \
    "    unsigned short bits = __bfloat16_as_ushort(v);\n" BODY                \
    "    y[i] = __ushort_as_bfloat16(bits);\n"                                 \
    "}\n"

static const char bf16_ref[] = BF16_SCALE("scale", "");
static const char bf16_one_ulp[] =
    BF16_SCALE("scale_ulp", "    if (i == 1234)\n        bits += 1;\n");
static const char bf16_two_ulps[] =
    BF16_SCALE("scale_ulps", "    if (i == 1234)\n        bits += 2;\n");

/* The gap from w (a bf16 value) to the next bf16 of larger magnitude. */
static double bf16_ulp(double w)
{
    int e = 0;
    frexp(fabs(w), &e);
    return ldexp(1.0, e - 1 - 7);
}

static void check_bf16_ulp(void)
{
    static const char normal[] = "{\"dist\": \"normal\", \"std\": 1}";
    wk_task exact, ulp1;
    elementwise_task(&exact, "dtypes-bf16-exact", "bf16", normal, "bf16", NULL,
                     bf16_ref);
    elementwise_task(&ulp1, "dtypes-bf16-ulp1", "bf16", normal, "bf16",
                     "{\"ulp\": 1}", bf16_ref);

    json_decref(expect(&exact, bf16_ref, "ok", NULL, "bf16: the reference"));
    json_t *r =
        expect(&exact, bf16_one_ulp, "wrong",
               "y[1234] = ", "bf16: one element one ulp off, exact outputs");
    like_str(wk_reason(r), "(bf16 0x",
             "bf16: the values are written with their bits");
    like_str(wk_reason(r), "1 of 1048576 output elements are wrong",
             "bf16: only that element is wrong");
    double got = json_number_value(json_object_get(worst(r), "got"));
    double want = json_number_value(json_object_get(worst(r), "want"));
    ok(json_integer_value(json_object_get(worst(r), "index")) == 1234 &&
           want != 0 && fabs(got) - fabs(want) == bf16_ulp(want) &&
           (float)got == got,
       "bf16: the worst element is y[1234], %.9g for %.9g: one ulp, and a "
       "bf16 value",
       got, want);
    json_decref(r);

    json_decref(expect(&ulp1, bf16_one_ulp, "ok", NULL,
                       "bf16: one ulp off with \"ulp\": 1"));
    json_decref(expect(
        &ulp1, bf16_two_ulps, "wrong",
        " + 1 ulp (ulp(want) in bf16: ", "bf16: two ulps off with \"ulp\": 1"));
    wk_task_close(&exact);
    wk_task_close(&ulp1);
}

/* ---- f16: infinities ----------------------------------------------------- */

#define F16_BIG(NAME, BODY)                                                    \
    "#include <cuda_fp16.h>\n"                                                 \
    "/* kevo:launch\n"                                                         \
    " *   " NAME "<<<ceil_div(n, 256), 256>>>(x, y, n)\n"                      \
    " */\n"                                                                    \
    "extern \"C\" __global__ void " NAME "(const __half *x, __half *y,\n"      \
    "    int n)\n"                                                             \
    "{\n"                                                                      \
    "    int i = blockIdx.x * 256 + threadIdx.x;\n"                            \
    "    if (i >= n)\n"                                                        \
    "        return;\n"                                                        \
    "    float v = __half2float(x[i]) * 60000.0f;\n" BODY "}\n"

static const char f16_ref[] =
    F16_BIG("big", "    y[i] = __float2half_rn(v);\n");
static const char f16_saturate[] =
    F16_BIG("big_sat", "    y[i] = __float2half_rn(fminf(v, 65504.0f));\n");
static const char f16_nan[] = F16_BIG(
    "big_nan", "    y[i] = fabsf(v) > 65520.0f ? __ushort_as_half(0x7e00)\n"
               "                                : __float2half_rn(v);\n");

static void check_f16_inf(void)
{
    wk_task t;
    elementwise_task(&t, "dtypes-f16-inf", "f16",
                     "{\"dist\": \"normal\", \"std\": 1}", "f16",
                     "{\"rtol\": 1e-3}", f16_ref);
    json_decref(expect(&t, f16_ref, "ok", NULL,
                       "f16: infinities where the reference has them"));
    json_t *r = expect(&t, f16_saturate, "wrong", "65504 (f16 0x7bff)",
                       "f16: saturated instead of infinite");
    like_str(wk_reason(r), "inf", "f16: the reason says the reference's inf");
    json_decref(r);
    json_decref(
        expect(&t, f16_nan, "wrong", "NaN", "f16: NaN instead of infinite"));
    wk_task_close(&t);
}

/* ---- the large finite poison --------------------------------------------- */

/* y = max(y, x): right over the NaN poison (fmaxf drops a NaN), wrong over
 * a finite one. */
static const char f16_copy[] =
    "#include <cuda_fp16.h>\n"
    "/* kevo:launch\n"
    " *   copy<<<ceil_div(n, 256), 256>>>(x, y, n)\n"
    " */\n"
    "extern \"C\" __global__ void copy(const __half *x, __half *y, int n)\n"
    "{\n"
    "    int i = blockIdx.x * 256 + threadIdx.x;\n"
    "    if (i < n)\n"
    "        y[i] = x[i];\n"
    "}\n";
static const char f16_max_old[] =
    "#include <cuda_fp16.h>\n"
    "/* kevo:launch\n"
    " *   max_old<<<ceil_div(n, 256), 256>>>(x, y, n)\n"
    " */\n"
    "extern \"C\" __global__ void max_old(const __half *x, __half *y, int n)\n"
    "{\n"
    "    int i = blockIdx.x * 256 + threadIdx.x;\n"
    "    if (i < n)\n"
    "        y[i] = __float2half_rn(fmaxf(__half2float(y[i]),\n"
    "                                     __half2float(x[i])));\n"
    "}\n";
static const char bf16_copy[] =
    "#include <cuda_bf16.h>\n"
    "/* kevo:launch\n"
    " *   copy<<<ceil_div(n, 256), 256>>>(x, y, n)\n"
    " */\n"
    "extern \"C\" __global__ void copy(const __nv_bfloat16 *x,\n"
    "    __nv_bfloat16 *y, int n)\n"
    "{\n"
    "    int i = blockIdx.x * 256 + threadIdx.x;\n"
    "    if (i < n)\n"
    "        y[i] = x[i];\n"
    "}\n";
static const char bf16_max_old[] =
    "#include <cuda_bf16.h>\n"
    "/* kevo:launch\n"
    " *   max_old<<<ceil_div(n, 256), 256>>>(x, y, n)\n"
    " */\n"
    "extern \"C\" __global__ void max_old(const __nv_bfloat16 *x,\n"
    "    __nv_bfloat16 *y, int n)\n"
    "{\n"
    "    int i = blockIdx.x * 256 + threadIdx.x;\n"
    "    if (i < n)\n"
    "        y[i] = __float2bfloat16_rn(fmaxf(__bfloat162float(y[i]),\n"
    "                                         __bfloat162float(x[i])));\n"
    "}\n";

/* bf16 y = x, with x[77] + 0.004 in the candidate. */
static const char bf16_off[] =
    "#include <cuda_bf16.h>\n"
    "/* kevo:launch\n"
    " *   off<<<ceil_div(n, 256), 256>>>(x, y, n)\n"
    " */\n"
    "extern \"C\" __global__ void off(const __nv_bfloat16 *x,\n"
    "    __nv_bfloat16 *y, int n)\n"
    "{\n"
    "    int i = blockIdx.x * 256 + threadIdx.x;\n"
    "    if (i < n)\n"
    "        y[i] = i == 77 ? __float2bfloat16_rn(__bfloat162float(x[i]) +\n"
    "                                             0.004f)\n"
    "                       : x[i];\n"
    "}\n";

static void check_poison_and_amax(void)
{
    static const char normal[] = "{\"dist\": \"normal\", \"std\": 1}";
    static const char uniform[] = "{\"dist\": \"uniform\", \"lo\": -1, "
                                  "\"hi\": 1}";
    wk_task f16, bf16, amax3, amax2;
    elementwise_task(&f16, "dtypes-f16-copy", "f16", normal, "f16", NULL,
                     f16_copy);
    elementwise_task(&bf16, "dtypes-bf16-copy", "bf16", normal, "bf16", NULL,
                     bf16_copy);
    json_t *r = expect(&f16, f16_max_old, "wrong", "second input set",
                       "f16: max with the old output");
    like_str(wk_reason(r), "65504 (f16 0x7bff)",
             "f16: the finite poison is 65504");
    json_decref(r);
    r = expect(&bf16, bf16_max_old, "wrong", "second input set",
               "bf16: max with the old output");
    like_str(wk_reason(r), "(bf16 0x7f7f)",
             "bf16: the finite poison is 0x7f7f");
    json_decref(r);

    elementwise_task(&amax3, "dtypes-bf16-amax3", "bf16", uniform, "bf16",
                     "{\"rtol_amax\": 1e-3}", bf16_copy);
    elementwise_task(&amax2, "dtypes-bf16-amax2", "bf16", uniform, "bf16",
                     "{\"rtol_amax\": 1e-2}", bf16_copy);
    json_decref(expect(&amax3, bf16_off, "wrong", " * amax (amax ",
                       "bf16: 0.004 off with rtol_amax 1e-3"));
    json_decref(expect(&amax2, bf16_off, "ok", NULL,
                       "bf16: 0.004 off with rtol_amax 1e-2"));
    wk_task_close(&f16);
    wk_task_close(&bf16);
    wk_task_close(&amax3);
    wk_task_close(&amax2);
}

/* ---- nibbles ------------------------------------------------------------- */

/* out[0..16): how often each 4-bit pattern is in q (u8, 2 a byte);
 * out[16..32): in p (i32, 8 a word). */
#define NIBBLE_HISTOGRAM                                                       \
    "extern \"C\" __global__ void hist(const unsigned char *q, const int "     \
    "*p,\n"                                                                    \
    "    unsigned *counts, int n)\n"                                           \
    "{\n"                                                                      \
    "    __shared__ unsigned h[32];\n"                                         \
    "    if (threadIdx.x < 32)\n"                                              \
    "        h[threadIdx.x] = 0;\n"                                            \
    "    __syncthreads();\n"                                                   \
    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"         \
    "         i += gridDim.x * blockDim.x) {\n"                                \
    "        atomicAdd(&h[q[i] & 15], 1u);\n"                                  \
    "        atomicAdd(&h[q[i] >> 4], 1u);\n"                                  \
    "        for (int j = 0; j < 8; j++)\n"                                    \
    "            atomicAdd(&h[16 + (((unsigned)p[i] >> (4 * j)) & 15)], "      \
    "1u);\n"                                                                   \
    "    }\n"                                                                  \
    "    __syncthreads();\n"                                                   \
    "    if (threadIdx.x < 32)\n"                                              \
    "        atomicAdd(&counts[threadIdx.x], h[threadIdx.x]);\n"               \
    "}\n"

static const char nibble_ref[] =
    "/* kevo:launch\n"
    " *   scratch counts u32[32] zero\n"
    " *   hist<<<64, 256>>>(q, p, counts, n)\n"
    " *   put<<<1, 32>>>(counts, out)\n"
    " */\n" NIBBLE_HISTOGRAM
    "extern \"C\" __global__ void put(const unsigned *counts, unsigned *out)\n"
    "{\n"
    "    out[threadIdx.x] = counts[threadIdx.x];\n"
    "}\n";

/* The histogram, spoiled unless q's patterns are those of -3..5 (13, 14,
 * 15, 0..5) and p's those of 2..13, each within 5% of its share. */
static const char nibble_check[] =
    "/* kevo:launch\n"
    " *   scratch counts u32[32] zero\n"
    " *   hist<<<64, 256>>>(q, p, counts, n)\n"
    " *   check<<<1, 32>>>(counts, out, n)\n"
    " */\n" NIBBLE_HISTOGRAM
    "__device__ bool fair(unsigned c, bool in, double share)\n"
    "{\n"
    "    return in ? c > 0.95 * share && c < 1.05 * share : c == 0;\n"
    "}\n"
    "extern \"C\" __global__ void check(const unsigned *counts,\n"
    "    unsigned *out, int n)\n"
    "{\n"
    "    int v = threadIdx.x;\n"
    "    bool good = v < 16 ? fair(counts[v], v <= 5 || v >= 13, 2.0 * n / 9)\n"
    "                       : fair(counts[v], v - 16 >= 2 && v - 16 <= 13,\n"
    "                              8.0 * n / 12);\n"
    "    out[v] = counts[v] + (__all_sync(0xffffffffu, good) ? 0 : 1);\n"
    "}\n";

static void check_nibbles(void)
{
    json_t *task = json_pack(
        "{s:s, s:[s], s:[{s:s, s:s, s:s, s:s, s:{s:s, s:i, s:i}}, "
        "{s:s, s:s, s:s, s:s, s:{s:s, s:i, s:i}}, "
        "{s:s, s:s, s:s, s:s}, {s:s, s:s, s:s}], "
        "s:{s:s}, s:{s:s}, s:{s:s}, s:[{s:i}, {s:i}]}",
        "name", "nibbles", "dims", "n", "args", "name", "q", "type", "u8",
        "role", "in", "count", "n", "init", "dist", "nibbles", "lo", -3, "hi",
        5, "name", "p", "type", "i32", "role", "in", "count", "n", "init",
        "dist", "nibbles", "lo", 2, "hi", 13, "name", "out", "type", "u32",
        "role", "out", "count", "32", "name", "n", "type", "i32", "value", "n",
        "reference", "code", nibble_ref, "seed", "code", nibble_ref, "cost",
        "bytes", "5*n", "shapes", "n", 1 << 20, "n", 300007);
    char *text = task ? json_dumps(task, 0) : NULL;
    if (!text)
        bail_out("out of memory");
    wk_task t;
    wk_task_text(&t, text, "dtypes-nibbles");
    json_decref(expect(&t, nibble_ref, "ok", NULL, "nibbles: the histogram"));
    json_decref(expect(&t, nibble_check, "ok", NULL,
                       "nibbles: signed -3..5 in u8 and unsigned 2..13 in "
                       "i32, uniform, nothing else"));
    wk_task_close(&t);
    free(text);
    json_decref(task);
}

int main(void)
{
    char *worker = wk_worker_path();
    json_t *hello = wk_start(worker);
    const json_t *d = json_object_get(hello, "device");
    snprintf(wk_arch, sizeof(wk_arch), "sm_%" PRId64,
             (int64_t)json_integer_value(json_object_get(d, "cc")));
    diag("%s, %s", json_string_value(json_object_get(d, "name")), wk_arch);
    json_decref(hello);

    check_bf16_ulp();
    check_f16_inf();
    check_poison_and_amax();
    check_nibbles();

    kevo__proc_kill(&wk_proc, NULL);
    free(worker);
    return done_testing();
}

/*
 * prompt.c: builds the llm operator's prompts from the host's texts: the
 * system text (the job, how kevo judges a kernel, and the rules it
 * enforces, stated as the code enforces them), the user text of a request
 * for children (the task, the device, the current kernel and its
 * evaluation, a second parent, other variants, the aim, the meta-prompt's
 * sections and the reply format), and the revision prompt. Evaluations and
 * the device are put into words by prompt_eval.c; no JSON reaches the
 * model, save the revision prompt's one block of sections it must echo.
 */
#include "config.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "prompt.h"
#include "prompt_eval.h"
#include "prompt_failures.h"

/* The rules below are kevo's: the host's include_rule() (headers),
 * lib/model/blocks.c and kevo-blocks(5) (the kevo:launch and kevo:param
 * blocks), lib/eval/compile_job.c (kevo__compile_options: the NVRTC
 * options, parameters as -D macros), lib/model/devprops.c (the target, the
 * device JSON's "arch"), worker/gpu_launch.c (the shared-memory opt-in),
 * worker/compile.c (kernels found by name expression, so extern "C" is
 * optional) and the held-out gate (fitness/gate.c: correct, and not slower
 * than the seed beyond a slack). tests/test-prompt.c checks the examples,
 * the forbidden forms and the options against the code. */
/* The system text: system_head, the target (kevo__llm_put_target, with
 * nvrtc_options), system_mid, the headers a kernel may include (the host's
 * include_rule()), system_tail. */
static const char system_head[] =
    "You are an expert CUDA performance engineer. You make a CUDA kernel "
    "faster on the GPU described, while its results stay correct within "
    "the task's tolerance for every shape of the problem: the shapes shown "
    "and others of the same kind, which are checked too.\n"
    "\n"
    "How a kernel is judged: kevo compiles it with NVRTC, runs it on fresh "
    "random inputs with its outputs poisoned, compares every output element "
    "with a trusted reference, checks that the inputs are unchanged, runs "
    "it again on a second input set and compares again, then times it (the "
    "median of repeated runs with the L2 cache flushed between them; every "
    "kernel it launches counts). Its efficiency on a shape is the roofline "
    "time (the larger of the cost model's bytes over the memory bandwidth "
    "and its flops over the peak, and no less than the launch latency) "
    "over the measured time; its fitness is the geometric mean of the "
    "efficiencies, and 0 when any shape fails.\n"
    "\n"
    "Rules kevo enforces (a kernel that breaks one fails):\n"
    "1. Device code only. ";

/* NVRTC's fixed options but -arch and the -D macros. */
static const char nvrtc_options[] =
    "-std=c++17 --ptxas-options=-v -default-device --no-source-include";

static const char system_mid[] =
    "A function without __global__ or __host__ is a __device__ function "
    "(-default-device). No host code: no main, no cudaMalloc or "
    "cudaMemcpy, no launches from the source.\n"
    "2. #include only ";

static const char system_tail[] =
    " (for fixed-width integers, <cuda/std/cstdint>). Any other header, "
    "<cuda_runtime.h>, <cstdio> and <stdint.h> included, is refused.\n"
    "3. A comment block whose first word is kevo:launch declares the "
    "launches, one line per kernel in the order they run:\n"
    "   KERNEL<<<GRID, BLOCK[, SMEM]>>>(ARG, ...)\n"
    "GRID and BLOCK are integer expressions or dim3(X[, Y[, Z]]); SMEM is "
    "the dynamic shared memory in bytes (0 when left out). An expression is "
    "integer arithmetic over numbers, the problem's dims, the parameters "
    "and the device properties sm_count, warp_size, max_threads_per_block, "
    "max_threads_per_sm, max_smem_per_block, smem_per_sm, regs_per_sm, "
    "l2_bytes and cc: + - * / % (integer division), comparisons, ! && ||, "
    "?:, min(a, b), max(a, b), ceil_div(a, b), round_up(a, b) and abs(a). "
    "Nothing else: no sizeof, no std::min or other C++ function, no "
    "floating-point number, no fourth launch item (a stream: kevo runs "
    "every launch on one stream of its own), no template arguments "
    "(kernel<128><<<...>>> is refused: make a template parameter a "
    "kevo:param). Each ARG is the name of a task argument or scratch "
    "buffer, or an integer expression, passed as a 32-bit int unless a "
    "cast (i32), (u32), (i64) or (u64) stands in front; any other cast, "
    "such as (size_t) or (float), is refused. The kernel's parameters take "
    "the arguments in the order listed: a buffer as a pointer to its "
    "element type (f32 float, f64 double, f16 __half, bf16 __nv_bfloat16, "
    "i8 signed char, u8 unsigned char, i16 short, u16 unsigned short, i32 "
    "int, u32 unsigned int, i64 long long, u64 unsigned long long), a "
    "scalar as its type.\n"
    "4. Scratch memory: a line 'scratch NAME TYPE[COUNT]' in the "
    "kevo:launch block (TYPE one of f32, f64, f16, bf16, i8, u8, i16, u16, "
    "i32, u32, i64, u64; COUNT an expression) gives the kernels a device "
    "buffer of COUNT elements, passed by naming it as an argument. Its "
    "contents start undefined; 'zero' at the end of the line zero-fills it "
    "before the first launch. There is no other way to get device "
    "memory.\n"
    "   Tensor maps (sm_90 on): a line 'tensormap NAME BUFFER TYPE dims(D0, "
    "D1, ...) box(B0, B1, ...)' with optional strides(S1, ...) (bytes of "
    "dims 1 on; dense by default), offset(E) (elements), swizzle(none|32|"
    "64|128), l2(none|64|128|256), oob(zero|nan), innermost dim first, "
    "makes kevo encode a TMA descriptor (cuTensorMapEncodeTiled) over a "
    "task or scratch buffer of that TYPE at every shape; name it as an "
    "argument and the kernel takes it as 'const __grid_constant__ TmaMap "
    "NAME' with 'struct alignas(64) TmaMap { unsigned long long v[16]; };' "
    "(no <cuda.h>). kevo rejects a map that breaks a TMA rule at a shape "
    "(16-byte aligned address and strides, box[0] * element size a "
    "multiple of 16 and at most the swizzle span, box items at most 256, "
    "the map inside its buffer). A launch line may end with cluster(X[, "
    "Y[, Z]]), pdl, and 'if EXPR' (the launch runs only where EXPR is "
    "non-zero: a TMA kernel with a general fallback; at least one launch "
    "runs at every shape). For example:\n"
    "     tensormap tmA a bf16 dims(k, m) box(64, 128) swizzle(128)\n"
    "     gemm<<<dim3(n / 128, m / 128), 384, SMEM>>>(tmA, tmB, c, m, n, k) "
    "cluster(2) if k % 64 == 0\n"
    "5. Tunable parameters: a comment block whose first word is kevo:param "
    "declares them, a line each: 'NAME in {64, 128, 256} = 128', 'NAME in "
    "1..8 step 1 = 4' or 'NAME in pow2(16..256) = 64', and 'require EXPR' "
    "for a constraint. Each reaches the code as a -D macro (-DNAME=128), "
    "usable in the kernels and in the kevo:launch block alike: never "
    "#define a parameter in the source.\n"
    "6. Shared memory: static __shared__ arrays may total at most 48 KiB "
    "per block. For more, declare extern __shared__ and give the size as "
    "SMEM: kevo opts the kernel in to dynamic shared memory above 48 KiB "
    "itself, up to max_smem_per_block (static and dynamic together).\n"
    "7. Each kernel named in the kevo:launch block is a __global__ function "
    "of the source with that name (extern \"C\" or not).\n"
    "8. Shapes you are not shown are checked too, on fresh inputs: there "
    "the kernel must be correct, and no slower than the task's seed kernel "
    "beyond a small margin, or it is never the search's result, however "
    "fast it is on the shapes shown. Handle every size the dims can take "
    "(one that no tile divides, a small one, a large one), and do not tune "
    "the launch to the shapes shown alone.\n"
    "\n"
    "An example of both blocks (a reduction in two kernels):\n"
    "/* kevo:launch\n"
    " *   scratch partial f32[ceil_div(n, BLOCK * VEC)]\n"
    " *   reduce_partial<<<ceil_div(n, BLOCK * VEC), BLOCK, BLOCK * "
    "4>>>(x, partial, n)\n"
    " *   reduce_final<<<1, 1024>>>(partial, out, (i32)ceil_div(n, BLOCK * "
    "VEC))\n"
    " */\n"
    "// kevo:param\n"
    "//   BLOCK in {128, 256, 512} = 256\n"
    "//   VEC in {1, 2, 4} = 4\n"
    "//   require BLOCK * VEC <= 2048\n";

/* A JSON object as "key: value" lines, held-out keys left out (text that
 * is not an object is shown as it is). */
static void put_object_lines(llm_buf *b, const char *json)
{
    json_t *root = json_loads(json, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        kevo__llm_buf_printf(b, "%s\n", json);
        return;
    }
    const char *key;
    json_t *v;
    json_object_foreach (root, key, v) {
        if (kevo__llm_hidden_key(key))
            continue;
        kevo__llm_buf_printf(b, "%s: ", key);
        kevo__llm_put_value(b, v);
        kevo__llm_buf_puts(b, "\n");
    }
    json_decref(root);
}

/* The task's dimensions and training shapes. */
static void put_dims(llm_buf *b, const char *json)
{
    json_t *root = json_loads(json, 0, NULL);
    json_t *dims = json_object_get(root, "dims");
    json_t *shapes = json_object_get(root, "shapes");
    if (!json_is_array(dims) || !json_is_array(shapes)) {
        json_decref(root);
        put_object_lines(b, json);
        return;
    }
    size_t i;
    json_t *v;
    kevo__llm_buf_puts(b, "Dimensions:");
    json_array_foreach (dims, i, v) {
        kevo__llm_buf_puts(b, i ? ", " : " ");
        kevo__llm_put_value(b, v);
    }
    kevo__llm_buf_puts(b, "\nShapes it is measured on (it must be correct for "
                          "other shapes too):\n");
    json_array_foreach (shapes, i, v) {
        kevo__llm_buf_puts(b, "- ");
        if (json_is_object(v))
            kevo__llm_put_pairs(b, v);
        else
            kevo__llm_put_value(b, v);
        kevo__llm_buf_puts(b, "\n");
    }
    json_decref(root);
}

static void put_source(llm_buf *b, const char *source)
{
    size_t n = strlen(source);
    kevo__llm_buf_puts(b, "```cuda\n");
    kevo__llm_buf_append(b, source, n);
    if (n == 0 || source[n - 1] != '\n')
        kevo__llm_buf_puts(b, "\n");
    kevo__llm_buf_puts(b, "```\n");
}

/* "Parameter values: BM=64, BN=64" of an assignment that has values. */
static void put_assignment(llm_buf *b, const char *json)
{
    json_t *a = json ? json_loads(json, 0, NULL) : NULL;
    if (json_is_object(a) && json_object_size(a) > 0) {
        kevo__llm_buf_puts(b, "Parameter values: ");
        kevo__llm_put_pairs(b, a);
        kevo__llm_buf_puts(b, "\n");
    }
    json_decref(a);
}

/* A parameter space the source does not declare itself (the task's
 * parameters): "BLOCK in {64, 128} (default 128); require ...". */
static void put_space(llm_buf *b, const char *params_json, const char *source)
{
    if (!params_json || (source && strstr(source, "kevo:param")))
        return;
    json_t *root = json_loads(params_json, 0, NULL);
    json_t *params = json_object_get(root, "params");
    if (json_array_size(params) > 0) {
        size_t i;
        json_t *p;
        kevo__llm_buf_puts(b,
                           "Tunable parameters (declared by the task, not in "
                           "the source):");
        json_array_foreach (params, i, p) {
            const char *name = json_string_value(json_object_get(p, "name"));
            kevo__llm_buf_printf(b, "%s%s in {", i ? "; " : " ",
                                 name ? name : "?");
            kevo__llm_put_value(b, json_object_get(p, "values"));
            kevo__llm_buf_puts(b, "}");
            json_t *d = json_object_get(p, "default");
            if (d) {
                kevo__llm_buf_puts(b, " = ");
                kevo__llm_put_value(b, d);
            }
        }
        json_t *cons = json_object_get(root, "constraints");
        json_array_foreach (cons, i, p) {
            kevo__llm_buf_puts(b, "; require ");
            kevo__llm_put_value(b, p);
        }
        kevo__llm_buf_puts(b, "\n");
    }
    json_decref(root);
}

/* " (fitness F)" of a summary that has one and did not fail. */
static void put_fitness_title(llm_buf *b, const char *summary_json)
{
    double fit;
    if (!summary_json || !kevo__llm_summary_fitness(summary_json, &fit))
        return;
    json_t *root = json_loads(summary_json, 0, NULL);
    const char *verdict = json_string_value(json_object_get(root, "verdict"));
    if (!verdict || strcmp(verdict, "ok") == 0)
        kevo__llm_buf_printf(b, " (fitness %.4g)", fit);
    json_decref(root);
}

/* The current kernel: its parameters, source and evaluation. */
static void put_parent(llm_buf *b, const llm_prompt_input *in)
{
    const llm_prompt_candidate *c = &in->parent;
    kevo__llm_buf_puts(b, "\n# Current kernel");
    put_fitness_title(b, c->summary_json);
    kevo__llm_buf_puts(b, "\n");
    put_assignment(b, c->assignment_json);
    put_space(b, c->params_json, c->source);
    put_source(b, c->source ? c->source : "");
    if (c->summary_json) {
        kevo__llm_buf_puts(b, "Its evaluation: ");
        kevo__llm_put_evaluation(b, c->summary_json, in->task_dims,
                                 in->max_log_lines);
    }
    kevo__llm_prompt_failures(b, in->failures, in->n_failures);
}

/* A variant shown beside the parent: what sets it apart, its source (or
 * that it has the parent's) and its evaluation, in full or in brief. */
static void put_variant(llm_buf *b, const llm_prompt_candidate *c,
                        const llm_prompt_input *in, bool full)
{
    const llm_prompt_candidate *parent = &in->parent;
    kevo__llm_put_differences(b, c->summary_json, c->assignment_json,
                              parent->summary_json, parent->assignment_json);
    if (c->source && parent->source && strcmp(c->source, parent->source) == 0)
        kevo__llm_buf_puts(b, "Its source is the current kernel's.\n");
    else
        put_source(b, c->source ? c->source : "");
    if (!c->summary_json)
        return;
    kevo__llm_buf_puts(b, "Its evaluation: ");
    if (full)
        kevo__llm_put_evaluation(b, c->summary_json, in->task_dims,
                                 in->max_log_lines);
    else
        kevo__llm_put_brief(b, c->summary_json);
}

/* The meta-prompt's sections, each under its name as a heading. */
static void put_sections(llm_buf *b, const kevo_operator_text *sections,
                         size_t n)
{
    if (n > 0)
        kevo__llm_buf_puts(b, "\n# Guidance\n");
    for (size_t i = 0; i < n; i++) {
        const char *key = sections[i].name;
        kevo__llm_buf_printf(b, "\n## %c%s\n%s\n",
                             toupper((unsigned char)key[0]),
                             key[0] ? key + 1 : "", sections[i].text);
    }
}

/* The end of building a prompt: the user text (raw, the caller's buffer
 * taken, NULL when an append failed) cleaned to valid UTF-8 in *user, and
 * a copy of sys in *system. False, with err saying so, when out of
 * memory. */
static bool finish_prompt(const char *raw, const char *sys, char **system,
                          char **user, char *err, size_t errlen)
{
    if (!raw || !(*user = kevo__llm_utf8_clean(raw, strlen(raw))) ||
        !(*system = kevo__llm_strdup(sys))) {
        kevo__llm_errf(err, errlen, "out of memory for the prompt");
        return false;
    }
    return true;
}

static const char format_whole[] =
    "Reply with the complete new source in one fenced block that starts "
    "with ```cuda and ends with ```: every kernel and helper, and the "
    "kevo:launch block (and the kevo:param block, if there is one) updated "
    "to match your kernels. Put no other code in fences; a few sentences "
    "before the block saying what you changed and why are welcome.\n";

static const char format_edits[] =
    "Reply with one or more edits of the current kernel, each in this "
    "form:\n"
    "\n"
    "<<<<<<< SEARCH\n"
    "lines copied exactly from the current kernel\n"
    "=======\n"
    "the lines that replace them\n"
    ">>>>>>> REPLACE\n"
    "\n"
    "Each SEARCH part must match exactly one place in the current kernel, "
    "so copy enough lines to make it unique; the edits apply in order. "
    "Keep the kevo:launch block (and any kevo:param block) true to the "
    "code, editing it too when you change kernels or their launch. A few "
    "sentences before the edits saying what you changed and why are "
    "welcome.\n";

static const char format_either[] =
    "Reply in one of two forms. For a rewrite, the complete new source in "
    "one fenced block that starts with ```cuda and ends with ```: every "
    "kernel and helper, and the kevo:launch block (and the kevo:param "
    "block, if there is one) updated to match your kernels. For a small "
    "change, one or more edits of the current kernel, each in this form:\n"
    "\n"
    "<<<<<<< SEARCH\n"
    "lines copied exactly from the current kernel\n"
    "=======\n"
    "the lines that replace them\n"
    ">>>>>>> REPLACE\n"
    "\n"
    "Each SEARCH part must match exactly one place in the current kernel; "
    "the edits apply in order. Use one form, not both. A few sentences "
    "before the code saying what you changed and why are welcome.\n";

static void put_text_section(llm_buf *b, const char *title, const char *text)
{
    if (text && *text)
        kevo__llm_buf_printf(b, "\n## %s\n%s%s", title, text,
                             text[strlen(text) - 1] == '\n' ? "" : "\n");
}

bool kevo__llm_prompt_build(const llm_prompt_input *in, char **system,
                            char **user, char *err, size_t errlen)
{
    llm_buf b = {0};
    char *raw = NULL;
    bool ok = false;
    *system = *user = NULL;

    kevo__llm_buf_printf(&b, "# Task: %s\n",
                         in->task_name ? in->task_name : "(unnamed)");
    if (in->task_description && *in->task_description)
        kevo__llm_buf_printf(&b, "\n%s\n", in->task_description);
    put_text_section(&b, "Kernel arguments", in->task_args);
    if (in->task_dims && *in->task_dims) {
        kevo__llm_buf_puts(&b, "\n## Problem size\n");
        put_dims(&b, in->task_dims);
    }
    put_text_section(&b, "Cost model (what the roofline counts)",
                     in->task_cost);
    if (in->device_json && *in->device_json) {
        kevo__llm_buf_puts(&b, "\n## Device\n");
        kevo__llm_put_device(&b, in->device_json);
    }

    put_parent(&b, in);

    if (in->second_parent) {
        const llm_prompt_candidate *c = in->second_parent;
        kevo__llm_buf_puts(&b, "\n# Second parent");
        put_fitness_title(&b, c->summary_json);
        kevo__llm_buf_puts(&b,
                           "\nWrite a crossover of the two: keep what makes "
                           "the current kernel fast and take over what "
                           "makes this one fast where they differ.\n");
        put_variant(&b, c, in, true);
    }

    size_t nins = in->n_inspirations < in->max_inspirations
                      ? in->n_inspirations
                      : in->max_inspirations;
    if (nins > 0)
        kevo__llm_buf_puts(&b, "\n# Other variants from the archive, for "
                               "comparison\n");
    for (size_t i = 0; i < nins; i++) {
        const llm_prompt_candidate *c = &in->inspirations[i];
        kevo__llm_buf_printf(&b, "\n## Variant %zu", i + 1);
        put_fitness_title(&b, c->summary_json);
        kevo__llm_buf_puts(&b, "\n");
        put_variant(&b, c, in, false);
    }

    if (in->target_cell_json && *in->target_cell_json) {
        kevo__llm_buf_puts(&b, "\n# Aim\nExplore: write a variant whose "
                               "behaviour falls in this cell of the archive "
                               "(a different way of using the GPU), while "
                               "staying fast and correct:\n");
        put_object_lines(&b, in->target_cell_json);
    }

    put_sections(&b, in->sections, in->n_sections);

    kevo__llm_buf_puts(&b, "\n# Reply format\n");
    kevo__llm_buf_puts(&b, in->format == LLM_FORMAT_WHOLE   ? format_whole
                           : in->format == LLM_FORMAT_EDITS ? format_edits
                                                            : format_either);

    raw = kevo__llm_buf_take(&b);
    llm_buf sys = {0};
    kevo__llm_buf_puts(&sys, system_head);
    kevo__llm_put_target(&sys, in->device_json, nvrtc_options);
    kevo__llm_buf_puts(&sys, system_mid);
    kevo__llm_buf_puts(&sys, in->include_rule ? in->include_rule : "");
    kevo__llm_buf_puts(&sys, system_tail);
    char *sys_text = kevo__llm_buf_take(&sys);
    ok = sys_text && finish_prompt(raw, sys_text, system, user, err, errlen);
    if (!sys_text)
        kevo__llm_errf(err, errlen, "out of memory for the prompt");
    free(sys_text);
    kevo__llm_buf_free(&b);
    free(raw);
    if (!ok) {
        free(*system);
        free(*user);
        *system = *user = NULL;
    }
    return ok;
}

/* ---- the revision prompt ------------------------------------------------- */

static const char revision_system_text[] =
    "You improve the guidance that steers a language model while it "
    "optimises CUDA kernels. The guidance is a few named sections "
    "(conventionally strategy: what to try; pitfalls: what to avoid; "
    "analysis: how to read an evaluation), shown to the model, with the "
    "kernel to improve and its evaluation, each time it is asked for a "
    "faster variant. Each variant is compiled with NVRTC, checked against a "
    "trusted reference on several shapes and fresh random inputs, and "
    "timed; its fitness is its roofline efficiency (0 when it fails, about "
    "1 at best). You are shown the guidance, its record (how the variants it "
    "produced fared) and its best and worst variants. Revise it so that it "
    "leads to faster kernels that are more often correct for this task: "
    "keep what worked, correct or drop what led to failures or slow "
    "kernels, and make the advice concrete where the evidence supports it. "
    "The advice must hold for every shape of the problem, not only the "
    "shapes measured.\n";

/* A count of the record, as the JSON it once came in saturated it. */
static long long record_count(uint64_t v)
{
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (long long)v;
}

static void put_fitness(llm_buf *b, double f)
{
    if (isfinite(f))
        kevo__llm_buf_printf(b, "%.4g", f);
    else
        kevo__llm_buf_puts(b, "none");
}

static double percent(long long part, long long whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The record as lines. */
static void put_record(llm_buf *b, const kevo_prompt_record *r)
{
    long long uses = record_count(r->uses);
    long long children = record_count(r->children);
    long long entered = record_count(r->entered);
    long long beat = record_count(r->beat_parent);
    long long revisions = record_count(r->revisions);
    kevo__llm_buf_printf(b, "- chosen for %lld requests\n", uses);
    if (children == 0)
        kevo__llm_buf_puts(b, "- no child credited to it yet\n");
    else
        kevo__llm_buf_printf(b,
                             "- %lld children credited to it: %lld entered "
                             "the archive (%.0f%%), %lld beat their parent "
                             "(%.0f%%)\n",
                             children, entered, percent(entered, children),
                             beat, percent(beat, children));
    kevo__llm_buf_puts(b, "- best child: fitness ");
    put_fitness(b, r->best_fitness);
    kevo__llm_buf_puts(b, "\n- worst child: fitness ");
    put_fitness(b, r->worst_fitness);
    kevo__llm_buf_puts(b, "\n");
    if (isfinite(r->mean))
        kevo__llm_buf_printf(b,
                             "- estimated chance that a child succeeds: "
                             "%.2f\n",
                             r->mean);
    if (revisions > 0)
        kevo__llm_buf_printf(b, "- handed out for revision %lld times\n",
                             revisions);
}

/* A child of the prompt, with its fitness from the record (or its
 * summary). */
static void put_child(llm_buf *b, const char *title, double record_fitness,
                      const llm_prompt_candidate *c, size_t max_log_lines)
{
    if (!c->source)
        return;
    kevo__llm_buf_printf(b, "\n# %s", title);
    double fit;
    if (isfinite(record_fitness))
        kevo__llm_buf_printf(b, " (fitness %.4g)", record_fitness);
    else if (c->summary_json &&
             kevo__llm_summary_fitness(c->summary_json, &fit))
        kevo__llm_buf_printf(b, " (fitness %.4g)", fit);
    kevo__llm_buf_puts(b, "\n");
    put_source(b, c->source);
    if (c->summary_json) {
        kevo__llm_buf_puts(b, "Its evaluation: ");
        kevo__llm_put_evaluation(b, c->summary_json, NULL, max_log_lines);
    }
}

static const char revision_format[] =
    "Reply with the revised guidance as one JSON object that maps each "
    "section's name to its new text, in one fenced block that starts with "
    "```json and ends with ```. Give every section the guidance has now, "
    "under the same names; add no other section, except analysis, pitfalls "
    "or strategy where it lacks one. Each text is plain prose (no code "
    "fences) for the model that optimises the kernel, at most a few "
    "thousand characters. A sentence or two before the block saying what "
    "you changed and why is welcome.\n";

bool kevo__llm_revision_prompt_build(const llm_revision_input *in,
                                     char **system, char **user, char *err,
                                     size_t errlen)
{
    llm_buf b = {0};
    char *raw = NULL, *pretty = NULL;
    json_t *sections = NULL;
    bool ok = false;
    *system = *user = NULL;

    if (in->n_sections == 0) {
        kevo__llm_errf(err, errlen, "the prompt to revise has no section");
        goto done;
    }
    /* The model reads and writes the sections as one JSON object. */
    sections = json_object();
    for (size_t i = 0; sections && i < in->n_sections; i++) {
        if (json_object_set_new(sections, in->sections[i].name,
                                json_string(in->sections[i].text)) != 0) {
            json_decref(sections);
            sections = NULL;
        }
    }
    if (!sections) {
        kevo__llm_errf(err, errlen, "out of memory for the prompt");
        goto done;
    }

    kevo__llm_buf_printf(&b, "# Task: %s\n",
                         in->task_name ? in->task_name : "(unnamed)");
    if (in->task_description && *in->task_description)
        kevo__llm_buf_printf(&b, "\n%s\n", in->task_description);
    if (in->task_args && *in->task_args)
        kevo__llm_buf_printf(
            &b, "\n## Kernel arguments\n%s%s", in->task_args,
            in->task_args[strlen(in->task_args) - 1] == '\n' ? "" : "\n");

    kevo__llm_buf_puts(&b, "\n# The guidance to revise");
    if (in->prompt_name && *in->prompt_name)
        kevo__llm_buf_printf(&b, ": \"%s\"", in->prompt_name);
    kevo__llm_buf_puts(&b, "\n");
    for (size_t i = 0; i < in->n_sections; i++) {
        const char *key = in->sections[i].name;
        kevo__llm_buf_printf(&b, "\n## %c%s\n%s\n",
                             toupper((unsigned char)key[0]),
                             key[0] ? key + 1 : "", in->sections[i].text);
    }
    pretty = json_dumps(sections, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (!pretty) {
        kevo__llm_errf(err, errlen, "out of memory for the prompt");
        goto done;
    }
    kevo__llm_buf_printf(&b, "\nThe same guidance as JSON:\n```json\n%s\n```\n",
                         pretty);

    if (in->record) {
        kevo__llm_buf_puts(&b, "\n# Its record\n");
        put_record(&b, in->record);
    }
    put_child(&b, "Its best child", in->record ? in->record->best_fitness : NAN,
              &in->best, in->max_log_lines);
    put_child(&b, "Its worst child",
              in->record ? in->record->worst_fitness : NAN, &in->worst,
              in->max_log_lines);
    if (in->best.source && in->worst.source)
        kevo__llm_buf_puts(&b, "\nCompare the two: what did the best child "
                               "do that the worst did not, and which advice "
                               "led to each?\n");

    kevo__llm_buf_puts(&b, "\n# Reply format\n");
    kevo__llm_buf_puts(&b, revision_format);

    raw = kevo__llm_buf_take(&b);
    ok = finish_prompt(raw, revision_system_text, system, user, err, errlen);
done:
    kevo__llm_buf_free(&b);
    free(raw);
    free(pretty);
    json_decref(sections);
    if (!ok) {
        free(*system);
        free(*user);
        *system = *user = NULL;
    }
    return ok;
}

/*
 * test-prompt.c: the llm operator's prompt, built from real evaluations.
 *
 * The prompts here are the ones the llm plugin sends: the plugin is loaded
 * by the operator host from the build tree, handed a request, and its
 * request to a loopback server (tests/loopback-server.c) is read back. The
 * evaluation summaries are what the search keeps beside an elite
 * (kevo_eval_result_to_json()): a real H100 evaluation of the sgemm seed
 * (tests/data/eval/h100_sgemm_result.json), a real NVRTC compile error of
 * an sgemm variant (sgemm_compile_error.json, made by the evaluator in
 * compile-only mode), the saxpy seed as kevo eval measured it on an H200
 * (h200_saxpy_seed_eval.json), and a wrong saxpy result built by the
 * library from the GPU worker's result message (saxpy_train_wrong.json)
 * and the seed's real NVRTC output (tests/data/ptx).
 *
 * A prompt fails the test when it holds a JSON dump outside its code
 * fences, lacks the device, or misses one of the rules kevo enforces; each
 * rule's example and each form it forbids is checked against kevo's own
 * launch-block parser, so the text stays true to the code.
 *
 * KEVO_PROMPT_DUMP=DIR writes the prompts built to DIR, for reading.
 */
#include "config.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>
#include <kevo.h>
#include <kevo/operator.h>

#include "eval/compile_pool.h"
#include "eval/eval_private.h"
#include "loopback-server.h"
#include "model/blocks.h"
#include "model/devprops.h"
#include "plugin_host.h"
#include "proc/include_scan.h"
#include "prompt.h"
#include "tap.h"

#define KEY_ENV "KEVO_TEST_PROMPT_KEY"
#define KEY "sk-kevo-prompt-test-0451"

static loopback *srv;
/* The headers a kernel may include, as a real host's include_rule() gives
 * them. */
static const char *rule;

/* ---- data ----------------------------------------------------------------
 */

static char *slurp(const char *dir, const char *name)
{
    char *path = kevo__asprintf("%s/%s/%s", tap_srcdir(), dir, name);
    char *data = NULL;
    size_t n = 0;
    if (!path || kevo__read_file(path, true, &data, &n, NULL) != KEVO_OK)
        bail_out("cannot read %s", path ? path : name);
    free(path);
    return data;
}

static kevo_task *load_task(const char *name)
{
    char *path =
        kevo__asprintf("%s/examples/tasks/%s.json", tap_srcdir(), name);
    kevo_task *task = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (!path || kevo_task_load(path, &task, &err) != KEVO_OK)
        bail_out("cannot load task %s: %s", name, err.text);
    free(path);
    return task;
}

/* The summary the search keeps for the saxpy seed when the GPU worker
 * answers with tests/data/eval/saxpy_train_wrong.json: the library's own
 * result, from the worker's message and the seed's NVRTC output. */
static char *saxpy_wrong_summary(const kevo_task *task)
{
    char *msg_text = slurp("tests/data/eval", "saxpy_train_wrong.json");
    char *ptx = slurp("tests/data/ptx", "saxpy_seed.ptx");
    char *log = slurp("tests/data/ptx", "saxpy_seed.log");
    json_t *msg = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo__json_parse(msg_text, "saxpy_train_wrong.json", &msg, &err) !=
        KEVO_OK)
        bail_out("%s", err.text);
    /* The H100's measured ceilings (h100_sgemm_result.json). */
    const kevo_ceilings ceilings = {
        3.0225296377662734e12, {6.442689145477356e13, 0, 0, 0, 0}, 0};
    kevo_compile_info info = {true, NULL, log, ptx, strlen(ptx), 0.1, false};
    kevo_eval_context ctx = {&ceilings, NULL, NULL, 0};
    kevo_eval_result *res = NULL;
    char *json = NULL;
    if (kevo__eval_result_new(task, kevo_task_seed(task), KEVO_SHAPES_TRAIN,
                              msg, &info, &ctx, &res, &err) != KEVO_OK ||
        kevo_eval_result_to_json(res, &json, &err) != KEVO_OK)
        bail_out("saxpy_train_wrong.json: %s", err.text);
    kevo_eval_result_free(res);
    json_decref(msg);
    free(msg_text);
    free(ptx);
    free(log);
    return json;
}

/* ---- the prompt the plugin sends -----------------------------------------
 */

typedef struct sent {
    char *system, *user;
} sent;

static void sent_free(sent *s)
{
    free(s->system);
    free(s->user);
    s->system = s->user = NULL;
}

/* Hands req to a new llm instance on a host for task, with device_json
 * as the host's device (NULL: none), and returns the prompt the plugin
 * sent. */
static sent send_request(const kevo_task *task, const char *device_json,
                         kevo_operator_request *req, const char *extra)
{
    kevo_operator_host *host = NULL;
    kevo_operator *op = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    char config[2048];
    snprintf(config, sizeof config,
             "{\"models\": [{\"name\": \"m\", \"api\": \"openai\", "
             "\"model\": \"m-test\", \"base_url\": \"%s/v1\", \"key_env\": "
             "\"%s\"}], \"max_retries\": 0%s}",
             loopback_url(srv), KEY_ENV, extra ? extra : "");
    if (kevo_operator_host_new(task, 7, &host, &err) != KEVO_OK ||
        kevo_operator_host_set_log(host, KEVO_LOG_WARN, NULL, NULL, &err) !=
            KEVO_OK ||
        kevo_operator_host_set_device(host, NULL, device_json, &err) !=
            KEVO_OK ||
        kevo_operator_host_add(host, "llm", NULL, config, &op, &err) != KEVO_OK)
        bail_out("llm operator: %s", err.text);
    size_t before = loopback_count(srv);
    req->size = sizeof *req;
    if (kevo_operator_submit(op, req, NULL, &err) != KEVO_OK)
        bail_out("submit: %s", err.text);
    size_t in_flight = 1;
    for (int i = 0; i < 600 && in_flight > 0; i++)
        kevo_operator_host_poll(host, 100, &in_flight, NULL);
    kevo_operator_result *res;
    while (kevo_operator_host_next_result(host, &res) == KEVO_OK)
        kevo_operator_result_free(res);
    kevo_operator_host_free(host);

    sent s = {NULL, NULL};
    const loopback_request *r =
        loopback_count(srv) > before ? loopback_get(srv, before) : NULL;
    json_t *body = r ? json_loads(r->body, 0, NULL) : NULL;
    json_t *msgs = json_object_get(body, "messages");
    for (size_t i = 0; i < json_array_size(msgs); i++) {
        json_t *m = json_array_get(msgs, i);
        const char *role = json_string_value(json_object_get(m, "role"));
        const char *text = json_string_value(json_object_get(m, "content"));
        if (role && text && strcmp(role, "system") == 0 && !s.system)
            s.system = kevo__strdup(text);
        else if (role && text && strcmp(role, "user") == 0 && !s.user)
            s.user = kevo__strdup(text);
    }
    json_decref(body);
    if (!s.system || !s.user)
        bail_out("the plugin sent no prompt");
    return s;
}

static void dump(const char *name, const sent *s)
{
    const char *dir = getenv("KEVO_PROMPT_DUMP");
    if (!dir || !*dir)
        return;
    mkdir(dir, 0777);
    char *path = kevo__asprintf("%s/%s", dir, name);
    FILE *f = path ? fopen(path, "w") : NULL;
    if (f) {
        fprintf(f, "=== system (%zu bytes)\n%s\n=== user (%zu bytes)\n%s",
                strlen(s->system), s->system, strlen(s->user), s->user);
        fclose(f);
    }
    free(path);
}

/* Bytes of the JSON dumps the text holds outside its code fences: from a
 * '{' or '[' that opens a JSON value ('{' then '"' or '}', '[' then a
 * value, not a subscript such as z[7]) to its matching close or the end
 * of its line (a dump is one line, and may have been cut). */
static size_t json_bytes(const char *text)
{
    size_t n = 0;
    bool fence = false;
    for (const char *p = text; *p;) {
        if ((p == text || p[-1] == '\n') && strncmp(p, "```", 3) == 0) {
            fence = !fence;
            p += 3;
            continue;
        }
        bool subscript = p > text && (isalnum((unsigned char)p[-1]) ||
                                      p[-1] == '_' || p[-1] == ']');
        bool opens = (*p == '{' && (p[1] == '"' || p[1] == '}')) ||
                     (*p == '[' && !subscript && p[1] &&
                      strchr("\"{[-0123456789]", p[1]));
        if (fence || !opens) {
            p++;
            continue;
        }
        /* A cut dump is counted when it opens an object; an array only
         * when it closes on its line ("[-1, 1)" is prose). */
        int depth = 0;
        bool str = false;
        const char *q = p;
        for (; *q && *q != '\n'; q++) {
            if (str) {
                if (*q == '\\' && q[1])
                    q++;
                else if (*q == '"')
                    str = false;
            } else if (*q == '"') {
                str = true;
            } else if (*q == '{' || *q == '[') {
                depth++;
            } else if ((*q == '}' || *q == ']') && --depth == 0) {
                q++;
                break;
            }
        }
        if (depth == 0 || *p == '{')
            n += (size_t)(q - p);
        p = depth == 0 ? q : p + 1;
    }
    return n;
}

/* The H100's measured ceilings, from its evaluation of the sgemm seed
 * (h100_sgemm_result.json: "ceilings"). */
static kevo_ceilings h100_ceilings(void)
{
    char *text = slurp("tests/data/eval", "h100_sgemm_result.json");
    json_t *root = json_loads(text, 0, NULL);
    json_t *c = json_object_get(root, "ceilings");
    kevo_ceilings out = {
        json_number_value(json_object_get(c, "bandwidth")),
        {json_number_value(json_object_get(c, "peak_value")), 0, 0, 0, 0},
        json_number_value(json_object_get(c, "launch"))};
    if (!(out.bandwidth > 0 && out.peak[KEVO_PEAK_FP32] > 0))
        bail_out("h100_sgemm_result.json has no ceilings");
    json_decref(root);
    free(text);
    return out;
}

/* What the search hands operators for an H100 (lib/search/search.c): the
 * nominal device's properties (an H100 SXM) and the H100's ceilings. */
static char *h100_device(kevo_peak peak)
{
    kevo_vars *props = kevo_vars_new();
    if (!props || kevo__devprops_nominal(props) != KEVO_OK)
        bail_out("out of memory");
    kevo_ceilings c = h100_ceilings();
    char *json = kevo__devprops_json("NVIDIA H100 80GB HBM3", props, &c, peak);
    kevo_vars_free(props);
    if (!json)
        bail_out("out of memory");
    return json;
}

/* The part of text outside its ```-fenced blocks, in a new string. */
static char *outside_fences(const char *text)
{
    kevo_buf b = {0};
    bool fence = false;
    kevo__buf_puts(&b, "");
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) + 1 : strlen(p);
        if (strncmp(p, "```", 3) == 0)
            fence = !fence;
        else if (!fence)
            kevo__buf_append(&b, p, n);
        p += n;
    }
    return kevo__buf_take(&b);
}

/* Fails when the prompt holds JSON outside its code: an object's key, an
 * array of objects, escaped text. */
static void no_json(const sent *s, const char *what)
{
    char *u = outside_fences(s->user), *y = outside_fences(s->system);
    static const char *const marks[] = {"{\"", "\":",  "\",", "[{",
                                        "\\n", "\\\"", "\"}"};
    for (size_t i = 0; i < sizeof marks / sizeof *marks; i++) {
        const char *hit = strstr(u, marks[i]);
        ok(!hit && !strstr(y, marks[i]), "%s: no '%s' outside code", what,
           marks[i]);
        if (hit)
            diag("at: %.80s", hit > u + 40 ? hit - 40 : u);
    }
    is_uint(json_bytes(s->user) + json_bytes(s->system), 0, "%s: no JSON dump",
            what);
    free(u);
    free(y);
}

/* The device section the search's device JSON gives for an H100. */
static void has_device(const sent *s, const char *what)
{
    like_str(s->user, "\n## Device\nNVIDIA H100 80GB HBM3\n", "%s: device",
             what);
    like_str(s->user, "- compute capability 9.0, 132 SMs, warp of 32 threads",
             "%s: SMs", what);
    like_str(s->user,
             "- per SM: 2048 threads, 65536 registers, 228 KiB of shared "
             "memory",
             "%s: per SM", what);
    like_str(s->user,
             "- per block: 1024 threads, 65536 registers (at most 255 a "
             "thread), shared memory 48 KiB by default and up to 227 KiB "
             "with the opt-in, which kevo makes for you",
             "%s: per block, with the shared-memory opt-in", what);
    like_str(s->user, "- L2 cache: 50 MiB", "%s: L2", what);
    like_str(s->user,
             "- measured: memory bandwidth 3023 GB/s (bytes read plus "
             "written), fp32 peak 64.4 TFLOP/s",
             "%s: measured ceilings with units", what);
    like_str(s->user, "- ridge point: 21.3 flop/byte (the fp32 peak",
             "%s: ridge point", what);
}

static sent sgemm_request(const char *device, bool crowd)
{
    kevo_task *task = load_task("sgemm");
    char *summary = slurp("tests/data/eval", "h100_sgemm_result.json");
    char *prompt = slurp("prompts", "shared-memory-warps.json");
    const kevo_candidate *seed = kevo_task_seed(task);
    kevo_operator_inspiration insp[2] = {{seed, summary}, {seed, summary}};
    kevo_operator_request req = {
        .parent = seed,
        .parent_summary_json = summary,
        .inspirations = crowd ? insp : NULL,
        .n_inspirations = crowd ? 2 : 0,
        .second_parent = crowd ? seed : NULL,
        .second_summary_json = crowd ? summary : NULL,
        .prompt_json = prompt,
        .prompt_id = 1,
        .n_children = 1,
    };
    sent s = send_request(task, device, &req, NULL);
    free(summary);
    free(prompt);
    kevo_task_free(task);
    return s;
}

/* The sgemm seed with its H100 evaluation: the prompt a search sends. Its
 * size is measured on the request the old prompt was measured on (36455
 * bytes, 46% of them JSON: a second parent and two inspirations, each the
 * same elite) and on the parent alone. */
static void test_sgemm(void)
{
    char *device = h100_device(KEVO_PEAK_FP32);
    sent s = sgemm_request(device, true);
    size_t total = strlen(s.system) + strlen(s.user);
    diag("sgemm prompt: system %zu + user %zu = %zu bytes, %zu of them JSON",
         strlen(s.system), strlen(s.user), total,
         json_bytes(s.user) + json_bytes(s.system));
    dump("sgemm.txt", &s);
    no_json(&s, "sgemm");
    has_device(&s, "sgemm");
    like_str(s.system,
             "NVRTC compiles the source for sm_90a, the "
             "architecture-specific target of this device",
             "sgemm: the target, from the host's device");
    like_str(s.system, "8. Shapes you are not shown are checked too",
             "sgemm: the rule of the shapes not shown");
    /* sgemm's held-out shapes: m=1000, n=1500, k=777 and m=33, n=4097,
     * k=65. */
    static const char *const hidden[] = {"777", "1500", "4097", "m=33"};
    for (size_t i = 0; i < sizeof hidden / sizeof *hidden; i++)
        ok(!strstr(s.system, hidden[i]) && !strstr(s.user, hidden[i]),
           "sgemm: no held-out dim (%s)", hidden[i]);
    ok(total < 36455 / 2, "sgemm: under half the old prompt's size (%zu)",
       total);
    like_str(s.user, "# Current kernel (fitness 0.1726)\n",
             "the parent's fitness, from the summary's fitness object");
    like_str(s.user, "Parameter values: BM=64, BN=64, BK=8, TM=4, TN=4\n",
             "its parameters, in declaration order");
    like_str(s.user,
             "Its evaluation: correct on every shape; fitness 0.1726 "
             "(geometric mean of the efficiencies)\n",
             "how it ended");
    like_str(s.user,
             "- m=4096, n=4096, k=4096: 8.045 ms, efficiency 0.265, "
             "compute-bound, 25.0 GB/s, 17083 GFLOP/s, DRAM traffic 674.5 "
             "MB against the cost model's 201.3 MB (3.35x), achieved "
             "occupancy 0.49\n",
             "a shape: dims in the task's order, time, efficiency, bound, "
             "rates, DRAM bytes against the model");
    like_str(s.user, "- m=2048, n=512, k=1536: 362.7 us, efficiency 0.138",
             "the third shape");
    like_str(s.user,
             "- kernel sgemm: grid 64x64x1, block 256x1x1; 58 registers, no "
             "spills, shared memory 4 KiB, occupancy 0.50; PTX: 64 shared "
             "loads, 14 shared stores; no vector loads, shuffles, async "
             "copies (cp.async) or mma\n",
             "the kernel: resources and PTX features");
    ok(!strstr(s.user, "ptxas info"), "ptxas's info lines left out");
    ok(!strstr(s.user, "kevo-fitness-stage") && !strstr(s.user, "seconds"),
       "the summary's machinery left out");
    like_str(s.user, "\n# Second parent (fitness 0.1726)\n",
             "the second parent with its fitness");
    like_str(s.user, "## Variant 1 (fitness 0.1726)\n",
             "an inspiration with its fitness");
    like_str(s.user, "Its source is the current kernel's.",
             "a variant's source is not repeated when it is the parent's");
    like_str(s.user,
             "per shape, in the order above: efficiency 0.265 (8.045 ms), "
             "efficiency 0.141 (236.8 us), efficiency 0.138 (362.7 us)",
             "an inspiration in brief");
    like_str(s.user, "\n## Strategy\nRestructure the algorithm",
             "the meta-prompt's sections");
    sent_free(&s);

    s = sgemm_request(device, false);
    total = strlen(s.system) + strlen(s.user);
    diag("sgemm prompt, the parent alone: system %zu + user %zu = %zu bytes "
         "(old: 13108)",
         strlen(s.system), strlen(s.user), total);
    dump("sgemm-parent.txt", &s);
    no_json(&s, "sgemm, the parent alone");
    has_device(&s, "sgemm, the parent alone");
    sent_free(&s);

    s = sgemm_request(NULL, false);
    ok(!strstr(s.user, "## Device"), "no device section without a device");
    sent_free(&s);
    free(device);
}

/* A kernel NVRTC refused: its errors and warnings with the source lines
 * NVRTC quotes, nothing else of the log. */
static void test_compile_error(void)
{
    kevo_task *task = load_task("sgemm");
    char *summary = slurp("tests/data/eval", "sgemm_compile_error.json");
    json_t *root = json_loads(summary, 0, NULL);
    const char *src = json_string_value(
        json_object_get(json_object_get(root, "candidate"), "source"));
    kevo_candidate *cand = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (!src || kevo_candidate_new_for_task(task, src, "sgemm_variant.cu",
                                            &cand, &err) != KEVO_OK)
        bail_out("sgemm_compile_error.json: %s", err.text);
    char *device = h100_device(KEVO_PEAK_FP32);
    kevo_operator_request req = {
        .parent = cand,
        .parent_summary_json = summary,
        .n_children = 1,
    };
    sent s = send_request(task, device, &req, ", \"reply_format\": \"whole\"");
    dump("sgemm-compile-error.txt", &s);
    no_json(&s, "compile error");
    has_device(&s, "compile error");
    like_str(s.user,
             "Its evaluation: FAILED (compile_error): compile error: "
             "sgemm_variant.cu(47): error: identifier \"TILE_K\" is "
             "undefined\n",
             "the verdict and its reason");
    like_str(s.user,
             "Compile log, errors and warnings:\n"
             "sgemm_variant.cu(47): error: identifier \"TILE_K\" is "
             "undefined\n"
             "      for (int k0 = 0; k0 < k; k0 += TILE_K) {\n"
             "sgemm_variant.cu(57): error: a value of type \"const float *\" "
             "cannot be used to initialize an entity of type \"const float4 "
             "*\"\n"
             "              const float4 *B4 = B;\n"
             "sgemm_variant.cu(46): warning #177-D: variable \"unused_tail\" "
             "was declared but never referenced\n"
             "      float4 unused_tail;\n",
             "errors first, then warnings, each with its source line");
    ok(!strstr(s.user, "errors detected") && !strstr(s.user, "Remark") &&
           !strstr(s.user, "  ^"),
       "NVRTC's count, remark and column markers left out");
    ok(!strstr(s.user, "# Current kernel (fitness"),
       "no fitness for a kernel that did not compile");
    like_str(s.user, "Reply with the complete new source in one fenced block",
             "the reply format the config asks for");
    ok(!strstr(s.user, "<<<<<<< SEARCH"), "and no other");
    sent_free(&s);
    free(device);
    kevo_candidate_free(cand);
    json_decref(root);
    free(summary);
    kevo_task_free(task);
}

/* A wrong result, as the library makes it from the GPU worker's message. */
static void test_wrong(void)
{
    kevo_task *task = load_task("saxpy");
    char *summary = saxpy_wrong_summary(task);
    char *device = h100_device(KEVO_PEAK_FP32);
    kevo_operator_request req = {
        .parent = kevo_task_seed(task),
        .parent_summary_json = summary,
        .n_children = 1,
    };
    sent s = send_request(task, device, &req, ", \"reply_format\": \"edits\"");
    dump("saxpy-wrong.txt", &s);
    no_json(&s, "wrong");
    has_device(&s, "wrong");
    like_str(s.user,
             "Its evaluation: FAILED (wrong): shape 1 (n=4194304): "
             "z[4194303] = nan, want 0.25 (1 bad element)\n",
             "the verdict and the worker's reason");
    like_str(s.user,
             "- n=4194304: WRONG: z[4194303] = nan (or never written), want "
             "0.25 (1 bad element)\n",
             "the failing shape names its worst element");
    like_str(s.user, "- n=16777216: 80.0 us, efficiency ",
             "the shape before it keeps its time and efficiency");
    like_str(s.user, "memory-bound", "and its bound");
    like_str(s.user, "- kernel saxpy: ", "the kernel's line");
    ok(!strstr(s.user, "paired") && !strstr(s.user, "spread") &&
           !strstr(s.user, "l2_explained"),
       "the figures only the machinery needs are left out");
    like_str(s.user, "<<<<<<< SEARCH", "the edit format the config asks for");
    sent_free(&s);
    free(device);
    free(summary);
    kevo_task_free(task);
}

/* The saxpy seed as kevo eval measured it on an H200
 * (h200_saxpy_seed_eval.json: its training result, and the device's
 * ceilings with the launch latency; the nominal device's properties stand
 * in for the H200's, which the file does not hold): the held-out half of
 * the file never reaches the prompt. */
static void test_h200(void)
{
    kevo_task *task = load_task("saxpy");
    char *text = slurp("tests/data/eval", "h200_saxpy_seed_eval.json");
    json_t *root = json_loads(text, 0, NULL);
    json_t *train = json_object_get(root, "train");
    json_t *c = json_object_get(train, "ceilings");
    char *summary = json_dumps(train, JSON_PRESERVE_ORDER);
    kevo_ceilings ceil = {
        json_number_value(json_object_get(c, "bandwidth")),
        {json_number_value(json_object_get(c, "peak_value")), 0, 0, 0, 0},
        json_number_value(json_object_get(c, "launch"))};
    kevo_vars *props = kevo_vars_new();
    if (!summary || !props || kevo__devprops_nominal(props) != KEVO_OK)
        bail_out("h200_saxpy_seed_eval.json: no training result");
    char *device =
        kevo__devprops_json(json_string_value(json_object_get(root, "device")),
                            props, &ceil, KEVO_PEAK_FP32);
    kevo_operator_request req = {
        .parent = kevo_task_seed(task),
        .parent_summary_json = summary,
        .n_children = 1,
    };
    sent s = send_request(task, device, &req, NULL);
    dump("saxpy-h200.txt", &s);
    no_json(&s, "h200");
    like_str(s.user, "\n## Device\nNVIDIA H200\n", "the device's name");
    like_str(s.user,
             "- measured: memory bandwidth 4212 GB/s (bytes read plus "
             "written), fp32 peak 64.4 TFLOP/s, launch latency 0.6 us",
             "its ceilings with the launch latency");
    like_str(s.user, "- ridge point: 15.3 flop/byte", "its ridge point");
    like_str(s.user, "# Current kernel (fitness 0.7578)", "the fitness");
    like_str(s.user, "- n=1000000: 4.5 us, efficiency 0.636, memory-bound",
             "the smallest shape");
    ok(!strstr(s.user, "held") && !strstr(s.user, "gate"),
       "nothing of the held-out evaluation");
    sent_free(&s);
    free(device);
    kevo_vars_free(props);
    free(summary);
    json_decref(root);
    free(text);
    kevo_task_free(task);
}

/* ---- the target, as the evaluator compiles for it ----------------------- */

/* The system text for a device of compute capability cc (the nominal
 * device's other properties), or for no device when cc is 0. */
static char *target_system(int64_t cc)
{
    kevo_vars *props = kevo_vars_new();
    if (!props || kevo__devprops_nominal(props) != KEVO_OK ||
        kevo_vars_set(props, "cc", cc) != KEVO_OK)
        bail_out("out of memory");
    kevo_ceilings c = h100_ceilings();
    char *device =
        cc ? kevo__devprops_json("GPU", props, &c, KEVO_PEAK_FP32) : NULL;
    llm_prompt_input in = {.task_name = "t",
                           .device_json = device,
                           .include_rule = rule,
                           .format = LLM_FORMAT_EITHER};
    char *system = NULL, *user = NULL, err[256];
    if ((cc && !device) ||
        !kevo__llm_prompt_build(&in, &system, &user, err, sizeof err))
        bail_out("prompt for cc %d: %s", (int)cc, err);
    free(user);
    free(device);
    kevo_vars_free(props);
    return system;
}

/* Every option the compile pool gives NVRTC for arch (with a parameter
 * BLOCK) is in the system text, the parameter as -DNAME=VALUE. */
static void has_options(const char *system, const char *arch)
{
    kevo_vars *p = kevo_vars_new();
    kevo_error err = KEVO__ERROR_INIT;
    size_t n = 0;
    if (!p || kevo_vars_set(p, "BLOCK", 128) != KEVO_OK)
        bail_out("out of memory");
    char **o = kevo__compile_options(arch, p, &n, &err);
    if (!o)
        bail_out("%s", err.text);
    for (size_t i = 0; i < n; i++) {
        const char *want =
            strcmp(o[i], "-DBLOCK=128") == 0 ? "-DNAME=VALUE" : o[i];
        like_str(system, want, "%s: the prompt names NVRTC's option %s", arch,
                 o[i]);
    }
    kevo__compile_options_free(o);
    kevo_vars_free(p);
}

static void test_target(void)
{
    char arch[KEVO__ARCH_SIZE];
    char *system = target_system(90);
    is_str(kevo__devprops_arch(90, arch, sizeof arch), "sm_90a",
           "Hopper: kevo compiles for sm_90a");
    like_str(system,
             "NVRTC compiles the source for sm_90a, the "
             "architecture-specific target of this device (compute "
             "capability 9.0), with exactly these options: -arch=sm_90a "
             "-std=c++17",
             "Hopper: the prompt names sm_90a and the options");
    has_options(system, "sm_90a");
    like_str(system, "no #if on __CUDA_ARCH__ and no fallback",
             "Hopper: no fallback for other architectures");
    like_str(system, "warpgroup MMA (wgmma.mma_async",
             "Hopper: sm_90a has wgmma");
    like_str(system, "and setmaxnreg", "Hopper: and setmaxnreg");
    like_str(system, "__cluster_dims__", "Hopper: clusters, and how");
    like_str(system, "cp.async.bulk, completing on an mbarrier",
             "Hopper: bulk copies");
    like_str(system,
             "through a tensor map that kevo encodes from a tensormap "
             "line",
             "Hopper: tensor maps from kevo");
    like_str(system, "tensormap tmA a bf16 dims(k, m) box(64, 128)",
             "the contract's tensormap example");
    ok(!strstr(system, "not available"), "Hopper: nothing said missing");
    free(system);

    system = target_system(80);
    is_str(kevo__devprops_arch(80, arch, sizeof arch), "sm_80",
           "Ampere: kevo compiles for sm_80");
    like_str(system,
             "NVRTC compiles the source for sm_80, the target of this "
             "device (compute capability 8.0, which has no "
             "architecture-specific target)",
             "Ampere: the prompt names sm_80");
    has_options(system, "sm_80");
    like_str(system,
             "wgmma, setmaxnreg, thread-block clusters and bulk or tensor "
             "copies (cp.async.bulk) are not available on sm_80",
             "Ampere: wgmma and the rest are not available");
    ok(!strstr(system, "sm_90a") && !strstr(system, "warpgroup MMA") &&
           !strstr(system, "__cluster_dims__"),
       "Ampere: no claim of wgmma, sm_90a or clusters");
    like_str(system, "mma.sync", "Ampere: its tensor cores");
    free(system);

    system = target_system(100);
    like_str(system,
             "NVRTC compiles the source for sm_100a, the "
             "architecture-specific target",
             "Blackwell: sm_100a");
    like_str(system, "the tcgen05 instructions", "Blackwell: tcgen05");
    like_str(system, "This device has no wgmma, which only sm_90a has",
             "Blackwell: no wgmma");
    ok(!strstr(system, "warpgroup MMA"), "Blackwell: no claim of wgmma");
    free(system);

    system = target_system(120);
    like_str(system,
             "sm_120a has what only the architecture-specific "
             "target has: setmaxnreg;",
             "sm_120a: setmaxnreg");
    like_str(system, "This device has no wgmma (sm_90a's) or tcgen05",
             "sm_120a: neither wgmma nor tcgen05");
    free(system);

    system = target_system(0);
    like_str(system,
             "NVRTC compiles the source for the device's architecture with "
             "these options: -arch (the device's) -std=c++17",
             "no device: its architecture in general words");
    ok(!strstr(system, "wgmma"), "no device: no claim of wgmma");
    free(system);
}

/* ---- the rules, checked against the code that enforces them -------------
 */

static kevo_status parse_blocks(const char *source)
{
    kevo_blocks b;
    kevo_error err = KEVO__ERROR_INIT;
    kevo_status rc = kevo__blocks_parse(source, "rule.cu", &b, &err);
    if (rc == KEVO_OK)
        kevo__blocks_free(&b);
    return rc;
}

/* A one-launch source whose launch line is line. */
static kevo_status parse_launch(const char *line)
{
    char *src = kevo__asprintf("/* kevo:launch\n *   %s\n */\n"
                               "__global__ void k(float *x, int n) {}\n",
                               line);
    kevo_status rc = parse_blocks(src);
    free(src);
    return rc;
}

static void test_rules(void)
{
    llm_prompt_input in = {
        .task_name = "t", .include_rule = rule, .format = LLM_FORMAT_EITHER};
    char *system = NULL, *user = NULL, err[256];
    if (!kevo__llm_prompt_build(&in, &system, &user, err, sizeof err))
        bail_out("%s", err);

    /* Headers: the include scan's own list, as the host gives it. */
    like_str(system, "#include only " KEVO__INCLUDE_ALLOWED_TEXT,
             "rule: the headers kevo lets through");
    like_str(system, "<cuda/std/cstdint>", "rule: where fixed widths are");
    static const char *const refused[] = {"cuda_runtime.h", "cstdio",
                                          "stdint.h"};
    for (size_t i = 0; i < 3; i++) {
        char *src = kevo__asprintf("#include <%s>\n", refused[i]);
        is_int(kevo__include_scan(src, strlen(src), "rule.cu", NULL),
               KEVO_EINVALID, "rule: <%s> is refused, as the prompt says",
               refused[i]);
        free(src);
    }
    const char *std = "#include <cuda/std/cstdint>\n";
    is_int(kevo__include_scan(std, strlen(std), "rule.cu", NULL), KEVO_OK,
           "rule: <cuda/std/cstdint> is let through");

    /* The shapes not shown: correct there, and no slower than the seed
     * (the held-out gate). */
    like_str(system,
             "8. Shapes you are not shown are checked too, on fresh inputs: "
             "there the kernel must be correct, and no slower than the "
             "task's seed kernel beyond a small margin",
             "rule: shapes not shown are checked for correctness and speed");

    /* The launch block. */
    like_str(system, "   KERNEL<<<GRID, BLOCK[, SMEM]>>>(ARG, ...)\n",
             "rule: the launch form");
    kevo_buf props = {0};
    for (size_t i = 0; kevo__devprop_name(i); i++)
        kevo__buf_printf(&props, "%s%s",
                         i == 0                      ? ""
                         : kevo__devprop_name(i + 1) ? ", "
                                                     : " and ",
                         kevo__devprop_name(i));
    like_str(system, props.data, "rule: every device property, by name");
    kevo__buf_free(&props);
    static const struct {
        const char *line, *form;
    } bad[] = {
        {"k<<<ceil_div(n, 256), 256, sizeof(float) * 256>>>(x, n)", "sizeof"},
        {"k<<<std::min(n, 1024), 256>>>(x, n)", "std::min"},
        {"k<<<ceil_div(n, 256), 256>>>(x, (size_t)n)", "(size_t)"},
        {"k<<<ceil_div(n, 256), 256>>>(x, (float)n)", "(float)"},
        {"k<<<ceil_div(n, 256), 256, 0, stream>>>(x, n)", "no fourth launch "
                                                          "item"},
        {"k<128><<<ceil_div(n, 128), 128>>>(x, n)", "kernel<128><<<...>>> is "
                                                    "refused"},
        {"k<<<n / 2.5, 256>>>(x, n)", "no floating-point number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        like_str(system, bad[i].form, "rule: the prompt forbids %s",
                 bad[i].form);
        ok(parse_launch(bad[i].line) != KEVO_OK, "rule: and kevo refuses %s",
           bad[i].line);
    }
    static const char *const good[] = {
        "k<<<dim3(ceil_div(n, 256), 1, 1), dim3(256)>>>(x, n)",
        "k<<<max(1, min(n / 256, 4 * sm_count)), 256, 48 * 1024>>>(x, (i64)n)",
        "k<<<n > 4096 ? round_up(n, 8) / 8 : 1, warp_size * 8>>>(x, (u32)(n "
        "% 7))",
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        is_int(parse_launch(good[i]), KEVO_OK,
               "rule: a launch the prompt allows parses: %s", good[i]);

    /* The example of both blocks parses, with its scratch buffer and its
     * parameters. */
    const char *ex = strstr(system, "/* kevo:launch\n");
    ok(ex != NULL, "rule: an example of both blocks");
    char *src = kevo__asprintf(
        "%s\n__global__ void reduce_partial(const float *x, float *partial, "
        "int n) {}\n__global__ void reduce_final(const float *partial, float "
        "*out, int n) {}\n",
        ex ? ex : "");
    kevo_blocks b;
    kevo_error e = KEVO__ERROR_INIT;
    ok(kevo__blocks_parse(src, "example.cu", &b, &e) == KEVO_OK,
       "rule: the example parses (%s)", e.text);
    is_uint(b.nlaunches, 2, "rule: the example has two launches");
    is_uint(b.nscratch, 1, "rule: and a scratch buffer");
    is_uint(kevo_paramspace_count(b.params), 2, "rule: and two parameters");
    kevo__blocks_free(&b);
    free(src);

    /* Scratch buffers: every element type, and only those. */
    like_str(system,
             "'scratch NAME TYPE[COUNT]' in the kevo:launch block (TYPE one "
             "of f32, f64, f16, bf16, i8, u8, i16, u16, i32, u32, i64, u64",
             "rule: scratch buffers");
    for (int t = 0; t <= KEVO_DTYPE_U64; t++) {
        char *line = kevo__asprintf("scratch tmp %s[n] zero",
                                    kevo_dtype_name((kevo_dtype)t));
        char *blk = kevo__asprintf(
            "/* kevo:launch\n *   %s\n *   k<<<1, 32>>>(tmp, n)\n */\n", line);
        is_int(parse_blocks(blk), KEVO_OK, "rule: %s parses", line);
        ok(strstr(system, kevo_dtype_name((kevo_dtype)t)) != NULL,
           "rule: the prompt names %s", kevo_dtype_name((kevo_dtype)t));
        free(line);
        free(blk);
    }
    like_str(system, "'zero' at the end of the line zero-fills it",
             "rule: zero-filled scratch");

    /* Parameters. */
    like_str(system, "Each reaches the code as a -D macro (-DNAME=128)",
             "rule: parameters arrive as -D macros");
    like_str(system, "never #define a parameter in the source",
             "rule: and are never #defined");
    static const char *const forms[] = {"NAME in {64, 128, 256} = 128",
                                        "NAME in 1..8 step 1 = 4",
                                        "NAME in pow2(16..256) = 64"};
    for (size_t i = 0; i < 3; i++) {
        like_str(system, forms[i], "rule: the parameter form '%s'", forms[i]);
        char *name = kevo__asprintf("%s", forms[i]);
        memcpy(name, "TILE", 4);
        char *blk = kevo__asprintf("// kevo:param\n//   %s\n"
                                   "/* kevo:launch k<<<1, TILE>>>() */\n",
                                   name);
        is_int(parse_blocks(blk), KEVO_OK, "rule: '%s' parses", name);
        free(name);
        free(blk);
    }

    /* Shared memory, names, host code, the reply. */
    like_str(system,
             "static __shared__ arrays may total at most 48 KiB per block",
             "rule: the static shared-memory limit");
    like_str(system,
             "kevo opts the kernel in to dynamic shared memory above 48 KiB "
             "itself, up to max_smem_per_block",
             "rule: the opt-in is kevo's");
    like_str(system, "(extern \"C\" or not)", "rule: extern \"C\" optional");
    like_str(system, "No host code", "rule: device code only");
    like_str(system, "a buffer as a pointer to its element type",
             "rule: how arguments reach the kernel");
    like_str(user, "Reply in one of two forms.", "the reply format");
    free(system);
    free(user);
}

/* ---- summaries of other forms --------------------------------------------
 */

/* A host of its own may give summaries of another form (flat keys, a
 * number for fitness): they are shown key by key, still without JSON, and
 * held-out keys never appear. */
static void test_other_forms(void)
{
    kevo_buf log = {0};
    kevo__buf_puts(&log, "info: compiling\n");
    for (int i = 0; i < 50; i++)
        kevo__buf_printf(&log, "kernel.cu(%d): warning #%d: unused\n", i, i);
    kevo__buf_puts(&log, "kernel.cu(99): error: identifier undefined\n"
                         "note: nothing\n");
    json_t *sum = json_pack(
        "{s:f, s:s, s:[{s:{s:i}, s:f, s:s, s:I, s:I}], s:s, s:{s:f}, s:[i,i]}",
        "fitness", 0.42, "verdict", "ok", "shapes", "dims", "n", 4096,
        "efficiency", 0.42, "bound", "memory", "dram_bytes", (json_int_t)60000,
        "model_bytes", (json_int_t)49152, "compile_log", log.data, "held_out",
        "fitness", 0.1, "tiles", 4, 8);
    char *sum_text = json_dumps(sum, JSON_PRESERVE_ORDER);
    json_decref(sum);
    kevo__buf_free(&log);

    const kevo_operator_text sections[] = {{"strategy", "Use float4 loads."},
                                           {"pitfalls", "Mind the tail."}};
    llm_prompt_candidate insp[2] = {
        {"__global__ void other1() {}\n", "{\"fitness\": 0.61, \"cell\": 3}",
         NULL, NULL},
        {"__global__ void other2() {}\n", "{\"fitness\": 0.33}", NULL, NULL},
    };
    llm_prompt_input in = {
        .task_name = "saxpy",
        .task_description = "z = a x + y",
        .task_args = "x: f32 buffer, in, count n\nn: i32 scalar = n\n",
        .task_dims = "{\"dims\": [\"n\"], \"shapes\": [{\"n\": 4096}]}",
        .task_cost = "bytes: 12*n\nflops: 2*n\npeak: fp32\n",
        .device_json = "{\"name\": \"H100\", \"dram_gbps\": 3350, "
                       "\"held_out_peak\": 7}",
        .parent = {"/* kevo:launch\n * k<<<1, 1>>>()\n */\n__global__ void "
                   "k() {}\n",
                   sum_text, "{\"BLOCK\": 256}",
                   "{\"params\": [{\"name\": \"BLOCK\", \"values\": [128, "
                   "256], \"default\": 256}], \"constraints\": [\"BLOCK <= "
                   "n\"]}"},
        .inspirations = insp,
        .n_inspirations = 2,
        .target_cell_json = "{\"memory\": \"vector\", \"block_size\": 512}",
        .sections = sections,
        .n_sections = 2,
        .include_rule = rule,
        .format = LLM_FORMAT_EITHER,
        .max_log_lines = 5,
        .max_inspirations = 1,
    };
    char *system = NULL, *user = NULL, err[256];
    ok(kevo__llm_prompt_build(&in, &system, &user, err, sizeof(err)),
       "the prompt builds");
    sent s = {system, user};
    no_json(&s, "other forms");
    like_str(user, "# Task: saxpy", "task name");
    like_str(user, "z = a x + y", "task description");
    like_str(user, "x: f32 buffer, in, count n", "argument list");
    like_str(user, "- n=4096\n", "training shapes");
    like_str(user, "bytes: 12*n", "cost model");
    like_str(user, "## Device\nH100\n- dram_gbps: 3350\n",
             "a device of another form, key by key");
    like_str(user, "__global__ void k() {}", "parent source");
    like_str(user, "Parameter values: BLOCK=256\n", "assignment");
    like_str(user,
             "Tunable parameters (declared by the task, not in the source): "
             "BLOCK in {128, 256} = 256; require BLOCK <= n\n",
             "a parameter space the source does not declare");
    like_str(user,
             "- n=4096: efficiency 0.420, memory-bound, dram_bytes 60000, "
             "model_bytes 49152\n",
             "a shape of another form");
    like_str(user, "- tiles: 4, 8\n", "an unknown key, without JSON");
    like_str(user, "kernel.cu(99): error: identifier undefined",
             "compile error kept");
    like_str(user, "warning #3: unused", "first warnings kept");
    ok(!strstr(user, "warning #4:"),
       "warnings past the room errors leave left out");
    like_str(user, "(46 more error and warning lines left out)",
             "the count of lines left out");
    ok(!strstr(user, "info: compiling") && !strstr(user, "note: nothing"),
       "other log lines left out");
    ok(!strstr(user, "held_out") && !strstr(user, "0.1\n") &&
           !strstr(user, "7\n"),
       "held-out keys never appear");
    like_str(user, "## Variant 1 (fitness 0.61)\n", "inspiration with score");
    like_str(user, "Its evaluation: fitness 0.61; cell 3\n",
             "an inspiration's summary of another form, in brief");
    ok(!strstr(user, "other2"), "inspirations capped at max_inspirations");
    like_str(user, "block_size: 512", "target cell");
    like_str(user, "## Strategy\nUse float4 loads.", "meta-prompt section");
    like_str(user, "## Pitfalls\nMind the tail.", "second section");
    like_str(user, "<<<<<<< SEARCH", "edit format described");
    like_str(user, "```cuda", "fence format described");
    free(system);
    free(user);

    in.format = LLM_FORMAT_WHOLE;
    ok(kevo__llm_prompt_build(&in, &system, &user, err, sizeof(err)),
       "the whole-kernel prompt builds");
    ok(!strstr(user, "<<<<<<< SEARCH"), "no edit format when whole asked");
    free(system);
    free(user);

    free(sum_text);

    char *d = kevo__llm_distill_log("ok\nall good\n", 10);
    is_str(d, "", "a clean log distils to nothing");
    free(d);
    d = kevo__llm_eval_text(NULL, NULL, 5);
    is_str(d, "", "no summary, no text");
    free(d);
}

/* ---- variants beside the parent -------------------------------------------
 */

/* The summary the search keeps for cand when the GPU worker answers with
 * tests/data/eval/FILE (a worker message for the sgemm seed) and NVRTC with
 * the seed's PTX and log. */
static char *sgemm_summary(const kevo_task *task, const kevo_candidate *cand,
                           const char *file)
{
    char *msg_text = slurp("tests/data/eval", file);
    char *ptx = slurp("tests/data/ptx", "sgemm_seed.ptx");
    char *log = slurp("tests/data/ptx", "sgemm_seed.log");
    json_t *msg = NULL;
    kevo_error err = KEVO__ERROR_INIT;
    if (kevo__json_parse(msg_text, file, &msg, &err) != KEVO_OK)
        bail_out("%s", err.text);
    const kevo_ceilings ceilings = h100_ceilings();
    kevo_compile_info info = {true, NULL, log, ptx, strlen(ptx), 0.1, false};
    kevo_eval_context ctx = {&ceilings, NULL, NULL, 0};
    kevo_eval_result *res = NULL;
    char *json = NULL;
    if (kevo__eval_result_new(task, cand, KEVO_SHAPES_TRAIN, msg, &info, &ctx,
                              &res, &err) != KEVO_OK ||
        kevo_eval_result_to_json(res, &json, &err) != KEVO_OK)
        bail_out("%s: %s", file, err.text);
    kevo_eval_result_free(res);
    json_decref(msg);
    free(msg_text);
    free(ptx);
    free(log);
    return json;
}

static void test_variants(void)
{
    kevo_task *task = load_task("sgemm");
    const kevo_candidate *seed = kevo_task_seed(task);
    char *h100 = slurp("tests/data/eval", "h100_sgemm_result.json");
    char *other = sgemm_summary(task, seed, "sgemm_train_ok.json");
    char *device = h100_device(KEVO_PEAK_FP32);
    kevo_buf src = {0};
    kevo__buf_printf(&src, "// a variant\n%s", kevo_candidate_source(seed));
    llm_prompt_candidate insp[1] = {
        {src.data, other,
         "{\"BM\": 128, \"BN\": 64, \"BK\": 8, \"TM\": 8, "
         "\"TN\": 4}",
         NULL},
    };
    llm_prompt_candidate second = {src.data, other, NULL, NULL};
    llm_prompt_input in = {
        .task_name = "sgemm",
        .device_json = device,
        .parent = {kevo_candidate_source(seed), h100,
                   "{\"BM\": 64, \"BN\": 64, \"BK\": 8, \"TM\": 4, \"TN\": 4}",
                   NULL},
        .second_parent = &second,
        .inspirations = insp,
        .n_inspirations = 1,
        .include_rule = rule,
        .format = LLM_FORMAT_WHOLE,
        .max_log_lines = 10,
        .max_inspirations = 4,
    };
    char *system = NULL, *user = NULL, err[256];
    ok(kevo__llm_prompt_build(&in, &system, &user, err, sizeof(err)),
       "a prompt with a second parent and a variant builds");
    sent s = {system, user};
    dump("sgemm-variants.txt", &s);
    no_json(&s, "variants");
    like_str(user, "\n# Second parent (fitness ", "the second parent's title");
    like_str(user, "Write a crossover of the two",
             "a crossover is asked for when there is a second parent");
    like_str(user, "## Variant 1 (fitness ", "the variant's fitness");
    like_str(user,
             "Differs from the current kernel: BM=128 (current 64); TM=8 "
             "(current 4)",
             "what sets the variant apart: its parameters");
    const char *v1 = strstr(user, "## Variant 1");
    ok(v1 && strstr(v1, "```cuda\n// a variant\n"),
       "a variant with its own source shows it");
    ok(v1 && strstr(v1, "Its evaluation: correct on every shape; fitness ") &&
           strstr(v1, "per shape, in the order above: efficiency "),
       "and its evaluation in brief");
    free(system);
    free(user);

    in.second_parent = NULL;
    ok(kevo__llm_prompt_build(&in, &system, &user, err, sizeof(err)),
       "a prompt without a second parent builds");
    ok(!strstr(user, "crossover") && !strstr(user, "Second parent"),
       "no crossover is asked for without a second parent");
    free(system);
    free(user);
    kevo__buf_free(&src);
    free(device);
    free(other);
    free(h100);
    kevo_task_free(task);
}

/* The revision prompt shows its children's real evaluations in words too:
 * its only JSON is the block of sections the model must echo. */
static void test_revision(void)
{
    const kevo_operator_text tile[] = {{"strategy", "Tile."}};
    kevo_prompt_record record = {.size = sizeof record,
                                 .uses = 4,
                                 .children = 4,
                                 .entered = 1,
                                 .beat_parent = 1,
                                 .best_fitness = 0.17,
                                 .worst_fitness = 0,
                                 .mean = NAN};
    kevo_task *task = load_task("sgemm");
    char *best = slurp("tests/data/eval", "h100_sgemm_result.json");
    char *worst = slurp("tests/data/eval", "sgemm_compile_error.json");
    llm_revision_input in = {
        .task_name = "sgemm",
        .prompt_name = "tiles",
        .sections = tile,
        .n_sections = 1,
        .record = &record,
        .best = {kevo_candidate_source(kevo_task_seed(task)), best, NULL, NULL},
        .worst = {"// broken\n", worst, NULL, NULL},
        .max_log_lines = 4,
    };
    char *system = NULL, *user = NULL, err[256];
    ok(kevo__llm_revision_prompt_build(&in, &system, &user, err, sizeof err),
       "the revision prompt builds");
    sent s = {system, user};
    dump("revision.txt", &s);
    no_json(&s, "revision");
    like_str(user, "Its evaluation: correct on every shape; fitness 0.1726",
             "the best child's evaluation in words");
    like_str(user, "Its evaluation: FAILED (compile_error)",
             "the worst child's failure");
    like_str(user, "```json\n{\n  \"strategy\": \"Tile.\"\n}\n```",
             "the sections, once, as JSON to echo");
    free(system);
    free(user);
    free(best);
    free(worst);
    kevo_task_free(task);
}

int main(void)
{
    plugin_host host;
    if (plugin_host_open(&host) != KEVO_OK)
        bail_out("no operator host");
    rule = host.api->include_rule(host.ctx);
    const char *builddir = getenv("KEVO_BUILDDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/operators/.libs",
             builddir && *builddir ? builddir : ".");
    setenv(KEVO_OPERATOR_PATH_ENV, path, 1);
    setenv(KEY_ENV, KEY, 1);
    srv = loopback_start();
    if (!srv)
        bail_out("the loopback server did not start");
    test_sgemm();
    test_compile_error();
    test_wrong();
    test_h200();
    test_rules();
    test_target();
    test_other_forms();
    test_variants();
    test_revision();
    loopback_stop(srv);
    plugin_host_close(&host);
    return done_testing();
}

/*
 * test-llm-repair.c: the llm operator's repair turns (operator ABI 1.2)
 * against a real HTTP server on 127.0.0.1 (tests/loopback-server.c). A
 * model's reply whose kernel does not compile (a real NVRTC error,
 * tests/data/eval/saxpy_compile_error.json) goes back to the model in the
 * same conversation: the system text, the user text, the model's own reply
 * and a turn with kevo's diagnostic, in the OpenAI and the Anthropic
 * formats; the repaired kernel becomes a child with the failed child's
 * lineage. A reply whose launch block calls std::min is refused by the
 * host with the block parser's message and repaired the same way. A repair
 * whose conversation the operator no longer holds starts a new one. Child
 * prompts list the parent's recent failed attempts; revision prompts the
 * prompt's failure kinds and failed children. The replies are written as
 * models write them (tests/data/llm-repair). The memory of conversations
 * stays within its bounds.
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kevo.h>

#include "buf.h"
#include "eval/eval_private.h"
#include "loopback-server.h"
#include "repair.h"
#include "tap.h"

static loopback *srv;
static kevo_operator_host *host;
static kevo_task *task;
static kevo_candidate *parent;
static kevo_error err;

static kevo_error *fresh(void)
{
    kevo_error_init(&err);
    return &err;
}

static char *slurp(const char *dir, const char *name)
{
    char *path = kevo__asprintf("%s/%s/%s", tap_srcdir(), dir, name);
    char *text = NULL;
    size_t len;
    if (kevo__read_file(path, true, &text, &len, fresh()) != KEVO_OK)
        bail_out("%s", err.text);
    free(path);
    return text;
}

static kevo_operator *make_op(const char *name, const char *api)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"models\": [{\"name\": \"m\", \"api\": \"%s\", \"model\": "
             "\"m-1\", \"base_url\": \"%s%s\", \"timeout_s\": 10}], "
             "\"max_retries\": 0}",
             api, loopback_url(srv), strcmp(api, "openai") == 0 ? "/v1" : "");
    kevo_operator *op = NULL;
    if (kevo_operator_host_add(host, "llm", name, json, &op, fresh()) !=
        KEVO_OK)
        bail_out("kevo_operator_host_add(%s): %s", name, err.text);
    return op;
}

/* Polls until request id ends; its result. */
static kevo_operator_result *wait_for(uint64_t id)
{
    for (int i = 0; i < 400; i++) {
        kevo_operator_host_poll(host, 50, NULL, NULL);
        kevo_operator_result *res = NULL;
        if (kevo_operator_host_next_result(host, &res) == KEVO_OK) {
            if (kevo_operator_result_id(res) == id)
                return res;
            kevo_operator_result_free(res);
        }
    }
    bail_out("request %llu did not end", (unsigned long long)id);
    return NULL;
}

static uint64_t propose(kevo_operator *op, const char *sections,
                        const kevo_operator_failure *f, size_t nf)
{
    kevo_operator_request req = {.size = sizeof req,
                                 .parent = parent,
                                 .parent_summary_json = "{\"fitness\": 0.3}",
                                 .prompt_json = sections,
                                 .prompt_id = 3,
                                 .n_children = 1,
                                 .failures = f,
                                 .n_failures = nf};
    uint64_t id = 0;
    if (kevo_operator_submit(op, &req, &id, fresh()) != KEVO_OK)
        bail_out("submit: %s", err.text);
    return id;
}

/* The body of the last request the server got, parsed. */
static json_t *last_body(void)
{
    size_t n = loopback_count(srv);
    const loopback_request *r = n ? loopback_get(srv, n - 1) : NULL;
    return r ? json_loads(r->body, 0, NULL) : NULL;
}

/* The content of message i of a body, or "". */
static const char *content(json_t *body, size_t i, const char **role)
{
    json_t *m = json_array_get(json_object_get(body, "messages"), i);
    if (role)
        *role = json_string_value(json_object_get(m, "role"));
    const char *c = json_string_value(json_object_get(m, "content"));
    return c ? c : "";
}

static size_t message_count(json_t *body)
{
    return json_array_size(json_object_get(body, "messages"));
}

/* ---- a compile error, repaired in the same conversation ----------------- */

static void test_compile_error(kevo_operator *op, const char *api)
{
    bool openai = strcmp(api, "openai") == 0;
    char sections[128];
    snprintf(sections, sizeof sections,
             "{\"strategy\": \"Vectorise. [[kevo-loopback:ce-%s:bug,fixed]]\"}",
             api);
    kevo_operator_failure earlier[1] = {
        {"wrong", "shape 1 (n=4194304): z[4194303] = nan, want 0.25", 1, 41}};
    loopback_reset(srv);
    uint64_t id = propose(op, sections, earlier, 1);
    kevo_operator_result *res = wait_for(id);
    is_uint(kevo_operator_result_child_count(res), 1,
            "%s: the reply whose kernel does not compile is a child", api);
    kevo_candidate *bug = kevo_operator_result_take_child(res, 0);
    kevo_candidate_set_id(bug, 50);
    uint32_t attempt = kevo_operator_result_child_attempt(res, 0);
    is_uint(attempt, 0, "%s: attempt 0", api);
    kevo_operator_result_free(res);
    json_t *b0 = last_body();
    size_t user0 = openai ? 1 : 0;
    const char *u0 = content(b0, user0, NULL);
    like_str(u0, "# Recent failed attempts from this kernel",
             "%s: the prompt lists the parent's recent failures", api);
    like_str(u0, "- wrong: shape 1 (n=4194304): z[4194303] = nan",
             "%s: with the kind and the one-line diagnostic", api);

    /* kevo's diagnostic of the real NVRTC result of this kernel. */
    char *text = slurp("tests/data/eval", "saxpy_compile_error.json");
    json_t *v = json_loads(text, 0, NULL);
    kevo_eval_result *er = NULL;
    if (kevo__eval_result_from_json(v, "saxpy_compile_error.json", NULL, &er,
                                    fresh()) != KEVO_OK)
        bail_out("%s", err.text);
    char *diag = kevo_eval_result_diagnostic(er);
    like_str(diag, "identifier \"__ldg4\" is undefined",
             "the diagnostic names the error");
    like_str(diag, "The compiler's errors:\ncandidate.cu(17): error:",
             "and shows the compiler's error lines");
    like_str(diag, "const float4 xv = __ldg4(x + 4 * i);",
             "with the source line NVRTC points at");
    json_decref(v);
    free(text);
    kevo_eval_result_free(er);

    kevo_operator_repair_request rep = {.size = sizeof rep,
                                        .request_id = id,
                                        .attempt = attempt,
                                        .turn = 1,
                                        .turns_left = 0,
                                        .child = bug,
                                        .source = kevo_candidate_source(bug),
                                        .kind = "compile_error",
                                        .diagnostic = diag,
                                        .prompt_id = 3};
    uint64_t rid = 0;
    is_int(kevo_operator_repair(op, &rep, &rid, fresh()), KEVO_OK,
           "%s: a repair request", api);
    res = wait_for(rid);
    is_uint(kevo_operator_result_child_count(res), 1,
            "%s: the repair gives a child", api);
    const kevo_candidate *fixed = kevo_operator_result_child(res, 0);
    like_str(fixed ? kevo_candidate_source(fixed) : "",
             "__ldg(reinterpret_cast<const float4 *>(x) + i)",
             "%s: the repaired kernel", api);
    ok(fixed &&
           kevo_candidate_parent(fixed, 0) == kevo_candidate_parent(bug, 0),
       "%s: with the failed child's parent", api);
    like_str(kevo_operator_result_child_note(res, 0), "m: whole kernel",
             "%s: its note names the model", api);
    kevo_operator_result_free(res);

    json_t *b1 = last_body();
    size_t base = openai ? 1 : 0;
    is_uint(message_count(b1), base + 3,
            "%s: the repair continues the conversation (%zu messages)", api,
            message_count(b1));
    if (openai) {
        const char *role = NULL;
        content(b1, 0, &role);
        is_str(role ? role : "", "system", "openai: the system text first");
        is_str(content(b1, 0, NULL), content(b0, 0, NULL),
               "openai: the same system text");
    } else {
        is_str(json_string_value(json_object_get(b1, "system")),
               json_string_value(json_object_get(b0, "system")),
               "anthropic: the same system text");
    }
    const char *role = NULL;
    is_str(content(b1, base, &role), u0, "%s: the same user text", api);
    const char *reply = content(b1, base + 1, &role);
    is_str(role ? role : "", "assistant", "%s: then the model's reply", api);
    like_str(reply, "const float4 xv = __ldg4(x + 4 * i);",
             "%s: the reply that gave the failed kernel", api);
    like_str(reply, "I vectorised them", "%s: as the model wrote it", api);
    const char *turn = content(b1, base + 2, &role);
    is_str(role ? role : "", "user", "%s: then a user turn", api);
    like_str(turn, "Your kernel failed (compile_error): it does not compile.",
             "%s: saying what failed", api);
    like_str(turn,
             "candidate.cu(17): error: identifier \"__ldg4\" is undefined",
             "%s: with kevo's diagnostic", api);
    like_str(turn, "This is the last chance", "%s: and the turns left", api);
    json_decref(b0);
    json_decref(b1);
    free(diag);
    kevo_candidate_free(bug);
}

/* ---- a launch block kevo cannot read, refused and repaired -------------- */

static void test_include(kevo_operator *op)
{
    loopback_reset(srv);
    uint64_t id = propose(
        op, "{\"strategy\": \"Go. [[kevo-loopback:inc:include,fixed]]\"}", NULL,
        0);
    kevo_operator_result *res = wait_for(id);
    is_uint(kevo_operator_result_child_count(res), 0,
            "a kernel whose launch block calls std::min is no child");
    is_str(kevo_operator_result_failure_kind(res, 0), "invalid",
           "the operator reports it invalid");
    like_str(kevo_operator_result_failure_reason(res, 0),
             "kevo:launch: grid of 'saxpy_gs': expression "
             "'std::min(ceil_div(n, 256), 4 * sm_count)'",
             "with the block parser's message");
    is_uint(kevo_operator_result_refused_count(res), 1,
            "the result keeps the refused attempt");
    uint32_t attempt = 9;
    const char *kind, *reason;
    const char *src =
        kevo_operator_result_refused(res, 0, &attempt, &kind, &reason);
    like_str(src ? src : "", "std::min(", "with its source");
    is_uint(attempt, 0, "as attempt 0");
    kevo_operator_repair_request rep = {.size = sizeof rep,
                                        .request_id = id,
                                        .attempt = attempt,
                                        .turn = 1,
                                        .turns_left = 1,
                                        .source = src,
                                        .kind = kind,
                                        .diagnostic = reason,
                                        .prompt_id = 3,
                                        .parent = parent};
    uint64_t rid = 0;
    is_int(kevo_operator_repair(op, &rep, &rid, fresh()), KEVO_OK,
           "a repair of the refused attempt");
    kevo_operator_result_free(res);
    res = wait_for(rid);
    is_uint(kevo_operator_result_child_count(res), 1, "gives a child");
    kevo_operator_result_free(res);
    json_t *b = last_body();
    is_uint(message_count(b), 4, "in the same conversation");
    const char *turn = content(b, 3, NULL);
    like_str(turn, "kevo could not accept it as a kernel of this task",
             "the turn says it was refused");
    like_str(turn, "expected an operator or the end, found ':'", "and why");
    ok(!strstr(turn, "last chance"), "one more turn is left");
    like_str(content(b, 2, NULL), "std::min(",
             "the model's reply is in the conversation");
    json_decref(b);
}

/* ---- a repair without its conversation ---------------------------------- */

static void test_fresh(kevo_operator *op)
{
    loopback_reset(srv);
    loopback_script(srv, "fixed");
    char *src = kevo__asprintf("// from another run\n%s",
                               kevo_candidate_source(parent));
    kevo_operator_repair_request rep = {
        .size = sizeof rep,
        .request_id = 987654,
        .attempt = 0,
        .turn = 1,
        .source = src,
        .kind = "wrong",
        .diagnostic = "shape 1 (n=4194304): z[4194303] = nan, want 0.25",
        .prompt_id = -1,
        .parent = parent};
    uint64_t rid = 0;
    is_int(kevo_operator_repair(op, &rep, &rid, fresh()), KEVO_OK,
           "a repair of a child whose conversation is not held");
    kevo_operator_result *res = wait_for(rid);
    is_uint(kevo_operator_result_child_count(res), 1, "gives a child");
    kevo_operator_result_free(res);
    json_t *b = last_body();
    is_uint(message_count(b), 2, "from a new conversation");
    like_str(content(b, 0, NULL), "Repair it.", "with a repair's system text");
    const char *u = content(b, 1, NULL);
    like_str(u, "# The kernel that failed\n```cuda\n// from another run",
             "that shows the failed kernel");
    like_str(u, "it computed wrong results", "what failed");
    like_str(u, "z[4194303] = nan, want 0.25", "and the diagnostic");
    like_str(u, "x: f32 buffer", "and the kernel's arguments");
    json_decref(b);
    free(src);
}

/* ---- a revision that sees the failures ---------------------------------- */

static void test_revision(kevo_operator *op)
{
    loopback_reset(srv);
    kevo_operator_failure kinds[2] = {{"compile_error", NULL, 3, 0},
                                      {"wrong", NULL, 1, 0}};
    kevo_operator_failure failed[1] = {
        {"compile_error",
         "candidate.cu(17): error: identifier \"__ldg4\" is "
         "undefined",
         1, 50}};
    kevo_operator_revision rev = {
        .size = sizeof rev,
        .prompt_id = 3,
        .sections_json =
            "{\"strategy\": \"Vectorise. [[kevo-loopback:rv:revise]]\"}",
        .failure_kinds = kinds,
        .n_failure_kinds = 2,
        .failed_children = failed,
        .n_failed_children = 1};
    uint64_t id = 0;
    is_int(kevo_operator_revise(op, &rev, &id, fresh()), KEVO_OK,
           "a revision request with failures");
    kevo_operator_result *res = wait_for(id);
    is_uint(kevo_operator_result_prompt_count(res), 1, "gives a prompt");
    kevo_operator_result_free(res);
    json_t *b = last_body();
    const char *u = content(b, 1, NULL);
    like_str(u,
             "# How its children failed\n4 failures credited to it: "
             "compile_error 3, wrong 1",
             "the revision prompt counts the failure kinds");
    like_str(u,
             "- child 50 (compile_error): candidate.cu(17): error: "
             "identifier \"__ldg4\" is undefined",
             "and shows the failed child with its diagnostic");
    const char *sec = strstr(u, "# How its children failed");
    const char *fmt = strstr(u, "# Reply format");
    ok(sec && fmt && sec < fmt, "before the reply format");
    json_decref(b);
}

/* ---- the memory of conversations ---------------------------------------- */

static void test_memory(void)
{
    llm_convos cs = {0};
    char *turn = strdup("user text");
    llm_convo c = {.system = "sys", .turns = &turn, .nturns = 1};
    for (uint64_t i = 0; i < LLM_CONVOS_MAX + 6; i++)
        kevo__llm_convos_put(&cs, i, 0, &c, "reply");
    is_uint(cs.n, LLM_CONVOS_MAX, "at most %d conversations are kept",
            LLM_CONVOS_MAX);
    ok(!kevo__llm_convos_find(&cs, 0, 0), "the oldest are forgotten");
    const llm_convo_entry *e =
        kevo__llm_convos_find(&cs, LLM_CONVOS_MAX + 5, 0);
    ok(e && strcmp(e->reply, "reply") == 0 && e->convo.nturns == 1,
       "the newest is found");
    ok(!kevo__llm_convos_find(&cs, LLM_CONVOS_MAX + 5, 1),
       "by its attempt too");
    size_t big = LLM_CONVOS_BYTES / 3;
    char *huge = malloc(big + 1);
    memset(huge, 'k', big);
    huge[big] = '\0';
    for (uint64_t i = 0; i < 4; i++)
        kevo__llm_convos_put(&cs, 1000 + i, 0, &c, huge);
    ok(cs.bytes <= LLM_CONVOS_BYTES, "at most %zu bytes are kept (%zu)",
       (size_t)LLM_CONVOS_BYTES, cs.bytes);
    ok(kevo__llm_convos_find(&cs, 1003, 0) &&
           !kevo__llm_convos_find(&cs, 1000, 0),
       "the oldest large one is forgotten first");
    kevo__llm_convos_free(&cs);
    free(huge);
    free(turn);

    char *t = kevo__llm_repair_text("odd_kind", "d\n", 2, LLM_FORMAT_EDITS);
    like_str(t, "Your kernel failed (odd_kind).", "an unknown kind is named");
    like_str(t, "SEARCH/REPLACE edits of the kernel you gave",
             "the reply format follows the configuration");
    free(t);
}

int main(void)
{
    const char *b = getenv("KEVO_BUILDDIR");
    char *libs = kevo__asprintf("%s/operators/.libs", b && *b ? b : ".");
    setenv(KEVO_OPERATOR_PATH_ENV, libs, 1);
    free(libs);
    srv = loopback_start();
    if (!srv)
        bail_out("the loopback server did not start");
    char *path = kevo__asprintf("%s/examples/tasks/saxpy.json", tap_srcdir());
    if (kevo_task_load(path, &task, fresh()) != KEVO_OK)
        bail_out("%s", err.text);
    free(path);
    parent = kevo_candidate_copy(kevo_task_seed(task));
    kevo_candidate_set_id(parent, 7);
    const char *names[3] = {"bug", "fixed", "include"};
    const char *files[3] = {"compile-error.md", "repaired.md",
                            "launch-std-min.md"};
    for (int i = 0; i < 3; i++) {
        char *t = slurp("tests/data/llm-repair", files[i]);
        loopback_set_text(srv, names[i], t);
        free(t);
    }
    char run[] = "/tmp/kevo-test-llm-repair-XXXXXX";
    if (!mkdtemp(run))
        bail_out("mkdtemp failed");
    if (kevo_operator_host_new(task, 9, &host, fresh()) != KEVO_OK ||
        kevo_operator_host_set_run_dir(host, run, fresh()) != KEVO_OK)
        bail_out("%s", err.text);
    kevo_operator_host_set_log(host, KEVO_LOG_ERROR, NULL, NULL, NULL);

    kevo_operator *op = make_op("llm", "openai");
    ok(kevo_operator_can_repair(op), "the llm operator repairs children");
    test_compile_error(op, "openai");
    test_include(op);
    test_fresh(op);
    test_revision(op);
    kevo_operator *ant = make_op("llm_anthropic", "anthropic");
    test_compile_error(ant, "anthropic");
    test_memory();

    kevo_operator_host_free(host);
    /* The operator's summary counts its repairs. */
    char *cmd = kevo__asprintf("grep -l '\"repairs\": 3' %s/llm/*summary.json "
                               ">/dev/null 2>&1",
                               run);
    is_int(system(cmd), 0, "the openai operator's summary counts 3 repairs");
    free(cmd);
    cmd = kevo__asprintf("rm -rf '%s'", run);
    if (system(cmd) != 0)
        diag("could not remove %s", run);
    free(cmd);
    kevo_candidate_free(parent);
    kevo_task_free(task);
    loopback_stop(srv);
    return done_testing();
}

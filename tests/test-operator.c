/*
 * test-operator.c: the operator host. Loads the skeleton plugin and the
 * params module from the build tree, refuses every kind of broken plugin
 * (built in make check from tests/plugins/) with a message that names the
 * file, puts in-process descriptors through the same checks, and drives
 * synchronous and asynchronous operators through the whole request cycle:
 * children, failures, lineage, the checks of emit_child, the host table's
 * queries, request lifetimes and the plugins' exported symbols. ABI 1.1:
 * a 1.0 plugin still loads and works, a 1.1 plugin revises prompts
 * (emit_prompt and its checks, the result's prompts, a pool taking them)
 * and reports usage, and hundreds of requests in flight end in any order.
 * ABI 1.3: prompts and notes as named texts for a 1.3 plugin and as JSON
 * for a 1.2 one, whichever form the caller gives; revised prompts as
 * named texts; find_blocks and the include rule.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/kevo_private.h"
#include "tap.h"

/* "1.1": the host's ABI, as messages write it. */
#define STR2(x) #x
#define STR(x) STR2(x)
#define ABI_TEXT STR(KEVO_OPERATOR_ABI_MAJOR) "." STR(KEVO_OPERATOR_ABI_MINOR)

static kevo_error err;
static char builddir[1024];
static kevo_task *task;
static kevo_candidate *parent; /* the saxpy seed, fitted to the task */

static kevo_error *fresh(void)
{
    kevo_error_init(&err);
    return &err;
}

static char *build_path(const char *rel)
{
    char *p = kevo__path_join(builddir, rel);
    if (!p)
        bail_out("out of memory");
    return p;
}

static kevo_operator_host *new_host(uint64_t seed)
{
    kevo_operator_host *host = NULL;
    if (kevo_operator_host_new(task, seed, &host, fresh()) != KEVO_OK)
        bail_out("kevo_operator_host_new: %s", err.text);
    /* Operators' warnings would clutter the TAP output. */
    kevo_operator_host_set_log(host, KEVO_LOG_ERROR, NULL, NULL, NULL);
    return host;
}

static kevo_candidate *for_task(const char *source)
{
    kevo_candidate *c = NULL;
    if (kevo_candidate_new_for_task(task, source, "test.cu", &c, fresh()) !=
        KEVO_OK)
        bail_out("kevo_candidate_new_for_task: %s", err.text);
    return c;
}

static kevo_operator_request request(const kevo_candidate *from, uint32_t n)
{
    kevo_operator_request r = {.size = sizeof r};
    r.parent = from;
    r.n_children = n;
    r.prompt_id = -1;
    return r;
}

/* Submits one request and returns its result (the operator must be
 * synchronous). */
static kevo_operator_result *run_one(kevo_operator_host *host,
                                     kevo_operator *op,
                                     const kevo_operator_request *req)
{
    uint64_t id = 0;
    if (kevo_operator_submit(op, req, &id, fresh()) != KEVO_OK)
        bail_out("kevo_operator_submit: %s", err.text);
    kevo_operator_result *res = NULL;
    if (kevo_operator_host_next_result(host, &res) != KEVO_OK)
        bail_out("no result for request %llu", (unsigned long long)id);
    if (kevo_operator_result_id(res) != id)
        bail_out("result %llu for request %llu",
                 (unsigned long long)kevo_operator_result_id(res),
                 (unsigned long long)id);
    return res;
}

/* How many parameters of a and b differ. */
static int differences(const kevo_candidate *a, const kevo_candidate *b)
{
    const kevo_vars *va = kevo_candidate_assignment(a);
    const kevo_vars *vb = kevo_candidate_assignment(b);
    int d = 0;
    for (size_t i = 0; i < kevo_vars_count(va); i++) {
        int64_t v;
        if (kevo_vars_get(vb, kevo_vars_name(va, i), &v) != KEVO_OK ||
            v != kevo_vars_value(va, i))
            d++;
    }
    return d;
}

/* ---- the skeleton plugin ---------------------------------------------------
 */

static void test_skeleton(void)
{
    kevo_operator_host *host = new_host(1);
    const char *name = NULL;
    is_int(kevo_operator_host_load(host, "skeleton", &name, fresh()), KEVO_OK,
           "the skeleton loads by name from KEVO_OPERATOR_PATH");
    is_str(name, "skeleton", "its registered name");
    is_int(kevo_operator_host_load(host, "skeleton", NULL, fresh()), KEVO_OK,
           "loading it again does nothing");

    kevo_operator *op = NULL;
    is_int(kevo_operator_host_add(host, "skeleton", "sk", "{\"tries\": 0}", &op,
                                  fresh()),
           KEVO_EINVALID, "a bad config: init fails");
    like_str(err.text, "\"tries\" must be an integer", "with init's message");
    like_str(err.text, "skeleton.so", "naming the file");
    ok(op == NULL, "no instance");
    is_int(kevo_operator_host_add(host, "skeleton", "sk", "[1]", &op, fresh()),
           KEVO_EINVALID, "a config that is not an object");
    is_int(kevo_operator_host_add(host, "skeleton", "sk", "{", &op, fresh()),
           KEVO_EPARSE, "a config that is not JSON");
    is_int(kevo_operator_host_add(host, "skeleton", "sk", "{\"tries\": 8}", &op,
                                  fresh()),
           KEVO_OK, "an instance");
    is_str(kevo_operator_name(op), "sk", "its name");
    is_str(kevo_operator_plugin(op)->name, "skeleton", "its plugin");
    is_str(kevo_operator_plugin(op)->version, "1.0", "the plugin's version");
    kevo_operator *again = NULL;
    is_int(
        kevo_operator_host_add(host, "skeleton", "sk", NULL, &again, fresh()),
        KEVO_EEXIST, "instance names are unique");

    kevo_candidate *p = kevo_candidate_copy(parent);
    kevo_candidate_set_id(p, 7);
    uint64_t pid = 7;
    kevo_candidate_set_lineage(p, &pid, 0, NULL, -1, 4, NULL);
    kevo_operator_request req = request(p, 3);
    req.prompt_id = 12;
    kevo_operator_result *res = run_one(host, op, &req);
    is_str(kevo_operator_result_operator(res), "sk", "result of sk");
    is_uint(kevo_operator_result_child_count(res), 3, "three children");
    is_uint(kevo_operator_result_failure_count(res), 0, "no failure");
    for (size_t i = 0; i < kevo_operator_result_child_count(res); i++) {
        const kevo_candidate *c = kevo_operator_result_child(res, i);
        is_str(kevo_candidate_source(c), kevo_candidate_source(p),
               "child %zu keeps the source", i);
        is_int(differences(c, p), 1, "child %zu changes one parameter", i);
        is_int(kevo_candidate_check(c, NULL, NULL), KEVO_OK,
               "child %zu is in its domains", i);
        is_uint(kevo_candidate_parent_count(c), 1, "child %zu: one parent", i);
        is_uint(kevo_candidate_parent(c, 0), 7, "child %zu: parent id", i);
        is_str(kevo_candidate_operator(c), "sk", "child %zu: operator", i);
        is_int(kevo_candidate_prompt(c), 12, "child %zu: prompt id", i);
        is_uint(kevo_candidate_generation(c), 5, "child %zu: generation", i);
        is_uint(kevo_candidate_id(c), 0, "child %zu: no id yet", i);
        like_str(kevo_operator_result_child_note(res, i), " -> ",
                 "child %zu: a note", i);
        ok(kevo_operator_host_seen(host, c), "child %zu is seen", i);
    }
    ok(kevo_operator_result_child(res, 3) == NULL, "child 3: none");
    ok(kevo_operator_result_child_note(res, 3) == NULL, "note 3: none");
    kevo_candidate *taken = kevo_operator_result_take_child(res, 0);
    ok(taken != NULL, "take a child");
    ok(kevo_operator_result_child(res, 0) == NULL, "the result lets it go");
    ok(kevo_operator_result_take_child(res, 0) == NULL, "taken only once");
    kevo_candidate_free(taken);
    kevo_operator_result_free(res);
    kevo_operator_result *none = NULL;
    is_int(kevo_operator_host_next_result(host, &none), KEVO_DONE,
           "no more results");

    /* A parent with no parameters. */
    kevo_candidate *plain =
        for_task("/* kevo:launch\n"
                 " *   saxpy<<<ceil_div(n, 256), 256>>>(a, x, y, z, n)\n"
                 " */\n"
                 "extern \"C\" __global__ void saxpy(float a, const float *x,"
                 " const float *y, float *z, int n) {}\n");
    req = request(plain, 1);
    res = run_one(host, op, &req);
    is_uint(kevo_operator_result_child_count(res), 0, "no params: no child");
    is_uint(kevo_operator_result_failure_count(res), 1, "but a failure");
    is_str(kevo_operator_result_failure_kind(res, 0), KEVO_FAIL_UNSUPPORTED,
           "of kind unsupported");
    like_str(kevo_operator_result_failure_reason(res, 0), "no parameters",
             "saying why");
    ok(kevo_operator_result_failure_kind(res, 1) == NULL, "failure 1: none");
    ok(kevo_operator_result_failure_reason(res, 1) == NULL, "reason 1: none");
    kevo_operator_result_free(res);
    kevo_candidate_free(plain);
    kevo_candidate_free(p);
    kevo_operator_host_free(host);
}

/* ---- broken plugins ----------------------------------------------------- */

typedef struct broken_case {
    const char *file; /* under tests/plugins/.libs */
    kevo_status code;
    const char *text;
} broken_case;

static void test_broken(void)
{
    static const broken_case cases[] = {
        {"bad_major.so", KEVO_EFORMAT, "this kevo speaks major version 1"},
        {"newer_minor.so", KEVO_EFORMAT, "newer than this kevo's " ABI_TEXT},
        {"small_struct.so", KEVO_EFORMAT, "smaller than the"},
        {"no_entry.so", KEVO_EINVALID, "no symbol kevo_operator_entry"},
        {"null_propose.so", KEVO_EINVALID, "function propose is NULL"},
        {"unresolved.so", KEVO_EEXTERNAL, "kevo_test_no_such_function"},
    };
    kevo_operator_host *host = new_host(1);
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(cases); i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "tests/plugins/.libs/%s", cases[i].file);
        char *path = build_path(rel);
        is_int(kevo_operator_host_load(host, path, NULL, fresh()),
               cases[i].code, "%s is refused", cases[i].file);
        like_str(err.text, cases[i].text, "%s: the reason", cases[i].file);
        like_str(err.text, path, "%s: the message names the file",
                 cases[i].file);
        is_str(err.source, path, "%s: the error's source", cases[i].file);
        free(path);
    }
    /* By name through KEVO_OPERATOR_PATH: the same checks. */
    is_int(kevo_operator_host_load(host, "bad_major", NULL, fresh()),
           KEVO_EFORMAT, "by name: wrong major");
    like_str(err.text, "tests/plugins/.libs/bad_major.so", "names the file");
    is_int(kevo_operator_host_load(host, "wrong_name", NULL, fresh()),
           KEVO_EINVALID, "a file whose operator has another name");
    like_str(err.text, "defines operator 'someone_else'", "says which");

    /* Not found: every directory searched is listed. */
    is_int(kevo_operator_host_load(host, "no_such_operator", NULL, fresh()),
           KEVO_ENOENT, "an operator on no directory of the path");
    like_str(err.text, "no_such_operator.so", "names the file looked for");
    like_str(err.text, "KEVO_OPERATOR_PATH", "names the variable");
    char *dir = build_path("tests/plugins/.libs");
    like_str(err.text, dir, "lists the path's directories");
    free(dir);
    like_str(err.text, KEVO_OPERATOR_DIR, "and the installed directory");
    is_int(kevo_operator_host_add(host, "no_such_operator", NULL, NULL,
                                  &(kevo_operator *){NULL}, fresh()),
           KEVO_ENOENT, "kevo_operator_host_add loads, with the same error");
    is_int(kevo_operator_host_load(host, "/nonexistent/x.so", NULL, fresh()),
           KEVO_ENOENT, "a path to no file");
    like_str(err.text, "/nonexistent/x.so", "names it");
    is_int(kevo_operator_host_load(host, "not an identifier", NULL, fresh()),
           KEVO_EINVAL, "a name that is no identifier");

    /* A file that is no shared object: dlopen's own message. */
    char tmpl[] = "/tmp/kevo-op-XXXXXX";
    if (!mkdtemp(tmpl))
        bail_out("mkdtemp failed");
    char *garbage = kevo__path_join(tmpl, "garbage.so");
    FILE *f = fopen(garbage, "w");
    if (!f)
        bail_out("cannot write %s", garbage);
    fputs("this is not an ELF file\n", f);
    fclose(f);
    is_int(kevo_operator_host_load(host, garbage, NULL, fresh()),
           KEVO_EEXTERNAL, "a file that is not a shared object");
    like_str(err.text, "cannot load operator plugin", "dlopen failed");
    like_str(err.text, "garbage.so", "names the file");
    unlink(garbage);
    rmdir(tmpl);
    free(garbage);

    /* A failing init: its message, its file; nothing registered. */
    kevo_operator *op = NULL;
    is_int(kevo_operator_host_add(host, "failing_init", "f", "{\"url\": 1}",
                                  &op, fresh()),
           KEVO_EINVALID, "an init that fails");
    like_str(err.text, "init failed", "says init failed");
    like_str(err.text, "cannot be reached", "with the plugin's message");
    like_str(err.text, "{\"url\": 1}", "which saw its config");
    like_str(err.text, "failing_init.so", "names the file");
    like_str(err.text, "operator 'f'", "names the instance");
    ok(op == NULL, "no instance");
    kevo_operator_host_free(host);
}

/* ---- in-process descriptors ------------------------------------------------
 */

static kevo_status noop_init(const kevo_host_api *api, kevo_host_ctx *ctx,
                             const char *config_json, void **state)
{
    (void)api;
    (void)ctx;
    (void)config_json;
    *state = NULL;
    return KEVO_OK;
}

static kevo_status noop_propose(void *state, const kevo_operator_request *req)
{
    (void)state;
    (void)req;
    return KEVO_OK;
}

static void noop_fini(void *state)
{
    (void)state;
}

#define DESC(nm)                                                               \
    {                                                                          \
        .abi_major = KEVO_OPERATOR_ABI_MAJOR,                                  \
        .abi_minor = KEVO_OPERATOR_ABI_MINOR,                                  \
        .struct_size = sizeof(kevo_operator_desc), .name = nm, .version = "0", \
        .init = noop_init, .propose = noop_propose, .fini = noop_fini          \
    }

static void test_register(void)
{
    kevo_operator_host *host = new_host(1);
    kevo_operator_desc good = DESC("good");
    kevo_operator_desc twin = DESC("good");
    kevo_operator_desc d;

    d = good;
    d.abi_major = 0;
    is_int(kevo_operator_host_register(host, &d, "builtin.c", fresh()),
           KEVO_EFORMAT, "in-process: wrong major");
    like_str(err.text, "builtin.c", "names the origin");
    d = good;
    d.abi_minor = KEVO_OPERATOR_ABI_MINOR + 3;
    is_int(kevo_operator_host_register(host, &d, NULL, fresh()), KEVO_EFORMAT,
           "in-process: newer minor");
    like_str(err.text, "in-process operator", "a default origin");
    d = good;
    d.struct_size = 8;
    is_int(kevo_operator_host_register(host, &d, NULL, fresh()), KEVO_EFORMAT,
           "in-process: struct too small");
    kevo_operator_desc bigger = DESC("bigger");
    bigger.struct_size = sizeof bigger + 64;
    is_int(kevo_operator_host_register(host, &bigger, NULL, fresh()), KEVO_OK,
           "in-process: a larger struct (a newer release's) is accepted");
    d = good;
    d.init = NULL;
    is_int(kevo_operator_host_register(host, &d, NULL, fresh()), KEVO_EINVALID,
           "in-process: no init");
    like_str(err.text, "init is NULL", "says which");
    d = good;
    d.fini = NULL;
    is_int(kevo_operator_host_register(host, &d, NULL, fresh()), KEVO_EINVALID,
           "in-process: no fini");
    d = good;
    d.name = "two words";
    is_int(kevo_operator_host_register(host, &d, NULL, fresh()), KEVO_EINVALID,
           "in-process: a bad name");
    d = good;
    d.version = NULL;
    is_int(kevo_operator_host_register(host, &d, NULL, fresh()), KEVO_EINVALID,
           "in-process: no version");
    is_int(kevo_operator_host_register(host, NULL, NULL, fresh()), KEVO_EINVAL,
           "in-process: NULL");
    is_int(kevo_operator_host_register(host, &good, "a.c", fresh()), KEVO_OK,
           "in-process: a good descriptor");
    is_int(kevo_operator_host_register(host, &good, "a.c", fresh()), KEVO_OK,
           "registering it again does nothing");
    is_int(kevo_operator_host_register(host, &twin, "b.c", fresh()),
           KEVO_EEXIST, "another descriptor with its name");
    like_str(err.text, "already registered, from a.c", "says from where");
    kevo_operator *op = NULL;
    is_int(kevo_operator_host_add(host, "good", NULL, NULL, &op, fresh()),
           KEVO_OK, "an instance of an in-process operator");
    is_str(kevo_operator_name(op), "good", "named after it by default");
    is_int(
        kevo_operator_host_add(host, "good", "not-an-id", NULL, &op, fresh()),
        KEVO_EINVAL, "an instance name that is no identifier");

    /* A synchronous operator that never calls done, and one whose propose
     * fails. */
    kevo_operator_request req = request(parent, 1);
    kevo_operator *noop = NULL;
    kevo_operator_host_add(host, "good", "lazy", NULL, &noop, NULL);
    kevo_operator_result *res = run_one(host, noop, &req);
    is_uint(kevo_operator_result_failure_count(res), 1,
            "a request not ended by a synchronous operator fails");
    is_str(kevo_operator_result_failure_kind(res, 0), KEVO_FAIL_INTERNAL,
           "kind internal");
    like_str(kevo_operator_result_failure_reason(res, 0),
             "without ending the request", "saying why");
    is_uint(kevo_operator_in_flight(noop), 0, "and it is no longer in flight");
    kevo_operator_result_free(res);

    /* Bad requests. */
    uint64_t id;
    kevo_operator_request bad = req;
    bad.size = 16;
    is_int(kevo_operator_submit(noop, &bad, &id, fresh()), KEVO_EINVAL,
           "a request too small");
    bad = req;
    bad.parent = NULL;
    is_int(kevo_operator_submit(noop, &bad, &id, fresh()), KEVO_EINVAL,
           "a request without parent");
    bad = req;
    bad.n_children = 0;
    is_int(kevo_operator_submit(noop, &bad, &id, fresh()), KEVO_EINVAL,
           "a request for no child");
    bad = req;
    bad.n_inspirations = 2;
    is_int(kevo_operator_submit(noop, &bad, &id, fresh()), KEVO_EINVAL,
           "inspirations counted but missing");
    kevo_operator_host_free(host);
}

/* ---- a probe: an in-process operator that exercises the host table ------ */

typedef struct probe_record {
    kevo_status emit[16];
    char last[16][512];
    int nemit;
    char task_name[64], task_args[512], task_dims[512], task_cost[256];
    char device[128], run_dir[256], params[512], assignment[256];
    char summary[512], parent_summary[64], prompt[64], insp_summary[64];
    size_t elites;
    int elite_same_source;
    double draws[4];
    int seen_parent, seen_child;
    kevo_status check_ok, check_range, check_unknown, check_json;
    kevo_status check_held_out;
    char held_out_msg[512];
    kevo_status fail_unknown, done_twice;
} probe_record;

static probe_record rec;
static const kevo_host_api *probe_api;
static kevo_host_ctx *probe_ctx;

static kevo_status probe_init(const kevo_host_api *api, kevo_host_ctx *ctx,
                              const char *config_json, void **state)
{
    (void)config_json;
    probe_api = api;
    probe_ctx = ctx;
    *state = NULL;
    is_uint(api->size, sizeof(kevo_host_api), "the table's size");
    is_uint(api->abi_major, KEVO_OPERATOR_ABI_MAJOR, "the table's major");
    ok(KEVO_HOST_API_HAS(api, done), "KEVO_HOST_API_HAS");
    return KEVO_OK;
}

static void copy_str(char *dst, size_t size, const char *s)
{
    snprintf(dst, size, "%s", s ? s : "(null)");
}

static void emit(uint64_t id, const char *source, const char *assignment)
{
    const kevo_host_api *api = probe_api;
    if (rec.nemit == 16)
        bail_out("the probe emits too much");
    int i = rec.nemit++;
    rec.emit[i] = api->emit_child(probe_ctx, id, source, assignment, "probe");
    copy_str(rec.last[i], sizeof rec.last[i], api->last_error(probe_ctx));
}

static const char held_out_source[] =
    "// kevo:param\n"
    "//   VEC in {1, 2, 4} = 1\n"
    "//   require n % VEC == 0\n"
    "/* kevo:launch\n"
    " *   saxpy<<<ceil_div(n, 256 * VEC), 256>>>(a, x, y, z, n)\n"
    " */\n"
    "extern \"C\" __global__ void saxpy(float a, const float *x,"
    " const float *y, float *z, int n) {}\n";

static kevo_status probe_propose(void *state, const kevo_operator_request *req)
{
    (void)state;
    const kevo_host_api *api = probe_api;
    kevo_host_ctx *ctx = probe_ctx;
    const char *src = api->cand_source(ctx, req->parent);
    char *s;

    copy_str(rec.task_name, sizeof rec.task_name, api->task_name(ctx));
    copy_str(rec.task_args, sizeof rec.task_args, api->task_args(ctx));
    copy_str(rec.task_dims, sizeof rec.task_dims, api->task_dims(ctx));
    copy_str(rec.task_cost, sizeof rec.task_cost, api->task_cost(ctx));
    copy_str(rec.device, sizeof rec.device, api->device_json(ctx));
    copy_str(rec.run_dir, sizeof rec.run_dir, api->run_dir(ctx));
    copy_str(rec.parent_summary, sizeof rec.parent_summary,
             req->parent_summary_json);
    copy_str(rec.prompt, sizeof rec.prompt, req->prompt_json);
    copy_str(rec.insp_summary, sizeof rec.insp_summary,
             req->n_inspirations ? req->inspirations[0].summary_json : NULL);
    s = api->cand_params(ctx, req->parent);
    copy_str(rec.params, sizeof rec.params, s);
    api->free(ctx, s);
    s = api->cand_assignment(ctx, req->parent);
    copy_str(rec.assignment, sizeof rec.assignment, s);
    api->free(ctx, s);
    rec.elites = api->elite_count(ctx);
    if (rec.elites) {
        rec.elite_same_source =
            strcmp(api->cand_source(ctx, api->elite(ctx, 0)), src) == 0;
        s = api->elite_summary(ctx, 0);
        copy_str(rec.summary, sizeof rec.summary, s);
        api->free(ctx, s);
    }
    rec.draws[0] = api->uniform01(ctx);
    rec.draws[1] = (double)api->uniform_int(ctx, 1000);
    rec.draws[2] = api->gaussian(ctx, 1.0);
    rec.draws[3] = api->uniform01(ctx);

    rec.seen_parent = api->seen(ctx, req->parent, NULL);
    rec.check_ok = api->check(ctx, req->parent, "{\"BLOCK\": 512}");
    rec.check_range = api->check(ctx, req->parent, "{\"BLOCK\": 100}");
    rec.check_unknown = api->check(ctx, req->parent, "{\"NOPE\": 1}");
    rec.check_json = api->check(ctx, req->parent, "{\"BLOCK\": ");

    if (req->second_parent) {
        /* The held-out probe: VEC=2 holds at every training shape and
         * breaks n % VEC == 0 only at the held-out ones. */
        rec.check_held_out =
            api->check(ctx, req->second_parent, "{\"VEC\": 2}");
        copy_str(rec.held_out_msg, sizeof rec.held_out_msg,
                 api->last_error(ctx));
        api->done(ctx, req->id);
        return KEVO_OK;
    }

    emit(req->id, src, "{\"BLOCK\": 512}"); /* 0: ok */
    rec.seen_child = api->seen(ctx, req->parent, "{\"BLOCK\": 512}");
    emit(req->id, src, "{\"BLOCK\": 512}");          /* 1: duplicate */
    emit(req->id, src, NULL);                        /* 2: the parent */
    emit(req->id, src, "{\"BLOCK\": 100}");          /* 3: domain */
    emit(req->id, src, "{\"NOPE\": 1}");             /* 4: unknown */
    emit(req->id, "__global__ void k() {}\n", NULL); /* 5: no launch */
    emit(req->id, "/* kevo:launch\n *   k<<<1, 2048>>>(x)\n */\n", NULL);
    emit(req->id, src, "{\"BLOCK\": \"x\"}");         /* 7: not int */
    emit(req->id + 1000, src, "{\"BLOCK\": 1024}");   /* 8: bad id */
    emit(req->id, src, "{\"VEC\": 4, \"ITEMS\": 8}"); /* 9: ok */
    rec.fail_unknown = api->fail(ctx, req->id + 1000, "parse", "x");
    api->fail(ctx, req->id, KEVO_FAIL_PARSE, "the reply had no code");
    api->fail(ctx, req->id, NULL, NULL);
    api->log(ctx, KEVO_LOG_WARN, "probe done with %d emits", rec.nemit);
    api->done(ctx, req->id);
    rec.done_twice = api->done(ctx, req->id);
    return KEVO_OK;
}

/* ABI 1.2: it reads the JSON forms of prompts and summaries, which a host
 * keeps giving plugins of an older minor (test_texts() reads the arrays of
 * ABI 1.3). */
static const kevo_operator_desc probe_desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = 2,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "probe",
    .version = "1",
    .init = probe_init,
    .propose = probe_propose,
    .fini = noop_fini,
};

typedef struct log_lines {
    char text[4][256];
    int n;
} log_lines;

static void collect_log(void *user, kevo_log_level level, const char *op_name,
                        const char *message)
{
    log_lines *l = user;
    if (l->n < 4)
        snprintf(l->text[l->n++], sizeof l->text[0], "%d %s %s", (int)level,
                 op_name, message);
}

static void test_probe(void)
{
    kevo_operator_host *host = new_host(99);
    log_lines logs = {0};
    kevo_archive *archive = NULL;
    is_int(kevo_operator_host_set_log(host, KEVO_LOG_WARN, collect_log, &logs,
                                      fresh()),
           KEVO_OK, "a log callback");
    is_int(kevo_operator_host_set_device(host, NULL, "{\"dram_gbs\": 3350}",
                                         fresh()),
           KEVO_OK, "device ceilings");
    is_int(kevo_operator_host_set_device(host, NULL, "[1]", fresh()),
           KEVO_EINVALID, "ceilings that are not an object");
    is_int(kevo_operator_host_set_device(host, NULL, "{", fresh()), KEVO_EPARSE,
           "ceilings that are not JSON");
    is_int(kevo_operator_host_set_run_dir(host, "/tmp/run-1", fresh()), KEVO_OK,
           "a run directory");
    if (kevo_archive_new_for_task(task, &archive, fresh()) != KEVO_OK)
        bail_out("archive: %s", err.text);
    double where[2] = {1, 256};
    kevo_archive_insert(archive, parent, 0.5, where, NULL, NULL, NULL);
    is_int(kevo_operator_host_set_archive(host, archive, fresh()), KEVO_OK,
           "an archive");
    is_int(kevo_operator_host_mark_seen(host, parent, fresh()), KEVO_OK,
           "the parent was evaluated");
    ok(kevo_operator_host_seen(host, parent), "so it is seen");
    is_int(kevo_operator_host_register(host, &probe_desc, NULL, fresh()),
           KEVO_OK, "the probe registers");
    kevo_operator *op = NULL;
    is_int(kevo_operator_host_add(host, "probe", NULL, NULL, &op, fresh()),
           KEVO_OK, "a probe");

    /* The caller's request goes away after submit; the probe reads the
     * host's copies. */
    char *summary = kevo__strdup("{\"fitness\": 0.5}");
    char *prompt = kevo__strdup("{\"strategy\": \"x\"}");
    char *insp_summary = kevo__strdup("{\"fitness\": 0.25}");
    kevo_operator_inspiration insp = {parent, insp_summary};
    kevo_operator_request req = request(parent, 2);
    req.parent_summary_json = summary;
    req.prompt_json = prompt;
    req.inspirations = &insp;
    req.n_inspirations = 1;
    uint64_t id = 0;
    memset(&rec, 0, sizeof rec);
    is_int(kevo_operator_submit(op, &req, &id, fresh()), KEVO_OK, "submit");
    free(summary);
    free(prompt);
    free(insp_summary);

    double first[4];
    memcpy(first, rec.draws, sizeof first);
    is_str(rec.task_name, "saxpy", "task_name");
    like_str(rec.task_args, "x: f32 buffer, in, count n\n", "task_args: x");
    like_str(rec.task_args, "n: i32 scalar = n\n", "task_args: n");
    like_str(rec.task_args, "a: f32 scalar, drawn at random", "task_args: a");
    is_str(rec.task_dims,
           "{\"dims\":[\"n\"],\"shapes\":[{\"n\":16777216},{\"n\":4194304},"
           "{\"n\":1000000}]}",
           "task_dims: training shapes only");
    is_str(rec.task_cost, "bytes: 12*n\nflops: 2*n\npeak: fp32\n", "task_cost");
    is_str(rec.device, "{\"dram_gbs\": 3350}", "device_json");
    is_str(rec.run_dir, "/tmp/run-1", "run_dir");
    is_str(rec.parent_summary, "{\"fitness\": 0.5}", "the parent's summary");
    is_str(rec.prompt, "{\"strategy\": \"x\"}", "the prompt");
    is_str(rec.insp_summary, "{\"fitness\": 0.25}", "an inspiration");
    like_str(rec.params, "{\"name\":\"BLOCK\"", "cand_params");
    like_str(rec.params, "\"values\":[64,128,256,512,1024]", "with values");
    is_str(rec.assignment, "{\"BLOCK\":256,\"VEC\":1,\"ITEMS\":1}",
           "cand_assignment");
    is_uint(rec.elites, 1, "elite_count");
    ok(rec.elite_same_source, "elite 0 is the parent");
    like_str(rec.summary, "\"fitness\":0.5", "elite_summary: fitness");
    like_str(rec.summary, "\"descriptor\":{", "elite_summary: descriptor");
    ok(rec.draws[0] >= 0 && rec.draws[0] < 1, "uniform01");
    ok(rec.draws[1] >= 0 && rec.draws[1] < 1000, "uniform_int");
    ok(rec.seen_parent, "seen: the parent");
    ok(rec.seen_child, "seen: a child just emitted");
    is_int(rec.check_ok, KEVO_OK, "check: a valid assignment");
    is_int(rec.check_range, KEVO_ERANGE, "check: out of the domain");
    is_int(rec.check_unknown, KEVO_ENOENT, "check: an unknown parameter");
    is_int(rec.check_json, KEVO_EPARSE, "check: JSON that does not parse");

    is_int(rec.emit[0], KEVO_OK, "emit: a child");
    is_int(rec.emit[1], KEVO_EEXIST, "emit: the same child again");
    like_str(rec.last[1], "already evaluated or proposed", "says so");
    is_int(rec.emit[2], KEVO_EEXIST, "emit: the parent unchanged");
    like_str(rec.last[2], "its parent unchanged", "says so");
    is_int(rec.emit[3], KEVO_ERANGE, "emit: a value out of its domain");
    like_str(rec.last[3], "BLOCK=100", "names the value");
    is_int(rec.emit[4], KEVO_ENOENT, "emit: an unknown parameter");
    like_str(rec.last[4], "NOPE", "names it");
    is_int(rec.emit[5], KEVO_EINVALID, "emit: source without kevo:launch");
    like_str(rec.last[5], "probe#", "names the child's origin");
    ok(rec.emit[6] != KEVO_OK, "emit: a launch that does not fit the task");
    is_int(rec.emit[7], KEVO_EINVALID, "emit: a value that is no integer");
    is_int(rec.emit[8], KEVO_EINVAL, "emit: an unknown request");
    like_str(rec.last[8], "not in flight", "says so");
    is_int(rec.emit[9], KEVO_OK, "emit: a second child");
    is_int(rec.fail_unknown, KEVO_EINVAL, "fail: an unknown request");
    is_int(rec.done_twice, KEVO_EINVAL, "done: twice");

    kevo_operator_result *res = NULL;
    is_int(kevo_operator_host_next_result(host, &res), KEVO_OK, "a result");
    is_uint(kevo_operator_result_id(res), id, "for the request");
    is_uint(kevo_operator_result_child_count(res), 2, "two children");
    is_uint(kevo_operator_result_failure_count(res), 2, "two failures");
    is_str(kevo_operator_result_failure_kind(res, 0), "parse", "kind");
    is_str(kevo_operator_result_failure_reason(res, 0), "the reply had no code",
           "reason");
    is_str(kevo_operator_result_failure_kind(res, 1), KEVO_FAIL_INTERNAL,
           "a NULL kind becomes internal");
    is_str(kevo_operator_result_failure_reason(res, 1), "no reason given",
           "a NULL reason is filled in");
    const kevo_candidate *c = kevo_operator_result_child(res, 1);
    int64_t v = 0;
    kevo_vars_get(kevo_candidate_assignment(c), "ITEMS", &v);
    is_int(v, 8, "the second child has ITEMS=8");
    kevo_vars_get(kevo_candidate_assignment(c), "BLOCK", &v);
    is_int(v, 256, "and the parent's BLOCK");
    kevo_operator_result_free(res);
    is_int(logs.n, 1, "one line logged at warn or above");
    is_str(logs.text[0], "1 probe probe done with 10 emits",
           "with level, operator and text");

    /* Held-out shapes: checked, never shown. */
    kevo_candidate *ho = for_task(held_out_source);
    req = request(parent, 1);
    req.second_parent = ho;
    memset(&rec, 0, sizeof rec);
    kevo_operator_result_free(run_one(host, op, &req));
    is_int(rec.check_held_out, KEVO_ECONSTRAINT,
           "check: a constraint broken at a held-out shape only");
    like_str(rec.held_out_msg, "held-out shape", "says where");
    ok(!strstr(rec.held_out_msg, "1000003") && !strstr(rec.held_out_msg, "77"),
       "without the held-out values: %s", rec.held_out_msg);
    kevo_candidate_free(ho);

    /* The same seed and instance name draw the same numbers. */
    kevo_operator_host_free(host);
    host = new_host(99);
    kevo_operator_host_register(host, &probe_desc, NULL, NULL);
    kevo_operator_host_add(host, "probe", NULL, NULL, &op, NULL);
    req = request(parent, 1);
    memset(&rec, 0, sizeof rec);
    kevo_operator_result_free(run_one(host, op, &req));
    ok(memcmp(first, rec.draws, sizeof first) == 0,
       "the same seed: the same draws");
    kevo_operator_host_free(host);
    kevo_archive_free(archive);
}

/* ---- an asynchronous operator ------------------------------------------- */

typedef struct async_state {
    const kevo_host_api *api;
    kevo_host_ctx *ctx;
    const kevo_operator_request *reqs[8];
    int n;
} async_state;

static kevo_status async_init(const kevo_host_api *api, kevo_host_ctx *ctx,
                              const char *config_json, void **state)
{
    (void)config_json;
    async_state *s = api->alloc(ctx, sizeof *s);
    if (!s)
        return KEVO_ENOMEM;
    memset(s, 0, sizeof *s);
    s->api = api;
    s->ctx = ctx;
    *state = s;
    return KEVO_OK;
}

static kevo_status async_propose(void *state, const kevo_operator_request *req)
{
    async_state *s = state;
    if (s->n == 8) {
        s->api->error(s->ctx, "too many requests at once");
        return KEVO_ELIMIT;
    }
    s->reqs[s->n++] = req; /* valid until done */
    return KEVO_OK;
}

/* Ends the oldest request per call: a child for odd ids, a failure for
 * even ones. Reads the request (and its summary) long after submit. */
static size_t async_poll(void *state, int timeout_ms)
{
    (void)timeout_ms;
    async_state *s = state;
    if (s->n == 0)
        return 0;
    const kevo_operator_request *req = s->reqs[0];
    const kevo_host_api *api = s->api;
    if (req->id % 2) {
        char assignment[64];
        snprintf(assignment, sizeof assignment, "{\"BLOCK\": %d}",
                 req->id % 4 == 1 ? 128 : 64);
        api->emit_child(s->ctx, req->id, api->cand_source(s->ctx, req->parent),
                        assignment, req->parent_summary_json);
    } else {
        api->fail(s->ctx, req->id, KEVO_FAIL_TIMEOUT, "too slow");
    }
    api->done(s->ctx, req->id);
    memmove(s->reqs, s->reqs + 1, (size_t)--s->n * sizeof s->reqs[0]);
    return (size_t)s->n;
}

static void async_fini(void *state)
{
    async_state *s = state;
    s->api->free(s->ctx, s);
}

/* ABI 1.2: it reads the JSON forms of prompts and summaries, which a host
 * keeps giving plugins of an older minor (test_texts() reads the arrays of
 * ABI 1.3). */
static const kevo_operator_desc async_desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = 2,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "async",
    .version = "1",
    .init = async_init,
    .propose = async_propose,
    .poll = async_poll,
    .fini = async_fini,
};

static void test_async(void)
{
    kevo_operator_host *host = new_host(5);
    kevo_operator_host_register(host, &async_desc, NULL, NULL);
    kevo_operator *a = NULL, *b = NULL;
    kevo_operator_host_add(host, "async", "a", NULL, &a, NULL);
    kevo_operator_host_add(host, "async", "b", NULL, &b, NULL);
    ok(a && b, "two asynchronous instances");
    uint64_t ids[4];
    for (int i = 0; i < 4; i++) {
        char *summary = kevo__asprintf("summary %d", i);
        kevo_operator_request req = request(parent, 1);
        req.parent_summary_json = summary;
        is_int(kevo_operator_submit(i < 2 ? a : b, &req, &ids[i], fresh()),
               KEVO_OK, "submit %d", i);
        free(summary);
    }
    is_uint(kevo_operator_in_flight(a), 2, "a has two in flight");
    is_uint(kevo_operator_in_flight(b), 2, "b has two in flight");
    kevo_operator_result *res = NULL;
    is_int(kevo_operator_host_next_result(host, &res), KEVO_DONE,
           "nothing has ended yet");
    size_t left = 99;
    int rounds = 0;
    while (left && rounds++ < 10)
        kevo_operator_host_poll(host, 50, &left, NULL);
    is_uint(left, 0, "polling ends every request");
    ok(rounds <= 3, "in a few rounds (%d)", rounds);
    int children = 0, failures = 0, seen[4] = {0};
    while (kevo_operator_host_next_result(host, &res) == KEVO_OK) {
        for (int i = 0; i < 4; i++)
            seen[i] += kevo_operator_result_id(res) == ids[i];
        for (size_t k = 0; k < kevo_operator_result_child_count(res); k++) {
            children++;
            like_str(kevo_operator_result_child_note(res, k), "summary ",
                     "the request's summary outlived the caller's copy");
        }
        for (size_t k = 0; k < kevo_operator_result_failure_count(res); k++) {
            failures++;
            is_str(kevo_operator_result_failure_kind(res, k), KEVO_FAIL_TIMEOUT,
                   "a timeout");
        }
        kevo_operator_result_free(res);
    }
    ok(seen[0] == 1 && seen[1] == 1 && seen[2] == 1 && seen[3] == 1,
       "one result per request");
    is_int(children, 2, "two children");
    is_int(failures, 2, "two failures");

    /* One instance alone: its poll gets the whole timeout. */
    kevo_operator_request req = request(parent, 1);
    kevo_operator_submit(a, &req, NULL, NULL);
    kevo_operator_host_poll(host, 10, &left, NULL);
    is_uint(left, 0, "one busy instance");
    kevo_operator_result_free(
        (kevo_operator_host_next_result(host, &res), res));

    /* Propose failing: the request ends with the plugin's message. */
    for (int i = 0; i < 9; i++)
        kevo_operator_submit(b, &req, NULL, NULL);
    is_uint(kevo_operator_in_flight(b), 8, "b holds eight");
    int limited = 0;
    while (kevo_operator_host_next_result(host, &res) == KEVO_OK) {
        if (kevo_operator_result_failure_count(res) == 1 &&
            strstr(kevo_operator_result_failure_reason(res, 0),
                   "propose failed: too many requests at once"))
            limited++;
        kevo_operator_result_free(res);
    }
    is_int(limited, 1, "the ninth failed with the plugin's message");
    /* Freed with eight requests in flight: fini drops them; valgrind
     * checks that nothing leaks. */
    kevo_operator_host_free(host);
}

/* ---- ABI 1.0 plugins under a 1.1 host -------------------------------------
 */

static kevo_status trap_revise(void *state, const kevo_operator_revision *rev)
{
    (void)state;
    (void)rev;
    bail_out("the host called the reserved slot of a 1.0 descriptor");
    abort();
}

static void test_abi_1_0(void)
{
    kevo_operator_host *host = new_host(3);
    kevo_operator *op = NULL;
    is_int(kevo_operator_host_add(host, "abi_1_0", NULL, NULL, &op, fresh()),
           KEVO_OK, "a plugin of ABI 1.0 loads under a host of ABI 1.%d",
           KEVO_OPERATOR_ABI_MINOR);
    if (!op)
        bail_out("abi_1_0: %s", err.text);
    is_uint(kevo_operator_plugin(op)->abi_minor, 0, "it says minor 0");
    is_uint(kevo_operator_plugin(op)->struct_size, KEVO_OPERATOR_DESC_SIZE_1_0,
            "with the size of a 1.0 descriptor");
    ok(!kevo_operator_can_revise(op),
       "it cannot revise: its reserved slot is not taken for revise()");
    kevo_operator_request req = request(parent, 1);
    kevo_operator_result *res = run_one(host, op, &req);
    is_uint(kevo_operator_result_failure_count(res), 1,
            "its propose works through the 1.1 table");
    is_str(kevo_operator_result_failure_kind(res, 0), KEVO_FAIL_EXHAUSTED,
           "with its failure");
    like_str(kevo_operator_result_failure_reason(res, 0),
             "a 1.0 plugin on a host of ABI 1.", "and its reason");
    is_uint(kevo_operator_result_prompt_count(res), 0, "no prompt");
    kevo_operator_result_free(res);

    kevo_operator_revision rev = {.size = sizeof rev};
    rev.prompt_id = 4;
    rev.sections_json = "{\"strategy\": \"Go wide.\"}";
    uint64_t id = 77;
    is_int(kevo_operator_revise(op, &rev, &id, fresh()), KEVO_EINVAL,
           "asking it to revise is refused");
    like_str(err.text, "cannot revise prompts", "saying so");
    like_str(err.text, "ABI 1.0", "with its ABI");
    is_uint(kevo_operator_in_flight(op), 0, "nothing in flight");
    is_int(kevo_operator_host_next_result(host, &res), KEVO_DONE,
           "and no result");

    /* In-process, the same: a 1.0 descriptor's slot is never revise(). */
    kevo_operator_desc old = DESC("old_inproc");
    old.abi_minor = 0;
    old.struct_size = KEVO_OPERATOR_DESC_SIZE_1_0;
    old.revise = trap_revise;
    is_int(kevo_operator_host_register(host, &old, "old.c", fresh()), KEVO_OK,
           "an in-process 1.0 descriptor registers");
    kevo_operator *o2 = NULL;
    kevo_operator_host_add(host, "old_inproc", NULL, NULL, &o2, NULL);
    ok(o2 && !kevo_operator_can_revise(o2), "and cannot revise");
    is_int(kevo_operator_revise(o2, &rev, NULL, fresh()), KEVO_EINVAL,
           "so revise is refused before anything is called");
    ok(!kevo_operator_can_revise(NULL), "NULL cannot revise");
    kevo_operator_host_free(host);
}

/* ---- revision requests and usage (ABI 1.1) --------------------------------
 */

typedef struct reviser_record {
    char sections[512], name[64], record[512], best[64], best_summary[64];
    char worst[64], worst_summary[64], instance[32], prompt[512];
    int64_t prompt_id;
    kevo_status not_json, not_object, bad_key, empty_text, unchanged, good,
        again, second, child, unknown_id, null_sections;
    char bad_key_msg[512], unchanged_msg[512], again_msg[512], child_msg[512];
    kevo_status usage_ok, usage_negative, usage_nan, prompt_on_child;
} reviser_record;

static reviser_record rv;

typedef struct reviser {
    const kevo_host_api *api;
    kevo_host_ctx *ctx;
} reviser;

static kevo_status reviser_init(const kevo_host_api *api, kevo_host_ctx *ctx,
                                const char *config_json, void **state)
{
    (void)config_json;
    reviser *s = api->alloc(ctx, sizeof *s);
    if (!s)
        return KEVO_ENOMEM;
    s->api = api;
    s->ctx = ctx;
    *state = s;
    return KEVO_OK;
}

static void reviser_fini(void *state)
{
    reviser *s = state;
    s->api->free(s->ctx, s);
}

/* For a request for children: no prompt may be emitted; tokens spent. */
static kevo_status reviser_propose(void *state,
                                   const kevo_operator_request *req)
{
    reviser *s = state;
    copy_str(rv.prompt, sizeof rv.prompt, req->prompt_json);
    rv.prompt_on_child =
        s->api->emit_prompt(s->ctx, req->id, "{\"strategy\": \"y\"}", NULL);
    s->api->report_usage(s->ctx, 10, 5, 0.25);
    s->api->done(s->ctx, req->id);
    return KEVO_OK;
}

static kevo_status reviser_revise(void *state, const kevo_operator_revision *r)
{
    reviser *s = state;
    const kevo_host_api *api = s->api;
    kevo_host_ctx *ctx = s->ctx;
    uint64_t id = r->id;
    if (r->prompt_id == 98) {
        api->error(ctx, "the model is asleep");
        return KEVO_EIO;
    }
    if (r->prompt_id == 99)
        return KEVO_OK; /* a synchronous operator that forgets done */
    rv.prompt_id = r->prompt_id;
    copy_str(rv.sections, sizeof rv.sections, r->sections_json);
    copy_str(rv.name, sizeof rv.name, r->prompt_name);
    copy_str(rv.record, sizeof rv.record, r->record_json);
    copy_str(rv.best, sizeof rv.best, r->best_source);
    copy_str(rv.best_summary, sizeof rv.best_summary, r->best_summary_json);
    copy_str(rv.worst, sizeof rv.worst, r->worst_source);
    copy_str(rv.worst_summary, sizeof rv.worst_summary, r->worst_summary_json);
    copy_str(rv.instance, sizeof rv.instance, api->instance_name(ctx));

    rv.not_json = api->emit_prompt(ctx, id, "{", NULL);
    rv.not_object = api->emit_prompt(ctx, id, "[1]", NULL);
    rv.bad_key = api->emit_prompt(ctx, id, "{\"two words\": \"x\"}", NULL);
    copy_str(rv.bad_key_msg, sizeof rv.bad_key_msg, api->last_error(ctx));
    rv.empty_text = api->emit_prompt(ctx, id, "{\"strategy\": \"  \"}", NULL);
    rv.unchanged = api->emit_prompt(
        ctx, id,
        "{\"strategy\": \"Go wide.\", \"pitfalls\": \" Mind the tail.\\n\"}",
        NULL);
    copy_str(rv.unchanged_msg, sizeof rv.unchanged_msg, api->last_error(ctx));
    rv.good = api->emit_prompt(
        ctx, id,
        "{\"strategy\": \"Go wider.\", \"pitfalls\": \"Mind the tail.\"}",
        "wider");
    rv.again = api->emit_prompt(
        ctx, id,
        "{\"pitfalls\": \"Mind the tail.\", \"strategy\": \"Go wider.\"}",
        NULL);
    copy_str(rv.again_msg, sizeof rv.again_msg, api->last_error(ctx));
    rv.second = api->emit_prompt(ctx, id,
                                 "{\"strategy\": \"Go wider.\", \"pitfalls\": "
                                 "\"Mind the tail.\", \"analysis\": \"Read "
                                 "the slowest shape first.\"}",
                                 NULL);
    rv.child = api->emit_child(ctx, id, "__global__ void k() {}\n", NULL, NULL);
    copy_str(rv.child_msg, sizeof rv.child_msg, api->last_error(ctx));
    rv.unknown_id =
        api->emit_prompt(ctx, id + 1000, "{\"strategy\": \"z\"}", NULL);
    rv.null_sections = api->emit_prompt(ctx, id, NULL, NULL);
    rv.usage_ok = api->report_usage(ctx, 1000, 200, 0.125);
    rv.usage_negative = api->report_usage(ctx, 1, 1, -1);
    rv.usage_nan = api->report_usage(ctx, 1, 1, NAN);
    api->fail(ctx, id, KEVO_FAIL_PARSE, "one reply did not parse");
    api->done(ctx, id);
    return KEVO_OK;
}

/* ABI 1.2: it reads the JSON forms of prompts and summaries, which a host
 * keeps giving plugins of an older minor (test_texts() reads the arrays of
 * ABI 1.3). */
static const kevo_operator_desc reviser_desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = 2,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "reviser",
    .version = "1",
    .init = reviser_init,
    .propose = reviser_propose,
    .fini = reviser_fini,
    .revise = reviser_revise,
};

/* Submits rev to op and returns its result (op is synchronous). */
static kevo_operator_result *revise_one(kevo_operator_host *host,
                                        kevo_operator *op,
                                        const kevo_operator_revision *rev)
{
    uint64_t id = 0;
    if (kevo_operator_revise(op, rev, &id, fresh()) != KEVO_OK)
        bail_out("kevo_operator_revise: %s", err.text);
    kevo_operator_result *res = NULL;
    if (kevo_operator_host_next_result(host, &res) != KEVO_OK ||
        kevo_operator_result_id(res) != id)
        bail_out("no result for revision %llu", (unsigned long long)id);
    return res;
}

static void test_revise(void)
{
    kevo_operator_host *host = new_host(4);
    kevo_operator_host_register(host, &reviser_desc, NULL, NULL);
    kevo_operator *op = NULL, *other = NULL;
    is_int(kevo_operator_host_add(host, "reviser", "rv", NULL, &op, fresh()),
           KEVO_OK, "a 1.1 plugin with revise()");
    kevo_operator_host_add(host, "reviser", "rv2", NULL, &other, NULL);
    ok(kevo_operator_can_revise(op), "it can revise");

    /* The prompt comes from a pool, whole, as the pool writes it. */
    kevo_promptpool *pool = NULL;
    uint64_t pid = 0;
    kevo_promptpool_new(8, &pool, NULL);
    is_int(kevo_promptpool_add_json(pool, KEVO_PROMPT_NONE,
                                    "{\"name\": \"wide\", \"sections\": "
                                    "{\"strategy\": \"Go wide.\", "
                                    "\"pitfalls\": \"Mind the tail.\"}}",
                                    NULL, &pid, NULL, NULL, fresh()),
           KEVO_OK, "a prompt in a pool");
    char *whole = NULL;
    kevo_promptpool_prompt_json(pool, pid, &whole, NULL);
    kevo_prompt_record record = {.size = sizeof record};
    kevo_promptpool_get_record(pool, pid, &record);
    record.uses = 12;
    record.children = 10;
    record.entered = 4;
    record.beat_parent = 3;
    record.best_fitness = 0.75;
    record.best_child = 41;

    kevo_operator_revision rev = {.size = sizeof rev};
    rev.prompt_id = (int64_t)pid;
    rev.sections_json = whole;
    rev.record = &record;
    rev.record_json = "ignored";
    rev.best_source = "// the best";
    rev.best_summary_json = "{\"fitness\": 0.75}";
    rev.worst_source = "// the worst";
    memset(&rv, 0, sizeof rv);
    kevo_operator_result *res = revise_one(host, op, &rev);
    free(whole);

    is_int(rv.prompt_id, (int64_t)pid, "the plugin sees the prompt's id");
    is_str(rv.sections,
           "{\"pitfalls\":\"Mind the tail.\",\"strategy\":\"Go wide.\"}",
           "and its sections alone, from the whole prompt");
    is_str(rv.name, "wide", "its name, from the whole prompt");
    like_str(rv.record,
             "\"uses\":12,\"children\":10,\"entered\":4,"
             "\"beat_parent\":3,\"best_fitness\":0.75,"
             "\"best_child\":41,\"worst_fitness\":null",
             "the record as JSON, written by the host");
    is_str(rv.best, "// the best", "the best child's source");
    is_str(rv.best_summary, "{\"fitness\": 0.75}", "its summary");
    is_str(rv.worst, "// the worst", "the worst child's source");
    is_str(rv.worst_summary, "(null)", "no summary for it");
    is_str(rv.instance, "rv", "instance_name()");

    is_int(rv.not_json, KEVO_EPARSE, "emit_prompt: not JSON");
    is_int(rv.not_object, KEVO_EINVALID, "emit_prompt: not an object");
    is_int(rv.bad_key, KEVO_EINVALID, "emit_prompt: a bad section name");
    like_str(rv.bad_key_msg, "$.two words", "names the JSON path");
    like_str(rv.bad_key_msg, "identifier", "says why");
    is_int(rv.empty_text, KEVO_EINVALID, "emit_prompt: an empty text");
    is_int(rv.unchanged, KEVO_EEXIST,
           "emit_prompt: the prompt unchanged (white space aside)");
    like_str(rv.unchanged_msg, "unchanged", "says so");
    is_int(rv.good, KEVO_OK, "emit_prompt: a revision");
    is_int(rv.again, KEVO_EEXIST, "emit_prompt: the same revision again");
    like_str(rv.again_msg, "already gave", "says so");
    is_int(rv.second, KEVO_OK, "emit_prompt: a second revision");
    is_int(rv.child, KEVO_EINVAL, "emit_child on a revision request");
    like_str(rv.child_msg, "emit_prompt", "points to emit_prompt");
    is_int(rv.unknown_id, KEVO_EINVAL, "emit_prompt: an unknown request");
    is_int(rv.null_sections, KEVO_EINVAL, "emit_prompt: NULL sections");
    is_int(rv.usage_ok, KEVO_OK, "report_usage");
    is_int(rv.usage_negative, KEVO_EINVAL, "report_usage: a negative cost");
    is_int(rv.usage_nan, KEVO_EINVAL, "report_usage: a NaN cost");

    is_uint(kevo_operator_result_child_count(res), 0, "no child");
    is_uint(kevo_operator_result_prompt_count(res), 2, "two revised prompts");
    is_str(kevo_operator_result_prompt(res, 0),
           "{\"sections\":{\"pitfalls\":\"Mind the tail.\",\"strategy\":"
           "\"Go wider.\"}}",
           "the first, in the form kevo_promptpool_add_json() takes");
    is_str(kevo_operator_result_prompt_note(res, 0), "wider", "its note");
    ok(kevo_operator_result_prompt_note(res, 1) == NULL, "no note");
    ok(kevo_operator_result_prompt(res, 2) == NULL, "prompt 2: none");
    ok(kevo_operator_result_prompt_note(res, 2) == NULL, "note 2: none");
    ok(kevo_operator_result_prompt(NULL, 0) == NULL, "NULL result");
    is_uint(kevo_operator_result_failure_count(res), 1, "and its failure");

    uint64_t child = 0, evicted = 0;
    int added = 0;
    is_int(kevo_promptpool_add_json(pool, pid,
                                    kevo_operator_result_prompt(res, 0), "rv",
                                    &child, &added, &evicted, fresh()),
           KEVO_OK, "the revised prompt goes into the pool");
    ok(added == 1 && child != pid, "as a new prompt");
    is_uint(kevo_promptpool_parent(pool, child), pid, "whose parent it is");
    is_uint(kevo_promptpool_generation(pool, child), 1, "generation 1");
    is_str(kevo_promptpool_name(pool, child), "wide", "with its name");
    is_str(kevo_promptpool_section(pool, child, "strategy"), "Go wider.",
           "and the revised text");
    kevo_operator_result_free(res);

    /* Usage: per instance and over the host. */
    kevo_operator_request req = request(parent, 1);
    req.prompt_json = "{\"id\": 3, \"name\": null, \"sections\": "
                      "{\"strategy\": \"Go wide.\"}}";
    kevo_operator_result_free(run_one(host, other, &req));
    is_str(rv.prompt, "{\"strategy\":\"Go wide.\"}",
           "a request's whole prompt reaches the plugin as its sections");
    is_int(rv.prompt_on_child, KEVO_EINVAL, "emit_prompt on a child request");
    uint64_t in = 0, out = 0;
    double cost = 0;
    is_int(kevo_operator_usage(op, &in, &out, &cost), KEVO_OK, "usage");
    ok(in == 1000 && out == 200 && cost == 0.125,
       "one instance's usage: %llu, %llu, %g", (unsigned long long)in,
       (unsigned long long)out, cost);
    kevo_operator_usage(other, &in, &out, &cost);
    ok(in == 10 && out == 5 && cost == 0.25, "the other's");
    is_int(kevo_operator_host_usage(host, &in, &out, &cost), KEVO_OK,
           "the host's usage");
    ok(in == 1010 && out == 205 && cost == 0.375, "sums them: %llu, %llu, %g",
       (unsigned long long)in, (unsigned long long)out, cost);
    is_int(kevo_operator_usage(NULL, &in, &out, &cost), KEVO_EINVAL,
           "usage of NULL");
    ok(in == 0 && out == 0 && cost == 0, "is zero");
    is_int(kevo_operator_host_usage(NULL, NULL, NULL, NULL), KEVO_EINVAL,
           "host usage of NULL");

    /* Bad revision requests: refused before anything is called. */
    kevo_operator_revision bad = rev;
    bad.sections_json = "{\"strategy\": \"Go wide.\"}";
    is_int(kevo_operator_revise(NULL, &bad, NULL, fresh()), KEVO_EINVAL,
           "revise: NULL op");
    is_int(kevo_operator_revise(op, NULL, NULL, fresh()), KEVO_EINVAL,
           "revise: NULL request");
    bad.size = 16;
    is_int(kevo_operator_revise(op, &bad, NULL, fresh()), KEVO_EINVAL,
           "revise: a request too small");
    bad.size = sizeof bad;
    bad.sections_json = NULL;
    is_int(kevo_operator_revise(op, &bad, NULL, fresh()), KEVO_EINVAL,
           "revise: no sections");
    bad.sections_json = "{\"strategy\": ";
    is_int(kevo_operator_revise(op, &bad, NULL, fresh()), KEVO_EPARSE,
           "revise: sections that are not JSON");
    bad.sections_json = "{\"strategy\": 3}";
    is_int(kevo_operator_revise(op, &bad, NULL, fresh()), KEVO_EINVALID,
           "revise: a section that is not text");
    like_str(err.text, "$.strategy", "names the path");
    bad.sections_json = "{\"name\": \"w\", \"sections\": {\"strategy\": \"\"}}";
    is_int(kevo_operator_revise(op, &bad, NULL, fresh()), KEVO_EINVALID,
           "revise: a whole prompt with an empty section");
    like_str(err.text, "$.sections.strategy", "names the path");
    bad.sections_json = "{}";
    is_int(kevo_operator_revise(op, &bad, NULL, fresh()), KEVO_EINVALID,
           "revise: no section");
    bad.sections_json = "{\"strategy\": \"Go wide.\"}";
    kevo_prompt_record small = {.size = 8};
    bad.record = &small;
    is_int(kevo_operator_revise(op, &bad, NULL, fresh()), KEVO_EINVAL,
           "revise: a record too small");
    is_uint(kevo_operator_in_flight(op), 0, "nothing went in flight");
    is_int(kevo_operator_host_next_result(host, &res), KEVO_DONE,
           "and no result is waiting");

    /* A bare sections object and no record; the plugin failing. */
    bad.record = NULL;
    bad.prompt_name = "given";
    memset(&rv, 0, sizeof rv);
    res = revise_one(host, op, &bad);
    is_str(rv.sections, "{\"strategy\":\"Go wide.\"}", "bare sections");
    is_str(rv.name, "given", "the caller's name");
    is_str(rv.record, "(null)", "no record, no record_json");
    kevo_operator_result_free(res);
    bad.prompt_id = 98;
    res = revise_one(host, op, &bad);
    is_uint(kevo_operator_result_failure_count(res), 1,
            "a failing revise ends its request");
    like_str(kevo_operator_result_failure_reason(res, 0),
             "revise failed: the model is asleep", "with the plugin's message");
    kevo_operator_result_free(res);
    bad.prompt_id = 99;
    res = revise_one(host, op, &bad);
    like_str(kevo_operator_result_failure_reason(res, 0),
             "revise returned without ending the request",
             "a synchronous revise that forgets done");
    is_uint(kevo_operator_in_flight(op), 0, "nothing left in flight");
    kevo_operator_result_free(res);

    /* Operators without revise(). */
    kevo_operator *sk = NULL;
    kevo_operator_host_add(host, "skeleton", NULL, "{\"tries\": 2}", &sk, NULL);
    ok(sk && kevo_operator_plugin(sk)->abi_minor == KEVO_OPERATOR_ABI_MINOR &&
           !kevo_operator_can_revise(sk),
       "a 1.1 plugin without revise() cannot revise");
    is_int(kevo_operator_revise(sk, &bad, NULL, fresh()), KEVO_EINVAL,
           "and is not asked");
    kevo_promptpool_free(pool);
    kevo_operator_host_free(host);
}

/* ---- many requests in flight, ended in any order ------------------------ */

#define MANY 300

typedef struct many_state {
    const kevo_host_api *api;
    kevo_host_ctx *ctx;
    const kevo_operator_request *reqs[MANY];
    size_t n;
    bool forget; /* poll reports nothing in flight and ends nothing */
} many_state;

static int many_bad; /* host calls on ended requests that did not fail */

static kevo_status many_init(const kevo_host_api *api, kevo_host_ctx *ctx,
                             const char *config_json, void **state)
{
    many_state *s = api->alloc(ctx, sizeof *s);
    if (!s)
        return KEVO_ENOMEM;
    memset(s, 0, sizeof *s);
    s->api = api;
    s->ctx = ctx;
    s->forget = config_json && strstr(config_json, "forget");
    *state = s;
    return KEVO_OK;
}

static kevo_status many_propose(void *state, const kevo_operator_request *req)
{
    many_state *s = state;
    if (s->n == MANY)
        return KEVO_ELIMIT;
    s->reqs[s->n++] = req;
    return KEVO_OK;
}

/* Ends a few requests picked at random, each with a failure naming it. */
static size_t many_poll(void *state, int timeout_ms)
{
    (void)timeout_ms;
    many_state *s = state;
    const kevo_host_api *api = s->api;
    if (s->forget)
        return 0;
    for (int k = 0; k < 7 && s->n > 0; k++) {
        size_t i = (size_t)api->uniform_int(s->ctx, s->n);
        uint64_t id = s->reqs[i]->id;
        char why[64];
        snprintf(why, sizeof why, "request %llu", (unsigned long long)id);
        if (api->fail(s->ctx, id, KEVO_FAIL_EXHAUSTED, why) != KEVO_OK ||
            api->done(s->ctx, id) != KEVO_OK)
            many_bad++;
        if (api->done(s->ctx, id) != KEVO_EINVAL ||
            api->fail(s->ctx, id, "x", "y") != KEVO_EINVAL)
            many_bad++;
        s->reqs[i] = s->reqs[--s->n];
    }
    return s->n;
}

static void many_fini(void *state)
{
    many_state *s = state;
    s->api->free(s->ctx, s);
}

static const kevo_operator_desc many_desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = KEVO_OPERATOR_ABI_MINOR,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "many",
    .version = "1",
    .init = many_init,
    .propose = many_propose,
    .poll = many_poll,
    .fini = many_fini,
};

static void test_many(void)
{
    kevo_operator_host *host = new_host(8);
    kevo_operator_host_register(host, &many_desc, NULL, NULL);
    kevo_operator *a = NULL, *b = NULL;
    kevo_operator_host_add(host, "many", "ma", NULL, &a, NULL);
    kevo_operator_host_add(host, "many", "mb", NULL, &b, NULL);
    static uint64_t ids[2 * MANY];
    static int got[2 * MANY];
    kevo_operator_request req = request(parent, 1);
    size_t n = 0, left = 0;
    int rounds = 0;
    many_bad = 0;
    memset(got, 0, sizeof got);
    /* Submit in waves while earlier requests end, so that the table grows,
     * shrinks around holes and wraps. */
    for (int wave = 0; wave < 4; wave++) {
        for (int i = 0; i < MANY / 2; i++, n++)
            kevo_operator_submit(n % 2 ? b : a, &req, &ids[n], NULL);
        for (int r = 0; r < 5; r++, rounds++)
            kevo_operator_host_poll(host, 0, &left, NULL);
    }
    while (left > 0 && rounds++ < 1000)
        kevo_operator_host_poll(host, 0, &left, NULL);
    is_uint(left, 0, "%zu requests of two instances all ended", n);
    is_int(many_bad, 0, "each ended once; fail and done on it after fail");
    kevo_operator_result *res;
    size_t results = 0, right = 0;
    while (kevo_operator_host_next_result(host, &res) == KEVO_OK) {
        uint64_t id = kevo_operator_result_id(res);
        char want[64];
        snprintf(want, sizeof want, "request %llu", (unsigned long long)id);
        right += kevo_operator_result_failure_count(res) == 1 &&
                 strcmp(kevo_operator_result_failure_reason(res, 0), want) == 0;
        if (id >= 1 && id <= n)
            got[id - 1]++;
        results++;
        kevo_operator_result_free(res);
    }
    is_uint(results, n, "one result per request");
    is_uint(right, n, "each holding its own failure");
    int once = 0;
    for (size_t i = 0; i < n; i++)
        once += got[i] == 1;
    is_int(once, (int)n, "every id exactly once");

    /* An operator that forgets its requests: the host ends each. */
    kevo_operator *f = NULL;
    kevo_operator_host_add(host, "many", "mf", "{\"forget\": true}", &f, NULL);
    for (int i = 0; i < 40; i++)
        kevo_operator_submit(i % 4 ? f : a, &req, NULL, NULL);
    kevo_operator_host_poll(host, 0, &left, NULL);
    is_uint(kevo_operator_in_flight(f), 0,
            "requests an operator forgot are ended");
    int forgotten = 0;
    while (kevo_operator_host_next_result(host, &res) == KEVO_OK) {
        forgotten += kevo_operator_result_failure_count(res) == 1 &&
                     strstr(kevo_operator_result_failure_reason(res, 0),
                            "reports nothing in flight") != NULL;
        kevo_operator_result_free(res);
    }
    is_int(forgotten, 30, "each with a failure saying so");
    while (left > 0 && rounds++ < 2000)
        kevo_operator_host_poll(host, 0, &left, NULL);
    is_uint(left, 0, "the other instance's requests still end");
    is_int(many_bad, 0, "and each once");
    kevo_operator_host_free(host);
}

/* ---- ABI 1.3: named texts, notes, blocks, includes ----------------------
 * A plugin of ABI 1.3 reads prompts and notes as arrays of named texts, and
 * asks the host where a source's blocks are and which headers a kernel may
 * include; the same request reaches a plugin of ABI 1.2 as JSON text. */

typedef struct texts_record {
    char prompt_json[256], parent_summary[64], insp_summary[64];
    char sections[256]; /* "name=text;" for each section */
    char parent_eval[64], insp_eval[64];
    size_t n_notes, second_items;
    uint64_t parent_note_id;
    /* find_blocks() of a source with both blocks, then of an unterminated
     * launch block after a line comment that holds a second param block */
    kevo_status blocks_rc, small_rc;
    kevo_operator_blocks bl;
    char launch_names[64], param_names[64];
    kevo_operator_block open_launch, open_param;
    int fp16, stdio, quoted, cstd;
    char rule[256];
    /* revision */
    char rev_sections[256], rev_json[64], rev_record[512], best_eval[64];
    size_t worst_items;
    uint64_t best_id;
    kevo_status good, bad_name, empty, unchanged, again, none, null_id;
    char bad_name_msg[256];
} texts_record;

static texts_record tr;

static void join_texts(char *dst, size_t size, const kevo_operator_text *t,
                       size_t n)
{
    dst[0] = '\0';
    for (size_t i = 0; i < n; i++)
        snprintf(dst + strlen(dst), size - strlen(dst), "%s=%s;", t[i].name,
                 t[i].text);
}

static const char *note_of(const kevo_operator_notes *notes, size_t n, size_t i,
                           const char *name)
{
    for (size_t k = 0; i < n && k < notes[i].n_items; k++) {
        if (strcmp(notes[i].items[k].name, name) == 0)
            return notes[i].items[k].text;
    }
    return NULL;
}

/* b's names, a line each, as "a,b" (the host's string freed). */
static void join_names(char *dst, size_t size, const kevo_host_api *api,
                       kevo_host_ctx *ctx, kevo_operator_block *b)
{
    snprintf(dst, size, "%s", b->names ? b->names : "");
    for (char *p = dst; *p; p++) {
        if (*p == '\n')
            *p = p[1] ? ',' : '\0';
    }
    api->free(ctx, b->names);
    b->names = NULL;
}

static const char blocks_source[] =
    "// kevo:param\n"
    "//   VEC in {1, 2, 4} = 1\n"
    "//   ITEMS in {1, 2} = 1\n"
    "/* kevo:launch\n"
    " *   saxpy<<<ceil_div(n, 256 * VEC), 256>>>(a, x, y, z, n)\n"
    " *   tail <<<1, 32>>>(z, n)\n"
    " *   saxpy<<<1, 1>>>(a, x, y, z, n)\n"
    " */\n"
    "/* kevo:launch\n *   other<<<1, 1>>>() */\n"
    "__global__ void saxpy() {}\n";

static kevo_status texts_propose(void *state, const kevo_operator_request *req)
{
    reviser *s = state; /* the reviser's state: api and ctx */
    const kevo_host_api *api = s->api;
    kevo_host_ctx *ctx = s->ctx;
    copy_str(tr.prompt_json, sizeof tr.prompt_json, req->prompt_json);
    copy_str(tr.parent_summary, sizeof tr.parent_summary,
             req->parent_summary_json);
    copy_str(tr.insp_summary, sizeof tr.insp_summary,
             req->n_inspirations ? req->inspirations[0].summary_json : NULL);
    join_texts(tr.sections, sizeof tr.sections, req->prompt_sections,
               req->n_prompt_sections);
    tr.n_notes = req->n_notes;
    copy_str(tr.parent_eval, sizeof tr.parent_eval,
             note_of(req->notes, req->n_notes, 0, KEVO_NOTE_EVALUATION));
    copy_str(tr.insp_eval, sizeof tr.insp_eval,
             note_of(req->notes, req->n_notes, 2, KEVO_NOTE_EVALUATION));
    tr.second_items = req->n_notes > 1 ? req->notes[1].n_items : 99;
    tr.parent_note_id = req->n_notes ? req->notes[0].candidate : 0;
    if (api->abi_minor >= 3) {
        tr.bl = (kevo_operator_blocks){.size = sizeof tr.bl};
        tr.blocks_rc =
            api->find_blocks(ctx, blocks_source, strlen(blocks_source), &tr.bl);
        join_names(tr.launch_names, sizeof tr.launch_names, api, ctx,
                   &tr.bl.launch);
        join_names(tr.param_names, sizeof tr.param_names, api, ctx,
                   &tr.bl.param);
        kevo_operator_blocks open = {.size = sizeof open};
        static const char unterminated[] =
            "int x; // kevo:param X in {1}\n/* kevo:launch\n *   k<<<1, 1>>>()";
        api->find_blocks(ctx, unterminated, sizeof unterminated - 1, &open);
        tr.open_launch = open.launch;
        tr.open_param = open.param;
        api->free(ctx, open.launch.names);
        api->free(ctx, open.param.names);
        kevo_operator_blocks small = {.size = 8};
        tr.small_rc = api->find_blocks(ctx, "x", 1, &small);
        tr.fp16 = api->include_allowed(ctx, "cuda_fp16.h");
        tr.stdio = api->include_allowed(ctx, "stdio.h");
        tr.quoted = api->include_allowed(ctx, "\"cuda_fp16.h\"");
        tr.cstd = api->include_allowed(ctx, "cuda/std/cstdint");
        copy_str(tr.rule, sizeof tr.rule, api->include_rule(ctx));
    }
    api->done(ctx, req->id);
    return KEVO_OK;
}

static kevo_status texts_revise(void *state, const kevo_operator_revision *r)
{
    reviser *s = state; /* the reviser's state: api and ctx */
    const kevo_host_api *api = s->api;
    kevo_host_ctx *ctx = s->ctx;
    join_texts(tr.rev_sections, sizeof tr.rev_sections, r->sections,
               r->n_sections);
    copy_str(tr.rev_json, sizeof tr.rev_json, r->sections_json);
    copy_str(tr.rev_record, sizeof tr.rev_record, r->record_json);
    copy_str(tr.best_eval, sizeof tr.best_eval,
             note_of(r->notes, r->n_notes, 0, KEVO_NOTE_EVALUATION));
    tr.worst_items = r->n_notes > 1 ? r->notes[1].n_items : 99;
    tr.best_id = r->n_notes ? r->notes[0].candidate : 0;
    kevo_operator_text revised[] = {{"strategy", "  Go wider.\n"},
                                    {"pitfalls", "Mind the tail."}};
    kevo_operator_text bad[] = {{"two words", "x"}};
    kevo_operator_text empty[] = {{"strategy", " "}};
    tr.good = api->emit_prompt_sections(ctx, r->id, revised, 2, "wider");
    tr.again = api->emit_prompt_sections(ctx, r->id, revised, 2, NULL);
    tr.bad_name = api->emit_prompt_sections(ctx, r->id, bad, 1, NULL);
    copy_str(tr.bad_name_msg, sizeof tr.bad_name_msg, api->last_error(ctx));
    tr.empty = api->emit_prompt_sections(ctx, r->id, empty, 1, NULL);
    tr.unchanged =
        api->emit_prompt_sections(ctx, r->id, r->sections, r->n_sections, NULL);
    tr.none = api->emit_prompt_sections(ctx, r->id, NULL, 0, NULL);
    tr.null_id = api->emit_prompt_sections(ctx, r->id + 1000, revised, 2, NULL);
    api->done(ctx, r->id);
    return KEVO_OK;
}

static const kevo_operator_desc texts_desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = KEVO_OPERATOR_ABI_MINOR,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "texts",
    .version = "1",
    .init = reviser_init,
    .propose = texts_propose,
    .fini = reviser_fini,
    .revise = texts_revise,
};

/* The same plugin, built against ABI 1.2. */
static const kevo_operator_desc texts12_desc = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = 2,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "texts12",
    .version = "1",
    .init = reviser_init,
    .propose = texts_propose,
    .fini = reviser_fini,
    .revise = texts_revise,
};

static void test_texts(void)
{
    kevo_operator_host *host = new_host(13);
    kevo_operator_host_register(host, &texts_desc, NULL, NULL);
    kevo_operator_host_register(host, &texts12_desc, NULL, NULL);
    kevo_operator *op = NULL, *old = NULL;
    is_int(kevo_operator_host_add(host, "texts", NULL, NULL, &op, fresh()),
           KEVO_OK, "a plugin of ABI 1.3");
    kevo_operator_host_add(host, "texts12", NULL, NULL, &old, NULL);

    /* A caller of JSON text: the 1.3 plugin reads arrays. */
    kevo_operator_inspiration insp = {parent, "{\"fitness\": 0.25}"};
    kevo_operator_request req = request(parent, 1);
    req.prompt_json = "{\"name\": \"w\", \"sections\": {\"strategy\": \"x\", "
                      "\"analysis\": \"y\"}}";
    req.parent_summary_json = "{\"fitness\": 0.5}";
    req.inspirations = &insp;
    req.n_inspirations = 1;
    memset(&tr, 0, sizeof tr);
    kevo_operator_result_free(run_one(host, op, &req));
    is_str(tr.prompt_json, "(null)", "1.3: no prompt_json");
    is_str(tr.parent_summary, "(null)", "1.3: no parent_summary_json");
    is_str(tr.insp_summary, "(null)", "1.3: no summary_json of inspirations");
    is_str(tr.sections, "strategy=x;analysis=y;",
           "1.3: the prompt's sections, in its order, from the whole prompt");
    is_uint(tr.n_notes, 3, "notes: parent, second parent, an inspiration");
    is_str(tr.parent_eval, "{\"fitness\": 0.5}",
           "the parent's summary became its evaluation note");
    is_uint(tr.second_items, 0, "no second parent, no notes");
    is_str(tr.insp_eval, "{\"fitness\": 0.25}", "the inspiration's note");
    is_uint(tr.parent_note_id, kevo_candidate_id(parent),
            "each entry names its candidate");

    is_int(tr.blocks_rc, KEVO_OK, "find_blocks");
    ok(tr.bl.param.found && tr.bl.param.closed && tr.bl.param.start == 0,
       "the param block: a run of line comments from offset 0");
    const char *param_end = strstr(blocks_source, "= 1\n/*");
    is_uint(tr.bl.param.end, (size_t)(param_end - blocks_source) + 3,
            "to the end of its last line, the newline left out");
    is_str(tr.param_names, "VEC,ITEMS", "the parameters it declares");
    const char *launch = strstr(blocks_source, "/* kevo:launch");
    ok(tr.bl.launch.found && tr.bl.launch.closed,
       "the first launch block, closed");
    is_uint(tr.bl.launch.start, (size_t)(launch - blocks_source),
            "from its opening delimiter");
    is_uint(tr.bl.launch.end,
            (size_t)(strstr(launch, "*/\n") + 2 - blocks_source),
            "to past its closing one");
    is_str(tr.launch_names, "saxpy,tail",
           "the kernels it launches, once each; the second block ignored");
    ok(tr.open_launch.found && !tr.open_launch.closed,
       "an unterminated launch block is found, not closed");
    ok(tr.open_param.found && tr.open_param.closed &&
           tr.open_param.n_names == 1,
       "a line comment after code is a block too");
    is_int(tr.small_rc, KEVO_EINVAL, "find_blocks: a struct too small");
    ok(tr.fp16 && tr.cstd && !tr.stdio && !tr.quoted,
       "include_allowed: <cuda_fp16.h>, <cuda/std/...>; not <stdio.h>");
    like_str(tr.rule, "<cuda_fp16.h>", "include_rule lists the headers");

    /* A caller of arrays: the 1.2 plugin reads JSON text. */
    kevo_operator_text sections[] = {{"strategy", "x"}, {"pitfalls", "p"}};
    kevo_operator_text eval[] = {{"gate", "passed"},
                                 {KEVO_NOTE_EVALUATION, "{\"fitness\": 0.5}"}};
    kevo_operator_notes notes[3] = {
        {kevo_candidate_id(parent), eval, 2}, {0, NULL, 0}, {0, eval + 1, 1}};
    req = request(parent, 1);
    req.prompt_sections = sections;
    req.n_prompt_sections = 2;
    req.notes = notes;
    req.n_notes = 3;
    req.inspirations = &insp;
    req.n_inspirations = 1;
    insp.summary_json = NULL;
    memset(&tr, 0, sizeof tr);
    kevo_operator_result_free(run_one(host, old, &req));
    is_str(tr.prompt_json, "{\"strategy\":\"x\",\"pitfalls\":\"p\"}",
           "1.2: the caller's sections as prompt_json");
    is_str(tr.parent_summary, "{\"fitness\": 0.5}",
           "1.2: the evaluation note as parent_summary_json");
    is_str(tr.insp_summary, "{\"fitness\": 0.5}", "and the inspiration's");
    is_uint(tr.n_notes, 0, "1.2: no notes");
    memset(&tr, 0, sizeof tr);
    kevo_operator_result_free(run_one(host, op, &req));
    is_str(tr.sections, "strategy=x;pitfalls=p;", "1.3: the caller's sections");
    is_str(tr.parent_eval, "{\"fitness\": 0.5}", "1.3: the caller's notes");

    /* Bad texts: refused before anything is called. */
    kevo_operator_text nameless[] = {{NULL, "x"}};
    req.prompt_sections = nameless;
    req.n_prompt_sections = 1;
    is_int(kevo_operator_submit(op, &req, NULL, fresh()), KEVO_EINVAL,
           "submit: a section without a name");
    like_str(err.text, "section 0 has no name", "says which");
    req.prompt_sections = sections;
    req.n_prompt_sections = 2;
    req.n_notes = 4;
    is_int(kevo_operator_submit(old, &req, NULL, fresh()), KEVO_EINVAL,
           "submit: more notes than candidates");
    req.n_notes = 0;
    req.prompt_sections = NULL;
    req.n_prompt_sections = 0;
    req.prompt_json = "{\"strategy\": ";
    is_int(kevo_operator_submit(op, &req, NULL, fresh()), KEVO_EPARSE,
           "submit: a prompt that is not JSON, for a 1.3 plugin");
    req.prompt_json = "{\"strategy\": 3}";
    is_int(kevo_operator_submit(op, &req, NULL, fresh()), KEVO_EINVALID,
           "submit: a section that is not text, for a 1.3 plugin");
    like_str(err.text, "$.strategy", "names the path");
    is_uint(kevo_operator_in_flight(op), 0, "nothing went in flight");

    /* A revision from arrays: sections, record and notes. */
    kevo_operator_text prompt[] = {{"strategy", "Go wide."},
                                   {"pitfalls", "Mind the tail."}};
    kevo_prompt_record record = {.size = sizeof record, .best_child = 41};
    kevo_operator_notes best[1] = {{41, eval + 1, 1}};
    kevo_operator_revision rev = {.size = sizeof rev};
    rev.prompt_id = 7;
    rev.sections = prompt;
    rev.n_sections = 2;
    rev.record = &record;
    rev.notes = best;
    rev.n_notes = 1;
    memset(&tr, 0, sizeof tr);
    kevo_operator_result *res = revise_one(host, op, &rev);
    is_str(tr.rev_sections, "pitfalls=Mind the tail.;strategy=Go wide.;",
           "revise: the sections, names in byte order");
    is_str(tr.rev_json, "(null)", "no sections_json for 1.3");
    is_str(tr.rev_record, "(null)", "nor record_json");
    is_str(tr.best_eval, "{\"fitness\": 0.5}", "the best child's notes");
    is_uint(tr.best_id, 41, "named by its id");
    is_uint(tr.worst_items, 0, "the worst child has none");
    is_int(tr.good, KEVO_OK, "emit_prompt_sections");
    is_int(tr.again, KEVO_EEXIST, "the same prompt again");
    is_int(tr.bad_name, KEVO_EINVALID, "a section name that is no identifier");
    like_str(tr.bad_name_msg, "two words", "named");
    is_int(tr.empty, KEVO_EINVALID, "an empty text");
    is_int(tr.unchanged, KEVO_EEXIST, "the prompt unchanged");
    is_int(tr.none, KEVO_EINVALID, "no sections");
    is_int(tr.null_id, KEVO_EINVAL, "an unknown request");
    size_t n = 0;
    const kevo_operator_text *got =
        kevo_operator_result_prompt_sections(res, 0, &n);
    ok(got && n == 2 && strcmp(got[0].name, "pitfalls") == 0 &&
           strcmp(got[1].text, "Go wider.") == 0,
       "the result's prompt as named texts, sorted and trimmed");
    ok(!kevo_operator_result_prompt_sections(res, 1, &n) && n == 0,
       "prompt 1: none");
    is_str(kevo_operator_result_prompt(res, 0),
           "{\"sections\":{\"pitfalls\":\"Mind the tail.\",\"strategy\":"
           "\"Go wider.\"}}",
           "and as JSON text");
    is_str(kevo_operator_result_prompt_note(res, 0), "wider", "its note");
    kevo_operator_result_free(res);

    /* The same revision reaches a 1.2 plugin as JSON text. */
    rev.best_summary_json = NULL;
    memset(&tr, 0, sizeof tr);
    res = revise_one(host, old, &rev);
    is_str(tr.rev_json,
           "{\"pitfalls\":\"Mind the tail.\",\"strategy\":\"Go wide.\"}",
           "revise 1.2: sections_json from the caller's sections");
    like_str(tr.rev_record, "\"best_child\":41", "and record_json");
    is_str(tr.rev_sections, "", "no sections");
    kevo_operator_result_free(res);
    rev.n_notes = 3;
    is_int(kevo_operator_revise(op, &rev, NULL, fresh()), KEVO_EINVAL,
           "revise: more than two notes");
    rev.n_notes = 0;
    rev.n_sections = 0;
    is_int(kevo_operator_revise(op, &rev, NULL, fresh()), KEVO_EINVAL,
           "revise: neither sections nor sections_json");
    kevo_operator_host_free(host);
}

/* ---- plugins reach kevo only through the table ----------------------------
 */

static void test_symbols(void)
{
    const char *nm = getenv("NM");
    const char *libs[] = {"operators/.libs/params.so",
                          "examples/.libs/skeleton.so"};
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(libs); i++) {
        char *path = build_path(libs[i]);
        char *cmd =
            kevo__asprintf("%s -D %s 2>/dev/null", nm && *nm ? nm : "nm", path);
        FILE *p = cmd ? popen(cmd, "r") : NULL;
        if (!p)
            bail_out("cannot run nm");
        char line[512];
        int undefined_kevo = 0, exported = 0, entry = 0;
        while (fgets(line, sizeof line, p)) {
            char addr[64], type[8], name[256];
            int n = sscanf(line, "%63s %7s %255s", addr, type, name);
            if (n == 2 && strcmp(addr, "U") == 0 &&
                strncmp(type, "kevo_", 5) == 0)
                undefined_kevo++;
            if (n == 3 && strcmp(type, "T") == 0) {
                exported++;
                entry += strcmp(name, "kevo_operator_entry") == 0;
            }
        }
        pclose(p);
        is_int(undefined_kevo, 0, "%s needs no kevo_ symbol", libs[i]);
        is_int(entry, 1, "%s exports kevo_operator_entry", libs[i]);
        is_int(exported, 1, "%s exports no other function", libs[i]);
        free(cmd);
        free(path);
    }
}

int main(void)
{
    const char *b = getenv("KEVO_BUILDDIR");
    snprintf(builddir, sizeof builddir, "%s", b && *b ? b : ".");
    char *path = kevo__asprintf("%s/examples/.libs:%s/operators/.libs::"
                                "%s/tests/plugins/.libs",
                                builddir, builddir, builddir);
    setenv(KEVO_OPERATOR_PATH_ENV, path, 1);
    free(path);
    char *task_file =
        kevo__path_join(tap_srcdir(), "examples/tasks/saxpy.json");
    if (kevo_task_load(task_file, &task, fresh()) != KEVO_OK)
        bail_out("%s", err.text);
    free(task_file);
    parent = for_task(kevo_candidate_source(kevo_task_seed(task)));

    kevo_operator_host *host = NULL;
    is_int(kevo_operator_host_new(NULL, 1, &host, fresh()), KEVO_EINVAL,
           "a host needs a task");
    ok(host == NULL, "none made");
    kevo_operator_host_free(NULL);

    test_skeleton();
    test_broken();
    test_register();
    test_probe();
    test_async();
    test_abi_1_0();
    test_revise();
    test_texts();
    test_many();
    test_symbols();

    kevo_candidate_free(parent);
    kevo_task_free(task);
    return done_testing();
}

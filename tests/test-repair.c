/*
 * test-repair.c: what operator ABI 1.2 added to the operator host. A
 * plugin's calls of emit_child() are numbered per request, refused calls
 * included; a refused call keeps its source and the host's reason in the
 * result (an #include kernels may not have is refused with the include
 * scan's own message, by check() too); requests carry the recent failed
 * attempts of their parent and revision requests a prompt's failure kinds
 * and failed children, each copied; repair requests reach a plugin's
 * repair() with the failed child, its attempt, kind and diagnostic, and
 * give back at most one child with the failed child's lineage; bad repair
 * requests are refused before the plugin is called; and a plugin of ABI
 * 1.1, whose descriptor slot for repair() is reserved, is never taken for
 * one that repairs.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kevo_private.h"
#include "tap.h"

static kevo_error err;
static char builddir[1024];
static kevo_task *task;
static kevo_candidate *parent;
static char *refused_source; /* the parent with a forbidden #include */
static char *variant_source; /* the parent with a comment added */

static kevo_error *fresh(void)
{
    kevo_error_init(&err);
    return &err;
}

/* ---- an operator that emits, checks and repairs -------------------------- */

typedef enum mode {
    EMIT_TWO,      /* a refused attempt, then a good child */
    CHECK_PARENT,  /* only api->check() of the parent */
    REPAIR_TWICE,  /* a repair, then a second child (refused) */
    REPAIR_SAME_1, /* the failed child unchanged, then a repair */
} mode;

typedef struct seen {
    mode mode;
    /* propose */
    size_t n_failures;
    char failure_kind[2][32], failure_diag[2][128];
    uint64_t failure_candidate[2];
    bool failures_copied;
    kevo_status emit[2];
    char emit_msg[2][512];
    kevo_status check;
    char check_msg[512];
    /* repair */
    int repairs;
    uint64_t rep_id, rep_request;
    uint32_t rep_attempt, rep_turn, rep_turns_left;
    char rep_kind[32], rep_diag[512];
    bool rep_child, rep_parent, rep_source_ok;
    int64_t rep_prompt;
    /* revise */
    size_t n_kinds, n_failed;
    char kind0[32], failed_diag[128];
    uint64_t count0, count1, failed_candidate;
} seen;

static seen S;
static const kevo_host_api *A;
static kevo_host_ctx *C;

static kevo_status fx_init(const kevo_host_api *api, kevo_host_ctx *ctx,
                           const char *config_json, void **state)
{
    (void)config_json;
    A = api;
    C = ctx;
    *state = &S;
    return KEVO_OK;
}

static void copy(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "(null)");
}

static kevo_status fx_propose(void *state, const kevo_operator_request *req)
{
    seen *s = state;
    if (s->mode == CHECK_PARENT) {
        s->check = A->check(C, req->parent, NULL);
        copy(s->check_msg, sizeof s->check_msg, A->last_error(C));
    } else {
        s->n_failures = req->n_failures;
        for (size_t i = 0; i < req->n_failures && i < 2; i++) {
            copy(s->failure_kind[i], 32, req->failures[i].kind);
            copy(s->failure_diag[i], 128, req->failures[i].diagnostic);
            s->failure_candidate[i] = req->failures[i].candidate;
        }
        const char *srcs[2] = {refused_source, variant_source};
        for (int i = 0; i < 2; i++) {
            s->emit[i] = A->emit_child(C, req->id, srcs[i], NULL, "note");
            copy(s->emit_msg[i], 512, A->last_error(C));
        }
    }
    A->done(C, req->id);
    return KEVO_OK;
}

static kevo_status fx_repair(void *state,
                             const kevo_operator_repair_request *rep)
{
    seen *s = state;
    s->repairs++;
    s->rep_id = rep->id;
    s->rep_request = rep->request_id;
    s->rep_attempt = rep->attempt;
    s->rep_turn = rep->turn;
    s->rep_turns_left = rep->turns_left;
    copy(s->rep_kind, sizeof s->rep_kind, rep->kind);
    copy(s->rep_diag, sizeof s->rep_diag, rep->diagnostic);
    s->rep_child = rep->child != NULL;
    s->rep_parent = rep->parent != NULL;
    s->rep_prompt = rep->prompt_id;
    s->rep_source_ok =
        rep->child ? strcmp(rep->source, A->cand_source(C, rep->child)) == 0
                   : strcmp(rep->source, refused_source) == 0;
    char *fixed = kevo__asprintf("// repaired, turn %u\n%s", rep->turn,
                                 kevo_candidate_source(parent));
    int k = 0;
    if (s->mode == REPAIR_SAME_1) {
        s->emit[k] = A->emit_child(C, rep->id, rep->source, NULL, NULL);
        copy(s->emit_msg[k], 512, A->last_error(C));
        k++;
    }
    s->emit[k] = A->emit_child(C, rep->id, fixed, NULL, "fixed");
    copy(s->emit_msg[k], 512, A->last_error(C));
    if (s->mode == REPAIR_TWICE) {
        /* A second child of a repair is refused. */
        char *again = kevo__asprintf("// again\n%s", fixed);
        s->emit[1] = A->emit_child(C, rep->id, again, NULL, NULL);
        copy(s->emit_msg[1], 512, A->last_error(C));
        free(again);
    }
    free(fixed);
    A->done(C, rep->id);
    return KEVO_OK;
}

static kevo_status fx_revise(void *state, const kevo_operator_revision *rev)
{
    seen *s = state;
    s->n_kinds = rev->n_failure_kinds;
    s->n_failed = rev->n_failed_children;
    if (rev->n_failure_kinds >= 2) {
        copy(s->kind0, sizeof s->kind0, rev->failure_kinds[0].kind);
        s->count0 = rev->failure_kinds[0].count;
        s->count1 = rev->failure_kinds[1].count;
    }
    if (rev->n_failed_children >= 1) {
        copy(s->failed_diag, sizeof s->failed_diag,
             rev->failed_children[0].diagnostic);
        s->failed_candidate = rev->failed_children[0].candidate;
    }
    A->fail(C, rev->id, KEVO_FAIL_UNSUPPORTED, "seen");
    A->done(C, rev->id);
    return KEVO_OK;
}

static void fx_fini(void *state)
{
    (void)state;
}

static const kevo_operator_desc fixer = {
    .abi_major = KEVO_OPERATOR_ABI_MAJOR,
    .abi_minor = KEVO_OPERATOR_ABI_MINOR,
    .struct_size = sizeof(kevo_operator_desc),
    .name = "fixer",
    .version = "1.0",
    .init = fx_init,
    .propose = fx_propose,
    .fini = fx_fini,
    .revise = fx_revise,
    .repair = fx_repair,
};

/* ---- helpers --------------------------------------------------------------
 */

static kevo_operator_result *next(kevo_operator_host *host, uint64_t id)
{
    kevo_operator_result *res = NULL;
    if (kevo_operator_host_next_result(host, &res) != KEVO_OK)
        bail_out("no result for request %llu", (unsigned long long)id);
    if (kevo_operator_result_id(res) != id)
        bail_out("result %llu, not %llu",
                 (unsigned long long)kevo_operator_result_id(res),
                 (unsigned long long)id);
    return res;
}

static kevo_operator_host *new_host(void)
{
    kevo_operator_host *host = NULL;
    if (kevo_operator_host_new(task, 5, &host, fresh()) != KEVO_OK)
        bail_out("%s", err.text);
    kevo_operator_host_set_log(host, KEVO_LOG_ERROR, NULL, NULL, NULL);
    return host;
}

#define SCAN_TEXT                                                              \
    "line 1: #include of <cuda_runtime.h> is not allowed: kernels may "        \
    "include only <cuda_fp16.h>"

/* ---- the tests ------------------------------------------------------------
 */

static void test_attempts_and_refusals(kevo_operator_host *host,
                                       kevo_operator *op, uint64_t *req1,
                                       kevo_candidate **child)
{
    kevo_operator_failure fails[2] = {
        {"compile_error", "x.cu(3): error: identifier \"q\" is undefined", 1,
         9},
        {"wrong", "shape 0 (n=1000): z[7] = 2, want 3 (1 bad element)", 1, 0}};
    kevo_operator_request req = {.size = sizeof req,
                                 .parent = parent,
                                 .prompt_id = 5,
                                 .n_children = 2,
                                 .failures = fails,
                                 .n_failures = 2};
    S = (seen){.mode = EMIT_TWO};
    is_int(kevo_operator_submit(op, &req, req1, fresh()), KEVO_OK,
           "a request with two failed attempts of its parent");
    kevo_operator_result *res = next(host, *req1);
    is_uint(S.n_failures, 2, "the plugin sees both failures");
    is_str(S.failure_kind[0], "compile_error", "the first kind");
    is_str(S.failure_diag[1], fails[1].diagnostic, "the second diagnostic");
    is_uint(S.failure_candidate[0], 9, "the failed child's id");
    is_int(S.emit[0], KEVO_EINVALID,
           "emit_child refuses a source with #include <cuda_runtime.h>");
    like_str(S.emit_msg[0], SCAN_TEXT, "with the include scan's message");
    is_int(S.emit[1], KEVO_OK, "the next child is kept");
    is_uint(kevo_operator_result_child_count(res), 1, "one child");
    is_uint(kevo_operator_result_child_attempt(res, 0), 1,
            "it is attempt 1: the refused call was attempt 0");
    is_uint(kevo_operator_result_child_attempt(res, 5), 0,
            "a child out of range: attempt 0");
    is_uint(kevo_operator_result_refused_count(res), 1, "one refused attempt");
    uint32_t attempt = 99;
    const char *kind = NULL, *reason = NULL;
    const char *src =
        kevo_operator_result_refused(res, 0, &attempt, &kind, &reason);
    is_str(src, refused_source, "its source is kept");
    is_uint(attempt, 0, "as attempt 0");
    is_str(kind, "invalid", "of kind invalid");
    like_str(reason, SCAN_TEXT, "with the host's reason");
    ok(kevo_operator_result_refused(res, 1, &attempt, &kind, &reason) == NULL &&
           attempt == 0 && !kind && !reason,
       "refused attempt 1: none, the outputs cleared");
    *child = kevo_operator_result_take_child(res, 0);
    kevo_candidate_set_id(*child, 77);
    is_int(kevo_candidate_prompt(*child), 5, "the child has the prompt");
    kevo_operator_result_free(res);

    /* Failures need a kind; the caller's array is copied. */
    fails[0].kind = NULL;
    is_int(kevo_operator_submit(op, &req, NULL, fresh()), KEVO_EINVAL,
           "a failure without a kind is refused");
    like_str(err.text, "failure 0 has no kind", "saying which");

    /* check() runs the include scan too. */
    kevo_candidate *bad = NULL;
    if (kevo_candidate_new_for_task(task, refused_source, "bad.cu", &bad,
                                    fresh()) != KEVO_OK)
        bail_out("%s", err.text);
    kevo_operator_request r2 = {
        .size = sizeof r2, .parent = bad, .prompt_id = -1, .n_children = 1};
    S = (seen){.mode = CHECK_PARENT};
    uint64_t id2;
    kevo_operator_submit(op, &r2, &id2, fresh());
    kevo_operator_result_free(next(host, id2));
    is_int(S.check, KEVO_EINVALID, "check() refuses the #include");
    like_str(S.check_msg, SCAN_TEXT, "with the include scan's message");
    kevo_candidate_free(bad);
}

static void test_repairs(kevo_operator_host *host, kevo_operator *op,
                         uint64_t req1, const kevo_candidate *child)
{
    /* The refused attempt, repaired: the lineage of a child of parent. */
    kevo_operator_repair_request rep = {.size = sizeof rep,
                                        .request_id = req1,
                                        .attempt = 0,
                                        .turn = 1,
                                        .turns_left = 0,
                                        .source = refused_source,
                                        .kind = "invalid",
                                        .diagnostic = "line 1: #include ...",
                                        .prompt_id = 5,
                                        .parent = parent};
    S = (seen){.mode = REPAIR_TWICE};
    uint64_t id = 0;
    ok(kevo_operator_can_repair(op), "the operator repairs");
    is_int(kevo_operator_repair(op, &rep, &id, fresh()), KEVO_OK,
           "a repair of a refused attempt");
    kevo_operator_result *res = next(host, id);
    is_int(S.repairs, 1, "repair() was called once");
    is_uint(S.rep_id, id, "with the repair's own id");
    is_uint(S.rep_request, req1, "naming the request of the failed child");
    is_uint(S.rep_attempt, 0, "and its attempt");
    ok(S.rep_turn == 1 && S.rep_turns_left == 0, "turn 1, none left");
    is_str(S.rep_kind, "invalid", "the kind");
    is_str(S.rep_diag, "line 1: #include ...", "the diagnostic");
    ok(!S.rep_child && S.rep_parent && S.rep_source_ok,
       "no child, the parent, and the refused source");
    is_int(S.rep_prompt, 5, "the prompt");
    is_int(S.emit[0], KEVO_OK, "the repaired child is kept");
    is_int(S.emit[1], KEVO_EEXIST, "a second child of a repair is refused");
    like_str(S.emit_msg[1], "a repair request takes one child", "saying why");
    is_uint(kevo_operator_result_child_count(res), 1, "one child");
    const kevo_candidate *c = kevo_operator_result_child(res, 0);
    ok(kevo_candidate_parent_count(c) == 1 &&
           kevo_candidate_parent(c, 0) == kevo_candidate_id(parent),
       "its parent is the parent of the refused attempt");
    is_uint(kevo_candidate_generation(c), kevo_candidate_generation(parent) + 1,
            "one generation on");
    is_int(kevo_candidate_prompt(c), 5, "with the repair's prompt");
    is_str(kevo_operator_result_child_note(res, 0), "fixed", "and its note");
    is_uint(kevo_operator_result_refused_count(res), 1,
            "the refused second child is listed");
    const char *kind = NULL;
    kevo_operator_result_refused(res, 0, NULL, &kind, NULL);
    is_str(kind, "duplicate", "as a duplicate");
    kevo_operator_result_free(res);

    /* A failed child, repaired: its own lineage. */
    rep.child = child;
    rep.parent = NULL;
    rep.source = kevo_candidate_source(child);
    rep.kind = "compile_error";
    rep.diagnostic = "x.cu(3): error: identifier \"q\" is undefined";
    rep.attempt = 1;
    rep.turn = 2;
    rep.turns_left = 1;
    rep.prompt_id = 99; /* ignored: the child's prompt wins */
    S = (seen){.mode = REPAIR_SAME_1};
    is_int(kevo_operator_repair(op, &rep, &id, fresh()), KEVO_OK,
           "a repair of a failed child");
    res = next(host, id);
    ok(S.rep_child && !S.rep_parent && S.rep_source_ok,
       "the plugin sees the child and its source");
    is_int(S.rep_prompt, 5, "and the child's prompt");
    is_int(S.emit[0], KEVO_EEXIST, "the failed child unchanged is refused");
    like_str(S.emit_msg[0], "the repair is the failed child unchanged",
             "saying so");
    is_int(S.emit[1], KEVO_OK, "the repair is kept");
    c = kevo_operator_result_child(res, 0);
    ok(c && kevo_candidate_parent_count(c) == 1 &&
           kevo_candidate_parent(c, 0) == kevo_candidate_parent(child, 0),
       "the repaired child has the failed child's parents");
    ok(c && kevo_candidate_generation(c) == kevo_candidate_generation(child),
       "and its generation");
    ok(c && kevo_candidate_prompt(c) == 5, "and its prompt");
    is_uint(kevo_operator_result_child_attempt(res, 0), 1,
            "the repair's attempt 1");
    kevo_operator_result_free(res);

    /* Bad requests never reach the plugin. */
    S = (seen){0};
    kevo_operator_repair_request bad = rep;
    is_int(kevo_operator_repair(op, NULL, NULL, fresh()), KEVO_EINVAL,
           "NULL is refused");
    bad.size = 16;
    is_int(kevo_operator_repair(op, &bad, NULL, fresh()), KEVO_EINVAL,
           "a short struct is refused");
    like_str(err.text, "rep->size is 16", "saying so");
    bad = rep;
    bad.diagnostic = NULL;
    is_int(kevo_operator_repair(op, &bad, NULL, fresh()), KEVO_EINVAL,
           "a repair without a diagnostic is refused");
    like_str(err.text, "no diagnostic", "saying so");
    bad = rep;
    bad.child = NULL;
    is_int(kevo_operator_repair(op, &bad, NULL, fresh()), KEVO_EINVAL,
           "neither a child nor a parent is refused");
    like_str(err.text, "no parent", "saying so");
    bad = rep;
    bad.turn = 0;
    is_int(kevo_operator_repair(op, &bad, NULL, fresh()), KEVO_EINVAL,
           "turn 0 is refused");
    is_int(S.repairs, 0, "repair() was never called");
    is_uint(kevo_operator_in_flight(op), 0, "nothing is in flight");
}

static void test_revision(kevo_operator_host *host, kevo_operator *op)
{
    kevo_operator_failure kinds[2] = {{"compile_error", NULL, 3, 0},
                                      {"wrong", NULL, 0, 0}};
    kevo_operator_failure failed[1] = {
        {"wrong", "shape 1 (n=4194304): z[4194303] = nan, want 0.25", 1, 12}};
    kevo_operator_revision rev = {.size = sizeof rev,
                                  .prompt_id = 5,
                                  .sections_json = "{\"strategy\": \"Go.\"}",
                                  .failure_kinds = kinds,
                                  .n_failure_kinds = 2,
                                  .failed_children = failed,
                                  .n_failed_children = 1};
    S = (seen){0};
    uint64_t id;
    is_int(kevo_operator_revise(op, &rev, &id, fresh()), KEVO_OK,
           "a revision request with failures");
    kevo_operator_result_free(next(host, id));
    is_uint(S.n_kinds, 2, "the plugin sees the failure kinds");
    is_str(S.kind0, "compile_error", "the commonest");
    ok(S.count0 == 3 && S.count1 == 1, "with their counts (0 read as 1)");
    is_uint(S.n_failed, 1, "and the failed child");
    is_str(S.failed_diag, failed[0].diagnostic, "with its diagnostic");
    is_uint(S.failed_candidate, 12, "and its id");
    kinds[1].kind = NULL;
    is_int(kevo_operator_revise(op, &rev, NULL, fresh()), KEVO_EINVAL,
           "a failure kind without a kind is refused");
    like_str(err.text, "failure_kinds: entry 1 has no kind", "saying which");
}

/* What an ABI 1.1 descriptor may hold in the slot 1.2 gave repair(). */
static kevo_status trap_repair(void *state,
                               const kevo_operator_repair_request *rep)
{
    (void)state;
    (void)rep;
    bail_out("the host called the reserved slot of a 1.1 descriptor");
    abort();
}

static void test_older_plugins(kevo_operator_host *host)
{
    kevo_operator_desc old = fixer;
    old.name = "fixer_1_1";
    old.abi_minor = 1;
    old.repair = trap_repair;
    is_int(kevo_operator_host_register(host, &old, "old.c", fresh()), KEVO_OK,
           "an in-process 1.1 descriptor registers");
    kevo_operator *op = NULL;
    kevo_operator_host_add(host, "fixer_1_1", NULL, NULL, &op, fresh());
    ok(op && !kevo_operator_can_repair(op),
       "its reserved slot is not taken for repair()");
    kevo_operator_repair_request rep = {.size = sizeof rep,
                                        .turn = 1,
                                        .source = "x",
                                        .kind = "wrong",
                                        .diagnostic = "d",
                                        .parent = parent};
    is_int(kevo_operator_repair(op, &rep, NULL, fresh()), KEVO_EINVAL,
           "so a repair is refused before anything is called");
    like_str(err.text, "cannot repair children", "saying so");
    like_str(err.text, "ABI 1.1", "with its ABI");
    ok(!kevo_operator_can_repair(NULL), "NULL cannot repair");

    /* The same from a shared object built as ABI 1.1. */
    char *path = kevo__path_join(builddir, "tests/plugins/.libs/abi_1_1.so");
    const char *name = NULL;
    is_int(kevo_operator_host_load(host, path, &name, fresh()), KEVO_OK,
           "a plugin of ABI 1.1 loads under a host of ABI 1.%d",
           KEVO_OPERATOR_ABI_MINOR);
    kevo_operator *o11 = NULL;
    kevo_operator_host_add(host, "abi_1_1", NULL, NULL, &o11, fresh());
    ok(o11 && kevo_operator_can_revise(o11), "it revises");
    ok(o11 && !kevo_operator_can_repair(o11), "but does not repair");
    kevo_operator_request req = {
        .size = sizeof req, .parent = parent, .prompt_id = -1, .n_children = 1};
    uint64_t id;
    is_int(kevo_operator_submit(o11, &req, &id, fresh()), KEVO_OK,
           "its propose runs");
    kevo_operator_result *res = next(host, id);
    is_str(kevo_operator_result_failure_kind(res, 0), KEVO_FAIL_EXHAUSTED,
           "and ends its request");
    kevo_operator_result_free(res);
    free(path);
}

int main(void)
{
    const char *b = getenv("KEVO_BUILDDIR");
    snprintf(builddir, sizeof builddir, "%s", b && *b ? b : ".");
    char *path = kevo__asprintf("%s/examples/tasks/saxpy.json", tap_srcdir());
    if (kevo_task_load(path, &task, fresh()) != KEVO_OK)
        bail_out("%s", err.text);
    free(path);
    parent = kevo_candidate_copy(kevo_task_seed(task));
    kevo_candidate_set_id(parent, 1);
    refused_source = kevo__asprintf("#include <cuda_runtime.h>\n%s",
                                    kevo_candidate_source(parent));
    variant_source =
        kevo__asprintf("// variant A\n%s", kevo_candidate_source(parent));

    kevo_operator_host *host = new_host();
    kevo_operator *op = NULL;
    if (kevo_operator_host_register(host, &fixer, "test-repair.c", fresh()) !=
            KEVO_OK ||
        kevo_operator_host_add(host, "fixer", NULL, NULL, &op, fresh()) !=
            KEVO_OK)
        bail_out("%s", err.text);
    uint64_t req1 = 0;
    kevo_candidate *child = NULL;
    test_attempts_and_refusals(host, op, &req1, &child);
    test_repairs(host, op, req1, child);
    test_revision(host, op);
    test_older_plugins(host);

    /* An operator of ABI 1.2 without repair(). */
    kevo_operator_desc plain = fixer;
    plain.name = "plain";
    plain.repair = NULL;
    kevo_operator *po = NULL;
    kevo_operator_host_register(host, &plain, "plain.c", fresh());
    kevo_operator_host_add(host, "plain", NULL, NULL, &po, fresh());
    kevo_operator_repair_request rep = {.size = sizeof rep,
                                        .turn = 1,
                                        .source = "x",
                                        .kind = "wrong",
                                        .diagnostic = "d",
                                        .parent = parent};
    ok(po && !kevo_operator_can_repair(po), "no repair(): it cannot repair");
    is_int(kevo_operator_repair(po, &rep, NULL, fresh()), KEVO_EINVAL,
           "and a repair is refused");

    kevo_candidate_free(child);
    kevo_operator_host_free(host);
    kevo_candidate_free(parent);
    free(refused_source);
    free(variant_source);
    kevo_task_free(task);
    return done_testing();
}

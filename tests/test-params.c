/*
 * test-params.c: the params operator, loaded from the build tree: children
 * within their domains and constraints, never a duplicate over many
 * proposals, exhaustion of a small space (the operator finds every valid
 * assignment, as counted here independently, and then fails with a
 * reason), crossover of two parents, its config, and determinism under a
 * fixed seed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kevo_private.h"
#include "model/devprops.h"
#include "tap.h"

static kevo_error err;

static kevo_error *fresh(void)
{
    kevo_error_init(&err);
    return &err;
}

static kevo_task *load_task(const char *name)
{
    char rel[128];
    snprintf(rel, sizeof rel, "examples/tasks/%s.json", name);
    char *path = kevo__path_join(tap_srcdir(), rel);
    kevo_task *t = NULL;
    if (kevo_task_load(path, &t, fresh()) != KEVO_OK)
        bail_out("%s", err.text);
    free(path);
    return t;
}

static kevo_candidate *for_task(const kevo_task *t, const char *source)
{
    kevo_candidate *c = NULL;
    if (kevo_candidate_new_for_task(t, source, "test.cu", &c, fresh()) !=
        KEVO_OK)
        bail_out("kevo_candidate_new_for_task: %s", err.text);
    return c;
}

static kevo_candidate *seed_of(const kevo_task *t)
{
    return for_task(t, kevo_candidate_source(kevo_task_seed(t)));
}

static kevo_operator *params_op(kevo_operator_host **host, const kevo_task *t,
                                uint64_t seed, const char *config)
{
    kevo_operator *op = NULL;
    if (kevo_operator_host_new(t, seed, host, fresh()) != KEVO_OK)
        bail_out("%s", err.text);
    kevo_operator_host_set_log(*host, KEVO_LOG_ERROR, NULL, NULL, NULL);
    if (kevo_operator_host_add(*host, "params", NULL, config, &op, fresh()) !=
        KEVO_OK)
        bail_out("params: %s", err.text);
    return op;
}

/* Runs one request; the result, which the caller frees. */
static kevo_operator_result *ask(kevo_operator_host *host, kevo_operator *op,
                                 const kevo_candidate *parent,
                                 const kevo_candidate *second, uint32_t n)
{
    kevo_operator_request req = {.size = sizeof req};
    req.parent = parent;
    req.second_parent = second;
    req.n_children = n;
    req.prompt_id = -1;
    if (kevo_operator_submit(op, &req, NULL, fresh()) != KEVO_OK)
        bail_out("submit: %s", err.text);
    kevo_operator_result *res = NULL;
    if (kevo_operator_host_next_result(host, &res) != KEVO_OK)
        bail_out("no result");
    return res;
}

/* A child's assignment as "A=1 B=2", for messages and comparisons. */
static void assignment_text(const kevo_candidate *c, char *buf, size_t size)
{
    const kevo_vars *a = kevo_candidate_assignment(c);
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < kevo_vars_count(a) && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s=%lld",
                                i ? " " : "", kevo_vars_name(a, i),
                                (long long)kevo_vars_value(a, i));
}

/* Everything the host's check stands for, done here on its own: domains,
 * constraints and launch limits at every shape of the task on the nominal
 * device. */
static bool valid_everywhere(const kevo_task *t, const kevo_candidate *c)
{
    kevo_vars *env = kevo_vars_new();
    bool valid = env != NULL;
    for (int s = 0; s < 2 && valid; s++) {
        for (size_t i = 0;
             i < kevo_task_shape_count(t, (kevo_shape_set)s) && valid; i++) {
            kevo_vars_clear(env);
            kevo__devprops_nominal(env);
            kevo_task_shape_vars(t, (kevo_shape_set)s, i, env);
            valid = kevo_candidate_check(c, env, NULL) == KEVO_OK;
            int64_t smem = 0;
            kevo_vars_get(env, "max_smem_per_block", &smem);
            for (size_t l = 0; valid && l < kevo_candidate_launch_count(c);
                 l++) {
                kevo_launch_geometry g = {.size = sizeof g};
                valid = kevo_candidate_launch_geometry(c, l, env, &g, NULL) ==
                            KEVO_OK &&
                        g.shared_bytes <= (uint64_t)smem;
            }
        }
    }
    kevo_vars_free(env);
    return valid;
}

/* How many assignments of c's space are valid everywhere: every one of
 * them enumerated and checked. */
static size_t count_valid(const kevo_task *t, const kevo_candidate *c)
{
    const kevo_paramspace *ps = kevo_candidate_params(c);
    size_t n = kevo_paramspace_count(ps);
    size_t idx[16] = {0}, valid = 0;
    kevo_candidate *probe = kevo_candidate_copy(c);
    for (;;) {
        for (size_t i = 0; i < n; i++)
            kevo_candidate_set_param(
                probe, kevo_paramspace_name(ps, i),
                kevo_paramspace_domain_value(ps, i, idx[i]), NULL);
        valid += valid_everywhere(t, probe);
        size_t i = 0;
        while (i < n && ++idx[i] == kevo_paramspace_domain_size(ps, i))
            idx[i++] = 0;
        if (i == n)
            break;
    }
    kevo_candidate_free(probe);
    return valid;
}

/* ---- config ----------------------------------------------------------------
 */

static void test_config(void)
{
    kevo_task *t = load_task("saxpy");
    kevo_operator_host *host = NULL;
    kevo_operator *op = NULL;
    kevo_operator_host_new(t, 1, &host, NULL);
    is_int(kevo_operator_host_add(host, "params", NULL, "{\"stepp\": 1}", &op,
                                  fresh()),
           KEVO_EINVALID, "config: an unknown key");
    like_str(err.text, "unknown key \"stepp\"", "names it");
    like_str(err.text, "step, jump, multi", "and lists the keys");
    is_int(kevo_operator_host_add(host, "params", NULL, "{\"tries\": 0}", &op,
                                  fresh()),
           KEVO_EINVALID, "config: tries 0");
    like_str(err.text, "\"tries\" must be a number from 1", "says the range");
    is_int(kevo_operator_host_add(host, "params", NULL,
                                  "{\"step\": 0, \"jump\": 0, \"multi\": 0}",
                                  &op, fresh()),
           KEVO_EINVALID, "config: no mutation at all");
    is_int(kevo_operator_host_add(host, "params", NULL, "{\"max_changes\": 1}",
                                  &op, fresh()),
           KEVO_EINVALID, "config: max_changes below 2");
    is_int(kevo_operator_host_add(host, "params", NULL,
                                  "{\"step\": 1, \"jump\": 0, \"multi\": 0, "
                                  "\"tries\": 10, \"enumerate_limit\": 0}",
                                  &op, fresh()),
           KEVO_OK, "config: a good one");
    is_str(kevo_operator_plugin(op)->name, "params", "the params plugin");
    kevo_operator_host_free(host);
    kevo_task_free(t);
}

/* True when every value of c's assignment is in its domain. */
static bool in_domains(const kevo_candidate *c)
{
    const kevo_paramspace *ps = kevo_candidate_params(c);
    const kevo_vars *a = kevo_candidate_assignment(c);
    for (size_t i = 0; i < kevo_paramspace_count(ps); i++) {
        int64_t v;
        if (kevo_vars_get(a, kevo_paramspace_name(ps, i), &v) != KEVO_OK)
            return false;
        size_t k = 0;
        while (k < kevo_paramspace_domain_size(ps, i) &&
               kevo_paramspace_domain_value(ps, i, k) != v)
            k++;
        if (k == kevo_paramspace_domain_size(ps, i))
            return false;
    }
    return true;
}

/* Asks for children of the task's seed, 4 a request, until max_requests
 * were made or one gives nothing; checks each child. Returns the last
 * (empty) result, or NULL. */
typedef struct tally {
    size_t children, outside, invalid, changed, dups;
    size_t steps, jumps, multis, enumerated;
} tally;

static kevo_operator_result *drain(const kevo_task *t, kevo_operator_host *host,
                                   kevo_operator *op,
                                   const kevo_candidate *parent,
                                   int max_requests, tally *n)
{
    uint64_t *hashes = calloc((size_t)max_requests * 4, sizeof *hashes);
    char text[256];
    if (!hashes)
        bail_out("out of memory");
    memset(n, 0, sizeof *n);
    for (int r = 0; r < max_requests; r++) {
        kevo_operator_result *res = ask(host, op, parent, NULL, 4);
        if (kevo_operator_result_child_count(res) == 0) {
            free(hashes);
            return res;
        }
        for (size_t i = 0; i < kevo_operator_result_child_count(res); i++) {
            const kevo_candidate *c = kevo_operator_result_child(res, i);
            const char *note = kevo_operator_result_child_note(res, i);
            n->steps += strncmp(note, "step:", 5) == 0;
            n->jumps += strncmp(note, "jump:", 5) == 0;
            n->multis += strncmp(note, "multi:", 6) == 0;
            n->enumerated += strncmp(note, "enumerated:", 11) == 0;
            n->outside += !in_domains(c);
            if (!valid_everywhere(t, c)) {
                assignment_text(c, text, sizeof text);
                diag("invalid child: %s", text);
                n->invalid++;
            }
            n->changed += strcmp(kevo_candidate_source(c),
                                 kevo_candidate_source(parent)) != 0;
            uint64_t h = kevo_candidate_hash(c);
            for (size_t k = 0; k < n->children; k++)
                n->dups += hashes[k] == h;
            n->dups += h == kevo_candidate_hash(parent);
            hashes[n->children++] = h;
        }
        kevo_operator_result_free(res);
    }
    free(hashes);
    return NULL;
}

/* sgemm: 1024 assignments, of which the constraints and launch limits
 * exclude some; many proposals from one parent. */
static void test_sgemm(void)
{
    kevo_task *t = load_task("sgemm");
    kevo_candidate *parent = seed_of(t);
    kevo_operator_host *host = NULL;
    kevo_operator *op = params_op(&host, t, 7, NULL);
    kevo_operator_host_mark_seen(host, parent, NULL);
    tally n;
    kevo_operator_result *res = drain(t, host, op, parent, 30, &n);
    diag("sgemm: %zu children: %zu steps, %zu jumps, %zu multi, %zu "
         "enumerated",
         n.children, n.steps, n.jumps, n.multis, n.enumerated);
    ok(res == NULL, "30 requests are answered");
    is_uint(n.children, 120, "with 4 children each");
    is_uint(n.outside, 0, "every child is within its domains");
    is_uint(n.invalid, 0, "every child meets the constraints at every shape");
    is_uint(n.changed, 0, "every child keeps the parent's source");
    is_uint(n.dups, 0, "no child repeats another or the parent");
    ok(n.steps > 0 && n.jumps > 0 && n.multis > 0,
       "all three mutations were used");
    kevo_operator_result_free(res);
    kevo_operator_host_free(host);
    kevo_candidate_free(parent);
    kevo_task_free(t);
}

/* stencil2d: 80 assignments; the operator proposes every valid one but the
 * parent's, then reports the space exhausted. */
static void test_exhaustion(void)
{
    kevo_task *t = load_task("stencil2d");
    kevo_candidate *parent = seed_of(t);
    kevo_operator_host *host = NULL;
    kevo_operator *op = params_op(&host, t, 5, NULL);
    kevo_operator_host_mark_seen(host, parent, NULL);
    size_t expected = count_valid(t, parent);
    diag("stencil2d: %zu of 80 assignments are valid at every shape", expected);
    ok(expected > 10 && expected < 80, "constraints exclude some");
    tally n;
    kevo_operator_result *res = drain(t, host, op, parent, 40, &n);
    is_uint(n.children, expected - 1,
            "every valid assignment but the parent's was proposed");
    is_uint(n.outside, 0, "each within its domains");
    is_uint(n.invalid, 0, "each valid at every shape");
    is_uint(n.dups, 0, "none twice");
    ok(n.enumerated > 0, "the last ones found by enumeration");
    ok(res != NULL, "then a request gets nothing");
    is_uint(kevo_operator_result_failure_count(res), 1, "but a failure");
    is_str(kevo_operator_result_failure_kind(res, 0), KEVO_FAIL_EXHAUSTED,
           "of kind exhausted");
    like_str(kevo_operator_result_failure_reason(res, 0),
             "exhausted: all 80 assignments are invalid, evaluated or "
             "already proposed",
             "with a clear reason");
    kevo_operator_result_free(res);
    kevo_operator_host_free(host);
    kevo_candidate_free(parent);
    kevo_task_free(t);
}

/* ---- a tiny space ---------------------------------------------------------
 */

static const char tiny_source[] =
    "// kevo:param\n"
    "//   A in {1, 2} = 1\n"
    "//   B in {1, 2, 3} = 1\n"
    "//   require A * B != 4\n"
    "/* kevo:launch\n"
    " *   saxpy<<<ceil_div(n, 128 * A * B), 128>>>(a, x, y, z, n)\n"
    " */\n"
    "extern \"C\" __global__ void saxpy(float a, const float *x,"
    " const float *y, float *z, int n) {}\n";

static void test_tiny(void)
{
    kevo_task *t = load_task("saxpy");
    kevo_candidate *parent = for_task(t, tiny_source);
    kevo_operator_host *host = NULL;
    kevo_operator *op = params_op(&host, t, 3, NULL);
    kevo_operator_host_mark_seen(host, parent, NULL);
    char got[6][64];
    int n = 0;
    kevo_operator_result *res = NULL;
    for (int r = 0; r < 6; r++) {
        res = ask(host, op, parent, NULL, 1);
        if (kevo_operator_result_child_count(res) == 0)
            break;
        assignment_text(kevo_operator_result_child(res, 0), got[n],
                        sizeof got[n]);
        n++;
        kevo_operator_result_free(res);
        res = NULL;
    }
    is_int(n, 4, "a space of 5 valid assignments gives 4 children");
    int bad = 0, dup = 0;
    for (int i = 0; i < n; i++) {
        bad += strcmp(got[i], "A=2 B=2") == 0 || strcmp(got[i], "A=1 B=1") == 0;
        for (int j = 0; j < i; j++)
            dup += strcmp(got[i], got[j]) == 0;
    }
    is_int(bad, 0, "never A=2 B=2 (constraint) nor the parent");
    is_int(dup, 0, "never twice the same");
    ok(res && kevo_operator_result_failure_count(res) == 1,
       "the fifth request fails");
    is_str(kevo_operator_result_failure_kind(res, 0), KEVO_FAIL_EXHAUSTED,
           "exhausted");
    like_str(kevo_operator_result_failure_reason(res, 0),
             "all 6 assignments are invalid, evaluated or already proposed",
             "says the space is used up");
    kevo_operator_result_free(res);
    kevo_operator_host_free(host);

    /* Without enumeration, random tries give up with another reason. */
    op = params_op(&host, t, 3,
                   "{\"tries\": 4, \"enumerate_limit\": 0, \"step\": 1, "
                   "\"jump\": 0, \"multi\": 0}");
    kevo_operator_host_mark_seen(host, parent, NULL);
    int fails = 0;
    for (int r = 0; r < 12; r++) {
        res = ask(host, op, parent, NULL, 1);
        if (kevo_operator_result_failure_count(res)) {
            fails++;
            like_str(kevo_operator_result_failure_reason(res, 0),
                     "larger than enumerate_limit", "a reason for giving up");
            kevo_operator_result_free(res);
            break;
        }
        kevo_operator_result_free(res);
    }
    is_int(fails, 1, "steps alone run out");

    /* A request for more children than the space holds. */
    kevo_operator_host_free(host);
    op = params_op(&host, t, 3, NULL);
    kevo_operator_host_mark_seen(host, parent, NULL);
    res = ask(host, op, parent, NULL, 10);
    is_uint(kevo_operator_result_child_count(res), 4, "ten wanted, four there");
    is_uint(kevo_operator_result_failure_count(res), 0,
            "a partial answer is no failure");
    kevo_operator_result_free(res);
    kevo_operator_host_free(host);

    /* No parameters at all. */
    kevo_candidate *plain = for_task(
        t, "/* kevo:launch\n *   saxpy<<<ceil_div(n, 256), 256>>>(a, x, y, z, "
           "n)\n */\n");
    op = params_op(&host, t, 3, NULL);
    res = ask(host, op, plain, NULL, 1);
    is_str(kevo_operator_result_failure_kind(res, 0), KEVO_FAIL_UNSUPPORTED,
           "a parent without parameters");
    like_str(kevo_operator_result_failure_reason(res, 0), "no tunable",
             "says so");
    kevo_operator_result_free(res);
    kevo_operator_host_free(host);
    kevo_candidate_free(plain);
    kevo_candidate_free(parent);
    kevo_task_free(t);
}

/* ---- crossover ---------------------------------------------------------- */

static void test_crossover(void)
{
    kevo_task *t = load_task("saxpy");
    kevo_candidate *a = seed_of(t);
    kevo_candidate *b = seed_of(t);
    kevo_candidate_set_param(b, "BLOCK", 1024, NULL);
    kevo_candidate_set_param(b, "VEC", 4, NULL);
    kevo_candidate_set_param(b, "ITEMS", 8, NULL);
    kevo_candidate_set_id(a, 10);
    kevo_candidate_set_id(b, 20);
    kevo_operator_host *host = NULL;
    kevo_operator *op = params_op(&host, t, 11, NULL);
    kevo_operator_host_mark_seen(host, a, NULL);
    kevo_operator_host_mark_seen(host, b, NULL);
    kevo_operator_result *res = ask(host, op, a, b, 6);
    is_uint(kevo_operator_result_child_count(res), 6,
            "six children: every mix of three differing parameters");
    int mixes = 0, two_parents = 0;
    for (size_t i = 0; i < kevo_operator_result_child_count(res); i++) {
        const kevo_candidate *c = kevo_operator_result_child(res, i);
        const kevo_vars *v = kevo_candidate_assignment(c);
        int64_t block, vec, items;
        kevo_vars_get(v, "BLOCK", &block);
        kevo_vars_get(v, "VEC", &vec);
        kevo_vars_get(v, "ITEMS", &items);
        mixes += (block == 256 || block == 1024) && (vec == 1 || vec == 4) &&
                 (items == 1 || items == 8) &&
                 strncmp(kevo_operator_result_child_note(res, i), "crossover",
                         9) == 0;
        two_parents += kevo_candidate_parent_count(c) == 2 &&
                       kevo_candidate_parent(c, 0) == 10 &&
                       kevo_candidate_parent(c, 1) == 20;
    }
    is_int(mixes, 6, "each takes every value from one parent or the other");
    is_int(two_parents, 6, "each names both parents");
    kevo_operator_result_free(res);

    /* Every mix is used: more children come from mutation. */
    res = ask(host, op, a, b, 2);
    is_uint(kevo_operator_result_child_count(res), 2, "then mutations");
    ok(strncmp(kevo_operator_result_child_note(res, 0), "crossover", 9) != 0,
       "not crossovers: %s", kevo_operator_result_child_note(res, 0));
    kevo_operator_result_free(res);

    /* Parents of different sources. */
    kevo_candidate *other = for_task(t, tiny_source);
    res = ask(host, op, a, other, 1);
    is_uint(kevo_operator_result_child_count(res), 0,
            "no crossover of different sources");
    is_str(kevo_operator_result_failure_kind(res, 0), KEVO_FAIL_UNSUPPORTED,
           "unsupported");
    like_str(kevo_operator_result_failure_reason(res, 0), "same source",
             "says why");
    kevo_operator_result_free(res);
    kevo_candidate_free(other);
    kevo_operator_host_free(host);
    kevo_candidate_free(a);
    kevo_candidate_free(b);
    kevo_task_free(t);
}

/* ---- determinism -------------------------------------------------------- */

/* The assignments of the first 24 children for a run seed, joined. */
static char *sequence(const kevo_task *t, const kevo_candidate *parent,
                      uint64_t seed)
{
    kevo_operator_host *host = NULL;
    kevo_operator *op = params_op(&host, t, seed, NULL);
    kevo_buf b = {0};
    char text[256];
    for (int r = 0; r < 8; r++) {
        kevo_operator_result *res = ask(host, op, parent, NULL, 3);
        for (size_t i = 0; i < kevo_operator_result_child_count(res); i++) {
            assignment_text(kevo_operator_result_child(res, i), text,
                            sizeof text);
            kevo__buf_printf(&b, "%s; ", text);
        }
        kevo_operator_result_free(res);
    }
    kevo_operator_host_free(host);
    return kevo__buf_take(&b);
}

static void test_determinism(void)
{
    kevo_task *t = load_task("sgemm");
    kevo_candidate *parent = seed_of(t);
    char *one = sequence(t, parent, 2024);
    char *two = sequence(t, parent, 2024);
    char *three = sequence(t, parent, 2025);
    is_str(one, two, "the same seed: the same children in the same order");
    ok(strcmp(one, three) != 0, "another seed: other children");
    free(one);
    free(two);
    free(three);
    kevo_candidate_free(parent);
    kevo_task_free(t);
}

int main(void)
{
    const char *b = getenv("KEVO_BUILDDIR");
    char *path = kevo__asprintf("%s/operators/.libs", b && *b ? b : ".");
    setenv(KEVO_OPERATOR_PATH_ENV, path, 1);
    free(path);

    test_config();
    test_sgemm();
    test_exhaustion();
    test_tiny();
    test_crossover();
    test_determinism();
    return done_testing();
}

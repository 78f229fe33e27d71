/*
 * test-candidate.c: candidates: creation, parameters, launch geometry and
 * its CUDA limits, lineage, copies and references, the hash, task
 * parameters and JSON.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/candidate_private.h"
#include "tap.h"

static const char reduction[] =
    "/* kevo:launch\n"
    " *   scratch partial f32[ceil_div(n, BLOCK * VEC)]\n"
    " *   reduce_partial<<<ceil_div(n, BLOCK * VEC), BLOCK, BLOCK * 4>>>(x, "
    "partial, n)\n"
    " *   reduce_final<<<1, 1024>>>(partial, out,\n"
    " *                             (i32)ceil_div(n, BLOCK * VEC))\n"
    " */\n"
    "// kevo:param\n"
    "//   BLOCK in {128, 256, 512, 1024} = 256\n"
    "//   VEC in {1, 2, 4} = 4\n"
    "//   require BLOCK * VEC <= 4096\n"
    "__global__ void reduce_partial(const float *x, float *p, int n) {}\n"
    "__global__ void reduce_final(const float *p, float *out, int m) {}\n";

/* The hash of reduction at its defaults. It is stored in checkpoints and
 * keys caches: if this changes, every saved run is invalidated, so change
 * it only on purpose. */
#define REDUCTION_HASH UINT64_C(0x4d58b675bdfcace9)

static kevo_error err;

static kevo_error *fresh(void)
{
    kevo_error_init(&err);
    return &err;
}

static kevo_candidate *make(const char *source, const char *origin)
{
    kevo_candidate *c = NULL;
    if (kevo_candidate_new(source, origin, &c, fresh()) != KEVO_OK)
        bail_out("cannot make a candidate: %s", err.text);
    return c;
}

static void test_new(void)
{
    kevo_candidate *c = make(reduction, "reduce.cu");
    is_str(kevo_candidate_source(c), reduction, "source");
    is_str(kevo_candidate_origin(c), "reduce.cu", "origin");
    is_uint(kevo_candidate_launch_count(c), 2, "two launches");
    is_str(kevo_candidate_launch_kernel(c, 0), "reduce_partial", "kernel 0");
    is_str(kevo_candidate_launch_kernel(c, 1), "reduce_final", "kernel 1");
    ok(kevo_candidate_launch_kernel(c, 2) == NULL, "kernel 2: none");
    const kevo_paramspace *ps = kevo_candidate_params(c);
    is_uint(kevo_paramspace_count(ps), 2, "two parameters");
    const kevo_vars *a = kevo_candidate_assignment(c);
    is_uint(kevo_vars_count(a), 2, "assignment of two");
    is_str(kevo_vars_name(a, 0), "BLOCK", "in declaration order");
    is_int(kevo_vars_value(a, 0), 256, "BLOCK at its default");
    is_int(kevo_vars_value(a, 1), 4, "VEC at its default");
    is_uint(kevo_candidate_id(c), 0, "id 0");
    is_uint(kevo_candidate_parent_count(c), 0, "no parents");
    ok(kevo_candidate_operator(c) == NULL, "no operator");
    is_int(kevo_candidate_prompt(c), -1, "no prompt");
    is_uint(kevo_candidate_generation(c), 0, "generation 0");
    kevo_candidate_free(c);
    kevo_candidate_free(NULL);

    c = make("// kevo:launch k<<<1, 32>>>(x)\n", NULL);
    ok(kevo_candidate_origin(c) == NULL, "no origin");
    is_uint(kevo_paramspace_count(kevo_candidate_params(c)), 0,
            "no kevo:param block: an empty space");
    kevo_candidate_free(c);

    kevo_candidate *out = (kevo_candidate *)&err;
    is_int(kevo_candidate_new("int x;\n", "x.cu", &out, fresh()), KEVO_EINVALID,
           "no launch block");
    ok(out == NULL, "on failure *out is NULL");
    is_str(err.text,
           "x.cu: no kevo:launch block: every kernel source must declare "
           "its launches (see kevo-blocks(5))",
           "no launch block: message");
    is_int(kevo_candidate_new("// kevo:launch k<<<1, 32>>>(x)\n"
                              "// kevo:param B in {1, 2} = 3\n",
                              "x.cu", &out, fresh()),
           KEVO_EINVALID, "bad param block");
    is_str(err.text,
           "x.cu:2: kevo:param: default 3 of 'B' is not in its domain {1, 2}",
           "bad param block: message");
    is_int(err.line, 2, "bad param block: line");
    is_int(kevo_candidate_new("// kevo:launch k<<<1, 32>>>(x)\n"
                              "\n// caf\xe9 au lait\n",
                              "x.cu", &out, fresh()),
           KEVO_EINVALID, "not UTF-8");
    is_str(err.text,
           "x.cu:3: byte 0xe9 at column 7 is not valid UTF-8: kernel "
           "sources must be UTF-8",
           "not UTF-8: message");
    is_int(kevo_candidate_new("// kevo:launch k<<<1, 32>>>(x)\n"
                              "\n// caf\xc3\xa9 au lait\n",
                              "x.cu", &out, fresh()),
           KEVO_OK, "UTF-8 is fine");
    kevo_candidate_free(out);
    is_int(kevo_candidate_new(NULL, "x.cu", &out, fresh()), KEVO_EINVAL,
           "NULL source");
    is_int(kevo_candidate_new("x", "x.cu", NULL, fresh()), KEVO_EINVAL,
           "NULL out");
}

static void test_load(void)
{
    const char *tmp = getenv("TMPDIR");
    char *templ =
        kevo__path_join(tmp && *tmp ? tmp : "/tmp", "test-candidate-XXXXXX");
    if (!mkdtemp(templ))
        bail_out("mkdtemp failed");
    char *path = kevo__path_join(templ, "seed.cu");
    char *missing = kevo__path_join(templ, "missing.cu");
    if (kevo__write_file_atomic(path, reduction, strlen(reduction), NULL) !=
        KEVO_OK)
        bail_out("cannot write %s", path);
    kevo_candidate *c = NULL;
    is_int(kevo_candidate_load(path, &c, fresh()), KEVO_OK, "load");
    is_str(kevo_candidate_origin(c), path, "the path is the origin");
    is_str(kevo_candidate_source(c), reduction, "the file's text");
    kevo_candidate_free(c);
    is_int(kevo_candidate_load(missing, &c, fresh()), KEVO_ENOENT,
           "missing file");
    ok(c == NULL, "missing file: NULL");
    like_str(err.text, "missing.cu", "missing file: message names it");
    if (kevo__write_file_atomic(path, "int x;\n", 7, NULL) != KEVO_OK)
        bail_out("cannot write %s", path);
    is_int(kevo_candidate_load(path, &c, fresh()), KEVO_EINVALID,
           "file without blocks");
    like_str(err.text, "seed.cu: no kevo:launch block",
             "file without blocks: message names the file");
    unlink(path);
    rmdir(templ);
    free(missing);
    free(path);
    free(templ);
}

/* Evaluates launch i of a one-launch source. */
static kevo_status geometry_of(const char *launch, const kevo_vars *env,
                               kevo_launch_geometry *g)
{
    char *src = kevo__asprintf("// kevo:launch %s\n", launch);
    kevo_candidate *c = make(src, "g.cu");
    memset(g, 0, sizeof *g);
    kevo_status rc = kevo_candidate_launch_geometry(c, 0, env, g, fresh());
    kevo_candidate_free(c);
    free(src);
    return rc;
}

static void test_geometry(void)
{
    kevo_candidate *c = make(reduction, "reduce.cu");
    kevo_vars *env = kevo_vars_new();
    kevo_vars_set(env, "n", 1 << 20);
    kevo_vars_set(env, "BLOCK", 1); /* the assignment is on top */
    kevo_launch_geometry g = {.size = sizeof g};
    is_int(kevo_candidate_launch_geometry(c, 0, env, &g, fresh()), KEVO_OK,
           "geometry of launch 0");
    is_uint(g.grid[0], 1024, "grid = ceil_div(n, 256 * 4)");
    is_uint(g.grid[1], 1, "grid.y defaults to 1");
    is_uint(g.grid[2], 1, "grid.z defaults to 1");
    is_uint(g.block[0], 256, "block = BLOCK");
    is_uint(g.block[1] * g.block[2], 1, "block.y, z = 1");
    is_uint(g.shared_bytes, 1024, "smem = BLOCK * 4");
    is_uint(g.size, sizeof g, "size kept");
    is_int(kevo_candidate_set_param(c, "VEC", 1, fresh()), KEVO_OK,
           "set VEC=1");
    memset(&g, 0, sizeof g); /* zero-initialised is accepted too */
    is_int(kevo_candidate_launch_geometry(c, 0, env, &g, fresh()), KEVO_OK,
           "geometry after set_param");
    is_uint(g.grid[0], 4096, "grid follows the assignment");
    is_int(kevo_candidate_launch_geometry(c, 1, env, &g, fresh()), KEVO_OK,
           "launch 1");
    is_uint(g.shared_bytes, 0, "no SMEM: 0");
    is_uint(g.block[0], 1024, "block 1024");
    is_int(kevo_candidate_launch_geometry(c, 2, env, &g, fresh()), KEVO_EINVAL,
           "launch 2 does not exist");
    g.size = 12;
    is_int(kevo_candidate_launch_geometry(c, 0, env, &g, fresh()), KEVO_EINVAL,
           "wrong size");
    like_str(err.text, "kevo_launch_geometry.size is 12",
             "wrong size: message");
    g.size = sizeof g;
    is_int(kevo_candidate_launch_geometry(c, 0, NULL, &g, fresh()),
           KEVO_EUNDEFINED, "no env: n undefined");
    is_str(err.text,
           "reduce.cu:3: kevo:launch: grid of 'reduce_partial': expression "
           "'ceil_div(n, BLOCK * VEC)', column 10: 'n' has no value",
           "undefined: message with line, expression and column");
    is_int(err.line, 3, "undefined: line");
    is_int(err.column, 10, "undefined: column");
    is_str(err.source, "reduce.cu", "undefined: source");
    kevo_candidate_free(c);

    kevo_vars_set(env, "m", 7);
    is_int(
        geometry_of("k<<<dim3(2, m, 3), dim3(8, 4, 2), m * 8>>>(x)", env, &g),
        KEVO_OK, "dim3 geometry");
    ok(g.grid[0] == 2 && g.grid[1] == 7 && g.grid[2] == 3, "grid 2 x 7 x 3");
    ok(g.block[0] == 8 && g.block[1] == 4 && g.block[2] == 2,
       "block 8 x 4 x 2");
    is_uint(g.shared_bytes, 56, "smem 56");
    is_int(geometry_of("k<<<dim3(5), dim3(32, 2)>>>()", env, &g), KEVO_OK,
           "omitted components");
    ok(g.grid[1] == 1 && g.grid[2] == 1 && g.block[2] == 1, "omitted: 1");
    is_int(geometry_of("k<<<2147483647, 1>>>()", env, &g), KEVO_OK,
           "grid.x 2^31 - 1");
    is_int(
        geometry_of("k<<<dim3(1, 65535, 65535), dim3(1, 1, 64)>>>()", env, &g),
        KEVO_OK, "grid.y, z 65535 and block.z 64");

    static const struct {
        const char *launch, *error;
    } limits[] = {
        {"k<<<2147483648, 1>>>()",
         "g.cu:1: kevo:launch: grid of 'k' is 2147483648: CUDA allows at "
         "most 2147483647"},
        {"k<<<dim3(1, 65536), 1>>>()",
         "grid.y of 'k' is 65536: CUDA allows at most 65535"},
        {"k<<<dim3(1, 1, 65536), 1>>>()",
         "grid.z of 'k' is 65536: CUDA allows at most 65535"},
        {"k<<<m - 7, 1>>>()", "grid of 'k' is 0: it must be positive"},
        {"k<<<dim3(1, -1), 1>>>()", "grid.y of 'k' is -1: it must be positive"},
        {"k<<<1, 1025>>>()", "block of 'k' is 1025: CUDA allows at most 1024"},
        {"k<<<1, dim3(1, 1025)>>>()",
         "block.y of 'k' is 1025: CUDA allows at most 1024"},
        {"k<<<1, dim3(1, 1, 65)>>>()",
         "block.z of 'k' is 65: CUDA allows at most 64"},
        {"k<<<1, dim3(32, 64)>>>()",
         "block of 'k' has 2048 threads (32 x 64 x 1): CUDA allows at most "
         "1024 per block"},
        {"k<<<1, 32, -4>>>()",
         "shared memory size of 'k' is -4 bytes: it must not be negative"},
    };
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(limits); i++) {
        is_int(geometry_of(limits[i].launch, env, &g), KEVO_ERANGE,
               "limit %zu: %s", i, limits[i].launch);
        like_str(err.text, limits[i].error, "limit %zu: message", i);
        is_int(err.line, 1, "limit %zu: line", i);
    }
    is_int(geometry_of("k<<<1, 32, m / (m - 7)>>>()", env, &g), KEVO_EDIVZERO,
           "division by zero in SMEM");
    like_str(err.text,
             "g.cu:1: kevo:launch: shared memory size of 'k': expression "
             "'m / (m - 7)', column 3: division by zero",
             "division by zero: message");
    kevo_vars_free(env);
}

static void test_params(void)
{
    kevo_candidate *c = make(reduction, "reduce.cu");
    is_int(kevo_candidate_set_param(c, "BLOCK", 1024, fresh()), KEVO_OK,
           "set BLOCK=1024");
    int64_t v = 0;
    kevo_vars_get(kevo_candidate_assignment(c), "BLOCK", &v);
    is_int(v, 1024, "the assignment follows");
    is_int(kevo_candidate_set_param(c, "BLOCK", 100, fresh()), KEVO_ERANGE,
           "outside the domain");
    is_str(err.text,
           "BLOCK=100 is not in the domain of 'BLOCK' {128, 256, 512, 1024}",
           "outside the domain: message");
    is_int(kevo_candidate_set_param(c, "WARPS", 4, fresh()), KEVO_ENOENT,
           "undeclared parameter");
    is_str(err.text,
           "'WARPS' is not a parameter of this candidate (its parameters: "
           "BLOCK, VEC)",
           "undeclared: message");
    kevo_vars_get(kevo_candidate_assignment(c), "BLOCK", &v);
    is_int(v, 1024, "a failed set changes nothing");

    is_int(kevo_candidate_check(c, NULL, fresh()), KEVO_OK, "1024 * 4 <= 4096");
    kevo_candidate *d = make("// kevo:launch k<<<1, B>>>(x)\n"
                             "// kevo:param B in {32, 64}\n"
                             "//   require n % B == 0\n",
                             NULL);
    kevo_vars *env = kevo_vars_new();
    kevo_vars_set(env, "n", 96);
    is_int(kevo_candidate_check(d, env, fresh()), KEVO_OK, "96 %% 32 == 0");
    kevo_candidate_set_param(d, "B", 64, NULL);
    is_int(kevo_candidate_check(d, env, fresh()), KEVO_ECONSTRAINT,
           "96 %% 64 != 0");
    is_str(err.text, "constraint 'n % B == 0' fails with n=96, B=64",
           "constraint: message");
    is_int(kevo_candidate_check(d, NULL, fresh()), KEVO_EUNDEFINED,
           "no env: n undefined");
    is_int(kevo_candidate_set_param(c, "B", 1, fresh()), KEVO_ENOENT,
           "other candidate's parameter");
    kevo_candidate *e = make("// kevo:launch k<<<1, 1>>>(x)\n", NULL);
    is_int(kevo_candidate_set_param(e, "B", 1, fresh()), KEVO_ENOENT,
           "no parameters at all");
    is_str(err.text,
           "'B' is not a parameter of this candidate (it declares "
           "none)",
           "no parameters: message");
    is_int(kevo_candidate_check(e, NULL, fresh()), KEVO_OK,
           "no parameters: check passes");
    kevo_candidate_free(e);
    kevo_vars_free(env);
    kevo_candidate_free(d);
    kevo_candidate_free(c);
}

static void test_lineage_copy_hash(void)
{
    kevo_candidate *c = make(reduction, "reduce.cu");
    uint64_t parents[] = {17, 4};
    is_int(kevo_candidate_set_lineage(c, parents, 2, "llm", 3, 5, fresh()),
           KEVO_OK, "set_lineage");
    kevo_candidate_set_id(c, 42);
    is_uint(kevo_candidate_id(c), 42, "id");
    is_uint(kevo_candidate_parent_count(c), 2, "two parents");
    is_uint(kevo_candidate_parent(c, 0), 17, "parent 0");
    is_uint(kevo_candidate_parent(c, 1), 4, "parent 1");
    is_uint(kevo_candidate_parent(c, 2), 0, "parent 2: none");
    is_str(kevo_candidate_operator(c), "llm", "operator");
    is_int(kevo_candidate_prompt(c), 3, "prompt");
    is_uint(kevo_candidate_generation(c), 5, "generation");
    uint64_t nine[9] = {0};
    is_int(kevo_candidate_set_lineage(c, nine, 9, "x", -1, 1, fresh()),
           KEVO_EINVAL, "nine parents");
    is_str(err.text, "9 parents: a candidate records at most 8",
           "nine parents: message");
    is_str(kevo_candidate_operator(c), "llm", "a failed set changes nothing");

    uint64_t h = kevo_candidate_hash(c);
    is_uint(h, REDUCTION_HASH, "the hash of a fixed source is fixed");
    kevo_candidate *d = kevo_candidate_copy(c);
    ok(d != NULL, "copy");
    is_uint(kevo_candidate_hash(d), h, "the copy hashes the same");
    is_uint(kevo_candidate_id(d), 42, "copy: id");
    is_uint(kevo_candidate_parent(d, 1), 4, "copy: parents");
    is_str(kevo_candidate_operator(d), "llm", "copy: operator");
    is_int(kevo_candidate_prompt(d), 3, "copy: prompt");
    is_uint(kevo_candidate_generation(d), 5, "copy: generation");
    is_str(kevo_candidate_origin(d), "reduce.cu", "copy: origin");
    is_uint(kevo_candidate_launch_count(d), 2, "copy: launches");
    is_int(kevo_candidate_set_param(d, "VEC", 2, fresh()), KEVO_OK,
           "copy: set VEC");
    ok(kevo_candidate_hash(d) != h, "the assignment changes the hash");
    int64_t v = 0;
    kevo_vars_get(kevo_candidate_assignment(c), "VEC", &v);
    is_int(v, 4, "the original is untouched");
    kevo_candidate_set_param(d, "VEC", 4, NULL);
    is_uint(kevo_candidate_hash(d), h, "equal again, same hash");
    is_int(kevo_candidate_set_lineage(d, NULL, 0, NULL, -1, 0, fresh()),
           KEVO_OK, "clear lineage");
    is_uint(kevo_candidate_hash(d), h, "lineage is not hashed");
    ok(kevo_candidate_operator(d) == NULL, "no operator");

    kevo_candidate *other = make(reduction, "elsewhere.cu");
    is_uint(kevo_candidate_hash(other), h, "the origin is not hashed");
    kevo_candidate_free(other);
    char *changed = kevo__strdup(reduction);
    changed[strlen(changed) - 2] = ';';
    other = make(changed, NULL);
    ok(kevo_candidate_hash(other) != h, "the source is hashed");
    kevo_candidate_free(other);
    free(changed);
    ok(kevo_candidate_copy(NULL) == NULL, "copy of NULL");
    kevo_candidate_free(d);
    kevo_candidate_free(c);
}

/* Takes and drops references to one candidate, many times, then drops the
 * reference it was given. */
static void *ref_and_free(void *arg)
{
    kevo_candidate *c = arg;
    for (int i = 0; i < 100000; i++)
        kevo_candidate_free(kevo_candidate_ref(c));
    kevo_candidate_free(c);
    return NULL;
}

static void test_refs(void)
{
#ifndef KEVO_CANDIDATE_HAS_REF
    ok(0, "KEVO_CANDIDATE_HAS_REF is defined");
#endif
    ok(kevo_candidate_ref(NULL) == NULL, "a reference to NULL is NULL");
    kevo_candidate *c = make(reduction, "reduce.cu");
    is_int(kevo_candidate_set_param(c, "VEC", 2, fresh()), KEVO_OK,
           "one reference: the candidate may change");
    kevo_candidate *r = kevo_candidate_ref(c);
    ok(r == c, "kevo_candidate_ref returns its argument");
    uint64_t h = kevo_candidate_hash(c);

    is_int(kevo_candidate_set_param(c, "VEC", 4, fresh()), KEVO_ESTATE,
           "shared: set_param fails");
    is_str(err.text,
           "kevo_candidate_set_param: the candidate is shared (2 "
           "references) and so cannot change: change a copy "
           "(kevo_candidate_copy)",
           "and says why");
    is_uint(kevo_candidate_hash(c), h, "the assignment did not change");
    is_int(kevo_candidate_set_id(r, 5), KEVO_ESTATE, "shared: set_id fails");
    is_uint(kevo_candidate_id(c), 0, "the id did not change");
    uint64_t parents[] = {1};
    is_int(kevo_candidate_set_lineage(c, parents, 1, "llm", 2, 3, fresh()),
           KEVO_ESTATE, "shared: set_lineage fails");
    like_str(err.text, "kevo_candidate_set_lineage: the candidate is shared",
             "and names itself");
    ok(kevo_candidate_operator(c) == NULL &&
           kevo_candidate_parent_count(c) == 0,
       "the lineage did not change");
    is_int(kevo_candidate_set_id(NULL, 5), KEVO_EINVAL, "set_id of NULL");

    kevo_candidate *copy = kevo_candidate_copy(c);
    is_int(kevo_candidate_set_id(copy, 6), KEVO_OK,
           "a copy of a shared candidate has one reference: it may change");
    kevo_candidate_free(copy);

    /* Two threads take and drop references together: the count must come
     * back to where it was. */
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, ref_and_free, kevo_candidate_ref(c));
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    is_uint(atomic_load(&c->refs), 2,
            "references taken and dropped from two threads balance");

    kevo_candidate_free(r);
    is_int(kevo_candidate_set_id(c, 7), KEVO_OK,
           "one reference dropped: the candidate may change again");
    is_uint(kevo_candidate_id(c), 7, "the id changed");
    kevo_candidate_free(c);
}

static void test_merge(void)
{
    kevo_candidate *c = make(reduction, "reduce.cu");
    kevo_paramspace *task = kevo_paramspace_new();
    static const int64_t blocks[] = {64, 128};
    kevo_paramspace_add_values(task, "BLOCK", blocks, 2, 64, NULL);
    kevo_paramspace_add_pow2(task, "ILP", 1, 8, 2, NULL);
    kevo_paramspace_add_constraint(task, "ILP <= rows", NULL);
    kevo_paramspace_add_constraint(task, "BLOCK * ILP <= max_threads_per_block",
                                   NULL);
    kevo_paramspace_add_constraint(task, "TILE * ILP <= 64", NULL);
    kevo_paramspace_add_constraint(task, "cols > 0", NULL);
    const char *dims[] = {"rows"};
    is_int(kevo__candidate_merge_params(c, task, dims, 1, fresh()), KEVO_OK,
           "merge");
    const kevo_paramspace *ps = kevo_candidate_params(c);
    is_uint(kevo_paramspace_count(ps), 3, "ILP joined");
    is_str(kevo_paramspace_name(ps, 2), "ILP", "after the candidate's own");
    size_t i;
    kevo_paramspace_find(ps, "BLOCK", &i);
    is_uint(kevo_paramspace_domain_size(ps, i), 4,
            "the candidate's own BLOCK wins");
    is_uint(kevo_paramspace_constraint_count(ps), 3,
            "two task constraints joined");
    is_str(kevo_paramspace_constraint(ps, 1), "ILP <= rows", "one over a dim");
    is_str(kevo_paramspace_constraint(ps, 2),
           "BLOCK * ILP <= max_threads_per_block",
           "one over a device property");
    int64_t v = 0;
    is_int(kevo_vars_get(kevo_candidate_assignment(c), "ILP", &v), KEVO_OK,
           "ILP in the assignment");
    is_int(v, 2, "at its default");
    is_uint(kevo_paramspace_count(c->task_params), 1,
            "task_params remembers ILP only");
    is_uint(kevo_paramspace_constraint_count(c->task_params), 2,
            "and the two constraints that joined");
    is_int(kevo_candidate_set_param(c, "ILP", 8, fresh()), KEVO_OK,
           "a merged parameter can be set");
    kevo_vars *env = kevo_vars_new();
    kevo_vars_set(env, "rows", 4);
    kevo_vars_set(env, "max_threads_per_block", 1024);
    is_int(kevo_candidate_check(c, env, fresh()), KEVO_ECONSTRAINT,
           "the task's constraint is checked");
    is_str(err.text, "constraint 'ILP <= rows' fails with ILP=8, rows=4",
           "task constraint: message");

    is_int(kevo__candidate_merge_params(c, task, dims, 1, fresh()), KEVO_OK,
           "merging again");
    is_uint(kevo_paramspace_constraint_count(ps = kevo_candidate_params(c)), 3,
            "adds nothing twice");
    is_int(kevo__candidate_merge_params(c, NULL, NULL, 0, fresh()), KEVO_OK,
           "NULL task space");
    is_int(kevo__candidate_merge_params(c, task, NULL, 1, fresh()), KEVO_EINVAL,
           "NULL dims with n > 0");

    kevo_candidate *plain = make("// kevo:launch k<<<1, 1>>>()\n", NULL);
    kevo_paramspace *empty = kevo_paramspace_new();
    is_int(kevo__candidate_merge_params(plain, empty, NULL, 0, fresh()),
           KEVO_OK, "empty task space");
    ok(plain->task_params == NULL, "nothing merged: no task_params");
    kevo_paramspace_free(empty);
    kevo_candidate_free(plain);
    kevo_vars_free(env);
    kevo_paramspace_free(task);
    kevo_candidate_free(c);
}

static char *dump_candidate(const kevo_candidate *c)
{
    json_t *j = kevo__candidate_to_json(c);
    char *text = j ? kevo__json_dump(j) : NULL;
    json_decref(j);
    return text;
}

static kevo_candidate *round_trip(const kevo_candidate *c, const char *what)
{
    char *text = dump_candidate(c);
    ok(text != NULL, "%s: to_json", what);
    json_t *j;
    kevo_jpath path;
    kevo__jpath_init(&path);
    kevo_candidate *back = NULL;
    if (kevo__json_parse(text, "a.json", &j, fresh()) != KEVO_OK)
        bail_out("%s: %s", what, err.text);
    is_int(kevo__candidate_from_json(j, "a.json", &path, &back, fresh()),
           KEVO_OK, "%s: from_json", what);
    if (err.code)
        diag("%s", err.text);
    is_str(path.s, "$", "%s: path restored", what);
    char *again = back ? dump_candidate(back) : NULL;
    is_str(again, text, "%s: to_json -> from_json -> to_json is identical",
           what);
    if (back)
        is_uint(kevo_candidate_hash(back), kevo_candidate_hash(c),
                "%s: same hash", what);
    json_decref(j);
    free(text);
    free(again);
    return back;
}

static void test_json(void)
{
    kevo_candidate *c = make(reduction, "reduce.cu");
    kevo_candidate *back = round_trip(c, "fresh");
    kevo_candidate_free(back);

    kevo_candidate_set_id(c, 9);
    uint64_t parents[] = {3, 5, 8};
    kevo_candidate_set_lineage(c, parents, 3, "params", 12, 4, NULL);
    kevo_candidate_set_param(c, "BLOCK", 512, NULL);
    char *text = dump_candidate(c);
    like_str(text, "\"params\": {\n    \"BLOCK\": 512,\n    \"VEC\": 4\n  }",
             "params as an object");
    like_str(text, "\"operator\": \"params\"", "operator");
    like_str(text, "\"origin\": \"reduce.cu\"", "origin");
    ok(strstr(text, "task_params") == NULL, "no task_params when none");
    free(text);
    back = round_trip(c, "with lineage");
    is_int(kevo_candidate_prompt(back), 12, "prompt back");
    is_uint(kevo_candidate_parent(back, 2), 8, "parents back");
    kevo_candidate_free(back);

    kevo_paramspace *task = kevo_paramspace_new();
    kevo_paramspace_add_range(task, "ILP", 1, 4, 1, 2, NULL);
    kevo_paramspace_add_constraint(task, "ILP <= rows", NULL);
    const char *dims[] = {"rows"};
    kevo__candidate_merge_params(c, task, dims, 1, NULL);
    kevo_candidate_set_param(c, "ILP", 3, NULL);
    text = dump_candidate(c);
    like_str(text,
             "\"task_params\": {\n    \"constraints\": [\n"
             "      \"ILP <= rows\"\n    ],",
             "task_params written");
    free(text);
    back = round_trip(c, "with task parameters");
    is_uint(kevo_paramspace_constraint_count(kevo_candidate_params(back)), 2,
            "the dim constraint survives without the dims");
    kevo_candidate_free(back);
    kevo_paramspace_free(task);

    kevo_candidate *n = make("// kevo:launch k<<<1, 1>>>()\n", NULL);
    back = round_trip(n, "no origin, no parameters");
    ok(kevo_candidate_origin(back) == NULL, "origin null");
    kevo_candidate_free(back);
    kevo_candidate_set_id(n, UINT64_C(1) << 63);
    ok(kevo__candidate_to_json(n) == NULL, "an id of 2^63 cannot be written");
    kevo_candidate_set_id(n, (UINT64_C(1) << 63) - 1);
    back = round_trip(n, "the largest id");
    is_uint(kevo_candidate_id(back), (UINT64_C(1) << 63) - 1,
            "largest id back");
    kevo_candidate_free(back);
    kevo_candidate_free(n);
    kevo_candidate_free(c);
}

/* tmpl with its "%s" (if any) replaced by text. */
static char *subst(const char *tmpl, const char *text)
{
    const char *at = strstr(tmpl, "%s");
    if (!at)
        return kevo__strdup(tmpl);
    return kevo__asprintf("%.*s%s%s", (int)(at - tmpl), tmpl, text, at + 2);
}

static void test_bad_json(void)
{
    static const char good_source[] =
        "// kevo:launch k<<<1, B>>>(x)\\n// kevo:param B in {32, 64}\\n";
    static const struct {
        const char *json, *error;
    } bad[] = {
        {"[1]", "a.json: $.c: expected an object, found an array"},
        {"{\"id\": 1, \"source\": \"%s\", \"origin\": null, \"params\": "
         "{\"B\": 32}, \"parents\": [], \"operator\": null, \"prompt\": -1}",
         "a.json: $.c: missing key \"generation\""},
        {"{\"id\": 1, \"source\": \"%s\", \"origin\": null, \"params\": "
         "{\"B\": 32}, \"parents\": [], \"operator\": null, \"prompt\": -1, "
         "\"generation\": 0, \"score\": 1}",
         "a.json: $.c: unknown key \"score\""},
        {"{\"id\": -1, \"source\": \"%s\", \"origin\": null, \"params\": "
         "{\"B\": 32}, \"parents\": [], \"operator\": null, \"prompt\": -1, "
         "\"generation\": 0}",
         "a.json: $.c.id: id -1 is out of range (0 to 9223372036854775807)"},
        {"{\"id\": \"7\", \"source\": \"%s\", \"origin\": null, \"params\": "
         "{\"B\": 32}, \"parents\": [], \"operator\": null, \"prompt\": -1, "
         "\"generation\": 0}",
         "a.json: $.c.id: expected an integer, found a string"},
        {"{\"id\": 1, \"source\": 5, \"origin\": null, \"params\": "
         "{\"B\": 32}, \"parents\": [], \"operator\": null, \"prompt\": -1, "
         "\"generation\": 0}",
         "a.json: $.c.source: expected a string, found an integer"},
        {"{\"id\": 1, \"source\": \"// kevo:launch k(x)\", \"origin\": "
         "\"s.cu\", \"params\": {}, \"parents\": [], \"operator\": null, "
         "\"prompt\": -1, \"generation\": 0}",
         "a.json: $.c.source: s.cu:1: kevo:launch: expected '<<<' after "
         "kernel name 'k'"},
        {"{\"id\": 1, \"source\": \"%s\", \"origin\": 3, \"params\": "
         "{\"B\": 32}, \"parents\": [], \"operator\": null, \"prompt\": -1, "
         "\"generation\": 0}",
         "a.json: $.c.origin: expected a string or null, found an integer"},
        {"{\"id\": 1, \"source\": \"%s\", \"origin\": null, \"params\": "
         "{\"B\": 48}, \"parents\": [], \"operator\": null, \"prompt\": -1, "
         "\"generation\": 0}",
         "a.json: $.c.params.B: B=48 is not in the domain of 'B' {32, 64}"},
        {"{\"id\": 1, \"source\": \"%s\", \"origin\": null, \"params\": "
         "{\"B\": 32, \"C\": 1}, \"parents\": [], \"operator\": null, "
         "\"prompt\": -1, \"generation\": 0}",
         "a.json: $.c.params.C: 'C' is not a parameter of this candidate "
         "(its parameters: B)"},
        {"{\"id\": 1, \"source\": \"%s\", \"origin\": null, \"params\": {}, "
         "\"parents\": [], \"operator\": null, \"prompt\": -1, "
         "\"generation\": 0}",
         "a.json: $.c.params: no value for parameter 'B'"},
        {"{\"id\": 1, \"source\": \"%s\", \"origin\": null, \"params\": "
         "{\"B\": 1.5}, \"parents\": [], \"operator\": null, \"prompt\": -1, "
         "\"generation\": 0}",
         "a.json: $.c.params.B: expected an integer, found a real number"},
        {"{\"id\": 1, \"source\": \"%s\", \"origin\": null, \"params\": "
         "{\"B\": 32}, \"parents\": [1, 2, 3, 4, 5, 6, 7, 8, 9], "
         "\"operator\": null, \"prompt\": -1, \"generation\": 0}",
         "a.json: $.c.parents: 9 parents: a candidate records at most 8"},
        {"{\"id\": 1, \"source\": \"%s\", \"origin\": null, \"params\": "
         "{\"B\": 32}, \"parents\": [1, -2], \"operator\": null, "
         "\"prompt\": -1, \"generation\": 0}",
         "a.json: $.c.parents[1]: parent id -2 is out of range"},
        {"{\"id\": 1, \"source\": \"%s\", \"origin\": null, \"params\": "
         "{\"B\": 32}, \"parents\": {}, \"operator\": null, \"prompt\": -1, "
         "\"generation\": 0}",
         "a.json: $.c.parents: expected an array, found an object"},
        {"{\"id\": 1, \"source\": \"%s\", \"origin\": null, \"params\": "
         "{\"B\": 32}, \"parents\": [], \"operator\": false, \"prompt\": -1, "
         "\"generation\": 0}",
         "a.json: $.c.operator: expected a string or null, found a boolean"},
        {"{\"id\": 1, \"source\": \"%s\", \"origin\": null, \"params\": "
         "{\"B\": 32}, \"parents\": [], \"operator\": null, \"prompt\": -2, "
         "\"generation\": 0}",
         "a.json: $.c.prompt: prompt id -2 is out of range"},
        {"{\"id\": 1, \"source\": \"%s\", \"origin\": null, \"params\": "
         "{\"B\": 32}, \"parents\": [], \"operator\": null, \"prompt\": -1, "
         "\"generation\": 4294967296}",
         "a.json: $.c.generation: generation 4294967296 is out of range (0 "
         "to 4294967295)"},
        {"{\"id\": 1, \"source\": \"%s\", \"origin\": null, \"params\": "
         "{\"B\": 32}, \"parents\": [], \"operator\": null, \"prompt\": -1, "
         "\"generation\": 0, \"task_params\": {\"params\": [{\"name\": "
         "\"T\", \"values\": [], \"default\": 0}]}}",
         "a.json: $.c.task_params.params[0]: the domain of 'T' is empty"},
        {"{\"id\": 1, \"source\": \"%s\", \"origin\": null, \"params\": "
         "{\"B\": 32}, \"parents\": [], \"operator\": null, \"prompt\": -1, "
         "\"generation\": 0, \"task_params\": {\"params\": [{\"name\": "
         "\"T\", \"values\": [1, 2], \"default\": 1}]}}",
         "a.json: $.c.params: no value for parameter 'T'"},
    };
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(bad); i++) {
        char *text = subst(bad[i].json, good_source);
        json_t *j;
        if (kevo__json_parse(text, NULL, &j, fresh()) != KEVO_OK)
            bail_out("bad JSON in test %zu: %s", i, err.text);
        kevo_jpath path;
        kevo__jpath_init(&path);
        kevo__jpath_key(&path, "c");
        kevo_candidate *out = (kevo_candidate *)&path;
        kevo_status rc =
            kevo__candidate_from_json(j, "a.json", &path, &out, fresh());
        ok(rc == KEVO_EINVALID || rc == KEVO_EPARSE,
           "bad candidate JSON %zu: refused (%d)", i, rc);
        like_str(err.text, bad[i].error, "bad candidate JSON %zu: message", i);
        ok(out == NULL, "bad candidate JSON %zu: no candidate", i);
        is_str(path.s, "$.c", "bad candidate JSON %zu: path restored", i);
        json_decref(j);
        free(text);
    }
}

int main(void)
{
    test_new();
    test_load();
    test_geometry();
    test_params();
    test_lineage_copy_hash();
    test_refs();
    test_merge();
    test_json();
    test_bad_json();
    return done_testing();
}

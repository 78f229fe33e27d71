/*
 * test-paramspace.c: parameter spaces: domains, defaults, constraints,
 * checking, copying and JSON.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "model/candidate_private.h"
#include "tap.h"

static kevo_error err;

static kevo_error *fresh(void)
{
    kevo_error_init(&err);
    return &err;
}

/* The space most tests use: BLOCK in {128, 256, 512, 1024} = 256, VEC in
 * {1, 2, 4} = 4, and BLOCK * VEC <= 4096. */
static kevo_paramspace *reduction_space(void)
{
    static const int64_t blocks[] = {128, 256, 512, 1024};
    static const int64_t vecs[] = {1, 2, 4};
    kevo_paramspace *s = kevo_paramspace_new();
    if (!s ||
        kevo_paramspace_add_values(s, "BLOCK", blocks, 4, 256, NULL) !=
            KEVO_OK ||
        kevo_paramspace_add_values(s, "VEC", vecs, 3, 4, NULL) != KEVO_OK ||
        kevo_paramspace_add_constraint(s, "BLOCK * VEC <= 4096", NULL) !=
            KEVO_OK)
        bail_out("cannot build the reduction space");
    return s;
}

static void test_values(void)
{
    kevo_paramspace *s = kevo_paramspace_new();
    ok(s != NULL, "new");
    is_uint(kevo_paramspace_count(s), 0, "empty");
    static const int64_t v[] = {512, 128, 256, -1};
    is_int(kevo_paramspace_add_values(s, "BLOCK", v, 4, 128, fresh()), KEVO_OK,
           "add_values");
    is_uint(kevo_paramspace_count(s), 1, "one parameter");
    is_str(kevo_paramspace_name(s, 0), "BLOCK", "its name");
    is_uint(kevo_paramspace_domain_size(s, 0), 4, "domain size");
    is_int(kevo_paramspace_domain_value(s, 0, 0), 512,
           "declaration order kept (0)");
    is_int(kevo_paramspace_domain_value(s, 0, 3), -1,
           "declaration order kept (3)");
    is_int(kevo_paramspace_default(s, 0), 128, "default");

    is_int(kevo_paramspace_add_values(s, "BLOCK", v, 4, 128, fresh()),
           KEVO_EEXIST, "declared twice");
    is_str(err.text, "parameter 'BLOCK' is already declared",
           "declared twice: message");
    is_int(kevo_paramspace_add_values(s, "2x", v, 4, 128, fresh()), KEVO_EINVAL,
           "bad name");
    like_str(err.text, "parameter name '2x' is not an identifier",
             "bad name: message");
    is_int(kevo_paramspace_add_values(s, "E", v, 0, 0, fresh()), KEVO_EINVAL,
           "empty domain");
    is_str(err.text, "the domain of 'E' is empty", "empty domain: message");
    static const int64_t dup[] = {1, 2, 3, 2};
    is_int(kevo_paramspace_add_values(s, "D", dup, 4, 1, fresh()), KEVO_EINVAL,
           "duplicate value");
    is_str(err.text, "value 2 is listed twice in the domain of 'D'",
           "duplicate value: message");
    is_int(kevo_paramspace_add_values(s, "X", v, 4, 300, fresh()), KEVO_EINVAL,
           "default outside");
    is_str(err.text,
           "default 300 of 'X' is not in its domain {512, 128, 256, "
           "-1}",
           "default outside: message");
    is_int(kevo_paramspace_add_values(s, "N", NULL, 2, 0, fresh()), KEVO_EINVAL,
           "NULL values");
    is_int(kevo_paramspace_add_values(NULL, "N", v, 2, 0, fresh()), KEVO_EINVAL,
           "NULL space");

    int64_t *many = malloc((KEVO_PARAM_DOMAIN_MAX + 1) * sizeof *many);
    for (int64_t i = 0; i <= KEVO_PARAM_DOMAIN_MAX; i++)
        many[i] = i;
    is_int(kevo_paramspace_add_values(s, "M", many, KEVO_PARAM_DOMAIN_MAX + 1,
                                      0, fresh()),
           KEVO_ELIMIT, "more than KEVO_PARAM_DOMAIN_MAX values");
    is_str(err.text, "the domain of 'M' has 65537 values: the limit is 65536",
           "too many: message");
    is_int(kevo_paramspace_add_values(s, "M", many, KEVO_PARAM_DOMAIN_MAX,
                                      65535, fresh()),
           KEVO_OK, "exactly KEVO_PARAM_DOMAIN_MAX values");
    free(many);
    is_uint(kevo_paramspace_count(s), 2, "failed declarations left no trace");

    /* Lookups out of range. */
    size_t index = 99;
    is_int(kevo_paramspace_find(s, "M", &index), KEVO_OK, "find");
    is_uint(index, 1, "find: index");
    is_int(kevo_paramspace_find(s, "nope", &index), KEVO_ENOENT,
           "find: unknown");
    ok(kevo_paramspace_name(s, 2) == NULL, "name out of range");
    is_uint(kevo_paramspace_domain_size(s, 2), 0, "domain size out of range");
    is_int(kevo_paramspace_domain_value(s, 0, 4), 0, "value out of range");
    is_int(kevo_paramspace_default(s, 5), 0, "default out of range");
    ok(kevo_paramspace_constraint(s, 0) == NULL, "no constraint");
    is_uint(kevo_paramspace_count(NULL), 0, "count of NULL");
    kevo_paramspace_free(s);
    kevo_paramspace_free(NULL);
}

static void test_range_pow2(void)
{
    kevo_paramspace *s = kevo_paramspace_new();
    is_int(kevo_paramspace_add_range(s, "R", 0, 10, 3, 6, fresh()), KEVO_OK,
           "range");
    is_uint(kevo_paramspace_domain_size(s, 0), 4, "0..10 step 3: 4 values");
    is_int(kevo_paramspace_domain_value(s, 0, 3), 9, "the last is 9");
    is_int(kevo_paramspace_add_range(s, "Z", 1, 8, 0, 1, fresh()), KEVO_EINVAL,
           "step 0");
    is_str(err.text, "step 0 of 'Z' must be positive", "step 0: message");
    is_int(kevo_paramspace_add_range(s, "Z", 8, 1, 1, 1, fresh()), KEVO_EINVAL,
           "lo > hi");
    like_str(err.text, "range 8..1 of 'Z' is empty", "lo > hi: message");
    is_int(kevo_paramspace_add_range(s, "Z", 1, 8, 1, 9, fresh()), KEVO_EINVAL,
           "range: default outside");
    is_str(err.text,
           "default 9 of 'Z' is not in its domain {1, 2, 3, 4, 5, "
           "6, 7, 8}",
           "range: default outside: message");
    is_int(kevo_paramspace_add_range(s, "Z", 1, 1000, 1, 0, fresh()),
           KEVO_EINVAL, "long domain: default outside");
    is_str(err.text,
           "default 0 of 'Z' is not in its domain {1, 2, 3, 4, 5, 6, 7, 8, "
           "..., 1000} (1000 values)",
           "long domains are cut in messages");
    is_int(
        kevo_paramspace_add_range(s, "Z", INT64_MIN, INT64_MAX, 1, 0, fresh()),
        KEVO_ELIMIT, "the whole int64 range");
    is_int(kevo_paramspace_add_range(s, "Z", INT64_MIN, INT64_MAX, INT64_MAX,
                                     INT64_MIN, fresh()),
           KEVO_OK, "extreme bounds with a huge step");
    is_uint(kevo_paramspace_domain_size(s, 1), 3, "huge step: 3 values");
    is_int(kevo_paramspace_domain_value(s, 1, 2), INT64_MAX - 1,
           "huge step: no overflow");

    is_int(kevo_paramspace_add_pow2(s, "P", 1, 64, 8, fresh()), KEVO_OK,
           "pow2");
    is_uint(kevo_paramspace_domain_size(s, 2), 7, "pow2(1..64): 7 values");
    is_int(kevo_paramspace_domain_value(s, 2, 6), 64, "the last is 64");
    is_int(kevo_paramspace_add_pow2(s, "Q", 3, 64, 8, fresh()), KEVO_EINVAL,
           "pow2: 3");
    is_str(err.text,
           "pow2 bounds of 'Q' must be powers of two (1, 2, 4, "
           "...): 3 is not",
           "pow2: message");
    is_int(kevo_paramspace_add_pow2(s, "Q", 0, 64, 8, fresh()), KEVO_EINVAL,
           "pow2: 0");
    is_int(kevo_paramspace_add_pow2(s, "Q", 64, 8, 8, fresh()), KEVO_EINVAL,
           "pow2: lo > hi");
    is_int(kevo_paramspace_add_pow2(s, "Q", 1, INT64_C(1) << 62, 1, fresh()),
           KEVO_OK, "pow2 up to 2^62");
    is_uint(kevo_paramspace_domain_size(s, 3), 63, "pow2(1..2^62): 63 values");
    kevo_paramspace_free(s);
}

static void test_constraints(void)
{
    kevo_paramspace *s = reduction_space();
    is_uint(kevo_paramspace_constraint_count(s), 1, "one constraint");
    is_str(kevo_paramspace_constraint(s, 0), "BLOCK * VEC <= 4096", "its text");
    is_int(kevo_paramspace_add_constraint(s, "BLOCK * ", fresh()), KEVO_EPARSE,
           "bad constraint");
    is_int(err.column, 9, "bad constraint: column");
    is_uint(kevo_paramspace_constraint_count(s), 1, "not added");
    is_int(kevo_paramspace_add_constraint(s, "n % VEC == 0", fresh()), KEVO_OK,
           "a constraint over a dim");

    kevo_vars *a = kevo_vars_new();
    kevo_vars *env = kevo_vars_new();
    kevo_vars_set(a, "other", 7);
    is_int(kevo_paramspace_defaults(s, a), KEVO_OK, "defaults");
    is_uint(kevo_vars_count(a), 3, "defaults keep other names");
    int64_t v = 0;
    kevo_vars_get(a, "VEC", &v);
    is_int(v, 4, "VEC default");

    is_int(kevo_paramspace_check(s, a, NULL, fresh()), KEVO_EUNDEFINED,
           "n has no value without an env");
    is_str(err.text,
           "cannot evaluate constraint: expression 'n % VEC == 0', column 1: "
           "'n' has no value",
           "undefined: message");
    kevo_vars_set(env, "n", 1 << 20);
    is_int(kevo_paramspace_check(s, a, env, fresh()), KEVO_OK, "check passes");

    kevo_vars_set(a, "BLOCK", 2048);
    is_int(kevo_paramspace_check(s, a, env, fresh()), KEVO_ERANGE,
           "value outside its domain");
    is_str(err.text,
           "BLOCK=2048 is not in the domain of 'BLOCK' {128, 256, 512, 1024}",
           "out of domain: message");
    kevo_vars_set(a, "BLOCK", 1024);
    kevo_vars_set(a, "VEC", 8);
    kevo_vars_set(env, "VEC", 2); /* the assignment is on top */
    is_int(kevo_paramspace_check(s, a, env, fresh()), KEVO_ERANGE,
           "the assignment's value is checked, not the env's");
    kevo_vars_set(a, "VEC", 4);
    kevo_vars_set(env, "BLOCK", 128);
    is_int(kevo_paramspace_check(s, a, env, fresh()), KEVO_OK,
           "1024 * 4 <= 4096");

    kevo_paramspace *big = kevo_paramspace_new();
    static const int64_t blocks[] = {128, 256, 512, 1024, 2048};
    kevo_paramspace_add_values(big, "BLOCK", blocks, 5, 128, NULL);
    kevo_paramspace_add_pow2(big, "VEC", 1, 4, 1, NULL);
    kevo_paramspace_add_constraint(big, "BLOCK * VEC <= 4096", NULL);
    kevo_paramspace_add_constraint(big, "n < 0 || BLOCK < 0 || VEC > 2", NULL);
    kevo_vars_set(a, "BLOCK", 2048);
    is_int(kevo_paramspace_check(big, a, env, fresh()), KEVO_ECONSTRAINT,
           "constraint fails");
    is_str(err.text,
           "constraint 'BLOCK * VEC <= 4096' fails with BLOCK=2048, VEC=4",
           "constraint fails: message");
    kevo_vars_set(a, "VEC", 2);
    kevo_vars_set(a, "BLOCK", 256);
    is_int(kevo_paramspace_check(big, a, env, fresh()), KEVO_ECONSTRAINT,
           "second constraint fails");
    is_str(err.text,
           "constraint 'n < 0 || BLOCK < 0 || VEC > 2' fails with n=1048576, "
           "BLOCK=256, VEC=2",
           "second constraint: message names the dim too");

    kevo_vars_unset(a, "VEC");
    is_int(kevo_paramspace_check(big, a, env, fresh()), KEVO_ENOENT,
           "missing value");
    is_str(err.text, "parameter 'VEC' has no value", "missing value: message");

    kevo_paramspace *zero = kevo_paramspace_new();
    kevo_paramspace_add_constraint(zero, "n / (n - n) > 0", NULL);
    is_int(kevo_paramspace_check(zero, a, env, fresh()), KEVO_EDIVZERO,
           "division by zero in a constraint");
    like_str(err.text, "division by zero", "division by zero: message");
    is_int(kevo_paramspace_check(NULL, a, env, fresh()), KEVO_EINVAL,
           "NULL space");

    kevo_paramspace_free(zero);
    kevo_paramspace_free(big);
    kevo_vars_free(a);
    kevo_vars_free(env);
    kevo_paramspace_free(s);
}

static char *to_text(const kevo_paramspace *s)
{
    json_t *j = kevo__paramspace_to_json(s);
    char *text = j ? kevo__json_dump(j) : NULL;
    json_decref(j);
    return text;
}

static void test_copy(void)
{
    kevo_paramspace *s = reduction_space();
    kevo_paramspace *c = kevo_paramspace_copy(s);
    ok(c != NULL, "copy");
    char *a = to_text(s), *b = to_text(c);
    is_str(b, a, "the copy is the same");
    kevo_paramspace_add_range(s, "EXTRA", 1, 3, 1, 1, NULL);
    kevo_paramspace_add_constraint(s, "EXTRA < 3", NULL);
    is_uint(kevo_paramspace_count(c), 2, "the copy is independent");
    is_uint(kevo_paramspace_constraint_count(c), 1,
            "the copy's constraints are independent");
    free(a);
    free(b);
    kevo_paramspace_free(c);
    kevo_paramspace_free(s);
    c = kevo_paramspace_copy(NULL);
    ok(c && kevo_paramspace_count(c) == 0, "copy of NULL is empty");
    kevo_paramspace_free(c);
}

static void test_json(void)
{
    kevo_paramspace *s = reduction_space();
    kevo_paramspace_add_range(s, "UNROLL", 1, 8, 1, 2, NULL);
    char *text = to_text(s);
    is_str(text,
           "{\n  \"constraints\": [\n    \"BLOCK * VEC <= 4096\"\n  ],\n"
           "  \"params\": [\n    {\n      \"default\": 256,\n"
           "      \"name\": \"BLOCK\",\n      \"values\": [\n        128,\n"
           "        256,\n        512,\n        1024\n      ]\n    },\n"
           "    {\n      \"default\": 4,\n      \"name\": \"VEC\",\n"
           "      \"values\": [\n        1,\n        2,\n        4\n"
           "      ]\n    },\n    {\n      \"default\": 2,\n"
           "      \"name\": \"UNROLL\",\n      \"values\": [\n        1,\n"
           "        2,\n        3,\n        4,\n        5,\n        6,\n"
           "        7,\n        8\n      ]\n    }\n  ]\n}",
           "to_json");
    json_t *j;
    kevo_paramspace *back = NULL;
    kevo_jpath path;
    kevo__jpath_init(&path);
    is_int(kevo__json_parse(text, NULL, &j, fresh()), KEVO_OK, "parse");
    is_int(kevo__paramspace_from_json(j, "t.json", &path, &back, fresh()),
           KEVO_OK, "from_json");
    is_str(path.s, "$", "path restored");
    char *again = to_text(back);
    is_str(again, text, "round trip");
    json_decref(j);
    free(again);
    free(text);
    kevo_paramspace_free(back);
    kevo_paramspace_free(s);

    static const struct {
        const char *json, *error;
    } bad[] = {
        {"[]", "t.json: $.space: expected an object, found an array"},
        {"{}", "t.json: $.space: missing key \"params\""},
        {"{\"params\": [], \"extra\": 1}",
         "t.json: $.space: unknown key \"extra\" (known keys: params, "
         "constraints)"},
        {"{\"params\": {}}",
         "t.json: $.space.params: expected an array, found an object"},
        {"{\"params\": [{\"name\": \"A\", \"values\": [1]}]}",
         "t.json: $.space.params[0]: missing key \"default\""},
        {"{\"params\": [{\"name\": 5, \"values\": [1], \"default\": 1}]}",
         "t.json: $.space.params[0].name: expected a string, found an "
         "integer"},
        {"{\"params\": [{\"name\": \"A\", \"values\": [1, 2, \"3\"], "
         "\"default\": 1}]}",
         "t.json: $.space.params[0].values[2]: expected an integer, found a "
         "string"},
        {"{\"params\": [{\"name\": \"A\", \"values\": 1, \"default\": 1}]}",
         "t.json: $.space.params[0].values: expected an array, found an "
         "integer"},
        {"{\"params\": [{\"name\": \"A\", \"values\": [1, 2], \"default\": "
         "3}]}",
         "t.json: $.space.params[0]: default 3 of 'A' is not in its domain "
         "{1, 2}"},
        {"{\"params\": [{\"name\": \"A\", \"values\": [1], \"default\": 1}, "
         "{\"name\": \"A\", \"values\": [1], \"default\": 1}]}",
         "t.json: $.space.params[1]: parameter 'A' is already declared"},
        {"{\"params\": [{\"name\": \"A\", \"values\": [1], \"default\": 1, "
         "\"step\": 1}]}",
         "t.json: $.space.params[0]: unknown key \"step\""},
        {"{\"params\": [], \"constraints\": [\"A >\"]}",
         "t.json: $.space.constraints[0]: expression 'A >', column 4"},
        {"{\"params\": [], \"constraints\": [\"1\", 2]}",
         "t.json: $.space.constraints[1]: expected a string, found an "
         "integer"},
        {"{\"params\": [], \"constraints\": \"A > 1\"}",
         "t.json: $.space.constraints: expected an array, found a string"},
    };
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(bad); i++) {
        kevo_jpath p;
        kevo__jpath_init(&p);
        kevo__jpath_key(&p, "space");
        if (kevo__json_parse(bad[i].json, NULL, &j, fresh()) != KEVO_OK)
            bail_out("bad JSON in test %zu: %s", i, err.text);
        kevo_paramspace *out = (kevo_paramspace *)&p; /* must become NULL */
        is_int(kevo__paramspace_from_json(j, "t.json", &p, &out, fresh()),
               KEVO_EINVALID, "bad JSON %zu: invalid", i);
        like_str(err.text, bad[i].error, "bad JSON %zu: message", i);
        ok(out == NULL, "bad JSON %zu: no space", i);
        is_str(p.s, "$.space", "bad JSON %zu: path restored", i);
        json_decref(j);
    }
}

int main(void)
{
    test_values();
    test_range_pow2();
    test_constraints();
    test_copy();
    test_json();
    return done_testing();
}

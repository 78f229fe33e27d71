/*
 * fuzz-blocks.c: kernel sources with kevo:launch and kevo:param blocks, on
 * arbitrary bytes. Whatever the input, kevo_candidate_new() either fails
 * with a message that names the origin, or gives a candidate whose
 * geometry, check, copy and JSON round trip all behave: the copy and the
 * re-read candidate hash the same, and the JSON dumps again to the same
 * text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/candidate_private.h"
#include "model/devprops.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *dump(const kevo_candidate *c)
{
    json_t *j = kevo__candidate_to_json(c);
    if (!j)
        abort(); /* every candidate (id < 2^63) can be written */
    char *text = kevo__json_dump(j);
    json_decref(j);
    return text;
}

static void exercise(kevo_candidate *c)
{
    kevo_vars *env = kevo_vars_new();
    if (!env || kevo__devprops_nominal(env) != KEVO_OK)
        abort();
    kevo_vars_set(env, "n", 1000003);
    kevo_vars_set(env, "m", 17);
    kevo_vars_set(env, "rows", 4096);
    kevo_vars_set(env, "cols", 1000);

    for (size_t i = 0; i < kevo_candidate_launch_count(c); i++) {
        kevo_launch_geometry g = {.size = sizeof g};
        kevo_error err;
        kevo_error_init(&err);
        kevo_status rc = kevo_candidate_launch_geometry(c, i, env, &g, &err);
        if (rc == KEVO_OK) {
            if (g.grid[0] == 0 || g.grid[1] > 65535 || g.grid[2] > 65535 ||
                (uint64_t)g.block[0] * g.block[1] * g.block[2] > 1024)
                abort();
        } else if (err.code != rc || err.text[0] == '\0') {
            abort();
        }
        if (!kevo_candidate_launch_kernel(c, i))
            abort();
    }
    kevo_error err;
    kevo_error_init(&err);
    kevo_candidate_check(c, env, &err);

    /* Every parameter to its last value, then back through a copy. */
    const kevo_paramspace *ps = kevo_candidate_params(c);
    for (size_t i = 0; i < kevo_paramspace_count(ps); i++) {
        size_t n = kevo_paramspace_domain_size(ps, i);
        if (kevo_candidate_set_param(c, kevo_paramspace_name(ps, i),
                                     kevo_paramspace_domain_value(ps, i, n - 1),
                                     NULL) != KEVO_OK)
            abort();
    }
    uint64_t h = kevo_candidate_hash(c);
    kevo_candidate *copy = kevo_candidate_copy(c);
    if (!copy || kevo_candidate_hash(copy) != h)
        abort();

    uint64_t parents[] = {1, 2};
    kevo_candidate_set_id(c, 7);
    kevo_candidate_set_lineage(c, parents, 2, "fuzz", 3, 4, NULL);
    char *text = dump(c);
    json_t *j = NULL;
    kevo_jpath path;
    kevo__jpath_init(&path);
    kevo_candidate *back = NULL;
    kevo_error_init(&err);
    if (!text || kevo__json_parse(text, NULL, &j, &err) != KEVO_OK ||
        kevo__candidate_from_json(j, "fuzz.json", &path, &back, &err) !=
            KEVO_OK)
        abort();
    char *again = dump(back);
    if (strcmp(text, again) != 0 || kevo_candidate_hash(back) != h ||
        strcmp(path.s, "$") != 0)
        abort();
    free(again);
    free(text);
    json_decref(j);
    kevo_candidate_free(back);
    kevo_candidate_free(copy);
    kevo_vars_free(env);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    kevo_error err;
    kevo_error_init(&err);
    kevo_candidate *c = NULL;
    kevo_status rc = kevo_candidate_new(text, "fuzz.cu", &c, &err);
    if (rc == KEVO_OK) {
        exercise(c);
        kevo_candidate_free(c);
    } else if (c != NULL || err.code != rc || err.text[0] == '\0' ||
               (rc != KEVO_ENOMEM && strncmp(err.text, "fuzz.cu", 7) != 0)) {
        abort(); /* a failure must say why, where, and leave nothing */
    }
    free(text);
    return 0;
}

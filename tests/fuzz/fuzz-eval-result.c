/*
 * fuzz-eval-result.c: the two readers of evaluation results on arbitrary
 * JSON: a GPU worker's result message for a small task, and a result as a
 * checkpoint keeps it. Whatever the input, each either fails with a
 * message that names where, or gives a result whose JSON reads back to the
 * same text, whose fitness is a number >= 0, and whose shapes can all be
 * read.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char task_json[] =
    "{\"name\": \"axpy\", \"dims\": [\"n\"],"
    " \"args\": [{\"name\": \"x\", \"type\": \"f32\", \"role\": \"in\","
    " \"count\": \"n\"}, {\"name\": \"y\", \"type\": \"f32\", \"role\":"
    " \"out\", \"count\": \"n\"}, {\"name\": \"n\", \"type\": \"i32\","
    " \"value\": \"n\"}],"
    " \"reference\": {\"code\": \"/* kevo:launch\\n * k<<<ceil_div(n, 256),"
    " 256>>>(x, y, n)\\n */\\nextern \\\"C\\\" __global__ void k(const float"
    " *x, float *y, int n) { int i = blockIdx.x * 256 + threadIdx.x; if (i <"
    " n) y[i] = x[i]; }\\n\"},"
    " \"seed\": {\"code\": \"/* kevo:launch\\n * k<<<ceil_div(n, 256), "
    "256>>>(x,"
    " y, n)\\n */\\nextern \\\"C\\\" __global__ void k(const float *x, float"
    " *y, int n) { int i = blockIdx.x * 256 + threadIdx.x; if (i < n) y[i] ="
    " x[i]; }\\n\"},"
    " \"cost\": {\"bytes\": \"8*n\"},"
    " \"shapes\": [{\"n\": 1000}, {\"n\": 4096}],"
    " \"held_out\": [{\"n\": 77}]}";

static kevo_task *task(void)
{
    static kevo_task *t;
    if (!t &&
        kevo_task_load_string(task_json, "axpy", NULL, &t, NULL) != KEVO_OK)
        abort();
    return t;
}

static void check(const kevo_eval_result *res)
{
    char *a = NULL, *b = NULL;
    json_t *v = NULL;
    kevo_eval_result *back = NULL;
    kevo_error err;
    kevo_error_init(&err);
    double fit = kevo_eval_result_fitness(res);
    if (!(fit >= 0) || isinf(fit))
        abort();
    for (size_t i = 0; i < kevo_eval_result_shape_count(res); i++) {
        kevo_shape_result s = {.size = sizeof(s)};
        if (kevo_eval_result_shape(res, i, &s) != KEVO_OK)
            abort();
    }
    if (kevo_eval_result_to_json(res, &a, NULL) != KEVO_OK ||
        kevo__json_parse(a, "fuzz", &v, NULL) != KEVO_OK ||
        kevo__eval_result_from_json(v, "fuzz", NULL, &back, &err) != KEVO_OK ||
        kevo_eval_result_to_json(back, &b, NULL) != KEVO_OK ||
        strcmp(a, b) != 0)
        abort();
    kevo_eval_result_free(back);
    json_decref(v);
    free(a);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    json_t *v = NULL;
    kevo_eval_result *res = NULL;
    kevo_error err;
    if (!text)
        abort();
    memcpy(text, data, size);
    text[size] = '\0';
    if (strlen(text) != size ||
        kevo__json_parse(text, "fuzz", &v, NULL) != KEVO_OK) {
        free(text);
        return 0;
    }
    kevo_ceilings ceilings = {3e12, {5e13}, 0};
    kevo_eval_context ctx = {&ceilings, NULL, NULL, 0};
    for (int set = 0; set < 2; set++) {
        kevo_error_init(&err);
        kevo_status rc = kevo__eval_result_new(task(), kevo_task_seed(task()),
                                               (kevo_shape_set)set, v, NULL,
                                               &ctx, &res, &err);
        if (rc == KEVO_OK)
            check(res);
        else if (res || rc != KEVO_EWORKER ||
                 strncmp(err.text, "worker result: $", 16) != 0)
            abort();
        kevo_eval_result_free(res);
        res = NULL;
    }
    kevo_error_init(&err);
    kevo_status rc = kevo__eval_result_from_json(v, "fuzz", NULL, &res, &err);
    if (rc == KEVO_OK)
        check(res);
    else if (res || err.text[0] == '\0')
        abort();
    kevo_eval_result_free(res);
    json_decref(v);
    free(text);
    return 0;
}

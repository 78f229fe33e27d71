/*
 * eval_gate.c: the held-out gate (fitness/gate.c) applied to a held-out
 * result: the result's shapes, their dims as text and its verdict, handed
 * to the gate in the gate's own input struct.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "eval_private.h"
#include "fitness/fitness.h"

/* The dims of each shape of a result, as one block of text lines. */
enum { DIMS_TEXT = 200 };

/* The position of the shape that failed: the one the worker named, else
 * the first that is not correct; the count when none is known. */
static size_t failed_position(const kevo_eval_result *res)
{
    size_t n = kevo_eval_result_shape_count(res);
    for (size_t i = 0; res->failed_shape >= 0 && i < n; i++) {
        if (res->shapes[i].r.index == (size_t)res->failed_shape)
            return i;
    }
    for (size_t i = 0; i < n; i++) {
        if (!res->shapes[i].r.correct)
            return i;
    }
    return n;
}

static bool refuse(char *why, size_t size, const char *text)
{
    if (why && size)
        snprintf(why, size, "%s", text);
    return false;
}

bool kevo_gate_check(const kevo_eval_result *held_out, double slack,
                     double floor, char *why, size_t why_size)
{
    if (why && why_size)
        why[0] = '\0';
    if (!held_out)
        return refuse(why, why_size, "no held-out result");
    if (kevo_eval_result_shape_set(held_out) != KEVO_SHAPES_HELD_OUT)
        return refuse(why, why_size,
                      "the result is not of the held-out shapes");
    size_t n = kevo_eval_result_shape_count(held_out);
    kevo_shape_result *shapes = calloc(n ? n : 1, sizeof *shapes);
    char *text = calloc(n ? n : 1, DIMS_TEXT);
    const char **dims = calloc(n ? n : 1, sizeof *dims);
    if (!shapes || !text || !dims) {
        free(shapes);
        free(text);
        free(dims);
        return refuse(why, why_size, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        shapes[i] = held_out->shapes[i].r;
        dims[i] = kevo__eval_result_shape_text(held_out, i,
                                               text + i * DIMS_TEXT, DIMS_TEXT);
    }
    kevo_verdict v = kevo_eval_result_verdict(held_out);
    kevo_gate_input in = {
        .shapes = shapes,
        .dims = dims,
        .count = n,
        .verdict = v == KEVO_VERDICT_OK ? NULL : kevo_verdict_name(v),
        .reason = kevo_eval_result_reason(held_out),
        .failed = v == KEVO_VERDICT_OK ? n : failed_position(held_out),
    };
    bool pass = kevo__gate_decide(&in, slack, floor, why, why_size);
    free(shapes);
    free(text);
    free(dims);
    return pass;
}

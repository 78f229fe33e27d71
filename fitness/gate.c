/*
 * gate.c: the held-out gate. A candidate passes when it is correct on
 * every held-out shape and its held-out fitness is at least ratio times
 * its training fitness: a kernel tuned to the training shapes, or one
 * that is right only where it was checked, does not.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../lib/eval_private.h"
#include "fitness.h"

static bool decide(bool pass, char *why, size_t size, const char *fmt, ...)
    KEVO_PRINTF(4, 5);

static bool decide(bool pass, char *why, size_t size, const char *fmt, ...)
{
    if (why && size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, size, fmt, ap);
        va_end(ap);
    }
    return pass;
}

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

bool kevo_gate_check(const kevo_eval_result *train,
                     const kevo_eval_result *held_out, double ratio, char *why,
                     size_t why_size)
{
    char dims[256];
    if (!train || !held_out)
        return decide(false, why, why_size, "no %s result",
                      train ? "held-out" : "training");
    if (kevo_eval_result_shape_set(train) != KEVO_SHAPES_TRAIN ||
        kevo_eval_result_shape_set(held_out) != KEVO_SHAPES_HELD_OUT)
        return decide(false, why, why_size,
                      "the results are not of the training and the held-out "
                      "shapes, in that order");
    if (!isfinite(ratio) || ratio < 0)
        return decide(false, why, why_size, "the ratio %g is not a number >= 0",
                      ratio);
    const kevo_candidate *a = kevo_eval_result_candidate(train);
    const kevo_candidate *b = kevo_eval_result_candidate(held_out);
    if (!a || !b || kevo_candidate_hash(a) != kevo_candidate_hash(b))
        return decide(false, why, why_size,
                      "the two results are of different candidates");
    const char *fa = kevo__eval_result_fitness_name(train);
    const char *fb = kevo__eval_result_fitness_name(held_out);
    if (strcmp(fa, fb) != 0)
        return decide(false, why, why_size,
                      "the results use different fitness functions (%s, %s)",
                      fa, fb);

    kevo_verdict v = kevo_eval_result_verdict(held_out);
    if (v != KEVO_VERDICT_OK) {
        size_t i = failed_position(held_out);
        size_t n = kevo_eval_result_shape_count(held_out);
        const char *reason = kevo_eval_result_reason(held_out);
        if (i < n) {
            kevo_shape_result r = {.size = sizeof(r)};
            kevo_eval_result_shape(held_out, i, &r);
            return decide(
                false, why, why_size, "held-out shape %zu (%s) fails: %s: %s",
                r.index,
                kevo__eval_result_shape_text(held_out, i, dims, sizeof(dims)),
                kevo_verdict_name(v), reason ? reason : "");
        }
        return decide(false, why, why_size,
                      "the held-out evaluation fails: %s: %s",
                      kevo_verdict_name(v), reason ? reason : "");
    }
    if (kevo_eval_result_verdict(train) != KEVO_VERDICT_OK) {
        const char *reason = kevo_eval_result_reason(train);
        return decide(false, why, why_size,
                      "the training evaluation fails: %s: %s",
                      kevo_verdict_name(kevo_eval_result_verdict(train)),
                      reason ? reason : "");
    }
    double ft = kevo_eval_result_fitness(train);
    double fh = kevo_eval_result_fitness(held_out);
    if (!(ft > 0))
        return decide(false, why, why_size,
                      "the training result has no fitness (was it timed?)");
    if (!(fh > 0))
        return decide(false, why, why_size,
                      "the held-out result has no fitness (was it timed?)");
    double need = ratio * ft;
    if (fh >= need)
        return decide(true, why, why_size,
                      "held-out fitness %.4g >= %.4g x training fitness "
                      "%.4g = %.4g",
                      fh, ratio, ft, need);
    return decide(false, why, why_size,
                  "held-out fitness %.4g < %.4g x training fitness %.4g = "
                  "%.4g",
                  fh, ratio, ft, need);
}

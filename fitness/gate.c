/*
 * gate.c: the held-out gate. Is a candidate's win real at shapes the
 * search never saw? At every held-out shape the candidate must be correct
 * and not slower than the baseline the user brought (the task's seed, or
 * the reference where the seed's time is unknown) by more than a slack,
 * the two times compared in pairs: a difference inside the precision of
 * the two medians, or below an absolute floor, counts as equal. The
 * held-out efficiency is information only: a latency-bound or skinny
 * shape has a low efficiency for every kernel, which is no failure to
 * generalise, while a collapse against the seed, or a wrong element, is.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../lib/eval_private.h"
#include "fitness.h"

const char *kevo__gate_call_name(kevo_gate_call call)
{
    switch (call) {
    case KEVO__GATE_FASTER: return "faster";
    case KEVO__GATE_WITHIN_SLACK: return "within the slack";
    case KEVO__GATE_EQUAL_NOISE: return "equal within the timing precision";
    case KEVO__GATE_EQUAL_FLOOR: return "equal below the floor";
    case KEVO__GATE_NOT_TIMED: return "correct, not timed";
    case KEVO__GATE_NO_BASELINE: return "correct, no baseline time";
    case KEVO__GATE_SLOWER: return "slower";
    case KEVO__GATE_WRONG: return "wrong";
    }
    return "?";
}

bool kevo__gate_call_passes(kevo_gate_call call)
{
    return call != KEVO__GATE_SLOWER && call != KEVO__GATE_WRONG;
}

/* A time in the unit that reads best: "41.2 us", "6.80 ms", "1.2 s". */
static const char *time_text(double t, char *buf, size_t size)
{
    if (!isfinite(t))
        snprintf(buf, size, "?");
    else if (t < 1e-3)
        snprintf(buf, size, "%.3g us", t * 1e6);
    else if (t < 1)
        snprintf(buf, size, "%.3g ms", t * 1e3);
    else
        snprintf(buf, size, "%.3g s", t);
    return buf;
}

static double known(double x)
{
    return isfinite(x) && x >= 0 ? x : 0;
}

void kevo__gate_judge(const kevo_shape_result *r, double slack, double floor,
                      kevo__gate_row *row)
{
    memset(row, 0, sizeof *row);
    row->index = r->index;
    row->time = r->correct ? r->time : NAN;
    row->base_time = NAN;
    row->allowed = 1 / (1 + slack);
    row->speed = NAN;
    if (!r->correct) {
        row->call = KEVO__GATE_WRONG;
        return;
    }
    double tb = NAN, sb = NAN;
    if (isfinite(r->seed_time) && r->seed_time > 0) {
        row->baseline = "seed";
        tb = r->seed_time;
        sb = r->seed_spread;
    } else if (isfinite(r->reference_time) && r->reference_time > 0) {
        row->baseline = "reference";
        tb = r->reference_time;
        sb = r->reference_spread;
    }
    row->base_time = tb;
    row->paired = r->paired;
    double t = r->time;
    if (!(isfinite(t) && t > 0)) {
        row->call = KEVO__GATE_NOT_TIMED;
        return;
    }
    if (!row->baseline) {
        row->call = KEVO__GATE_NO_BASELINE;
        return;
    }
    row->speed = tb / t;
    double allowed = tb * (1 + slack);
    if (t <= tb)
        row->call = KEVO__GATE_FASTER;
    else if (t <= allowed)
        row->call = KEVO__GATE_WITHIN_SLACK;
    else if (t - tb <= floor)
        row->call = KEVO__GATE_EQUAL_FLOOR;
    else if (t - allowed <=
             hypot(known(r->time_spread) * t, (1 + slack) * known(sb) * tb))
        row->call = KEVO__GATE_EQUAL_NOISE;
    else
        row->call = KEVO__GATE_SLOWER;
}

const char *kevo__gate_row_text(const kevo_eval_result *res, size_t i,
                                const kevo__gate_row *row, char *buf,
                                size_t size)
{
    char dims[200], a[32], b[32];
    kevo__eval_result_shape_text(res, i, dims, sizeof dims);
    if (row->call == KEVO__GATE_WRONG || row->call == KEVO__GATE_NOT_TIMED ||
        row->call == KEVO__GATE_NO_BASELINE)
        snprintf(buf, size, "held-out %s: %s", dims,
                 kevo__gate_call_name(row->call));
    else
        snprintf(buf, size,
                 "held-out %s: %s vs %s %s, %.2fx, allowed %.2fx: %s", dims,
                 time_text(row->time, a, sizeof a), row->baseline,
                 time_text(row->base_time, b, sizeof b), row->speed,
                 row->allowed, kevo__gate_call_name(row->call));
    return buf;
}

/* Appends text to why (cut at size), after "; " unless it is the first. */
static void append(char *why, size_t size, const char *text)
{
    if (!why || size == 0)
        return;
    size_t len = strlen(why);
    if (len + 1 >= size)
        return;
    snprintf(why + len, size - len, "%s%s", len ? "; " : "", text);
}

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

bool kevo_gate_check(const kevo_eval_result *held_out, double slack,
                     double floor, char *why, size_t why_size)
{
    char dims[256];
    if (why && why_size)
        why[0] = '\0';
    if (!held_out)
        return decide(false, why, why_size, "no held-out result");
    if (kevo_eval_result_shape_set(held_out) != KEVO_SHAPES_HELD_OUT)
        return decide(false, why, why_size,
                      "the result is not of the held-out shapes");
    if (!isfinite(slack) || slack < 0)
        return decide(false, why, why_size, "the slack %g is not a number >= 0",
                      slack);
    if (!isfinite(floor) || floor < 0)
        return decide(false, why, why_size,
                      "the floor %g is not a number of seconds >= 0", floor);
    kevo_verdict v = kevo_eval_result_verdict(held_out);
    if (v != KEVO_VERDICT_OK) {
        size_t i = failed_position(held_out);
        size_t n = kevo_eval_result_shape_count(held_out);
        const char *reason = kevo_eval_result_reason(held_out);
        if (i < n)
            return decide(
                false, why, why_size, "held-out shape %zu (%s) fails: %s: %s",
                held_out->shapes[i].r.index,
                kevo__eval_result_shape_text(held_out, i, dims, sizeof(dims)),
                kevo_verdict_name(v), reason ? reason : "");
        return decide(false, why, why_size,
                      "the held-out evaluation fails: %s: %s",
                      kevo_verdict_name(v), reason ? reason : "");
    }
    size_t n = kevo_eval_result_shape_count(held_out);
    if (n == 0)
        return decide(false, why, why_size, "the result has no held-out shape");
    bool pass = true;
    char line[512];
    /* The failing shapes first, then the others, in shape order. */
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < n; i++) {
            kevo__gate_row row;
            kevo__gate_judge(&held_out->shapes[i].r, slack, floor, &row);
            bool ok = kevo__gate_call_passes(row.call);
            if (ok != (round == 1))
                continue;
            pass = pass && ok;
            append(why, why_size,
                   kevo__gate_row_text(held_out, i, &row, line, sizeof line));
        }
    }
    return pass;
}

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

const char *kevo__gate_row_text(const char *dims, const kevo__gate_row *row,
                                char *buf, size_t size)
{
    char a[32], b[32];
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

bool kevo__gate_decide(const kevo_gate_input *in, double slack, double floor,
                       char *why, size_t why_size)
{
    if (why && why_size)
        why[0] = '\0';
    if (!isfinite(slack) || slack < 0)
        return decide(false, why, why_size, "the slack %g is not a number >= 0",
                      slack);
    if (!isfinite(floor) || floor < 0)
        return decide(false, why, why_size,
                      "the floor %g is not a number of seconds >= 0", floor);
    if (in->verdict) {
        if (in->failed < in->count)
            return decide(false, why, why_size,
                          "held-out shape %zu (%s) fails: %s: %s",
                          in->shapes[in->failed].index, in->dims[in->failed],
                          in->verdict, in->reason ? in->reason : "");
        return decide(false, why, why_size,
                      "the held-out evaluation fails: %s: %s", in->verdict,
                      in->reason ? in->reason : "");
    }
    if (in->count == 0)
        return decide(false, why, why_size, "the result has no held-out shape");
    bool pass = true;
    char line[512];
    /* The failing shapes first, then the others, in shape order. */
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < in->count; i++) {
            kevo__gate_row row;
            kevo__gate_judge(&in->shapes[i], slack, floor, &row);
            bool ok = kevo__gate_call_passes(row.call);
            if (ok != (round == 1))
                continue;
            pass = pass && ok;
            append(why, why_size,
                   kevo__gate_row_text(in->dims[i], &row, line, sizeof line));
        }
    }
    return pass;
}

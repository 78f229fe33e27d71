/*
 * kevo_tolerance.c: a shape's worst output element as a fraction of its
 * tolerance (see kevo_tolerance.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kevo_tolerance.h"

error_fraction error_fraction_of(const kevo_task *task,
                                 const kevo_shape_result *s)
{
    error_fraction f = {.known = false};
    if (!s->worst_arg)
        return f;
    for (size_t i = 0; i < kevo_task_arg_count(task); i++) {
        kevo_arg_info info = {.size = sizeof info};
        if (kevo_task_arg_info(task, i, &info) != KEVO_OK ||
            strcmp(info.name, s->worst_arg) != 0)
            continue;
        f.known = true;
        f.rtol = info.rtol;
        f.atol = info.atol;
        f.exact = info.rtol == 0 && info.atol == 0 && info.rtol_amax == 0 &&
                  info.ulp == 0 && info.factor == 0;
        break;
    }
    if (!f.known)
        return f;
    double got = s->worst_got, want = s->worst_want;
    f.unwritten = isnan(got) && !isnan(want);
    if (isnan(got) || isnan(want))
        f.error = isnan(got) && isnan(want) ? 0 : INFINITY;
    else if (isinf(got) || isinf(want))
        f.error = got == want ? 0 : INFINITY;
    else
        f.error = fabs(got - want);
    /* What the worker says the tolerance allows there (every term of it:
     * the amax and ulp terms too, or the baseline rule's factor times the
     * baseline's largest error plus atol), else atol + rtol |want|. */
    f.allowed = isfinite(s->worst_tol) && s->worst_tol >= 0 ? s->worst_tol
                : isfinite(want) ? f.atol + f.rtol * fabs(want)
                                 : f.atol;
    f.fraction = f.error == 0    ? 0
                 : f.allowed > 0 ? f.error / f.allowed
                                 : INFINITY;
    return f;
}

const char *error_fraction_text(const error_fraction *f, char *buf, size_t size)
{
    if (!f->known)
        snprintf(buf, size, "-");
    else if (f->fraction == 0)
        snprintf(buf, size, "%s", f->exact ? "exact" : "0");
    else if (isinf(f->error))
        snprintf(buf, size, "%s", f->unwritten ? "NaN" : "inf");
    else if (f->allowed == 0)
        snprintf(buf, size, "over 0");
    else if (f->fraction < 0.01 || f->fraction >= 100)
        snprintf(buf, size, "%.1e", f->fraction);
    else
        snprintf(buf, size, "%.2f", f->fraction);
    return buf;
}

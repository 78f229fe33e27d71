/*
 * kevo_tolerance.h: the error column of `kevo eval`: a shape's worst
 * output element as a fraction of its tolerance, the way the worker
 * judges it, so that 1.00 is the limit a correct kernel stays within.
 * Kept apart from the command so that it can be tested on real results.
 */
#ifndef KEVO_TOLERANCE_H
#define KEVO_TOLERANCE_H

#include <stdbool.h>
#include <stddef.h>

#include <kevo.h>

/* The worst element of a shape against its tolerance. */
typedef struct error_fraction {
    bool known;      /* the shape has a worst element */
    double error;    /* |got - want|; infinite for a NaN or an infinity
                        that the reference does not have */
    double allowed;  /* atol + rtol * |want| */
    double fraction; /* error / allowed: 0 when equal, infinite when the
                        allowed error is 0 and they differ */
    bool exact;      /* the output must match exactly (atol = rtol = 0) */
    bool unwritten;  /* got is NaN where the reference is not: the
                        poison, or a NaN the kernel wrote */
    double rtol, atol;
} error_fraction;

/* The worst element of s (a shape of a result for task) against the
 * tolerance of its output argument, as the worker compares: NaN passes
 * only where the reference is NaN, an infinity only where the reference
 * has the same. */
error_fraction error_fraction_of(const kevo_task *task,
                                 const kevo_shape_result *s);

/* The column's text, at most 9 characters, in buf: "0.31", "4.0e-03",
 * "1.2e+04" (a failure), "0" (equal), "exact" (equal, where the tolerance
 * is zero), "over 0" (differs where the tolerance is zero), "NaN" (a NaN
 * where the reference has a number), "inf" (an infinity or a NaN the
 * reference does not have), "-" (nothing compared). */
const char *error_fraction_text(const error_fraction *f, char *buf,
                                size_t size);

#endif

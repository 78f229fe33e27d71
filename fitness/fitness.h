/*
 * fitness.h: fitness functions behind a small table of functions, the
 * roofline figures every evaluated shape carries, and the device ceilings
 * they are measured against.
 *
 * A fitness function scores each shape from its measured time, the task's
 * cost model at that shape (bytes, flops, the peak the flops count
 * against), the device's ceilings and the baselines' times, and combines
 * the per-shape scores into one fitness. Two kinds exist: roofline
 * efficiency (the default) and speedup over a baseline (the task's seed or
 * its reference).
 */
#ifndef KEVO_FITNESS_H
#define KEVO_FITNESS_H

#include "core/kevo_private.h"
#include "model/devprops.h"

/* The default level above which an efficiency is flagged as suspicious. */
#define KEVO__SUSPICIOUS_DEFAULT 1.05

/* One shape as a fitness function sees it. */
typedef struct kevo_fitness_shape {
    bool correct;          /* passed the correctness checks */
    double time;           /* median seconds; NaN when not timed */
    double bytes, flops;   /* the task's cost model at this shape */
    kevo_peak peak;        /* the ceiling the flops count against */
    double seed_time;      /* the task's seed at this shape; NaN: unknown */
    double reference_time; /* the reference at this shape; NaN: unknown */
} kevo_fitness_shape;

/* The roofline figures of one shape. Unknown values are NaN. */
typedef struct kevo_roofline {
    double floor;      /* max(bytes / bandwidth, flops / peak), seconds */
    double efficiency; /* floor / time */
    kevo_bound bound;  /* which term of the floor is the larger */
    bool bound_known;  /* false when the floor is unknown */
    double gbytes_per_s, gflops_per_s; /* the cost model over the time */
} kevo_roofline;

/* A fitness function. */
typedef struct kevo_fitness_fn {
    const char *name;    /* "roofline", "speedup_seed", ... */
    const char *meaning; /* one line, for documentation and reports */
    /* The score of one shape: positive and finite, or NaN when the shape
     * has none (it failed, was not timed, or a ceiling or baseline it
     * needs is unknown). */
    double (*score)(const kevo_fitness_shape *shape,
                    const kevo_ceilings *ceilings);
    /* The fitness of n per-shape scores: 0 when n is 0 or any score is
     * NaN (a failed or untimed shape), else a combination of them. */
    double (*combine)(const double *scores, size_t n);
} kevo_fitness_fn;

/* Roofline efficiency: the score of a shape is floor / time, and the
 * fitness their geometric mean. The default. (roofline.c) */
extern const kevo_fitness_fn kevo__fitness_roofline;

/* Speedup over the task's seed or over its reference: the score of a
 * shape is baseline time / time, and the fitness their geometric mean.
 * (speedup.c) */
extern const kevo_fitness_fn kevo__fitness_speedup_seed;
extern const kevo_fitness_fn kevo__fitness_speedup_reference;

/* The fitness function called name, or NULL. (fitness.c) */
const kevo_fitness_fn *kevo__fitness_find(const char *name);

/* The i-th fitness function, in a fixed order; NULL past the last.
 * (fitness.c) */
const kevo_fitness_fn *kevo__fitness_at(size_t i);

/* The geometric mean of n values: 0 when n is 0 or any value is not
 * positive and finite (NaN included). Computed as exp(mean(log x)), in
 * index order, so that equal inputs give bit-equal results. (fitness.c) */
double kevo__geomean(const double *x, size_t n);

/* The roofline figures of shape with the ceilings (either may make the
 * floor unknown: a term whose numerator is positive needs its ceiling).
 * The efficiency and the rates need a positive, finite time; the
 * correctness of the shape does not matter here. (roofline.c) */
void kevo__roofline(const kevo_fitness_shape *shape,
                    const kevo_ceilings *ceilings, kevo_roofline *out);

/* "memory" or "compute"; "?" otherwise. (roofline.c) */
const char *kevo__bound_name(kevo_bound bound);

/* ---- the held-out gate (gate.c) ------------------------------------------ */

/* What the gate makes of one held-out shape. */
typedef enum kevo_gate_call {
    KEVO__GATE_FASTER = 0,       /* no slower than the baseline */
    KEVO__GATE_WITHIN_SLACK = 1, /* slower, by no more than the slack */
    KEVO__GATE_EQUAL_NOISE = 2,  /* beyond the slack by less than the
                                    precision of the two medians */
    KEVO__GATE_EQUAL_FLOOR = 3,  /* slower by less than the floor */
    KEVO__GATE_NOT_TIMED = 4,    /* correct; no time to compare */
    KEVO__GATE_NO_BASELINE = 5,  /* correct; no baseline time */
    KEVO__GATE_SLOWER = 6,       /* fails: slower beyond all of those */
    KEVO__GATE_WRONG = 7         /* fails: not correct */
} kevo_gate_call;

/* One held-out shape as the gate judged it. */
typedef struct kevo__gate_row {
    size_t index; /* the shape's index in the held-out set */
    kevo_gate_call call;
    const char *baseline; /* "seed", "reference" or NULL: static */
    double time;          /* the candidate's median, NaN when unknown */
    double base_time;     /* the baseline's median, NaN when unknown */
    double speed;         /* base_time / time: above 1 is faster */
    double allowed;       /* the lowest speed the slack allows */
    bool paired;          /* the two times were measured in pairs */
} kevo__gate_row;

/* Judges one held-out shape (see kevo_gate_check()). */
void kevo__gate_judge(const kevo_shape_result *r, double slack, double floor,
                      kevo__gate_row *row);

/* True when the call lets the candidate pass. */
bool kevo__gate_call_passes(kevo_gate_call call);

/* "faster", "within the slack", ..., "slower", "wrong". Static. */
const char *kevo__gate_call_name(kevo_gate_call call);

/* The line of row, for the shape whose dims read dims ("n=1000003"), as
 * kevo__gate_decide() writes it, in buf. Returns buf. */
const char *kevo__gate_row_text(const char *dims, const kevo__gate_row *row,
                                char *buf, size_t size);

/* What the gate reads of one held-out evaluation: the evaluator fills it
 * from a result (kevo_gate_check() in lib/eval), so that the gate never
 * sees the evaluator's internals. */
typedef struct kevo_gate_input {
    const kevo_shape_result *shapes; /* the held-out shapes, in order */
    const char *const *dims;         /* per shape, "n=1000003" */
    size_t count;
    const char *verdict; /* NULL when the evaluation is "ok"; else the
                            verdict's name, and the candidate fails */
    const char *reason;  /* the failure's reason, or NULL */
    size_t failed;       /* the position of the failing shape; count when
                            none is known */
} kevo_gate_input;

/* The gate's decision on in with the slack and the floor (seconds): true
 * when it passes. why (when not NULL) gets the failing shapes' lines
 * first, then the others, joined with "; ", or the reason it fails as a
 * whole; cut at why_size. A slack or floor that is not a number >= 0 fails,
 * saying so. */
bool kevo__gate_decide(const kevo_gate_input *in, double slack, double floor,
                       char *why, size_t why_size);

#endif

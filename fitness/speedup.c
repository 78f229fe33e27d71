/*
 * speedup.c: speedup over a baseline as a fitness function. The baseline
 * is the task's seed kernel or its reference, timed by the same method on
 * the same shapes; the score of a shape is baseline time / time, and the
 * fitness the geometric mean of the scores.
 */
#include "config.h"

#include <math.h>

#include "fitness.h"

static double speedup(const kevo_fitness_shape *shape, double baseline)
{
    if (!shape->correct || !isfinite(shape->time) || shape->time <= 0 ||
        !isfinite(baseline) || baseline <= 0)
        return NAN;
    return baseline / shape->time;
}

static double seed_score(const kevo_fitness_shape *shape,
                         const kevo_ceilings *ceilings)
{
    (void)ceilings;
    return speedup(shape, shape->seed_time);
}

static double reference_score(const kevo_fitness_shape *shape,
                              const kevo_ceilings *ceilings)
{
    (void)ceilings;
    return speedup(shape, shape->reference_time);
}

const kevo_fitness_fn kevo__fitness_speedup_seed = {
    "speedup_seed",
    "speedup over the task's seed kernel: the geometric mean over the "
    "shapes of seed time / time",
    seed_score,
    kevo__geomean,
};

const kevo_fitness_fn kevo__fitness_speedup_reference = {
    "speedup_reference",
    "speedup over the task's reference kernel: the geometric mean over the "
    "shapes of reference time / time",
    reference_score,
    kevo__geomean,
};

/*
 * roofline.c: the roofline figures of a shape, and roofline efficiency as
 * a fitness function.
 *
 * The floor of a shape is the least time its cost model allows on the
 * device: max(bytes / bandwidth, flops / peak, launch), where launch is
 * the time of the shortest kernel the device runs (an empty one, measured
 * like every other ceiling): a shape too small to fill the GPU cannot take
 * less, so its efficiency says how close a kernel comes to that instead of
 * being a meaningless fraction of a nanosecond. Its efficiency is floor /
 * measured time: 1 is a kernel at the roofline, and a value above 1 means
 * the cost model or the measurement is off.
 */
#include "config.h"

#include <math.h>

#include "fitness.h"

static bool known(double ceiling)
{
    return isfinite(ceiling) && ceiling > 0;
}

void kevo__roofline(const kevo_fitness_shape *shape,
                    const kevo_ceilings *ceilings, kevo_roofline *out)
{
    out->floor = NAN;
    out->efficiency = NAN;
    out->bound = KEVO_BOUND_MEMORY;
    out->bound_known = false;
    out->gbytes_per_s = NAN;
    out->gflops_per_s = NAN;

    double bytes = shape->bytes, flops = shape->flops;
    bool costed = isfinite(bytes) && isfinite(flops) && bytes >= 0 &&
                  flops >= 0 && bytes + flops > 0;
    bool timed = isfinite(shape->time) && shape->time > 0;
    if (costed && timed) {
        out->gbytes_per_s = bytes / shape->time / 1e9;
        out->gflops_per_s = flops / shape->time / 1e9;
    }
    if (!costed || !ceilings || (unsigned)shape->peak >= KEVO__PEAK_COUNT)
        return;

    double memory = 0, compute = 0;
    if (bytes > 0) {
        if (!known(ceilings->bandwidth))
            return;
        memory = bytes / ceilings->bandwidth;
    }
    if (flops > 0) {
        double peak = ceilings->peak[shape->peak];
        if (!known(peak))
            return;
        compute = flops / peak;
    }
    out->bound = compute > memory ? KEVO_BOUND_COMPUTE : KEVO_BOUND_MEMORY;
    out->bound_known = true;
    out->floor = compute > memory ? compute : memory;
    if (known(ceilings->launch) && ceilings->launch > out->floor) {
        out->floor = ceilings->launch;
        out->bound = KEVO_BOUND_LATENCY;
    }
    if (timed)
        out->efficiency = out->floor / shape->time;
}

const char *kevo__bound_name(kevo_bound bound)
{
    switch (bound) {
    case KEVO_BOUND_MEMORY: return "memory";
    case KEVO_BOUND_COMPUTE: return "compute";
    case KEVO_BOUND_LATENCY: return "latency";
    }
    return "?";
}

static double roofline_score(const kevo_fitness_shape *shape,
                             const kevo_ceilings *ceilings)
{
    if (!shape->correct)
        return NAN;
    kevo_roofline r;
    kevo__roofline(shape, ceilings, &r);
    return isfinite(r.efficiency) && r.efficiency > 0 ? r.efficiency : NAN;
}

const kevo_fitness_fn kevo__fitness_roofline = {
    "roofline",
    "roofline efficiency: the geometric mean over the shapes of "
    "max(bytes / bandwidth, flops / peak, launch latency) / time",
    roofline_score,
    kevo__geomean,
};

/*
 * fitness.c: the table of fitness functions, and the geometric mean they
 * share.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "fitness.h"

static const kevo_fitness_fn *const functions[] = {
    &kevo__fitness_roofline,
    &kevo__fitness_speedup_seed,
    &kevo__fitness_speedup_reference,
};

const kevo_fitness_fn *kevo__fitness_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < KEVO_ARRAY_SIZE(functions); i++) {
        if (strcmp(functions[i]->name, name) == 0)
            return functions[i];
    }
    return NULL;
}

const kevo_fitness_fn *kevo__fitness_at(size_t i)
{
    return i < KEVO_ARRAY_SIZE(functions) ? functions[i] : NULL;
}

double kevo__geomean(const double *x, size_t n)
{
    if (n == 0)
        return 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || x[i] <= 0)
            return 0;
        sum += log(x[i]);
    }
    return exp(sum / (double)n);
}

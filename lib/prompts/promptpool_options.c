/*
 * promptpool_options.c: the options of a prompt pool: their table (names,
 * kinds, bounds, defaults), the public queries and the typed setter and
 * getter.
 */
#include "config.h"

#include <math.h>

#include "promptpool_private.h"

static const kevo__option entries[] = {
    [KEVO_PROMPTPOOL_PRIOR_SUCCESS] =
        KEVO__OPTION_POSITIVE("prior_success", 1, 1e6, KEVO__OPTION_LIVE),
    [KEVO_PROMPTPOOL_PRIOR_FAILURE] =
        KEVO__OPTION_POSITIVE("prior_failure", 1, 1e6, KEVO__OPTION_LIVE),
    [KEVO_PROMPTPOOL_BEAT_WEIGHT] =
        KEVO__OPTION_REAL("beat_weight", 0.5, 0, 1, KEVO__OPTION_LIVE),
    [KEVO_PROMPTPOOL_REVISE_EVERY] =
        KEVO__OPTION_INT("revise_every", 50, 0, 1000000000, KEVO__OPTION_LIVE),
    [KEVO_PROMPTPOOL_REVISE_MIN_USES] = KEVO__OPTION_INT(
        "revise_min_uses", 20, 1, 1000000000, KEVO__OPTION_LIVE),
    [KEVO_PROMPTPOOL_REVISE_MIN_AGE] = KEVO__OPTION_INT(
        "revise_min_age", 100, 0, 1000000000, KEVO__OPTION_LIVE),
};

_Static_assert(KEVO_ARRAY_SIZE(entries) == KEVO__PROMPTPOOL_OPTION_COUNT,
               "one entry per kevo_promptpool_option, the last included");

const kevo__option_table kevo__promptpool_options =
    KEVO__OPTION_TABLE("prompt pool", entries);

#define TABLE (&kevo__promptpool_options)

const char *kevo_promptpool_option_name(kevo_promptpool_option opt)
{
    return kevo__option_name(TABLE, (int)opt);
}

kevo_status kevo_promptpool_option_from_name(const char *name,
                                             kevo_promptpool_option *out)
{
    int i;
    kevo_status rc = kevo__option_find(TABLE, name, &i, NULL);
    if (rc == KEVO_OK && out)
        *out = (kevo_promptpool_option)i;
    return rc;
}

kevo_status kevo_promptpool_option_bounds(kevo_promptpool_option opt,
                                          double *lo, double *hi, double *def)
{
    return kevo__option_bounds_real(TABLE, (int)opt, lo, hi, def);
}

kevo_status kevo_promptpool_set(kevo_promptpool *pool,
                                kevo_promptpool_option opt, double value,
                                kevo_error *err)
{
    if (!pool)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_promptpool_set: pool must not be NULL");
    kevo_status rc =
        kevo__option_check_real(TABLE, (int)opt, value, false, err);
    if (rc == KEVO_OK)
        pool->opt[opt] = value;
    return rc;
}

double kevo_promptpool_get(const kevo_promptpool *pool,
                           kevo_promptpool_option opt)
{
    if (!pool || !kevo__option_at(TABLE, (int)opt))
        return NAN;
    return pool->opt[opt];
}

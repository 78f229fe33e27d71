/*
 * search_options.c: the options of a search: their names, bounds and
 * defaults, which of them may change once the search runs, and the typed
 * setter and getter.
 */
#include "config.h"

#include <string.h>

#include "search_private.h"

/* ---- options ------------------------------------------------------------- */

typedef struct option_info {
    const char *name;
    int64_t lo, hi, def;
    bool live; /* may change after the first step */
} option_info;

static const option_info options[KEVO__SEARCH_OPTIONS] = {
    [KEVO_SEARCH_SEED] = {"seed", 0, INT64_MAX, 1, false},
    [KEVO_SEARCH_MAX_EVALS] = {"max_evals", 0, INT64_MAX, 300, true},
    [KEVO_SEARCH_MAX_SECONDS] = {"max_seconds", 0, INT64_MAX, 0, true},
    [KEVO_SEARCH_MAX_TOKENS] = {"max_tokens", 0, INT64_MAX, 0, true},
    [KEVO_SEARCH_MAX_COST_MICROS] = {"max_cost_micros", 0, INT64_MAX, 0, true},
    [KEVO_SEARCH_TARGET_PPM] = {"target_ppm", 0, INT64_MAX, 0, true},
    [KEVO_SEARCH_STAGNATION] = {"stagnation", 0, INT64_MAX, 0, true},
    [KEVO_SEARCH_CHECKPOINT_EVERY] = {"checkpoint_every", 1, INT64_MAX, 50,
                                      true},
    [KEVO_SEARCH_ISLANDS] = {"islands", 1, 64, 1, false},
    [KEVO_SEARCH_MIGRATE_EVERY] = {"migrate_every", 1, INT64_MAX, 50, false},
    [KEVO_SEARCH_PICK_UNIFORM] = {"pick_uniform", 0, 1000000, 40, false},
    [KEVO_SEARCH_PICK_SOFTMAX] = {"pick_softmax", 0, 1000000, 40, false},
    [KEVO_SEARCH_PICK_CURIOSITY] = {"pick_curiosity", 0, 1000000, 20, false},
    [KEVO_SEARCH_TEMPERATURE_PPM] = {"temperature_ppm", 1, 1000000000, 100000,
                                     false},
    [KEVO_SEARCH_DEPTH] = {"depth", 0, 4096, 0, false},
    [KEVO_SEARCH_INSPIRATIONS] = {"inspirations", 0, 16, 2, false},
    [KEVO_SEARCH_GATE_TOP] = {"gate_top", 1, 1000, 10, true},
    [KEVO_SEARCH_TUNE] = {"tune", 0, 1, 1, true},
    [KEVO_SEARCH_CHILDREN] = {"children", 1, 64, 1, false},
    [KEVO_SEARCH_REPAIR_TURNS] = {"repair_turns", 0, 8, 1, true},
};

const char *kevo_search_option_name(kevo_search_option opt)
{
    if ((unsigned)opt >= KEVO__SEARCH_OPTIONS)
        return NULL;
    return options[opt].name;
}

kevo_status kevo_search_option_from_name(const char *name,
                                         kevo_search_option *out)
{
    for (size_t i = 0; name && i < KEVO__SEARCH_OPTIONS; i++) {
        if (strcmp(options[i].name, name) == 0) {
            if (out)
                *out = (kevo_search_option)i;
            return KEVO_OK;
        }
    }
    return KEVO_ENOENT;
}

kevo_status kevo_search_option_bounds(kevo_search_option opt, int64_t *lo,
                                      int64_t *hi, int64_t *def)
{
    if ((unsigned)opt >= KEVO__SEARCH_OPTIONS)
        return KEVO_EINVAL;
    if (lo)
        *lo = options[opt].lo;
    if (hi)
        *hi = options[opt].hi;
    if (def)
        *def = options[opt].def;
    return KEVO_OK;
}

void kevo__search_options_default(int64_t *opt)
{
    for (size_t i = 0; i < KEVO__SEARCH_OPTIONS; i++)
        opt[i] = options[i].def;
}

kevo_status kevo_search_set_int(kevo_search *s, kevo_search_option opt,
                                int64_t value, kevo_error *err)
{
    if (!s || (unsigned)opt >= KEVO__SEARCH_OPTIONS)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_search_set_int: unknown option %d",
                               (int)opt);
    const option_info *o = &options[opt];
    if (s->state.started && !o->live)
        return kevo__error_set(err, KEVO_ESTATE,
                               "search option %s cannot change once the "
                               "search has started",
                               o->name);
    if (value < o->lo || value > o->hi)
        return kevo__error_set(err, KEVO_ERANGE,
                               "search option %s: %lld is outside [%lld, "
                               "%lld]",
                               o->name, (long long)value, (long long)o->lo,
                               (long long)o->hi);
    s->cfg.opt[opt] = value;
    return KEVO_OK;
}

int64_t kevo_search_get_int(const kevo_search *s, kevo_search_option opt)
{
    if (!s || (unsigned)opt >= KEVO__SEARCH_OPTIONS)
        return -1;
    return s->cfg.opt[opt];
}

/*
 * search_options.c: the options of a search: their table (names, bounds,
 * defaults, which of them may change once the search runs), the typed
 * setter and getter, and the held-out gate's settings made of them.
 */
#include "config.h"

#include "core/options.h"
#include "search_private.h"

static const kevo__option entries[] = {
    [KEVO_SEARCH_SEED] =
        KEVO__OPTION_INT("seed", 1, 0, INT64_MAX, KEVO__OPTION_FIXED),
    [KEVO_SEARCH_MAX_EVALS] =
        KEVO__OPTION_INT("max_evals", 300, 0, INT64_MAX, KEVO__OPTION_LIVE),
    [KEVO_SEARCH_MAX_SECONDS] =
        KEVO__OPTION_INT("max_seconds", 0, 0, INT64_MAX, KEVO__OPTION_LIVE),
    /* A ceiling on what a model costs when no budget was chosen: a search
     * of the default 300 evaluations makes some 400 to 600 model calls
     * (children, repairs, revisions) of 5,000 to 15,000 tokens each, 2 to
     * 9 million tokens; twenty million leaves room for that and stops a
     * run that goes on far longer than planned. 0: no ceiling. */
    [KEVO_SEARCH_MAX_TOKENS] = KEVO__OPTION_INT("max_tokens", 20000000, 0,
                                                INT64_MAX, KEVO__OPTION_LIVE),
    [KEVO_SEARCH_MAX_COST_MICROS] =
        KEVO__OPTION_INT("max_cost_micros", 0, 0, INT64_MAX, KEVO__OPTION_LIVE),
    [KEVO_SEARCH_TARGET_PPM] =
        KEVO__OPTION_INT("target_ppm", 0, 0, INT64_MAX, KEVO__OPTION_LIVE),
    [KEVO_SEARCH_STAGNATION] =
        KEVO__OPTION_INT("stagnation", 0, 0, INT64_MAX, KEVO__OPTION_LIVE),
    [KEVO_SEARCH_CHECKPOINT_EVERY] = KEVO__OPTION_INT(
        "checkpoint_every", 50, 1, INT64_MAX, KEVO__OPTION_LIVE),
    [KEVO_SEARCH_ISLANDS] =
        KEVO__OPTION_INT("islands", 1, 1, 64, KEVO__OPTION_FIXED),
    [KEVO_SEARCH_MIGRATE_EVERY] =
        KEVO__OPTION_INT("migrate_every", 50, 1, INT64_MAX, KEVO__OPTION_FIXED),
    [KEVO_SEARCH_PICK_UNIFORM] =
        KEVO__OPTION_INT("pick_uniform", 40, 0, 1000000, KEVO__OPTION_FIXED),
    [KEVO_SEARCH_PICK_SOFTMAX] =
        KEVO__OPTION_INT("pick_softmax", 40, 0, 1000000, KEVO__OPTION_FIXED),
    [KEVO_SEARCH_PICK_CURIOSITY] =
        KEVO__OPTION_INT("pick_curiosity", 20, 0, 1000000, KEVO__OPTION_FIXED),
    [KEVO_SEARCH_TEMPERATURE_PPM] = KEVO__OPTION_INT(
        "temperature_ppm", 100000, 1, 1000000000, KEVO__OPTION_FIXED),
    [KEVO_SEARCH_DEPTH] =
        KEVO__OPTION_INT("depth", 0, 0, 4096, KEVO__OPTION_FIXED),
    [KEVO_SEARCH_INSPIRATIONS] =
        KEVO__OPTION_INT("inspirations", 2, 0, 16, KEVO__OPTION_FIXED),
    [KEVO_SEARCH_GATE_TOP] =
        KEVO__OPTION_INT("gate_top", 10, 1, 1000, KEVO__OPTION_LIVE),
    [KEVO_SEARCH_TUNE] = KEVO__OPTION_BOOL("tune", 1, KEVO__OPTION_LIVE),
    [KEVO_SEARCH_CHILDREN] =
        KEVO__OPTION_INT("children", 1, 1, 64, KEVO__OPTION_FIXED),
    [KEVO_SEARCH_REPAIR_TURNS] =
        KEVO__OPTION_INT("repair_turns", 1, 0, 8, KEVO__OPTION_LIVE),
    [KEVO_SEARCH_GATE_SLACK_PPM] = KEVO__OPTION_INT(
        "gate_slack_ppm", 100000, 0, 10000000, KEVO__OPTION_LIVE),
    [KEVO_SEARCH_GATE_FLOOR_NS] = KEVO__OPTION_INT(
        "gate_floor_ns", -1, -1, 1000000000, KEVO__OPTION_LIVE),
    [KEVO_SEARCH_RANK_DEPTH] =
        KEVO__OPTION_INT("rank_depth", 0, 0, 4096, KEVO__OPTION_FIXED),
    /* Twenty requests in a row without a child: a model that answers
     * with prose, or a configuration that fails every request, not the
     * bad luck of a working one. */
    [KEVO_SEARCH_OPERATOR_FAILURES] = KEVO__OPTION_INT(
        "operator_failures", 20, 0, 1000000, KEVO__OPTION_LIVE),
    [KEVO_SEARCH_FAILURE_BACKOFF_MS] = KEVO__OPTION_INT(
        "failure_backoff_ms", 500, 0, 3600000, KEVO__OPTION_LIVE),
    [KEVO_SEARCH_FAILURE_BACKOFF_MAX_MS] = KEVO__OPTION_INT(
        "failure_backoff_max_ms", 30000, 0, 3600000, KEVO__OPTION_LIVE),
};

_Static_assert(KEVO_ARRAY_SIZE(entries) == KEVO__SEARCH_OPTIONS,
               "one entry per kevo_search_option, the last included");

static const kevo__option_table table = KEVO__OPTION_TABLE("search", entries);

const char *kevo_search_option_name(kevo_search_option opt)
{
    return kevo__option_name(&table, (int)opt);
}

kevo_status kevo_search_option_from_name(const char *name,
                                         kevo_search_option *out)
{
    int i;
    kevo_status rc = kevo__option_find(&table, name, &i, NULL);
    if (rc == KEVO_OK && out)
        *out = (kevo_search_option)i;
    return rc;
}

kevo_status kevo_search_option_bounds(kevo_search_option opt, int64_t *lo,
                                      int64_t *hi, int64_t *def)
{
    return kevo__option_bounds(&table, (int)opt, lo, hi, def);
}

bool kevo_search_option_live(kevo_search_option opt)
{
    return kevo__option_live(&table, (int)opt);
}

void kevo__search_options_default(int64_t *opt)
{
    kevo__option_defaults(&table, opt);
}

kevo_status kevo_search_set_int(kevo_search *s, kevo_search_option opt,
                                int64_t value, kevo_error *err)
{
    if (!s)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_search_set_int: search must not be NULL");
    kevo_status rc =
        kevo__option_check(&table, (int)opt, value, s->state.started, err);
    if (rc == KEVO_OK)
        s->cfg.opt[opt] = value;
    return rc;
}

int64_t kevo_search_get_int(const kevo_search *s, kevo_search_option opt)
{
    if (!s || !kevo__option_at(&table, (int)opt))
        return -1;
    return s->cfg.opt[opt];
}

/* ---- the held-out gate -------------------------------------------------- */

void kevo__search_gate_settings(const kevo_search *s, double *slack,
                                double *floor)
{
    int64_t ns = s->cfg.opt[KEVO_SEARCH_GATE_FLOOR_NS];
    *slack = (double)s->cfg.opt[KEVO_SEARCH_GATE_SLACK_PPM] / 1e6;
    *floor = ns >= 0 ? (double)ns * 1e-9
                     : (s->cfg.ev ? kevo_evaluator_latency(s->cfg.ev) : 0);
}

bool kevo_search_gate_check(const kevo_search *s,
                            const kevo_eval_result *held_out, char *why,
                            size_t why_size)
{
    double slack, floor;
    kevo__search_gate_settings(s, &slack, &floor);
    return kevo_gate_check(held_out, slack, floor, why, why_size);
}

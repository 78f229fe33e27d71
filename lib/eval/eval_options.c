/*
 * eval_options.c: the evaluator's integer options: their names in
 * configuration files, their bounds and their defaults.
 */
#include "config.h"

#include <string.h>

#include "eval_private.h"

static const struct {
    const char *name;
    int64_t lo, hi, def;
    bool live; /* may change after kevo_evaluator_start() */
} options[KEVO__EVAL_OPTION_COUNT] = {
    [KEVO_EVAL_COMPILE_WORKERS] = {"compile_workers", 0, 1024, 0, false},
    [KEVO_EVAL_DEVICE] = {"device", 0, 1023, 0, false},
    [KEVO_EVAL_COMPILE_TIMEOUT_MS] = {"compile_timeout_ms", 100, 3600000, 30000,
                                      true},
    [KEVO_EVAL_RUN_TIMEOUT_MS] = {"run_timeout_ms", 100, 3600000, 10000, true},
    [KEVO_EVAL_WARMUP] = {"warmup", 0, 1000, 3, true},
    [KEVO_EVAL_MIN_REPS] = {"min_reps", 1, 100000, 10, true},
    [KEVO_EVAL_MAX_REPS] = {"max_reps", 1, 100000, 300, true},
    [KEVO_EVAL_TARGET_SPREAD_PPM] = {"target_spread_ppm", 0, 1000000, 10000,
                                     true},
    [KEVO_EVAL_TIME_CAP_MS] = {"time_cap_ms", 1, 600000, 1000, true},
    [KEVO_EVAL_PROFILE] = {"profile", 0, 1, 0, true},
    [KEVO_EVAL_FLUSH_L2] = {"flush_l2", 0, 1, 1, true},
    [KEVO_EVAL_INPUT_SEEDS] = {"input_seeds", 2, 4096, 4, true},
    [KEVO_EVAL_GATE_SLACK_PPM] = {"gate_slack_ppm", 0, 10000000, 100000, true},
    [KEVO_EVAL_SUSPICIOUS_PPM] = {"suspicious_ppm", 1000000, 100000000, 1050000,
                                  true},
    [KEVO_EVAL_SEED] = {"seed", 0, INT64_MAX, 1, true},
    [KEVO_EVAL_GATE_FLOOR_NS] = {"gate_floor_ns", -1, 1000000000, -1, true},
    [KEVO_EVAL_PAIRED_MIN_REPS] = {"paired_min_reps", 1, 100000, 30, true},
    [KEVO_EVAL_PAIRED_SPREAD_PPM] = {"paired_spread_ppm", 0, 1000000, 2500,
                                     true},
};

const char *kevo_eval_option_name(kevo_eval_option opt)
{
    return (unsigned)opt < KEVO__EVAL_OPTION_COUNT ? options[opt].name : NULL;
}

kevo_status kevo_eval_option_from_name(const char *name, kevo_eval_option *out)
{
    if (!name || !out)
        return KEVO_EINVAL;
    for (size_t i = 0; i < KEVO__EVAL_OPTION_COUNT; i++) {
        if (strcmp(options[i].name, name) == 0) {
            *out = (kevo_eval_option)i;
            return KEVO_OK;
        }
    }
    return KEVO_ENOENT;
}

kevo_status kevo_eval_option_bounds(kevo_eval_option opt, int64_t *lo,
                                    int64_t *hi, int64_t *def)
{
    if ((unsigned)opt >= KEVO__EVAL_OPTION_COUNT)
        return KEVO_EINVAL;
    if (lo)
        *lo = options[opt].lo;
    if (hi)
        *hi = options[opt].hi;
    if (def)
        *def = options[opt].def;
    return KEVO_OK;
}

bool kevo__eval_option_live(kevo_eval_option opt)
{
    return (unsigned)opt < KEVO__EVAL_OPTION_COUNT && options[opt].live;
}

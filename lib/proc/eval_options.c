/*
 * eval_options.c: the evaluator's option table (see eval_options.h).
 */
#include "config.h"

#include "eval_options.h"

static const kevo__option entries[] = {
    [KEVO_EVAL_COMPILE_WORKERS] =
        KEVO__OPTION_INT("compile_workers", 0, 0, 1024, KEVO__OPTION_FIXED),
    [KEVO_EVAL_DEVICE] =
        KEVO__OPTION_INT("device", 0, 0, 1023, KEVO__OPTION_FIXED),
    [KEVO_EVAL_COMPILE_TIMEOUT_MS] = KEVO__OPTION_INT(
        "compile_timeout_ms", 30000, 100, 3600000, KEVO__OPTION_LIVE),
    [KEVO_EVAL_RUN_TIMEOUT_MS] = KEVO__OPTION_INT("run_timeout_ms", 10000, 100,
                                                  3600000, KEVO__OPTION_LIVE),
    [KEVO_EVAL_WARMUP] =
        KEVO__OPTION_INT("warmup", 3, 0, 1000, KEVO__OPTION_LIVE),
    [KEVO_EVAL_MIN_REPS] =
        KEVO__OPTION_INT("min_reps", 10, 1, 100000, KEVO__OPTION_LIVE),
    [KEVO_EVAL_MAX_REPS] =
        KEVO__OPTION_INT("max_reps", 300, 1, 100000, KEVO__OPTION_LIVE),
    [KEVO_EVAL_TARGET_SPREAD_PPM] = KEVO__OPTION_INT(
        "target_spread_ppm", 10000, 0, 1000000, KEVO__OPTION_LIVE),
    [KEVO_EVAL_TIME_CAP_MS] =
        KEVO__OPTION_INT("time_cap_ms", 1000, 1, 600000, KEVO__OPTION_LIVE),
    [KEVO_EVAL_PROFILE] = KEVO__OPTION_BOOL("profile", 0, KEVO__OPTION_LIVE),
    [KEVO_EVAL_FLUSH_L2] = KEVO__OPTION_BOOL("flush_l2", 1, KEVO__OPTION_LIVE),
    /* The input sets of a task are drawn when it is first submitted. */
    [KEVO_EVAL_INPUT_SEEDS] = KEVO__OPTION_INT(
        "input_seeds", 4, 2, KEVO__EVAL_INPUT_SEEDS_MAX, KEVO__OPTION_FIXED),
    [KEVO_EVAL_SUSPICIOUS_PPM] = KEVO__OPTION_INT(
        "suspicious_ppm", 1050000, 1000000, 100000000, KEVO__OPTION_LIVE),
    /* Seeds the generator made at start. */
    [KEVO_EVAL_SEED] =
        KEVO__OPTION_INT("seed", 1, 0, INT64_MAX, KEVO__OPTION_FIXED),
    [KEVO_EVAL_PAIRED_MIN_REPS] =
        KEVO__OPTION_INT("paired_min_reps", 30, 1, 100000, KEVO__OPTION_LIVE),
    [KEVO_EVAL_PAIRED_SPREAD_PPM] = KEVO__OPTION_INT(
        "paired_spread_ppm", 2500, 0, 1000000, KEVO__OPTION_LIVE),
};

_Static_assert(KEVO_ARRAY_SIZE(entries) == KEVO__EVAL_OPTION_COUNT,
               "one entry per kevo_eval_option, the last included");

const kevo__option_table kevo__eval_options =
    KEVO__OPTION_TABLE("evaluator", entries);

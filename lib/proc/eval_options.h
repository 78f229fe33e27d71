/*
 * eval_options.h: the evaluator's option table, one entry per
 * kevo_eval_option: names, kinds, defaults, bounds and which options are
 * fixed once the evaluator has started. It lives in this layer, below
 * both ends of the pipe, because the GPU worker reads the timing options
 * of an eval message (warmup, min_reps, max_reps, target_spread_ppm,
 * time_cap_ms, profile, flush_l2: sent under these names, in these units)
 * with the same defaults and bounds the evaluator checks them against.
 */
#ifndef KEVO_PROC_EVAL_OPTIONS_H
#define KEVO_PROC_EVAL_OPTIONS_H

#include <kevo/eval.h>

#include "core/options.h"

/* How many kevo_eval_option values there are. */
#define KEVO__EVAL_OPTION_COUNT (KEVO_EVAL_PAIRED_SPREAD_PPM + 1)

/* The most input sets per shape (the bound of input_seeds): the evaluator
 * draws this many for each task and shape set. */
#define KEVO__EVAL_INPUT_SEEDS_MAX 64

extern const kevo__option_table kevo__eval_options;

/* The options an eval message's "timing" object carries, under their
 * names; profile and flush_l2 travel beside it. */
#define KEVO__EVAL_TIMING_OPTIONS                                              \
    {                                                                          \
        KEVO_EVAL_WARMUP, KEVO_EVAL_MIN_REPS, KEVO_EVAL_MAX_REPS,              \
            KEVO_EVAL_TARGET_SPREAD_PPM, KEVO_EVAL_TIME_CAP_MS                 \
    }

#endif

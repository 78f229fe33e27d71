/*
 * kevo_progress.h: the progress output of `kevo search`, kept apart from
 * the search so that its formatting can be tested: the live line rewritten
 * on a terminal, and the plain lines written elsewhere. Everything here is
 * plain C on plain values; nothing calls the library.
 */
#ifndef KEVO_PROGRESS_H
#define KEVO_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The least time between two redraws of the live line, in seconds. */
#define PROGRESS_INTERVAL 0.25

/* What the live line shows. Unknown reals are NaN. */
typedef struct progress_values {
    uint64_t evaluations;    /* children evaluated so far */
    uint64_t max_evals;      /* the evaluation budget; 0: none */
    double best;             /* the best fitness; NaN before any elite */
    double champion;         /* the gated champion's fitness; NaN: none */
    double coverage;         /* filled cells over all cells, 0 to 1 */
    double evals_per_second; /* NaN or 0 before the first evaluation */
    bool llm;                /* show tokens and cost */
    uint64_t tokens;         /* input plus output tokens */
    double cost;             /* in the currency of the operators' prices */
    double seconds_left;     /* see progress_time_left() */
} progress_values;

/*
 * progress_time_left: the seconds left: seconds_left itself when it is
 * known (a wall-time budget), else the evaluations left of the budget over
 * the rate when both are known, else NaN. With both budgets, the sooner.
 */
double progress_time_left(double seconds_left, uint64_t evaluations,
                          uint64_t max_evals, double evals_per_second);

/*
 * progress_duration: seconds as "42s", "12m05s" or "3h07m" ("--" for NaN,
 * a negative or an infinite value) in buf. Returns the length.
 */
size_t progress_duration(double seconds, char *buf, size_t size);

/*
 * progress_line: the live line for v in buf (NUL-terminated, truncated to
 * size), at most width visible columns wide: when not everything fits,
 * the least important fields are left out (the evaluation count always
 * stays, cut to width if it must). With color, ANSI colour escapes, which
 * take no columns. Returns the number of visible columns.
 */
size_t progress_line(const progress_values *v, int width, bool color, char *buf,
                     size_t size);

/*
 * progress_color_wanted: whether to colour output: only on a terminal
 * (tty) and when no_color (the value of NO_COLOR, may be NULL) is unset or
 * empty.
 */
bool progress_color_wanted(bool tty, const char *no_color);

/* progress_terminal_width: the columns of the terminal on fd, or 80. */
int progress_terminal_width(int fd);

/*
 * progress_due: whether a redraw at time now (seconds, any monotonic
 * clock) is due, at most one per PROGRESS_INTERVAL; when it is, *last
 * becomes now. A *last below 0 means never drawn.
 */
bool progress_due(double *last, double now);

/*
 * progress_champion_line: the plain line for a new champion, such as
 * "champion: fitness 0.912 (candidate 42, params) after 37 evaluations",
 * in buf. operator may be NULL. Returns the length.
 */
size_t progress_champion_line(double fitness, uint64_t id,
                              const char *operator_name, uint64_t evaluations,
                              char *buf, size_t size);

/*
 * progress_checkpoint_line: the plain line for a checkpoint, such as
 * "checkpoint: 100/300 evaluations, best 0.931, coverage 12.5%, 7.1
 * evaluations/s", in buf. Returns the length.
 */
size_t progress_checkpoint_line(const progress_values *v, char *buf,
                                size_t size);

#endif

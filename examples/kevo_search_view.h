/*
 * kevo_search_view.h: what kevo search shows on the terminal while it
 * runs, on stderr, and the closing figures of a run without a summary.
 */
#ifndef KEVO_SEARCH_VIEW_H
#define KEVO_SEARCH_VIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include <kevo.h>

#include "kevo_progress.h"

/* The view of one search; the caller fills it in. */
typedef struct view {
    kevo_search *search;
    bool live;  /* the live line on a terminal */
    bool plain; /* plain lines for champions and checkpoints */
    bool color;
    bool llm;
    double last_draw;
    size_t drawn; /* columns of the live line on screen */
} view;

/* view_start: the line that opens a run, unless the view shows nothing:
 * the task, the device, the plan's operators, the budget and the run
 * directory dir; with the llm operator, a line of its limits (the token
 * budget, the failures in a row that stop the search). */
void view_start(const view *vw, bool resumed, const kevo_task *task,
                kevo_evaluator *ev, json_t *plan, const char *dir);

/* view_draw: draws the live line, at most PROGRESS_INTERVAL apart (a line
 * wiped in between comes back at the next draw). */
void view_draw(view *vw);

/* view_clear: wipes the live line so that other output can be written. */
void view_clear(view *vw);

/* view_on_event: the search's callback, with the view as user: a line
 * for each new champion and, on plain output, each checkpoint; a line
 * saying why the search stopped when the engine says more than the
 * reason's name; else a draw. */
void view_on_event(kevo_search *search, const kevo_search_event *event,
                   void *user);

/* view_on_log: the operator host's log callback, with the view as user:
 * the message on a line of its own. */
void view_on_log(void *user, kevo_log_level level, const char *op_name,
                 const char *message);

/* view_print_stats: without a summary, what the search itself says on
 * stdout: the stop reason, the evaluations and the champion. */
void view_print_stats(kevo_search *search);

#endif

/*
 * kevo/search.h: the search engine. Steady-state, asynchronous MAP-Elites
 * over kernel variants of one task.
 *
 * The engine keeps three kinds of work going at once: operator requests
 * (LLM replies in flight, parameter mutations), compiles in the evaluator's
 * compile pool and runs on its GPU worker. Each step it tops the pipeline
 * up: it picks an island (round robin), a parent from that island's archive
 * by a mix of uniform choice, fitness softmax and curiosity, inspirations
 * from other cells, an operator by weight and, for operators that take
 * prompts, a prompt from the prompt pool by Thompson sampling. Children are
 * evaluated on the training shapes; their fitness and behaviour decide
 * their cell; the operator, the prompt and the parent are credited with
 * what they did. Results are taken in the order their requests were made,
 * so that with synchronous operators (params) and the same fitness values
 * a run with the same seed makes the same decisions.
 *
 * Whenever the best fitness rises, and at the end, the best elites go
 * through the held-out gate (kevo_gate_check()); the champion is the
 * fittest elite that passed. At the end the champion's parameters are tuned
 * per training shape from the measurements the search made, and the result
 * is a dispatch table: the best assignment for each training shape and the
 * rule for other shapes (the nearest training shape), each checked on the
 * held-out shapes.
 *
 * With a run directory (kevo_search_open_run()) the engine logs every
 * evaluation to events.jsonl, writes each child's source to candidates/,
 * checkpoints every so many evaluations and at the end, writes
 * summary.json, best.cu and best.dispatch.json, and can continue a killed
 * run from its last checkpoint. The engine writes no report: the caller
 * does, with kevo_report_write() (kevo/report.h) once the search ended.
 *
 * Typical use: kevo_search_new() for a task, options, an evaluator
 * (kevo_search_set_evaluator()) or a scoring function of the caller's own
 * (kevo_search_set_score_fn()), operators (kevo_search_add_operator()),
 * optionally prompts and a run directory, then kevo_search_run(), or
 * kevo_search_step() in the caller's own loop; then the champion.
 */
#ifndef KEVO_SEARCH_H
#define KEVO_SEARCH_H

#include <stdbool.h>

#include <kevo/archive.h>
#include <kevo/candidate.h>
#include <kevo/error.h>
#include <kevo/eval.h>
#include <kevo/farm.h>
#include <kevo/operator_host.h>
#include <kevo/promptpool.h>
#include <kevo/task.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_search kevo_search;

/* Integer options of a search. Each has a name, bounds and a default
 * (kevo_search_option_name(), kevo_search_option_bounds()); the budgets,
 * the stop conditions and what happens at the end may change at any time,
 * the others only before the first step (kevo_search_option_live()).
 * Budgets of 0 mean no limit. */
typedef enum kevo_search_option {
    KEVO_SEARCH_SEED = 0,             /* the run seed: every random choice */
    KEVO_SEARCH_MAX_EVALS = 1,        /* evaluations of children */
    KEVO_SEARCH_MAX_SECONDS = 2,      /* wall time, this process */
    KEVO_SEARCH_MAX_TOKENS = 3,       /* LLM tokens, input plus output */
    KEVO_SEARCH_MAX_COST_MICROS = 4,  /* LLM cost in millionths */
    KEVO_SEARCH_TARGET_PPM = 5,       /* stop at this fitness, in ppm */
    KEVO_SEARCH_STAGNATION = 6,       /* stop after this many evaluations
                                         without a better best fitness */
    KEVO_SEARCH_CHECKPOINT_EVERY = 7, /* evaluations between checkpoints */
    KEVO_SEARCH_ISLANDS = 8,          /* separate archives */
    KEVO_SEARCH_MIGRATE_EVERY = 9,    /* evaluations between migrations:
                                         each island's best elite is
                                         offered to the next island */
    KEVO_SEARCH_PICK_UNIFORM = 10,    /* parent choice: relative weight of
                                         uniform choice over the elites */
    KEVO_SEARCH_PICK_SOFTMAX = 11,    /* ... of fitness softmax */
    KEVO_SEARCH_PICK_CURIOSITY = 12,  /* ... of curiosity softmax */
    KEVO_SEARCH_TEMPERATURE_PPM = 13, /* softmax temperature, in ppm */
    KEVO_SEARCH_DEPTH = 14,           /* evaluations in flight at most, and
                                         asynchronous operator requests in
                                         flight at most; 0: the compile
                                         processes plus two, and two per
                                         GPU past the first (1 with a
                                         scoring function) */
    KEVO_SEARCH_INSPIRATIONS = 15,    /* inspirations shown per request */
    KEVO_SEARCH_GATE_TOP = 16,        /* elites tried, best first, when
                                         looking for a champion at the end */
    KEVO_SEARCH_TUNE = 17,            /* 1: per-shape tuning at the end */
    KEVO_SEARCH_CHILDREN = 18,        /* children asked of each request */
    KEVO_SEARCH_REPAIR_TURNS = 19,    /* times a failed child goes back to
                                         an operator that repairs, with
                                         kevo's diagnostic (0: never) */
    KEVO_SEARCH_GATE_SLACK_PPM = 20,  /* the held-out gate's slack: how
                                         much slower than the baseline a
                                         candidate may be at a held-out
                                         shape, in ppm (see
                                         kevo_gate_check()) */
    KEVO_SEARCH_GATE_FLOOR_NS = 21,   /* the gate's absolute floor: time
                                         differences below it count as
                                         equal; -1: the evaluator's
                                         measured launch latency */
    KEVO_SEARCH_RANK_DEPTH = 22,      /* with a farm: evaluations in
                                         flight on each other rank at
                                         most; 0: as each rank says (its
                                         compile processes plus two per
                                         GPU, 2 with a scoring function) */
    /* Stop once one operator's requests (repairs included) gave no child
     * to evaluate this many times in a row (0: never). */
    KEVO_SEARCH_OPERATOR_FAILURES = 23,
    /* An operator whose requests gave no child twice in a row waits this
     * many milliseconds before its next one, twice as long after each
     * further failure in a row (0: no wait) ... */
    KEVO_SEARCH_FAILURE_BACKOFF_MS = 24,
    /* ... and at most this many. */
    KEVO_SEARCH_FAILURE_BACKOFF_MAX_MS = 25
} kevo_search_option;

/* Why a search stopped, as kevo_search_stats.stop says. Values are only
 * ever appended. */
typedef enum kevo_stop_reason {
    KEVO_STOP_NONE = 0,        /* still running */
    KEVO_STOP_EVALUATIONS = 1, /* the evaluation budget */
    KEVO_STOP_TIME = 2,        /* the wall-time budget */
    KEVO_STOP_TOKENS = 3,      /* the token budget */
    KEVO_STOP_COST = 4,        /* the cost budget */
    KEVO_STOP_TARGET = 5,      /* the target fitness was reached */
    KEVO_STOP_STAGNATION = 6,  /* no better fitness for too long */
    KEVO_STOP_EXHAUSTED = 7,   /* every operator said it has nothing new */
    KEVO_STOP_INTERRUPTED = 8, /* kevo_search_interrupt() */
    /* An operator's requests kept giving no child (operator_failures). */
    KEVO_STOP_OPERATOR_FAILURES = 9,
    /* Every operator request in flight waits on an outside party (such as
     * the llm operator's request files) and nothing is being evaluated:
     * the checkpoint is written, and kevo_search_open_run() with
     * KEVO_SEARCH_RUN_RESUME goes on once replies arrive. */
    KEVO_STOP_WAITING = 10
} kevo_stop_reason;

/* The reason's name ("evaluations", "time", ...), or "unknown". Static. */
KEVO_API const char *kevo_stop_reason_name(kevo_stop_reason reason);

/* What a search has done so far, filled by kevo_search_get_stats(). The
 * caller allocates it and sets size to sizeof(kevo_search_stats). */
typedef struct kevo_search_stats {
    size_t size;
    uint64_t evaluations;  /* children evaluated (resumed runs: all of them) */
    uint64_t in_flight;    /* operator requests and evaluations under way */
    uint64_t failures;     /* evaluations whose verdict was not ok */
    uint64_t improvements; /* evaluations that raised the best fitness */
    double best_fitness;   /* over every island; NaN before any elite */
    double champion_fitness; /* the gated champion's; NaN when none */
    double coverage;         /* filled cells over all cells, all islands */
    size_t filled;           /* filled cells, all islands */
    double elapsed;          /* seconds of this process's search */
    double evals_per_second; /* over this process's search */
    uint64_t input_tokens, output_tokens;
    double cost;
    double seconds_left; /* before the wall-time budget; NaN without one */
    kevo_stop_reason stop;
    /* Children proposed by operators (judged, or refused by the host),
     * repairs included, and of those the ones that compiled and were
     * correct: valid / proposals is the validity. */
    uint64_t proposals, valid;
    uint64_t repairs; /* repair requests sent to operators */
    unsigned char reserved[40];
} kevo_search_stats;

/* What a callback is told about. Values are only ever appended. */
typedef enum kevo_search_event_type {
    KEVO_SEARCH_EVALUATED = 0,  /* a child was evaluated and judged */
    KEVO_SEARCH_CHAMPION = 1,   /* a new champion passed the gate */
    KEVO_SEARCH_GATE = 2,       /* an elite was gated (passed or not) */
    KEVO_SEARCH_CHECKPOINT = 3, /* a checkpoint was written */
    KEVO_SEARCH_FAILURE = 4,    /* an operator request failed */
    KEVO_SEARCH_STOPPED = 5     /* the search stopped (stats.stop says why) */
} kevo_search_event_type;

/* An event, borrowed for the callback's duration. Fields that do not
 * apply are NULL, NaN or 0. */
typedef struct kevo_search_event {
    size_t size;
    kevo_search_event_type type;
    const kevo_candidate *candidate; /* EVALUATED, CHAMPION, GATE */
    const kevo_eval_result *result;  /* EVALUATED, GATE (held-out), when
                                        the evaluator made it */
    double fitness;                  /* EVALUATED, CHAMPION, GATE */
    kevo_insert_outcome outcome;     /* EVALUATED */
    size_t island;                   /* EVALUATED */
    bool passed;                     /* GATE */
    /* FAILURE: the reason; GATE: why it failed; STOPPED: what the engine
     * says beyond the stop reason (operator_failures), or NULL. */
    const char *text;
    unsigned char reserved[64];
} kevo_search_event;

/* A callback for events. Called from within kevo_search_step(); it must
 * not call back into the same search except for queries and
 * kevo_search_interrupt(). */
typedef void (*kevo_search_callback)(kevo_search *search,
                                     const kevo_search_event *event,
                                     void *user);

/*
 * A scoring function of the caller's own, for searches without a GPU
 * evaluator (a cost model, a simulator, a timing harness of one's own):
 * it sets *fitness (finite, >= 0; 0 for a failed candidate) and descriptor
 * (one value per archive dimension of the task, already zeroed) for cand,
 * and returns KEVO_OK, or another code with err filled to stop the search.
 */
typedef kevo_status (*kevo_search_score_fn)(const kevo_task *task,
                                            const kevo_candidate *cand,
                                            double *fitness, double *descriptor,
                                            void *user, kevo_error *err);

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_search_fail_candidate: called by a scoring function for the
 * candidate it is scoring, says that the candidate failed and why: kind is
 * a short lower-case word ([a-z0-9_], such as "compile_error" or "wrong")
 * and diagnostic the message an operator should read to repair it (the
 * error lines of a compiler's log, the element that was wrong, ...). The
 * candidate then counts as failed whatever fitness the function gives;
 * its failure is credited to its prompt, shown to later requests for its
 * parent and, within the option repair_turns, sent back to an operator
 * that repairs children (kevo_operator_can_repair()). A function that
 * only gives fitness 0 fails the candidate without a diagnostic: it is
 * counted, never repaired. Returns KEVO_OK; KEVO_ESTATE outside a call of
 * the scoring function; KEVO_EINVAL for a bad kind or a NULL diagnostic;
 * KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_search_fail_candidate(kevo_search *search,
                                                const char *kind,
                                                const char *diagnostic,
                                                kevo_error *err);

/*
 * kevo_search_gate_fn: a held-out gate of the caller's own, for a search
 * scored by a function: returns true when cand, judged with training
 * fitness, passes at the shapes the search never saw, and writes the
 * reason (either way) into why, a buffer of why_size bytes.
 */
typedef bool (*kevo_search_gate_fn)(const kevo_task *task,
                                    const kevo_candidate *cand, double fitness,
                                    char *why, size_t why_size, void *user);
#endif /* KEVO_EXPERIMENTAL */

/*
 * kevo_search_new: a search of task (borrowed: it must outlive the search)
 * in *out, with default options, no operator and no run directory. Its
 * archives have the task's behaviour dimensions. Returns KEVO_OK,
 * KEVO_EINVAL, or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_search_new(const kevo_task *task, kevo_search **out,
                                     kevo_error *err);

/* kevo_search_free: frees the search, its operators and its archives, and
 * closes the run directory. The evaluator (borrowed) is left running: the
 * search's evaluations still pending there stay queued, and their results
 * come out of kevo_evaluator_wait() for the caller to free (or go with
 * kevo_evaluator_free()). NULL does nothing. */
KEVO_API void kevo_search_free(kevo_search *search);

/*
 * kevo_search_option_name: the option's name in configuration files and
 * on the command line ("seed", "max_evals", ...), or NULL for an unknown
 * option (the options are numbered from 0: the first NULL ends them).
 * kevo_search_option_from_name: the option called name in *out (out may
 * be NULL: is there one?). Returns KEVO_OK, KEVO_ENOENT for an unknown
 * name, or KEVO_EINVAL for a NULL name.
 * kevo_search_option_bounds: the smallest, largest and default values
 * (each output may be NULL). Returns KEVO_OK or KEVO_EINVAL.
 * kevo_search_option_live: true when the option may change once the
 * search has started (a budget, a stop condition, the checkpoint
 * interval, what happens at the end); false otherwise and for an unknown
 * option.
 */
KEVO_API const char *kevo_search_option_name(kevo_search_option opt);
KEVO_API kevo_status kevo_search_option_from_name(const char *name,
                                                  kevo_search_option *out);
KEVO_API kevo_status kevo_search_option_bounds(kevo_search_option opt,
                                               int64_t *lo, int64_t *hi,
                                               int64_t *def);
KEVO_API bool kevo_search_option_live(kevo_search_option opt);

/*
 * kevo_search_set_int: sets an option. Returns KEVO_OK; KEVO_ERANGE
 * outside the bounds (the message names the option and gives them:
 * "option islands: 0 is below the lowest allowed value 1 (allowed
 * 1..64)"); KEVO_EINVAL for an unknown option; KEVO_ESTATE once the search
 * has started, for an option that is not live (kevo_search_option_live()).
 * kevo_search_get_int: the option's value, or -1 for an unknown option.
 */
KEVO_API kevo_status kevo_search_set_int(kevo_search *search,
                                         kevo_search_option opt, int64_t value,
                                         kevo_error *err);
KEVO_API int64_t kevo_search_get_int(const kevo_search *search,
                                     kevo_search_option opt);

/*
 * kevo_search_set_evaluator: evaluates children with ev (borrowed, started
 * with a GPU: it must outlive the search). Returns KEVO_OK, KEVO_EINVAL,
 * or KEVO_ESTATE once started or when a scoring function is set.
 */
KEVO_API kevo_status kevo_search_set_evaluator(kevo_search *search,
                                               kevo_evaluator *ev,
                                               kevo_error *err);

/*
 * kevo_search_set_score_fn: scores children with fn instead of an
 * evaluator, one at a time, in the order they were made. There is then no
 * tuning, and no held-out gate unless kevo_search_set_gate_fn() gives one
 * (without, the champion is the best elite). Returns
 * KEVO_OK, KEVO_EINVAL, or KEVO_ESTATE once started or when an evaluator is
 * set.
 */
KEVO_API kevo_status kevo_search_set_score_fn(kevo_search *search,
                                              kevo_search_score_fn fn,
                                              void *user, kevo_error *err);

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_search_set_gate_fn: gives a search scored by a function (set first
 * with kevo_search_set_score_fn()) a held-out gate, fn, called at most once
 * per candidate. The champion is then, as with an evaluator, the fittest
 * candidate ever judged that passes fn, whether or not it is still an
 * elite: a fitter child that fails never pushes a gated one out of the
 * result. Returns KEVO_OK, KEVO_EINVAL, or KEVO_ESTATE once started or
 * without a scoring function.
 */
KEVO_API kevo_status kevo_search_set_gate_fn(kevo_search *search,
                                             kevo_search_gate_fn fn, void *user,
                                             kevo_error *err);
#endif /* KEVO_EXPERIMENTAL */

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_search_host: the operator host of the search, borrowed, for loading
 * plugins and registering built-in operators before
 * kevo_search_add_operator().
 */
KEVO_API kevo_operator_host *kevo_search_host(kevo_search *search);

/*
 * kevo_search_set_farm: spreads the search's evaluations over the ranks of
 * farm (kevo/farm.h; borrowed: it must outlive the search). Every rank
 * sets the search up alike and calls kevo_search_run(). On rank 0 the
 * search sends each rank the task once, then children one message each,
 * keeping each rank's pipeline full (option rank_depth), and judges what
 * comes back in the order the children were made; the seed, the held-out
 * gate and the tuning stay on rank 0's own evaluator. On the other ranks
 * kevo_search_run() evaluates what rank 0 sends with the rank's evaluator
 * or scoring function, and returns KEVO_OK when rank 0 stops. With a
 * scoring function the decisions are those of one rank with the same
 * seed, scores and depth. A rank that ends (a forked process that dies)
 * gives its children in flight to the others. Returns KEVO_OK, KEVO_EINVAL
 * for NULL, or KEVO_ESTATE once started.
 */
KEVO_API kevo_status kevo_search_set_farm(kevo_search *search, kevo_farm *farm,
                                          kevo_error *err);
#endif /* KEVO_EXPERIMENTAL */

/*
 * kevo_search_add_operator: makes an instance of plugin called name (NULL:
 * the plugin's name) with config_json (may be NULL), as
 * kevo_operator_host_add() does, and lets it propose children with relative
 * weight (> 0). Operators that can revise prompts
 * (kevo_operator_can_revise()) get a prompt with each request and revise
 * the pool's prompts. Returns what kevo_operator_host_add() returns;
 * KEVO_ERANGE for a weight that is not positive and finite; KEVO_ESTATE
 * once started.
 */
KEVO_API kevo_status kevo_search_add_operator(kevo_search *search,
                                              const char *plugin,
                                              const char *name,
                                              const char *config_json,
                                              double weight, kevo_error *err);

/*
 * kevo_search_prompts: the search's prompt pool, borrowed (empty at first:
 * load prompts into it, such as kevo_promptpool_load_dir() of
 * kevo_promptpool_seed_dir(), before the first step).
 */
KEVO_API kevo_promptpool *kevo_search_prompts(kevo_search *search);

/*
 * kevo_search_set_callback: calls fn for every event (NULL: none).
 * Returns KEVO_OK or KEVO_EINVAL.
 */
KEVO_API kevo_status kevo_search_set_callback(kevo_search *search,
                                              kevo_search_callback fn,
                                              void *user, kevo_error *err);

/* Flags of kevo_search_open_run(). */
#define KEVO_SEARCH_RUN_RESUME 0x1u /* continue from the checkpoint there */

/*
 * kevo_search_open_run: logs the search to the run directory at path.
 * Without flags it must not hold a run yet (no events.jsonl or
 * checkpoint.json: other files, such as a caller's own settings, may be
 * there); the task is written there as task.json. With KEVO_SEARCH_RUN_RESUME
 * the directory's checkpoint is loaded: archives, prompt pool, random streams,
 * counters, champion and the set of candidates already tried; evaluations that
 * were in flight when it was written are lost and made again. command (may be
 * NULL) is recorded in summary.json and best.cu. Call after the options and the
 * operators (a resumed run must add the same operators), before the first
 * step. Returns KEVO_OK; the errors of kevo_rundir_open(); KEVO_EFORMAT or
 * KEVO_EINVALID for a checkpoint that does not fit, naming the field;
 * KEVO_EINVALID when the checkpoint's task is not this task; KEVO_ESTATE
 * once started.
 */
KEVO_API kevo_status kevo_search_open_run(kevo_search *search, const char *path,
                                          unsigned flags, const char *command,
                                          kevo_error *err);

/*
 * kevo_search_step: does one round of work: tops up the pipeline, drives
 * the operators, and judges the evaluations that finished, waiting at
 * most timeout_ms milliseconds for one (negative: until one does). Once a
 * stop condition holds it lets the work in flight finish, then gates the
 * best elites, tunes the champion, writes the final checkpoint and summary
 * (the report is the caller's, kevo_report_write()), and returns KEVO_DONE;
 * after kevo_search_interrupt() it drops the work in flight and skips the
 * gating and tuning (the champion stays the one gated so far), so that it
 * finishes at once. Later calls return KEVO_DONE at once. Returns KEVO_OK while
 * the search goes on; KEVO_ESTATE without an evaluator or scoring function or
 * without an operator; errors of the evaluator, the scoring function or the run
 * directory, after which the search is stopped (the last checkpoint
 * stands).
 */
KEVO_API kevo_status kevo_search_step(kevo_search *search, int timeout_ms,
                                      kevo_error *err);

/* kevo_search_run: kevo_search_step() until it returns KEVO_DONE (then
 * KEVO_OK) or an error. */
KEVO_API kevo_status kevo_search_run(kevo_search *search, kevo_error *err);

/*
 * kevo_search_interrupt: asks the search to stop as soon as it can, with
 * KEVO_STOP_INTERRUPTED: the work in flight is dropped and the next step
 * writes a checkpoint and finishes. It only sets a flag, so it is safe to
 * call from a signal handler or another thread.
 */
KEVO_API void kevo_search_interrupt(kevo_search *search);

/* kevo_search_get_stats: fills *stats. Returns KEVO_OK or KEVO_EINVAL for
 * a size that is too small. */
KEVO_API kevo_status kevo_search_get_stats(const kevo_search *search,
                                           kevo_search_stats *stats);

/* kevo_search_island_count: how many islands (archives) there are. */
KEVO_API size_t kevo_search_island_count(const kevo_search *search);

/* kevo_search_archive: island i's archive, borrowed; NULL when out of
 * range. */
KEVO_API const kevo_archive *kevo_search_archive(const kevo_search *search,
                                                 size_t island);

/*
 * kevo_search_champion: the champion, borrowed (valid until the next
 * step), or NULL when no candidate passed the gate yet; *fitness (may be
 * NULL) gets its training fitness. With a scoring function and no gate
 * function the champion is the fittest elite.
 */
KEVO_API const kevo_candidate *kevo_search_champion(const kevo_search *search,
                                                    double *fitness);

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_search_gate_check: kevo_gate_check() with the search's
 * gate_slack_ppm and gate_floor_ns (-1, the default: the measured launch
 * latency of the search's evaluator, 0 without one): the rule the search
 * applies to its finalists, for a held-out evaluation made by the caller.
 * Returns and fills why as kevo_gate_check().
 */
KEVO_API bool kevo_search_gate_check(const kevo_search *search,
                                     const kevo_eval_result *held_out,
                                     char *why, size_t why_size);
#endif /* KEVO_EXPERIMENTAL */

/*
 * kevo_search_dispatch_json: the champion's dispatch table as JSON text,
 * borrowed, or NULL before tuning has run: {"params": [names],
 * "default": {assignment}, "rule": "nearest_training_shape", "dims":
 * [names], "shapes": [{"dims": {...}, "params": {...}, "time": s,
 * "champion_time": s}], "held_out": [{"dims": {...}, "params": {...},
 * "correct": bool}]}.
 */
KEVO_API const char *kevo_search_dispatch_json(const kevo_search *search);

#ifdef __cplusplus
}
#endif

#endif

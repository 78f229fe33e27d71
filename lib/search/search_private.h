/*
 * search_private.h: the search engine's insides. A kevo_search is made of
 * groups, one per concept (the struct at the end of the types below):
 * cfg (what the caller set up), ops (operators, prompts and their
 * validity), pop (the islands, whose archives keep the notes beside their
 * elites, and the engine's random stream), run (the run directory), pipe
 * (requests and evaluations in flight), progress (counters, clocks, the best
 * fitness and its history), pick (the gates and the champion), tuning, repair
 * and state (the phase and the stop). A function that needs one group takes
 * that group.
 *
 * The files: search.c (creation, the start, stop conditions and the step
 * through the phases), search_pipeline.c (jobs submitted, collected and
 * judged in ticket order), search_request.c (requests to operators and
 * what they answer), search_judge.c (what an evaluation does to the
 * archives, the credits, the gates and the champion), search_leaders.c
 * (the fittest correct candidates ever judged, apart from the archive,
 * that the gates and the final pick draw from), search_final.c (the
 * finalists timed again together, then gated), search_tune.c (per-shape
 * tuning of the champion), search_repair.c and search_validity.c (failed
 * children sent back; how valid each operator's and prompt's children
 * were), search_state.c (checkpoints and kevo_search_open_run()),
 * search_summary.c (summary.json, best.cu) and search_options.c.
 */
#ifndef KEVO_SEARCH_PRIVATE_H
#define KEVO_SEARCH_PRIVATE_H

#include <jansson.h>
#include <signal.h>

#include "core/jsonutil.h"
#include "core/kevo_private.h"

/* The number of kevo_search_option values. */
#define KEVO__SEARCH_OPTIONS (KEVO_SEARCH_FAILURE_BACKOFF_MAX_MS + 1)

/* How valid an operator's or a prompt's proposals were (search_validity.c):
 * the children judged or refused by the host, repairs included. */
typedef struct kevo__validity {
    uint64_t proposals, valid;   /* all; those that compiled and were
                                    correct */
    uint64_t first, first_valid; /* first attempts (not repairs) */
    uint64_t repairs;            /* repair requests sent */
    uint64_t rescued;            /* repaired children that were valid */
} kevo__validity;

/* The failure kinds of a run of requests without a child, with their
 * counts (search_request.c). */
#define KEVO__STREAK_KINDS 8
typedef struct kevo__streak_kind {
    char kind[32];
    uint64_t n;
} kevo__streak_kind;

/* An operator's requests in a row (repairs included) that gave no child
 * to evaluate: how many, how they failed, the last one's reason, and when
 * the operator may be asked again (search_request.c). Not checkpointed: a
 * resumed run starts without one. */
typedef struct kevo__search_streak {
    uint64_t n;
    kevo__streak_kind kinds[KEVO__STREAK_KINDS];
    size_t nkinds;
    uint64_t other;    /* failures of kinds past KEVO__STREAK_KINDS */
    char *last;        /* the last failure's reason, or NULL */
    double not_before; /* monotonic seconds; 0: at once */
} kevo__search_streak;

/* An operator instance with its weight and what its children did. */
typedef struct kevo__search_op {
    kevo_operator *op;
    char *plugin;
    double weight;
    bool prompts; /* it takes prompts (it can revise them) */
    uint64_t requests, children, evaluated, entered, improved, failures;
    uint64_t revisions;
    kevo__validity validity;
    kevo__search_streak streak;
} kevo__search_op;

/* An operator request in flight: what its children are credited to. */
typedef struct kevo__search_req {
    uint64_t id; /* the host's request id */
    size_t op;   /* index in ops */
    size_t island;
    size_t parent_cell;
    uint64_t parent_id;
    double parent_fitness;
    int64_t prompt; /* -1: none */
    bool revision;  /* a prompt revision, not a request for children */
    uint64_t revised_prompt;
    uint32_t turn; /* a repair of this turn (>= 1), or 0 */
} kevo__search_req;

/* What a job on the evaluator is for. */
typedef enum kevo__job_kind {
    KEVO__JOB_CHILD = 0,  /* a child on the training shapes */
    KEVO__JOB_GATE_TRAIN, /* an elite on the training shapes, for the gate */
    KEVO__JOB_GATE_HELD,  /* an elite on the held-out shapes */
    KEVO__JOB_TUNE_HELD,  /* a tuned assignment on the held-out shapes */
    KEVO__JOB_RETIME      /* a finalist timed again with the others */
} kevo__job_kind;

/* The id the seed gets: the first a search gives (kevo_search_new()
 * starts the count at 1). */
#define KEVO__SEARCH_SEED_ID 1

/* A job on the evaluator (or, with a scoring function, a child waiting to
 * be scored), judged in the order of submission. */
typedef struct kevo__search_job {
    uint64_t ticket;
    kevo__job_kind kind;
    kevo_candidate *cand; /* owned */
    size_t op;            /* CHILD: the operator's index */
    size_t island;
    size_t parent_cell;
    uint64_t parent_id;
    double parent_fitness;
    kevo_eval_result *result; /* once finished, owned */
    size_t tune_index;        /* TUNE_HELD: the assignment's index */
    /* CHILD: the operator request that gave it, its attempt there and its
     * repair turn (0: a first attempt); a scored child's failure as the
     * scoring function reported it (owned, or NULL). */
    uint64_t request;
    uint32_t attempt, turn;
    char *fail_kind, *fail_diagnostic;
    /* With a farm: the rank it went to (0: here); a scored child's
     * fitness and descriptors once that rank sent them (scored), and how
     * often it was sent again after a rank ended. */
    int rank;
    bool scored;
    double fitness;
    double *desc; /* owned */
    uint32_t resent;
} kevo__search_job;

/* One elite's gate: its training and held-out evaluations. */
typedef struct kevo__search_gate {
    uint64_t id;
    double fitness;      /* training, as first measured */
    double retimed;      /* training, timed again beside the other
                            finalists; NaN when not */
    double held_fitness; /* information: the gate does not use it */
    bool started, done, passed;
    char *reason;
    kevo_eval_result *train; /* owned, may be NULL */
    kevo_eval_result *held;  /* owned, may be NULL */
} kevo__search_gate;

/* A correct evaluation's times per training shape, for tuning, and the
 * device that measured them (times compare only within one device). */
typedef struct kevo__search_obs {
    uint64_t id;
    uint64_t source_hash;
    kevo_vars *params; /* owned */
    double *times;     /* one per training shape */
    char *device;      /* owned; NULL: not known */
} kevo__search_obs;

/* A prompt's validity counters (search_validity.c). */
typedef struct kevo__search_pvalid kevo__search_pvalid;

/* The phases of a search, in order; kevo_search_step() moves through them
 * and never back. */
typedef enum kevo__search_phase {
    KEVO__PHASE_SEARCHING = 0, /* requests sent, children judged */
    KEVO__PHASE_DRAINING,      /* a stop condition holds: the work in
                                  flight ends */
    KEVO__PHASE_GATING,        /* the finalists timed again and gated */
    KEVO__PHASE_TUNING,        /* the champion's per-shape tuning */
    KEVO__PHASE_DONE           /* the last checkpoint and summary written */
} kevo__search_phase;

/* What the caller set up before the first step: the task, the options,
 * what judges a child (an evaluator or a scoring function) and the
 * callback. */
typedef struct kevo__search_config {
    const kevo_task *task;
    int64_t opt[KEVO__SEARCH_OPTIONS];
    kevo_evaluator *ev;
    kevo_search_score_fn score;
    void *score_user;
    kevo_search_gate_fn gate; /* with score: the caller's held-out gate */
    void *gate_user;
    kevo_search_callback callback;
    void *callback_user;
} kevo__search_config;

/* What proposes children: the operator host, the operators with their
 * records, the prompt pool, and how valid each prompt's children were. */
typedef struct kevo__search_operators {
    kevo_operator_host *host;
    kevo__search_op *list;
    size_t n;
    /* Children of operators that take prompts judged when the last
     * revision was sent: a revision waits for more (search_request.c). */
    uint64_t judged_at_revision;
    kevo_promptpool *pool;
    kevo__search_pvalid *pvalid; /* validity per prompt */
    size_t npvalid, cpvalid;
} kevo__search_operators;

/* The population: the islands' archives (each keeps the notes beside its
 * elites: archive/archive_notes.h), and the engine's random stream, which
 * picks parents, operators, prompts and inspirations from them. */
typedef struct kevo__search_population {
    kevo_archive **islands;
    size_t nislands;
    kevo_rng *rng;
} kevo__search_population;

/* The run directory (NULL without one), where the event log, checkpoints,
 * summary.json and best.cu go. */
typedef struct kevo__search_run {
    kevo_rundir *dir;
    char *command; /* the command line recorded in the run */
    bool resumed;  /* restored from the run's checkpoint */
} kevo__search_run;

/* The pipeline: operator requests and evaluations in flight. */
typedef struct kevo__search_pipeline {
    kevo__search_req *reqs;
    size_t nreqs, creqs;
    kevo__search_job *jobs; /* in ticket order */
    size_t njobs, cjobs;
    uint64_t next_ticket; /* scoring-function jobs */
} kevo__search_pipeline;

/* Counters, clocks and the best fitness over time: what the budget and the
 * stop conditions read. Kept across a resume, except where said. */
typedef struct kevo__search_progress {
    uint64_t evaluations;       /* judged children, the seed included */
    uint64_t evaluations_start; /* ... when this process started */
    uint64_t submitted;         /* children sent to evaluation */
    uint64_t failures;
    uint64_t improvements;
    uint64_t last_improvement; /* evaluations at the last one */
    uint64_t next_id;
    uint64_t requests;
    uint64_t since_checkpoint;
    uint64_t since_migration;
    uint64_t exhausted_run; /* operator requests in a row that were
                               exhausted */
    double best;            /* over every island; -INFINITY before any */
    double elapsed_before;  /* seconds of earlier processes of the run */
    double start_time;      /* monotonic clock at the first step */
    /* History of the best fitness: pairs (evaluations, best). */
    double *history;
    size_t nhistory, chistory;
} kevo__search_progress;

/* One of the fittest correct candidates judged (search_leaders.c). */
typedef struct kevo__search_leader {
    uint64_t id;
    double fitness;       /* training, as judged */
    kevo_candidate *cand; /* shared */
} kevo__search_leader;

/* The leaders, fittest first (ties: lower id), at most gate_top. */
typedef struct kevo__search_leaders {
    kevo__search_leader *list;
    size_t n, cap;
} kevo__search_leaders;

/* The gates and the pick of the champion. */
typedef struct kevo__search_pick {
    kevo__search_leaders leaders;
    kevo__search_gate *gates;
    size_t ngates, cgates;
    long champion;                 /* an index in gates, or -1 */
    kevo_candidate *champion_cand; /* owned copy */
    /* The final gating: the finalists (the leaders, the champion and the
     * seed),
     * timed again together, then gated in the order of those times. */
    uint64_t *finalists;
    size_t nfinalists;
    bool retime_sent, retime_done;
} kevo__search_pick;

/* Per-shape tuning of the champion (search_tune.c): the times of correct
 * children it draws on, its state once started and its result. */
typedef struct kevo__search_tuning {
    kevo__search_obs *obs;
    size_t nobs, cobs;
    struct kevo__search_tune *tune; /* NULL until started */
    char *dispatch;                 /* the tuning's JSON, once made */
    int pending;                    /* held-out checks in flight */
} kevo__search_tuning;

/* What failures feed back (search_repair.c): the recent failures per
 * parent, and the report of the scoring function on the child it scores
 * (kevo_search_fail_candidate()). */
typedef struct kevo__search_repairs {
    struct kevo__search_memo *memo;
    bool scoring; /* inside the scoring function */
    char *score_kind, *score_diagnostic;
} kevo__search_repairs;

/* Another rank of a farm, as rank 0 sees it. */
typedef struct kevo__search_member {
    bool joined;      /* its hello came */
    bool ended;       /* it ended, or said it cannot evaluate */
    size_t depth;     /* evaluations in flight it keeps at most */
    size_t in_flight; /* sent to it, not yet returned */
    uint64_t done;    /* evaluations it returned */
    char *label;      /* what it evaluates with, from its hello */
    char *why;        /* why it ended */
} kevo__search_member;

/* The farm (search_farm.c): the ranks evaluations go to, and on a member
 * rank what it serves. */
typedef struct kevo__search_farm {
    kevo_farm *farm;              /* NULL: none; borrowed */
    kevo__search_member *members; /* by rank; [0] unused */
    bool task_sent;
    bool joined; /* rank 0 waited for the members' hellos */
    uint64_t next_ticket;
} kevo__search_farm;

/* Where the search is in its life. */
typedef struct kevo__search_state {
    bool started; /* the first step ran */
    kevo__search_phase phase;
    kevo_stop_reason stop;
    char *stop_text; /* what the stop event says beyond the reason, or
                        NULL */
    /* The checkpoint as it was at the last step when nothing was in
     * flight, or NULL: what a search that stops to wait writes, so that
     * its resumption sends the same requests again (search_state.c). */
    json_t *quiet;
    volatile sig_atomic_t interrupted;
} kevo__search_state;

struct kevo_search {
    kevo__search_config cfg;
    kevo__search_operators ops;
    kevo__search_population pop;
    kevo__search_run run;
    kevo__search_pipeline pipe;
    kevo__search_progress progress;
    kevo__search_pick pick;
    kevo__search_tuning tuning;
    kevo__search_repairs repair;
    kevo__search_farm farm;
    kevo__search_state state;
};

/* ---- search_farm.c, search_serve.c ------------------------------------- */

/* The high bit marks the tickets of jobs sent to other ranks, so that they
 * never meet the evaluator's. */
#define KEVO__FARM_TICKET ((uint64_t)1 << 63)

/* True on rank 0 of a farm with other ranks. */
bool kevo__search_farming(const kevo_search *s);
/* Sends job (its candidate and ticket set) to a member rank with room, if
 * one has: *sent says whether it went. */
kevo_status kevo__search_farm_send(kevo_search *s, kevo__search_job *job,
                                   unsigned flags, bool *sent, kevo_error *err);
/* The evaluations in flight the members keep, together. */
size_t kevo__search_farm_depth(const kevo_search *s);
/* Reads what the members sent, waiting at most timeout_ms for the first
 * message. */
kevo_status kevo__search_farm_poll(kevo_search *s, int timeout_ms,
                                   kevo_error *err);
/* Waits (at most timeout_ms) until every member said hello or ended. */
kevo_status kevo__search_farm_join(kevo_search *s, int timeout_ms,
                                   kevo_error *err);
/* The members as JSON for summary.json (NULL without a farm). */
json_t *kevo__search_farm_json(const kevo_search *s);
void kevo__search_farm_free(kevo_search *s);
/* On a member rank: serves rank 0 until it stops. (search_serve.c) */
kevo_status kevo__search_serve(kevo_search *s, kevo_error *err);
/* The evaluations a rank keeps in flight on its own evaluator or scoring
 * function: what a member's hello says, and rank 0's share of a farmed
 * search. */
size_t kevo__search_member_depth(const kevo_search *s);

/* ---- search_options.c ---------------------------------------------------- */

/* Fills opt with every option's default. */
void kevo__search_options_default(int64_t *opt);

/* The held-out gate's slack and floor (seconds) from the search's options:
 * the floor is the evaluator's measured launch latency unless set. */
void kevo__search_gate_settings(const kevo_search *s, double *slack,
                                double *floor);

/* ---- search.c ------------------------------------------------------------ */

/* Makes the islands and the engine's random stream, once (the first step
 * does, and kevo_search_open_run() before it restores a checkpoint). */
kevo_status kevo__search_prepare(kevo_search *s, kevo_error *err);
double kevo__search_now(void);
double kevo__search_elapsed(const kevo_search *s);
/* Appends an event to the run log (when there is one): fields is a JSON
 * object, consumed. */
kevo_status kevo__search_log(kevo_search *s, const char *type, json_t *fields,
                             kevo_error *err);
void kevo__search_emit(kevo_search *s, const kevo_search_event *ev);

/* The evaluations the search's evaluator keeps busy: its compile
 * processes (the cores when unset) and two for each of its devices. */
size_t kevo__search_evaluator_depth(const kevo_search *s);

/* ---- search_pipeline.c --------------------------------------------------- */

/* Submits the n candidates of cands (taken) to the evaluator as one group
 * (kevo_evaluator_submit_group()), a job of kind each. */
kevo_status kevo__search_submit_group(kevo_search *s, kevo__job_kind kind,
                                      kevo_candidate **cands, size_t n,
                                      unsigned flags, kevo_error *err);
/* Submits cand (taken) to the evaluator as a job of kind, or queues it for
 * the scoring function. */
kevo_status kevo__search_submit(kevo_search *s, kevo__job_kind kind,
                                kevo_candidate *cand,
                                const kevo__search_job *proto, unsigned flags,
                                kevo_error *err);
/* Frees what a job holds. */
void kevo__search_job_clear(kevo__search_job *job);
/* Collects finished evaluations into their jobs, waiting at most
 * timeout_ms for the first. */
kevo_status kevo__search_collect(kevo_search *s, int timeout_ms,
                                 kevo_error *err);
/* Judges the finished jobs at the front of the queue, in ticket order;
 * checkpoints and migrates when due. */
kevo_status kevo__search_judge_ready(kevo_search *s, kevo_error *err);
/* Drops the work in flight (after an interrupt). */
void kevo__search_drop_in_flight(kevo_search *s);
/* The most behaviour dimensions a scoring function fills. */
#define KEVO__SCORE_DIMS_MAX 64
/* Scores cand of task with the search's scoring function: *fitness and
 * desc (KEVO__SCORE_DIMS_MAX values, zeroed by the caller), and what the
 * function said with kevo_search_fail_candidate() in *kind and *diagnostic
 * (the caller's, or NULL). Returns the function's status, or KEVO_ELIMIT
 * for too many dimensions. */
kevo_status kevo__search_score(kevo_search *s, const kevo_task *task,
                               const kevo_candidate *cand, double *fitness,
                               double *desc, char **kind, char **diagnostic,
                               kevo_error *err);

/* ---- search_request.c ---------------------------------------------------- */

/* Children waiting for or under evaluation; requests for children in
 * flight. */
size_t kevo__search_children_in_flight(const kevo_search *s);
size_t kevo__search_child_requests(const kevo_search *s);
/* Sends one request for children; *sent is false when no island has a
 * parent yet. */
kevo_status kevo__search_request(kevo_search *s, bool *sent, kevo_error *err);
/* Sends a prompt for revision when the pool says one is due and children
 * of the operators that take prompts were judged since the last one. */
kevo_status kevo__search_revise(kevo_search *s, kevo_error *err);
/* Children of the operators that take prompts judged so far. */
uint64_t kevo__search_prompt_children_judged(const kevo_search *s);
/* Takes every ended operator request: children go to evaluation. */
kevo_status kevo__search_take_results(kevo_search *s, kevo_error *err);
/* The operator whose requests gave no child operator_failures times in a
 * row, or SIZE_MAX. */
size_t kevo__search_failing_operator(const kevo_search *s);
/* What the stop on operator i's failures says, in a new string (NULL when
 * out of memory): the operator, its failure kinds and its last reason. */
char *kevo__search_failures_text(const kevo_search *s, size_t i);
/* Seconds until an operator may be asked again, when every operator is
 * waiting after failures; 0 when one may be asked now. */
double kevo__search_backoff_left(const kevo_search *s);
/* Frees what an operator's streak holds. */
void kevo__search_streak_clear(kevo__search_streak *k);

/* ---- search_judge.c ------------------------------------------------------ */

/* Judges a finished job: a child is inserted and credited; a gate job
 * advances its gate. */
kevo_status kevo__search_judge(kevo_search *s, kevo__search_job *job,
                               kevo_error *err);
/* Judges a child the scoring function scored. */
kevo_status kevo__search_judge_scored(kevo_search *s, kevo__search_job *job,
                                      double fitness, const double *desc,
                                      kevo_error *err);
/* Starts the gate of the elite with id (its candidate cand, its training
 * result res, may be NULL: then the training shapes are evaluated first).
 * Does nothing when that elite was gated already. */
kevo_status kevo__search_gate_start(kevo_search *s, const kevo_candidate *cand,
                                    double fitness, kevo_eval_result **res,
                                    kevo_error *err);
/* The fitness a gate ranks by: the re-measured one when there is one. */
double kevo__search_gate_fitness(const kevo__search_gate *g);
kevo__search_gate *kevo__search_gate_find(kevo__search_pick *pick, uint64_t id);
/* The gate record of id, made (not started) when there is none; NULL when
 * out of memory. */
kevo__search_gate *kevo__search_gate_get(kevo__search_pick *pick, uint64_t id,
                                         double fitness);
/* Makes g the champion (forced: whatever the current one's fitness). */
kevo_status kevo__search_crown(kevo_search *s, kevo__search_gate *g,
                               const kevo_candidate *cand, bool forced,
                               kevo_error *err);
/* Offers each island's best elite to the next island. */
kevo_status kevo__search_migrate(kevo_search *s, kevo_error *err);
/* The elite with id in any island: its island and cell, or false. */
bool kevo__search_find_elite(const kevo_search *s, uint64_t id, size_t *island,
                             size_t *cell);
/* Adds a point (evaluations n, best fitness) to the history. */
kevo_status kevo__search_history_add(kevo__search_progress *p, double n,
                                     double best);

/* ---- search_repair.c ---------------------------------------------------- */

/* What a judged child of an operator does for repairs: counts its
 * validity; a failure (res's verdict, or the scoring function's report in
 * the job; res NULL for a scored child) is credited to its prompt,
 * remembered for its parent and, within repair_turns, sent back to its
 * operator with kevo's diagnostic. */
kevo_status kevo__search_judged(kevo_search *s, const kevo__search_job *job,
                                const kevo_eval_result *res, bool valid,
                                kevo_error *err);
/* The same for the calls of emit_child() that the host refused in res, a
 * result of request r. */
kevo_status kevo__search_take_refused(kevo_search *s, const kevo__search_req *r,
                                      const kevo_operator_result *res,
                                      kevo_error *err);
/* The recent failed attempts from parent (at most max, the newest first),
 * borrowed until the next failure is remembered. */
size_t kevo__search_failures_of(kevo_search *s, uint64_t parent,
                                kevo_operator_failure *out, size_t max);
/* The prompt's failure record as a revision request carries it. */
void kevo__search_revision_failures(kevo_search *s, uint64_t prompt,
                                    kevo_operator_revision *rev,
                                    kevo_operator_failure *kinds,
                                    kevo_operator_failure *children);
void kevo__search_repair_free(kevo__search_repairs *r);

/* ---- search_validity.c --------------------------------------------------- */

/* Counts a proposal of operator op (SIZE_MAX: none) and prompt (-1: none):
 * a first attempt or a repair of turn, valid or not. */
kevo_status kevo__search_count_proposal(kevo__search_operators *ops, size_t op,
                                        int64_t prompt, uint32_t turn,
                                        bool valid);
/* Counts a repair request sent. */
kevo_status kevo__search_count_repair(kevo__search_operators *ops, size_t op,
                                      int64_t prompt);
/* The totals over every operator. */
void kevo__search_validity_total(const kevo__search_operators *ops,
                                 kevo__validity *out);
/* A prompt's counters, or NULL when it has none. */
const kevo__validity *
kevo__search_prompt_validity(const kevo__search_operators *ops,
                             uint64_t prompt);
/* Adds the counters to a summary or checkpoint object o. */
void kevo__search_validity_put(json_t *o, const kevo__validity *v);
/* Reads them back from a checkpoint's object (absent keys stay 0, as in a
 * checkpoint written before they were kept). */
void kevo__search_validity_get(const json_t *o, kevo__validity *v);
/* The per-prompt counters as a checkpoint keeps them, and back. */
json_t *kevo__search_pvalid_json(const kevo__search_operators *ops);
kevo_status kevo__search_pvalid_restore(kevo__search_operators *ops,
                                        const json_t *arr, kevo_error *err);
void kevo__search_validity_free(kevo__search_operators *ops);

/* ---- search_request.c (shared) ------------------------------------------- */

/* Adds r to the requests in flight. */
kevo_status kevo__search_add_req(kevo_search *s, const kevo__search_req *r,
                                 kevo_error *err);

/* ---- search_state.c (checkpoints) and search_summary.c
 * ------------------------------------------------------ */

kevo_status kevo__search_checkpoint(kevo_search *s, kevo_error *err);
/* Keeps the checkpoint of this moment, when nothing is in flight, as
 * s->state.quiet (only with a run directory). */
kevo_status kevo__search_quiet_mark(kevo_search *s, kevo_error *err);
/* Writes s->state.quiet as the checkpoint (the current state without
 * one): a search that stops to wait goes back to before the requests it
 * waits for, which its resumption sends again, in the same order and
 * with the same ids, and an operator that wrote them recognises. */
kevo_status kevo__search_checkpoint_quiet(kevo_search *s, kevo_error *err);
kevo_status kevo__search_restore(kevo_search *s, const char *json,
                                 const char *origin, kevo_error *err);
kevo_status kevo__search_write_summary(kevo_search *s, const char *state,
                                       kevo_error *err);
kevo_status kevo__search_write_best(kevo_search *s, kevo_error *err);
/* A finite number as JSON, anything else as null. */
json_t *kevo__search_num(double v);
/* An assignment as a JSON object {"NAME": value, ...}. */
json_t *kevo__search_params_json(const kevo_vars *params);

/* ---- search_leaders.c ---------------------------------------------------- */

/* Offers a correct candidate judged with fitness to the leaders: kept
 * (shared) when it is among the gate_top fittest; a candidate already
 * there (a migrated copy) is not taken twice. */
kevo_status kevo__search_leaders_offer(kevo_search *s,
                                       const kevo_candidate *cand,
                                       double fitness, kevo_error *err);
/* The leader with id, or NULL. */
const kevo__search_leader *kevo__search_leader_find(const kevo_search *s,
                                                    uint64_t id);
/* While the search runs: starts the gate of the fittest leader fitter than
 * the champion that was not gated yet, unless a fitter one is being gated:
 * after each correct child (just, with its training result *res, taken
 * when its own gate starts; or NULL) and after each gate that fails. */
kevo_status kevo__search_gate_next(kevo_search *s, const kevo_candidate *just,
                                   kevo_eval_result **res, kevo_error *err);
/* The leaders as a checkpoint keeps them, and back. */
json_t *kevo__search_leaders_json(const kevo_search *s);
kevo_status kevo__search_leaders_restore(kevo_search *s, const json_t *arr,
                                         const char *origin, kevo_jpath *path,
                                         kevo_error *err);
void kevo__search_leaders_free(kevo__search_leaders *L);

/* ---- search_final.c ------------------------------------------------------ */

/* The final gating: the finalists timed again together, then gated in the
 * order of those times until one passes, which is crowned. Sets *done when
 * nothing more is to be gated. */
kevo_status kevo__search_final_gate(kevo_search *s, bool *done,
                                    kevo_error *err);

/* ---- search_tune.c ------------------------------------------------------- */

/* Records a correct child's times for tuning (the task's training
 * shapes). */
kevo_status kevo__search_observe(kevo__search_tuning *t, const kevo_task *task,
                                 const kevo_candidate *cand,
                                 const kevo_eval_result *res);
/* Builds the champion's dispatch table from the observations and submits
 * the held-out checks; *pending gets how many jobs it submitted. */
kevo_status kevo__search_tune_start(kevo_search *s, int *pending,
                                    kevo_error *err);
/* Takes a TUNE_HELD job's result into the table. */
kevo_status kevo__search_tune_judge(kevo_search *s, kevo__search_job *job,
                                    kevo_error *err);
/* Writes the finished table as s->tuning.dispatch (and
 * best.dispatch.json). */
kevo_status kevo__search_tune_finish(kevo_search *s, kevo_error *err);
/* Frees what t holds: the observations, the tuning's state and the
 * table. */
void kevo__search_tuning_free(kevo__search_tuning *t);

#endif

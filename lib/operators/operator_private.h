/*
 * operator_private.h: the operator host's insides, shared by the host
 * itself (operator_host.c), its plugins and instances
 * (operator_plugins.c), the requests in flight and their results
 * (operator_requests.c), the table of functions it gives plugins
 * (operator_api.c) and the checks behind it (operator_check.c), and the
 * revision and repair requests (operator_revise.c, operator_repair.c).
 */
#ifndef KEVO_OPERATOR_PRIVATE_H
#define KEVO_OPERATOR_PRIVATE_H

#include "core/kevo_private.h"
#include "model/blocks.h"
#include "prompts/promptpool_private.h"

#define KEVO__OP_MSG_SIZE 1024

/* A registered plugin. */
typedef struct kevo_plugin {
    const kevo_operator_desc *desc;
    char *file;   /* the file it came from, or the origin given; never NULL */
    void *handle; /* dlopen's handle (never closed), or NULL in-process */
} kevo_plugin;

/* A child or a failure, gathered while a request is in flight. */
typedef struct kevo_op_child {
    kevo_candidate *cand; /* NULL once taken */
    char *note;           /* may be NULL */
    uint32_t attempt;     /* the call of emit_child() that gave it */
} kevo_op_child;

/* A call of emit_child() that the host refused. */
typedef struct kevo_op_refused {
    char *source;     /* may be NULL (emit_child() got none) */
    const char *kind; /* "duplicate" or "invalid" (static) */
    char *reason;
    uint32_t attempt;
} kevo_op_refused;

typedef struct kevo_op_failure {
    char *kind;
    char *reason;
} kevo_op_failure;

/* A revised prompt. */
typedef struct kevo_op_prompt {
    kevo__prompt *prompt;         /* checked: sections sorted, trimmed */
    kevo_operator_text *sections; /* pointing into prompt */
    char *json; /* {"sections": {...}}, made when first asked for */
    char *note; /* may be NULL */
} kevo_op_prompt;

struct kevo_operator_result {
    uint64_t id;
    char *op_name;
    kevo_op_child *children;
    size_t nchildren, cchildren;
    kevo_op_failure *failures;
    size_t nfailures, cfailures;
    kevo_op_prompt *prompts;
    size_t nprompts, cprompts;
    kevo_op_refused *refused;
    size_t nrefused, crefused;
    kevo_operator_result *next; /* in the host's queue of ended requests */
};

/* An owned list of named texts (ABI 1.3). */
typedef struct kevo_op_texts {
    kevo_operator_text *items; /* name and text owned */
    size_t n;
} kevo_op_texts;

/* The host's copy of the notes of a request's candidates (ABI 1.3), in
 * the request's order; items[i] points into texts[i]. */
typedef struct kevo_op_notes {
    kevo_operator_notes *items;
    kevo_op_texts *texts;
    size_t n;
} kevo_op_notes;

/* The host's copy of a list of failures (ABI 1.2). */
typedef struct kevo_op_failures {
    kevo_operator_failure *items; /* kind and diagnostic owned */
    size_t n;
} kevo_op_failures;

/* The host's copy of a revision request. */
typedef struct kevo_op_revision {
    kevo_operator_revision rev; /* points into the copies below */
    kevo_prompt_record record;
    kevo__prompt *original; /* the prompt to revise */
    char *name, *best_source, *worst_source;
    /* What a plugin of an older minor reads: JSON text. */
    char *sections, *record_json, *best_summary, *worst_summary;
    /* What a plugin of ABI 1.3 reads instead: original's sections, and the
     * notes of the best and the worst child. */
    kevo_operator_text *texts;
    kevo_op_notes notes;
    kevo_op_failures kinds, failed; /* ABI 1.2 */
} kevo_op_revision;

/* The host's copy of a repair request (ABI 1.2). */
typedef struct kevo_op_repair {
    kevo_operator_repair_request rep; /* points into the copies below */
    kevo_candidate *child;            /* may be NULL */
    char *source, *kind, *diagnostic;
} kevo_op_repair;

/* A request in flight: the host's copy of what the caller submitted, which
 * the plugin reads until it calls done(). */
typedef struct kevo_op_pending {
    uint64_t id;
    kevo_operator_request req;  /* points into the copies below */
    kevo_op_revision *revision; /* a revision request, or NULL */
    kevo_op_repair *repair;     /* a repair request, or NULL */
    uint32_t attempts;          /* calls of emit_child() so far */
    /* The lineage of its children: parents, prompt and generation. */
    uint64_t lineage[2];
    size_t nlineage;
    int64_t prompt_id;
    uint32_t generation;
    kevo_op_failures failures; /* req.failures points into it */
    kevo_operator *op;
    kevo_candidate *parent;
    kevo_candidate *second;
    kevo_candidate **insp_cands;
    kevo_operator_inspiration *insp;
    size_t ninsp;
    char *parent_summary, *second_summary, *target_cell, *prompt;
    char **insp_summaries;
    /* What a plugin of ABI 1.3 reads instead of the JSON texts above:
     * the prompt's sections, and the notes of parent, second parent and
     * inspirations, in that order. */
    kevo_op_texts sections;
    kevo_op_notes notes;
    /* ABI 1.4: where it waits on an outside party (api->waiting()), or
     * NULL. */
    char *waiting;
    kevo_operator_result *res;    /* NULL once ended (moved to the queue) */
    struct kevo_op_pending *next; /* in the host's list of ended requests */
} kevo_op_pending;

/* What a plugin's ctx points to. */
struct kevo_host_ctx {
    kevo_operator *op;
};

struct kevo_operator {
    kevo_host_ctx ctx; /* first: the plugin's ctx is this */
    kevo_operator_host *host;
    const kevo_plugin *plugin;
    char *name;
    void *state;
    kevo_rng *rng;
    size_t in_flight;
    uint64_t input_tokens, output_tokens; /* report_usage() */
    double cost;
    bool in_init;
    char error_msg[KEVO__OP_MSG_SIZE]; /* set by api->error() */
    char last_error[KEVO__OP_MSG_SIZE];
    /* A scratch copy of the candidate last checked, reused (its
     * assignment reset) while the plugin checks the same one again. */
    kevo_candidate *probe;
    const kevo_candidate *probe_of;
    uint64_t probe_source_hash; /* kevo__op_source_hash of its source */
    /* The #include scan of the probe's source, once made: its status and
     * message. */
    bool probe_scanned;
    kevo_status probe_scan;
    char *probe_scan_msg;
};

struct kevo_operator_host {
    const kevo_task *task;
    uint64_t seed;
    kevo_plugin *plugins;
    size_t nplugins, cplugins;
    kevo_operator **ops;
    size_t nops, cops;

    /* log */
    kevo_log_level log_max;
    kevo_operator_log_fn log_fn;
    void *log_user;

    /* what operators see */
    const kevo_archive *archive;
    kevo_vars *device; /* device properties for checks */
    char *device_json; /* NULL when unknown */
    char *run_dir;
    char *task_args, *task_dims, *task_cost; /* built once */

    /* elites in cell order, rebuilt when elites_epoch != epoch */
    size_t *elite_cells;
    size_t nelites, celites;
    uint64_t elites_epoch, epoch;

    /* sources and assignments evaluated or emitted: a set of 64-bit keys
     * (open addressing; 0 is stored as 1) */
    uint64_t *seen;
    size_t nseen, cseen;

    /* requests in flight, by id: open addressing with linear probing, a
     * power-of-two number of slots, NULL for a free slot */
    uint64_t next_id;
    kevo_op_pending **pending;
    size_t npending_slots;
    size_t in_flight;
    size_t waiting; /* of them, waiting on an outside party (ABI 1.4) */
    bool waited;    /* some request ever waited on an outside party */
    bool unpolled;  /* a request started since the last host poll: its reply
                     * may be there already (one a resumed search takes
                     * back), so it does not yet count as waiting */
    kevo_op_pending *ended; /* ended during a plugin call, not yet freed */
    kevo_operator_result *results_head, *results_tail;
};

/* Whether op's descriptor has the optional function member, which ABI
 * 1.minor added: a plugin of an older minor left that slot reserved, and
 * whatever it holds is not the function. */
#define KEVO__OP_DESC_HAS(op, minor, member)                                   \
    ((op) != NULL && (op)->plugin->desc->abi_minor >= (minor) &&               \
     (op)->plugin->desc->struct_size >=                                        \
         offsetof(kevo_operator_desc, member) +                                \
             sizeof((op)->plugin->desc->member) &&                             \
     (op)->plugin->desc->member != NULL)

/* Sets op's totals of kevo_operator_usage() to what a checkpoint kept: a
 * resumed search goes on from what its earlier runs spent. */
void kevo__op_restore_usage(kevo_operator *op, uint64_t input_tokens,
                            uint64_t output_tokens, double cost);

/* How many requests in flight wait on an outside party (api->waiting(),
 * ABI 1.4) and, when any does, where the first of them waits in *where
 * (borrowed until the request ends; may be NULL). */
size_t kevo__op_host_waiting(const kevo_operator_host *host,
                             const char **where);

/* ---- operator_api.c ---------------------------------------------------- */

/* The table every plugin receives. */
extern const kevo_host_api kevo__host_api;

/* ---- operator_host.c --------------------------------------------------- */

/* The task's texts task_args, task_dims and task_cost, built once. */
kevo_status kevo__op_task_texts(kevo_operator_host *host, kevo_error *err);

/* The key of a source and an assignment in the seen set: the source's hash
 * (kevo__op_source_hash) combined with the assignment, independent of the
 * order of its names. */
uint64_t kevo__op_source_hash(const char *source);
uint64_t kevo__op_seen_key(uint64_t source_hash, const kevo_vars *assignment);
/* Both at once, for a candidate. */
uint64_t kevo__op_candidate_key(const kevo_candidate *cand);
bool kevo__op_seen_has(const kevo_operator_host *host, uint64_t key);
kevo_status kevo__op_seen_add(kevo_operator_host *host, uint64_t key);

/* Formats a line into op's last_error and returns code. */
kevo_status kevo__op_fail(kevo_operator *op, kevo_status code, const char *fmt,
                          ...) KEVO_PRINTF(3, 4);

/* Sends a line to the host's log. */
void kevo__op_log(kevo_operator *op, kevo_log_level level, const char *msg);

/* ---- operator_check.c -------------------------------------------------- */

/* api->seen(): whether c with assignment_json laid over it was seen. */
int kevo__op_seen_probe(kevo_operator *op, const kevo_candidate *c,
                        const char *assignment_json);

/* api->check(): c with assignment_json laid over it checked at every
 * shape, and its source's includes; the reason in op's last_error. */
kevo_status kevo__op_check(kevo_operator *op, const kevo_candidate *c,
                           const char *assignment_json);

/* Makes p's child from source: parsed for the task, with its assignment,
 * checked as kevo__op_check() does, new, and with p's lineage (its key
 * joins the seen set). Failures go into op's last_error. */
kevo_status kevo__op_make_child(kevo_operator *op, kevo_op_pending *p,
                                const char *source, const char *assignment_json,
                                kevo_candidate **out);

/* ---- operator_requests.c ----------------------------------------------- */

/* The request id of op's in flight, or NULL. */
kevo_op_pending *kevo__op_find_pending(kevo_operator *op, uint64_t id);

/* Gives p (a new request of op, with its result) an id, puts it in flight
 * and stores the id in *id (may be NULL). Returns KEVO_OK or KEVO_ENOMEM
 * (p is then not in flight). */
kevo_status kevo__op_start(kevo_operator *op, kevo_op_pending *p, uint64_t *id);

/* What follows the plugin's propose or revise of p that returned rc:
 * ends a request the plugin should have ended, and frees the requests
 * that ended. */
void kevo__op_after_call(kevo_op_pending *p, kevo_status rc);

/* A new request of op with an empty result, not yet in flight; NULL when
 * out of memory. */
kevo_op_pending *kevo__op_pending_new(kevo_operator *op);

/* Frees a request that never went in flight, or that ended. */
void kevo__op_pending_free(kevo_op_pending *p);

/* Frees a result and the children still in it. NULL does nothing. */
void kevo__op_result_free(kevo_operator_result *res);

/* Adds a child or a failure to a request in flight. Take ownership of
 * cand (freed on failure); strings are copied. */
kevo_status kevo__op_add_child(kevo_op_pending *p, kevo_candidate *cand,
                               const char *note, uint32_t attempt);
kevo_status kevo__op_add_failure(kevo_op_pending *p, const char *kind,
                                 const char *reason);

/* Ends a request: its result joins the host's queue. */
void kevo__op_end(kevo_op_pending *p);

/* ---- operator_repair.c ------------------------------------------------- */

/* Copies n failures into *out (kinds required). Returns KEVO_OK,
 * KEVO_EINVAL naming what (such as "failures") for an entry without a kind,
 * or KEVO_ENOMEM; *out is then empty. */
kevo_status kevo__op_failures_copy(kevo_op_failures *out,
                                   const kevo_operator_failure *items, size_t n,
                                   const char *what, kevo_error *err);
void kevo__op_failures_free(kevo_op_failures *f);

/* Frees the host's copy of a repair request. NULL does nothing. */
void kevo__op_repair_free(kevo_op_repair *r);

/* Records a refused call of emit_child() (attempt, with the status it got
 * and the reason) in p's result. */
void kevo__op_add_refused(kevo_op_pending *p, uint32_t attempt,
                          const char *source, kevo_status code,
                          const char *reason);

/* Frees what a result holds of refused attempts. */
void kevo__op_result_refused_free(kevo_operator_result *res);

/* ---- operator_texts.c -------------------------------------------------- */

void kevo__op_texts_free(kevo_op_texts *t);

/* Appends a copy of name and text. Returns KEVO_OK or KEVO_ENOMEM. */
kevo_status kevo__op_texts_add(kevo_op_texts *t, const char *name,
                               const char *text);

/* Copies n named texts into *out (each needs its name and text); what
 * names the list in messages. Returns KEVO_OK, KEVO_EINVAL or KEVO_ENOMEM;
 * *out is then empty. */
kevo_status kevo__op_texts_copy(kevo_op_texts *out,
                                const kevo_operator_text *items, size_t n,
                                const char *what, kevo_error *err);

/* Checks the named texts a caller gives: sections and the items of notes
 * each with a name and a text, arrays not NULL when they have entries; fn
 * names the caller's function in messages. Returns KEVO_OK or
 * KEVO_EINVAL. */
kevo_status kevo__op_check_texts(const kevo_operator_text *sections,
                                 size_t n_sections,
                                 const kevo_operator_notes *notes,
                                 size_t n_notes, const char *fn,
                                 kevo_error *err);

/* The text of the item called name, or NULL. */
const char *kevo__op_texts_find(const kevo_operator_text *items, size_t n,
                                const char *name);

/* The sections object of v: v["sections"] when v is a whole prompt (an
 * object whose "sections" is an object; a section's text is never one),
 * else v itself. */
json_t *kevo__op_sections_of(json_t *v);

/* The named texts of json, a JSON object of strings or a whole prompt
 * holding one in "sections", in the object's order. Returns KEVO_OK,
 * KEVO_EPARSE, KEVO_EINVALID naming the JSON path, or KEVO_ENOMEM; *out is
 * then empty. */
kevo_status kevo__op_texts_from_json(kevo_op_texts *out, const char *json,
                                     const char *what, kevo_error *err);

/* n named texts as a compact JSON object in their order: a new string, or
 * NULL when out of memory. */
char *kevo__op_texts_json(const kevo_operator_text *items, size_t n);

/* n entries without notes; KEVO_OK or KEVO_ENOMEM. */
kevo_status kevo__op_notes_init(kevo_op_notes *notes, size_t n);
void kevo__op_notes_free(kevo_op_notes *notes);

/* Entry i: the notes of the candidate with that id, a copy of given's when
 * it has any, else summary_json (may be NULL) as the note
 * KEVO_NOTE_EVALUATION. Returns KEVO_OK, KEVO_EINVAL naming what, or
 * KEVO_ENOMEM. */
kevo_status kevo__op_notes_set(kevo_op_notes *notes, size_t i,
                               uint64_t candidate,
                               const kevo_operator_notes *given,
                               const char *summary_json, const char *what,
                               kevo_error *err);

/* What a plugin of an older minor reads as the evaluation of candidate i
 * of n notes a caller gave: summary_json when given, else the note
 * KEVO_NOTE_EVALUATION of given[i] (NULL when it has none). Borrowed. */
const char *kevo__op_notes_evaluation(const kevo_operator_notes *given,
                                      size_t n, size_t i,
                                      const char *summary_json);

/* ---- operator_revise.c ------------------------------------------------- */

/* Frees the host's copy of a revision request. NULL does nothing. */
void kevo__op_revision_free(kevo_op_revision *r);

/* Frees what a result holds of revised prompts. */
void kevo__op_result_prompts_free(kevo_operator_result *res);

/* The host's copy of a request's prompt_json: the sections alone when it
 * is a whole prompt ({"sections": {...}, ...}), else the text as it is; a
 * new string, or NULL when out of memory. */
char *kevo__op_prompt_sections(const char *prompt_json);

/* api->emit_prompt() */
kevo_status kevo__op_emit_prompt(kevo_operator *op, uint64_t req_id,
                                 const char *sections_json, const char *note);

/* api->emit_prompt_sections() (ABI 1.3) */
kevo_status kevo__op_emit_prompt_sections(kevo_operator *op, uint64_t req_id,
                                          const kevo_operator_text *sections,
                                          size_t n, const char *note);

#endif

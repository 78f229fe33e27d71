/*
 * operator_private.h: the operator host's insides, shared by the host
 * (operator_host.c: plugins, instances, requests, results) and the table of
 * functions it gives plugins (operator_api.c).
 */
#ifndef KEVO_OPERATOR_PRIVATE_H
#define KEVO_OPERATOR_PRIVATE_H

#include "kevo_private.h"

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
} kevo_op_child;

typedef struct kevo_op_failure {
    char *kind;
    char *reason;
} kevo_op_failure;

struct kevo_operator_result {
    uint64_t id;
    char *op_name;
    kevo_op_child *children;
    size_t nchildren, cchildren;
    kevo_op_failure *failures;
    size_t nfailures, cfailures;
    kevo_operator_result *next; /* in the host's queue of ended requests */
};

/* A request in flight: the host's copy of what the caller submitted, which
 * the plugin reads until it calls done(). */
typedef struct kevo_op_pending {
    kevo_operator_request req; /* points into the copies below */
    kevo_operator *op;
    kevo_candidate *parent;
    kevo_candidate *second;
    kevo_candidate **insp_cands;
    kevo_operator_inspiration *insp;
    size_t ninsp;
    char *parent_summary, *second_summary, *target_cell, *prompt;
    char **insp_summaries;
    kevo_operator_result *res; /* NULL once ended (moved to the queue) */
    struct kevo_op_pending *next;
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
    bool in_init;
    char error_msg[KEVO__OP_MSG_SIZE]; /* set by api->error() */
    char last_error[KEVO__OP_MSG_SIZE];
    /* A scratch copy of the candidate last checked, reused (its
     * assignment reset) while the plugin checks the same one again. */
    kevo_candidate *probe;
    const kevo_candidate *probe_of;
    uint64_t probe_source_hash; /* kevo__op_source_hash of its source */
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

    /* requests */
    uint64_t next_id;
    kevo_op_pending *pending; /* in flight, and ended ones not yet freed */
    size_t in_flight;
    kevo_operator_result *results_head, *results_tail;
};

/* ---- operator_api.c ---------------------------------------------------- */

/* The table every plugin receives. */
extern const kevo_host_api kevo__host_api;

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

/* ---- operator_host.c --------------------------------------------------- */

/* The request id of op's in flight, or NULL. */
kevo_op_pending *kevo__op_find_pending(kevo_operator *op, uint64_t id);

/* Adds a child or a failure to a request in flight. Take ownership of
 * cand (freed on failure); strings are copied. */
kevo_status kevo__op_add_child(kevo_op_pending *p, kevo_candidate *cand,
                               const char *note);
kevo_status kevo__op_add_failure(kevo_op_pending *p, const char *kind,
                                 const char *reason);

/* Ends a request: its result joins the host's queue. */
void kevo__op_end(kevo_op_pending *p);

/* Formats a line into op's last_error and returns code. */
kevo_status kevo__op_fail(kevo_operator *op, kevo_status code, const char *fmt,
                          ...) KEVO_PRINTF(3, 4);

/* Sends a line to the host's log. */
void kevo__op_log(kevo_operator *op, kevo_log_level level, const char *msg);

#endif

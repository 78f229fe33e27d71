/*
 * kevo/operator.h: mutation operators. The plugin ABI (what an operator
 * exports and the table of host functions it may call) and the operator
 * host (what loads operators, hands them requests and collects the
 * children they propose).
 *
 * A plugin is a shared object that exports one function,
 * kevo_operator_entry(), which returns a constant descriptor: ABI version,
 * the descriptor's size, a name, a version, and the functions init, propose,
 * poll and fini. The host loads it with dlopen(RTLD_NOW | RTLD_LOCAL),
 * checks the version and size before it calls anything, and never unloads
 * it. A plugin never links libkevo: everything it needs from kevo (the
 * task, the candidates, randomness, logging, the archive, and the way to
 * hand back children) comes through the kevo_host_api table given to init.
 * kevo-operator(7) walks through writing one; examples/skeleton-operator.c
 * is a complete small one.
 *
 * The request cycle: the host calls propose() with a request (a parent, its
 * evaluation summary, inspirations, how many children are wanted, ...). For
 * each request the plugin calls api->emit_child() zero or more times and
 * api->fail() zero or more times, and then api->done() exactly once. A
 * synchronous operator does all of it inside propose() and has no poll(); an
 * asynchronous one (waiting on a network, say) returns from propose() at
 * once and finishes its requests inside later poll() calls.
 *
 * Since ABI 1.1 an operator may also revise meta-prompts: the host calls
 * its optional revise() with a prompt, its record and its best and worst
 * children, and the plugin answers through api->emit_prompt() (or
 * api->fail()) and then api->done(), in the same cycle. An operator that
 * spends tokens reports them with api->report_usage(), so that the search
 * can stop on a token or cost budget.
 *
 * Since ABI 1.2 an operator may also repair its children: when a child
 * fails (it does not compile, computes a wrong element, faults, times out,
 * or emit_child() refused it), the host's caller may hand the failure back
 * through the optional repair() with kevo's diagnostic, and the plugin
 * answers with at most one repaired child through api->emit_child() (or
 * api->fail()) and then api->done(), in the same cycle. A request also
 * carries the recent failed attempts from its parent.
 *
 * Threads: the host is not thread-safe. A plugin calls the host's functions
 * only from inside init, propose, revise and poll (and api->free and
 * api->log from fini), on the thread that called them.
 */
#ifndef KEVO_OPERATOR_H
#define KEVO_OPERATOR_H

#include <kevo/archive.h>
#include <kevo/candidate.h>
#include <kevo/error.h>
#include <kevo/promptpool.h>
#include <kevo/rng.h>
#include <kevo/task.h>
#include <kevo/vars.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the plugin ABI ----------------------------------------------------
 * The major version changes when the descriptor, the request or the host
 * table changes incompatibly; the host then refuses older plugins. The minor
 * version grows when something is added in a reserved slot (a host
 * function of kevo_host_api, a field of a struct); a plugin built against a
 * newer minor than the host's may use what the host lacks, so the host refuses
 * it. A plugin built against an older minor keeps working: the sizes of the
 * structs do not change, the host reads a field added after the plugin's
 * minor only when the descriptor's abi_minor says it has it, and the
 * plugin never reads what it does not know.
 *
 * 1.0: the descriptor, the request and the host table.
 * 1.1: the descriptor's revise() and the revision request (meta-prompt
 *      revision); the host functions emit_prompt, report_usage and
 *      instance_name.
 * 1.2: the descriptor's repair() and the repair request; the request's
 *      failures (recent failed attempts from its parent); the revision
 *      request's failure_kinds and failed_children; the attempt numbers
 *      of emit_child(). */
#define KEVO_OPERATOR_ABI_MAJOR 1
#define KEVO_OPERATOR_ABI_MINOR 2

/* The name of the one symbol a plugin exports. */
#define KEVO_OPERATOR_ENTRY_SYMBOL "kevo_operator_entry"

/* One operator instance's link to the host: opaque, passed back to every
 * host function. */
typedef struct kevo_host_ctx kevo_host_ctx;

/* How much a log line matters. */
typedef enum kevo_log_level {
    KEVO_LOG_ERROR = 0,
    KEVO_LOG_WARN = 1,
    KEVO_LOG_INFO = 2,
    KEVO_LOG_DEBUG = 3
} kevo_log_level;

/* Well-known failure kinds for api->fail(). A kind is a short lower-case
 * word that groups failures in logs and statistics; a plugin may use its
 * own. */
#define KEVO_FAIL_EXHAUSTED "exhausted" /* nothing new left to propose */
#define KEVO_FAIL_INVALID "invalid"     /* a child the host rejected */
#define KEVO_FAIL_PARSE "parse"         /* a reply that does not parse */
#define KEVO_FAIL_NO_CODE "no_code"     /* a reply without a kernel */
#define KEVO_FAIL_EDIT "edit"           /* edits that do not apply */
#define KEVO_FAIL_NETWORK "network"     /* a transfer that failed */
#define KEVO_FAIL_HTTP "http"           /* an HTTP error status */
#define KEVO_FAIL_TIMEOUT "timeout"     /* past a time limit */
#define KEVO_FAIL_BUDGET "budget"       /* a token or cost budget is spent */
#define KEVO_FAIL_UNSUPPORTED "unsupported" /* a request it cannot serve */
#define KEVO_FAIL_INTERNAL "internal"       /* a fault of the operator */

/*
 * A failure as kevo tells an operator about it (ABI 1.2): a failed attempt
 * from a request's parent, a failure kind of a prompt's record, or a
 * failed child of a prompt. kind is a short word: an evaluation's verdict
 * ("compile_error", "rejected", "launch_error", "fault", "timeout",
 * "wrong", "input_modified"), "invalid" or "duplicate" for a child that
 * emit_child() refused, or a failure kind of api->fail() ("no_code",
 * "edit", ...). The struct is fixed: a later minor version adds new arrays
 * rather than fields. Strings are borrowed as the struct that holds the
 * array says.
 */
typedef struct kevo_operator_failure {
    const char *kind;
    const char *diagnostic; /* kevo's diagnostic in one line, or NULL */
    uint64_t count;         /* how many failures it stands for (>= 1) */
    uint64_t candidate;     /* the failed child's id, or 0 */
} kevo_operator_failure;

/* A candidate shown beside the parent, with its evaluation summary. */
typedef struct kevo_operator_inspiration {
    const kevo_candidate *candidate;
    const char *summary_json; /* may be NULL */
} kevo_operator_inspiration;

/*
 * One request to an operator. The host fills it; the plugin reads it. The
 * request and everything it points to are owned by the host and stay valid
 * from propose() until the plugin calls api->done() for it (asynchronous
 * operators may keep the pointer). Candidates are opaque: read them through
 * the host table (api->cand_source() and so on). Fields appended in later
 * minor versions take the reserved slots, so the size stays that of 1.0:
 * a host of an older minor leaves them zero, and a caller of
 * kevo_operator_submit() zero-initialises what it does not set.
 */
typedef struct kevo_operator_request {
    size_t size; /* sizeof(kevo_operator_request) of the host */
    uint64_t id; /* unique among this host's requests; never 0 */
    const kevo_candidate *parent;
    const char *parent_summary_json;               /* its evaluation, or NULL */
    const kevo_operator_inspiration *inspirations; /* may be NULL if none */
    size_t n_inspirations;
    const char *target_cell_json; /* a behaviour cell to aim at, or NULL */
    const kevo_candidate *second_parent; /* for crossover, or NULL */
    const char *second_summary_json;     /* its evaluation, or NULL */
    /* A JSON object of named sections, or NULL. The caller may give a
     * whole prompt instead, an object whose "sections" member holds them
     * (such as kevo_promptpool_prompt_json() writes): the plugin always
     * sees the sections alone. */
    const char *prompt_json;
    int64_t prompt_id;   /* the prompt's id, or -1 for none */
    uint32_t n_children; /* how many children are wanted (>= 1) */
    /* ABI 1.2: recent failed attempts from the same parent, the most
     * recent first, each with its kind, a one-line diagnostic and its
     * candidate's id (count 1); NULL and 0 when there are none. */
    const kevo_operator_failure *failures;
    size_t n_failures;
    void *reserved[6];
} kevo_operator_request;

/*
 * A request to revise a meta-prompt (ABI 1.1): the host hands it to the
 * descriptor's revise() and the plugin answers with api->emit_prompt() (or
 * api->fail()) and api->done(), as for a kevo_operator_request, with the
 * same lifetime: the request and everything it points to are owned by the
 * host and stay valid until the plugin calls api->done() for it.
 *
 * The caller of kevo_operator_revise() fills the same struct; the host
 * copies it, sets id, puts the prompt's sections alone in sections_json
 * (and its name in prompt_name) when the caller gave a whole prompt, and
 * writes record as record_json. Fields appended in later minor versions
 * take the reserved slots; check size before reading one.
 */
typedef struct kevo_operator_revision {
    size_t size;             /* sizeof(kevo_operator_revision) */
    uint64_t id;             /* unique among this host's requests; never 0 */
    int64_t prompt_id;       /* the prompt's id in the caller's pool, or -1 */
    const char *prompt_name; /* its name, or NULL */
    /* Required: the prompt's sections, a JSON object of named texts
     * ({"strategy": "...", "pitfalls": "..."}). The caller may instead give
     * a whole prompt, an object whose "sections" member holds them (such as
     * kevo_promptpool_prompt_json() writes); the plugin always sees the
     * sections alone. */
    const char *sections_json;
    /* What the prompt's children did (kevo_promptpool_revision_due() fills
     * it), or NULL. The plugin sees the host's copy. */
    const kevo_prompt_record *record;
    /* The record as JSON, written by the host (the caller's value is
     * ignored): {"uses": N, "children": N, "entered": N, "beat_parent": N,
     * "best_fitness": F or null, "best_child": N, "worst_fitness": F or
     * null, "worst_child": N, "mean": F, "revisions": N}; NULL without a
     * record. */
    const char *record_json;
    /* The best and the worst child: CUDA source and evaluation summary
     * (JSON), each NULL when unknown. */
    const char *best_source;
    const char *best_summary_json;
    const char *worst_source;
    const char *worst_summary_json;
    /* ABI 1.2: how the prompt's children failed: one entry per kind with
     * its count (diagnostic NULL, candidate 0), the commonest first; and
     * a few of its failed children, the most recent first, each with its
     * kind, its one-line diagnostic and its candidate's id. NULL and 0
     * when there are none (and from a host of an older minor). */
    const kevo_operator_failure *failure_kinds;
    size_t n_failure_kinds;
    const kevo_operator_failure *failed_children;
    size_t n_failed_children;
    void *reserved[4];
} kevo_operator_revision;

/*
 * A request to repair a failed child (ABI 1.2): the host hands it to the
 * descriptor's repair() and the plugin answers with at most one repaired
 * child through api->emit_child() (or api->fail()) and api->done(), as for
 * a kevo_operator_request, with the same lifetime. The repaired child's
 * lineage is the failed child's: the same parents, prompt and generation.
 *
 * The failed child is named by the request that gave it (request_id: a
 * request for children or an earlier repair) and its attempt number there:
 * the host numbers the calls of emit_child() for each request 0, 1, 2, ...
 * in the order they were made, refused calls included, so a plugin that
 * counts its own calls knows which of its children failed. For a child the
 * host refused, child is NULL and source is what emit_child() was given.
 *
 * The caller of kevo_operator_repair() fills the same struct; the host
 * copies it and sets id. Fields appended in later minor versions take the
 * reserved slots; check size before reading one.
 */
typedef struct kevo_operator_repair_request {
    size_t size;         /* sizeof(kevo_operator_repair_request) */
    uint64_t id;         /* unique among this host's requests; never 0 */
    uint64_t request_id; /* the request that gave the failed child */
    uint32_t attempt;    /* its attempt number in that request */
    uint32_t turn;       /* 1 for the first repair of a child, 2 for the
                            repair of a repaired child, ... */
    uint32_t turns_left; /* repair turns left after this one */
    const kevo_candidate *child; /* the failed child, or NULL (refused) */
    const char *source;          /* required: its source */
    const char *kind;            /* required: the failure kind */
    /* Required: kevo's diagnostic, as the model should read it: the
     * compile log's error lines, the verdict's reason naming the shape,
     * the argument and the element, why emit_child() refused it, ... */
    const char *diagnostic;
    int64_t prompt_id; /* the failed child's prompt, or -1 */
    /* The parent of the request that gave the failed child: required when
     * child is NULL, ignored otherwise. */
    const kevo_candidate *parent;
    void *reserved[8];
} kevo_operator_repair_request;

/*
 * The host's functions, given to init. The table is owned by the host,
 * constant, and valid until fini returns. Functions may be appended in later
 * minor versions: before calling one a plugin built against a newer header
 * than the host's may test KEVO_HOST_API_HAS(api, member).
 *
 * Strings: a function documented as returning a "new string" returns one
 * that the plugin frees with api->free(); other strings are borrowed, with
 * the lifetime given. Every function takes the ctx that init received.
 */
typedef struct kevo_host_api {
    size_t size;        /* sizeof(kevo_host_api) of the host */
    uint32_t abi_major; /* the host's KEVO_OPERATOR_ABI_MAJOR */
    uint32_t abi_minor; /* the host's KEVO_OPERATOR_ABI_MINOR */

    /* -- logging and errors -- */

    /* A printf-style line in the host's log, tagged with the operator's
     * name. */
    void (*log)(kevo_host_ctx *ctx, kevo_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 3, 4)))
#endif
        ;
    /* Sets the message of the failure that init (or propose) is about to
     * return: the host puts it into the error it reports. The last call
     * wins. */
    void (*error)(kevo_host_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;
    /* The message of the last host function that failed on this ctx (such
     * as why emit_child() refused a child), borrowed until the next host
     * call; "" when none failed. */
    const char *(*last_error)(kevo_host_ctx *ctx);

    /* -- memory: the allocator every "new string" comes from -- */

    void *(*alloc)(kevo_host_ctx *ctx, size_t size); /* NULL when out */
    void (*free)(kevo_host_ctx *ctx, void *p);       /* NULL does nothing */

    /* -- randomness: the operator's own stream, seeded from the run seed
     * and the instance name, saved and restored with the run -- */

    double (*uniform01)(kevo_host_ctx *ctx);                 /* [0, 1) */
    uint64_t (*uniform_int)(kevo_host_ctx *ctx, uint64_t n); /* [0, n) */
    double (*gaussian)(kevo_host_ctx *ctx, double sigma);    /* N(0, sigma) */

    /* -- the task; strings borrowed for the life of the instance. Held-out
     * shapes are never shown. -- */

    const char *(*task_name)(kevo_host_ctx *ctx);
    const char *(*task_description)(kevo_host_ctx *ctx); /* "" for none */
    /* The kernel's arguments, a line each, such as
     * "x: f32 buffer, in, count rows*cols" or "n: i32 scalar = rows". */
    const char *(*task_args)(kevo_host_ctx *ctx);
    /* {"dims": ["rows", ...], "shapes": [{"rows": 8192, ...}, ...]} with
     * the training shapes only. */
    const char *(*task_dims)(kevo_host_ctx *ctx);
    /* "bytes: EXPR\nflops: EXPR\npeak: fp32\n", or "" without a model. */
    const char *(*task_cost)(kevo_host_ctx *ctx);
    /* The device's ceilings as JSON as the caller of the host set them, or
     * NULL when unknown. */
    const char *(*device_json)(kevo_host_ctx *ctx);

    /* -- candidates (the parent, the inspirations, elites) -- */

    /* The CUDA source, borrowed for as long as the candidate. */
    const char *(*cand_source)(kevo_host_ctx *ctx, const kevo_candidate *c);
    /* The parameter space as a new string: {"params": [{"name": "BLOCK",
     * "values": [64, 128, 256], "default": 128}, ...], "constraints":
     * ["TEXT", ...]}; NULL when out of memory. */
    char *(*cand_params)(kevo_host_ctx *ctx, const kevo_candidate *c);
    /* The assignment as a new string: {"BLOCK": 128, ...} in declaration
     * order; NULL when out of memory. */
    char *(*cand_assignment)(kevo_host_ctx *ctx, const kevo_candidate *c);
    uint64_t (*cand_hash)(kevo_host_ctx *ctx, const kevo_candidate *c);
    uint64_t (*cand_id)(kevo_host_ctx *ctx, const kevo_candidate *c);
    uint32_t (*cand_generation)(kevo_host_ctx *ctx, const kevo_candidate *c);

    /* -- the archive; a candidate it returns is borrowed until the plugin
     * function that asked returns. 0 elites when the host has no
     * archive. -- */

    size_t (*elite_count)(kevo_host_ctx *ctx);
    /* The i-th elite (0 <= i < elite_count, in cell order), or NULL. */
    const kevo_candidate *(*elite)(kevo_host_ctx *ctx, size_t i);
    /* The i-th elite's summary as a new string: {"cell": N, "fitness": F,
     * "descriptor": {"memory": V, ...}, "curiosity": C}; NULL when out of
     * range or out of memory. */
    char *(*elite_summary)(kevo_host_ctx *ctx, size_t i);

    /* -- parameter assignments. assignment_json is a JSON object of
     * parameter values ({"BLOCK": 256}) laid over c's own assignment (names
     * it leaves out keep c's values); NULL means c's assignment. -- */

    /* Non-zero when c's source with that assignment was already evaluated,
     * or already emitted as a child, on this host. */
    int (*seen)(kevo_host_ctx *ctx, const kevo_candidate *c,
                const char *assignment_json);
    /* Checks that assignment is valid for c: every value in its domain,
     * every constraint true and every launch within the device's limits at
     * every shape of the task, and (since ABI 1.2) c's source free of
     * #includes kernels may not have. Returns KEVO_OK or the failure's
     * code, with the reason in last_error(). */
    kevo_status (*check)(kevo_host_ctx *ctx, const kevo_candidate *c,
                         const char *assignment_json);

    /* -- the run -- */

    /* The run directory, where the operator may keep its own files under a
     * subdirectory named after it (such as RUN/llm/); NULL without one.
     * Borrowed for the life of the instance. */
    const char *(*run_dir)(kevo_host_ctx *ctx);

    /* -- results -- */

    /*
     * Offers a child for request req_id: source is complete CUDA source
     * with its kevo:launch (and maybe kevo:param) block, parsed by the host
     * for the task; assignment_json (may be NULL: the defaults, or the
     * parent's values where the child has the parent's source) sets its
     * parameters; note (may be NULL) says in a few words what changed. All
     * three are copied. The host checks the child as check() does (the
     * #include scan of the evaluator among the checks), sets its lineage
     * and keeps it. Returns KEVO_OK; KEVO_EPARSE or KEVO_EINVALID for
     * source whose blocks do not parse or fit the task (also for an
     * assignment that is not a JSON object of integers, and for an
     * #include of a header kernels may not include, with the include
     * scan's message); KEVO_ENOENT for an unknown parameter; KEVO_ERANGE
     * for a value outside its domain or a launch outside CUDA's limits;
     * KEVO_ECONSTRAINT for a broken constraint; KEVO_ELIMIT for too much
     * shared memory; an expression error (KEVO_EOVERFLOW, KEVO_EDIVZERO,
     * KEVO_EUNDEFINED); KEVO_EEXIST for the parent unchanged (for a
     * repair: the failed child unchanged), a child already seen, or a
     * second child of a repair request; KEVO_EINVAL for an unknown or
     * finished req_id; KEVO_ENOMEM. On failure the reason is in
     * last_error() and nothing was kept but the source and the reason,
     * which the request's result lists as a refused attempt (since ABI
     * 1.2) so that the caller may ask for a repair; the plugin may also
     * repair the child itself or report a failure. Each call that names
     * a request in flight is one attempt of that request, numbered from 0
     * (ABI 1.2: see kevo_operator_repair_request).
     */
    kevo_status (*emit_child)(kevo_host_ctx *ctx, uint64_t req_id,
                              const char *source, const char *assignment_json,
                              const char *note);
    /* Records a failure of request req_id: kind such as KEVO_FAIL_PARSE and
     * a reason in a sentence (both copied). Returns KEVO_OK or KEVO_EINVAL
     * for an unknown or finished req_id. */
    kevo_status (*fail)(kevo_host_ctx *ctx, uint64_t req_id, const char *kind,
                        const char *reason);
    /* Ends request req_id: after it the plugin must not touch the request
     * again. Returns KEVO_OK or KEVO_EINVAL for an unknown or finished
     * req_id. */
    kevo_status (*done)(kevo_host_ctx *ctx, uint64_t req_id);

    /* -- ABI 1.1; a plugin that may meet a 1.0 host tests each with
     * KEVO_HOST_API_HAS() -- */

    /*
     * Offers a revised prompt for revision request req_id: sections_json
     * is a JSON object of named texts, as the request's sections_json;
     * note (may be NULL) says in a few words what changed. Both are
     * copied. The host checks the sections as kevo_promptpool_add() would
     * (names that are identifiers, texts not empty and within
     * KEVO_PROMPT_TEXT_MAX, at most KEVO_PROMPT_SECTIONS_MAX sections) and
     * keeps them. Returns KEVO_OK; KEVO_EPARSE for text that is not JSON;
     * KEVO_EINVALID for JSON that is not such an object (the reason names
     * the JSON path); KEVO_EEXIST for the request's prompt unchanged or a
     * prompt this request already gave; KEVO_EINVAL for an unknown or
     * finished req_id, or one that is not a revision; KEVO_ENOMEM. On
     * failure the reason is in last_error() and nothing was kept.
     */
    kevo_status (*emit_prompt)(kevo_host_ctx *ctx, uint64_t req_id,
                               const char *sections_json, const char *note);
    /*
     * Adds tokens and their cost (in the currency of the operator's cost
     * table) to what this instance has spent; the host keeps the totals
     * (kevo_operator_usage()) so that a search can stop on a budget. Call
     * it once per reply of a model. Returns KEVO_OK, or KEVO_EINVAL for a
     * negative or non-finite cost (nothing is added).
     */
    kevo_status (*report_usage)(kevo_host_ctx *ctx, uint64_t input_tokens,
                                uint64_t output_tokens, double cost);
    /* The instance's name (such as "llm" or "llm_big"), borrowed for the
     * life of the instance. */
    const char *(*instance_name)(kevo_host_ctx *ctx);

    void (*reserved[13])(void);
} kevo_host_api;

/* True when api has the function member (it may be newer or older than the
 * header the plugin was built with). A function added in a minor version
 * fills a reserved slot, which an older host leaves NULL. */
#define KEVO_HOST_API_HAS(api, member)                                         \
    ((api)->size >= offsetof(kevo_host_api, member) + sizeof((api)->member) && \
     (api)->member != NULL)

/*
 * The descriptor a plugin returns from kevo_operator_entry(): constant and
 * owned by the plugin. Set abi_major and abi_minor to the macros of the
 * header the plugin is built with and struct_size to
 * sizeof(kevo_operator_desc).
 */
typedef struct kevo_operator_desc {
    uint32_t abi_major;
    uint32_t abi_minor;
    size_t struct_size;
    const char *name;        /* required: an identifier, such as "params" */
    const char *version;     /* required: the plugin's version, "1.0" */
    const char *description; /* one line, or NULL */

    /*
     * Required. Makes an instance from config_json (a JSON object as text,
     * or NULL for the defaults) and stores the plugin's state in *state.
     * Keep api and ctx for later calls. Returns KEVO_OK, or a failure code
     * after calling api->error() with the reason; fini is not called after
     * a failed init, so free what was made.
     */
    kevo_status (*init)(const kevo_host_api *api, kevo_host_ctx *ctx,
                        const char *config_json, void **state);
    /*
     * Required. Starts work on one request (see kevo_operator_request for
     * its lifetime). A synchronous operator finishes it here, ending with
     * api->done(). Returning a failure code (after api->error()) fails the
     * request as a whole; the host then ends it itself.
     */
    kevo_status (*propose)(void *state, const kevo_operator_request *req);
    /*
     * Optional (NULL for synchronous operators). Drives the work in flight
     * for up to timeout_ms milliseconds (0: do what is ready and return;
     * return early once a request is done) and returns how many requests
     * are still in flight.
     */
    size_t (*poll)(void *state, int timeout_ms);
    /* Required. Frees the instance. Requests still in flight are
     * abandoned: the plugin frees what it holds for them and ends none;
     * the host drops them. Of the host functions, fini may call only
     * api->free and api->log. */
    void (*fini)(void *state);

    /*
     * ABI 1.1, optional (NULL for operators that do not revise prompts).
     * Starts work on revising a meta-prompt (see kevo_operator_revision
     * for its lifetime): the plugin calls api->emit_prompt() with the
     * revised sections, or api->fail(), and then api->done(), in revise()
     * itself or (with poll) later, exactly as for propose(). Returning a
     * failure code (after api->error()) fails the request as a whole. The
     * host calls it only for a descriptor whose abi_minor is at least 1.
     */
    kevo_status (*revise)(void *state, const kevo_operator_revision *rev);

    /*
     * ABI 1.2, optional (NULL for operators that do not repair children).
     * Starts work on repairing a failed child (see kevo_operator_repair_request
     * for its lifetime): the plugin calls api->emit_child() at most once with
     * the repaired child, or api->fail(), and then api->done(), in repair()
     * itself or (with poll) later, exactly as for propose(). Returning a
     * failure code (after api->error()) fails the request as a whole. The
     * host calls it only for a descriptor whose abi_minor is at least 2.
     */
    kevo_status (*repair)(void *state, const kevo_operator_repair_request *rep);

    void *reserved[6];
} kevo_operator_desc;

/* The size of a version 1.0 descriptor: the host refuses a smaller
 * struct_size. Versions 1.1 and 1.2 took reserved slots: the size is the
 * same. */
#define KEVO_OPERATOR_DESC_SIZE_1_0                                            \
    (offsetof(kevo_operator_desc, revise) + 8 * sizeof(void *))

/* The type of kevo_operator_entry. */
typedef const kevo_operator_desc *(*kevo_operator_entry_fn)(void);

#if defined(__GNUC__)
#define KEVO_OPERATOR_EXPORT __attribute__((visibility("default")))
#else
#define KEVO_OPERATOR_EXPORT
#endif
#ifdef __cplusplus
#define KEVO_OPERATOR_EXTERN_C extern "C"
#else
#define KEVO_OPERATOR_EXTERN_C
#endif

/*
 * KEVO_OPERATOR_ENTRY(desc) defines the exported entry point of a plugin
 * whose descriptor is the static const kevo_operator_desc desc:
 *
 *     static const kevo_operator_desc desc = { ... };
 *     KEVO_OPERATOR_ENTRY(desc)
 */
#define KEVO_OPERATOR_ENTRY(desc)                                              \
    KEVO_OPERATOR_EXTERN_C KEVO_OPERATOR_EXPORT const kevo_operator_desc *     \
    kevo_operator_entry(void);                                                 \
    KEVO_OPERATOR_EXTERN_C KEVO_OPERATOR_EXPORT const kevo_operator_desc *     \
    kevo_operator_entry(void)                                                  \
    {                                                                          \
        return &(desc);                                                        \
    }

/* ---- the operator host -------------------------------------------------
 * What the search engine (and a test) uses: load plugins, make instances,
 * submit requests, poll, collect results. Its functions are experimental
 * (kevo-api(7)): a program adds operators to a search with
 * kevo_search_add_operator(). */

typedef struct kevo_operator_host kevo_operator_host;
typedef struct kevo_operator kevo_operator;
typedef struct kevo_operator_result kevo_operator_result;

/* The environment variable of extra plugin directories, searched first
 * (colon-separated). */
#define KEVO_OPERATOR_PATH_ENV "KEVO_OPERATOR_PATH"

/* A log callback: level, the operator instance's name and the line
 * (borrowed for the call). */
typedef void (*kevo_operator_log_fn)(void *user, kevo_log_level level,
                                     const char *op_name, const char *message);

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_operator_host_new: a host for operators working on task (borrowed:
 * it must outlive the host) in *out. seed is the run seed: each instance's
 * random stream derives from it and the instance's name. Warnings and
 * errors of operators go to stderr until kevo_operator_host_set_log() says
 * otherwise. Returns KEVO_OK, KEVO_EINVAL for a NULL task or out, or
 * KEVO_ENOMEM. On failure *out is NULL.
 */
KEVO_API kevo_status kevo_operator_host_new(const kevo_task *task,
                                            uint64_t seed,
                                            kevo_operator_host **out,
                                            kevo_error *err);

/*
 * kevo_operator_host_free: calls every instance's fini, drops the results
 * not collected and frees the host. Loaded plugins stay loaded (they are
 * never unloaded). NULL does nothing.
 */
KEVO_API void kevo_operator_host_free(kevo_operator_host *host);

/*
 * kevo_operator_host_set_log: sends operators' log lines of level <= max to
 * fn (NULL: discard them all). Returns KEVO_OK or KEVO_EINVAL.
 */
KEVO_API kevo_status kevo_operator_host_set_log(kevo_operator_host *host,
                                                kevo_log_level max,
                                                kevo_operator_log_fn fn,
                                                void *user, kevo_error *err);

/*
 * kevo_operator_host_set_archive: the archive operators see through
 * elite_count/elite/elite_summary (borrowed: it must outlive the host, or
 * be replaced first; NULL for none). Returns KEVO_OK or KEVO_EINVAL.
 */
KEVO_API kevo_status kevo_operator_host_set_archive(kevo_operator_host *host,
                                                    const kevo_archive *archive,
                                                    kevo_error *err);

/*
 * kevo_operator_host_set_device: the device operators plan for: props (copied;
 * NULL: the nominal device) gives the device properties constraints and
 * launch checks see, and ceilings_json (copied; may be NULL) is what
 * device_json() shows, which must be a JSON object. Returns KEVO_OK,
 * KEVO_EPARSE for ceilings that do not parse, KEVO_EINVALID for JSON that
 * is not an object, or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_operator_host_set_device(kevo_operator_host *host,
                                                   const kevo_vars *props,
                                                   const char *ceilings_json,
                                                   kevo_error *err);

/*
 * kevo_operator_host_set_run_dir: the run directory that run_dir() shows
 * (copied; NULL for none). Returns KEVO_OK, KEVO_EINVAL or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_operator_host_set_run_dir(kevo_operator_host *host,
                                                    const char *path,
                                                    kevo_error *err);

/*
 * kevo_operator_host_mark_seen: records that cand (its source and
 * assignment) was evaluated, so that seen() answers yes for it. Returns
 * KEVO_OK, KEVO_EINVAL or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_operator_host_mark_seen(kevo_operator_host *host,
                                                  const kevo_candidate *cand,
                                                  kevo_error *err);

/*
 * kevo_operator_host_seen: non-zero when cand's source and assignment were
 * marked seen or emitted as a child on this host.
 */
KEVO_API int kevo_operator_host_seen(const kevo_operator_host *host,
                                     const kevo_candidate *cand);

/*
 * kevo_operator_host_load: loads a plugin and registers its descriptor.
 * name is a plugin name, such as "params", looked up as NAME.so in each
 * directory of KEVO_OPERATOR_PATH and then in kevo's installed operator
 * directory, or a path (it contains a '/'). The file is opened with
 * dlopen(RTLD_NOW | RTLD_LOCAL) and its descriptor checked as
 * kevo_operator_host_register() does; a plugin loaded once stays loaded.
 * Loading a plugin already registered under the same name from the same
 * file does nothing. *plugin (may be NULL) receives the registered name,
 * borrowed for the host's life. Returns KEVO_OK; KEVO_ENOENT naming every
 * directory searched; KEVO_EEXTERNAL with dlerror()'s text; KEVO_EINVALID
 * for a file without kevo_operator_entry or one whose descriptor is NULL or
 * lacks a required function; KEVO_EFORMAT for a wrong ABI major, a newer
 * minor or a descriptor smaller than version 1.0's; KEVO_EEXIST when
 * another plugin holds the name; KEVO_ENOMEM. Every message names the file.
 */
KEVO_API kevo_status kevo_operator_host_load(kevo_operator_host *host,
                                             const char *name,
                                             const char **plugin,
                                             kevo_error *err);

/*
 * kevo_operator_host_register: registers a descriptor compiled into the
 * program (it must stay valid for the host's life), with the same checks as
 * for a loaded plugin; origin names it in messages (may be NULL). Returns
 * KEVO_OK, KEVO_EINVAL for a NULL desc, KEVO_EFORMAT, KEVO_EINVALID,
 * KEVO_EEXIST or KEVO_ENOMEM as kevo_operator_host_load().
 */
KEVO_API kevo_status kevo_operator_host_register(kevo_operator_host *host,
                                                 const kevo_operator_desc *desc,
                                                 const char *origin,
                                                 kevo_error *err);

/*
 * kevo_operator_host_add: makes an instance of the plugin registered as plugin
 * (loaded first with kevo_operator_host_load() when not registered yet),
 * called name (an identifier; NULL: the plugin's name), and calls its init
 * with config_json (a JSON object as text, or NULL). The instance belongs
 * to the host, which finalises it in kevo_operator_host_free(). Returns
 * KEVO_OK; the errors of kevo_operator_host_load(); KEVO_EPARSE for a
 * config that is not JSON and KEVO_EINVALID for one that is not an object;
 * KEVO_EEXIST for a name another instance has; the code init returned, with
 * the plugin's message. On failure *out is NULL.
 */
KEVO_API kevo_status kevo_operator_host_add(
    kevo_operator_host *host, const char *plugin, const char *name,
    const char *config_json, kevo_operator **out, kevo_error *err);

/* kevo_operator_name: the instance's name, borrowed from the host. */
KEVO_API const char *kevo_operator_name(const kevo_operator *op);

/* kevo_operator_plugin: the descriptor of the instance's plugin, borrowed
 * (its name, version and description). */
KEVO_API const kevo_operator_desc *
kevo_operator_plugin(const kevo_operator *op);

/*
 * kevo_operator_rng: the instance's random stream, borrowed, so that a
 * checkpoint can save it and a resumed run restore it (kevo_rng_save(),
 * kevo_rng_restore()).
 */
KEVO_API kevo_rng *kevo_operator_rng(kevo_operator *op);

/* kevo_operator_in_flight: how many of the instance's requests (requests
 * for children and revisions alike) are submitted and not yet done. */
KEVO_API size_t kevo_operator_in_flight(const kevo_operator *op);

/*
 * kevo_operator_usage: what the instance reported spending through
 * report_usage(): input and output tokens and their cost, stored in the
 * outputs that are not NULL. Returns KEVO_OK, or KEVO_EINVAL for a NULL op
 * (the outputs are then 0).
 */
KEVO_API kevo_status kevo_operator_usage(const kevo_operator *op,
                                         uint64_t *input_tokens,
                                         uint64_t *output_tokens, double *cost);

/*
 * kevo_operator_host_usage: the sums of kevo_operator_usage() over every
 * instance of the host, the figures a search compares with its token and
 * cost budgets. Returns KEVO_OK, or KEVO_EINVAL for a NULL host (the
 * outputs are then 0).
 */
KEVO_API kevo_status kevo_operator_host_usage(const kevo_operator_host *host,
                                              uint64_t *input_tokens,
                                              uint64_t *output_tokens,
                                              double *cost);

/*
 * kevo_operator_submit: hands req to the instance. The host copies the
 * request and what it points to (the caller's may go away once this
 * returns), gives it a new id (req->id is ignored) returned in *id (may be
 * NULL), and calls the plugin's propose. When propose fails, the request
 * ends with a failure of kind "internal" carrying the plugin's message; a
 * synchronous operator that returns without ending the request has it
 * ended the same way. req->size must be at least the size of a version 1.0
 * request, req->parent must not be NULL and req->n_children must be at
 * least 1; each of req->failures (when n_failures > 0) needs a kind.
 * Returns KEVO_OK (the outcome comes as a result), KEVO_EINVAL for a bad
 * request, or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_operator_submit(kevo_operator *op,
                                          const kevo_operator_request *req,
                                          uint64_t *id, kevo_error *err);

/*
 * kevo_operator_can_revise: non-zero when the instance's plugin revises
 * prompts: its descriptor is of ABI 1.1 or later and has revise().
 */
KEVO_API int kevo_operator_can_revise(const kevo_operator *op);

/*
 * kevo_operator_revise: hands rev, a request to revise a meta-prompt, to
 * the instance. As kevo_operator_submit(), the host copies the request and
 * what it points to, gives it a new id (rev->id and rev->record_json are
 * ignored) returned in *id (may be NULL), and calls the plugin's revise;
 * the revised prompts come back in the request's result
 * (kevo_operator_result_prompt()), failures as failures. rev->size must be
 * at least the size of a version 1.1 revision request, rev->sections_json
 * a JSON object of named sections (or a whole prompt holding them in its
 * "sections" member, whose "name" then fills a NULL prompt_name) that
 * kevo_promptpool_add() would take, and rev->record, when given, a record
 * whose size is 0 or at least sizeof(kevo_prompt_record); each entry of
 * rev->failure_kinds and rev->failed_children needs a kind (a count of 0
 * is read as 1). Returns KEVO_OK
 * (the outcome comes as a result); KEVO_EINVAL for a bad request or an
 * instance that cannot revise (kevo_operator_can_revise()); KEVO_EPARSE or
 * KEVO_EINVALID for sections that do not parse or are not valid, naming
 * the JSON path; KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_operator_revise(kevo_operator *op,
                                          const kevo_operator_revision *rev,
                                          uint64_t *id, kevo_error *err);

/*
 * kevo_operator_can_repair: non-zero when the instance's plugin repairs
 * children: its descriptor is of ABI 1.2 or later and has repair().
 */
KEVO_API int kevo_operator_can_repair(const kevo_operator *op);

/*
 * kevo_operator_repair: hands rep, a request to repair a failed child, to
 * the instance. As kevo_operator_submit(), the host copies the request and
 * what it points to, gives it a new id (rep->id is ignored) returned in
 * *id (may be NULL), and calls the plugin's repair; the repaired child
 * (at most one) comes back in the request's result, failures as
 * failures. The repaired child gets the failed child's lineage: that of
 * rep->child when given (its parents, prompt and generation), else that
 * of a child of rep->parent (generation one more, prompt rep->prompt_id).
 * rep->size must be at least the size of a version 1.2 repair request;
 * rep->source, rep->kind and rep->diagnostic must not be NULL, nor
 * rep->parent when rep->child is; rep->turn is at least 1. Returns
 * KEVO_OK (the outcome comes as a result); KEVO_EINVAL for a bad request
 * or an instance that cannot repair (kevo_operator_can_repair());
 * KEVO_ENOMEM.
 */
KEVO_API kevo_status
kevo_operator_repair(kevo_operator *op, const kevo_operator_repair_request *rep,
                     uint64_t *id, kevo_error *err);

/*
 * kevo_operator_host_poll: drives the work in flight of every instance for
 * up to timeout_ms milliseconds (0: only what is ready; it returns early
 * once a request ends) and stores in *in_flight (may be NULL) how many
 * requests are still in flight over all instances. Returns KEVO_OK or
 * KEVO_EINVAL.
 */
KEVO_API kevo_status kevo_operator_host_poll(kevo_operator_host *host,
                                             int timeout_ms, size_t *in_flight,
                                             kevo_error *err);

/*
 * kevo_operator_host_next_result: hands over the oldest ended request's
 * result in *out; the caller frees it with kevo_operator_result_free().
 * Returns KEVO_OK, or KEVO_DONE (with *out NULL) when no ended request is
 * waiting.
 */
KEVO_API kevo_status kevo_operator_host_next_result(kevo_operator_host *host,
                                                    kevo_operator_result **out);

/* kevo_operator_result_free: frees a result and the children still in it.
 * NULL does nothing. */
KEVO_API void kevo_operator_result_free(kevo_operator_result *res);

/* kevo_operator_result_id: the request's id, as kevo_operator_submit()
 * gave it. */
KEVO_API uint64_t kevo_operator_result_id(const kevo_operator_result *res);

/* kevo_operator_result_operator: the name of the instance that served the
 * request, borrowed from the result. */
KEVO_API const char *
kevo_operator_result_operator(const kevo_operator_result *res);

/* kevo_operator_result_child_count: how many children the request gave. */
KEVO_API size_t
kevo_operator_result_child_count(const kevo_operator_result *res);

/*
 * kevo_operator_result_child: child i, borrowed from the result (NULL when
 * out of range or taken). Each was made with kevo_candidate_new_for_task()
 * for the host's task, passes the checks of check(), and carries its
 * lineage: the parent's id (and the second parent's), the instance's name,
 * the request's prompt id and the parent's generation plus one. Its id is
 * 0: the search assigns ids.
 */
KEVO_API const kevo_candidate *
kevo_operator_result_child(const kevo_operator_result *res, size_t i);

/* kevo_operator_result_child_note: the note given with child i, borrowed,
 * or NULL (also when i is out of range). */
KEVO_API const char *
kevo_operator_result_child_note(const kevo_operator_result *res, size_t i);

/*
 * kevo_operator_result_take_child: hands child i over to the caller, who
 * frees it with kevo_candidate_free(); the result then holds NULL there.
 * Returns NULL when i is out of range or the child was taken.
 */
KEVO_API kevo_candidate *
kevo_operator_result_take_child(kevo_operator_result *res, size_t i);

/* kevo_operator_result_failure_count: how many failures the request
 * recorded. */
KEVO_API size_t
kevo_operator_result_failure_count(const kevo_operator_result *res);

/* kevo_operator_result_failure_kind: failure i's kind (such as
 * KEVO_FAIL_EXHAUSTED), borrowed, or NULL when out of range. */
KEVO_API const char *
kevo_operator_result_failure_kind(const kevo_operator_result *res, size_t i);

/* kevo_operator_result_failure_reason: failure i's reason, borrowed, or
 * NULL when out of range. */
KEVO_API const char *
kevo_operator_result_failure_reason(const kevo_operator_result *res, size_t i);

/* kevo_operator_result_child_attempt: the attempt number of child i in
 * its request (the call of emit_child() that gave it, counting from 0,
 * refused calls included; see kevo_operator_repair_request), or 0 when out of
 * range. */
KEVO_API uint32_t
kevo_operator_result_child_attempt(const kevo_operator_result *res, size_t i);

/* kevo_operator_result_refused_count: how many calls of emit_child() for
 * the request the host refused (ABI 1.2 and older plugins alike). */
KEVO_API size_t
kevo_operator_result_refused_count(const kevo_operator_result *res);

/*
 * kevo_operator_result_refused: the source of refused attempt i, borrowed
 * from the result, or NULL when out of range (or when emit_child() got no
 * source). *attempt gets its attempt number, *kind "duplicate" (the
 * parent unchanged, or a child already seen) or "invalid" (any other
 * refusal), and *reason emit_child()'s message, borrowed; each output may
 * be NULL.
 */
KEVO_API const char *
kevo_operator_result_refused(const kevo_operator_result *res, size_t i,
                             uint32_t *attempt, const char **kind,
                             const char **reason);

/* kevo_operator_result_prompt_count: how many revised prompts a revision
 * request gave (0 for a request for children). */
KEVO_API size_t
kevo_operator_result_prompt_count(const kevo_operator_result *res);

/*
 * kevo_operator_result_prompt: revised prompt i as JSON text, borrowed from
 * the result (NULL when out of range), in the form
 * kevo_promptpool_add_json() takes: {"sections": {"NAME": "TEXT", ...}},
 * section names in byte order, texts without surrounding white space. Add
 * it to the pool with the revised prompt's id as its parent; without a
 * "name" it takes the parent's.
 */
KEVO_API const char *
kevo_operator_result_prompt(const kevo_operator_result *res, size_t i);

/* kevo_operator_result_prompt_note: the note given with revised prompt i,
 * borrowed, or NULL (also when i is out of range). */
KEVO_API const char *
kevo_operator_result_prompt_note(const kevo_operator_result *res, size_t i);
#endif /* KEVO_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif

/*
 * kevo/operator.h: the operator plugin ABI: what a mutation operator
 * exports and the table of host functions it may call. This header is
 * self-contained and declares no library function: it is all a plugin
 * includes. The operator host, what loads plugins and drives them, is
 * <kevo/operator_host.h>.
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
 * Since ABI 1.3 prompts and notes cross the boundary as arrays of named
 * texts (kevo_operator_text) rather than JSON text: a request carries its
 * meta-prompt's sections and the notes kevo keeps beside its candidates, a
 * revision request the prompt's sections and the notes of its best and
 * worst child, and a revised prompt goes back through
 * api->emit_prompt_sections(). The host also tells a plugin which headers
 * a kernel may include and where a source's kevo:launch and kevo:param
 * blocks are, so that a plugin needs no copy of kevo's own scanners.
 *
 * Threads: the host is not thread-safe. A plugin calls the host's functions
 * only from inside init, propose, revise and poll (and api->free,
 * api->log and api->run_dir from fini), on the thread that called them.
 */
#ifndef KEVO_OPERATOR_H
#define KEVO_OPERATOR_H

#include <stddef.h>
#include <stdint.h>

#include <kevo/prompt.h>
#include <kevo/status.h>

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
 *      of emit_child().
 * 1.3: prompts and notes as arrays of named texts: the request's
 *      prompt_sections and notes, the revision request's sections and
 *      notes, the host functions emit_prompt_sections, include_allowed,
 *      include_rule and find_blocks. A plugin of ABI 1.3 gets no JSON
 *      text of a prompt, a record or an evaluation summary in its
 *      requests: prompt_json, sections_json, record_json and the
 *      *summary_json fields are NULL for it, and set as before for a
 *      plugin of an older minor.
 * 1.4: the host function waiting (a request that waits on an outside
 *      party).
 * 1.5: the host function usage (what the instance has spent, a resumed
 *      run's earlier runs included). */
#define KEVO_OPERATOR_ABI_MAJOR 1
#define KEVO_OPERATOR_ABI_MINOR 5

/* The name of the one symbol a plugin exports. */
#define KEVO_OPERATOR_ENTRY_SYMBOL "kevo_operator_entry"

/* One operator instance's link to the host: opaque, passed back to every
 * host function. */
typedef struct kevo_host_ctx kevo_host_ctx;

/* A candidate kernel: opaque to a plugin, which reads it through the host
 * table (api->cand_source() and so on). */
typedef struct kevo_candidate kevo_candidate;

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

/* A candidate shown beside the parent, with its evaluation summary (NULL
 * for a plugin of ABI 1.3, which reads the request's notes). */
typedef struct kevo_operator_inspiration {
    const kevo_candidate *candidate;
    const char *summary_json; /* may be NULL */
} kevo_operator_inspiration;

/*
 * A named text (ABI 1.3): a section of a meta-prompt, such as
 * {"strategy", "Tile the loop ..."}, or a note kevo keeps beside a
 * candidate. Neither string is NULL. Both are borrowed as the struct that
 * holds the array says.
 */
typedef struct kevo_operator_text {
    const char *name;
    const char *text;
} kevo_operator_text;

/* The name of the note that holds a candidate's evaluation: the JSON
 * object kevo_eval_result_to_json() writes (kevo-operator(7) shows one).
 * The search keeps this note beside every elite, for as long as it is
 * one. */
#define KEVO_NOTE_EVALUATION "evaluation"

/*
 * The notes kevo keeps beside one candidate (ABI 1.3): named texts, such
 * as its evaluation (KEVO_NOTE_EVALUATION). A request lists the notes of
 * its candidates, each entry naming its candidate by id
 * (api->cand_id()); a candidate without notes has no entry.
 */
typedef struct kevo_operator_notes {
    uint64_t candidate;              /* the candidate's id */
    const kevo_operator_text *items; /* its notes, names unique */
    size_t n_items;
} kevo_operator_notes;

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
    /* Its evaluation as JSON, or NULL; always NULL for a plugin of ABI
     * 1.3, which finds it among the notes. */
    const char *parent_summary_json;
    const kevo_operator_inspiration *inspirations; /* may be NULL if none */
    size_t n_inspirations;
    const char *target_cell_json; /* a behaviour cell to aim at, or NULL */
    const kevo_candidate *second_parent; /* for crossover, or NULL */
    const char *second_summary_json;     /* its evaluation, as the parent's */
    /* A JSON object of named sections, or NULL; always NULL for a plugin
     * of ABI 1.3, which reads prompt_sections. The caller may give a
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
    /* ABI 1.3: the prompt's sections as named texts, in the prompt's order
     * (the order of their names for a prompt of the pool); NULL and 0
     * without a prompt. A caller gives these or prompt_json. */
    const kevo_operator_text *prompt_sections;
    size_t n_prompt_sections;
    /* ABI 1.3: the notes of the request's candidates (the parent, the
     * second parent, the inspirations), an entry for each that has any;
     * NULL and 0 when none has. A caller gives these or the summaries;
     * a summary becomes the note KEVO_NOTE_EVALUATION. */
    const kevo_operator_notes *notes;
    size_t n_notes;
    void *reserved[2];
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
 * took the reserved slots (ABI 1.3 the last of them); check size before
 * reading one. A plugin of ABI 1.3 gets the sections and the notes as
 * arrays, and sections_json, record_json and the summaries NULL.
 */
typedef struct kevo_operator_revision {
    size_t size;             /* sizeof(kevo_operator_revision) */
    uint64_t id;             /* unique among this host's requests; never 0 */
    int64_t prompt_id;       /* the prompt's id in the caller's pool, or -1 */
    const char *prompt_name; /* its name, or NULL */
    /* The prompt's sections, a JSON object of named texts ({"strategy":
     * "...", "pitfalls": "..."}); a caller gives these or sections (ABI
     * 1.3). The caller may instead give a whole prompt, an object whose
     * "sections" member holds them (such as kevo_promptpool_prompt_json()
     * writes); the plugin always sees the sections alone. */
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
    /* ABI 1.3: the prompt's sections as named texts (names unique
     * identifiers, texts not empty), in the prompt's order. */
    const kevo_operator_text *sections;
    size_t n_sections;
    /* ABI 1.3: the notes of the best and the worst child (record's
     * best_child and worst_child), an entry for each that has any. A
     * caller gives these or the summaries. */
    const kevo_operator_notes *notes;
    size_t n_notes;
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
 * Where a source's kevo:launch or kevo:param block is (ABI 1.3), as kevo's
 * own block parser finds it (api->find_blocks()): the first comment whose
 * first word is the tag (see kevo-blocks(5)), with the line comments that
 * continue it on the lines that follow. Offsets count bytes of the source.
 */
typedef struct kevo_operator_block {
    int found;    /* non-zero when the source has the block */
    int closed;   /* non-zero when its comment is closed */
    size_t start; /* the first byte of the comment that holds it */
    size_t end;   /* just past it: past a closing star-slash, or at the end
                     of the last line comment's line (its newline left out) */
    /* The launch block's kernels (each identifier before a '<<<'), or the
     * parameters the param block declares (each line 'NAME in ...'), in
     * order and without repeats, each followed by a newline: a new string
     * that the plugin frees with api->free(), or NULL when there are
     * none. */
    char *names;
    size_t n_names;
} kevo_operator_block;

/* A source's blocks, filled by api->find_blocks(). */
typedef struct kevo_operator_blocks {
    size_t size; /* sizeof(kevo_operator_blocks) of the plugin */
    kevo_operator_block launch;
    kevo_operator_block param;
    void *reserved[4];
} kevo_operator_blocks;

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
     * The host's caller may set it after the instance was made (a search
     * opens its run after its operators are added) or change it: ask
     * again in each call rather than keeping what init saw. Borrowed
     * until the run directory changes (kevo_operator_host_set_run_dir()).
     * fini may call it too. */
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

    /* -- ABI 1.3; a plugin of ABI 1.3 may call them without a test: a host
     * of an older minor refuses it -- */

    /*
     * emit_prompt() with the revised sections as n named texts, each name
     * and text copied; the host checks them as emit_prompt() does (names
     * that are identifiers and unique, texts not empty and within
     * KEVO_PROMPT_TEXT_MAX, 1 to KEVO_PROMPT_SECTIONS_MAX sections).
     * Returns what emit_prompt() returns, KEVO_EINVALID (not KEVO_EPARSE)
     * for sections that are not valid, naming the section.
     */
    kevo_status (*emit_prompt_sections)(kevo_host_ctx *ctx, uint64_t req_id,
                                        const kevo_operator_text *sections,
                                        size_t n, const char *note);
    /* Non-zero when a kernel may #include <header> (header as written
     * between < and >): the headers kevo's compile workers provide. Only
     * the angle-bracket form is ever allowed. */
    int (*include_allowed)(kevo_host_ctx *ctx, const char *header);
    /* Those headers as a sentence lists them: "<cuda_fp16.h>, ... and
     * <cuda/std/...>", borrowed for the life of the instance. */
    const char *(*include_rule)(kevo_host_ctx *ctx);
    /*
     * Finds the kevo:launch and kevo:param blocks of len bytes of source
     * (it may hold anything, such as a model's reply; a NUL byte ends it)
     * and fills *out, as much of it as out->size covers; the plugin frees
     * the two names strings. Returns KEVO_OK; KEVO_EINVAL for a NULL source
     * or out, or an out->size smaller than that of ABI 1.3; KEVO_ENOMEM
     * (nothing is then for the plugin to free).
     */
    kevo_status (*find_blocks)(kevo_host_ctx *ctx, const char *source,
                               size_t len, kevo_operator_blocks *out);

    /* -- ABI 1.4; a plugin of ABI 1.4 may call it without a test -- */

    /*
     * Says that request req_id waits on an outside party, such as another
     * program that answers request files, rather than on a transfer that
     * is under way; where (copied; NULL for "an outside party") names it
     * in a few words, such as a directory. It holds until the request
     * ends. A search whose every request in flight waits so, with nothing
     * being evaluated, writes its checkpoint and stops with
     * KEVO_STOP_WAITING, to be resumed once replies arrive. Returns
     * KEVO_OK, KEVO_EINVAL for an unknown or finished req_id, or
     * KEVO_ENOMEM.
     */
    kevo_status (*waiting)(kevo_host_ctx *ctx, uint64_t req_id,
                           const char *where);

    /* -- ABI 1.5; a plugin of ABI 1.5 may call it without a test -- */

    /*
     * What this instance has spent, as the host counts it: what it gave
     * report_usage() in this process and, in a resumed search, what it had
     * spent when the checkpoint the search resumed from was written. A
     * plugin with a budget of its own counts against these totals, so
     * that the budget holds across a search that stops and is resumed.
     * Any pointer may be NULL.
     */
    void (*usage)(kevo_host_ctx *ctx, uint64_t *input_tokens,
                  uint64_t *output_tokens, double *cost);

    void (*reserved[7])(void);
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
     * api->free, api->log and api->run_dir. */
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

#ifdef __cplusplus
}
#endif

#endif

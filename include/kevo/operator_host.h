/*
 * kevo/operator_host.h: the operator host, what loads operator plugins,
 * makes instances of them, hands them requests and collects the children
 * and revised prompts they give back. The search engine uses it, and so
 * may a program that drives operators itself; its functions are
 * experimental (kevo-api(7)): a program adds operators to a search with
 * kevo_search_add_operator(). The plugin ABI (what a plugin exports and
 * the table of host functions it may call) is <kevo/operator.h>, which
 * this header includes; a plugin includes that header alone and never
 * calls these functions.
 */
#ifndef KEVO_OPERATOR_HOST_H
#define KEVO_OPERATOR_HOST_H

#include <kevo/archive.h>
#include <kevo/candidate.h>
#include <kevo/error.h>
#include <kevo/operator.h>
#include <kevo/rng.h>
#include <kevo/task.h>
#include <kevo/vars.h>

#ifdef __cplusplus
extern "C" {
#endif

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
 * (copied; NULL for none), before or after the operators are added:
 * operators ask for it in each call. Returns KEVO_OK, KEVO_EINVAL or
 * KEVO_ENOMEM.
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
 * report_usage() (in a search resumed from a checkpoint, what it had spent
 * when the checkpoint was written included): input and output tokens and
 * their cost, stored in the outputs that are not NULL. Returns KEVO_OK, or
 * KEVO_EINVAL for a NULL op (the outputs are then 0).
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
 * returns) in the form the plugin reads (named texts for ABI 1.3, JSON
 * text for an older minor, whichever form the caller gave), gives it a new
 * id (req->id is ignored) returned in *id (may be NULL), and calls the
 * plugin's propose. When propose fails, the request ends with a failure of
 * kind "internal" carrying the plugin's message; a synchronous operator
 * that returns without ending the request has it ended the same way.
 * req->size must be at least the size of a version 1.0 request,
 * req->parent must not be NULL and req->n_children must be at least 1;
 * each of req->failures (when n_failures > 0) needs a kind, each section
 * and note a name and a text, and req->n_notes is at most 2 +
 * n_inspirations. Returns KEVO_OK (the outcome comes as a result),
 * KEVO_EINVAL for a bad request, KEVO_EPARSE or KEVO_EINVALID for a
 * prompt_json that is no object of texts when the plugin is of ABI 1.3, or
 * KEVO_ENOMEM.
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
 * (kevo_operator_result_prompt_sections()), failures as failures.
 * rev->size must be at least the size of a version 1.1 revision request;
 * the prompt's sections, as rev->sections (ABI 1.3) or else
 * rev->sections_json (a JSON object of named sections, or a whole prompt
 * holding them in its "sections" member, whose "name" then fills a NULL
 * prompt_name), must be what kevo_promptpool_add() would take;
 * rev->record, when given, a record whose size is 0 or at least
 * sizeof(kevo_prompt_record); each entry of rev->failure_kinds and
 * rev->failed_children needs a kind (a count of 0 is read as 1); at most
 * two notes (the best and the worst child's). Returns KEVO_OK (the
 * outcome comes as a result); KEVO_EINVAL for a bad request or an
 * instance that cannot revise (kevo_operator_can_revise()); KEVO_EPARSE or
 * KEVO_EINVALID for JSON sections that do not parse or are not valid,
 * naming the JSON path; KEVO_EINVAL or KEVO_ELIMIT for named texts that
 * are not valid sections; KEVO_ENOMEM.
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

/*
 * kevo_operator_result_prompt_sections: revised prompt i as named texts,
 * borrowed from the result (NULL when out of range), with their number in
 * *n (may be NULL; 0 when out of range): section names in byte order, texts
 * without surrounding white space, the form kevo_promptpool_add() takes.
 * Add it to the pool with the revised prompt's id as its parent and a NULL
 * name, so that it takes the parent's.
 */
KEVO_API const kevo_operator_text *
kevo_operator_result_prompt_sections(const kevo_operator_result *res, size_t i,
                                     size_t *n);

/* kevo_operator_result_prompt_note: the note given with revised prompt i,
 * borrowed, or NULL (also when i is out of range). */
KEVO_API const char *
kevo_operator_result_prompt_note(const kevo_operator_result *res, size_t i);
#endif /* KEVO_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif

/*
 * kevo_search_plan.h: the plan of a kevo search run, DIR/search.json.
 * Everything needed to resume a run is written there before the run
 * starts: the task file, the operators with their configurations inlined,
 * every search option, the evaluator's options and the device. On
 * --resume it is read back and checked, and the options that a resumed
 * run may change are taken from the command line again.
 *
 * {"format": "kevo-search", "version": 1, "task": PATH, "command": TEXT,
 *  "device": N, "devices": "all" or "0,2,3" (absent: the one device),
 *  "operators": [{"plugin": P, "name": N, "weight": W,
 *  "config": {...} or null, "from": TEXT}], "prompts": DIR or null,
 *  "options": {NAME: VALUE, ...}, "evaluator": {NAME: VALUE, ...}}
 */
#ifndef KEVO_SEARCH_PLAN_H
#define KEVO_SEARCH_PLAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kevo.h>

/* The evaluations of a new run without --evals. */
#define SEARCH_DEFAULT_EVALS 300

/* An option of the search or of the evaluator with its value. */
typedef struct setting {
    bool search; /* else the evaluator's */
    int opt;
    int64_t value;
    const char *text; /* as given, for messages */
} setting;

/* The command line of kevo search, as kevo_search.c parses it. */
typedef struct search_cli {
    const char *task_path, *out, *resume, *llm, *prompts;
    bool no_params, no_llm, no_tune, quiet, json;
    bool mpi;         /* --mpi */
    bool fixed_given; /* an option that a resumed run cannot change */
    const char *fixed_name;
    setting *sets; /* the flags and --set, in order */
    size_t nsets;
    bool have_device;
    int64_t device;
    const char *devices; /* --devices, or NULL */
    char **operators;    /* --operator, as given */
    size_t noperators;
} search_cli;

/*
 * plan_new: the plan of a new run from the command line: the task's full
 * path, command (the command line as text), the device, the operators
 * (the params operator unless --no-params, --llm, each --operator with its
 * configuration file read in, and a built-in llm operator when a provider's
 * key is in the environment), and prompts when an llm operator or --prompts
 * wants them. The options are added once they are set. Returns a new
 * object, or NULL after printing why, with *status set to the exit status.
 */
json_t *plan_new(const search_cli *cli, const char *command,
                 const char *prompts, int *status);

/* plan_read: reads and checks DIR/search.json (every field and option
 * name); returns a new object, or NULL after printing why. */
json_t *plan_read(const char *dir);

/* plan_write: writes plan to DIR/search.json atomically; returns false
 * after printing why. */
bool plan_write(const char *dir, json_t *plan);

/*
 * plan_add_operators: adds the plan's operators to the search. In a new
 * run each instance is named after its plugin (NAME_2, NAME_3 for more of
 * the same plugin) and the name is recorded in the plan; a resumed run
 * keeps the plan's names. *llm becomes true when one is the llm plugin.
 * Returns EXIT_OK, or the exit status after printing why.
 */
int plan_add_operators(kevo_search *search, json_t *plan, bool resumed,
                       bool *llm);

/*
 * plan_apply_options: sets the search options of the plan (a resumed
 * run; a new one starts from SEARCH_DEFAULT_EVALS and seed 1), then those
 * of the command line, then writes every option's value back into the
 * plan. plan_path names search.json in messages. Returns EXIT_OK, or the
 * exit status after printing why.
 */
int plan_apply_options(kevo_search *search, json_t *plan, const search_cli *cli,
                       const char *plan_path);

/*
 * plan_start_evaluator: starts an evaluator with the plan's options and
 * device or devices, then the command line's (which are recorded in the
 * plan for a later resume: --devices replaces the plan's devices, --device
 * alone drops them), and worker unless it is empty. Returns the new
 * evaluator, or NULL after printing why, with *status set to the exit
 * status.
 */
kevo_evaluator *plan_start_evaluator(json_t *plan, const search_cli *cli,
                                     const char *worker, int *status);

#endif

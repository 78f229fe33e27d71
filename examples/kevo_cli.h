/*
 * kevo_cli.h: what the commands of the kevo driver share. The driver is
 * built on the public API only.
 */
#ifndef KEVO_CLI_H
#define KEVO_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kevo.h>

#ifndef KEVO_TASKS_DIR
#define KEVO_TASKS_DIR "/usr/local/share/kevo/tasks"
#endif

/* Exit codes. */
enum {
    EXIT_OK = 0,      /* done; every task valid, the kernel correct */
    EXIT_INVALID = 1, /* some input failed validation; the kernel failed */
    EXIT_USAGE = 2,   /* bad command line */
    EXIT_NODEV = 3,   /* no usable GPU, or the evaluator could not start */
    EXIT_WAITING = 4  /* a search stopped to wait for replies (resume it) */
};
/* A search interrupted by a signal exits with 128 + the signal's number:
 * 130 for SIGINT, 143 for SIGTERM. */

/* The program's name for messages: "kevo". */
extern const char *program;

/* Writes s to stdout as a JSON string, quoted and escaped. */
void cli_json_string(const char *s);

/* Parses s, all of it, as a decimal integer into *out; false if it is not
 * one or is out of range. */
bool cli_parse_int(const char *s, int64_t *out);

/* Parses s, all of it, as a finite number into *out; false if it is not
 * one. */
bool cli_parse_real(const char *s, double *out);

/*
 * cli_use_build_tree: when this program runs from a build tree (as
 * examples/kevo, or examples/.libs/kevo under libtool, below the directory
 * that holds config.status), puts the build tree's kevo-worker in worker
 * unless KEVO_WORKER is set, puts its operator plugins first on the
 * operator search path (KEVO_OPERATOR_PATH), and, where prompts is not
 * NULL and KEVO_PROMPT_DIR is not set, points *prompts at the source
 * tree's seed prompts. worker is "" when there is no build tree's worker
 * to use: the evaluator's default (KEVO_WORKER, else the installed worker)
 * then holds; an installed program changes nothing else.
 */
void cli_use_build_tree(char *worker, size_t size, const char **prompts);

/* cli_start_evaluator: starts ev, with worker as its kevo-worker unless
 * worker is "" (as cli_use_build_tree leaves it). Returns false, after
 * saying why on stderr, when it cannot start: no usable GPU, or no
 * worker. */
bool cli_start_evaluator(kevo_evaluator *ev, const char *worker);

/*
 * cli_print_summary: prints the summary.json of the run in dir on stdout:
 * with json, its JSON on one line; else what a person reads at the end of
 * a search (the stop reason, the evaluations, the champion with its
 * parameters, gate verdict and speedups, or why there is none, and the
 * paths of the run's files). *champion becomes true when the run has a
 * champion. Returns false, after saying why on stderr, when the summary
 * cannot be read.
 */
bool cli_print_summary(const char *dir, bool json, bool *champion);

/* cli_on_signals: handler (or SIG_DFL) for SIGINT and SIGTERM, with
 * sigaction(2)'s flags. */
void cli_on_signals(void (*handler)(int), int flags);

/* The commands: each takes its own argv (argv[0] is the command's name)
 * and returns the exit status. */
int cmd_tasks(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_peaks(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_search(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_relay(int argc, char **argv);

#endif

/*
 * kevo_cli.h: what the commands of the kevo driver share. The driver is
 * built on the public API only.
 */
#ifndef KEVO_CLI_H
#define KEVO_CLI_H

#include <stdbool.h>

#include <kevo.h>

#ifndef KEVO_TASKS_DIR
#define KEVO_TASKS_DIR "/usr/local/share/kevo/tasks"
#endif

/* Exit codes. */
enum {
    EXIT_OK = 0,      /* done; every task valid, the kernel correct */
    EXIT_INVALID = 1, /* some input failed validation; the kernel failed */
    EXIT_USAGE = 2,   /* bad command line */
    EXIT_NODEV = 3    /* no usable GPU, or the evaluator could not start */
};
/* A search interrupted by a signal exits with 128 + the signal's number:
 * 130 for SIGINT, 143 for SIGTERM. */

/* The program's name for messages: "kevo". */
extern const char *program;

/* Writes s to stdout as a JSON string, quoted and escaped. */
void cli_json_string(const char *s);

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

/* The commands: each takes its own argv (argv[0] is the command's name)
 * and returns the exit status. */
int cmd_tasks(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_peaks(int argc, char **argv);
int cmd_search(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif

/*
 * kevo_cli.h: what the commands of the kevo driver share. The driver is
 * built on the public API only.
 */
#ifndef KEVO_CLI_H
#define KEVO_CLI_H

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

/* The program's name for messages: "kevo". */
extern const char *program;

/* Writes s to stdout as a JSON string, quoted and escaped. */
void cli_json_string(const char *s);

int cmd_tasks(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_peaks(int argc, char **argv);

#endif

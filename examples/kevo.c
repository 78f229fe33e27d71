/*
 * kevo.c: the kevo driver program. Built on the public API only (it links
 * libkevo.so like any other program would); kevo relay also builds in the
 * llm operator's request engine from the plugin's sources.
 *
 *   kevo search [OPTIONS] TASK.json        search for a kernel on the GPU
 *   kevo search --resume DIR [OPTIONS]     continue a search
 *   kevo report DIR                        rebuild a run's report
 *   kevo tasks [--json] [PATH...]          list and validate task files
 *   kevo eval TASK KERNEL [--held-out]     evaluate one kernel on the GPU
 *   kevo peaks [--json]                    the GPU's measured ceilings
 *   kevo export RUN [-o DIR]               the champion as a package
 *   kevo relay DIR --llm CONFIG            answer request files over HTTP
 *   kevo --version | --help
 */
#include <stdio.h>
#include <string.h>

#include "kevo_cli.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: %s COMMAND [OPTIONS] [ARGS]\n"
        "\n"
        "commands:\n"
        "  search TASK.json          search for a fast, correct kernel on the\n"
        "                            GPU into a run directory\n"
        "  search --resume DIR       continue a search from its checkpoint\n"
        "  report DIR                rebuild the report of a run, "
        "DIR/report.html\n"
        "  tasks [--json] [PATH...]  list and validate task files; a PATH\n"
        "                            is a task file or a directory of them\n"
        "                            (default: $KEVO_TASKS_DIR, else %s)\n"
        "  eval TASK.json KERNEL.cu  compile, check and time one kernel on\n"
        "                            the GPU and print a table per shape\n"
        "  peaks                     the GPU's measured bandwidth and peaks\n"
        "  export RUN [-o DIR]       the champion of a run as C, C++ and\n"
        "                            PyTorch launch functions\n"
        "  relay DIR --llm CONFIG    answer the llm request files in DIR\n"
        "                            through HTTP (on a login node)\n"
        "\n"
        "options:\n"
        "  -h, --help     this help (also after a command)\n"
        "  -V, --version  the version of kevo and of the loaded library\n"
        "\n"
        "Each command has its own --help.\n"
        "\n"
        "Exit status: 0 success, 1 invalid input, a failed kernel or no\n"
        "champion, 2 bad command line, 3 no usable GPU, 4 a search that\n"
        "stopped to wait for replies, 130 and 143 a search interrupted by\n"
        "SIGINT and SIGTERM.\n"
        "See kevo(1), kevo-search(1), kevo-report(1), kevo-eval(1),\n"
        "kevo-peaks(1), kevo-tasks(1), kevo-export(1), kevo-relay(1),\n"
        "kevo-task(5) and kevo-blocks(5).\n",
        program, KEVO_TASKS_DIR);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 ||
        strcmp(cmd, "help") == 0) {
        usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
        printf("kevo %s (library %s)\n", KEVO_VERSION_STRING,
               kevo_version_string());
        return EXIT_OK;
    }
    if (strcmp(cmd, "search") == 0)
        return cmd_search(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    if (strcmp(cmd, "tasks") == 0)
        return cmd_tasks(argc - 1, argv + 1);
    if (strcmp(cmd, "eval") == 0)
        return cmd_eval(argc - 1, argv + 1);
    if (strcmp(cmd, "peaks") == 0)
        return cmd_peaks(argc - 1, argv + 1);
    if (strcmp(cmd, "export") == 0)
        return cmd_export(argc - 1, argv + 1);
    if (strcmp(cmd, "relay") == 0)
        return cmd_relay(argc - 1, argv + 1);
    fprintf(stderr, "%s: unknown command '%s'\n\n", program, cmd);
    usage(stderr);
    return EXIT_USAGE;
}

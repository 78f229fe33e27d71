/*
 * kevo_export.c: `kevo export RUN`, the champion of a run as a package a
 * program calls: C and C++ launch functions with a Makefile for nvcc, and
 * a PyTorch extension (kevo-export(1)).
 */
/* Uses the experimental API (kevo-api(7)): kevo_export_run(). */
#define KEVO_EXPERIMENTAL
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kevo/export.h>

#include "kevo_cli.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: %s export RUN [-o DIR] [--name NAME] [--target "
            "c|torch|all]\n"
            "                     [--arch ARCH]\n"
            "\n"
            "Writes the champion of the search run RUN as a package a "
            "program calls:\n"
            "NAME.h and NAME.cu, one launch function that evaluates the "
            "kernel's\n"
            "kevo:launch block and dispatch table for the shape it is called "
            "with, a\n"
            "Makefile for nvcc, and a PyTorch extension in NAME/.\n"
            "\n"
            "options:\n"
            "  -o, --output DIR   where to write it (default: RUN/export)\n"
            "  -n, --name NAME    the package's name, a C identifier "
            "(default: the\n"
            "                     task's name)\n"
            "  -t, --target T     c, torch or all (default: all)\n"
            "  -a, --arch ARCH    nvcc's -arch (default: the one kevo "
            "compiled for on\n"
            "                     the run's device, such as sm_90a)\n"
            "  -h, --help         this help\n"
            "\n"
            "See kevo-export(1).\n",
            program);
}

int cmd_export(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"name", required_argument, NULL, 'n'},
        {"target", required_argument, NULL, 't'},
        {"arch", required_argument, NULL, 'a'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL, *name = NULL, *arch = NULL;
    unsigned targets = KEVO_EXPORT_C | KEVO_EXPORT_TORCH;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:n:t:a:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'n': name = optarg; break;
        case 'a': arch = optarg; break;
        case 't':
            if (strcmp(optarg, "c") == 0)
                targets = KEVO_EXPORT_C;
            else if (strcmp(optarg, "torch") == 0)
                targets = KEVO_EXPORT_TORCH;
            else if (strcmp(optarg, "all") == 0)
                targets = KEVO_EXPORT_C | KEVO_EXPORT_TORCH;
            else {
                fprintf(stderr, "%s: export: --target '%s': c, torch or all\n",
                        program, optarg);
                return EXIT_USAGE;
            }
            break;
        case 'h': usage(stdout); return EXIT_OK;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "%s: export: %s\n", program,
                optind >= argc ? "no run directory" : "one run directory");
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *run = argv[optind];
    char *dflt = NULL;
    if (!out) {
        size_t n = strlen(run) + sizeof "/export";
        if (!(dflt = malloc(n))) {
            fprintf(stderr, "%s: out of memory\n", program);
            return EXIT_INVALID;
        }
        snprintf(dflt, n, "%s/export", run);
        out = dflt;
    }
    kevo_error err;
    kevo_error_init(&err);
    kevo_status rc = kevo_export_run(run, out, name, arch, targets, &err);
    if (rc != KEVO_OK) {
        fprintf(stderr, "%s: export: %s\n", program,
                err.text[0] ? err.text : kevo_strerror(rc));
        free(dflt);
        return rc == KEVO_EINVAL ? EXIT_USAGE : EXIT_INVALID;
    }
    printf("%s: the champion of %s as a package in %s (see %s/README.md)\n",
           program, run, out, out);
    free(dflt);
    return EXIT_OK;
}

/*
 * kevo_report.c: what the driver says about a search run: the summary
 * printed at the end of `kevo search` (from the run's summary.json), and
 * `kevo report DIR`, which rebuilds the run's report.html.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kevo/report.h>

#include "kevo_cli.h"

/* ---- the summary of a run ----------------------------------------------- */

static double num(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Geometric means over the training shapes of the seed's and the
 * reference's time over the champion's, where both are known, and, when
 * the run used several devices, the one that measured them. */
static void print_speedups(json_t *shapes, bool several)
{
    const char *device = NULL;
    double ls = 0, lr = 0;
    size_t ns = 0, nr = 0, i;
    json_t *s;
    json_array_foreach (shapes, i, s) {
        const char *set = json_string_value(json_object_get(s, "set"));
        double t = num(json_object_get(s, "champion"), "time");
        double ts = num(json_object_get(s, "seed"), "time");
        double tr = num(json_object_get(s, "reference"), "time");
        if (!set || strcmp(set, "training") != 0 || !(t > 0))
            continue;
        if (!device)
            device = json_string_value(json_object_get(s, "device"));
        if (ts > 0)
            ls += log(ts / t), ns++;
        if (tr > 0)
            lr += log(tr / t), nr++;
    }
    if (ns)
        printf("  speedup over the seed %.2fx", exp(ls / (double)ns));
    if (nr)
        printf("%sover the reference %.2fx", ns ? ", " : "  speedup ",
               exp(lr / (double)nr));
    if ((ns || nr) && several && device)
        printf(" (geometric means over the training shapes, measured on "
               "%s)\n",
               device);
    else if (ns || nr)
        printf(" (geometric means over the training shapes)\n");
}

static void print_params(json_t *params)
{
    const char *key;
    json_t *value;
    printf("  parameters:");
    if (!json_is_object(params) || json_object_size(params) == 0)
        printf(" none");
    json_object_foreach (params, key, value) {
        if (json_is_integer(value))
            printf(" %s=%lld", key, (long long)json_integer_value(value));
        else
            printf(" %s=?", key);
    }
    printf("\n");
}

static void print_gate(json_t *gate, bool several)
{
    if (!json_is_object(gate))
        return;
    double held = num(gate, "held_out_fitness"), slack = num(gate, "slack");
    double train = num(gate, "train_fitness");
    double retimed = num(gate, "retimed_fitness");
    const char *reason = json_string_value(json_object_get(gate, "reason"));
    if (!isnan(retimed))
        printf("  fitness timed again beside the other finalists %.3f "
               "(first measured %.3f)\n",
               retimed, train);
    if (!json_is_true(json_object_get(gate, "passed"))) {
        printf("  held-out gate: FAILED%s%s\n", reason ? ": " : "",
               reason ? reason : "");
        return;
    }
    printf("  held-out gate: passed");
    if (!isnan(slack))
        printf(": at no held-out shape slower than the seed by more than "
               "%.0f%%",
               slack * 100);
    if (!isnan(held))
        printf(" (held-out fitness %.3f)", held);
    const char *device = json_string_value(json_object_get(gate, "device"));
    if (several && device)
        printf(", timed on %s", device);
    printf("\n");
    json_t *shapes = json_object_get(gate, "shapes"), *sh;
    size_t i;
    json_array_foreach (shapes, i, sh) {
        const char *key, *call = json_string_value(json_object_get(sh, "call"));
        const char *base = json_string_value(json_object_get(sh, "baseline"));
        json_t *value;
        printf("    held-out");
        json_object_foreach (json_object_get(sh, "dims"), key, value)
            printf(" %s=%lld", key, (long long)json_integer_value(value));
        double t = num(sh, "time"), bt = num(sh, "baseline_time");
        if (base && !isnan(t) && !isnan(bt))
            printf(": %.3g us vs %s %.3g us, %.2fx", t * 1e6, base, bt * 1e6,
                   num(sh, "speed"));
        printf(": %s\n", call ? call : "?");
    }
}

/* "  LABEL  DIR/NAME" for a file of the run that is there. */
static void print_path(const char *dir, const char *label, const char *name)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (access(path, F_OK) == 0)
        printf("  %-16s %s\n", label, path);
}

/* What a stop reason of summary.json means, or NULL. */
static const char *stop_explained(const char *reason)
{
    static const char *const text[][2] = {
        {"evaluations", "the evaluation budget is spent"},
        {"time", "the wall-time budget is spent"},
        {"tokens", "the token budget is spent"},
        {"cost", "the cost budget is spent"},
        {"target", "the target fitness was reached"},
        {"stagnation", "no better fitness for too long"},
        {"exhausted", "the operators have nothing new to propose"},
        {"operator_failures",
         "an operator's requests kept giving no child to evaluate"},
    };
    for (size_t i = 0; reason && i < sizeof text / sizeof *text; i++)
        if (strcmp(reason, text[i][0]) == 0)
            return text[i][1];
    return NULL;
}

bool cli_print_summary(const char *dir, bool json, bool *champion)
{
    char path[PATH_MAX + 16];
    json_error_t jerr;
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *sum = json_load_file(path, 0, &jerr);
    *champion = false;
    if (!json_is_object(sum)) {
        fprintf(stderr, "%s: %s: %s\n", program, path,
                sum ? "not a JSON object" : jerr.text);
        json_decref(sum);
        return false;
    }
    json_t *champ = json_object_get(sum, "champion");
    *champion = json_is_object(champ);
    if (json) {
        char *text = json_dumps(sum, JSON_COMPACT | JSON_PRESERVE_ORDER |
                                         JSON_REAL_PRECISION(17));
        if (text)
            printf("%s\n", text);
        free(text);
        json_decref(sum);
        return text != NULL;
    }
    const char *reason = json_string_value(json_object_get(sum, "stop_reason"));
    double elapsed = num(sum, "elapsed"), rate = num(sum, "evals_per_second");
    const char *why = stop_explained(reason);
    json_int_t evals = json_integer_value(json_object_get(sum, "evaluations"));
    printf("\nstopped: %s%s%s%s; %lld evaluation%s (%lld failed)",
           reason ? reason : "unknown", why ? " (" : "", why ? why : "",
           why ? ")" : "", (long long)evals, evals == 1 ? "" : "s",
           (long long)json_integer_value(json_object_get(sum, "failures")));
    if (!isnan(elapsed))
        printf(" in %.1f s", elapsed);
    if (rate > 0)
        printf(", %.2f evaluations/s", rate);
    printf("\n");
    double cost = num(sum, "cost");
    json_int_t tin = json_integer_value(json_object_get(sum, "input_tokens"));
    json_int_t tout = json_integer_value(json_object_get(sum, "output_tokens"));
    if (tin || tout)
        printf("llm: %lld input and %lld output tokens, cost %.2f\n",
               (long long)tin, (long long)tout, isnan(cost) ? 0.0 : cost);
    json_t *archive = json_object_get(sum, "archive");
    if (json_is_object(archive))
        printf(
            "archive: %lld of %lld cells filled (%.1f%%)\n",
            (long long)json_integer_value(json_object_get(archive, "filled")),
            (long long)json_integer_value(json_object_get(archive, "cells")),
            100 * num(archive, "coverage"));
    if (*champion) {
        const char *op = json_string_value(json_object_get(champ, "operator"));
        printf("champion: candidate %lld, fitness %.3f",
               (long long)json_integer_value(json_object_get(champ, "id")),
               num(champ, "fitness"));
        if (op)
            printf(", by %s (generation %lld)", op,
                   (long long)json_integer_value(
                       json_object_get(champ, "generation")));
        printf("\n");
        print_params(json_object_get(champ, "params"));
        /* Which device measured what, where the run used several. */
        bool several = json_integer_value(json_object_get(sum, "devices")) > 1;
        print_gate(json_object_get(champ, "gate"), several);
        print_speedups(json_object_get(sum, "shapes"), several);
    } else {
        json_t *tried = json_object_get(sum, "gate_tried"), *t;
        size_t i;
        printf("no champion: %s\n",
               json_array_size(tried)
                   ? "no elite passed the held-out gate"
                   : "no elite went through the held-out gate");
        json_array_foreach (tried, i, t) {
            const char *tw = json_string_value(json_object_get(t, "reason"));
            double held = num(t, "held_out_fitness");
            printf("  candidate %lld, fitness %.3f: ",
                   (long long)json_integer_value(json_object_get(t, "id")),
                   num(t, "fitness"));
            if (tw)
                printf("%s\n", tw);
            else if (isnan(held))
                printf("held-out fitness unknown\n");
            else
                printf("held-out fitness %.3f\n", held);
        }
    }
    printf("files:\n");
    if (*champion) {
        print_path(dir, "best kernel", "best.cu");
        print_path(dir, "dispatch table", "best.dispatch.json");
    }
    print_path(dir, "report", "report.html");
    print_path(dir, "summary", "summary.json");
    print_path(dir, "log", "events.jsonl");
    json_decref(sum);
    return true;
}

/* ---- kevo report -------------------------------------------------------- */

static void report_usage(FILE *out)
{
    fprintf(out,
            "usage: %s report DIR\n"
            "\n"
            "Rebuilds DIR/report.html, the report of the search run in DIR,\n"
            "from the files of the run (a run that is still going, or was\n"
            "stopped, too), and prints its path.\n"
            "\n"
            "Exit status: 0 written, 1 the run directory cannot be read or\n"
            "the report cannot be written, 2 bad command line.\n"
            "See kevo-report(1).\n",
            program);
}

int cmd_report(int argc, char **argv)
{
    static const struct option options[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'h': report_usage(stdout); return EXIT_OK;
        default: report_usage(stderr); return EXIT_USAGE;
        }
    }
    if (argc - optind != 1) {
        report_usage(stderr);
        return EXIT_USAGE;
    }
    const char *dir = argv[optind];
    struct stat st;
    if (stat(dir, &st) != 0) {
        fprintf(stderr, "%s: %s: %s\n", program, dir, strerror(errno));
        return EXIT_INVALID;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "%s: %s: not a run directory\n", program, dir);
        return EXIT_INVALID;
    }
    kevo_error err;
    kevo_error_init(&err);
    kevo_status rc = kevo_report_write(dir, &err);
    if (rc != KEVO_OK) {
        fprintf(stderr, "%s: %s\n", program,
                err.text[0] ? err.text : kevo_strerror(rc));
        return EXIT_INVALID;
    }
    printf("%s/report.html\n", dir);
    return EXIT_OK;
}

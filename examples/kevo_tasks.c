/*
 * kevo_tasks.c: `kevo tasks`, which lists and validates task files.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kevo_cli.h"

static void tasks_usage(FILE *out)
{
    fprintf(out,
            "usage: %s tasks [--json] [PATH...]\n"
            "\n"
            "Loads every task file (a PATH, or the *.json files of a\n"
            "directory), checks everything that can be checked without a GPU\n"
            "and prints one line per task, or the first error of each invalid\n"
            "task with its file and JSON path.\n"
            "\n"
            "  --json   one JSON object per task instead of the table\n",
            program);
}

/* ---- kevo tasks -----------------------------------------------------------
 */

typedef struct task_summary {
    size_t train, held_out, args, params;
    uint64_t max_footprint;
    double max_bytes, max_flops;
} task_summary;

static kevo_status summarise(const kevo_task *task, task_summary *s,
                             kevo_error *err)
{
    memset(s, 0, sizeof *s);
    s->train = kevo_task_shape_count(task, KEVO_SHAPES_TRAIN);
    s->held_out = kevo_task_shape_count(task, KEVO_SHAPES_HELD_OUT);
    s->args = kevo_task_arg_count(task);
    const kevo_candidate *seed = kevo_task_seed(task);
    s->params = seed ? kevo_paramspace_count(kevo_candidate_params(seed)) : 0;
    kevo_vars *shape = kevo_vars_new();
    if (!shape)
        return KEVO_ENOMEM;
    kevo_status rc = KEVO_OK;
    for (size_t i = 0; i < s->train && rc == KEVO_OK; i++) {
        uint64_t fp = 0;
        double bytes = 0, flops = 0;
        kevo_vars_clear(shape);
        rc = kevo_task_shape_vars(task, KEVO_SHAPES_TRAIN, i, shape);
        if (rc == KEVO_OK)
            rc = kevo_task_footprint(task, shape, &fp, err);
        if (rc == KEVO_OK)
            rc = kevo_task_cost(task, shape, &bytes, &flops, err);
        if (rc != KEVO_OK)
            break;
        if (fp > s->max_footprint)
            s->max_footprint = fp;
        if (bytes > s->max_bytes) {
            s->max_bytes = bytes;
            s->max_flops = flops;
        }
    }
    kevo_vars_free(shape);
    return rc;
}

static int check_task(const char *path, bool json, size_t *shown)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_task *task = NULL;
    task_summary s;
    kevo_status rc = kevo_task_load(path, &task, &err);
    if (rc == KEVO_OK)
        rc = summarise(task, &s, &err);
    if (json) {
        printf("{\"file\": ");
        cli_json_string(path);
        if (rc == KEVO_OK) {
            printf(", \"valid\": true, \"name\": ");
            cli_json_string(kevo_task_name(task));
            printf(", \"dims\": [");
            for (size_t i = 0; i < kevo_task_dim_count(task); i++) {
                printf("%s", i ? ", " : "");
                cli_json_string(kevo_task_dim_name(task, i));
            }
            printf("], \"args\": %zu, \"shapes\": %zu, \"held_out\": %zu, "
                   "\"seed_params\": %zu, \"max_footprint_bytes\": %llu, "
                   "\"max_cost_bytes\": %.17g, \"max_cost_flops\": %.17g, "
                   "\"peak\": \"%s\"}\n",
                   s.args, s.train, s.held_out, s.params,
                   (unsigned long long)s.max_footprint, s.max_bytes,
                   s.max_flops, kevo_peak_name(kevo_task_peak(task)));
        } else {
            printf(", \"valid\": false, \"error\": ");
            cli_json_string(err.text[0] ? err.text : kevo_strerror(rc));
            printf(", \"code\": \"%s\"}\n", kevo_strerror(rc));
        }
    } else if (rc == KEVO_OK) {
        if ((*shown)++ == 0)
            printf("%-12s %-16s %5s %6s %8s %6s %10s %11s  %s\n", "task",
                   "dims", "args", "shapes", "held-out", "params", "max memory",
                   "flop/byte", "file");
        char dims[64] = "";
        size_t n = 0;
        for (size_t i = 0; i < kevo_task_dim_count(task) && n < sizeof dims;
             i++)
            n += (size_t)snprintf(dims + n, sizeof dims - n, "%s%s",
                                  i ? "," : "", kevo_task_dim_name(task, i));
        printf("%-12s %-16s %5zu %6zu %8zu %6zu %8.1f MB %11.3f  %s\n",
               kevo_task_name(task), dims, s.args, s.train, s.held_out,
               s.params, (double)s.max_footprint / 1e6,
               s.max_bytes > 0 ? s.max_flops / s.max_bytes : 0.0, path);
    } else {
        fprintf(stderr, "%s: invalid task: %s\n", program,
                err.text[0] ? err.text : kevo_strerror(rc));
    }
    kevo_task_free(task);
    return rc == KEVO_OK ? EXIT_OK : EXIT_INVALID;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.json file of dir, sorted, in a new NULL-terminated array. */
static char **list_tasks(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **files = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        char **more = realloc(files, (n + 2) * sizeof *files);
        if (!more)
            break;
        files = more;
        size_t size = strlen(dir) + len + 2;
        if (!(files[n] = malloc(size)))
            break;
        snprintf(files[n++], size, "%s/%s", dir, e->d_name);
        files[n] = NULL;
    }
    closedir(d);
    if (files)
        qsort(files, n, sizeof *files, by_name);
    return files;
}

int cmd_tasks(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "jh", options, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'h': tasks_usage(stdout); return EXIT_OK;
        default: tasks_usage(stderr); return EXIT_USAGE;
        }
    }
    const char *fallback[] = {getenv("KEVO_TASKS_DIR"), NULL};
    if (!fallback[0] || !fallback[0][0])
        fallback[0] = KEVO_TASKS_DIR;
    char **paths = optind < argc ? argv + optind : (char **)fallback;
    int status = EXIT_OK;
    size_t shown = 0, checked = 0, invalid = 0;
    for (; *paths; paths++) {
        struct stat st;
        if (stat(*paths, &st) != 0) {
            fprintf(stderr, "%s: %s: %s\n", program, *paths, strerror(errno));
            status = EXIT_INVALID;
            invalid++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            checked++;
            if (check_task(*paths, json, &shown) != EXIT_OK) {
                status = EXIT_INVALID;
                invalid++;
            }
            continue;
        }
        char **files = list_tasks(*paths);
        if (!files || !files[0]) {
            fprintf(stderr, "%s: %s: no task files (*.json) found\n", program,
                    *paths);
            status = EXIT_INVALID;
            invalid++;
        }
        for (size_t i = 0; files && files[i]; i++) {
            checked++;
            if (check_task(files[i], json, &shown) != EXIT_OK) {
                status = EXIT_INVALID;
                invalid++;
            }
            free(files[i]);
        }
        free(files);
    }
    if (!json)
        printf("%zu task%s checked, %zu valid, %zu invalid\n", checked,
               checked == 1 ? "" : "s", checked - invalid, invalid);
    return status;
}

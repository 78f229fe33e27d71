/*
 * kevo_tasks.c: `kevo tasks`, which lists and validates task files: every
 * check without a GPU, then the reference, the seed and the baseline (where
 * there is one) of every valid task compiled with NVRTC (the evaluator's
 * compile-only mode) and their launches checked against the compiled kernels.
 */
/* Uses the experimental API (kevo-api(7)): kevo_task_footprint() and
 * kevo_task_baseline(). */
#define KEVO_EXPERIMENTAL
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kevo_cli.h"

static void tasks_usage(FILE *out)
{
    fprintf(out,
            "usage: %s tasks [--json] [--no-compile] [--arch ARCH] [PATH...]\n"
            "\n"
            "Loads every task file (a PATH, or the *.json files of a\n"
            "directory), checks everything that can be checked without a GPU,\n"
            "compiles each task's reference, seed and baseline with NVRTC,\n"
            "checks every launch against the kernel it calls (its name, and\n"
            "the number, kind and width of its parameters), and prints one\n"
            "line per task, or the first error of each invalid task with its\n"
            "file and JSON path.\n"
            "\n"
            "  --json        one JSON object per task instead of the table\n"
            "  --no-compile  skip compiling\n"
            "  --arch ARCH   compile for ARCH (default sm_90a)\n",
            program);
}

/* ---- one task file ------------------------------------------------------ */

typedef struct task_summary {
    size_t train, held_out, args, params;
    uint64_t max_footprint;
    double max_bytes, max_flops;
} task_summary;

/* The kernels compiled per task. */
enum { REFERENCE = 0, SEED = 1, BASELINE = 2, NKERNELS = 3 };
static const char *const kernel_key[NKERNELS] = {"reference", "seed",
                                                 "baseline"};

/* The task's kernel k, or NULL (a task without a baseline). */
static const kevo_candidate *task_kernel(const kevo_task *task, int k)
{
    return k == REFERENCE ? kevo_task_reference(task)
           : k == SEED    ? kevo_task_seed(task)
                          : kevo_task_baseline(task);
}

typedef struct task_entry {
    char *path;
    kevo_task *task;
    kevo_status rc; /* KEVO_OK while the task is valid */
    kevo_error err;
    task_summary s;
    uint64_t ticket[NKERNELS]; /* compile jobs; 0 when none */
    bool compiled[NKERNELS];   /* compiled and matched its launches */
    char *compile_log;         /* NVRTC's log of a compile error */
} task_entry;

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

static void load_entry(task_entry *e)
{
    kevo_error_init(&e->err);
    e->rc = kevo_task_load(e->path, &e->task, &e->err);
    if (e->rc == KEVO_OK)
        e->rc = summarise(e->task, &e->s, &e->err);
}

/* Records the first compile failure of e: "FILE: $.seed: REASON". */
static void compile_failed(task_entry *e, int k, const kevo_eval_result *res)
{
    if (e->rc != KEVO_OK)
        return;
    const char *reason = kevo_eval_result_reason(res);
    e->rc = KEVO_EINVALID;
    kevo_error_init(&e->err);
    e->err.code = KEVO_EINVALID;
    snprintf(e->err.text, sizeof e->err.text, "%s: $.%s: %s", e->path,
             kernel_key[k], reason ? reason : "does not compile");
    /* NVRTC's own errors are in its log (a launch that names no kernel is
     * said in the reason alone). */
    if (kevo_eval_result_verdict(res) == KEVO_VERDICT_COMPILE_ERROR && reason &&
        strncmp(reason, "compile error", 13) == 0) {
        const char *log = kevo_eval_result_compile_log(res);
        free(e->compile_log);
        e->compile_log = log && log[0] ? strdup(log) : NULL;
    }
}

/* ---- compiling ---------------------------------------------------------- */

/* A compile-only evaluator, or NULL after saying on stderr why the kernels
 * are not compiled. */
static kevo_evaluator *start_compiler(const char *arch, size_t jobs)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_evaluator *ev = NULL;
    char worker[PATH_MAX + 64];
    cli_use_build_tree(worker, sizeof worker, NULL);
    /* A compile process a core, but no more than there are compiles. */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int64_t workers = cpus > 0 && (size_t)cpus < jobs ? cpus : (int64_t)jobs;
    if (kevo_evaluator_new(&ev, &err) != KEVO_OK ||
        kevo_evaluator_set_int(ev, KEVO_EVAL_COMPILE_WORKERS, workers, &err) !=
            KEVO_OK ||
        (worker[0] && kevo_evaluator_set_string(ev, KEVO_EVAL_WORKER_PATH,
                                                worker, &err) != KEVO_OK) ||
        kevo_evaluator_set_string(ev, KEVO_EVAL_ARCH, arch, &err) != KEVO_OK ||
        kevo_evaluator_start(ev, KEVO_EVAL_START_COMPILE_ONLY, &err) !=
            KEVO_OK) {
        fprintf(stderr,
                "%s: not compiling the kernels, NVRTC is not at hand (%s); "
                "every other check is done\n",
                program, err.text[0] ? err.text : kevo_strerror(err.code));
        kevo_evaluator_free(ev);
        return NULL;
    }
    return ev;
}

/* Compiles the reference, the seed and the baseline (where there is one)
 * of every valid task of e[0..n) and records what fails. Returns false
 * (after saying why) when compiling was skipped. */
static bool compile_all(task_entry *e, size_t n, const char *arch)
{
    size_t valid = 0;
    for (size_t i = 0; i < n; i++)
        valid += e[i].rc == KEVO_OK;
    if (valid == 0)
        return true;
    kevo_evaluator *ev = start_compiler(arch, NKERNELS * valid);
    if (!ev)
        return false;
    kevo_error err;
    kevo_error_init(&err);
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        for (int k = 0; k < NKERNELS && e[i].rc == KEVO_OK; k++) {
            const kevo_candidate *c = task_kernel(e[i].task, k);
            if (!c) {
                e[i].compiled[k] = true; /* nothing to compile */
                continue;
            }
            if (kevo_evaluator_submit(ev, e[i].task, c, KEVO_EVAL_COMPILE,
                                      &e[i].ticket[k], &err) != KEVO_OK) {
                ok = false;
                break;
            }
        }
    }
    while (ok && kevo_evaluator_pending(ev) > 0) {
        kevo_eval_result *res = NULL;
        if (kevo_evaluator_wait(ev, -1, &res, &err) != KEVO_OK) {
            ok = false;
            break;
        }
        uint64_t t = kevo_eval_result_ticket(res);
        for (size_t i = 0; i < n; i++) {
            for (int k = 0; k < NKERNELS; k++) {
                if (e[i].ticket[k] != t)
                    continue;
                if (kevo_eval_result_verdict(res) == KEVO_VERDICT_OK)
                    e[i].compiled[k] = true;
                else
                    compile_failed(&e[i], k, res);
            }
        }
        kevo_eval_result_free(res);
    }
    if (!ok)
        fprintf(stderr, "%s: compiling the kernels failed: %s\n", program,
                err.text[0] ? err.text : kevo_strerror(err.code));
    kevo_evaluator_free(ev);
    return ok;
}

/* ---- output ------------------------------------------------------------- */

static void print_json(const task_entry *e, bool compiled)
{
    const kevo_task *task = e->task;
    const task_summary *s = &e->s;
    printf("{\"file\": ");
    cli_json_string(e->path);
    if (e->rc != KEVO_OK) {
        printf(", \"valid\": false, \"error\": ");
        cli_json_string(e->err.text[0] ? e->err.text : kevo_strerror(e->rc));
        printf(", \"code\": \"%s\"}\n", kevo_strerror(e->rc));
        return;
    }
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
           "\"peak\": \"%s\", \"compiled\": %s}\n",
           s->args, s->train, s->held_out, s->params,
           (unsigned long long)s->max_footprint, s->max_bytes, s->max_flops,
           kevo_peak_name(kevo_task_peak(task)),
           compiled && e->compiled[REFERENCE] && e->compiled[SEED] &&
                   e->compiled[BASELINE]
               ? "true"
               : "false");
}

static void print_line(const task_entry *e, size_t *shown)
{
    if (e->rc != KEVO_OK) {
        fprintf(stderr, "%s: invalid task: %s\n", program,
                e->err.text[0] ? e->err.text : kevo_strerror(e->rc));
        if (e->compile_log)
            fprintf(stderr, "%s%s", e->compile_log,
                    e->compile_log[strlen(e->compile_log) - 1] == '\n' ? ""
                                                                       : "\n");
        return;
    }
    const kevo_task *task = e->task;
    const task_summary *s = &e->s;
    if ((*shown)++ == 0)
        printf("%-12s %-16s %5s %6s %8s %6s %10s %11s  %s\n", "task", "dims",
               "args", "shapes", "held-out", "params", "max memory",
               "flop/byte", "file");
    char dims[64] = "";
    size_t n = 0;
    for (size_t i = 0; i < kevo_task_dim_count(task) && n < sizeof dims; i++)
        n += (size_t)snprintf(dims + n, sizeof dims - n, "%s%s", i ? "," : "",
                              kevo_task_dim_name(task, i));
    printf("%-12s %-16s %5zu %6zu %8zu %6zu %8.1f MB %11.3f  %s\n",
           kevo_task_name(task), dims, s->args, s->train, s->held_out,
           s->params, (double)s->max_footprint / 1e6,
           s->max_bytes > 0 ? s->max_flops / s->max_bytes : 0.0, e->path);
}

/* ---- the files ---------------------------------------------------------- */

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

/* Appends a task entry for path (taken); false on no memory. */
static bool add_entry(task_entry **v, size_t *n, char *path)
{
    task_entry *more = path ? realloc(*v, (*n + 1) * sizeof **v) : NULL;
    if (!more) {
        free(path);
        return false;
    }
    *v = more;
    memset(&more[*n], 0, sizeof **v);
    more[(*n)++].path = path;
    return true;
}

/* The task files that paths name, in order; a path that cannot be read is
 * reported at once and counted in *unreadable. */
static bool collect(char **paths, task_entry **v, size_t *n, size_t *unreadable)
{
    for (; *paths; paths++) {
        struct stat st;
        if (stat(*paths, &st) != 0) {
            fprintf(stderr, "%s: %s: %s\n", program, *paths, strerror(errno));
            (*unreadable)++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (!add_entry(v, n, strdup(*paths)))
                return false;
            continue;
        }
        char **files = list_tasks(*paths);
        if (!files || !files[0]) {
            fprintf(stderr, "%s: %s: no task files (*.json) found\n", program,
                    *paths);
            (*unreadable)++;
        }
        bool ok = true;
        for (size_t i = 0; files && files[i]; i++) {
            if (ok)
                ok = add_entry(v, n, files[i]);
            else
                free(files[i]);
        }
        free(files);
        if (!ok)
            return false;
    }
    return true;
}

int cmd_tasks(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'},
        {"no-compile", no_argument, NULL, 'n'},
        {"arch", required_argument, NULL, 'a'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false, compile = true;
    const char *arch = "sm_90a";
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'n': compile = false; break;
        case 'a': arch = optarg; break;
        case 'h': tasks_usage(stdout); return EXIT_OK;
        default: tasks_usage(stderr); return EXIT_USAGE;
        }
    }
    const char *fallback[] = {getenv("KEVO_TASKS_DIR"), NULL};
    if (!fallback[0] || !fallback[0][0])
        fallback[0] = KEVO_TASKS_DIR;
    char **paths = optind < argc ? argv + optind : (char **)fallback;
    task_entry *e = NULL;
    size_t n = 0, unreadable = 0, shown = 0;
    int status = EXIT_OK;
    if (!collect(paths, &e, &n, &unreadable)) {
        fprintf(stderr, "%s: out of memory\n", program);
        status = EXIT_INVALID;
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        load_entry(&e[i]);
    bool compiled = compile && compile_all(e, n, arch);
    size_t invalid = unreadable;
    for (size_t i = 0; i < n; i++) {
        invalid += e[i].rc != KEVO_OK;
        if (json)
            print_json(&e[i], compiled);
        else
            print_line(&e[i], &shown);
    }
    /* A path that could not be read counts as a task checked and invalid. */
    size_t checked = n + unreadable;
    if (!json)
        printf("%zu task%s checked, %zu valid, %zu invalid%s\n", checked,
               checked == 1 ? "" : "s", checked - invalid, invalid,
               compiled ? "" : " (kernels not compiled)");
    if (invalid)
        status = EXIT_INVALID;
done:
    for (size_t i = 0; i < n; i++) {
        kevo_task_free(e[i].task);
        free(e[i].path);
        free(e[i].compile_log);
    }
    free(e);
    return status;
}

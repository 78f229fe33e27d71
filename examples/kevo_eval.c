/*
 * kevo_eval.c: `kevo eval`, which evaluates one kernel for a task on the
 * GPU and prints what it measured shape by shape, and `kevo peaks`, which
 * prints the GPU's measured ceilings.
 */
/* Uses the experimental API (kevo-api(7)): the timing phases, the compile
 * cache, the suspicious flag, the gate and the named ceilings. */
#define KEVO_EXPERIMENTAL
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kevo_cli.h"
#include "kevo_tolerance.h"

static void eval_usage(FILE *out)
{
    fprintf(
        out,
        "usage: %s eval [OPTIONS] TASK.json KERNEL.cu\n"
        "\n"
        "Compiles KERNEL.cu for the GPU, checks it against the task's\n"
        "reference on every training shape (two fresh input sets each),\n"
        "times it and prints one line per shape: correct, the worst\n"
        "element's error as a fraction of its tolerance (err/tol:\n"
        "|got - want| / (atol + rtol * |want|), 1.00 = the limit; \"exact\"\n"
        "where the tolerance is zero), median time and spread, GB/s and\n"
        "GFLOP/s of the task's cost model, efficiency (the roofline floor\n"
        "over the time), what bounds the floor, and the DRAM bytes the\n"
        "profiler saw against the model's.\n"
        "\n"
        "  -p, --param NAME=VALUE  set a parameter of the kernel (repeatable)\n"
        "  --held-out              also evaluate the held-out shapes and\n"
        "                          apply the held-out gate\n"
        "  --no-timing             correctness only\n"
        "  --profile               DRAM bytes and achieved occupancy from\n"
        "                          the CUPTI range profiler\n"
        "  --set OPTION=VALUE      an evaluator option by name (device,\n"
        "                          min_reps, time_cap_ms, ...; see\n"
        "                          kevo_eval_option_name(3)), or the\n"
        "                          gate's gate_slack_ppm or gate_floor_ns\n"
        "  --json                  the results as one JSON object\n"
        "\n"
        "Exit status: 0 correct (and through the gate with --held-out),\n"
        "1 the kernel failed or an input is invalid, 2 bad command line,\n"
        "3 no usable GPU.\n",
        program);
}

static void peaks_usage(FILE *out)
{
    fprintf(out,
            "usage: %s peaks [--json] [--all] [--set OPTION=VALUE]\n"
            "\n"
            "Prints the GPU's measured ceilings: memory bandwidth (bytes read\n"
            "plus written per second) and arithmetic peaks. They are measured\n"
            "once per device and driver and cached (see kevo(1), FILES).\n"
            "\n"
            "  --all    also the tensor-core peaks (measured when not cached)\n"
            "           and the figure of every probe behind each ceiling\n"
            "  --json   one JSON object\n",
            program);
}

/* ---- options ------------------------------------------------------------ */

typedef struct eval_cli {
    bool held_out, timing, profile, json, all;
    char **params; /* NAME=VALUE */
    size_t nparams;
    char **sets; /* OPTION=VALUE */
    size_t nsets;
} eval_cli;

static bool push(char ***v, size_t *n, char *s)
{
    char **more = realloc(*v, (*n + 1) * sizeof **v);
    if (!more)
        return false;
    *v = more;
    (*v)[(*n)++] = s;
    return true;
}

/* Splits "NAME=VALUE" at the '='; false when there is none. */
static bool split_assignment(const char *s, char *name, size_t size,
                             const char **value)
{
    const char *eq = strchr(s, '=');
    if (!eq || eq == s || (size_t)(eq - s) >= size)
        return false;
    memcpy(name, s, (size_t)(eq - s));
    name[eq - s] = '\0';
    *value = eq + 1;
    return true;
}

/* The held-out gate's options, which are a search's (the gate is the
 * search's rule): kevo eval takes them with --set too. */
static bool gate_option(kevo_search_option opt)
{
    return opt == KEVO_SEARCH_GATE_SLACK_PPM ||
           opt == KEVO_SEARCH_GATE_FLOOR_NS;
}

/* Applies every --set to ev, or, for the gate's options, to gate (NULL:
 * none taken); prints the error and returns false on one. */
static bool apply_sets(kevo_evaluator *ev, kevo_search *gate,
                       const eval_cli *cli)
{
    for (size_t i = 0; i < cli->nsets; i++) {
        char name[64];
        const char *value;
        kevo_eval_option opt;
        kevo_search_option sopt;
        bool search = false;
        int64_t v;
        if (!split_assignment(cli->sets[i], name, sizeof name, &value)) {
            fprintf(stderr, "%s: --set %s: expected OPTION=VALUE\n", program,
                    cli->sets[i]);
            return false;
        }
        if (kevo_eval_option_from_name(name, &opt) != KEVO_OK) {
            search = gate &&
                     kevo_search_option_from_name(name, &sopt) == KEVO_OK &&
                     gate_option(sopt);
            if (!search) {
                fprintf(stderr, "%s: --set %s: no evaluator option '%s'\n",
                        program, cli->sets[i], name);
                return false;
            }
        }
        if (!cli_parse_int(value, &v)) {
            fprintf(stderr, "%s: --set %s: '%s' is not an integer\n", program,
                    cli->sets[i], value);
            return false;
        }
        kevo_error err;
        kevo_error_init(&err);
        if ((search ? kevo_search_set_int(gate, sopt, v, &err)
                    : kevo_evaluator_set_int(ev, opt, v, &err)) != KEVO_OK) {
            fprintf(stderr, "%s: --set %s: %s\n", program, cli->sets[i],
                    err.text);
            return false;
        }
    }
    return true;
}

/* Starts an evaluator with the command's options (the gate's to gate,
 * which may be NULL); NULL after printing why, with *status set. */
static kevo_evaluator *start_evaluator(const eval_cli *cli, kevo_search *gate,
                                       int *status)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_evaluator *ev = NULL;
    *status = EXIT_NODEV;
    if (kevo_evaluator_new(&ev, &err) != KEVO_OK) {
        fprintf(stderr, "%s: %s\n", program, err.text);
        return NULL;
    }
    if (cli->profile &&
        kevo_evaluator_set_int(ev, KEVO_EVAL_PROFILE, 1, &err) != KEVO_OK) {
        fprintf(stderr, "%s: %s\n", program, err.text);
        goto fail;
    }
    if (!apply_sets(ev, gate, cli)) {
        *status = EXIT_USAGE;
        goto fail;
    }
    char worker[PATH_MAX + 64];
    cli_use_build_tree(worker, sizeof worker, NULL);
    if (!cli_start_evaluator(ev, worker))
        goto fail;
    return ev;
fail:
    kevo_evaluator_free(ev);
    return NULL;
}

/* ---- kevo eval ---------------------------------------------------------- */

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: %s: %s\n", program, path, strerror(errno));
        return NULL;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 16384;
            char *more = realloc(text, cap);
            if (!more) {
                free(text);
                fclose(f);
                fprintf(stderr, "%s: %s: out of memory\n", program, path);
                return NULL;
            }
            text = more;
        }
        size_t n = fread(text + len, 1, 4096, f);
        len += n;
        if (n < 4096)
            break;
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: %s: read error\n", program, path);
        free(text);
        return NULL;
    }
    text[len] = '\0';
    return text;
}

/* "n=16777216" or "rows=8192 cols=4096". */
static void shape_text(const kevo_task *task, kevo_shape_set set, size_t i,
                       char *buf, size_t size)
{
    const int64_t *dims = kevo_task_shape(task, set, i);
    size_t n = 0;
    buf[0] = '\0';
    for (size_t d = 0; dims && d < kevo_task_dim_count(task) && n < size; d++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s=%lld", d ? " " : "",
                              kevo_task_dim_name(task, d), (long long)dims[d]);
}

static void print_num(double v, int decimals, int width)
{
    if (isnan(v))
        printf("%*s", width, "-");
    else
        printf("%*.*f", width, decimals, v);
}

static void print_table(const kevo_task *task, const kevo_eval_result *res)
{
    size_t n = kevo_eval_result_shape_count(res);
    printf("%-22s %-4s %9s %11s %6s %8s %9s %6s %-7s %s\n", "shape", "ok",
           "err/tol", "time (us)", "+-%", "GB/s", "GFLOP/s", "eff", "bound",
           "DRAM MB (model)");
    for (size_t i = 0; i < n; i++) {
        kevo_shape_result s = {.size = sizeof s};
        if (kevo_eval_result_shape(res, i, &s) != KEVO_OK)
            continue;
        char dims[64], err[32];
        error_fraction f = error_fraction_of(task, &s);
        shape_text(task, s.set, s.index, dims, sizeof dims);
        printf("%-22s %-4s %9s ", dims, s.correct ? "yes" : "NO",
               error_fraction_text(&f, err, sizeof err));
        print_num(s.time * 1e6, 2, 11);
        putchar(' ');
        print_num(s.time_spread * 100, 2, 6);
        putchar(' ');
        print_num(s.gbytes_per_s, 0, 8);
        putchar(' ');
        print_num(s.gflops_per_s, 1, 9);
        putchar(' ');
        print_num(s.efficiency, 3, 6);
        printf(" %-7s ", isnan(s.efficiency)             ? "-"
                         : s.bound == KEVO_BOUND_COMPUTE ? "compute"
                         : s.bound == KEVO_BOUND_LATENCY ? "latency"
                                                         : "memory");
        if (!isnan(s.dram_read_bytes))
            printf("%.1f (%.1f)",
                   (s.dram_read_bytes + s.dram_write_bytes) / 1e6,
                   s.bytes / 1e6);
        else
            printf("- (%.1f)", s.bytes / 1e6);
        putchar('\n');
        if (!s.correct && s.worst_arg) {
            printf("  worst: %s[%llu] = %.9g, reference %.9g (%llu bad "
                   "elements)",
                   s.worst_arg, (unsigned long long)s.worst_index, s.worst_got,
                   s.worst_want, (unsigned long long)s.bad_elements);
            if (f.known && f.exact)
                printf("; %s must match the reference exactly", s.worst_arg);
            else if (f.known && isfinite(f.error))
                printf("; error %.3g, allowed %.3g (atol %g + rtol %g * "
                       "|reference|)",
                       f.error, f.allowed, f.atol, f.rtol);
            putchar('\n');
        }
    }
}

/* Speedups over the seed and the reference: geometric means over the shapes
 * where both times are known. */
static void print_speedups(const kevo_eval_result *res)
{
    double ls = 0, lr = 0;
    size_t ns = 0, nr = 0;
    for (size_t i = 0; i < kevo_eval_result_shape_count(res); i++) {
        kevo_shape_result s = {.size = sizeof s};
        if (kevo_eval_result_shape(res, i, &s) != KEVO_OK || !(s.time > 0))
            continue;
        if (s.seed_time > 0)
            ls += log(s.seed_time / s.time), ns++;
        if (s.reference_time > 0)
            lr += log(s.reference_time / s.time), nr++;
    }
    if (ns)
        printf("speedup over the seed %.2fx", exp(ls / (double)ns));
    if (nr)
        printf("%sover the reference %.2fx", ns ? ", " : "speedup ",
               exp(lr / (double)nr));
    if (ns || nr)
        putchar('\n');
}

static void print_kernel_line(const kevo_eval_result *res)
{
    double regs, spills, smem, occ;
    printf("compile %.2f s%s",
           kevo_eval_result_seconds(res, KEVO_PHASE_COMPILE),
           kevo_eval_result_cached(res) ? " (cached)" : "");
    if (kevo_eval_result_descriptor(res, "registers", &regs) == KEVO_OK)
        printf(", %.0f registers", regs);
    if (kevo_eval_result_descriptor(res, "spills", &spills) == KEVO_OK)
        printf(", %.0f bytes spilled", spills);
    if (kevo_eval_result_descriptor(res, "shared_bytes", &smem) == KEVO_OK)
        printf(", %.0f bytes shared", smem);
    if (kevo_eval_result_descriptor(res, "occupancy", &occ) == KEVO_OK)
        printf(", occupancy %.2f", occ);
    putchar('\n');
}

/* Says where an efficiency above 1 has the L2 cache as its cause. */
static void print_l2_notes(const kevo_task *task, const kevo_eval_result *res)
{
    for (size_t i = 0; i < kevo_eval_result_shape_count(res); i++) {
        kevo_shape_result s = {.size = sizeof s};
        char dims[64];
        if (kevo_eval_result_shape(res, i, &s) != KEVO_OK || !s.l2_explained)
            continue;
        shape_text(task, s.set, s.index, dims, sizeof dims);
        printf("efficiency %.3f at %s: above 1 because the outputs fit in the "
               "L2 cache, wholly or in part: written lines stay there past "
               "the end of the timed run, so DRAM moves fewer bytes than the "
               "cost model counts\n",
               s.efficiency, dims);
    }
}

static void print_result(const kevo_task *task, const kevo_eval_result *res,
                         const char *title)
{
    printf("\n%s\n", title);
    print_table(task, res);
    kevo_verdict v = kevo_eval_result_verdict(res);
    if (v == KEVO_VERDICT_OK) {
        double fit = kevo_eval_result_fitness(res);
        if (fit > 0)
            printf("fitness %.3f (geometric mean of the efficiencies)%s\n", fit,
                   kevo_eval_result_suspicious(res)
                       ? "; SUSPICIOUS: an efficiency above the ceiling "
                         "that the L2 cache does not explain"
                       : "");
        print_l2_notes(task, res);
        print_speedups(res);
    } else {
        printf("verdict %s: %s\n", kevo_verdict_name(v),
               kevo_eval_result_reason(res));
        if (v == KEVO_VERDICT_COMPILE_ERROR) {
            const char *log = kevo_eval_result_compile_log(res);
            if (log && log[0])
                printf("%s%s", log, log[strlen(log) - 1] == '\n' ? "" : "\n");
        }
    }
}

static kevo_candidate *load_kernel(const kevo_task *task, const char *path,
                                   const eval_cli *cli)
{
    char *source = read_text(path);
    if (!source)
        return NULL;
    kevo_error err;
    kevo_error_init(&err);
    kevo_candidate *cand = NULL;
    kevo_status rc =
        kevo_candidate_new_for_task(task, source, path, &cand, &err);
    free(source);
    if (rc != KEVO_OK) {
        fprintf(stderr, "%s: %s\n", program, err.text);
        return NULL;
    }
    for (size_t i = 0; i < cli->nparams; i++) {
        char name[128];
        const char *value;
        int64_t v;
        if (!split_assignment(cli->params[i], name, sizeof name, &value) ||
            !cli_parse_int(value, &v)) {
            fprintf(stderr, "%s: --param %s: expected NAME=INTEGER\n", program,
                    cli->params[i]);
            goto fail;
        }
        if (kevo_candidate_set_param(cand, name, v, &err) != KEVO_OK) {
            fprintf(stderr, "%s: --param %s: %s\n", program, cli->params[i],
                    err.text);
            goto fail;
        }
    }
    return cand;
fail:
    kevo_candidate_free(cand);
    return NULL;
}

static void print_json_result(const char *key, const kevo_eval_result *res)
{
    char *json = NULL;
    kevo_error err;
    kevo_error_init(&err);
    printf("\"%s\": ", key);
    if (kevo_eval_result_to_json(res, &json, &err) == KEVO_OK)
        fputs(json, stdout);
    else
        fputs("null", stdout);
    free(json);
}

int cmd_eval(int argc, char **argv)
{
    static const struct option options[] = {
        {"param", required_argument, NULL, 'p'},
        {"held-out", no_argument, NULL, 'H'},
        {"no-timing", no_argument, NULL, 'T'},
        {"profile", no_argument, NULL, 'P'},
        {"set", required_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    eval_cli cli = {.timing = true};
    int status = EXIT_USAGE, c;
    kevo_task *task = NULL;
    kevo_candidate *cand = NULL;
    kevo_evaluator *ev = NULL;
    kevo_search *gate_search = NULL;
    kevo_eval_result *train = NULL, *held = NULL;
    kevo_error err;
    kevo_error_init(&err);
    optind = 1;
    while ((c = getopt_long(argc, argv, "p:h", options, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (!push(&cli.params, &cli.nparams, optarg))
                goto done;
            break;
        case 'H': cli.held_out = true; break;
        case 'T': cli.timing = false; break;
        case 'P': cli.profile = true; break;
        case 's':
            if (!push(&cli.sets, &cli.nsets, optarg))
                goto done;
            break;
        case 'j': cli.json = true; break;
        case 'h':
            eval_usage(stdout);
            status = EXIT_OK;
            goto done;
        default: eval_usage(stderr); goto done;
        }
    }
    if (argc - optind != 2) {
        eval_usage(stderr);
        goto done;
    }
    status = EXIT_INVALID;
    if (kevo_task_load(argv[optind], &task, &err) != KEVO_OK) {
        fprintf(stderr, "%s: invalid task: %s\n", program, err.text);
        goto done;
    }
    if (!(cand = load_kernel(task, argv[optind + 1], &cli)))
        goto done;
    /* The gate is the search's rule, with the search's options. */
    if (kevo_search_new(task, &gate_search, &err) != KEVO_OK) {
        fprintf(stderr, "%s: %s\n", program, err.text);
        goto done;
    }
    if (!(ev = start_evaluator(&cli, gate_search, &status)))
        goto done;
    if (kevo_search_set_evaluator(gate_search, ev, &err) != KEVO_OK) {
        fprintf(stderr, "%s: %s\n", program, err.text);
        goto done;
    }
    unsigned flags = cli.timing ? 0 : KEVO_EVAL_NO_TIMING;
    status = EXIT_NODEV;
    if (kevo_evaluator_evaluate(ev, task, cand, flags, &train, &err) !=
        KEVO_OK) {
        fprintf(stderr, "%s: %s\n", program, err.text);
        goto done;
    }
    bool ok = kevo_eval_result_verdict(train) == KEVO_VERDICT_OK;
    bool gate = false;
    char why[4096] = "";
    if (cli.held_out && ok) {
        /* The gate compares with the seed in pairs: timed together. */
        unsigned hflags =
            flags | KEVO_EVAL_HELD_OUT | (cli.timing ? KEVO_EVAL_PAIRED : 0u);
        if (kevo_evaluator_evaluate(ev, task, cand, hflags, &held, &err) !=
            KEVO_OK) {
            fprintf(stderr, "%s: %s\n", program, err.text);
            goto done;
        }
        gate = kevo_search_gate_check(gate_search, held, why, sizeof why);
    }
    status = ok && (!cli.held_out || gate) ? EXIT_OK : EXIT_INVALID;
    if (cli.json) {
        printf("{\"task\": ");
        cli_json_string(kevo_task_name(task));
        printf(", \"kernel\": ");
        cli_json_string(argv[optind + 1]);
        printf(", \"device\": ");
        cli_json_string(kevo_evaluator_device_name(ev));
        printf(", ");
        print_json_result("train", train);
        if (held) {
            printf(", ");
            print_json_result("held_out", held);
        }
        if (cli.held_out) {
            printf(", \"gate\": {\"passed\": %s, \"why\": ",
                   gate ? "true" : "false");
            cli_json_string(held ? why : "not evaluated: failed training");
            printf("}");
        }
        printf("}\n");
        goto done;
    }
    printf("task %s, kernel %s, on %s (%.0f GB/s, %.1f TFLOP/s %s)\n",
           kevo_task_name(task), argv[optind + 1],
           kevo_evaluator_device_name(ev), kevo_evaluator_bandwidth(ev) / 1e9,
           kevo_evaluator_peak(ev, kevo_task_peak(task)) / 1e12,
           kevo_peak_name(kevo_task_peak(task)));
    print_kernel_line(train);
    print_result(task, train, "training shapes");
    if (held)
        print_result(task, held, "held-out shapes");
    if (cli.held_out)
        printf("held-out gate: %s%s%s\n", gate ? "passed" : "FAILED",
               held ? ": " : ": not evaluated, the kernel failed training",
               held ? why : "");
done:
    kevo_eval_result_free(train);
    kevo_eval_result_free(held);
    kevo_search_free(gate_search);
    kevo_evaluator_free(ev);
    kevo_candidate_free(cand);
    kevo_task_free(task);
    free(cli.params);
    free(cli.sets);
    return status;
}

/* ---- kevo peaks --------------------------------------------------------- */

/* The streams the bandwidth is the best of, and the tensor-core
 * instruction families a tensor-core peak is the best of. */
static const char *const streams[4] = {"read", "write", "copy", "triad"};
static const char *const families[2] = {"_mma_sync", "_wgmma"};
static const char *const family_names[2] = {"mma.sync", "wgmma"};

/* Each stream's figure into figure[]; the name of the best (NULL when none
 * is known). */
static const char *stream_figures(kevo_evaluator *ev, double figure[4])
{
    const char *best = NULL;
    double top = 0.0;
    for (size_t i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof name, "bandwidth_%s", streams[i]);
        figure[i] = kevo_evaluator_ceiling(ev, name);
        if (figure[i] > top) {
            top = figure[i];
            best = streams[i];
        }
    }
    return best;
}

static bool is_tensor(kevo_peak peak)
{
    return peak != KEVO_PEAK_FP32 && peak != KEVO_PEAK_FP64;
}

/* The figure of peak by family ("_wgmma"); 0 when the device has none. */
static double tensor_figure(kevo_evaluator *ev, kevo_peak peak,
                            const char *family)
{
    char name[32];
    snprintf(name, sizeof name, "%s%s", kevo_peak_name(peak), family);
    return kevo_evaluator_ceiling(ev, name);
}

/* ", \"PREFIXNAME\": value" (null for 0: not on this device). */
static void print_json_figure(const char *prefix, const char *name,
                              double value)
{
    if (value > 0)
        printf(", \"%s%s\": %.6g", prefix, name, value);
    else
        printf(", \"%s%s\": null", prefix, name);
}

int cmd_peaks(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'},
        {"all", no_argument, NULL, 'a'},
        {"set", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    eval_cli cli = {.timing = true};
    int status = EXIT_USAGE, c;
    kevo_evaluator *ev = NULL;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'j': cli.json = true; break;
        case 'a': cli.all = true; break;
        case 's':
            if (!push(&cli.sets, &cli.nsets, optarg))
                goto done;
            break;
        case 'h':
            peaks_usage(stdout);
            status = EXIT_OK;
            goto done;
        default: peaks_usage(stderr); goto done;
        }
    }
    if (optind != argc) {
        peaks_usage(stderr);
        goto done;
    }
    if (!(ev = start_evaluator(&cli, NULL, &status)))
        goto done;
    static const kevo_peak kinds[] = {KEVO_PEAK_FP32, KEVO_PEAK_FP64,
                                      KEVO_PEAK_TF32, KEVO_PEAK_FP16,
                                      KEVO_PEAK_BF16, KEVO_PEAK_FP8};
    size_t nkinds = cli.all ? sizeof kinds / sizeof *kinds : 2;
    double bw = kevo_evaluator_bandwidth(ev);
    double stream[4];
    const char *best = stream_figures(ev, stream);
    if (cli.json) {
        printf("{\"device\": ");
        cli_json_string(kevo_evaluator_device_name(ev));
        printf(", \"bandwidth\": %.6g, \"bandwidth_probe\": ", bw);
        if (best)
            cli_json_string(best);
        else
            printf("null");
        printf(", \"launch_latency\": %.6g", kevo_evaluator_latency(ev));
        for (size_t i = 0; cli.all && i < 4; i++)
            print_json_figure("bandwidth_", streams[i], stream[i]);
        for (size_t i = 0; i < nkinds; i++) {
            printf(", \"%s\": %.6g", kevo_peak_name(kinds[i]),
                   kevo_evaluator_peak(ev, kinds[i]));
            for (size_t f = 0; is_tensor(kinds[i]) && f < 2; f++)
                print_json_figure(kevo_peak_name(kinds[i]), families[f],
                                  tensor_figure(ev, kinds[i], families[f]));
        }
        printf("}\n");
    } else {
        printf("%s\n", kevo_evaluator_device_name(ev));
        printf("  %-10s %10.1f GB/s  (bytes read + written; best stream: "
               "%s)\n",
               "bandwidth", bw / 1e9, best ? best : "?");
        for (size_t i = 0; cli.all && i < 4; i++)
            printf("    %-8s %10.1f GB/s\n", streams[i], stream[i] / 1e9);
        printf("  %-10s %10.2f us    (an empty kernel, start to end)\n",
               "latency", kevo_evaluator_latency(ev) * 1e6);
        for (size_t i = 0; i < nkinds; i++) {
            double p = kevo_evaluator_peak(ev, kinds[i]);
            printf("  %-10s %10.1f TFLOP/s  (balance %.1f flop/byte)\n",
                   kevo_peak_name(kinds[i]), p / 1e12, bw > 0 ? p / bw : 0.0);
            for (size_t f = 0; is_tensor(kinds[i]) && f < 2; f++) {
                double x = tensor_figure(ev, kinds[i], families[f]);
                if (x > 0)
                    printf("    %-8s %10.1f TFLOP/s\n", family_names[f],
                           x / 1e12);
                else
                    printf("    %-8s %10s          (not on this device)\n",
                           family_names[f], "-");
            }
        }
    }
    status = EXIT_OK;
done:
    kevo_evaluator_free(ev);
    free(cli.sets);
    return status;
}

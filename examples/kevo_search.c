/*
 * kevo_search.c: `kevo search`, which runs the evolutionary search for a
 * task on the GPU into a run directory, shows its progress, and prints the
 * champion; `kevo search --resume DIR` continues a run that was stopped.
 * Its plan, DIR/search.json, is kevo_search_plan.c's; what it shows on the
 * terminal, kevo_search_view.c's.
 */
/* Uses the experimental API (kevo-api(7)): the search's operator host, for the
 * operators' log. */
#define KEVO_EXPERIMENTAL
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kevo_cli.h"
#include "kevo_progress.h"
#include "kevo_search_plan.h"
#include "kevo_search_ranks.h"
#include "kevo_search_view.h"

/* What parse_command_line() returns after printing the help. */
#define PARSED_HELP (-1)

static void search_usage(FILE *out)
{
    fprintf(
        out,
        "usage: %s search [OPTIONS] TASK.json\n"
        "       %s search --resume DIR [OPTIONS]\n"
        "\n"
        "Searches for a fast, correct kernel for the task on the GPU: a\n"
        "MAP-Elites archive of kernel variants, mutation operators that\n"
        "propose children, every child compiled, checked and timed, and the\n"
        "best elites gated on the held-out shapes. The run directory gets\n"
        "the log, the checkpoint, best.cu, best.dispatch.json, summary.json\n"
        "and report.html.\n"
        "\n"
        "  -o, --out DIR          the run directory (default:\n"
        "                         runs/TASK-YYYYmmdd-HHMMSS)\n"
        "  --resume DIR           continue the run in DIR from its checkpoint\n"
        "                         (budgets may be given again: --evals N is\n"
        "                         the total over the whole run)\n"
        "  --evals N              evaluations of children (default %d)\n"
        "  --time SECONDS         wall time of this process (90, 30m, 2h)\n"
        "  --seed N               the run seed (default 1)\n"
        "  --target F             stop once the best fitness reaches F\n"
        "  --stagnation N         stop after N evaluations without a better\n"
        "                         best fitness\n"
        "  --islands K            K archives with ring migration\n"
        "  --device N             the CUDA device (default 0)\n"
        "  --devices all|LIST     evaluate on several GPUs, one worker each:\n"
        "                         every device, or those listed (0,2,3);\n"
        "                         replaces --device\n"
        "  --llm CONFIG.json      add the llm operator with this config\n"
        "                         (kevo-llm(7)); without it, a built-in one\n"
        "                         joins when ANTHROPIC_API_KEY or\n"
        "                         OPENAI_API_KEY is set\n"
        "  --no-llm               no built-in llm operator\n"
        "  --operator PLUGIN[=CONFIG.json][@WEIGHT]\n"
        "                         add an operator plugin (repeatable)\n"
        "  --no-params            leave out the default params operator\n"
        "  --prompts DIR          the seed prompts of the llm operator\n"
        "  --set NAME=VALUE       a search or evaluator option by name\n"
        "                         (repeatable)\n"
        "  --no-tune              no per-shape tuning of the champion\n"
        "  --quiet                no progress output\n"
        "  --json                 print summary.json on stdout, nothing else\n"
        "  --mpi                  spread the search over MPI's ranks (found\n"
        "                         without it under mpirun or srun): rank 0\n"
        "                         searches, the others evaluate, each on the\n"
        "                         GPU of its local rank unless --device or\n"
        "                         --devices says\n"
        "\n"
        "Exit status: 0 a champion passed the held-out gate, 1 invalid\n"
        "input or no elite passed the gate, 2 bad command line, 3 no usable\n"
        "GPU or the evaluator failed, 4 stopped to wait for replies (the\n"
        "llm operator's files transport: continue with --resume), 130\n"
        "(SIGINT) or 143 (SIGTERM) interrupted. See kevo-search(1).\n",
        program, program, SEARCH_DEFAULT_EVALS);
}

/* ---- the command line --------------------------------------------------- */

static bool push_setting(search_cli *cli, bool search, int opt, int64_t value,
                         const char *text)
{
    setting *more = realloc(cli->sets, (cli->nsets + 1) * sizeof *more);
    if (!more) {
        fprintf(stderr, "%s: out of memory\n", program);
        return false;
    }
    cli->sets = more;
    cli->sets[cli->nsets++] = (setting){search, opt, value, text};
    return true;
}

static bool push_string(char ***v, size_t *n, char *s)
{
    char **more = realloc(*v, (*n + 1) * sizeof **v);
    if (!more) {
        fprintf(stderr, "%s: out of memory\n", program);
        return false;
    }
    *v = more;
    (*v)[(*n)++] = s;
    return true;
}

/* "90", "1.5", "30s", "30m", "2h" as whole seconds, rounded up. */
static bool parse_seconds(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v <= 0)
        return false;
    if (*end == 'm')
        v *= 60, end++;
    else if (*end == 'h')
        v *= 3600, end++;
    else if (*end == 's')
        end++;
    if (*end || v > 1e15)
        return false;
    *out = (int64_t)ceil(v);
    return true;
}

/* Prints the names of every search and evaluator option. */
static void list_options(FILE *out)
{
    fprintf(out, "search options:");
    for (int i = 0; kevo_search_option_name((kevo_search_option)i); i++)
        fprintf(out, " %s", kevo_search_option_name((kevo_search_option)i));
    fprintf(out, "\nevaluator options:");
    for (int i = 0; kevo_eval_option_name((kevo_eval_option)i); i++)
        fprintf(out, " %s", kevo_eval_option_name((kevo_eval_option)i));
    fprintf(out, "\n");
}

/* Checks value against the option's bounds; prints why not, in the
 * library's words. */
static bool in_bounds(bool search, int opt, int64_t value, const char *what)
{
    int64_t lo = 0, hi = 0;
    kevo_status rc =
        search
            ? kevo_search_option_bounds((kevo_search_option)opt, &lo, &hi, NULL)
            : kevo_eval_option_bounds((kevo_eval_option)opt, &lo, &hi, NULL);
    if (rc == KEVO_OK && (value < lo || value > hi)) {
        fprintf(stderr,
                "%s: %s: option %s: %lld is %s allowed value %lld (allowed "
                "%lld..%lld)\n",
                program, what,
                search ? kevo_search_option_name((kevo_search_option)opt)
                       : kevo_eval_option_name((kevo_eval_option)opt),
                (long long)value,
                value < lo ? "below the lowest" : "above the highest",
                (long long)(value < lo ? lo : hi), (long long)lo,
                (long long)hi);
        return false;
    }
    return true;
}

/* --set NAME=VALUE: a search option, else an evaluator option.
 * *changeable becomes false for a search option that a resumed run cannot
 * change. */
static bool parse_set(search_cli *cli, const char *arg, bool *changeable)
{
    char name[64];
    const char *eq = strchr(arg, '=');
    int64_t value;
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof name) {
        fprintf(stderr, "%s: --set %s: expected NAME=VALUE\n", program, arg);
        return false;
    }
    memcpy(name, arg, (size_t)(eq - arg));
    name[eq - arg] = '\0';
    kevo_search_option sopt;
    kevo_eval_option eopt;
    bool search;
    int opt;
    if (kevo_search_option_from_name(name, &sopt) == KEVO_OK) {
        search = true;
        opt = (int)sopt;
    } else if (kevo_eval_option_from_name(name, &eopt) == KEVO_OK) {
        search = false;
        opt = (int)eopt;
    } else {
        fprintf(stderr, "%s: --set %s: no option '%s'\n", program, arg, name);
        list_options(stderr);
        return false;
    }
    if (!cli_parse_int(eq + 1, &value)) {
        fprintf(stderr, "%s: --set %s: '%s' is not an integer\n", program, arg,
                eq + 1);
        return false;
    }
    char what[128];
    snprintf(what, sizeof what, "--set %s", name);
    if (!in_bounds(search, opt, value, what))
        return false;
    /* A resumed run may change a budget, a stop condition, the checkpoint
     * interval, or what happens at the end: the options a search may
     * change once started. */
    if (search)
        *changeable = kevo_search_option_live((kevo_search_option)opt);
    if (!search && opt == KEVO_EVAL_DEVICE) {
        cli->have_device = true;
        cli->device = value;
        return true;
    }
    return push_setting(cli, search, opt, value, arg);
}

enum {
    OPT_RESUME = 256,
    OPT_EVALS,
    OPT_TIME,
    OPT_SEED,
    OPT_TARGET,
    OPT_STAGNATION,
    OPT_ISLANDS,
    OPT_DEVICE,
    OPT_DEVICES,
    OPT_LLM,
    OPT_NO_LLM,
    OPT_OPERATOR,
    OPT_NO_PARAMS,
    OPT_PROMPTS,
    OPT_SET,
    OPT_NO_TUNE,
    OPT_QUIET,
    OPT_JSON,
    OPT_MPI
};

/* --evals, --time, --seed, --target, --stagnation and --islands: a search
 * option each. Prints why a value is bad. */
static bool parse_search_flag(search_cli *cli, int c, const char *name,
                              const char *arg)
{
    kevo_search_option opt;
    int64_t v = 0;
    double r;
    bool ok;
    char what[64];
    switch (c) {
    case OPT_EVALS:
        opt = KEVO_SEARCH_MAX_EVALS;
        ok = cli_parse_int(arg, &v);
        break;
    case OPT_TIME:
        opt = KEVO_SEARCH_MAX_SECONDS;
        ok = parse_seconds(arg, &v);
        break;
    case OPT_SEED:
        opt = KEVO_SEARCH_SEED;
        ok = cli_parse_int(arg, &v);
        break;
    case OPT_TARGET:
        opt = KEVO_SEARCH_TARGET_PPM;
        ok = cli_parse_real(arg, &r) && r > 0 && r <= 1e6;
        if (ok)
            v = llround(r * 1e6);
        break;
    case OPT_STAGNATION:
        opt = KEVO_SEARCH_STAGNATION;
        ok = cli_parse_int(arg, &v);
        break;
    default:
        opt = KEVO_SEARCH_ISLANDS;
        ok = cli_parse_int(arg, &v);
        break;
    }
    if (!ok) {
        fprintf(stderr, "%s: --%s: bad value '%s'\n", program, name, arg);
        return false;
    }
    snprintf(what, sizeof what, "--%s", name);
    return in_bounds(true, opt, v, what) &&
           push_setting(cli, true, opt, v, arg);
}

/* --devices: "all" or a list of device numbers, checked as the evaluator
 * checks its devices option. Prints why not. */
static bool check_devices(const char *arg)
{
    kevo_evaluator *ev = NULL;
    kevo_error err;
    kevo_error_init(&err);
    bool ok =
        kevo_evaluator_new(&ev, &err) == KEVO_OK &&
        kevo_evaluator_set_string(ev, KEVO_EVAL_DEVICES, arg, &err) == KEVO_OK;
    if (!ok)
        fprintf(stderr, "%s: --devices: %s\n", program, err.text);
    kevo_evaluator_free(ev);
    return ok;
}

/* Parses the command line into cli; returns EXIT_OK to go on, or the exit
 * status (after printing the usage or the error). */
static int parse_command_line(int argc, char **argv, search_cli *cli)
{
    static const struct option options[] = {
        {"out", required_argument, NULL, 'o'},
        {"resume", required_argument, NULL, OPT_RESUME},
        {"evals", required_argument, NULL, OPT_EVALS},
        {"time", required_argument, NULL, OPT_TIME},
        {"seed", required_argument, NULL, OPT_SEED},
        {"target", required_argument, NULL, OPT_TARGET},
        {"stagnation", required_argument, NULL, OPT_STAGNATION},
        {"islands", required_argument, NULL, OPT_ISLANDS},
        {"device", required_argument, NULL, OPT_DEVICE},
        {"devices", required_argument, NULL, OPT_DEVICES},
        {"llm", required_argument, NULL, OPT_LLM},
        {"no-llm", no_argument, NULL, OPT_NO_LLM},
        {"operator", required_argument, NULL, OPT_OPERATOR},
        {"no-params", no_argument, NULL, OPT_NO_PARAMS},
        {"prompts", required_argument, NULL, OPT_PROMPTS},
        {"set", required_argument, NULL, OPT_SET},
        {"no-tune", no_argument, NULL, OPT_NO_TUNE},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"json", no_argument, NULL, OPT_JSON},
        {"mpi", no_argument, NULL, OPT_MPI},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c, idx = -1;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", options, &idx)) != -1) {
        const char *fixed = NULL;
        switch (c) {
        case 'o':
            cli->out = optarg;
            fixed = "--out";
            break;
        case OPT_RESUME: cli->resume = optarg; break;
        case OPT_EVALS:
        case OPT_TIME:
        case OPT_SEED:
        case OPT_TARGET:
        case OPT_STAGNATION:
        case OPT_ISLANDS:
            if (!parse_search_flag(cli, c, options[idx].name, optarg))
                return EXIT_USAGE;
            if (c == OPT_SEED || c == OPT_ISLANDS)
                fixed = c == OPT_SEED ? "--seed" : "--islands";
            break;
        case OPT_DEVICE:
            if (!cli_parse_int(optarg, &cli->device)) {
                fprintf(stderr, "%s: --device: bad value '%s'\n", program,
                        optarg);
                return EXIT_USAGE;
            }
            if (!in_bounds(false, KEVO_EVAL_DEVICE, cli->device, "--device"))
                return EXIT_USAGE;
            cli->have_device = true;
            break;
        case OPT_DEVICES:
            if (!check_devices(optarg))
                return EXIT_USAGE;
            cli->devices = optarg;
            break;
        case OPT_LLM:
            cli->llm = optarg;
            fixed = "--llm";
            break;
        case OPT_NO_LLM:
            cli->no_llm = true;
            fixed = "--no-llm";
            break;
        case OPT_OPERATOR:
            if (!push_string(&cli->operators, &cli->noperators, optarg))
                return EXIT_INVALID;
            fixed = "--operator";
            break;
        case OPT_NO_PARAMS:
            cli->no_params = true;
            fixed = "--no-params";
            break;
        case OPT_PROMPTS:
            cli->prompts = optarg;
            fixed = "--prompts";
            break;
        case OPT_SET: {
            bool changeable = true;
            if (!parse_set(cli, optarg, &changeable))
                return EXIT_USAGE;
            if (!changeable)
                fixed = optarg;
            break;
        }
        case OPT_NO_TUNE:
            cli->no_tune = true;
            if (!push_setting(cli, true, KEVO_SEARCH_TUNE, 0, "--no-tune"))
                return EXIT_INVALID;
            break;
        case OPT_QUIET: cli->quiet = true; break;
        case OPT_JSON: cli->json = true; break;
        case OPT_MPI: cli->mpi = true; break;
        case 'h': search_usage(stdout); return PARSED_HELP;
        default: search_usage(stderr); return EXIT_USAGE;
        }
        if (fixed && !cli->fixed_given) {
            cli->fixed_given = true;
            cli->fixed_name = fixed;
        }
    }
    if (cli->resume) {
        if (optind != argc) {
            fprintf(stderr,
                    "%s: search --resume DIR takes no task: the run's own "
                    "DIR/task.json is used\n",
                    program);
            return EXIT_USAGE;
        }
        if (cli->fixed_given) {
            fprintf(stderr,
                    "%s: search --resume: %s cannot change on a resumed run "
                    "(these can: --device, --devices, --no-tune, the "
                    "evaluator's options "
                    "and",
                    program, cli->fixed_name);
            for (int i = 0; kevo_search_option_name((kevo_search_option)i);
                 i++) {
                if (kevo_search_option_live((kevo_search_option)i))
                    fprintf(stderr, " %s",
                            kevo_search_option_name((kevo_search_option)i));
            }
            fprintf(stderr, ")\n");
            return EXIT_USAGE;
        }
    } else {
        if (argc - optind != 1) {
            search_usage(stderr);
            return EXIT_USAGE;
        }
        cli->task_path = argv[optind];
    }
    return EXIT_OK;
}

/* ---- files -------------------------------------------------------------- */

/* mkdir -p */
static bool make_dirs(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return false;
    }
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return false;
        *p = c;
        if (c == '\0')
            return true;
    }
}

static bool file_exists(const char *dir, const char *name)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* The command line as one string a shell would read back, in a new
 * string. */
static char *command_text(int argc, char **argv)
{
    size_t cap = strlen(program) + 1;
    for (int i = 0; i < argc; i++)
        cap += 4 * strlen(argv[i]) + 3;
    char *s = malloc(cap), *p = s;
    if (!s)
        return NULL;
    p += sprintf(p, "%s", program);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool plain = a[0] != '\0';
        for (const char *q = a; *q; q++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                        "0123456789_./=@:+,-%",
                        *q))
                plain = false;
        *p++ = ' ';
        if (plain) {
            p += sprintf(p, "%s", a);
            continue;
        }
        *p++ = '\'';
        for (const char *q = a; *q; q++) {
            if (*q == '\'')
                p += sprintf(p, "'\\''");
            else
                *p++ = *q;
        }
        *p++ = '\'';
        *p = '\0';
    }
    return s;
}

/* ---- signals ------------------------------------------------------------ */

static kevo_search *volatile signalled_search;
static volatile sig_atomic_t caught_signal;

static void on_signal(int sig)
{
    caught_signal = sig;
    if (signalled_search)
        kevo_search_interrupt(signalled_search);
}

/* SIGINT and SIGTERM interrupt the search once; the handler then gives way
 * to the default action, so a second signal kills. */
static void catch_signals(kevo_search *search)
{
    signalled_search = search;
    cli_on_signals(on_signal, SA_RESETHAND | SA_RESTART);
}

static void release_signals(void)
{
    cli_on_signals(SIG_DFL, 0);
    signalled_search = NULL;
}

/* ---- kevo search -------------------------------------------------------- */

/* Where a new run goes: -o, or runs/TASK-YYYYmmdd-HHMMSS. */
static void run_dir_name(const search_cli *cli, const kevo_task *task,
                         char *buf, size_t size)
{
    if (cli->out) {
        snprintf(buf, size, "%s", cli->out);
        return;
    }
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(buf, size, "runs/%s-%s", kevo_task_name(task), stamp);
}

/* Whether dir may take a new run: false after printing why, for one that
 * holds a run already. */
static bool new_dir_free(const char *dir)
{
    static const char *const taken[] = {"search.json", "events.jsonl",
                                        "checkpoint.json"};
    for (size_t i = 0; i < sizeof taken / sizeof *taken; i++)
        if (file_exists(dir, taken[i])) {
            fprintf(stderr,
                    "%s: %s holds a run already (%s): continue it with "
                    "%s search --resume %s, or choose another -o\n",
                    program, dir, taken[i], program, dir);
            return false;
        }
    return true;
}

/* Exit status of a search that stopped with an error. */
static int failure_status(kevo_status rc)
{
    return rc == KEVO_ENODEV || rc == KEVO_EWORKER ? EXIT_NODEV : EXIT_INVALID;
}

/* Loads the seed prompts of a new run into the search's pool. */
static bool load_prompts(kevo_search *search, const char *dir, bool say)
{
    kevo_error err;
    kevo_error_init(&err);
    size_t loaded = 0;
    if (kevo_promptpool_load_dir(kevo_search_prompts(search), dir, &loaded,
                                 &err) != KEVO_OK) {
        fprintf(stderr, "%s: prompts: %s\n", program, err.text);
        return false;
    }
    if (say)
        fprintf(stderr, "%s: %zu seed prompts from %s\n", program, loaded, dir);
    return true;
}

/* The command recorded with the run: the command line of a new run; for a
 * resumed one, the first command and this one, in a new string. */
static char *run_command(json_t *plan, const char *command, bool resumed)
{
    const char *first = json_string_value(json_object_get(plan, "command"));
    if (!resumed || !first)
        return strdup(command);
    size_t n = strlen(first) + strlen(command) + 16;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s (resumed: %s)", first, command);
    return s;
}

int cmd_search(int argc, char **argv)
{
    search_cli cli;
    int status;
    kevo_task *task = NULL;
    kevo_search *search = NULL;
    kevo_evaluator *ev = NULL;
    kevo_farm *farm = NULL;
    bool member = false; /* a rank of an MPI job other than 0 */
    json_t *plan = NULL;
    char *command = NULL, *recorded = NULL;
    char dir[PATH_MAX], path[PATH_MAX + 16], worker[PATH_MAX + 64];
    const char *prompts = NULL;
    bool llm = false, champion = false;
    view vw;
    kevo_error err;

    kevo_error_init(&err);
    memset(&cli, 0, sizeof cli);
    memset(&vw, 0, sizeof vw);
    status = parse_command_line(argc, argv, &cli);
    if (status != EXIT_OK) {
        if (status == PARSED_HELP)
            status = EXIT_OK;
        goto done;
    }
    /* Under mpirun, before anything starts processes. */
    if ((status = ranks_open(cli.mpi, &farm)) != EXIT_OK)
        goto done;
    member = kevo_farm_rank(farm) > 0;
    if (member)
        cli.quiet = true;
    static char ranked[64];
    if (farm) {
        /* Every rank's messages say which rank it is. */
        snprintf(ranked, sizeof ranked, "%s[rank %d]", program,
                 kevo_farm_rank(farm));
        program = ranked;
    }
    status = EXIT_INVALID;
    kevo_global_init(KEVO_INIT_GSL_HANDLER_OFF);
    cli_use_build_tree(worker, sizeof worker, &prompts);
    if (cli.prompts)
        prompts = cli.prompts;
    else if (!prompts)
        prompts = kevo_promptpool_seed_dir();
    if (!(command = command_text(argc, argv))) {
        fprintf(stderr, "%s: out of memory\n", program);
        goto done;
    }

    /* The task and the plan: from the command line, or from the run. */
    if (cli.resume) {
        snprintf(dir, sizeof dir, "%s", cli.resume);
        if (!(plan = plan_read(dir)))
            goto done;
        snprintf(path, sizeof path, "%s/task.json", dir);
        if (kevo_task_load(path, &task, &err) != KEVO_OK) {
            fprintf(stderr, "%s: invalid task: %s\n", program, err.text);
            goto done;
        }
    } else {
        if (kevo_task_load(cli.task_path, &task, &err) != KEVO_OK) {
            fprintf(stderr, "%s: invalid task: %s\n", program, err.text);
            goto done;
        }
        if (!(plan = plan_new(&cli, command, prompts, &status)))
            goto done;
        run_dir_name(&cli, task, dir, sizeof dir);
        if (!member && !new_dir_free(dir))
            goto done;
    }
    snprintf(path, sizeof path, "%s/search.json", dir);

    /* The search: operators, options, prompts, the evaluator. */
    if (kevo_search_new(task, &search, &err) != KEVO_OK) {
        fprintf(stderr, "%s: %s\n", program, err.text);
        goto done;
    }
    vw.search = search;
    kevo_operator_host_set_log(kevo_search_host(search), KEVO_LOG_WARN,
                               view_on_log, &vw, &err);
    if ((status = plan_add_operators(search, plan, cli.resume != NULL, &llm)) !=
            EXIT_OK ||
        (status = plan_apply_options(search, plan, &cli, path)) != EXIT_OK)
        goto done;
    status = EXIT_INVALID;
    if (!member && !cli.resume && (llm || cli.prompts) &&
        !load_prompts(search, prompts, !cli.json && !cli.quiet))
        goto done;
    int64_t local;
    if (farm && !cli.have_device && !cli.devices &&
        !json_object_get(plan, "devices") && ranks_local(&local)) {
        /* One GPU a rank on a node unless the command line or the
         * resumed run's devices say otherwise. */
        cli.have_device = true;
        cli.device = local;
    }
    if (!(ev = plan_start_evaluator(plan, &cli, worker, &status)))
        goto done;
    status = EXIT_NODEV;
    if (kevo_search_set_evaluator(search, ev, &err) != KEVO_OK ||
        (farm && kevo_search_set_farm(search, farm, &err) != KEVO_OK)) {
        fprintf(stderr, "%s: %s\n", program, err.text);
        goto done;
    }
    if (member) {
        /* Evaluates what rank 0 sends until it stops. */
        if (kevo_search_run(search, &err) != KEVO_OK) {
            fprintf(stderr, "%s: rank %d: %s\n", program, kevo_farm_rank(farm),
                    err.text);
            goto done;
        }
        /* Rank 0 stopped to wait for replies: every rank says so. */
        kevo_search_stats mst = {.size = sizeof mst};
        status = kevo_search_get_stats(search, &mst) == KEVO_OK &&
                         mst.stop == KEVO_STOP_WAITING
                     ? EXIT_WAITING
                     : EXIT_OK;
        goto done;
    }
    if (farm && !cli.quiet && !cli.json)
        fprintf(stderr,
                "%s: %d MPI ranks: rank 0 searches, ranks 1 to %d "
                "evaluate\n",
                program, kevo_farm_size(farm), kevo_farm_size(farm) - 1);

    /* The run directory: search.json first, then the engine's files. */
    status = EXIT_INVALID;
    if (!cli.resume && !make_dirs(dir)) {
        fprintf(stderr, "%s: %s: %s\n", program, dir, strerror(errno));
        goto done;
    }
    if (!plan_write(dir, plan))
        goto done;
    if (!(recorded = run_command(plan, command, cli.resume != NULL))) {
        fprintf(stderr, "%s: out of memory\n", program);
        goto done;
    }
    bool tty = isatty(STDERR_FILENO);
    vw.live = tty && !cli.quiet && !cli.json;
    vw.plain = !tty && !cli.quiet && !cli.json;
    vw.color = progress_color_wanted(tty, getenv("NO_COLOR"));
    vw.llm = llm;
    vw.last_draw = -1;
    if (kevo_search_set_callback(search, view_on_event, &vw, &err) != KEVO_OK ||
        kevo_search_open_run(search, dir,
                             cli.resume ? KEVO_SEARCH_RUN_RESUME : 0, recorded,
                             &err) != KEVO_OK) {
        fprintf(stderr, "%s: %s\n", program, err.text);
        goto done;
    }
    /* The search itself, until it stops. The handlers are in place before
     * the first line says that the search runs. */
    catch_signals(search);
    view_start(&vw, cli.resume != NULL, task, ev, plan, dir);
    kevo_status rc;
    while ((rc = kevo_search_step(search, 250, &err)) == KEVO_OK)
        view_draw(&vw);
    release_signals();
    view_clear(&vw);
    if (rc != KEVO_DONE) {
        fprintf(stderr, "%s: the search failed: %s\n", program,
                err.text[0] ? err.text : kevo_strerror(rc));
        fprintf(stderr,
                "%s: the last checkpoint stands; continue with: %s search "
                "--resume %s\n",
                program, program, dir);
        status = failure_status(rc);
        goto done;
    }
    /* The report, from what the engine left in the run directory: after a
     * normal end, a stop on a budget and an interrupt alike. */
    kevo_error_init(&err);
    if ((rc = kevo_report_write(dir, &err)) != KEVO_OK) {
        fprintf(stderr, "%s: report: %s\n", program, err.text);
        status = failure_status(rc);
        goto done;
    }
    if (!cli_print_summary(dir, cli.json, &champion)) {
        if (cli.json)
            goto done;
        view_print_stats(search);
        champion = kevo_search_champion(search, NULL) != NULL;
    }
    fflush(stdout);
    kevo_search_stats wst = {.size = sizeof wst};
    if (!caught_signal && kevo_search_get_stats(search, &wst) == KEVO_OK &&
        wst.stop == KEVO_STOP_WAITING) {
        /* The view printed the stop's text: how many wait, and where. */
        fprintf(stderr,
                "%s: waiting for replies; the run is checkpointed: once "
                "they are written, continue it with: %s search --resume %s\n",
                program, program, dir);
        status = EXIT_WAITING;
    } else if (caught_signal) {
        fprintf(stderr,
                "%s: interrupted; the run is checkpointed: continue it "
                "with: %s search --resume %s\n",
                program, program, dir);
        status = 128 + caught_signal;
    } else if (!champion) {
        fprintf(stderr, "%s: no elite passed the held-out gate\n", program);
        status = EXIT_INVALID;
    } else {
        status = EXIT_OK;
    }
done:
    kevo_search_free(search);
    kevo_evaluator_free(ev);
    kevo_farm_free(farm);
    kevo_task_free(task);
    json_decref(plan);
    free(command);
    free(recorded);
    free(cli.sets);
    free(cli.operators);
    return status;
}

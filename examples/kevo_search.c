/*
 * kevo_search.c: `kevo search`, which runs the evolutionary search for a
 * task on the GPU into a run directory, shows its progress, and prints the
 * champion; `kevo search --resume DIR` continues a run that was stopped.
 *
 * Everything needed to resume a run is written to DIR/search.json before
 * the run starts: the task file, the operators with their configurations
 * inlined, every search option, the evaluator's options and the device.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <libgen.h>
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

#include <kevo/search.h>

#include "kevo_cli.h"
#include "kevo_progress.h"

#ifndef KEVO_BUILD_PROMPTS_DIR
#define KEVO_BUILD_PROMPTS_DIR NULL
#endif

#define SEARCH_FORMAT "kevo-search"
#define SEARCH_VERSION 1
#define DEFAULT_EVALS 300

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
        "\n"
        "Exit status: 0 a champion passed the held-out gate, 1 invalid\n"
        "input or no elite passed the gate, 2 bad command line, 3 no usable\n"
        "GPU or the evaluator failed, 130 (SIGINT) or 143 (SIGTERM)\n"
        "interrupted. See kevo-search(1).\n",
        program, program, DEFAULT_EVALS);
}

/* ---- the command line --------------------------------------------------- */

/* An option of the search or of the evaluator with its value. */
typedef struct setting {
    bool search; /* else the evaluator's */
    int opt;
    int64_t value;
    const char *text; /* as given, for messages */
} setting;

typedef struct search_cli {
    const char *task_path, *out, *resume, *llm, *prompts;
    bool no_params, no_llm, no_tune, quiet, json;
    bool fixed_given; /* an option that a resumed run cannot change */
    const char *fixed_name;
    setting *sets; /* the flags and --set, in order */
    size_t nsets;
    bool have_device;
    int64_t device;
    char **operators; /* --operator, as given */
    size_t noperators;
} search_cli;

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

static bool parse_int(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return false;
    *out = v;
    return true;
}

static bool parse_real(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return false;
    *out = v;
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

/* Checks value against the option's bounds; prints why not. */
static bool in_bounds(bool search, int opt, int64_t value, const char *what)
{
    int64_t lo = 0, hi = 0;
    kevo_status rc =
        search
            ? kevo_search_option_bounds((kevo_search_option)opt, &lo, &hi, NULL)
            : kevo_eval_option_bounds((kevo_eval_option)opt, &lo, &hi, NULL);
    if (rc == KEVO_OK && (value < lo || value > hi)) {
        fprintf(stderr, "%s: %s: %lld is outside [%lld, %lld]\n", program, what,
                (long long)value, (long long)lo, (long long)hi);
        return false;
    }
    return true;
}

/* A search option that a resumed run may change: a budget, a stop
 * condition, the checkpoint interval, or what happens at the end (the
 * options a search may change once started). */
static bool changeable_on_resume(kevo_search_option opt)
{
    switch (opt) {
    case KEVO_SEARCH_MAX_EVALS:
    case KEVO_SEARCH_MAX_SECONDS:
    case KEVO_SEARCH_MAX_TOKENS:
    case KEVO_SEARCH_MAX_COST_MICROS:
    case KEVO_SEARCH_TARGET_PPM:
    case KEVO_SEARCH_STAGNATION:
    case KEVO_SEARCH_CHECKPOINT_EVERY:
    case KEVO_SEARCH_GATE_TOP:
    case KEVO_SEARCH_TUNE: return true;
    default: return false;
    }
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
    if (!parse_int(eq + 1, &value)) {
        fprintf(stderr, "%s: --set %s: '%s' is not an integer\n", program, arg,
                eq + 1);
        return false;
    }
    char what[128];
    snprintf(what, sizeof what, "--set %s", name);
    if (!in_bounds(search, opt, value, what))
        return false;
    if (search)
        *changeable = changeable_on_resume((kevo_search_option)opt);
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
    OPT_LLM,
    OPT_NO_LLM,
    OPT_OPERATOR,
    OPT_NO_PARAMS,
    OPT_PROMPTS,
    OPT_SET,
    OPT_NO_TUNE,
    OPT_QUIET,
    OPT_JSON
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
        ok = parse_int(arg, &v);
        break;
    case OPT_TIME:
        opt = KEVO_SEARCH_MAX_SECONDS;
        ok = parse_seconds(arg, &v);
        break;
    case OPT_SEED:
        opt = KEVO_SEARCH_SEED;
        ok = parse_int(arg, &v);
        break;
    case OPT_TARGET:
        opt = KEVO_SEARCH_TARGET_PPM;
        ok = parse_real(arg, &r) && r > 0 && r <= 1e6;
        if (ok)
            v = llround(r * 1e6);
        break;
    case OPT_STAGNATION:
        opt = KEVO_SEARCH_STAGNATION;
        ok = parse_int(arg, &v);
        break;
    default:
        opt = KEVO_SEARCH_ISLANDS;
        ok = parse_int(arg, &v);
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
        {"llm", required_argument, NULL, OPT_LLM},
        {"no-llm", no_argument, NULL, OPT_NO_LLM},
        {"operator", required_argument, NULL, OPT_OPERATOR},
        {"no-params", no_argument, NULL, OPT_NO_PARAMS},
        {"prompts", required_argument, NULL, OPT_PROMPTS},
        {"set", required_argument, NULL, OPT_SET},
        {"no-tune", no_argument, NULL, OPT_NO_TUNE},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"json", no_argument, NULL, OPT_JSON},
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
            if (!parse_int(optarg, &cli->device)) {
                fprintf(stderr, "%s: --device: bad value '%s'\n", program,
                        optarg);
                return EXIT_USAGE;
            }
            if (!in_bounds(false, KEVO_EVAL_DEVICE, cli->device, "--device"))
                return EXIT_USAGE;
            cli->have_device = true;
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
                    "(budgets, stop conditions, checkpoint_every, gate_top, "
                    "--no-tune, --device and evaluator options can)\n",
                    program, cli->fixed_name);
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

/* ---- files and the build tree ------------------------------------------- */

/* The root of the build tree this program runs from (examples/kevo, or
 * examples/.libs/kevo under libtool), in buf: the directory above that
 * holds config.status. NULL for an installed program. */
static const char *build_tree_root(char *buf, size_t size)
{
    char exe[PATH_MAX - 16];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    static const char *const up[] = {"/..", "/../.."};
    for (size_t i = 0; i < sizeof up / sizeof *up; i++) {
        char probe[PATH_MAX + 32];
        snprintf(probe, sizeof probe, "%s%s/config.status", exe, up[i]);
        if (access(probe, F_OK) == 0) {
            char *root = realpath(dirname(probe), NULL);
            if (!root)
                return NULL;
            snprintf(buf, size, "%s", root);
            free(root);
            return buf;
        }
    }
    return NULL;
}

/* Running from a build tree: its worker (unless KEVO_WORKER is set) in
 * worker, its plugins first on the operator search path, and its source
 * tree's seed prompts as the default (unless KEVO_PROMPT_DIR is set). */
static void use_build_tree(char *worker, size_t size, const char **prompts)
{
    char root[PATH_MAX], path[PATH_MAX + 64];
    worker[0] = '\0';
    if (!build_tree_root(root, sizeof root))
        return;
    const char *env = getenv("KEVO_WORKER");
    snprintf(path, sizeof path, "%s/lib/worker/kevo-worker", root);
    if ((!env || !env[0]) && access(path, X_OK) == 0)
        snprintf(worker, size, "%s", path);
    snprintf(path, sizeof path, "%s/operators/.libs/params.so", root);
    if (access(path, R_OK) == 0) {
        const char *old = getenv(KEVO_OPERATOR_PATH_ENV);
        char dirs[2 * PATH_MAX + 128];
        snprintf(dirs, sizeof dirs, "%s/operators/.libs%s%s", root,
                 old && old[0] ? ":" : "", old && old[0] ? old : "");
        setenv(KEVO_OPERATOR_PATH_ENV, dirs, 1);
    }
    env = getenv("KEVO_PROMPT_DIR");
    if ((!env || !env[0]) && KEVO_BUILD_PROMPTS_DIR)
        *prompts = KEVO_BUILD_PROMPTS_DIR;
}

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

/* Writes root to DIR/search.json atomically; prints why not. */
static bool write_plan(const char *dir, json_t *root)
{
    char path[PATH_MAX + 16], tmp[PATH_MAX + 24];
    snprintf(path, sizeof path, "%s/search.json", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    bool ok = f != NULL;
    if (ok)
        ok = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 &&
             fputc('\n', f) != EOF && fflush(f) == 0 && fsync(fileno(f)) == 0;
    if (f && fclose(f) != 0)
        ok = false;
    if (ok && rename(tmp, path) != 0)
        ok = false;
    if (!ok) {
        fprintf(stderr, "%s: %s: %s\n", program, path, strerror(errno));
        unlink(tmp);
    }
    return ok;
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

/* ---- the plan: what search.json holds ----------------------------------
 * {"format": "kevo-search", "version": 1, "task": PATH, "command": TEXT,
 *  "device": N, "operators": [{"plugin": P, "name": N, "weight": W,
 *  "config": {...} or null, "from": TEXT}], "prompts": DIR or null,
 *  "options": {NAME: VALUE, ...}, "evaluator": {NAME: VALUE, ...}} */

/* Sets key in obj to value, taking it; false (after saying so) when out of
 * memory. */
static bool put(json_t *obj, const char *key, json_t *value)
{
    if (value && json_object_set_new(obj, key, value) == 0)
        return true;
    fprintf(stderr, "%s: out of memory\n", program);
    return false;
}

/* A configuration file as a JSON object; NULL after printing why. */
static json_t *load_config(const char *path)
{
    json_error_t jerr;
    json_t *config = json_load_file(path, 0, &jerr);
    if (!config) {
        if (jerr.line > 0)
            fprintf(stderr, "%s: %s:%d:%d: %s\n", program, path, jerr.line,
                    jerr.column, jerr.text);
        else
            fprintf(stderr, "%s: %s: %s\n", program, path, jerr.text);
        return NULL;
    }
    if (!json_is_object(config)) {
        fprintf(stderr, "%s: %s: a configuration must be a JSON object\n",
                program, path);
        json_decref(config);
        return NULL;
    }
    return config;
}

/* The built-in llm configurations, for a key found in the environment. */
static const struct builtin_llm {
    const char *env, *provider, *model, *config;
} builtin_llms[] = {
    {"ANTHROPIC_API_KEY", "Anthropic", "claude-sonnet-4-5",
     "{\"models\": [{\"name\": \"claude-sonnet-4-5\", \"api\": \"anthropic\","
     " \"model\": \"claude-sonnet-4-5\", \"key_env\": \"ANTHROPIC_API_KEY\","
     " \"input_cost_per_mtok\": 3, \"output_cost_per_mtok\": 15}]}"},
    {"OPENAI_API_KEY", "OpenAI", "gpt-4.1",
     "{\"models\": [{\"name\": \"gpt-4.1\", \"api\": \"openai\","
     " \"model\": \"gpt-4.1\", \"key_env\": \"OPENAI_API_KEY\","
     " \"input_cost_per_mtok\": 2, \"output_cost_per_mtok\": 8}]}"},
};

/* Appends an operator to the plan's array. config is taken (may be
 * NULL). */
static bool plan_operator(json_t *ops, const char *plugin, double weight,
                          json_t *config, const char *from)
{
    json_t *op = json_object();
    if (!op) {
        json_decref(config);
        fprintf(stderr, "%s: out of memory\n", program);
        return false;
    }
    /* put() takes the value even when it fails. */
    bool ok = put(op, "plugin", json_string(plugin)) &&
              put(op, "weight", json_real(weight));
    ok = put(op, "config", config ? config : json_null()) && ok;
    ok = ok && put(op, "from", json_string(from));
    if (ok && json_array_append_new(ops, op) != 0) {
        fprintf(stderr, "%s: out of memory\n", program);
        return false;
    }
    if (!ok)
        json_decref(op);
    return ok;
}

/* --operator PLUGIN[=CONFIG.json][@WEIGHT] into the plan. */
static int plan_operator_arg(json_t *ops, const char *arg)
{
    char spec[PATH_MAX * 2];
    double weight = 1;
    if (snprintf(spec, sizeof spec, "%s", arg) >= (int)sizeof spec) {
        fprintf(stderr, "%s: --operator: too long\n", program);
        return EXIT_USAGE;
    }
    char *at = strrchr(spec, '@');
    if (at) {
        double w;
        if (!parse_real(at + 1, &w) || !(w > 0)) {
            fprintf(stderr,
                    "%s: --operator %s: the weight '%s' is not a positive "
                    "number\n",
                    program, arg, at + 1);
            return EXIT_USAGE;
        }
        weight = w;
        *at = '\0';
    }
    char *eq = strchr(spec, '=');
    json_t *config = NULL;
    if (eq) {
        *eq = '\0';
        if (!(config = load_config(eq + 1)))
            return EXIT_INVALID;
    }
    if (!spec[0]) {
        json_decref(config);
        fprintf(stderr, "%s: --operator %s: no plugin named\n", program, arg);
        return EXIT_USAGE;
    }
    return plan_operator(ops, spec, weight, config, arg) ? EXIT_OK
                                                         : EXIT_INVALID;
}

/* The plan of a new run from the command line (the options are added once
 * they are set). NULL after printing why, with *status set. */
static json_t *new_plan(const search_cli *cli, const char *command,
                        const char *prompts, int *status)
{
    char task_path[PATH_MAX];
    json_t *plan = json_object(), *ops = json_array(), *ev = json_object();
    *status = EXIT_INVALID;
    if (!realpath(cli->task_path, task_path))
        snprintf(task_path, sizeof task_path, "%s", cli->task_path);
    if (!plan || !ops || !ev) {
        fprintf(stderr, "%s: out of memory\n", program);
        goto fail;
    }
    if (!put(plan, "format", json_string(SEARCH_FORMAT)) ||
        !put(plan, "version", json_integer(SEARCH_VERSION)) ||
        !put(plan, "task", json_string(task_path)) ||
        !put(plan, "command", json_string(command)) ||
        !put(plan, "device", json_integer(cli->have_device ? cli->device : 0)))
        goto fail;
    if (!cli->no_params && !plan_operator(ops, "params", 1, NULL, "default"))
        goto fail;
    if (cli->llm) {
        json_t *config = load_config(cli->llm);
        if (!config || !plan_operator(ops, "llm", 1, config, cli->llm))
            goto fail;
    }
    for (size_t i = 0; i < cli->noperators; i++) {
        int rc = plan_operator_arg(ops, cli->operators[i]);
        if (rc != EXIT_OK) {
            *status = rc;
            goto fail;
        }
    }
    bool has_llm = cli->llm != NULL;
    for (size_t i = 0; i < json_array_size(ops); i++) {
        const char *p = json_string_value(
            json_object_get(json_array_get(ops, i), "plugin"));
        if (p && strcmp(p, "llm") == 0)
            has_llm = true;
    }
    for (size_t i = 0; !has_llm && !cli->no_llm && i < 2; i++) {
        const struct builtin_llm *b = &builtin_llms[i];
        const char *key = getenv(b->env);
        if (!key || !key[0])
            continue;
        json_error_t jerr;
        json_t *config = json_loads(b->config, 0, &jerr);
        char from[64];
        snprintf(from, sizeof from, "built-in (%s)", b->env);
        if (!config || !plan_operator(ops, "llm", 1, config, from))
            goto fail;
        has_llm = true;
        if (!cli->json)
            fprintf(stderr,
                    "%s: llm operator: the built-in %s configuration (model "
                    "%s, key from %s); --llm CONFIG.json sets another, "
                    "--no-llm none\n",
                    program, b->provider, b->model, b->env);
    }
    if (json_array_size(ops) == 0) {
        fprintf(stderr,
                "%s: no operator: --no-params leaves none; add one with "
                "--operator or --llm\n",
                program);
        *status = EXIT_USAGE;
        goto fail;
    }
    if (!put(plan, "operators", ops))
        goto fail_ops_taken;
    ops = NULL;
    if (!put(plan, "prompts",
             has_llm || cli->prompts ? json_string(prompts) : json_null()))
        goto fail;
    if (!put(plan, "evaluator", ev))
        goto fail_ev_taken;
    return plan;
fail:
    json_decref(ops);
fail_ops_taken:
    json_decref(ev);
fail_ev_taken:
    json_decref(plan);
    return NULL;
}

/* Reports a bad field of search.json. */
static void bad_field(const char *path, const char *field, const char *want)
{
    fprintf(stderr, "%s: %s: %s: %s\n", program, path, field, want);
}

/* Reads and checks DIR/search.json; NULL after printing why. */
static json_t *read_plan(const char *dir)
{
    char path[PATH_MAX + 16], field[128];
    json_error_t jerr;
    snprintf(path, sizeof path, "%s/search.json", dir);
    json_t *plan = json_load_file(path, 0, &jerr);
    if (!plan) {
        if (access(path, F_OK) != 0)
            fprintf(stderr, "%s: %s: %s (not a run directory of kevo search)\n",
                    program, path, strerror(errno));
        else
            fprintf(stderr, "%s: %s:%d:%d: %s\n", program, path, jerr.line,
                    jerr.column, jerr.text);
        return NULL;
    }
    json_t *v, *ops, *op;
    const char *key;
    size_t i;
    if (!json_is_object(plan)) {
        bad_field(path, "$", "expected an object");
        goto fail;
    }
    v = json_object_get(plan, "format");
    if (!json_is_string(v) || strcmp(json_string_value(v), SEARCH_FORMAT)) {
        bad_field(path, "$.format", "expected \"" SEARCH_FORMAT "\"");
        goto fail;
    }
    v = json_object_get(plan, "version");
    if (!json_is_integer(v) || json_integer_value(v) != SEARCH_VERSION) {
        bad_field(path, "$.version", "expected 1");
        goto fail;
    }
    v = json_object_get(plan, "device");
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        bad_field(path, "$.device", "expected a device number");
        goto fail;
    }
    v = json_object_get(plan, "command");
    if (v && !json_is_string(v) && !json_is_null(v)) {
        bad_field(path, "$.command", "expected a string or null");
        goto fail;
    }
    v = json_object_get(plan, "prompts");
    if (v && !json_is_string(v) && !json_is_null(v)) {
        bad_field(path, "$.prompts", "expected a directory or null");
        goto fail;
    }
    ops = json_object_get(plan, "operators");
    if (!json_is_array(ops) || json_array_size(ops) == 0) {
        bad_field(path, "$.operators", "expected an array of operators");
        goto fail;
    }
    json_array_foreach (ops, i, op) {
        json_t *w = json_object_get(op, "weight");
        json_t *c = json_object_get(op, "config");
        const char *what = NULL;
        if (!json_is_object(op))
            what = "";
        else if (!json_is_string(json_object_get(op, "plugin")))
            what = "plugin";
        else if (!json_is_string(json_object_get(op, "name")))
            what = "name";
        else if (!json_is_number(w) || !(json_number_value(w) > 0) ||
                 !isfinite(json_number_value(w)))
            what = "weight";
        else if (c && !json_is_object(c) && !json_is_null(c))
            what = "config";
        if (what) {
            snprintf(field, sizeof field, "$.operators[%zu]%s%s", i,
                     what[0] ? "." : "", what);
            bad_field(path, field,
                      !what[0]                      ? "expected an object"
                      : strcmp(what, "weight") == 0 ? "expected a positive "
                                                      "number"
                      : strcmp(what, "config") == 0 ? "expected an object or "
                                                      "null"
                                                    : "expected a string");
            goto fail;
        }
    }
    v = json_object_get(plan, "options");
    if (!json_is_object(v)) {
        bad_field(path, "$.options", "expected an object");
        goto fail;
    }
    json_t *value;
    json_object_foreach (v, key, value) {
        kevo_search_option opt;
        snprintf(field, sizeof field, "$.options.%s", key);
        if (kevo_search_option_from_name(key, &opt) != KEVO_OK) {
            bad_field(path, field, "no such search option");
            goto fail;
        }
        if (!json_is_integer(value)) {
            bad_field(path, field, "expected an integer");
            goto fail;
        }
    }
    v = json_object_get(plan, "evaluator");
    if (v && !json_is_object(v)) {
        bad_field(path, "$.evaluator", "expected an object");
        goto fail;
    }
    json_object_foreach (v, key, value) {
        kevo_eval_option opt;
        snprintf(field, sizeof field, "$.evaluator.%s", key);
        if (kevo_eval_option_from_name(key, &opt) != KEVO_OK) {
            bad_field(path, field, "no such evaluator option");
            goto fail;
        }
        if (!json_is_integer(value)) {
            bad_field(path, field, "expected an integer");
            goto fail;
        }
    }
    return plan;
fail:
    json_decref(plan);
    return NULL;
}

/* ---- setting the search up ---------------------------------------------- */

/* Sets the search options of the plan (a resumed run), then those of the
 * command line, then writes every option's value back into the plan.
 * Returns EXIT_OK or the exit status after printing why. */
static int apply_options(kevo_search *search, json_t *plan,
                         const search_cli *cli, const char *plan_path)
{
    kevo_error err;
    kevo_error_init(&err);
    json_t *opts = json_object_get(plan, "options"), *value;
    const char *key;
    if (opts) {
        json_object_foreach (opts, key, value) {
            kevo_search_option opt;
            kevo_search_option_from_name(key, &opt);
            if (kevo_search_set_int(search, opt, json_integer_value(value),
                                    &err) != KEVO_OK) {
                fprintf(stderr, "%s: %s: $.options.%s: %s\n", program,
                        plan_path, key, err.text);
                return EXIT_INVALID;
            }
        }
    } else {
        kevo_search_set_int(search, KEVO_SEARCH_MAX_EVALS, DEFAULT_EVALS, &err);
        kevo_search_set_int(search, KEVO_SEARCH_SEED, 1, &err);
    }
    for (size_t i = 0; i < cli->nsets; i++) {
        const setting *s = &cli->sets[i];
        if (s->search && kevo_search_set_int(search, (kevo_search_option)s->opt,
                                             s->value, &err) != KEVO_OK) {
            fprintf(stderr, "%s: %s: %s\n", program, s->text, err.text);
            return EXIT_USAGE;
        }
    }
    json_t *all = json_object();
    if (!all) {
        fprintf(stderr, "%s: out of memory\n", program);
        return EXIT_INVALID;
    }
    for (int i = 0; kevo_search_option_name((kevo_search_option)i); i++) {
        kevo_search_option opt = (kevo_search_option)i;
        if (json_object_set_new(
                all, kevo_search_option_name(opt),
                json_integer(kevo_search_get_int(search, opt))) != 0) {
            json_decref(all);
            fprintf(stderr, "%s: out of memory\n", program);
            return EXIT_INVALID;
        }
    }
    return put(plan, "options", all) ? EXIT_OK : EXIT_INVALID;
}

/* Adds the plan's operators to the search, naming each instance after its
 * plugin (NAME_2, NAME_3 for more of the same plugin) in a new run.
 * *llm is set when one is the llm plugin. Returns EXIT_OK or the status. */
static int add_operators(kevo_search *search, json_t *plan, bool resumed,
                         bool *llm)
{
    kevo_error err;
    kevo_error_init(&err);
    json_t *ops = json_object_get(plan, "operators"), *op;
    size_t i;
    *llm = false;
    json_array_foreach (ops, i, op) {
        const char *plugin = json_string_value(json_object_get(op, "plugin"));
        const char *from = json_string_value(json_object_get(op, "from"));
        const char *registered = NULL;
        double weight = json_number_value(json_object_get(op, "weight"));
        json_t *config = json_object_get(op, "config");
        char name[128], *text = NULL;
        if (kevo_operator_host_load(kevo_search_host(search), plugin,
                                    &registered, &err) != KEVO_OK) {
            fprintf(stderr, "%s: operator %s: %s\n", program, plugin, err.text);
            return EXIT_INVALID;
        }
        if (resumed) {
            snprintf(name, sizeof name, "%s",
                     json_string_value(json_object_get(op, "name")));
        } else {
            size_t same = 0;
            for (size_t j = 0; j < i; j++) {
                const char *other = json_string_value(
                    json_object_get(json_array_get(ops, j), "registered"));
                if (other && strcmp(other, registered) == 0)
                    same++;
            }
            if (same)
                snprintf(name, sizeof name, "%s_%zu", registered, same + 1);
            else
                snprintf(name, sizeof name, "%s", registered);
            if (!put(op, "name", json_string(name)) ||
                !put(op, "registered", json_string(registered)))
                return EXIT_INVALID;
        }
        if (strcmp(registered, "llm") == 0)
            *llm = true;
        if (json_is_object(config) &&
            !(text = json_dumps(config, JSON_COMPACT))) {
            fprintf(stderr, "%s: out of memory\n", program);
            return EXIT_INVALID;
        }
        kevo_status rc = kevo_search_add_operator(search, registered, name,
                                                  text, weight, &err);
        free(text);
        if (rc != KEVO_OK) {
            fprintf(stderr, "%s: operator %s%s%s%s: %s\n", program, name,
                    from ? " (" : "", from ? from : "", from ? ")" : "",
                    err.text);
            return EXIT_INVALID;
        }
    }
    if (!resumed)
        json_array_foreach (ops, i, op)
            json_object_del(op, "registered");
    return EXIT_OK;
}

/* Starts the evaluator with the plan's device and options and the command
 * line's; NULL after printing why, with *status set. */
static kevo_evaluator *start_evaluator(json_t *plan, const search_cli *cli,
                                       const char *worker, int *status)
{
    kevo_error err;
    kevo_error_init(&err);
    kevo_evaluator *ev = NULL;
    json_t *opts = json_object_get(plan, "evaluator"), *value;
    const char *key;
    *status = EXIT_NODEV;
    if (!opts && (!put(plan, "evaluator", json_object()) ||
                  !(opts = json_object_get(plan, "evaluator")))) {
        *status = EXIT_INVALID;
        return NULL;
    }
    if (kevo_evaluator_new(&ev, &err) != KEVO_OK) {
        fprintf(stderr, "%s: %s\n", program, err.text);
        return NULL;
    }
    json_object_foreach (opts, key, value) {
        kevo_eval_option opt;
        kevo_eval_option_from_name(key, &opt);
        if (kevo_evaluator_set_int(ev, opt, json_integer_value(value), &err) !=
            KEVO_OK) {
            fprintf(stderr, "%s: search.json: $.evaluator.%s: %s\n", program,
                    key, err.text);
            *status = EXIT_INVALID;
            goto fail;
        }
    }
    for (size_t i = 0; i < cli->nsets; i++) {
        const setting *s = &cli->sets[i];
        if (s->search)
            continue;
        if (kevo_evaluator_set_int(ev, (kevo_eval_option)s->opt, s->value,
                                   &err) != KEVO_OK) {
            fprintf(stderr, "%s: --set %s: %s\n", program, s->text, err.text);
            *status = EXIT_USAGE;
            goto fail;
        }
        /* Kept for a later resume. */
        if (!put(opts, kevo_eval_option_name((kevo_eval_option)s->opt),
                 json_integer(s->value)))
            goto fail;
    }
    int64_t device = cli->have_device
                         ? cli->device
                         : json_integer_value(json_object_get(plan, "device"));
    if (kevo_evaluator_set_int(ev, KEVO_EVAL_DEVICE, device, &err) != KEVO_OK) {
        fprintf(stderr, "%s: device %lld: %s\n", program, (long long)device,
                err.text);
        *status = EXIT_USAGE;
        goto fail;
    }
    if (worker[0] && kevo_evaluator_set_string(ev, KEVO_EVAL_WORKER_PATH,
                                               worker, &err) != KEVO_OK) {
        fprintf(stderr, "%s: %s\n", program, err.text);
        goto fail;
    }
    kevo_status rc = kevo_evaluator_start(ev, 0, &err);
    if (rc != KEVO_OK) {
        fprintf(stderr, "%s: cannot evaluate on a GPU: %s\n", program,
                err.text[0] ? err.text : kevo_strerror(rc));
        goto fail;
    }
    if (!put(plan, "device", json_integer(device)))
        goto fail;
    return ev;
fail:
    kevo_evaluator_free(ev);
    return NULL;
}

/* ---- progress ----------------------------------------------------------- */

typedef struct view {
    kevo_search *search;
    bool live;  /* the live line on a terminal */
    bool plain; /* plain lines for champions and checkpoints */
    bool color;
    bool llm;
    double last_draw;
    size_t drawn; /* columns of the live line on screen */
} view;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void view_values(const view *vw, progress_values *v)
{
    kevo_search_stats st;
    memset(&st, 0, sizeof st);
    st.size = sizeof st;
    memset(v, 0, sizeof *v);
    if (kevo_search_get_stats(vw->search, &st) != KEVO_OK)
        return;
    int64_t max = kevo_search_get_int(vw->search, KEVO_SEARCH_MAX_EVALS);
    v->evaluations = st.evaluations;
    v->max_evals = max > 0 ? (uint64_t)max : 0;
    v->best = st.best_fitness;
    v->champion = st.champion_fitness;
    v->coverage = st.coverage;
    v->evals_per_second = st.evals_per_second;
    v->tokens = st.input_tokens + st.output_tokens;
    v->llm = vw->llm || v->tokens > 0;
    v->cost = st.cost;
    v->seconds_left = progress_time_left(st.seconds_left, st.evaluations,
                                         v->max_evals, st.evals_per_second);
}

/* Wipes the live line so that other output can be written. */
static void view_clear(view *vw)
{
    if (!vw->live || vw->drawn == 0)
        return;
    fprintf(stderr, "\r%*s\r", (int)vw->drawn, "");
    fflush(stderr);
    vw->drawn = 0;
}

/* Draws the live line, at most PROGRESS_INTERVAL apart (a line wiped in
 * between comes back at the next draw). */
static void view_draw(view *vw)
{
    if (!vw->live || !progress_due(&vw->last_draw, now_seconds()))
        return;
    progress_values v;
    char line[1024];
    view_values(vw, &v);
    int width = progress_terminal_width(STDERR_FILENO) - 1;
    size_t cols = progress_line(&v, width, vw->color, line, sizeof line);
    fprintf(stderr, "\r%s", line);
    if (cols < vw->drawn)
        fprintf(stderr, "%*s", (int)(vw->drawn - cols), "");
    fflush(stderr);
    vw->drawn = cols;
}

static void view_line(view *vw, const char *line)
{
    view_clear(vw);
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
    view_draw(vw);
}

static void on_event(kevo_search *search, const kevo_search_event *event,
                     void *user)
{
    view *vw = user;
    char line[512];
    (void)search;
    if (event->type == KEVO_SEARCH_CHAMPION && (vw->live || vw->plain)) {
        kevo_search_stats st;
        memset(&st, 0, sizeof st);
        st.size = sizeof st;
        kevo_search_get_stats(vw->search, &st);
        const kevo_candidate *c = event->candidate;
        progress_champion_line(event->fitness, c ? kevo_candidate_id(c) : 0,
                               c ? kevo_candidate_operator(c) : NULL,
                               st.evaluations, line, sizeof line);
        view_line(vw, line);
    } else if (event->type == KEVO_SEARCH_CHECKPOINT && vw->plain) {
        progress_values v;
        view_values(vw, &v);
        progress_checkpoint_line(&v, line, sizeof line);
        view_line(vw, line);
    } else {
        view_draw(vw);
    }
}

static void on_log(void *user, kevo_log_level level, const char *op_name,
                   const char *message)
{
    view *vw = user;
    view_clear(vw);
    fprintf(stderr, "%s: %s: %s%s\n", program, op_name,
            level == KEVO_LOG_ERROR ? "error: " : "warning: ", message);
    view_draw(vw);
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
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    signalled_search = search;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static void release_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signalled_search = NULL;
}

/* Without a summary: what the search itself says. */
static void print_stats(kevo_search *search)
{
    kevo_search_stats st;
    memset(&st, 0, sizeof st);
    st.size = sizeof st;
    if (kevo_search_get_stats(search, &st) != KEVO_OK)
        return;
    printf("\nstopped: %s; %llu evaluations (%llu failed)\n",
           kevo_stop_reason_name(st.stop), (unsigned long long)st.evaluations,
           (unsigned long long)st.failures);
    double fitness;
    const kevo_candidate *c = kevo_search_champion(search, &fitness);
    if (c)
        printf("champion: candidate %llu, fitness %.3f\n",
               (unsigned long long)kevo_candidate_id(c), fitness);
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

/* The line that opens a run: the task, the device, the operators, the
 * budget and the run directory. */
static void say_start(const search_cli *cli, const kevo_task *task,
                      kevo_search *search, kevo_evaluator *ev, json_t *plan,
                      const char *dir)
{
    if (cli->json || cli->quiet)
        return;
    json_t *ops = json_object_get(plan, "operators"), *op;
    size_t i;
    fprintf(stderr, "%s: %s %s on %s; operators", program,
            cli->resume ? "resuming" : "searching", kevo_task_name(task),
            kevo_evaluator_device_name(ev));
    json_array_foreach (ops, i, op)
        fprintf(stderr, "%s %s (weight %g)", i ? "," : "",
                json_string_value(json_object_get(op, "name")),
                json_number_value(json_object_get(op, "weight")));
    int64_t evals = kevo_search_get_int(search, KEVO_SEARCH_MAX_EVALS);
    int64_t secs = kevo_search_get_int(search, KEVO_SEARCH_MAX_SECONDS);
    if (evals > 0)
        fprintf(stderr, "; %lld evaluations", (long long)evals);
    if (secs > 0)
        fprintf(stderr, "; %lld s", (long long)secs);
    fprintf(stderr, "; run directory %s\n", dir);
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
    status = EXIT_INVALID;
    kevo_global_init(KEVO_INIT_GSL_HANDLER_OFF);
    use_build_tree(worker, sizeof worker, &prompts);
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
        if (!(plan = read_plan(dir)))
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
        if (!(plan = new_plan(&cli, command, prompts, &status)))
            goto done;
        run_dir_name(&cli, task, dir, sizeof dir);
        if (!new_dir_free(dir))
            goto done;
    }
    snprintf(path, sizeof path, "%s/search.json", dir);

    /* The search: operators, options, prompts, the evaluator. */
    if (kevo_search_new(task, &search, &err) != KEVO_OK) {
        fprintf(stderr, "%s: %s\n", program, err.text);
        goto done;
    }
    vw.search = search;
    kevo_operator_host_set_log(kevo_search_host(search), KEVO_LOG_WARN, on_log,
                               &vw, &err);
    if ((status = add_operators(search, plan, cli.resume != NULL, &llm)) !=
            EXIT_OK ||
        (status = apply_options(search, plan, &cli, path)) != EXIT_OK)
        goto done;
    status = EXIT_INVALID;
    if (!cli.resume && (llm || cli.prompts) &&
        !load_prompts(search, prompts, !cli.json && !cli.quiet))
        goto done;
    if (!(ev = start_evaluator(plan, &cli, worker, &status)))
        goto done;
    status = EXIT_NODEV;
    if (kevo_search_set_evaluator(search, ev, &err) != KEVO_OK) {
        fprintf(stderr, "%s: %s\n", program, err.text);
        goto done;
    }

    /* The run directory: search.json first, then the engine's files. */
    status = EXIT_INVALID;
    if (!cli.resume && !make_dirs(dir)) {
        fprintf(stderr, "%s: %s: %s\n", program, dir, strerror(errno));
        goto done;
    }
    if (!write_plan(dir, plan))
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
    if (kevo_search_set_callback(search, on_event, &vw, &err) != KEVO_OK ||
        kevo_search_open_run(search, dir,
                             cli.resume ? KEVO_SEARCH_RUN_RESUME : 0, recorded,
                             &err) != KEVO_OK) {
        fprintf(stderr, "%s: %s\n", program, err.text);
        goto done;
    }
    /* The search itself, until it stops. The handlers are in place before
     * the first line says that the search runs. */
    catch_signals(search);
    say_start(&cli, task, search, ev, plan, dir);
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
    if (!cli_print_summary(dir, cli.json, &champion)) {
        if (cli.json)
            goto done;
        print_stats(search);
        champion = kevo_search_champion(search, NULL) != NULL;
    }
    fflush(stdout);
    if (caught_signal) {
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
    kevo_task_free(task);
    json_decref(plan);
    free(command);
    free(recorded);
    free(cli.sets);
    free(cli.operators);
    return status;
}

/*
 * kevo_search_plan.c: the plan of a kevo search run, DIR/search.json: made
 * from the command line for a new run, read back and checked on --resume,
 * and set into the search and its evaluator with the command line's
 * overrides merged in.
 */
/* Uses the experimental API (kevo-api(7)): the search's operator host, to load
 * plugins before the search adds them. */
#define KEVO_EXPERIMENTAL
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kevo_cli.h"
#include "kevo_search_plan.h"

#define SEARCH_FORMAT "kevo-search"
#define SEARCH_VERSION 1

/* ---- the plan: made, read and written ----------------------------------- */

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
        if (!cli_parse_real(at + 1, &w) || !(w > 0)) {
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

json_t *plan_new(const search_cli *cli, const char *command,
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
    if (cli->devices && cli->devices[0] &&
        !put(plan, "devices", json_string(cli->devices)))
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

/* Checks that each key of obj, $.options (search) or $.evaluator, names a
 * search or an evaluator option and holds an integer; prints why not. */
static bool check_options(const char *path, json_t *obj, bool search)
{
    char field[128];
    const char *key;
    json_t *value;
    json_object_foreach (obj, key, value) {
        kevo_search_option sopt;
        kevo_eval_option eopt;
        snprintf(field, sizeof field, "$.%s.%s",
                 search ? "options" : "evaluator", key);
        if (search ? kevo_search_option_from_name(key, &sopt) != KEVO_OK
                   : kevo_eval_option_from_name(key, &eopt) != KEVO_OK) {
            bad_field(path, field,
                      search ? "no such search option"
                             : "no such evaluator option");
            return false;
        }
        if (!json_is_integer(value)) {
            bad_field(path, field, "expected an integer");
            return false;
        }
    }
    return true;
}

/* Moves the keys of $.evaluator that name a search option and no evaluator
 * option into $.options: runs written before the gate's slack and floor
 * became search options keep them under $.evaluator, and resume as they
 * were. */
static bool move_search_options(const char *path, json_t *plan)
{
    json_t *ev = json_object_get(plan, "evaluator");
    json_t *opts = json_object_get(plan, "options");
    const char *key;
    json_t *value;
    void *tmp;
    char field[128];
    if (!json_is_object(ev) || !json_is_object(opts))
        return true;
    json_object_foreach_safe(ev, tmp, key, value)
    {
        if (kevo_eval_option_from_name(key, NULL) == KEVO_OK ||
            kevo_search_option_from_name(key, NULL) != KEVO_OK ||
            json_object_get(opts, key))
            continue;
        if (!json_is_integer(value)) {
            snprintf(field, sizeof field, "$.evaluator.%s", key);
            bad_field(path, field, "expected an integer");
            return false;
        }
        if (json_object_set(opts, key, value) == 0)
            json_object_del(ev, key);
    }
    return true;
}

json_t *plan_read(const char *dir)
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
    v = json_object_get(plan, "devices");
    if (v && !json_is_string(v)) {
        bad_field(path, "$.devices",
                  "expected \"all\" or a list of device numbers");
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
    if (!move_search_options(path, plan))
        goto fail;
    v = json_object_get(plan, "options");
    if (!json_is_object(v)) {
        bad_field(path, "$.options", "expected an object");
        goto fail;
    }
    if (!check_options(path, v, true))
        goto fail;
    v = json_object_get(plan, "evaluator");
    if (v && !json_is_object(v)) {
        bad_field(path, "$.evaluator", "expected an object");
        goto fail;
    }
    if (!check_options(path, v, false))
        goto fail;
    return plan;
fail:
    json_decref(plan);
    return NULL;
}

bool plan_write(const char *dir, json_t *plan)
{
    char path[PATH_MAX + 16], tmp[PATH_MAX + 24];
    snprintf(path, sizeof path, "%s/search.json", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    bool ok = f != NULL;
    if (ok)
        ok = json_dumpf(plan, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 &&
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

/* ---- setting the search up ---------------------------------------------- */

int plan_apply_options(kevo_search *search, json_t *plan, const search_cli *cli,
                       const char *plan_path)
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
        kevo_search_set_int(search, KEVO_SEARCH_MAX_EVALS, SEARCH_DEFAULT_EVALS,
                            &err);
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

int plan_add_operators(kevo_search *search, json_t *plan, bool resumed,
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

kevo_evaluator *plan_start_evaluator(json_t *plan, const search_cli *cli,
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
    /* --devices, else the plan's unless --device names one alone. */
    const char *devices =
        cli->devices ? cli->devices
        : cli->have_device
            ? NULL
            : json_string_value(json_object_get(plan, "devices"));
    char *kept = devices && devices[0] ? strdup(devices) : NULL;
    if (devices && devices[0] && !kept) {
        fprintf(stderr, "%s: out of memory\n", program);
        goto fail;
    }
    if (kevo_evaluator_set_string(ev, KEVO_EVAL_DEVICES, kept, &err) !=
        KEVO_OK) {
        fprintf(stderr, "%s: %s: %s\n", program,
                cli->devices ? "--devices" : "search.json: $.devices",
                err.text);
        *status = cli->devices ? EXIT_USAGE : EXIT_INVALID;
        free(kept);
        goto fail;
    }
    if (!cli_start_evaluator(ev, worker)) {
        free(kept);
        goto fail;
    }
    bool ok = put(plan, "device", json_integer(device)) &&
              (kept ? put(plan, "devices", json_string(kept))
                    : (json_object_del(plan, "devices"), true));
    free(kept);
    if (!ok)
        goto fail;
    return ev;
fail:
    kevo_evaluator_free(ev);
    return NULL;
}

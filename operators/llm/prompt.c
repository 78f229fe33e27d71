/*
 * prompt.c: builds the llm operator's prompt from the host's texts.
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "prompt.h"
#include "prompt_failures.h"

/* A log line longer than this is cut. */
#define LOG_LINE_MAX 300
/* A JSON value shown inline is cut to this many bytes. */
#define INLINE_MAX 400

static const char system_text[] =
    "You are an expert CUDA performance engineer. You improve a CUDA "
    "kernel so that it runs faster on the GPU described, while its results "
    "stay correct, within the task's tolerance, for every shape of the "
    "problem: the shapes shown and others of the same kind. The kernel is "
    "compiled with NVRTC (no host code, no include files beyond what NVRTC "
    "provides), checked against a trusted reference on fresh random inputs, "
    "and timed; its score is its efficiency, the time the roofline allows "
    "(the larger of bytes moved over memory bandwidth and flops over peak) "
    "divided by its measured time. Results that do not depend on the "
    "inputs, or that skip outputs, are caught and fail.\n"
    "\n"
    "The kernel's source declares how it is launched in a kevo:launch "
    "comment block (each kernel in order, with its grid, block and dynamic "
    "shared memory as expressions over the problem dimensions, parameters "
    "and device properties) and may declare tunable parameters in a "
    "kevo:param block; parameters reach the code as macros. Keep both "
    "blocks, and keep them true to the code.\n";

static bool starts_with_ci(const char *s, const char *prefix)
{
    return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

/* 2 for a line that says error, 1 for one that says warning, else 0. */
static int log_line_rank(const char *s, size_t n)
{
    int rank = 0;
    for (size_t i = 0; i < n; i++) {
        if (n - i >= 5 && strncasecmp(s + i, "error", 5) == 0)
            return 2;
        if (n - i >= 7 && strncasecmp(s + i, "warning", 7) == 0)
            rank = 1;
    }
    return rank;
}

/* Calls fn on each line of log (without its line ending). */
static void each_line(const char *log, void (*fn)(void *, const char *, size_t),
                      void *ud)
{
    const char *p = log;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        size_t m = n;
        if (m > 0 && p[m - 1] == '\r')
            m--;
        fn(ud, p, m);
        p += eol ? n + 1 : n;
    }
}

typedef struct distill {
    kevo_buf *out;
    size_t errors, warnings;         /* lines of each rank seen */
    size_t error_room, warning_room; /* lines of each rank to keep */
    size_t dropped;
} distill;

static void count_line(void *ud, const char *s, size_t n)
{
    distill *d = ud;
    int rank = log_line_rank(s, n);
    if (rank == 2)
        d->errors++;
    else if (rank == 1)
        d->warnings++;
}

static void keep_line(void *ud, const char *s, size_t n)
{
    distill *d = ud;
    int rank = log_line_rank(s, n);
    size_t *room = rank == 2 ? &d->error_room : &d->warning_room;
    if (rank == 0)
        return;
    if (*room == 0) {
        d->dropped++;
        return;
    }
    (*room)--;
    size_t m = n < LOG_LINE_MAX ? n : LOG_LINE_MAX;
    kevo__buf_append(d->out, s, m);
    kevo__buf_puts(d->out, m < n ? " ...\n" : "\n");
}

char *kevo__llm_distill_log(const char *log, size_t max_lines)
{
    kevo_buf b = {0};
    distill d = {.out = &b};
    kevo__buf_puts(&b, "");
    /* Errors first: warnings fill what room the errors leave. */
    each_line(log ? log : "", count_line, &d);
    d.error_room = d.errors < max_lines ? d.errors : max_lines;
    d.warning_room = max_lines - d.error_room;
    each_line(log ? log : "", keep_line, &d);
    if (d.dropped)
        kevo__buf_printf(&b, "(%zu more error and warning lines left out)\n",
                         d.dropped);
    return kevo__buf_take(&b);
}

/* A JSON scalar as text; arrays and objects as compact JSON, cut. */
static void put_value(kevo_buf *b, json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        kevo__buf_append(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        kevo__buf_printf(b, "%lld", (long long)json_integer_value(v));
        break;
    case JSON_REAL: kevo__buf_printf(b, "%.4g", json_real_value(v)); break;
    case JSON_TRUE: kevo__buf_puts(b, "true"); break;
    case JSON_FALSE: kevo__buf_puts(b, "false"); break;
    case JSON_NULL: kevo__buf_puts(b, "null"); break;
    default: {
        char *s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (!s) {
            b->failed = true;
            return;
        }
        size_t n = strlen(s);
        kevo__buf_append(b, s, n < INLINE_MAX ? n : INLINE_MAX);
        if (n > INLINE_MAX)
            kevo__buf_puts(b, "...");
        free(s);
    }
    }
}

static bool is_log_key(const char *key)
{
    return strstr(key, "log") != NULL;
}

static bool is_hidden_key(const char *key)
{
    return starts_with_ci(key, "held_out") || starts_with_ci(key, "heldout");
}

/* Keys shown first in a shape's row, in this order, when present. */
static const char *const shape_keys_first[] = {
    "shape",       "dims",       "verdict",    "ok",    "time_us",
    "time_ms",     "median_us",  "efficiency", "bound", "dram_bytes",
    "model_bytes", "cost_bytes", "error",      "reason"};

static void put_shape(kevo_buf *b, json_t *shape)
{
    bool first = true;
    kevo__buf_puts(b, "- ");
    if (!json_is_object(shape)) {
        put_value(b, shape);
        kevo__buf_puts(b, "\n");
        return;
    }
    for (size_t i = 0; i < sizeof(shape_keys_first) / sizeof(char *); i++) {
        json_t *v = json_object_get(shape, shape_keys_first[i]);
        if (!v)
            continue;
        kevo__buf_printf(b, "%s%s: ", first ? "" : ", ", shape_keys_first[i]);
        put_value(b, v);
        first = false;
    }
    const char *key;
    json_t *v;
    json_object_foreach (shape, key, v) {
        bool shown = false;
        for (size_t i = 0; i < sizeof(shape_keys_first) / sizeof(char *); i++)
            shown = shown || strcmp(key, shape_keys_first[i]) == 0;
        if (shown || is_hidden_key(key) || is_log_key(key))
            continue;
        kevo__buf_printf(b, "%s%s: ", first ? "" : ", ", key);
        put_value(b, v);
        first = false;
    }
    kevo__buf_puts(b, "\n");
}

/* An evaluation summary: scalars as "key: value" lines, shapes a line each,
 * logs distilled. JSON that does not parse is shown as it is. */
static void put_summary(kevo_buf *b, const char *summary, size_t max_log_lines)
{
    json_t *root = json_loads(summary, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        kevo__buf_puts(b, summary);
        kevo__buf_puts(b, "\n");
        return;
    }
    const char *key;
    json_t *v;
    /* Scalars first, then shapes, then logs. */
    json_object_foreach (root, key, v) {
        if (is_hidden_key(key) || is_log_key(key) || strcmp(key, "shapes") == 0)
            continue;
        if (json_is_string(v) && strchr(json_string_value(v), '\n'))
            kevo__buf_printf(b, "%s:\n%s\n", key, json_string_value(v));
        else {
            kevo__buf_printf(b, "%s: ", key);
            put_value(b, v);
            kevo__buf_puts(b, "\n");
        }
    }
    json_t *shapes = json_object_get(root, "shapes");
    if (json_is_array(shapes) && json_array_size(shapes) > 0) {
        kevo__buf_puts(b, "Per shape:\n");
        size_t i;
        json_array_foreach (shapes, i, v)
            put_shape(b, v);
    }
    json_object_foreach (root, key, v) {
        if (!is_log_key(key) || is_hidden_key(key))
            continue;
        if (!json_is_string(v)) {
            kevo__buf_printf(b, "%s: ", key);
            put_value(b, v);
            kevo__buf_puts(b, "\n");
            continue;
        }
        char *d = kevo__llm_distill_log(json_string_value(v), max_log_lines);
        if (!d) {
            b->failed = true;
            break;
        }
        if (*d)
            kevo__buf_printf(b, "%s (errors and warnings only):\n%s", key, d);
        free(d);
    }
    json_decref(root);
}

/* A JSON object as "key: value" lines (text that is not an object is shown
 * as it is). */
static void put_object_lines(kevo_buf *b, const char *json)
{
    json_t *root = json_loads(json, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        kevo__buf_puts(b, json);
        kevo__buf_puts(b, "\n");
        return;
    }
    const char *key;
    json_t *v;
    json_object_foreach (root, key, v) {
        if (is_hidden_key(key))
            continue;
        kevo__buf_printf(b, "%s: ", key);
        put_value(b, v);
        kevo__buf_puts(b, "\n");
    }
    json_decref(root);
}

/* The task's dimensions and training shapes. */
static void put_dims(kevo_buf *b, const char *json)
{
    json_t *root = json_loads(json, 0, NULL);
    json_t *dims = json_object_get(root, "dims");
    json_t *shapes = json_object_get(root, "shapes");
    if (!json_is_array(dims) || !json_is_array(shapes)) {
        json_decref(root);
        put_object_lines(b, json);
        return;
    }
    size_t i;
    json_t *v;
    kevo__buf_puts(b, "Dimensions:");
    json_array_foreach (dims, i, v) {
        kevo__buf_puts(b, i ? ", " : " ");
        put_value(b, v);
    }
    kevo__buf_puts(b, "\nShapes it is measured on (it must be correct for "
                      "other shapes too):\n");
    json_array_foreach (shapes, i, v) {
        kevo__buf_puts(b, "- ");
        if (json_is_object(v)) {
            const char *key;
            json_t *d;
            bool first = true;
            json_object_foreach (v, key, d) {
                kevo__buf_printf(b, "%s%s=", first ? "" : ", ", key);
                put_value(b, d);
                first = false;
            }
        } else {
            put_value(b, v);
        }
        kevo__buf_puts(b, "\n");
    }
    json_decref(root);
}

static void put_source(kevo_buf *b, const char *source)
{
    size_t n = strlen(source);
    kevo__buf_puts(b, "```cuda\n");
    kevo__buf_append(b, source, n);
    if (n == 0 || source[n - 1] != '\n')
        kevo__buf_puts(b, "\n");
    kevo__buf_puts(b, "```\n");
}

static void put_candidate(kevo_buf *b, const llm_prompt_candidate *c,
                          size_t max_log_lines)
{
    if (c->assignment_json && strcmp(c->assignment_json, "{}") != 0)
        kevo__buf_printf(b, "Parameter values: %s\n", c->assignment_json);
    if (c->params_json) {
        json_t *root = json_loads(c->params_json, 0, NULL);
        json_t *params = json_object_get(root, "params");
        if (json_is_array(params) && json_array_size(params) > 0)
            kevo__buf_printf(b, "Parameter space: %s\n", c->params_json);
        json_decref(root);
    }
    put_source(b, c->source ? c->source : "");
    if (c->summary_json) {
        kevo__buf_puts(b, "\nIts evaluation:\n");
        put_summary(b, c->summary_json, max_log_lines);
    }
}

/* A one-line score of an inspiration from its summary: its fitness, when
 * the summary has one. */
static void put_score(kevo_buf *b, const char *summary)
{
    json_t *root = summary ? json_loads(summary, 0, NULL) : NULL;
    json_t *fit = json_object_get(root, "fitness");
    if (json_is_number(fit))
        kevo__buf_printf(b, " (fitness %.4g)", json_number_value(fit));
    json_decref(root);
}

static bool put_sections(kevo_buf *b, const char *json, char *err,
                         size_t errlen)
{
    json_error_t jerr;
    json_t *root = json_loads(json, JSON_DECODE_ANY, &jerr);
    if (!json_is_object(root)) {
        json_decref(root);
        kevo__llm_errf(err, errlen,
                       "the request's prompt is not a JSON object of named "
                       "sections");
        return false;
    }
    if (json_object_size(root) > 0)
        kevo__buf_puts(b, "\n# Guidance\n");
    const char *key;
    json_t *v;
    json_object_foreach (root, key, v) {
        kevo__buf_printf(b, "\n## %c%s\n", toupper((unsigned char)key[0]),
                         key[0] ? key + 1 : "");
        if (json_is_string(v)) {
            kevo__buf_puts(b, json_string_value(v));
            kevo__buf_puts(b, "\n");
        } else {
            put_value(b, v);
            kevo__buf_puts(b, "\n");
        }
    }
    json_decref(root);
    return true;
}

/* The end of building a prompt: the user text (raw, the caller's buffer
 * taken, NULL when an append failed) cleaned to valid UTF-8 in *user, and
 * a copy of sys in *system. False, with err saying so, when out of
 * memory. */
static bool finish_prompt(const char *raw, const char *sys, char **system,
                          char **user, char *err, size_t errlen)
{
    if (!raw || !(*user = kevo__llm_utf8_clean(raw, strlen(raw))) ||
        !(*system = kevo__strdup(sys))) {
        kevo__llm_errf(err, errlen, "out of memory for the prompt");
        return false;
    }
    return true;
}

static const char format_whole[] =
    "Reply with the complete new source in one fenced block that starts "
    "with ```cuda and ends with ```. Keep its kevo:launch comment block "
    "(and its kevo:param block, if it has one), updated to match your "
    "kernels. Put no other code in fences; a few sentences before the block "
    "saying what you changed and why are welcome.\n";

static const char format_edits[] =
    "Reply with one or more edits of the current kernel, each in this "
    "form:\n"
    "\n"
    "<<<<<<< SEARCH\n"
    "lines copied exactly from the current kernel\n"
    "=======\n"
    "the lines that replace them\n"
    ">>>>>>> REPLACE\n"
    "\n"
    "Each SEARCH part must match exactly one place in the current kernel, "
    "so copy enough lines to make it unique; the edits apply in order. "
    "Keep the kevo:launch block (and any kevo:param block) true to the "
    "code, editing it too when you change kernels or their launch. A few "
    "sentences before the edits saying what you changed and why are "
    "welcome.\n";

static const char format_either[] =
    "Reply in one of two forms. For a rewrite, the complete new source in "
    "one fenced block that starts with ```cuda and ends with ```, keeping "
    "its kevo:launch comment block (and its kevo:param block, if it has "
    "one) updated to match your kernels. For a small change, one or more "
    "edits of the current kernel, each in this form:\n"
    "\n"
    "<<<<<<< SEARCH\n"
    "lines copied exactly from the current kernel\n"
    "=======\n"
    "the lines that replace them\n"
    ">>>>>>> REPLACE\n"
    "\n"
    "Each SEARCH part must match exactly one place in the current kernel; "
    "the edits apply in order. Use one form, not both. A few sentences "
    "before the code saying what you changed and why are welcome.\n";

bool kevo__llm_prompt_build(const llm_prompt_input *in, char **system,
                            char **user, char *err, size_t errlen)
{
    kevo_buf b = {0};
    char *raw = NULL;
    bool ok = false;
    *system = *user = NULL;

    kevo__buf_printf(&b, "# Task: %s\n",
                     in->task_name ? in->task_name : "(unnamed)");
    if (in->task_description && *in->task_description)
        kevo__buf_printf(&b, "\n%s\n", in->task_description);
    if (in->task_args && *in->task_args)
        kevo__buf_printf(
            &b, "\n## Kernel arguments\n%s%s", in->task_args,
            in->task_args[strlen(in->task_args) - 1] == '\n' ? "" : "\n");
    if (in->task_dims && *in->task_dims) {
        kevo__buf_puts(&b, "\n## Problem size\n");
        put_dims(&b, in->task_dims);
    }
    if (in->task_cost && *in->task_cost)
        kevo__buf_printf(
            &b, "\n## Cost model (what the roofline counts)\n%s%s",
            in->task_cost,
            in->task_cost[strlen(in->task_cost) - 1] == '\n' ? "" : "\n");
    if (in->device_json && *in->device_json) {
        kevo__buf_puts(&b, "\n## Device\n");
        put_object_lines(&b, in->device_json);
    }

    kevo__buf_puts(&b, "\n# Current kernel\n");
    put_candidate(&b, &in->parent, in->max_log_lines);
    kevo__llm_prompt_failures(&b, in->failures, in->n_failures);

    if (in->second_parent) {
        kevo__buf_puts(&b, "\n# Second parent: combine its strengths "
                           "with the current kernel's\n");
        put_candidate(&b, in->second_parent, in->max_log_lines);
    }

    size_t nins = in->n_inspirations < in->max_inspirations
                      ? in->n_inspirations
                      : in->max_inspirations;
    if (nins > 0) {
        kevo__buf_printf(&b,
                         "\n# Other variants, for comparison (%zu, from "
                         "other regions of the archive)\n",
                         nins);
        for (size_t i = 0; i < nins; i++) {
            const llm_prompt_candidate *c = &in->inspirations[i];
            kevo__buf_printf(&b, "\n## Variant %zu", i + 1);
            put_score(&b, c->summary_json);
            kevo__buf_puts(&b, "\n");
            put_candidate(&b, c, in->max_log_lines);
        }
    }

    if (in->target_cell_json && *in->target_cell_json) {
        kevo__buf_puts(&b, "\n# Aim\nExplore: write a variant whose "
                           "behaviour falls in this cell of the archive "
                           "(a different way of using the GPU), while "
                           "staying fast and correct:\n");
        put_object_lines(&b, in->target_cell_json);
    }

    if (in->sections_json && !put_sections(&b, in->sections_json, err, errlen))
        goto done;

    kevo__buf_puts(&b, "\n# Reply format\n");
    kevo__buf_puts(&b, in->format == LLM_FORMAT_WHOLE   ? format_whole
                       : in->format == LLM_FORMAT_EDITS ? format_edits
                                                        : format_either);

    raw = kevo__buf_take(&b);
    ok = finish_prompt(raw, system_text, system, user, err, errlen);
done:
    kevo__buf_free(&b);
    free(raw);
    if (!ok) {
        free(*system);
        free(*user);
        *system = *user = NULL;
    }
    return ok;
}

/* ---- the revision prompt ------------------------------------------------- */

static const char revision_system_text[] =
    "You improve the guidance that steers a language model while it "
    "optimises CUDA kernels. The guidance is a few named sections "
    "(conventionally strategy: what to try; pitfalls: what to avoid; "
    "analysis: how to read an evaluation), shown to the model, with the "
    "kernel to improve and its evaluation, each time it is asked for a "
    "faster variant. Each variant is compiled with NVRTC, checked against a "
    "trusted reference on several shapes and fresh random inputs, and "
    "timed; its fitness is its roofline efficiency (0 when it fails, about "
    "1 at best). You are shown the guidance, its record (how the variants it "
    "produced fared) and its best and worst variants. Revise it so that it "
    "leads to faster kernels that are more often correct for this task: "
    "keep what worked, correct or drop what led to failures or slow "
    "kernels, and make the advice concrete where the evidence supports it. "
    "The advice must hold for every shape of the problem, not only the "
    "shapes measured.\n";

/* A count of the record, or -1 when it has none. */
static long long record_count(json_t *r, const char *key)
{
    json_t *v = json_object_get(r, key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

static void put_fitness(kevo_buf *b, json_t *r, const char *key)
{
    json_t *v = json_object_get(r, key);
    if (json_is_number(v))
        kevo__buf_printf(b, "%.4g", json_number_value(v));
    else
        kevo__buf_puts(b, "none");
}

static double percent(long long part, long long whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The record as lines; keys it does not know as "key: value". */
static void put_record(kevo_buf *b, const char *json)
{
    static const char *const known[] = {
        "uses",          "children",   "entered", "beat_parent",
        "best_fitness",  "best_child", "mean",    "worst_child",
        "worst_fitness", "revisions"};
    json_t *r = json_loads(json, 0, NULL);
    if (!json_is_object(r)) {
        json_decref(r);
        put_object_lines(b, json);
        return;
    }
    long long uses = record_count(r, "uses");
    long long children = record_count(r, "children");
    long long entered = record_count(r, "entered");
    long long beat = record_count(r, "beat_parent");
    long long revisions = record_count(r, "revisions");
    if (uses >= 0)
        kevo__buf_printf(b, "- chosen for %lld requests\n", uses);
    if (children == 0)
        kevo__buf_puts(b, "- no child credited to it yet\n");
    else if (children > 0)
        kevo__buf_printf(b,
                         "- %lld children credited to it: %lld entered "
                         "the archive (%.0f%%), %lld beat their parent "
                         "(%.0f%%)\n",
                         children, entered < 0 ? 0 : entered,
                         percent(entered, children), beat < 0 ? 0 : beat,
                         percent(beat, children));
    kevo__buf_puts(b, "- best child: fitness ");
    put_fitness(b, r, "best_fitness");
    kevo__buf_puts(b, "\n- worst child: fitness ");
    put_fitness(b, r, "worst_fitness");
    kevo__buf_puts(b, "\n");
    json_t *mean = json_object_get(r, "mean");
    if (json_is_number(mean))
        kevo__buf_printf(b,
                         "- estimated chance that a child succeeds: "
                         "%.2f\n",
                         json_number_value(mean));
    if (revisions > 0)
        kevo__buf_printf(b, "- handed out for revision %lld times\n",
                         revisions);
    const char *key;
    json_t *v;
    json_object_foreach (r, key, v) {
        bool shown = false;
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
            shown = shown || strcmp(key, known[i]) == 0;
        if (shown || is_hidden_key(key))
            continue;
        kevo__buf_printf(b, "- %s: ", key);
        put_value(b, v);
        kevo__buf_puts(b, "\n");
    }
    json_decref(r);
}

/* A child of the prompt, with its fitness from the record (or its
 * summary). */
static void put_child(kevo_buf *b, const char *title, const char *fitness_key,
                      const llm_prompt_candidate *c, json_t *record,
                      size_t max_log_lines)
{
    if (!c->source)
        return;
    kevo__buf_printf(b, "\n# %s", title);
    json_t *f = json_object_get(record, fitness_key);
    if (json_is_number(f))
        kevo__buf_printf(b, " (fitness %.4g)", json_number_value(f));
    else
        put_score(b, c->summary_json);
    kevo__buf_puts(b, "\n");
    put_candidate(b, c, max_log_lines);
}

static const char revision_format[] =
    "Reply with the revised guidance as one JSON object that maps each "
    "section's name to its new text, in one fenced block that starts with "
    "```json and ends with ```. Give every section the guidance has now, "
    "under the same names; add no other section, except analysis, pitfalls "
    "or strategy where it lacks one. Each text is plain prose (no code "
    "fences) for the model that optimises the kernel, at most a few "
    "thousand characters. A sentence or two before the block saying what "
    "you changed and why is welcome.\n";

bool kevo__llm_revision_prompt_build(const llm_revision_input *in,
                                     char **system, char **user, char *err,
                                     size_t errlen)
{
    kevo_buf b = {0};
    char *raw = NULL, *pretty = NULL;
    json_t *sections = NULL, *record = NULL;
    bool ok = false;
    *system = *user = NULL;

    sections =
        in->sections_json ? json_loads(in->sections_json, 0, NULL) : NULL;
    if (!json_is_object(sections) || json_object_size(sections) == 0) {
        kevo__llm_errf(err, errlen,
                       "the prompt to revise is not a JSON object of named "
                       "sections");
        goto done;
    }
    const char *key;
    json_t *v;
    json_object_foreach (sections, key, v) {
        if (!json_is_string(v)) {
            kevo__llm_errf(err, errlen,
                           "the prompt to revise has a section that is not "
                           "text");
            goto done;
        }
    }
    record = in->record_json ? json_loads(in->record_json, 0, NULL) : NULL;

    kevo__buf_printf(&b, "# Task: %s\n",
                     in->task_name ? in->task_name : "(unnamed)");
    if (in->task_description && *in->task_description)
        kevo__buf_printf(&b, "\n%s\n", in->task_description);
    if (in->task_args && *in->task_args)
        kevo__buf_printf(
            &b, "\n## Kernel arguments\n%s%s", in->task_args,
            in->task_args[strlen(in->task_args) - 1] == '\n' ? "" : "\n");

    kevo__buf_puts(&b, "\n# The guidance to revise");
    if (in->prompt_name && *in->prompt_name)
        kevo__buf_printf(&b, ": \"%s\"", in->prompt_name);
    kevo__buf_puts(&b, "\n");
    json_object_foreach (sections, key, v) {
        kevo__buf_printf(&b, "\n## %c%s\n%s\n", toupper((unsigned char)key[0]),
                         key[0] ? key + 1 : "", json_string_value(v));
    }
    pretty = json_dumps(sections, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (!pretty) {
        kevo__llm_errf(err, errlen, "out of memory for the prompt");
        goto done;
    }
    kevo__buf_printf(&b, "\nThe same guidance as JSON:\n```json\n%s\n```\n",
                     pretty);

    if (in->record_json && *in->record_json) {
        kevo__buf_puts(&b, "\n# Its record\n");
        put_record(&b, in->record_json);
    }
    put_child(&b, "Its best child", "best_fitness", &in->best, record,
              in->max_log_lines);
    put_child(&b, "Its worst child", "worst_fitness", &in->worst, record,
              in->max_log_lines);
    if (in->best.source && in->worst.source)
        kevo__buf_puts(&b, "\nCompare the two: what did the best child "
                           "do that the worst did not, and which advice "
                           "led to each?\n");

    kevo__buf_puts(&b, "\n# Reply format\n");
    kevo__buf_puts(&b, revision_format);

    raw = kevo__buf_take(&b);
    ok = finish_prompt(raw, revision_system_text, system, user, err, errlen);
done:
    kevo__buf_free(&b);
    free(raw);
    free(pretty);
    json_decref(sections);
    json_decref(record);
    if (!ok) {
        free(*system);
        free(*user);
        *system = *user = NULL;
    }
    return ok;
}

/*
 * prompt_eval.c: what the prompt says of an evaluation, in plain lines.
 *
 * An evaluation summary is the JSON of kevo_eval_result_to_json() (the
 * search keeps one beside each elite): verdict and reason, fitness,
 * speedups, shapes with their measurements, kernels with their resources
 * and PTX features, descriptors, the compile log. Each becomes a line or
 * two of text; the compile log is reduced to its error and warning lines;
 * what only the machinery needs (timing samples, seconds, the candidate's
 * copy of its source) is left out. A summary of another form (a host of
 * its own, a scoring function) is shown key by key, still without JSON.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "prompt.h"

/* A value shown inline is cut to this many bytes. */
#define INLINE_MAX 400
/* Nested values deeper than this are shown as "...". */
#define DEPTH_MAX 3

/* ---- values and numbers -------------------------------------------------- */

bool kevo__llm_hidden_key(const char *key)
{
    return strncasecmp(key, "held_out", 8) == 0 ||
           strncasecmp(key, "heldout", 7) == 0;
}

static void put_value_at(llm_buf *b, json_t *v, int depth)
{
    if (!v)
        return;
    switch (json_typeof(v)) {
    case JSON_STRING:
        kevo__llm_buf_append(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        kevo__llm_buf_printf(b, "%lld", (long long)json_integer_value(v));
        break;
    case JSON_REAL: kevo__llm_buf_printf(b, "%.4g", json_real_value(v)); break;
    case JSON_TRUE: kevo__llm_buf_puts(b, "yes"); break;
    case JSON_FALSE: kevo__llm_buf_puts(b, "no"); break;
    case JSON_NULL: kevo__llm_buf_puts(b, "none"); break;
    case JSON_ARRAY: {
        if (depth >= DEPTH_MAX) {
            kevo__llm_buf_puts(b, "...");
            break;
        }
        size_t i, start = b->len;
        json_t *e;
        if (depth > 0)
            kevo__llm_buf_puts(b, "(");
        json_array_foreach (v, i, e) {
            if (b->len - start > INLINE_MAX) {
                kevo__llm_buf_puts(b, ", ...");
                break;
            }
            kevo__llm_buf_puts(b, i ? ", " : "");
            put_value_at(b, e, depth + 1);
        }
        if (depth > 0)
            kevo__llm_buf_puts(b, ")");
        break;
    }
    case JSON_OBJECT: {
        if (depth >= DEPTH_MAX) {
            kevo__llm_buf_puts(b, "...");
            break;
        }
        size_t start = b->len;
        bool first = true;
        const char *key;
        json_t *e;
        if (depth > 0)
            kevo__llm_buf_puts(b, "(");
        json_object_foreach (v, key, e) {
            if (kevo__llm_hidden_key(key))
                continue;
            if (b->len - start > INLINE_MAX) {
                kevo__llm_buf_puts(b, ", ...");
                break;
            }
            kevo__llm_buf_printf(b, "%s%s ", first ? "" : ", ", key);
            put_value_at(b, e, depth + 1);
            first = false;
        }
        if (depth > 0)
            kevo__llm_buf_puts(b, ")");
        break;
    }
    }
}

void kevo__llm_put_value(llm_buf *b, json_t *v)
{
    put_value_at(b, v, 0);
}

void kevo__llm_put_pairs(llm_buf *b, json_t *o)
{
    const char *key;
    json_t *v;
    bool first = true;
    json_object_foreach (o, key, v) {
        if (kevo__llm_hidden_key(key))
            continue;
        kevo__llm_buf_printf(b, "%s%s=", first ? "" : ", ", key);
        kevo__llm_put_value(b, v);
        first = false;
    }
}

/* A number of json, or NaN when it is not one. */
double kevo__llm_num(json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : NAN;
}

double kevo__llm_num_at(json_t *o, const char *key)
{
    return kevo__llm_num(json_object_get(o, key));
}

static const char *str_at(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static void put_seconds(llm_buf *b, double s)
{
    if (s < 1e-3)
        kevo__llm_buf_printf(b, "%.1f us", s * 1e6);
    else if (s < 1)
        kevo__llm_buf_printf(b, "%.3f ms", s * 1e3);
    else
        kevo__llm_buf_printf(b, "%.3f s", s);
}

static void put_bytes(llm_buf *b, double x)
{
    if (x >= 1e9)
        kevo__llm_buf_printf(b, "%.2f GB", x / 1e9);
    else if (x >= 1e6)
        kevo__llm_buf_printf(b, "%.1f MB", x / 1e6);
    else if (x >= 1e4)
        kevo__llm_buf_printf(b, "%.1f kB", x / 1e3);
    else
        kevo__llm_buf_printf(b, "%.0f B", x);
}

/* Bytes as CUDA states memory sizes: KiB and MiB. */
void kevo__llm_put_kib(llm_buf *b, double x)
{
    if (x >= 1048576 && fmod(x, 1048576) == 0)
        kevo__llm_buf_printf(b, "%.0f MiB", x / 1048576);
    else if (x >= 1024)
        kevo__llm_buf_printf(b, "%.4g KiB", x / 1024);
    else
        kevo__llm_buf_printf(b, "%.0f B", x);
}

bool kevo__llm_positive(double x)
{
    return isfinite(x) && x > 0;
}

/* ---- an evaluation ------------------------------------------------------- */

/* The fitness of a summary: a number, or the "value" of an object. */
static double fitness_of(json_t *root)
{
    json_t *f = json_object_get(root, "fitness");
    return json_is_object(f) ? kevo__llm_num_at(f, "value") : kevo__llm_num(f);
}

bool kevo__llm_summary_fitness(const char *summary_json, double *fitness)
{
    json_t *root = summary_json ? json_loads(summary_json, 0, NULL) : NULL;
    double f = fitness_of(root);
    json_decref(root);
    *fitness = f;
    return isfinite(f);
}

/* A shape's dims as "m=4096, n=4096", from "dims" (an object) or "shape",
 * in the order of names (an array of dim names; NULL: as they come). */
static void put_dims(llm_buf *b, json_t *shape, json_t *names)
{
    json_t *dims = json_object_get(shape, "dims");
    if (!dims)
        dims = json_object_get(shape, "shape");
    if (!json_is_object(dims)) {
        if (dims)
            kevo__llm_put_value(b, dims);
        else
            kevo__llm_buf_printf(b, "shape %.0f",
                                 kevo__llm_num_at(shape, "index"));
        return;
    }
    json_t *ordered = json_object();
    size_t i;
    json_t *name;
    json_array_foreach (names, i, name) {
        const char *n = json_string_value(name);
        json_t *v = n ? json_object_get(dims, n) : NULL;
        if (ordered && v)
            json_object_set(ordered, n, v);
    }
    if (!ordered || json_object_update_missing(ordered, dims) != 0)
        b->failed = true;
    kevo__llm_put_pairs(b, ordered);
    json_decref(ordered);
}

/* The median time of a shape: "time" as an object (the result's form) or
 * a number of seconds, or time_ms, time_us. */
static double shape_time(json_t *shape)
{
    json_t *t = json_object_get(shape, "time");
    if (json_is_object(t))
        return kevo__llm_num_at(t, "median");
    if (json_is_number(t))
        return kevo__llm_num(t);
    double ms = kevo__llm_num_at(shape, "time_ms"),
           us = kevo__llm_num_at(shape, "time_us");
    return isfinite(ms) ? ms * 1e-3 : isfinite(us) ? us * 1e-6 : NAN;
}

/* Whether root is a kevo evaluation (kevo_eval_result_to_json()): then
 * only the keys this file knows are shown, the others being for the
 * machinery; a summary of another form is shown key by key. */
static bool kevo_form(json_t *root)
{
    return json_object_get(root, "verdict") &&
           json_object_get(root, "ceilings") &&
           json_is_object(json_object_get(root, "fitness"));
}

/* Keys of a shape put_shape shows or leaves out on purpose. */
static const char *const shape_known[] = {
    "dims",           "shape",        "set",         "index",
    "correct",        "ok",           "verdict",     "time",
    "time_ms",        "time_us",      "efficiency",  "bound",
    "gbytes_per_s",   "gflops_per_s", "bytes",       "flops",
    "floor",          "score",        "suspicious",  "max_abs_err",
    "max_rel_err",    "bad_elements", "worst",       "profile",
    "reference_time", "seed_time",    "seed_spread", "reference_spread",
    "paired",         "l2_explained"};

static bool shape_key_known(const char *key)
{
    for (size_t i = 0; i < sizeof shape_known / sizeof *shape_known; i++) {
        if (strcmp(key, shape_known[i]) == 0)
            return true;
    }
    return false;
}

/* The worst element of a wrong shape: "C[10536212] = -1.017, want
 * -1.0171 (3 bad elements)". */
static void put_worst(llm_buf *b, json_t *shape)
{
    json_t *w = json_object_get(shape, "worst");
    double bad = kevo__llm_num_at(shape, "bad_elements");
    if (json_is_object(w) && str_at(w, "arg")) {
        double got = kevo__llm_num_at(w, "got"),
               want = kevo__llm_num_at(w, "want");
        kevo__llm_buf_printf(b, ": %s[%.0f] = ", str_at(w, "arg"),
                             kevo__llm_num_at(w, "index"));
        if (isnan(got))
            kevo__llm_buf_puts(b, "nan (or never written)");
        else
            kevo__llm_buf_printf(b, "%.7g", got);
        if (isfinite(want))
            kevo__llm_buf_printf(b, ", want %.7g", want);
        else
            kevo__llm_buf_puts(b, ", want nan");
    }
    if (kevo__llm_positive(bad))
        kevo__llm_buf_printf(b, " (%.0f bad element%s)", bad,
                             bad == 1 ? "" : "s");
}

static void put_shape(llm_buf *b, json_t *shape, json_t *names, bool strict)
{
    kevo__llm_buf_puts(b, "- ");
    if (!json_is_object(shape)) {
        kevo__llm_put_value(b, shape);
        kevo__llm_buf_puts(b, "\n");
        return;
    }
    put_dims(b, shape, names);
    kevo__llm_buf_puts(b, ":");
    json_t *correct = json_object_get(shape, "correct");
    if (!correct)
        correct = json_object_get(shape, "ok");
    const char *sep = " ";
    if (json_is_false(correct)) {
        kevo__llm_buf_puts(b, " WRONG");
        put_worst(b, shape);
        sep = "; ";
    }
    double t = shape_time(shape);
    if (isfinite(t)) {
        kevo__llm_buf_puts(b, sep);
        put_seconds(b, t);
        sep = ", ";
    }
    double eff = kevo__llm_num_at(shape, "efficiency");
    if (isfinite(eff)) {
        kevo__llm_buf_printf(b, "%sefficiency %.3f", sep, eff);
        sep = ", ";
    }
    const char *bound = str_at(shape, "bound");
    if (bound && isfinite(eff)) {
        kevo__llm_buf_printf(b, "%s%s-bound", sep, bound);
        sep = ", ";
    }
    double gbs = kevo__llm_num_at(shape, "gbytes_per_s"),
           gfs = kevo__llm_num_at(shape, "gflops_per_s");
    if (isfinite(gbs)) {
        kevo__llm_buf_printf(b, "%s%.1f GB/s", sep, gbs);
        sep = ", ";
    }
    if (isfinite(gfs)) {
        kevo__llm_buf_printf(b, "%s%.0f GFLOP/s", sep, gfs);
        sep = ", ";
    }
    json_t *prof = json_object_get(shape, "profile");
    double rd = kevo__llm_num_at(prof, "dram_read_bytes"),
           wr = kevo__llm_num_at(prof, "dram_write_bytes"),
           model = kevo__llm_num_at(shape, "bytes");
    if (isfinite(rd) && isfinite(wr)) {
        kevo__llm_buf_printf(b, "%sDRAM traffic ", sep);
        put_bytes(b, rd + wr);
        if (kevo__llm_positive(model)) {
            kevo__llm_buf_puts(b, " against the cost model's ");
            put_bytes(b, model);
            kevo__llm_buf_printf(b, " (%.2fx)", (rd + wr) / model);
        }
        sep = ", ";
    }
    double occ = kevo__llm_num_at(prof, "achieved_occupancy");
    if (isfinite(occ)) {
        kevo__llm_buf_printf(b, "%sachieved occupancy %.2f", sep, occ);
        sep = ", ";
    }
    if (json_is_true(json_object_get(shape, "l2_explained")))
        kevo__llm_buf_printf(b,
                             "%sabove 1 because the outputs stay in L2 and "
                             "reach DRAM after the timed run",
                             sep);
    const char *key;
    json_t *v;
    json_object_foreach (shape, key, v) {
        if (strict || shape_key_known(key) || kevo__llm_hidden_key(key))
            continue;
        kevo__llm_buf_printf(b, "%s%s ", sep, key);
        kevo__llm_put_value(b, v);
        sep = ", ";
    }
    kevo__llm_buf_puts(b, "\n");
}

/* PTX features, in the order shown, with their names in the text. */
static const struct {
    const char *key, *text;
} features[] = {
    {"vector_loads", "vector loads"},
    {"vector_stores", "vector stores"},
    {"shared_loads", "shared loads"},
    {"shared_stores", "shared stores"},
    {"shared_atomics", "shared atomics"},
    {"shuffles", "shuffles"},
    {"votes", "votes"},
    {"redux", "redux"},
    {"matches", "matches"},
    {"async_copies", "async copies (cp.async)"},
    {"bulk_copies", "bulk copies"},
    {"tma", "TMA"},
    {"ldmatrix", "ldmatrix"},
    {"mma", "mma"},
    {"wgmma", "wgmma"},
};

/* Features every kernel line names, used or not, so that their absence is
 * read too. */
static bool feature_always(const char *key)
{
    return strcmp(key, "vector_loads") == 0 ||
           strcmp(key, "shared_loads") == 0 || strcmp(key, "shuffles") == 0 ||
           strcmp(key, "async_copies") == 0 || strcmp(key, "mma") == 0;
}

/* "; PTX: 64 shared loads, 14 shared stores; no vector loads, shuffles,
 * async copies (cp.async) or mma". */
static void put_features(llm_buf *b, json_t *f)
{
    const size_t nf = sizeof features / sizeof *features;
    size_t used = 0, unused = 0, k = 0;
    for (size_t i = 0; i < nf; i++) {
        double n = kevo__llm_num_at(f, features[i].key);
        used += kevo__llm_positive(n);
        unused += n == 0 && feature_always(features[i].key);
    }
    kevo__llm_buf_puts(b, "; PTX: ");
    for (size_t i = 0; i < nf; i++) {
        double n = kevo__llm_num_at(f, features[i].key);
        if (kevo__llm_positive(n))
            kevo__llm_buf_printf(b, "%s%.0f %s", k++ ? ", " : "", n,
                                 features[i].text);
    }
    if (unused)
        kevo__llm_buf_puts(b, used ? "; no " : "no ");
    k = 0;
    for (size_t i = 0; i < nf; i++) {
        if (kevo__llm_num_at(f, features[i].key) != 0 ||
            !feature_always(features[i].key))
            continue;
        k++;
        kevo__llm_buf_printf(b, "%s%s",
                             k == 1        ? ""
                             : k == unused ? " or "
                                           : ", ",
                             features[i].text);
    }
}

static void put_kernel(llm_buf *b, json_t *k)
{
    const char *name = str_at(k, "kernel");
    kevo__llm_buf_printf(b, "- kernel %s:", name ? name : "?");
    json_t *grid = json_object_get(k, "grid"),
           *block = json_object_get(k, "block");
    if (json_is_array(grid) && json_is_array(block)) {
        kevo__llm_buf_printf(b, " grid %.0fx%.0fx%.0f, block %.0fx%.0fx%.0f;",
                             kevo__llm_num(json_array_get(grid, 0)),
                             kevo__llm_num(json_array_get(grid, 1)),
                             kevo__llm_num(json_array_get(grid, 2)),
                             kevo__llm_num(json_array_get(block, 0)),
                             kevo__llm_num(json_array_get(block, 1)),
                             kevo__llm_num(json_array_get(block, 2)));
    }
    double regs = kevo__llm_num_at(k, "registers"),
           spill = kevo__llm_num_at(k, "spill_stores"),
           st = kevo__llm_num_at(k, "static_smem"),
           dyn = kevo__llm_num_at(k, "dyn_smem"),
           occ = kevo__llm_num_at(k, "occupancy");
    if (isfinite(regs))
        kevo__llm_buf_printf(b, " %.0f registers", regs);
    if (kevo__llm_positive(spill))
        kevo__llm_buf_printf(b, ", %.0f bytes spilled to local memory", spill);
    else if (spill == 0)
        kevo__llm_buf_puts(b, ", no spills");
    if ((isfinite(st) || isfinite(dyn)) && !kevo__llm_positive(st) &&
        !kevo__llm_positive(dyn)) {
        kevo__llm_buf_puts(b, ", no shared memory");
    } else if (isfinite(st) || isfinite(dyn)) {
        kevo__llm_buf_puts(b, ", shared memory ");
        kevo__llm_put_kib(b,
                          (isfinite(st) ? st : 0) + (isfinite(dyn) ? dyn : 0));
        if (kevo__llm_positive(dyn))
            kevo__llm_buf_printf(b, " (%.0f B dynamic)", dyn);
    }
    if (isfinite(occ)) {
        const char *limit = str_at(k, "occupancy_limit");
        kevo__llm_buf_printf(b, ", occupancy %.2f", occ);
        if (limit)
            kevo__llm_buf_printf(b, " (limited by %s)", limit);
    }
    json_t *f = json_object_get(k, "features");
    if (json_is_object(f))
        put_features(b, f);
    kevo__llm_buf_puts(b, "\n");
}

/* Keys of a summary put_evaluation shows or leaves out on purpose. */
static const char *const summary_known[] = {
    "verdict",   "reason",     "failed_shape", "describe_error", "fitness",
    "speedup",   "shapes",     "kernels",      "descriptors",    "compile",
    "candidate", "ceilings",   "seconds",      "ticket",         "task",
    "set",       "suspicious", "ok",           "compile_log",    "log"};

static bool summary_key_known(const char *key)
{
    for (size_t i = 0; i < sizeof summary_known / sizeof *summary_known; i++) {
        if (strcmp(key, summary_known[i]) == 0)
            return true;
    }
    return false;
}

/* The compile log of a summary: compile.log, or a top-level key holding
 * "log" in its name. */
static const char *summary_log(json_t *root)
{
    const char *log = str_at(json_object_get(root, "compile"), "log");
    const char *key;
    json_t *v;
    json_object_foreach (root, key, v) {
        if (!log && json_is_string(v) && strstr(key, "log") &&
            !kevo__llm_hidden_key(key))
            log = json_string_value(v);
    }
    return log;
}

/* The first line: how the evaluation ended and its fitness. */
static void put_outcome(llm_buf *b, json_t *root)
{
    const char *verdict = str_at(root, "verdict");
    const char *reason = str_at(root, "reason");
    double fit = fitness_of(root);
    bool ok = !verdict || strcmp(verdict, "ok") == 0;
    if (!ok) {
        kevo__llm_buf_printf(b, "FAILED (%s)", verdict);
        if (reason)
            kevo__llm_buf_printf(b, ": %s", reason);
    } else if (verdict) {
        kevo__llm_buf_puts(b, "correct on every shape");
    }
    if (isfinite(fit) && (ok || fit > 0)) {
        kevo__llm_buf_printf(b, "%sfitness %.4g", verdict ? "; " : "", fit);
        if (json_is_object(json_object_get(root, "fitness")))
            kevo__llm_buf_puts(b, " (geometric mean of the efficiencies)");
    }
    json_t *sp = json_object_get(root, "speedup");
    double seed = kevo__llm_num_at(sp, "seed");
    if (kevo__llm_positive(seed))
        kevo__llm_buf_printf(b, "; %.2fx the speed of the task's seed", seed);
    json_t *fo = json_object_get(root, "fitness");
    if (json_is_true(json_object_get(fo, "suspicious")) ||
        json_is_true(json_object_get(root, "suspicious")))
        kevo__llm_buf_puts(b, "; an efficiency above 1 is suspicious: the cost "
                              "model may count less traffic than the kernel "
                              "must move");
    kevo__llm_buf_puts(b, "\n");
}

void kevo__llm_put_evaluation(llm_buf *b, const char *summary_json,
                              const char *task_dims, size_t max_log_lines)
{
    json_t *root = json_loads(summary_json, 0, NULL);
    json_t *dims = task_dims ? json_loads(task_dims, 0, NULL) : NULL;
    json_t *names = json_object_get(dims, "dims");
    if (!json_is_object(root)) {
        json_decref(root);
        json_decref(dims);
        kevo__llm_buf_printf(b, "%s\n", summary_json);
        return;
    }
    put_outcome(b, root);
    const char *de = str_at(root, "describe_error");
    if (de)
        kevo__llm_buf_printf(b,
                             "(the compiled code could not be described: "
                             "%s)\n",
                             de);
    json_t *shapes = json_object_get(root, "shapes");
    size_t i;
    json_t *v;
    bool strict = kevo_form(root);
    json_array_foreach (shapes, i, v)
        put_shape(b, v, json_is_array(names) ? names : NULL, strict);
    json_t *kernels = json_object_get(root, "kernels");
    json_array_foreach (kernels, i, v)
        put_kernel(b, v);
    const char *key;
    json_object_foreach (root, key, v) {
        if (strict || summary_key_known(key) || kevo__llm_hidden_key(key) ||
            (json_is_string(v) && strstr(key, "log")))
            continue;
        kevo__llm_buf_printf(b, "- %s: ", key);
        kevo__llm_put_value(b, v);
        kevo__llm_buf_puts(b, "\n");
    }
    const char *log = summary_log(root);
    char *d = log ? kevo__llm_distill_log(log, max_log_lines) : NULL;
    if (log && !d)
        b->failed = true;
    if (d && *d)
        kevo__llm_buf_printf(b, "Compile log, errors and warnings:\n%s", d);
    free(d);
    json_decref(dims);
    json_decref(root);
}

char *kevo__llm_eval_text(const char *summary_json, const char *task_dims,
                          size_t max_log_lines)
{
    llm_buf b = {0};
    kevo__llm_buf_puts(&b, "");
    if (summary_json)
        kevo__llm_put_evaluation(&b, summary_json, task_dims, max_log_lines);
    return kevo__llm_buf_take(&b);
}

/* ---- a variant beside the current kernel --------------------------------- */

void kevo__llm_put_brief(llm_buf *b, const char *summary_json)
{
    json_t *root = json_loads(summary_json, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        kevo__llm_buf_printf(b, "%s\n", summary_json);
        return;
    }
    const char *verdict = str_at(root, "verdict");
    json_t *shapes = json_object_get(root, "shapes");
    if (verdict && strcmp(verdict, "ok") != 0) {
        put_outcome(b, root);
    } else {
        double fit = fitness_of(root);
        const char *sep = "";
        if (verdict) {
            kevo__llm_buf_puts(b, "correct on every shape");
            sep = "; ";
        }
        if (isfinite(fit)) {
            kevo__llm_buf_printf(b, "%sfitness %.4g", sep, fit);
            sep = "; ";
        }
        size_t i;
        json_t *v;
        json_array_foreach (shapes, i, v) {
            double eff = kevo__llm_num_at(v, "efficiency");
            double t = shape_time(v);
            kevo__llm_buf_printf(b, "%s", i ? ", " : sep);
            if (i == 0)
                kevo__llm_buf_puts(b, "per shape, in the order above: ");
            if (isfinite(eff))
                kevo__llm_buf_printf(b, "efficiency %.3f", eff);
            if (isfinite(t)) {
                kevo__llm_buf_puts(b, isfinite(eff) ? " (" : "");
                put_seconds(b, t);
                kevo__llm_buf_puts(b, isfinite(eff) ? ")" : "");
            }
        }
        const char *key;
        json_t *v2;
        json_object_foreach (root, key, v2) {
            if (kevo_form(root) || summary_key_known(key) ||
                kevo__llm_hidden_key(key) || strstr(key, "log"))
                continue;
            kevo__llm_buf_printf(b, "; %s ", key);
            kevo__llm_put_value(b, v2);
        }
        kevo__llm_buf_puts(b, "\n");
    }
    json_decref(root);
}

/* The kernel of a summary that does the main work (the one marked main,
 * else the first), or NULL. */
static json_t *main_kernel(json_t *root)
{
    json_t *kernels = json_object_get(root, "kernels");
    size_t i;
    json_t *k;
    json_array_foreach (kernels, i, k) {
        if (json_is_true(json_object_get(k, "main")))
            return k;
    }
    return json_array_get(kernels, 0);
}

/* A candidate's assignment: assignment_json, or the summary's copy of the
 * candidate's parameters. A new reference, or NULL. */
static json_t *assignment_of(const char *assignment_json, json_t *root)
{
    json_t *a = assignment_json ? json_loads(assignment_json, 0, NULL) : NULL;
    if (json_is_object(a))
        return a;
    json_decref(a);
    a = json_object_get(json_object_get(root, "candidate"), "params");
    return json_is_object(a) ? json_incref(a) : NULL;
}

static const char *const memory_levels[] = {
    "scalar global loads", "vector loads", "shared-memory staging",
    "async copies or tensor cores"};

typedef struct diff {
    llm_buf *b;
    size_t n;
} diff;

static void diff_sep(diff *d)
{
    kevo__llm_buf_puts(d->b,
                       d->n++ ? "; " : "Differs from the current kernel: ");
}

/* "what X (current Y)" when the numbers differ. */
static void diff_num(diff *d, const char *what, double x, double y,
                     int decimals)
{
    if (!isfinite(x) || !isfinite(y) || x == y)
        return;
    diff_sep(d);
    kevo__llm_buf_printf(d->b, "%s %.*f (current %.*f)", what, decimals, x,
                         decimals, y);
}

void kevo__llm_put_differences(llm_buf *b, const char *summary_json,
                               const char *assignment_json,
                               const char *parent_summary_json,
                               const char *parent_assignment_json)
{
    json_t *root = summary_json ? json_loads(summary_json, 0, NULL) : NULL;
    json_t *proot =
        parent_summary_json ? json_loads(parent_summary_json, 0, NULL) : NULL;
    json_t *a = assignment_of(assignment_json, root);
    json_t *pa = assignment_of(parent_assignment_json, proot);
    diff d = {b, 0};
    const char *key;
    json_t *v;
    json_object_foreach (a, key, v) {
        json_t *pv = json_object_get(pa, key);
        if (pv && json_equal(v, pv))
            continue;
        diff_sep(&d);
        kevo__llm_buf_printf(b, "%s=", key);
        kevo__llm_put_value(b, v);
        if (pv) {
            kevo__llm_buf_puts(b, " (current ");
            kevo__llm_put_value(b, pv);
            kevo__llm_buf_puts(b, ")");
        }
    }
    diff_num(&d, "kernels",
             (double)json_array_size(json_object_get(root, "kernels")),
             (double)json_array_size(json_object_get(proot, "kernels")), 0);
    json_t *k = main_kernel(root), *pk = main_kernel(proot);
    diff_num(&d, "threads per block", kevo__llm_num_at(k, "threads"),
             kevo__llm_num_at(pk, "threads"), 0);
    diff_num(&d, "registers", kevo__llm_num_at(k, "registers"),
             kevo__llm_num_at(pk, "registers"), 0);
    diff_num(&d, "bytes spilled", kevo__llm_num_at(k, "spill_stores"),
             kevo__llm_num_at(pk, "spill_stores"), 0);
    diff_num(&d, "shared memory bytes", kevo__llm_num_at(k, "shared_bytes"),
             kevo__llm_num_at(pk, "shared_bytes"), 0);
    diff_num(&d, "occupancy", kevo__llm_num_at(k, "occupancy"),
             kevo__llm_num_at(pk, "occupancy"), 2);
    json_t *f = json_object_get(k, "features"),
           *pf = json_object_get(pk, "features");
    for (size_t i = 0; i < sizeof features / sizeof *features; i++)
        diff_num(&d, features[i].text, kevo__llm_num_at(f, features[i].key),
                 kevo__llm_num_at(pf, features[i].key), 0);
    double m = kevo__llm_num_at(json_object_get(root, "descriptors"), "memory"),
           pm = kevo__llm_num_at(json_object_get(proot, "descriptors"),
                                 "memory");
    if (isfinite(m) && isfinite(pm) && m != pm && m >= 0 && m < 4 && pm >= 0 &&
        pm < 4) {
        diff_sep(&d);
        kevo__llm_buf_printf(b, "memory strategy %s (current %s)",
                             memory_levels[(int)m], memory_levels[(int)pm]);
    }
    if (d.n)
        kevo__llm_buf_puts(b, "\n");
    json_decref(a);
    json_decref(pa);
    json_decref(root);
    json_decref(proot);
}

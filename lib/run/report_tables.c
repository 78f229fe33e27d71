/*
 * report_tables.c: the report's tables: the shapes, the gate, the
 * operators and prompts, and the per-shape tuning of best.dispatch.json.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_private.h"

#define DASH KEVO__REPORT_DASH

static void td(kevo_buf *b, const char *num)
{
    kevo__buf_printf(b, "<td class=\"num\">%s</td>", num);
}

static void td_text(kevo_buf *b, const char *text)
{
    kevo__buf_puts(b, "<td>");
    kevo__report_escape(b, text ? text : DASH, (size_t)-1);
    kevo__buf_puts(b, "</td>");
}

/* The object at path as "k=v, k=v" (numbers or strings), with sep in
 * place of "="; "—" for NULL or an empty object. */
static kevo_status pairs(kevo_buf *b, const kevo_report_in *in,
                         const json_t *obj, kevo_jpath *path, const char *sep)
{
    const char *key;
    json_t *v;
    bool first = true;
    json_object_foreach ((json_t *)obj, key, v) {
        char t[32];
        kevo__report_escape(b, first ? "" : ", ", (size_t)-1);
        kevo__report_escape(b, key, (size_t)-1);
        kevo__buf_puts(b, sep);
        if (json_is_integer(v)) {
            kevo__buf_printf(b, "%lld", (long long)json_integer_value(v));
        } else if (json_is_number(v)) {
            kevo__buf_puts(b, kevo__report_sig(t, json_number_value(v), 6));
        } else if (kevo__report_is_text(v)) {
            kevo__report_escape(b, json_string_value(v), (size_t)-1);
        } else {
            size_t mark = kevo__jpath_key(path, key);
            kevo_status rc =
                kevo__json_fail(in->err, KEVO_EINVALID, in->origin, path,
                                "expected a number or a string, found %s",
                                kevo__json_type_name(v));
            kevo__jpath_pop(path, mark);
            return rc;
        }
        first = false;
    }
    if (first)
        kevo__buf_puts(b, DASH);
    return KEVO_OK;
}

static kevo_status assignment(kevo_buf *b, const kevo_report_in *in,
                              const json_t *obj, kevo_jpath *path)
{
    return pairs(b, in, obj, path, "=");
}

/* An object member of obj in a <td>: an assignment {name: value} as
 * "name=value, ...", or counts by name {"compile_error": 3} as
 * "compile_error 3, ..." (sep " "). */
static kevo_status td_pairs(kevo_buf *b, const kevo_report_in *in,
                            const json_t *obj, const char *key,
                            kevo_jpath *path, const char *sep)
{
    json_t *v;
    kevo_status rc = kevo__report_obj(in, obj, key, path, &v);
    if (rc != KEVO_OK)
        return rc;
    size_t mark = kevo__jpath_key(path, key);
    kevo__buf_puts(b, "<td>");
    rc = pairs(b, in, v, path, sep);
    kevo__buf_puts(b, "</td>");
    kevo__jpath_pop(path, mark);
    return rc;
}

/* A column of a table of JSON objects: the member, its heading and how to
 * print it: 's' text, 'c' count, 'f' 3 significant digits, 'm' 4, 'u'
 * seconds in microseconds, 'p' a fraction as a percentage, 'i' an integer
 * id, 'b' passed/failed, 'y' yes/no, 'a' an assignment {name: value}, 'k'
 * counts by name. */
typedef struct column {
    const char *key, *head;
    char kind;
} column;

/* A table of the objects of arr (at path p). */
static kevo_status table(kevo_buf *b, const kevo_report_in *in,
                         const json_t *arr, kevo_jpath *p, const column *cols,
                         size_t ncols)
{
    kevo_status rc = KEVO_OK;
    size_t i;
    json_t *row;
    kevo__buf_puts(b, "<table>\n<thead><tr>");
    for (size_t c = 0; c < ncols; c++)
        kevo__buf_printf(b, "<th>%s</th>", cols[c].head);
    kevo__buf_puts(b, "</tr></thead>\n<tbody>\n");
    json_array_foreach (arr, i, row) {
        size_t mark = kevo__jpath_index(p, i);
        if ((rc = kevo__json_object(row, in->origin, p, in->err)))
            return rc;
        kevo__buf_puts(b, "<tr>");
        for (size_t c = 0; c < ncols; c++) {
            const char *key = cols[c].key, *str;
            double x;
            int64_t id;
            int flag;
            char t[32];
            switch (cols[c].kind) {
            case 's':
                rc = kevo__report_str(in, row, key, p, &str);
                td_text(b, str);
                break;
            case 'i':
                rc = kevo__report_int(in, row, key, p, &id);
                if (id == INT64_MIN)
                    td(b, DASH);
                else
                    kevo__buf_printf(b, "<td class=\"num\">%lld</td>",
                                     (long long)id);
                break;
            case 'b':
            case 'y':
                rc = kevo__report_bool(in, row, key, p, &flag);
                if (flag < 0)
                    td_text(b, NULL);
                else if (cols[c].kind == 'y')
                    kevo__buf_puts(b, flag ? "<td class=\"pass\">yes</td>"
                                           : "<td class=\"fail\">no</td>");
                else
                    kevo__buf_puts(b, flag ? "<td class=\"pass\">passed</td>"
                                           : "<td class=\"fail\">failed</td>");
                break;
            case 'a': rc = td_pairs(b, in, row, key, p, "="); break;
            case 'k': rc = td_pairs(b, in, row, key, p, " "); break;
            case 'p':
                rc = kevo__report_num(in, row, key, p, &x);
                if (isnan(x))
                    td(b, DASH);
                else
                    kevo__buf_printf(b, "<td class=\"num\">%s%%</td>",
                                     kevo__report_fix(t, 100 * x, 1));
                break;
            default:
                rc = kevo__report_num(in, row, key, p, &x);
                td(b, cols[c].kind == 'c'   ? kevo__report_count(t, x)
                      : cols[c].kind == 'm' ? kevo__report_sig(t, x, 4)
                      : cols[c].kind == 'u' ? kevo__report_sig(t, x * 1e6, 3)
                                            : kevo__report_sig(t, x, 3));
            }
            if (rc != KEVO_OK)
                return rc;
        }
        kevo__buf_puts(b, "</tr>\n");
        kevo__jpath_pop(p, mark);
    }
    kevo__buf_puts(b, "</tbody>\n</table>\n");
    return KEVO_OK;
}

/* A shape's seed, champion or reference: time and efficiency. */
static kevo_status perf(const kevo_report_in *in, const json_t *shape,
                        const char *key, kevo_jpath *p, double *time,
                        double *eff)
{
    json_t *o;
    kevo_status rc = kevo__report_obj(in, shape, key, p, &o);
    size_t mark = kevo__jpath_key(p, key);
    if (rc == KEVO_OK &&
        (rc = kevo__report_num(in, o, "time", p, time)) == KEVO_OK)
        rc = kevo__report_num(in, o, "efficiency", p, eff);
    kevo__jpath_pop(p, mark);
    return rc;
}

static void td_perf(kevo_buf *b, double time, double eff)
{
    char t[32];
    td(b, kevo__report_sig(t, time * 1e6, 3));
    if (eff > 1.05)
        kevo__buf_printf(b,
                         "<td class=\"num sus\" title=\"above 1.05: check "
                         "the cost model or the timing\">%s</td>",
                         kevo__report_sig(t, eff, 3));
    else
        td(b, kevo__report_sig(t, eff, 3));
}

static void td_ratio(kevo_buf *b, double x)
{
    char t[32];
    kevo__buf_printf(b, "<td class=\"num\">%s%s</td>",
                     kevo__report_sig(t, x, 3), isfinite(x) ? "\xc3\x97" : "");
}

kevo_status kevo__report_shapes(kevo_buf *b, const kevo_report_in *in,
                                const json_t *s)
{
    kevo_jpath p;
    kevo__jpath_init(&p);
    json_t *arr, *sh;
    size_t i;
    kevo_status rc = kevo__report_arr(in, s, "shapes", &p, &arr);
    if (rc != KEVO_OK)
        return rc;
    kevo__buf_puts(b, "<section id=\"shapes\">\n<h2>Shapes</h2>\n");
    if (!arr || json_array_size(arr) == 0) {
        kevo__buf_puts(b, "<p class=\"note\">No shapes in the summary.</p>\n"
                          "</section>\n");
        return KEVO_OK;
    }
    kevo__buf_puts(
        b,
        "<table>\n<thead><tr><th rowspan=\"2\">set</th>"
        "<th rowspan=\"2\">#</th><th rowspan=\"2\">dims</th>"
        "<th rowspan=\"2\">bound</th><th rowspan=\"2\">floor (\xc2\xb5s)</th>"
        "<th colspan=\"2\">seed</th><th colspan=\"2\">champion</th>"
        "<th colspan=\"2\">reference</th>"
        "<th colspan=\"2\">champion speedup</th></tr>\n<tr>"
        "<th>\xc2\xb5s</th><th>efficiency</th><th>\xc2\xb5s</th>"
        "<th>efficiency</th><th>\xc2\xb5s</th><th>efficiency</th>"
        "<th>over seed</th><th>over reference</th></tr></thead>\n"
        "<tbody>\n");
    kevo__jpath_key(&p, "shapes");
    const char *devices[2] = {NULL, NULL}; /* training, held-out */
    json_array_foreach (arr, i, sh) {
        size_t mark = kevo__jpath_index(&p, i);
        const char *set, *bound, *device;
        double index, floor_s, st, se, ct, ce, rt, re;
        char t[32];
        if ((rc = kevo__json_object(sh, in->origin, &p, in->err)) ||
            (rc = kevo__report_str(in, sh, "set", &p, &set)) ||
            (rc = kevo__report_str(in, sh, "bound", &p, &bound)) ||
            (rc = kevo__report_num(in, sh, "index", &p, &index)) ||
            (rc = kevo__report_num(in, sh, "floor", &p, &floor_s)) ||
            (rc = perf(in, sh, "seed", &p, &st, &se)) ||
            (rc = perf(in, sh, "champion", &p, &ct, &ce)) ||
            (rc = perf(in, sh, "reference", &p, &rt, &re)) ||
            (rc = kevo__report_str(in, sh, "device", &p, &device)))
            return rc;
        bool held = set && strcmp(set, "held_out") == 0;
        if (device && !devices[held])
            devices[held] = device;
        kevo__buf_puts(b, held ? "<tr class=\"held\">" : "<tr>");
        if (held)
            kevo__buf_puts(b, "<td>held-out<span class=\"tag\">not seen by "
                              "the search</span></td>");
        else
            td_text(b, set);
        td(b, kevo__report_count(t, index));
        if ((rc = td_pairs(b, in, sh, "dims", &p, "=")))
            return rc;
        td_text(b, bound);
        td(b, kevo__report_sig(t, floor_s * 1e6, 3));
        td_perf(b, st, se);
        td_perf(b, ct, ce);
        td_perf(b, rt, re);
        td_ratio(b, st / ct);
        td_ratio(b, rt / ct);
        kevo__buf_puts(b, "</tr>\n");
        kevo__jpath_pop(&p, mark);
    }
    kevo__buf_puts(b, "</tbody>\n</table>\n<p class=\"note\">Times are "
                      "medians in microseconds; efficiency is the roofline "
                      "floor over the time; speedup is the seed's or the "
                      "reference's time over the champion's.</p>\n");
    /* A row's times are of one device; say which. */
    for (int k = 0; k < 2; k++) {
        if (!devices[k])
            continue;
        kevo__buf_printf(b, "<p class=\"note\">%s shapes measured on ",
                         k ? "Held-out" : "Training");
        kevo__report_escape(b, devices[k], (size_t)-1);
        kevo__buf_puts(b, ", the seed's and the reference's times with "
                          "them.</p>\n");
    }
    kevo__buf_puts(b, "</section>\n");
    return KEVO_OK;
}

kevo_status kevo__report_gate(kevo_buf *b, const kevo_report_in *in,
                              const json_t *s)
{
    kevo_jpath p;
    kevo__jpath_init(&p);
    json_t *ch, *gate, *tried;
    kevo_status rc;
    char t[32], u[32], v[32], w[32];
    if ((rc = kevo__report_obj(in, s, "champion", &p, &ch)) ||
        (rc = kevo__report_arr(in, s, "gate_tried", &p, &tried)))
        return rc;
    kevo__buf_puts(b, "<section id=\"gate\">\n<h2>Gate</h2>\n");
    if (!ch) {
        kevo__buf_puts(b, "<p>No champion: no elite has passed the held-out "
                          "gate.</p>\n");
    } else {
        int64_t id, prompt;
        double fit, gen, held, train, retimed, slack;
        const char *op, *reason;
        int passed;
        kevo__jpath_key(&p, "champion");
        if ((rc = kevo__report_int(in, ch, "id", &p, &id)) ||
            (rc = kevo__report_int(in, ch, "prompt", &p, &prompt)) ||
            (rc = kevo__report_num(in, ch, "fitness", &p, &fit)) ||
            (rc = kevo__report_num(in, ch, "generation", &p, &gen)) ||
            (rc = kevo__report_str(in, ch, "operator", &p, &op)) ||
            (rc = kevo__report_obj(in, ch, "gate", &p, &gate)))
            return rc;
        if (id == INT64_MIN)
            snprintf(u, sizeof u, "%s", DASH);
        else
            snprintf(u, sizeof u, "%lld", (long long)id);
        kevo__buf_printf(b,
                         "<p>Champion: candidate <b>%s</b>, training "
                         "fitness <b>%s</b>, operator ",
                         u, kevo__report_sig(t, fit, 3));
        kevo__report_escape(b, op ? op : DASH, (size_t)-1);
        if (prompt != INT64_MIN)
            kevo__buf_printf(b, ", prompt %lld", (long long)prompt);
        kevo__buf_printf(
            b, ", generation %s; parameters: ", kevo__report_count(t, gen));
        json_t *params;
        if ((rc = kevo__report_obj(in, ch, "params", &p, &params)))
            return rc;
        size_t mark = kevo__jpath_key(&p, "params");
        if ((rc = assignment(b, in, params, &p)))
            return rc;
        kevo__jpath_pop(&p, mark);
        kevo__buf_puts(b, ".</p>\n");
        kevo__jpath_key(&p, "gate");
        if (!gate) {
            kevo__buf_puts(b, "<p>The champion was not gated (a search "
                              "without an evaluator: the champion is the "
                              "fittest elite).</p>\n");
        } else if ((rc = kevo__report_bool(in, gate, "passed", &p, &passed)) ||
                   (rc = kevo__report_num(in, gate, "held_out_fitness", &p,
                                          &held)) ||
                   (rc = kevo__report_num(in, gate, "train_fitness", &p,
                                          &train)) ||
                   (rc = kevo__report_num(in, gate, "retimed_fitness", &p,
                                          &retimed)) ||
                   (rc = kevo__report_num(in, gate, "slack", &p, &slack)) ||
                   (rc = kevo__report_str(in, gate, "reason", &p, &reason))) {
            return rc;
        } else {
            kevo__buf_printf(
                b,
                "<p>Verdict: <span class=\"%s\">%s</span>. The gate asks, at "
                "every held-out shape, whether the champion is correct and "
                "not slower than the seed (the reference where the seed is "
                "wrong or missing) by more than the slack, %s%%, the two "
                "timed together; a difference inside the timing precision "
                "or below the launch latency counts as equal.</p>\n",
                passed == 1   ? "pass"
                : passed == 0 ? "fail"
                              : "",
                passed == 1   ? "passed"
                : passed == 0 ? "failed"
                              : DASH,
                kevo__report_sig(t, slack * 100, 3));
            kevo__buf_printf(b, "<p>Training fitness %s as first measured",
                             kevo__report_sig(u, train, 3));
            if (!isnan(retimed))
                kevo__buf_printf(b,
                                 ", %s timed again beside the other "
                                 "finalists",
                                 kevo__report_sig(v, retimed, 3));
            kevo__buf_printf(b,
                             "; held-out fitness %s (information only: "
                             "held-out shapes of another kind have their "
                             "own efficiency).</p>\n",
                             kevo__report_sig(w, held, 3));
            const char *device = NULL;
            if ((rc = kevo__report_str(in, gate, "device", &p, &device)))
                return rc;
            if (device) {
                kevo__buf_puts(b, "<p>The held-out shapes were timed on ");
                kevo__report_escape(b, device, (size_t)-1);
                kevo__buf_puts(b, ", the champion and its baseline "
                                  "together.</p>\n");
            }
            static const column rows[] = {
                {"dims", "held-out shape", 'a'},
                {"time", "champion (us)", 'u'},
                {"baseline", "baseline", 's'},
                {"baseline_time", "baseline (us)", 'u'},
                {"speed", "speed", 'f'},
                {"allowed", "allowed", 'f'},
                {"call", "call", 's'},
                {"efficiency", "efficiency", 'f'}};
            json_t *shapes;
            if ((rc = kevo__report_arr(in, gate, "shapes", &p, &shapes)))
                return rc;
            if (shapes && json_array_size(shapes) > 0) {
                size_t smark = kevo__jpath_key(&p, "shapes");
                if ((rc =
                         table(b, in, shapes, &p, rows, KEVO_ARRAY_SIZE(rows))))
                    return rc;
                kevo__jpath_pop(&p, smark);
            }
            if (reason) {
                kevo__buf_puts(b, "<p>Reason: ");
                kevo__report_escape(b, reason, (size_t)-1);
                kevo__buf_puts(b, "</p>\n");
            }
        }
    }
    if (!tried || json_array_size(tried) == 0) {
        kevo__buf_puts(b, "<p class=\"note\">No elite was gated.</p>\n");
    } else {
        static const column cols[] = {
            {"id", "candidate", 'i'},
            {"train_fitness", "training fitness", 'f'},
            {"retimed_fitness", "timed again", 'f'},
            {"held_out_fitness", "held-out fitness", 'f'},
            {"passed", "verdict", 'b'},
            {"device", "held-out shapes timed on", 's'},
            {"reason", "reason", 's'}};
        kevo__jpath_init(&p);
        kevo__jpath_key(&p, "gate_tried");
        kevo__buf_puts(b, "<h3>Elites tried, in order</h3>\n");
        if ((rc = table(b, in, tried, &p, cols, KEVO_ARRAY_SIZE(cols))))
            return rc;
    }
    kevo__buf_puts(b, "</section>\n");
    return KEVO_OK;
}

kevo_status kevo__report_operators(kevo_buf *b, const kevo_report_in *in,
                                   const json_t *s)
{
    static const column ops[] = {
        {"name", "operator", 's'},
        {"plugin", "plugin", 's'},
        {"weight", "weight", 'f'},
        {"requests", "requests", 'c'},
        {"children", "children", 'c'},
        {"evaluated", "evaluated", 'c'},
        {"entered", "entered", 'c'},
        {"improved", "improved", 'c'},
        {"failures", "failures", 'c'},
        {"proposals", "proposals", 'c'},
        {"validity", "validity", 'p'},
        {"repairs", "repairs", 'c'},
        {"validity_repaired", "validity after repair", 'p'},
        {"input_tokens", "tokens in", 'c'},
        {"output_tokens", "tokens out", 'c'},
        {"cost", "cost", 'm'}};
    static const column prompts[] = {
        {"id", "id", 'i'},
        {"name", "prompt", 's'},
        {"parent", "parent", 'i'},
        {"generation", "generation", 'c'},
        {"uses", "uses", 'c'},
        {"children", "children", 'c'},
        {"entered", "entered", 'c'},
        {"beat_parent", "beat parent", 'c'},
        {"best_fitness", "best fitness", 'f'},
        {"mean", "mean fitness", 'f'},
        {"proposals", "proposals", 'c'},
        {"validity", "validity", 'p'},
        {"validity_repaired", "validity after repair", 'p'},
        {"failure_kinds", "failures", 'k'}};
    kevo_jpath p;
    kevo__jpath_init(&p);
    json_t *arr;
    kevo_status rc = kevo__report_arr(in, s, "operators", &p, &arr);
    if (rc != KEVO_OK)
        return rc;
    kevo__buf_puts(b, "<section id=\"operators\">\n<h2>Operators</h2>\n");
    if (!arr || json_array_size(arr) == 0) {
        kevo__buf_puts(b, "<p class=\"note\">No operators in the summary."
                          "</p>\n");
    } else {
        size_t mark = kevo__jpath_key(&p, "operators");
        if ((rc = table(b, in, arr, &p, ops, KEVO_ARRAY_SIZE(ops))))
            return rc;
        kevo__jpath_pop(&p, mark);
    }
    kevo__buf_puts(b, "</section>\n");
    if ((rc = kevo__report_arr(in, s, "prompts", &p, &arr)))
        return rc;
    if (!arr || json_array_size(arr) == 0)
        return KEVO_OK;
    kevo__buf_puts(b, "<section id=\"prompts\">\n<h2>Prompts</h2>\n");
    kevo__jpath_key(&p, "prompts");
    if ((rc = table(b, in, arr, &p, prompts, KEVO_ARRAY_SIZE(prompts))))
        return rc;
    kevo__buf_puts(b, "</section>\n");
    return KEVO_OK;
}

/* The per-shape tuning of best.dispatch.json (kevo_search_dispatch_json()),
 * when the file is there. */
kevo_status kevo__report_tuning(kevo_buf *b, const kevo_report_in *in,
                                const json_t *s, const char *run_dir)
{
    static const column train[] = {
        {"dims", "training shape", 'a'},
        {"params", "parameters", 'a'},
        {"time", "\xc2\xb5s", 'u'},
        {"champion_time", "champion \xc2\xb5s", 'u'}};
    static const column held[] = {{"dims", "held-out shape", 'a'},
                                  {"params", "parameters", 'a'},
                                  {"correct", "correct", 'y'}};
    kevo_jpath p;
    kevo__jpath_init(&p);
    const char *name, *rule;
    char *path = NULL, *text = NULL;
    json_t *d = NULL, *params, *def, *shapes, *ho, *v;
    size_t i, mark;
    kevo_status rc = kevo__report_file_name(in, s, "dispatch", &p,
                                            "best.dispatch.json", &name);
    if (rc != KEVO_OK)
        return rc;
    if (!(path = kevo__path_join(run_dir, name)))
        return kevo__error_set(in->err, KEVO_ENOMEM, "out of memory");
    kevo_error e = KEVO__ERROR_INIT;
    kevo_report_in din = {path, in->err};
    rc = kevo__read_file(path, true, &text, NULL, &e);
    if (rc == KEVO_ENOENT) {
        rc = KEVO_OK;
        goto out;
    }
    if (rc != KEVO_OK || (rc = kevo__json_parse(text, path, &d, &e))) {
        kevo__error_wrap(in->err, &e, "%s", "");
        goto out;
    }
    if ((rc = kevo__json_object(d, path, &p, in->err)) ||
        (rc = kevo__report_arr(&din, d, "params", &p, &params)) ||
        (rc = kevo__report_obj(&din, d, "default", &p, &def)) ||
        (rc = kevo__report_str(&din, d, "rule", &p, &rule)) ||
        (rc = kevo__report_arr(&din, d, "shapes", &p, &shapes)) ||
        (rc = kevo__report_arr(&din, d, "held_out", &p, &ho)))
        goto out;
    kevo__buf_puts(b, "<section id=\"tuning\">\n<h2>Per-shape tuning</h2>\n"
                      "<p>Parameters: ");
    mark = kevo__jpath_key(&p, "params");
    json_array_foreach (params, i, v) {
        if (!kevo__report_is_text(v)) {
            kevo__jpath_index(&p, i);
            rc = kevo__json_fail(in->err, KEVO_EINVALID, path, &p,
                                 "expected a string, found %s",
                                 kevo__json_type_name(v));
            goto out;
        }
        kevo__report_escape(b, i ? ", " : "", (size_t)-1);
        kevo__report_escape(b, json_string_value(v), (size_t)-1);
    }
    kevo__jpath_pop(&p, mark);
    kevo__buf_puts(b, "; default: ");
    mark = kevo__jpath_key(&p, "default");
    if ((rc = assignment(b, &din, def, &p)))
        goto out;
    kevo__jpath_pop(&p, mark);
    kevo__buf_puts(b, "; other shapes: ");
    kevo__report_escape(b, rule ? rule : DASH, (size_t)-1);
    kevo__buf_puts(b, ".</p>\n");
    mark = kevo__jpath_key(&p, "shapes");
    if (shapes && (rc = table(b, &din, shapes, &p, train, 4)))
        goto out;
    kevo__jpath_pop(&p, mark);
    kevo__jpath_key(&p, "held_out");
    if (ho && (rc = table(b, &din, ho, &p, held, 3)))
        goto out;
    kevo__buf_puts(b, "</section>\n");
out:
    json_decref(d);
    free(text);
    free(path);
    return rc;
}

/*
 * report.c: the report of a run directory: reading summary.json,
 * events.jsonl, best.cu and best.dispatch.json, and writing the page, its
 * figures and its tables (the charts are in report_svg.c).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_private.h"

#define DASH "\xe2\x80\x94" /* U+2014, for unknown values */
#define SUMMARY_VERSION 1

/* ---- escaping and numbers ---------------------------------------------- */

void kevo__report_escape(kevo_buf *b, const char *text, size_t n)
{
    if (n == (size_t)-1)
        n = strlen(text);
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        const char *rep = NULL;
        switch (c) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        case ':':
            if (i + 2 < n && text[i + 1] == '/' && text[i + 2] == '/')
                rep = "&#58;";
            break;
        case '\t':
        case '\n':
        case '\r': break;
        default:
            if (c < 0x20 || c == 0x7f)
                rep = "\xef\xbf\xbd";
        }
        if (rep) {
            kevo__buf_append(b, text + start, i - start);
            kevo__buf_puts(b, rep);
            start = i + 1;
        }
    }
    kevo__buf_append(b, text + start, n - start);
}

/* printf's decimal point is the locale's: make it '.'. */
static const char *c_locale(char *buf)
{
    for (char *p = buf; *p; p++)
        if (*p == ',')
            *p = '.';
    return buf;
}

const char *kevo__report_sig(char *buf, double x, int sig)
{
    double ax = fabs(x);
    if (isnan(x))
        return strcpy(buf, DASH);
    if (isinf(x))
        return strcpy(buf, x > 0 ? "\xe2\x88\x9e" : "-\xe2\x88\x9e");
    if (ax == 0)
        return strcpy(buf, "0");
    if (ax < 1e-4 || ax >= 1e9) {
        snprintf(buf, 32, "%.*e", sig - 1, x);
        return c_locale(buf);
    }
    int dec = sig - 1 - (int)floor(log10(ax));
    if (dec < 0)
        dec = 0;
    /* 0.9996 with 3 digits rounds up to 1.00, not 1.000 */
    if (dec > 0 && round(ax * pow(10, dec)) >= pow(10, sig))
        dec--;
    snprintf(buf, 32, "%.*f", dec, x);
    return c_locale(buf);
}

const char *kevo__report_fix(char *buf, double x, int decimals)
{
    if (!isfinite(x))
        return kevo__report_sig(buf, x, 3);
    snprintf(buf, 32, "%.*f", decimals, x);
    return c_locale(buf);
}

/* A count (a whole number in a double), or the dash. */
static const char *count(char *buf, double x)
{
    return kevo__report_fix(buf, x, 0);
}

/* Seconds as "42.1 s", "12 min 3 s" or "2 h 05 min". */
static const char *duration(char *buf, double s)
{
    if (!isfinite(s) || s < 0)
        return kevo__report_sig(buf, NAN, 3);
    if (s < 60) {
        char t[32];
        snprintf(buf, 32, "%s s", kevo__report_sig(t, s, 3));
    } else if (s < 3600) {
        long v = lround(s);
        snprintf(buf, 32, "%ld min %ld s", v / 60, v % 60);
    } else {
        long v = lround(s / 60);
        snprintf(buf, 32, "%ld h %02ld min", v / 60, v % 60);
    }
    return buf;
}

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

/* A name inside the run directory (no '/', not "." or ".."). */
static kevo_status file_name(const kevo_report_in *in, const json_t *obj,
                             const char *key, kevo_jpath *path, const char *def,
                             const char **out)
{
    kevo_status rc = kevo__report_str(in, obj, key, path, out);
    if (rc != KEVO_OK)
        return rc;
    if (!*out) {
        *out = def;
    } else if (!**out || strchr(*out, '/') || strcmp(*out, ".") == 0 ||
               strcmp(*out, "..") == 0) {
        size_t mark = kevo__jpath_key(path, key);
        rc = kevo__json_fail(in->err, KEVO_EINVALID, in->origin, path,
                             "\"%s\" is not a file name inside the run "
                             "directory",
                             *out);
        kevo__jpath_pop(path, mark);
    }
    return rc;
}

/* The object at path as "k=v, k=v" (numbers or strings); "—" for NULL or
 * an empty object. */
static kevo_status assignment(kevo_buf *b, const kevo_report_in *in,
                              const json_t *obj, kevo_jpath *path)
{
    const char *key;
    json_t *v;
    bool first = true;
    json_object_foreach ((json_t *)obj, key, v) {
        char t[32];
        kevo__report_escape(b, first ? "" : ", ", (size_t)-1);
        kevo__report_escape(b, key, (size_t)-1);
        kevo__buf_puts(b, "=");
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

/* An assignment member of obj in a <td>. */
static kevo_status td_assignment(kevo_buf *b, const kevo_report_in *in,
                                 const json_t *obj, const char *key,
                                 kevo_jpath *path)
{
    json_t *v;
    kevo_status rc = kevo__report_obj(in, obj, key, path, &v);
    if (rc != KEVO_OK)
        return rc;
    size_t mark = kevo__jpath_key(path, key);
    kevo__buf_puts(b, "<td>");
    rc = assignment(b, in, v, path);
    kevo__buf_puts(b, "</td>");
    kevo__jpath_pop(path, mark);
    return rc;
}

/* ---- the page ---------------------------------------------------------- */

static const char css[] =
    "body{font:15px/1.45 system-ui,-apple-system,\"Segoe UI\",sans-serif;"
    "color:#1b1b1b;background:#fff;margin:0 auto;max-width:72rem;"
    "padding:1rem 1.5rem}\n"
    "h1{font-size:1.6rem;margin:.5rem 0 .2rem}h2{font-size:1.2rem;"
    "border-bottom:1px solid #ccc;margin-top:2rem}\n"
    ".state{display:inline-block;padding:0 .5em;border-radius:.3em;"
    "font-size:.85rem;vertical-align:middle;background:#e3e3e3}\n"
    ".state-finished{background:#d7f0d7}.state-failed,.state-interrupted"
    "{background:#f6d5d5}.state-running{background:#dde8f8}\n"
    "dl.figs{display:flex;flex-wrap:wrap;gap:.4rem 1.6rem;margin:.8rem 0}"
    "dl.figs div{min-width:6rem}dl.figs dt{font-size:.8rem;color:#555}"
    "dl.figs dd{margin:0;font-weight:600}\n"
    ".note{color:#555;font-size:.9rem}.muted{color:#777}\n"
    "table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}"
    "th,td{border:1px solid #d0d0d0;padding:.2rem .5rem;text-align:left;"
    "vertical-align:top}th{background:#f2f2f2}td.num{text-align:right;"
    "font-variant-numeric:tabular-nums}\n"
    "tr.held td{background:#fdf3e1}.tag{font-size:.75rem;padding:0 .3em;"
    "border:1px solid #c9a25a;border-radius:.25em;margin-left:.3em}\n"
    ".pass{color:#1a7f1a;font-weight:700}.fail{color:#b42318;"
    "font-weight:700}.sus{color:#b42318}\n"
    "svg{max-width:100%;height:auto;font-family:inherit}"
    "svg text{font-size:11px;fill:#333}\n"
    "pre{background:#f7f7f7;border:1px solid #ddd;padding:.6rem;"
    "overflow:auto;font-size:.8rem;line-height:1.35}\n"
    "code{font-family:ui-monospace,\"DejaVu Sans Mono\",monospace}\n"
    "@media print{body{max-width:none;padding:0}pre{white-space:pre-wrap;"
    "overflow:visible}svg,tr{break-inside:avoid}h2{break-after:avoid}}\n";

/* One figure of the line under the title. */
static void figure(kevo_buf *b, const char *name, const char *value)
{
    kevo__buf_printf(b, "<div><dt>%s</dt><dd>", name);
    kevo__report_escape(b, value, (size_t)-1);
    kevo__buf_puts(b, "</dd></div>");
}

static kevo_status section_title(kevo_buf *b, const kevo_report_in *in,
                                 const json_t *s, const char *run_dir,
                                 const kevo_report_events *ev)
{
    kevo_jpath p;
    kevo__jpath_init(&p);
    const char *task, *desc, *state, *stop, *device, *command, *fname;
    double evals, fails, elapsed, eps, itok, otok, cost, cov, filled, cells;
    int64_t seed;
    json_t *arch;
    kevo_status rc;
    char t[32], u[32], v[96];
    if ((rc = kevo__report_str(in, s, "task", &p, &task)) ||
        (rc = kevo__report_str(in, s, "description", &p, &desc)) ||
        (rc = kevo__report_str(in, s, "state", &p, &state)) ||
        (rc = kevo__report_str(in, s, "stop_reason", &p, &stop)) ||
        (rc = kevo__report_str(in, s, "device", &p, &device)) ||
        (rc = kevo__report_str(in, s, "command", &p, &command)) ||
        (rc = kevo__report_str(in, s, "fitness_name", &p, &fname)) ||
        (rc = kevo__report_int(in, s, "seed", &p, &seed)) ||
        (rc = kevo__report_num(in, s, "evaluations", &p, &evals)) ||
        (rc = kevo__report_num(in, s, "failures", &p, &fails)) ||
        (rc = kevo__report_num(in, s, "elapsed", &p, &elapsed)) ||
        (rc = kevo__report_num(in, s, "evals_per_second", &p, &eps)) ||
        (rc = kevo__report_num(in, s, "input_tokens", &p, &itok)) ||
        (rc = kevo__report_num(in, s, "output_tokens", &p, &otok)) ||
        (rc = kevo__report_num(in, s, "cost", &p, &cost)) ||
        (rc = kevo__report_obj(in, s, "archive", &p, &arch)))
        return rc;
    kevo__jpath_key(&p, "archive");
    if ((rc = kevo__report_num(in, arch, "coverage", &p, &cov)) ||
        (rc = kevo__report_num(in, arch, "filled", &p, &filled)) ||
        (rc = kevo__report_num(in, arch, "cells", &p, &cells)))
        return rc;

    kevo__buf_puts(b, "<title>kevo report: ");
    kevo__report_escape(b, task ? task : "run", (size_t)-1);
    kevo__buf_printf(b,
                     "</title>\n<style>\n%s</style>\n</head>\n<body>\n"
                     "<header>\n<h1>",
                     css);
    kevo__report_escape(b, task ? task : "Run", (size_t)-1);
    kevo__buf_puts(b, " <span class=\"state state-");
    kevo__report_escape(b, state ? state : "unknown", (size_t)-1);
    kevo__buf_puts(b, "\">");
    kevo__report_escape(b, state ? state : "state unknown", (size_t)-1);
    kevo__buf_puts(b, "</span></h1>\n");
    if (desc) {
        kevo__buf_puts(b, "<p>");
        kevo__report_escape(b, desc, (size_t)-1);
        kevo__buf_puts(b, "</p>\n");
    }
    kevo__buf_puts(b, "<p>Stop reason: <b>");
    kevo__report_escape(b, stop ? stop : DASH, (size_t)-1);
    kevo__buf_puts(b, "</b>; fitness: ");
    kevo__report_escape(b, fname ? fname : DASH, (size_t)-1);
    kevo__buf_puts(b, "; run directory <code>");
    kevo__report_escape(b, run_dir, (size_t)-1);
    kevo__buf_puts(b, "</code></p>\n<dl class=\"figs\">");
    figure(b, "evaluations", count(t, evals));
    if (evals > 0 && isfinite(fails)) {
        snprintf(v, sizeof v, "%s (%s%%)", count(t, fails),
                 kevo__report_sig(u, 100 * fails / evals, 3));
        figure(b, "failures", v);
    } else {
        figure(b, "failures", count(t, fails));
    }
    figure(b, "elapsed", duration(t, elapsed));
    figure(b, "evaluations/s", kevo__report_sig(t, eps, 3));
    if (isnan(cov)) {
        snprintf(v, sizeof v, "%s", DASH);
    } else {
        snprintf(v, sizeof v, "%s%% (%s of ", kevo__report_sig(u, 100 * cov, 3),
                 count(t, filled));
        size_t k = strlen(v);
        snprintf(v + k, sizeof v - k, "%s cells)", count(t, cells));
    }
    figure(b, "coverage", v);
    snprintf(v, sizeof v, "%s in, %s out", count(t, itok), count(u, otok));
    figure(b, "tokens", v);
    figure(b, "cost", kevo__report_sig(t, cost, 4));
    figure(b, "device", device ? device : DASH);
    if (seed == INT64_MIN)
        snprintf(t, sizeof t, "%s", DASH);
    else
        snprintf(t, sizeof t, "%lld", (long long)seed);
    figure(b, "seed", t);
    kevo__buf_puts(b, "</dl>\n<p>Command: <code>");
    kevo__report_escape(b, command ? command : DASH, (size_t)-1);
    kevo__buf_puts(b, "</code></p>\n");
    if (!ev->present)
        kevo__buf_puts(b, "<p class=\"note\">No events.jsonl in the run "
                          "directory: the chart shows the summary's "
                          "history only.</p>\n");
    else if (ev->malformed)
        kevo__buf_printf(b,
                         "<p class=\"note\">events.jsonl: %zu malformed "
                         "line%s skipped (of %zu).</p>\n",
                         ev->malformed, ev->malformed == 1 ? "" : "s",
                         ev->lines + ev->malformed);
    kevo__buf_puts(b, "</header>\n");
    return KEVO_OK;
}

/* A column of a table of JSON objects: the member, its heading and how to
 * print it: 's' text, 'c' count, 'f' 3 significant digits, 'm' 4, 'u'
 * seconds in microseconds, 'i' an integer id, 'b' passed/failed, 'y'
 * yes/no, 'a' an assignment {name: value}. */
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
                kevo__buf_printf(b, "<td class=\"%s\">%s</td>",
                                 flag < 0 ? ""
                                 : flag   ? "pass"
                                          : "fail",
                                 flag < 0              ? DASH
                                 : cols[c].kind == 'y' ? flag ? "yes" : "no"
                                 : flag                ? "passed"
                                                       : "failed");
                break;
            case 'a': rc = td_assignment(b, in, row, key, p); break;
            default:
                rc = kevo__report_num(in, row, key, p, &x);
                td(b, cols[c].kind == 'c'   ? count(t, x)
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

static kevo_status section_shapes(kevo_buf *b, const kevo_report_in *in,
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
    json_array_foreach (arr, i, sh) {
        size_t mark = kevo__jpath_index(&p, i);
        const char *set, *bound;
        double index, floor_s, st, se, ct, ce, rt, re;
        char t[32];
        if ((rc = kevo__json_object(sh, in->origin, &p, in->err)) ||
            (rc = kevo__report_str(in, sh, "set", &p, &set)) ||
            (rc = kevo__report_str(in, sh, "bound", &p, &bound)) ||
            (rc = kevo__report_num(in, sh, "index", &p, &index)) ||
            (rc = kevo__report_num(in, sh, "floor", &p, &floor_s)) ||
            (rc = perf(in, sh, "seed", &p, &st, &se)) ||
            (rc = perf(in, sh, "champion", &p, &ct, &ce)) ||
            (rc = perf(in, sh, "reference", &p, &rt, &re)))
            return rc;
        bool held = set && strcmp(set, "held_out") == 0;
        kevo__buf_puts(b, held ? "<tr class=\"held\">" : "<tr>");
        if (held)
            kevo__buf_puts(b, "<td>held-out<span class=\"tag\">not seen by "
                              "the search</span></td>");
        else
            td_text(b, set);
        td(b, count(t, index));
        if ((rc = td_assignment(b, in, sh, "dims", &p)))
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
                      "reference's time over the champion's.</p>\n"
                      "</section>\n");
    return KEVO_OK;
}

static kevo_status section_gate(kevo_buf *b, const kevo_report_in *in,
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
        double fit, gen, held, train, ratio;
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
        kevo__buf_printf(b,
                         "<p>Champion: candidate <b>%lld</b>, training "
                         "fitness <b>%s</b>, operator ",
                         (long long)id, kevo__report_sig(t, fit, 3));
        kevo__report_escape(b, op ? op : DASH, (size_t)-1);
        if (prompt != INT64_MIN)
            kevo__buf_printf(b, ", prompt %lld", (long long)prompt);
        kevo__buf_printf(b, ", generation %s; parameters: ", count(t, gen));
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
                   (rc = kevo__report_num(in, gate, "ratio", &p, &ratio)) ||
                   (rc = kevo__report_str(in, gate, "reason", &p, &reason))) {
            return rc;
        } else {
            kevo__buf_printf(
                b,
                "<p>Verdict: <span class=\"%s\">%s</span>: held-out fitness "
                "<b>%s</b> against %s \xc3\x97 %s = %s (the ratio times the "
                "training fitness).</p>\n",
                passed == 1 ? "pass" : "fail",
                passed == 1 ? "passed" : "failed", kevo__report_sig(t, held, 3),
                kevo__report_sig(u, ratio, 3), kevo__report_sig(v, train, 3),
                kevo__report_sig(w, ratio * train, 3));
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
            {"fitness", "training fitness", 'f'},
            {"held_out_fitness", "held-out fitness", 'f'},
            {"passed", "verdict", 'b'},
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

static kevo_status section_operators(kevo_buf *b, const kevo_report_in *in,
                                     const json_t *s)
{
    static const column ops[] = {{"name", "operator", 's'},
                                 {"plugin", "plugin", 's'},
                                 {"weight", "weight", 'f'},
                                 {"requests", "requests", 'c'},
                                 {"children", "children", 'c'},
                                 {"evaluated", "evaluated", 'c'},
                                 {"entered", "entered", 'c'},
                                 {"improved", "improved", 'c'},
                                 {"failures", "failures", 'c'},
                                 {"input_tokens", "tokens in", 'c'},
                                 {"output_tokens", "tokens out", 'c'},
                                 {"cost", "cost", 'm'}};
    static const column prompts[] = {{"id", "id", 'i'},
                                     {"name", "prompt", 's'},
                                     {"parent", "parent", 'i'},
                                     {"generation", "generation", 'c'},
                                     {"uses", "uses", 'c'},
                                     {"children", "children", 'c'},
                                     {"entered", "entered", 'c'},
                                     {"beat_parent", "beat parent", 'c'},
                                     {"best_fitness", "best fitness", 'f'},
                                     {"mean", "mean fitness", 'f'}};
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
static kevo_status section_tuning(kevo_buf *b, const kevo_report_in *in,
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
    kevo_status rc =
        file_name(in, s, "dispatch", &p, "best.dispatch.json", &name);
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

static kevo_status section_source(kevo_buf *b, const kevo_report_in *in,
                                  const json_t *s, const char *run_dir)
{
    kevo_jpath p;
    kevo__jpath_init(&p);
    json_t *ch;
    const char *name = "best.cu";
    char *path = NULL, *data = NULL;
    size_t len;
    kevo_status rc = kevo__report_obj(in, s, "champion", &p, &ch);
    if (rc != KEVO_OK)
        return rc;
    kevo__jpath_key(&p, "champion");
    if (ch && (rc = file_name(in, ch, "file", &p, "best.cu", &name)))
        return rc;
    if (!(path = kevo__path_join(run_dir, name)))
        return kevo__error_set(in->err, KEVO_ENOMEM, "out of memory");
    kevo__buf_puts(b, "<section id=\"source\">\n<h2>Champion source</h2>\n");
    kevo_error e = KEVO__ERROR_INIT;
    rc = kevo__read_file(path, false, &data, &len, &e);
    if (rc == KEVO_ENOENT) {
        rc = KEVO_OK;
        kevo__buf_puts(b, "<p class=\"note\">No champion source: ");
        kevo__report_escape(b, name, (size_t)-1);
        kevo__buf_puts(b, " is not in the run directory.</p>\n");
    } else if (rc != KEVO_OK) {
        kevo__error_wrap(in->err, &e, "%s", "");
        goto out;
    } else {
        kevo__buf_puts(b, "<p class=\"note\">");
        kevo__report_escape(b, name, (size_t)-1);
        kevo__buf_puts(b, "</p>\n<pre><code>");
        kevo__report_escape(b, data, len);
        kevo__buf_puts(b, "</code></pre>\n");
    }
    kevo__buf_puts(b, "</section>\n");
out:
    free(data);
    free(path);
    return rc;
}

static kevo_status check_format(const kevo_report_in *in, const json_t *s)
{
    kevo_jpath p;
    kevo__jpath_init(&p);
    const char *format;
    int64_t version;
    kevo_status rc;
    if ((rc = kevo__json_object(s, in->origin, &p, in->err)) ||
        (rc = kevo__report_str(in, s, "format", &p, &format)) ||
        (rc = kevo__report_int(in, s, "version", &p, &version)))
        return rc;
    if (format && strcmp(format, "kevo-summary") != 0) {
        kevo__jpath_key(&p, "format");
        return kevo__json_fail(in->err, KEVO_EFORMAT, in->origin, &p,
                               "\"%s\" is not a run summary "
                               "(\"kevo-summary\")",
                               format);
    }
    if (version != INT64_MIN && (version < 1 || version > SUMMARY_VERSION)) {
        kevo__jpath_key(&p, "version");
        return kevo__json_fail(in->err, KEVO_EFORMAT, in->origin, &p,
                               "version %lld; this library reads version %d",
                               (long long)version, SUMMARY_VERSION);
    }
    return KEVO_OK;
}

static kevo_status page(kevo_buf *b, const kevo_report_in *in,
                        const char *run_dir, const json_t *s,
                        const kevo_report_events *ev,
                        const kevo_report_history *hist)
{
    kevo_jpath p;
    kevo__jpath_init(&p);
    double evals;
    json_t *arch;
    kevo_status rc;
    kevo__buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
                      "<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
                      "content=\"width=device-width, initial-scale=1\">\n");
    if ((rc = section_title(b, in, s, run_dir, ev)) ||
        (rc = kevo__report_num(in, s, "evaluations", &p, &evals)) ||
        (rc = kevo__report_obj(in, s, "archive", &p, &arch)))
        return rc;
    kevo__buf_puts(b, "<section id=\"fitness\">\n"
                      "<h2>Best fitness over evaluations</h2>\n");
    if (!kevo__report_svg_fitness(b, ev, hist, evals))
        return kevo__error_set(in->err, KEVO_ENOMEM, "out of memory");
    kevo__buf_puts(b, "</section>\n<section id=\"archive\">\n"
                      "<h2>Archive</h2>\n");
    kevo__jpath_key(&p, "archive");
    if ((rc = kevo__report_svg_archive(b, in, arch, &p)))
        return rc;
    kevo__buf_puts(b, "</section>\n");
    if ((rc = section_shapes(b, in, s)) || (rc = section_gate(b, in, s)) ||
        (rc = section_operators(b, in, s)) ||
        (rc = section_tuning(b, in, s, run_dir)) ||
        (rc = section_source(b, in, s, run_dir)))
        return rc;
    kevo__buf_printf(b,
                     "<footer class=\"note\">Made by kevo %s from the files "
                     "of the run directory.</footer>\n</body>\n</html>\n",
                     kevo_version_string());
    return KEVO_OK;
}

kevo_status kevo_report_html(const char *run_dir, char **html, kevo_error *err)
{
    if (html)
        *html = NULL;
    if (!run_dir || !html)
        return kevo__error_set(err, KEVO_EINVAL,
                               "kevo_report_html: run_dir and html must not "
                               "be NULL");
    kevo_buf b = {0};
    kevo_report_events ev = {0};
    kevo_report_history hist = {0};
    json_t *sum = NULL;
    char *text = NULL;
    char *path = kevo__path_join(run_dir, "summary.json");
    if (!path)
        return kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    kevo_report_in in = {path, err};
    kevo_status rc;
    if ((rc = kevo__read_file(path, true, &text, NULL, err)) ||
        (rc = kevo__json_parse(text, path, &sum, err)) ||
        (rc = check_format(&in, sum)) ||
        (rc = kevo__report_read_history(&in, sum, &hist)) ||
        (rc = kevo__report_read_events(run_dir, &ev, err)) ||
        (rc = page(&b, &in, run_dir, sum, &ev, &hist)))
        goto out;
    if (!(*html = kevo__buf_take(&b)))
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
out:
    kevo__buf_free(&b);
    kevo__report_events_free(&ev);
    free(hist.pt);
    json_decref(sum);
    free(text);
    free(path);
    return rc;
}

kevo_status kevo_report_write(const char *run_dir, kevo_error *err)
{
    char *html = NULL, *path = NULL;
    kevo_status rc = kevo_report_html(run_dir, &html, err);
    if (rc != KEVO_OK)
        return rc;
    if (!(path = kevo__path_join(run_dir, "report.html")))
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    else
        rc = kevo__write_file_atomic(path, html, strlen(html), err);
    free(path);
    free(html);
    return rc;
}

/*
 * report.c: the report of a run directory: the page's structure, its
 * title and figures, the champion's source, HTML escaping and number
 * formatting (the tables are in report_tables.c, the charts in
 * report_svg.c, the reading of events.jsonl in report_read.c).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_private.h"

#define DASH KEVO__REPORT_DASH
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

const char *kevo__report_count(char *buf, double x)
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

kevo_status kevo__report_file_name(const kevo_report_in *in, const json_t *obj,
                                   const char *key, kevo_jpath *path,
                                   const char *def, const char **out)
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
    ".note{color:#555;font-size:.9rem}\n"
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

/* The summary's "validity": the fraction of proposals that compiled and
 * were correct, and of first attempts after repairs; nothing when the
 * summary has none (a run of an older kevo). */
static kevo_status validity_figure(kevo_buf *b, const kevo_report_in *in,
                                   const json_t *s)
{
    kevo_jpath p;
    kevo__jpath_init(&p);
    json_t *o;
    double proposals, validity, repairs, repaired;
    kevo_status rc = kevo__report_obj(in, s, "validity", &p, &o);
    if (rc != KEVO_OK || !o)
        return rc;
    kevo__jpath_key(&p, "validity");
    if ((rc = kevo__report_num(in, o, "proposals", &p, &proposals)) ||
        (rc = kevo__report_num(in, o, "validity", &p, &validity)) ||
        (rc = kevo__report_num(in, o, "repairs", &p, &repairs)) ||
        (rc = kevo__report_num(in, o, "validity_repaired", &p, &repaired)))
        return rc;
    char t[32], u[32], v[160];
    if (isnan(validity)) {
        snprintf(v, sizeof v, "%s", DASH);
    } else {
        snprintf(v, sizeof v, "%s%% of %s proposals",
                 kevo__report_fix(t, 100 * validity, 1),
                 kevo__report_count(u, proposals));
        size_t k = strlen(v);
        if (repairs > 0 && !isnan(repaired))
            snprintf(v + k, sizeof v - k, "; %s%% after %s repairs",
                     kevo__report_fix(t, 100 * repaired, 1),
                     kevo__report_count(u, repairs));
    }
    figure(b, "validity", v);
    return KEVO_OK;
}

static kevo_status section_title(kevo_buf *b, const kevo_report_in *in,
                                 const json_t *s, const char *run_dir,
                                 const kevo_report_events *ev)
{
    kevo_jpath p;
    kevo__jpath_init(&p);
    const char *task, *desc, *state, *stop, *device, *command, *fname;
    double evals, fails, elapsed, eps, itok, otok, cost, cov, filled, cells;
    int64_t seed, devices;
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
        (rc = kevo__report_int(in, s, "devices", &p, &devices)) ||
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
    figure(b, "evaluations", kevo__report_count(t, evals));
    if (evals > 0 && isfinite(fails)) {
        snprintf(v, sizeof v, "%s (%s%%)", kevo__report_count(t, fails),
                 kevo__report_sig(u, 100 * fails / evals, 3));
        figure(b, "failures", v);
    } else {
        figure(b, "failures", kevo__report_count(t, fails));
    }
    if ((rc = validity_figure(b, in, s)) != KEVO_OK)
        return rc;
    figure(b, "elapsed", duration(t, elapsed));
    figure(b, "evaluations/s", kevo__report_sig(t, eps, 3));
    if (isnan(cov)) {
        snprintf(v, sizeof v, "%s", DASH);
    } else {
        snprintf(v, sizeof v, "%s%% (%s of ", kevo__report_sig(u, 100 * cov, 3),
                 kevo__report_count(t, filled));
        size_t k = strlen(v);
        snprintf(v + k, sizeof v - k, "%s cells)",
                 kevo__report_count(t, cells));
    }
    figure(b, "coverage", v);
    snprintf(v, sizeof v, "%s in, %s out", kevo__report_count(t, itok),
             kevo__report_count(u, otok));
    figure(b, "tokens", v);
    figure(b, "cost", kevo__report_sig(t, cost, 4));
    figure(b, "device", device ? device : DASH);
    if (devices != INT64_MIN && devices > 1) {
        snprintf(v, sizeof v, "%lld, one worker each", (long long)devices);
        figure(b, "devices", v);
    }
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
                         ev->lines);
    kevo__buf_puts(b, "</header>\n");
    return KEVO_OK;
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
    if (ch &&
        (rc = kevo__report_file_name(in, ch, "file", &p, "best.cu", &name)))
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
    if ((rc = kevo__report_shapes(b, in, s)) ||
        (rc = kevo__report_gate(b, in, s)) ||
        (rc = kevo__report_operators(b, in, s)) ||
        (rc = kevo__report_tuning(b, in, s, run_dir)) ||
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

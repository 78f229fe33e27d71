/*
 * report_svg.c: the report's charts, as inline SVG: the best fitness over
 * the evaluations, and the archive's heat map.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_private.h"

#define SVG_OPEN "<svg xmlns=\"http://www.w3.org/2000/svg\" "

/* The fitness chart's frame: the plot area inside margins. */
#define FW 760.0
#define FH 330.0
#define FL 62.0 /* left */
#define FR 30.0 /* right */
#define FT 30.0 /* top: the legend */
#define FB 46.0 /* bottom */
#define MAX_DOTS 4000
/* Ticks an axis has at most (about ten, unless its range overflows). */
#define TICKS_MAX 100

/* Most cells a heat map draws. */
#define MAX_CELLS 250000

typedef struct frame {
    double x0, x1, y0, y1; /* plot area in pixels (y0 at the bottom) */
    double xmax, ymax;     /* data at the right and top edges */
} frame;

static double px(const frame *f, double x)
{
    return f->x0 + (f->x1 - f->x0) * x / f->xmax;
}

static double py(const frame *f, double y)
{
    return f->y0 - (f->y0 - f->y1) * y / f->ymax;
}

/* A round step for an axis from 0 to max with about n ticks. */
static double nice_step(double max, int n)
{
    double rough = max / n;
    double mag = pow(10, floor(log10(rough)));
    double r = rough / mag;
    return (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * mag;
}

/* Decimals that show a multiple of step exactly enough. */
static int step_decimals(double step)
{
    int d = (int)ceil(-log10(step) - 1e-9);
    return d < 0 ? 0 : d > 9 ? 9 : d;
}

/* Grid lines, ticks with numbers, and the axis titles. */
static void axes(kevo_buf *b, const frame *f, double xstep, double ystep,
                 const char *xtitle, const char *ytitle)
{
    char t[32], u[32], v[32];
    int xd = step_decimals(xstep), yd = step_decimals(ystep);
    kevo__buf_puts(b, "<g stroke=\"#e2e2e2\" stroke-width=\"1\">");
    for (long k = 0; k <= TICKS_MAX && k * ystep <= f->ymax * (1 + 1e-9); k++)
        kevo__buf_printf(b, "<line x1=\"%s\" x2=\"%s\" y1=\"%s\" y2=\"%s\"/>",
                         kevo__report_fix(t, f->x0, 1),
                         kevo__report_fix(u, f->x1, 1),
                         kevo__report_fix(v, py(f, k * ystep), 1), v);
    kevo__buf_puts(b, "</g>\n<g stroke=\"#555\" stroke-width=\"1\">");
    kevo__buf_printf(b, "<line x1=\"%s\" x2=\"%s\" y1=\"%s\" y2=\"%s\"/>",
                     kevo__report_fix(t, f->x0, 1),
                     kevo__report_fix(u, f->x1, 1),
                     kevo__report_fix(v, f->y0, 1), v);
    kevo__buf_printf(b, "<line x1=\"%s\" x2=\"%s\" y1=\"%s\" y2=\"%s\"/>",
                     kevo__report_fix(t, f->x0, 1), t,
                     kevo__report_fix(u, f->y0, 1),
                     kevo__report_fix(v, f->y1, 1));
    for (long k = 0; k <= TICKS_MAX && k * xstep <= f->xmax * (1 + 1e-9); k++)
        kevo__buf_printf(b, "<line x1=\"%s\" x2=\"%s\" y1=\"%s\" y2=\"%s\"/>",
                         kevo__report_fix(t, px(f, k * xstep), 1), t,
                         kevo__report_fix(u, f->y0, 1),
                         kevo__report_fix(v, f->y0 + 5, 1));
    kevo__buf_puts(b, "</g>\n<g>");
    for (long k = 0; k <= TICKS_MAX && k * ystep <= f->ymax * (1 + 1e-9); k++)
        kevo__buf_printf(b,
                         "<text x=\"%s\" y=\"%s\" text-anchor=\"end\">%s"
                         "</text>",
                         kevo__report_fix(t, f->x0 - 6, 1),
                         kevo__report_fix(u, py(f, k * ystep) + 4, 1),
                         kevo__report_fix(v, k * ystep, yd));
    for (long k = 0; k <= TICKS_MAX && k * xstep <= f->xmax * (1 + 1e-9); k++)
        kevo__buf_printf(b,
                         "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\">%s"
                         "</text>",
                         kevo__report_fix(t, px(f, k * xstep), 1),
                         kevo__report_fix(u, f->y0 + 17, 1),
                         kevo__report_fix(v, k * xstep, xd));
    kevo__buf_printf(b,
                     "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\">%s"
                     "</text>",
                     kevo__report_fix(t, (f->x0 + f->x1) / 2, 1),
                     kevo__report_fix(u, f->y0 + 36, 1), xtitle);
    kevo__buf_printf(b,
                     "<text transform=\"translate(14 %s) rotate(-90)\" "
                     "text-anchor=\"middle\">%s</text></g>\n",
                     kevo__report_fix(t, (f->y0 + f->y1) / 2, 1), ytitle);
}

/* The best-so-far line: the summary's history, else the events' "best",
 * else the running best of the evaluations. Returns the points in *out
 * (to be freed) or false when out of memory. */
static bool best_line(const kevo_report_events *ev,
                      const kevo_report_history *hist, double (**out)[2],
                      size_t *n)
{
    size_t cap = hist->n > ev->nevals ? hist->n : ev->nevals;
    double(*pt)[2] = malloc((cap ? cap : 1) * sizeof *pt);
    if (!pt)
        return false;
    *n = 0;
    if (hist->n) {
        memcpy(pt, hist->pt, hist->n * sizeof *pt);
        *n = hist->n;
    } else {
        bool any = false;
        for (size_t i = 0; i < ev->nevals && !any; i++)
            any = !isnan(ev->evals[i].best);
        double best = -INFINITY;
        for (size_t i = 0; i < ev->nevals; i++) {
            const kevo_report_eval *e = &ev->evals[i];
            double v = any ? e->best : e->ok ? e->fitness : NAN;
            if (!isnan(v) && v > best) {
                best = v;
                pt[*n][0] = e->n;
                pt[(*n)++][1] = v;
            }
        }
    }
    *out = pt;
    return true;
}

/* A diamond at (x, y) for a gate event. */
static void gate_marker(kevo_buf *b, const frame *f, const kevo_report_gate *g)
{
    char t[32], u[32], v[32], w[32], x[32];
    kevo__buf_printf(
        b,
        "<path d=\"M%s %sl6 6-6 6-6-6z\" fill=\"%s\" stroke=\"#fff\">"
        "<title>gate after evaluation %s: candidate %lld %s (training %s, "
        "held-out %s)</title></path>\n",
        kevo__report_fix(t, px(f, g->n), 1),
        kevo__report_fix(u, py(f, g->fitness) - 6, 1),
        g->passed ? "#2f855a" : "#c53030", kevo__report_fix(v, g->n, 0),
        (long long)g->id, g->passed ? "passed" : "failed",
        kevo__report_sig(w, g->fitness, 3),
        kevo__report_sig(x, g->held_out, 3));
}

static void legend_item(kevo_buf *b, double x, const char *shape,
                        const char *text)
{
    char t[32];
    kevo__buf_printf(b,
                     "<g transform=\"translate(%s 12)\">%s<text x=\"10\" "
                     "y=\"4\">%s</text></g>",
                     kevo__report_fix(t, x, 1), shape, text);
}

bool kevo__report_svg_fitness(kevo_buf *b, const kevo_report_events *ev,
                              const kevo_report_history *hist,
                              double evaluations)
{
    frame f = {FL, FW - FR, FH - FB, FT, 1, 0};
    double(*line)[2] = NULL;
    size_t nline = 0, fails = 0, improvements = 0, shown = 0;
    char t[32], u[32], v[32];
    if (!best_line(ev, hist, &line, &nline))
        return false;
    if (isfinite(evaluations) && evaluations > f.xmax)
        f.xmax = evaluations;
    for (size_t i = 0; i < ev->nevals; i++) {
        const kevo_report_eval *e = &ev->evals[i];
        f.xmax = fmax(f.xmax, e->n);
        f.ymax = fmax(f.ymax, e->fitness);
        fails += !e->ok;
    }
    for (size_t i = 0; i < nline; i++) {
        f.xmax = fmax(f.xmax, line[i][0]);
        f.ymax = fmax(f.ymax, line[i][1]);
    }
    for (size_t i = 0; i < ev->ngates; i++)
        f.ymax = fmax(f.ymax, ev->gates[i].fitness);
    double xend = f.xmax;
    if (!(f.ymax > 0) || !isfinite(f.ymax))
        f.ymax = 1;
    double xstep = fmax(1, nice_step(f.xmax, 8));
    double ystep = nice_step(f.ymax * 1.04, 5);
    f.xmax = ceil(f.xmax / xstep) * xstep;
    f.ymax = ceil(f.ymax * 1.04 / ystep) * ystep;

    /* Dots: all of them, or every improvement and a stride of the rest. */
    size_t stride = 1;
    double best = -INFINITY;
    for (size_t i = 0; i < ev->nevals; i++)
        if (ev->evals[i].ok && ev->evals[i].fitness > best) {
            best = ev->evals[i].fitness;
            improvements++;
        }
    if (ev->nevals > MAX_DOTS) {
        size_t budget =
            MAX_DOTS > improvements + 1000 ? MAX_DOTS - improvements : 1000;
        stride = (ev->nevals - improvements + budget - 1) / budget;
    }

    kevo__buf_printf(b,
                     SVG_OPEN "viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
                              "height=\"%.0f\" role=\"img\" aria-label=\"Best "
                              "fitness over evaluations\">\n",
                     FW, FH, FW, FH);
    axes(b, &f, xstep, ystep, "evaluation", "fitness");
    if (ev->nevals == 0 && nline == 0)
        kevo__buf_printf(b,
                         "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\">"
                         "no evaluations yet</text>\n",
                         kevo__report_fix(t, (f.x0 + f.x1) / 2, 1),
                         kevo__report_fix(u, (f.y0 + f.y1) / 2, 1));
    for (int pass = 0; pass < 2; pass++) {
        kevo__buf_puts(b, pass ? "<g fill=\"#2b6cb0\" fill-opacity=\"0.6\">\n"
                               : "<g fill=\"#a0a0a0\">\n");
        size_t rest = 0;
        best = -INFINITY;
        for (size_t i = 0; i < ev->nevals; i++) {
            const kevo_report_eval *e = &ev->evals[i];
            bool improved = e->ok && e->fitness > best;
            if (improved)
                best = e->fitness;
            else if (rest++ % stride != 0)
                continue;
            if (e->ok != (pass == 1))
                continue;
            shown++;
            kevo__buf_printf(b, "<circle cx=\"%s\" cy=\"%s\" r=\"2.5\">",
                             kevo__report_fix(t, px(&f, e->n), 1),
                             kevo__report_fix(u, py(&f, e->fitness), 1));
            kevo__buf_printf(
                b, "<title>evaluation %s: ", kevo__report_fix(t, e->n, 0));
            if (e->id != INT64_MIN)
                kevo__buf_printf(b, "candidate %lld, ", (long long)e->id);
            if (e->ok)
                kevo__buf_printf(b, "fitness %s",
                                 kevo__report_sig(v, e->fitness, 3));
            else
                kevo__report_escape(b, e->verdict, (size_t)-1);
            kevo__buf_puts(b, "</title></circle>\n");
        }
        kevo__buf_puts(b, "</g>\n");
    }
    if (nline > 0) {
        kevo__buf_printf(b, "<path d=\"M%s %s",
                         kevo__report_fix(t, px(&f, line[0][0]), 1),
                         kevo__report_fix(u, py(&f, line[0][1]), 1));
        for (size_t i = 1; i < nline; i++)
            kevo__buf_printf(b, "H%sV%s",
                             kevo__report_fix(t, px(&f, line[i][0]), 1),
                             kevo__report_fix(u, py(&f, line[i][1]), 1));
        kevo__buf_printf(b,
                         "H%s\" fill=\"none\" stroke=\"#dd6b20\" "
                         "stroke-width=\"2\"/>\n",
                         kevo__report_fix(t, px(&f, xend), 1));
    }
    for (size_t i = 0; i < ev->ngates; i++)
        gate_marker(b, &f, &ev->gates[i]);
    legend_item(b, f.x0 + 4, "<circle r=\"3\" fill=\"#2b6cb0\"/>", "ok");
    legend_item(b, f.x0 + 44, "<circle r=\"3\" fill=\"#a0a0a0\"/>",
                "failed (at 0)");
    legend_item(b, f.x0 + 144,
                "<path d=\"M-6 0h12\" stroke=\"#dd6b20\" stroke-width=\"2\"/>",
                "best so far");
    legend_item(b, f.x0 + 244,
                "<path d=\"M0-5l5 5-5 5-5-5z\" fill=\"#2f855a\"/>",
                "gate passed");
    legend_item(b, f.x0 + 344,
                "<path d=\"M0-5l5 5-5 5-5-5z\" fill=\"#c53030\"/>",
                "gate failed");
    kevo__buf_puts(b, "</svg>\n<p class=\"note\">");
    if (ev->nevals == 0)
        kevo__buf_puts(b, "No evaluation events.");
    else
        kevo__buf_printf(b,
                         "%zu evaluation%s (%zu failed, %zu improvement%s)"
                         " from events.jsonl",
                         ev->nevals, ev->nevals == 1 ? "" : "s", fails,
                         improvements, improvements == 1 ? "" : "s");
    if (stride > 1)
        kevo__buf_printf(b,
                         "; %zu dots drawn: every improvement and one in "
                         "%zu of the rest",
                         shown, stride);
    kevo__buf_printf(b, "%s The line is the best fitness so far%s.</p>\n",
                     ev->nevals ? "." : "",
                     hist->n ? " (the summary's history)" : "");
    free(line);
    return !b->failed;
}

/* ---- the archive's heat map -------------------------------------------- */

/* Viridis at five stops, interpolated: dark purple (low) to yellow. */
static void colour(double t, char out[8], bool *dark)
{
    static const unsigned char stops[5][3] = {{68, 1, 84},
                                              {59, 82, 139},
                                              {33, 145, 140},
                                              {94, 201, 98},
                                              {253, 231, 37}};
    t = isfinite(t) ? fmin(1, fmax(0, t)) : 0;
    double s = t * 4;
    int i = s >= 4 ? 3 : (int)s;
    double u = s - i;
    int c[3];
    for (int k = 0; k < 3; k++)
        c[k] = (int)lround(stops[i][k] + (stops[i + 1][k] - stops[i][k]) * u);
    snprintf(out, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
    *dark = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2] < 140;
}

/* One dimension of the archive: its name, bins and labels. */
typedef struct dim {
    const char *name;
    size_t bins;
    const json_t *labels; /* strings, or NULL */
} dim;

static kevo_status read_dim(const kevo_report_in *in, const json_t *d,
                            kevo_jpath *p, dim *out)
{
    double bins;
    json_t *labels;
    size_t i;
    json_t *v;
    kevo_status rc;
    if ((rc = kevo__json_object(d, in->origin, p, in->err)) ||
        (rc = kevo__report_str(in, d, "name", p, &out->name)) ||
        (rc = kevo__report_num(in, d, "bins", p, &bins)) ||
        (rc = kevo__report_arr(in, d, "labels", p, &labels)))
        return rc;
    if (!(bins >= 1 && bins <= 1e6 && bins == floor(bins))) {
        kevo__jpath_key(p, "bins");
        return kevo__json_fail(in->err, KEVO_EINVALID, in->origin, p,
                               "expected a whole number of bins from 1 to "
                               "1000000");
    }
    out->bins = (size_t)bins;
    out->labels = labels;
    size_t mark = kevo__jpath_key(p, "labels");
    json_array_foreach (labels, i, v) {
        if (!kevo__report_is_text(v)) {
            kevo__jpath_index(p, i);
            return kevo__json_fail(in->err, KEVO_EINVALID, in->origin, p,
                                   "expected a string, found %s",
                                   kevo__json_type_name(v));
        }
    }
    kevo__jpath_pop(p, mark);
    return KEVO_OK;
}

/* Bin i's label, escaped: from "labels", else its number. */
static void bin_label(kevo_buf *b, const dim *d, size_t i)
{
    const json_t *l = d->labels ? json_array_get(d->labels, i) : NULL;
    if (l)
        kevo__report_escape(b, json_string_value(l), (size_t)-1);
    else
        kevo__buf_printf(b, "%zu", i);
}

/* The widest label of d, in characters (UTF-8 continuation bytes aside). */
static size_t label_width(const dim *d)
{
    size_t w = 1;
    for (size_t i = 0; i < d->bins; i++) {
        const json_t *l = d->labels ? json_array_get(d->labels, i) : NULL;
        size_t n = 0;
        if (!l) {
            n = (size_t)snprintf(NULL, 0, "%zu", i);
        } else {
            for (const char *s = json_string_value(l); *s; s++)
                n += ((unsigned char)*s & 0xc0) != 0x80;
        }
        w = n > w ? n : w;
    }
    return w > 24 ? 24 : w;
}

/* The elites merged into one grid (best wins): fitness (NaN for an empty
 * cell), id and island per cell. */
typedef struct grid {
    size_t nx, ny;
    double *fit;
    int64_t *id;
    double *island;
    double lo, hi;
} grid;

static kevo_status fill_grid(const kevo_report_in *in, const json_t *elites,
                             kevo_jpath *p, const dim *dims, size_t ndims,
                             grid *g)
{
    size_t i;
    json_t *e;
    g->lo = INFINITY;
    g->hi = -INFINITY;
    json_array_foreach (elites, i, e) {
        size_t mark = kevo__jpath_index(p, i);
        json_t *coords;
        double fit, island, c[2] = {0, 0};
        int64_t id;
        kevo_status rc;
        if ((rc = kevo__json_object(e, in->origin, p, in->err)) ||
            (rc = kevo__report_num(in, e, "fitness", p, &fit)) ||
            (rc = kevo__report_num(in, e, "island", p, &island)) ||
            (rc = kevo__report_int(in, e, "id", p, &id)) ||
            (rc = kevo__report_arr(in, e, "coords", p, &coords)))
            return rc;
        kevo__jpath_key(p, "coords");
        if (ndims > 0 && (!coords || json_array_size(coords) != ndims))
            return kevo__json_fail(in->err, KEVO_EINVALID, in->origin, p,
                                   "expected %zu coordinates, one per "
                                   "dimension",
                                   ndims);
        for (size_t k = 0; k < ndims && k < 2; k++) {
            json_t *v = json_array_get(coords, k);
            c[k] = json_is_number(v) ? json_number_value(v) : -1;
            if (!(c[k] >= 0 && c[k] < (double)dims[k].bins)) {
                kevo__jpath_index(p, k);
                return kevo__json_fail(in->err, KEVO_EINVALID, in->origin, p,
                                       "expected a bin from 0 to %zu",
                                       dims[k].bins - 1);
            }
        }
        kevo__jpath_pop(p, mark);
        if (isnan(fit))
            continue;
        size_t cell = (size_t)c[1] * g->nx + (size_t)c[0];
        if (isnan(g->fit[cell]) || fit > g->fit[cell]) {
            g->fit[cell] = fit;
            g->id[cell] = id;
            g->island[cell] = island;
        }
        g->lo = fmin(g->lo, fit);
        g->hi = fmax(g->hi, fit);
    }
    if (!(g->hi >= g->lo)) {
        g->lo = 0;
        g->hi = 1;
    } else if (g->hi == g->lo) {
        g->lo = g->hi > 0 ? 0 : g->hi - 1;
    }
    return KEVO_OK;
}

/* The cell's tooltip: its bins and what is there. */
static void cell_title(kevo_buf *b, const dim *dims, size_t ndims,
                       const grid *g, size_t x, size_t y)
{
    char t[32], u[32];
    size_t cell = y * g->nx + x;
    kevo__buf_puts(b, "<title>");
    for (size_t k = 0; k < ndims && k < 2; k++) {
        kevo__buf_puts(b, k ? ", " : "");
        kevo__report_escape(b, dims[k].name ? dims[k].name : "?", (size_t)-1);
        kevo__buf_puts(b, " ");
        bin_label(b, &dims[k], k ? y : x);
    }
    if (isnan(g->fit[cell])) {
        kevo__buf_puts(b, ndims ? ": empty</title>" : "empty</title>");
        return;
    }
    kevo__buf_printf(b, "%sfitness %s", ndims ? ": " : "",
                     kevo__report_sig(t, g->fit[cell], 3));
    if (g->id[cell] != INT64_MIN)
        kevo__buf_printf(b, ", candidate %lld", (long long)g->id[cell]);
    if (!isnan(g->island[cell]))
        kevo__buf_printf(b, ", island %s",
                         kevo__report_fix(u, g->island[cell], 0));
    kevo__buf_puts(b, "</title>");
}

static void draw_grid(kevo_buf *b, const dim *dims, size_t ndims, const grid *g)
{
    char t[32], u[32], v[32], w[32], col[8];
    bool dark;
    size_t wx = ndims > 0 ? label_width(&dims[0]) : 1;
    size_t wy = ndims > 1 ? label_width(&dims[1]) : 0;
    double cw = fmin(56, fmax(6, floor(640.0 / (double)g->nx)));
    double ch =
        g->ny == 1 ? 40 : fmin(40, fmax(6, floor(400.0 / (double)g->ny)));
    bool rotate = wx * 6.5 > cw - 4;
    double left = 30 + (double)wy * 6.5, top = 10;
    double bottom = 40 + (rotate ? (double)wx * 4.8 : 0);
    double gw = cw * (double)g->nx, gh = ch * (double)g->ny;
    double lh = fmax(60, fmin(gh, 160)); /* the legend's scale */
    double width = left + gw + 110;
    double height = fmax(top + gh + bottom, top + lh + 30);
    size_t xevery = g->nx > 40 ? (g->nx + 39) / 40 : 1;
    size_t yevery = g->ny > 40 ? (g->ny + 39) / 40 : 1;
    kevo__buf_printf(b,
                     SVG_OPEN "viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
                              "height=\"%.0f\" role=\"img\" "
                              "aria-label=\"Archive heat map\">\n<g>",
                     width, height, width, height);
    for (size_t y = 0; y < g->ny; y++) {
        for (size_t x = 0; x < g->nx; x++) {
            size_t cell = y * g->nx + x;
            double fx = left + cw * (double)x;
            double fy = top + ch * (double)(g->ny - 1 - y);
            bool empty = isnan(g->fit[cell]);
            colour((g->fit[cell] - g->lo) / (g->hi - g->lo), col, &dark);
            kevo__buf_printf(
                b,
                "<rect x=\"%s\" y=\"%s\" width=\"%s\" "
                "height=\"%s\" fill=\"%s\" stroke=\"#fff\">",
                kevo__report_fix(t, fx, 1), kevo__report_fix(u, fy, 1),
                kevo__report_fix(v, cw, 1), kevo__report_fix(w, ch, 1),
                empty ? "#e6e6e6" : col);
            cell_title(b, dims, ndims, g, x, y);
            kevo__buf_puts(b, "</rect>");
            if (!empty && cw >= 34 && ch >= 16)
                kevo__buf_printf(
                    b,
                    "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" "
                    "style=\"fill:%s;font-size:10px\">%s</text>",
                    kevo__report_fix(t, fx + cw / 2, 1),
                    kevo__report_fix(u, fy + ch / 2 + 3.5, 1),
                    dark ? "#fff" : "#111",
                    kevo__report_sig(v, g->fit[cell], 2));
            kevo__buf_puts(b, "\n");
        }
    }
    kevo__buf_puts(b, "</g>\n<g>");
    for (size_t x = 0; ndims > 0 && x < g->nx; x += xevery) {
        double cx = left + cw * ((double)x + 0.5);
        double ly = top + gh + 14;
        if (rotate)
            kevo__buf_printf(b,
                             "<text transform=\"translate(%s %s) "
                             "rotate(-45)\" text-anchor=\"end\">",
                             kevo__report_fix(t, cx + 3, 1),
                             kevo__report_fix(u, ly - 4, 1));
        else
            kevo__buf_printf(b,
                             "<text x=\"%s\" y=\"%s\" "
                             "text-anchor=\"middle\">",
                             kevo__report_fix(t, cx, 1),
                             kevo__report_fix(u, ly, 1));
        bin_label(b, &dims[0], x);
        kevo__buf_puts(b, "</text>");
    }
    for (size_t y = 0; ndims > 1 && y < g->ny; y += yevery) {
        kevo__buf_printf(
            b, "<text x=\"%s\" y=\"%s\" text-anchor=\"end\">",
            kevo__report_fix(t, left - 5, 1),
            kevo__report_fix(u, top + ch * ((double)(g->ny - 1 - y) + 0.5) + 4,
                             1));
        bin_label(b, &dims[1], y);
        kevo__buf_puts(b, "</text>");
    }
    if (ndims > 0) {
        kevo__buf_printf(b,
                         "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" "
                         "style=\"font-weight:600\">",
                         kevo__report_fix(t, left + gw / 2, 1),
                         kevo__report_fix(u, height - 6, 1));
        kevo__report_escape(b, dims[0].name ? dims[0].name : "", (size_t)-1);
        kevo__buf_puts(b, "</text>");
    }
    if (ndims > 1) {
        kevo__buf_printf(b,
                         "<text transform=\"translate(12 %s) rotate(-90)\" "
                         "text-anchor=\"middle\" style=\"font-weight:600\">",
                         kevo__report_fix(t, top + gh / 2, 1));
        kevo__report_escape(b, dims[1].name ? dims[1].name : "", (size_t)-1);
        kevo__buf_puts(b, "</text>");
    }
    /* The legend: the colour scale from the lowest to the highest fitness,
     * and the empty cell. */
    double lx = left + gw + 24;
    for (int k = 0; k < 24; k++) {
        colour((23 - k) / 23.0, col, &dark);
        kevo__buf_printf(b,
                         "<rect x=\"%s\" y=\"%s\" width=\"14\" height=\"%s\" "
                         "fill=\"%s\"/>",
                         kevo__report_fix(t, lx, 1),
                         kevo__report_fix(u, top + lh * k / 24, 2),
                         kevo__report_fix(v, lh / 24 + 0.3, 2), col);
    }
    kevo__buf_printf(
        b,
        "<text x=\"%s\" y=\"%s\">%s</text>"
        "<text x=\"%s\" y=\"%s\">%s</text>",
        kevo__report_fix(t, lx + 18, 1), kevo__report_fix(u, top + 9, 1),
        kevo__report_sig(v, g->hi, 3), t, kevo__report_fix(w, top + lh, 1),
        kevo__report_sig(col, g->lo, 3));
    kevo__buf_printf(
        b,
        "<rect x=\"%s\" y=\"%s\" width=\"14\" height=\"10\" "
        "fill=\"#e6e6e6\"/><text x=\"%s\" y=\"%s\">empty</text>"
        "</g>\n</svg>\n",
        kevo__report_fix(t, lx, 1), kevo__report_fix(u, top + lh + 12, 1),
        kevo__report_fix(v, lx + 18, 1), kevo__report_fix(w, top + lh + 21, 1));
}

kevo_status kevo__report_svg_archive(kevo_buf *b, const kevo_report_in *in,
                                     const json_t *arch, kevo_jpath *p)
{
    json_t *dims_json, *elites, *v;
    double islands, cells, filled, qd;
    dim dims[2] = {{0}};
    grid g = {0};
    size_t i, ndims = 0;
    char t[32], u[32];
    kevo_status rc;
    if (!arch) {
        kevo__buf_puts(b, "<p class=\"note\">No archive in the summary.</p>\n");
        return KEVO_OK;
    }
    if ((rc = kevo__report_num(in, arch, "islands", p, &islands)) ||
        (rc = kevo__report_num(in, arch, "cells", p, &cells)) ||
        (rc = kevo__report_num(in, arch, "filled", p, &filled)) ||
        (rc = kevo__report_num(in, arch, "qd_score", p, &qd)) ||
        (rc = kevo__report_arr(in, arch, "dimensions", p, &dims_json)) ||
        (rc = kevo__report_arr(in, arch, "elites", p, &elites)))
        return rc;
    size_t mark = kevo__jpath_key(p, "dimensions");
    json_array_foreach (dims_json, i, v) {
        size_t m2 = kevo__jpath_index(p, i);
        dim d;
        if ((rc = read_dim(in, v, p, &d)))
            return rc;
        if (i < 2)
            dims[i] = d;
        ndims++;
        kevo__jpath_pop(p, m2);
    }
    kevo__jpath_pop(p, mark);
    g.nx = ndims > 0 ? dims[0].bins : 1;
    g.ny = ndims > 1 ? dims[1].bins : 1;
    if (g.nx * g.ny > MAX_CELLS) {
        kevo__buf_printf(b,
                         "<p class=\"note\">The archive's first two "
                         "dimensions have %zu cells: more than the report "
                         "draws (%d).</p>\n",
                         g.nx * g.ny, MAX_CELLS);
        return KEVO_OK;
    }
    g.fit = malloc(g.nx * g.ny * sizeof *g.fit);
    g.id = malloc(g.nx * g.ny * sizeof *g.id);
    g.island = malloc(g.nx * g.ny * sizeof *g.island);
    if (!g.fit || !g.id || !g.island) {
        rc = kevo__error_set(in->err, KEVO_ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < g.nx * g.ny; i++)
        g.fit[i] = NAN;
    mark = kevo__jpath_key(p, "elites");
    if ((rc = fill_grid(in, elites, p, dims, ndims, &g)))
        goto out;
    kevo__jpath_pop(p, mark);
    draw_grid(b, dims, ndims, &g);
    kevo__buf_puts(b, "<p class=\"note\">");
    if (!isnan(filled) && !isnan(cells))
        kevo__buf_printf(b, "%s of %s cells filled",
                         kevo__report_fix(t, filled, 0),
                         kevo__report_fix(u, cells, 0));
    else
        kevo__buf_printf(b, "%zu elites", json_array_size(elites));
    kevo__buf_printf(b, "; QD score %s. Colour: fitness, from %s",
                     kevo__report_sig(t, qd, 3), kevo__report_sig(u, g.lo, 3));
    kevo__buf_printf(b, " to %s; grey cells are empty.",
                     kevo__report_sig(t, g.hi, 3));
    if (islands > 1)
        kevo__buf_printf(b,
                         " The %s islands are merged: each cell shows "
                         "the best of their elites.",
                         kevo__report_fix(t, islands, 0));
    if (ndims > 2)
        kevo__buf_printf(b,
                         " The archive has %zu dimensions: each cell shows "
                         "the best fitness over the other %zu.",
                         ndims, ndims - 2);
    if (ndims == 1)
        kevo__buf_puts(b, " One dimension: a single row.");
    kevo__buf_puts(b, "</p>\n");
out:
    free(g.fit);
    free(g.id);
    free(g.island);
    return rc;
}

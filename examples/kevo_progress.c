/*
 * kevo_progress.c: the progress output of `kevo search`: the live line and
 * the plain lines (see kevo_progress.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kevo_progress.h"

#define ANSI_RESET "\033[0m"
#define ANSI_BEST "\033[1;32m"     /* bold green */
#define ANSI_CHAMPION "\033[1;36m" /* bold cyan */
#define ANSI_LEFT "\033[33m"       /* yellow */
#define ANSI_NONE "\033[2m"        /* dim: a value not known yet */

double progress_time_left(double seconds_left, uint64_t evaluations,
                          uint64_t max_evals, double evals_per_second)
{
    double left = NAN;
    if (isfinite(seconds_left) && seconds_left >= 0)
        left = seconds_left;
    if (max_evals > 0 && isfinite(evals_per_second) && evals_per_second > 0) {
        uint64_t todo = evaluations < max_evals ? max_evals - evaluations : 0;
        double by_evals = (double)todo / evals_per_second;
        if (isnan(left) || by_evals < left)
            left = by_evals;
    }
    return left;
}

size_t progress_duration(double seconds, char *buf, size_t size)
{
    int n;
    if (!isfinite(seconds) || seconds < 0) {
        n = snprintf(buf, size, "--");
    } else {
        long long s = llround(seconds);
        if (s < 60)
            n = snprintf(buf, size, "%llds", s);
        else if (s < 3600)
            n = snprintf(buf, size, "%lldm%02llds", s / 60, s % 60);
        else
            n = snprintf(buf, size, "%lldh%02lldm", s / 3600, s / 60 % 60);
    }
    return n < 0 ? 0 : (size_t)n;
}

/* ---- the live line -------------------------------------------------------
 * The line is made of fields, each with a plain text (whose length is its
 * width) and the same text with colour. Fields are kept in order of
 * importance until the next one does not fit, and shown in their own
 * order. */

enum { FIELD_MAX = 7, FIELD_TEXT = 96 };

typedef struct field {
    char plain[FIELD_TEXT];
    char colored[FIELD_TEXT];
    int rank; /* 0 is the most important */
} field;

/* A field "LABEL VALUE": the value coloured with escape when color. */
static void set_field(field *f, int rank, const char *label, const char *value,
                      const char *escape, bool color)
{
    const char *sep = label[0] ? " " : "";
    f->rank = rank;
    snprintf(f->plain, sizeof f->plain, "%s%s%s", label, sep, value);
    if (color && escape)
        snprintf(f->colored, sizeof f->colored, "%s%s%s%s%s", label, sep,
                 escape, value, ANSI_RESET);
    else
        snprintf(f->colored, sizeof f->colored, "%s", f->plain);
}

static void fitness_text(double f, char *buf, size_t size)
{
    if (isnan(f))
        snprintf(buf, size, "--");
    else
        snprintf(buf, size, "%.3f", f);
}

static void rate_text(double r, char *buf, size_t size)
{
    if (!isfinite(r) || r <= 0)
        snprintf(buf, size, "--");
    else if (r < 10)
        snprintf(buf, size, "%.2f", r);
    else if (r < 100)
        snprintf(buf, size, "%.1f", r);
    else
        snprintf(buf, size, "%.0f", r);
}

static void tokens_text(uint64_t t, char *buf, size_t size)
{
    if (t < 1000)
        snprintf(buf, size, "%llu", (unsigned long long)t);
    else if (t < 1000000)
        snprintf(buf, size, "%.1fk", (double)t / 1e3);
    else
        snprintf(buf, size, "%.1fM", (double)t / 1e6);
}

/* Appends s to buf (of size, holding *len bytes), cutting it when full. */
static void append(char *buf, size_t size, size_t *len, const char *s)
{
    if (*len + 1 >= size)
        return;
    size_t n = strlen(s);
    if (n > size - 1 - *len)
        n = size - 1 - *len;
    memcpy(buf + *len, s, n);
    *len += n;
    buf[*len] = '\0';
}

static size_t make_fields(const progress_values *v, bool color, field *f)
{
    char value[32], value2[128];
    size_t n = 0;

    int digits = snprintf(NULL, 0, "%llu", (unsigned long long)v->max_evals);
    if (v->max_evals > 0)
        snprintf(value, sizeof value, "%*llu/%llu evals", digits,
                 (unsigned long long)v->evaluations,
                 (unsigned long long)v->max_evals);
    else
        snprintf(value, sizeof value, "%llu evals",
                 (unsigned long long)v->evaluations);
    set_field(&f[n++], 0, "", value, NULL, color);

    fitness_text(v->best, value, sizeof value);
    set_field(&f[n++], 1, "best", value, isnan(v->best) ? ANSI_NONE : ANSI_BEST,
              color);
    fitness_text(v->champion, value, sizeof value);
    set_field(&f[n++], 2, "champion", value,
              isnan(v->champion) ? ANSI_NONE : ANSI_CHAMPION, color);

    snprintf(value, sizeof value, "%.1f%%",
             isfinite(v->coverage) ? 100 * v->coverage : 0.0);
    set_field(&f[n++], 6, "cov", value, NULL, color);

    rate_text(v->evals_per_second, value, sizeof value);
    snprintf(value2, sizeof value2, "%s ev/s", value);
    set_field(&f[n++], 5, "", value2, NULL, color);

    if (v->llm) {
        tokens_text(v->tokens, value, sizeof value);
        snprintf(value2, sizeof value2, "%s tok, cost %.2f", value,
                 isfinite(v->cost) ? v->cost : 0.0);
        set_field(&f[n++], 4, "", value2, NULL, color);
    }

    progress_duration(v->seconds_left, value, sizeof value);
    snprintf(value2, sizeof value2, "%s left", value);
    set_field(&f[n++], 3, "", value2, isnan(v->seconds_left) ? NULL : ANSI_LEFT,
              color);
    return n;
}

size_t progress_line(const progress_values *v, int width, bool color, char *buf,
                     size_t size)
{
    static const char sep[] = "  ";
    field f[FIELD_MAX];
    bool keep[FIELD_MAX] = {false};
    size_t n = make_fields(v, color, f), len = 0, used;

    if (size == 0)
        return 0;
    buf[0] = '\0';
    if (width < 1)
        width = 1;
    /* The evaluation count (rank 0) always stays, cut to the width. */
    used = strlen(f[0].plain);
    if (used > (size_t)width) {
        f[0].plain[width] = '\0';
        used = (size_t)width;
    }
    keep[0] = true;
    for (int rank = 1; rank < FIELD_MAX; rank++) {
        size_t i = 1;
        while (i < n && f[i].rank != rank)
            i++;
        if (i == n)
            continue;
        size_t w = strlen(sep) + strlen(f[i].plain);
        if (used + w > (size_t)width)
            break;
        keep[i] = true;
        used += w;
    }
    for (size_t i = 0; i < n; i++) {
        if (!keep[i])
            continue;
        if (i > 0)
            append(buf, size, &len, sep);
        append(buf, size, &len, i == 0 ? f[0].plain : f[i].colored);
    }
    return used;
}

bool progress_color_wanted(bool tty, const char *no_color)
{
    return tty && (!no_color || !no_color[0]);
}

int progress_terminal_width(int fd)
{
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

bool progress_due(double *last, double now)
{
    if (*last >= 0 && now - *last < PROGRESS_INTERVAL)
        return false;
    *last = now;
    return true;
}

/* ---- plain lines --------------------------------------------------------
 */

size_t progress_champion_line(double fitness, uint64_t id,
                              const char *operator_name, uint64_t evaluations,
                              char *buf, size_t size)
{
    char fit[32];
    fitness_text(fitness, fit, sizeof fit);
    int n =
        snprintf(buf, size,
                 "champion: fitness %s (candidate %llu%s%s) after %llu "
                 "evaluation%s",
                 fit, (unsigned long long)id, operator_name ? ", " : "",
                 operator_name ? operator_name : "",
                 (unsigned long long)evaluations, evaluations == 1 ? "" : "s");
    return n < 0 ? 0 : (size_t)n;
}

size_t progress_checkpoint_line(const progress_values *v, char *buf,
                                size_t size)
{
    char evals[64], best[32], rate[32];
    if (v->max_evals > 0)
        snprintf(evals, sizeof evals, "%llu/%llu",
                 (unsigned long long)v->evaluations,
                 (unsigned long long)v->max_evals);
    else
        snprintf(evals, sizeof evals, "%llu",
                 (unsigned long long)v->evaluations);
    fitness_text(v->best, best, sizeof best);
    rate_text(v->evals_per_second, rate, sizeof rate);
    int n = snprintf(buf, size,
                     "checkpoint: %s evaluations, best %s, coverage %.1f%%, "
                     "%s evaluations/s",
                     evals, best,
                     isfinite(v->coverage) ? 100 * v->coverage : 0.0, rate);
    return n < 0 ? 0 : (size_t)n;
}

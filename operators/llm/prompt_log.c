/*
 * prompt_log.c: a compiler's log reduced to what a model needs: its error
 * and warning lines, errors first, each with the source line NVRTC quotes
 * after it, capped, and a count of what was left out.
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "prompt_eval.h"

/* A log line longer than this is cut. */
#define LOG_LINE_MAX 300

/* NVRTC's closing count ("2 errors detected in the compilation of ...") and
 * its remarks say nothing a model needs. */
static bool log_noise(const char *s, size_t n)
{
    while (n > 0 && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    if (n >= 7 && strncasecmp(s, "Remark:", 7) == 0)
        return true;
    for (size_t i = 0; i + 8 <= n; i++) {
        if (strncmp(s + i, "detected", 8) == 0 &&
            (strncmp(s, "1 error", 7) == 0 || isdigit((unsigned char)*s)))
            return true;
    }
    return false;
}

/* 2 for a line that says error, 1 for one that says warning, else 0. */
static int log_line_rank(const char *s, size_t n)
{
    int rank = 0;
    if (log_noise(s, n))
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (n - i >= 5 && strncasecmp(s + i, "error", 5) == 0)
            return 2;
        if (n - i >= 7 && strncasecmp(s + i, "warning", 7) == 0)
            rank = 1;
    }
    return rank;
}

/* NVRTC quotes the source line after a diagnostic, indented, and marks the
 * column on the next line with a lone '^': the quoted line is kept with
 * its diagnostic, the marker is not. */
static bool is_quote(const char *s, size_t n)
{
    if (n == 0 || !isspace((unsigned char)s[0]))
        return false;
    bool text = false;
    for (size_t i = 0; i < n; i++) {
        if (!isspace((unsigned char)s[i]) && s[i] != '^')
            text = true;
    }
    return text;
}

typedef struct distill {
    llm_buf *out;
    size_t errors, warnings;         /* diagnostics of each rank seen */
    size_t error_room, warning_room; /* diagnostics of each rank to keep */
    size_t dropped;
    bool kept_last; /* the line before was a diagnostic that was kept */
} distill;

/* Calls fn on each line of log (without its line ending). */
static void each_line(const char *log,
                      void (*fn)(distill *, const char *, size_t), distill *d)
{
    const char *p = log;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        size_t m = n;
        if (m > 0 && p[m - 1] == '\r')
            m--;
        fn(d, p, m);
        p += eol ? n + 1 : n;
    }
}

static void count_line(distill *d, const char *s, size_t n)
{
    int rank = log_line_rank(s, n);
    if (rank == 2)
        d->errors++;
    else if (rank == 1)
        d->warnings++;
}

static void put_cut(llm_buf *b, const char *s, size_t n)
{
    size_t m = n < LOG_LINE_MAX ? n : LOG_LINE_MAX;
    kevo__llm_buf_append(b, s, m);
    kevo__llm_buf_puts(b, m < n ? " ...\n" : "\n");
}

static void keep_line(distill *d, const char *s, size_t n)
{
    int rank = log_line_rank(s, n);
    if (rank == 0) {
        if (d->kept_last && is_quote(s, n))
            put_cut(d->out, s, n);
        d->kept_last = false;
        return;
    }
    size_t *room = rank == 2 ? &d->error_room : &d->warning_room;
    d->kept_last = *room > 0;
    if (*room == 0) {
        d->dropped++;
        return;
    }
    (*room)--;
    put_cut(d->out, s, n);
}

char *kevo__llm_distill_log(const char *log, size_t max_lines)
{
    llm_buf b = {0};
    distill d = {.out = &b};
    kevo__llm_buf_puts(&b, "");
    /* Errors first: warnings fill what room the errors leave. */
    each_line(log ? log : "", count_line, &d);
    d.error_room = d.errors < max_lines ? d.errors : max_lines;
    d.warning_room = max_lines - d.error_room;
    each_line(log ? log : "", keep_line, &d);
    if (d.dropped)
        kevo__llm_buf_printf(
            &b, "(%zu more error and warning lines left out)\n", d.dropped);
    return kevo__llm_buf_take(&b);
}

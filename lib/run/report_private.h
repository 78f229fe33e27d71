/*
 * report_private.h: what the parts of the report share: the page
 * (report.c), its tables (report_tables.c), its charts (report_svg.c) and
 * the reading of the run directory's files (report_read.c): typed reads of
 * JSON members, HTML escaping, number formatting, and the evaluations read
 * from events.jsonl.
 */
#ifndef KEVO_REPORT_PRIVATE_H
#define KEVO_REPORT_PRIVATE_H

#include <kevo/report.h>

#include "core/jsonutil.h"
#include "core/kevo_private.h"

/* The file a JSON value came from, for messages, and the error record. */
typedef struct kevo_report_in {
    const char *origin;
    kevo_error *err;
} kevo_report_in;

/* Typed reads of obj's member key, with path naming obj (restored on
 * return). An absent member or null gives NaN, INT64_MIN or NULL; a member
 * of another type fails with KEVO_EINVALID naming the file and the path. */
kevo_status kevo__report_num(const kevo_report_in *in, const json_t *obj,
                             const char *key, kevo_jpath *path, double *out);
kevo_status kevo__report_int(const kevo_report_in *in, const json_t *obj,
                             const char *key, kevo_jpath *path, int64_t *out);
kevo_status kevo__report_str(const kevo_report_in *in, const json_t *obj,
                             const char *key, kevo_jpath *path,
                             const char **out);
kevo_status kevo__report_arr(const kevo_report_in *in, const json_t *obj,
                             const char *key, kevo_jpath *path, json_t **out);
kevo_status kevo__report_obj(const kevo_report_in *in, const json_t *obj,
                             const char *key, kevo_jpath *path, json_t **out);

/* A boolean member: 1, 0, or -1 when absent or null. */
kevo_status kevo__report_bool(const kevo_report_in *in, const json_t *obj,
                              const char *key, kevo_jpath *path, int *out);

/* A JSON string without a NUL inside. */
bool kevo__report_is_text(const json_t *v);

/* Appends text HTML-escaped (& < > " ' and "://", so that no text from a
 * file reads as a link or fetches anything); control characters other
 * than tab and newline become U+FFFD. n bytes, or up to the NUL for
 * (size_t)-1. */
void kevo__report_escape(kevo_buf *b, const char *text, size_t n);

/* What the page shows for an unknown value: U+2014, an em dash. */
#define KEVO__REPORT_DASH "\xe2\x80\x94"

/* Formats x with sig significant digits, without an exponent between
 * 1e-4 and 1e9, and with '.' as the decimal point whatever the locale;
 * "—" for NaN. Returns buf (size at least 32). */
const char *kevo__report_sig(char *buf, double x, int sig);
/* Formats x with decimals digits after a '.'. Returns buf (>= 32). */
const char *kevo__report_fix(char *buf, double x, int decimals);

/* A count (a whole number in a double), or the dash. Returns buf. */
const char *kevo__report_count(char *buf, double x);

/* obj's member key as a file name inside the run directory (no '/', not
 * "." or ".."), def when absent or null; KEVO_EINVALID otherwise. */
kevo_status kevo__report_file_name(const kevo_report_in *in, const json_t *obj,
                                   const char *key, kevo_jpath *path,
                                   const char *def, const char **out);

/* The tables of the page (report_tables.c), each a <section> from
 * summary.json s: the shapes; the champion and its gate; the operators
 * and, when there are any, the prompts; the per-shape tuning of the
 * dispatch file, when it exists in run_dir. Each returns KEVO_OK,
 * KEVO_EINVALID naming the file and the path of a bad value, or, for the
 * tuning, the errors of reading and parsing its file. */
kevo_status kevo__report_shapes(kevo_buf *b, const kevo_report_in *in,
                                const json_t *s);
kevo_status kevo__report_gate(kevo_buf *b, const kevo_report_in *in,
                              const json_t *s);
kevo_status kevo__report_operators(kevo_buf *b, const kevo_report_in *in,
                                   const json_t *s);
kevo_status kevo__report_tuning(kevo_buf *b, const kevo_report_in *in,
                                const json_t *s, const char *run_dir);

/* One "eval" event of events.jsonl. */
typedef struct kevo_report_eval {
    double n;       /* the evaluation's number */
    double fitness; /* 0 for failures */
    double best;    /* best so far, NaN when the event had none */
    int64_t id;     /* INT64_MIN when unknown */
    char verdict[24];
    bool ok;
} kevo_report_eval;

/* One "gate" event: at the evaluation n that preceded it. */
typedef struct kevo_report_gate {
    double n;
    double fitness;  /* training fitness */
    double held_out; /* NaN when unknown */
    int64_t id;
    bool passed;
} kevo_report_gate;

/* What the report takes from events.jsonl. */
typedef struct kevo_report_events {
    bool present;     /* the file exists */
    size_t lines;     /* lines read, malformed ones included */
    size_t malformed; /* lines skipped */
    kevo_report_eval *evals;
    size_t nevals, capevals;
    kevo_report_gate *gates;
    size_t ngates, capgates;
} kevo_report_events;

/* The best-fitness history of summary.json: pairs (n, best). */
typedef struct kevo_report_history {
    double (*pt)[2];
    size_t n;
} kevo_report_history;

/* Reads run_dir/events.jsonl into ev (nothing when the file does not
 * exist; ev->present says). Malformed lines, and "eval" and "gate" events
 * with fields of the wrong type, are skipped and counted. Returns KEVO_OK,
 * KEVO_EIO or KEVO_ENOMEM. kevo__report_events_free() frees what it
 * read. */
kevo_status kevo__report_read_events(const char *run_dir,
                                     kevo_report_events *ev, kevo_error *err);
void kevo__report_events_free(kevo_report_events *ev);

/* Reads summary.json's "history" into h (h->pt is to be freed). Returns
 * KEVO_OK, KEVO_EINVALID or KEVO_ENOMEM. */
kevo_status kevo__report_read_history(const kevo_report_in *in,
                                      const json_t *sum,
                                      kevo_report_history *h);

/* The chart of the best fitness over the evaluations: one <svg> and its
 * caption. evaluations is the summary's count (NaN when unknown). Returns
 * false when out of memory. */
bool kevo__report_svg_fitness(kevo_buf *b, const kevo_report_events *ev,
                              const kevo_report_history *hist,
                              double evaluations);

/* The archive's heat map from summary.json's "archive" object: one <svg>,
 * its legend and notes. Returns KEVO_OK, KEVO_EINVALID for fields of the
 * wrong type, or KEVO_ENOMEM. */
kevo_status kevo__report_svg_archive(kevo_buf *b, const kevo_report_in *in,
                                     const json_t *archive, kevo_jpath *path);

#endif

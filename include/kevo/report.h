/*
 * kevo/report.h: the report of a run directory (see kevo/rundir.h and
 * kevo/search.h): one self-contained HTML page, built from the files a
 * search leaves there (summary.json; events.jsonl, best.cu and
 * best.dispatch.json when they exist). The page holds the run's figures, a
 * chart of the best fitness over the evaluations, a heat map of the
 * archive, the per-shape table, the held-out gate, the operators and
 * prompts, the per-shape tuning and the champion's source. It needs no
 * script and fetches nothing: its CSS and SVG charts are inline.
 */
#ifndef KEVO_REPORT_H
#define KEVO_REPORT_H

#include <kevo/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * kevo_report_html: builds the report of the run directory at run_dir and
 * stores it in *html, a new NUL-terminated string the caller frees with
 * free(). Only reads the directory (and takes no lock). Every text taken
 * from the files is HTML-escaped. A malformed line of events.jsonl, or an
 * event whose fields have the wrong types, is skipped and counted (the page
 * says how many). Returns KEVO_OK; KEVO_ENOENT when run_dir/summary.json
 * does not exist; KEVO_EPARSE for a file that is not JSON, with the file,
 * line and column; KEVO_EINVALID for a field of the wrong type, naming the
 * file and the field's JSON path; KEVO_EFORMAT for a summary of another
 * format or a newer version; KEVO_EIO; KEVO_ENOMEM; KEVO_EINVAL for a NULL
 * argument. On failure *html is NULL.
 */
KEVO_API kevo_status kevo_report_html(const char *run_dir, char **html,
                                      kevo_error *err);

/*
 * kevo_report_write: builds the report of run_dir as kevo_report_html()
 * does and writes it to run_dir/report.html atomically (a temporary file in
 * the same directory, fsync, rename), so a reader sees the old page or the
 * new one, never a part. It does not take the run directory's lock, so the
 * program that runs a search may call this while the search holds it; the
 * search engine writes no report itself. Returns KEVO_OK or the errors of
 * kevo_report_html(); KEVO_EIO when the page cannot be written.
 */
KEVO_API kevo_status kevo_report_write(const char *run_dir, kevo_error *err);

#ifdef __cplusplus
}
#endif

#endif

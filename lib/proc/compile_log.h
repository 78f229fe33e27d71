/*
 * compile_log.h: the reason an NVRTC log gives for a failed compile, the
 * same at both ends of a compile process's pipe.
 *
 * A compile process (worker/compile.c) sends with every failure a one-line
 * reason taken from NVRTC's log, which the events, the report and the
 * repair turn show; the compile cache keeps it. The line that says what is
 * wrong is the first error of the log: a front end's
 * "candidate.cu(12): error: expected a ';'", or ptxas's
 * "ptxas application ptx input, line 26; error   : Unknown modifier" and
 * "ptxas fatal   : (C7602) Insufficient registers (40) to compile
 * instruction ...", never ptxas's closing "ptxas fatal   : Ptx assembly
 * aborted due to errors", which says only that there were errors.
 */
#ifndef KEVO_COMPILE_LOG_H
#define KEVO_COMPILE_LOG_H

#include <stdbool.h>

#include "core/kevo_private.h"

/* How many bytes of a log line a reason keeps. */
#define KEVO__COMPILE_REASON_LINE_MAX 400

/*
 * kevo__compile_log_reason: why the compile whose NVRTC log is log (may
 * be NULL) failed, as a new string "compile error: LINE": LINE is the
 * log's first error line (a line with the word "error" or "fatal" before a
 * colon), ptxas's generic closing line only when there is no other, and
 * then any line that mentions "error"; when that first line is ptxas's
 * and the next error line is too, both are given, joined by "; " (ptxas
 * often says in two lines what is wrong with one instruction). Each line
 * is cut at KEVO__COMPILE_REASON_LINE_MAX bytes. "compile error" alone
 * when the log has no such line. Returns NULL only when out of memory.
 */
char *kevo__compile_log_reason(const char *log);

/* The reason is one kevo__compile_log_reason could have given (it starts
 * "compile error"), so that it may be made again from the log. */
bool kevo__compile_log_reason_is(const char *reason);

#endif

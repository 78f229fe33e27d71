/*
 * kevo/eventlog.h: reading an events.jsonl file (see kevo/rundir.h) line by
 * line. A line that is not a JSON object with a string "type" (a line cut
 * short by a killed run, say) is reported with its line number and skipped;
 * reading goes on with the next line.
 *
 * Every function here is experimental (kevo-api(7)).
 */
#ifndef KEVO_EVENTLOG_H
#define KEVO_EVENTLOG_H

#include <kevo/error.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_event_reader kevo_event_reader;

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_event_reader_open: opens the file at path for reading in *out.
 * Returns KEVO_OK, KEVO_ENOENT, KEVO_EIO or KEVO_ENOMEM.
 */
KEVO_API kevo_status kevo_event_reader_open(const char *path,
                                            kevo_event_reader **out,
                                            kevo_error *err);

/* kevo_event_reader_free: closes the file. NULL does nothing. */
KEVO_API void kevo_event_reader_free(kevo_event_reader *reader);

/*
 * kevo_event_reader_next: reads the next line. Returns KEVO_OK with the
 * line's JSON text in *json (borrowed; valid until the next call) and its
 * 1-based number in *line (either may be NULL); KEVO_EPARSE for a malformed
 * line, with err naming the file, the line and the fault (the next call
 * reads on); KEVO_DONE at the end of the file; KEVO_EIO.
 */
KEVO_API kevo_status kevo_event_reader_next(kevo_event_reader *reader,
                                            const char **json, size_t *line,
                                            kevo_error *err);

/*
 * kevo_event_reader_type: the "type" of the event the last successful
 * kevo_event_reader_next() returned, borrowed with the same lifetime; NULL
 * before the first.
 */
KEVO_API const char *kevo_event_reader_type(const kevo_event_reader *reader);

/* kevo_event_reader_malformed: how many malformed lines were reported. */
KEVO_API size_t kevo_event_reader_malformed(const kevo_event_reader *reader);
#endif /* KEVO_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif

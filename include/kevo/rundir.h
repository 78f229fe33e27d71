/*
 * kevo/rundir.h: a run directory. Where a search writes what it does:
 *
 *   events.jsonl     one JSON object a line, one line per event, each
 *                    written with a single write() as it happens
 *   checkpoint.json  the state to resume from, replaced atomically
 *   candidates/      sources of evaluated candidates
 *   llm/             requests and replies of LLM operators
 *
 * and any other file the caller writes with kevo_rundir_write_file(). Every
 * file kevo writes whole is written atomically (a temporary file, fsync,
 * rename, fsync of the directory), so a killed run leaves the last good
 * version. A run directory is locked while open: two processes cannot write
 * the same one.
 *
 * Every function here is experimental (kevo-api(7)): a program writes a
 * run directory through kevo_search_open_run().
 */
#ifndef KEVO_RUNDIR_H
#define KEVO_RUNDIR_H

#include <kevo/error.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_rundir kevo_rundir;

/* Flags for kevo_rundir_open. */
enum {
    /* Fail with KEVO_EEXIST when the directory already holds events.jsonl
     * or checkpoint.json (a new run must not mix with an old one). */
    KEVO_RUNDIR_NEW = 1u << 0,
    /* Fail with KEVO_ENOENT unless the directory holds checkpoint.json
     * (continuing a run). */
    KEVO_RUNDIR_RESUME = 1u << 1
};

#ifdef KEVO_EXPERIMENTAL /* see kevo-api(7) */
/*
 * kevo_rundir_open: opens (and creates, with its parents) the run directory
 * at path and its subdirectories, takes its lock, and opens events.jsonl for
 * appending. When the last line of an existing events.jsonl was cut short
 * (a killed run), a newline ends it so that new events start on a line of
 * their own; the cut line stays for the reader to report. Event sequence
 * numbers continue after the lines already there. Returns KEVO_OK;
 * KEVO_EEXIST or KEVO_ENOENT as flags ask; KEVO_ESTATE when another process
 * holds the lock; KEVO_EIO; KEVO_EINVAL for unknown or contradictory flags.
 */
KEVO_API kevo_status kevo_rundir_open(const char *path, unsigned flags,
                                      kevo_rundir **out, kevo_error *err);

/* kevo_rundir_free: closes the directory's files and releases its lock.
 * NULL does nothing. */
KEVO_API void kevo_rundir_free(kevo_rundir *dir);

/* kevo_rundir_path: the directory's path, borrowed. */
KEVO_API const char *kevo_rundir_path(const kevo_rundir *dir);

/*
 * kevo_rundir_event: appends one event to events.jsonl:
 * {"seq": N, "time": SECONDS, "type": type, ...fields}, where fields is a
 * JSON object's text (or NULL) whose members are added after those three
 * (it must not use their names). The line reaches the kernel before the
 * call returns. Returns KEVO_OK; KEVO_EINVAL for an empty type, for fields
 * that is not a JSON object or uses a reserved name; KEVO_EIO.
 */
KEVO_API kevo_status kevo_rundir_event(kevo_rundir *dir, const char *type,
                                       const char *fields, kevo_error *err);

/*
 * kevo_rundir_event_count: how many events the directory's events.jsonl
 * holds, those of earlier runs included (the next event's seq).
 */
KEVO_API uint64_t kevo_rundir_event_count(const kevo_rundir *dir);

/*
 * kevo_rundir_write_file: writes len bytes of data atomically to relpath
 * inside the directory (such as "candidates/42.cu" or "best.cu"; no ".."
 * and not absolute). Returns KEVO_OK, KEVO_EINVAL for a bad path, KEVO_EIO.
 */
KEVO_API kevo_status kevo_rundir_write_file(kevo_rundir *dir,
                                            const char *relpath,
                                            const void *data, size_t len,
                                            kevo_error *err);

/*
 * kevo_rundir_checkpoint: replaces checkpoint.json atomically with json,
 * which must be a JSON object's text (checked first: a bad text never
 * replaces a good checkpoint). Returns KEVO_OK, KEVO_EINVAL for text that
 * is not a JSON object, KEVO_EIO.
 */
KEVO_API kevo_status kevo_rundir_checkpoint(kevo_rundir *dir, const char *json,
                                            kevo_error *err);

/*
 * kevo_rundir_read_checkpoint: reads the checkpoint.json of the run
 * directory at path (open or not) into a new string in *json that the
 * caller frees with free(). Returns KEVO_OK; KEVO_ENOENT when there is none;
 * KEVO_EPARSE with line and column when it is not a JSON object; KEVO_EIO.
 */
KEVO_API kevo_status kevo_rundir_read_checkpoint(const char *path, char **json,
                                                 kevo_error *err);
#endif /* KEVO_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif

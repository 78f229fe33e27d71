/*
 * runlog.h: the llm operator's files in the run directory (RUN/llm/): one
 * numbered JSON file per request, per reply, per instance and per summary,
 * every one redacted of the API keys before it is written.
 *
 * Numbers form one sequence in the directory. Creating a request (or
 * instance) file with O_EXCL claims its number, so instances that share the
 * directory, and a run resumed in it, never overwrite each other's files;
 * the reply and summary files take the number their request or instance
 * claimed.
 */
#ifndef KEVO_LLM_RUNLOG_H
#define KEVO_LLM_RUNLOG_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

typedef struct llm_runlog {
    char *dir;    /* RUN/llm, or NULL: nothing is written */
    uint64_t seq; /* the last number taken */
    /* Replaced by LLM_REDACTED in every file (borrowed). */
    const char *const *secrets;
    size_t nsecrets;
} llm_runlog;

/* Makes run_dir/llm (when run_dir is not NULL) and sets the numbers to go
 * on after the largest one found there. Returns 0, or an errno value with
 * the reason in err. */
int kevo__llm_runlog_open(llm_runlog *log, const char *run_dir, char *err,
                          size_t errlen);
void kevo__llm_runlog_close(llm_runlog *log);

/* Writes value (its "seq" set to the number) to DIR/NNNNNN-SUFFIX.json
 * under the next free number, and returns the number; without a directory
 * it only takes the number. *rc gets 0 or the errno value of a failed
 * write. */
uint64_t kevo__llm_runlog_claim(llm_runlog *log, const char *suffix,
                                json_t *value, int *rc);

/* Writes value to DIR/NNNNNN-SUFFIX.json for a number already claimed (a
 * name taken all the same gets "-1", "-2", ...). Returns 0 (also without a
 * directory) or an errno value. */
int kevo__llm_runlog_save(llm_runlog *log, const char *suffix, uint64_t seq,
                          json_t *value);

/* A body as a JSON value: the parsed JSON when it parses, else a string of
 * its text made valid UTF-8. NULL when out of memory. */
json_t *kevo__llm_json_body(const char *body, size_t len);

/* A JSON string of s made valid UTF-8 first; NULL when out of memory. */
json_t *kevo__llm_json_text(const char *s);

#endif

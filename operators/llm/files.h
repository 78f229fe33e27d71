/*
 * files.h: the llm operator's files transport. Instead of POSTing a
 * request, the engine writes its body, exactly what would be POSTed to the
 * model's endpoint, as DIR/pending/NNNNNN.json, beside a sidecar
 * DIR/pending/NNNNNN.meta.json that says where to send it:
 *
 *   {"number": 7, "api": "openai", "path": "/v1/chat/completions",
 *    "url": "https://api.openai.com/v1/chat/completions",
 *    "model": "o3", "run": "/runs/r1", "request": 12}
 *
 * Both are written under a temporary name and renamed, the sidecar first,
 * so a program that sees NNNNNN.json sees both whole. Another program
 * sends it and writes what the endpoint returned (its JSON body, not
 * streamed) as DIR/done/NNNNNN.json, under a temporary name and renamed.
 * The engine reads it in kevo__llm_files_poll() and ends the request as the
 * HTTP engine would (http.h): LLM_OK with the parsed JSON when it
 * validates, LLM_MALFORMED with a reason naming the file when it does not.
 * A program that could not get a reply (kevo relay, after its retries)
 * writes a failure instead (kevo__llm_files_failure()): an error object
 * with a "kevo_relay" member,
 *
 *   {"type": "error", "error": {"type": "kevo_relay", "message": TEXT},
 *    "kevo_relay": {"outcome": "http_error", "status": 429,
 *                   "attempts": 5, "body": "the last reply's body"}}
 *
 * and the request ends with that outcome, status and body, as it would
 * have over HTTP.
 * Numbers never repeat in one directory: a new engine starts after the
 * largest number found in pending/ and done/. Files are never removed.
 *
 * The engine is single-threaded, never blocks and never sends anything.
 */
#ifndef KEVO_LLM_FILES_H
#define KEVO_LLM_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http.h"

typedef struct llm_files llm_files;

/* What one request is. Strings are copied. */
typedef struct llm_files_request {
    const char *api;   /* "openai" or "anthropic" */
    const char *url;   /* the endpoint's URL */
    const char *model; /* the model's label in the configuration */
    const char *run;   /* the run directory, or NULL */
    uint64_t request;  /* the host's request id */
    const char *body;  /* the POST body, JSON */
    size_t body_len;
    llm_http_validate_fn validate; /* may be NULL */
    llm_http_attempt_fn attempt;   /* may be NULL */
    llm_http_done_fn done;         /* required */
    void *ud;
    void *reply_ud; /* the user data of validate; NULL: ud */
} llm_files_request;

/* Called for what the engine has to say that is no request's outcome
 * (a done file for a number it never wrote). */
typedef void (*llm_files_say_fn)(void *ud, const char *text);

/* A new engine over dir, creating dir, dir/pending and dir/done as
 * needed. Returns NULL with a reason in err. */
llm_files *kevo__llm_files_new(const char *dir, size_t max_reply_bytes,
                               llm_files_say_fn say, void *say_ud, char *err,
                               size_t errlen);

/* Ends every request still waiting with LLM_CANCELLED (its files stay)
 * and frees the engine. NULL is accepted. */
void kevo__llm_files_free(llm_files *f);

/* Writes a request's files; *number gets its number. The done callback is
 * called exactly once, from kevo__llm_files_poll() or
 * kevo__llm_files_free(). Returns false with a reason in err (nothing
 * written, no callback). */
bool kevo__llm_files_submit(llm_files *f, const llm_files_request *req,
                            uint64_t *number, char *err, size_t errlen);

/* Reads the replies that arrived and ends their requests. Returns how many
 * ended. */
size_t kevo__llm_files_poll(llm_files *f);

/* Requests waiting for their done file. */
size_t kevo__llm_files_pending(const llm_files *f);

/* The directory, borrowed for the engine's life. */
const char *kevo__llm_files_dir(const llm_files *f);

/* The failure file of a request that ended as r says (r->outcome is not
 * LLM_OK), with secrets redacted from its texts, as a new string; NULL
 * when out of memory. LLM_CANCELLED is written as LLM_TRANSPORT: the
 * request is over for the program that waits. */
char *kevo__llm_files_failure(const llm_http_result *r,
                              const char *const *secrets, size_t nsecrets);

/* The number a file name NNNNNN.json starts with, or 0; with meta set,
 * NNNNNN.meta.json counts too. */
uint64_t kevo__llm_files_number(const char *name, bool meta);

/* Makes the directory path unless it is there. Returns false with a
 * reason in err. */
bool kevo__llm_files_mkdir(const char *path, char *err, size_t errlen);

/* Writes len bytes as path, through path.tmp (flushed to disk) and a
 * rename, so that a reader sees all of it or nothing. Returns false with a
 * reason in err. */
bool kevo__llm_files_write(const char *path, const char *data, size_t len,
                           char *err, size_t errlen);

/* Reads path whole, up to max bytes, as a new string (NUL-terminated;
 * *len its length). Returns NULL with a reason in err; the reason says
 * "over N bytes" for a file over max. */
char *kevo__llm_files_read(const char *path, size_t max, size_t *len, char *err,
                           size_t errlen);

/* The URL's path, from the first '/' after "scheme://host" ("/" when
 * none), as a new string; NULL when out of memory. */
char *kevo__llm_files_url_path(const char *url);

#endif

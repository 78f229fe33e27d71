/*
 * batch_private.h: what the files of the batch transport share (batch.c:
 * the engine, its calls and its polling; batch_state.c: the record of the
 * batches sent; batch_results.c: reading a batch's results).
 */
#ifndef KEVO_LLM_BATCH_PRIVATE_H
#define KEVO_LLM_BATCH_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "batch.h"
#include "buf.h"

/* Where a batch is. */
typedef enum job_state {
    J_GATHER, /* taking requests */
    J_UPLOAD, /* OpenAI: its input file is being uploaded */
    J_CREATE, /* the batch is being created */
    J_POLL,   /* created: looked at every poll interval */
    J_FETCH,  /* ended: its results are being read */
    J_DONE    /* its results are in hand */
} job_state;

typedef struct job job;

/* A request not yet ended. */
typedef struct breq {
    llm_batch_request cb; /* the callbacks and ud; strings not kept */
    char *custom_id;
    char *body; /* until the batch is sent */
    size_t body_len;
    double submitted;
    bool told_sent, told_waiting;
    char *adopted; /* sent by an earlier engine: where it waits, else
                      NULL */
    job *job;
} breq;

/* A request recorded in a batch, ended or not. */
typedef struct entry {
    char *custom_id;
    char *run;
    uint64_t request;
    uint64_t digest;
    size_t bytes;
    bool adopted; /* by a request of this engine */
} entry;

struct job {
    uint64_t number; /* of its state files, 0: none */
    job_state state;
    char *id;
    char *input_file_id;
    char *output_file_id, *error_file_id; /* OpenAI */
    char *results_url;                    /* Anthropic */
    char *status;                         /* the vendor's last word */
    char *failure;     /* why the batch itself failed, or NULL */
    double opened;     /* the first request came (monotonic) */
    double created;    /* created at the vendor (wall clock) */
    double next_poll;  /* monotonic */
    bool busy;         /* a call is under way */
    bool running;      /* a look at it in this engine found it running */
    bool fetch_errors; /* OpenAI: the error file is still to be read */
    breq **reqs;       /* not yet ended */
    size_t nreqs, capreqs;
    entry *entries;
    size_t nentries;
    llm_buf results; /* the result lines, once read */
};

struct llm_batch {
    llm_batch_config cfg;
    char **headers; /* the configuration's, without Content-Type */
    size_t nheaders;
    char *endpoint;    /* OpenAI: the batch's endpoint (the URL's path) */
    char *files_url;   /* OpenAI */
    char *batches_url; /* both */
    llm_http *http;
    job **jobs;
    size_t njobs;
    size_t pending;
    size_t busy;
    size_t created;
    bool state_read;
    bool closing;
};

/* Whether b speaks OpenAI's batch API (else Anthropic's). */
bool kevo__llm_batch_openai(const llm_batch *b);

/* Tells b's say callback, if any. */
void kevo__llm_batch_say(llm_batch *b, bool warning, const char *fmt, ...)
    LLM_PRINTF(3, 4);

/* A new empty job in b's list; NULL when out of memory. */
job *kevo__llm_batch_job_add(llm_batch *b);

/* Takes request i out of job j. */
breq *kevo__llm_batch_take_req(job *j, size_t i);

/* Ends request q (already out of its job) through its callbacks, as the
 * HTTP engine ends a request, and frees it. */
void kevo__llm_batch_end_req(llm_batch *b, breq *q, llm_outcome o, long status,
                             json_t *json, const char *body,
                             const char *reason);

/* A copy of the string at o.key, or NULL. */
char *kevo__llm_batch_jstr(json_t *o, const char *key);

/* Records job j in the state directory (once created; with its results
 * once it has ended). A failure is said, not fatal. */
void kevo__llm_batch_save_state(llm_batch *b, job *j);

/* Reads the batches earlier engines recorded in the state directory. */
void kevo__llm_batch_read_state(llm_batch *b);

/* The entry of an earlier batch recorded for the same run, request id and
 * body (digest dg) as req, not yet taken back; its job in *jp. With
 * changed not NULL, failing that, the entry for the same run and request
 * id with another body (a prompt that quotes a figure the resumed process
 * measured anew), *changed then set. */
entry *kevo__llm_batch_find_entry(llm_batch *b, const llm_batch_request *req,
                                  uint64_t dg, job **jp, bool *changed);

/* Ends the requests of j that its results answer, then the others with
 * what the batch's end says of them. */
void kevo__llm_batch_take_results(llm_batch *b, job *j);

#endif

/*
 * loopback-private.h: what the loopback server's files share: the server's
 * state (loopback-server.c runs it), and the answer to a request, which
 * loopback-answer.c decides and loopback-server.c sends.
 */
#ifndef KEVO_LOOPBACK_PRIVATE_H
#define KEVO_LOOPBACK_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "loopback-server.h"

#define LB_MAX_CONNS 1024

typedef struct text_entry {
    char *name;
    char *text;
} text_entry;

typedef struct marker_count {
    char *key;
    int n;
} marker_count;

struct conn;
typedef struct lb_file lb_file;
typedef struct lb_batch lb_batch;

struct loopback {
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    int listen_fd;
    int wake[2];
    int port;
    char url[64];
    bool stop;

    text_entry *texts;
    size_t ntexts;
    char **script;
    size_t nscript, script_pos;
    char *expect_key;
    marker_count *markers;
    size_t nmarkers;

    loopback_request **recs;
    size_t nrecs, crecs, base;
    size_t batch_calls; /* of them, calls of the batch APIs */
    int active, max_active;

    /* The batch APIs (loopback-batch.c): files, batches, and the plans
     * of the batches to come. */
    lb_file **files;
    size_t nfiles;
    lb_batch **batches;
    size_t nbatches;
    char **bplans;
    size_t nbplans, bplan_pos;

    struct conn *conns[LB_MAX_CONNS];
    size_t nconns;
};

/* A piece of an answer's body, sent delay_s after the one before it. */
typedef struct lb_piece {
    char *data;
    size_t len;
    double delay_s;
} lb_piece;

/* The answer to a request. */
typedef struct lb_reply {
    int status;
    const char *content_type; /* static */
    char *extra_headers;      /* "Name: value\r\n" lines, or NULL */
    bool chunked;             /* Transfer-Encoding: chunked (a stream) */
    lb_piece *pieces;         /* the body */
    size_t npieces;
    long declared_len; /* a Content-Length that lies, or -1 */
    bool close_after;  /* close the connection after the answer */
    bool cut;          /* a chunked body: close before its last chunk */
    bool no_answer;    /* close without answering */
    double delay_s;    /* before the status line */
    long in_tokens, out_tokens;
} lb_reply;

/* Decides the answer to request q (its behaviour, status and usage are
 * recorded in q); called with lb->mu held. */
void lb_answer(loopback *lb, loopback_request *q, lb_reply *r);

/* Answers a request of the batch APIs (files, batches, message batches);
 * false when q is not one. Called with lb->mu held. */
bool lb_batch_answer(loopback *lb, loopback_request *q, lb_reply *r);

/* Frees the batch APIs' files, batches and plans. */
void lb_batches_free(loopback *lb);

/* Replaces the list *items (*n of them, *pos the next to take) by the
 * comma-separated items of text. */
void lb_list_set(char ***items, size_t *n, size_t *pos, const char *text);

/* Adds q to the requests recorded (taking it); lb->mu held. */
void lb_record(loopback *lb, loopback_request *q);

/* The key a request sent in its API's header, in a new string, or NULL. */
char *lb_sent_key(const loopback_request *q);

/* Appends a body piece (a copy of data[0..len)). */
void lb_piece_add(lb_reply *r, const char *data, size_t len, double delay_s);

void lb_reply_free(lb_reply *r);

/* Allocation that aborts the test when memory runs out. */
char *lb_dupn(const char *s, size_t n);
char *lb_dup(const char *s);
void *lb_realloc(void *p, size_t n);

#endif

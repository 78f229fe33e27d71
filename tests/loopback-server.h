/*
 * loopback-server.h: a real HTTP/1.1 server on 127.0.0.1 for the llm
 * operator's tests and benchmark. It runs in a thread of the test, listens
 * on an ephemeral port, speaks the OpenAI chat-completions API (POST
 * .../chat/completions) and the Anthropic messages API (POST
 * .../v1/messages), checks each request against its API, and answers each
 * as a behaviour says.
 *
 * Choosing the behaviour: a request whose body holds a marker
 *
 *     [[kevo-loopback:KEY:B1,B2,...]]
 *
 * gets B1 the first time a request with that KEY comes, B2 the second time
 * (a retry, say), and so on, the last one repeating. A request without a
 * marker takes the next behaviour of the script (loopback_script()), and
 * "ok" once the script is used up. Behaviours:
 *
 *   ok             200, the text registered as "default" (or a short
 *                  sentence without code)
 *   NAME           200, the text registered as NAME (a whole kernel, edits,
 *                  no code, ...); "@KEY@" in it becomes the key received
 *                  and "@SEQ@" the request's number (counting from 0)
 *   malformed      200, a JSON body cut short (its Content-Length is right)
 *   badshape       200, valid JSON without the API's reply fields
 *   429[:S]        429 with "Retry-After: S" (default 1)
 *   429date:S      429 with Retry-After as an HTTP date S seconds ahead
 *   429ms:MS       429 with "retry-after-ms: MS" only
 *   429none        429 without Retry-After
 *   400, 401, 404, 500, 502, 503, 529
 *                  that status with the API's error object
 *   echo           401 whose error message quotes the key received
 *   slow:MS[:NAME] wait MS milliseconds, then as ok (or NAME)
 *   truncated      200 whose Content-Length is larger than the body sent;
 *                  then the connection closes
 *   huge:BYTES     200, a valid reply of about BYTES bytes
 *   close          close the connection without answering
 *   revise[:MODE]  200, a revised meta-prompt: the sections of the first
 *                  ```json block of the request's user message, each
 *                  with a sentence added, in a ```json block; MODE
 *                  "wrapped" answers {"name", "sections": {...}},
 *                  "twice" a block of the sections unchanged and then one
 *                  of the revision; with no block in the request, a reply
 *                  without JSON
 *
 * Replies carry usage: input tokens = request body bytes / 4 + 1, output
 * tokens = text bytes / 4 + 1.
 */
#ifndef KEVO_LOOPBACK_SERVER_H
#define KEVO_LOOPBACK_SERVER_H

#include <stddef.h>

typedef struct loopback loopback;

/* One request the server received. Fields are owned by the server and
 * stay valid until loopback_stop(). */
typedef struct loopback_request {
    char *method;
    char *path;
    char *headers; /* "Name: value\r\n" lines as received */
    char *body;
    size_t body_len;
    char *api;       /* "openai", "anthropic", or "" for another path */
    char *model;     /* the request's "model", or "" */
    char *behaviour; /* the behaviour it got */
    int status;      /* the status sent, 0 when none was */
    long input_tokens, output_tokens; /* the usage reported, 200s only */
    double received;                  /* seconds on the monotonic clock */
} loopback_request;

/* Starts a server. Returns NULL (with a message on stderr) on failure. */
loopback *loopback_start(void);

/* Stops the thread, closes every connection and frees the server. NULL is
 * accepted. */
void loopback_stop(loopback *lb);

int loopback_port(const loopback *lb);

/* "http://127.0.0.1:PORT", borrowed. */
const char *loopback_url(const loopback *lb);

/* Registers (or replaces) the text that behaviour NAME answers with. */
void loopback_set_text(loopback *lb, const char *name, const char *text);

/* Requests without a marker take these comma-separated behaviours in
 * order (replacing what is left of an earlier script). */
void loopback_script(loopback *lb, const char *behaviours);

/* The key the server expects (NULL: any). A request of either API without
 * it in its header gets a 401. */
void loopback_expect_key(loopback *lb, const char *key);

/* How many requests came so far; request i (borrowed, or NULL). */
size_t loopback_count(loopback *lb);
const loopback_request *loopback_get(loopback *lb, size_t i);

/* The value of header name (case-insensitive) of r in a new string, or
 * NULL. */
char *loopback_header(const loopback_request *r, const char *name);

/* The most requests the server held at once (received and not yet
 * answered or dropped), and the number held now. */
int loopback_max_active(loopback *lb);
int loopback_active(loopback *lb);

/* Forgets the requests recorded so far, the marker counts and the maximum
 * of held requests. */
void loopback_reset(loopback *lb);

#endif

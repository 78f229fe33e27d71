/*
 * loopback-server.h: a real HTTP/1.1 server on 127.0.0.1 for the llm
 * operator's tests and benchmark. It runs in a thread of the test, listens
 * on an ephemeral port, speaks the OpenAI chat-completions API (POST
 * .../chat/completions) and the Anthropic messages API (POST
 * .../v1/messages) in the vendors' own formats (loopback-vendor.h), checks
 * each request as its vendor would (a 400 with the vendor's error object
 * otherwise), and answers each as a behaviour says: whole, or, when the
 * request says "stream": true, as a chunked text/event-stream of the
 * vendor's events.
 *
 * Choosing the behaviour: a request whose body holds a marker
 *
 *     [[kevo-loopback:KEY:B1,B2,...]]
 *
 * gets B1 the first time a request with that KEY comes, B2 the second time
 * (a retry, say), and so on, the last one repeating. A request without a
 * marker takes the next behaviour of the script (loopback_script()), and
 * "ok" once the script is used up. Behaviours (whole or streamed alike
 * unless said otherwise):
 *
 *   ok             200, the text registered as "default" (or a short
 *                  sentence without code)
 *   NAME           200, the text registered as NAME (a whole kernel, edits,
 *                  no code, ...); "@KEY@" in it becomes the key received
 *                  and "@SEQ@" the request's number (counting from 0)
 *                  (the calls of the batch APIs not counted)
 *   think[:NAME]   reasoning (the text "thinking", else a draft kernel
 *                  among thoughts), then the text: OpenAI's
 *                  reasoning_content field (DeepSeek, older vLLM),
 *                  Anthropic's thinking block with its signature
 *   reasoning[:NAME]  the same in OpenAI's "reasoning" field (vLLM)
 *   redacted[:NAME]   think, and an Anthropic redacted_thinking block
 *   nullcontent    reasoning of an unclosed think section and no answer:
 *                  OpenAI content null; no Anthropic text block; stopped
 *                  at max_tokens ("length" / "max_tokens")
 *   length[:NAME]  the first half of the text, stopped at max_tokens
 *   refusal        OpenAI: content null, message.refusal; Anthropic:
 *                  stop_reason "refusal" with stop_details
 *   content_filter OpenAI: half the text, finish_reason "content_filter";
 *                  Anthropic: as refusal
 *   context        Anthropic: half the text, stop_reason
 *                  "model_context_window_exceeded"; OpenAI: as context400
 *   context400     400, the vendor's error for a prompt over the context
 *                  (OpenAI code "context_length_exceeded"; Anthropic
 *                  "prompt is too long")
 *   vllmerror      400 with vLLM's older error body {"object": "error",
 *                  "message": (a context-length message), "type":
 *                  "BadRequestError", "param": null, "code": 400}
 *   plain[:STATUS] STATUS (default 502) with a proxy's HTML page
 *   longerror      400 whose error message is 5000 bytes long
 *   nousage        OpenAI: a reply (or stream) without usage, as some
 *                  servers send; Anthropic: as ok
 *   nostream       a whole reply even to a request for a stream
 *   stall:MS[:NAME]  a silence of MS milliseconds halfway through the
 *                  events (whole: through the body)
 *   trickle:MS[:NAME] a silence of MS milliseconds before every event
 *   cut, truncated streamed: the connection closes halfway through the
 *                  events, the chunked body unfinished; whole: a
 *                  Content-Length larger than the body sent, then close
 *   nodone         streamed: the text, then a clean end without the
 *                  finish, usage and last event; whole: as truncated
 *   streamerror    streamed: an error event halfway (Anthropic
 *                  overloaded_error; OpenAI {"error": {...}}); whole: 529
 *                  (Anthropic) or 500 (OpenAI)
 *   malformed      whole: a JSON body cut short (its Content-Length is
 *                  right); streamed: an event whose data is cut short
 *   badshape       valid JSON (or events) without the API's fields
 *   429[:S]        429 with "Retry-After: S" (default 1)
 *   429date:S      429 with Retry-After as an HTTP date S seconds ahead
 *   429ms:MS       429 with "retry-after-ms: MS" only
 *   429none        429 without Retry-After
 *   400, 401, 404, 500, 502, 503, 529
 *                  that status with the API's error object
 *   echo           401 whose error message quotes the key received
 *   slow:MS[:NAME] wait MS milliseconds, then as ok (or NAME)
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
 * tokens = bytes of text, reasoning and refusal / 4 + 1.
 *
 * The vendors' batch APIs (loopback-batch.c), checked and answered in
 * their formats: OpenAI's files (POST .../files, multipart/form-data with
 * purpose and file; GET .../files/ID and .../files/ID/content) and batches
 * (POST .../batches over an uploaded JSONL of {custom_id, method, url,
 * body}; GET .../batches/ID, validating, then in_progress, then
 * completed, expired, cancelled or failed, with request_counts and the
 * output and error files of {id, custom_id, response: {status_code,
 * request_id, body}, error} lines; POST .../batches/ID/cancel), and
 * Anthropic's message batches (POST .../messages/batches of {custom_id,
 * params}; GET .../batches/ID, in_progress, canceling or ended, with
 * request_counts and results_url; GET .../batches/ID/results, a JSONL of
 * {custom_id, result: {type succeeded|errored|canceled|expired, message
 * or error}}; POST .../cancel). Each request of a batch is answered, once
 * the batch ends, as the interactive endpoint answers it (the behaviours
 * above, by marker or script), and recorded with the batch's id. A batch
 * ends at the first look (GET) unless its plan (loopback_batch_script())
 * keeps it in progress, expires or cancels it, fails it or breaks a line
 * of its results.
 */
#ifndef KEVO_LOOPBACK_SERVER_H
#define KEVO_LOOPBACK_SERVER_H

#include <stdbool.h>
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
    bool stream;     /* it asked for an event stream */
    int status;      /* the status sent, 0 when none was */
    long input_tokens, output_tokens; /* the usage reported, 200s only */
    double received;                  /* seconds on the monotonic clock */
    char *batch; /* a request of a batch: the batch's id, else NULL */
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

/* Batches created from now on take these comma-separated plans in order
 * (replacing what is left of an earlier list), then "wait:0". A plan is
 * words joined by "+": wait:N (the batch stays in progress for N GETs of
 * it), expire:K or cancel:K (only its first K requests run; the others
 * expire, or are cancelled), fail (OpenAI: the batch fails validation)
 * and badline:L (result line L is cut in half). A marker
 * [[kevo-batch:PLAN]] in a batch's first request overrides the list. */
void loopback_batch_script(loopback *lb, const char *plans);

/* Batches created so far. */
size_t loopback_batches(loopback *lb);

/* Forgets the requests recorded so far, the marker counts and the maximum
 * of held requests. */
void loopback_reset(loopback *lb);

#endif

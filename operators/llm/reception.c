/*
 * reception.c: one attempt's reply as libcurl hands it over: the status,
 * Retry-After, the body, or an event stream fed to the sink as it comes.
 */
#include "config.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "reception.h"

void kevo__llm_reception_begin(llm_reception *r, double now)
{
    r->status = 0;
    r->retry_after_s = -1;
    r->last_byte_at = now;
    r->is_stream = r->too_large = r->nomem = false;
    r->body.len = 0;
    if (r->body.data)
        r->body.data[0] = '\0';
    kevo__llm_sse_free(&r->sse);
    r->stream_bytes = 0;
    r->stream_outcome = LLM_OK;
    r->stream_why[0] = '\0';
    if (r->sink)
        r->sink->begin(r->ud);
}

void kevo__llm_reception_free(llm_reception *r)
{
    kevo__llm_buf_free(&r->body);
    kevo__llm_sse_free(&r->sse);
}

double kevo__llm_parse_retry_after(const char *v)
{
    while (*v == ' ' || *v == '\t')
        v++;
    if (isdigit((unsigned char)*v)) {
        char *end;
        double s = strtod(v, &end);
        while (*end == ' ' || *end == '\t')
            end++;
        if (*end == '\0' && s >= 0 && isfinite(s))
            return s;
    }
    time_t t = curl_getdate(v, NULL);
    if (t == (time_t)-1)
        return -1;
    double d = difftime(t, time(NULL));
    return d > 0 ? d : 0;
}

size_t kevo__llm_reception_header(char *p, size_t size, size_t nmemb, void *ud)
{
    llm_reception *r = ud;
    size_t n = size * nmemb;
    char line[256];
    size_t m = n < sizeof(line) - 1 ? n : sizeof(line) - 1;
    memcpy(line, p, m);
    line[m] = '\0';
    while (m > 0 && (line[m - 1] == '\r' || line[m - 1] == '\n'))
        line[--m] = '\0';
    r->last_byte_at = kevo__llm_now();
    if (strncmp(line, "HTTP/", 5) == 0) {
        /* A new response (after a 100 Continue, say) starts afresh. */
        const char *sp = strchr(line, ' ');
        r->status = sp ? strtol(sp + 1, NULL, 10) : 0;
        r->retry_after_s = -1;
        r->is_stream = false;
        return n;
    }
    if (strncasecmp(line, "retry-after-ms:", 15) == 0) {
        double ms = kevo__llm_parse_retry_after(line + 15);
        if (ms >= 0)
            r->retry_after_s = ms / 1000.0;
    } else if (strncasecmp(line, "retry-after:", 12) == 0 &&
               r->retry_after_s < 0) {
        r->retry_after_s = kevo__llm_parse_retry_after(line + 12);
    } else if (strncasecmp(line, "content-type:", 13) == 0) {
        const char *v = line + 13;
        while (*v == ' ' || *v == '\t')
            v++;
        r->is_stream = r->sink && r->status >= 200 && r->status < 300 &&
                       strncasecmp(v, "text/event-stream", 17) == 0;
    }
    return n;
}

/* An event of the stream, handed to the sink. */
static int on_event(void *ud, const char *type, const char *data, size_t len)
{
    llm_reception *r = ud;
    llm_outcome o = r->sink->event(r->ud, type, data, len, r->stream_why,
                                   sizeof(r->stream_why));
    if (o != LLM_OK)
        r->stream_outcome = o;
    return (int)o;
}

/* Feeds bytes of an event stream to the reader (keeping the first ones
 * for the record when keep is set); false when it stopped. */
static bool stream_feed(llm_reception *r, const char *p, size_t n, bool keep)
{
    size_t cap = r->max_reply_bytes;
    if (r->stream_bytes == 0)
        kevo__llm_sse_init(&r->sse, cap + 65536, on_event, r);
    r->stream_bytes += n;
    if (r->stream_bytes > LLM_STREAM_RAW_FACTOR * cap) {
        r->too_large = true;
        return false;
    }
    if (keep && r->body.len < LLM_HTTP_STREAM_KEEP) {
        size_t room = LLM_HTTP_STREAM_KEEP - r->body.len;
        kevo__llm_buf_append(&r->body, p, n < room ? n : room);
    }
    int rc = kevo__llm_sse_feed(&r->sse, p, n);
    if (rc == LLM_SSE_TOO_LARGE)
        r->too_large = true;
    else if (rc == LLM_SSE_NOMEM)
        r->nomem = true;
    return rc == 0;
}

size_t kevo__llm_reception_body(char *p, size_t size, size_t nmemb, void *ud)
{
    llm_reception *r = ud;
    size_t n = size * nmemb;
    r->last_byte_at = kevo__llm_now();
    if (r->is_stream)
        return stream_feed(r, p, n, true) ? n : 0;
    if (n > r->max_reply_bytes || r->body.len > r->max_reply_bytes - n) {
        r->too_large = true;
        return 0;
    }
    if (!kevo__llm_buf_append(&r->body, p, n)) {
        r->nomem = true;
        return 0;
    }
    return n;
}

size_t kevo__llm_reception_bytes(const llm_reception *r)
{
    return r->is_stream ? r->stream_bytes : r->body.len;
}

/* The end of an event stream: the last event, then the sink's verdict. */
static llm_outcome stream_end(llm_reception *r, llm_buf *why)
{
    char w[512] = "";
    int rc = kevo__llm_sse_finish(&r->sse);
    llm_outcome o;
    if (rc != 0 && r->stream_outcome != LLM_OK) {
        o = r->stream_outcome;
        snprintf(w, sizeof(w), "%s", r->stream_why);
    } else if (rc != 0) {
        o = rc == LLM_SSE_TOO_LARGE ? LLM_TOO_LARGE : LLM_TRANSPORT;
        snprintf(w, sizeof(w), "%s",
                 rc == LLM_SSE_TOO_LARGE ? "an event of the stream is over "
                                           "the cap"
                                         : "out of memory for the stream");
    } else {
        o = r->sink->end(r->ud, w, sizeof(w));
    }
    kevo__llm_buf_puts(why, w);
    return o;
}

/* Whether a body begins as an event stream does. */
static bool looks_like_stream(const char *s, size_t n)
{
    while (n > 0 && (*s == ' ' || *s == '\r' || *s == '\n')) {
        s++;
        n--;
    }
    return (n >= 5 && memcmp(s, "data:", 5) == 0) ||
           (n >= 6 && memcmp(s, "event:", 6) == 0) || (n >= 1 && *s == ':');
}

llm_outcome kevo__llm_reception_take(llm_reception *r, json_t **json,
                                     llm_buf *why)
{
    *json = NULL;
    if (r->is_stream)
        return stream_end(r, why);
    const char *body = r->body.data ? r->body.data : "";
    if (r->raw)
        return LLM_OK;
    json_error_t jerr;
    *json = json_loadb(body, r->body.len, 0, &jerr);
    if (!*json && r->sink && looks_like_stream(body, r->body.len)) {
        /* An event stream under another content type. */
        r->is_stream = true;
        stream_feed(r, body, r->body.len, false);
        return stream_end(r, why);
    }
    if (!*json) {
        kevo__llm_buf_printf(why,
                             "the reply is not JSON: line %d column %d: %s",
                             jerr.line, jerr.column, jerr.text);
        return LLM_MALFORMED;
    }
    char vwhy[512] = "";
    if (r->validate && !r->validate(r->ud, *json, vwhy, sizeof(vwhy))) {
        kevo__llm_buf_puts(why, vwhy);
        json_decref(*json);
        *json = NULL;
        return LLM_MALFORMED;
    }
    return LLM_OK;
}

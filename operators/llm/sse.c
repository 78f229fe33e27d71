/*
 * sse.c: a reader of server-sent events, fed bytes as they arrive.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sse.h"

void kevo__llm_sse_init(llm_sse *sse, size_t max_event,
                        llm_sse_event_fn on_event, void *ud)
{
    kevo__llm_sse_free(sse);
    sse->on_event = on_event;
    sse->ud = ud;
    sse->max_event = max_event;
}

void kevo__llm_sse_free(llm_sse *sse)
{
    kevo__llm_buf_free(&sse->line);
    kevo__llm_buf_free(&sse->type);
    kevo__llm_buf_free(&sse->data);
    memset(sse, 0, sizeof(*sse));
}

/* Empties a buffer and keeps its memory. */
static void clear(llm_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

static int stop(llm_sse *sse, int status)
{
    sse->status = status;
    return status;
}

/* The blank line that ends an event: hands it over when it has data. */
static int dispatch(llm_sse *sse)
{
    int rc = 0;
    if (sse->has_data) {
        /* Every data line added its value and a "\n": the last one goes. */
        size_t len = sse->data.len - 1;
        char *data = sse->data.data;
        data[len] = '\0';
        sse->events++;
        rc = sse->on_event(sse->ud, sse->type.data ? sse->type.data : "", data,
                           len);
    }
    clear(&sse->type);
    clear(&sse->data);
    sse->has_data = false;
    return rc ? stop(sse, rc) : 0;
}

/* One complete line (without its end). */
static int take_line(llm_sse *sse)
{
    const char *line = sse->line.data ? sse->line.data : "";
    size_t len = sse->line.len;
    int rc = 0;
    if (!sse->started) {
        /* A byte-order mark may open the stream (it may have come split
         * over the first pieces: the line holds it whole). */
        sse->started = true;
        if (len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0) {
            line += 3;
            len -= 3;
        }
    }
    if (len == 0) {
        rc = dispatch(sse);
    } else if (line[0] != ':') {
        const char *colon = memchr(line, ':', len);
        size_t name_len = colon ? (size_t)(colon - line) : len;
        const char *value = colon ? colon + 1 : line + len;
        if (colon && value < line + len && *value == ' ')
            value++;
        size_t value_len = (size_t)(line + len - value);
        if (name_len == 4 && memcmp(line, "data", 4) == 0) {
            if (sse->data.len + value_len + 1 > sse->max_event)
                rc = stop(sse, LLM_SSE_TOO_LARGE);
            else if (!kevo__llm_buf_append(&sse->data, value, value_len) ||
                     !kevo__llm_buf_append(&sse->data, "\n", 1))
                rc = stop(sse, LLM_SSE_NOMEM);
            sse->has_data = true;
        } else if (name_len == 5 && memcmp(line, "event", 5) == 0) {
            clear(&sse->type);
            if (!kevo__llm_buf_append(&sse->type, value, value_len))
                rc = stop(sse, LLM_SSE_NOMEM);
        }
        /* "id", "retry" and unknown fields mean nothing here. */
    }
    clear(&sse->line);
    return rc;
}

int kevo__llm_sse_feed(llm_sse *sse, const char *p, size_t n)
{
    if (sse->status)
        return sse->status;
    const char *end = p + n;
    sse->bytes += n;
    while (p < end) {
        if (sse->skip_lf) {
            sse->skip_lf = false;
            if (*p == '\n') {
                p++;
                continue;
            }
        }
        const char *q = p;
        while (q < end && *q != '\n' && *q != '\r')
            q++;
        if (sse->line.len + (size_t)(q - p) > sse->max_event)
            return stop(sse, LLM_SSE_TOO_LARGE);
        if (q > p && !kevo__llm_buf_append(&sse->line, p, (size_t)(q - p)))
            return stop(sse, LLM_SSE_NOMEM);
        if (q == end)
            break;
        sse->skip_lf = *q == '\r';
        p = q + 1;
        int rc = take_line(sse);
        if (rc)
            return rc;
    }
    return 0;
}

int kevo__llm_sse_finish(llm_sse *sse)
{
    if (sse->status)
        return sse->status;
    /* A line without its end was cut off: it is dropped, and so is the
     * event it belongs to. */
    if (sse->line.len > 0)
        return 0;
    return dispatch(sse);
}

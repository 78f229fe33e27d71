/*
 * compile_log.c: the reason an NVRTC log gives for a failed compile (see
 * compile_log.h).
 */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include "compile_log.h"

#define REASON_PREFIX "compile error"

/* ptxas's last line after errors, which names none of them. */
#define PTXAS_ABORTED "Ptx assembly aborted due to errors"

typedef struct line {
    const char *s;
    size_t n;
} line;

static bool word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* The word w stands in l before a colon (spaces between them allowed). */
static bool word_colon(line l, const char *w)
{
    size_t wn = strlen(w);
    for (size_t i = 0; i + wn <= l.n; i++) {
        if (memcmp(l.s + i, w, wn) != 0 || (i > 0 && word_char(l.s[i - 1])))
            continue;
        size_t j = i + wn;
        while (j < l.n && (l.s[j] == ' ' || l.s[j] == '\t'))
            j++;
        if (j < l.n && l.s[j] == ':')
            return true;
    }
    return false;
}

static bool contains(line l, const char *w)
{
    size_t wn = strlen(w);
    for (size_t i = 0; i + wn <= l.n; i++) {
        if (memcmp(l.s + i, w, wn) == 0)
            return true;
    }
    return false;
}

static bool is_error(line l)
{
    return word_colon(l, "error") || word_colon(l, "fatal");
}

static bool is_generic(line l)
{
    return contains(l, PTXAS_ABORTED);
}

static bool is_ptxas(line l)
{
    return l.n >= 5 && memcmp(l.s, "ptxas", 5) == 0;
}

/* The line of log after *at (which it moves past it); false at the end. */
static bool next_line(const char **at, line *l)
{
    const char *p = *at;
    if (!p || !*p)
        return false;
    const char *end = strchr(p, '\n');
    l->s = p;
    l->n = end ? (size_t)(end - p) : strlen(p);
    while (l->n > 0 && (l->s[l->n - 1] == '\r' || l->s[l->n - 1] == ' '))
        l->n--;
    *at = end ? end + 1 : p + strlen(p);
    return true;
}

static int cut(line l)
{
    return (int)(l.n > KEVO__COMPILE_REASON_LINE_MAX
                     ? KEVO__COMPILE_REASON_LINE_MAX
                     : l.n);
}

char *kevo__compile_log_reason(const char *log)
{
    line first = {NULL, 0}, second = {NULL, 0}, generic = {NULL, 0},
         mention = {NULL, 0}, l;
    const char *at = log;
    while (!second.s && next_line(&at, &l)) {
        if (!mention.s && contains(l, "error"))
            mention = l;
        if (!is_error(l))
            continue;
        if (is_generic(l)) {
            if (!generic.s)
                generic = l;
        } else if (!first.s) {
            first = l;
            if (!is_ptxas(l))
                break;
        } else {
            if (is_ptxas(l))
                second = l;
            break;
        }
    }
    if (first.s && second.s)
        return kevo__asprintf(REASON_PREFIX ": %.*s; %.*s", cut(first), first.s,
                              cut(second), second.s);
    line pick = first.s ? first : generic.s ? generic : mention;
    if (pick.s)
        return kevo__asprintf(REASON_PREFIX ": %.*s", cut(pick), pick.s);
    return kevo__strdup(REASON_PREFIX);
}

bool kevo__compile_log_reason_is(const char *reason)
{
    size_t n = strlen(REASON_PREFIX);
    return reason && strncmp(reason, REASON_PREFIX, n) == 0 &&
           (reason[n] == '\0' || reason[n] == ':');
}

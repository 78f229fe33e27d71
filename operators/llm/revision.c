/*
 * revision.c: the parser of a reply to a meta-prompt revision request (see
 * revision.h): finds the JSON block, reads the sections from it and checks
 * them against the original prompt.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "buf.h"
#include "revision.h"

/* Sections a revision may add when the original lacks them. */
static const char *const conventional[] = {"analysis", "pitfalls", "strategy"};

/* A name quoted in a reason is cut to this many bytes. */
#define NAME_SHOWN 40

static const char *const kind_names[] = {
    "ok",        "empty",      "no_json",         "truncated",
    "malformed", "not_object", "missing_section", "unknown_section",
    "bad_text",  "too_large",  "unchanged",       "nomem"};

const char *kevo__llm_revision_kind_name(llm_revision_kind kind)
{
    if ((unsigned)kind < sizeof(kind_names) / sizeof(kind_names[0]))
        return kind_names[kind];
    return "unknown";
}

/* Frees the revised sections of r. */
static void sections_free(llm_revision_result *r)
{
    for (size_t i = 0; i < r->n_sections; i++) {
        free((char *)r->sections[i].name);
        free((char *)r->sections[i].text);
    }
    free(r->sections);
    r->sections = NULL;
    r->n_sections = 0;
}

void kevo__llm_revision_result_free(llm_revision_result *r)
{
    if (!r)
        return;
    sections_free(r);
    free(r->reason);
    memset(r, 0, sizeof(*r));
}

/* ---- finding the block -------------------------------------------------- */

/* A fenced block: its content is reply[start, end). */
typedef struct jfence {
    size_t start, end;
    size_t number; /* 1-based among the reply's fences */
    bool closed;
    bool found;
} jfence;

typedef struct scan {
    jfence json;  /* the last fence labelled json */
    jfence plain; /* the last unlabelled fence whose content starts with { */
    size_t nfences;
} scan;

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' ||
           c == '\v';
}

/* The content of reply[start, end) starts with '{' after white space. */
static bool starts_object(const char *s, size_t start, size_t end)
{
    while (start < end && is_blank(s[start]))
        start++;
    return start < end && s[start] == '{';
}

/* Where the line starting at pos ends (at its '\n' or at len). */
static size_t line_end(const char *s, size_t len, size_t pos)
{
    const char *nl = memchr(s + pos, '\n', len - pos);
    return nl ? (size_t)(nl - s) : len;
}

/* The fence run at the start of line [pos, eol): up to 3 spaces, then 3 or
 * more '`' or '~'. Returns its length (0 for none), its character in *ch
 * and where it ends in *after. */
static size_t fence_run(const char *s, size_t pos, size_t eol, char *ch,
                        size_t *after)
{
    size_t i = pos;
    while (i < eol && i - pos < 3 && s[i] == ' ')
        i++;
    if (i >= eol || (s[i] != '`' && s[i] != '~'))
        return 0;
    *ch = s[i];
    size_t run = 0;
    while (i < eol && s[i] == *ch) {
        i++;
        run++;
    }
    *after = i;
    return run >= 3 ? run : 0;
}

/* Whether [from, eol) holds only white space. */
static bool rest_blank(const char *s, size_t from, size_t eol)
{
    for (size_t i = from; i < eol; i++)
        if (!is_blank(s[i]))
            return false;
    return true;
}

/* The info string's first word is "json" (any case). */
static bool label_is_json(const char *s, size_t from, size_t eol)
{
    while (from < eol && is_blank(s[from]))
        from++;
    size_t n = 0;
    while (from + n < eol && !is_blank(s[from + n]))
        n++;
    return n == 4 && strncasecmp(s + from, "json", 4) == 0;
}

static void record_fence(scan *sc, size_t start, size_t end, bool closed,
                         bool json, bool plain, const char *s)
{
    jfence f = {start, end, ++sc->nfences, closed, true};
    if (json)
        sc->json = f;
    else if (plain && starts_object(s, start, end))
        sc->plain = f;
}

static void find_fences(const char *s, size_t len, scan *sc)
{
    memset(sc, 0, sizeof(*sc));
    bool open = false, json = false, plain = false;
    char och = 0;
    size_t orun = 0, start = 0;
    for (size_t pos = 0; pos < len;) {
        size_t eol = line_end(s, len, pos), after = 0;
        char ch = 0;
        size_t run = fence_run(s, pos, eol, &ch, &after);
        if (!open && run) {
            open = true;
            och = ch;
            orun = run;
            start = eol < len ? eol + 1 : len;
            json = label_is_json(s, after, eol);
            plain = rest_blank(s, after, eol);
        } else if (open && run && ch == och && run >= orun &&
                   rest_blank(s, after, eol)) {
            record_fence(sc, start, pos, true, json, plain, s);
            open = false;
        }
        pos = eol < len ? eol + 1 : len;
    }
    if (open)
        record_fence(sc, start, len, false, json, plain, s);
}

/* ---- checking the sections ---------------------------------------------- */

/* Appends 'name' to b, cut and with control characters as '?'. */
static void put_name(llm_buf *b, const char *name)
{
    size_t n = strlen(name);
    kevo__llm_buf_puts(b, "'");
    for (size_t i = 0; i < n && i < NAME_SHOWN; i++) {
        char c = name[i];
        kevo__llm_buf_append(b, (unsigned char)c < 0x20 ? "?" : &c, 1);
    }
    kevo__llm_buf_puts(b, n > NAME_SHOWN ? "...'" : "'");
}

static bool is_conventional(const char *name)
{
    for (size_t i = 0; i < sizeof(conventional) / sizeof(conventional[0]); i++)
        if (strcmp(name, conventional[i]) == 0)
            return true;
    return false;
}

/* The text of s without surrounding white space, in a new string. */
static char *trimmed(const char *s, size_t n)
{
    size_t a = 0;
    while (a < n && is_blank(s[a]))
        a++;
    while (n > a && is_blank(s[n - 1]))
        n--;
    return kevo__llm_strndup(s + a, n - a);
}

typedef struct checker {
    json_t *orig;  /* the original sections (an object) */
    json_t *sects; /* the reply's sections */
    json_t *out;   /* the revised sections */
    llm_buf why;
    size_t changed;
} checker;

/* Names of the reply that the prompt may not have. */
static llm_revision_kind check_names(checker *k)
{
    const char *key;
    json_t *v;
    size_t unknown = 0;
    llm_buf names = {0};
    json_object_foreach (k->sects, key, v) {
        if (json_object_get(k->orig, key) || is_conventional(key))
            continue;
        kevo__llm_buf_puts(&names, unknown++ ? ", " : "");
        put_name(&names, key);
    }
    if (unknown) {
        kevo__llm_buf_printf(&k->why,
                             "the reply has %s %s that the prompt does not "
                             "have (allowed: the prompt's own and analysis, "
                             "pitfalls, strategy)",
                             unknown == 1 ? "a section" : "sections",
                             names.data ? names.data : "");
        kevo__llm_buf_free(&names);
        return LLM_REVISION_UNKNOWN;
    }
    if (json_object_size(k->sects) > KEVO_PROMPT_SECTIONS_MAX) {
        kevo__llm_buf_printf(&k->why,
                             "the reply has %zu sections, more than "
                             "the %d a prompt may have",
                             json_object_size(k->sects),
                             KEVO_PROMPT_SECTIONS_MAX);
        return LLM_REVISION_TOO_LARGE;
    }
    size_t missing = 0;
    json_object_foreach (k->orig, key, v) {
        if (json_object_get(k->sects, key))
            continue;
        kevo__llm_buf_puts(&names, missing++ ? ", " : "");
        put_name(&names, key);
    }
    if (missing)
        kevo__llm_buf_printf(&k->why, "the reply leaves out %s %s",
                             missing == 1 ? "the section" : "the sections",
                             names.data ? names.data : "");
    kevo__llm_buf_free(&names);
    return missing ? LLM_REVISION_MISSING : LLM_REVISION_OK;
}

/* Adds section key of the reply to the result, checked. */
static llm_revision_kind take_section(checker *k, const char *key)
{
    json_t *v = json_object_get(k->sects, key);
    if (!json_is_string(v)) {
        kevo__llm_buf_puts(&k->why, "the section ");
        put_name(&k->why, key);
        kevo__llm_buf_printf(&k->why, " is %s, not a string",
                             json_is_object(v)   ? "an object"
                             : json_is_array(v)  ? "an array"
                             : json_is_null(v)   ? "null"
                             : json_is_number(v) ? "a number"
                                                 : "a boolean");
        return LLM_REVISION_BAD_TEXT;
    }
    char *text = trimmed(json_string_value(v), json_string_length(v));
    if (!text)
        return LLM_REVISION_NOMEM;
    llm_revision_kind kind = LLM_REVISION_OK;
    size_t n = strlen(text);
    if (n == 0) {
        kevo__llm_buf_puts(&k->why, "the section ");
        put_name(&k->why, key);
        kevo__llm_buf_puts(&k->why, " is empty");
        kind = LLM_REVISION_BAD_TEXT;
    } else if (n > KEVO_PROMPT_TEXT_MAX) {
        kevo__llm_buf_puts(&k->why, "the section ");
        put_name(&k->why, key);
        kevo__llm_buf_printf(&k->why,
                             " has %zu bytes, more than the %d a "
                             "section may have",
                             n, KEVO_PROMPT_TEXT_MAX);
        kind = LLM_REVISION_TOO_LARGE;
    } else {
        json_t *o = json_object_get(k->orig, key);
        char *was = json_is_string(o)
                        ? trimmed(json_string_value(o), json_string_length(o))
                        : NULL;
        if (!was || strcmp(was, text) != 0)
            k->changed++;
        free(was);
        if (json_object_set_new(k->out, key, json_string(text)) != 0)
            kind = LLM_REVISION_NOMEM;
    }
    free(text);
    return kind;
}

static llm_revision_kind check_sections(checker *k)
{
    llm_revision_kind kind = check_names(k);
    const char *key;
    json_t *v;
    /* The original's order first, then what the reply adds. */
    json_object_foreach (k->orig, key, v) {
        if (kind == LLM_REVISION_OK)
            kind = take_section(k, key);
    }
    json_object_foreach (k->sects, key, v) {
        if (kind == LLM_REVISION_OK && !json_object_get(k->orig, key))
            kind = take_section(k, key);
    }
    if (kind == LLM_REVISION_OK && k->changed == 0) {
        kevo__llm_buf_puts(&k->why, "the reply gives the prompt back "
                                    "unchanged");
        kind = LLM_REVISION_UNCHANGED;
    }
    return kind;
}

/* ---- the parse ----------------------------------------------------------- */

static llm_revision_kind finish(llm_revision_result *out,
                                llm_revision_kind kind, llm_buf *why)
{
    out->kind = kind;
    if (kind == LLM_REVISION_NOMEM || why->failed) {
        kevo__llm_buf_free(why);
        sections_free(out);
        out->kind = LLM_REVISION_NOMEM;
        return out->kind;
    }
    out->reason = kevo__llm_buf_take(why);
    /* One line: jansson's messages may quote what they choked on. */
    for (char *p = out->reason; p && *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    if (!out->reason) {
        sections_free(out);
        out->kind = LLM_REVISION_NOMEM;
    }
    return out->kind;
}

/* The sections of the object o as named texts in out, in o's order;
 * false when out of memory. */
static bool take_sections(llm_revision_result *out, json_t *o)
{
    out->sections = calloc(json_object_size(o) + 1, sizeof *out->sections);
    if (!out->sections)
        return false;
    const char *key;
    json_t *v;
    json_object_foreach (o, key, v) {
        kevo_operator_text *t = &out->sections[out->n_sections];
        t->name = kevo__llm_strdup(key);
        t->text = kevo__llm_strdup(json_string_value(v));
        out->n_sections++;
        if (!t->name || !t->text)
            return false;
    }
    return true;
}

llm_revision_kind kevo__llm_revision_parse(const char *reply, size_t len,
                                           const kevo_operator_text *original,
                                           size_t n, llm_revision_result *out)
{
    llm_buf where = {0};
    checker k = {0};
    json_t *root = NULL;
    llm_revision_kind kind = LLM_REVISION_OK;
    memset(out, 0, sizeof(*out));
    if (len > LLM_REVISION_MAX_REPLY) {
        kevo__llm_buf_printf(&k.why,
                             "the reply has %zu bytes, more than the "
                             "%zu read",
                             len, LLM_REVISION_MAX_REPLY);
        kind = LLM_REVISION_TOO_LARGE;
        goto done;
    }
    if (rest_blank(reply, 0, len)) {
        kevo__llm_buf_puts(&k.why, "the reply is empty");
        kind = LLM_REVISION_EMPTY;
        goto done;
    }
    scan sc;
    find_fences(reply, len, &sc);
    const jfence *f = sc.json.found    ? &sc.json
                      : sc.plain.found ? &sc.plain
                                       : NULL;
    size_t start = 0, end = len;
    if (f) {
        start = f->start;
        end = f->end;
        kevo__llm_buf_printf(&where, "fence %zu of %zu (%s%s)", f->number,
                             sc.nfences, f == &sc.json ? "```json" : "```",
                             f->closed ? "" : ", never closed");
    } else if (starts_object(reply, 0, len)) {
        kevo__llm_buf_puts(&where, "the reply's bare JSON");
    } else {
        kevo__llm_buf_printf(&k.why,
                             "the reply has no ```json block%s and is not a "
                             "JSON object",
                             sc.nfences ? " (its fences hold no JSON object)"
                                        : "");
        kind = LLM_REVISION_NO_JSON;
        goto done;
    }
    json_error_t jerr;
    root =
        json_loadb(reply + start, end - start, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        if (json_error_code(&jerr) == json_error_out_of_memory) {
            kind = LLM_REVISION_NOMEM;
            goto done;
        }
        bool cut = f && !f->closed;
        kevo__llm_buf_printf(&k.why, "%s in %s is %s: line %d, column %d: %s",
                             cut ? "the JSON" : "the block",
                             where.data ? where.data : "the reply",
                             cut ? "cut off" : "not JSON", jerr.line,
                             jerr.column, jerr.text);
        kind = cut ? LLM_REVISION_TRUNCATED : LLM_REVISION_MALFORMED;
        goto done;
    }
    if (!json_is_object(root)) {
        kevo__llm_buf_printf(&k.why,
                             "the JSON in %s is %s, not an object of named "
                             "sections",
                             where.data ? where.data : "the reply",
                             json_is_array(root)    ? "an array"
                             : json_is_string(root) ? "a string"
                                                    : "a scalar");
        kind = LLM_REVISION_NOT_OBJECT;
        goto done;
    }
    /* The original as an object, to hold against the reply's. */
    k.orig = json_object();
    for (size_t i = 0; k.orig && i < n; i++) {
        if (json_object_set_new(k.orig, original[i].name,
                                json_string(original[i].text)) != 0) {
            kind = LLM_REVISION_NOMEM;
            goto done;
        }
    }
    k.out = json_object();
    if (!k.orig || !k.out) {
        kind = LLM_REVISION_NOMEM;
        goto done;
    }
    /* The prompt file's form: its sections, unless "sections" is one. */
    k.sects = root;
    json_t *inner = json_object_get(root, "sections");
    if (json_is_object(inner) && !json_object_get(k.orig, "sections"))
        k.sects = inner;
    kind = check_sections(&k);
    if (kind != LLM_REVISION_OK)
        goto done;
    if (!take_sections(out, k.out)) {
        kind = LLM_REVISION_NOMEM;
        goto done;
    }
    out->changed = k.changed;
    kevo__llm_buf_printf(&k.why, "%zu section%s, %zu changed, from %s",
                         json_object_size(k.out),
                         json_object_size(k.out) == 1 ? "" : "s", k.changed,
                         where.data ? where.data : "the reply");
done:
    kevo__llm_buf_free(&where);
    json_decref(root);
    json_decref(k.orig);
    json_decref(k.out);
    return finish(out, kind, &k.why);
}

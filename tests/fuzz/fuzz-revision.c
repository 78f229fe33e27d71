/*
 * fuzz-revision.c: the llm operator's parser of meta-prompt revision
 * replies on arbitrary bytes.
 *
 * The input is a reply; when it holds a line "@@original@@", the text
 * before that line is the original prompt's sections (JSON, up to any NUL;
 * its string members are the sections) and the text after it the reply,
 * otherwise a fixed prompt of three sections is the original. Whatever the
 * input, kevo__llm_revision_parse() must either fail with a one-line reason
 * and no sections, or give sections that keep every section of the
 * original, each once, add only
 * conventional ones, hold non-empty trimmed texts within the limits and
 * differs from the original. The same input parses the same way twice.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "revision.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fixed[] =
    "{\"strategy\": \"Vectorise the loads.\", \"pitfalls\": \"Mind the "
    "tail.\", \"analysis\": \"Read the slowest shape first.\"}";

static bool same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
           c == '\v';
}

/* The text of name in n sections, or NULL. */
static const char *text_of(const kevo_operator_text *t, size_t n,
                           const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(t[i].name, name) == 0)
            return t[i].text;
    }
    return NULL;
}

static void check_ok(const llm_revision_result *r,
                     const kevo_operator_text *orig, size_t norig)
{
    if (r->n_sections == 0 || r->n_sections > KEVO_PROMPT_SECTIONS_MAX)
        abort();
    bool differs = false;
    for (size_t i = 0; i < r->n_sections; i++) {
        const char *key = r->sections[i].name, *t = r->sections[i].text;
        size_t n = t ? strlen(t) : 0;
        if (!key || !t || n == 0 || n > KEVO_PROMPT_TEXT_MAX || blank(t[0]) ||
            blank(t[n - 1]))
            abort(); /* a non-empty, trimmed text within the limit */
        if (text_of(r->sections, i, key))
            abort(); /* each section once */
        const char *o = text_of(orig, norig, key);
        if (!o && strcmp(key, "strategy") != 0 &&
            strcmp(key, "pitfalls") != 0 && strcmp(key, "analysis") != 0)
            abort(); /* only the conventional sections may be added */
        differs = differs || !o || strcmp(o, t) != 0;
    }
    for (size_t i = 0; i < norig; i++) {
        if (!text_of(r->sections, r->n_sections, orig[i].name))
            abort(); /* every section is kept */
    }
    if (!differs || r->changed == 0)
        abort(); /* never the original again */
}

/* Whether a and b hold the same sections in the same order. */
static bool same_sections(const llm_revision_result *a,
                          const llm_revision_result *b)
{
    if (a->n_sections != b->n_sections)
        return false;
    for (size_t i = 0; i < a->n_sections; i++) {
        if (!same(a->sections[i].name, b->sections[i].name) ||
            !same(a->sections[i].text, b->sections[i].text))
            return false;
    }
    return true;
}

/* The string members of the JSON object text as sections (borrowed from
 * *root, which the caller releases); none for other text. */
static size_t sections_of(const char *text, json_t **root,
                          kevo_operator_text *t, size_t max)
{
    *root = json_loads(text, 0, NULL);
    size_t n = 0;
    const char *key;
    json_t *v;
    if (json_is_object(*root)) {
        json_object_foreach (*root, key, v) {
            if (json_is_string(v) && n < max)
                t[n++] = (kevo_operator_text){key, json_string_value(v)};
        }
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *reply = text;
    size_t len = size;
    char *original = NULL;
    const char *sep = NULL;
    for (size_t i = 0; i + 13 <= size; i++) {
        if (memcmp(text + i, "@@original@@\n", 13) == 0 &&
            (i == 0 || text[i - 1] == '\n')) {
            sep = text + i;
            break;
        }
    }
    if (sep) {
        size_t n = (size_t)(sep - text);
        original = malloc(n + 1);
        if (!original)
            return 0;
        memcpy(original, text, n);
        original[n] = '\0';
        reply = sep + 13;
        len = size - n - 13;
    }
    json_t *root = NULL;
    kevo_operator_text orig[64];
    size_t norig = sections_of(original ? original : fixed, &root, orig,
                               sizeof orig / sizeof orig[0]);
    llm_revision_result a, b;
    llm_revision_kind ka =
        kevo__llm_revision_parse(reply, len, orig, norig, &a);
    llm_revision_kind kb =
        kevo__llm_revision_parse(reply, len, orig, norig, &b);
    if (ka != a.kind || ka != kb || !same(a.reason, b.reason) ||
        !same_sections(&a, &b))
        abort(); /* deterministic */
    if ((unsigned)ka > LLM_REVISION_NOMEM ||
        strcmp(kevo__llm_revision_kind_name(ka), "unknown") == 0)
        abort();
    if (ka != LLM_REVISION_NOMEM) {
        if (!a.reason || !a.reason[0])
            abort(); /* every outcome says what happened */
        for (const char *p = a.reason; *p; p++)
            if ((unsigned char)*p < 0x20)
                abort(); /* one line */
    }
    if (ka == LLM_REVISION_OK)
        check_ok(&a, orig, norig);
    else if (a.sections || a.n_sections || a.changed)
        abort();
    kevo__llm_revision_result_free(&a);
    kevo__llm_revision_result_free(&b);
    json_decref(root);
    free(original);
    return 0;
}

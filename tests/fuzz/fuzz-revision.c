/*
 * fuzz-revision.c: the llm operator's parser of meta-prompt revision
 * replies on arbitrary bytes.
 *
 * The input is a reply; when it holds a line "@@original@@", the text
 * before that line is the original prompt's sections (JSON, up to any NUL)
 * and the text after it the reply, otherwise a fixed prompt of three
 * sections is the original. Whatever the input, kevo__llm_revision_parse()
 * must either fail with a one-line reason and no sections, or give a JSON
 * object that keeps every section of a valid original, adds only
 * conventional ones, holds non-empty trimmed texts within the limits and
 * differs from the original. The same input parses the same way twice.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <kevo/promptpool.h>

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

static void check_ok(const llm_revision_result *r, const char *original)
{
    json_t *out = json_loads(r->sections_json, 0, NULL);
    json_t *orig = json_loads(original, 0, NULL);
    if (!json_is_object(out) || json_object_size(out) == 0 ||
        json_object_size(out) > KEVO_PROMPT_SECTIONS_MAX)
        abort();
    const char *key;
    json_t *v;
    bool differs = false;
    json_object_foreach (out, key, v) {
        const char *t = json_string_value(v);
        size_t n = t ? strlen(t) : 0;
        if (!t || n == 0 || n > KEVO_PROMPT_TEXT_MAX || blank(t[0]) ||
            blank(t[n - 1]))
            abort(); /* a non-empty, trimmed text within the limit */
        json_t *o = json_object_get(orig, key);
        if (!o && strcmp(key, "strategy") != 0 &&
            strcmp(key, "pitfalls") != 0 && strcmp(key, "analysis") != 0)
            abort(); /* only the conventional sections may be added */
        differs = differs || !json_is_string(o) ||
                  strcmp(json_string_value(o), t) != 0;
    }
    if (json_is_object(orig)) {
        json_object_foreach (orig, key, v) {
            if (!json_object_get(out, key))
                abort(); /* every section is kept */
        }
    }
    if (!differs || r->changed == 0)
        abort(); /* never the original again */
    json_decref(out);
    json_decref(orig);
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
    const char *orig = original ? original : fixed;
    llm_revision_result a, b;
    llm_revision_kind ka = kevo__llm_revision_parse(reply, len, orig, &a);
    llm_revision_kind kb = kevo__llm_revision_parse(reply, len, orig, &b);
    if (ka != a.kind || ka != kb || !same(a.reason, b.reason) ||
        !same(a.sections_json, b.sections_json))
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
        check_ok(&a, orig);
    else if (a.sections_json || a.changed)
        abort();
    kevo__llm_revision_result_free(&a);
    kevo__llm_revision_result_free(&b);
    free(original);
    return 0;
}

/*
 * revision.h: the llm operator's parser of a reply to a meta-prompt
 * revision request. It turns a model's reply into the revised prompt's
 * sections, or into a failure with a kind and a reason.
 *
 * The reply should hold the revised sections as one JSON object, mapping
 * each section's name to its new text, in a fenced block:
 *
 *     ```json
 *     {"strategy": "...", "pitfalls": "...", "analysis": "..."}
 *     ```
 *
 * The parser takes the last fence labelled json (case-insensitive; ~~~
 * fences too); without one, the last unlabelled fence whose content starts
 * with '{'; without one, the whole reply when it is a JSON object and
 * nothing else. A fence that the reply never closes (it was cut off) counts
 * only when its content parses. An object of the form {"name": ...,
 * "sections": {...}} (the prompt file's form) is read as its sections.
 *
 * The revised prompt must keep every section of the original, may add only
 * the conventional sections (strategy, pitfalls, analysis) that the
 * original lacks, and gives each a string whose text, without surrounding
 * white space, is not empty and at most KEVO_PROMPT_TEXT_MAX bytes; at most
 * KEVO_PROMPT_SECTIONS_MAX sections. A revision equal to the original,
 * section for section, fails as unchanged. Nothing the reply holds can
 * crash the parser.
 *
 * The original and the revised sections are named texts, as they cross
 * the plugin boundary (ABI 1.3). Plain C and jansson, with no use of
 * libkevo (only the limits and types of <kevo/operator.h>), so it is built
 * into the plugin and the tests alike.
 */
#ifndef KEVO_LLM_REVISION_H
#define KEVO_LLM_REVISION_H

#include <stdbool.h>
#include <stddef.h>

#include <kevo/operator.h>

/* What became of a revision reply. Values are only ever appended. */
typedef enum llm_revision_kind {
    LLM_REVISION_OK = 0,
    LLM_REVISION_EMPTY,      /* "empty": nothing but white space */
    LLM_REVISION_NO_JSON,    /* "no_json": no JSON block */
    LLM_REVISION_TRUNCATED,  /* "truncated": a fence cut off mid-JSON */
    LLM_REVISION_MALFORMED,  /* "malformed": the block is not JSON */
    LLM_REVISION_NOT_OBJECT, /* "not_object": JSON, but not an object */
    LLM_REVISION_MISSING,    /* "missing_section": a section left out */
    LLM_REVISION_UNKNOWN,    /* "unknown_section": a name not allowed */
    LLM_REVISION_BAD_TEXT,   /* "bad_text": a text not a non-empty string */
    LLM_REVISION_TOO_LARGE,  /* "too_large": a text or the reply too big */
    LLM_REVISION_UNCHANGED,  /* "unchanged": the original again */
    LLM_REVISION_NOMEM       /* "nomem": out of memory */
} llm_revision_kind;

/* The largest reply the parser reads. */
#define LLM_REVISION_MAX_REPLY ((size_t)1 << 20)

/* The outcome of kevo__llm_revision_parse; release it with
 * kevo__llm_revision_result_free. */
typedef struct llm_revision_result {
    llm_revision_kind kind;
    /* On success, the revised sections, the original's first in its
     * order, texts trimmed; names and texts owned (malloc). NULL and 0 on
     * failure. */
    kevo_operator_text *sections;
    size_t n_sections;
    /* On failure, why, as one sentence without a trailing period; on
     * success, what was done ("3 sections, 2 changed, from fence 1 of 1
     * (```json)"). Never NULL unless kind is LLM_REVISION_NOMEM. */
    char *reason;
    size_t changed; /* sections whose text changed, or that were added */
} llm_revision_result;

/* Parses a reply of len bytes against the n original sections into *out
 * (overwritten, not freed). Returns out->kind. */
llm_revision_kind kevo__llm_revision_parse(const char *reply, size_t len,
                                           const kevo_operator_text *original,
                                           size_t n, llm_revision_result *out);

/* Frees what the result holds and zeroes it; NULL does nothing. */
void kevo__llm_revision_result_free(llm_revision_result *r);

/* The kind's short name ("no_json", "missing_section", ...), a static
 * string; "unknown" for a value out of range. */
const char *kevo__llm_revision_kind_name(llm_revision_kind kind);

#endif

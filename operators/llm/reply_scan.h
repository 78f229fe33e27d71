/*
 * reply_scan.h: a small scanner of C/CUDA source for the reply parser. It
 * records the comments, the identifiers and a few punctuators of a source,
 * skips literals, and counts open brackets, so the parser can tell whether
 * code is complete and which __global__ kernels it defines. Where a
 * source's kevo:launch and kevo:param blocks are, and which names they
 * hold, kevo itself says (kevo__reply_blocks(), through the host table's
 * find_blocks()): the parser keeps no block scanner of its own.
 */
#ifndef KEVO_LLM_REPLY_SCAN_H
#define KEVO_LLM_REPLY_SCAN_H

#include "reply_lines.h"

/* A comment: [start, end) from its opening delimiter to past its closing
 * one (a line comment ends before its newline). */
typedef struct cmt {
    size_t start, end;
    size_t line, end_line;
    bool is_block, terminated, own_line;
} cmt;

/* An identifier; one of the characters ( ) { } [ ] ; # , a lone = and
 * the < and > of a template header (length 1); or "<<<" (length 3). */
typedef struct tok {
    size_t off, len;
} tok;

typedef struct cscan {
    const char *s;
    size_t n;
    cmt *c;
    size_t nc, capc;
    tok *t;
    size_t nt, capt;
    long depth[3];     /* { ( [ still open */
    bool open_comment; /* a slash-star comment runs to the end */
    bool open_string;  /* a literal is not closed on its line */
    bool failed;       /* out of memory */
} cscan;

/* Scans n bytes of source s (which must outlive the scan). Returns false
 * when out of memory. Release with kevo__reply_scan_free, also then. */
bool kevo__reply_scan(cscan *sc, const char *s, size_t n);
void kevo__reply_scan_free(cscan *sc);

static inline span tok_span(const cscan *sc, size_t k)
{
    return (span){sc->s + sc->t[k].off, sc->t[k].len};
}

static inline bool tok_is(const cscan *sc, size_t k, const char *w)
{
    size_t n = strlen(w);
    return k < sc->nt && sc->t[k].len == n &&
           memcmp(sc->s + sc->t[k].off, w, n) == 0;
}

/* name is one of the identifiers of tokens [from, to). */
bool kevo__reply_has_ident(const cscan *sc, size_t from, size_t to, span name);

/* The code is complete: no open bracket, comment or literal. */
bool kevo__reply_scan_complete(const cscan *sc);

/* Appends why the code is not complete ("2 unclosed '{'", ...). */
void kevo__reply_describe_incomplete(llm_buf *b, const cscan *sc);

/* ---- kevo:launch and kevo:param blocks ----------------------------------- */

enum { TAG_LAUNCH = 0, TAG_PARAM = 1 };

/* A short list of names, each at most 63 characters. */
#define NAME_MAX_LEN 63
#define NAMES_MAX 32
typedef struct names {
    char v[NAMES_MAX][NAME_MAX_LEN + 1];
    size_t n;
    bool overflow;
} names;

/* Where a source's blocks are: the first of each tag, as [start, end) of
 * its whole comment (a run of line comments included), and the names each
 * holds: the kernels the launch block launches, the parameters the param
 * block declares. */
typedef struct blocks {
    bool found[2];
    bool whole[2]; /* not a slash-star comment left open */
    size_t start[2], end[2];
    names names[2];
} blocks;

void kevo__reply_names_add(names *ns, span w);
bool kevo__reply_names_has(const names *ns, const char *name);
/* Appends "a, b, c" (", ..." when names were left out). */
void kevo__reply_names_list(llm_buf *b, const names *ns);

/* t is an attribute that takes parenthesised arguments before a
 * declarator (__launch_bounds__, alignas, ...). */
bool kevo__reply_is_attribute(span t);

/* The names of the __global__ functions of a source. */
void kevo__reply_global_kernels(const cscan *sc, names *ns);

/* name is #define'd in the source. */
bool kevo__reply_defines(const cscan *sc, const char *name);

#endif

/*
 * reply_private.h: the parse in progress, shared by the stages of the reply
 * parser: reply.c (the entry point, which runs them in order),
 * reply_reasoning.c, reply_fences.c, reply_edits.c, reply_diff.c,
 * reply_join.c, reply_host.c and reply_restore.c.
 */
#ifndef KEVO_LLM_REPLY_PRIVATE_H
#define KEVO_LLM_REPLY_PRIVATE_H

#include "reply.h"
#include "reply_lines.h"
#include "reply_scan.h"

#if defined(__GNUC__)
#define REPLY_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define REPLY_PRINTF(f, a)
#endif

/* A fenced block of the reply. */
typedef struct fence {
    size_t open;     /* reply line of the opening fence (0-based) */
    size_t first;    /* its first content line */
    size_t nlines;   /* content lines */
    size_t indent;   /* the opening fence's indentation */
    char label[24];  /* the info string's first word, lower case */
    char ch;         /* '`' or '~' */
    bool closed;     /* a closing fence was found */
    bool c_family;   /* labelled as C/C++/CUDA, or not labelled */
    bool is_diff;    /* holds a unified diff (reply_diff.c) */
    bool has_global; /* holds a __global__ identifier */
    bool has_launch; /* holds a kevo:launch block */
    bool complete;   /* no open bracket, comment or literal */
    char *code;      /* its content (C-family fences only) */
    size_t code_len;
    cscan sc; /* the scan of code */
} fence;

/* What reply_reasoning.c set aside, for the note. */
typedef struct reasoning {
    size_t count;       /* sections */
    size_t first, last; /* 1-based lines of the reply they span */
    char tag[16];       /* the first section's tag ("think") */
    bool lone_close;    /* the first ended at a closing tag alone */
} reasoning;

typedef struct ctx {
    const kevo_reply_host *host; /* the rules and block finder of kevo */
    const char *parent;
    size_t parent_len;
    size_t max_child;
    unsigned flags; /* KEVO_REPLY_CUT_OFF */
    char *text;     /* the normalised reply, reasoning removed */
    size_t text_len;
    lines rl;
    fence *fences;
    size_t nfences;
    size_t *fence_of; /* per line: 1 + the fence it is part of, or 0 */
    reasoning thought;
    kevo_reply_result *out;
    llm_buf why;  /* the failure's reason */
    llm_buf note; /* what was done */
    bool nomem;
    size_t work;     /* comparisons made placing edits and joining fences */
    size_t work_max; /* WORK_PER_BYTE for each byte of max_child */
} ctx;

/* Placing edits compares lines; a reply and a parent made to be slow to
 * match (thousands of identical lines) stop at this many comparisons per
 * byte of the child limit: 2e8 for the default limit, well under a
 * second. */
#define WORK_PER_BYTE 200

/* Sets the failure's kind and reason (a printf format); returns kind. */
kevo_reply_kind kevo__reply_fail(ctx *c, kevo_reply_kind kind, const char *fmt,
                                 ...) REPLY_PRINTF(3, 4);

/* The same with the reason built in *b, which the context takes. */
kevo_reply_kind kevo__reply_fail_with(ctx *c, kevo_reply_kind kind, llm_buf *b);

/* Out of memory: returns KEVO_REPLY_NOMEM. */
kevo_reply_kind kevo__reply_nomem(ctx *c);

/* Where the blocks of n bytes of s are, as kevo finds them (the host's
 * find_blocks()), with the names they hold; none, with c->nomem set, when
 * memory runs out. */
blocks kevo__reply_blocks(ctx *c, const char *s, size_t n);

/* "```cuda, 12 lines" for a fence. */
void kevo__reply_fence_label(llm_buf *b, const fence *f);

#endif

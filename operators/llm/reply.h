/*
 * reply.h: the llm operator's reply parser. It turns a model's reply into a
 * child kernel source, or into a failure with a kind and a reason.
 *
 * This is internal to the llm operator: plain C and libc, with the
 * operator's own strings (buf.h), so it can be built into the plugin and
 * into the tests alike. What kevo decides, it asks kevo through the
 * operator's host table (kevo_reply_host): which headers a kernel may
 * include, and where a source's kevo:launch and kevo:param blocks are. Its
 * stages are in reply_*.c, each with a header that says what it accepts.
 *
 * The reply's line endings are made LF first (any CRs before an LF are
 * dropped). Its reasoning is set aside (reply_reasoning.h): a
 * <think>...</think> section (also <thinking>, <reasoning>), the text
 * before a closing tag that has no opening one (a server without a
 * reasoning parser gives only the closing tag), and everything after an
 * opening tag that is never closed, which leaves no answer (no_code).
 * Reasoning is never a source of code, edits or blocks: a draft kernel or a
 * draft SEARCH/REPLACE in it counts for nothing. A reply then takes one of
 * three forms, tried in this order.
 *
 * Edits (reply_edits.h): one or more SEARCH/REPLACE blocks, inside fences
 * or not:
 *
 *     <<<<<<< SEARCH
 *     lines of the parent
 *     =======
 *     the lines that replace them
 *     >>>>>>> REPLACE
 *
 * As soon as a reply holds a SEARCH marker, it is read as edits, even with a
 * whole kernel in a fence beside them. The edits apply in order, each to the
 * text the previous ones left, all or none. Each SEARCH part must match
 * exactly one place, tried in this order, the first kind of match that finds
 * anything deciding: whole lines exactly; whole lines ignoring indentation
 * and trailing white space (so CRLF against LF too); the same without the
 * SEARCH part's leading and trailing blank lines; a plain substring. Two or
 * more matches are an ambiguous edit; none is an edit not found. Under a
 * tolerant match the REPLACE lines are re-indented by the difference between
 * the parent's indentation and the SEARCH part's, and take the parent's line
 * ending. (5 to 9 marker characters are accepted; a '=======' line outside
 * a block is prose, a stray REPLACE marker an error.)
 *
 * Unified diff (reply_diff.h, KEVO_REPLY_FORM_DIFF): a fence labelled
 * diff, patch or udiff with '@@' hunks, or "--- ", "+++ " and "@@" lines in
 * a row anywhere. A diff also wins over a whole kernel beside it. Its hunks
 * apply in order, all or none, exactly first and then ignoring white
 * space at either end of each line; their line numbers only choose among
 * several places that match.
 *
 * Whole kernel (reply_fences.h): the child is the code in a fenced block
 * (```cuda, ```cu, ```c++, ```cpp, ```c, a plain ``` and similar C-family
 * labels; the label is case-insensitive; ~~~ fences work too). Prose before
 * and after is ignored. With several fences, the parser chooses the largest
 * that holds a __global__ kernel (the last of equal size) and says which in
 * the note; a fence with only a kevo:launch block is no kernel, but may give
 * the child its launch block (below). A fence that the reply never closes
 * (the reply was cut off) counts only when its code is complete: no open
 * brace, parenthesis, bracket, comment or literal. When its code is
 * incomplete and it holds a __global__ kernel or a kevo:launch block, or no
 * other fence has a kernel, the reply fails as truncated. A reply with no
 * fence at all is taken as code when it holds a __global__ kernel, starts
 * like code (a directive, a comment, a declaration) and is complete. The
 * other C fences whose definitions (helper functions, types, constants,
 * macros) the kernel's fence uses are joined before it, in reply order
 * (reply_join.h).
 *
 * A cut-off reply (KEVO_REPLY_CUT_OFF: the model stopped at its token
 * limit) is never accepted as edits or a diff, nor as unfenced code, nor
 * when it ends inside a fence (even one whose brackets balance) or right
 * after one: it fails as truncated, since what it meant to add is unknown.
 * Only a whole kernel whose fence was closed, with a line of prose after
 * the last fence of the reply (the cut fell in the explanation), is taken,
 * and the note says so.
 *
 * Host code (reply_host.h): includes of headers a kernel may not include
 * are dropped from the child (<cstdint> and <climits> become their
 * <cuda/std/...> forms), and so are main, host functions (calling the
 * CUDA runtime, launching kernels with <<<...>>>), host macros and what
 * only they used, when the kernel does not use them; when it does, the
 * child fails with KEVO_REPLY_HOST_CODE, naming the line.
 *
 * Launch and param blocks (reply_restore.h): when the child has no
 * kevo:launch block (see kevo-blocks(5)), it takes one, verbatim, from
 * another fence of the reply (for a whole kernel) or else from the parent,
 * provided the block's comment is closed, every kernel it launches is still
 * a __global__ function of the child, and none of the source's parameters
 * that it uses is #defined by the child; when none fits, the reply fails
 * with KEVO_REPLY_LAUNCH_BLOCK_LOST. When the child has no kevo:param block
 * but uses a parameter that such a block declares (as a name in its code
 * or its launch block, without a #define of its own), that block is
 * inserted too. Restored blocks go at the top of the child, followed by a
 * blank line.
 *
 * Every failure is a kind (below) and a sentence naming what failed, such as
 * "SEARCH block 2 of 3 not found in the parent as edited by block 1 (first
 * line: 'float acc = 0.0f;')". Nothing the reply holds can crash the parser,
 * and its work is bounded: by the size limits, and by a cap on the line
 * comparisons made placing edits and hunks and joining fences, 200 for each
 * byte of the child limit (KEVO_REPLY_TOO_LARGE beyond).
 */
#ifndef KEVO_LLM_REPLY_H
#define KEVO_LLM_REPLY_H

#include <stdbool.h>
#include <stddef.h>

#include <kevo/operator.h>

/* What the parser asks kevo: the operator's host table and its ctx, whose
 * include_allowed(), include_rule() and find_blocks() it calls (ABI 1.3). */
typedef struct kevo_reply_host {
    const kevo_host_api *api;
    kevo_host_ctx *ctx;
} kevo_reply_host;

/* What became of a reply. Values are only ever appended. */
typedef enum kevo_reply_kind {
    KEVO_REPLY_OK = 0,
    KEVO_REPLY_EMPTY,             /* "empty": nothing but white space */
    KEVO_REPLY_NUL_BYTE,          /* "nul_byte": a NUL byte in the reply */
    KEVO_REPLY_NO_CODE,           /* "no_code": no kernel, edits or diff */
    KEVO_REPLY_TRUNCATED,         /* "truncated": cut off, or may be */
    KEVO_REPLY_MALFORMED_EDIT,    /* "malformed_edit": bad edits or diff */
    KEVO_REPLY_EDIT_NOT_FOUND,    /* "edit_not_found" */
    KEVO_REPLY_EDIT_AMBIGUOUS,    /* "edit_ambiguous" */
    KEVO_REPLY_NO_PARENT,         /* "no_parent": edits, but no parent */
    KEVO_REPLY_UNCHANGED,         /* "unchanged": the child is the parent */
    KEVO_REPLY_TOO_LARGE,         /* "too_large": reply or child too big */
    KEVO_REPLY_LAUNCH_BLOCK_LOST, /* "launch_block_lost" */
    KEVO_REPLY_NOMEM,             /* "nomem": out of memory */
    KEVO_REPLY_HOST_CODE          /* "host_code": host code not separable */
} kevo_reply_kind;

/* The last kind, for range checks. */
#define KEVO_REPLY_KIND_LAST KEVO_REPLY_HOST_CODE

/* The form of a reply that gave a child. */
typedef enum kevo_reply_form {
    KEVO_REPLY_FORM_NONE = 0, /* no child */
    KEVO_REPLY_FORM_WHOLE,    /* a whole kernel */
    KEVO_REPLY_FORM_EDITS,    /* SEARCH/REPLACE edits of the parent */
    KEVO_REPLY_FORM_DIFF      /* a unified diff of the parent */
} kevo_reply_form;

/* Flags of kevo__reply_parse. */
#define KEVO_REPLY_CUT_OFF 0x1u /* the model stopped at its token limit */

/* The size limit used when the caller passes 0: 1 MiB of child source. A
 * reply may be up to 8 times the child limit. */
#define KEVO_REPLY_DEFAULT_MAX_CHILD ((size_t)1 << 20)

/* The outcome of kevo__reply_parse. Zero-initialise it, or let the parse
 * do it; release it with kevo__reply_result_free. */
typedef struct kevo_reply_result {
    kevo_reply_kind kind;
    kevo_reply_form form;
    /* On success, the child source: NUL-terminated, ending in a newline,
     * owned by the result (malloc). NULL on failure. */
    char *child;
    size_t child_len;
    /* On failure, why, as one sentence without a trailing period; on
     * success, what was done ("whole kernel from fence 2 of 3 (```cuda, 41
     * lines)", "3 edits applied (edit 2 ignoring indentation)", with the
     * fences joined, host code dropped, blocks restored and reasoning set
     * aside). Owned by the result (malloc); never NULL after
     * kevo__reply_parse unless kind is KEVO_REPLY_NOMEM. */
    char *reason;
    size_t nedits;           /* edits or hunks applied (EDITS, DIFF) */
    bool launch_restored;    /* a kevo:launch block was inserted */
    bool param_restored;     /* a kevo:param block was inserted */
    bool fence_unterminated; /* the chosen fence was never closed */
} kevo_reply_result;

/* Parses a reply of reply_len bytes (not necessarily NUL-terminated; a NUL
 * byte among them is an error) against the parent's source (a
 * NUL-terminated string, or NULL when there is none: then only a whole
 * kernel can succeed, and only with its own kevo:launch block). max_child
 * limits the child's size in bytes (0 for KEVO_REPLY_DEFAULT_MAX_CHILD).
 * flags is 0 or KEVO_REPLY_CUT_OFF, when the model stopped at its token
 * limit (the API's finish_reason "length", stop_reason "max_tokens"); other
 * bits are ignored. host is kevo's host table, which the parser asks which
 * headers a kernel may include and where blocks are. Fills *out (any
 * earlier contents are overwritten, not freed) and returns out->kind:
 * KEVO_REPLY_OK with out->child set, or a failure kind with out->reason
 * set. */
kevo_reply_kind kevo__reply_parse(const char *reply, size_t reply_len,
                                  const char *parent, size_t max_child,
                                  unsigned flags, const kevo_reply_host *host,
                                  kevo_reply_result *out);

/* Frees what the result holds and zeroes it; NULL does nothing. */
void kevo__reply_result_free(kevo_reply_result *r);

/* The kind's short name ("no_code", "edit_not_found", ...), a static
 * string; "unknown" for a value out of range. */
const char *kevo__reply_kind_name(kevo_reply_kind kind);

#endif

/*
 * blocks.h: the kevo:launch and kevo:param blocks of a kernel source
 * (kevo-blocks(5) gives the syntax), parsed into launches, scratch buffers
 * and a parameter space. Errors name "<origin>:<line>: kevo:launch: ..." or
 * "... kevo:param: ...".
 */
#ifndef KEVO_BLOCKS_H
#define KEVO_BLOCKS_H

#include "core/kevo_private.h"

/* One argument of a launch, as written between the parentheses. */
typedef struct kevo_launch_arg {
    char *text;      /* as written, trimmed */
    bool is_name;    /* a bare identifier: names a task argument or scratch
                      * buffer when one has that name, else a variable */
    bool has_cast;   /* written with a "(i64)"-style cast in front */
    kevo_dtype cast; /* the type an expression is passed as (default i32) */
    kevo_expr *expr; /* the expression (also for a bare identifier) */
} kevo_launch_arg;

/* One kernel launch: KERNEL<<<GRID, BLOCK[, SMEM]>>>(ARGS). */
typedef struct kevo_launch {
    char *kernel;
    int line;            /* 1-based line of the launch in the source */
    kevo_expr *grid[3];  /* x, y, z; NULL for an omitted dimension (1) */
    kevo_expr *block[3]; /* likewise */
    kevo_expr *smem;     /* dynamic shared memory in bytes; NULL for 0 */
    kevo_launch_arg *args;
    size_t nargs;
    /* The suffixes after the argument list (launch_suffix.c). */
    kevo_expr *cluster[3]; /* cluster(X[, Y[, Z]]): blocks per cluster in
                            * x, y, z (NULL for an omitted one: 1); all NULL
                            * without a cluster() */
    bool pdl;              /* pdl: programmatic dependent launch */
    kevo_expr *cond;       /* if EXPR: runs where EXPR is non-zero; NULL for
                            * a launch that always runs */
} kevo_launch;

/* One scratch buffer: "scratch NAME TYPE[COUNT] [zero]". */
typedef struct kevo_scratch {
    char *name;
    kevo_dtype type;
    kevo_expr *count; /* elements, over dims, parameters, device properties */
    bool zero;        /* zero-filled before the launches (else poisoned) */
    int line;
} kevo_scratch;

/* The most dimensions a tensor map has (cuTensorMapEncodeTiled's). */
#define KEVO__TMAP_RANK_MAX 5

/* One tensor map: "tensormap NAME BUFFER TYPE dims(...) box(...) ..."
 * (tmapline.c parses it; tensormap.c computes its encoding at a shape). */
typedef struct kevo_tensormap {
    char *name;
    char *buffer; /* a task buffer or a scratch buffer */
    kevo_dtype type;
    int line;
    size_t rank;                                 /* 1 to 5 */
    kevo_expr *dims[KEVO__TMAP_RANK_MAX];        /* elements, innermost first */
    kevo_expr *box[KEVO__TMAP_RANK_MAX];         /* elements */
    kevo_expr *strides[KEVO__TMAP_RANK_MAX];     /* bytes, of dims 1..rank-1;
                                                  * all NULL: densely packed */
    kevo_expr *elemstrides[KEVO__TMAP_RANK_MAX]; /* all NULL: 1 */
    kevo_expr *offset; /* elements from the buffer's start; NULL: 0 */
    int swizzle;       /* bytes of the swizzle span: 0 (none), 32, 64, 128 */
    int interleave;    /* 0 (none), 16, 32 */
    int l2;            /* L2 promotion bytes: 0 (none), 64, 128, 256 */
    bool oob_nan;      /* oob(nan) rather than oob(zero) */
} kevo_tensormap;

typedef struct kevo_blocks {
    kevo_launch *launches;
    size_t nlaunches;
    kevo_scratch *scratch;
    size_t nscratch;
    kevo_tensormap *tensormaps;
    size_t ntensormaps;
    kevo_paramspace *params; /* from kevo:param; empty when there is none */
    int launch_line;         /* line of "kevo:launch"; 0 when absent */
    int param_line;          /* line of "kevo:param"; 0 when absent */
} kevo_blocks;

/* Parses both blocks of source. origin names the source in messages (may
 * be NULL: messages then say "line N"). A source without a kevo:launch
 * block is an error (KEVO_EINVALID). On failure *out is left empty (all
 * zero) and needs no free. */
kevo_status kevo__blocks_parse(const char *source, const char *origin,
                               kevo_blocks *out, kevo_error *err);

/* Deep copy; on failure (KEVO_ENOMEM) *dst is left empty. */
kevo_status kevo__blocks_copy(const kevo_blocks *src, kevo_blocks *dst);

/* Frees what *b holds and empties it. */
void kevo__blocks_free(kevo_blocks *b);

/* Where a source's kevo:launch or kevo:param block is, for a tool that
 * copies blocks verbatim (the operator host's find_blocks()). */
typedef struct kevo_block_place {
    bool found;  /* the source has the block */
    bool closed; /* its comment is closed */
    /* [start, end): from the opening delimiter of its comment to past the
     * closing one, or to the end of the line of the last line comment of
     * its run (the newline left out). */
    size_t start, end;
    /* The kernels the launch block launches (each identifier before a
     * '<<<'), or the parameters the param block declares (each line
     * 'NAME in ...'), in order and without repeats; owned. */
    char **names;
    size_t nnames;
} kevo_block_place;

/* Locates the first kevo:launch block (out[0]) and the first kevo:param
 * block (out[1]) of source (NUL-terminated, holding anything at all) as
 * kevo__blocks_parse() finds them, without parsing them: a second block of
 * a kind is passed over and an unterminated one is not an error. Returns
 * KEVO_OK or KEVO_ENOMEM (out is then empty). */
kevo_status kevo__blocks_locate(const char *source, kevo_block_place out[2]);

/* Frees what kevo__blocks_locate() gave and empties both places. */
void kevo__block_places_free(kevo_block_place places[2]);

/* The length of the UTF-8 sequence that starts at s, or 0 when it is not
 * valid UTF-8 as JSON accepts it (no overlong forms, no surrogates, nothing
 * above U+10FFFF). s[0] must not be NUL. */
size_t kevo__utf8_length(const char *s);

#endif

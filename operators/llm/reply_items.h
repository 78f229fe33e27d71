/*
 * reply_items.h: the top-level items of a scanned C/CUDA source: its
 * directives, function definitions, declarations and the scopes
 * (namespace, extern "C") that hold more of them, each with its byte range
 * and the name it declares. Joining helper fences (reply_join.c) and
 * dropping host code (reply_host.c) work on these.
 *
 * The reading is shallow, as a model's code needs: an item ends at a ';'
 * outside brackets, or at the '}' closing a function body or a scope; a
 * '{' opens a function body when a ')' (or a qualifier after one) comes
 * before it and no '=' of the item does (a lambda's is an initializer); a
 * template header's <...> is skipped. A directive is a '#' that starts its
 * line, to the end of its (continued) line.
 *
 * Models quote pieces of a kernel's body in fences of their own, and read
 * as top-level items those pieces look like declarations of names the
 * kernel uses ('for (...) {...}' a function named for, 'float acc = 0;' a
 * variable acc). So an item is marked statement when it starts with a
 * statement's keyword (for, if, while, do, switch, return, asm, ...) or a
 * bracket, or with a name that is assigned, indexed, called (a name in
 * capitals is taken for a macro that declares), incremented or whose
 * member is reached; and a variable's declaration is marked local unless
 * it is __device__, __constant__ or __managed__, or a const or constexpr
 * that starts its line at its first column and reads none of threadIdx,
 * blockIdx, blockDim and gridDim (a __shared__ variable is local too).
 */
#ifndef KEVO_LLM_REPLY_ITEMS_H
#define KEVO_LLM_REPLY_ITEMS_H

#include "reply_scan.h"

typedef enum item_kind {
    ITEM_INCLUDE,   /* #include */
    ITEM_DEFINE,    /* #define */
    ITEM_DIRECTIVE, /* any other directive */
    ITEM_FUNCTION,  /* a function definition, with its body */
    ITEM_DECL,      /* a declaration (or anything else up to a ';') */
    ITEM_SCOPE      /* namespace or extern "C" {...}: its items follow it */
} item_kind;

typedef struct item {
    item_kind kind;
    size_t start, end; /* bytes [start, end) of the source */
    size_t tok0, tok1; /* its tokens [tok0, tok1) */
    span name;         /* what it declares (s NULL when nothing) */
    bool defines;      /* it defines name (not a prototype or extern) */
    bool global;       /* __global__ */
    bool device;       /* __device__ */
    bool konst;        /* constexpr or consteval */
    /* It reads as code from a function's body: a statement (for, if,
     * return, an assignment, a call, ...), or a variable only a body would
     * declare (see kevo__reply_items). */
    bool statement;
    bool local;
    size_t depth; /* scopes around it */
    span header;  /* ITEM_INCLUDE: the name between <> or "" */
    bool angle;   /* ... it is in <> */
} item;

typedef struct items {
    item *v;
    size_t n, cap;
} items;

/* Reads the items of the scanned source sc (scopes are followed up to a
 * few levels deep; deeper ones are single items). Returns false when out
 * of memory. Release with kevo__reply_items_free, also then. */
bool kevo__reply_items(const cscan *sc, items *out);
void kevo__reply_items_free(items *it);

/* The item uses name as an identifier in its code. */
static inline bool item_uses(const cscan *sc, const item *it, span name)
{
    return kevo__reply_has_ident(sc, it->tok0, it->tok1, name);
}

#endif

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
    size_t depth;      /* scopes around it */
    span header;       /* ITEM_INCLUDE: the name between <> or "" */
    bool angle;        /* ... it is in <> */
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

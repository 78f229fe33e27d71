/*
 * reply_join.h: helper fences joined to the whole kernel. Models often
 * write a __device__ helper, a struct or a few constants in one fence and
 * the kernel in the next. The kernel's fence needs another C fence of the
 * reply when that fence defines (at top level: a function with its body, a
 * type, a variable, a macro) a name that the kernel's fence uses in its
 * code or launches in its kevo:launch block, and that the kernel's fence
 * does not define itself; what the joined fences use is needed in turn.
 * Among fences defining the same needed name, the last in the reply is
 * taken. A fence is not joined when it defines again a name that the
 * fences already joined define (an earlier draft of the kernel, say), or
 * holds a kevo:launch or kevo:param block where they already have one.
 * Only fences whose code is complete (no bracket, comment or literal left
 * open) are joined, and only for a name they declare: a fence that holds
 * statements (a loop or a few lines quoted from a kernel's body, as models
 * quote the current kernel before rewriting it) is never joined, and a
 * variable a function's body would declare (reply_items.h) is no reason to
 * join its fence; the note says when such a fence is left out.
 * The joined fences go before the kernel's, in reply order, each followed
 * by a blank line.
 */
#ifndef KEVO_LLM_REPLY_JOIN_H
#define KEVO_LLM_REPLY_JOIN_H

#include "reply_private.h"

/* Joins to *child (the code of fence chosen) the fences it needs,
 * replacing *child and *child_len, and says which in c->note (also any
 * fence that was needed but not joined, and why). Fails only as nomem, or
 * as too_large when the reply has so many fences and names that joining
 * would take more than c->work_max comparisons. */
kevo_reply_kind kevo__reply_join_helpers(ctx *c, size_t chosen, char **child,
                                         size_t *child_len);

#endif

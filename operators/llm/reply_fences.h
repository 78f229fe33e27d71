/*
 * reply_fences.h: the fenced blocks of a reply (``` or ~~~, with an info
 * string whose first word is the label), and the choice of a whole kernel
 * among them: the largest C-family fence holding a __global__ kernel (the
 * last of equal size), or, in a reply with no fence at all, its text when
 * it is nothing but complete code.
 */
#ifndef KEVO_LLM_REPLY_FENCES_H
#define KEVO_LLM_REPLY_FENCES_H

#include "reply_private.h"

/* Collects the fences of c->text into c->fences, the code of the C-family
 * ones scanned; fences holding a unified diff are marked is_diff and are
 * not C-family. */
kevo_reply_kind kevo__reply_read_fences(ctx *c);

/* Frees c->fences. */
void kevo__reply_fences_free(ctx *c);

/* Chooses the whole kernel of the reply: on success *child is a copy of
 * its code (*child_len bytes) and *chosen the index of its fence
 * (SIZE_MAX for unfenced code), with c->note saying which. Fails as
 * no_code, or as truncated when the fence being written was cut off, or
 * (KEVO_REPLY_CUT_OFF) unless the cut fell in prose after the last fence,
 * which is then closed. */
kevo_reply_kind kevo__reply_whole_kernel(ctx *c, char **child,
                                         size_t *child_len, size_t *chosen);

#endif

/*
 * reply_restore.h: lost kevo:launch and kevo:param blocks (see
 * kevo-blocks(5)) restored into the child. When the child has no
 * kevo:launch block, it takes one, verbatim, from the first source that
 * has a usable one: its comment closed, every kernel it launches still a
 * __global__ function of the child, and none of the source's parameters
 * that it uses #defined by the child. When the child has no kevo:param
 * block but uses a parameter that a source's block declares (as a name in
 * its code or its launch block, without a #define of its own), that block
 * is inserted too. Restored blocks go at the top of the child, followed by
 * a blank line.
 */
#ifndef KEVO_LLM_REPLY_RESTORE_H
#define KEVO_LLM_REPLY_RESTORE_H

#include "reply_private.h"

/* A source a lost block can be restored from. */
typedef struct source {
    const char *text;
    size_t len;
    char label[32]; /* "fence 2", "the parent" */
} source;

/* Restores lost blocks into *child (replacing it, *child_len updated)
 * from the nsrc sources, tried in order, and adds what it did to c->note
 * and the result's flags. Fails with KEVO_REPLY_LAUNCH_BLOCK_LOST when the
 * child has no kevo:launch block and no source gives a usable one. */
kevo_reply_kind kevo__reply_restore_blocks(ctx *c, char **child,
                                           size_t *child_len, const source *src,
                                           size_t nsrc);

#endif

/*
 * descriptor.h: the behaviour descriptors kevo knows (measured from the
 * compiled artefact and the profiler by the evaluator), with the default
 * bins of each. A task picks some of them as the archive's dimensions.
 */
#ifndef KEVO_DESCRIPTOR_H
#define KEVO_DESCRIPTOR_H

#include "core/kevo_private.h"

#define KEVO__DESCRIPTOR_EDGES_MAX 16

typedef struct kevo_descriptor_def {
    const char *name;
    const char *meaning; /* one line, for documentation and messages */
    /* Default bins: either nbins equal bins over [lo, hi) (nedges 0) or
     * the edges. */
    size_t nbins;
    double lo, hi;
    size_t nedges;
    double edges[KEVO__DESCRIPTOR_EDGES_MAX];
} kevo_descriptor_def;

/* The definition called name, or NULL. */
const kevo_descriptor_def *kevo__descriptor_find(const char *name);

/* The i-th definition; NULL past the last. */
const kevo_descriptor_def *kevo__descriptor_at(size_t i);

/* A comma-separated list of the known names, for messages (static). */
const char *kevo__descriptor_names(void);

#endif

/*
 * archive_private.h: the archive's insides, shared by archive.c (the grid,
 * inserts and selection) and archive_json.c (saving and loading).
 */
#ifndef KEVO_ARCHIVE_PRIVATE_H
#define KEVO_ARCHIVE_PRIVATE_H

#include <stdbool.h>

#include "core/kevo_private.h"

/* One behaviour dimension: nbins equal bins over [lo, hi) when nedges is 0,
 * else nedges edges and nedges + 1 bins. */
typedef struct kevo__archive_dim {
    char *name;
    size_t nbins;
    double lo, hi;
    double scale; /* nbins / (hi - lo) */
    size_t nedges;
    double *edges;
    size_t stride; /* what a step of one bin adds to the cell index */
} kevo__archive_dim;

/*
 * The cached weights of one softmax rule (each rule has its own, so that a
 * search that mixes them keeps both): the weight of the i-th filled cell is
 * exp((key - ref) / temperature), where key is its fitness or its
 * curiosity. They are the leaves of a sum tree, tree[span + i], whose inner
 * nodes hold tree[j] = tree[2j] + tree[2j + 1], so that a change to one
 * weight costs O(log n) and a select descends from the root (a binary
 * search over the cumulative weights). Leaves past the last filled cell
 * are 0, so the sums do not depend on span.
 *
 * ref keeps every weight at most about 1, so the sum cannot overflow, and
 * must not move with every change, or each change would cost a rebuild.
 * The keys are therefore grouped in buckets of 64 temperatures centred on
 * the multiples of the width, (k - 1/2) width <= key < (k + 1/2) width (so
 * that keys near 0, where new elites start their curiosity, sit in the
 * middle of one), and ref is the upper end of the highest bucket that holds
 * a key; the fittest elite's weight is then at least e^-64.
 * When those bucket numbers cannot be represented exactly (huge keys, tiny
 * temperatures), each key is its own bucket and ref is the largest key.
 * Either way ref, and so every weight, is a function of the keys alone:
 * patching keeps the cache equal to what a rebuild from scratch would give,
 * so selection depends only on the archive's contents, and a reloaded
 * archive selects exactly as the original would.
 */
typedef struct kevo__archive_weights {
    bool valid;
    kevo_selection how; /* the rule the weights are for */
    double temperature;
    double width; /* 64 temperatures */
    bool exact;   /* each key is its own bucket */
    double top;   /* the highest bucket that holds a key */
    size_t ntop;  /* how many keys it holds */
    double ref;
    double *tree; /* 2 * span values; tree[0] is unused */
    size_t span;  /* a power of two, at least filled_cap */
    bool stale;   /* leaves moved: the inner nodes need recomputing */
} kevo__archive_weights;

struct kevo_archive {
    kevo__archive_dim *dims;
    size_t ndims;
    size_t ncells;

    /* Per-cell arrays indexed by cell, allocated at the first insert. An
     * empty cell has fitness -INFINITY and candidate NULL, so that the test
     * that rejects an insert is one comparison. */
    double *fitness;
    double *curiosity;
    uint64_t *children; /* children credited to the elite */
    uint64_t *improved; /* of those, how many entered the archive */
    double *descriptor; /* ndims values per cell */
    kevo_candidate **cand;

    /* The filled cells in ascending order, for iteration and selection. */
    uint32_t *filled;
    size_t nfilled;
    size_t filled_cap;

    uint64_t inserts;
    uint64_t accepted;

    kevo__archive_weights weights[2]; /* softmax, curiosity */

    /* Per cell, the notes of its elite (archive_notes.c); NULL until the
     * first note. */
    struct kevo__archive_note_list *notes;
};

/* The notes of one cell's elite: named texts, each owned. */
typedef struct kevo__archive_note_list {
    kevo_operator_text *items;
    size_t n;
} kevo__archive_note_list;

/* Frees the notes of cell, whose elite leaves (archive_notes.c). */
void kevo__archive_drop_notes(kevo_archive *archive, size_t cell);

/* Frees the notes of every cell. */
void kevo__archive_free_notes(kevo_archive *archive);

/* The cell of a descriptor (no NaN check: the caller has made it). */
size_t kevo__archive_cell_index(const kevo_archive *archive,
                                const double *descriptor);

/* Stores elite, with its record, as the elite of the empty cell, for a
 * loader; takes ownership of elite (freed on failure). */
kevo_status kevo__archive_place(kevo_archive *archive, size_t cell,
                                kevo_candidate *elite, double fitness,
                                const double *descriptor, double curiosity,
                                uint64_t children, uint64_t improved,
                                kevo_error *err);

#endif
